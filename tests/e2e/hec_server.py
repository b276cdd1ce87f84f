"""A strict Splunk HTTP Event Collector for the splunk_hec tests, built from
Splunk's documented API (Python standard library only):

- "Format events for HTTP Event Collector" (docs.splunk.com/Documentation/
  Splunk/latest/Data/FormateventsforHTTPEventCollector): the /event body is
  JSON event objects, concatenated ("batched") or whitespace-separated;
  `event` required and not blank, `time` epoch seconds (a number, decimals
  for sub-second), `host`, `source`, `sourcetype`, `index` strings,
  `fields` a flat object of indexed fields whose values are strings or
  arrays of strings, never objects.
- "HTTP Event Collector REST API endpoints" (help.splunk.com/en/
  splunk-enterprise/get-data-in/collect-http-event-data/
  http-event-collector-rest-api-endpoints): POST services/collector/event,
  POST services/collector/ack with {"acks":[ids]} answering
  {"acks":{"id":true|false}}.
- "About HTTP Event Collector Indexer Acknowledgment" (docs.splunk.com/
  Documentation/Splunk/latest/Data/AboutHECIDXAck): with ack on, every
  request names a channel (X-Splunk-Request-Channel, a GUID), the answer
  carries an ackId counted per channel; an ack once answered true is
  forgotten.
- "Troubleshoot HTTP Event Collector" (docs.splunk.com/Documentation/
  Splunk/latest/Data/TroubleshootHTTPEventCollector), the status codes:
  0 200 Success, 2 401 Token is required, 3 401 Invalid authorization,
  4 403 Invalid token, 5 400 No data, 6 400 Invalid data format,
  7 400 Incorrect index, 9 503 Server is busy, 10 400 Data channel is
  missing, 11 400 Invalid data channel, 12 400 Event field is required,
  13 400 Event field cannot be blank, 14 400 ACK is disabled,
  15 400 Error in handling indexed fields.
- max_content_length (limits.conf [http_input]): 1 MB here; larger → 413.

`events` holds what was indexed (one dict per event, with "_req"), each
request is in `requests`; `script` answers the first requests with
"503:9", "403:4", "400:6"...; `withhold` is a set of request numbers
(1-based, /event only) whose events are lost (not indexed) and whose ack
never turns true, as an indexer that crashed before indexing; `refuse`
is a substring: a request holding an event with it gets 400 code 6 and
indexes nothing; `down` drops every connection unanswered.
"""
import http.server
import json
import re
import socketserver
import threading
import time
import uuid

MAX_CONTENT = 1000000
CODES = {0: (200, "Success"), 2: (401, "Token is required"), 3: (401, "Invalid authorization"),
         4: (403, "Invalid token"), 5: (400, "No data"), 6: (400, "Invalid data format"),
         7: (400, "Incorrect index"), 9: (503, "Server is busy"),
         10: (400, "Data channel is missing"), 11: (400, "Invalid data channel"),
         12: (400, "Event field is required"), 13: (400, "Event field cannot be blank"),
         14: (400, "ACK is disabled"), 15: (400, "Error in handling indexed fields")}
