"""The daemon's life: command line, SIGTERM, SIGHUP reload, its own log.
Runs the real binary with the nic collector on a simulated ESXi host."""
import json
import os
import re
import signal
import stat
import time

import harness
from harness import Agent, FakeHost, eq, fail, wait_for

NIC_LIST = "esxi-network-nic-list"


def make_host(d):
    h = FakeHost(os.path.join(d, "host"))
    h.set_both("network nic list", fixture="esxi/esxcli-network-nic-list/esxi90-vmxnet3.txt")
    h.set_both("network nic stats get -n vmnic0",
               fixture="esxi/esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt")
    return h


def config(h, out, extra=""):
    return ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "server: {proto: file, path: %s}\n"
            "batch: {flush_interval: 1}\n"
            "collectors:\n"
            "  nic: {enabled: yes, interval: 1}\n"
            "  datastore: {enabled: no}\n  vsan: {enabled: no}\n  smart: {enabled: no}\n"
            "  agent: {enabled: no}\n"
            "filelog: {}\n%s" % (h.tools_dir, out, extra))


read_events = harness.file_events


def test_version_and_help(d):
    a = Agent(d, "filelog: {}\n")
    rc, out, _ = a.run("-V")
    eq(rc, 0, "-V status")
    if not out.startswith("esxwatch "):
        fail("-V printed %r" % out)
    rc, out, _ = a.run("--help")
    eq(rc, 0, "--help status")
    for opt in ("--once", "--check-config", "--print-config", "-c"):
        if opt not in out:
            fail("--help does not mention %s" % opt)
    rc, _, err = a.run("--no-such-option")
    eq(rc, 2, "unknown option status")


def test_sigterm_flushes_and_exits_zero(d):
    h = make_host(d)
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, config(h, out))
    a.start()
    wait_for(lambda: len(read_events(out)) >= 2, what="nic samples")
    t0 = time.time()
    rc = a.stop()
    eq(rc, 0, "exit status after SIGTERM")
    if time.time() - t0 > 7:
        fail("SIGTERM took %.1fs (flush is bounded by 5 s)" % (time.time() - t0))
    evs = read_events(out)
    for e in evs:
        eq(e.get("hostname"), "esx01", "hostname")
        eq(e.get("esxwatch_collector"), "nic", "collector")
        eq(e.get("appname"), "esxwatch", "appname")
    st = os.stat(out)
    eq(stat.S_IMODE(st.st_mode), 0o600, "output file mode")


def test_sighup_reload_keeps_running_and_applies(d):
    h = make_host(d)
    out1 = os.path.join(d, "out1.jsonl")
    out2 = os.path.join(d, "out2.jsonl")
    a = Agent(d, config(h, out1, "tags: {site: one}\n"))
    a.start()
    wait_for(lambda: read_events(out1), what="events before reload")
    # A broken configuration is rejected; the agent keeps going.
    a.write_config(config(h, out2, "tags: {site: two}\nbogus_key: 1\n"))
    a.signal(signal.SIGHUP)
    time.sleep(2.5)
    if a.proc.poll() is not None:
        fail("agent died on a bad reload")
    if os.path.exists(out2):
        fail("a rejected configuration was applied")
    wait_for(lambda: "rejected" in a.stderr_text(), what="log line about the rejected config")
    n1 = len(read_events(out1))
    wait_for(lambda: len(read_events(out1)) > n1, timeout=10,
             what="collection to go on after a rejected reload")
    # A good one takes over.
    a.write_config(config(h, out2, "tags: {site: two}\n"))
    a.signal(signal.SIGHUP)
    wait_for(lambda: read_events(out2), what="events after reload")
    eq(a.stop(), 0, "exit status")
    evs = read_events(out2)
    eq(evs[-1].get("site"), "two", "tag after reload")
    for e in read_events(out1):
        eq(e.get("site"), "one", "tag before reload")


