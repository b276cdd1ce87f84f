"""Collector mode: TCP receive + match with every built-in rule on, as lines
per CPU-second, next to rsyslog imtcp -> omfile on the same stream in the
same run (issue 29's target: >= 1.5 x rsyslog).  Also the agent's RSS with
H hosts sending (memory per 100 hosts).

The stream: N messages (default 300,000) in ESXi's RFC 3164 wire form from
H simulated hosts (default 100), LF-framed over C connections (default 4),
the lines of tests/fixtures/syslog/ in turn with 0.1 % known errors
(vmkernel's ATS miscompare line), the rest hostd and vobd lines no rule
matches.  CPU = utime + stime of every thread of the receiving process
(/proc/PID/stat), from the first byte sent until the last message is
counted (esxwatch: --status --json's messages; rsyslog: the lines in its
output file).  Reported, not asserted; the last line is one RESULT line.

With --tls K (default 1000; 0: skip) it then holds K TLS connections open
to one agent, each having sent one message, and reports the RSS before and
after, and the cost per connection.

Usage: python3 bench/bench_receiver.py [N] [--hosts H] [--conns C] [--tls K]
"""
import argparse
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.environ.get("ESXWATCH_BIN", os.path.join(TOP, "build", "esxwatch"))
WIRE = os.path.join(TOP, "tests", "fixtures", "syslog")
HZ = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / HZ


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def stream(n, hosts, conns):
    """conns byte strings, n messages in all; and how many are known errors."""
    lines = []
    for name in ("esxi8-rfc3164.log", "esxi67-rfc3164.log"):
        with open(os.path.join(WIRE, name)) as f:
            lines += [l for l in f.read().splitlines() if l and "-->" not in l]
    ats = [l for l in lines if " vmkernel: " in l and "failed H:0x" in l]   # ats_miscompare
    plain = [l for l in lines if l not in ats and " vmkernel: " not in l and "took over" not in l]
    bufs = [[] for _ in range(conns)]
    errors = 0
    for i in range(n):
        h = i % hosts
        if i % 1000 == 999 and ats:
            l = ats[0]
            errors += 1
            h = (i // 1000) % hosts    # spread: a storm per host would be held back
        else:
            l = plain[i % len(plain)]
        m = re.match(r"^(<\d+>\S+) (\S+) (.*)$", l)
        bufs[i % conns].append("%s esx%03d %s\n" % (m.group(1), h, m.group(3)))
    return [("".join(b)).encode() for b in bufs], errors


def send_all(port, bufs):
    def one(b):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b)
        s.close()
    ths = [threading.Thread(target=one, args=(b,)) for b in bufs]
    for t in ths:
        t.start()
    return ths


def esxwatch_run(tmp, bufs, n, errors):
    port = free_port()
    d = os.path.join(tmp, "esxw")
    os.makedirs(d)
    cfg = os.path.join(d, "agent.yaml")
    with open(cfg, "w") as f:
        f.write("server: {proto: file, path: %s/out.jsonl}\nstorage: {directory: %s/s}\n"
                "host: {platform: linux, hostname: collector}\n"
                "collectors:\n  nic: {enabled: no}\n  datastore: {enabled: no}\n"
                "  vsan: {enabled: no}\n  smart: {enabled: no}\n  agent: {enabled: no}\n"
                "  logwatch: {enabled: no}\n  diagnosis: {enabled: no}\n"
                "receiver:\n  syslog:\n    - {address: \"127.0.0.1:%d\", transport: tcp}\n"
                "  silent_after: 0\n" % (d, d, port))
    p = subprocess.Popen([BIN, "-c", cfg], stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(d, "err.log"), "w"))
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.1)
        c0, t0 = cpu_s(p.pid), time.time()
        ths = send_all(port, bufs)

        def messages():
            r = subprocess.run([BIN, "-c", cfg, "--status", "--json"], capture_output=True)
            try:
                return (json.loads(r.stdout).get("receiver") or {}).get("messages", 0)
            except ValueError:
                return 0
        while messages() < n:
            if time.time() - t0 > 600:
                raise SystemExit("esxwatch: not every message counted in 600 s")
            time.sleep(0.5)
        cpu, wall = cpu_s(p.pid) - c0, time.time() - t0
        rss = rss_kb(p.pid)
        for t in ths:
            t.join()
        got = 0
        for _ in range(100):
            with open(os.path.join(d, "out.jsonl"), "rb") as f:
                got = f.read().count(b'"esxwatch_rule":"ats_miscompare"')
            if got >= errors:
                break
            time.sleep(0.1)
        if got != errors:
            raise SystemExit("esxwatch: %d alerts, %d known errors sent" % (got, errors))
        return cpu, wall, rss
    finally:
        p.terminate()
        p.wait(30)


