#!/usr/bin/env python3
"""The idle agent: wakeups per second and CPU, next to rsyslog and collectd
idle in the same run.

The agent runs on the simulated host of bench/simhost.py (32 NICs, 54
local disks, the default filelogs' files in a log directory nothing writes
to), every collector on at its default interval, shipping to a file.
After the start-up round (every collector has run once, smart through its
54 disks), a window of --seconds is measured: a wakeup is a context switch,
the sum over /proc/PID/task/*/status of voluntary_ctxt_switches and
nonvoluntary_ctxt_switches (a thread that sleeps until it is woken counts
one per wakeup), and CPU is utime+stime from /proc/PID/stat.

The agent's threads are named (esxw-c-NAME for collector NAME, esxw-ship-N,
esxw-status, esxw-monitor, esxw-spool; the main thread keeps the program's
name), so the window is split three ways: the collectors' scheduled runs
(nic every 60 s, datastore 30 s, diagnosis 10 s, ...: the work they are
there to do, each run a burst of switches around the tools it starts),
logwatch's file poll (a collector too, at most once a second), and the
agent's own (main loop, shippers, status writer, spool, monitor).  The
window is sampled every 0.5 s; a step is quiet when no collector ran and
no event was written in it or in the 5 s before (the shipping, spool and
status work an event causes comes within that).  Targets, on the quiet
steps: <= 1 wakeup/s of the agent's own, logwatch at most once a second,
<= 0.1 % CPU.  The whole window's figures (runs and their events
included) are printed too.

rsyslog (imfile on a file nothing writes to, omfile) and collectd (cpu,
memory, interface plugins at their 10 s default, csv) are measured the
same way, over a window of --peer-seconds each (their switches and CPU
in all); either is skipped when not installed.

Usage: bench/bench_idle.py [--seconds N] [--peer-seconds N] [--bin PATH] [--strace]
Last line: RESULT idle_wakeups_per_s=... logwatch_polls_per_s=... idle_cpu_pct=...
window_wakeups_per_s=... window_cpu_pct=... rsyslogd_wakeups_per_s=... ... target=met|missed
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import simhost  # noqa: E402  (also puts tests/e2e on the path: harness)

TICK = os.sysconf("SC_CLK_TCK")
# threads whose switches are scheduled collector runs, not idle cost
RUN_PREFIX = "esxw-c-"
IDLE_COLLECTORS = ("esxw-c-logwatch",)	# its file poll is an idle cost


def threads(pid):
    """{tid: (name, switches)} of a process."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/status" % (pid, t)) as f:
                name, sw = "?", 0
                for l in f:
                    if l.startswith("Name:"):
                        name = l.split(None, 1)[1].strip()
                    elif l.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        sw += int(l.split()[1])
            out[int(t)] = (name, sw)
        except OSError:
            pass
    return out


def cpu_ms(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) * 1000 // TICK


def window(pid, seconds):
    """Switches per thread name and CPU ms over a window; a thread that
    came or went in the window counts what it did while seen."""
    t0, c0 = threads(pid), cpu_ms(pid)
    start = time.time()
    time.sleep(seconds)
    t1, c1 = threads(pid), cpu_ms(pid)
    secs = time.time() - start
    return delta(t0, t1), c1 - c0, secs


def delta(t0, t1):
    by = {}
    for tid, (name, sw) in t1.items():
        by[name] = by.get(name, 0) + sw - t0.get(tid, (name, 0))[1]
    return by


def size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def sampled(pid, seconds, events, host, step=0.5, lag=5.0):
    """The window in steps: a step is quiet when, in it and in the lag
    seconds before it, no collector ran (none of its thread's switches,
    no tool call) and no event was written (the sink file did not grow):
    what an idle agent does between runs.  Returns the whole window's
    switches by thread, the quiet steps' switches by thread, CPU ms of
    the window, its length, the quiet seconds and their CPU ms."""
    def sample():
        return (time.time(), threads(pid), size(events), len(host.calls()), cpu_ms(pid))
    samples = [sample()]
    end = samples[0][0] + seconds
    while time.time() < end:
        time.sleep(step)
        samples.append(sample())
    busy = []
    for (ta, tha, ea, ca, ua), (tb, thb, eb, cb, ub) in zip(samples, samples[1:]):
        d = delta(tha, thb)
        runs = any(v for k, v in d.items() if is_run(k))
        busy.append((tb, runs or eb != ea or cb != ca, d, tb - ta, ub - ua))
    quiet, qsecs, qcpu = {}, 0.0, 0
    last_busy = samples[0][0]	# the start-up round just ended
    for tb, b, d, dt, du in busy:
        if b:
            last_busy = tb
            continue
        if tb - dt - last_busy < lag:
            continue
        qsecs += dt
        qcpu += du
        for k, v in d.items():
            quiet[k] = quiet.get(k, 0) + v
    return (delta(samples[0][1], samples[-1][1]), quiet, samples[-1][4] - samples[0][4],
            samples[-1][0] - samples[0][0], qsecs, qcpu)