def hung_datastore_agent(d):
    """nic every second, and a datastore collector whose first tool hangs
    for longer than its 30 s timeout."""
    h = make_host(d)
    h.set_both("storage core device list", text="", sleep=1000)
    out = os.path.join(d, "out.jsonl")
    cfg = config(h, out).replace("  datastore: {enabled: no}\n",
                                 "  datastore: {enabled: yes, interval: 1, timeout: 30}\n")
    return h, out, Agent(d, cfg)


def test_hung_tool_delays_nobody_and_not_the_stop(d):
    """Each collector has its own thread: a tool that hangs for its whole
    timeout (here: the datastore collector's device list) neither delays the
    nic samples nor SIGTERM."""
    h, out, a = hung_datastore_agent(d)
    a.start()
    wait_for(lambda: any("storage core device list" in c for c in h.calls()),
             what="the datastore collector to call the hanging tool")
    t_hang = time.time()
    time.sleep(5)
    stamps = sorted(e["timestamp"] / 1000.0 for e in read_events(out)
                    if e.get("esxwatch_collector") == "nic" and e["timestamp"] / 1000.0 >= t_hang - 1)
    if len(stamps) < 4:
        fail("only %d nic samples in the 5 s while another collector's tool hung" % len(stamps))
    gap = max(b - a_ for a_, b in zip(stamps, stamps[1:]))
    if gap > 2.5:
        fail("nic samples %.1f s apart while another collector's tool hung" % gap)
    t0 = time.time()
    eq(a.stop(), 0, "exit status")
    if time.time() - t0 > 3:
        fail("SIGTERM took %.1f s with a hung tool (it must not wait for the tool's timeout)"
             % (time.time() - t0))
    # The query the stop cut short did not fail: no error event says it did.
    bad = [e for e in read_events(out) if e.get("esxwatch_collector") == "datastore"
           and e.get("esxwatch_kind") in ("status", "alert")]
    if bad:
        fail("a stop reported the cancelled tool as a failure: %r" % bad[0].get("text"))


def test_logging_file(d):
    h = make_host(d)
    out = os.path.join(d, "out.jsonl")
    log = os.path.join(d, "agent.log")
    a = Agent(d, config(h, out, "logging: {file: %s, debug_level: 1}\n" % log))
    rc, _, err = a.run("--once")
    eq(rc, 0, "--once status")
    with open(log) as f:
        text = f.read()
    if "started" not in text:
        fail("agent log has no start line: %r" % text[:300])
    if "debug:" not in text:
        fail("debug_level 1 logged no debug line")
    eq(stat.S_IMODE(os.stat(log).st_mode), 0o600, "log file mode")
    if "started" in err:
        fail("log lines went to stderr although logging.file is set")


def test_once_exit_status_and_stdout_default(d):
    h = make_host(d)
    cfg = config(h, "x").replace("server: {proto: file, path: x}\n", "")
    a = Agent(d, cfg)
    rc, evs, err = a.once()
    eq(rc, 0, "--once status (stderr: %s)" % err[-500:])
    if not harness.select(evs, esxwatch_nic="vmnic0", esxwatch_kind="sample"):
        fail("no vmnic0 sample on stdout: %r" % evs[:2])


def test_once_exit_1_when_the_destination_rejects(d):
    """--once exits 0 only if every event was delivered; events a
    server rejects (HTTP 400) and that are dropped as poison are not."""
    import http.server
    import threading

    class Reject(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Reject)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        h = make_host(d)
        cfg = config(h, "x").replace(
            "server: {proto: file, path: x}\n",
            "server: {hostname: 127.0.0.1, proto: http, port: %d, ssl: no}\n" % srv.server_port)
        a = Agent(d, cfg)
        rc, _, err = a.run("--once")
        eq(rc, 1, "--once status when every event was rejected")
        if "rejected" not in err:
            fail("no log line says events were rejected: %r" % err[-400:])
    finally:
        srv.shutdown()


