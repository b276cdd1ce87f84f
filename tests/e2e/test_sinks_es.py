"""elasticsearch end to end: the real binary against a strict _bulk endpoint
(es_server.py, built from Elastic's documented API).  A known-error log
line and `forward: all` lines arrive exactly once as documents with the
text in `message`, the time in `@timestamp` (ms kept), the host in
`host.name` and the esxwatch fields by name (the file sink's copy of the
same events is the reference); a 20 s outage loses nothing; per-item
answers: items answered 429 are sent again alone (never the delivered
ones), an item answered 400 goes to the dead_letter file and the drop
count, nothing else lost or duplicated."""
import collections
import datetime
import json
import os
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

from es_server import EsServer

API_KEY = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="


def secret(d, name, value):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(value + "\n")
    os.chmod(p, 0o600)
    return p


def config(d, h, server, log_lines=()):
    ld = os.path.join(d, "logs")
    os.makedirs(ld, exist_ok=True)
    with open(os.path.join(ld, "test.log"), "w", encoding="utf-8") as f:
        f.write(sinkutil.LOG_TEXT + "".join(l + "\n" for l in log_lines))
    out = os.path.join(d, "copy.jsonl")
    text = ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "server: %s\n"
            "servers:\n  copy: {proto: file, path: %s}\n"
            "batch: {flush_interval: 1}\n"
            "tags: {site: lab7, message: \"a tag named message\"}\n"
            "collectors:\n"
            "  nic: {enabled: no}\n  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
            "  smart: {enabled: no}\n  agent: {enabled: no}\n  diagnosis: {enabled: no}\n"
            "filelog:\n  t: {directory: %s, include: test.log, forward: all, read_from_head: yes, "
            "event_marker: \"^[0-9]{4}-\"}\n"
            "rules:\n  - {name: warn_line, match: \"WARNING:\", severity: warning, files: [t]}\n"
            % (h.tools_dir, server, out, ld))
    return text, out, os.path.join(ld, "test.log")


def iso_ms(s):
    t = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(round(t.timestamp() * 1000))


def as_flat(doc):
    """A document back to the flat event of docs/events.md, checking that
    each part is in its place."""
    d = dict(doc)
    d.pop("_index")
    d.pop("_id")
    flat = {"text": d.pop("message"), "timestamp": iso_ms(d.pop("@timestamp")),
            "hostname": d.pop("host")["name"]}
    flat.update(d.pop("labels", {}))
    for k, v in d.items():
        if not isinstance(v, str):
            fail("field %s is not a keyword string: %r" % (k, v))
    flat.update(d)
    return flat


def key(e):
    return json.dumps(e, sort_keys=True)


def copy_events(out):
    with open(out) as f:
        return harness.parse_events(f.read())


def check_same(r, copy, what):
    got = collections.Counter(key(as_flat(e)) for e in r.docs)
    want = collections.Counter(key(e) for e in copy)
    if got != want:
        fail("%s: %d indexed, %d expected; extra %s; missing %s" % (
            what, sum(got.values()), sum(want.values()),
            [k[:160] for k in (got - want)][:3], [k[:160] for k in (want - got)][:3]))


