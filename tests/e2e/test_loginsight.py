"""A default Log Insight appliance, end to end through the real binary:
certificate trust (verify / first_use / any, a liagent.ini), event times
that survive an outage (esxwatch_event_time, authenticated ingestion with
sessions that expire), exact accounting (--once with a short `ingested`),
the gzip-5xx fallback, the plain-port message, and no secret in any output.
Certificates are made at test time (tests/lib/certs.py); the receiver is
the strict one of tests/lib/receivers.py."""
import json
import os
import socket
import ssl
import stat
import threading
import time

import sinkutil
from harness import Agent, eq, fail, wait_for

import certs
import receivers


def pki(d):
    c = certs.make(os.path.join(d, "pki"))
    s = certs.make_self_signed(os.path.join(d, "pki"))
    c.self1_crt, c.self1_key, c.self2_crt, c.self2_key = \
        s.self1_crt, s.self1_key, s.self2_crt, s.self2_key
    return c


def li(port, extra=""):
    return "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: yes%s}" % (port, extra)


def pin_file(a, name="server"):
    return os.path.join(a.storage, "trust-%s.pin" % name)


def test_first_use_pins_survives_restart_refuses_a_new_cert(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=5)
    with receivers.CfapiReceiver(tls=(c.self1_crt, c.self1_key)) as r:
        a = Agent(d, sinkutil.config(h, li(r.port, ", trust: first_use")))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once against a self-signed appliance (stderr: %s)" % err[-800:])
        eq(len(r.events), 5, "events delivered on first use")
        want = certs.pin(c.self1_crt)
        with open(pin_file(a)) as f:
            eq(f.read().strip(), want, "pinned SPKI SHA-256 (as openssl computes it)")
        eq(stat.S_IMODE(os.stat(pin_file(a)).st_mode), 0o600, "pin file mode")
        line = [l for l in err.splitlines() if "pinned its key" in l]
        eq(len(line), 1, "one pin message")
        if "warning" not in line[0] or want not in line[0]:
            fail("pin not logged at warning level with the key: %r" % line[0])
        # a restart: verified against the pin, no new pin
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once after a restart (stderr: %s)" % err[-800:])
        eq(len(r.events), 10, "events delivered after a restart")
        if "pinned its key" in err:
            fail("pinned again after a restart")
    # the appliance now presents another self-signed certificate
    with receivers.CfapiReceiver(tls=(c.self2_crt, c.self2_key)) as r2:
        a.write_config(sinkutil.config(h, li(r2.port, ", trust: first_use")))
        a.start()
        try:
            other = certs.pin(c.self2_crt)
            wait_for(lambda: other in a.stderr_text(), timeout=20,
                     what="the refusal naming the new key")
        finally:
            a.kill9()
        err = a.stderr_text()
        line = [l for l in err.splitlines() if other in l][0]
        if want not in line or "--trust-reset server" not in line:
            fail("refusal does not name both fingerprints and the way out: %r" % line)
        eq(len(r2.events), 0, "events sent to a changed certificate")
        # --trust-reset forgets the pin; the next run pins the new one
        rc, out, err = a.run("--trust-reset", "server")
        eq(rc, 0, "--trust-reset (%s)" % err)
        if os.path.exists(pin_file(a)):
            fail("pin file still there after --trust-reset")
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once after --trust-reset (stderr: %s)" % err[-800:])
        with open(pin_file(a)) as f:
            eq(f.read().strip(), other, "the new pin")
        rc, _, err = a.run("--trust-reset", "nosuch")
        eq(rc, 2, "--trust-reset of an unknown destination")


def test_verify_refuses_a_self_signed_appliance(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=3)
    with receivers.CfapiReceiver(tls=(c.self1_crt, c.self1_key)) as r:
        a = Agent(d, sinkutil.config(h, li(r.port, ", trust: verify")))
        a.start()
        try:
            wait_for(lambda: "certificate" in a.stderr_text() and "trust: first_use" in a.stderr_text(),
                     timeout=20, what="the refusal")
        finally:
            a.kill9()
        eq(len(r.requests), 0, "requests through an unverified certificate")
        if os.path.exists(pin_file(a)):
            fail("verify wrote a pin")


