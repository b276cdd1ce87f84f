"""forward: all -> cfapi gzip, end to end: the daemon follows a file that
grows by N lines (default 1,000,000; the near-miss vmkernel log of
bench_logwatch.c) appended while it runs, every built-in rule on, and
ships every line to a local Log Insight cfapi receiver (gzip bodies, plain
HTTP; the receiver only inflates and counts events, in a process of its
own, and answers {"status":"ok","ingested":N}).  The agent's CPU
(utime+stime of all its threads, /proc/PID/stat) from the first append
until the receiver has counted every line, as lines per CPU-second; next
to rsyslog imfile (following the same growing file) -> omfwd TCP to a
local sink, measured in the same run.  Medians of R runs, interleaved
(default 5: on a shared host either side's CPU varies by a fifth from
one run to the next).  Shipping end to end: the same esxwatch figure as events
per CPU-second next to `gzip -1` compressing the very JSON bodies the
receiver inflated (saved by the receiver, the last esxwatch run's).
Targets (issue 18): esxwatch >= 1.5 x rsyslog; >= 0.6 x gzip -1.
Reported, not asserted.  The last line is one RESULT line.

Usage: python3 bench/bench_forward_all.py [N] [--runs R]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tailbench as tb  # noqa: E402


def esxwatch_run(tmp, binary, src, n, procs):
    sink = tb.Sink(procs, tmp, "cfapi", bodies=os.path.join(tmp, "bodies.json"))
    a = tb.Esxwatch(binary, tmp, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % sink.port, "all")
    try:
        cpu, wall = tb.follow_run(tmp, src, n, a, sink.count, procs=procs, timeout=3 * tb.RUN_TIMEOUT)
    except tb.BenchError as e:
        raise tb.BenchError("%s\n%s" % (e, a.log_tail()))
    got = sink.count()
    dropped = a.fields("dropped_budget", top=True)
    procs.stop(sink.p)
    if got != n or dropped not in (None, "0"):
        raise tb.BenchError("esxwatch: the receiver counted %d events for %d lines (dropped_budget %s)"
                            % (got, n, dropped))
    return cpu, wall


def rsyslog_run(tmp, src, n, procs):
    sink = tb.Sink(procs, tmp, "tcp")
    r = tb.Rsyslog(tmp, sink.port)
    cpu, wall = tb.follow_run(tmp, src, n, r, sink.count, procs=procs)
    got = sink.count()
    procs.stop(sink.p)
    if got != n:
        raise tb.BenchError("rsyslog: the sink counted %d lines of %d" % (got, n))
    return cpu, wall


def gzip_cpu(path, runs=3):
    """Median user+sys CPU seconds of `gzip -1 -c` over path."""
    cpu = []
    for _ in range(runs):
        with open(path, "rb") as f, open(os.devnull, "wb") as null:
            p = subprocess.Popen(["gzip", "-1", "-c"], stdin=f, stdout=null)
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise tb.BenchError("gzip -1 exited %d" % p.returncode)
        cpu.append(ru.ru_utime + ru.ru_stime)
    return tb.median(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=5)
    o = ap.parse_args()
    tb.on_signal_exit()
    tb.need("rsyslogd", "cc", "gzip")
    build = os.environ.get("B", "build")
    binary = os.path.join(tb.ROOT, build, "esxwatch")
    if not os.access(binary, os.X_OK):
        sys.exit("bench_forward_all: no %s (make all)" % binary)
    cpu = {"esxwatch": [], "rsyslog": []}
    wall = {"esxwatch": [], "rsyslog": []}
    with tb.TempDir("bench-fwdall-") as tmp, tb.Procs() as procs:
        helper = tb.build_helper(tmp, build)
        src = os.path.join(tmp, "src.log")
        tb.generate(helper, o.n, src, "nearmiss")
        print("log: %d lines, %.1f MB (near-miss mix)" % (o.n, os.path.getsize(src) / 1e6), flush=True)
        try:
            for r in range(o.runs):
                for k, fn in (("esxwatch", lambda: esxwatch_run(tmp, binary, src, o.n, procs)),
                              ("rsyslog", lambda: rsyslog_run(tmp, src, o.n, procs))):
                    c, w = fn()
                    cpu[k].append(c)
                    wall[k].append(w)
                    procs.kill_all()
                print("  run %d: esxwatch=%.2fs rsyslog=%.2fs CPU" % (r + 1, cpu["esxwatch"][-1], cpu["rsyslog"][-1]),
                      flush=True)
            bodies = os.path.join(tmp, "bodies.json")
            body_mb = os.path.getsize(bodies) / 1e6
            gz = gzip_cpu(bodies)
        except tb.BenchError as e:
            sys.exit("bench_forward_all: %s" % e)
    rate = {k: o.n / max(tb.median(v), 1e-3) for k, v in cpu.items()}
    ratio = rate["esxwatch"] / rate["rsyslog"]
    print("lines per CPU-second, median of %d runs (wall s from the first append until all arrived)" % o.runs)
    print("  esxwatch forward: all -> cfapi gzip  %10.0f  %6.2f s" % (rate["esxwatch"], tb.median(wall["esxwatch"])))
    print("  rsyslog imfile -> omfwd tcp         %10.0f  %6.2f s" % (rate["rsyslog"], tb.median(wall["rsyslog"])))
    print("  esxwatch / rsyslog: %.2f (target >= 1.5: %s)" % (ratio, "met" if ratio >= 1.5 else "NOT met"))
    gz_rate = o.n / max(gz, 1e-3)
    ship = rate["esxwatch"] / gz_rate
    print("shipping end to end, events per CPU-second (the same %.1f MB of JSON bodies)" % body_mb)
    print("  esxwatch, the daemon end to end      %10.0f" % rate["esxwatch"])
    print("  gzip -1 on the bodies it sent        %10.0f  %.1f MB/s" % (gz_rate, body_mb / max(gz, 1e-3)))
    print("  esxwatch / gzip -1: %.2f (target >= 0.6: %s)" % (ship, "met" if ship >= 0.6 else "NOT met"))
    print("RESULT fwdall_esxwatch_lps=%.0f fwdall_rsyslog_lps=%.0f fwdall_vs_rsyslog=%.2f"
          " ship_gzip1_eps=%.0f ship_vs_gzip1=%.2f"
          % (rate["esxwatch"], rate["rsyslog"], ratio, gz_rate, ship))


if __name__ == "__main__":
    main()
