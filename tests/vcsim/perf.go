package main

// The PerformanceManager, as the vSphere API documents it, for the counters
// esxwatch reads: net.errorsRx, net.errorsTx, net.droppedRx, net.droppedTx
// (rollupType summation, statsType delta) of a HostSystem, per instance
// "vmnicN" and the aggregate instance "", real-time interval (20 s).
//
// The simulator's own (govmomi 0.24.2) drops zero samples, adds random noise,
// answers the same series for every host and NIC, and its QueryPerfCounter
// fails (nil response).  This replacement answers from values the control
// endpoint sets (set_counter), exactly:
//   - QueryPerfCounter: PerfCounterInfo of the given keys (InvalidArgument
//     for an unknown key), from the simulator's captured vCenter (or ESX)
//     counter table, the same one as the perfCounter property;
//   - QueryPerfProviderSummary: currentSupported, refreshRate 20 for hosts;
//   - QueryAvailablePerfMetric: the four counters, instance "" and per pnic;
//   - QueryPerf: per PerfQuerySpec one PerfEntityMetric (format "normal")
//     or PerfEntityMetricCSV ("csv") with PerfMetricIntSeries per
//     requested (counterId, instance) — instance "*" means all instances
//     including the aggregate "" — samples at 20 s boundaries, the newest
//     holding the value set, older ones 0.  Counters not simulated give no
//     series (as for a metric the entity lacks); intervalId other than 20
//     is InvalidArgument.
// References: vSphere Web Services API, managed object PerformanceManager
// (QueryPerf, QueryPerfCounter, QueryAvailablePerfMetric,
// QueryPerfProviderSummary), data objects PerfQuerySpec, PerfEntityMetric,
// PerfMetricIntSeries, PerfCounterInfo, PerfSampleInfo.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const realtimeInterval = 20

var netCounters = []string{"errorsRx", "errorsTx", "droppedRx", "droppedTx"}

type perfState struct {
	mu     sync.Mutex
	ids    map[string]int32 // "net.errorsRx" -> counter key
	names  map[int32]string
	values map[string]int64 // host moid / vmnic / counter name -> latest sample
}

type perfManager struct {
	mo.PerformanceManager
	w *world
}

func (w *world) installPerf() error {
	ref := simulator.Map.Get(*simulatorContent().PerfManager)
	orig, ok := ref.(*simulator.PerformanceManager)
	if !ok {
		return fmt.Errorf("no PerformanceManager")
	}
	st := &perfState{ids: map[string]int32{}, names: map[int32]string{}, values: map[string]int64{}}
	for _, c := range orig.PerfCounter {
		if c.GroupInfo == nil || c.NameInfo == nil || c.GroupInfo.GetElementDescription().Key != "net" {
			continue
		}
		name := c.NameInfo.GetElementDescription().Key
		if c.RollupType != types.PerfSummaryTypeSummation || !isNetCounter(name) {
			continue
		}
		st.ids["net."+name] = c.Key
		st.names[c.Key] = "net." + name
	}
	for _, n := range netCounters {
		if _, ok := st.ids["net."+n]; !ok {
			return fmt.Errorf("the counter table has no net.%s summation counter", n)
		}
	}
	w.perf = st
	simulator.Map.Put(&perfManager{PerformanceManager: orig.PerformanceManager, w: w})
	return nil
}

func isNetCounter(name string) bool {
	for _, n := range netCounters {
		if n == name {
			return true
		}
	}
	return false
}

