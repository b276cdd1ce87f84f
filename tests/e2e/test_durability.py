"""Durability end to end: the real binary, logwatch following a growing file,
a strict cfapi receiver (tests/lib/receivers.py).

- kill -9 five times and two receiver outages: every line arrives at least once;
- a small storage budget: the spool stays within it (+ one segment), the
  oldest events are dropped, the drop count is exact, the rest arrive in order;
- a receiver that rejects any batch with one marked event: only it is dropped;
- bytes flipped in a spool segment while stopped: the damaged records are
  skipped and counted, the rest delivered (also under ASan);
- two destinations, one dead: the live one gets everything on time;
- a deleted or garbled cursor file, or one past the end: the backlog is sent again,
  with one warning and the count;
- SIGHUP with agent.yaml empty, gone, or without the destination holding
  the backlog: rejected, the old configuration keeps delivering;
- the storage directory deleted while running: re-created, nothing lost;
- esxwatch --status / the status file.
"""
import json
import os
import random
import re
import signal
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness  # noqa: E402
import receivers  # noqa: E402

LINE_RE = re.compile(r"^durability line (\d{6})")

CONF = """\
server: {hostname: 127.0.0.1, proto: cfapi, port: %(port)d, ssl: no}
%(servers)s
storage: {directory: "@STORAGE@"%(storage)s}
batch: {flush_interval: 1}
collectors:
  nic: {enabled: no}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: yes, interval: %(agent_interval)d}
  logwatch: {enabled: yes, interval: 1}
filelog:
  app: {directory: "@ROOT@/logs", include: app.log, forward: all, read_from_head: yes}
"""


class Rx(receivers.CfapiReceiver):
    """A cfapi receiver that can be 'down' (receivers' down) and that may
    reject (400) any batch holding a marked event."""

    def __init__(self, poison=None, **kw):
        self.poison = poison
        self.rejected = 0
        super().__init__(**kw)

    def check(self, h, rec, body, step):
        if self.poison is not None and self.poison.encode() in body:
            with self.lock:
                self.rejected += 1
            self._finish(h, rec, 400, b'{"errorMessage":"poison"}')
            return
        super().check(h, rec, body, step)

    def texts(self):
        with self.lock:
            return [e.get("text", "") for e in self.events]

    def events_copy(self):
        with self.lock:
            return list(self.events)


def line_numbers(texts):
    out = []
    for t in texts:
        m = LINE_RE.match(t)
        if m:
            out.append(int(m.group(1)))
    return out


free_port = harness.free_port


def make_agent(d, port, agent_interval=3600, servers="", name="agent.yaml", storage=""):
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    open(os.path.join(d, "logs", "app.log"), "a").close()
    return harness.Agent(d, CONF % {"port": port, "servers": servers, "storage": storage,
                                    "agent_interval": agent_interval}, name=name)


def append_lines(d, start, n, extra="", pad=0):
    with open(os.path.join(d, "logs", "app.log"), "a") as f:
        for i in range(start, start + n):
            f.write("durability line %06d%s%s\n" % (i, extra(i) if callable(extra) else extra,
                                                    " " + "x" * pad if pad else ""))


def read_status(agent):
    p = os.path.join(agent.storage, "status")
    try:
        with open(p) as f:
            text = f.read()
    except OSError:
        return None
    top, dests, cur = {}, {}, None
    for line in text.splitlines():
        k, _, v = line.partition(": ")
        if line.startswith(" ") and cur is not None:
            dests[cur][k.strip()] = v
        elif k == "dest":
            cur = v
            dests[cur] = {}
        else:
            top[k] = v
    top["dests"] = dests
    return top


def spool_bytes(agent):
    d = os.path.join(agent.storage, "spool")
    total = 0
    try:
        for n in os.listdir(d):
            if n.endswith(".seg"):
                try:
                    total += os.path.getsize(os.path.join(d, n))
                except OSError:
                    pass
    except OSError:
        pass
    return total


def wait_pushed(agent, n, timeout=30):
    def ok():
        st = read_status(agent)
        return st is not None and int(st.get("pushed_events", "0")) >= n
    harness.wait_for(ok, timeout=timeout, what="%d events in the spool" % n)