def is_run(name):
    return name.startswith(RUN_PREFIX) and name not in IDLE_COLLECTORS


def strace_count(pid, seconds):
    """Syscalls of every thread for a window (strace -f -c): the wakeup
    paths by name (futex, poll, nanosleep, ...)."""
    if shutil.which("strace") is None:
        return None
    p = subprocess.run(["timeout", "-s", "INT", str(seconds), "strace", "-f", "-c", "-p", str(pid)],
                       capture_output=True, text=True)
    return p.stderr.strip()


def start(cmd, env=None, **kw):
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, **kw)


def stop(p):
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def wait_smart_round(host, limit):
    """Until every disk had its smart query (the start-up round's longest
    part) or limit seconds."""
    end = time.time() + limit
    while time.time() < end:
        calls = host.calls()
        if sum(1 for c in calls if " smart get -d " in c) >= simhost.DISKS * 1:
            return True
        time.sleep(0.5)
    return False


def peer(work, exe):
    """The peer's executable (PATH or /usr/sbin) and a directory of its
    own under work; (None, None) when it is not installed."""
    path = shutil.which(exe) or ("/usr/sbin/" + exe if os.path.exists("/usr/sbin/" + exe) else None)
    if path is None:
        return None, None
    d = os.path.join(work, exe)
    os.makedirs(d)
    return path, d


def rsyslog(work):
    exe, d = peer(work, "rsyslogd")
    if exe is None:
        return None
    log = os.path.join(d, "in.log")
    open(log, "w").close()
    conf = os.path.join(d, "rsyslog.conf")
    with open(conf, "w") as f:
        f.write('global(workDirectory="%s")\n'
                'module(load="imfile")\n'
                'input(type="imfile" File="%s" Tag="bench:")\n'
                'action(type="omfile" File="%s/out.log")\n' % (d, log, d))
    return [exe, "-n", "-f", conf, "-i", os.path.join(d, "pid"), "-C"]


def collectd(work):
    exe, d = peer(work, "collectd")
    if exe is None:
        return None
    conf = os.path.join(d, "collectd.conf")
    with open(conf, "w") as f:
        f.write('BaseDir "%s"\nPIDFile "%s/pid"\nInterval 10\n'
                'LoadPlugin cpu\nLoadPlugin memory\nLoadPlugin interface\nLoadPlugin csv\n'
                '<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n' % (d, d, d))
    return [exe, "-f", "-C", conf]


def measure_peer(name, cmd, seconds, warm):
    if cmd is None:
        print("  %-26s not installed; skipped" % name)
        return None
    p = start(cmd)
    try:
        time.sleep(warm)
        if p.poll() is not None:
            print("  %-26s exited at start (status %s); skipped" % (name, p.returncode))
            return None
        by, cpu, secs = window(p.pid, seconds)
    finally:
        stop(p)
    sw = sum(by.values())
    print("  %-26s %8.2f wakeups/s %7.3f %% CPU  (%d threads)"
          % (name, sw / secs, 100.0 * cpu / 1000 / secs, len(by)))
    return sw / secs, cpu / 1000.0 / secs * 100


