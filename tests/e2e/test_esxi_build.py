"""The ESXi build (`make esxi`, build/esxi/esxwatch) end to end: a fully
static 64-bit binary, whose own system calls stay inside
packaging/esxi-build/syscalls.allow, that speaks TLS with its own OpenSSL
(test CA, IP SAN, wrong CA refused), resolves names through /etc/hosts with
musl's resolver, reports UTC whatever TZ says, and stays small.

The binary under test is build/esxi/esxwatch (ESXWATCH_ESXI_BIN overrides),
whatever ESXWATCH_BIN says: the other end-to-end tests run against it when
tests/run-all.sh is given ESXWATCH_BIN=build/esxi/esxwatch.
"""
import calendar
import glob
import gzip
import http.client
import http.server
import os
import re
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness  # noqa: E402
from harness import FakeHost, Agent, eq, fail  # noqa: E402
import certs  # noqa: E402
import receivers  # noqa: E402

STATIC = os.path.abspath(os.environ.get(
    "ESXWATCH_ESXI_BIN", os.path.join(harness.TOP, "build", "esxi", "esxwatch")))
ALLOW = os.path.join(harness.TOP, "packaging", "esxi-build", "syscalls.allow")
# Named in the failure message when seen: the calls VMkernel is known or
# likely to lack (Go dies on epoll_pwait there) -- never allowed.
DENY_RE = re.compile(r"^(epoll_.*|statx|getrandom|clone3|io_uring_.*|memfd_create|"
                     r"pidfd_.*|rseq|close_range|copy_file_range)$")
MAX_STRIPPED = 4 * 1024 * 1024
NIC_LIST = "esxi/esxcli-network-nic-list/esxi90-vmxnet3.txt"
NIC_STATS = "esxi/esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt"

# Point harness.Agent at the static binary.
harness.BIN = STATIC


def fixture(rel):
    with open(os.path.join(harness.FIXTURES, rel)) as f:
        return f.read()


def esxi_host(d):
    """A simulated ESXi host with one NIC (vmnic0) whose counters are known."""
    host = FakeHost(os.path.join(d, "host"))
    host.set_both("network nic list", text=fixture(NIC_LIST))
    host.set_both("network nic stats get -n vmnic0",
                  text=fixture(NIC_STATS).replace("vmnic2", "vmnic0"))
    return host


def config(host, server):
    return ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: \"@STORAGE@\"}\n"
            "server: %s\n"
            "collectors:\n"
            "  nic: {enabled: yes, interval: 60}\n"
            "  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
            "  smart: {enabled: no}\n  agent: {enabled: no}\n"
            "filelog: {}\n" % (host.tools_dir, server))


def nic_samples(events):
    return [e for e in events if e.get("esxwatch_collector") == "nic"
            and e.get("esxwatch_kind") == "sample" and e.get("esxwatch_nic") == "vmnic0"]


def once(agent, env=None, timeout=60):
    rc, out, err = agent.run("--once", timeout=timeout, env=env)
    return rc, out, err


def test_static_64bit_elf_under_4mb(d):
    if not os.path.exists(STATIC):
        fail("%s not built (make esxi)" % STATIC)
    f = subprocess.run(["file", "-b", STATIC], capture_output=True, text=True).stdout
    for want in ("ELF 64-bit", "x86-64", "statically linked"):
        if want not in f:
            fail("file says %r, want %r in it" % (f.strip(), want))
    hdr = subprocess.run(["readelf", "-lW", STATIC], capture_output=True, text=True).stdout
    if "INTERP" in hdr:
        fail("has a PT_INTERP segment (needs a dynamic loader)")
    dyn = subprocess.run(["readelf", "-dW", STATIC], capture_output=True, text=True).stdout
    if "no dynamic section" not in dyn:
        fail("has a dynamic section: %s" % dyn[:200])
    size = os.path.getsize(STATIC)
    stripped = "not stripped" not in f
    if stripped and size >= MAX_STRIPPED:
        fail("%d bytes stripped, target < %d" % (size, MAX_STRIPPED))
    p = subprocess.run([STATIC, "-V"], capture_output=True, text=True, timeout=10)
    eq(p.returncode, 0, "-V exit status")
    if "esxwatch" not in p.stdout + p.stderr:
        fail("-V printed %r" % (p.stdout + p.stderr))
    print("    %s: %d bytes%s" % (os.path.relpath(STATIC, harness.TOP), size,
                                  " stripped" if stripped else ""))