def test_liagent_ini_ssl_without_ca_trusts_on_first_use(d):
    """liagent's own behaviour: ssl=yes, no CA: the appliance's self-signed
    certificate is accepted on the first connection and pinned."""
    c = pki(d)
    logs = os.path.join(d, "logs")
    os.makedirs(logs)
    with receivers.CfapiReceiver(tls=(c.self1_crt, c.self1_key)) as r:
        ini = ("[server]\nhostname=127.0.0.1\nproto=cfapi\nport=%d\nssl=yes\n\n"
               "[storage]\ndirectory=@STORAGE@\n\n"
               "[filelog|app]\ndirectory=%s\ninclude=app.log\n" % (r.port, logs))
        a = Agent(d, ini, name="liagent.ini")
        rc, out, err = a.run("--print-config")
        if "trust: first_use" not in out:
            fail("a liagent.ini with ssl=yes and no CA is not first_use:\n%s" % out)
        a.run("--once", timeout=60)
        if not r.events:
            fail("nothing delivered (%s)" % err[-500:])
        if r.violations:
            fail("violations: %s" % r.violations[:3])
        with open(pin_file(a)) as f:
            eq(f.read().strip(), certs.pin(c.self1_crt), "the pin")
        ini2 = ini.replace("ssl=yes\n", "ssl=yes\nssl_ca_path=%s\n" % c.ca)
        a.write_config(ini2)
        rc, out, err = a.run("--print-config")
        if "trust: verify" not in out:
            fail("a liagent.ini with ssl_ca_path is not verify")
        a.write_config(ini.replace("ssl=yes\n", "ssl=yes\nssl_accept_any=yes\n"))
        rc, out, err = a.run("--print-config")
        if "trust: any" not in out:
            fail("a liagent.ini with ssl_accept_any is not any")


def test_trust_any_is_ssl_accept_any_and_warns_once(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=3)
    with receivers.CfapiReceiver(tls=(c.self1_crt, c.self1_key)) as r:
        a = Agent(d, sinkutil.config(h, li(r.port, ", trust: any")))
        rc, out, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-500:])
        eq(len(r.events), 3, "events delivered")
        w = [l for l in err.splitlines() if "NOT checked" in l]
        eq(len(w), 1, "warnings about trust: any")
        if "warning" not in w[0]:
            fail("not a warning: %r" % w[0])
        rc, out, err = a.run("--print-config")
        if "ssl_accept_any: yes" not in out or "trust: any" not in out:
            fail("trust: any is not ssl_accept_any in --print-config")


class TlsSyslog:
    """A TLS syslog listener (RFC 5425) presenting crt: what it reads, and
    how many handshakes succeeded."""

    def __init__(self, crt, key):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(crt, key)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.data = b""
        self.handshakes = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            t = self.ctx.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError):
            c.close()
            return
        with self.lock:
            self.handshakes += 1
        try:
            while True:
                b = t.recv(65536)
                if not b:
                    break
                with self.lock:
                    self.data += b
        except (OSError, ssl.SSLError):
            pass
        t.close()

    def close(self):
        self.sock.close()