func simulatorContent() types.ServiceContent {
	si := simulator.Map.Get(types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"})
	return si.(*simulator.ServiceInstance).Content
}

func perfKey(host, inst, counter string) string { return host + "/" + inst + "/" + counter }

func (p *perfManager) QueryPerfCounter(ctx *simulator.Context, req *types.QueryPerfCounter) soap.HasFault {
	body := &methods.QueryPerfCounterBody{Res: &types.QueryPerfCounterResponse{}}
	for _, id := range req.CounterId {
		found := false
		for _, c := range p.PerfCounter {
			if c.Key == id {
				body.Res.Returnval = append(body.Res.Returnval, c)
				found = true
				break
			}
		}
		if !found {
			return &methods.QueryPerfCounterBody{Fault_: simulator.Fault("", &types.InvalidArgument{InvalidProperty: "counterId"})}
		}
	}
	return body
}

func (p *perfManager) QueryPerfProviderSummary(ctx *simulator.Context, req *types.QueryPerfProviderSummary) soap.HasFault {
	s := types.PerfProviderSummary{Entity: req.Entity, SummarySupported: true, RefreshRate: -1}
	if req.Entity.Type == "HostSystem" || req.Entity.Type == "VirtualMachine" {
		s.CurrentSupported = true
		s.RefreshRate = realtimeInterval
	}
	return &methods.QueryPerfProviderSummaryBody{Res: &types.QueryPerfProviderSummaryResponse{Returnval: s}}
}

func hostPnics(ref types.ManagedObjectReference) ([]string, bool) {
	h, ok := simulator.Map.Get(ref).(*simulator.HostSystem)
	if !ok {
		return nil, false
	}
	var out []string
	withLock(h, func() {
		if h.Config != nil && h.Config.Network != nil {
			for _, n := range h.Config.Network.Pnic {
				out = append(out, n.Device)
			}
		}
	})
	return out, true
}

func (p *perfManager) QueryAvailablePerfMetric(ctx *simulator.Context, req *types.QueryAvailablePerfMetric) soap.HasFault {
	body := &methods.QueryAvailablePerfMetricBody{Res: &types.QueryAvailablePerfMetricResponse{}}
	pnics, ok := hostPnics(req.Entity)
	if !ok || (req.IntervalId != 0 && req.IntervalId != realtimeInterval) {
		return body
	}
	st := p.w.perf
	for _, n := range netCounters {
		id := st.ids["net."+n]
		body.Res.Returnval = append(body.Res.Returnval, types.PerfMetricId{CounterId: id, Instance: ""})
		for _, nic := range pnics {
			body.Res.Returnval = append(body.Res.Returnval, types.PerfMetricId{CounterId: id, Instance: nic})
		}
	}
	return body
}

func (p *perfManager) QueryPerf(ctx *simulator.Context, req *types.QueryPerf) soap.HasFault {
	body := &methods.QueryPerfBody{Res: &types.QueryPerfResponse{}}
	now := time.Now().UTC().Truncate(realtimeInterval * time.Second)
	for _, spec := range req.QuerySpec {
		if spec.IntervalId != 0 && spec.IntervalId != realtimeInterval {
			return &methods.QueryPerfBody{Fault_: simulator.Fault("only the real-time interval (20) is simulated",
				&types.InvalidArgument{InvalidProperty: "intervalId"})}
		}
		body.Res.Returnval = append(body.Res.Returnval, p.entityMetric(&spec, now))
	}
	return body
}

// samples: the timestamps the spec asks for, oldest first (the real-time
// history is one hour: 180 samples).
func samples(spec *types.PerfQuerySpec, now time.Time) []time.Time {
	n := 180
	if spec.StartTime != nil {
		k := int(now.Sub(*spec.StartTime) / (realtimeInterval * time.Second))
		if k < n {
			n = k
		}
	}
	end := now
	if spec.EndTime != nil && spec.EndTime.Before(now) {
		end = spec.EndTime.UTC().Truncate(realtimeInterval * time.Second)
		n -= int(now.Sub(end) / (realtimeInterval * time.Second))
	}
	if spec.MaxSample > 0 && int(spec.MaxSample) < n {
		n = int(spec.MaxSample)
	}
	if n < 0 {
		n = 0
	}
	ts := make([]time.Time, n)
	for i := 0; i < n; i++ {
		ts[i] = end.Add(-time.Duration(n-1-i) * realtimeInterval * time.Second)
	}
	return ts
}

func (p *perfManager) entityMetric(spec *types.PerfQuerySpec, now time.Time) types.BasePerfEntityMetricBase {
	base := types.PerfEntityMetricBase{Entity: spec.Entity}
	pnics, isHost := hostPnics(spec.Entity)
	ts := samples(spec, now)
	st := p.w.perf
	var ids []types.PerfMetricId
	if isHost {
		for _, m := range spec.MetricId {
			if _, ok := st.names[m.CounterId]; !ok {
				continue
			}
			switch m.Instance {
			case "*":
				ids = append(ids, types.PerfMetricId{CounterId: m.CounterId, Instance: ""})
				for _, nic := range pnics {
					ids = append(ids, types.PerfMetricId{CounterId: m.CounterId, Instance: nic})
				}
			case "":
				ids = append(ids, m)
			default:
				for _, nic := range pnics {
					if nic == m.Instance {
						ids = append(ids, m)
					}
				}
			}
		}
	}
	if len(ts) == 0 {
		ids = nil
	}
	series := make([][]int64, len(ids))
	st.mu.Lock()
	for i, id := range ids {
		name := st.names[id.CounterId]
		latest := int64(0)
		if id.Instance == "" {
			for _, nic := range pnics {
				latest += st.values[perfKey(spec.Entity.Value, nic, name)]
			}
		} else {
			latest = st.values[perfKey(spec.Entity.Value, id.Instance, name)]
		}
		series[i] = make([]int64, len(ts))
		series[i][len(ts)-1] = latest
	}
	st.mu.Unlock()
	if spec.Format == string(types.PerfFormatCsv) {
		m := &types.PerfEntityMetricCSV{PerfEntityMetricBase: base}
		if len(ids) > 0 {
			var si []string
			for _, t := range ts {
				si = append(si, strconv.Itoa(realtimeInterval), t.Format(time.RFC3339))
			}
			m.SampleInfoCSV = strings.Join(si, ",")
		}
		for i, id := range ids {
			var vs []string
			for _, v := range series[i] {
				vs = append(vs, strconv.FormatInt(v, 10))
			}
			m.Value = append(m.Value, types.PerfMetricSeriesCSV{
				PerfMetricSeries: types.PerfMetricSeries{Id: id}, Value: strings.Join(vs, ",")})
		}
		return m
	}
	m := &types.PerfEntityMetric{PerfEntityMetricBase: base}
	if len(ids) > 0 {
		for _, t := range ts {
			m.SampleInfo = append(m.SampleInfo, types.PerfSampleInfo{Timestamp: t, Interval: realtimeInterval})
		}
	}
	for i, id := range ids {
		m.Value = append(m.Value, &PerfMetricIntSeries{
			PerfMetricSeries: types.PerfMetricSeries{Id: id}, Value: series[i]})
	}
	return m
}

// PerfMetricIntSeries is types.PerfMetricIntSeries without omitempty on
// its values: govmomi's encoder applies omitempty to every element of a
// slice, so a zero sample vanished from the wire (the "drops zero samples"
// of the simulator's QueryPerf).  The Go type name is the xsi:type written.
type PerfMetricIntSeries struct {
	types.PerfMetricSeries

	Value []int64 `xml:"value"`
}

func init() {
	controls["set_counter"] = ctlSetCounter
	controls["counters"] = ctlCounters
}

// set_counter {host, pnic, counter, value}: the newest real-time sample of
// counter ("net.errorsRx", "net.errorsTx", "net.droppedRx",
// "net.droppedTx") for that host's vmnic.
func ctlSetCounter(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	nic, err := argString(req, "pnic")
	if err != nil {
		return nil, err
	}
	counter, err := argString(req, "counter")
	if err != nil {
		return nil, err
	}
	v, err := argInt(req, "value")
	if err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, badRequest("value must be >= 0")
	}
	if _, ok := w.perf.ids[counter]; !ok {
		return nil, badRequest("counter %q: not net.errorsRx/errorsTx/droppedRx/droppedTx", counter)
	}
	pnics, _ := hostPnics(hr.h.Self)
	found := false
	for _, p := range pnics {
		found = found || p == nic
	}
	if !found {
		return nil, notFound("no pnic %q on %s", nic, hr.h.Name)
	}
	w.perf.mu.Lock()
	w.perf.values[perfKey(hr.h.Self.Value, nic, counter)] = v
	w.perf.mu.Unlock()
	return nil, nil
}

// counters: the counter keys of the four net counters.
func ctlCounters(w *world, _ map[string]interface{}) (interface{}, error) {
	out := map[string]int32{}
	var names []string
	for n, id := range w.perf.ids {
		out[n] = id
		names = append(names, n)
	}
	sort.Strings(names)
	return map[string]interface{}{"counters": out, "interval": realtimeInterval}, nil
}
