"""loki end to end: the real binary pushes its events to a strict Loki
receiver (loki_server.py, built from Loki's HTTP API documentation): every
event arrives exactly once, its text as the line, its time as nanoseconds
(milliseconds kept), host, program, collector and severity as the only
stream labels (label sets bounded by their product) and the other fields
as structured metadata; tenant and Basic auth on every push; 429/503
retried; an entry Loki refuses as too far behind is dropped alone and
counted while the rest of its push is stored once; a 20 s outage loses
nothing."""
import json
import os
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

from loki_server import LokiReceiver, flat

LABELS = ("hostname", "appname", "esxwatch_collector", "esxwatch_severity")
PASSWORD = "loki-s3cret-pw"


def key(e):
    return json.dumps(e, sort_keys=True)


def server(r, extra=""):
    return ('{proto: loki, url: "http://127.0.0.1:%d/loki/api/v1/push", ssl: no%s}'
            % (r.port, extra))


def copy_conf(d):
    out = os.path.join(d, "copy.jsonl")
    return out, "servers:\n  copy: {proto: file, path: %s}\n" % out


def test_every_event_once_labels_bounded(d):
    h = sinkutil.make_host(d, ndisks=60)
    fl, rules = sinkutil.logwatch(d)
    pwf = os.path.join(d, "pw")
    with open(pwf, "w") as f:
        f.write(PASSWORD + "\n")
    os.chmod(pwf, 0o600)
    with open(os.path.join(d, "logs", "test.log"), "a") as f:
        # the same line twice: two events, one stream, one millisecond —
        # Loki keeps one entry per (stream, timestamp, line)
        f.write("2026-11-30T10:00:05.000Z cpu1:123)twice\n" * 2)
    with LokiReceiver(tenant="esx-team", basic=("esxwatch", PASSWORD),
                      script=["429:ra=1", "503"]) as r:
        out, servers = copy_conf(d)
        a = Agent(d, sinkutil.config(
            h, server(r, ", tenant: esx-team, username: esxwatch, password_file: %s" % pwf),
            servers=servers, filelog=fl, extra=rules + "logging: {debug_level: 2}\n"))
        rc, _, err = a.run("--once", "-v", "-v", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-600:])
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        if [q for q in r.requests if q.get("denied")]:
            fail("a push without the tenant or the Basic credentials")
        copy = harness.file_events(out)
        if len(copy) < 62:
            fail("only %d events" % len(copy))
        eq(sorted(map(key, map(flat, r.stored))), sorted(map(key, copy)),
           "entries (line, time, labels, metadata) vs the file copy")
        eq([q.get("scripted") for q in r.requests[:2]], ["429:ra=1", "503"], "scripted answers")
        if r.requests[1]["t"] - r.requests[0]["t"] < 0.9:
            fail("the 429's Retry-After: 1 was not honoured")
        for e in r.stored:
            if set(e["_labels"]) - set(LABELS):
                fail("labels beyond %s: %r" % (LABELS, e["_labels"]))
        eq(len([e for e in r.stored if e["text"].endswith(")twice")]), 2,
           "two equal lines of one millisecond, two entries")
        sets = {key(e["_labels"]) for e in r.stored}
        want = {key({k: e[k] for k in LABELS if e.get(k)}) for e in copy}
        eq(sets, want, "stream label sets = the distinct (host, program, collector, severity)")
        if len(sets) > 6:
            fail("%d streams for one host's events" % len(sets))
        w = [e for e in r.stored if e.get("esxwatch_rule") == "warn_line"]
        eq(len(w), 1, "the known-error line's alert")
        eq((w[0]["_labels"]["esxwatch_severity"], w[0]["_labels"]["hostname"]), ("warning", "esx01"),
           "severity and host labels")
        if PASSWORD in err:
            fail("the password appears in the agent's log")


def test_too_far_behind_dropped_alone(d):
    h = sinkutil.make_host(d, ndisks=30)
    fl, rules = sinkutil.logwatch(d)
    with open(os.path.join(d, "logs", "test.log"), "a") as f:
        f.write("2026-11-30T10:00:02.000Z cpu1:123)POISON old entry\n"
                "2026-11-30T10:00:03.000Z cpu1:123)after it\n")
    with LokiReceiver(too_far="POISON") as r:
        out, servers = copy_conf(d)
        cfg = sinkutil.config(h, server(r, ", compress: none"), servers=servers, filelog=fl,
                              extra=rules)
        a = Agent(d, cfg.replace("vsan: {enabled: yes, interval: 1}",
                                 "vsan: {enabled: yes, interval: 3600}"))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 1, "--once: not every event delivered (stderr: %s)" % err[-600:])
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        copy = harness.file_events(out)
        eq(sorted(map(key, map(flat, r.stored))),
           sorted(key(e) for e in copy if "POISON" not in e["text"]),
           "stored once each: everything but the refused entry")
        if "Loki refused entries older than it accepts" not in err or "too far behind" not in err:
            fail("the refusal was not explained: %s" % err[-800:])
        rc, st, _ = a.run("--status", "--json")
        dest = {x["name"]: x for x in json.loads(st)["destinations"]}["server"]
        eq(dest["dropped_poison"], 1, "dropped_poison")


def test_without_structured_metadata_the_line_is_json(d):
    h = sinkutil.make_host(d, ndisks=5)
    with LokiReceiver(allow_sm=False) as r:
        out, servers = copy_conf(d)
        a = Agent(d, sinkutil.config(h, server(r, ", structured_metadata: no"), servers=servers))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-600:])
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        eq(sorted(key(json.loads(e["text"])) for e in r.stored),
           sorted(map(key, harness.file_events(out))), "lines as the events' JSON")


def test_outage_of_20s_loses_nothing(d):
    h = sinkutil.make_host(d, ndisks=20)
    fl, rules = sinkutil.logwatch(d)
    log = os.path.join(d, "logs", "test.log")
    with LokiReceiver() as r:
        out, servers = copy_conf(d)
        cfg = sinkutil.config(h, server(r), servers=servers, filelog=fl, extra=rules)
        a = Agent(d, cfg.replace("vsan: {enabled: yes, interval: 1}",
                                 "vsan: {enabled: yes, interval: 3600}"))
        a.start()
        try:
            wait_for(lambda: len(r.stored) >= 21, timeout=20, what="the first events")
            r.crash()
            t0 = time.time()
            with open(log, "a") as f:
                for i in range(40):
                    f.write("2026-11-30T10:01:%02d.%03dZ cpu1:1)during the outage %d\n" % (i, i, i))
            wait_for(lambda: len([e for e in harness.file_events(out) if "outage" in e["text"]]) >= 39,
                     timeout=15, what="the outage lines in the file copy")
            wait_for(lambda: time.time() - t0 >= 20, timeout=25, what="20 s of outage")
            r.restore()

            def caught_up():
                copy = harness.file_events(out)
                return len([e for e in copy if "outage" in e["text"]]) == 40 and \
                    sorted(map(key, map(flat, r.stored))) == sorted(map(key, copy))
            wait_for(caught_up, timeout=25, what="every event after the outage")
        finally:
            a.stop()
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])


harness.main(globals())
