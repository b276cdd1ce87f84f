"""Collector mode with rsyslog as the sender (the relay most sites put
between ESXi and their log server): omfwd with octet-counted and LF TCP
framing, and TLS through rsyslog's gtls driver, without and with a required
client certificate.  rsyslogd runs in the foreground with a configuration
of its own (no system socket, no root-owned files): imfile reads files this
test writes, each line an ESXi wire message without its <PRI>
(tests/fixtures/syslog/), and a template puts the <PRI> back.

rsyslog's documentation: omfwd (TCP_Framing, StreamDriver*, the
StreamDriver.CAFile/CertFile/KeyFile action parameters),
https://www.rsyslog.com/doc/configuration/modules/omfwd.html; gtls,
https://www.rsyslog.com/doc/configuration/modules/gtls.html.
"""
import os
import re
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import certs  # noqa: E402
import harness  # noqa: E402
from test_receiver import (ATS, SHUT, config, out_events, status_json,  # noqa: E402
                           with_host)

RSYSLOGD = "/usr/sbin/rsyslogd"


def file_line(wire):
    """The wire line without <PRI>: what imfile reads and %msg% gives back."""
    return re.sub(r"^<\d+>", "", wire)


def action(port, framing, tls=None):
    a = ('action(type="omfwd" target="127.0.0.1" port="%d" protocol="tcp" '
         'TCP_Framing="%s" template="esxi"' % (port, framing))
    if tls:
        a += (' StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="x509/name"'
              ' StreamDriverPermittedPeers="localhost" StreamDriver.CAFile="%s"'
              ' StreamDriver.CertFile="%s" StreamDriver.KeyFile="%s"' % tls)
    return a + ' action.resumeRetryCount="-1" action.resumeInterval="1")'


def rsyslog(d, routes):
    """routes: (name, lines, action text); one imfile input and ruleset each."""
    os.makedirs(os.path.join(d, "rs"), exist_ok=True)
    conf = ['global(workDirectory="%s/rs")' % d,
            'module(load="imfile" PollingInterval="1")',
            # ESXi's local4.info-ish PRI, then the line as ESXi sent it
            'template(name="esxi" type="string" string="<166>%msg%")']
    for name, lines, act in routes:
        path = os.path.join(d, name + ".in")
        with open(path, "w") as f:
            f.write("".join(file_line(l) + "\n" for l in lines))
        conf.append('input(type="imfile" File="%s" Tag="%s" ruleset="%s" '
                    'freshStartTail="off")' % (path, name, name))
        conf.append('ruleset(name="%s") { %s }' % (name, act))
    cf = os.path.join(d, "rsyslog.conf")
    with open(cf, "w") as f:
        f.write("\n".join(conf) + "\n")
    chk = subprocess.run([RSYSLOGD, "-N1", "-f", cf], capture_output=True, text=True)
    if chk.returncode != 0:
        harness.fail("rsyslogd -N1: %s" % chk.stderr[-800:])
    return subprocess.Popen([RSYSLOGD, "-n", "-f", cf, "-i", os.path.join(d, "rs.pid")],
                            stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(d, "rsyslog.err"), "w"))


