"""Collector mode at its limits: a host that falls silent and sends again,
a destination down while three hosts send over TCP (back-pressure at the
spool's budget, every line delivered exactly once), a UDP flood (what is
delivered and what the kernel dropped add up to what was sent), and
hostile senders (slowloris, 2,000 idle connections, a 2 MB line without a
newline, garbage, half TLS handshakes) while a good host is still served.
"""
import os
import resource
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import certs  # noqa: E402
import harness  # noqa: E402
import receivers  # noqa: E402
from test_receiver import (ATS, config, out_events, send_tcp, send_udp,  # noqa: E402
                           status_json, with_host)


def wait_listening(a, n):
    harness.wait_for(lambda: len([l for l in ((status_json(a).get("receiver") or {})
                                              .get("listeners", [])) if l["listening"]]) == n,
                     timeout=10, what="%d listeners" % n)


def test_silent_then_sending(root):
    """silent_after: one alert when a host that sent stays silent, none
    again while it stays so, a change when it sends again; the other
    host, still sending, is not silent."""
    udp = harness.free_port(socket.SOCK_DGRAM)
    a = harness.Agent(root, config(root, "    - {address: \"127.0.0.1:%d\", transport: udp}\n"
                                   % udp, extra="  silent_after: 2\n"))
    a.start()
    try:
        wait_listening(a, 1)
        send_udp(udp, [with_host(ATS, "esx-quiet")], src="127.0.0.2")
        t0 = time.time()
        stop = threading.Event()

        def chatty():
            while not stop.is_set():
                send_udp(udp, ["<14>2025-12-11T16:44:03.079Z esx-chatty vobd: hello"],
                         src="127.0.0.3")
                time.sleep(0.3)
        th = threading.Thread(target=chatty)
        th.start()
        try:
            sil = harness.wait_for(lambda: harness.select(out_events(root),
                                                          esxwatch_collector="receiver"),
                                   timeout=10, what="the silent alert")
            # stays silent: still one alert two windows later
            time.sleep(4.5)
        finally:
            stop.set()
            th.join()
        evs = harness.select(out_events(root), esxwatch_collector="receiver")
        harness.eq(len(evs), 1, "alerts about silent hosts (%r)" % [e["text"] for e in evs])
        e = evs[0]
        harness.eq(e["hostname"], "esx-quiet", "the silent host")
        harness.eq(e["esxwatch_kind"], "alert", "kind")
        harness.eq(e["esxwatch_input"], "syslog", "input")
        harness.eq(e["esxwatch_peer"], "127.0.0.2", "peer")
        if not 2 <= int(e["esxwatch_silent_s"]) <= 4:
            harness.fail("esxwatch_silent_s %s" % e["esxwatch_silent_s"])
        if sil[0]["timestamp"] / 1000.0 - t0 < 1.5:
            harness.fail("the alert came before silent_after")
        st = status_json(a)["receiver"]
        states = {h["name"]: h["state"] for h in st["hosts"]}
        harness.eq(states, {"esx-quiet": "silent", "esx-chatty": "sending"}, "states")
        send_udp(udp, [with_host(ATS, "esx-quiet")], src="127.0.0.2")
        ch = harness.wait_for(lambda: harness.select(out_events(root), esxwatch_kind="change",
                                                     esxwatch_collector="receiver"),
                              timeout=10, what="the change")
        harness.eq(ch[0]["hostname"], "esx-quiet", "change's host")
        harness.eq(ch[0]["esxwatch_state"], "sending", "esxwatch_state")
    finally:
        a.stop()


def line(host, i):
    return "<166>2025-12-11T16:44:03.079Z %s vmkernel: cpu0:1)id=%s-%05d %s" % (
        host, host, i, "x" * 300)


def test_outage_backpressure_exactly_once(root):
    """The destination down for 20 s while three hosts send over TCP: the
    spool fills to its budget, the receiver stops reading (TCP holds the
    senders back) instead of dropping, and once the destination is back
    every line is delivered exactly once."""
    tcp = harness.free_port()
    n = 500
    with receivers.HttpReceiver() as r:
        r.down = True
        server = "{proto: http, url: \"http://127.0.0.1:%d/in\", timeout: 2}" % r.port
        extra = ("  forward: all\nstorage: {directory: %s/storage, max_disk_buffer_kb: 512, "
                 "segment_kb: 32}\n" % root)
        cfg = config(root, "    - {address: \"127.0.0.1:%d\", transport: tcp}\n" % tcp,
                     extra=extra, server=server)
        cfg = cfg.replace("storage: {directory: %s/storage}\n" % root, "")
        a = harness.Agent(root, cfg)
        a.start()
        try:
            wait_listening(a, 1)
            hosts = ["esx-a", "esx-b", "esx-c"]
            ths = [threading.Thread(target=send_tcp, args=(tcp, [line(h, i) for i in range(n)]),
                                    kwargs={"src": "127.0.0.%d" % (k + 2)})
                   for k, h in enumerate(hosts)]
            t0 = time.time()
            for t in ths:
                t.start()
            harness.wait_for(lambda: status_json(a)["receiver"]["paused"], timeout=15,
                             what="back-pressure")
            tp = time.time()
            time.sleep(max(0.0, 20 - (time.time() - t0)))
            st = status_json(a)
            if st["dropped_budget"] != 0:
                harness.fail("the spool dropped %d events" % st["dropped_budget"])
            r.down = False
            for t in ths:
                t.join(60)
            want = {"%s-%05d" % (h, i) for h in hosts for i in range(n)}

            def ids():
                with r.lock:
                    return [e["text"].split("id=")[1].split(" ")[0] for e in r.events
                            if "id=" in e["text"]]
            t1 = time.time()
            harness.wait_for(lambda: want <= set(ids()), timeout=40,
                             what="every line delivered")
            print("  outage: paused after %.1f s; all delivered %.1f s after the "
                  "destination came back" % (tp - t0, time.time() - t1))
            got = ids()
            harness.eq(len(got), len(want), "deliveries (duplicates: %d)" % (len(got) - len(set(got))))
            st = status_json(a)
            harness.eq(st["dropped_budget"], 0, "spool drops")
            if st["receiver"]["pauses"] < 1:
                harness.fail("no pause recorded: %r" % st["receiver"])
            if "back-pressure" not in a.stderr_text():
                harness.fail("the pause was not logged")
        finally:
            a.stop()


