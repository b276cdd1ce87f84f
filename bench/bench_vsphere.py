"""The cost of one vSphere poll of many hosts (docs/vsphere.md, "Sizing"):
the real agent (--once: one poll of every vsphere entry, then exit) against
VMware's simulator (tests/vcsim/) with N hosts; CPU time and peak RSS of the
agent (per host, and next to an agent with no vsphere entry: the baseline)
and the SOAP requests the simulator served for the poll, by method.

    python3 bench/bench_vsphere.py [--hosts 1000]

Targets are reported, not asserted.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
from vcsim import Vcsim  # noqa: E402

BIN = os.environ.get("ESXWATCH_BIN", os.path.join(TOP, "build", "esxwatch"))


def config(root, sim, pw, with_vsphere, vsan=False):
    text = """server: {hostname: ""}
storage: {directory: "%s/storage"}
collectors:
  nic: {enabled: yes, interval: 3600}
  datastore: {enabled: yes, interval: 3600}
  vsan: {enabled: %s}
  smart: {enabled: no}
  agent: {enabled: no}
  diagnosis: {enabled: no}
filelog: {}
""" % (root, "yes" if vsan else "no")
    if with_vsphere:
        text += """vsphere:
  bench:
    url: "%s"
    username: "%s"
    password_file: "%s"
    trust: first_use
    events: yes
    timeout: 300
""" % (sim.url, sim.username, pw)
    path = os.path.join(root, "agent.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def run_once(cfg):
    """--once in a child: (wall s, cpu s, peak rss kB, events)."""
    t0 = time.time()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([BIN, "-c", cfg, "--once"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.time() - t0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace")[-3000:])
    return wall, cpu, after.ru_maxrss, p.stdout.count(b"\n"), p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--vsan", action="store_true",
                    help="collectors.vsan on: one QueryDisksForVsan per host")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="esxwatch-bench-vsphere-")
    try:
        simdir = os.path.join(root, "sim")
        os.makedirs(simdir)
        t0 = time.time()
        sim = Vcsim(simdir, clusters=1, cluster_hosts=a.hosts, standalone=0).start(timeout=600)
        print("simulator: %d hosts ready in %.1f s" % (sim.hosts, time.time() - t0))
        pw = os.path.join(root, "pw")
        with open(pw, "w") as f:
            f.write(sim.password + "\n")
        os.chmod(pw, 0o600)
        base = os.path.join(root, "base")
        os.makedirs(base)
        bw, bc, brss, _, _ = run_once(config(base, sim, pw, False))
        for rnd in ("first", "second"):
            d = os.path.join(root, "poll")
            os.makedirs(d, exist_ok=True)
            sim.stats(reset=True)
            w, c, rss, n, err = run_once(config(d, sim, pw, True, a.vsan))
            st = sim.stats()
            print("%s poll of %d hosts%s: %.2f s wall, %.2f s CPU (%.2f ms per host), "
                  "%d events" % (rnd, sim.hosts, " (vSAN on)" if a.vsan else "", w, c, 1000.0 * c / sim.hosts, n))
            print("  agent peak RSS %d kB (%.1f kB per host over the %d kB baseline)"
                  % (rss, (rss - brss) / float(sim.hosts), brss))
            print("  SOAP requests: %d: %s" % (st["total"], ", ".join(
                "%s %d" % kv for kv in sorted(st["methods"].items()))))
        sim.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
