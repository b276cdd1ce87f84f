"""The cost of one vSphere poll of many hosts (docs/vsphere.md, "Sizing"):
the real agent (--once: one poll of every vsphere entry, then exit) against
VMware's simulator (tests/vcsim/) with N hosts; CPU time and peak RSS of the
agent (per host, and next to an agent with no vsphere entry: the baseline)
and the SOAP requests the simulator served for the poll, by method.  Then
the steady state: a running agent (interval 5 s) whose later polls ask
WaitForUpdatesEx only for what changed — the CPU and requests of its second
poll next to its first (the full read).

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


def status(cfg):
    """The vsphere entry of --status --json, or None."""
    import json
    p = subprocess.run([BIN, "-c", cfg, "--status", "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=60)
    if p.returncode != 0:
        return None
    v = json.loads(p.stdout).get("vsphere") or []
    return v[0] if v else None


def proc_cpu(pid):
    """utime + stime of pid, in seconds (/proc/PID/stat fields 14, 15)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def steady(root, sim, pw, vsan):
    """A running agent: CPU, requests of its first poll and of the next."""
    d = os.path.join(root, "steady")
    os.makedirs(d, exist_ok=True)
    cfg = config(d, sim, pw, True, vsan)
    with open(cfg) as f:
        text = f.read().replace("    timeout: 300\n", "    timeout: 300\n    interval: 5\n")
    with open(cfg, "w") as f:
        f.write(text)
    sim.stats(reset=True)
    p = subprocess.Popen([BIN, "-c", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        figs = []
        for n in (1, 2):
            deadline = time.time() + 900
            while time.time() < deadline:
                v = status(cfg)
                if v and v["polls"] >= n:
                    break
                time.sleep(0.2)  # a poll of the agent's status file, not a sync
            else:
                raise SystemExit("no poll %d in --status --json" % n)
            figs.append((proc_cpu(p.pid), v["requests"], sim.stats(reset=True)))
        (c1, r1, s1), (c2, r2, s2) = figs
        for what, c, r, st in (("first poll (full read)", c1, r1, s1),
                               ("steady poll (updates)", c2 - c1, r2, s2)):
            print("%s of %d hosts: %.2f s CPU (%.3f ms per host), %d requests: %s"
                  % (what, sim.hosts, c, 1000.0 * c / sim.hosts, r, ", ".join(
                      "%s %d" % kv for kv in sorted(st["methods"].items()))))
    finally:
        p.terminate()
        p.wait(timeout=60)


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
        steady(root, sim, pw, a.vsan)
        sim.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
