package main

// RetrievePropertiesEx paging, as the vSphere API documents it
// (PropertyCollector.RetrievePropertiesEx, RetrieveOptions.maxObjects,
// RetrieveResult.token, ContinueRetrievePropertiesEx,
// CancelRetrievePropertiesEx): "An unset value indicates that there is no
// maximum. In this case PropertyCollector policy may still limit the
// number of objects. Any remaining objects may be retrieved with
// ContinueRetrievePropertiesEx."  The simulator (govmomi 0.24.2) ignores
// maxObjects and has no ContinueRetrievePropertiesEx; this wrapper of the
// root PropertyCollector pages at min(maxObjects, -retrieve-page).  A token
// belongs to its session; an unknown token is InvalidArgument.

import (
	"fmt"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

var paging struct {
	mu      sync.Mutex
	page    int
	next    int
	pending map[string]pendingResult
}

type pendingResult struct {
	session string
	objects []types.ObjectContent
	size    int
}

// PropertyCollector wraps the simulator's (by value: the simulator makes
// each session's instance with reflect.New of this type).
type PropertyCollector struct {
	simulator.PropertyCollector
}

func (w *world) installPaging() error {
	ref := simulatorContent().PropertyCollector
	orig, ok := simulator.Map.Get(ref).(*simulator.PropertyCollector)
	if !ok {
		return fmt.Errorf("no PropertyCollector")
	}
	paging.page = w.opts.retrievePage
	paging.pending = map[string]pendingResult{}
	pc := &PropertyCollector{}
	pc.PropertyCollector.PropertyCollector = orig.PropertyCollector
	simulator.Map.Put(pc)
	return nil
}

func sessionKey(ctx *simulator.Context) string {
	if ctx.Session == nil {
		return ""
	}
	return ctx.Session.Key
}

// cut keeps the first size objects in res and files the rest under a token.
func cut(ctx *simulator.Context, res *types.RetrieveResult, size int) {
	if size <= 0 || len(res.Objects) <= size {
		res.Token = ""
		return
	}
	paging.mu.Lock()
	defer paging.mu.Unlock()
	paging.next++
	token := fmt.Sprintf("%d", paging.next)
	paging.pending[token] = pendingResult{session: sessionKey(ctx), objects: res.Objects[size:], size: size}
	res.Objects = res.Objects[:size]
	res.Token = token
}

// notAuthenticated: the simulator lets RetrieveProperties(Ex) through
// without a session (its ContainerViews then answer ManagedObjectNotFound);
// vCenter answers NotAuthenticated to every call but RetrieveServiceContent
// and the Login family before a Login, or after its session is gone.
func notAuthenticated(ctx *simulator.Context, this types.ManagedObjectReference) *soap.Fault {
	if ctx.Session != nil {
		return nil
	}
	return simulator.Fault("", &types.NotAuthenticated{NoPermission: types.NoPermission{
		Object: this, PrivilegeId: "System.View"}})
}

func (pc *PropertyCollector) RetrieveProperties(ctx *simulator.Context, r *types.RetrieveProperties) soap.HasFault {
	if f := notAuthenticated(ctx, r.This); f != nil {
		return &methods.RetrievePropertiesBody{Fault_: f}
	}
	return pc.PropertyCollector.RetrieveProperties(ctx, r)
}

func (pc *PropertyCollector) RetrievePropertiesEx(ctx *simulator.Context, r *types.RetrievePropertiesEx) soap.HasFault {
	if f := notAuthenticated(ctx, r.This); f != nil {
		return &methods.RetrievePropertiesExBody{Fault_: f}
	}
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, r)
	body, ok := res.(*methods.RetrievePropertiesExBody)
	if !ok || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	size := paging.page
	if m := int(r.Options.MaxObjects); m > 0 && (size <= 0 || m < size) {
		size = m
	}
	cut(ctx, body.Res.Returnval, size)
	return body
}

func (pc *PropertyCollector) ContinueRetrievePropertiesEx(ctx *simulator.Context, r *types.ContinueRetrievePropertiesEx) soap.HasFault {
	paging.mu.Lock()
	p, ok := paging.pending[r.Token]
	if ok && p.session == sessionKey(ctx) {
		delete(paging.pending, r.Token)
	} else {
		ok = false
	}
	paging.mu.Unlock()
	if !ok {
		return &methods.ContinueRetrievePropertiesExBody{
			Fault_: simulator.Fault("", &types.InvalidArgument{InvalidProperty: "token"})}
	}
	res := &types.RetrieveResult{Objects: p.objects}
	cut(ctx, res, p.size)
	return &methods.ContinueRetrievePropertiesExBody{
		Res: &types.ContinueRetrievePropertiesExResponse{Returnval: *res}}
}

