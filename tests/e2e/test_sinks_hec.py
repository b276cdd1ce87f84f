"""splunk_hec end to end: the real binary against a strict HTTP Event
Collector (hec_server.py, built from Splunk's documented API).  A
known-error log line (a rule's match) and `forward: all` lines arrive
exactly once with the text in `event`, the time in `time` (ms kept), the
host in `host` and the esxwatch fields in `fields` (the file sink's copy of
the same events is the reference); a 20 s outage loses nothing; with
`ack: yes` a withheld acknowledgement is resent after ack_timeout (counted
as resent) and in the end everything is acknowledged; Splunk's answer codes
(403 code 4 failing, 503 code 9 retried, 400 code 6 refused for good into
the dead_letter file)."""
import collections
import json
import os
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

from hec_server import HecServer

TOKEN = "6a1c1b2e-0000-4e5f-9a7b-e2e0h3c70k3n"
MARK = "POISONLINE"


def token_file(d):
    p = os.path.join(d, "hec.token")
    with open(p, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(p, 0o600)
    return p


def config(d, h, url, extra_server="", log_lines=()):
    ld = os.path.join(d, "logs")
    os.makedirs(ld, exist_ok=True)
    with open(os.path.join(ld, "test.log"), "w", encoding="utf-8") as f:
        f.write(sinkutil.LOG_TEXT + "".join(l + "\n" for l in log_lines))
    out = os.path.join(d, "copy.jsonl")
    text = ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "server: {proto: splunk_hec, url: \"%s\", token_file: %s, index: esx, ssl: no%s}\n"
            "servers:\n  copy: {proto: file, path: %s}\n"
            "batch: {flush_interval: 1}\n"
            "collectors:\n"
            "  nic: {enabled: no}\n  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
            "  smart: {enabled: no}\n  agent: {enabled: no}\n  diagnosis: {enabled: no}\n"
            "filelog:\n  t: {directory: %s, include: test.log, forward: all, read_from_head: yes, "
            "event_marker: \"^[0-9]{4}-\"}\n"
            "rules:\n  - {name: warn_line, match: \"WARNING:\", severity: warning, files: [t]}\n"
            % (h.tools_dir, url, token_file(d), extra_server, out, ld))
    return text, out, os.path.join(ld, "test.log")


def as_flat(e):
    """A HEC event back to the flat event of docs/events.md, checking that
    each part is in its place."""
    if not isinstance(e.get("time"), float) and not isinstance(e.get("time"), int):
        fail("time is not a number: %r" % e)
    flat = {"text": e["event"], "timestamp": int(round(e["time"] * 1000)), "hostname": e["host"]}
    if "hostname" in e["fields"]:
        fail("hostname in fields as well as host: %r" % e)
    flat.update(e["fields"])
    eq(e["sourcetype"], "esxwatch", "sourcetype")
    eq(e["index"], "esx", "index")
    eq(e["source"], e["fields"].get("filepath", "esxwatch"), "source")
    return flat


def key(e):
    return json.dumps(e, sort_keys=True)


def copy_events(out):
    with open(out) as f:
        return harness.parse_events(f.read())


def check_same(r, copy, what):
    """Every copy event exactly once among the indexed ones, nothing else."""
    got = collections.Counter(key(as_flat(e)) for e in r.events)
    want = collections.Counter(key(e) for e in copy)
    if got != want:
        fail("%s: %d indexed, %d expected; extra %s; missing %s" % (
            what, sum(got.values()), sum(want.values()),
            [k[:160] for k in (got - want)][:3], [k[:160] for k in (want - got)][:3]))