def test_crash_kill9_and_receiver_outages(d):
    seed = int(os.environ.get("DURABILITY_SEED", str(int(time.time()))))
    rnd = random.Random(seed)
    rx = Rx()
    a = make_agent(d, rx.port)
    try:
        crash_run(d, a, rx, rnd, seed)
    finally:
        a.stop()
        rx.close()


def crash_run(d, a, rx, rnd, seed):
    a.start()
    total = 1500
    done = threading.Event()

    def writer():
        for i in range(0, total, 10):
            append_lines(d, i, 10)
            time.sleep(0.1)
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    # five kill -9 at random moments, two outages of several seconds
    plan = sorted([("kill", rnd.uniform(0.5, 14.5)) for _ in range(5)] +
                  [("hup", rnd.uniform(0.5, 14.5)) for _ in range(2)] +
                  [("down", rnd.uniform(1.0, 4.0)), ("down", rnd.uniform(8.0, 10.0))],
                  key=lambda x: x[1])
    t0 = time.time()
    kills = 0
    at_kill = []
    up_at = None
    for what, at in plan:
        while time.time() - t0 < at:
            if up_at is not None and time.time() >= up_at:
                rx.down, up_at = False, None
            time.sleep(0.05)
        if what == "kill":
            a.kill9()
            kills += 1
            at_kill.append(len(set(line_numbers(rx.texts()))))
            time.sleep(rnd.uniform(0.0, 0.5))
            a.start()
        elif what == "hup":
            # reload: queued events must survive it.  Only once the agent
            # is up: before main() installs its handlers SIGHUP kills.
            mark = "esxwatch[%d]: info: esxwatch " % a.proc.pid
            harness.wait_for(lambda: mark in a.stderr_text(), timeout=10,
                             what="agent pid %d up" % a.proc.pid)
            a.signal(signal.SIGHUP)
        else:
            rx.down = True
            up_at = time.time() + 3.5
    while up_at is not None and time.time() < up_at:
        time.sleep(0.05)
    rx.down = False
    t.join()
    harness.eq(kills, 5, "kills")

    def all_there():
        return set(line_numbers(rx.texts())) >= set(range(total))
    try:
        harness.wait_for(all_there, timeout=60, what="every line at the receiver")
    finally:
        a.stop()
        rx.close()
    nums = line_numbers(rx.texts())
    missing = sorted(set(range(total)) - set(nums))
    if missing:
        harness.fail("%d lines never arrived (seed %d), first %r" % (len(missing), seed, missing[:10]))
    dups = len(nums) - len(set(nums))
    print("crash test (seed %d): %d lines, %d kill -9 (lines delivered at each: %s), "
          "2 reloads, 2 outages: 0 lost, %d duplicates in %d requests"
          % (seed, total, kills, at_kill, dups, len(rx.requests)))
    # at most the batches in flight at each kill (500 events each)
    if dups > kills * 500:
        harness.fail("%d duplicates for %d kills" % (dups, kills))
    if rx.violations:
        harness.fail("receiver violations: %r" % rx.violations[:5])