def test_first_use_for_syslog_and_http(d):
    """The same trust modes on the other TLS outputs: syslog over TLS
    (CONNECT_ONLY) and http."""
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=4)
    rs = TlsSyslog(c.self1_crt, c.self1_key)
    try:
        with receivers.HttpReceiver(tls=(c.self1_crt, c.self1_key)) as r:
            srv = ("{hostname: 127.0.0.1, proto: syslog, port: %d, ssl: yes, trust: first_use}"
                   % rs.port)
            servers = ("servers:\n  web: {proto: http, url: \"https://127.0.0.1:%d/in\", "
                       "trust: first_use}\n" % r.port)
            a = Agent(d, sinkutil.config(h, srv, servers=servers))
            rc, _, err = a.run("--once", timeout=60)
            eq(rc, 0, "--once (stderr: %s)" % err[-800:])
            wait_for(lambda: rs.data.count(b"Has partitions") >= 4, timeout=10,
                     what="the syslog messages")
            eq(len(r.events), 4, "http events")
            want = certs.pin(c.self1_crt)
            for name in ("server", "web"):
                with open(pin_file(a, name)) as f:
                    eq(f.read().strip(), want, "pin of " + name)
            # another certificate on both: refused, both fingerprints named
            os.unlink(pin_file(a, "web"))
            with open(pin_file(a, "web"), "w") as f:
                f.write(certs.pin(c.server_crt) + "\n")
            os.chmod(pin_file(a, "web"), 0o600)
            with open(pin_file(a, "server"), "w") as f:
                f.write(certs.pin(c.server_crt) + "\n")
            n = len(r.events)
            before = rs.data
            a.start()
            try:
                wait_for(lambda: a.stderr_text().count(certs.pin(c.server_crt)) >= 2 and
                         a.stderr_text().count(want) >= 2, timeout=30,
                         what="both refusals naming both keys")
            finally:
                a.kill9()
            eq(len(r.events), n, "http events sent to an unpinned key")
            eq(rs.data, before, "syslog bytes sent to an unpinned key")
    finally:
        rs.close()


# ---- event times and authenticated ingestion ----

PASSWORD = "S3cr3t-pw-\u00e9\"q"      # quote and non-ASCII: JSON-escaped in the login
USER = "esxwatch-ingest"


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def auth(port, ca, password=PASSWORD, extra=""):
    return li(port, ", ssl_ca_path: %s, username: %s, password: %s%s"
              % (ca, USER, json.dumps(password), extra))


def test_outage_unauthenticated_clamped_but_event_time_kept(d):
    """The server's clock is 20 minutes ahead of the events (they waited
    in the spool through an outage): it clamps `timestamp`, the event's
    own time survives in esxwatch_event_time."""
    h = sinkutil.make_host(d, ndisks=10)
    with receivers.CfapiReceiver(clock_offset_s=1200) as r:
        a = Agent(d, sinkutil.config(h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-500:])
        eq(len(r.stored), 10, "events")
        for sent, kept in zip(r.events, r.stored):
            if kept["_authenticated"]:
                fail("an unauthenticated request counted as authenticated")
            lost = kept["timestamp"] - sent["timestamp"]
            if not 590000 <= lost <= 610000:
                fail("unauthenticated timestamp moved by %d ms, want ~600000 (clamped)" % lost)
            eq(kept["esxwatch_event_time"], iso(sent["timestamp"]), "esxwatch_event_time")


def test_outage_authenticated_keeps_timestamp(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=10)
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key), clock_offset_s=1200,
                                 users={USER: PASSWORD}) as r:
        a = Agent(d, sinkutil.config(h, auth(r.port, c.ca, extra=", provider: Local")))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-800:])
        if r.violations:
            fail("violations: %s" % r.violations[:3])
        eq([x["ok"] for x in r.logins], [True], "logins")
        eq(r.logins[0]["provider"], "Local", "provider")
        eq(len(r.stored), 10, "events")
        for sent, kept in zip(r.events, r.stored):
            if not kept["_authenticated"]:
                fail("an event was sent without a valid session")
            eq(kept["timestamp"], sent["timestamp"], "authenticated timestamp kept")
            eq(kept["esxwatch_event_time"], iso(sent["timestamp"]), "esxwatch_event_time")
        if PASSWORD in err or "Bearer" in err:
            fail("a secret in the log")


def event_key(e):
    return (e["text"], e["timestamp"], e.get("esxwatch_device"))


