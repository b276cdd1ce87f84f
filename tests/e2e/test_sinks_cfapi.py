"""cfapi end to end: the real binary ships what its collectors produce to a
strict Log Insight ingestion receiver (tests/lib/receivers.py) over HTTP and
HTTPS (a CA made at test time); the receiver checks every rule of the API
reference and must record zero violations.  Also: Retry-After is honoured,
and TLS failures are refused with a clear cause."""
import json
import os
import stat
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

import certs
import receivers


def flat_key(e):
    e = dict(e)
    e.pop("timestamp", None)
    return json.dumps(e, sort_keys=True)


def run_once_both(d, h, server):
    """--once with the cfapi destination and a file copy of the same events."""
    out = os.path.join(d, "copy.jsonl")
    a = Agent(d, sinkutil.config(h, server, servers="servers:\n  copy: {proto: file, path: %s}\n" % out))
    rc, _, err = a.run("--once", timeout=60)
    with open(out) as f:
        copy = harness.parse_events(f.read())
    return a, rc, err, copy


def check_delivery(r, copy, want_min):
    if r.violations:
        fail("receiver violations: %s" % r.violations[:5])
    if len(r.events) < want_min:
        fail("receiver got %d events, want >= %d" % (len(r.events), want_min))
    got = sorted(flat_key(e) for e in r.events)
    want = sorted(flat_key(e) for e in copy)
    if got != want:
        fail("cfapi events differ from the file copy (%d vs %d); first: %s / %s"
             % (len(got), len(want), got[:1], want[:1]))
    for e in copy[:3]:
        if e.get("site") != sinkutil.SITE or e.get("team") != "\u00e9quipe":
            fail("tags not as configured: %r" % e)
    for rec in r.requests:
        if rec.get("n", 0) > 500:
            fail("a request carried %d events" % rec["n"])


def test_cfapi_http_thousands_zero_violations(d):
    h = sinkutil.make_host(d, ndisks=2500, bios_uuid=True)
    with receivers.CfapiReceiver() as r:
        a, rc, err, copy = run_once_both(
            d, h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port)
        eq(rc, 0, "--once status (stderr: %s)" % err[-500:])
        check_delivery(r, copy, 2500)
        if not all(rec["encoding"] == "gzip" for rec in r.requests):
            fail("not every request was gzip: %r" % [rec["encoding"] for rec in r.requests])
        if len(r.requests) < 5:
            fail("2500 events in %d requests (max 500 each)" % len(r.requests))
        # the agent id is the host's BIOS UUID, 8-4-4-4-12
        ids = {rec.get("agent_id") for rec in r.requests}
        eq(ids, {"4c4c4544-004a-1038-804e-b3c04f524b32"}, "agent ids")
        # one keep-alive connection for the whole run
        eq(r.connections, 1, "connections")


def test_cfapi_https_stored_agent_id(d):
    c = certs.make(os.path.join(d, "pki"))
    h = sinkutil.make_host(d, ndisks=2000)
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key)) as r:
        a, rc, err, copy = run_once_both(
            d, h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: yes, ssl_ca_path: %s}"
            % (r.port, c.ca))
        eq(rc, 0, "--once status (stderr: %s)" % err[-500:])
        check_delivery(r, copy, 2000)
        p = os.path.join(a.storage, "agent-id")
        st = os.stat(p)
        eq(stat.S_IMODE(st.st_mode), 0o600, "agent-id mode")
        with open(p) as f:
            stored = f.read().strip()
        eq({rec.get("agent_id") for rec in r.requests}, {stored}, "agent id in the path")
        # a second run keeps the same id
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "second --once")
        eq({rec.get("agent_id") for rec in r.requests}, {stored}, "agent id after restart")


