"""gelf end to end: the real binary sends GELF 1.1 to a strict input
(gelf_server.py, built from Graylog's GELF documentation) over TCP, TLS
and UDP (chunked past the datagram size, gzip or not): every event
arrives exactly once with short_message = the text, timestamp in seconds
with its milliseconds, host, level = the syslog severity and the fields
as _name; a connection the input closed between batches is noticed
before the next write; one closed in the middle of a batch makes the
batch go again (at least once, nothing lost); a 20 s outage loses
nothing."""
import json
import os
import time

import harness
import sinkutil
from harness import Agent, eq, fail, wait_for

import certs
from gelf_server import GelfInput, flat


def key(e):
    return json.dumps(e, sort_keys=True)


def copy_conf(d):
    out = os.path.join(d, "copy.jsonl")
    return out, "servers:\n  copy: {proto: file, path: %s}\n" % out


def server(r, extra=", ssl: no"):
    return "{proto: gelf, hostname: 127.0.0.1, port: %d%s}" % (r.port, extra)


def once(d, r, extra=", ssl: no", ndisks=60, rc_want=0):
    h = sinkutil.make_host(d, ndisks=ndisks)
    fl, rules = sinkutil.logwatch(d)
    big = os.path.join(d, "big.txt")
    if os.path.exists(big):
        os.rename(big, os.path.join(d, "logs", "big.log"))
        fl = fl.replace("include: test.log", "include: \"test.log;big.log\"")
    out, servers = copy_conf(d)
    a = Agent(d, sinkutil.config(h, server(r, extra), servers=servers, filelog=fl, extra=rules))
    rc, _, err = a.run("--once", timeout=60)
    eq(rc, rc_want, "--once (stderr: %s)" % err[-600:])
    return harness.file_events(out), err


def exactly_once(r, copy):
    if r.violations:
        fail("input violations: %s" % r.violations[:5])
    eq(sorted(key(flat(m)) for m in r.messages), sorted(map(key, copy)),
       "messages (short_message, timestamp, host, _fields) vs the file copy")


def test_tcp_every_event_once_in_its_place(d):
    with GelfInput("tcp") as r:
        copy, _ = once(d, r)
        # the input may still be reading the last bytes the agent wrote
        wait_for(lambda: len(r.messages) >= len(copy), timeout=10, what="every message read")
        exactly_once(r, copy)
        if len(copy) < 62:
            fail("only %d events" % len(copy))
        w = [m for m in r.messages if m.get("_esxwatch_rule") == "warn_line"]
        eq(len(w), 1, "the known-error line's alert")
        eq((w[0]["level"], w[0]["host"], w[0]["_esxwatch_severity"]), (4, "esx01", "warning"),
           "level = syslog warning, host")
        if not w[0]["short_message"].startswith(sinkutil.LOG_TEXT.split("\n")[0]):
            fail("short_message %r" % w[0]["short_message"][:200])
        # --status per destination, as for every sink
        a = Agent(d, open(os.path.join(d, "agent.yaml")).read())
        rc, st, _ = a.run("--status", "--json")
        dest = {x["name"]: x for x in json.loads(st)["destinations"]}["server"]
        eq((dest["sent_events"], dest["backlog_events"], dest["dropped_poison"]),
           (len(copy), 0, 0), "--status: sent, backlog, dropped")


def test_tls(d):
    c = certs.make(os.path.join(d, "pki"))
    with GelfInput("tcp", tls=(c.server_crt, c.server_key)) as r:
        copy, err = once(d, r, extra=", ssl: yes, ssl_ca_path: %s" % c.ca, ndisks=10)
        wait_for(lambda: len(r.messages) >= len(copy), timeout=10, what="every message read")
        exactly_once(r, copy)
        if "(tls)" not in err:
            fail("not sent over TLS: %s" % err[-400:])


def test_udp_chunked_plain_and_gzip(d):
    for i, comp in enumerate(("none", "gzip")):
        dd = os.path.join(d, comp)
        os.makedirs(dd)
        with open(os.path.join(dd, "big.txt"), "w") as f:
            # incompressible: chunked even with gzip
            f.write("2026-11-30T10:00:09.000Z big " + os.urandom(1500).hex() + "\n")
        with GelfInput("udp") as r:
            copy, _ = once(dd, r, extra=", transport: udp, ssl: no, max_message_size: 480, "
                                        "compress: %s" % comp, ndisks=20)
            wait_for(lambda: len(r.messages) >= len(copy), timeout=10, what="every datagram")
            exactly_once(r, copy)
            if r.chunked == 0:
                fail("%s: no message was chunked at 480 bytes" % comp)


def test_closed_between_batches_noticed_before_the_next_write(d):
    h = sinkutil.make_host(d, ndisks=5)
    with GelfInput("tcp", idle_close=0.4) as r:
        out, servers = copy_conf(d)
        a = Agent(d, sinkutil.config(h, server(r), servers=servers))
        a.start()
        try:
            wait_for(lambda: r.connections >= 3 and len(harness.file_events(out)) >= 15,
                     timeout=30, what="three connections")
            copy = wait_for(lambda: (lambda c: c if sorted(key(flat(m)) for m in r.messages)
                                     == sorted(map(key, c)) else None)(harness.file_events(out)),
                            timeout=15, what="every event through the closed connections")
        finally:
            a.stop()
        if r.violations:
            fail("input violations: %s" % r.violations[:5])
        keys = [key(flat(m)) for m in r.messages]
        eq(len(keys), len(set(keys)), "no message twice")
        if len(copy) < 15:
            fail("only %d events" % len(copy))


def test_closed_mid_batch_resends_the_batch(d):
    with GelfInput("tcp", close_after=20) as r:
        copy, err = once(d, r, ndisks=1500)
        wait_for(lambda: len({key(flat(m)) for m in r.messages}) >= len(copy), timeout=20,
                 what="every event")
        eq(r.closed_mid_batch, 1, "connections closed in the middle of a batch")
        if r.violations:
            fail("input violations: %s" % r.violations[:5])
        got = [key(flat(m)) for m in r.messages]
        eq(set(got), set(map(key, copy)), "every event arrived")
        first = [m for m in r.messages if m["_conn"] == 1]
        if len(got) - len(copy) > len(first):
            fail("%d duplicates, more than the %d messages of the closed connection"
                 % (len(got) - len(copy), len(first)))
        if "sending to 127.0.0.1" not in err and "closed" not in err:
            fail("the broken connection was not logged: %s" % err[-500:])


def test_outage_of_20s_loses_nothing(d):
    h = sinkutil.make_host(d, ndisks=20)
    fl, rules = sinkutil.logwatch(d)
    log = os.path.join(d, "logs", "test.log")
    with GelfInput("tcp") as r:
        out, servers = copy_conf(d)
        cfg = sinkutil.config(h, server(r), servers=servers, filelog=fl, extra=rules)
        a = Agent(d, cfg.replace("vsan: {enabled: yes, interval: 1}",
                                 "vsan: {enabled: yes, interval: 3600}"))
        a.start()
        try:
            wait_for(lambda: len(r.messages) >= 21, timeout=20, what="the first events")
            time.sleep(0.5)   # let the input read what it was sent before it goes away
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
                    sorted(key(flat(m)) for m in r.messages) == sorted(map(key, copy))
            wait_for(caught_up, timeout=25, what="every event after the outage")
        finally:
            a.stop()
        if r.violations:
            fail("input violations: %s" % r.violations[:5])


harness.main(globals())
