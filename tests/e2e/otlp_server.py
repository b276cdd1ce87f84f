"""A strict OTLP/HTTP logs receiver (JSON encoding), for the otlp sink tests.

Built from the documented protocol, not from the sink:
- OTLP specification, "OTLP/HTTP" (https://opentelemetry.io/docs/specs/otlp/#otlphttp):
  POST to the logs path (/v1/logs by default), "JSON Protobuf Encoding"
  (Content-Type application/json, lowerCamelCase field names, enum values
  as integers, trace/span ids hex), "Full Success" (200 with an
  ExportLogsServiceResponse), "Partial Success" (200 with partialSuccess
  {rejectedLogRecords, errorMessage}; the client must not retry),
  "Failures" (400 Bad Request not retryable; "Retryable Response Codes"
  429, 502, 503, 504, with Retry-After).
- The proto3 JSON mapping (https://protobuf.dev/programming-guides/json/):
  int64 / fixed64 values (timeUnixNano, observedTimeUnixNano, intValue)
  are decimal strings.
- opentelemetry-proto logs/v1/logs.proto and common/v1/common.proto
  (https://github.com/open-telemetry/opentelemetry-proto): ResourceLogs
  {resource, scopeLogs, schemaUrl}, ScopeLogs {scope, logRecords,
  schemaUrl}, LogRecord fields, SeverityNumber 0..24, AnyValue's oneof.
- The collector's otlp receiver takes gzip bodies and refuses bodies past
  confighttp's max_request_body_size (20 MiB by default).

`stored` holds what the collector would pass on: one flat dict per log
record (docs/events.md shape: text, timestamp, hostname,
esxwatch_severity, the attributes as strings) plus "_severity_number".
Scripted answers (the first requests): "429:ra=1", "503", "400",
"partial=N" (200 keeping all but the last N records of that request,
partialSuccess saying N), "close".
"""
import json
import re
import time

import receivers

MAX_BODY = 20 * 1024 * 1024
RECORD_KEYS = {"timeUnixNano", "observedTimeUnixNano", "severityNumber", "severityText",
               "body", "attributes", "droppedAttributesCount", "flags", "traceId",
               "spanId", "eventName"}
ANY_KEYS = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue",
            "kvlistValue", "bytesValue"}
U64_RE = re.compile(r"^[0-9]{1,20}$")
I64_RE = re.compile(r"^-?[0-9]{1,19}$")


def check_any(v, w, out):
    """An AnyValue: exactly one member of the oneof, typed."""
    if not isinstance(v, dict) or len(v) != 1 or set(v) - ANY_KEYS:
        out.append(w + "not an AnyValue: %r" % (v,))
        return None
    (k, x), = v.items()
    if k == "stringValue" and not isinstance(x, str):
        out.append(w + "stringValue not a string")
    elif k == "intValue" and not (isinstance(x, str) and I64_RE.match(x)):
        out.append(w + "intValue %r is not an int64 as a decimal string" % (x,))
    return x


def check_attrs(attrs, w, out):
    if not isinstance(attrs, list):
        out.append(w + "attributes not a list")
        return {}
    d = {}
    for kv in attrs:
        if not isinstance(kv, dict) or set(kv) != {"key", "value"} or \
                not isinstance(kv["key"], str) or not kv["key"]:
            out.append(w + "not a KeyValue: %r" % (kv,))
            continue
        if kv["key"] in d:
            out.append(w + "duplicate attribute %r" % kv["key"])
        d[kv["key"]] = check_any(kv["value"], w + kv["key"] + ": ", out)
    return d


def check_record(r, w, out):
    if not isinstance(r, dict):
        out.append(w + "not an object")
        return None
    extra = set(r) - RECORD_KEYS
    if extra:
        out.append(w + "unknown LogRecord fields %s" % sorted(extra))
    for k in ("timeUnixNano", "observedTimeUnixNano"):
        if k in r and not (isinstance(r[k], str) and U64_RE.match(r[k])):
            out.append(w + "%s %r is not a fixed64 as a decimal string" % (k, r[k]))
    sn = r.get("severityNumber", 0)
    if not isinstance(sn, int) or isinstance(sn, bool) or not 0 <= sn <= 24:
        out.append(w + "severityNumber %r not an enum integer 0..24" % (sn,))
    if "severityText" in r and not isinstance(r["severityText"], str):
        out.append(w + "severityText not a string")
    body = check_any(r.get("body"), w + "body: ", out)
    attrs = check_attrs(r.get("attributes", []), w, out)
    return sn, body, attrs


class Outage:
    """A receiver that crashes and comes back on the same port: open
    connections are dropped unanswered, new ones refused (nothing
    listens) until restore()."""

    def crash(self):
        self.down = True
        self.httpd.shutdown()
        self.httpd.server_close()

    def restore(self):
        import threading
        self.httpd = receivers._Server(("127.0.0.1", self.port), self.httpd.RequestHandlerClass)
        self.down = False
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()