def load_allowlist():
    allow = set()
    with open(ALLOW) as f:
        for line in f:
            line = line.split("#", 1)[0]
            allow.update(line.split())
    return allow


SYSCALL_RE = re.compile(r"^(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)")
CHILD_RE = re.compile(r"^(?:<\.\.\. )?(clone|clone3|fork|vfork)\b.*= (\d+)$")


def agent_syscalls(prefix, binary):
    """From `strace -ff -o prefix` files: the system calls the agent's own
    code made -- the main process, its threads, and its forked children up to
    and including their execve.  What a fake tool (/bin/sh) and its children
    do after the exec is not ours and is not counted.  Returns
    {syscall: count}."""
    files = {}
    for f in glob.glob(prefix + ".*"):
        pid = f.rsplit(".", 1)[1]
        if pid.isdigit():
            with open(f, errors="replace") as fh:
                files[int(pid)] = fh.read().splitlines()
    main = None
    for pid, lines in sorted(files.items()):
        if lines and lines[0].startswith("execve(") and binary in lines[0]:
            main = pid
            break
    if main is None:
        fail("no trace of the agent's own process among %d files" % len(files))
    counts = {}
    todo = [(main, True)]
    seen = set()
    while todo:
        pid, is_main = todo.pop()
        if pid in seen or pid not in files:
            continue
        seen.add(pid)
        for i, line in enumerate(files[pid]):
            m = SYSCALL_RE.match(line)
            if not m:
                continue
            name = m.group(1)
            counts[name] = counts.get(name, 0) + 1
            c = CHILD_RE.match(line)
            if c:
                todo.append((int(c.group(2)), False))
            # A child's execve ends the agent's part of that process (the
            # main process's first line is strace starting the agent).
            if name == "execve" and not (is_main and i == 0) and " = 0" in line:
                break
    return counts


