"""otlp end to end: the real binary exports its events as OTLP/HTTP logs
(JSON encoding) to a strict receiver (otlp_server.py, built from the OTLP
specification and opentelemetry-proto): every event arrives exactly once,
its text in body, its time in timeUnixNano (milliseconds kept), its host in
the resource's host.name, its severity as severityNumber/severityText and
the other fields as typed attributes; 429/503 are retried, partialSuccess
counted, a record the collector refuses (400) is dropped alone and
counted, and a 20 s outage of the collector loses nothing."""
import json
import os
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

import certs
from otlp_server import OtlpReceiver, flat

TOKEN = "Bearer otlp-s3cret"


def key(e):
    return json.dumps(e, sort_keys=True)


def server(r, extra=""):
    return ('{proto: otlp, url: "http://127.0.0.1:%d/v1/logs", ssl: no, '
            'headers: {Authorization: "%s"}%s}' % (r.port, TOKEN, extra))


def copy_conf(d):
    out = os.path.join(d, "copy.jsonl")
    return out, "servers:\n  copy: {proto: file, path: %s}\n" % out


def test_every_event_once_in_its_place(d):
    h = sinkutil.make_host(d, ndisks=60)
    fl, rules = sinkutil.logwatch(d)
    with OtlpReceiver(headers={"Authorization": TOKEN},
                      script=["429:ra=1", "503"]) as r:
        out, servers = copy_conf(d)
        a = Agent(d, sinkutil.config(h, server(r), servers=servers, filelog=fl,
                                     extra=rules + "logging: {debug_level: 2}\n"))
        rc, _, err = a.run("--once", "-v", "-v", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-600:])
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        copy = harness.file_events(out)
        if len(copy) < 62:
            fail("only %d events" % len(copy))
        eq(sorted(map(key, map(flat, r.stored))), sorted(map(key, copy)),
           "records (text, time, host, fields) vs the file copy")
        eq([q.get("scripted") for q in r.requests[:2]], ["429:ra=1", "503"], "scripted answers")
        if r.requests[1]["t"] - r.requests[0]["t"] < 0.9:
            fail("the 429's Retry-After: 1 was not honoured")
        warn = [e for e in r.stored if e.get("esxwatch_rule") == "warn_line"]
        eq(len(warn), 1, "the known-error line's alert")
        w = warn[0]
        eq((w["_severity_number"], w["esxwatch_severity"], w["hostname"]), (13, "warning", "esx01"),
           "severityNumber WARN, severityText, host.name")
        if not w["text"].startswith(sinkutil.LOG_TEXT.split("\n")[0]):
            fail("body %r" % w["text"][:200])
        for e in r.stored:
            eq(e["_time_ns"] % 1000000, 0, "timeUnixNano in ms")
            eq(e["_observed_ns"], e["_time_ns"], "observedTimeUnixNano")
        if "s3cret" in err:
            fail("the Authorization value appears in the agent's log")


def test_partial_success_counted_and_poison_dropped_alone(d):
    h = sinkutil.make_host(d, ndisks=30)
    fl, rules = sinkutil.logwatch(d)
    with open(os.path.join(d, "logs", "test.log"), "a") as f:
        f.write("2026-11-30T10:00:02.000Z cpu1:123)POISON record\n"
                "2026-11-30T10:00:03.000Z cpu1:123)after it\n")
    with OtlpReceiver(script=["partial=3"], poison="POISON") as r:
        out, servers = copy_conf(d)
        cfg = sinkutil.config(h, server(r, ", compress: none"), servers=servers, filelog=fl,
                              extra=rules)
        a = Agent(d, cfg.replace("vsan: {enabled: yes, interval: 1}",
                                 "vsan: {enabled: yes, interval: 3600}"))
        rc, _, err = a.run("--once", timeout=60)
        # 1: not every event delivered (the poison one was dropped)
        eq(rc, 1, "--once (stderr: %s)" % err[-600:])
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        copy = harness.file_events(out)
        got = sorted(map(key, map(flat, r.stored + r.rejected)))
        want = sorted(key(e) for e in copy if "POISON" not in e["text"])
        eq(got, want, "stored + partially rejected vs the file copy without the poison")
        n = len(r.rejected)   # min(3, that request's records)
        pr = [q for q in r.requests if "partial" in q]
        eq([q["partial"] for q in pr], [n], "the partialSuccess answer")
        if n < 1 or "rejected %d of %d log records" % (n, pr[0]["n"]) not in err:
            fail("the partialSuccess was not logged: %s" % err[-600:])
        if "POISON" not in err or "HTTP 400" not in err:
            fail("the refused record was not logged: %s" % err[-600:])
        rc, st, _ = a.run("--status", "--json")
        dest = {x["name"]: x for x in json.loads(st)["destinations"]}["server"]
        eq((dest["not_ingested"], dest["dropped_poison"]), (n, 1), "not_ingested, dropped_poison")


def test_https_through_the_one_transport(d):
    """https:// in url: TLS verified against ssl_ca_path (the transport's
    checks, as for every HTTP sink)."""
    c = certs.make(os.path.join(d, "pki"))
    h = sinkutil.make_host(d, ndisks=10)
    with OtlpReceiver(tls=(c.server_crt, c.server_key)) as r:
        out, servers = copy_conf(d)
        a = Agent(d, sinkutil.config(h, '{proto: otlp, url: "https://127.0.0.1:%d/v1/logs", '
                                        'ssl_ca_path: %s}' % (r.port, c.ca), servers=servers))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once over https (stderr: %s)" % err[-600:])
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        eq(sorted(map(key, map(flat, r.stored))), sorted(map(key, harness.file_events(out))),
           "records over https vs the file copy")


def test_protobuf_refused_by_check_config(d):
    """encoding: protobuf needs a protobuf library this build does not
    link: --check-config refuses it and says json is what it speaks."""
    h = sinkutil.make_host(d, ndisks=1)
    a = Agent(d, sinkutil.config(h, '{proto: otlp, url: "http://127.0.0.1:1/v1/logs", ssl: no, '
                                    'encoding: protobuf}'))
    rc, out, err = a.run("--check-config", timeout=30)
    eq(rc, 2, "--check-config exit status")
    if "'encoding': protobuf" not in err or "json is what this build speaks" not in err:
        fail("no clear refusal: %r" % err[-400:])


def test_outage_of_20s_loses_nothing(d):
    h = sinkutil.make_host(d, ndisks=20)
    fl, rules = sinkutil.logwatch(d)
    log = os.path.join(d, "logs", "test.log")
    with OtlpReceiver() as r:
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
        keys = [key(flat(e)) for e in r.stored]
        eq(len(keys), len(set(keys)), "no record twice")


harness.main(globals())