def test_budget_drops_oldest_counts_exactly_rest_in_order(d):
    rx = Rx()
    rx.down = True
    a = make_agent(d, rx.port, storage=", max_disk_buffer_kb: 64, segment_kb: 8")
    a.start()
    n = 2000
    append_lines(d, 0, n, pad=100)
    maxdisk = 0
    end = time.time() + 30
    while time.time() < end:
        maxdisk = max(maxdisk, spool_bytes(a))
        st = read_status(a)
        if st is not None and int(st.get("pushed_events", "0")) >= n + 1:
            break
        time.sleep(0.02)
    wait_pushed(a, n + 1, timeout=1)
    maxdisk = max(maxdisk, spool_bytes(a))
    if maxdisk > (64 + 8) * 1024:
        harness.fail("spool grew to %d bytes, budget 64 KB + one 8 KB segment" % maxdisk)
    # the receiver returns: what is still queued arrives
    rx.down = False

    def drained():
        st = read_status(a)
        return st is not None and st["dests"].get("server", {}).get("backlog_events") == "0" \
            and len(rx.texts()) > 0
    harness.wait_for(drained, timeout=30, what="the backlog delivered")
    time.sleep(1.5)
    st = read_status(a)
    pushed, dropped = int(st["pushed_events"]), int(st["dropped_budget"])
    received = len(set((e.get("text"), e.get("timestamp")) for e in rx.events_copy()))
    if dropped <= 0:
        harness.fail("nothing dropped: the test did not exceed the budget")
    harness.eq(received + dropped, pushed, "received + dropped vs pushed")
    # the agent reports the same number in its status event (reload = a new one)
    a.signal(signal.SIGHUP)

    def status_event():
        for e in rx.events_copy():
            if e.get("esxwatch_collector") == "agent" and e.get("esxwatch_dropped_budget") not in (None, "0"):
                return e
        return None
    ev = harness.wait_for(status_event, timeout=20, what="a status event with the drops")
    harness.eq(int(ev["esxwatch_dropped_budget"]), dropped, "esxwatch_dropped_budget")
    harness.eq(int(ev["esxwatch_dropped_events"]), dropped, "esxwatch_dropped_events")
    a.stop()
    rx.close()
    nums = line_numbers(rx.texts())
    if nums != sorted(nums) or len(set(nums)) != len(nums):
        harness.fail("not in order or duplicated: %r" % nums[:20])
    # the oldest were dropped: what arrived is the newest, contiguous
    harness.eq(nums, list(range(n - len(nums), n)), "the lines that arrived")
    print("budget test: %d pushed, %d dropped (oldest), %d delivered in order, spool peak %d bytes"
          % (pushed, dropped, received, maxdisk))


def test_poison_event_only_dropped(d):
    rx = Rx(poison="POISON")
    a = make_agent(d, rx.port)
    a.start()
    n = 300
    append_lines(d, 0, n, extra=lambda i: " POISON" if i == 150 else "")

    def others_there():
        return set(line_numbers(rx.texts())) >= set(range(n)) - {150}
    try:
        harness.wait_for(others_there, timeout=30, what="every other line")
        time.sleep(1.0)
    finally:
        a.stop()
        rx.close()
    nums = line_numbers(rx.texts())
    if 150 in nums:
        harness.fail("the poison event was accepted")
    if rx.rejected < 1:
        harness.fail("the receiver never rejected a batch")
    log = a.stderr_text()
    harness.eq(log.count("event rejected, dropped"), 1, "rejected events logged")
    st = read_status(a)
    harness.eq(int(st["dropped_poison"]), 1, "dropped_poison in the status file")
    print("poison test: %d lines, 1 rejected alone after %d rejected batches, %d delivered"
          % (n, rx.rejected, len(set(nums))))


def corruption(d, binary):
    rx = Rx()
    rx.down = True
    a = make_agent(d, rx.port)
    n = 200
    append_lines(d, 0, n, pad=200)
    env = {"ESXWATCH_BIN": binary}
    a.proc = None
    old_bin = harness.BIN
    harness.BIN = binary
    try:
        a.start(env=env)
        wait_pushed(a, n + 1)
        time.sleep(1.5)		# past the fsync interval
        a.kill9()
        segs = sorted(f for f in os.listdir(os.path.join(a.storage, "spool")) if f.endswith(".seg"))
        if not segs:
            harness.fail("no spool segment")
        p = os.path.join(a.storage, "spool", segs[0])
        size = os.path.getsize(p)
        with open(p, "r+b") as f:
            for frac in (0.25, 0.5, 0.75):
                f.seek(int(size * frac))
                b = f.read(1)
                f.seek(int(size * frac))
                f.write(bytes([b[0] ^ 0x5A]))
        rx.down = False
        a.start(env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1"})

        def delivered():
            return len(set(line_numbers(rx.texts()))) >= n - 3
        harness.wait_for(delivered, timeout=30, what="the undamaged lines")
        time.sleep(2.5)
        st = read_status(a)
        rc = a.stop()
    finally:
        harness.BIN = old_bin
        rx.close()
    nums = set(line_numbers(rx.texts()))
    harness.eq(len(nums), n - 3, "lines delivered")
    harness.eq(int(st["dropped_corrupt"]), 3, "dropped_corrupt in the status file")
    harness.eq(rc, 0, "exit status")
    log = a.stderr_text()
    if "AddressSanitizer" in log or "runtime error" in log:
        harness.fail("sanitizer report:\n" + log[-2000:])
    if "damaged" not in log:
        harness.fail("the damage was not logged")
    print("corruption test (%s): 3 bytes flipped, 3 records skipped and counted, %d delivered"
          % (os.path.relpath(binary, harness.TOP), len(nums)))


def record_starts(path):
    """(offset, seq) of every record of a spool segment (spoolrec.h)."""
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], 0
    while off + 20 <= len(data) and data[off:off + 4] == b"ESPL":
        n, seq = struct.unpack_from("<IQ", data, off + 4)
        out.append((off, seq))
        off += 20 + n
    return out