def test_syscalls_within_allowlist(d):
    """--once with the nic collector (fake esxcli/localcli: fork + exec) and
    a cfapi destination over TLS (libcurl, OpenSSL, sockets, poll), under
    strace; every call the agent itself makes must be in the allowlist."""
    host = esxi_host(d)
    c = certs.make(os.path.join(d, "pki"))
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key)) as r:
        server = ("{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: yes, ssl_ca_path: %s}"
                  % (r.port, c.ca))
        agent = Agent(d, config(host, server))
        prefix = os.path.join(d, "trace", "t")
        os.makedirs(os.path.dirname(prefix))
        p = subprocess.run(["strace", "-f", "-ff", "-qq", "-o", prefix,
                            STATIC, "-c", agent.config, "--once"],
                           capture_output=True, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0:
            fail("--once under strace exit %d: %s" % (p.returncode, err[-600:]))
        if not nic_samples(r.events):
            fail("no nic sample arrived over TLS (%d events)" % len(r.events))
    calls = agent_syscalls(prefix, STATIC)
    allow = load_allowlist()
    for must in ("execve", "poll", "connect"):
        if must not in calls:
            fail("the trace shows no %s: the check did not see the agent work" % must)
    denied = sorted(n for n in calls if DENY_RE.match(n))
    if denied:
        fail("forbidden system calls on ESXi: %s" % ", ".join(denied))
    outside = sorted(n for n in calls if n not in allow)
    if outside:
        fail("system calls outside %s: %s" % (os.path.relpath(ALLOW, harness.TOP),
                                              ", ".join("%s(%d)" % (n, calls[n]) for n in outside)))
    print("    %d distinct system calls: %s" % (len(calls), " ".join(sorted(calls))))


def test_syscalls_daemon_within_allowlist(d):
    """The daemon as it runs on ESXi, under strace: the scheduler's poll()
    loop over two collection rounds, a SIGHUP reload, a GET /metrics from
    the monitor, a SIGTERM stop."""
    host = esxi_host(d)
    out = os.path.join(d, "events.json")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    mport = s.getsockname()[1]
    s.close()
    cfg = config(host, "{proto: file, path: %s}" % out).replace("interval: 60", "interval: 1")
    cfg += "monitor: {listen: \"127.0.0.1:%d\"}\n" % mport
    agent = Agent(d, cfg)
    prefix = os.path.join(d, "trace", "t")
    os.makedirs(os.path.dirname(prefix))
    p = subprocess.Popen(["strace", "-f", "-ff", "-qq", "-o", prefix, STATIC, "-c", agent.config],
                         stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "stderr.log"), "wb"))
    pid = None
    try:
        def child():
            # The agent: strace's child once it has exec'd our binary.
            for e in os.listdir("/proc"):
                if not e.isdigit():
                    continue
                try:
                    with open("/proc/%s/stat" % e) as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    if ppid == p.pid and os.path.realpath("/proc/%s/exe" % e) == os.path.realpath(STATIC):
                        return int(e)
                except (OSError, IndexError, ValueError):
                    continue
            return None
        pid = harness.wait_for(child, timeout=10, what="the agent under strace")

        def samples():
            try:
                return len(nic_samples(harness.file_events(out)))
            except (OSError, AssertionError):
                return 0
        harness.wait_for(lambda: samples() >= 2, timeout=30, what="two nic samples")
        os.kill(pid, signal.SIGHUP)
        n = samples()
        harness.wait_for(lambda: samples() > n, timeout=30, what="a sample after SIGHUP")
        c = http.client.HTTPConnection("127.0.0.1", mport, timeout=10)
        c.request("GET", "/metrics")
        eq(c.getresponse().status, 200, "GET /metrics")
        c.close()
        os.kill(pid, signal.SIGTERM)
        p.wait(timeout=30)
    finally:
        # On a failure, the agent first (strace killed leaves it running).
        if p.poll() is None:
            for victim in (pid, p.pid):
                if victim is not None:
                    try:
                        os.kill(victim, signal.SIGKILL)
                    except OSError:
                        pass
            p.wait()
    calls = agent_syscalls(prefix, STATIC)
    for must in ("poll", "rt_sigaction", "execve", "accept"):
        if must not in calls:
            fail("the trace shows no %s: the check did not see the daemon work" % must)
    denied = sorted(n for n in calls if DENY_RE.match(n))
    if denied:
        fail("forbidden system calls on ESXi: %s" % ", ".join(denied))
    allow = load_allowlist()
    outside = sorted(n for n in calls if n not in allow)
    if outside:
        fail("system calls outside %s: %s" % (os.path.relpath(ALLOW, harness.TOP),
                                              ", ".join("%s(%d)" % (n, calls[n]) for n in outside)))
    print("    %d distinct system calls: %s" % (len(calls), " ".join(sorted(calls))))


def syscall_names():
    """x86-64 system-call number -> name, from the kernel's UAPI header."""
    names = {}
    for h in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
        if os.path.exists(h):
            with open(h) as f:
                for line in f:
                    m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
                    if m:
                        names[int(m.group(2))] = m.group(1)
            break
    return names