def test_tags_cannot_replace_the_agents_fields(d):
    """hostname and esxwatch_collector are the agent's: a filelog tag of
    that name does not replace them."""
    logs = os.path.join(d, "logs")
    os.makedirs(logs)
    with open(os.path.join(logs, "vobd.log"), "w") as f:
        f.write("2023-05-08T07:45:35.567Z: [vmfsCorrelator] 1234us: [esx.problem.storage.apd.start] "
                "Device or filesystem with identifier [naa.600508b1001c3a9b] has entered the "
                "All Paths Down state.\n")
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, "host: {hostname: esx01}\n"
                 "storage: {directory: @STORAGE@}\n"
                 "server: {proto: file, path: %s}\n"
                 "collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no},\n"
                 "  smart: {enabled: no}, agent: {enabled: no}}\n"
                 "filelog:\n  vobd: {directory: %s, include: vobd.log, read_from_head: yes,\n"
                 "    tags: {hostname: fake, esxwatch_collector: mine, site: lab}}\n" % (out, logs))
    rc, _, err = a.run("--once")
    eq(rc, 0, "--once status (%s)" % err[-300:])
    evs = read_events(out)
    if not evs:
        fail("no event from the vobd line")
    for e in evs:
        eq(e.get("hostname"), "esx01", "hostname")
        eq(e.get("esxwatch_collector"), "logwatch", "esxwatch_collector")
        eq(e.get("site"), "lab", "an ordinary filelog tag")


def test_rule_captures_never_replace_the_agents_fields(d):
    """A capture named like one of the agent's own fields (kind, severity,
    file, rule) does not replace it; other captures become fields."""
    logs = os.path.join(d, "logs")
    os.makedirs(logs)
    log = os.path.join(logs, "hostd.log")
    with open(log, "w") as f:
        f.write("2023-05-08T07:45:35.567Z In(166) Hostd[2099421]: [Originator@6876 sub=IoTracker] "
                "In thread 2099500, fopen(\"/vmfs/volumes/ds1/vm1/vm1.vmx\") took over 1236 sec.\n")
        f.write("2023-05-08T07:45:36.000Z In(166) Hostd[2099421]: custom banana whatever x.log\n")
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, "storage: {directory: @STORAGE@}\n"
                 "server: {proto: file, path: %s}\n"
                 "collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no},\n"
                 "  smart: {enabled: no}, agent: {enabled: no}}\n"
                 "filelog:\n  hostd: {directory: %s, include: hostd.log, read_from_head: yes}\n"
                 "rules:\n  - name: clash\n"
                 "    regex: 'custom (?<kind>[a-z]+) (?<severity>[a-z]+) (?<file>[a-z.]+)'\n"
                 "    severity: error\n" % (out, logs))
    rc, _, err = a.run("--once")
    eq(rc, 0, "--once status (%s)" % err[-300:])
    evs = read_events(out)
    stall = harness.select(evs, esxwatch_rule="io_tracker_stall")
    eq(len(stall), 1, "io_tracker_stall alerts")
    eq(stall[0].get("esxwatch_file"), log, "esxwatch_file is the log's path")
    eq(stall[0].get("esxwatch_datastore_file"), "/vmfs/volumes/ds1/vm1/vm1.vmx", "captured file")
    clash = harness.select(evs, esxwatch_rule="clash")
    eq(len(clash), 1, "alerts of the clashing rule")
    eq(clash[0].get("esxwatch_kind"), "alert", "esxwatch_kind")
    eq(clash[0].get("esxwatch_severity"), "error", "esxwatch_severity")
    eq(clash[0].get("esxwatch_file"), log, "esxwatch_file")