def test_known_error_and_forward_all_exactly_once_through_an_outage(d):
    h = sinkutil.make_host(d, ndisks=1)
    with HecServer(TOKEN, ack=True, indexes=["esx"]) as r:
        text, out, log = config(d, h, r.url, ", ack: yes, ack_timeout: 5")
        a = Agent(d, text)
        a.start()
        try:
            wait_for(lambda: len(r.events) >= 2, timeout=20, what="the first events indexed")
            alert = [e for e in r.events if e["fields"].get("esxwatch_rule") == "warn_line"]
            eq(len(alert), 1, "the known-error line's event")
            x = alert[0]
            eq(x["fields"]["esxwatch_severity"], "warning", "fields.esxwatch_severity")
            eq(x["host"], "esx01", "host")
            if not x["event"].startswith("2026-11-30T10:00:00.000Z cpu1:123)WARNING: first"):
                fail("event is not the line's text: %r" % x["event"])
            # acknowledged (the agent asked, the indexer said true)
            wait_for(lambda: r.unconfirmed() == 0, timeout=20, what="the first batch acknowledged")
            # the outage: nothing listens for 20 s while lines are written
            r.stop()
            t0 = time.time()
            with open(log, "a") as f:
                for i in range(30):
                    f.write("2026-12-07T05:%02d:%02d.%03dZ cpu2:9)outage line %d\n"
                            % (i // 60, i % 60, i * 37 % 1000, i))
            wait_for(lambda: len(copy_events(out)) >= 32, timeout=15, what="the file copy")
            time.sleep(max(0.0, 20 - (time.time() - t0)))   # the outage's length, not a sync
            r.restart()
            wait_for(lambda: len(r.events) >= 32, timeout=30, what="every event after the outage")
        finally:
            eq(a.stop(), 0, "agent exit")
        if r.violations:
            fail("HEC violations: %s" % r.violations[:5])
        copy = copy_events(out)
        eq(len(copy), 32, "events in the file copy")
        check_same(r, copy, "HEC events vs file copy (exactly once, every part in its place)")
        ms = [e for e in copy if e["text"].startswith("2026-12-07T05:00:01.037Z")]
        eq(len(ms), 1, "an outage line")
        for req in r.event_requests():
            eq(req["headers"].get("authorization"), "Splunk " + TOKEN, "Authorization")
            if "x-splunk-request-channel" not in req["headers"]:
                fail("no channel with ack: yes")
        chans = {q["headers"]["x-splunk-request-channel"] for q in r.requests}
        eq(len(chans), 1, "one channel per destination")
        with open(os.path.join(a.storage, "hec-channel.server")) as f:
            eq(f.read().strip(), chans.pop(), "the channel kept in storage")
        if TOKEN in a.stderr_text():
            fail("the token appears in the agent's log")


def test_withheld_acks_resent_answer_codes_and_dead_letter(d):
    h = sinkutil.make_host(d, ndisks=1)
    lines = ["2026-12-07T06:00:%02d.%03dZ cpu1:1)line %d%s" % (i, i * 11, i, " " + MARK if i == 7 else "")
             for i in range(20)]
    dl = os.path.join(d, "refused.jsonl")
    # request 1: 403 code 4 (invalid token: failing, kept), 2: 503 code 9
    # (busy: retried), 3: indexed never (its ack withheld, its events lost)
    with HecServer(TOKEN, ack=True, indexes=["esx"], script=["403:4", "503:9"], withhold={3},
                   refuse=MARK) as r:
        text, out, _ = config(d, h, r.url, ", ack: yes, ack_timeout: 2, dead_letter: %s" % dl,
                              log_lines=lines)
        a = Agent(d, text)
        rc, _, err = a.run("--once", timeout=60)
        if rc == 0:
            fail("--once exit 0 although an event was refused for good")
        if r.violations:
            fail("HEC violations: %s" % r.violations[:5])
        copy = [e for e in copy_events(out) if MARK not in e["text"]]
        eq(len(copy), 21, "events but the refused one")
        check_same(r, copy, "indexed events vs file copy (exactly once)")
        reqs = r.event_requests()
        eq([q.get("scripted") for q in reqs[:2]], ["403:4", "503:9"], "scripted answers")
        withheld = [q for q in reqs if q.get("withheld")]
        eq(len(withheld), 1, "withheld requests")
        # every ack asked for in the end came true, but the withheld one
        acked = {}
        for q in r.requests:
            for k, v in q.get("acks", {}).items():
                acked[k] = acked.get(k) or v
        eq(sorted(k for k, v in acked.items() if not v), [str(withheld[0]["ackId"])],
           "the only ackId never true: the withheld request's")
        if "HTTP 403 code 4: Invalid token" not in err:
            fail("the invalid token is not named in the log: %s" % err[-600:])
        if TOKEN in err:
            fail("the token appears in the agent's log")
        with open(dl) as f:
            dead = [json.loads(l) for l in f]
        eq([x["event"]["text"] for x in dead], [lines[7]], "dead_letter events")
        if "code 6" not in dead[0]["reason"]:
            fail("reason: %r" % dead[0]["reason"])
        _, js, _ = a.run("--status", "--json")
        dst = json.loads(js)["destinations"][0]
        eq(dst["dropped_poison"], 1, "dropped_poison")
        eq(dst["dead_lettered"], 1, "dead_lettered")
        eq(dst["resent_events"], withheld[0]["n"], "resent_events (the withheld request's)")
        # the last failure: the withheld acknowledgement, named
        if "no indexer acknowledgement within 2 s" not in dst["last_error"]:
            fail("last_error: %r" % dst["last_error"])


harness.main(globals())
