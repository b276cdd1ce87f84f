package main

// Datastores, LUNs and paths as the vSphere API documents them, per host.
//
// The simulator (govmomi 0.24.2) creates one Datastore object per model
// datastore but keeps only the last host's mount in Datastore.host
// (CreateLocalDatastore replaces the object for every host), shares one
// storageDeviceInfo between all hosts and has no SAN LUN.  installStorage
// gives every model datastore:
//   - one DatastoreHostMount per host that mounts it, each with its own
//     HostMountInfo (accessible / inaccessibleReason: AllPathsDown_Start,
//     AllPathsDown_Timeout, PermanentDeviceLoss — vSphere API reference,
//     data object HostMountInfo, and the enum
//     HostMountInfoInaccessibleReason);
//   - a VMFS volume (VmfsDatastoreInfo.vmfs.extent[0].diskName) on its own
//     SAN LUN "naa.…", a HostScsiDisk in every mounting host's
//     config.storageDevice.scsiLun (operationalState, ScsiLunState: ok,
//     error, off, lostCommunication, …) with two paths in
//     config.storageDevice.multipathInfo (HostMultipathInfoPath.state:
//     active, standby, disabled, dead, unknown — enum MultipathState).
// Every host gets its own copy of storageDevice (the HostStorageSystem's
// storageDeviceInfo is the same copy).

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// the HBA the SAN LUNs' paths go through (vmhba64 in the simulator's
// template storageDevice)
const sanAdapter = "key-vim.host.BlockHba-vmhba64"

type sanLun struct {
	ds        *simulator.Datastore
	canonical string
	uuid      string
	index     int
}

func (l *sanLun) key() string    { return "key-vim.host.ScsiDisk-" + l.uuid }
func (l *sanLun) mpKey() string  { return "key-vim.host.MultipathInfo.LogicalUnit-" + l.uuid }
func pathName(t, lun int) string { return fmt.Sprintf("vmhba64:C0:T%d:L%d", t, lun) }
func pathKey(t, lun int) string  { return "key-vim.host.MultipathInfo.Path-" + pathName(t, lun) }
func boolp(b bool) *bool         { return &b }

func (w *world) datastores() []*simulator.Datastore {
	var out []*simulator.Datastore
	for _, obj := range simulator.Map.All("Datastore") {
		if ds, ok := obj.(*simulator.Datastore); ok {
			out = append(out, ds)
		}
	}
	return out
}

func (w *world) findDatastore(name string) *simulator.Datastore {
	for _, ds := range w.datastores() {
		if ds.Name == name || ds.Self.Value == name {
			return ds
		}
	}
	return nil
}

func (w *world) installStorage() error {
	hosts := w.hosts()
	for i, ds := range w.datastores() {
		l := &sanLun{ds: ds, index: i,
			canonical: fmt.Sprintf("naa.6000c29e5a1d0000%016x", i+1),
			uuid:      fmt.Sprintf("0200000000600c29e5a1d0000%016x566972747561", i+1)}
		info := ds.Info.GetDatastoreInfo()
		vmfs := &types.VmfsDatastoreInfo{
			DatastoreInfo: *info,
			Vmfs: &types.HostVmfsVolume{
				HostFileSystemVolume: types.HostFileSystemVolume{
					Type: "VMFS", Name: ds.Name, Capacity: ds.Summary.Capacity,
				},
				BlockSizeMb: 1, MaxBlocks: 63963136, MajorVersion: 6,
				Version: "6.82", Uuid: fmt.Sprintf("5f1b2c3d-%08x-0000-000c29e5a1d0", i+1),
				Extent: []types.HostScsiDiskPartition{{DiskName: l.canonical, Partition: 1}},
				Ssd:    boolp(false), Local: boolp(false),
			},
		}
		ds.Info = vmfs
		ds.Summary.Type = "VMFS"
		var mounts []types.DatastoreHostMount
		for _, h := range hosts {
			if !hasRef(h.Datastore, ds.Self) {
				continue
			}
			mounts = append(mounts, types.DatastoreHostMount{
				Key: h.Self,
				MountInfo: types.HostMountInfo{
					Path:       "/vmfs/volumes/" + vmfs.Vmfs.Uuid,
					AccessMode: string(types.HostMountModeReadWrite),
					Mounted:    boolp(true),
					Accessible: boolp(true),
				},
			})
			addLun(h, l)
		}
		ds.Host = mounts
		ds.Summary.Accessible = true
	}
	// every host its own storageDevice, shared with its HostStorageSystem
	for _, h := range hosts {
		if h.ConfigManager.StorageSystem == nil || h.Config == nil {
			continue
		}
		if ss, ok := simulator.Map.Get(*h.ConfigManager.StorageSystem).(*simulator.HostStorageSystem); ok {
			ss.StorageDeviceInfo = h.Config.StorageDevice
		}
	}
	return nil
}