def test_no_forbidden_syscall_anywhere_in_the_code(d):
    """The traces above only see the paths the tests take.  This scans the
    whole binary: every `syscall` instruction and every call of musl's
    syscall()/__syscall_cp() whose number is an immediate (most of them),
    and fails if one of them is a forbidden call -- an error path or a
    library function the tests never reach included."""
    target = STATIC + ".debug" if os.path.exists(STATIC + ".debug") else STATIC
    names = syscall_names()
    if not names:
        fail("no asm/unistd_64.h to name system calls (linux-libc-dev)")
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", target],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    sites = resolved = 0
    found = {}
    window = []
    for line in dis:
        if line.endswith(">:"):
            window = []
            continue
        parts = line.split("\t")
        if len(parts) < 2 or not parts[0].strip().endswith(":"):
            continue
        ins = parts[-1].strip()
        reg = None
        if ins == "syscall":
            reg = "ax"
        elif re.match(r"call\s+[0-9a-f]+ <(syscall|__syscall_cp)>$", ins):
            reg = "di"
        if reg is not None:
            sites += 1
            for prev in reversed(window[-12:]):
                m = re.match(r"mov\s+\$0x([0-9a-f]+),%[er]" + reg + "$", prev)
                if m:
                    n = int(m.group(1), 16)
                    found[names.get(n, "#%d" % n)] = found.get(names.get(n, "#%d" % n), 0) + 1
                    resolved += 1
                    break
                if re.search(r",%[er]?" + reg + "$", prev) or prev.startswith("call"):
                    break
        window.append(ins)
    if sites == 0 or resolved < sites // 2:
        fail("only %d of %d system-call sites resolved: the scan is not working" % (resolved, sites))
    denied = sorted(n for n in found if DENY_RE.match(n))
    if denied:
        fail("forbidden system calls in the code: %s" % ", ".join(denied))
    other = sorted(n for n in found if n not in load_allowlist())
    print("    %d sites, %d resolved; linked in but not in the allowlist (never seen "
          "in the runs): %s" % (sites, resolved, " ".join(other) or "none"))


def test_tls_cfapi_test_ca_ip_san(d):
    """The static binary's OpenSSL checks the chain against ssl_ca_path and
    the IP SAN of https://127.0.0.1 (mbedTLS 2.28 could not)."""
    host = esxi_host(d)
    c = certs.make(os.path.join(d, "pki"))
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key)) as r:
        agent = Agent(d, config(host, "{hostname: 127.0.0.1, proto: cfapi, port: %d, "
                                      "ssl: yes, ssl_ca_path: %s}" % (r.port, c.ca)))
        rc, _, err = once(agent)
        if rc != 0:
            fail("--once exit %d: %s" % (rc, err[-600:]))
        s = nic_samples(r.events)
        eq(len(s), 1, "nic samples received over TLS")
        eq(s[0].get("esxwatch_rx_dropped"), "2452783244", "rx_dropped parsed and shipped")
        eq(s[0].get("hostname"), "esx01", "hostname")
        if r.violations:
            fail("cfapi violations: %s" % r.violations[:3])


def test_tls_wrong_ca_is_refused(d):
    """Another CA in ssl_ca_path: the handshake must fail, nothing is
    delivered, and the agent says why.  (Run as a daemon and stopped: --once
    would keep retrying for its whole drain time.)"""
    host = esxi_host(d)
    c = certs.make(os.path.join(d, "pki"))
    with receivers.CfapiReceiver(tls=(c.server_crt, c.server_key)) as r:
        cfg = config(host, "{hostname: localhost, proto: cfapi, port: %d, ssl: yes, "
                           "ssl_ca_path: %s, timeout: 5}" % (r.port, c.other_ca))
        agent = Agent(d, cfg)
        agent.start()
        try:
            harness.wait_for(lambda: re.search(r"(?i)certificate|issuer|verify",
                                               agent.stderr_text()),
                             timeout=30, what="a certificate error in the agent's log")
        finally:
            agent.stop()
        if r.events:
            fail("%d events delivered through an untrusted connection" % len(r.events))


def hosts_name():
    """(name, address): a name /etc/hosts maps to a loopback IPv4 address
    (127.0.0.1, or Debian's 127.0.1.1 for the host's own name), other than
    localhost (curl answers localhost itself, without the resolver); or
    None."""
    try:
        with open("/etc/hosts") as f:
            for line in f:
                parts = line.split("#", 1)[0].split()
                if len(parts) >= 2 and re.fullmatch(r"127\.\d+\.\d+\.\d+", parts[0]):
                    for n in parts[1:]:
                        if n != "localhost" and not n.startswith("localhost."):
                            return n, parts[0]
    except OSError:
        pass
    return None


