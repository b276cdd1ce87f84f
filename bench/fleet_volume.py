#!/usr/bin/env python3
"""Events per host per day, by collector, measured on the simulated ESXi
host of the end-to-end tests (for sizing Log Insight: docs/fleet.md).

For each periodic collector, the agent (build/esxwatch) runs with only
that collector enabled against the e2e tests' fake esxcli/localcli/vdq
(tests/e2e/harness.py FakeHost, tests/e2e/storage_host.py), which replay
real captures from tests/fixtures/esxi: `--once` three times on one storage
directory (the first run sees everything for the first time; from the
second on the collector is in its steady state: samples, no changes).  The
third run's events are counted and sized (bytes of the JSON event as the
file sink writes it), and scaled to a day at the collector's default
interval (agent/config/config.c: nic 60 s, datastore 30 s, vsan 300 s, smart
3600 s, agent 300 s).  logwatch forwards only lines a rule matches
(forward: matches on vmkernel, vobd, hostd): zero on a healthy host, one
event per matching line otherwise (storm-limited); it is not scaled here.

    python3 bench/fleet_volume.py [--hosts N]

The last line: `volume: E events/host/day, B MB/host/day (N hosts: ...)`.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
import harness  # noqa: E402
import storage_host as sh  # noqa: E402

DEFAULT_INTERVAL = {"nic": 60, "datastore": 30, "vsan": 300, "smart": 3600, "agent": 300}
NIC_LIST = "esxi/esxcli-network-nic-list/esxi90-vmxnet3.txt"
STATS = "esxi/esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt"


def config(h, name):
    col = ""
    for c in ("nic", "datastore", "vsan", "smart", "agent"):
        col += ("  %s: {enabled: yes, interval: %d}\n" % (c, DEFAULT_INTERVAL[c]) if c == name
                else "  %s: {enabled: no}\n" % c)
    return ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "collectors:\n%s  logwatch: {enabled: no}\n"
            "filelog: {}\n" % (h.tools_dir, col))


def nic_host(root):
    """The ESXi 9.0 capture's vmnic0 line as vmnic0..3 (a host with four
    uplinks; same column widths), each with the KB 341594 stats capture."""
    h = harness.FakeHost(root)
    fx = lambda rel: open(os.path.join(harness.FIXTURES, rel)).read()
    lines = fx(NIC_LIST).splitlines()
    nics = ["vmnic%d" % i for i in range(4)]
    h.set_both("network nic list", text="\n".join(
        lines[:2] + [lines[2].replace("vmnic0", n) for n in nics]) + "\n")
    stats = fx(STATS)
    for n in nics:
        h.set_both("network nic stats get -n " + n, text=stats.replace("vmnic2", n))
    return h, "4 NICs (%s line x4, %s)" % (NIC_LIST, STATS)


def datastore_host(root):
    h = sh.StorageHost(root)
    h.apply()
    return h, "StorageHost: boot disk + SAN LUN (2 paths), VMFS, NFS 3 and 4.1 datastores"


def vsan_host(root):
    h = harness.FakeHost(root)
    h.set("vdq", "-q", fixture="esxi/vdq-q/esxi8.txt")
    return h, "vdq -q of an ESXi 8 host (esxi/vdq-q/esxi8.txt)"


def smart_host(root):
    h = harness.FakeHost(root)
    h.set_both("storage core device list", text=sh.smart_device_list())
    h.set_both("storage core device smart get -d " + sh.SATA_HDD, fixture="esxi/" + sh.SMART_5COL)
    h.set_both("storage core device smart get -d " + sh.SATA_OLD, fixture="esxi/" + sh.SMART_4COL)
    h.set_both("nvme device list", fixture="esxi/esxcli-nvme-device-list/esxi803.txt")
    h.set_both("storage core path list",
               fixture="esxi/esxcli-storage-core-path-list/esxi803-local-sata-nvme-usb.txt")
    for hba in ("vmhba0", "vmhba1", "vmhba4"):
        h.set_both("nvme device log smart get -A " + hba,
                   fixture="esxi/esxcli-nvme-device-log-smart-get/esxi803-wd-sn850x.txt")
    return h, "2 SATA disks (5- and 4-column SMART tables) + NVMe"


def agent_host(root):
    return harness.FakeHost(root), "the agent's own status"


HOSTS = {"nic": nic_host, "datastore": datastore_host, "vsan": vsan_host, "smart": smart_host,
         "agent": agent_host}


def measure(name, work):
    d = os.path.join(work, name)
    os.makedirs(d)
    h, what = HOSTS[name](os.path.join(d, "host"))
    a = harness.Agent(d, config(h, name))
    runs = []
    for _ in range(3):
        rc, out, err = a.run("--once", timeout=120)
        if rc != 0:
            sys.exit("volume: %s: --once exit %d: %s" % (name, rc, err[-500:]))
        evs = [json.loads(l) for l in out.splitlines() if l.strip()]
        mine = [e for e in evs if e.get("esxwatch_collector") == name]
        size = sum(len(json.dumps(e, separators=(",", ":"))) for e in mine)
        kinds = {}
        for e in mine:
            kinds[e.get("esxwatch_kind")] = kinds.get(e.get("esxwatch_kind"), 0) + 1
        runs.append((len(mine), size, kinds))
    return what, runs


def spool_cost(work):
    """Bytes the disk spool holds per event: the nic and datastore hosts'
    samples queued for an unreachable server (a closed loopback port),
    read from the status file (queued_bytes / queued_events)."""
    d = os.path.join(work, "spool")
    os.makedirs(d)
    h, _ = datastore_host(os.path.join(d, "host"))
    n, _ = nic_host(os.path.join(d, "nichost"))
    for f in os.listdir(n.resp_dir):	# the NIC answers on the storage host too
        shutil.copy(os.path.join(n.resp_dir, f), h.resp_dir)
    a = harness.Agent(d, "server: {hostname: 127.0.0.1, proto: cfapi, port: 9, ssl: no}\n"
                      "host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
                      "storage: {directory: @STORAGE@}\n"
                      "collectors:\n  nic: {interval: 1}\n  datastore: {interval: 1}\n"
                      "  vsan: {enabled: no}\n  smart: {enabled: no}\n  agent: {interval: 300}\n"
                      "  logwatch: {enabled: no}\nfilelog: {}\n" % h.tools_dir)
    a.start()
    try:
        time.sleep(12)
        st = {}
        with open(os.path.join(a.storage, "status")) as f:
            for l in f:
                k, _, v = l.partition(": ")
                if not l.startswith(" "):
                    st[k] = v.strip()
    finally:
        a.stop()
    return int(st["queued_bytes"]), int(st["queued_events"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=1000)
    args = ap.parse_args()
    if not os.path.exists(harness.BIN):
        sys.exit("volume: %s not built (make all)" % harness.BIN)
    work = tempfile.mkdtemp(prefix="esxwatch-volume-")
    tot_ev = tot_b = 0.0
    try:
        print("volume: %-9s %9s %14s %9s %10s %12s  %s" % ("collector", "interval", "first/steady",
              "bytes/ev", "events/day", "MB/day", "simulated host"))
        for name in ("nic", "datastore", "vsan", "smart", "agent"):
            what, runs = measure(name, work)
            n, size, kinds = runs[2]
            per_day = n * 86400.0 / DEFAULT_INTERVAL[name]
            mb = size * 86400.0 / DEFAULT_INTERVAL[name] / 1e6
            tot_ev += per_day
            tot_b += mb
            print("volume: %-9s %8ds %6d/%-7d %9.0f %10.0f %12.2f  %s; kinds %s"
                  % (name, DEFAULT_INTERVAL[name], runs[0][0], n, size / n if n else 0, per_day, mb,
                     what, kinds))
        qb, qe = spool_cost(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_ev_spool = qb / qe if qe else 0
    spool_mb_day = per_ev_spool * tot_ev / 1e6
    print("volume: disk spool: %d bytes per event (%d events, %d bytes queued for an unreachable "
          "server): %.1f MB/host/day; max_disk_buffer 200 MB lasts %.1f days (%.1f days at the JSON "
          "size, an upper bound)" % (per_ev_spool, qe, qb, spool_mb_day,
                                     200 / spool_mb_day if spool_mb_day else 0, 200 / tot_b))
    print("volume: logwatch: 0 events on a healthy host (forward: matches), one per matching line")
    print("volume: %.0f events/host/day, %.1f MB/host/day (%d hosts: %.1f M events/day, %.0f GB/day, "
          "%.0f events/s)" % (tot_ev, tot_b, args.hosts, tot_ev * args.hosts / 1e6,
                              tot_b * args.hosts / 1e3, tot_ev * args.hosts / 86400))
    return 0


if __name__ == "__main__":
    sys.exit(main())
