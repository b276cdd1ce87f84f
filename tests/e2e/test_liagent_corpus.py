"""End-to-end: real liagent.ini files and VMware's content-pack agent
configurations (tests/fixtures/liagent/README.md cites each source).

Every configuration is accepted (the one real template bug is refused at its
line and column), --print-config round-trips, and every distinct
event_marker of the corpus splits a log the way Perl-compatible regexes do:
a generated first line starts an event, Java stack frames, "-->" lines and
indented lines start one only where the marker itself says so (checked
against Python's re, whose semantics agree with PCRE's for these markers).
"""
import glob
import json
import os
import re
import subprocess
import sys

try:
    import re._parser as sre_parse
    import re._constants as sre_c
except ImportError:  # Python < 3.11
    import sre_parse
    import sre_constants as sre_c

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CORPUS = os.path.join(harness.FIXTURES, "liagent")
BROKEN = {"salt-one-line-section.ini"}

CONTINUATIONS = [
    "\tat com.vmware.vcops.platform.Foo.bar(Foo.java:123)",
    "    at java.lang.Thread.run(Thread.java:750)",
    "Caused by: java.lang.IllegalStateException: boom",
    "--> continued value",
    "  indented continuation",
    "\t... 12 more",
]


def corpus_files():
    return sorted(glob.glob(os.path.join(CORPUS, "vlcp", "*.ini")) +
                  glob.glob(os.path.join(CORPUS, "public", "*.ini")))


