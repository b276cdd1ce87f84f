"""Collector mode end to end: the real binary receives syslog from real
senders — util-linux `logger` (UDP, TCP, RFC 3164 and 5424, octet
counting) and plain sockets bound to 127.0.0.x, one simulated ESXi host
each — and ships what its rules find to the file sink.

The wire lines are the captures of tests/fixtures/syslog/ (SOURCES.md says
where each comes from).  rsyslog (octet-counted and LF TCP, TLS through
gtls) is test_receiver_rsyslog.py; silent hosts, outages, floods and
hostile senders are test_receiver_limits.py.
"""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:     # Debian's python3-prometheus-client (make test-deps) under another python3
    sys.path.append("/usr/lib/python3/dist-packages")
    from prometheus_client.parser import text_string_to_metric_families

WIRE = os.path.join(harness.FIXTURES, "syslog")

OFF = """collectors:
  nic: {enabled: no}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
  diagnosis: {enabled: no}
  logwatch: {enabled: %s}
"""


def config(root, listeners, extra="", logwatch="no", server=None):
    """listeners: YAML list items under receiver.syslog."""
    server = server or "{proto: file, path: %s/out.jsonl}" % root
    return ("server: %s\nstorage: {directory: %s/storage}\n"
            "host: {platform: linux, hostname: collector01}\n"
            "batch: {flush_interval: 1}\n" % (server, root)) + (OFF % logwatch) + \
        "receiver:\n  syslog:\n" + listeners + extra


def out_events(root):
    return harness.file_events(os.path.join(root, "out.jsonl"))


def wire_lines(name):
    with open(os.path.join(WIRE, name), encoding="utf-8") as f:
        return [l for l in f.read().splitlines() if l]


