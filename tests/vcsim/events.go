package main

// The event history as the vSphere API documents it (managed objects
// EventManager and EventHistoryCollector; data object EventFilterSpec).
//
// The simulator's EventHistoryCollector (govmomi 0.24.2) only holds its
// latest page, reads it newest first, and once ReadNextEvents reached the
// end it never returns events posted later.  The real collector is a
// "scrollable view" over every event matching its filter, oldest first:
// ReadNextEvents "reads the scrollable view from the current position
// ... moved to the next newer page after the read.  No item is returned
// when the end of the collector is reached" — and events appended later
// are read by the next ReadNextEvents; RewindCollector moves to the
// oldest item, "the default setting"; ResetCollector to the item
// immediately preceding the latest page; latestPage holds the newest
// pageSize (filter.maxCount, default 10) matching events.
//
// Here every event the simulator's EventManager records (PostEvent over
// SOAP, its own events, the control endpoint's post_event) is merged into
// one history (ascending keys, the newest -event-history kept: older ones
// roll over as vCenter's do), and every collector created by
// CreateCollectorForEvents is replaced, in its session, by one reading
// that history.  Filter fields honoured: entity (self / children / all),
// eventTypeId (class names incl. base classes; the eventTypeId of an
// EventEx / ExtendedEvent), time (beginTime / endTime on createdTime),
// category, eventChainId, maxCount (page size).

import (
	"container/ring"
	"encoding/xml"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type eventState struct {
	w       *world
	em      *simulator.EventManager
	mu      sync.Mutex
	all     []types.BaseEvent // ascending key
	lastKey int32
	max     int
	rolled  int64 // events dropped from the history
	colls   map[types.ManagedObjectReference]*eventCollector
	info    map[string]string // event class -> category
}

// unexported returns a settable view of an unexported field.
func unexported(obj interface{}, field string) reflect.Value {
	f := reflect.ValueOf(obj).Elem().FieldByName(field)
	if !f.IsValid() {
		panic("vcsim: no field " + field)
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

func (w *world) installEvents() error {
	em := simulator.Map.EventManager()
	st := &eventState{w: w, em: em, max: w.opts.eventHistory,
		colls: map[types.ManagedObjectReference]*eventCollector{}, info: map[string]string{}}
	for _, i := range em.Description.EventInfo {
		st.info[i.Key] = i.Category
	}
	if st.max <= 0 {
		return fmt.Errorf("-event-history must be > 0")
	}
	w.events = st
	return nil
}

// merge copies the events the EventManager recorded since the last merge
// (its ring holds the newest 1000) into the history.
func (st *eventState) merge() {
	var fresh []types.BaseEvent
	simulator.Map.WithLock(st.em, func() {
		page := unexported(st.em, "page").Interface().(*ring.Ring)
		st.mu.Lock()
		last := st.lastKey
		st.mu.Unlock()
		page.Do(func(v interface{}) {
			if e, ok := v.(types.BaseEvent); ok && e.GetEvent().Key > last {
				fresh = append(fresh, e)
			}
		})
	})
	if len(fresh) == 0 {
		return
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].GetEvent().Key < fresh[j].GetEvent().Key })
	type upd struct {
		c    *eventCollector
		page []types.BaseEvent
	}
	var updates []upd
	st.mu.Lock()
	for _, e := range fresh {
		if e.GetEvent().Key > st.lastKey {
			st.all = append(st.all, e)
			st.lastKey = e.GetEvent().Key
		}
	}
	if over := len(st.all) - st.max; over > 0 {
		st.rolled += int64(over)
		st.all = append([]types.BaseEvent(nil), st.all[over:]...)
	}
	for _, c := range st.colls {
		for _, e := range fresh {
			if c.matches(e) {
				updates = append(updates, upd{c, c.latestPageLocked()})
				break
			}
		}
	}
	st.mu.Unlock()
	for _, u := range updates {
		simulator.Map.Update(u.c, []types.PropertyChange{{Op: types.PropertyChangeOpAssign, Name: "latestPage", Val: u.page}})
	}
}

type eventCollector struct {
	mo.EventHistoryCollector
	st       *eventState
	spec     types.EventFilterSpec
	pageSize int
	cursor   int32 // events with a key > cursor are "next"
}

// replaceCollector swaps the simulator's collector ref, in the session
// registry reg, for one over the history.  Called with the gate held
// exclusively (no SOAP request runs).
func (st *eventState) replaceCollector(reg *simulator.Registry, ref types.ManagedObjectReference) error {
	orig, ok := reg.Get(ref).(*simulator.EventHistoryCollector)
	if !ok {
		return fmt.Errorf("%s: not a simulator EventHistoryCollector", ref)
	}
	spec, _ := orig.Filter.(types.EventFilterSpec)
	size := int(spec.MaxCount)
	if size == 0 {
		size = 10
	}
	c := &eventCollector{st: st, spec: spec, pageSize: size}
	c.Self = ref
	c.Filter = spec
	simulator.Map.WithLock(st.em, func() {
		colls := unexported(st.em, "collectors")
		colls.SetMapIndex(reflect.ValueOf(ref), reflect.Value{})
	})
	reg.Put(c)
	st.mu.Lock()
	st.colls[ref] = c
	st.mu.Unlock()
	return nil
}

// --- filter ---

func eventClassNames(e types.BaseEvent) []string {
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		names = append(names, t.Name())
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Type.Name() != "DynamicData" {
				walk(f.Type)
			}
		}
	}
	walk(reflect.ValueOf(e).Elem().Type())
	return names
}