def test_session_renewed_before_ttl_and_after_expiry_no_loss_no_dup(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=3)
    out = os.path.join(d, "copy.jsonl")
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key), users={USER: PASSWORD},
                                 session_ttl=4) as r:
        a = Agent(d, sinkutil.config(h, auth(r.port, c.ca),
                                     servers="servers:\n  copy: {proto: file, path: %s}\n" % out))
        a.start()
        try:
            # ttl 4 s: renewed at 90 % of it, before any request is refused
            wait_for(lambda: len(r.logins) >= 3, timeout=30, what="three logins")
            refused = [q for q in r.requests if q.get("authenticated") is False and
                       "authorization" in q.get("headers", {})]
            eq(len(refused), 0, "requests refused before the ttl ran out")
            # now the server ends every session early, mid-stream
            n0 = len(r.logins)
            r.expire_sessions()
            wait_for(lambda: len(r.logins) > n0 and len(r.stored) > 0 and
                     r.requests[-1].get("authenticated") is True and
                     any(q.get("authenticated") is False and q["t"] > r.logins[n0 - 1]["t"]
                         for q in r.requests), timeout=30, what="a 401 and a new login")
            time.sleep(2)
        finally:
            eq(a.stop(), 0, "agent exit status")
        with open(out) as f:
            copy = [json.loads(l) for l in f if l.strip()]
        got = [event_key(e) for e in r.stored]
        if len(set(got)) != len(got):
            fail("duplicated events: %d of %d" % (len(got) - len(set(got)), len(got)))
        missing = set(event_key(e) for e in copy) - set(got)
        if missing:
            fail("%d events lost (e.g. %r)" % (len(missing), sorted(missing)[:1]))
        if not all(e["_authenticated"] for e in r.stored):
            fail("an event was stored unauthenticated")
        if r.violations:
            fail("violations: %s" % r.violations[:3])


def test_wrong_password_falls_back_with_one_warning(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=5)
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key), users={USER: "other"}) as r:
        a = Agent(d, sinkutil.config(h, auth(r.port, c.ca)))
        a.start()
        try:
            wait_for(lambda: len(r.stored) >= 10, timeout=30, what="events over two intervals")
        finally:
            a.kill9()
        err = a.stderr_text()
        w = [l for l in err.splitlines() if "refused" in l and USER in l]
        eq(len(w), 1, "fallback warnings")
        if "warning" not in w[0] or "unauthenticated" not in w[0]:
            fail("not the fallback warning: %r" % w[0])
        eq(len(r.logins), 1, "login attempts")
        if any("authorization" in q.get("headers", {}) for q in r.requests if not q.get("login")):
            fail("an Authorization header after a refused login")
        if PASSWORD in err:
            fail("the password in the log")


def test_password_file_must_be_0600(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=2)
    pw = os.path.join(d, "li.pw")
    with open(pw, "w") as f:
        f.write(PASSWORD + "\n")
    os.chmod(pw, 0o644)
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key), users={USER: PASSWORD}) as r:
        srv = li(r.port, ", ssl_ca_path: %s, username: %s, password_file: %s" % (c.ca, USER, pw))
        a = Agent(d, sinkutil.config(h, srv))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once (stderr: %s)" % err[-500:])
        if "0600" not in err or len(r.logins) != 0:
            fail("a 0644 password_file was used (logins %d): %s" % (len(r.logins), err[-500:]))
        os.chmod(pw, 0o600)
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once with 0600 (stderr: %s)" % err[-500:])
        eq([x["ok"] for x in r.logins], [True], "login with the password file")


