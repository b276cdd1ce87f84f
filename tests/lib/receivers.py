"""Strict receivers for the sink tests (Python standard library only).

CfapiReceiver enforces every rule of Log Insight's ingestion API (cfapi)
for POST /api/v1/events/ingest/{agentId} and records each violation; it
also serves POST /api/v1/sessions (users={name: password}, session_ttl,
expire_sessions(); an unknown or expired session gets 401, or 440 with
expired_status=440) and applies the clamping rule of loginsight-api.md
§1.3: an unauthenticated event's timestamp is clamped to within 10 minutes
of the server's clock (clock_offset_s shifts that clock, to simulate an
outage), an authenticated one is kept.  `events` holds what was sent,
`stored` what the server would keep (timestamp after clamping, and
"_authenticated");
HttpReceiver records what the http sink posts.  Both run in a thread of the
test process, over plain HTTP or TLS (certs.py), and can be scripted to
answer the n-th request with a given status (503 + Retry-After, 415 to gzip,
400...).

Run as a program for the C unit tests:
    receivers.py cfapi|http --port-file F --log F [--tls CERT KEY] [--script 503:ra=3,415,...]
It writes its port to --port-file and one JSON line per request to --log.
"""
import email.utils
import gzip
import http.server
import json
import os
import re
import secrets
import socket
import socketserver
import ssl
import sys
import threading
import time
import zlib

MAX_BODY = 4 * 1024 * 1024
MAX_EVENTS = 500
MAX_TEXT = 16 * 1024
NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
RESERVED = {"text", "timestamp", "source", "event_type"}
PATH_RE = re.compile(r"^/api/v1/events/ingest/([A-Za-z0-9._~%-]+)$")
DRIFT_MS = 10 * 60 * 1000


def check_cfapi_body(obj, now_ms):
    """Every rule of the v1 ingest schema; returns a list of violations."""
    v = []
    if not isinstance(obj, dict):
        return ["body is not a JSON object"]
    extra = set(obj) - {"events"}
    if extra:
        v.append("unknown top-level keys %s" % sorted(extra))
    evs = obj.get("events")
    if not isinstance(evs, list):
        return v + ["events missing or not a list"]
    if not 1 <= len(evs) <= MAX_EVENTS:
        v.append("%d events in one request (1..%d)" % (len(evs), MAX_EVENTS))
    for i, e in enumerate(evs):
        w = "event %d: " % i
        if not isinstance(e, dict):
            v.append(w + "not an object")
            continue
        extra = set(e) - {"text", "timestamp", "fields"}
        if extra:
            v.append(w + "unknown keys %s" % sorted(extra))
        t = e.get("text")
        if not isinstance(t, str):
            v.append(w + "text missing or not a string")
        elif len(t.encode("utf-8", "surrogatepass")) > MAX_TEXT:
            v.append(w + "text is %d bytes (> 16 KB)" % len(t.encode("utf-8", "surrogatepass")))
        if "timestamp" in e:
            ts = e["timestamp"]
            if not isinstance(ts, int) or isinstance(ts, bool):
                v.append(w + "timestamp not an integer: %r" % (ts,))
            elif ts < 10 ** 12:
                v.append(w + "timestamp %d is not in milliseconds" % ts)
            elif ts > now_ms + DRIFT_MS:
                v.append(w + "timestamp %d is in the future" % ts)
        if "fields" in e:
            fs = e["fields"]
            if not isinstance(fs, list):
                v.append(w + "fields not a list")
                continue
            seen = set()
            for f in fs:
                if not isinstance(f, dict) or set(f) != {"name", "content"}:
                    v.append(w + "field is not {name, content}: %r" % (f,))
                    continue
                n, c = f["name"], f["content"]
                if not isinstance(n, str) or not NAME_RE.match(n):
                    v.append(w + "invalid field name %r" % (n,))
                elif n in RESERVED:
                    v.append(w + "reserved field name %r" % n)
                elif n in seen:
                    v.append(w + "duplicate field name %r" % n)
                else:
                    seen.add(n)
                if not isinstance(c, str):
                    v.append(w + "field %r content not a string" % (n,))
    return v


