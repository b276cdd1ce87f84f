"""Shared helpers for the end-to-end tests: run the real binary against a
simulated ESXi host and real receivers.

Every test module defines functions named test_* and ends with
`harness.main(globals())`, which runs them, prints "PASS: module/test" or
"FAIL: module/test: reason" per test, and exits non-zero on any failure.
Only the Python standard library is used.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.abspath(os.environ.get("ESXWATCH_BIN", os.path.join(TOP, "build", "esxwatch")))
FIXTURES = os.path.join(TOP, "tests", "fixtures")
# The binary finds the source tree's rule catalogue only when told
# (collectors/logwatch/logwatch.h): every agent a test starts inherits this.
os.environ.setdefault("ESXWATCH_RULES_FILE", os.path.join(TOP, "collectors", "logwatch", "rules", "esxi.yaml"))

# The fake esxcli/localcli/vdq: replays responses/<args>.txt, with
# <args>.rc (exit status) and <args>.sleep (seconds to hang first).
# Plain /bin/sh so it costs little and needs nothing but coreutils.
FAKE_TOOL = r"""#!/bin/sh
here=$(dirname "$0")
name=$(basename "$0")
key=$(printf '%s' "$name $*" | tr ' /' '__')
echo "$name $*" >> "$here/../calls.log"
r="$here/../responses/$key"
if [ -f "$r.sleep" ]; then sleep "$(cat "$r.sleep")"; fi
if [ -f "$r.txt" ]; then
  cat "$r.txt"
  if [ -f "$r.rc" ]; then exit "$(cat "$r.rc")"; fi
  exit 0
