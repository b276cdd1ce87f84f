"""Shared parts of the end-to-end benches that follow a growing log
(bench_logwatch.py, bench_forward_all.py): the helper (log generator,
the rules' literals and regexes), the followers (esxwatch as a daemon,
rsyslog imfile -> omfwd, collectd tail), their CPU from /proc, the
appender, and the sinks they deliver to.

Every process started here is killed when its run ends, also on failure
(Procs, a context manager; SIGTERM/SIGINT of the bench end the same way),
and every run has a deadline.

The sinks run as a child process of their own (`python3 tailbench.py
sink tcp|cfapi PORTFILE COUNTFILE`), so that counting what arrives never
competes with the appender for the bench's interpreter; they write what
they counted to COUNTFILE every 50 ms.
"""
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CATALOGUE = os.path.join(ROOT, "collectors", "logwatch", "rules", "esxi.yaml")
TICK = os.sysconf("SC_CLK_TCK")
RUN_TIMEOUT = float(os.environ.get("BENCH_RUN_TIMEOUT", "300"))


class BenchError(Exception):
    pass


def cpu_of(pid):
    """utime + stime of every thread of pid, in seconds (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run_cpu(argv, timeout=RUN_TIMEOUT):
    """Run argv to its end; return (exit code, user+sys CPU seconds, its
    stdout, its stderr).  stdout is a pipe, never /dev/null: GNU grep
    stops at the first match when its output is /dev/null.  For commands
    with a short output (grep -c)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            p.kill()
            p.wait()
            raise BenchError("%s: no end after %.0f s" % (argv[0], timeout))
        time.sleep(0.01)
    out = p.stdout.read().decode(errors="replace")
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    return p.returncode, ru.ru_utime + ru.ru_stime, out, err


def median(xs):
    return statistics.median(xs)


class Procs:
    """Processes of one run: all of them killed on exit, whatever happens."""

    live = []

    def __init__(self):
        self.procs = []

    def __enter__(self):
        Procs.live.append(self)
        return self

    def start(self, argv, env=None, log=None):
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
        finally:
            if log:
                out.close()
        self.procs.append(p)
        return p

    def stop(self, p, grace=5.0):
        if p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def kill_all(self):
        for p in reversed(self.procs):
            try:
                self.stop(p, 3.0)
            except OSError:
                pass
        self.procs = []

    def __exit__(self, *a):
        self.kill_all()
        Procs.live.remove(self)
        return False


class TempDir:
    def __init__(self, prefix):
        self.prefix = prefix

    def __enter__(self):
        import tempfile
        self.path = tempfile.mkdtemp(prefix=self.prefix)
        return self.path

    def __exit__(self, *a):
        shutil.rmtree(self.path, ignore_errors=True)
        return False