def test_retry_after_is_honoured(d):
    h = sinkutil.make_host(d, ndisks=20)
    with receivers.CfapiReceiver(script=["503:ra=3"]) as r:
        a = Agent(d, sinkutil.config(
            h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port))
        a.start()
        try:
            wait_for(lambda: len(r.requests) >= 2, timeout=20, what="a retried request")
        finally:
            a.kill9()
        first, second = r.requests[0], r.requests[1]
        eq(first.get("scripted"), "503:ra=3", "first answer")
        gap = second["t"] - first["t"]
        if gap < 2.9:
            fail("retried %.2fs after a 503 with Retry-After: 3" % gap)
        if gap > 10:
            fail("retried only after %.2fs" % gap)
        if r.violations:
            fail("violations: %s" % r.violations[:3])


def test_two_cfapi_destinations_independent(d):
    """servers: two cfapi instances side by side, one of them refusing for
    a while; each gets every event, and the healthy one is not held up."""
    h = sinkutil.make_host(d, ndisks=300)
    with receivers.CfapiReceiver() as r1, \
            receivers.CfapiReceiver(script=["503:ra=2", "503:ra=2"]) as r2:
        out = os.path.join(d, "copy.jsonl")
        servers = ("servers:\n  copy: {proto: file, path: %s}\n"
                   "  second: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no, "
                   "agent_id: second-agent}\n" % (out, r2.port))
        a = Agent(d, sinkutil.config(
            h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r1.port,
            servers=servers))
        t0 = time.time()
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-400:])
        with open(out) as f:
            copy = harness.parse_events(f.read())
        check_delivery(r1, copy, 300)
        check_delivery(r2, copy, 300)
        eq({rec.get("agent_id") for rec in r2.requests if "agent_id" in rec},
           {"second-agent"}, "configured agent_id")
        first_ok = min(rec["t"] for rec in r1.requests)
        if first_ok - t0 > 2.5:
            fail("the healthy destination waited %.1fs for the refusing one" % (first_ok - t0))


def test_destination_filters_send_each_what_it_keeps(d):
    """filter on two destinations (liagent's [server] filter, issue 12):
    the cfapi server takes filelog a's lines ({filelog; a; } as liagent
    writes it), the http one the lines tagged team=storage (a YAML list);
    each receives exactly those, each counts the rest as filtered, both
    cursors move past what was kept out (--once ends with nothing queued)
    and a second run sends nothing again."""
    h = sinkutil.make_host(d, ndisks=1)
    logs = os.path.join(d, "logs")
    os.makedirs(logs)
    lines = {"a": ["line a%d" % i for i in range(30)], "b": ["line b%d" % i for i in range(20)]}
    for n, ls in lines.items():
        with open(os.path.join(logs, n + ".log"), "w") as f:
            f.write("".join(l + "\n" for l in ls))
    fl = ("\n  a: {directory: %s, include: a.log, forward: all, read_from_head: yes, tags: {team: net}}"
          "\n  b: {directory: %s, include: b.log, forward: all, read_from_head: yes, tags: {team: storage}}\n"
          % (logs, logs))
    with receivers.CfapiReceiver() as r1, receivers.HttpReceiver() as r2:
        server = "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no, filter: \"{filelog; a; }\"}" % r1.port
        servers = ("servers:\n  storage:\n    proto: http\n    url: \"http://127.0.0.1:%d/in\"\n"
                   "    ssl: no\n    filter:\n      - {type: filelog, name: \".*\", "
                   "expression: 'team == \"storage\"'}\n" % r2.port)
        a = Agent(d, sinkutil.config(h, server, servers=servers, filelog=fl).replace(
            "vsan: {enabled: yes", "vsan: {enabled: no"))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-400:])
        if r1.violations:
            fail("receiver violations: %s" % r1.violations[:5])
        eq(sorted(e["text"] for e in r1.events), sorted(lines["a"]), "cfapi server: filelog a's lines only")
        eq(sorted(e["text"] for e in r2.events), sorted(lines["b"]), "http: team=storage lines only")
        rc, out, _ = a.run("--status", "--json")
        st = {x["name"]: x for x in json.loads(out)["destinations"]}
        eq((st["server"]["filtered"], st["server"]["sent_events"], st["server"]["backlog_events"]),
           (20, 30, 0), "server: filtered, sent, backlog")
        eq((st["storage"]["filtered"], st["storage"]["sent_events"], st["storage"]["backlog_events"]),
           (30, 20, 0), "storage: filtered, sent, backlog")
        eq(st["server"]["dropped_poison"] + st["storage"]["dropped_poison"], 0, "nothing dropped")
        rc, out, _ = a.run("--status")
        if "filtered:     20 events" not in out:
            fail("--status does not say what the filter kept out: %s" % out)
        n1, n2 = len(r1.requests), len(r2.requests)
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "second --once (stderr: %s)" % err[-400:])
        eq((len(r1.requests), len(r2.requests)), (n1, n2), "requests after a restart")