func (pc *PropertyCollector) CancelRetrievePropertiesEx(ctx *simulator.Context, r *types.CancelRetrievePropertiesEx) soap.HasFault {
	paging.mu.Lock()
	p, ok := paging.pending[r.Token]
	if ok && p.session == sessionKey(ctx) {
		delete(paging.pending, r.Token)
	} else {
		ok = false
	}
	paging.mu.Unlock()
	if !ok {
		return &methods.CancelRetrievePropertiesExBody{
			Fault_: simulator.Fault("", &types.InvalidArgument{InvalidProperty: "token"})}
	}
	return &methods.CancelRetrievePropertiesExBody{Res: &types.CancelRetrievePropertiesExResponse{}}
}

// WaitForUpdatesEx with WaitOptions.maxObjectUpdates, as documented
// (WaitOptions.maxObjectUpdates: "The maximum number of ObjectUpdate
// entries that should be returned in a single result from
// WaitForUpdatesEx"; UpdateSet.truncated: "If true, this UpdateSet
// contains results from a suspended change calculation [...] The client
// can pass the 'truncated data version' to WaitForUpdatesEx to resume").
// The simulator (0.24.2) ignores maxObjectUpdates and never truncates; the
// collectors CreatePropertyCollector makes are wrapped to cut the answer
// and keep the rest under a truncated version of the session.
type pendingUpdates struct {
	session string
	version string
	sets    []types.PropertyFilterUpdate
}

var truncation struct {
	mu      sync.Mutex
	next    int
	pending map[string]pendingUpdates
}

// cutUpdates keeps the first max ObjectUpdates of set and files the rest.
func cutUpdates(ctx *simulator.Context, set *types.UpdateSet, version string, max int) {
	n := 0
	for i := range set.FilterSet {
		k := len(set.FilterSet[i].ObjectSet)
		if max <= 0 || n+k <= max {
			n += k
			continue
		}
		rest := []types.PropertyFilterUpdate{}
		if keep := max - n; keep < k {
			rest = append(rest, types.PropertyFilterUpdate{Filter: set.FilterSet[i].Filter,
				ObjectSet: set.FilterSet[i].ObjectSet[keep:]})
			set.FilterSet[i].ObjectSet = set.FilterSet[i].ObjectSet[:keep]
		}
		rest = append(rest, set.FilterSet[i+1:]...)
		set.FilterSet = set.FilterSet[:i+1]
		truncation.mu.Lock()
		if truncation.pending == nil {
			truncation.pending = map[string]pendingUpdates{}
		}
		truncation.next++
		t := fmt.Sprintf("%s+t%d", version, truncation.next)
		truncation.pending[t] = pendingUpdates{session: sessionKey(ctx), version: version, sets: rest}
		truncation.mu.Unlock()
		set.Version = t
		set.Truncated = types.NewBool(true)
		return
	}
}

// CreatePropertyCollector: a session collector of the wrapping type.
func (pc *PropertyCollector) CreatePropertyCollector(ctx *simulator.Context, c *types.CreatePropertyCollector) soap.HasFault {
	cpc := &PropertyCollector{}
	return &methods.CreatePropertyCollectorBody{Res: &types.CreatePropertyCollectorResponse{
		Returnval: ctx.Session.Put(cpc).Reference()}}
}

func (pc *PropertyCollector) WaitForUpdatesEx(ctx *simulator.Context, r *types.WaitForUpdatesEx) soap.HasFault {
	max := 0
	if r.Options != nil {
		max = int(r.Options.MaxObjectUpdates)
	}
	truncation.mu.Lock()
	p, ok := truncation.pending[r.Version]
	if ok {
		delete(truncation.pending, r.Version)
	}
	truncation.mu.Unlock()
	if ok {
		if p.session != sessionKey(ctx) {
			return &methods.WaitForUpdatesExBody{Fault_: simulator.Fault("",
				&types.InvalidCollectorVersion{})}
		}
		set := &types.UpdateSet{Version: p.version, FilterSet: p.sets}
		cutUpdates(ctx, set, p.version, max)
		return &methods.WaitForUpdatesExBody{Res: &types.WaitForUpdatesExResponse{Returnval: set}}
	}
	res := pc.PropertyCollector.WaitForUpdatesEx(ctx, r)
	body, isBody := res.(*methods.WaitForUpdatesExBody)
	if !isBody || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	cutUpdates(ctx, body.Res.Returnval, body.Res.Returnval.Version, max)
	return body
}
