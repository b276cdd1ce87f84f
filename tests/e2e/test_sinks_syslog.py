"""syslog end to end into a real rsyslog (started here, unprivileged ports
on 127.0.0.1, its own work directory) over UDP, TCP with octet counting,
TCP with newline framing, and TLS (rsyslog's gtls driver, a CA made at test
time).  rsyslog's parsed view (app-name, msgid, structured-data, msg,
hostname, pri, time) must match what the agent sent, values with quotes,
backslashes, ], newlines and non-ASCII included."""
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

import certs

RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"

TEMPLATE = ('{"app":"%app-name:::json%","msgid":"%msgid:::json%",'
            '"sd":"%structured-data:::json%","msg":"%msg:::json%",'
            '"host":"%hostname:::json%","pri":"%pri%","input":"%inputname%",'
            '"time":"%timereported:::date-rfc3339%"}').replace('"', '\\"') + "\\n"

NOTE = "two\nlines \u00fc"


free_port = harness.free_port


class Rsyslog:
    def __init__(self, d):
        self.d = os.path.join(d, "rsyslog")
        os.makedirs(os.path.join(self.d, "work"))
        self.pki = certs.make(os.path.join(d, "pki"))
        self.udp = free_port(socket.SOCK_DGRAM)
        self.tcp = free_port()
        self.tls = free_port()
        self.out = {}
        conf = os.path.join(self.d, "rsyslog.conf")
        rules = []
        for name in ("udp", "tcp", "tls"):
            self.out[name] = os.path.join(self.d, name + ".jsonl")
            rules.append('ruleset(name="r_%s") { action(type="omfile" file="%s" template="j") }'
                         % (name, self.out[name]))
        with open(conf, "w") as f:
            f.write('global(workDirectory="%s" parser.escapeControlCharactersOnReceive="off"\n'
                    '       maxMessageSize="64k"\n'
                    '       DefaultNetstreamDriverCAFile="%s"\n'
                    '       DefaultNetstreamDriverCertFile="%s"\n'
                    '       DefaultNetstreamDriverKeyFile="%s")\n'
                    % (os.path.join(self.d, "work"), self.pki.ca, self.pki.server_crt,
                       self.pki.server_key))
            f.write('module(load="imudp")\nmodule(load="imtcp")\n')
            f.write('input(type="imudp" address="127.0.0.1" port="%d" ruleset="r_udp")\n' % self.udp)
            f.write('input(type="imtcp" address="127.0.0.1" port="%d" ruleset="r_tcp")\n' % self.tcp)
            f.write('input(type="imtcp" address="127.0.0.1" port="%d" ruleset="r_tls" '
                    'StreamDriver.Name="gtls" StreamDriver.Mode="1" '
                    'StreamDriver.AuthMode="anon")\n' % self.tls)
            f.write('template(name="j" type="string" string="%s")\n' % TEMPLATE)
            f.write("\n".join(rules) + "\n")
        self.log = open(os.path.join(self.d, "rsyslogd.log"), "wb")
        self.proc = subprocess.Popen([RSYSLOGD, "-n", "-f", conf, "-i",
                                      os.path.join(self.d, "rsyslogd.pid")],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        try:
            wait_for(self._listening, timeout=30, what="rsyslogd listening")
        except BaseException:
            self.stop()     # a test stops what it starts, also on failure
            raise

    def _listening(self):
        if self.proc.poll() is not None:
            with open(os.path.join(self.d, "rsyslogd.log")) as f:
                fail("rsyslogd exited: %s" % f.read()[-800:])
        for p in (self.tcp, self.tls):
            try:
                socket.create_connection(("127.0.0.1", p), timeout=1).close()
            except OSError:
                return False
        return True

    def lines(self, name):
        p = self.out[name]
        if not os.path.exists(p):
            return []
        with open(p, encoding="utf-8") as f:
            return [json.loads(l) for l in f.read().splitlines() if l.strip()]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def sd_escape(v, keep_nl):
    v = v.replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")
    if not keep_nl:
        v = v.replace("\r", " ").replace("\n", " ")
    return v


def expected(e, keep_nl):
    """What rsyslog should report for event e (the flat form of docs/events.md)."""
    fields = [(k, v) for k, v in e.items() if k not in ("text", "timestamp")]
    sd = "[esxwatch@32473 " + " ".join('%s="%s"' % (k, sd_escape(v, keep_nl))
                                        for k, v in fields) + "]"
    msg = e["text"] if keep_nl else e["text"].replace("\r", " ").replace("\n", " ")
    sev = {"info": 6, "warning": 4, "error": 3, "critical": 2}[e["esxwatch_severity"]]
    return {"app": e["appname"], "msgid": e.get("esxwatch_rule", e["esxwatch_collector"]),
            "sd": sd, "msg": msg, "host": e["hostname"], "pri": str(20 * 8 + sev)}


def ship(d, rs, name, server, keep_nl, ndisks=30):
    sub = os.path.join(d, name)
    os.makedirs(sub)
    h = sinkutil.make_host(sub, ndisks=ndisks)
    out = os.path.join(sub, "copy.jsonl")
    fl, rules = sinkutil.logwatch(sub)
    a = Agent(sub, sinkutil.config(
        h, server, servers="servers:\n  copy: {proto: file, path: %s}\n" % out,
        more_tags=", note: %s" % json.dumps(NOTE), filelog=fl, extra=rules))
    rc, _, err = a.run("--once", timeout=60)
    eq(rc, 0, "--once over %s (stderr: %s)" % (name, err[-600:]))
    with open(out) as f:
        sent = harness.parse_events(f.read())
    eq(len(sent), ndisks + 2, "events sent")
    if not [e for e in sent if "\n" in e["text"] and e.get("esxwatch_rule") == "warn_line"]:
        fail("no multi-line rule event among those sent")
    return sent


def compare(rs, inp, sent, keep_nl, skip=0):
    got = wait_for(lambda: (lambda l: l if len(l) >= skip + len(sent) else None)(rs.lines(inp)),
                   timeout=15, what="rsyslog to write %d lines for %s" % (len(sent), inp))
    got = got[skip:skip + len(sent)]
    if os.environ.get("SINK_DEBUG"):
        print(inp, [json.dumps(g, ensure_ascii=False) for g in got if g["msgid"] == "warn_line"])
    # UDP may reorder nothing on loopback, but the two threads of the
    # agent (collectors) may interleave: match by what was sent.
    got.sort(key=lambda g: (g["time"], g["msg"]))
    sent = sorted(sent, key=lambda e: (e["timestamp"], expected(e, keep_nl)["msg"]))
    for e, g in zip(sent, got):
        want = expected(e, keep_nl)
        for k, v in want.items():
            if g.get(k) != v:
                fail("%s: rsyslog's %s is %r, sent %r" % (inp, k, g.get(k), v))
        t = datetime.datetime.fromisoformat(g["time"].replace("Z", "+00:00"))
        if abs(t.timestamp() * 1000 - e["timestamp"]) > 1:
            fail("%s: time %s vs %d" % (inp, g["time"], e["timestamp"]))
        if sinkutil.SITE not in g["sd"].replace('\\"', '"').replace("\\\\", "\\").replace("\\]", "]"):
            fail("tag value lost: %r" % g["sd"])


def test_rsyslog_udp_tcp_newline_tls(d):
    if not os.path.exists(RSYSLOGD):
        fail("rsyslogd not installed (packaging/install-deps.sh test)")
    rs = Rsyslog(d)
    try:
        base = "{hostname: 127.0.0.1, proto: syslog, port: %d, %s}"
        sent = ship(d, rs, "udp", base % (rs.udp, "transport: udp, ssl: no"), False)
        compare(rs, "udp", sent, keep_nl=False)
        sent = ship(d, rs, "octet", base % (rs.tcp, "transport: tcp, ssl: no"), True)
        compare(rs, "tcp", sent, keep_nl=True)
        sent2 = ship(d, rs, "newline", base % (rs.tcp, "transport: tcp, ssl: no, framing: newline"), False)
        compare(rs, "tcp", sent2, keep_nl=False, skip=len(sent))
        sent = ship(d, rs, "tls", base % (rs.tls, "transport: tcp, ssl: yes, ssl_ca_path: %s"
                                          % rs.pki.ca), True)
        compare(rs, "tls", sent, keep_nl=True)
    finally:
        rs.stop()


def test_rsyslog_rfc3164(d):
    rs = Rsyslog(d)
    try:
        sent = ship(d, rs, "r3164", "{hostname: 127.0.0.1, proto: syslog, port: %d, transport: tcp, "
                    "ssl: no, format: rfc3164}" % rs.tcp, False, ndisks=5)
        got = wait_for(lambda: (lambda l: l if len(l) >= len(sent) else None)(rs.lines("tcp")),
                       timeout=15, what="rsyslog to write the rfc3164 lines")
        want = sorted((e["appname"], e["hostname"], e["text"],
                       str(20 * 8 + {"info": 6, "warning": 4}[e["esxwatch_severity"]])) for e in sent)
        have = sorted((g["app"], g["host"], g["msg"].strip(), g["pri"]) for g in got)
        eq(have, want, "rsyslog's view of the rfc3164 messages")
    finally:
        rs.stop()


def test_rsyslog_tls_wrong_ca_refused(d):
    rs = Rsyslog(d)
    try:
        h = sinkutil.make_host(d, ndisks=3)
        a = Agent(d, sinkutil.config(h, "{hostname: 127.0.0.1, proto: syslog, port: %d, ssl: yes, "
                                     "ssl_ca_path: %s}" % (rs.tls, rs.pki.other_ca)))
        a.start()
        try:
            wait_for(lambda: "certificate signed by an unknown CA" in a.stderr_text(),
                     timeout=20, what="the unknown-CA error in the agent's log")
        finally:
            a.kill9()
        eq(rs.lines("tls"), [], "messages rsyslog accepted")
    finally:
        rs.stop()


harness.main(globals())