def test_not_ingested_is_counted_and_reported(d):
    """A 200 whose "ingested" is below the count sent is delivered (not
    resent) but counted: in the status file, --status and the agent's own
    status event."""
    h = sinkutil.make_host(d, ndisks=20)
    with receivers.CfapiReceiver(script=["200:ingested=5"]) as r:
        cfg = sinkutil.config(h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port)
        cfg = cfg.replace("  agent: {enabled: no}\n", "  agent: {enabled: yes, interval: 1}\n")
        cfg = cfg.replace("  vsan: {enabled: yes, interval: 1}\n", "  vsan: {enabled: yes, interval: 3600}\n")
        a = Agent(d, cfg)
        a.start()
        status = os.path.join(a.storage, "status")

        def counted():
            if not os.path.exists(status):
                return None
            with open(status) as f:
                for line in f:
                    if line.startswith("not_ingested: ") and line.strip() != "not_ingested: 0":
                        return int(line.split()[1])
            return None
        n = wait_for(counted, timeout=20, what="a not_ingested count in the status file")
        # The first request held every event queued then; 5 were ingested.
        eq(n, r.requests[0]["n"] - 5, "not_ingested")
        rc, out, _ = a.run("--status")
        eq(rc, 0, "--status exit status")
        if "not ingested: %d" % n not in out:
            fail("--status does not show the not-ingested count: %r" % out[-500:])
        wait_for(lambda: [e for e in r.events if e.get("esxwatch_kind") == "status"
                          and e.get("esxwatch_not_ingested") == str(n)],
                 timeout=20, what="a status event with esxwatch_not_ingested %d" % n)
        a.stop()


def test_rejecting_everything_is_failing_not_a_drop_of_every_event(d):
    """A proxy answering 400 to every request: reject_limit events are
    dropped (and counted), then the destination is failing and keeps the
    rest; when the server takes events again they all arrive."""
    h = sinkutil.make_host(d, ndisks=10)
    # 400 until the destination says it is failing, however many requests
    # that takes; then the server takes events again (a fixed count of 400s
    # left a varying number of probes, each doubling the jittered backoff)
    with receivers.CfapiReceiver(script=["400"] * 1000) as r:
        # one vSAN run: a fixed number of events, for an exact ledger
        cfg = sinkutil.config(h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no, "
                                 "compress: none, reject_limit: 2}" % r.port)
        a = Agent(d, cfg.replace("vsan: {enabled: yes, interval: 1}",
                                 "vsan: {enabled: yes, interval: 3600}"))
        a.start()
        try:
            wait_for(lambda: "delivery failing: every event rejected: HTTP 400" in a.stderr_text(),
                     timeout=30, what="the destination failing on rejections")
            # one probe more is refused while failing (and drops nothing),
            # then the server takes events again
            n0 = len(r.requests)
            wait_for(lambda: len(r.requests) > n0, timeout=30,
                     what="a probe while failing")
            r.end_script()

            # the status file is rewritten at most every 2 s: one written
            # before the vSAN run also says nothing is queued; only one that
            # has seen the events arrive tells the drops
            def drained():
                j = json.loads(a.run("--status", "--json")[1])
                sent = j["destinations"][0]["sent_events"] if j["destinations"] else 0
                return j if (j["queued_events"] == 0 and j["pushed_events"] > 0 and
                             r.events and sent == len(r.events)) else None
            j = wait_for(drained, timeout=30, what="the backlog delivered")
        finally:
            a.stop()
    eq(j["dropped_poison"], 2, "events dropped as rejected (the limit)")
    # the ledger: every event queued arrived or is one of the 2 counted
    eq(len(r.events) + j["dropped_poison"], j["pushed_events"], "arrived + counted")
    eq(len(r.events), len({flat_key(e) for e in r.events}), "events without duplicates")
    if r.violations:
        fail("violations: %s" % r.violations[:3])


