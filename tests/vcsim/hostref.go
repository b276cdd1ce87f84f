package main

import "github.com/vmware/govmomi/simulator"

type hostRef struct{ h *simulator.HostSystem }