func eventTypeID(e types.BaseEvent) string {
	switch x := e.(type) {
	case *types.EventEx:
		return x.EventTypeId
	case *types.ExtendedEvent:
		return x.EventTypeId
	}
	return reflect.ValueOf(e).Elem().Type().Name()
}

func (st *eventState) category(e types.BaseEvent) string {
	if x, ok := e.(*types.EventEx); ok && x.Severity != "" {
		return x.Severity
	}
	if c, ok := st.info[reflect.ValueOf(e).Elem().Type().Name()]; ok {
		return c
	}
	return "info"
}

func eventEntities(e types.BaseEvent) []types.ManagedObjectReference {
	ev := e.GetEvent()
	var out []types.ManagedObjectReference
	if ev.Vm != nil {
		out = append(out, ev.Vm.Vm)
	}
	if ev.Host != nil {
		out = append(out, ev.Host.Host)
	}
	if ev.ComputeResource != nil {
		out = append(out, ev.ComputeResource.ComputeResource)
	}
	if ev.Ds != nil {
		out = append(out, ev.Ds.Datastore)
	}
	if ev.Net != nil {
		out = append(out, ev.Net.Network)
	}
	if ev.Dvs != nil {
		out = append(out, ev.Dvs.Dvs)
	}
	if ev.Datacenter != nil {
		out = append(out, ev.Datacenter.Datacenter)
	}
	return out
}

// isAncestor: is anc a strict ancestor of ref in the inventory?
func isAncestor(anc, ref types.ManagedObjectReference) bool {
	for i := 0; i < 64; i++ {
		obj, ok := simulator.Map.Get(ref).(mo.Entity)
		if !ok || obj.Entity().Parent == nil {
			return false
		}
		ref = *obj.Entity().Parent
		if ref == anc {
			return true
		}
	}
	return false
}

func (c *eventCollector) matches(e types.BaseEvent) bool {
	s := &c.spec
	ev := e.GetEvent()
	if len(s.EventTypeId) > 0 || len(s.Type) > 0 {
		want := map[string]bool{}
		for _, t := range append(append([]string{}, s.EventTypeId...), s.Type...) {
			want[t] = true
		}
		ok := want[eventTypeID(e)]
		for _, n := range eventClassNames(e) {
			ok = ok || want[n]
		}
		if !ok {
			return false
		}
	}
	if s.Time != nil {
		if s.Time.BeginTime != nil && ev.CreatedTime.Before(*s.Time.BeginTime) {
			return false
		}
		if s.Time.EndTime != nil && ev.CreatedTime.After(*s.Time.EndTime) {
			return false
		}
	}
	if len(s.Category) > 0 {
		cat, ok := c.st.category(e), false
		for _, x := range s.Category {
			ok = ok || x == cat
		}
		if !ok {
			return false
		}
	}
	if s.EventChainId != 0 && ev.ChainId != s.EventChainId {
		return false
	}
	if s.Entity != nil {
		root := simulatorContent().RootFolder
		want := s.Entity.Entity
		rec := s.Entity.Recursion
		if want == root && rec != types.EventFilterSpecRecursionOptionChildren {
			return true
		}
		for _, ref := range eventEntities(e) {
			self := ref == want
			child := isAncestor(want, ref)
			switch rec {
			case types.EventFilterSpecRecursionOptionSelf:
				if self {
					return true
				}
			case types.EventFilterSpecRecursionOptionChildren:
				if child {
					return true
				}
			default: // all
				if self || child {
					return true
				}
			}
		}
		return false
	}
	return true
}

// view: the matching history, ascending keys (st.mu held).
func (c *eventCollector) viewLocked() []types.BaseEvent {
	var out []types.BaseEvent
	for _, e := range c.st.all {
		if c.matches(e) {
			out = append(out, e)
		}
	}
	return out
}

func (c *eventCollector) latestPageLocked() []types.BaseEvent {
	v := c.viewLocked()
	if len(v) > c.pageSize {
		v = v[len(v)-c.pageSize:]
	}
	// newest first, as vCenter lists it (the reference: "unordered")
	out := make([]types.BaseEvent, len(v))
	for i := range v {
		out[len(v)-1-i] = v[i]
	}
	return out
}

