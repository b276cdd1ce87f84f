#!/usr/bin/env python3
"""Idle footprint of the agent: RSS and CPU with the nic collector on a
simulated 32-NIC ESXi host, next to two floors measured in the same run:
`sleep`, and a minimal program that links the same libraries and
initialises libcurl (bench/floor.c).  Target: within 2 MB of that floor.

Usage: bench/footprint.py [--seconds N] [--bin PATH ...]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
import harness  # noqa: E402

NICS = 32


def nic_list():
    hdr = "Name    PCI Device    Driver  Admin Status  Link Status  Speed  Duplex  MAC Address         MTU   Description"
    dash = "------  ------------  ------  ------------  -----------  -----  ------  -----------------  ----  -----------"
    rows = ["%-6s  0000:%02x:00.0  ixgben  Up            Up           10000  Full    00:50:56:00:00:%02x  1500  Intel X710"
            % ("vmnic%d" % i, i, i) for i in range(NICS)]
    return "\n".join([hdr, dash] + rows) + "\n"


def nic_stats(i):
    with open(os.path.join(TOP, "tests", "fixtures", "esxi", "esxcli-network-nic-stats-get",
                           "kb341594-vmnic2-rx-drops.txt")) as f:
        return f.read().replace("vmnic2", "vmnic%d" % i)


def proc_sample(pid):
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    ticks = int(parts[11]) + int(parts[12])
    return rss, ticks * 1000 // os.sysconf("SC_CLK_TCK")


def measure(cmd, seconds, warmup=2.0):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(warmup)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--bin", action="append", default=[])
    a = ap.parse_args()
    bins = a.bin or [os.path.join(TOP, "build", "esxwatch")]
    esxi = os.path.join(TOP, "build", "esxi", "esxwatch")
    if not a.bin and os.path.exists(esxi):
        bins.append(esxi)

    work = tempfile.mkdtemp(prefix="esxwatch-bench-")
    host = harness.FakeHost(os.path.join(work, "host"))
    host.set_both("network nic list", text=nic_list())
    for i in range(NICS):
        host.set_both("network nic stats get -n vmnic%d" % i, text=nic_stats(i))
    cfg = os.path.join(work, "agent.yaml")
    with open(cfg, "w") as f:
        f.write("host: {platform: esxi, tools_dir: %s}\n"
                "storage: {directory: %s/storage}\n"
                "server: {proto: file, path: /dev/null}\n"
                "collectors:\n"
                "  nic: {enabled: yes, interval: 5}\n"
                "  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
                "  smart: {enabled: no}\n  agent: {enabled: no}\n"
                "filelog: {}\n" % (host.tools_dir, work))

    floor = os.path.join(TOP, "build", "bench", "floor")
    os.makedirs(os.path.dirname(floor), exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libcurl", "yaml-0.1", "zlib"],
                           capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", floor, os.path.join(TOP, "bench", "floor.c")] + flags, check=True)

    s_rss, s_cpu = measure(["sleep", "1000"], a.seconds)
    f_rss, f_cpu = measure([floor], a.seconds)
    print("footprint: %d NICs, nic interval 5 s, %.0f s measured" % (NICS, a.seconds))
    print("  %-34s %8s %8s" % ("program", "RSS KB", "CPU ms"))
    print("  %-34s %8d %8d" % ("sleep (floor 1)", s_rss, s_cpu))
    print("  %-34s %8d %8d" % ("libs + curl init (floor 2)", f_rss, f_cpu))
    ok = True
    for b in bins:
        rss, cpu = measure([b, "-c", cfg], a.seconds)
        over = rss - f_rss
        name = os.path.relpath(b, TOP)
        print("  %-34s %8d %8d   %+d KB vs floor 2 (target <= +2048): %s"
              % (name, rss, cpu, over, "met" if over <= 2048 else "MISSED"))
        ok = ok and over <= 2048
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
