"""--analyze on a vm-support bundle whose var/run/log/vmkernel.log has N
lines (default 1,000,000), shaped like a real host's (bench_logwatch.c
gen: the `nearmiss` mix, a third of the lines hold a rule literal that no
regex matches, known errors among them), gzip'd inside the bundle's .tgz
as vm-support writes it.  In the same run, on the same log:

  zcat vmkernel.log.gz | grep -c -F -f <the rules' literals>

CPU (user+sys of the process and its children) per run, lines per
CPU-second; R runs interleaved (default 3), the median and the spread
(min..max) of each.  Target (issue 32): esxwatch >= 0.5 x the zcat|grep
pipeline.  Reported, not asserted.  The last line is one RESULT line.

Usage: python3 bench/bench_analyze.py [N] [--runs R]
"""
import argparse
import gzip
import io
import json
import os
import shutil
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tailbench as tb  # noqa: E402

TOP = "esx-bench01-2024-05-01--10.22-1234"
UNAME = ("VMkernel bench01 7.0.3 #1 SMP Release build-21930508 Jun  6 2023 "
         "19:18:15 x86_64 x86_64 x86_64 ESXi\n")
VMWARE_VL = "VMware ESXi 7.0.3 build-21930508\nVMware ESXi 7.0 Update 3\n"


def make_bundle(tmp, log):
    """bundle.tgz (commands/ and var/run/log/vmkernel.log) and the same
    log alone as vmkernel.log.gz, both at gzip's default level."""
    gz = os.path.join(tmp, "vmkernel.log.gz")
    with open(log, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    bundle = os.path.join(tmp, "bundle.tgz")
    with tarfile.open(bundle, "w:gz", compresslevel=6) as t:
        for name, text in (("commands/uname_-a.txt", UNAME),
                           ("commands/vmware_-vl.txt", VMWARE_VL)):
            ti = tarfile.TarInfo(TOP + "/" + name)
            ti.size = len(text)
            t.addfile(ti, io.BytesIO(text.encode()))
        t.add(log, arcname=TOP + "/var/run/log/vmkernel.log")
    return bundle, gz


def run_rss(argv):
    """Run argv to its end: (exit code, CPU seconds, peak RSS in MB, stderr)."""
    import subprocess
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    return p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, err


def spread(xs):
    return "%.0f (%.0f..%.0f)" % (tb.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    o = ap.parse_args()
    tb.on_signal_exit()
    tb.need("grep", "zcat", "cc")
    build = os.environ.get("B", "build")
    binary = os.path.join(tb.ROOT, build, "esxwatch")
    if not os.access(binary, os.X_OK):
        sys.exit("bench_analyze: no %s (make all)" % binary)
    with tb.TempDir("bench-analyze-") as tmp:
        helper = tb.build_helper(tmp, build)
        lit = os.path.join(tmp, "literals")
        with open(lit, "w") as f:
            f.write("\n".join(tb.helper_lines(helper, "literals")) + "\n")
        log = os.path.join(tmp, "vmkernel.log")
        known, near = tb.generate(helper, o.n, log, "nearmiss")
        bundle, gz = make_bundle(tmp, log)
        os.unlink(log)
        print("bundle: %d vmkernel lines (%d known errors, %d near-misses), "
              "%.1f MB .tgz" % (o.n, known, near, os.path.getsize(bundle) / 1e6), flush=True)
        out = os.path.join(tmp, "report.json")
        env_rules = os.path.join(tb.ROOT, "collectors", "logwatch", "rules", "esxi.yaml")
        os.environ.setdefault("ESXWATCH_RULES_FILE", env_rules)
        cfg = os.path.join(tmp, "agent.yaml")
        with open(cfg, "w") as f:
            f.write("storage: {directory: %s/st}\n" % tmp)
        rate = {"esxwatch": [], "zcat|grep": []}
        rss = []
        for _ in range(o.runs):
            rc, cpu, mb, err = run_rss([binary, "-c", cfg, "--analyze", bundle,
                                        "--format", "json", "-o", out])
            rss.append(mb)
            if rc not in (0, 1):
                raise tb.BenchError("--analyze: exit %d: %s" % (rc, err[-400:]))
            with open(out) as f:
                rep = json.load(f)
            lines = sum(l["lines"] for l in rep["logs"])
            if lines != o.n:
                raise tb.BenchError("--analyze read %d lines of %d" % (lines, o.n))
            rate["esxwatch"].append(o.n / cpu)
            rc, cpu, got, err = tb.run_cpu(["sh", "-c", "zcat '%s' | grep -c -F -f '%s'" % (gz, lit)])
            if rc != 0 or int(got) <= 0:
                raise tb.BenchError("zcat | grep: exit %d, %r %s" % (rc, got, err))
            rate["zcat|grep"].append(o.n / cpu)
        alerts = sum(1 for e in rep["events"] if e.get("esxwatch_collector") == "logwatch")
        print("--analyze: %d logwatch events (storm-folded), %d findings by severity %s"
              % (alerts, sum(rep["summary"][s] for s in ("critical", "error", "warning", "info")),
                 {s: rep["summary"][s] for s in ("critical", "error", "warning", "info")}))
        print("lines per CPU-second, median (min..max) of %d runs:" % o.runs)
        for k in rate:
            print("  %-12s %s" % (k, spread(rate[k])))
        print("  --analyze peak RSS: %.1f MB (max of the runs)" % max(rss))
        ratio = tb.median(rate["esxwatch"]) / tb.median(rate["zcat|grep"])
        print("  esxwatch / zcat|grep: %.2f (target >= 0.5)" % ratio)
        print("RESULT bench_analyze lines=%d esxwatch_lps=%.0f zcatgrep_lps=%.0f ratio=%.2f rss_mb=%.1f"
              % (o.n, tb.median(rate["esxwatch"]), tb.median(rate["zcat|grep"]), ratio, max(rss)))


if __name__ == "__main__":
    try:
        main()
    except tb.BenchError as e:
        sys.exit("bench_analyze: %s" % e)