def send_tcp(port, lines, src="127.0.0.1", octet=False):
    """One connection from src: LF framing, or octet counting (RFC 6587)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    data = b""
    for l in lines:
        b = l.encode() if isinstance(l, str) else l
        data += (b"%d " % len(b) + b) if octet else b + b"\n"
    s.sendall(data)
    s.close()


def send_udp(port, lines, src="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    for l in lines:
        s.sendto(l.encode() if isinstance(l, str) else l, ("127.0.0.1", port))
    s.close()


def with_host(line, host):
    """An ESXi RFC 3164 wire line with its HOSTNAME replaced."""
    m = re.match(r"^(<\d+>\S+) (\S+) (.*)$", line)
    return "%s %s %s" % (m.group(1), host, m.group(3))


def status_json(agent):
    rc, out, err = agent.run("--status", "--json")
    return json.loads(out)


def check_received(e, host, app, peer):
    harness.eq(e.get("hostname"), host, "hostname of %r" % e["text"][:60])
    harness.eq(e.get("appname"), app, "appname of %r" % e["text"][:60])
    harness.eq(e.get("esxwatch_input"), "syslog", "esxwatch_input")
    harness.eq(e.get("esxwatch_peer"), peer, "esxwatch_peer")
    harness.eq(e.get("esxwatch_collector"), "logwatch", "esxwatch_collector")
    harness.eq(e.get("esxwatch_kind"), "alert", "esxwatch_kind")


# ESXi lines (tests/fixtures/syslog) a built-in rule matches, by program.
VMK = wire_lines("esxi67-rfc3164.log")[5]      # io_latency_deteriorated
VMK_HOST = "localhost.localdomain"
ATS = [l for l in wire_lines("esxi8-rfc3164.log") if " vmkernel: " in l][0]   # ats_miscompare
IOT = wire_lines("esxi67-rfc3164.log")[6]      # io_tracker_stall (no HOSTNAME)
SHUT = wire_lines("esxi67-rfc3164.log")[3:5]      # Event 2393 and its --> line


def test_hosts_programs_and_file_parity(root):
    """Several simulated hosts at once (127.0.0.2/.3/.4, UDP and TCP, LF and
    octet counting) and logger: every alert names its sender, its program,
    esxwatch_input and esxwatch_peer; the rule is the one the same message
    gets in a followed file; a localhost name falls back to the peer once;
    a message without HOSTNAME is its peer's; the -> line folds."""
    udp = harness.free_port(socket.SOCK_DGRAM)
    tcp = harness.free_port()
    logs = os.path.join(root, "logs")
    os.makedirs(logs)
    # the same messages as lines of followed files (the ESXi file form:
    # the time, then the message)
    file_form = []
    for l in (ATS, VMK):
        m = re.match(r"^<\d+>(\S+) \S+ vmkernel: (.*)$", l)
        file_form.append(m.group(1) + " " + m.group(2))
    with open(os.path.join(logs, "vmkernel.log"), "w") as f:
        f.write("\n".join(file_form) + "\n")
    extra = ("rules:\n  - {name: host_shutdown, match: 'Host is shutting down', "
             "files: [hostd], severity: warning}\n"
             "filelog:\n  vmkernel: {directory: %s, include: vmkernel.log, "
             "read_from_head: yes}\n  vobd: {directory: %s, include: none}\n"
             "  hostd: {directory: %s, include: none}\n" % (logs, logs, logs))
    v6 = harness.free_port()
    a = harness.Agent(root, config(root, "    - {address: \"127.0.0.1:%d\", transport: udp}\n"
                                   "    - {address: \"127.0.0.1:%d\", transport: tcp}\n"
                                   "    - {address: \"[::1]:%d\", transport: tcp}\n"
                                   % (udp, tcp, v6), extra=extra, logwatch="yes"))
    a.start()
    try:
        harness.wait_for(lambda: len(status_json(a).get("receiver") or {}) > 0 and
                         all(l["listening"] for l in status_json(a)["receiver"]["listeners"]),
                         timeout=10, what="the listeners")
        send_udp(udp, [with_host(ATS, "esx01")], src="127.0.0.2")
        send_tcp(tcp, [with_host(ATS, "esx02")] + SHUT, src="127.0.0.3", octet=True)
        send_tcp(tcp, [VMK, IOT], src="127.0.0.4")
        s6 = socket.create_connection(("::1", v6))     # an IPv6 listener and peer
        s6.sendall((with_host(ATS, "esx-v6") + "\n").encode())
        s6.close()
        # logger, a real sender: RFC 5424 octet-counted TCP and RFC 3164 UDP
        body = ATS.split(" vmkernel: ", 1)[1]
        subprocess.run(["logger", "--tcp", "--rfc5424", "--octet-count", "-n", "127.0.0.1",
                        "-P", str(tcp), "-t", "vmkernel", body], check=True)
        subprocess.run(["logger", "--udp", "--rfc3164", "-n", "127.0.0.1",
                        "-P", str(udp), "-t", "vmkwarning", body], check=True)
        want = 10  # ats x5 (esx01, esx02, esx-v6, logger x2), shutdown, vmk, iot; file: ats, vmk
        evs = harness.wait_for(lambda: len(out_events(root)) >= want and out_events(root),
                               timeout=15, what="%d alerts" % want)
        rx = [e for e in evs if e.get("esxwatch_input") == "syslog"]
        files = [e for e in evs if e.get("esxwatch_input") is None]
        by = {(e["hostname"], e.get("esxwatch_rule")): e for e in rx}
        check_received(by[("esx01", "ats_miscompare")], "esx01", "vmkernel", "127.0.0.2")
        check_received(by[("esx02", "ats_miscompare")], "esx02", "vmkernel", "127.0.0.3")
        check_received(by[("esx-v6", "ats_miscompare")], "esx-v6", "vmkernel", "::1")
        check_received(by[("ESX01", "host_shutdown")], "ESX01", "Hostd", "127.0.0.3")
        check_received(by[("127.0.0.4", "io_latency_deteriorated")], "127.0.0.4",
                       "vmkernel", "127.0.0.4")
        check_received(by[("127.0.0.4", "io_tracker_stall")], "127.0.0.4", "Hostd",
                       "127.0.0.4")
        # the text: the message as received, without <PRI>
        harness.eq(by[("esx01", "ats_miscompare")]["text"], with_host(ATS, "esx01").split(">", 1)[1],
                   "text of a received line")
        # the continuation folded into the record it continues
        harness.eq(by[("ESX01", "host_shutdown")]["text"],
                   SHUT[0].split(">", 1)[1] + "\n--> Host is shutting down: requested by root",
                   "folded text")
        # logger's: its own host name, the program as its tag
        lg = [e for e in rx if e["hostname"] not in ("esx01", "esx02", "ESX01", "127.0.0.4",
                                                      "esx-v6")]
        harness.eq(sorted(e["appname"] for e in lg), ["vmkernel", "vmkwarning"], "logger's programs")
        for e in lg:
            harness.eq(e.get("esxwatch_rule"), "ats_miscompare", "logger line's rule")
            harness.eq(e.get("esxwatch_peer"), "127.0.0.1", "logger's peer")
        # file parity: the same messages in a followed file give the same rules
        # and the same captures
        harness.eq(sorted(e.get("esxwatch_rule") for e in files),
                   ["ats_miscompare", "io_latency_deteriorated"], "rules of the file lines")
        fa = [e for e in files if e["esxwatch_rule"] == "ats_miscompare"][0]
        ra = by[("esx01", "ats_miscompare")]
        for k in fa:
            if k.startswith("esxwatch_") and k not in ("esxwatch_file", "esxwatch_input",
                                                        "esxwatch_peer", "esxwatch_event_time",
                                                        "esxwatch_filelog"):
                harness.eq(ra.get(k), fa[k], "received vs file: %s" % k)
        harness.eq(fa.get("hostname"), "collector01", "the file's host is the collector")
        # the localhost name: said once, known by the address
        err = a.stderr_text()
        harness.eq(err.count("names itself 'localhost.localdomain'"), 1, "fallback warnings")
        st = harness.wait_for(lambda: len(status_json(a)["receiver"]["hosts"]) >= 6 and
                              status_json(a)["receiver"], timeout=10, what="hosts in the status")
        names = {h["name"]: h for h in st["hosts"]}
        for n in ("esx01", "esx02", "ESX01", "127.0.0.4"):
            if n not in names:
                harness.fail("--status --json lacks host %s: %r" % (n, sorted(names)))
        harness.eq(names["127.0.0.4"]["messages"], 2, "messages of 127.0.0.4")
        harness.eq(names["esx01"]["transport"], "udp", "esx01's transport")
        harness.eq(names["esx02"]["alerts"], 1, "esx02's alerts")
        harness.eq(names["esx02"]["state"], "sending", "esx02's state")
        txt = a.run("--status")[1]
        if "receiver: " not in txt or "esx02" not in txt:
            harness.fail("--status has no receiver block: %s" % txt[-600:])
    finally:
        a.stop()


