#!/usr/bin/env python3
"""What a destination costs: 1 against 8 cfapi (gzip) destinations.

The real daemon (build/esxwatch) follows a log with `forward: all`; once it
runs, N vmkernel-style lines are appended and it ships every one of them to
one destination, then (a fresh run) to eight destinations with the same
options, all pointing at a local counting receiver (bench_spool.py's:
a thread per connection that inflates the body and counts the events).  The agent's
CPU time comes from /proc/PID/stat once the receiver has every event, its
peak RSS from VmHWM.  Reported: CPU µs per line and peak RSS for each, and
the ratios 8 : 1 (target: at most 3), median of --rounds runs.  No rule
catalogue is loaded: the collecting side is as cheap as it gets, so the
ratio is the shipping side's, not diluted by matching.

Usage: bench/bench_dests.py [--lines N] [--rounds R] [--dests D]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_spool import FastCfapi  # noqa: E402  the same counting receiver

BIN = os.environ.get("ESXWATCH_BIN", os.path.join(TOP, "build", "esxwatch"))


CONF = """server: {hostname: 127.0.0.1, proto: cfapi, port: %(port)d, ssl: no}
%(servers)s
storage: {directory: "%(dir)s/storage"}
collectors:
  nic: {enabled: no}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
  logwatch: {enabled: yes, interval: 1}
filelog:
  app: {directory: "%(dir)s/logs", include: app.log, forward: all, read_from_head: yes}
"""


def line(i):
    return ("2024-01-01T00:00:%02d.%03dZ cpu%d:2097%03d)ScsiDeviceIO: 4162: "
            "Cmd(0x45d8c0e4d2c0) 0x2a, CmdSN 0x%x from world %d to dev "
            "\"naa.600508b1001c%06d\" failed H:0x0 D:0x2 P:0x0 line %d\n"
            % (i % 60, i % 1000, i % 16, i % 1000, i, 2000 + i % 100, i % 999999, i))


def run(ndests, lines):
    rx = FastCfapi()
    d = tempfile.mkdtemp(prefix="bench-dests-")
    os.makedirs(d + "/logs")
    servers = ""
    if ndests > 1:
        servers = "servers:\n" + "".join(
            "  d%d: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}\n"
            % (i, rx.port) for i in range(ndests - 1))
    with open(d + "/agent.yaml", "w") as f:
        f.write(CONF % {"port": rx.port, "servers": servers, "dir": d})
    err = open(d + "/stderr", "w")
    p = subprocess.Popen([BIN, "-c", d + "/agent.yaml"], stdout=subprocess.DEVNULL,
                         stderr=err)
    try:
        time.sleep(1.0)
        with open(d + "/logs/app.log", "w") as f:
            for i in range(lines):
                f.write(line(i))
        want, t0 = lines * ndests, time.time()
        while rx.events < want:
            if time.time() - t0 > 600 or p.poll() is not None:
                sys.exit("bench_dests: %d of %d events arrived (see %s/stderr)"
                         % (rx.events, want, d))
            time.sleep(0.1)
        st = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
        cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
        hwm = 0
        with open("/proc/%d/status" % p.pid) as f:
            for ln in f:
                if ln.startswith("VmHWM:"):
                    hwm = int(ln.split()[1])
    finally:
        p.terminate()
        p.wait()
        err.close()
        rx.sock.close()
    shutil.rmtree(d, ignore_errors=True)
    return cpu * 1e6 / lines, hwm / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dests", type=int, default=8)
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit("bench_dests: %s not built (make)" % BIN)
    one, many = [], []
    for r in range(a.rounds):
        # alternate, so that a neighbour's load falls on both alike
        one.append(run(1, a.lines))
        many.append(run(a.dests, a.lines))
        print("round %d: 1 dest %.2f us/line %.1f MiB; %d dests %.2f us/line %.1f MiB"
              % (r + 1, one[-1][0], one[-1][1], a.dests, many[-1][0], many[-1][1]))
    cpu1 = statistics.median(x[0] for x in one)
    cpun = statistics.median(x[0] for x in many)
    rss1 = statistics.median(x[1] for x in one)
    rssn = statistics.median(x[1] for x in many)
    print("1 destination:   %.2f us CPU per line (%.0f lines/CPU-s), peak RSS %.1f MiB"
          % (cpu1, 1e6 / cpu1, rss1))
    print("%d destinations:  %.2f us CPU per line, peak RSS %.1f MiB "
          "(+%.2f us, +%.2f MiB per extra one)"
          % (a.dests, cpun, rssn, (cpun - cpu1) / (a.dests - 1),
             (rssn - rss1) / (a.dests - 1)))
    print("cost %d:1 = %.2f CPU, %.2f RSS (target <= 3)"
          % (a.dests, cpun / cpu1, rssn / rss1))
    print("RESULT dests=%d cpu_us_1=%.2f cpu_us_n=%.2f cpu_ratio=%.2f rss_mib_1=%.1f "
          "rss_mib_n=%.1f rss_ratio=%.2f"
          % (a.dests, cpu1, cpun, cpun / cpu1, rss1, rssn, rssn / rss1))


if __name__ == "__main__":
    main()