func hasRef(refs []types.ManagedObjectReference, r types.ManagedObjectReference) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

// addLun puts the SAN LUN and its two paths (T0 active, T1 standby) into
// the host's storageDevice.
func addLun(h *simulator.HostSystem, l *sanLun) {
	sd := h.Config.StorageDevice
	if sd == nil {
		return
	}
	disk := &types.HostScsiDisk{
		ScsiLun: types.ScsiLun{
			HostDevice: types.HostDevice{
				DeviceName: "/vmfs/devices/disks/" + l.canonical,
				DeviceType: "disk",
			},
			Key:              l.key(),
			Uuid:             l.uuid,
			CanonicalName:    l.canonical,
			DisplayName:      "esxwatch vcsim Fibre Channel Disk (" + l.canonical + ")",
			LunType:          "disk",
			Vendor:           "VCSIM",
			Model:            "SAN LUN",
			OperationalState: []string{string(types.ScsiLunStateOk)},
		},
		Capacity:   types.HostDiskDimensionsLba{BlockSize: 512, Block: 2147483648},
		DevicePath: "/vmfs/devices/disks/" + l.canonical,
		Ssd:        boolp(false),
		LocalDisk:  boolp(false),
	}
	sd.ScsiLun = append(sd.ScsiLun, disk)
	if sd.MultipathInfo == nil {
		sd.MultipathInfo = &types.HostMultipathInfo{}
	}
	var paths []types.HostMultipathInfoPath
	for t, state := range []string{"active", "standby"} {
		paths = append(paths, types.HostMultipathInfoPath{
			Key:           pathKey(t, l.index),
			Name:          pathName(t, l.index),
			PathState:     state,
			State:         state,
			IsWorkingPath: boolp(state == "active"),
			Adapter:       sanAdapter,
			Lun:           l.mpKey(),
		})
	}
	sd.MultipathInfo.Lun = append(sd.MultipathInfo.Lun, types.HostMultipathInfoLogicalUnit{
		Key:  l.mpKey(),
		Id:   l.uuid,
		Lun:  l.key(),
		Path: paths,
		Policy: &types.HostMultipathInfoLogicalUnitPolicy{
			Policy: "VMW_PSP_MRU",
		},
	})
}

var inaccessibleReasons = map[string]bool{
	"AllPathsDown_Start":   true,
	"AllPathsDown_Timeout": true,
	"PermanentDeviceLoss":  true,
}

func init() {
	controls["datastores"] = ctlDatastores
	controls["set_datastore"] = ctlSetDatastore
	controls["set_lun"] = ctlSetLun
	controls["set_path"] = ctlSetPath
}

// datastores: every datastore, its LUN and per-host mounts.
func ctlDatastores(w *world, _ map[string]interface{}) (interface{}, error) {
	type mount struct {
		Host       string `json:"host"`
		Accessible bool   `json:"accessible"`
		Reason     string `json:"inaccessible_reason,omitempty"`
	}
	type dsInfo struct {
		Name   string  `json:"name"`
		Moid   string  `json:"moid"`
		Lun    string  `json:"lun"`
		Mounts []mount `json:"mounts"`
	}
	var out []dsInfo
	for _, ds := range w.datastores() {
		d := dsInfo{Name: ds.Name, Moid: ds.Self.Value}
		withLock(ds, func() {
			if v, ok := ds.Info.(*types.VmfsDatastoreInfo); ok && v.Vmfs != nil && len(v.Vmfs.Extent) > 0 {
				d.Lun = v.Vmfs.Extent[0].DiskName
			}
			for _, m := range ds.Host {
				name := m.Key.Value
				if h, ok := simulator.Map.Get(m.Key).(*simulator.HostSystem); ok {
					name = h.Name
				}
				d.Mounts = append(d.Mounts, mount{Host: name,
					Accessible: m.MountInfo.Accessible != nil && *m.MountInfo.Accessible,
					Reason:     m.MountInfo.InaccessibleReason})
			}
		})
		out = append(out, d)
	}
	return map[string]interface{}{"datastores": out}, nil
}

