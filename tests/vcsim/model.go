package main

// The vCenter inventory, built fast.  govmomi's Model.Create adds every
// host through its own in-process client (a task and a property-collector
// wait per host, and per host per datastore): ~20 ms a host, 20 s for 1,000.
// Here the Model creates the datacenters and clusters only, and the hosts
// and datastores are added by calling the simulator's own methods directly
// (Folder.AddStandaloneHostTask, ClusterComputeResource.AddHostTask,
// HostDatastoreSystem.CreateLocalDatastore): the same objects, names as
// the Model's (DC0_H0, DC0_C0_H0, LocalDS_0), before anything is served.

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// leanTemplate drops from the host config template what no health check
// reads — config.firewall, config.service, config.virtualNicManagerInfo
// (about half of its bytes) — so the per-host deep copy costs half.
// Network (pnic) and storage (storageDevice) are kept whole.
func leanTemplate() {
	lean := esx.HostConfigInfo
	lean.Firewall = nil
	lean.Service = nil
	lean.VirtualNicManagerInfo = nil
	esx.HostSystem.Config = &lean
}

func internalCtx() *simulator.Context {
	return &simulator.Context{Context: context.Background(), Map: simulator.Map,
		Session: &simulator.Session{UserSession: types.UserSession{UserName: "vcsim"},
			Registry: simulator.NewRegistry()}}
}

func taskResult(res soap.HasFault, ref types.ManagedObjectReference) (types.ManagedObjectReference, error) {
	if f := res.Fault(); f != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("%s", f.String)
	}
	t, ok := simulator.Map.Get(ref).(*simulator.Task)
	if !ok {
		return types.ManagedObjectReference{}, fmt.Errorf("no task %s", ref)
	}
	if t.Info.Error != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("%s", t.Info.Error.LocalizedMessage)
	}
	return t.Info.Result.(types.ManagedObjectReference), nil
}

// populate adds o.standalone hosts per datacenter, o.clusterHst hosts per
// cluster and o.datastores datastores mounted on every host of their
// datacenter.  Returns the datastores' directories (removed at exit).
func populate(o *options) ([]string, error) {
	leanTemplate()
	ctx := internalCtx()
	var dirs []string
	var dcs []*simulator.Datacenter
	for _, e := range simulator.Map.All("Datacenter") {
		dcs = append(dcs, e.(*simulator.Datacenter))
	}
	sort.Slice(dcs, func(i, j int) bool { return dcs[i].Name < dcs[j].Name })
	for _, dc := range dcs {
		var hosts []types.ManagedObjectReference
		folder := simulator.Map.Get(dc.HostFolder).(*simulator.Folder)
		for n := 0; n < o.standalone; n++ {
			req := &types.AddStandaloneHost_Task{This: folder.Self, AddConnected: true,
				Spec: types.HostConnectSpec{HostName: fmt.Sprintf("%s_H%d", dc.Name, n)}}
			body := folder.AddStandaloneHostTask(ctx, req).(*methods.AddStandaloneHost_TaskBody)
			if body.Res == nil {
				return dirs, fmt.Errorf("AddStandaloneHost: %s", body.Fault().String)
			}
			ref, err := taskResult(body, body.Res.Returnval)
			if err != nil {
				return dirs, err
			}
			hosts = append(hosts, ref)
		}
		var clusters []*simulator.ClusterComputeResource
		for _, e := range simulator.Map.All("ClusterComputeResource") {
			c := e.(*simulator.ClusterComputeResource)
			if isAncestor(dc.Self, c.Self) {
				clusters = append(clusters, c)
			}
		}
		sort.Slice(clusters, func(i, j int) bool { return clusters[i].Name < clusters[j].Name })
		for _, c := range clusters {
			for n := 0; n < o.clusterHst; n++ {
				req := &types.AddHost_Task{This: c.Self, AsConnected: true,
					Spec: types.HostConnectSpec{HostName: fmt.Sprintf("%s_H%d", c.Name, n)}}
				body := c.AddHostTask(req).(*methods.AddHost_TaskBody)
				ref, err := taskResult(body, body.Res.Returnval)
				if err != nil {
					return dirs, err
				}
				hosts = append(hosts, ref)
			}
		}
		for i := 0; i < o.datastores; i++ {
			dir, err := os.MkdirTemp("", fmt.Sprintf("esxwatch-vcsim-%s-LocalDS_%d-", dc.Name, i))
			if err != nil {
				return dirs, err
			}
			dirs = append(dirs, dir)
			for _, ref := range hosts {
				h := simulator.Map.Get(ref).(*simulator.HostSystem)
				dss := simulator.Map.Get(*h.ConfigManager.DatastoreSystem).(*simulator.HostDatastoreSystem)
				res := dss.CreateLocalDatastore(ctx, &types.CreateLocalDatastore{This: dss.Self,
					Name: fmt.Sprintf("LocalDS_%d", i), Path: dir})
				if f := res.Fault(); f != nil {
					return dirs, fmt.Errorf("CreateLocalDatastore: %s", f.String)
				}
			}
		}
	}
	return dirs, nil
}