def on_signal_exit():
    """SIGTERM/SIGINT: unwind (the context managers kill and clean up);
    a second signal must not cut that cleanup short."""
    def handler(sig, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise SystemExit("bench: signal %d" % sig)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def wait_for(what, fn, timeout=RUN_TIMEOUT, every=0.05, alive=()):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        for p in alive:
            if p.poll() is not None:
                raise BenchError("%s: %s exited (%s) first" % (what, p.args[0], p.returncode))
        if time.monotonic() > deadline:
            raise BenchError("%s: not after %.0f s" % (what, timeout))
        time.sleep(every)


# ---- the helper (bench_logwatch.c) -------------------------------------

def build_helper(tmp, build="build"):
    lib = os.path.join(ROOT, build, "libesxwatch.a")
    if not os.path.exists(lib):
        subprocess.run(["make", "-s", "-C", ROOT, os.path.join(build, "libesxwatch.a")], check=True)
    libs = subprocess.run(["pkg-config", "--libs", "libcurl", "yaml-0.1", "zlib", "libpcre2-8"],
                          check=True, capture_output=True, text=True).stdout.split()
    out = os.path.join(tmp, "helper")
    subprocess.run(["cc", "-O2", "-g", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                    "-DESXWATCH_VERSION=\"bench\"", "-o", out,
                    os.path.join(ROOT, "bench", "bench_logwatch.c"), lib] + libs + ["-lpthread", "-lm"],
                   check=True)
    return out


def helper_lines(helper, what):
    p = subprocess.run([helper, what, CATALOGUE], check=True, capture_output=True, text=True)
    return [x for x in p.stdout.split("\n") if x]


def generate(helper, n, path, mix):
    p = subprocess.run([helper, "gen", str(n), path, mix], check=True, capture_output=True, text=True)
    m = re.search(r"match=(\d+) nearmiss=(\d+)", p.stderr)
    return int(m.group(1)), int(m.group(2))


def check_log(helper, path):
    p = subprocess.run([helper, "check", CATALOGUE, path], check=True, capture_output=True, text=True)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", p.stdout)}


def pcre_to_ere(rx):
    """The rule's PCRE as a POSIX ERE for grep -E, or None when it uses
    more than named groups and \\d (lookaround, lazy quantifiers, ...)."""
    if re.search(r"\(\?[=!]|\(\?<[=!]|[*+?}]\?|\(\?[a-zA-Z]|\\[sSwWbBAzZQEKpPhHvVRX]", rx):
        return None
    e = re.sub(r"\(\?<[A-Za-z_][A-Za-z0-9_]*>", "(", rx)
    e = e.replace("(?:", "(").replace("\\d", "[0-9]").replace("\\D", "[^0-9]")
    return e


def ere_ok(e):
    """grep -E takes it without a complaint (an error or a warning)."""
    p = subprocess.run(["grep", "-E", "-e", e, "/dev/null"], capture_output=True, text=True)
    return p.returncode == 1 and not p.stderr.strip()


# ---- appending ---------------------------------------------------------

def append(src, dst, chunk_lines=10000, pause=0.002):
    """Append src to dst in chunks of whole lines, at a fast pace."""
    with open(src, "rb") as f:
        data = f.read()
    fd = os.open(dst, os.O_WRONLY | os.O_APPEND)
    try:
        pos = 0
        while pos < len(data):
            end = pos
            for _ in range(chunk_lines):
                end = data.find(b"\n", end) + 1
                if end == 0:
                    end = len(data)
                    break
                if end >= len(data):
                    break
            view = memoryview(data)[pos:end]
            while view:
                w = os.write(fd, view)
                view = view[w:]
            pos = end
            time.sleep(pause)
    finally:
        os.close(fd)


# ---- esxwatch -----------------------------------------------------------

def status_fields(storage):
    """The status file's top-level figures and the vmkernel filelog's."""
    try:
        with open(os.path.join(storage, "status")) as f:
            text = f.read()
    except OSError:
        return None
    top, fl, section = {}, {}, None
    for line in text.split("\n"):
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            if section == "filelog":
                section = "filelog:" + line.split(":", 1)[1].strip()
            k, _, v = line.partition(": ")
            if section not in ("filelog", "dest", "collector") and not section.startswith("filelog:"):
                top[k] = v
        elif section == "filelog:vmkernel" and not line.startswith("  "):
            k, _, v = line.strip().partition(": ")
            fl.setdefault(k, v)
    return top, fl


def agent_yaml(tmp, server, forward, extra=""):
    log = os.path.join(tmp, "log")
    return """server: %s
storage: {directory: %s, max_disk_buffer: 4000}
rules_file: %s
collectors:
  nic: {enabled: no}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
filelog:
  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes, forward: %s}
%s""" % (server, os.path.join(tmp, "storage"), CATALOGUE, log, forward, extra)


class Esxwatch:
    """The daemon (not --once) following log/vmkernel.log from its start."""

    def __init__(self, binary, tmp, server, forward, env=None):
        self.binary, self.tmp, self.env = binary, tmp, env
        self.storage = os.path.join(tmp, "storage")
        self.conf = os.path.join(tmp, "agent.yaml")
        with open(self.conf, "w") as f:
            f.write(agent_yaml(tmp, server, forward))

    def start(self, procs):
        shutil.rmtree(self.storage, ignore_errors=True)
        e = dict(os.environ)
        e.update(self.env or {})
        self.p = procs.start([self.binary, "-c", self.conf], env=e,
                             log=os.path.join(self.tmp, "esxwatch.log"))
        wait_for("esxwatch follows the file", lambda: self.fields("files") == "1",
                 timeout=30, alive=[self.p])
        return self.p

    def fields(self, key, top=False):
        s = status_fields(self.storage)
        if s is None:
            return None
        return (s[0] if top else s[1]).get(key)

    def lines_read(self):
        return int(self.fields("lines_read") or 0)

    def log_tail(self):
        try:
            with open(os.path.join(self.tmp, "esxwatch.log"), errors="replace") as f:
                return f.read()[-800:]
        except OSError:
            return ""


# ---- rsyslog imfile -> omfwd -------------------------------------------

class Rsyslog:
    """rsyslogd -n with a configuration of its own (nothing of the
    system's: no imuxsock, its own work directory and pid file)."""

    def __init__(self, tmp, port):
        self.tmp = tmp
        self.work = os.path.join(tmp, "rsyslog")
        self.conf = os.path.join(tmp, "rsyslog.conf")
        with open(self.conf, "w") as f:
            f.write("""global(workDirectory="%s")
module(load="imfile" mode="inotify")
input(type="imfile" file="%s" tag="vmkernel:" ruleset="fwd" freshStartTail="off")
ruleset(name="fwd") {
  action(type="omfwd" target="127.0.0.1" port="%d" protocol="tcp")
}
""" % (self.work, os.path.join(tmp, "log", "vmkernel.log"), port))

    def start(self, procs):
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.p = procs.start(["rsyslogd", "-n", "-f", self.conf, "-i", os.path.join(self.work, "pid")],
                             log=os.path.join(self.tmp, "rsyslog.log"))
        time.sleep(1.0)       # imfile sets its inotify watch at start
        if self.p.poll() is not None:
            raise BenchError("rsyslogd exited: " + open(os.path.join(self.tmp, "rsyslog.log")).read()[-500:])
        return self.p


# ---- collectd tail -------------------------------------------------------

class Collectd:
    """collectd -f, the tail plugin counting every line of the file (one
    Match, Regex "."), the count written by the csv plugin every second."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.base = os.path.join(tmp, "collectd")
        self.conf = os.path.join(tmp, "collectd.conf")
        with open(self.conf, "w") as f:
            f.write("""Hostname "bench"
FQDNLookup false
Interval 1
BaseDir "%s"
PIDFile "%s/pid"
LoadPlugin tail
LoadPlugin csv
<Plugin csv>
  DataDir "%s/csv"
  StoreRates false
</Plugin>
<Plugin tail>
  <File "%s">
    Instance "vmkernel"
    <Match>
      Regex "."
      DSType "CounterInc"
      Type "counter"
      Instance "lines"
    </Match>
  </File>
</Plugin>
""" % (self.base, self.base, self.base, os.path.join(tmp, "log", "vmkernel.log")))

    def start(self, procs):
        shutil.rmtree(self.base, ignore_errors=True)
        os.makedirs(self.base)
        self.p = procs.start(["collectd", "-f", "-C", self.conf], log=os.path.join(self.tmp, "collectd.log"))
        # the tail plugin opens the file (at its end: empty) at its first read
        wait_for("collectd writes its first values", lambda: self.lines() is not None,
                 timeout=30, alive=[self.p])
        return self.p

    def lines(self):
        d = os.path.join(self.base, "csv", "bench", "tail-vmkernel")
        try:
            names = sorted(x for x in os.listdir(d) if x.startswith("counter-lines"))
        except OSError:
            return None
        if not names:
            return None
        with open(os.path.join(d, names[-1])) as f:
            rows = [r for r in f.read().split("\n") if r and r[0].isdigit()]
        return int(float(rows[-1].split(",")[1])) if rows else None


# ---- sinks -------------------------------------------------------------

class Sink:
    """A counting sink in a child process: tcp (lines) or cfapi (events).
    With bodies (cfapi), every inflated request body is also appended to
    that file: the JSON the agent compressed, for `gzip -1` on the same
    bytes."""

    def __init__(self, procs, tmp, kind, bodies=None):
        self.portfile = os.path.join(tmp, "sink-%s.port" % kind)
        self.countfile = os.path.join(tmp, "sink-%s.count" % kind)
        for f in (self.portfile, self.countfile):
            if os.path.exists(f):
                os.unlink(f)
        self.p = procs.start([sys.executable, os.path.abspath(__file__), "sink", kind,
                              self.portfile, self.countfile] + ([bodies] if bodies else []),
                             log=os.path.join(tmp, "sink.log"))
        wait_for("the %s sink listens" % kind, lambda: os.path.exists(self.portfile),
                 timeout=10, alive=[self.p])
        with open(self.portfile) as f:
            self.port = int(f.read())

    def count(self):
        try:
            with open(self.countfile) as f:
                return int(f.read() or 0)
        except (OSError, ValueError):
            return 0


def _sink_main(kind, portfile, countfile, bodies=None):
    total = [0]
    lock = threading.Lock()
    saved = open(bodies, "wb") if bodies else None
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)

    def add(n):
        with lock:
            total[0] += n

    def tcp(c):
        while True:
            b = c.recv(1 << 20)
            if not b:
                return
            add(b.count(b"\n"))

    def cfapi(c):
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
            n = body.count(b'"text":')
            if saved:
                with lock:
                    saved.write(body)
                    saved.flush()  # SIGTERM ends the sink with os._exit
            add(n)
            out = b'{"status":"ok","message":"events ingested","ingested":%d}' % n
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(out), out))

    def serve(c):
        try:
            (tcp if kind == "tcp" else cfapi)(c)
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


# ---- one measured run --------------------------------------------------

def follow_run(tmp, src, n, follower, progress, done_extra=None, procs=None, timeout=RUN_TIMEOUT):
    """Start follower on an empty log/vmkernel.log, append src (n lines),
    wait until progress() reaches n (and done_extra(), if given, is true);
    return the follower's CPU seconds from the first append to then."""
    log = os.path.join(tmp, "log", "vmkernel.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    open(log, "w").close()
    p = follower.start(procs)
    time.sleep(0.3)
    c0 = cpu_of(p.pid)
    t0 = time.monotonic()
    append(src, log)
    wait_for("%s reads %d lines" % (p.args[0], n),
             lambda: progress() >= n and (done_extra is None or done_extra()),
             timeout=timeout, every=0.2, alive=[p])
    c1 = cpu_of(p.pid)
    wall = time.monotonic() - t0
    procs.stop(p)
    return c1 - c0, wall


def need(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise BenchError("missing %s (make bench installs them: packaging/install-deps.sh bench)"
                         % ", ".join(missing))


if __name__ == "__main__":
    if len(sys.argv) in (5, 6) and sys.argv[1] == "sink" and sys.argv[2] in ("tcp", "cfapi"):
        signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
        _sink_main(*sys.argv[2:])
    sys.exit("usage: tailbench.py sink tcp|cfapi PORTFILE COUNTFILE [BODIES]")
