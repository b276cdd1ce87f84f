"""The monitor (monitor.listen): /metrics parsed by Prometheus' own text
parser says what --status --json says; /health is 200 while the destination
delivers and 503 once its receiver is gone with events waiting; Fluent Bit's
paths answer too, anything else is 404 or 405; a SIGHUP moves it to a new
address; a port it cannot bind is an error in the log, not a dead agent; a
non-loopback address is a configuration error."""
import http.client
import json
import os
import re
import signal
import socket
import sys
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

import receivers

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:     # Debian's python3-prometheus-client (make test-deps) under another python3
    sys.path.append("/usr/lib/python3/dist-packages")
    from prometheus_client.parser import text_string_to_metric_families


free_port = harness.free_port


def get(port, path, method="GET"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read().decode()
    finally:
        c.close()


def samples(text):
    """{(name, ((label, value), ...)): value} through the Prometheus parser."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def expected(j):
    """The samples /metrics must hold, from --status --json's figures."""
    want = {
        ("esxwatch_input_events_total", ()): j["pushed_events"],
        ("esxwatch_spool_queued_events", ()): j["queued_events"],
        ("esxwatch_spool_dropped_events_total", (("reason", "max_disk_buffer"),)): j["dropped_budget"],
        ("esxwatch_spool_dropped_events_total", (("reason", "damaged"),)): j["dropped_corrupt"],
        ("esxwatch_counts_since_timestamp_seconds", ()): j["counts_since_ms"] / 1000.0,
    }
    for x in j["destinations"]:
        n = (("name", x["name"]),)
        want[("esxwatch_output_sent_events_total", n)] = x["sent_events"]
        want[("esxwatch_output_failed_sends_total", n)] = x["failed_sends"]
        want[("esxwatch_output_not_ingested_events_total", n)] = x["not_ingested"]
        want[("esxwatch_output_filtered_events_total", n)] = x["filtered"]
        want[("esxwatch_output_dead_letter_events_total", n + (("reason", "written"),))] = x["dead_lettered"]
        want[("esxwatch_output_dead_letter_events_total", n + (("reason", "dropped"),))] = x["dead_letter_dropped"]
        want[("esxwatch_output_resent_events_total", n)] = x["resent_events"]
        want[("esxwatch_output_backlog_events", n)] = x["backlog_events"]
        want[("esxwatch_output_backlog_bytes", n)] = x["backlog_bytes"]
        for reason, key in (("max_disk_buffer", "dropped_budget"), ("rejected", "dropped_poison")):
            want[("esxwatch_output_dropped_events_total", n + (("reason", reason),))] = x[key]
    for c in j["collectors"]:
        n = (("name", c["name"]),)
        want[("esxwatch_collector_runs_total", n)] = c["runs"]
        want[("esxwatch_collector_errors_total", n)] = c["errors"]
        want[("esxwatch_collector_last_duration_seconds", n)] = c["last_duration_ms"] / 1000.0
    for f in j["filelogs"]:
        n = (("name", f["name"]),)
        want[("esxwatch_filelog_lines_read_total", n)] = f["lines_read"]
        want[("esxwatch_filelog_lines_matched_total", n)] = f["lines_matched"]
    return want


def mismatches(a, port):
    """[] once /metrics and --status --json agree (the agent is quiet)."""
    rc, js, _ = a.run("--status", "--json")
    eq(rc, 0, "--status --json")
    j = json.loads(js)
    if not j["destinations"] or j["destinations"][0]["sent_events"] == 0 or j["queued_events"]:
        return ["nothing delivered yet"]
    if sorted(c["name"] for c in j["collectors"]) != ["logwatch", "vsan"] or \
            [c["runs"] for c in j["collectors"] if c["name"] == "vsan"] != [1]:
        return ["collectors: %r" % j["collectors"]]
    if [(f["name"], f["lines_read"]) for f in j["filelogs"]] != [("m", 3)]:
        return ["filelogs: %r" % j["filelogs"]]
    code, ctype, text = get(port, "/metrics")
    eq(code, 200, "/metrics status")
    eq(ctype, "text/plain; version=0.0.4; charset=utf-8", "/metrics Content-Type")
    got = samples(text)
    return ["%s%s: /metrics %r, status %r" % (k[0], dict(k[1]), got.get(k), v)
            for k, v in sorted(expected(j).items()) if got.get(k) != v]


def conf(h, rx_port, listen):
    server = "{proto: http, url: \"http://127.0.0.1:%d/in\", ssl: no, compress: none}" % rx_port
    # a log followed from its end: the test appends 3 lines, then it stays
    logs = os.path.join(h.root, "mlogs")
    os.makedirs(logs, exist_ok=True)
    open(os.path.join(logs, "m.log"), "a").close()
    c = sinkutil.config(h, server, extra="monitor: {listen: \"%s\"}\n" % listen,
                        filelog="{m: {directory: %s, include: m.log}}" % logs)
    # one vsan run at start (and at each reload), a log that does not grow:
    # then the agent is quiet and its figures stay put between two status files
    return c.replace("vsan: {enabled: yes, interval: 1}", "vsan: {enabled: yes, interval: 3600}")


def test_metrics_match_status_and_health_follows_delivery(d):
    h = sinkutil.make_host(d, ndisks=5)
    port = free_port()
    with receivers.HttpReceiver() as r:
        a = Agent(d, conf(h, r.port, "127.0.0.1:%d" % port))
        a.start()
        wait_for(lambda: len(r.events) >= 5, timeout=20, what="5 events at the receiver")
        wait_for(lambda: "following 1 file" in a.stderr_text(), what="the log followed")
        with open(os.path.join(h.root, "mlogs", "m.log"), "a") as f:
            f.write("one\ntwo\nthree\n")
        last = []

        def agree():
            last[:] = mismatches(a, port)
            return not last
        try:
            wait_for(agree, timeout=20, interval=0.5, what="/metrics to agree with --status --json")
        except AssertionError:
            fail("/metrics and --status --json disagree: %s" % last[:6])
        code, ctype, body = get(port, "/health")
        eq((code, ctype), (200, "application/json"), "/health while delivering")
        eq(json.loads(body)["status"], "ok", "/health body")
        eq(get(port, "/api/v1/health")[0], 200, "Fluent Bit's health path")
        code, _, text = get(port, "/api/v1/metrics/prometheus")
        eq(code, 200, "Fluent Bit's metrics path")
        eq(samples(text)[("esxwatch_output_healthy", (("name", "server"),))], 1, "healthy gauge")
        eq(get(port, "/nothing")[0], 404, "unknown path")
        eq(get(port, "/metrics", method="POST")[0], 405, "POST")

        # the receiver is gone (it stops listening and drops the connection
        # it still has); a reload runs vsan again: 5 events wait
        r.down = True
        r.close()
        a.signal(signal.SIGHUP)
        wait_for(lambda: get(port, "/health")[0] == 503, timeout=20, interval=0.3,
                 what="/health 503 with the receiver gone")
        wait_for(lambda: "configuration reloaded" in a.stderr_text(), what="the reload")
        # the same address: the socket is kept over the reload, not reopened
        eq(a.stderr_text().count("monitor: GET /health and /metrics on 127.0.0.1:%d" % port), 1,
           "monitor starts on the first address")
        code, _, body = get(port, "/health")
        h503 = json.loads(body)
        eq(h503["status"], "failing", "/health body when failing")
        eq(h503["destinations"][0]["healthy"], False, "server healthy")
        got = samples(get(port, "/metrics")[2])
        eq(got[("esxwatch_output_healthy", (("name", "server"),))], 0, "healthy gauge when failing")
        if got[("esxwatch_output_backlog_events", (("name", "server"),))] < 5:
            fail("backlog in /metrics: %r" % got)

        # a new address on SIGHUP: the old one is closed
        port2 = free_port()
        a.write_config(conf(h, r.port, "127.0.0.1:%d" % port2))
        a.signal(signal.SIGHUP)
        wait_for(lambda: "monitor: GET /health and /metrics on 127.0.0.1:%d" % port2 in a.stderr_text(),
                 timeout=20, what="the monitor on its new address")
        eq(get(port2, "/health")[0], 503, "/health on the new address")
        try:
            get(port, "/health")
            fail("the old address still answers")
        except ConnectionRefusedError:
            pass
        t0 = time.time()
        eq(a.stop(), 0, "exit status after SIGTERM")
        if time.time() - t0 > 9:   # the 5 s drain for the dead receiver, and no more
            fail("SIGTERM took %.1f s" % (time.time() - t0))
        if re.search(r"/nothing|HTTP/1\.[01]|Host: 127|Accept-Encoding", a.stderr_text()):
            fail("a request appears in the agent's log")


def test_port_taken_is_an_error_not_a_dead_agent(d):
    h = sinkutil.make_host(d, ndisks=2)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        with receivers.HttpReceiver() as r:
            a = Agent(d, conf(h, r.port, "127.0.0.1:%d" % taken.getsockname()[1]))
            rc, _, err = a.run("--once", timeout=60)
            eq(rc, 0, "--once with the monitor's port taken (stderr: %s)" % err[-400:])
            if not re.search(r"error: monitor: cannot listen on 127\.0\.0\.1:\d+: Address (already )?in use",  # glibc, musl
                             err):
                fail("no bind error in the log: %s" % err[-600:])
            eq(len(r.events), 2, "events delivered")
    finally:
        taken.close()


def test_non_loopback_listen_is_a_config_error(d):
    p = os.path.join(d, "agent.yaml")
    with open(p, "w") as f:
        f.write("monitor:\n  listen: 0.0.0.0:2020\n")
    a = Agent(d, open(p).read())
    rc, _, err = a.run("--check-config")
    eq(rc, 2, "--check-config exit status")
    want = "%s:2:11: 'listen': '0.0.0.0:2020' is not a loopback address" % a.config
    if want not in err:
        fail("stderr %r lacks %r" % (err, want))


harness.main(globals())