def to_flat(e):
    """cfapi event -> the flat dict of docs/events.md (for comparisons)."""
    d = {"text": e.get("text"), "timestamp": e.get("timestamp")}
    for f in e.get("fields", []):
        d[f["name"]] = f["content"]
    return d


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Base:
    kind = "base"

    def __init__(self, tls=None, script=None, log_path=None):
        """tls: (certfile, keyfile) or None.  script: list of responses for
        the first requests, each "200", "503:ra=3", "503:date=3", "415",
        "400", "200:ingested=1", "close" (drop the connection)."""
        self.lock = threading.Lock()
        self.down = False   # True: drop every connection unanswered, as a crashed server would
        self.requests = []
        self.violations = []
        self.events = []
        self.script = list(script or [])
        self.log_path = log_path
        self.connections = 0
        owner = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                super().setup()
                with owner.lock:
                    owner.connections += 1
                    self.conn_no = owner.connections

            def do_POST(self):
                owner._handle(self)

            def _bad_method(self):
                owner._violation("method %s %s" % (self.command, self.path))
                owner._record({"t": time.time(), "path": self.path, "method": self.command,
                               "violations": ["method %s" % self.command]})
                self._reply(405, b'{"errorMessage":"method"}')

            do_GET = do_PUT = do_DELETE = do_PATCH = _bad_method

            def _reply(self, code, body, headers=()):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = _Server(("127.0.0.1", 0), H)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls[0], tls[1])
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def _violation(self, msg):
        with self.lock:
            self.violations.append(msg)

    def _record(self, rec):
        with self.lock:
            self.requests.append(rec)
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps(rec) + "\n")

    def _next_script(self):
        with self.lock:
            return self.script.pop(0) if self.script else None

    def end_script(self):
        """Drop the scripted answers not given yet: from now on every
        request gets the normal answer."""
        with self.lock:
            self.script.clear()

    def _read_body(self, h, rec):
        te = h.headers.get("Transfer-Encoding")
        cl = h.headers.get("Content-Length")
        if te is not None or cl is None:
            rec["violations"].append("no Content-Length (Transfer-Encoding %r)" % te)
            return None
        n = int(cl)
        if n > 2 * MAX_BODY:
            rec["violations"].append("Content-Length %d" % n)
            return None
        raw = h.rfile.read(n)
        rec["wire_bytes"] = len(raw)
        enc = h.headers.get("Content-Encoding")
        rec["encoding"] = enc
        if enc == "gzip":
            try:
                return gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as e:
                rec["violations"].append("bad gzip body: %s" % e)
                return None
        if enc not in (None, "identity"):
            rec["violations"].append("unknown Content-Encoding %r" % enc)
            return None
        return raw

    def _scripted(self, h, step, rec):
        """Answer a scripted step; True if answered."""
        if step is None:
            return False
        rec["scripted"] = step
        code, _, arg = step.partition(":")
        if code != "200":
            # recorded before the answer leaves: the agent's next request
            # (maybe on a new connection, another thread) comes after it
            self._record(rec)
        if code == "close":
            h.close_connection = True
            h.wfile.flush()
            h.connection.shutdown(2)
            return True
        code = int(code)
        if code == 200:
            return False   # normal processing, with options
        hdrs = []
        if arg.startswith("ra="):
            hdrs.append(("Retry-After", arg[3:]))
        elif arg.startswith("date="):
            hdrs.append(("Retry-After", email.utils.formatdate(time.time() + int(arg[5:]), usegmt=True)))
        h._reply(code, b'{"errorMessage":"scripted %d"}' % code, hdrs)
        return True

    def _handle(self, h):
        if self.down:
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if h.path == "/api/v1/sessions" and hasattr(self, "login"):
            self.login(h)
            return
        rec = {"t": time.time(), "conn": h.conn_no, "path": h.path, "method": h.command,
               "headers": {k.lower(): v for k, v in h.headers.items()}, "violations": []}
        body = self._read_body(h, rec)
        if body is not None:
            rec["body_len"] = len(body)
        step = self._next_script()
        if self._scripted(h, step, rec):
            return
        if body is None:
            self._finish(h, rec, 400, b'{"errorMessage":"bad body"}')
            return
        rec["body_len"] = len(body)
        self.check(h, rec, body, step)

    def _finish(self, h, rec, code, body):
        if rec["violations"]:
            with self.lock:
                self.violations.extend(rec["violations"])
        self._record(rec)
        h._reply(code, body)


