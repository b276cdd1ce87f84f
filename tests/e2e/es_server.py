"""A strict Elasticsearch _bulk endpoint for the elasticsearch tests, built
from Elastic's documented API (Python standard library only):

- "Bulk API" (www.elastic.co/docs/api/doc/elasticsearch/operation/
  operation-bulk; www.elastic.co/guide/en/elasticsearch/reference/current/
  docs-bulk.html): POST /_bulk, NDJSON action/document line pairs, the body
  terminated by a newline; actions index/create/update/delete with
  _index and an optional _id (at most 512 bytes); `create` of an existing
  _id fails that item with 409 version_conflict_engine_exception; the
  answer {"took","errors","items":[{"create":{"_index","_id","status",
  "error":{"type","reason"}}}]} in the order of the actions; `pipeline`
  and `filter_path` query parameters.
- "Common options" (…/reference/current/common-options.html): filter_path
  keeps only the named paths of the answer (* matches any one key).
- "Use a data stream" (…/reference/current/use-a-data-stream.html): a
  data stream takes only `create`, and each document needs @timestamp
  (an ISO 8601 date here).
- "Dynamic mapping": a field's first value fixes its type; a value of
  another type (an object where a string was, or the reverse) fails that
  item with 400 document_parsing_exception (mapper_parsing_exception
  before 8.x).
- Security ("API key authentication", "Basic authentication"):
  Authorization: ApiKey <encoded> or Basic <base64 user:password>, else
  401 security_exception.
- http.max_content_length: 100 MB, larger → 413.

`docs` holds the indexed documents (with "_index", "_id"); `bulks` each
request's actions; `items_script` maps a substring of a document's
`message` to the statuses its first appearances get ("R429": [429] →
429 once, then indexed; "R400": [400] * 99 → refused every time).
`lose_answers`: bulk requests (1-based) indexed whose answer is never sent
(the connection drops, as a proxy timeout would). `stop()`/`restart()`:
nothing listens meanwhile (connections refused).
"""
import base64
import datetime
import http.server
import json
import socketserver
import threading
import time
import urllib.parse

MAX_CONTENT = 100 * 1024 * 1024
ERRORS = {400: ("document_parsing_exception", "[1:2] failed to parse field [x] of type [long]"),
          429: ("es_rejected_execution_exception", "rejected execution of coordinating operation"),
          503: ("unavailable_shards_exception", "primary shard is not active")}


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _type(v):
    return "object" if isinstance(v, dict) else "keyword" if isinstance(v, str) else type(v).__name__


def _filter(obj, paths):
    """filter_path: keep only paths (lists of keys, "*" any) of obj."""
    if isinstance(obj, list):
        return [x for x in (_filter(e, paths) for e in obj) if x is not None]
    if not isinstance(obj, dict):
        return obj if any(not p for p in paths) else None
    out = {}
    for k, v in obj.items():
        sub = [p[1:] for p in paths if p and (p[0] == k or p[0] == "*")]
        if not sub:
            continue
        if any(not p for p in sub):
            out[k] = v
            continue
        f = _filter(v, sub)
        if f not in (None, {}, []):
            out[k] = f
    return out or None