def test_rsyslog_tcp_and_tls(root):
    """Octet-counted and LF TCP, TLS, TLS with a required client
    certificate: every message arrives under its host with its rule; a
    client certificate from another CA is refused and counted; a half TLS
    handshake does not hold the listener."""
    c = certs.make(os.path.join(root, "pki"))
    pki = os.path.join(root, "pki")
    certs._leaf(pki, "stranger", "other-ca", "stranger", "DNS:stranger")
    tcp, tls, mtls = harness.free_port(), harness.free_port(), harness.free_port()
    lst = ("    - {address: \"127.0.0.1:%d\", transport: tcp}\n"
           "    - {address: \"127.0.0.1:%d\", transport: tls, cert: %s, key: %s}\n"
           "    - {address: \"127.0.0.1:%d\", transport: tls, cert: %s, key: %s, "
           "client_ca: %s}\n" % (tcp, tls, c.server_crt, c.server_key, mtls,
                                 c.server_crt, c.server_key, c.ca))
    extra = ("rules:\n  - {name: host_shutdown, match: 'Host is shutting down', "
             "files: [hostd], severity: warning}\n")
    a = harness.Agent(root, config(root, lst, extra=extra))
    a.start()
    rs = None
    try:
        harness.wait_for(lambda: len((status_json(a).get("receiver") or {}).get("listeners", []))
                         == 3, timeout=10, what="the listeners")
        # a half TLS handshake, held open while everything else happens
        half = socket.create_connection(("127.0.0.1", tls))
        half.sendall(b"\x16\x03\x01\x00\xc8\x01\x00\x00")
        client = (c.ca, c.wrong_crt, c.wrong_key)          # signed by the CA
        stranger = (c.ca, os.path.join(pki, "stranger.crt"), os.path.join(pki, "stranger.key"))
        rs = rsyslog(root, [
            ("octet", [with_host(ATS, "esx-oct")], action(tcp, "octet-counted")),
            ("lf", [with_host(ATS, "esx-lf")] + SHUT, action(tcp, "traditional")),
            ("tls", [with_host(ATS, "esx-tls")], action(tls, "octet-counted", client)),
            ("mtls", [with_host(ATS, "esx-mtls")], action(mtls, "octet-counted", client)),
            ("stranger", [with_host(ATS, "esx-stranger")], action(mtls, "octet-counted",
                                                                 stranger)),
        ])
        want = {("esx-oct", "ats_miscompare"), ("esx-lf", "ats_miscompare"),
                ("ESX01", "host_shutdown"), ("esx-tls", "ats_miscompare"),
                ("esx-mtls", "ats_miscompare")}
        evs = harness.wait_for(
            lambda: want <= {(e["hostname"], e.get("esxwatch_rule")) for e in out_events(root)}
            and out_events(root), timeout=20, what="the rsyslog-sent alerts")
        for e in evs:
            harness.eq(e.get("esxwatch_input"), "syslog", "input")
            harness.eq(e.get("esxwatch_peer"), "127.0.0.1", "peer")
        shut = [e for e in evs if e.get("esxwatch_rule") == "host_shutdown"][0]
        harness.eq(shut["text"], file_line(SHUT[0]) + "\n--> Host is shutting down: requested by root",
                   "folded over LF framing")
        harness.eq(len(evs), 5, "each message once (%r)" % [e["hostname"] for e in evs])
        st = harness.wait_for(lambda: status_json(a)["receiver"]["dropped"]["refused_tls"] >= 1
                              and status_json(a)["receiver"], timeout=10,
                              what="the stranger's certificate refused")
        if "esx-stranger" in {h["name"] for h in st["hosts"]}:
            harness.fail("a client certificate of another CA got through")
        tl = [l for l in st["listeners"] if l["transport"] == "tls"]
        harness.eq(sorted(l["messages"] for l in tl), [1, 1], "TLS listeners' messages")
        # a direct TLS client without a certificate: refused by the mTLS port
        ctx = ssl.create_default_context(cafile=c.ca)
        try:
            with socket.create_connection(("127.0.0.1", mtls)) as s:
                with ctx.wrap_socket(s, server_hostname="localhost") as t:
                    t.sendall(b"<14>2025-12-11T16:44:03.079Z nocert vobd: x\n")
                    t.recv(1)
        except (ssl.SSLError, OSError):
            pass
        harness.wait_for(lambda: status_json(a)["receiver"]["dropped"]["refused_tls"] >= 2,
                         timeout=10, what="the client without a certificate refused")
        half.close()
    finally:
        if rs is not None:
            rs.terminate()
            rs.wait(10)
        a.stop()


if __name__ == "__main__":
    harness.main(globals())
