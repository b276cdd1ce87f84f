"""Round three sinks (otlp, loki, gelf), end to end through the daemon:
the daemon follows a file that grows by N lines (default 200,000; the
near-miss vmkernel log of bench_logwatch.c), forward: all, every built-in
rule on, and ships every line to a local counting receiver of the sink's
protocol (a process of its own: OTLP/HTTP JSON answering {}, Loki push
answering 204, a GELF TCP input counting null bytes; the HTTP ones inflate
gzip and save every body).  The agent's CPU (utime+stime of all its
threads) from the first append until the receiver has counted every line,
as events per CPU-second, next to `gzip -1` compressing the very bodies
the receiver got (the round-two yardstick, bench_forward_all.py).
Medians of R runs (default 3).  Reported, not asserted; the last line is
one RESULT line.

Usage: python3 bench/bench_sinks3b.py [N] [--runs R] [--sinks otlp,loki,gelf]
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tailbench as tb  # noqa: E402

SERVERS = {
    "otlp": '{proto: otlp, url: "http://127.0.0.1:%d/v1/logs", ssl: no}',
    "loki": '{proto: loki, url: "http://127.0.0.1:%d/loki/api/v1/push", ssl: no}',
    "gelf": "{proto: gelf, hostname: 127.0.0.1, port: %d, ssl: no, transport: tcp}",
}


class Receiver:
    """The counting receiver in a child process (this file, `receiver`)."""

    def __init__(self, procs, tmp, kind, bodies):
        self.portfile = os.path.join(tmp, "recv-%s.port" % kind)
        self.countfile = os.path.join(tmp, "recv-%s.count" % kind)
        for f in (self.portfile, self.countfile, bodies):
            if os.path.exists(f):
                os.unlink(f)
        self.p = procs.start([sys.executable, os.path.abspath(__file__), "receiver", kind,
                              self.portfile, self.countfile, bodies],
                             log=os.path.join(tmp, "recv.log"))
        tb.wait_for("the %s receiver listens" % kind, lambda: os.path.exists(self.portfile),
                    timeout=10, alive=[self.p])
        with open(self.portfile) as f:
            self.port = int(f.read())

    def count(self):
        try:
            with open(self.countfile) as f:
                return int(f.read() or 0)
        except (OSError, ValueError):
            return 0


def _count_http(kind, body):
    if kind == "otlp":
        return body.count(b'"timeUnixNano":'), b"200 OK", b"{}"
    doc = json.loads(body)
    return sum(len(s["values"]) for s in doc["streams"]), b"204 No Content", b""


def _receiver_main(kind, portfile, countfile, bodies):
    total = [0]
    lock = threading.Lock()
    saved = open(bodies, "wb")
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)

    def add(n, body):
        with lock:
            total[0] += n
            saved.write(body)
            saved.flush()

    def gelf(c):
        while True:
            b = c.recv(1 << 20)
            if not b:
                return
            add(b.count(b"\0"), b)

    def http(c):
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                b = c.recv(1 << 20)
                if not b:
                    return
                buf += b
            head, _, buf = buf.partition(b"\r\n\r\n")
            h = head.decode("latin-1").lower()
            m = re.search(r"\ncontent-length:\s*(\d+)", h)
            need = int(m.group(1)) if m else 0
            while len(buf) < need:
                b = c.recv(max(need - len(buf), 1 << 16))
                if not b:
                    return
                buf += b
            body, buf = buf[:need], buf[need:]
            if "\ncontent-encoding: gzip" in h:
                body = zlib.decompress(body, 47)
            n, status, out = _count_http(kind, body)
            add(n, body)
            c.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(out), out))

    def serve(c):
        try:
            (gelf if kind == "gelf" else http)(c)
        except OSError:
            pass
        finally:
            c.close()

    def writer():
        last = -1
        while True:
            with lock:
                n = total[0]
            if n != last:
                with open(countfile + ".tmp", "w") as f:
                    f.write(str(n))
                os.replace(countfile + ".tmp", countfile)
                last = n
            time.sleep(0.05)

    threading.Thread(target=writer, daemon=True).start()
    with open(portfile + ".tmp", "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.replace(portfile + ".tmp", portfile)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def one_run(tmp, binary, src, n, procs, kind):
    bodies = os.path.join(tmp, "bodies-%s" % kind)
    r = Receiver(procs, tmp, kind, bodies)
    a = tb.Esxwatch(binary, tmp, SERVERS[kind] % r.port, "all")
    try:
        cpu, wall = tb.follow_run(tmp, src, n, a, r.count, procs=procs, timeout=3 * tb.RUN_TIMEOUT)
    except tb.BenchError as e:
        raise tb.BenchError("%s\n%s" % (e, a.log_tail()))
    got = r.count()
    procs.stop(r.p)
    if got != n:
        raise tb.BenchError("%s: the receiver counted %d events for %d lines" % (kind, got, n))
    return cpu, wall, bodies


def gzip_cpu(path, runs=3):
    cpu = []
    for _ in range(runs):
        with open(path, "rb") as f, open(os.devnull, "wb") as null:
            p = subprocess.Popen(["gzip", "-1", "-c"], stdin=f, stdout=null)
            _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise tb.BenchError("gzip -1 failed")
        cpu.append(ru.ru_utime + ru.ru_stime)
    return tb.median(cpu)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "receiver":
        _receiver_main(*sys.argv[2:6])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sinks", default="otlp,loki,gelf")
    o = ap.parse_args()
    tb.on_signal_exit()
    tb.need("cc", "gzip")
    build = os.environ.get("B", "build")
    binary = os.path.join(tb.ROOT, build, "esxwatch")
    if not os.access(binary, os.X_OK):
        sys.exit("bench_sinks3b: no %s (make all)" % binary)
    kinds = o.sinks.split(",")
    res = {}
    with tb.TempDir("bench-sinks3b-") as tmp, tb.Procs() as procs:
        helper = tb.build_helper(tmp, build)
        src = os.path.join(tmp, "src.log")
        tb.generate(helper, o.n, src, "nearmiss")
        print("log: %d lines, %.1f MB (near-miss mix)" % (o.n, os.path.getsize(src) / 1e6), flush=True)
        try:
            for kind in kinds:
                cpu, wall = [], []
                for r in range(o.runs):
                    c, w, bodies = one_run(tmp, binary, src, o.n, procs, kind)
                    cpu.append(c)
                    wall.append(w)
                    procs.kill_all()
                    print("  %s run %d: %.2fs CPU, %.2fs wall" % (kind, r + 1, c, w), flush=True)
                mb = os.path.getsize(bodies) / 1e6
                res[kind] = (o.n / max(tb.median(cpu), 1e-3), tb.median(wall), mb,
                             o.n / max(gzip_cpu(bodies), 1e-3))
        except tb.BenchError as e:
            sys.exit("bench_sinks3b: %s" % e)
    print("events per CPU-second end to end, median of %d runs; gzip -1 on the same bodies" % o.runs)
    print("  %-6s %12s %8s %9s %12s %8s" % ("sink", "esxwatch", "wall s", "body MB", "gzip -1", "ratio"))
    out = []
    for kind in kinds:
        eps, w, mb, gz = res[kind]
        print("  %-6s %12.0f %8.2f %9.1f %12.0f %8.2f" % (kind, eps, w, mb, gz, eps / gz))
        out.append("%s_eps=%.0f %s_gzip1_eps=%.0f %s_vs_gzip1=%.2f" % (kind, eps, kind, gz, kind, eps / gz))
    print("RESULT " + " ".join(out))


if __name__ == "__main__":
    main()
