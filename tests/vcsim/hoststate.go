package main

// A host's NICs and state as the vSphere API documents them:
//   - HostSystem.config.network.pnic[].linkSpeed (PhysicalNic.linkSpeed:
//     "If this property is not set, then the link is down"; speedMb,
//     duplex — data object PhysicalNicLinkInfo);
//   - runtime.connectionState (HostSystemConnectionState: connected,
//     notResponding, disconnected) and runtime.inMaintenanceMode
//     (HostRuntimeInfo), mirrored in summary.runtime.

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

func init() {
	controls["set_link"] = ctlSetLink
	controls["set_connection"] = ctlSetConnection
	controls["set_maintenance"] = ctlSetMaintenance
}

// set_link {host, pnic, up, speed_mb?, duplex?}: up=false clears linkSpeed
// (link down); up=true sets it (default 10000 Mb/s, full duplex).
func ctlSetLink(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	dev, err := argString(req, "pnic")
	if err != nil {
		return nil, err
	}
	up, err := argBool(req, "up")
	if err != nil {
		return nil, err
	}
	speed := int64(10000)
	if _, ok := req["speed_mb"]; ok {
		if speed, err = argInt(req, "speed_mb"); err != nil {
			return nil, err
		}
		if speed <= 0 {
			return nil, badRequest("speed_mb must be > 0")
		}
	}
	duplex := true
	if _, ok := req["duplex"]; ok {
		if duplex, err = argBool(req, "duplex"); err != nil {
			return nil, err
		}
	}
	h := hr.h
	found := false
	withLock(h, func() {
		pnics := make([]types.PhysicalNic, len(h.Config.Network.Pnic))
		copy(pnics, h.Config.Network.Pnic)
		for i := range pnics {
			if pnics[i].Device != dev {
				continue
			}
			found = true
			if up {
				pnics[i].LinkSpeed = &types.PhysicalNicLinkInfo{SpeedMb: int32(speed), Duplex: duplex}
			} else {
				pnics[i].LinkSpeed = nil
			}
		}
		if found {
			h.Config.Network.Pnic = pnics
			simulator.Map.Update(h, []types.PropertyChange{{Op: types.PropertyChangeOpAssign, Name: "config.network.pnic", Val: pnics}})
		}
	})
	if !found {
		return nil, notFound("no pnic %q on %s", dev, h.Name)
	}
	return nil, nil
}

// set_connection {host, state}: runtime.connectionState.
func ctlSetConnection(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	state, err := argString(req, "state")
	if err != nil {
		return nil, err
	}
	switch types.HostSystemConnectionState(state) {
	case types.HostSystemConnectionStateConnected, types.HostSystemConnectionStateNotResponding,
		types.HostSystemConnectionStateDisconnected:
	default:
		return nil, badRequest("state %q: not connected, notResponding or disconnected", state)
	}
	h := hr.h
	withLock(h, func() {
		// summary.runtime is the same object: both names are announced,
		// for filters on either
		v := types.HostSystemConnectionState(state)
		simulator.Map.Update(h, []types.PropertyChange{
			{Op: types.PropertyChangeOpAssign, Name: "runtime.connectionState", Val: v},
			{Op: types.PropertyChangeOpAssign, Name: "summary.runtime.connectionState", Val: v},
		})
	})
	return nil, nil
}

// set_maintenance {host, on}: runtime.inMaintenanceMode.
func ctlSetMaintenance(w *world, req map[string]interface{}) (interface{}, error) {
	hr, err := w.host(req)
	if err != nil {
		return nil, err
	}
	on, err := argBool(req, "on")
	if err != nil {
		return nil, err
	}
	h := hr.h
	withLock(h, func() {
		simulator.Map.Update(h, []types.PropertyChange{
			{Op: types.PropertyChangeOpAssign, Name: "runtime.inMaintenanceMode", Val: on},
			{Op: types.PropertyChangeOpAssign, Name: "summary.runtime.inMaintenanceMode", Val: on},
		})
	})
	return nil, nil
}