fi
if [ -f "$r.rc" ]; then exit "$(cat "$r.rc")"; fi
echo "Error: Unknown command or namespace $*" >&2
exit 1
"""


class FakeHost:
    """A simulated ESXi host: a tools dir with fake esxcli/localcli/vdq that
    replay captured output, and a log dir.  Change responses between runs."""

    def __init__(self, root, tools=("esxcli", "localcli", "vdq")):
        self.root = root
        self.tools_dir = os.path.join(root, "bin")
        self.resp_dir = os.path.join(root, "responses")
        self.log_dir = os.path.join(root, "log")
        for d in (self.tools_dir, self.resp_dir, self.log_dir):
            os.makedirs(d, exist_ok=True)
        for t in tools:
            self.add_tool(t)

    def add_tool(self, name):
        p = os.path.join(self.tools_dir, name)
        with open(p, "w") as f:
            f.write(FAKE_TOOL)
        os.chmod(p, 0o755)

    def remove_tool(self, name):
        p = os.path.join(self.tools_dir, name)
        if os.path.exists(p):
            os.unlink(p)

    @staticmethod
    def key(tool, args):
        return (tool + " " + args).replace(" ", "_").replace("/", "_")

    def set(self, tool, args, text=None, fixture=None, rc=None, sleep=None):
        """Answer `tool args` (e.g. "esxcli", "network nic list") with text
        or a fixture file under tests/fixtures."""
        base = os.path.join(self.resp_dir, self.key(tool, args))
        if fixture is not None:
            with open(os.path.join(FIXTURES, fixture), "rb") as f:
                text = f.read()
        if text is not None:
            with open(base + ".txt", "wb") as f:
                f.write(text.encode() if isinstance(text, str) else text)
        elif os.path.exists(base + ".txt"):
            os.unlink(base + ".txt")
        for ext, val in ((".rc", rc), (".sleep", sleep)):
            if val is None:
                if os.path.exists(base + ext):
                    os.unlink(base + ext)
            else:
                with open(base + ext, "w") as f:
                    f.write(str(val))

    def set_both(self, args, **kw):
        """Same answer from esxcli and localcli."""
        self.set("esxcli", args, **kw)
        self.set("localcli", args, **kw)

    def calls(self):
        p = os.path.join(self.root, "calls.log")
        if not os.path.exists(p):
            return []
        with open(p) as f:
            return [l.rstrip("\n") for l in f]


_STARTED = []  # agents started by the current test, stopped after it


class Agent:
    """One configuration and storage directory; run the binary with it."""

    def __init__(self, root, config_text, name="agent.yaml"):
        self.root = root
        self.config = os.path.join(root, name)
        self.storage = os.path.join(root, "storage")
        self.write_config(config_text)
        self.proc = None

    def write_config(self, text):
        with open(self.config, "w") as f:
            f.write(text.replace("@STORAGE@", self.storage).replace("@ROOT@", self.root))

    def run(self, *args, timeout=60, env=None):
        cmd = [BIN, "-c", self.config] + list(args)
        e = dict(os.environ)
        if env:
            e.update(env)
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=e)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def once(self, *args, **kw):
        """--once; returns (rc, events parsed from stdout JSON lines, stderr)."""
        rc, out, err = self.run("--once", *args, **kw)
        return rc, parse_events(out), err

    def start(self, *args, stdout=None, env=None):
        e = dict(os.environ)
        if env:
            e.update(env)
        self.stdout_path = os.path.join(self.root, "stdout.log")
        self.stderr_path = os.path.join(self.root, "stderr.log")
        self.proc = subprocess.Popen([BIN, "-c", self.config] + list(args),
                                     stdout=open(self.stdout_path, "ab") if stdout is None else stdout,
                                     stderr=open(self.stderr_path, "ab"), env=e)
        _STARTED.append(self.proc)
        return self.proc

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=15):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode
        self.proc = None
        return rc

    def kill9(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stderr_text(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()

    def stdout_events(self):
        with open(self.stdout_path, errors="replace") as f:
            return parse_events(whole_lines(f.read()))



def free_port(kind=socket.SOCK_STREAM, host="127.0.0.1"):
    """A port nothing listens on at the moment (of kind, on host)."""
    s = socket.socket(socket.AF_INET, kind)
    s.bind((host, 0))
    p = s.getsockname()[1]
    s.close()
    return p


def whole_lines(text):
    """text up to its last newline: a line still being written is left for
    the next read."""
    return text[:text.rfind("\n") + 1]


def file_events(path):
    """The events in a file sink's output (or any JSON-lines file the agent
    writes), whole lines only; [] while the file does not exist."""
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return parse_events(whole_lines(f.read()))


def parse_events(text):
    """JSON lines -> list of dicts; a line that is not valid JSON fails the test."""
    evs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            evs.append(json.loads(line))
        except ValueError:
            raise AssertionError("stdout line is not JSON: %r" % line[:300])
    return evs


def select(events, **fields):
    """Events whose fields equal all of the given values."""
    return [e for e in events if all(e.get(k) == v for k, v in fields.items())]


def wait_for(pred, timeout=20.0, interval=0.05, what="condition"):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    raise AssertionError("timed out after %.0fs waiting for %s" % (timeout, what))


def tmpdir(prefix="esxwatch-e2e-"):
    d = tempfile.mkdtemp(prefix=prefix)
    os.chmod(d, 0o755)
    return d


def fail(msg):
    raise AssertionError(msg)


def eq(got, want, what=""):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what or "value", got, want))


def main(ns):
    mod = os.path.splitext(os.path.basename(ns.get("__file__", sys.argv[0])))[0]
    only = sys.argv[1:]
    tests = [(n, f) for n, f in ns.items() if n.startswith("test_") and callable(f)]
    failed = 0
    if not os.path.exists(BIN):
        print("FAIL: %s/setup: binary %s not built" % (mod, BIN))
        sys.exit(1)
    for name, fn in tests:
        if only and name not in only:
            continue
        d = tmpdir()
        t0 = time.time()
        try:
            fn(d)
            print("PASS: %s/%s (%.1fs)" % (mod, name, time.time() - t0))
            shutil.rmtree(d, ignore_errors=True)
        except Exception as e:  # a test failure or an unexpected error
            failed += 1
            print("FAIL: %s/%s: %s" % (mod, name, str(e).splitlines()[0] if str(e) else type(e).__name__))
            traceback.print_exc(file=sys.stdout)
            print("    (work dir kept: %s)" % d)
        finally:
            # A failed test must not leave its agent running.
            while _STARTED:
                p = _STARTED.pop()
                if p.poll() is None:
                    p.kill()
                    p.wait()
        sys.stdout.flush()
    sys.exit(1 if failed else 0)
