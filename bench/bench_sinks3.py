"""Round three's sinks end to end: forward: all -> splunk_hec (ack: no and
ack: yes) and -> elasticsearch, each against `gzip -1` of the same bodies
(the round-two yardstick of bench_forward_all.py).

The daemon follows a file that grows by N lines (default 300,000; the
near-miss vmkernel log of bench_logwatch.c, every built-in rule on) and
ships every line to a local receiver in a process of its own that speaks
just enough of the API to be a fair peer: HEC answers {"text":"Success",
"code":0} (with an ackId, and /services/collector/ack answering every id
true, for ack: yes); _bulk answers {"errors":false,"items":[{"create":
{"status":201}}, ...]}, one item per action, as filter_path leaves it.
The receiver counts events and saves every body it received.  The agent's
CPU (utime+stime, /proc/PID/stat) from the first append until the receiver
counted every line, as events per CPU-second; next to it `gzip -1`
compressing the very bodies the receiver saved (the last run's), as events
per CPU-second.  Medians of R runs (default 3).  Reported, not asserted;
the last line is one RESULT line.

Usage: python3 bench/bench_sinks3.py [N] [--runs R]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tailbench as tb  # noqa: E402

TOKEN = "00000000-0000-4000-8000-000000000001"


def _sink_main(kind, portfile, countfile, bodies):
    total = [0]
    ackid = [0]
    lock = threading.Lock()
    saved = open(bodies, "wb")
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)

    def answer(path, body):
        if path.startswith("/services/collector/ack"):
            ids = json.loads(body)["acks"]
            return json.dumps({"acks": {str(i): True for i in ids}}).encode(), 0
        if path.startswith("/services/collector/event"):
            n = body.count(b'{"time":')
            with lock:
                ackid[0] += 1
                a = ackid[0]
            return b'{"text":"Success","code":0,"ackId":%d}' % a, n
        n = body.count(b"\n") // 2
        return b'{"errors":false,"items":[' + b",".join([b'{"create":{"status":201}}'] * n) + b"]}", n

    def serve(c):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    b = c.recv(1 << 20)
                    if not b:
                        return
                    buf += b
                head, _, buf = buf.partition(b"\r\n\r\n")
                h = head.decode("latin-1")
                path = h.split(" ", 2)[1]
                m = re.search(r"\ncontent-length:\s*(\d+)", h.lower())
                need = int(m.group(1)) if m else 0
                while len(buf) < need:
                    b = c.recv(max(need - len(buf), 1 << 16))
                    if not b:
                        return
                    buf += b
                body, buf = buf[:need], buf[need:]
                out, n = answer(path, body)
                if n:
                    with lock:
                        saved.write(body)
                        saved.flush()
                        total[0] += n
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (len(out), out))
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


class Sink(tb.Sink):
    def __init__(self, procs, tmp, kind, bodies):
        self.portfile = os.path.join(tmp, "sink-%s.port" % kind)
        self.countfile = os.path.join(tmp, "sink-%s.count" % kind)
        for f in (self.portfile, self.countfile, bodies):
            if os.path.exists(f):
                os.unlink(f)
        self.p = procs.start([sys.executable, os.path.abspath(__file__), "sink", kind,
                              self.portfile, self.countfile, bodies],
                             log=os.path.join(tmp, "sink.log"))
        tb.wait_for("the %s sink listens" % kind, lambda: os.path.exists(self.portfile),
                    timeout=10, alive=[self.p])
        with open(self.portfile) as f:
            self.port = int(f.read())


def server_conf(tmp, kind, port):
    if kind == "elasticsearch":
        return "{proto: elasticsearch, url: \"http://127.0.0.1:%d\", ssl: no}" % port
    tok = os.path.join(tmp, "hec.token")
    with open(tok, "w") as f:
        f.write(TOKEN)
    os.chmod(tok, 0o600)
    return ("{proto: splunk_hec, url: \"http://127.0.0.1:%d\", token_file: %s, ssl: no, ack: %s}"
            % (port, tok, "yes" if kind == "hec_ack" else "no"))


def run(tmp, binary, src, n, procs, kind):
    bodies = os.path.join(tmp, "bodies-%s" % kind)
    sink = Sink(procs, tmp, kind, bodies)
    a = tb.Esxwatch(binary, tmp, server_conf(tmp, kind, sink.port), "all")
    try:
        cpu, wall = tb.follow_run(tmp, src, n, a, sink.count, procs=procs, timeout=3 * tb.RUN_TIMEOUT)
    except tb.BenchError as e:
        raise tb.BenchError("%s\n%s" % (e, a.log_tail()))
    got = sink.count()
    procs.stop(sink.p)
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


KINDS = ("hec", "hec_ack", "elasticsearch")
LABEL = {"hec": "splunk_hec (ack: no)", "hec_ack": "splunk_hec (ack: yes)",
         "elasticsearch": "elasticsearch _bulk"}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "sink":
        _sink_main(*sys.argv[2:6])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=300000)
    ap.add_argument("--runs", type=int, default=3)
    o = ap.parse_args()
    tb.on_signal_exit()
    tb.need("cc", "gzip")
    build = os.environ.get("B", "build")
    binary = os.path.join(tb.ROOT, build, "esxwatch")
    if not os.access(binary, os.X_OK):
        sys.exit("bench_sinks3: no %s (make all)" % binary)
    cpu = {k: [] for k in KINDS}
    wall = {k: [] for k in KINDS}
    gz = {}
    mb = {}
    with tb.TempDir("bench-sinks3-") as tmp, tb.Procs() as procs:
        helper = tb.build_helper(tmp, build)
        src = os.path.join(tmp, "src.log")
        tb.generate(helper, o.n, src, "nearmiss")
        print("log: %d lines, %.1f MB (near-miss mix)" % (o.n, os.path.getsize(src) / 1e6), flush=True)
        try:
            bodies = {}
            for r in range(o.runs):
                for k in KINDS:   # interleaved: a neighbour's load falls on all alike
                    c, w, bodies[k] = run(tmp, binary, src, o.n, procs, k)
                    cpu[k].append(c)
                    wall[k].append(w)
                    procs.kill_all()
                print("  run %d: %s" % (r + 1, " ".join("%s=%.2fs" % (k, cpu[k][-1]) for k in KINDS)),
                      flush=True)
            for k in KINDS:
                mb[k] = os.path.getsize(bodies[k]) / 1e6
                gz[k] = gzip_cpu(bodies[k])
        except tb.BenchError as e:
            sys.exit("bench_sinks3: %s" % e)
    print("events per CPU-second, median of %d runs (the daemon end to end; gzip -1 on the bodies "
          "the receiver got)" % o.runs)
    res = []
    for k in KINDS:
        eps = o.n / max(tb.median(cpu[k]), 1e-3)
        geps = o.n / max(gz[k], 1e-3)
        print("  %-24s %9.0f  (%5.2f s wall)   gzip -1 %9.0f on %6.1f MB   ratio %.2f"
              % (LABEL[k], eps, tb.median(wall[k]), geps, mb[k], eps / geps))
        res.append("%s_eps=%.0f %s_gzip1_eps=%.0f %s_vs_gzip1=%.2f" % (k, eps, k, geps, k, eps / geps))
    print("RESULT " + " ".join(res))


if __name__ == "__main__":
    main()