def rsyslog_run(tmp, bufs, n):
    port = free_port()
    d = os.path.join(tmp, "rs")
    os.makedirs(d)
    out = os.path.join(d, "out.log")
    conf = os.path.join(d, "rsyslog.conf")
    with open(conf, "w") as f:
        f.write('global(workDirectory="%s")\nmodule(load="imtcp")\n'
                'input(type="imtcp" port="%d" address="127.0.0.1")\n'
                'action(type="omfile" file="%s")\n' % (d, port, out))
    p = subprocess.Popen(["rsyslogd", "-n", "-f", conf, "-i", os.path.join(d, "pid")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.1)
        c0, t0 = cpu_s(p.pid), time.time()
        ths = send_all(port, bufs)

        def lines():
            try:
                with open(out, "rb") as f:
                    return f.read().count(b"\n")
            except OSError:
                return 0
        while lines() < n:
            if time.time() - t0 > 600:
                raise SystemExit("rsyslog: not every line written in 600 s")
            time.sleep(0.2)
        cpu, wall = cpu_s(p.pid) - c0, time.time() - t0
        for t in ths:
            t.join()
        return cpu, wall
    finally:
        p.terminate()
        p.wait(30)


def tls_run(tmp, k):
    """RSS of an agent holding k TLS connections: before, after, per connection."""
    d = os.path.join(tmp, "tls")
    os.makedirs(d)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "k.pem", "-out",
                    "c.pem", "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"], cwd=d, check=True,
                   capture_output=True)
    port = free_port()
    cfg = os.path.join(d, "agent.yaml")
    with open(cfg, "w") as f:
        f.write("server: {proto: file, path: %s/out.jsonl}\nstorage: {directory: %s/s}\n"
                "collectors:\n  nic: {enabled: no}\n  datastore: {enabled: no}\n"
                "  vsan: {enabled: no}\n  smart: {enabled: no}\n  agent: {enabled: no}\n"
                "  logwatch: {enabled: no}\n  diagnosis: {enabled: no}\n"
                "receiver:\n  syslog:\n    - {address: \"127.0.0.1:%d\", transport: tls, "
                "cert: %s/c.pem, key: %s/k.pem}\n  max_connections: %d\n  silent_after: 0\n"
                % (d, d, port, d, d, k + 100))
    p = subprocess.Popen([BIN, "-c", cfg], stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(d, "err.log"), "w"))
    socks = []
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(1.5)
        before = rss_kb(p.pid)
        ctx = ssl.create_default_context(cafile=os.path.join(d, "c.pem"))
        for i in range(k):
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                                server_hostname="localhost")
            s.sendall(b"<14>2025-12-11T16:44:03.079Z esx%04d vobd: hello\n" % i)
            socks.append(s)
        time.sleep(3)
        after = rss_kb(p.pid)
        return before, after
    finally:
        for s in socks:
            s.close()
        p.terminate()
        p.wait(30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=300000)
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--conns", type=int, default=4)
    ap.add_argument("--tls", type=int, default=1000)
    a = ap.parse_args()
    if shutil.which("rsyslogd") is None or not os.path.exists(BIN):
        raise SystemExit("needs rsyslogd and %s" % BIN)
    bufs, errors = stream(a.n, a.hosts, a.conns)
    tmp = tempfile.mkdtemp(prefix="bench-receiver-")
    try:
        ecpu, ewall, rss = esxwatch_run(tmp, bufs, a.n, errors)
        rcpu, rwall = rsyslog_run(tmp, bufs, a.n)
        tls = tls_run(tmp, a.tls) if a.tls > 0 else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    er, rr = a.n / max(ecpu, 1e-6), a.n / max(rcpu, 1e-6)
    print("%d messages from %d hosts over %d TCP connections (%d known errors)"
          % (a.n, a.hosts, a.conns, errors))
    print("  esxwatch receive + every rule: %.2f CPU-s (%.1f s wall): %.0f lines/CPU-s; "
          "RSS %d kB" % (ecpu, ewall, er, rss))
    print("  rsyslog imtcp -> omfile:       %.2f CPU-s (%.1f s wall): %.0f lines/CPU-s"
          % (rcpu, rwall, rr))
    res = ("RESULT receiver_lines_per_cpu_s=%.0f rsyslog_lines_per_cpu_s=%.0f ratio=%.2f "
           "rss_kb=%d hosts=%d" % (er, rr, er / rr, rss, a.hosts))
    if tls is not None:
        per = (tls[1] - tls[0]) / a.tls
        print("  %d TLS connections open: RSS %d kB before, %d kB with them: %.1f kB each"
              % (a.tls, tls[0], tls[1], per))
        res += " tls_conns=%d tls_rss_kb=%d tls_kb_per_conn=%.1f" % (a.tls, tls[1], per)
    print(res)


if __name__ == "__main__":
    main()