def classify(by):
    """(the agent's own, logwatch's poll, collector runs) of a by-thread table."""
    own = sum(v for k, v in by.items() if not k.startswith(RUN_PREFIX))
    lw = sum(v for k, v in by.items() if k in IDLE_COLLECTORS)
    runs = sum(v for k, v in by.items() if is_run(k))
    return own, lw, runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--peer-seconds", type=float, default=30)
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "esxwatch"))
    ap.add_argument("--strace", action="store_true", help="also strace -f -c the agent for a window")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        sys.exit("bench_idle: %s not built (make all)" % a.bin)

    work = tempfile.mkdtemp(prefix="esxwatch-bench-idle-")
    agent = None
    events = os.path.join(work, "events.json")
    try:
        host = simhost.make(os.path.join(work, "host"))
        cfg = os.path.join(work, "agent.yaml")
        with open(cfg, "w") as f:
            f.write(simhost.config(host, os.path.join(work, "storage"),
                                   "{proto: file, path: %s}" % events))
        print("idle: %s, %d NICs, %d disks, every collector at its default interval, %.0f s window"
              % (os.path.relpath(a.bin, TOP), simhost.NICS, simhost.DISKS, a.seconds))
        agent = start([a.bin, "-c", cfg])
        t0 = time.time()
        if not wait_smart_round(host, 120):
            print("idle: the start-up round did not finish in 120 s (calls %d)" % len(host.calls()))
        time.sleep(3)	# its last sends and writes settle
        if agent.poll() is not None:
            sys.exit("bench_idle: the agent exited (status %s)" % agent.returncode)
        print("idle: start-up round over after %.1f s" % (time.time() - t0))
        calls0 = len(host.calls())
        by, quiet, cpu, secs, qsecs, qcpu = sampled(agent.pid, a.seconds, events, host)
        calls = len(host.calls()) - calls0
        trace = strace_count(agent.pid, min(a.seconds, 20)) if a.strace else None
    finally:
        stop(agent)

    print("  %-18s %12s %12s" % ("thread", "window /s", "quiet /s"))
    for k in sorted(by, key=lambda k: -by[k]):
        print("  %-18s %12.2f %12s%s" % (k, by[k] / secs, "%.2f" % (quiet.get(k, 0) / qsecs)
                                         if qsecs else "-",
                                         "   (collector runs)" if is_run(k) else
                                         "   (its file poll)" if k in IDLE_COLLECTORS else ""))
    own, lw, runs = classify(by)
    q_own, q_lw, _ = classify(quiet)
    cpu_pct = 100.0 * cpu / 1000 / secs
    print("  whole window: %.2f wakeups/s of the agent's own + %.2f logwatch poll + %.2f in "
          "collector runs (%d tool calls); %.3f %% CPU" % (own / secs, lw / secs, runs / secs,
                                                          calls, cpu_pct))
    if qsecs:
        print("  quiet: %.0f s of the window with no collector run and no event for 5 s: "
              "%.2f wakeups/s of the agent's own + %.2f logwatch poll, %.3f %% CPU"
              % (qsecs, q_own / qsecs, q_lw / qsecs, 100.0 * qcpu / 1000 / qsecs))
    else:
        print("  quiet: no quiet step in the window (lengthen --seconds)")
    if trace:
        print("idle: strace -f -c of the agent:")
        print("\n".join("  " + l for l in trace.splitlines()))

    print("peers, %.0f s window each:" % a.peer_seconds)
    peer = {}
    pw = tempfile.mkdtemp(prefix="esxwatch-bench-peers-", dir=work)
    for name, cmd in (("rsyslogd (imfile, omfile)", rsyslog(pw)),
                      ("collectd (cpu, memory, if)", collectd(pw))):
        peer[name.split()[0]] = measure_peer(name, cmd, a.peer_seconds, 5)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("idle: work dir kept: %s" % work)

    w = q_own / qsecs if qsecs else float("nan")
    wl = q_lw / qsecs if qsecs else float("nan")
    total = (own + lw + runs) / secs
    qpct = 100.0 * qcpu / 1000 / qsecs if qsecs else float("nan")
    # a poll a second, give or take the sampling's edges
    met = qsecs > 0 and w <= 1.0 and wl <= 1.0 + 0.1 and qpct <= 0.1
    print("idle: target <= 1 wakeup/s of the agent's own when quiet, logwatch polling at most "
          "once a second, <= 0.1 %% CPU when quiet: %s" % ("met" if met else "MISSED"))
    res = ["idle_wakeups_per_s=%.2f" % w, "logwatch_polls_per_s=%.2f" % wl,
           "idle_cpu_pct=%.3f" % qpct, "window_wakeups_per_s=%.2f" % total,
           "window_cpu_pct=%.3f" % cpu_pct]
    for k in ("rsyslogd", "collectd"):
        v = peer.get(k)
        res.append("%s_wakeups_per_s=%s" % (k, "%.2f" % v[0] if v else "n/a"))
        res.append("window_vs_%s=%s" % (k, "%.2f" % (total / v[0]) if v and v[0] > 0 else "n/a"))
    res.append("target=%s" % ("met" if met else "missed"))
    print("RESULT " + " ".join(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
