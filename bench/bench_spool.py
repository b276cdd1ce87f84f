#!/usr/bin/env python3
"""The spool's cost, with references measured in the same run.

1. bench_spool (C, against build/libesxwatch.a): append + read-back rate of
   the spool with its fsync batching (every 256 KB), next to dd writing the
   same number of bytes with the same fsync cadence (bs=256K oflag=dsync).
2. End to end: the real binary (--once, logwatch reading a file of N lines,
   forward: all) shipping to a minimal local cfapi receiver, once with the
   spool (build/esxwatch) and once with the in-memory queue (built here as
   build/memq/esxwatch with QUEUE=memqueue).  Target: the spool costs no
   more than 20% of the end-to-end events/s.

Usage: bench/bench_spool.py [--events N] [--lines N]
"""
import argparse
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def build_micro():
    out = os.path.join(TOP, "build", "bench_spool")
    libs = sh(["pkg-config", "--libs", "libcurl", "yaml-0.1", "zlib"]).stdout.split()
    sh(["make", "-C", TOP, "build/libesxwatch.a"])
    sh(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE", "-o", out,
        os.path.join(TOP, "bench", "bench_spool.c"),
        os.path.join(TOP, "build", "libesxwatch.a")] + libs + ["-lpthread", "-lm"])
    return out


def micro(n):
    exe = build_micro()
    work = tempfile.mkdtemp(prefix="bench-spool-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    try:
        p = sh([exe, os.path.join(work, "spool"), str(n)])
        lines = p.stdout.strip().splitlines()
        for l in lines[:-1]:
            print(l)
        kv = dict(x.split("=") for x in lines[-1].split())
        nbytes = int(kv["bytes"])
        blocks = max(1, math.ceil(nbytes / (256 * 1024)))
        t0 = time.monotonic()
        sh(["dd", "if=/dev/zero", "of=" + os.path.join(work, "dd.bin"), "bs=256K",
            "count=%d" % blocks, "oflag=dsync"])
        dd_s = time.monotonic() - t0
        mb = blocks * 256 * 1024 / 1e6
        print("dd reference:    %.1f MB in %.3f s: %.1f MB/s (bs=256K oflag=dsync: an fsync "
              "every 256 KB)" % (mb, dd_s, mb / dd_s))
        print("spool append vs dd: %.0f%% of dd's MB/s"
              % (100.0 * (nbytes / 1e6 / float(kv["append_s"])) / (mb / dd_s)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


class FastCfapi:
    """Reads HTTP/1.1 requests, counts events (gzip bodies inflated), answers
    {"status":"ok"}: as little work as possible so the agent is measured."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.events = 0
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        buf = b""
        resp = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 15\r\n\r\n{\"status\":\"ok\"}")
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(262144)
                    if not d:
                        return
                    buf += d
                head, _, buf = buf.partition(b"\r\n\r\n")
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                while len(buf) < n:
                    d = c.recv(max(262144, n - len(buf)))
                    if not d:
                        return
                    buf += d
                body, buf = buf[:n], buf[n:]
                if b"\r\ncontent-encoding: gzip" in head.lower():
                    body = zlib.decompress(body, 31)
                with self.lock:
                    self.events += body.count(b'{"text":')
                c.sendall(resp)
        finally:
            c.close()


def e2e_once(binary, lines, work, port):
    storage = os.path.join(work, "storage")
    shutil.rmtree(storage, ignore_errors=True)
    conf = os.path.join(work, "agent.yaml")
    with open(conf, "w") as f:
        f.write("server: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no, compress: none}\n"
                "storage: {directory: %s}\n"
                "collectors:\n  nic: {enabled: no}\n  datastore: {enabled: no}\n"
                "  vsan: {enabled: no}\n  smart: {enabled: no}\n  agent: {enabled: no}\n"
                "  logwatch: {enabled: yes, interval: 1}\n"
                "filelog:\n  app: {directory: %s, include: app.log, forward: all, "
                "read_from_head: yes}\n" % (port, storage, work))
    t0 = time.monotonic()
    p = subprocess.run([binary, "-c", conf, "--once"], capture_output=True, text=True)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit("%s --once failed (%d): %s" % (binary, p.returncode, p.stderr[-500:]))
    return dt


def e2e(nlines):
    memq = os.path.join(TOP, "build", "memq", "esxwatch")
    sh(["make", "-C", TOP, "-j2", "build/esxwatch"])
    sh(["make", "-C", TOP, "-j2", "QUEUE=memqueue", "B=build/memq", "build/memq/esxwatch"])
    work = tempfile.mkdtemp(prefix="bench-spool-e2e-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    rx = FastCfapi()
    try:
        with open(os.path.join(work, "app.log"), "w") as f:
            for i in range(nlines):
                f.write("2026-11-30T12:00:00.000Z cpu%d:2097682)ScsiDeviceIO: 4124: Cmd 0x2a "
                        "CmdSN 0x%x to dev naa.600508b1001c failed H:0x0 D:0x2 P:0x0 line %d\n"
                        % (i % 64, i, i))
        res = {}
        for name, binary in (("in-memory", memq), ("spool", os.path.join(TOP, "build", "esxwatch")),
                             ("in-memory", memq), ("spool", os.path.join(TOP, "build", "esxwatch"))):
            before = rx.events
            dt = e2e_once(binary, nlines, work, rx.port)
            got = rx.events - before
            if got < nlines:
                raise SystemExit("%s delivered %d of %d" % (name, got, nlines))
            res.setdefault(name, []).append(nlines / dt)
        mem, spool = max(res["in-memory"]), max(res["spool"])
        print("end to end (--once, %d log lines -> cfapi, gzip off, best of 2): in-memory %.0f "
              "events/s, spool %.0f events/s: the spool costs %.1f%% (target <= 20%%)"
              % (nlines, mem, spool, max(0.0, 100.0 * (1 - spool / mem))))
    finally:
        rx.sock.close()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200000)
    ap.add_argument("--lines", type=int, default=200000)
    a = ap.parse_args()
    micro(a.events)
    e2e(a.lines)


if __name__ == "__main__":
    main()
