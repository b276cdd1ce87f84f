package main

// vSAN, which the simulator (govmomi 0.24.2) lacks entirely: a strict fake
// of the two calls esxwatch makes, built from the documented types.
//
//   - HostSystem.configManager.vsanSystem -> a HostVsanSystem per host
//     (config.enabled: true for cluster hosts), and its method
//     QueryDisksForVsan(canonicalName[]) -> VsanHostDiskResult[]: disk
//     (HostScsiDisk), state (VsanHostDiskResultState: inUse, eligible,
//     ineligible), vsanUuid, error (LocalizedMethodFault: why ineligible,
//     e.g. DiskHasPartitions), degraded.  vSphere Web Services API
//     reference: managed object HostVsanSystem, data object
//     VsanHostDiskResult.
//     Every host gets two local vSAN-capable disks (a cache SSD and a
//     capacity disk, eligible) next to the simulator's local boot disk
//     (ineligible: DiskHasPartitions); SAN LUNs are not listed.
//   - The vSAN health service's SMART data (vSAN Management API, endpoint
//     /vsanHealth, namespace urn:vsan): VsanVcClusterHealthSystem
//     "vsan-cluster-health-system" .VsanQueryVcClusterSmartStatsSummary
//     (cluster) -> VsanSmartStatsHostSummary[] {hostname, smartStats:
//     VsanSmartDiskStats[] {disk, stats: VsanSmartParameter[] {parameter
//     (VsanSmartParameterType), value, threshold, worst}, error}} for the
//     vSAN disks of the cluster's hosts.  The session is the vim25 one
//     (the same cookie).  govmomi's vsan/types give the request types and
//     the names; the response is written with local types so that a zero
//     value is sent (govmomi's have omitempty on value/threshold/worst).

import (
	"fmt"
	"sort"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	vsantypes "github.com/vmware/govmomi/vsan/types"
)

const bootDisk = "mpx.vmhba0:C0:T0:L0"

type vsanDisk struct {
	state    string // eligible, ineligible, inUse
	fault    string // vim25 fault class when ineligible
	message  string
	smart    map[string]smartValue
	smartErr string
}

type smartValue struct {
	Value, Threshold, Worst *int32
}

type vsanState struct {
	mu    sync.Mutex
	disks map[string]map[string]*vsanDisk // host moid -> canonical -> disk
}

func i32(v int32) *int32 { return &v }

func defaultSmart() map[string]smartValue {
	return map[string]smartValue{
		"smarthealthstatus":          {Value: i32(0)},
		"smartmediawearoutindicator": {Value: i32(100), Threshold: i32(0), Worst: i32(100)},
		"smartwriteerrorcount":       {Value: i32(0), Threshold: i32(0), Worst: i32(0)},
		"smartreaderrorcount":        {Value: i32(0), Threshold: i32(0), Worst: i32(0)},
		"smartpoweronhours":          {Value: i32(8760), Threshold: i32(0), Worst: i32(8760)},
		"smartpowercyclecount":       {Value: i32(12), Threshold: i32(0), Worst: i32(12)},
		"smartreallocatedsectorct":   {Value: i32(0), Threshold: i32(10), Worst: i32(0)},
		"smartdrivetemperature":      {Value: i32(34), Threshold: i32(0), Worst: i32(41)},
	}
}

func vsanDiskNames(i int) (string, string) {
	return fmt.Sprintf("naa.55cd2e414d6f%06x", i), fmt.Sprintf("naa.5000c500b1c2%06x", i)
}

type HostVsanSystem struct {
	mo.HostVsanSystem
	w    *world
	host types.ManagedObjectReference
}

