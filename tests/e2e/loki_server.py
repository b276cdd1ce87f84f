"""A strict Grafana Loki push receiver (JSON), for the loki sink tests.

Built from Loki's documentation, not from the sink:
- Loki HTTP API, "Ingest logs" (POST /loki/api/v1/push,
  https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs):
  Content-Type application/json (gzip Content-Encoding allowed), body
  {"streams": [{"stream": {labels}, "values": [["<ns string>", "<line>",
  {structured metadata}], ...]}]}, 204 No Content on success;
  X-Scope-OrgID names the tenant when auth_enabled.
- "Structured metadata" (https://grafana.com/docs/loki/latest/get-started/labels/structured-metadata/):
  the optional third element, an object of string keys and values,
  refused (400) unless allow_structured_metadata.
- Label names [a-zA-Z_][a-zA-Z0-9_]* (Prometheus data model, which Loki's
  labels follow), at least one label per stream, limits_config defaults:
  max_label_names_per_series 15, max_label_name_length 1024,
  max_label_value_length 2048, max_line_size 256 KB.
- Out-of-order entries ("Accept out-of-order writes", Loki >= 2.4; the
  400 text as Loki writes it: "entry with timestamp T ignored, reason:
  'entry too far behind, oldest acceptable timestamp is: T0', user 'U',
  total ignored: N out of M for stream: {...}"): the other entries of the
  push are stored; an entry with the same timestamp and line as one the
  stream holds is dropped as a duplicate.  Rate limiting: 429.

`stored` holds the entries Loki would keep, as flat dicts (docs/events.md
shape: text, timestamp, the labels and metadata as fields) plus "_labels"
(the stream's label dict) and "_ns".  Options: tenant (required
X-Scope-OrgID), basic=(user, password), too_far=SUBSTR (an entry whose
line contains it is refused as too far behind, every time),
allow_sm=False; scripted answers "429:ra=1", "503", "close".
"""
import base64
import json
import re

import receivers
from otlp_server import Outage

LABEL_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
NS_RE = re.compile(r"^[0-9]{1,19}$")
MAX_LINE = 256 * 1024
MAX_LABELS = 15


class LokiReceiver(Outage, receivers._Base):
    kind = "loki"

    def __init__(self, tenant=None, basic=None, too_far=None, allow_sm=True, **kw):
        self.tenant = tenant
        self.basic = basic
        self.too_far = too_far
        self.allow_sm = allow_sm
        self.stored = []
        self.keys = set()      # (stream key, ns, line): for duplicates
        self.ignored = []
        super().__init__(**kw)

    def _auth(self, h, v):
        if self.tenant is not None and h.headers.get("X-Scope-OrgID") != self.tenant:
            return 401, b"no org id\n"
        if self.basic is not None:
            want = "Basic " + base64.b64encode(("%s:%s" % self.basic).encode()).decode()
            if h.headers.get("Authorization") != want:
                return 401, b"unauthorized\n"
        return None

    def check(self, h, rec, body, step):
        v = rec["violations"]
        if h.path != "/loki/api/v1/push":
            v.append("path %s" % h.path)
        ct = h.headers.get("Content-Type", "").split(";")[0].strip()
        if ct != "application/json":
            v.append("Content-Type %r" % ct)
        denied = self._auth(h, v)
        if denied:
            rec["denied"] = True
            self._finish(h, rec, *denied)
            return
        try:
            req = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            v.append("body is not JSON: %s" % e)
            req = {}
        entries = self._entries(req, v)
        rec["n"] = len(entries)
        if v:
            self._finish(h, rec, 400, ("; ".join(v[:3]) + "\n").encode())
            return
        if not self.allow_sm and any(e[4] for e in entries):
            self._finish(h, rec, 400, b"stream '{}' includes structured metadata, but this "
                         b"feature is disallowed. Please see `limits_config.allow_structured_metadata`\n")
            return
        self._store(h, rec, entries)

    def _store(self, h, rec, entries):
        msgs = []
        with self.lock:
            for skey, labels, ns, line, sm in entries:
                if self.too_far and self.too_far in line:
                    msgs.append("entry with timestamp %s ignored, reason: 'entry too far behind, "
                                "oldest acceptable timestamp is: 2026-11-30T09:00:00Z', user 'fake', "
                                "total ignored: 1 out of %d for stream: %s" % (ns, len(entries), skey))
                    self.ignored.append(line)
                    continue
                k = (skey, ns, line)
                if k in self.keys:
                    continue   # Loki drops an identical entry silently
                self.keys.add(k)
                e = dict(labels)
                e.update(sm)
                e.update({"text": line, "timestamp": int(ns) // 1000000, "_ns": int(ns),
                          "_labels": labels})
                self.stored.append(e)
        if msgs:
            rec["ignored"] = len(msgs)
            self._finish(h, rec, 400, (",\n".join(msgs) + "\n").encode())
            return
        self._record(rec)
        h.send_response(204)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def _entries(self, req, v):
        out = []
        if not isinstance(req, dict) or set(req) != {"streams"} or not isinstance(req["streams"], list):
            v.append("not a push request")
            return out
        for i, st in enumerate(req["streams"]):
            w = "stream %d: " % i
            if not isinstance(st, dict) or set(st) != {"stream", "values"}:
                v.append(w + "keys %r" % (list(st) if isinstance(st, dict) else st,))
                continue
            labels = st["stream"]
            if not isinstance(labels, dict) or not labels:
                v.append(w + "at least one label pair is required per stream")
                continue
            if len(labels) > MAX_LABELS:
                v.append(w + "too many labels")
            for k, x in labels.items():
                if not LABEL_RE.match(k) or not isinstance(x, str) or not x or len(x) > 2048:
                    v.append(w + "bad label %r=%r" % (k, x))
            skey = "{%s}" % ", ".join('%s="%s"' % (k, labels[k]) for k in sorted(labels))
            last = -1
            for j, val in enumerate(st["values"] if isinstance(st["values"], list) else []):
                ww = w + "value %d: " % j
                if not isinstance(val, list) or len(val) not in (2, 3):
                    v.append(ww + "not [ts, line(, metadata)]")
                    continue
                ns, line = val[0], val[1]
                sm = val[2] if len(val) == 3 else {}
                if not isinstance(ns, str) or not NS_RE.match(ns):
                    v.append(ww + "timestamp %r is not nanoseconds as a string" % (ns,))
                    continue
                if not isinstance(line, str) or len(line.encode()) > MAX_LINE:
                    v.append(ww + "line not a string or over max_line_size")
                    continue
                if not isinstance(sm, dict) or not all(isinstance(a, str) and isinstance(b, str)
                                                       for a, b in sm.items()):
                    v.append(ww + "structured metadata not an object of strings")
                    continue
                if int(ns) < last:
                    v.append(ww + "entries of a stream not in time order within the push")
                last = int(ns)
                out.append((skey, labels, ns, line, sm) if len(val) == 3 else
                           (skey, labels, ns, line, {}))
        return out


def flat(e):
    return {k: x for k, x in e.items() if not k.startswith("_")}
