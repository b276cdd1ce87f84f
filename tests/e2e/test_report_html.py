"""The --analyze HTML report in a real browser: Debian's chromium, headless,
driven by chromedriver through the W3C WebDriver protocol (plain HTTP and
JSON, Python's stdlib; https://www.w3.org/TR/webdriver2/) and Chrome's
DevTools protocol through chromedriver's goog/cdp/execute
(https://chromedevtools.github.io/devtools-protocol/tot/Network/).

The report is tests/fixtures/analyze/report.json (real ESXi lines matched by
the real catalogue, SOURCES.md there) made HTML by report_html_write()
through the hidden hook `build/tests/test_report_html REPORT.json OUT.html`
(docs/analyze.md, "The HTML report").  The browser is offline (DevTools
Network.emulateNetworkConditions, and a proxy pointing at the discard port
besides); the page must show every finding and diagnosis with its text,
and the browser's own network log must hold no request but the page's.
A control page with one remote image proves that log sees requests.

ESXWATCH_SCREENSHOT=docs/analyze-report.png also writes the screenshot
kept in docs/.
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import eq, fail  # noqa: E402

HOOK = os.path.join(harness.TOP, "build", "tests", "test_report_html")
REPORT = os.path.join(harness.FIXTURES, "analyze", "report.json")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1280, 1600


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Browser:
    """chromedriver and one headless chromium session."""

    def __init__(self, d):
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.log = open(os.path.join(d, "chromedriver.log"), "wb")
        self.proc = subprocess.Popen([DRIVER, "--port=%d" % self.port],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while True:
            try:
                if self.req("GET", "/status")["value"]["ready"]:
                    break
            except (OSError, urllib.error.URLError, ValueError):
                pass
            if time.time() > deadline or self.proc.poll() is not None:
                self.close()
                fail("chromedriver did not start (see %s)" % self.log.name)
            time.sleep(0.05)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"performance": "ALL"},
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--hide-scrollbars",
                         "--proxy-server=127.0.0.1:9", "--no-first-run",
                         "--disable-background-networking",
                         "--user-data-dir=" + os.path.join(d, "profile"),
                         "--window-size=%d,%d" % (WIDTH, HEIGHT)]}}}}
        self.sid = self.req("POST", "/session", caps)["value"]["sessionId"]

    def req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        r = urllib.request.Request(self.base + path, data=data, method=method,
                                   headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(r, timeout=30) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            fail("webdriver %s %s: %s" % (method, path, e.read()[:500]))

    def s(self, method, path, body=None):
        return self.req(method, "/session/%s%s" % (self.sid, path), body)["value"]

    def cdp(self, cmd, params):
        return self.s("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params})

    def offline(self):
        self.cdp("Network.enable", {})
        self.cdp("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": -1,
            "uploadThroughput": -1})

    def open(self, path):
        self.s("POST", "/url", {"url": "file://" + path})

    def js(self, script):
        return self.s("POST", "/execute/sync", {"script": script, "args": []})

    def requests(self):
        """Every URL the browser asked for since the last call, but those
        of its own start page (chrome://new-tab-page...: the browser's UI,
        which a file: page cannot load)."""
        urls = []
        for entry in self.s("POST", "/se/log", {"type": "performance"}):
            m = json.loads(entry["message"])["message"]
            if m.get("method") != "Network.requestWillBeSent":
                continue
            p = m["params"]
            if p.get("documentURL", "").startswith("chrome://"):
                continue
            urls.append(p["request"]["url"])
        return urls

    def close(self):
        try:
            if getattr(self, "sid", None):
                self.req("DELETE", "/session/" + self.sid)
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.log.close()


def render(d, src=REPORT):
    out = os.path.join(d, "report.html")
    p = subprocess.run([HOOK, src, out], capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, "the hook's exit status (stderr %s)" % p.stderr[-300:])
    return out


# What the page shows, read through the DOM: each finding's id, severity
# badge, time and text; the marks of the timeline; the resources loaded.
DOM = """
const q = s => Array.from(document.querySelectorAll(s));
const shown = e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
return {
  title: document.title,
  host: document.querySelector('h1').textContent,
  findings: q('article').map(a => ({id: a.id, shown: shown(a),
      badge: a.querySelector('.b').textContent,
      time: a.querySelector('time').textContent,
      text: a.querySelector('pre.text').textContent})),
  samples: q('#samples tr[id]').map(r => r.id),
  logs: q('#logs tr td:first-child').map(t => t.textContent),
  gaps: q('#gaps li').map(l => l.textContent),
  marks: q('svg.tl rect.m').length,
  marks_shown: q('svg.tl rect.m').filter(shown).length,
  links: q('svg.tl a').map(a => a.getAttribute('href')),
  resources: performance.getEntriesByType('resource').map(e => e.name),
  scripts: q('script').length,
  csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content,
};
"""


def expected(report):
    """(id, severity, text) of every finding and diagnosis the page must
    show, as §5 defines them: events of kind alert or change (other kinds
    but sample and status too), the diagnoses once."""
    want = []
    for i, e in enumerate(report["events"]):
        if e.get("esxwatch_kind") in ("sample", "status"):
            continue
        if e.get("esxwatch_collector") == "diagnosis" and "diagnoses" in report:
            continue
        want.append(("f%d" % i, e.get("esxwatch_severity"), e["text"]))
    for i, e in enumerate(report.get("diagnoses", [])):
        want.append(("d%d" % i, e.get("esxwatch_severity"), e["text"]))
    return sorted(want)


def check_page(d, report, page):
    """The page in the offline browser against its JSON report: every
    finding and diagnosis shown with its text; nothing loaded or asked
    for.  Returns the screenshot (PNG)."""
    b = Browser(d)
    try:
        b.offline()
        b.requests()
        b.open(page)
        dom = b.js(DOM)
        reqs = b.requests()
        shot = base64.b64decode(b.s("GET", "/screenshot"))
        pdf = base64.b64decode(b.s("POST", "/print", {"background": True}))
    finally:
        b.close()
    want = expected(report)
    got = sorted((f["id"], f["badge"], f["text"]) for f in dom["findings"])
    eq(got, want, "findings on the page (id, severity, text)")
    hidden = [f["id"] for f in dom["findings"] if not f["shown"]]
    eq(hidden, [], "findings laid out with no size")
    for f in dom["findings"]:
        if not f["time"].endswith(" UTC"):
            fail("%s: time %r" % (f["id"], f["time"]))
    eq(dom["host"], report["host"]["hostname"], "the host heading")
    eq(dom["title"], "esxwatch analysis: " + report["host"]["hostname"], "title")
    samples = ["s%d" % i for i, e in enumerate(report["events"])
               if e.get("esxwatch_kind") in ("sample", "status")]
    eq(dom["samples"], samples, "measurement rows")
    eq(dom["logs"], [l["file"] for l in report["logs"]], "the logs table")
    eq(dom["gaps"], report["gaps"], "the gaps")
    if dom["marks"] == 0 or dom["marks_shown"] != dom["marks"]:
        fail("timeline: %d marks, %d shown" % (dom["marks"], dom["marks_shown"]))
    ids = set(f["id"] for f in dom["findings"])
    bad = [h for h in dom["links"] if h[1:] not in ids]
    eq(bad, [], "timeline links that lead to no finding")
    eq(dom["scripts"], 0, "script elements")
    if not dom["csp"] or not dom["csp"].startswith("default-src 'none'"):
        fail("CSP: %r" % dom["csp"])
    eq(dom["resources"], [], "resources the page loaded")
    eq([u for u in reqs if u != "file://" + page], [], "requests but the page")
    if "file://" + page not in reqs:
        fail("the network log did not see the page itself: %r" % reqs)
    # printable: the W3C Print Page command gives a PDF of several pages
    # (https://www.w3.org/TR/webdriver2/#print-page)
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    if pdf[:5] != b"%PDF-" or pages < 2:
        fail("print: not a PDF of the report (%d bytes, %d pages)" % (len(pdf), pages))
    if shot[:8] != b"\x89PNG\r\n\x1a\n" or len(shot) < 20000:
        fail("screenshot is not a PNG of a page (%d bytes)" % len(shot))
    return shot


def test_every_finding_shown_offline(d):
    with open(REPORT) as f:
        report = json.load(f)
    if len(expected(report)) < 20 or not report["diagnoses"]:
        fail("the fixture has too few findings or no diagnosis")
    shot = check_page(d, report, render(d))
    keep = os.environ.get("ESXWATCH_SCREENSHOT")
    if keep:
        with open(keep, "wb") as f:
            f.write(shot)


def test_network_log_sees_a_request(d):
    """The control: a page that does ask for a remote image (no CSP) shows
    that request in the same log, so an empty log above means something."""
    page = os.path.join(d, "control.html")
    with open(page, "w") as f:
        f.write('<!DOCTYPE html><html><body><p>control</p>'
                '<img src="http://192.0.2.1/esxwatch-control.png"></body></html>')
    b = Browser(d)
    try:
        b.offline()
        b.requests()
        b.open(page)
        reqs = b.requests()
    finally:
        b.close()
    if "http://192.0.2.1/esxwatch-control.png" not in reqs:
        fail("the control request was not seen: %r" % reqs)


def test_hook_refuses_a_non_report(d):
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write('{"host": {}, "events": [1]}')
    p = subprocess.run([HOOK, bad, os.path.join(d, "out.html")],
                       capture_output=True, text=True, timeout=30)
    eq(p.returncode, 2, "exit status")
    if "not a report" not in p.stderr:
        fail("stderr: %r" % p.stderr)


def analyze_kit():
    """bundleutil (tests/e2e/bundleutil.py) when this tree has --analyze
    (branch anacore), else None."""
    try:
        import bundleutil
    except ImportError:
        return None
    p = subprocess.run([harness.BIN, "--help"], capture_output=True, text=True, timeout=30)
    return bundleutil if "--analyze" in p.stdout + p.stderr else None


BU = analyze_kit()
if BU is not None:
    def test_analyze_format_html(d):
        """The real thing: `esxwatch --analyze BUNDLE --format html` on a
        bundle of real captures (vmnic0 with CRC errors; the PDL and link
        down/up logs) shows in the browser every finding of `--format json`
        on the same bundle, offline."""
        with open(os.path.join(harness.FIXTURES, "logs", "vmkernel-log", "esxi50-pdl.log")) as f:
            pdl = f.read()
        with open(os.path.join(harness.FIXTURES, "logs", "vobd-log", "esxi6-link-down-up.log")) as f:
            link = f.read()
        tgz = BU.write_tgz(os.path.join(d, "b.tgz"), BU.members(
            BU.base_commands(crc=12873), [("vmkernel.log", pdl), ("vobd.log", link)]))
        a = harness.Agent(d, "storage: {directory: @STORAGE@}\n")
        out = {}
        for fmt in ("json", "html"):
            out[fmt] = os.path.join(d, "report." + fmt)
            rc, _, err = a.run("--analyze", tgz, "--format", fmt, "-o", out[fmt])
            eq(rc, 1, "--format %s exit status (stderr %s)" % (fmt, err[-300:]))
        with open(out["json"]) as f:
            report = json.load(f)
        if len(expected(report)) < 5:
            fail("too few findings: %r" % expected(report))
        check_page(d, report, out["html"])


if __name__ == "__main__":
    for need in (HOOK, CHROMIUM, DRIVER):
        if not os.path.exists(need):
            print("FAIL: test_report_html/setup: %s missing (make unit; "
                  "packaging/install-deps.sh test)" % need)
            sys.exit(1)
    harness.main(globals())
