"""A strict GELF 1.1 input (TCP, TLS or UDP), for the gelf sink tests.

Built from Graylog's documentation, not from the sink: "GELF"
(https://go2docs.graylog.org/current/getting_in_log_data/gelf.html),
"GELF Payload Specification, version 1.1":
- version "1.1", host (non-empty string), short_message (non-empty
  string) required; full_message optional; timestamp a number (seconds
  since the epoch, decimals for milliseconds); level a number (the
  standard syslog levels, 0..7); facility, line and file are deprecated;
  every additional field starts with an underscore, matches ^[\\w\\.\\-]*$,
  and _id is not allowed.
- "GELF via TCP": each message ends with a null byte; no compression.
- "GELF via UDP": chunks start with 0x1e 0x0f, an 8-byte message id, the
  sequence number and the count (at most 128), all the chunks of a
  message arrive within 5 seconds; a message (whole or reassembled) may be
  GZIP (1f 8b) or ZLIB compressed, or plain JSON.

`messages` holds what the input accepted (parsed dicts, plus "_conn"
for TCP).  Failure injection (TCP): close_after=N closes a connection
after N messages, unread data left behind (a receiver going away in the
middle of a batch; once); idle_close=S closes a connection silent for S
seconds (a receiver restarting between batches); crash()/restore() stop
and start listening on the same port.
"""
import gzip
import json
import re
import socket
import ssl
import threading
import time
import zlib

FIELD_RE = re.compile(r"^_[\w\.\-]*$")
KNOWN = {"version", "host", "short_message", "full_message", "timestamp", "level",
         "facility", "line", "file"}
MAX_CHUNKS = 128


def check_message(m):
    v = []
    if not isinstance(m, dict):
        return ["not a JSON object"]
    if m.get("version") != "1.1":
        v.append("version %r" % m.get("version"))
    for k in ("host", "short_message"):
        if not isinstance(m.get(k), str) or not m.get(k):
            v.append("%s missing or empty" % k)
    ts = m.get("timestamp")
    if ts is not None and (not isinstance(ts, (int, float)) or isinstance(ts, bool)):
        v.append("timestamp not a number: %r" % (ts,))
    lv = m.get("level")
    if lv is not None and (not isinstance(lv, int) or isinstance(lv, bool) or not 0 <= lv <= 7):
        v.append("level %r not a syslog level" % (lv,))
    for k, x in m.items():
        if k in KNOWN:
            continue
        if not FIELD_RE.match(k):
            v.append("additional field %r without _ or with bad characters" % k)
        elif k == "_id":
            v.append("_id is not allowed")
        elif not isinstance(x, (str, int, float)) or isinstance(x, bool):
            v.append("field %r is not a string or a number" % k)
    return v


def decode_payload(p):
    if p[:2] == b"\x1f\x8b":
        return gzip.decompress(p)
    if p[:1] == b"\x78":
        return zlib.decompress(p)
    return p


class GelfInput:
    def __init__(self, transport="tcp", tls=None, close_after=None, idle_close=None):
        self.transport = transport
        self.tls = tls
        self.close_after = close_after
        self.idle_close = idle_close
        self.lock = threading.Lock()
        self.messages = []
        self.violations = []
        self.connections = 0
        self.closed_mid_batch = 0
        self.chunks = {}       # id -> (first time, count, {seq: bytes})
        self.chunked = 0
        self.conns = []
        self.port = None
        self._start()

    # ---- listening ----
    def _start(self):
        kind = socket.SOCK_DGRAM if self.transport == "udp" else socket.SOCK_STREAM
        self.sock = socket.socket(socket.AF_INET, kind)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if kind == socket.SOCK_DGRAM:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
        elif self.close_after is not None:
            # a small window (inherited by the connections): the sender is
            # still writing its batch when the input goes away
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.bind(("127.0.0.1", self.port or 0))
        self.port = self.sock.getsockname()[1]
        self.running = True
        if kind == socket.SOCK_STREAM:
            self.sock.listen(16)
            target = self._accept_loop
        else:
            target = self._udp_loop
        self.thread = threading.Thread(target=target, daemon=True)
        self.thread.start()

    def crash(self):
        """Stop listening and drop every connection."""
        self.running = False
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.thread.join(5)

    def restore(self):
        self._start()

    def close(self):
        self.crash()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def _accept(self, m, conn_no=None):
        try:
            obj = json.loads(m.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            with self.lock:
                self.violations.append("not JSON: %s: %r" % (e, m[:100]))
            return
        v = check_message(obj)
        with self.lock:
            self.violations.extend(v)
            if conn_no is not None:
                obj["_conn"] = conn_no
            self.messages.append(obj)

    # ---- TCP ----
    def _accept_loop(self):
        ctx = None
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls[0], self.tls[1])
        while self.running:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if ctx is not None:
                try:
                    c = ctx.wrap_socket(c, server_side=True)
                except (OSError, ssl.SSLError):
                    c.close()
                    continue
            with self.lock:
                self.connections += 1
                n = self.connections
                self.conns.append(c)
            threading.Thread(target=self._serve, args=(c, n), daemon=True).start()

    def _serve(self, c, n):
        buf = b""
        got = 0
        if self.idle_close:
            c.settimeout(self.idle_close)
        try:
            while True:
                try:
                    data = c.recv(65536)
                except socket.timeout:
                    return    # idle: close it, as a restarting input would
                if not data:
                    if buf:
                        with self.lock:
                            self.violations.append("connection ended inside a message")
                    return
                buf += data
                while b"\0" in buf:
                    m, buf = buf.split(b"\0", 1)
                    if self.close_after is not None and got >= self.close_after:
                        self.close_after = None
                        with self.lock:
                            self.closed_mid_batch += 1
                        # unread data left: the kernel resets the connection
                        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
                        return
                    self._accept(m, n)
                    got += 1
        except OSError:
            return
        finally:
            try:
                c.close()
            except OSError:
                pass

    # ---- UDP ----
    def _udp_loop(self):
        while self.running:
            try:
                d, _ = self.sock.recvfrom(65536)
            except OSError:
                return
            try:
                self._datagram(d)
            except (OSError, EOFError, zlib.error) as e:
                with self.lock:
                    self.violations.append("bad datagram: %s" % e)

    def _datagram(self, d):
        if d[:2] != b"\x1e\x0f":
            self._accept(decode_payload(d))
            return
        if len(d) < 12:
            raise OSError("chunk shorter than its header")
        mid, seq, cnt = d[2:10], d[10], d[11]
        if cnt < 1 or cnt > MAX_CHUNKS or seq >= cnt:
            raise OSError("chunk %d of %d" % (seq, cnt))
        now = time.time()
        with self.lock:
            first, c0, parts = self.chunks.setdefault(mid, (now, cnt, {}))
            if c0 != cnt or seq in parts:
                self.violations.append("chunk count changed or sequence repeated")
                return
            parts[seq] = d[12:]
            if now - first > 5:
                self.violations.append("chunks of a message spread over more than 5 s")
            if len(parts) < cnt:
                return
            del self.chunks[mid]
            self.chunked += 1
        self._accept(decode_payload(b"".join(parts[i] for i in range(cnt))))


def flat(m):
    """An accepted GELF message as the flat event of docs/events.md."""
    e = {"text": m["short_message"], "hostname": m["host"],
         "timestamp": int(round(m["timestamp"] * 1000))}
    for k, x in m.items():
        if k.startswith("_") and k != "_conn":
            e[k[1:]] = x
    return e