class CfapiReceiver(_Base):
    kind = "cfapi"
    PROVIDERS = ("Local", "ActiveDirectory", "vIDM")

    def __init__(self, tls=None, script=None, log_path=None, clock_offset_s=0,
                 users=None, session_ttl=1800, expired_status=401):
        self.clock_offset_s = clock_offset_s
        self.users = dict(users or {})
        self.session_ttl = session_ttl
        self.expired_status = expired_status
        self.sessions = {}      # sessionId -> expiry (server clock, s)
        self.logins = []        # {"user", "provider", "ok", "t"}
        self.stored = []
        super().__init__(tls=tls, script=script, log_path=log_path)

    def server_now(self):
        return time.time() + self.clock_offset_s

    def expire_sessions(self):
        """Every session ends now (as if its ttl had run out)."""
        with self.lock:
            for k in self.sessions:
                self.sessions[k] = 0

    def login(self, h):
        rec = {"t": time.time(), "conn": h.conn_no, "path": h.path, "method": h.command,
               "login": True, "violations": []}
        v = rec["violations"]
        body = self._read_body(h, rec)
        try:
            obj = json.loads(body.decode("utf-8")) if body is not None else None
        except (UnicodeDecodeError, ValueError):
            obj = None
        if not isinstance(obj, dict) or set(obj) != {"username", "password", "provider"} or \
                not all(isinstance(x, str) for x in obj.values()):
            v.append("login body is not {username, password, provider}")
            obj = {}
        elif obj["provider"] not in self.PROVIDERS:
            v.append("unknown provider %r" % obj["provider"])
        if h.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            v.append("login Content-Type %r" % h.headers.get("Content-Type"))
        ok = not v and obj.get("username") in self.users and \
            self.users[obj["username"]] == obj.get("password")
        rec["user"] = obj.get("username")
        rec["ok"] = ok
        with self.lock:
            self.logins.append({"user": obj.get("username"), "provider": obj.get("provider"),
                                "ok": ok, "t": time.time()})
        if not ok:
            self._finish(h, rec, 401 if not v else 400,
                         b'{"errorMessage":"Invalid username or password."}')
            return
        token = secrets.token_urlsafe(24) + "=="
        with self.lock:
            self.sessions[token] = self.server_now() + self.session_ttl
        self._finish(h, rec, 200, json.dumps({"userId": "u-1", "sessionId": token,
                                              "ttl": self.session_ttl}).encode())

    def _auth(self, h, rec):
        """None: unauthenticated; True: a valid session; False: refused."""
        a = h.headers.get("Authorization")
        if a is None:
            rec["authenticated"] = False
            return None
        m = re.match(r"^Bearer (\S+)$", a)
        with self.lock:
            exp = self.sessions.get(m.group(1)) if m else None
        rec["authenticated"] = exp is not None and exp > self.server_now()
        if not m:
            rec["violations"].append("Authorization header is not Bearer <sessionId>")
        return rec["authenticated"]

    def _store(self, evs, authenticated):
        now = int(self.server_now() * 1000)
        out = []
        for e in evs:
            f = to_flat(e)
            ts = f.get("timestamp")
            if not authenticated and isinstance(ts, int):
                f["timestamp"] = min(max(ts, now - DRIFT_MS), now + DRIFT_MS)
            f["_authenticated"] = bool(authenticated)
            out.append(f)
        return out

    def check(self, h, rec, body, step):
        auth = self._auth(h, rec)
        if auth is False:
            self._record(rec)
            h._reply(self.expired_status, b"Invalid session ID" if self.expired_status == 401
                     else b"Login Timeout")
            return
        self._check(h, rec, body, step, auth)

    def _check(self, h, rec, body, step, auth):
        v = rec["violations"]
        m = PATH_RE.match(h.path)
        if not m:
            v.append("path %r" % h.path)
        else:
            rec["agent_id"] = m.group(1)
        ct = h.headers.get("Content-Type", "")
        if ct.split(";")[0].strip() != "application/json":
            v.append("Content-Type %r" % ct)
        if len(body) > MAX_BODY:
            v.append("JSON body is %d bytes (> 4 MB)" % len(body))
        try:
            obj = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            v.append("body is not JSON/UTF-8: %s" % e)
            self._finish(h, rec, 400, b'{"errorMessage":"bad JSON"}')
            return
        v.extend(check_cfapi_body(obj, int(self.server_now() * 1000)))
        evs = obj.get("events") if isinstance(obj, dict) else None
        if not isinstance(evs, list) or not evs:
            self._finish(h, rec, 400, b'{"errorMessage": "Missing events"}')
            return
        rec["n"] = len(evs)
        if v:
            self._finish(h, rec, 400, b'{"errorMessage":"invalid"}')
            return
        rec["events"] = [to_flat(e) for e in evs]
        ingested = len(evs)
        if step and step.startswith("200:ingested="):
            ingested = int(step.split("=", 1)[1])
        with self.lock:
            self.events.extend(to_flat(e) for e in evs[:ingested])
            self.stored.extend(self._store(evs[:ingested], auth))
        self._finish(h, rec, 200, json.dumps({"status": "ok", "message": "events ingested",
                                              "ingested": ingested}).encode())