def test_long_text_cut_to_16k(d):
    """A 40 KB log line arrives cut to Log Insight's 16 KB text limit,
    with the marker, on a character boundary; no violation."""
    h = sinkutil.make_host(d, ndisks=1)
    fl, rules = sinkutil.logwatch(d)
    with open(os.path.join(d, "logs", "test.log"), "a", encoding="utf-8") as f:
        f.write("2026-11-30T10:00:02.000Z cpu1:123)long " + "\u00e9x" * 13000 + "\n")
        f.write("2026-11-30T10:00:03.000Z cpu1:123)after\n")
    with receivers.CfapiReceiver() as r:
        a = Agent(d, sinkutil.config(
            h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port,
            filelog=fl, extra=rules))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-400:])
        if r.violations:
            fail("violations: %s" % r.violations[:3])
        longs = [e for e in r.events if "long " in e["text"]]
        eq(len(longs), 1, "the long event")
        t = longs[0]["text"]
        if len(t.encode("utf-8")) > 16 * 1024 or not t.endswith("...[truncated]"):
            fail("long text is %d bytes, ends %r" % (len(t.encode("utf-8")), t[-20:]))
        if len(t.encode("utf-8")) < 16 * 1024 - 16:
            fail("cut too short: %d bytes" % len(t.encode("utf-8")))


def tls_failure(d, cert, ca, extra, expect_log, delivered):
    c = certs.make(os.path.join(d, "pki"))
    h = sinkutil.make_host(d, ndisks=5)
    crt = (c.server_crt, c.server_key) if cert == "server" else (c.wrong_crt, c.wrong_key)
    with receivers.CfapiReceiver(tls=crt) as r:
        a = Agent(d, sinkutil.config(
            h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: yes, ssl_ca_path: %s%s}"
            % (r.port, getattr(c, ca), extra)))
        a.start()
        try:
            wait_for(lambda: expect_log in a.stderr_text(), timeout=20,
                     what="%r in the agent's log" % expect_log)
            if delivered:
                wait_for(lambda: len(r.events) >= 5, timeout=20, what="events delivered")
            else:
                time.sleep(0.5)
                eq(len(r.requests), 0, "requests that got through")
        finally:
            a.kill9()
        return a.stderr_text()


def test_tls_wrong_ca_refused(d):
    tls_failure(d, "server", "other_ca", "", "certificate signed by an unknown CA", False)


def test_tls_name_mismatch_refused(d):
    tls_failure(d, "wrong", "ca", "",
                "name mismatch: expected 127.0.0.1, certificate has CN=loginsight.example.com", False)


def test_tls_ssl_cn_accepts_the_named_certificate(d):
    tls_failure(d, "wrong", "ca", ", ssl_cn: loginsight.example.com", "cfapi to https://", True)


def test_tls_accept_any_warns(d):
    log = tls_failure(d, "wrong", "other_ca", ", ssl_accept_any: yes",
                      "ssl_accept_any is set", True)
    if "warning" not in log.split("ssl_accept_any is set")[0].splitlines()[-1]:
        fail("ssl_accept_any not logged as a warning")


harness.main(globals())