def test_known_error_and_forward_all_exactly_once_through_an_outage(d):
    h = sinkutil.make_host(d, ndisks=1)
    with EsServer(api_key=API_KEY) as r:
        server = ("{proto: elasticsearch, url: \"%s/\", api_key_file: %s, ssl: no}"
                  % (r.url, secret(d, "es.key", API_KEY)))
        text, out, log = config(d, h, server)
        a = Agent(d, text)
        a.start()
        try:
            wait_for(lambda: len(r.docs) >= 2, timeout=20, what="the first documents")
            alert = [x for x in r.docs if x.get("esxwatch_rule") == "warn_line"]
            eq(len(alert), 1, "the known-error line's document")
            x = alert[0]
            eq(x["esxwatch_severity"], "warning", "esxwatch_severity")
            eq(x["host"], {"name": "esx01"}, "host.name")
            eq(x["_index"], "esxwatch", "the default index")
            eq(x["labels"], {"message": "a tag named message"}, "a tag named message, in labels")
            if not x["message"].startswith("2026-11-30T10:00:00.000Z cpu1:123)WARNING: first"):
                fail("message is not the line's text: %r" % x["message"])
            r.stop()
            t0 = time.time()
            with open(log, "a") as f:
                for i in range(30):
                    f.write("2026-12-07T05:%02d:%02d.%03dZ cpu2:9)outage line %d\n"
                            % (i // 60, i % 60, i * 37 % 1000, i))
            wait_for(lambda: len(copy_events(out)) >= 32, timeout=15, what="the file copy")
            time.sleep(max(0.0, 20 - (time.time() - t0)))   # the outage's length, not a sync
            r.restart()
            wait_for(lambda: len(r.docs) >= 32, timeout=30, what="every document after the outage")
        finally:
            eq(a.stop(), 0, "agent exit")
        if r.violations:
            fail("_bulk violations: %s" % r.violations[:5])
        copy = copy_events(out)
        eq(len(copy), 32, "events in the file copy")
        check_same(r, copy, "documents vs file copy (exactly once, every part in its place)")
        eq(len([x for x in r.docs if x["@timestamp"] == "2026-12-07T05:00:01.037Z"]), 1,
           "@timestamp with its milliseconds")
        if API_KEY in a.stderr_text():
            fail("the API key appears in the agent's log")


def test_per_item_429_retried_alone_400_dead_lettered(d):
    h = sinkutil.make_host(d, ndisks=1)
    lines = ["2026-12-07T06:00:%02d.%03dZ cpu1:1)line %d%s" % (
        i, i * 11, i, " R429" if i in (4, 12) else " R400" if i == 9 else "") for i in range(20)]
    dl = os.path.join(d, "refused.jsonl")
    with EsServer(basic=("esxwatch", "pa:ss w"), data_stream="logs-esxwatch-default",
                  pipeline="esx ingest", items_script={"R429": [429, 429], "R400": [400] * 99}) as r:
        server = ("{proto: elasticsearch, url: \"%s\", index: logs-esxwatch-default, "
                  "pipeline: \"esx ingest\", username: esxwatch, password_file: %s, ssl: no, "
                  "dead_letter: %s}" % (r.url, secret(d, "es.pw", "pa:ss w"), dl))
        text, out, _ = config(d, h, server, log_lines=lines)
        a = Agent(d, text)
        rc, _, err = a.run("--once", timeout=60)
        if rc == 0:
            fail("--once exit 0 although a document was refused for good")
        if r.violations:
            fail("_bulk violations: %s" % r.violations[:5])
        copy = [e for e in copy_events(out) if "R400" not in e["text"]]
        eq(len(copy), 21, "events but the refused one")
        check_same(r, copy, "documents vs file copy (exactly once)")
        # the first bulk carried everything; after it, only the 429 items
        # (never one delivered before) and the 400 one never again
        first = r.bulks[0]
        eq(first["n"], 22, "the first _bulk's items")
        later = [m for b in r.bulks[1:] for m in b["messages"]]
        if sorted(later) != sorted(l for l in lines if "R429" in l):
            fail("resent after the first _bulk: %r" % later)
        eq(sorted(collections.Counter(later).values()), [1, 1], "each 429 item resent once")
        with open(dl) as f:
            dead = [json.loads(l) for l in f]
        eq([x["event"]["text"] for x in dead], [lines[9]], "dead_letter events")
        if "status 400: document_parsing_exception" not in dead[0]["reason"]:
            fail("reason: %r" % dead[0]["reason"])
        eq(dead[0]["proto"], "elasticsearch", "dead_letter proto")
        _, js, _ = a.run("--status", "--json")
        dst = json.loads(js)["destinations"][0]
        eq(dst["dropped_poison"], 1, "dropped_poison")
        eq(dst["dead_lettered"], 1, "dead_lettered")
        if "pa:ss" in err:
            fail("the password appears in the agent's log")


def test_lost_answer_resend_meets_its_own_documents(d):
    """The first _bulk is indexed but its answer lost: the resend carries
    the same _id values, Elasticsearch answers 409 to each, and they count
    as delivered: nothing indexed twice."""
    h = sinkutil.make_host(d, ndisks=1)
    lines = ["2026-12-07T07:00:%02d.%03dZ cpu1:1)line %d" % (i, i, i) for i in range(10)]
    with EsServer(lose_answers={1}) as r:
        server = "{proto: elasticsearch, url: \"%s\", ssl: no}" % r.url
        text, out, _ = config(d, h, server, log_lines=lines)
        rc, _, err = Agent(d, text).run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-400:])
        if r.violations:
            fail("_bulk violations: %s" % r.violations[:5])
        check_same(r, copy_events(out), "documents vs file copy (exactly once)")
        eq(r.bulks[0]["n"], 12, "the first _bulk's items")
        resent = [s for b in r.bulks[1:] for s in b["statuses"]]
        eq(sorted(set(resent)), [409], "the resends' answers: the documents exist")
        eq(len(resent), 12, "every document of the lost answer resent once")


harness.main(globals())
