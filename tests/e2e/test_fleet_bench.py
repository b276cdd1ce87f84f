"""bench/fleet.py on a tiny fleet: its figures come from a real run.

Four agents, a 4 s outage, both schedules.  Checks that every agent
delivered before the outage, that nothing was lost, that the strict
receiver found no violation, that both runs (full jitter, and the fixed
schedule with ESXWATCH_FIXED_BACKOFF=1) drained within the bench's bound
that the summary line has the documented shape, and that the last line,
the RESULT line, says every agent delivered again after the outage.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

BENCH = os.path.join(harness.TOP, "bench", "fleet.py")
LAST = re.compile(r"^fleet: 4 agents, outage 4 s: peak (\d+) req/s \(fixed schedule (\d+) req/s, "
                  r"ratio ([0-9.]+|n/a)\), drained in ([0-9.]+) s, lost (\d+), duplicated (\d+)$")
RESULT = re.compile(r"^RESULT agents=4 outage_s=4 first_delivery_median_s=([0-9.]+|n/a) "
                    r"first_delivery_min_s=([0-9.]+|n/a) first_delivery_max_s=([0-9.]+|n/a) "
                    r"peak_req_per_s=\d+ fixed_peak_req_per_s=\d+ fixed_over_jitter=([0-9.]+|n/a) "
                    r"drained_s=[0-9.]+ lost=0 duplicated=\d+ target=(met|missed)$")


def test_tiny_fleet_outage(tmpdir):
    env = dict(os.environ, ESXWATCH_BIN=harness.BIN)
    p = subprocess.run([sys.executable, BENCH, "--agents", "4", "--outage", "4"],
                       capture_output=True, text=True, timeout=900, env=env)
    out = p.stdout.strip().splitlines()
    harness.eq(p.returncode, 0, "exit status (%s)" % (p.stdout[-1500:] + p.stderr[-800:]))
    for mode in ("jitter", "fixed"):
        ready = [l for l in out if l.startswith("fleet[%s]: 4/4 agents delivering" % mode)]
        harness.eq(len(ready), 1, "%s: all agents delivering before the outage" % mode)
        res = [l for l in out if l.startswith("fleet[%s]: 4 agents, outage 4 s:" % mode)]
        harness.eq(len(res), 1, "%s result line" % mode)
        for want in ("lost 0,", "receiver violations 0,", "agents alive 4,"):
            if want not in res[0]:
                harness.fail("%s: %r not in %r" % (mode, want, res[0]))
        m = re.search(r"(\d+) events per agent", res[0])
        if not m or int(m.group(1)) < 9:
            harness.fail("%s: too few events per agent: %r" % (mode, res[0]))
    summary = [l for l in out if l.startswith("fleet: 4 agents, outage 4 s:")]
    harness.eq(len(summary), 1, "summary line")
    m = LAST.match(summary[0])
    if not m:
        harness.fail("summary line %r" % summary[0])
    r = RESULT.match(out[-1])
    if not r:
        harness.fail("last line %r" % out[-1])
    # every agent delivered again after the outage, within the run
    if r.group(1) == "n/a" or float(r.group(3)) > 120:
        harness.fail("first delivery after the recovery: %r" % out[-1])
    harness.eq(m.group(5), "0", "lost")
    if int(m.group(1)) < 1 or int(m.group(2)) < 1:
        harness.fail("no request after the recovery: %r" % out[-1])


harness.main(globals())