def test_forward_all_allow_and_peer_names(root):
    """forward: all sends every message as a sample with its host;
    hostname: peer names hosts by address; a sender outside allow is
    refused, counted and said once."""
    udp = harness.free_port(socket.SOCK_DGRAM)
    mon = harness.free_port()
    extra = ("  allow: [127.0.0.0/30]\n  hostname: peer\n  forward: all\n"
             "monitor: {listen: \"127.0.0.1:%d\"}\n" % mon)
    a = harness.Agent(root, config(root, "    - {address: \"127.0.0.1:%d\", transport: udp}\n"
                                   % udp, extra=extra))
    a.start()
    try:
        harness.wait_for(lambda: (status_json(a).get("receiver") or {}).get("listeners"),
                         timeout=10, what="the listener")
        lines = wire_lines("esxi8-rfc3164.log")
        send_udp(udp, lines[:3], src="127.0.0.2")
        send_udp(udp, lines[:2], src="127.0.0.9")     # outside 127.0.0.0/30
        send_udp(udp, lines[:2], src="127.0.0.9")
        send_udp(udp, lines[3:4], src="127.0.0.3")
        # .2's second line is a --> continuation: folded into the first
        evs = harness.wait_for(lambda: len(out_events(root)) >= 3 and out_events(root),
                               timeout=10, what="3 events")
        harness.eq(sorted(e["hostname"] for e in evs),
                   ["127.0.0.2"] * 2 + ["127.0.0.3"], "hosts named by peer")
        harness.eq(evs[0]["text"].count("\n--> [context]"), 1, "the fold")
        for e in evs:
            harness.eq(e.get("esxwatch_kind"), "sample", "forwarded kind")
            harness.eq(e.get("esxwatch_input"), "syslog", "input")
            harness.eq(e.get("appname"), "Hostd", "appname")
        st = harness.wait_for(lambda: status_json(a)["receiver"]["dropped"]["refused_allow"] == 4
                              and status_json(a)["receiver"], timeout=10,
                              what="4 refused datagrams counted")
        harness.eq(sorted(h["name"] for h in st["hosts"]), ["127.0.0.2", "127.0.0.3"],
                   "hosts (no refused one)")
        harness.eq(a.stderr_text().count("127.0.0.9 is not in receiver.allow"), 1,
                   "refusal said once")
        # /metrics: the same picture, through Prometheus' own parser
        c = http.client.HTTPConnection("127.0.0.1", mon, timeout=10)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
        got = {}
        for fam in text_string_to_metric_families(text):
            for smp in fam.samples:
                got[(smp.name, tuple(sorted(smp.labels.items())))] = smp.value
        harness.eq(got.get(("esxwatch_receiver_messages_total", (("host", "127.0.0.2"),))), 3.0,
                   "messages_total of 127.0.0.2")
        harness.eq(got.get(("esxwatch_receiver_messages_total", (("host", "127.0.0.3"),))), 1.0,
                   "messages_total of 127.0.0.3")
        harness.eq(got.get(("esxwatch_receiver_dropped_total", (("reason", "refused_allow"),))),
                   4.0, "dropped_total{refused_allow}")
        harness.eq(got.get(("esxwatch_receiver_dropped_total", (("reason", "udp_overflow"),))),
                   0.0, "dropped_total{udp_overflow}")
    finally:
        a.stop()