class EsServer:
    def __init__(self, api_key=None, basic=None, data_stream=None, pipeline=None, items_script=None,
                 lose_answers=()):
        self.api_key = api_key          # the `encoded` value
        self.basic = basic              # (user, password)
        self.data_stream = data_stream  # its name: only create, @timestamp required
        self.pipeline = pipeline
        self.items_script = {k: list(v) for k, v in (items_script or {}).items()}
        self.lose_answers = set(lose_answers)   # bulk numbers (1-based): indexed, answer never sent
        self.lock = threading.Lock()
        self.docs = []
        self.ids = set()
        self.mapping = {}
        self.bulks = []
        self.violations = []
        owner = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                owner._handle(self)

            def _bad(self):
                owner._violate("method %s %s" % (self.command, self.path))
                owner._reply(self, 405, {"error": "method"})

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
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def restart(self):
        self._serve(self.port)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()

    def _violate(self, msg):
        with self.lock:
            self.violations.append(msg)

    def _reply(self, h, status, obj):
        raw = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    def _error(self, h, status, typ, reason):
        self._reply(h, status, {"error": {"type": typ, "reason": reason}, "status": status})

    def _authorized(self, h):
        a = h.headers.get("Authorization", "")
        if self.api_key is not None:
            return a == "ApiKey " + self.api_key
        if self.basic is not None:
            want = base64.b64encode(("%s:%s" % self.basic).encode()).decode()
            return a == "Basic " + want
        return True

    def _handle(self, h):
        u = urllib.parse.urlsplit(h.path)
        q = urllib.parse.parse_qs(u.query)
        n = h.headers.get("Content-Length")
        if n is None:
            self._violate("no Content-Length")
            return self._error(h, 411, "illegal_argument_exception", "no length")
        raw = h.rfile.read(int(n))
        if not self._authorized(h):
            self._violate("authorization %r" % h.headers.get("Authorization", "")[:12])
            return self._error(h, 401, "security_exception", "missing authentication credentials")
        if u.path != "/_bulk":
            self._violate("path %s" % u.path)
            return self._error(h, 404, "index_not_found_exception", "no such index")
        if int(n) > MAX_CONTENT:
            return self._error(h, 413, "content_too_long", "over http.max_content_length")
        ct = h.headers.get("Content-Type", "").split(";")[0].strip()
        if ct not in ("application/x-ndjson", "application/json"):
            self._violate("Content-Type %r" % ct)
            return self._error(h, 406, "illegal_argument_exception", "Content-Type")
        if self.pipeline is not None and q.get("pipeline") != [self.pipeline]:
            self._violate("pipeline %r" % q.get("pipeline"))
        if not raw.endswith(b"\n"):
            self._violate("body not terminated by a newline")
            return self._error(h, 400, "illegal_argument_exception",
                               "The bulk request must be terminated by a newline [\\n]")
        try:
            lines = raw.decode("utf-8").split("\n")[:-1]
            pairs = []
            for i in range(0, len(lines), 2):
                act = json.loads(lines[i])
                doc = json.loads(lines[i + 1])
                pairs.append((act, doc))
        except (ValueError, IndexError, UnicodeDecodeError) as e:
            self._violate("body: %s" % e)
            return self._error(h, 400, "x_content_parse_exception", str(e))
        items = [self._item(act, doc) for act, doc in pairs]
        with self.lock:
            self.bulks.append({"t": time.time(), "n": len(pairs), "query": q,
                               "messages": [d.get("message") for _, d in pairs],
                               "statuses": [list(i.values())[0]["status"] for i in items]})
        with self.lock:
            lost = len(self.bulks) in self.lose_answers
        if lost:   # indexed, then the connection drops: the client never learns
            h.close_connection = True
            h.connection.shutdown(2)
            return
        out = {"took": 1, "errors": any("error" in list(i.values())[0] for i in items), "items": items}
        if "filter_path" in q:
            paths = [p.split(".") for p in q["filter_path"][0].split(",")]
            out = _filter(out, paths) or {}
        self._reply(h, 200, out)

    def _item(self, act, doc):
        if len(act) != 1:
            self._violate("action %r" % act)
        op, meta = next(iter(act.items()))
        res = {"_index": meta.get("_index"), "status": 201}

        def err(status, typ=None, reason=None):
            t, r = ERRORS.get(status, ("error", "error"))
            res["status"] = status
            res["error"] = {"type": typ or t, "reason": reason or r}
            return {op: res}

        if op != "create":
            self._violate("action %s (a data stream takes only create)" % op)
            return err(400, "illegal_argument_exception", "only create")
        if not isinstance(meta.get("_index"), str):
            self._violate("no _index")
            return err(400, "action_request_validation_exception", "index is missing")
        if "_id" in meta and (not isinstance(meta["_id"], str) or len(meta["_id"].encode()) > 512):
            self._violate("_id %r" % meta["_id"])
            return err(400, "action_request_validation_exception", "id is too long")
        if self.data_stream is not None and meta["_index"] != self.data_stream:
            self._violate("index %s" % meta["_index"])
        if not isinstance(doc, dict):
            return err(400, "document_parsing_exception", "not an object")
        ts = doc.get("@timestamp")
        try:
            datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
        except (TypeError, ValueError):
            self._violate("@timestamp %r" % ts)
            return err(400, "document_parsing_exception",
                       "data stream timestamp field [@timestamp] is missing or not a date")
        msg = doc.get("message", "")
        with self.lock:
            for k, st in self.items_script.items():
                if k in msg and st:
                    return err(st.pop(0))
            for k, v in doc.items():
                t = self.mapping.setdefault(k, _type(v))
                if t != _type(v):
                    return err(400, "document_parsing_exception",
                               "[1:2] object mapping for [%s] tried to parse field as %s" % (k, _type(v)))
            if "_id" in meta:
                if meta["_id"] in self.ids:
                    return err(409, "version_conflict_engine_exception",
                               "[%s]: version conflict, document already exists" % meta["_id"])
                self.ids.add(meta["_id"])
            d = dict(doc)
            d["_index"], d["_id"] = meta["_index"], meta.get("_id")
            self.docs.append(d)
        res["_id"] = meta.get("_id") or "auto"
        return {op: res}
