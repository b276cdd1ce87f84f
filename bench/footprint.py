#!/usr/bin/env python3
"""Idle footprint of the agent (glibc build): RSS and CPU on the simulated
host of bench/simhost.py (32 NICs, 54 local disks), every collector on at
its default interval, next to two floors measured in the same run:
`sleep`, and a minimal program that links the same libraries (libcurl,
libyaml, zlib, PCRE2) and initialises libcurl (bench/floor.c).  Target:
within 2 MB of that floor.

The agent is measured after its start-up round (every collector has run
once, smart through the 54 disks): RSS is the peak over the window that
follows, CPU what the window cost.

Usage: bench/footprint.py [--seconds N] [--bin PATH ...]
Last line: RESULT rss_kb=... floor_kb=... over_floor_kb=... target=met|missed
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import simhost  # noqa: E402

TARGET_OVER_KB = 2048
NICS = simhost.NICS
nic_list = simhost.nic_list
nic_stats = simhost.nic_stats


def proc_sample(pid):
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    ticks = int(parts[11]) + int(parts[12])
    return rss, ticks * 1000 // os.sysconf("SC_CLK_TCK")


def measure(cmd, seconds, warmup=2.0, ready=None):
    """Peak RSS (KB) over a window of seconds and the CPU ms it cost,
    after warmup seconds or, with ready, once ready() is true (at most
    120 s)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + (120 if ready else warmup)
        time.sleep(warmup)
        while ready is not None and not ready() and time.time() < end:
            time.sleep(0.5)
        if ready is not None:
            time.sleep(3)	# its last sends and writes settle
        if p.poll() is not None:
            raise SystemExit("bench: %s exited early (status %s)" % (cmd[0], p.returncode))
        _, cpu0 = proc_sample(p.pid)
        peak = 0
        end = time.time() + seconds
        while time.time() < end:
            rss, _ = proc_sample(p.pid)
            peak = max(peak, rss)
            time.sleep(0.2)
        rss, cpu1 = proc_sample(p.pid)
        return max(peak, rss), cpu1 - cpu0
    finally:
        p.terminate()
        p.wait()


def smart_round_done(host):
    """The start-up round's longest part is over: every disk had its query."""
    return lambda: sum(1 for c in host.calls() if " smart get -d " in c) >= simhost.DISKS


def agent_setup(work, server="{proto: file, path: /dev/null}", name="agent"):
    """A simulated host and a configuration with every collector on."""
    host = simhost.make(os.path.join(work, name + "-host"))
    cfg = os.path.join(work, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(simhost.config(host, os.path.join(work, name + "-storage"), server))
    return host, cfg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--bin", action="append", default=[])
    a = ap.parse_args()
    bins = a.bin or [os.path.join(TOP, "build", "esxwatch")]

    work = tempfile.mkdtemp(prefix="esxwatch-bench-")
    floor = os.path.join(TOP, "build", "bench", "floor")
    os.makedirs(os.path.dirname(floor), exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libcurl", "yaml-0.1", "zlib",
                            "libpcre2-8"], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", floor, os.path.join(TOP, "bench", "floor.c")] + flags,
                   check=True)

    s_rss, s_cpu = measure(["sleep", "1000"], a.seconds)
    f_rss, f_cpu = measure([floor], a.seconds)
    print("footprint: %d NICs, %d disks, every collector at its default interval, %.0f s measured "
          "after the start-up round" % (NICS, simhost.DISKS, a.seconds))
    print("  %-34s %8s %8s" % ("program", "RSS KB", "CPU ms"))
    print("  %-34s %8d %8d" % ("sleep (floor 1)", s_rss, s_cpu))
    print("  %-34s %8d %8d" % ("libs + curl init (floor 2)", f_rss, f_cpu))
    ok = True
    res = []
    for i, b in enumerate(bins):
        host, cfg = agent_setup(work, name="agent%d" % i)
        rss, cpu = measure([b, "-c", cfg], a.seconds, ready=smart_round_done(host))
        over = rss - f_rss
        name = os.path.relpath(b, TOP)
        print("  %-34s %8d %8d   %+d KB vs floor 2 (target <= +%d): %s"
              % (name, rss, cpu, over, TARGET_OVER_KB, "met" if over <= TARGET_OVER_KB else "MISSED"))
        ok = ok and over <= TARGET_OVER_KB
        if not res:
            res = ["rss_kb=%d" % rss, "floor_kb=%d" % f_rss, "over_floor_kb=%d" % over,
                   "cpu_ms=%d" % cpu]
    print("RESULT %s target=%s" % (" ".join(res), "met" if ok else "missed"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
