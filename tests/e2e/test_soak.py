"""A randomised soak with an exact ledger: for each of three fixed seeds the
real binary follows a log written at ~100 lines/s while, at random moments,
it is killed with SIGKILL and restarted, sent SIGHUP (with the file rewritten,
sometimes changed), the receiver goes away or answers 503, and the log is
rotated logrotate-style.  At the end every line written is delivered at least
once or counted under a named reason in --status --json / the status file:

    delivered + counted == written, per reason; duplicates are reported.

SOAK_SEEDS=1,2,3 and SOAK_SECONDS=30 change the run.
"""
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_durability as dur  # noqa: E402

SEEDS = [int(s) for s in os.environ.get("SOAK_SEEDS", "11,22,33").split(",")]
SECONDS = float(os.environ.get("SOAK_SECONDS", "30"))
RATE = 100          # lines per second


class SoakRx(dur.Rx):
    """Down (connections dropped) or failing (503 with Retry-After: 1)."""

    def __init__(self, **kw):
        self.failing = False
        super().__init__(**kw)

    def check(self, h, rec, body, step):
        if self.failing:
            self._finish(h, rec, 503, b'{"errorMessage":"busy"}')
            return
        super().check(h, rec, body, step)


def rotate(logdir):
    """logrotate without copytruncate: app.log.1 -> .2, app.log -> .1, new file."""
    p = os.path.join(logdir, "app.log")
    if os.path.exists(p + ".1"):
        os.replace(p + ".1", p + ".2")
    os.replace(p, p + ".1")
    open(p, "a").close()


def counted(agent):
    """Events the agent says it lost, by reason (status file)."""
    st = dur.read_status(agent) or {}
    out = {}
    for k, v in st.items():
        if k == "dests" or not isinstance(v, str):
            continue
        if k.startswith("dropped") or k.startswith("lost") or k.startswith("not_ingested"):
            try:
                out[k] = int(v.split()[0])
            except ValueError:
                pass
    for name, dv in st.get("dests", {}).items():
        for k, v in dv.items():
            if k.startswith("dropped") or k.startswith("not_ingested"):
                try:
                    out["%s.%s" % (name, k)] = int(v.split()[0])
                except ValueError:
                    pass
    return out


def soak(d, seed):
    rnd = random.Random(seed)
    rx = SoakRx()
    a = dur.make_agent(d, rx.port)
    logdir = os.path.join(d, "logs")
    total = int(SECONDS * RATE)
    written = [0]
    stop = threading.Event()
    lock = threading.Lock()

    def writer():
        i = 0
        while i < total and not stop.is_set():
            with lock:
                dur.append_lines(d, i, 10)
            i += 10
            written[0] = i
            time.sleep(10.0 / RATE)

    plan = ([("kill", rnd.uniform(1, SECONDS)) for _ in range(4)] +
            [("hup", rnd.uniform(1, SECONDS)) for _ in range(3)] +
            [("down", rnd.uniform(1, SECONDS)) for _ in range(2)] +
            [("fail", rnd.uniform(1, SECONDS))] +
            [("rotate", rnd.uniform(2, SECONDS / 2)), ("rotate", rnd.uniform(SECONDS / 2 + 3, SECONDS))])
    plan.sort(key=lambda x: x[1])
    a.start()
    t = threading.Thread(target=writer)
    t.start()
    t0 = time.time()
    back_at = None
    try:
        for what, at in plan:
            while time.time() - t0 < at:
                if back_at is not None and time.time() >= back_at:
                    rx.down = rx.failing = False
                    back_at = None
                time.sleep(0.05)
            if what == "kill":
                a.kill9()
                time.sleep(rnd.uniform(0, 1))
                a.start()
            elif what == "hup":
                if rnd.random() < 0.5:
                    with open(a.config) as f:
                        text = f.read()
                    a.write_config(text.replace("batch: {flush_interval: 1}",
                                                "batch: {flush_interval: 1, max_events: %d}" %
                                                rnd.choice([50, 200, 500])))
                a.signal(signal.SIGHUP)
            elif what in ("down", "fail"):
                if what == "down":
                    rx.down = True
                else:
                    rx.failing = True
                back_at = time.time() + rnd.uniform(2, 5)
            elif what == "rotate":
                with lock:
                    rotate(logdir)
        t.join()
        rx.down = rx.failing = False
        want = set(range(written[0]))

        def drained():
            return want <= set(dur.line_numbers(rx.texts()))
        try:
            harness.wait_for(drained, timeout=60, what="every line delivered")
        except AssertionError:
            pass
        got = dur.line_numbers(rx.texts())
        lost = want - set(got)
        dups = len(got) - len(set(got))
        reasons = counted(a)
        n_counted = sum(reasons.values())
        print("    seed %d: written %d, delivered %d distinct (%d duplicates), lost %d, "
              "counted %d %r" % (seed, len(want), len(set(got) & want), dups, len(lost),
                                 n_counted, reasons))
        if len(lost) != n_counted:
            harness.fail("seed %d: ledger does not balance: %d lost, %d counted %r; first lost %r"
                         % (seed, len(lost), n_counted, reasons, sorted(lost)[:10]))
    finally:
        stop.set()
        t.join()
        a.stop()
        rx.close()


# one test per seed (SOAK_SEEDS)
for _seed in SEEDS:
    globals()["test_soak_seed_%d" % _seed] = (lambda s: lambda d: soak(d, s))(_seed)


if __name__ == "__main__":
    harness.main(globals())