def hung_server():
    """A server that accepts connections and never answers: (socket, the
    connections it accepted so far)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    conns = []

    def accept():
        while True:
            try:
                conns.append(srv.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    return srv, conns


def test_hung_server_holds_up_neither_reload_nor_sigterm(d):
    """A destination that accepted the connection and never answers (its
    send hangs for the sink's whole 30 s timeout) delays neither a SIGHUP
    reload nor SIGTERM (flush bounded by 5 s); the other destination keeps
    getting events."""
    srv, conns = hung_server()
    try:
        h = make_host(d)
        out = os.path.join(d, "out.jsonl")
        cfg = config(h, out, "servers:\n  hung: {hostname: 127.0.0.1, proto: http, port: %d, "
                     "ssl: no}\n" % srv.getsockname()[1])
        a = Agent(d, cfg)
        a.start()
        wait_for(lambda: conns, what="the agent to connect to the hung server")
        time.sleep(1.5)     # its first request is in flight now
        t0 = time.time()
        a.signal(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in a.stderr_text(), timeout=30,
                 what="the reload to finish")
        if time.time() - t0 > 3:
            fail("SIGHUP took %.1f s with a hung server" % (time.time() - t0))
        n = len(read_events(out))
        wait_for(lambda: len(read_events(out)) > n, timeout=5,
                 what="events to the file destination after the reload")
        time.sleep(1.5)
        t0 = time.time()
        eq(a.stop(timeout=60), 0, "exit status")
        if time.time() - t0 > 7:
            fail("SIGTERM took %.1f s with a hung server (flush is bounded by 5 s)"
                 % (time.time() - t0))
    finally:
        srv.close()
        for c in conns:
            c.close()


def _proc_fds_rss(pid):
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/status" % pid) as f:
        rss = [int(l.split()[1]) for l in f if l.startswith("VmRSS:")][0]
    return fds, rss


def test_reloads_during_a_hung_send_release_everything(d):
    """20 reloads while a destination's send hangs: each reload leaves that
    send behind, and once the sink's timeout has passed every abandoned
    send has released its connection and memory (fds and RSS back to the
    baseline of one hung send)."""
    srv, conns = hung_server()
    try:
        h = make_host(d)
        out = os.path.join(d, "out.jsonl")
        # small batches: a backlog bigger than one batch is sent at once
        # after each reload (no waiting for a batch to fill)
        cfg = config(h, out, "servers:\n  hung: {hostname: 127.0.0.1, proto: http, port: %d, "
                     "ssl: no, timeout: 4}\n" % srv.getsockname()[1])
        cfg = cfg.replace("batch: {flush_interval: 1}", "batch: {flush_interval: 1, max_events: 5}")
        a = Agent(d, cfg)
        a.start()
        wait_for(lambda: conns, what="the agent to connect to the hung server")
        time.sleep(1)       # its first request is in flight now
        fds0, rss0 = _proc_fds_rss(a.proc.pid)
        for i in range(20):
            n = len(conns)
            a.signal(signal.SIGHUP)
            # the new shipper's send hangs too before the next reload
            wait_for(lambda: len(conns) > n, timeout=10, what="reconnect after reload %d" % i)
            time.sleep(0.1)
        wait_for(lambda: a.stderr_text().count("configuration reloaded") >= 20, timeout=30,
                 what="20 reloads")
        fds1, _ = _proc_fds_rss(a.proc.pid)
        if fds1 < fds0 + 3:
            fail("the reloads left no send behind (fds %d -> %d): the test proves nothing"
                 % (fds0, fds1))

        last = [fds1, 0]

        def released():
            last[:] = _proc_fds_rss(a.proc.pid)
            return last[0] <= fds0 + 2 and last[1] <= rss0 + 3072
        # the abandoned sends time out 4 s after they started
        try:
            wait_for(released, timeout=8, what="fds and RSS back to the baseline")
        except AssertionError:
            fail("fds %d -> %d -> %d, RSS %d kB -> %d kB: not released"
                 % (fds0, fds1, last[0], rss0, last[1]))
        eq(a.stop(timeout=60), 0, "exit status")
    finally:
        srv.close()
        for c in conns:
            c.close()


def test_sigterm_stops_once_with_a_hung_tool(d):
    """SIGTERM during --once cancels the tool it waits on and exits at
    once (1: not everything was collected), not after the tool's 30 s
    timeout; what was collected before is delivered."""
    import subprocess

    h, out, a = hung_datastore_agent(d)
    p = subprocess.Popen([harness.BIN, "-c", a.config, "--once"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: any("storage core device list" in c for c in h.calls()),
                 what="--once to call the hanging tool")
        t0 = time.time()
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(20)
        except subprocess.TimeoutExpired:
            fail("--once still running 20 s after SIGTERM")
        if time.time() - t0 > 7:
            fail("--once took %.1f s to stop after SIGTERM" % (time.time() - t0))
        eq(rc, 1, "--once status when stopped early")
        if not harness.select(read_events(out), esxwatch_collector="nic"):
            fail("the nic events collected before SIGTERM were not delivered")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_sixty_four_destinations_all_delivered_a_65th_refused(d):
    """64 destinations (server and 63 servers): the last gets every event
    too.  A 65th is a configuration error at its name, not a silent drop
    (each destination costs a thread and a connection)."""
    h = make_host(d)
    outs = [os.path.join(d, "out%d.jsonl" % i) for i in range(64)]
    servers = "servers:\n" + "".join("  d%d: {proto: file, path: %s}\n" % (i, o)
                                     for i, o in enumerate(outs))
    cut = servers.rindex("  d63:")
    a = Agent(d, config(h, os.path.join(d, "primary.jsonl"), servers[:cut]))
    rc, _, err = a.run("--once")
    eq(rc, 0, "--once status (%s)" % err[-300:])
    want = len(read_events(os.path.join(d, "primary.jsonl")))
    if want == 0:
        fail("no event at the primary destination")
    for o in outs[:63]:
        eq(len(read_events(o)), want, "events at %s" % os.path.basename(o))
    a.write_config(config(h, os.path.join(d, "primary.jsonl"), servers))
    rc, _, err = a.run("--check-config")
    eq(rc, 2, "--check-config with 65 destinations")
    with open(a.config) as f:
        line = f.read().splitlines().index("  d63: {proto: file, path: %s}" % outs[63]) + 1
    want_err = "%s:%d:3: servers: 'd63' would be destination 65; at most 64" % (a.config, line)
    if want_err not in err:
        fail("no error %r in %r" % (want_err, err[-500:]))


def test_backlog_of_large_events_is_not_sent_one_batch_a_second(d):
    """A batch cut by batch.max_bytes while more events wait is sent at
    once: flush_interval is for letting a small batch fill up, not a pause
    between the batches of a backlog."""
    logs = os.path.join(d, "logs")
    os.makedirs(logs)
    n = 1500
    with open(os.path.join(logs, "hostd.log"), "w") as f:
        for i in range(n):
            f.write("2023-05-08T07:45:35.567Z In(166) Hostd[2099421]: line %05d %s\n"
                    % (i, "x" * 3000))
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, "storage: {directory: @STORAGE@}\n"
                 "server: {proto: file, path: %s}\n"
                 "batch: {flush_interval: 2}\n"
                 "collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no},\n"
                 "  smart: {enabled: no}, agent: {enabled: no}}\n"
                 "filelog:\n  hostd: {directory: %s, include: hostd.log, read_from_head: yes,\n"
                 "    forward: all}\n" % (out, logs))
    a.start()
    wait_for(lambda: os.path.exists(out) and os.path.getsize(out) > 0, what="the first events")
    t0 = time.time()
    wait_for(lambda: len(read_events(out)) >= n, timeout=60, what="all %d lines" % n)
    took = time.time() - t0
    eq(a.stop(), 0, "exit status")
    # ~5 batches of 1 MB; only the last, partial one waits flush_interval
    if took > 5.5:
        fail("%d lines of 3 KB took %.1f s after the first batch (one batch per "
             "flush_interval?)" % (n, took))


def agent_status_events(path):
    return [e for e in read_events(path)
            if e.get("esxwatch_collector") == "agent" and e.get("esxwatch_kind") == "status"]


def test_sent_events_keep_counting_across_three_sighups(d):
    """esxwatch_sent_events is "since start" (docs/events.md): a reload
    replaces the shipper, not the figures."""
    h = make_host(d)
    out = os.path.join(d, "out.jsonl")
    text = config(h, out).replace("  agent: {enabled: no}\n", "  agent: {enabled: yes, interval: 1}\n")
    a = Agent(d, text)
    a.start()
    wait_for(lambda: any(int(e["esxwatch_sent_events"]) > 0 for e in agent_status_events(out)),
             timeout=20, what="an agent status event with events sent")
    last = max(int(e["esxwatch_sent_events"]) for e in agent_status_events(out))
    first = last
    for i in range(1, 4):
        a.signal(signal.SIGHUP)
        wait_for(lambda: a.stderr_text().count("configuration reloaded") >= i, timeout=20,
                 what="reload %d" % i)
        seen = len(agent_status_events(out))
        # two status events after the reload: the second is surely built
        # by the collectors started with the new shipper
        wait_for(lambda: len(agent_status_events(out)) >= seen + 2, timeout=20,
                 what="agent status events after reload %d" % i)
        for e in agent_status_events(out)[seen:]:
            v = int(e["esxwatch_sent_events"])
            if v < last:
                fail("esxwatch_sent_events went from %d to %d after reload %d" % (last, v, i))
            last = v
    eq(a.stop(), 0, "exit status")
    if last <= first:
        fail("esxwatch_sent_events did not grow over 3 reloads (%d -> %d)" % (first, last))
    print("sent_events: %d before the reloads, %d after 3 reloads" % (first, last))


def parse_text_status(text):
    """The figures of --status's text: per destination (sent, backlog)."""
    dests, cur = {}, None
    for line in text.splitlines():
        if line.startswith("destination "):
            cur = line.split()[1]
            dests[cur] = {"state": line.split("): ", 1)[1]}
        elif cur and line.strip().startswith("sent:"):
            dests[cur]["sent_events"] = int(line.split()[1])
        elif cur and line.strip().startswith("backlog:"):
            dests[cur]["backlog_events"] = int(line.split()[1])
    return dests


def test_status_without_the_agent_collector_and_as_json(d):
    """The status file is main's, not the agent collector's: with
    collectors.agent disabled --status still reports; --status --json says
    the same as one JSON object."""
    h = make_host(d)
    out = os.path.join(d, "out.jsonl")
    servers = "servers:\n  backup: {proto: file, path: %s}\n" % os.path.join(d, "backup.jsonl")
    a = Agent(d, config(h, out, servers))       # agent: {enabled: no}
    a.start()
    status_file = os.path.join(a.storage, "status")
    wait_for(lambda: os.path.exists(status_file), timeout=10, what="the status file")
    wait_for(lambda: len(read_events(out)) >= 2, what="nic samples")
    rc, text, _ = a.run("--status")
    eq(rc, 0, "--status while running")
    if "running (pid %d)" % a.proc.pid not in text:
        fail("--status does not say running: %r" % text[:300])
    rc, js, _ = a.run("--status", "--json")
    eq(rc, 0, "--status --json while running")
    j = json.loads(js)
    eq(j["running"], True, "running")
    eq(j["pid"], a.proc.pid, "pid")
    eq(a.stop(), 0, "exit status")
    # stopped: both read the same last picture
    rc, text, _ = a.run("--status")
    eq(rc, 3, "--status once stopped")
    rc2, js, _ = a.run("--status", "--json")
    eq(rc2, 3, "--status --json once stopped")
    j = json.loads(js)
    eq(j["running"], False, "running once stopped")
    if "NOT running" not in text:
        fail("--status once stopped: %r" % text[:200])
    td = parse_text_status(text)
    eq(sorted(td), ["backup", "server"], "destinations in the text")
    eq([x["name"] for x in j["destinations"]], ["server", "backup"], "destinations in JSON")
    for x in j["destinations"]:
        eq(x["state"], td[x["name"]]["state"], "state of %s" % x["name"])
        eq(x["sent_events"], td[x["name"]]["sent_events"], "sent of %s" % x["name"])
        eq(x["backlog_events"], td[x["name"]]["backlog_events"], "backlog of %s" % x["name"])
    # the last picture is taken before the stop's drain: at most what arrived
    sent = j["destinations"][0]["sent_events"]
    if not 2 <= sent <= len(read_events(out)):
        fail("server: %d sent, %d lines written" % (sent, len(read_events(out))))
    m = re.search(r"spool: on disk, (\d+) events \((\d+) bytes\) queued", text)
    if m is None:
        fail("no spool line in %r" % text)
    eq(j["spool"], "disk", "spool")
    eq(j["queued_events"], int(m.group(1)), "queued_events")
    eq(j["queued_bytes"], int(m.group(2)), "queued_bytes")
    eq(j["sent_events"], sum(x["sent_events"] for x in j["destinations"]), "sent_events total")


def status_line(a, prefix):
    """The --status line that starts with prefix, or None."""
    _, text, _ = a.run("--status")
    return next((l for l in text.splitlines() if l.startswith(prefix)), None)


def test_never_delivered_then_delivering(d):
    """A destination nobody listens on says "never delivered" with the
    reason, in the text and the JSON; once a receiver appears and the
    events arrive, "delivering"."""
    import http.server
    import socket
    import threading

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    h = make_host(d)
    cfg = config(h, "x").replace("server: {proto: file, path: x}\n",
                                 "server: {hostname: 127.0.0.1, proto: http, port: %d, ssl: no, "
                                 "compress: none}\n" % port)
    a = Agent(d, cfg)
    a.start()
    head = "destination server (http): "
    line = wait_for(lambda: status_line(a, head + "never delivered ("), timeout=20,
                    what="--status: never delivered")
    if "127.0.0.1:%d" % port not in line or not line.endswith(")"):
        fail("never delivered without the reason: %r" % line)
    _, js, _ = a.run("--status", "--json")
    dj = json.loads(js)["destinations"][0]
    eq((dj["state"], dj["never_delivered"], dj["summary"]), ("failing", True, line[len(head):]),
       "--status --json of a destination that never delivered")
    got = []

    class Ok(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", port), Ok)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        wait_for(lambda: got, timeout=30, what="events at the receiver")
        wait_for(lambda: status_line(a, head + "delivering"), timeout=20, what="--status: delivering")
        eq(a.stop(), 0, "exit status")
    finally:
        srv.shutdown()
        srv.server_close()
    if b"vmnic0" not in b"".join(got):
        fail("no vmnic0 event received")


def test_daemon_without_destination_says_so(d):
    """A daemon that is not on a terminal and not on ESXi, with no
    destination: stdout, a warning at start, and --status says it."""
    cfg = ("host: {platform: linux}\nstorage: {directory: @STORAGE@}\n"
           "collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no}, "
           "smart: {enabled: no}, agent: {enabled: yes, interval: 1}}\nfilelog: {}\n")
    a = Agent(d, cfg)
    a.start()
    wait_for(lambda: a.stdout_events(), timeout=20, what="events on stdout")
    line = wait_for(lambda: status_line(a, "no destination configured"), timeout=20,
                    what="--status: no destination")
    eq(line, "no destination configured: events are written to standard output", "--status line")
    _, js, _ = a.run("--status", "--json")
    eq(json.loads(js)["no_destination"], "stdout", "no_destination in --status --json")
    eq(a.stop(), 0, "exit status")
    warn = [l for l in a.stderr_text().splitlines() if "no destination configured" in l]
    if len(warn) != 1 or ": warning: " not in warn[0] or "server.hostname" not in warn[0]:
        fail("no single start warning naming server.hostname: %r" % warn)


harness.main(globals())