def test_cut_message_is_marked(root):
    """A message past 64 KiB (SYSLOG_MSG_MAX) over TCP is delivered cut,
    counted, and its event marked like a cut file line (esxwatch_truncated
    yes, the text ending with EVENT_TRUNC_MARKER); the message after it on
    the same connection arrives whole and unmarked."""
    tcp = harness.free_port()
    a = harness.Agent(root, config(root, "    - {address: \"127.0.0.1:%d\", transport: tcp}\n"
                                   % tcp, extra="  forward: all\n"))
    a.start()
    try:
        harness.wait_for(lambda: (status_json(a).get("receiver") or {}).get("listeners"),
                         timeout=10, what="the listener")
        head = "<14>2025-12-11T16:44:03.079Z esx-cut vobd: "
        big = head + "z" * (70 * 1024)
        after = "<14>2025-12-11T16:44:04.000Z esx-cut vobd: after the cut one"
        send_tcp(tcp, [big, after])
        evs = harness.wait_for(lambda: len(out_events(root)) >= 2 and out_events(root),
                               timeout=15, what="2 events")
        harness.eq(len(evs), 2, "events")
        cut = [e for e in evs if e["text"].startswith("2025-12-11T16:44:03")]
        whole = [e for e in evs if "after the cut one" in e["text"]]
        harness.eq((len(cut), len(whole)), (1, 1), "the cut event and the next one")
        cut, whole = cut[0], whole[0]
        harness.eq(cut.get("esxwatch_truncated"), "yes", "esxwatch_truncated of the cut one")
        if not cut["text"].endswith("z...[truncated]"):
            harness.fail("the cut text does not end with the marker: %r" % cut["text"][-40:])
        # the event's text is at most EVENT_TEXT_MAX (16 KiB), one marker
        harness.eq(len(cut["text"]), 16 * 1024, "the cut text's length")
        harness.eq(cut["text"].count("...[truncated]"), 1, "markers")
        harness.eq(whole.get("esxwatch_truncated"), None, "esxwatch_truncated of the next one")
        harness.eq(whole["text"], "2025-12-11T16:44:04.000Z esx-cut vobd: after the cut one",
                   "the next one, whole")
        for e in (cut, whole):
            harness.eq(e.get("hostname"), "esx-cut", "hostname")
            harness.eq(e.get("esxwatch_kind"), "sample", "kind")
        # --status reads the status file (written at most every 2 s)
        harness.wait_for(lambda: status_json(a)["receiver"]["dropped"]["truncated"] >= 1,
                         timeout=10, what="the cut counted in --status")
        harness.eq(status_json(a)["receiver"]["dropped"]["truncated"], 1, "counted truncated")
    finally:
        a.stop()


def test_reload_keeps_listeners_and_connections(root):
    """SIGHUP: the listeners and the connections stay (a sender's TCP
    connection goes on after the reload, under the new rules); the host
    table too."""
    tcp = harness.free_port()
    lst = "    - {address: \"127.0.0.1:%d\", transport: tcp}\n" % tcp
    a = harness.Agent(root, config(root, lst))
    a.start()
    try:
        harness.wait_for(lambda: (status_json(a).get("receiver") or {}).get("listeners"),
                         timeout=10, what="the listener")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", tcp))
        s.sendall((with_host(ATS, "esx-r") + "\n").encode())
        harness.wait_for(lambda: len(out_events(root)) == 1, timeout=10, what="the first alert")
        a.write_config(config(root, lst, extra="rules:\n  - {name: hello_rule, match: 'hello "
                              "reload', severity: info}\n"))
        a.signal(signal.SIGHUP)
        harness.wait_for(lambda: "configuration reloaded" in a.stderr_text(), timeout=10,
                         what="the reload")
        s.sendall(b"<14>2025-12-11T16:44:03.079Z esx-r vobd: hello reload\n")
        evs = harness.wait_for(lambda: len(out_events(root)) == 2 and out_events(root),
                               timeout=10, what="the line sent after the reload")
        harness.eq(evs[1].get("esxwatch_rule"), "hello_rule", "the new rule")
        harness.eq(evs[1].get("esxwatch_peer"), "127.0.0.2", "same connection's peer")
        s.close()
        # counted on across the reload (one host table)
        harness.wait_for(lambda: [h["messages"] for h in status_json(a)["receiver"]["hosts"]]
                         == [2], timeout=10, what="2 messages of esx-r in the status")
        if a.stderr_text().count("receiver: listening on") != 1:
            harness.fail("the listener was opened again:\n" + a.stderr_text()[-800:])
    finally:
        a.stop()


