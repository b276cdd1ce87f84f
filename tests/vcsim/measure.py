"""Measure the simulator at scale: start time, memory, and the cost of one
full health poll of every host done with plain SOAP (the calls an agent
makes: hosts' NIC/storage/runtime properties, datastores' mounts, the four
net counters of every host batched in QueryPerf, the event collector).

    python3 tests/vcsim/measure.py [hosts] [batch] [clusters]

With clusters > 0 the hosts are spread over that many clusters and one
vSAN round is measured too: QueryDisksForVsan on every host (a request
each) and the vSAN health SMART summary of every cluster.

Prints one JSON object.  The figures are in tests/vcsim/README.md.  The
simulator's CPU is read from /proc/<pid>/stat (utime+stime), its memory
from /proc/<pid>/status (VmRSS, VmHWM).
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import vcsim  # noqa: E402

HOST_PROPS = ["name", "config.network.pnic", "runtime.connectionState", "runtime.inMaintenanceMode",
              "config.storageDevice.scsiLun", "config.storageDevice.multipathInfo", "datastore"]


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_mem(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0])
    return out


def poll(sim, c, hview, dview, ids, col, batch):
    n0 = c.requests
    hosts = c.retrieve("HostSystem", HOST_PROPS, view=hview)
    c.retrieve("Datastore", ["name", "host", "summary.accessible", "info"], view=dview)
    moids = sorted(hosts)
    metrics = [(ids[n], "*") for n in sorted(ids)]
    for i in range(0, len(moids), batch):
        c.query_perf([(m, metrics, 1) for m in moids[i:i + batch]])
    c.read_next_events(col, 1000)
    return len(hosts), c.requests - n0


def vsan_round(c, hview):
    n0 = c.requests
    hosts = c.retrieve("HostSystem", ["configManager.vsanSystem"], view=hview)
    disks = 0
    for p in hosts.values():
        disks += len(c.query_disks_for_vsan(p["configManager.vsanSystem"].text))
    clusters = c.retrieve("ClusterComputeResource", ["name"], view=c.container_view("ClusterComputeResource"))
    smart = 0
    for moid in clusters:
        smart += sum(len(d) for d in c.smart_summary(moid).values())
    return {"requests": c.requests - n0, "disks": disks, "smart_disks": smart}


def main():
    nhosts = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    nclusters = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    with tempfile.TemporaryDirectory(prefix="vcsim-measure-") as d:
        t0 = time.time()
        if nclusters:
            sim = vcsim.Vcsim(d, clusters=nclusters, cluster_hosts=nhosts // nclusters, standalone=0,
                              datastores=1).start(timeout=600)
        else:
            sim = vcsim.Vcsim(d, clusters=0, standalone=nhosts, datastores=1).start(timeout=600)
        wall_start = time.time() - t0
        pid = sim.proc.pid
        try:
            cpu_start = proc_cpu(pid)
            mem_start = proc_mem(pid)
            c = vcsim.SoapClient(sim.url, sim.ssl_context())
            c.login(sim.username, sim.password)
            hview, dview = c.container_view(), c.container_view("Datastore")
            ids = sim.counters()["counters"]
            col = c.create_event_collector(type_ids=["esx.problem.storage.apd.start"])
            polls = []
            for _ in range(3):
                cpu0, t1 = proc_cpu(pid), time.time()
                n, reqs = poll(sim, c, hview, dview, ids, col, batch)
                polls.append({"hosts": n, "requests": reqs, "wall_s": round(time.time() - t1, 2),
                              "sim_cpu_s": round(proc_cpu(pid) - cpu0, 2)})
            vs = None
            if nclusters:
                cpu0, t1 = proc_cpu(pid), time.time()
                vs = vsan_round(c, hview)
                vs.update(wall_s=round(time.time() - t1, 2), sim_cpu_s=round(proc_cpu(pid) - cpu0, 2))
            print(json.dumps({
                "hosts": sim.hosts, "start_ms_reported": sim.start_ms,
                "start_wall_s": round(wall_start, 2), "start_cpu_s": round(cpu_start, 2),
                "rss_kb_after_start": mem_start.get("VmRSS"), "rss_kb_after_polls": proc_mem(pid).get("VmRSS"),
                "hwm_kb": proc_mem(pid).get("VmHWM"), "queryperf_batch": batch, "polls": polls, "vsan": vs,
                "loadavg": os.getloadavg()[0]}, indent=1))
        finally:
            sim.stop()


if __name__ == "__main__":
    main()
