"""logwatch end to end: the daemon follows a file that grows by N lines
(default 1,000,000) appended while it runs, every built-in rule on,
forward: matches -> file sink; its CPU (utime+stime of all its threads,
/proc/PID/stat) from the first append until it has read every line and
the file sink has every alert, as lines per CPU-second.  In the same run,
on the same lines:

  grep -c -F -f <the rules' literals>   (what the prefilter looks for)
  grep -c -E -f <the rules' regexes>    (PCRE converted to ERE; those that
                                         are not ERE are left out, counted)
  rsyslog imfile (following the same growing file) -> omfwd TCP -> a local sink
  collectd tail (following the same growing file, one Match counting lines)
  esxwatch with PCRE2's interpreter (ESXWATCH_NO_JIT=1, as on ESXi)

Two logs (bench_logwatch.c gen): `nearmiss`, a third of the lines hold a
rule literal that no regex matches (real vmkernel logs: `failed H:0x`,
`Link is Up`, ...), and `rare`, 0.1 % known errors and nothing else with a
literal.  Medians of R runs (default 3), the followers interleaved; every
figure is also given as a ratio to grep -F.  The last line is one RESULT
line.  Targets (issue 18): nearmiss >= 0.5 x grep -F and >= 1.5 M
lines/CPU-s; rare >= 0.8 x grep -F.  Reported, not asserted.

Usage: python3 bench/bench_logwatch.py [N] [--runs R] [--mix nearmiss|rare]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tailbench as tb  # noqa: E402


def alerts_in(path):
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if b'"esxwatch_rule"' in line)
    except OSError:
        return 0


def esxwatch_run(tmp, binary, src, n, want, procs, env=None):
    out = os.path.join(tmp, "out.jsonl")
    if os.path.exists(out):
        os.unlink(out)
    a = tb.Esxwatch(binary, tmp, "{proto: file, path: %s}" % out, "matches", env=env)
    try:
        cpu, wall = tb.follow_run(tmp, src, n, a, a.lines_read, procs=procs,
                                  done_extra=lambda: int(a.fields("sent_events", top=True) or 0) >= want)
    except tb.BenchError as e:
        raise tb.BenchError("%s\n%s" % (e, a.log_tail()))
    got = alerts_in(out)
    if got != want:
        raise tb.BenchError("esxwatch%s: %d alerts in the file sink, the log has %d known errors"
                            % (" (no JIT)" if env else "", got, want))
    return cpu, wall


def rsyslog_run(tmp, src, n, procs):
    sink = tb.Sink(procs, tmp, "tcp")
    r = tb.Rsyslog(tmp, sink.port)
    cpu, wall = tb.follow_run(tmp, src, n, r, sink.count, procs=procs)
    procs.stop(sink.p)
    return cpu, wall


def collectd_run(tmp, src, n, procs):
    c = tb.Collectd(tmp)
    return tb.follow_run(tmp, src, n, c, lambda: c.lines() or 0, procs=procs)


def grep_run(args, src, want):
    rc, cpu, out, err = tb.run_cpu(["grep", "-c"] + args + [src])
    if rc not in (0, 1) or err.strip() or int(out.strip() or -1) != want:
        raise tb.BenchError("grep -c %s: exit %d, %s lines (want %d) %s"
                            % (" ".join(args), rc, out.strip(), want, err.strip()[:300]))
    return cpu


def grep_count(args, src):
    import subprocess
    p = subprocess.run(["grep", "-c"] + args + [src], capture_output=True, text=True, timeout=tb.RUN_TIMEOUT)
    return int(p.stdout.strip() or 0)


def measure_mix(tmp, helper, binary, n, runs, mix, lit, ere, procs):
    src = os.path.join(tmp, "src-%s.log" % mix)
    want, near = tb.generate(helper, n, src, mix)
    chk = tb.check_log(helper, src)
    if chk["match"] != want or chk["nearmiss"] != near:
        raise tb.BenchError("%s: the engine matches %d lines (%d near-misses), gen says %d (%d)"
                            % (mix, chk["match"], chk["nearmiss"], want, near))
    glit = grep_count(["-F", "-f", lit], src)
    gre = grep_count(["-E", "-f", ere], src)
    if glit != chk["literal"]:
        raise tb.BenchError("grep -F finds %d lines with a literal, the engine %d" % (glit, chk["literal"]))
    size = os.path.getsize(src)
    print("%s log: %d lines, %.1f MB; %d known errors, %d near-misses; %d lines with a literal (grep -F), %d matched by grep -E"
          % (mix, n, size / 1e6, want, near, glit, gre), flush=True)
    cpu = {k: [] for k in ("esxwatch", "nojit", "grepF", "grepE", "rsyslog", "collectd")}
    wall = {k: [] for k in cpu}
    for r in range(runs):
        for k, fn in (("grepF", lambda: (grep_run(["-F", "-f", lit], src, glit), 0.0)),
                      ("grepE", lambda: (grep_run(["-E", "-f", ere], src, gre), 0.0)),
                      ("esxwatch", lambda: esxwatch_run(tmp, binary, src, n, want, procs)),
                      ("nojit", lambda: esxwatch_run(tmp, binary, src, n, want, procs, {"ESXWATCH_NO_JIT": "1"})),
                      ("rsyslog", lambda: rsyslog_run(tmp, src, n, procs)),
                      ("collectd", lambda: collectd_run(tmp, src, n, procs))):
            c, w = fn()
            cpu[k].append(c)
            wall[k].append(w)
            procs.kill_all()
        print("  run %d: %s" % (r + 1, " ".join("%s=%.2fs" % (k, v[-1]) for k, v in cpu.items())), flush=True)
    return {k: n / max(tb.median(v), 1e-3) for k, v in cpu.items()}, {k: tb.median(v) for k, v in wall.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mix", action="append", choices=("nearmiss", "rare"))
    o = ap.parse_args()
    mixes = o.mix or ["nearmiss", "rare"]
    tb.on_signal_exit()
    tb.need("grep", "rsyslogd", "collectd", "cc")
    build = os.environ.get("B", "build")
    binary = os.path.join(tb.ROOT, build, "esxwatch")
    if not os.access(binary, os.X_OK):
        sys.exit("bench_logwatch: no %s (make all)" % binary)
    results = {}
    with tb.TempDir("bench-logwatch-") as tmp, tb.Procs() as procs:
        helper = tb.build_helper(tmp, build)
        literals = tb.helper_lines(helper, "literals")
        regexes = tb.helper_lines(helper, "regexes")
        eres = [e for e in (tb.pcre_to_ere(x) for x in regexes) if e is not None and tb.ere_ok(e)]
        lit, ere = os.path.join(tmp, "literals"), os.path.join(tmp, "regexes.ere")
        with open(lit, "w") as f:
            f.write("\n".join(literals) + "\n")
        with open(ere, "w") as f:
            f.write("\n".join(eres) + "\n")
        print("rules: %d literals; %d regexes, %d as ERE for grep -E (%d not ERE: left out)"
              % (len(literals), len(regexes), len(eres), len(regexes) - len(eres)), flush=True)
        for mix in mixes:
            try:
                results[mix] = measure_mix(tmp, helper, binary, o.n, o.runs, mix, lit, ere, procs)
            except tb.BenchError as e:
                sys.exit("bench_logwatch: %s" % e)
    res = []
    print("lines per CPU-second, median of %d runs (ratio to grep -F -f literals; wall s from the first append)" % o.runs)
    names = (("esxwatch", "esxwatch daemon, forward: matches"), ("nojit", "esxwatch, PCRE2 interpreter"),
             ("grepF", "grep -F -f literals"), ("grepE", "grep -E -f regexes"),
             ("rsyslog", "rsyslog imfile -> omfwd tcp"), ("collectd", "collectd tail"))
    for mix in mixes:
        rate, wall = results[mix]
        print("%s:" % mix)
        for k, label in names:
            print("  %-36s %12.0f  %5.2f x grep -F  %6.2f s" % (label, rate[k], rate[k] / rate["grepF"], wall[k]))
        print("  esxwatch / grep -E: %.2f; / rsyslog: %.2f; / collectd: %.2f; interpreter / JIT: %.2f"
              % (rate["esxwatch"] / rate["grepE"], rate["esxwatch"] / rate["rsyslog"],
                 rate["esxwatch"] / rate["collectd"], rate["nojit"] / rate["esxwatch"]))
        for k, _ in names:
            res.append("%s_%s_lps=%.0f" % (mix, k, rate[k]))
        res.append("%s_vs_grepF=%.2f" % (mix, rate["esxwatch"] / rate["grepF"]))
        res.append("%s_nojit_vs_grepF=%.2f" % (mix, rate["nojit"] / rate["grepF"]))
        res.append("%s_vs_grepE=%.2f" % (mix, rate["esxwatch"] / rate["grepE"]))
        res.append("%s_vs_rsyslog=%.2f" % (mix, rate["esxwatch"] / rate["rsyslog"]))
        res.append("%s_vs_collectd=%.2f" % (mix, rate["esxwatch"] / rate["collectd"]))
    if "nearmiss" in results:
        r = results["nearmiss"][0]
        print("target nearmiss >= 0.5 x grep -F and >= 1.5 M lines/CPU-s: %s"
              % ("met" if r["esxwatch"] >= 0.5 * r["grepF"] and r["esxwatch"] >= 1.5e6 else "NOT met"))
    if "rare" in results:
        r = results["rare"][0]
        print("target rare >= 0.8 x grep -F: %s" % ("met" if r["esxwatch"] >= 0.8 * r["grepF"] else "NOT met"))
    print("RESULT " + " ".join(res))


if __name__ == "__main__":
    main()