class OtlpReceiver(Outage, receivers._Base):
    kind = "otlp"

    def __init__(self, path="/v1/logs", headers=None, poison=None, **kw):
        """poison: a request holding a record whose body contains this
        string is refused whole with 400 (as a collector refuses a request
        it cannot decode), every time."""
        self.path = path
        self.poison = poison
        self.want_headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.stored = []
        self.rejected = []
        super().__init__(**kw)

    def _scripted(self, h, step, rec):
        if step is not None and step.startswith("partial="):
            return False   # answered by check() after the records are read
        return super()._scripted(h, step, rec)

    def check(self, h, rec, body, step):
        v = rec["violations"]
        if h.path != self.path:
            v.append("path %s (want %s)" % (h.path, self.path))
        ct = h.headers.get("Content-Type", "").split(";")[0].strip()
        if ct != "application/json":
            v.append("Content-Type %r (the JSON encoding is application/json)" % ct)
        for k, want in self.want_headers.items():
            if h.headers.get(k) != want:
                v.append("header %s missing or wrong" % k)
        if rec.get("wire_bytes", 0) > MAX_BODY or len(body) > MAX_BODY:
            v.append("body over 20 MiB")
        try:
            req = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            v.append("body is not JSON: %s" % e)
            req = {}
        recs = self._records(req, v)
        rec["n"] = len(recs)
        if v:
            self._finish(h, rec, 400, b'{"code":3,"message":"bad request"}')
            return
        if self.poison and any(self.poison in str(e["text"]) for e in recs):
            rec["refused"] = True
            if step is not None:   # a partial= step is for a request that is taken
                with self.lock:
                    self.script.insert(0, step)
            self._finish(h, rec, 400, b'{"code":3,"message":"scripted: invalid log record"}')
            return
        keep = len(recs)
        resp = {}
        if step is not None and step.startswith("partial="):
            n = min(int(step[8:]), len(recs))
            keep = len(recs) - n
            rec["partial"] = n
            resp = {"partialSuccess": {"rejectedLogRecords": str(n),
                                       "errorMessage": "scripted: %d records refused" % n}}
        with self.lock:
            self.stored.extend(recs[:keep])
            self.rejected.extend(recs[keep:])
        self._finish(h, rec, 200, json.dumps(resp).encode())

    def _records(self, req, v):
        out = []
        if not isinstance(req, dict) or set(req) != {"resourceLogs"} or \
                not isinstance(req["resourceLogs"], list):
            v.append("not an ExportLogsServiceRequest: keys %r" % (list(req) if isinstance(req, dict) else req,))
            return out
        for i, rl in enumerate(req["resourceLogs"]):
            w = "resourceLogs[%d] " % i
            if not isinstance(rl, dict) or set(rl) - {"resource", "scopeLogs", "schemaUrl"}:
                v.append(w + "bad ResourceLogs keys")
                continue
            res = rl.get("resource", {})
            if not isinstance(res, dict) or set(res) - {"attributes", "droppedAttributesCount"}:
                v.append(w + "bad Resource")
                continue
            ra = check_attrs(res.get("attributes", []), w, v)
            if ra.get("service.name") != "esxwatch":
                v.append(w + "service.name %r" % ra.get("service.name"))
            for j, sl in enumerate(rl.get("scopeLogs", [])):
                if not isinstance(sl, dict) or set(sl) - {"scope", "logRecords", "schemaUrl"}:
                    v.append(w + "bad ScopeLogs %d" % j)
                    continue
                for k, r in enumerate(sl.get("logRecords", [])):
                    got = check_record(r, w + "record %d: " % k, v)
                    if got is None:
                        continue
                    sn, body, attrs = got
                    e = {"text": body, "_severity_number": sn,
                         "_time_ns": int(r.get("timeUnixNano", "0")),
                         "_observed_ns": int(r.get("observedTimeUnixNano", "0"))}
                    e["timestamp"] = e["_time_ns"] // 1000000
                    if "host.name" in ra:
                        e["hostname"] = ra["host.name"]
                    if "severityText" in r:
                        e["esxwatch_severity"] = r["severityText"]
                    for a, x in attrs.items():
                        if a in e:
                            v.append("attribute %r repeats a record field" % a)
                        e[a] = str(x)
                    out.append(e)
        return out


def flat(e):
    """A stored record as the flat event of docs/events.md."""
    return {k: x for k, x in e.items() if not k.startswith("_")}


if __name__ == "__main__":
    r = OtlpReceiver()
    print(r.port, flush=True)
    while True:
        time.sleep(3600)