// --- SOAP methods ---

func invalidMaxCount() *soap.Fault {
	return simulator.Fault("", &types.InvalidArgument{InvalidProperty: "maxCount"})
}

func (c *eventCollector) ReadNextEvents(ctx *simulator.Context, req *types.ReadNextEvents) soap.HasFault {
	if req.MaxCount <= 0 || req.MaxCount > 1000 {
		return &methods.ReadNextEventsBody{Fault_: invalidMaxCount()}
	}
	c.st.merge()
	body := &methods.ReadNextEventsBody{Res: &types.ReadNextEventsResponse{}}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	for _, e := range c.viewLocked() {
		if len(body.Res.Returnval) == int(req.MaxCount) {
			break
		}
		if k := e.GetEvent().Key; k > c.cursor {
			body.Res.Returnval = append(body.Res.Returnval, e)
			c.cursor = k
		}
	}
	return body
}

func (c *eventCollector) ReadPreviousEvents(ctx *simulator.Context, req *types.ReadPreviousEvents) soap.HasFault {
	if req.MaxCount <= 0 || req.MaxCount > 1000 {
		return &methods.ReadPreviousEventsBody{Fault_: invalidMaxCount()}
	}
	c.st.merge()
	body := &methods.ReadPreviousEventsBody{Res: &types.ReadPreviousEventsResponse{}}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	var prev []types.BaseEvent
	for _, e := range c.viewLocked() {
		if e.GetEvent().Key <= c.cursor {
			prev = append(prev, e)
		}
	}
	if len(prev) > int(req.MaxCount) {
		prev = prev[len(prev)-int(req.MaxCount):]
	}
	if len(prev) > 0 {
		c.cursor = prev[0].GetEvent().Key - 1
	}
	body.Res.Returnval = prev
	return body
}

func (c *eventCollector) RewindCollector(ctx *simulator.Context, req *types.RewindCollector) soap.HasFault {
	c.st.mu.Lock()
	c.cursor = 0
	c.st.mu.Unlock()
	return &methods.RewindCollectorBody{Res: new(types.RewindCollectorResponse)}
}

func (c *eventCollector) ResetCollector(ctx *simulator.Context, req *types.ResetCollector) soap.HasFault {
	c.st.merge()
	c.st.mu.Lock()
	page := c.latestPageLocked()
	if len(page) > 0 {
		c.cursor = page[len(page)-1].GetEvent().Key - 1
	} else {
		c.cursor = c.st.lastKey
	}
	c.st.mu.Unlock()
	return &methods.ResetCollectorBody{Res: new(types.ResetCollectorResponse)}
}

func (c *eventCollector) SetCollectorPageSize(ctx *simulator.Context, req *types.SetCollectorPageSize) soap.HasFault {
	if req.MaxCount < 0 || req.MaxCount > 1000 {
		return &methods.SetCollectorPageSizeBody{Fault_: invalidMaxCount()}
	}
	c.st.mu.Lock()
	c.pageSize = int(req.MaxCount)
	if c.pageSize == 0 {
		c.pageSize = 10
	}
	c.st.mu.Unlock()
	return &methods.SetCollectorPageSizeBody{Res: new(types.SetCollectorPageSizeResponse)}
}

func (c *eventCollector) DestroyCollector(ctx *simulator.Context, req *types.DestroyCollector) soap.HasFault {
	ctx.Session.Remove(req.This)
	c.st.mu.Lock()
	delete(c.st.colls, req.This)
	c.st.mu.Unlock()
	return &methods.DestroyCollectorBody{Res: new(types.DestroyCollectorResponse)}
}

// Get is what the PropertyCollector reads (filter, latestPage).
func (c *eventCollector) Get() mo.Reference {
	c.st.merge()
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	clone := &mo.EventHistoryCollector{}
	clone.Self = c.Self
	clone.Filter = c.spec
	clone.LatestPage = c.latestPageLocked()
	return clone
}

// --- the front handler's hook ---