TOP_KEYS = {"time", "host", "source", "sourcetype", "index", "event", "fields"}
NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*$")


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class HecServer:
    def __init__(self, token, ack=False, indexes=("main",), script=None, withhold=(), refuse=None):
        self.token = token
        self.ack = ack
        self.indexes = set(indexes)
        self.script = list(script or [])
        self.withhold = set(withhold)
        self.refuse = refuse
        self.down = False
        self.lock = threading.Lock()
        self.events = []
        self.requests = []
        self.violations = []
        self.nevent_reqs = 0
        self.channels = {}     # channel -> {"next": n, "pending": {ackId: True(indexed) | False(withheld)}}
        owner = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                owner._handle(self)

            def _bad(self):
                owner._violate("method %s %s" % (self.command, self.path))
                owner._reply(self, 405, 6)

            do_GET = do_PUT = do_DELETE = _bad

        self._H = H
        self.httpd = None
        self._serve(0)
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port

    def _serve(self, port):
        self.httpd = _Server(("127.0.0.1", port), self._H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        """Nothing listens any more (a crashed or restarting Splunk):
        connections are refused."""
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def restart(self):
        """Listen again on the same port, the indexed events and the
        channels' acknowledgements kept."""
        self._serve(self.port)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()

    def _violate(self, msg):
        with self.lock:
            self.violations.append(msg)

    def _reply(self, h, status, code, extra=None):
        body = {"text": CODES.get(code, (status, "error"))[1], "code": code}
        body.update(extra or {})
        raw = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        if status == 503:
            h.send_header("Retry-After", "1")
        h.end_headers()
        h.wfile.write(raw)

    def _fail(self, h, rec, code, why=None):
        rec["answer"] = code
        if why:
            rec["why"] = why
        with self.lock:
            self.requests.append(rec)
        self._reply(h, CODES[code][0], code)

    def _auth(self, h):
        a = h.headers.get("Authorization")
        if a is None:
            return 2
        if not a.startswith("Splunk "):
            return 3
        return 0 if a[len("Splunk "):] == self.token else 4

    def _channel(self, h):
        ch = h.headers.get("X-Splunk-Request-Channel")
        if ch is None:
            return None, 10
        try:
            uuid.UUID(ch)
        except ValueError:
            return None, 11
        return ch, 0

    def _handle(self, h):
        if self.down:
            h.close_connection = True
            h.connection.shutdown(2)
            return
        rec = {"t": time.time(), "path": h.path, "headers": {k.lower(): v for k, v in h.headers.items()}}
        n = h.headers.get("Content-Length")
        if n is None or h.headers.get("Transfer-Encoding"):
            self._violate("no Content-Length")
            return self._fail(h, rec, 5)
        raw = h.rfile.read(int(n))
        rec["bytes"] = len(raw)
        code = self._auth(h)
        if code:
            return self._fail(h, rec, code)
        if h.path == "/services/collector/ack":
            return self._ack(h, rec, raw)
        if h.path != "/services/collector/event":
            self._violate("path %s" % h.path)
            return self._fail(h, rec, 6, "path")
        if int(n) > MAX_CONTENT:
            self._violate("body of %s bytes over max_content_length" % n)
            rec["answer"] = 413
            with self.lock:
                self.requests.append(rec)
            h.send_response(413)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        with self.lock:
            self.nevent_reqs += 1
            rec["n_req"] = self.nevent_reqs
            step = self.script.pop(0) if self.script else None
        ch = None
        if self.ack:
            ch, code = self._channel(h)
            if code:
                self._violate("ack on and channel %s" % ("missing" if code == 10 else "invalid"))
                return self._fail(h, rec, code)
        if step:
            status, _, c = step.partition(":")
            rec["scripted"] = step
            return self._fail(h, rec, int(c))
        evs, code, why = self._parse(raw)
        rec["n"] = len(evs)
        if code:
            self._violate("request %d: %s" % (rec["n_req"], why))
            return self._fail(h, rec, code, why)
        if self.refuse and any(self.refuse in e["event"] for e in evs):
            return self._fail(h, rec, 6, "refused on purpose")
        lost = rec["n_req"] in self.withhold
        rec["withheld"] = lost
        extra = {}
        with self.lock:
            if not lost:
                for e in evs:
                    e["_req"] = rec["n_req"]
                    self.events.append(e)
            if self.ack:
                c = self.channels.setdefault(ch, {"next": 0, "pending": {}})
                extra["ackId"] = rec["ackId"] = c["next"]
                c["pending"][c["next"]] = not lost
                c["next"] += 1
            rec["answer"] = 0
            self.requests.append(rec)
        self._reply(h, 200, 0, extra)

    def _parse(self, raw):
        """([events], code, why): the whole request, or its first fault."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return [], 6, "not UTF-8"
        dec = json.JSONDecoder()
        i, evs = 0, []
        while True:
            while i < len(text) and text[i] in " \t\r\n":
                i += 1
            if i == len(text):
                break
            try:
                e, i = dec.raw_decode(text, i)
            except ValueError as x:
                return [], 6, "not JSON at %d: %s" % (i, x)
            if not isinstance(e, dict):
                return [], 6, "not an object"
            code, why = self._check(e)
            if code:
                return [], code, why
            evs.append(e)
        if not evs:
            return [], 5, "no data"
        return evs, 0, None

    def _check(self, e):
        extra = set(e) - TOP_KEYS
        if extra:
            return 6, "unknown keys %s" % sorted(extra)
        if "event" not in e:
            return 12, "no event"
        if e["event"] in ("", None):
            return 13, "blank event"
        if not isinstance(e["event"], str):
            return 6, "event is not the text"
        if "time" in e and (isinstance(e["time"], bool) or not isinstance(e["time"], (int, float))):
            return 6, "time is not a number: %r" % (e["time"],)
        for k in ("host", "source", "sourcetype", "index"):
            if k in e and not isinstance(e[k], str):
                return 6, "%s is not a string" % k
        if "index" in e and e["index"] not in self.indexes:
            return 7, "index %s" % e["index"]
        f = e.get("fields", {})
        if not isinstance(f, dict):
            return 15, "fields is not an object"
        for k, v in f.items():
            if not NAME_RE.match(k):
                return 15, "field name %r" % k
            if isinstance(v, list):
                if not all(isinstance(x, str) for x in v):
                    return 15, "field %s: array of non-strings" % k
            elif not isinstance(v, str):
                return 15, "field %s is %s, not a string" % (k, type(v).__name__)
        return 0, None

    def _ack(self, h, rec, raw):
        if not self.ack:
            return self._fail(h, rec, 14)
        ch, code = self._channel(h)
        if code:
            self._violate("ack poll without a channel")
            return self._fail(h, rec, code)
        try:
            q = json.loads(raw)
            ids = q["acks"]
            assert isinstance(ids, list) and all(isinstance(x, int) for x in ids)
        except (ValueError, KeyError, AssertionError, TypeError):
            self._violate("ack body %r" % raw[:100])
            return self._fail(h, rec, 6)
        out = {}
        with self.lock:
            c = self.channels.get(ch, {"pending": {}})
            for i in ids:
                ok = c["pending"].get(i, False)
                out[str(i)] = ok
                if ok:
                    del c["pending"][i]   # answered true once: forgotten
            rec["acks"] = out
            self.requests.append(rec)
        raw = json.dumps({"acks": out}).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    def unconfirmed(self):
        """ackIds indexed whose true the client has not asked for yet."""
        with self.lock:
            return sum(1 for c in self.channels.values() for v in c["pending"].values() if v)

    def event_requests(self):
        with self.lock:
            return [r for r in self.requests if r["path"] == "/services/collector/event"]
