"""Durability across restarts, end to end (docs/reliability.md):

- the per-reason counts (dropped over the budget, rejected alone, kept out
  by a filter) are the same after a clean stop and after a kill -9 that
  came after they were saved (spool/counts), in the status file,
  --status --json and the agent's status event; counts_since stays;
- the storage directory deleted while a backlog of many segments waits for
  a dead receiver: every segment is written back from its open file, then
  every event is delivered with 0 counted lost, also across a kill -9
  right after the re-creation; with fewer segment files held open than
  the spool has (ESXWATCH_SPOOL_MAX_FDS), what the others held is counted
  exactly: delivered + counted = pushed.
"""
import http.client
import json
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_durability import Rx, append_lines, line_numbers, make_agent, read_status  # noqa: E402


def metrics(port):
    """The drop samples of /metrics: {name{labels}: value}."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
    finally:
        c.close()
    return {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^(esxwatch_(?:spool|output)_(?:dropped|filtered)_events_total\S*|"
        r"esxwatch_counts_since_timestamp_seconds) (\S+)$", text, re.M)}


def status_json(a):
    rc, out, err = a.run("--status", "--json")
    harness.eq(rc, 0, "--status --json exit status (%s)" % err[-300:])
    return json.loads(out)


def counts(a):
    """The counts as the status file and --status --json show them."""
    st = read_status(a)
    js = status_json(a)
    got = {
        "dropped_budget": int(st["dropped_budget"]),
        "dropped_poison": int(st["dropped_poison"]),
        "dropped_corrupt": int(st["dropped_corrupt"]),
        "counts_since_ms": int(st["counts_since_ms"]),
    }
    for name, d in sorted(st["dests"].items()):
        for k in ("dropped_budget", "dropped_poison", "filtered"):
            got["%s.%s" % (name, k)] = int(d.get(k, "0"))
    jgot = {k: js[k] for k in ("dropped_budget", "dropped_poison", "dropped_corrupt",
                              "counts_since_ms")}
    for d in js["destinations"]:
        for k in ("dropped_budget", "dropped_poison", "filtered"):
            jgot["%s.%s" % (d["name"], k)] = d[k]
    harness.eq(jgot, got, "--status --json vs the status file")
    return got


def wait_status_fresh(a, since):
    harness.wait_for(lambda: read_status(a) is not None and
                     int(read_status(a).get("updated_ms", "0")) > since and
                     int(read_status(a).get("pid", "0")) == a.proc.pid,
                     timeout=15, what="a status file of the new process")


def agent_event_counts(a, rx, after):
    """SIGHUP (a reload): a fresh agent status event; its drop counts."""
    a.signal(signal.SIGHUP)

    def ev():
        for e in rx.events_copy()[after:]:
            if e.get("esxwatch_collector") == "agent" and "esxwatch_counts_since_ms" in e:
                return e
        return None
    e = harness.wait_for(ev, timeout=20, what="an agent status event")
    return {k: int(e["esxwatch_" + k]) for k in ("dropped_budget", "dropped_poison",
                                                 "dropped_corrupt", "counts_since_ms")}


def test_counts_survive_restarts(d):
    rx = Rx(poison="POISON")
    rx2 = Rx()
    servers = ("servers:\n  filt: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no, "
               "filter: [{type: agent}]}\n" % rx2.port)
    a = make_agent(d, rx.port, servers=servers,
                   storage=", max_disk_buffer_kb: 64, segment_kb: 8")
    mport = harness.free_port()
    with open(a.config) as f:
        a.write_config(f.read() + 'monitor: {listen: "127.0.0.1:%d"}\n' % mport)
    try:
        a.start()
        # a poison event, rejected alone; every line kept out of 'filt'
        append_lines(d, 0, 100, extra=lambda i: " POISON" if i == 50 else "")
        harness.wait_for(lambda: set(line_numbers(rx.texts())) >= set(range(100)) - {50},
                         timeout=30, what="the first 100 lines")
        # The lines around it arrive before the poison's own lone send is
        # refused: wait for that, or the outage below holds it back and
        # the budget, not the poison rule, drops it.
        harness.wait_for(lambda: (read_status(a) or {}).get("dests", {}).get(
            "server", {}).get("dropped_poison") == "1",
                         timeout=30, what="the poison event dropped")
        # the receiver down, far more than the budget: the oldest dropped
        rx.down = True
        append_lines(d, 100, 2000, pad=100)
        harness.wait_for(lambda: int(read_status(a)["dropped_budget"]) > 0 and
                         int(read_status(a)["pushed_events"]) >= 2100,
                         timeout=30, what="budget drops")
        rx.down = False
        harness.wait_for(lambda: read_status(a)["dests"]["server"]["backlog_events"] == "0",
                         timeout=30, what="the backlog delivered")
        time.sleep(2.5)     # the counts saved (at most every flush_interval)
        c1 = counts(a)
        if c1["dropped_poison"] != 1 or c1["server.dropped_poison"] != 1:
            harness.fail("want one poison drop: %r" % c1)
        if c1["filt.filtered"] <= 0 or c1["server.dropped_budget"] <= 0:
            harness.fail("want the filtered lines and budget drops: %r" % c1)
        n_ev = len(rx.events_copy())
        harness.eq(agent_event_counts(a, rx, n_ev), {k: c1[k] for k in (
            "dropped_budget", "dropped_poison", "dropped_corrupt", "counts_since_ms")},
            "the agent's status event before the restart")
        m1 = metrics(mport)
        harness.eq(m1['esxwatch_output_dropped_events_total{name="server",reason="rejected"}'],
                   1.0, "/metrics: the poison drop")

        # a clean stop and a start: the same counts
        harness.eq(a.stop(), 0, "exit status")
        before = int(time.time() * 1000)
        a.start()
        wait_status_fresh(a, before)
        c2 = counts(a)
        harness.eq(c2, c1, "the counts after a clean restart")
        def same_metrics():
            try:
                return metrics(mport) == m1
            except OSError:
                return False    # not listening yet
        harness.wait_for(same_metrics, timeout=10,
                         what="/metrics after the restart as before it: %r" % m1)
        n_ev = len(rx.events_copy())
        harness.eq(agent_event_counts(a, rx, n_ev), {k: c1[k] for k in (
            "dropped_budget", "dropped_poison", "dropped_corrupt", "counts_since_ms")},
            "the agent's status event after the restart")

        # one more poison event, saved, then kill -9: it is still counted
        append_lines(d, 2100, 10, extra=lambda i: " POISON" if i == 2105 else "")
        harness.wait_for(lambda: int(read_status(a)["dropped_poison"]) == 2, timeout=30,
                         what="the second poison drop")
        cfile = os.path.join(a.storage, "spool", "counts")
        harness.wait_for(lambda: re.search(r"^dest server \d+ 2 0$", open(cfile).read(), re.M),
                         timeout=10, what="the counts saved")
        c3 = counts(a)
        a.kill9()
        before = int(time.time() * 1000)
        a.start()
        wait_status_fresh(a, before)
        c4 = counts(a)
        harness.eq(c4, c3, "the counts after kill -9")
        if c4["dropped_poison"] != 2 or c4["counts_since_ms"] != c1["counts_since_ms"]:
            harness.fail("after kill -9: %r" % c4)
        harness.eq(a.stop(), 0, "exit status")
        if "the drop counts start again" in a.stderr_text():
            harness.fail("the counts file was found damaged:\n" + a.stderr_text()[-1500:])
    finally:
        a.stop()
        rx.close()
        rx2.close()
    print("counts across restarts: budget %d, poison %d -> %d, filtered %d; clean stop "
          "and kill -9 keep them" % (c1["dropped_budget"], c1["dropped_poison"],
                                     c4["dropped_poison"], c1["filt.filtered"]))


def seg_files(a):
    try:
        return sorted(n for n in os.listdir(os.path.join(a.storage, "spool"))
                      if n.endswith(".seg"))
    except OSError:
        return []


def storage_deleted(d, crash, max_fds=None):
    rx = Rx()
    rx.down = True
    a = make_agent(d, rx.port, storage=", segment_kb: 8")
    with open(a.config) as f:
        a.write_config(f.read().replace("read_from_head: yes", "read_from_head: no"))
    bookmarks = os.path.join(a.storage, "bookmarks")
    n = 600
    env = {"ESXWATCH_SPOOL_MAX_FDS": str(max_fds)} if max_fds is not None else None
    try:
        a.start(env=env)
        harness.wait_for(lambda: os.path.exists(bookmarks), timeout=10, what="the first poll")
        append_lines(d, 0, n, pad=100)
        harness.wait_for(lambda: read_status(a) is not None and
                         int(read_status(a)["pushed_events"]) >= n, timeout=30,
                         what="%d events in the spool" % n)
        segs = seg_files(a)
        if len(segs) < 5:
            harness.fail("want a backlog of several segments, got %r" % segs)
        # the agent may write its status file meanwhile: what it wrote may
        # stay, the spool directory goes
        shutil.rmtree(a.storage, ignore_errors=True)
        harness.wait_for(lambda: "written back into it" in a.stderr_text(), timeout=15,
                         what="the spool written back into the re-created directory")
        if max_fds is not None:
            return beyond_the_bound(a, rx, n)
        harness.wait_for(lambda: seg_files(a) == segs and
                         os.path.exists(os.path.join(a.storage, "spool", "cursor.server")),
                         timeout=10, what="every segment and the cursor back")
        mode = os.stat(os.path.join(a.storage, "spool")).st_mode & 0o777
        harness.eq(mode, 0o700, "the re-created spool directory's mode")
        append_lines(d, n, 20)
        harness.wait_for(lambda: os.path.exists(bookmarks), timeout=10,
                         what="the bookmarks saved again")
        time.sleep(1.5)     # the bookmark of the last lines
        if crash:
            a.kill9()
            rx.down = False
            a.start()
        else:
            rx.down = False
        harness.wait_for(lambda: set(line_numbers(rx.texts())) >= set(range(n + 20)),
                         timeout=40, what="every line")
        time.sleep(1.2)
        st = read_status(a)
        harness.eq(int(st["dropped_corrupt"]), 0, "events counted as damaged")
        harness.eq(int(st["dropped_budget"]), 0, "events dropped over the budget")
        harness.eq(a.stop(), 0, "exit status")
        log = a.stderr_text()
        if "lost (counted as damaged)" in log:
            harness.fail("events counted lost:\n" + log[-1500:])
    finally:
        a.stop()
        rx.close()
    print("storage deleted (%s): %d segments written back, %d of %d lines delivered, 0 lost"
          % ("kill -9 after" if crash else "running on", len(segs), n + 20, n + 20))


def beyond_the_bound(a, rx, n):
    """Fewer segment files held open than the spool has: what the others
    held is counted, exactly (delivered + counted = written), no more."""
    rx.down = False
    harness.wait_for(lambda: (read_status(a) or {}).get("dests", {}).get("server", {}).get(
        "backlog_events") == "0", timeout=40, what="the rest delivered")
    time.sleep(1.2)
    # every event pushed (the lines and the agent's own status event)
    got = set((e.get("text"), e.get("timestamp")) for e in rx.events_copy())
    st = read_status(a)
    counted, pushed = int(st["dropped_corrupt"]), int(st["pushed_events"])
    if counted <= 0 or pushed < n:
        harness.fail("nothing counted lost with 2 segments held open: %r" % st)
    harness.eq(len(got) + counted, pushed, "delivered + counted as damaged vs pushed")
    if "and not open: lost (counted as damaged)" not in a.stderr_text():
        harness.fail("no error naming the lost events:\n" + a.stderr_text()[-1500:])
    harness.eq(a.stop(), 0, "exit status")
    print("storage deleted, 2 segment files held open: %d delivered + %d counted = %d pushed"
          % (len(got), counted, pushed))


def test_storage_deleted_beyond_the_descriptor_bound_counted_exactly(d):
    storage_deleted(d, crash=False, max_fds=2)


def test_storage_deleted_backlog_of_segments_all_delivered(d):
    storage_deleted(d, crash=False)


def test_storage_deleted_then_kill9_all_delivered(d):
    storage_deleted(d, crash=True)


if __name__ == "__main__":
    harness.main(globals())