// collectorRef parses the returnval of a CreateCollectorForEventsResponse.
func collectorRef(body []byte) (types.ManagedObjectReference, bool) {
	d := xml.NewDecoder(strings.NewReader(string(body)))
	for {
		tok, err := d.Token()
		if err != nil {
			return types.ManagedObjectReference{}, false
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "returnval" {
			continue
		}
		var ref types.ManagedObjectReference
		if err := d.DecodeElement(&ref, &se); err != nil {
			return ref, false
		}
		// encoding/xml has no "type" attr binding on this type: read it
		for _, a := range se.Attr {
			if a.Name.Local == "type" {
				ref.Type = a.Value
			}
		}
		return ref, ref.Value != ""
	}
}

// sessionRegistry finds the session of a cookie value (gate held
// exclusively: no SOAP request touches the table meanwhile).
func sessionRegistry(key string) *simulator.Registry {
	sessions := unexported(simulator.Map.SessionManager(), "sessions")
	v := sessions.MapIndex(reflect.ValueOf(key))
	if !v.IsValid() {
		return nil
	}
	s := v.Interface().(simulator.Session)
	return s.Registry
}

// --- control ---

func init() {
	controls["post_event"] = ctlPostEvent
	controls["events"] = ctlEvents
}

func hostEventArgs(h *simulator.HostSystem) (types.HostEventArgument, *types.ComputeResourceEventArgument, *types.DatacenterEventArgument) {
	host := types.HostEventArgument{Host: h.Self, EntityEventArgument: types.EntityEventArgument{Name: h.Name}}
	var cr *types.ComputeResourceEventArgument
	var dc *types.DatacenterEventArgument
	ref := h.Parent
	for i := 0; ref != nil && i < 64; i++ {
		obj := simulator.Map.Get(*ref)
		e, ok := obj.(mo.Entity)
		if !ok {
			break
		}
		switch ref.Type {
		case "ComputeResource", "ClusterComputeResource":
			if cr == nil {
				cr = &types.ComputeResourceEventArgument{ComputeResource: *ref,
					EntityEventArgument: types.EntityEventArgument{Name: e.Entity().Name}}
			}
		case "Datacenter":
			dc = &types.DatacenterEventArgument{Datacenter: *ref,
				EntityEventArgument: types.EntityEventArgument{Name: e.Entity().Name}}
		}
		ref = e.Entity().Parent
	}
	return host, cr, dc
}

// post_event {host, event_type_id?, type?, message?, severity?, arguments?}
// posts, for that host, an EventEx with eventTypeId (esx.problem.*,
// vprob.*, …: type "EventEx", the default) or an event of the vim25 class
// named by type (HostConnectionLostEvent, …).  Answers {"key": n}.
func ctlPostEvent(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	kind, err := argOptString(req, "type", "EventEx")
	if err != nil {
		return nil, err
	}
	msg, err := argOptString(req, "message", "")
	if err != nil {
		return nil, err
	}
	sev, err := argOptString(req, "severity", "")
	if err != nil {
		return nil, err
	}
	switch sev {
	case "", "info", "warning", "error", "user":
	default:
		return nil, badRequest("severity %q: not info, warning, error or user", sev)
	}
	typeID, err := argOptString(req, "event_type_id", "")
	if err != nil {
		return nil, err
	}
	var ev types.BaseEvent
	if kind == "EventEx" {
		if typeID == "" {
			return nil, badRequest("an EventEx needs event_type_id")
		}
		ex := &types.EventEx{EventTypeId: typeID, Severity: sev, Message: msg}
		if args, ok := req["arguments"].(map[string]interface{}); ok {
			var keys []string
			for k := range args {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				ex.Arguments = append(ex.Arguments, types.KeyAnyValue{Key: k, Value: fmt.Sprint(args[k])})
			}
		}
		ev = ex
	} else {
		if typeID != "" {
			return nil, badRequest("event_type_id is for type EventEx only")
		}
		t, ok := types.TypeFunc()(kind)
		if !ok {
			return nil, badRequest("type %q: no such vim25 type", kind)
		}
		e, ok := reflect.New(t).Interface().(types.BaseEvent)
		if !ok {
			return nil, badRequest("type %q: not an Event", kind)
		}
		ev = e
	}
	h := hr.h
	host, cr, dc := hostEventArgs(h)
	base := ev.GetEvent()
	base.Host = &host
	base.ComputeResource = cr
	base.Datacenter = dc
	base.FullFormattedMessage = msg
	ctx := &simulator.Context{Context: nilContext(), Map: simulator.Map,
		Session: &simulator.Session{Registry: simulator.NewRegistry()}}
	em := w.events.em
	simulator.Map.WithLock(em, func() {
		em.PostEvent(ctx, &types.PostEvent{EventToPost: ev})
	})
	if msg != "" {
		base.FullFormattedMessage = msg
	}
	w.events.merge()
	return map[string]interface{}{"key": base.Key, "created": base.CreatedTime.Format(time.RFC3339Nano)}, nil
}

// events: the history's size, newest key and how many rolled over.
func ctlEvents(w *world, _ map[string]interface{}) (interface{}, error) {
	st := w.events
	st.merge()
	st.mu.Lock()
	defer st.mu.Unlock()
	oldest := int32(0)
	if len(st.all) > 0 {
		oldest = st.all[0].GetEvent().Key
	}
	return map[string]interface{}{"count": len(st.all), "oldest_key": oldest,
		"newest_key": st.lastKey, "rolled_over": st.rolled, "collectors": len(st.colls)}, nil
}