class _Collect(http.server.BaseHTTPRequestHandler):
    """POSTed JSON lines (gzip or not) into server.events."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        self.server.events.extend(harness.parse_events(body.decode("utf-8")))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def test_dns_via_etc_hosts_and_http(d):
    """musl's getaddrinfo reads /etc/hosts (ESXi has one): an http
    destination named by a host name from /etc/hosts receives the events."""
    found = hosts_name()
    if found is None:
        print("    (no /etc/hosts name for a loopback address here: localhost only)")
        found = ("localhost", "127.0.0.1")
    name, addr = found
    srv = socketserver.ThreadingTCPServer((addr, 0), _Collect)
    srv.daemon_threads = True
    srv.events = []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        host = esxi_host(d)
        agent = Agent(d, config(host, "{proto: http, url: \"http://%s:%d/ingest\", ssl: no, "
                                      "compress: gzip}" % (name, srv.server_address[1])))
        rc, _, err = once(agent)
        if rc != 0:
            fail("--once to http://%s exit %d: %s" % (name, rc, err[-600:]))
        eq(len(nic_samples(srv.events)), 1, "nic samples received via %s (%s)" % (name, addr))
    finally:
        srv.shutdown()
        srv.server_close()


def test_utc_whatever_tz_says(d):
    """ESXi runs in UTC; the static binary has no zoneinfo of its own.  Event
    timestamps (ms since the epoch) and the agent's log times must not move
    with TZ."""
    host = esxi_host(d)
    agent = Agent(d, config(host, "{proto: file, path: \"-\"}"))
    for tz in ("Asia/Kathmandu", "EST5EDT", "UTC-13"):
        t0 = time.time()
        rc, out, err = once(agent, env={"TZ": tz})
        t1 = time.time()
        if rc != 0:
            fail("TZ=%s: --once exit %d: %s" % (tz, rc, err[-300:]))
        s = nic_samples(harness.parse_events(out))
        if not s:
            fail("TZ=%s: no nic sample on stdout" % tz)
        ts = int(s[0]["timestamp"]) / 1000.0
        if not t0 - 2 <= ts <= t1 + 2:
            fail("TZ=%s: event timestamp %.3f not within [%.0f, %.0f]" % (tz, ts, t0, t1))
        m = re.search(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z", err)
        if m:
            logged = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
            if abs(logged - t0) > 5 and abs(logged - t1) > 5:
                fail("TZ=%s: log line time %s is not UTC now" % (tz, m.group(1)))


def test_regexes_run_in_the_interpreter_unless_asked(d):
    """The ESXi build matches with PCRE2's interpreter (ESXi's userworld
    refuses executable memory, and the JIT's pages would cost resident
    memory); ESXWATCH_JIT=1 asks for the JIT, which this Linux allows.  The
    start line names the engine, and the collectors run either way."""
    host = esxi_host(d)
    agent = Agent(d, config(host, "{proto: file, path: \"-\"}"))
    for env, want in (({}, "(interpreter)"), ({"ESXWATCH_JIT": "1"}, "(JIT)")):
        rc, out, err = once(agent, env=env)
        if rc != 0:
            fail("%s: --once exit %d: %s" % (env, rc, err[-300:]))
        m = re.search(r"started on .*regexes: (PCRE2 [^\n]*)\)", err)
        if m is None:
            fail("%s: no engine in the start line: %s" % (env, err[-500:]))
        if not m.group(1).endswith(want):
            fail("%s: engine %r, want one ending in %s" % (env, m.group(1), want))
        if not nic_samples(harness.parse_events(out)):
            fail("%s: no nic sample on stdout" % env)


harness.main(globals())