class HttpReceiver(_Base):
    kind = "http"

    def check(self, h, rec, body, step):
        v = rec["violations"]
        ct = h.headers.get("Content-Type", "").split(";")[0].strip()
        try:
            text = body.decode("utf-8")
            if ct == "application/json":
                rec["format"] = "json_array"
                evs = json.loads(text)
                if not isinstance(evs, list):
                    v.append("json_array body is not an array")
                    evs = []
            else:
                rec["format"] = "json_lines"
                if ct != "application/x-ndjson":
                    v.append("Content-Type %r" % ct)
                if not text.endswith("\n"):
                    v.append("json_lines body does not end with a newline")
                evs = [json.loads(l) for l in text.split("\n") if l]
        except (UnicodeDecodeError, ValueError) as e:
            v.append("body is not JSON: %s" % e)
            evs = []
        for e in evs:
            if not isinstance(e, dict) or not isinstance(e.get("text"), str) or \
                    not isinstance(e.get("timestamp"), int):
                v.append("not an esxwatch event (docs/events.md): %r" % (e,))
                continue
            for k, val in e.items():
                if k not in ("text", "timestamp") and (not NAME_RE.match(k) or not isinstance(val, str)):
                    v.append("bad field %r=%r" % (k, val))
        rec["n"] = len(evs)
        rec["events"] = evs
        with self.lock:
            self.events.extend(evs)
        self._finish(h, rec, 200 if not v else 400, b'{"ok":true}')


def _cli(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["cfapi", "http"])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", nargs=2)
    ap.add_argument("--certs", help="make the test PKI in this directory and serve its cert")
    ap.add_argument("--cert", default="server", choices=["server", "wrong"])
    ap.add_argument("--script", default="")
    a = ap.parse_args(argv)
    cls = CfapiReceiver if a.kind == "cfapi" else HttpReceiver
    if a.certs:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import certs
        c = certs.make(a.certs)
        a.tls = (c.server_crt, c.server_key) if a.cert == "server" else (c.wrong_crt, c.wrong_key)
    r = cls(tls=a.tls, script=[s for s in a.script.split(",") if s], log_path=a.log)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(r.port))
    os.rename(tmp, a.port_file)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    _cli(sys.argv[1:])
