"""dead_letter end to end: an existing sink (http) whose receiver refuses
one event for good (HTTP 400 for any request that holds it, as a strict
ingest API refuses a document it cannot parse).  The shipper isolates it;
it lands in the destination's dead_letter file (0600, one JSON line with
the event, the reason, the destination and the time), is counted as
dropped_poison and dead_lettered in --status --json, and every other event
arrives exactly once."""
import json
import os
import stat

import harness
import sinkutil
from harness import Agent, eq, fail

import receivers

MARK = "POISONLINE"


class RefusingReceiver(receivers.HttpReceiver):
    """HttpReceiver that answers 400 to a request holding MARK: nothing of
    that request is stored (a refused request ingests nothing)."""

    def check(self, h, rec, body, step):
        if MARK.encode() in body:
            rec["refused"] = True
            self._record(rec)
            h._reply(400, b'{"error":"document refused: %s"}' % MARK.encode())
            return
        super().check(h, rec, body, step)


def test_refused_event_in_dead_letter_file_rest_once(d):
    h = sinkutil.make_host(d, ndisks=50)
    ld = os.path.join(d, "logs")
    os.makedirs(ld)
    lines = ["2026-12-07T05:00:%02d.%03dZ cpu1:1)line %d%s" % (i, i * 7, i, " " + MARK if i == 13 else "")
             for i in range(40)]
    with open(os.path.join(ld, "t.log"), "w") as f:
        f.write("\n".join(lines) + "\n")
    fl = "\n  t: {directory: %s, include: t.log, forward: all, read_from_head: yes}" % ld
    dl = os.path.join(d, "refused.jsonl")
    with RefusingReceiver() as r:
        server = ("{proto: http, url: \"http://127.0.0.1:%d/in\", ssl: no, compress: none, "
                  "dead_letter: %s, dead_letter_max_kb: 64}" % (r.port, dl))
        a = Agent(d, sinkutil.config(h, server, filelog=fl))
        rc, _, err = a.run("--once", timeout=60)
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        # one event refused: --once says not everything was delivered
        if rc == 0:
            fail("--once exit 0 although an event was dropped")
        got = [e["text"] for e in r.events if e.get("esxwatch_collector") == "logwatch"]
        want = [l for l in lines if MARK not in l]
        eq(sorted(got), sorted(want), "log lines delivered exactly once")
        vsan = [e for e in r.events if e.get("esxwatch_collector") == "vsan"]
        eq(len(vsan), 50, "vsan events delivered")
        eq(len(set(json.dumps(e, sort_keys=True) for e in r.events)), len(r.events), "no duplicates")
        st = os.stat(dl)
        eq(stat.S_IMODE(st.st_mode), 0o600, "dead_letter mode")
        with open(dl) as f:
            dead = [json.loads(l) for l in f]
        eq(len(dead), 1, "dead_letter lines")
        x = dead[0]
        eq(x["destination"], "server", "destination")
        eq(x["proto"], "http", "proto")
        eq(x["event"]["text"], lines[13], "the refused event's text")
        eq(x["event"]["hostname"], "esx01", "the refused event's hostname")
        eq(x["event"]["esxwatch_collector"], "logwatch", "its fields")
        if "HTTP 400" not in x["reason"] or MARK not in x["reason"]:
            fail("reason does not say what the server answered: %r" % x["reason"])
        if not x["time"].endswith("Z") or len(x["time"]) != 24:
            fail("time is not ISO 8601 UTC with ms: %r" % x["time"])
        rc, js, _ = a.run("--status", "--json")
        eq(rc, 3, "--status --json once stopped (its last picture)")
        dst = json.loads(js)["destinations"][0]
        eq(dst["dropped_poison"], 1, "dropped_poison")
        eq(dst["dead_lettered"], 1, "dead_lettered")
        eq(dst["dead_letter_dropped"], 0, "dead_letter_dropped")


harness.main(globals())