def test_lost_segments_at_record_boundaries_counted(d):
    """Damage no CRC can see: a middle segment deleted and the newest one
    cut at a record boundary after a clean stop.  Every event queued either
    arrives or is counted as damaged, exactly."""
    rx = Rx()
    rx.down = True
    a = make_agent(d, rx.port, storage=", segment_kb: 8")
    n = 200
    append_lines(d, 0, n, pad=200)
    a.start()
    wait_pushed(a, n + 1)
    harness.eq(a.stop(), 0, "clean stop")
    spool = os.path.join(a.storage, "spool")
    segs = sorted(f for f in os.listdir(spool) if f.endswith(".seg"))
    if len(segs) < 3:
        harness.fail("want 3 segments or more, got %r" % segs)
    newest = os.path.join(spool, [s for s in segs if os.path.getsize(os.path.join(spool, s))][-1])
    if newest == os.path.join(spool, segs[1]):
        harness.fail("the middle segment is the newest: %r" % segs)
    lost = len(record_starts(os.path.join(spool, segs[1])))
    os.unlink(os.path.join(spool, segs[1]))
    recs = record_starts(newest)
    cut = max(1, len(recs) // 2)
    os.truncate(newest, recs[len(recs) - cut][0])
    lost += cut
    # the first run's events: the n lines and the agent's own (a status event)
    others = int(read_status(a)["pushed_events"]) - n
    rx.down = False
    a.start()
    harness.wait_for(lambda: len(set(line_numbers(rx.texts()))) >= n - lost, timeout=30,
                     what="the events that are still there")
    time.sleep(1.5)
    st = read_status(a)
    harness.eq(a.stop(), 0, "exit status")
    rx.close()
    harness.eq(int(st["dropped_corrupt"]), lost, "counted as damaged")
    got = set(line_numbers(rx.texts()))
    # the records lost are lines, or one of the agent's own events
    if not n - lost <= len(got) <= n - lost + others:
        harness.fail("lines delivered: %d, want %d to %d (a lost record is a line or one of "
                     "the agent's own events)" % (len(got), n - lost, n - lost + others))
    if "gone (a segment cut or deleted)" not in a.stderr_text():
        harness.fail("the cut end is not logged: %s" % a.stderr_text()[-800:])


def test_corruption_skipped_and_counted(d):
    corruption(d, harness.BIN)


def test_corruption_under_asan(d):
    asan = os.path.join(harness.TOP, "build", "asan", "esxwatch")
    if not os.path.exists(asan):
        harness.fail("%s not built (make SANITIZE=1)" % asan)
    corruption(d, asan)


def test_two_destinations_one_dead(d):
    rx = Rx()
    dead = free_port()
    servers = "servers:\n  backup: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}\n" % dead
    a = make_agent(d, rx.port, servers=servers, agent_interval=1)
    a.start()
    n = 600
    t0 = time.time()
    for i in range(0, n, 100):
        append_lines(d, i, 100)
        time.sleep(0.2)

    def all_there():
        return set(line_numbers(rx.texts())) >= set(range(n))
    harness.wait_for(all_there, timeout=15, what="every line at the live destination")
    took = time.time() - t0
    time.sleep(2.5)
    st = read_status(a)
    # the live one fails for a while and comes back: two change events
    rx.down = True
    time.sleep(4)
    rx.down = False

    def changes():
        ch = [e for e in rx.events_copy() if e.get("esxwatch_kind") == "change"
              and e.get("esxwatch_destination") == "server"]
        return ch if [e.get("esxwatch_state") for e in ch][-2:] == ["failing", "delivering"] else None
    ch = harness.wait_for(changes, timeout=30, what="server failing then delivering changes")
    # esxwatch --status while running: 0 and the per-destination picture
    rc, out, err = a.run("--status", timeout=10)
    stopped_rc = None
    a.stop()
    if "unrecognized option" not in err:
        stopped_rc, out2, _ = a.run("--status", timeout=10)
    rx.close()
    if took > 6:
        harness.fail("the live destination took %.1fs for %d lines" % (took, n))
    bk = st["dests"].get("backup")
    if bk is None or int(bk["backlog_events"]) < n:
        harness.fail("backup backlog: %r" % (bk,))
    if int(st["dests"]["server"]["backlog_events"]) > 5:
        harness.fail("server backlog: %r" % st["dests"]["server"])
    if "unrecognized option" in err:
        print("note: this build has no --status option yet (main.c); status file checked only")
    else:
        harness.eq(rc, 0, "--status exit while running")
        for want in ("running", "destination server", "destination backup", "backlog"):
            if want not in out:
                harness.fail("--status output lacks %r:\n%s" % (want, out))
        harness.eq(stopped_rc, 3, "--status exit after stop")
    if bk.get("state") != "failing":
        harness.fail("backup state: %r" % (bk,))
    fail_ev = [e for e in ch if e.get("esxwatch_state") == "failing"][-1]
    harness.eq(fail_ev.get("esxwatch_previous_state"), "delivering", "previous state")
    harness.eq(fail_ev.get("esxwatch_severity"), "error", "severity of failing")
    if not fail_ev.get("esxwatch_error"):
        harness.fail("failing change without the error: %r" % fail_ev)
    sts = [e for e in rx.events_copy() if e.get("esxwatch_kind") == "status"]
    if not sts or "esxwatch_rss_kb" not in sts[-1] or int(sts[-1]["esxwatch_rss_kb"]) <= 0:
        harness.fail("no agent status event with its figures")
    print("two destinations: %d lines at the live one in %.1fs; the dead one holds %s (%s); "
          "server failing -> delivering reported (%s)" % (n, took, bk["backlog_events"],
                                                         bk.get("state"), fail_ev["esxwatch_error"]))


CURSOR_WARN = re.compile(r"spool: the cursor file of destination 'server' (is missing|is damaged|"
                         r"points past the end of the spool); it restarts at the oldest queued "
                         r"event: (\d+) events")


def test_lost_cursor_resends_backlog(d):
    """A deleted cursor file, a garbled one, one pointing past the end: the backlog
    queued while the receiver was down still arrives, with one warning
    naming the destination and the count."""
    rx = Rx()
    a = make_agent(d, rx.port)
    cursor = os.path.join(a.storage, "spool", "cursor.server")
    n = 100
    try:
        def write_cursor(text):
            with open(cursor, "w") as f:
                f.write(text)
        damages = ((lambda: os.unlink(cursor), "is missing"),
                   (lambda: write_cursor("seg 1\noff 1x"), "is damaged"),
                   (lambda: write_cursor("seg 9999\noff 0\nseq 99999999\n"),
                    "points past the end of the spool"))
        for rnd, (damage, why) in enumerate(damages):
            rx.down = True
            a.start()
            append_lines(d, rnd * n, n)
            wait_pushed(a, n)
            a.kill9()   # the records are in the kernel; a SIGTERM would wait for the send
            damage()
            rx.down = False
            a.start()
            want = set(range(rnd * n, (rnd + 1) * n))
            harness.wait_for(lambda: set(line_numbers(rx.texts())) >= want, timeout=20,
                             what="the backlog after the cursor file %s" % why)
            harness.eq(a.stop(), 0, "exit status")
            warns = [m for m in CURSOR_WARN.finditer(a.stderr_text())]
            harness.eq(len(warns), rnd + 1, "cursor warnings")
            harness.eq(warns[-1].group(1), why, "the reason")
            if int(warns[-1].group(2)) < n:
                harness.fail("warning counts %s events, %d were queued" % (warns[-1].group(2), n))
    finally:
        a.stop()
        rx.close()
    print("lost cursor: deleted, garbled, past the end: every queued line arrived (%s)"
          % ", ".join(m.group(0).split(": ")[-1] for m in CURSOR_WARN.finditer(a.stderr_text())))


def test_reload_of_an_empty_or_vanished_file_rejected(d):
    """SIGHUP while agent.yaml is empty, gone, or lost the destination that
    holds the backlog: rejected with the reason, the old configuration
    stays and the backlog reaches the old destination, none on stdout."""
    rx = Rx()
    rx.down = True
    a = make_agent(d, rx.port)
    n = 50
    good = open(a.config).read()
    stdout_only = good.replace("server: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}"
                               % rx.port, 'server: {hostname: ""}')
    try:
        a.start()
        mark = "esxwatch[%d]: info: esxwatch " % a.proc.pid
        harness.wait_for(lambda: mark in a.stderr_text(), timeout=10, what="agent up")
        append_lines(d, 0, n)
        wait_pushed(a, n)
        steps = [(lambda: open(a.config, "w").close(), "reload rejected: %s is empty; keeping "
                  "the running configuration" % a.config),
                 (lambda: os.unlink(a.config), "new configuration rejected; the old one stays"),
                 (lambda: a.write_config(stdout_only), "reload rejected: %s: it drops every "
                  "destination with queued events ('server': " % a.config)]
        for k, (change, want) in enumerate(steps):
            change()
            a.signal(signal.SIGHUP)
            harness.wait_for(lambda: want in a.stderr_text(), timeout=10, what=want)
        harness.eq(a.stderr_text().count("configuration reloaded"), 0, "reloads accepted")
        rx.down = False
        harness.wait_for(lambda: set(line_numbers(rx.texts())) >= set(range(n)), timeout=20,
                         what="the backlog at the old destination")
        harness.eq(a.stop(), 0, "exit status")
        if a.stdout_events():
            harness.fail("events on stdout: %r" % a.stdout_events()[:2])
        # --check-config of an empty file: 2, with FILE:LINE:COL
        open(a.config, "w").close()
        rc, _, err = a.run("--check-config", timeout=10)
        harness.eq(rc, 2, "--check-config of an empty file")
        if not err.startswith("%s:1:1: the file is empty" % a.config):
            harness.fail("--check-config message: %r" % err)
    finally:
        a.stop()
        rx.close()
    print("reload: empty, vanished, stdout-only files rejected; %d queued lines delivered" % n)


def test_storage_deleted_while_running(d):
    """rm -rf of the storage directory while events wait for a dead
    receiver: it is re-created, what the spool held is written there again,
    and after a kill -9 and a restart every line arrives (the log's
    bookmark is past them: nothing is read from the log again)."""
    import shutil
    rx = Rx()
    rx.down = True
    a = make_agent(d, rx.port)
    with open(a.config) as f:
        a.write_config(f.read().replace("read_from_head: yes", "read_from_head: no"))
    bookmarks = os.path.join(a.storage, "bookmarks")
    try:
        a.start()
        harness.wait_for(lambda: os.path.exists(bookmarks), timeout=10, what="the first poll")
        append_lines(d, 0, 50)
        wait_pushed(a, 50)
        # rm -rf as one step: the directory leaves its path at once, then
        # goes.  (A plain rmtree races with the agent, which re-creates
        # storage/spool as soon as it sees it gone, before rmtree reaches
        # storage itself: "Directory not empty".)
        os.rename(a.storage, a.storage + ".deleted")
        shutil.rmtree(a.storage + ".deleted")
        harness.wait_for(lambda: "written back into it" in a.stderr_text(), timeout=15,
                         what="the spool written to the re-created directory")
        if "was deleted while the agent runs; re-creating it" not in a.stderr_text():
            harness.fail("no error about the deleted directory:\n" + a.stderr_text()[-1500:])
        append_lines(d, 50, 20)
        wait_pushed(a, 70)
        harness.wait_for(lambda: os.path.exists(bookmarks) and
                         os.path.exists(os.path.join(a.storage, "spool", "cursor.server")),
                         timeout=10, what="bookmarks and cursor saved again")
        time.sleep(1.2)     # the bookmark of the last lines
        a.kill9()
        rx.down = False
        a.start()
        harness.wait_for(lambda: set(line_numbers(rx.texts())) >= set(range(70)), timeout=20,
                         what="every line after the restart")
        harness.eq(a.stop(), 0, "exit status")
    finally:
        a.stop()
        rx.close()
    print("storage deleted while running: re-created, 70 of 70 lines delivered")


def test_unusable_storage_runs_in_memory(d):
    """A storage directory that cannot exist (under a regular file): the
    agent says so and still delivers, from memory."""
    blocker = os.path.join(d, "file")
    open(blocker, "w").close()
    os.makedirs(os.path.join(d, "logs"))
    append_lines(d, 0, 3)
    a = harness.Agent(d, (CONF % {"port": 9, "servers": "", "storage": "", "agent_interval": 3600})
                      .replace("server: {hostname: 127.0.0.1, proto: cfapi, port: 9, ssl: no}",
                               'server: {hostname: ""}')
                      .replace('"@STORAGE@"', '"@ROOT@/file/storage"'))
    rc, evs, err = a.once(timeout=60)
    harness.eq(rc, 0, "--once exit status")
    harness.eq(line_numbers([e.get("text", "") for e in evs]), [0, 1, 2], "lines on stdout")
    if "kept in memory only" not in err:
        harness.fail("no memory-only error in the log:\n" + err[-1500:])


def cpu_ms(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) * 1000 // os.sysconf("SC_CLK_TCK")


def test_disk_full_memory_only_then_recovers(d):
    """A real ENOSPC: the storage directory on a full 512 KB tmpfs."""
    import subprocess
    mnt = os.path.join(d, "storage")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", mnt],
                      capture_output=True).returncode != 0:
        print("note: cannot mount a tmpfs here (not root?); the full-disk path is covered "
              "by test_spool/disk_refuses_writes_memory_only_then_recovers")
        return
    rx = Rx()
    a = None
    try:
        filler = os.path.join(mnt, "filler")
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        a = make_agent(d, rx.port)
        # the cfapi sink keeps its generated id in storage.directory, full here
        with open(a.config) as f:
            text = f.read()
        a.write_config(text.replace("ssl: no}", "ssl: no, agent_id: 0f7b6f0e-7c59-4d7e-9a0b-5d2c3e4f5a6b}", 1))
        a.start(env={"ESXWATCH_SPOOL_RETRY_MS": "500"})
        append_lines(d, 0, 200)
        harness.wait_for(lambda: len(set(line_numbers(rx.texts()))) >= 200, timeout=20,
                         what="lines delivered from memory")
        err = a.stderr_text()
        if "keeping new events in memory" not in err:
            harness.fail("no memory-only error in the log:\n" + err[-1500:])
        # no busy loop while the disk stays full
        c0 = cpu_ms(a.proc.pid)
        time.sleep(2.0)
        used = cpu_ms(a.proc.pid) - c0
        if used > 400:
            harness.fail("%d ms of CPU in 2 s with a full disk" % used)
        # space returns
        os.unlink(filler)
        harness.wait_for(lambda: "accepts writes again" in a.stderr_text(), timeout=10,
                         what="the disk used again")
        append_lines(d, 200, 100)
        harness.wait_for(lambda: len(set(line_numbers(rx.texts()))) >= 300, timeout=20,
                         what="lines after recovery")
        segs = [f for f in os.listdir(os.path.join(mnt, "spool")) if f.endswith(".seg")]
        if not segs:
            harness.fail("no segment on disk after recovery")
        harness.eq(a.stop(), 0, "exit status")
        print("disk full: memory-only with a loud error, %d ms CPU in 2 s, recovered, "
              "300 lines delivered" % used)
    finally:
        if a is not None and a.proc is not None:
            a.kill9()
        rx.close()
        subprocess.run(["umount", "-l", mnt], capture_output=True)


if __name__ == "__main__":
    harness.main(globals())