def test_udp_flood_adds_up(root):
    """A UDP flood: events delivered + datagrams the kernel dropped
    (SO_RXQ_OVFL, dropped{udp_overflow}) = datagrams sent."""
    udp = harness.free_port(socket.SOCK_DGRAM)
    a = harness.Agent(root, config(root, "    - {address: \"127.0.0.1:%d\", transport: udp}\n"
                                   % udp, extra="  forward: all\n"))
    a.start()
    try:
        wait_listening(a, 1)
        sent = 20000
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(sent):
            s.sendto(("<14>2025-12-11T16:44:03.079Z esx-flood vobd: n=%d %s" % (i, "y" * 200))
                     .encode(), ("127.0.0.1", udp))
        time.sleep(0.5)   # the flood over: one more datagram brings the kernel's count
        s.sendto(b"<14>2025-12-11T16:44:03.079Z esx-flood vobd: last", ("127.0.0.1", udp))
        sent += 1
        s.close()

        def settled():
            st = status_json(a)["receiver"]
            got = sum(h["messages"] for h in st["hosts"])
            return got + st["dropped"]["udp_overflow"] == sent and len(out_events(root)) == got \
                and (got, st["dropped"]["udp_overflow"])
        got, dropped = harness.wait_for(settled, timeout=30,
                                        what="delivered + dropped = %d" % sent)
        print("  udp flood: %d sent, %d delivered, %d dropped by the kernel" % (sent, got, dropped))
    finally:
        a.stop()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


def test_hostile_senders(root):
    """Slowloris, 2,000 idle connections (max_connections 1024: the rest
    refused and counted), a 2 MB line without newline, garbage, half TLS
    handshakes: the agent stays up with bounded memory and a good host's
    alert still arrives."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    c = certs.make(os.path.join(root, "pki"))
    tcp, tls, udp = harness.free_port(), harness.free_port(), harness.free_port(socket.SOCK_DGRAM)
    a = harness.Agent(root, config(root,
                                   "    - {address: \"127.0.0.1:%d\", transport: tcp}\n"
                                   "    - {address: \"127.0.0.1:%d\", transport: tls, cert: %s, "
                                   "key: %s}\n"
                                   "    - {address: \"127.0.0.1:%d\", transport: udp}\n"
                                   % (tcp, tls, c.server_crt, c.server_key, udp)))
    a.start()
    socks = []
    stop = threading.Event()
    try:
        wait_listening(a, 3)
        base = rss_kb(a.proc.pid)

        def slowloris():
            s = socket.create_connection(("127.0.0.1", tcp))
            socks.append(s)
            while not stop.is_set():
                try:
                    s.send(b"<")
                except OSError:
                    return
                time.sleep(0.05)
        th = threading.Thread(target=slowloris)
        th.start()
        big = socket.create_connection(("127.0.0.1", tcp))
        socks.append(big)
        big.sendall(b"<14>2025-12-11T16:44:03.079Z esx-big vobd: " + b"z" * (2 * 1024 * 1024))
        g = socket.create_connection(("127.0.0.1", tcp))
        socks.append(g)
        g.sendall(bytes((i * 37 + 11) % 256 for i in range(200000)) + b"\n999999999999 x\n")
        for _ in range(50):
            h = socket.create_connection(("127.0.0.1", tls))
            h.sendall(b"\x16\x03\x01\x00\xc8\x01\x00")
            socks.append(h)
        for _ in range(2000):
            try:
                socks.append(socket.create_connection(("127.0.0.1", tcp), timeout=5))
            except OSError:
                pass
        # a good host, over UDP and over a fresh TCP connection
        send_udp(udp, [with_host(ATS, "esx-good")], src="127.0.0.2")
        evs = harness.wait_for(lambda: harness.select(out_events(root), hostname="esx-good"),
                               timeout=15, what="the good host's alert")
        harness.eq(evs[0]["esxwatch_rule"], "ats_miscompare", "the good host's rule")
        st = harness.wait_for(lambda: status_json(a)["receiver"]["dropped"]
                              ["refused_connections"] >= 900 and status_json(a)["receiver"],
                              timeout=15, what="connections past max_connections refused")
        d = st["dropped"]
        if d["truncated"] < 1 or d["malformed"] < 1:
            harness.fail("the 2 MB line and the garbage are not counted: %r" % d)
        rss = rss_kb(a.proc.pid)
        print("  hostile: RSS %d kB at start, %d kB under 2,000 connections; %r" % (base, rss, d))
        if rss > base + 150 * 1024:
            harness.fail("RSS grew from %d to %d kB" % (base, rss))
        if a.proc.poll() is not None:
            harness.fail("the agent exited")
    finally:
        stop.set()
        for s in socks:
            s.close()
        a.stop()


if __name__ == "__main__":
    harness.main(globals())