def test_no_secret_in_any_output(d):
    c = pki(d)
    h = sinkutil.make_host(d, ndisks=3)
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key), users={USER: PASSWORD},
                                 session_ttl=3) as r:
        a = Agent(d, sinkutil.config(h, auth(r.port, c.ca)) + "logging: {debug_level: 2}\n")
        outputs = []
        rc, out, err = a.run("--print-config")
        eq(rc, 0, "--print-config")
        if "password: \"<redacted>\"" not in out:
            fail("password not shown as <redacted>:\n%s" % out)
        outputs += [out, err]
        rc, out, err = a.run("--check-config")
        outputs += [out, err]
        a.start()
        try:
            wait_for(lambda: len(r.logins) >= 2 and len(r.stored) >= 6, timeout=30,
                     what="logins and events")
            r.expire_sessions()
            n = len(r.logins)
            wait_for(lambda: len(r.logins) > n, timeout=20, what="a login after expiry")
            rc, out, err = a.run("--status")
            outputs += [out, err]
            rc, out, err = a.run("--status", "--json")
            outputs += [out, err]
        finally:
            a.stop()
        outputs.append(a.stderr_text())
        for root, _, files in os.walk(a.storage):
            for fn in files:
                with open(os.path.join(root, fn), "rb") as f:
                    outputs.append(f.read().decode("utf-8", "replace"))
        secrets = [PASSWORD, json.dumps(PASSWORD)[1:-1]] + list(r.sessions)
        for text in outputs:
            for sec in secrets:
                if sec in text:
                    fail("a secret (%s...) appears in an output: %r" % (sec[:4], text[:200]))


# ---- accounting, gzip, the plain port ----

def test_once_exits_1_when_not_everything_was_ingested(d):
    h = sinkutil.make_host(d, ndisks=10)
    # "ingested": 0 shorts the first request whatever its size: --once may
    # ship a first batch before every event of the run is queued
    with receivers.CfapiReceiver(script=["200:ingested=0"]) as r:
        a = Agent(d, sinkutil.config(h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 1, "--once exit status with a short ingested (stderr: %s)" % err[-500:])
        first = r.requests[0]["n"]
        if "ingested 0 of %d events" % first not in err:
            fail("the shortfall of the first request (%d events) is not logged: %s"
                 % (first, err[-500:]))
        rc, _, err = a.run("--once", timeout=60)
        eq(rc, 0, "--once when everything is ingested")


def test_gzip_falls_back_after_two_5xx(d):
    h = sinkutil.make_host(d, ndisks=10)
    with receivers.CfapiReceiver(script=["502", "502"]) as r:
        a = Agent(d, sinkutil.config(h, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}" % r.port))
        a.start()
        try:
            wait_for(lambda: len(r.requests) >= 4, timeout=30, what="four requests")
        finally:
            a.kill9()
        enc = [q["encoding"] for q in r.requests]
        eq(enc[:3], ["gzip", "gzip", None], "encodings of the first requests")
        if any(e is not None for e in enc[3:]):
            fail("gzip again after the fallback: %r" % enc)
        # the same batch, retried plain: the same JSON, byte for byte long
        eq(r.requests[2]["body_len"], r.requests[1]["body_len"], "the batch retried plain")
        eq(r.requests[2]["wire_bytes"], r.requests[2]["body_len"], "plain on the wire")
        msgs = [l for l in a.stderr_text().splitlines() if "twice in a row" in l]
        eq(len(msgs), 1, "fallback messages")
        if r.violations:
            fail("violations: %s" % r.violations[:3])


def test_ssl_against_the_plain_port_says_so(d):
    h = sinkutil.make_host(d, ndisks=2)
    with receivers.CfapiReceiver() as r:
        a = Agent(d, sinkutil.config(h, li(r.port)))
        a.start()
        try:
            wait_for(lambda: "answered plain HTTP" in a.stderr_text(), timeout=20,
                     what="the plain-port message")
        finally:
            a.kill9()
        line = [l for l in a.stderr_text().splitlines() if "answered plain HTTP" in l][0]
        if "port 9000 is Log Insight's plain port, 9543 its TLS port" not in line:
            fail("message: %r" % line)


if __name__ == "__main__":
    import harness
    harness.main(globals())