func (w *world) installVsan() error {
	st := &vsanState{disks: map[string]map[string]*vsanDisk{}}
	w.vsan = st
	for i, h := range w.hosts() {
		if h.Config == nil || h.Config.StorageDevice == nil {
			continue
		}
		cache, capacity := vsanDiskNames(i)
		sd := h.Config.StorageDevice
		for j, name := range []string{cache, capacity} {
			ssd := j == 0
			sd.ScsiLun = append(sd.ScsiLun, &types.HostScsiDisk{
				ScsiLun: types.ScsiLun{
					HostDevice:       types.HostDevice{DeviceName: "/vmfs/devices/disks/" + name, DeviceType: "disk"},
					Key:              "key-vim.host.ScsiDisk-0100000000" + name[4:],
					Uuid:             "0100000000" + name[4:],
					CanonicalName:    name,
					DisplayName:      "Local ATA Disk (" + name + ")",
					LunType:          "disk",
					Vendor:           "ATA",
					Model:            map[bool]string{true: "VCSIM SSD 800G", false: "VCSIM HDD 4T"}[ssd],
					OperationalState: []string{"ok"},
				},
				Capacity:   types.HostDiskDimensionsLba{BlockSize: 512, Block: map[bool]int64{true: 1562824368, false: 7814037168}[ssd]},
				DevicePath: "/vmfs/devices/disks/" + name,
				Ssd:        boolp(ssd),
				LocalDisk:  boolp(true),
			})
		}
		disks := map[string]*vsanDisk{
			bootDisk: {state: "ineligible", fault: "DiskHasPartitions",
				message: "Disk " + bootDisk + " has partitions (the boot disk)", smart: defaultSmart()},
			cache:    {state: "eligible", smart: defaultSmart()},
			capacity: {state: "eligible", smart: defaultSmart()},
		}
		st.disks[h.Self.Value] = disks
		vs := &HostVsanSystem{w: w, host: h.Self}
		vs.Self = types.ManagedObjectReference{Type: "HostVsanSystem", Value: "vsanSystem-" + h.Self.Value}
		inCluster := h.Parent != nil && h.Parent.Type == "ClusterComputeResource"
		vs.Config = types.VsanHostConfigInfo{Enabled: boolp(inCluster), HostSystem: &h.Self}
		simulator.Map.Put(vs)
		ref := vs.Self
		h.ConfigManager.VsanSystem = &ref
	}
	return nil
}

func (st *vsanState) hostDisks(host types.ManagedObjectReference) map[string]*vsanDisk {
	return st.disks[host.Value]
}