// set_datastore {host, datastore, accessible, reason?}: that host's
// HostMountInfo of the datastore.  reason is one of
// HostMountInfoInaccessibleReason when accessible is false.
// Datastore.summary.accessible is true while any host reaches it.
func ctlSetDatastore(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	name, err := argString(req, "datastore")
	if err != nil {
		return nil, err
	}
	acc, err := argBool(req, "accessible")
	if err != nil {
		return nil, err
	}
	reason, err := argOptString(req, "reason", "")
	if err != nil {
		return nil, err
	}
	if acc && reason != "" {
		return nil, badRequest("reason only with accessible=false")
	}
	if !acc && reason != "" && !inaccessibleReasons[reason] {
		return nil, badRequest("reason %q: not AllPathsDown_Start, AllPathsDown_Timeout or PermanentDeviceLoss", reason)
	}
	ds := w.findDatastore(name)
	if ds == nil {
		return nil, notFound("no datastore %q", name)
	}
	found := false
	withLock(ds, func() {
		any := false
		mounts := make([]types.DatastoreHostMount, len(ds.Host))
		copy(mounts, ds.Host)
		for i := range mounts {
			if mounts[i].Key == hr.h.Self {
				found = true
				mounts[i].MountInfo.Accessible = boolp(acc)
				mounts[i].MountInfo.InaccessibleReason = reason
			}
			if a := mounts[i].MountInfo.Accessible; a != nil && *a {
				any = true
			}
		}
		if found {
			simulator.Map.Update(ds, []types.PropertyChange{
				{Op: types.PropertyChangeOpAssign, Name: "host", Val: mounts},
				{Op: types.PropertyChangeOpAssign, Name: "summary.accessible", Val: any},
			})
		}
	})
	if !found {
		return nil, notFound("datastore %q is not mounted on %s", name, hr.h.Name)
	}
	return nil, nil
}

// lunOf finds a LUN by canonical name (or, for a datastore name, its
// extent's LUN) in a host's storageDevice.
func lunName(w *world, name string) string {
	if ds := w.findDatastore(name); ds != nil {
		if v, ok := ds.Info.(*types.VmfsDatastoreInfo); ok && v.Vmfs != nil && len(v.Vmfs.Extent) > 0 {
			return v.Vmfs.Extent[0].DiskName
		}
	}
	return name
}

// set_lun {host, lun, state}: ScsiLun.operationalState = [state] on that
// host (lun: canonical name, or a datastore name for its extent's LUN).
func ctlSetLun(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	name, err := argString(req, "lun")
	if err != nil {
		return nil, err
	}
	state, err := argString(req, "state")
	if err != nil {
		return nil, err
	}
	if !validLunState(state) {
		return nil, badRequest("state %q: not a ScsiLunState", state)
	}
	name = lunName(w, name)
	found := false
	h := hr.h
	withLock(h, func() {
		sd := h.Config.StorageDevice
		for _, l := range sd.ScsiLun {
			sl := l.GetScsiLun()
			if sl.CanonicalName == name {
				sl.OperationalState = []string{state}
				found = true
			}
		}
		if found {
			simulator.Map.Update(h, []types.PropertyChange{{Op: types.PropertyChangeOpAssign, Name: "config.storageDevice.scsiLun", Val: sd.ScsiLun}})
		}
	})
	if !found {
		return nil, notFound("no LUN %q on %s", name, h.Name)
	}
	return nil, nil
}

func validLunState(s string) bool {
	switch types.ScsiLunState(s) {
	case types.ScsiLunStateUnknownState, types.ScsiLunStateOk,
		types.ScsiLunStateError, types.ScsiLunStateOff,
		types.ScsiLunStateQuiesced, types.ScsiLunStateDegraded,
		types.ScsiLunStateLostCommunication, types.ScsiLunStateTimeout:
		return true
	}
	return false
}

// set_path {host, path, state}: HostMultipathInfoPath.state (and the
// deprecated pathState) of the path named path ("vmhba64:C0:T0:L0").
func ctlSetPath(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	name, err := argString(req, "path")
	if err != nil {
		return nil, err
	}
	state, err := argString(req, "state")
	if err != nil {
		return nil, err
	}
	switch state {
	case "active", "standby", "disabled", "dead", "unknown":
	default:
		return nil, badRequest("state %q: not active, standby, disabled, dead or unknown", state)
	}
	found := false
	h := hr.h
	withLock(h, func() {
		mp := h.Config.StorageDevice.MultipathInfo
		if mp == nil {
			return
		}
		for i := range mp.Lun {
			for j := range mp.Lun[i].Path {
				p := &mp.Lun[i].Path[j]
				if p.Name == name {
					p.State = state
					p.PathState = state
					p.IsWorkingPath = boolp(state == "active")
					found = true
				}
			}
		}
		if found {
			simulator.Map.Update(h, []types.PropertyChange{{Op: types.PropertyChangeOpAssign, Name: "config.storageDevice.multipathInfo", Val: mp}})
		}
	})
	if !found {
		return nil, notFound("no path %q on %s", name, h.Name)
	}
	return nil, nil
}
