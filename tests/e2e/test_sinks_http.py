"""http end to end: the real binary posts its collectors' events to a
receiver as JSON lines (gzip) or a JSON array (plain), with a configured
Authorization header that reaches the server but never the agent's log."""
import json
import os

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

import certs
import receivers

TOKEN = "Bearer e2e-s3cret-token"


def run(d, fmt, compress, status_script=()):
    h = sinkutil.make_host(d, ndisks=400)
    fl, rules = sinkutil.logwatch(d)
    with receivers.HttpReceiver(script=list(status_script)) as r:
        out = os.path.join(d, "copy.jsonl")
        server = ("{proto: http, url: \"http://127.0.0.1:%d/v1/logs\", format: %s, compress: %s, "
                  "ssl: no, headers: {Authorization: \"%s\", X-Scope: esx}}" % (r.port, fmt, compress, TOKEN))
        a = Agent(d, sinkutil.config(h, server, servers="servers:\n  copy: {proto: file, path: %s}\n" % out,
                                     filelog=fl, extra=rules + "logging: {debug_level: 2}\n"))
        rc, _, err = a.run("--once", "-v", "-v", timeout=60)
        eq(rc, 0, "--once status (stderr: %s)" % err[-600:])
        with open(out) as f:
            copy = harness.parse_events(f.read())
        if r.violations:
            fail("receiver violations: %s" % r.violations[:5])
        key = lambda e: json.dumps(e, sort_keys=True)
        eq(sorted(map(key, r.events)), sorted(map(key, copy)), "events posted vs file copy")
        if len(copy) < 402:
            fail("only %d events" % len(copy))
        for rec in r.requests:
            eq(rec["path"], "/v1/logs", "path")
            eq(rec["headers"].get("authorization"), TOKEN, "Authorization header")
            if rec.get("scripted"):
                continue
            eq(rec["format"], fmt, "format")
            eq(rec.get("encoding"), "gzip" if compress == "gzip" else None, "Content-Encoding")
            eq(rec["headers"].get("x-scope"), "esx", "X-Scope header")
        if "s3cret" in err:
            fail("the Authorization value appears in the agent's log")
        return r, err


def test_json_lines_gzip(d):
    run(d, "json_lines", "gzip")


def test_json_array_plain(d):
    run(d, "json_array", "none")


def test_server_errors_retried_and_secret_never_logged(d):
    r, err = run(d, "json_lines", "gzip", status_script=("503:ra=1", "401"))
    eq([rec.get("scripted") for rec in r.requests[:2]], ["503:ra=1", "401"], "scripted answers")
    if "HTTP 503" not in err:
        fail("the failed sends were not logged: %s" % err[-400:])


def test_https_ssl_cn_and_mismatch(d):
    """https with a certificate for another name: refused naming both
    names, accepted once ssl_cn names it."""
    c = certs.make(os.path.join(d, "pki"))
    h = sinkutil.make_host(d, ndisks=10)
    with receivers.HttpReceiver(tls=(c.wrong_crt, c.wrong_key)) as r:
        base = ("{proto: http, url: \"https://127.0.0.1:%d/in\", ssl: yes, ssl_ca_path: %s, "
                "headers: {Authorization: \"%s\"}%%s}" % (r.port, c.ca, TOKEN))
        a = Agent(d, sinkutil.config(h, base % ""))
        a.start()
        try:
            wait_for(lambda: "name mismatch: expected 127.0.0.1, certificate has "
                     "CN=loginsight.example.com" in a.stderr_text(), timeout=20,
                     what="the name mismatch in the agent's log")
        finally:
            a.kill9()
        eq(len(r.requests), 0, "requests through a mismatched certificate")
        a.write_config(sinkutil.config(h, base % ", ssl_cn: loginsight.example.com"))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once with ssl_cn (stderr: %s)" % err[-400:])
        if len(r.events) < 10 or r.violations:
            fail("%d events, violations %s" % (len(r.events), r.violations[:3]))
        eq(r.requests[0]["headers"].get("authorization"), TOKEN, "Authorization over TLS")
        if "s3cret" in a.stderr_text() + err:
            fail("the token appears in the agent's log")


harness.main(globals())