def test_storm_is_per_host(root):
    """Storm control per host: a storm of one condition on esx-a (past the
    rule's 10 per window) is counted for esx-a only; esx-b's same alert
    still goes out, and the summary names esx-a."""
    tcp = harness.free_port()
    a = harness.Agent(root, config(root, "    - {address: \"127.0.0.1:%d\", transport: tcp}\n"
                                   % tcp))
    a.start()
    try:
        harness.wait_for(lambda: (status_json(a).get("receiver") or {}).get("listeners"),
                         timeout=10, what="the listener")
        send_tcp(tcp, [with_host(ATS, "esx-a")] * 15, src="127.0.0.2")
        harness.wait_for(lambda: len(out_events(root)) >= 10, timeout=10, what="esx-a's alerts")
        send_tcp(tcp, [with_host(ATS, "esx-b")], src="127.0.0.3")
        evs = harness.wait_for(lambda: harness.select(out_events(root), hostname="esx-b") and
                               out_events(root), timeout=10, what="esx-b's alert")
        harness.eq(len(harness.select(evs, hostname="esx-a", esxwatch_rule="ats_miscompare")), 10,
                   "esx-a's alerts sent one by one")
        harness.eq(len(harness.select(evs, hostname="esx-b", esxwatch_rule="ats_miscompare")), 1,
                   "esx-b's alert")
        # the counts held back survive a crash: kill -9, start again, stop
        kv = os.path.join(root, "storage", "state", "receiver.kv")

        def saved():
            try:
                with open(kv, errors="replace") as f:
                    return "storm:" in f.read()
            except OSError:
                return False
        harness.wait_for(saved, timeout=10, what="the storm counts saved")
        a.kill9()
        a.start()
        harness.wait_for(lambda: a.stderr_text().count(" started on ") == 2 and
                         (status_json(a).get("receiver") or {}).get("listeners"),
                         timeout=10, what="the restart")
    finally:
        a.stop()
    summ = [e for e in out_events(root) if "esxwatch_repeat_count" in e]
    harness.eq([(e["hostname"], e["esxwatch_repeat_count"]) for e in summ], [("esx-a", "5")],
               "the storm summary after the crash, at the stop")


def test_check_config_errors(root):
    """--check-config: FILE:LINE:COL, what is wrong and what is expected."""
    a = harness.Agent(root, "receiver:\n  syslog:\n"
                      "    - {address: \"example.com:514\", transport: tcp}\n"
                      "    - {address: \"0.0.0.0:6514\", transport: tls}\n"
                      "    - {address: \"0.0.0.0:514\", transport: udp, key: k.pem}\n"
                      "    - {transport: sctp}\n"
                      "  allow: [10.0.0.0/33]\n  hostname: fqdn\n")
    rc, out, err = a.run("--check-config")
    harness.eq(rc, 2, "exit status")
    cfg = a.config
    for want in ("%s:3:17: 'address': 'example.com:514' is not an IP address" % cfg,
                 "%s:4:7: receiver.syslog[2]: transport tls needs 'cert' and 'key'" % cfg,
                 "%s:5:7: receiver.syslog[3]: 'cert', 'key' and 'client_ca' are for "
                 "transport tls, not udp" % cfg,
                 "'transport': expected one of udp, tcp, tls; got 'sctp'",
                 "receiver.syslog: item 4 has no 'address'",
                 "'allow': '10.0.0.0/33' is not a network",
                 "'hostname': expected one of header, peer; got 'fqdn'"):
        if want not in err:
            harness.fail("--check-config lacks %r:\n%s" % (want, err))


if __name__ == "__main__":
    harness.main(globals())