def run(*args):
    p = subprocess.run([harness.BIN] + list(args), capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def markers():
    """Distinct event_marker values, with their exact bytes after '='."""
    out = []
    for f in corpus_files():
        if os.path.basename(f) in BROKEN:
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                line = line.rstrip("\r\n")
                m = re.match(r"^\s*event_marker\s*=", line)
                if m:
                    v = line[m.end():].lstrip(" \t")
                    if v and v not in out:
                        out.append(v)
    return out


def py_regex(marker):
    """The marker in Python's syntax (named groups only differ)."""
    return re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", marker)


def gen(tree):
    """A string matching a parsed regex (sre_parse tree)."""
    out = []
    for op, av in tree:
        if op == sre_c.LITERAL:
            out.append(chr(av))
        elif op == sre_c.NOT_LITERAL:
            out.append("a" if chr(av) != "a" else "b")
        elif op == sre_c.ANY:
            out.append("a")
        elif op == sre_c.IN:
            out.append(gen_in(av))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            out.append(gen(sub) * max(lo, 1 if hi > 0 else 0))
        elif op == sre_c.SUBPATTERN:
            out.append(gen(av[-1]))
        elif op == sre_c.BRANCH:
            out.append(gen(av[1][0]))
        elif op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue
        elif op == sre_c.CATEGORY:
            out.append(gen_in([(op, av)]))
        else:
            raise ValueError("cannot generate %s" % op)
    return "".join(out)


def gen_in(items):
    negate = any(op == sre_c.NEGATE for op, _ in items)
    allowed = []
    for op, av in items:
        if op == sre_c.LITERAL:
            allowed.append(chr(av))
        elif op == sre_c.RANGE:
            allowed.append(chr(av[0]))
        elif op == sre_c.CATEGORY:
            allowed.append({sre_c.CATEGORY_DIGIT: "1", sre_c.CATEGORY_SPACE: " ",
                            sre_c.CATEGORY_WORD: "a", sre_c.CATEGORY_NOT_DIGIT: "a",
                            sre_c.CATEGORY_NOT_SPACE: "a", sre_c.CATEGORY_NOT_WORD: " "}[av])
    if not negate:
        return allowed[0]
    for c in "aZ1_-:. ":
        if not re.match("[" + "".join(re.escape(a) for a in allowed) + "]", c) and \
                not any(re.match(_cat_re(av), c) for op, av in items if op == sre_c.CATEGORY):
            return c
    raise ValueError("no character outside the class")


def _cat_re(cat):
    return {sre_c.CATEGORY_DIGIT: r"\d", sre_c.CATEGORY_SPACE: r"\s", sre_c.CATEGORY_WORD: r"\w",
            sre_c.CATEGORY_NOT_DIGIT: r"\D", sre_c.CATEGORY_NOT_SPACE: r"\S",
            sre_c.CATEGORY_NOT_WORD: r"\W"}[cat]


def first_line(marker):
    """A line the marker finds, or None for a marker that can find nothing
    (a template bug such as '/^(...)': an anchor after a character)."""
    rx = re.compile(py_regex(marker))
    s = gen(sre_parse.parse(py_regex(marker))) + " first line of an event"
    return s if rx.search(s) else None


def yaml_sq(s):
    return "'" + s.replace("'", "''") + "'"


def test_every_configuration_is_accepted(d):
    files = corpus_files()
    if len(files) < 70:
        harness.fail("corpus has %d files" % len(files))
    for f in files:
        rc, out, err = run("--check-config", "-c", f)
        if os.path.basename(f) in BROKEN:
            harness.eq(rc, 2, "%s: exit status" % f)
            if not re.search(re.escape(f) + r":\d+:\d+: .*after '\]'", err):
                harness.fail("%s: no FILE:LINE:COL error naming the text after ']': %r" % (f, err))
            continue
        if rc != 0:
            harness.fail("%s: --check-config exit %d: %s" % (f, rc, err[-600:]))


def test_print_config_round_trips(d):
    for f in corpus_files():
        if os.path.basename(f) in BROKEN:
            continue
        rc, out1, err = run("--print-config", "-c", f)
        harness.eq(rc, 0, "%s: --print-config (%s)" % (f, err[-300:]))
        y = os.path.join(d, "printed.yaml")
        with open(y, "w") as fh:
            fh.write(out1)
        rc, out2, err = run("--print-config", "-c", y)
        harness.eq(rc, 0, "%s: the printed YAML loads (%s)" % (f, err[-300:]))
        if out1 != out2:
            harness.fail("%s: --print-config does not round-trip" % f)


def test_each_marker_splits_like_perl(d):
    ms = markers()
    if len(ms) < 60:
        harness.fail("only %d distinct markers" % len(ms))
    want = {}
    logs = []
    impossible = []
    for i, m in enumerate(ms):
        rx = re.compile(py_regex(m))
        first = first_line(m)
        if first is None:
            impossible.append(m)
            first = "2024-05-01 10:00:00,000 first line"
        lines = []
        for c in CONTINUATIONS:
            lines += [first, c]
        lines.append(first)
        # expected grouping: a line the marker finds starts an event
        evs = []
        for ln in lines:
            if not evs or rx.search(ln):
                evs.append([ln])
            else:
                evs[-1].append(ln)
        ddir = os.path.join(d, "m%03d" % i)
        os.makedirs(ddir)
        with open(os.path.join(ddir, "app.log"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
        want[os.path.join(ddir, "app.log")] = (m, ["\n".join(e) for e in evs])
        logs.append("  m%03d: {directory: %s, include: app.log, read_from_head: yes, "
                    "forward: all, event_marker: %s}\n" % (i, ddir, yaml_sq(m)))
    cfg = ("server: {proto: file, path: %s/out.jsonl}\nstorage: {directory: @STORAGE@}\n"
           "collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no},"
           " smart: {enabled: no}, agent: {enabled: no}}\nfilelog:\n%s" % (d, "".join(logs)))
    a = harness.Agent(d, cfg)
    rc, out, err = a.run("--once", timeout=120)
    harness.eq(rc, 0, "--once (stderr %s)" % err[-500:])
    got = {}
    with open(os.path.join(d, "out.jsonl")) as fh:
        for line in fh:
            e = json.loads(line)
            if e.get("esxwatch_collector") == "logwatch":
                got.setdefault(e.get("esxwatch_file"), []).append(e["text"])
    bad = []
    for path, (m, evs) in want.items():
        if got.get(path, []) != evs:
            bad.append("%r: want %d events, got %d" % (m, len(evs), len(got.get(path, []))))
    if len(impossible) > 3:
        harness.fail("markers that match nothing: %r" % impossible)
    if bad:
        harness.fail("%d of %d markers split wrongly: %s" % (len(bad), len(want), "; ".join(bad[:8])))


def test_vrops_marker_400_events_in_1000_lines(d):
    marker = r"^\d{4}-\d{2}-\d{2}[\s]\d{2}:\d{2}:\d{2}\,\d{3}"
    lines, n = [], 0
    while len(lines) < 1000:
        lines.append("2024-05-01 10:%02d:%02d,%03d INFO [pool-%d] analytics: run %d" %
                     ((n // 60) % 60, n % 60, n % 1000, n % 7, n))
        extra = [1, 2, 0, 3, 1, 2][n % 6]	# 1.5 continuation lines on average
        for k in range(extra):
            lines.append(CONTINUATIONS[(n + k) % len(CONTINUATIONS)])
        n += 1
    lines = lines[:1000]
    starts = sum(1 for ln in lines if re.match(r"^\d{4}-\d{2}-\d{2}\s", ln))
    harness.eq(starts, 400, "generated events")
    with open(os.path.join(d, "analytics.log"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    cfg = ("server: {proto: file, path: %s/out.jsonl}\nstorage: {directory: @STORAGE@}\n"
           "collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no},"
           " smart: {enabled: no}, agent: {enabled: no}}\nfilelog:\n"
           "  vrops: {directory: %s, include: analytics.log, read_from_head: yes, forward: all,"
           " event_marker: %s}\n" % (d, d, yaml_sq(marker)))
    a = harness.Agent(d, cfg)
    rc, out, err = a.run("--once", timeout=120)
    harness.eq(rc, 0, "--once (stderr %s)" % err[-500:])
    texts = []
    with open(os.path.join(d, "out.jsonl")) as fh:
        for line in fh:
            e = json.loads(line)
            if e.get("esxwatch_collector") == "logwatch":
                texts.append(e["text"])
    harness.eq(len(texts), 400, "events")
    harness.eq("\n".join(texts).split("\n"), lines, "every line kept, in order")


if __name__ == "__main__":
    harness.main(globals())
