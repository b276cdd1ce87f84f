"""A default Log Insight appliance, end to end through the real binary:
certificate trust (verify / first_use / any, a liagent.ini), event times
that survive an outage (esxwatch_event_time, authenticated ingestion with
sessions that expire), exact accounting (--once with a short `ingested`),
the gzip-5xx fallback, the plain-port message, and no secret in any output.
Certificates are made at test time (tests/lib/certs.py); the receiver is
the strict one of tests/lib/receivers.py."""
import json
import os
import stat
import time

import sinkutil
from harness import Agent, eq, fail, wait_for

import certs
import receivers


def pki(d):
    return certs.make(os.path.join(d, "pki"))


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


if __name__ == "__main__":
    import harness
    harness.main(globals())