func (v *HostVsanSystem) QueryDisksForVsan(ctx *simulator.Context, req *types.QueryDisksForVsan) soap.HasFault {
	h, ok := simulator.Map.Get(v.host).(*simulator.HostSystem)
	if !ok {
		return &methods.QueryDisksForVsanBody{Fault_: simulator.Fault("", &types.ManagedObjectNotFound{Obj: v.host})}
	}
	want := map[string]bool{}
	for _, n := range req.CanonicalName {
		want[n] = true
	}
	luns := map[string]types.HostScsiDisk{}
	withLock(h, func() {
		for _, l := range h.Config.StorageDevice.ScsiLun {
			if d, ok := l.(*types.HostScsiDisk); ok {
				luns[d.CanonicalName] = *d
			}
		}
	})
	st := v.w.vsan
	st.mu.Lock()
	defer st.mu.Unlock()
	disks := st.hostDisks(v.host)
	var names []string
	for n := range disks {
		if len(want) == 0 || want[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	res := &types.QueryDisksForVsanResponse{}
	for _, n := range names {
		d := disks[n]
		disk, ok := luns[n]
		if !ok {
			continue
		}
		r := types.VsanHostDiskResult{Disk: disk, State: d.state, Degraded: boolp(false)}
		if d.state == "inUse" {
			r.VsanUuid = fmt.Sprintf("52%014x-%s", len(n), n[len(n)-6:])
		}
		if d.fault != "" {
			if f := newFault(d.fault); f != nil {
				r.Error = &types.LocalizedMethodFault{Fault: f, LocalizedMessage: d.message}
			}
		}
		res.Returnval = append(res.Returnval, r)
	}
	return &methods.QueryDisksForVsanBody{Res: res}
}

func newFault(name string) types.BaseMethodFault {
	t, ok := types.TypeFunc()(name)
	if !ok {
		return nil
	}
	f, _ := reflectNew(t).(types.BaseMethodFault)
	return f
}

// --- the vSAN health service endpoint ---

var vsanHealthRef = types.ManagedObjectReference{Type: "VsanVcClusterHealthSystem", Value: "vsan-cluster-health-system"}

type VsanVcClusterHealthSystem struct {
	Self types.ManagedObjectReference
	w    *world
}

func (s *VsanVcClusterHealthSystem) Reference() types.ManagedObjectReference { return s.Self }

type VsanSmartParameter struct {
	Parameter string `xml:"parameter,omitempty"`
	Value     *int32 `xml:"value,omitempty"`
	Threshold *int32 `xml:"threshold,omitempty"`
	Worst     *int32 `xml:"worst,omitempty"`
}

type VsanSmartDiskStats struct {
	Disk  string                `xml:"disk"`
	Stats []VsanSmartParameter  `xml:"stats,omitempty"`
	Error types.BaseMethodFault `xml:"error,omitempty,typeattr"`
}

type VsanSmartStatsHostSummary struct {
	Hostname   string               `xml:"hostname,omitempty"`
	SmartStats []VsanSmartDiskStats `xml:"smartStats,omitempty"`
}

type VsanQueryVcClusterSmartStatsSummaryResponse struct {
	Returnval []VsanSmartStatsHostSummary `xml:"returnval,omitempty"`
}

type smartBody struct {
	Res    *VsanQueryVcClusterSmartStatsSummaryResponse `xml:"urn:vsan VsanQueryVcClusterSmartStatsSummaryResponse,omitempty"`
	Fault_ *soap.Fault                                  `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *smartBody) Fault() *soap.Fault { return b.Fault_ }

func (s *VsanVcClusterHealthSystem) VsanQueryVcClusterSmartStatsSummary(ctx *simulator.Context, req *vsantypes.VsanQueryVcClusterSmartStatsSummary) soap.HasFault {
	c, ok := simulator.Map.Get(req.Cluster).(*simulator.ClusterComputeResource)
	if !ok {
		return &smartBody{Fault_: simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.Cluster})}
	}
	res := &VsanQueryVcClusterSmartStatsSummaryResponse{}
	st := s.w.vsan
	var hosts []*simulator.HostSystem
	withLock(c, func() {
		for _, ref := range c.Host {
			if h, ok := simulator.Map.Get(ref).(*simulator.HostSystem); ok {
				hosts = append(hosts, h)
			}
		}
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, h := range hosts {
		sum := VsanSmartStatsHostSummary{Hostname: h.Name}
		disks := st.hostDisks(h.Self)
		var names []string
		for n, d := range disks {
			if n != bootDisk && d.state != "ineligible" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			d := disks[n]
			ds := VsanSmartDiskStats{Disk: n}
			if d.smartErr != "" {
				ds.Error = &types.SystemError{Reason: d.smartErr}
			} else {
				var params []string
				for p := range d.smart {
					params = append(params, p)
				}
				sort.Strings(params)
				for _, p := range params {
					v := d.smart[p]
					ds.Stats = append(ds.Stats, VsanSmartParameter{Parameter: p, Value: v.Value,
						Threshold: v.Threshold, Worst: v.Worst})
				}
			}
			sum.SmartStats = append(sum.SmartStats, ds)
		}
		res.Returnval = append(res.Returnval, sum)
	}
	return &smartBody{Res: res}
}

// vsanRegistry is the /vsanHealth endpoint's registry (vCenter only).
func (w *world) vsanRegistry() *simulator.Registry {
	r := simulator.NewRegistry()
	r.Namespace = "vsan"
	r.Path = "/vsanHealth"
	r.Put(&VsanVcClusterHealthSystem{Self: vsanHealthRef, w: w})
	return r
}

// --- control ---

func init() {
	controls["set_vsan_disk"] = ctlSetVsanDisk
	controls["set_smart"] = ctlSetSmart
	controls["vsan_disks"] = ctlVsanDisks
}

func (w *world) vsanDisk(req map[string]interface{}) (*vsanDisk, *hostRef, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, nil, err
	}
	name, err := argString(req, "disk")
	if err != nil {
		return nil, nil, err
	}
	d := w.vsan.hostDisks(hr.h.Self)[name]
	if d == nil {
		return nil, nil, notFound("no vSAN disk %q on %s", name, hr.h.Name)
	}
	return d, hr, nil
}

// vsan_disks {host}: the host's disks QueryDisksForVsan lists.
func ctlVsanDisks(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	w.vsan.mu.Lock()
	defer w.vsan.mu.Unlock()
	out := map[string]string{}
	for n, d := range w.vsan.hostDisks(hr.h.Self) {
		out[n] = d.state
	}
	return map[string]interface{}{"disks": out}, nil
}

// set_vsan_disk {host, disk, state, fault?, message?}: state eligible,
// ineligible (fault: a vim25 fault class, default DiskHasPartitions;
// message its localizedMessage) or inUse.
func ctlSetVsanDisk(w *world, req map[string]interface{}) (interface{}, error) {
	state, err := argString(req, "state")
	if err != nil {
		return nil, err
	}
	fault, err := argOptString(req, "fault", "")
	if err != nil {
		return nil, err
	}
	msg, err := argOptString(req, "message", "")
	if err != nil {
		return nil, err
	}
	switch state {
	case "eligible", "inUse":
		if fault != "" {
			return nil, badRequest("fault only with state ineligible")
		}
	case "ineligible":
		if fault == "" {
			fault = "DiskHasPartitions"
		}
		if newFault(fault) == nil {
			return nil, badRequest("fault %q: not a vim25 fault class", fault)
		}
	default:
		return nil, badRequest("state %q: not eligible, ineligible or inUse", state)
	}
	w.vsan.mu.Lock()
	defer w.vsan.mu.Unlock()
	d, _, err := w.vsanDisk(req)
	if err != nil {
		return nil, err
	}
	d.state, d.fault, d.message = state, fault, msg
	return nil, nil
}

// set_smart {host, disk, parameter, value, threshold?, worst?} or
// {host, disk, error: "reason"}: the disk's SMART data in the vSAN health
// service (parameter: a VsanSmartParameterType, smartreallocatedsectorct …).
func ctlSetSmart(w *world, req map[string]interface{}) (interface{}, error) {
	w.vsan.mu.Lock()
	defer w.vsan.mu.Unlock()
	d, _, err := w.vsanDisk(req)
	if err != nil {
		return nil, err
	}
	if e, ok := req["error"]; ok {
		s, ok := e.(string)
		if !ok {
			return nil, badRequest("\"error\": not a string")
		}
		d.smartErr = s
		return nil, nil
	}
	p, err := argString(req, "parameter")
	if err != nil {
		return nil, err
	}
	if !validSmart[p] {
		return nil, badRequest("parameter %q: not a VsanSmartParameterType", p)
	}
	var v smartValue
	for _, f := range []struct {
		key string
		dst **int32
	}{{"value", &v.Value}, {"threshold", &v.Threshold}, {"worst", &v.Worst}} {
		if _, ok := req[f.key]; ok {
			n, err := argInt(req, f.key)
			if err != nil {
				return nil, err
			}
			*f.dst = i32(int32(n))
		}
	}
	if v.Value == nil {
		return nil, badRequest("missing \"value\"")
	}
	d.smartErr = ""
	d.smart[p] = v
	return nil, nil
}

var validSmart = map[string]bool{
	"smartdrivetemperature": true, "smartinitialbadblockcount": true,
	"smartdriveratedmaxtemperature": true, "smartmediawearoutindicator": true,
	"smartwritesectorstotct": true, "smartreallocatedsectorct": true,
	"smartreadsectorstotct": true, "smartpowercyclecount": true,
	"smarthealthstatus": true, "smartpoweronhours": true,
	"smartwriteerrorcount": true, "smartrawreaderrorrate": true,
	"smartreaderrorcount": true,
}
