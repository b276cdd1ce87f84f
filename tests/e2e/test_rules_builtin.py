"""The rule catalogue built into the binary: build/esxwatch run with no
ESXWATCH_RULES_FILE and no catalogue installed uses its own copy of
collectors/logwatch/rules/esxi.yaml, says so in --print-config, and every
rule of it matches: for each rule a log line is built from its regex (or
its match string) and the agent makes that rule's alert of it."""
import json
import os
import random
import re
import string
import subprocess

import harness

try:    # Python 3.11 names the regex parser re._parser
    from re import _parser as sre_parse
    from re import _constants as sre_c
except ImportError:
    import sre_parse
    import sre_constants as sre_c

CATALOGUE = os.path.join(harness.TOP, "collectors", "logwatch", "rules", "esxi.yaml")
INSTALLED = ("/opt/esxwatch/share/rules/esxi.yaml", "/usr/share/esxwatch/rules/esxi.yaml",
             os.path.join(os.path.dirname(harness.BIN), "..", "share", "rules", "esxi.yaml"),
             os.path.join(os.path.dirname(harness.BIN), "..", "share", "esxwatch", "rules", "esxi.yaml"))
HEADER = "2024-03-05T06:07:08.123Z In(182) vmkernel: cpu1:2097152)"
OFF = """collectors:
  nic: {enabled: no}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
"""


def unquote(v):
    v = v.strip()
    if v.startswith("'"):
        return v[1:v.rindex("'")].replace("''", "'")
    if v.startswith('"'):
        return json.loads(v[:v.rindex('"') + 1])
    if v.startswith("["):
        return [unquote(x) for x in v.strip("[]").split(",") if x.strip()]
    return v


def catalogue():
    """The rules of esxi.yaml in order: [{name, regex | match, literal, files}]
    (the catalogue's own layout: "  - name:" opens a rule, "    key: value"
    lines follow, each value on one line)."""
    rules = []
    with open(CATALOGUE) as f:
        for line in f:
            m = re.match(r"^  - name: (.*)$", line)
            if m:
                rules.append({"name": unquote(m.group(1))})
                continue
            m = re.match(r"^    (\w+): (.*)$", line)
            if m and rules:
                rules[-1][m.group(1)] = unquote(m.group(2))
    return rules


def py_regex(rx):
    """PCRE2's (?<name>...) as Python's (?P<name>...)."""
    return re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", rx))


POOL = "a0x.:_- " + "".join(c for c in string.printable if c not in "a0x.:_- \t\n\r\x0b\x0c")


def category(cat, ch):
    return {sre_c.CATEGORY_DIGIT: ch.isdigit(), sre_c.CATEGORY_NOT_DIGIT: not ch.isdigit(),
            sre_c.CATEGORY_SPACE: ch.isspace(), sre_c.CATEGORY_NOT_SPACE: not ch.isspace(),
            sre_c.CATEGORY_WORD: ch.isalnum() or ch == "_",
            sre_c.CATEGORY_NOT_WORD: not (ch.isalnum() or ch == "_")}[cat]


def in_set(items, ch):
    neg, hit = False, False
    for op, av in items:
        if op is sre_c.NEGATE:
            neg = True
        elif op is sre_c.LITERAL:
            hit = hit or ord(ch) == av
        elif op is sre_c.RANGE:
            hit = hit or av[0] <= ord(ch) <= av[1]
        elif op is sre_c.CATEGORY:
            hit = hit or category(av, ch)
        else:
            raise AssertionError("class item %r" % (op,))
    return hit != neg


def pick(rng, ok):
    """A character of POOL for which ok() holds: the first one (the plain
    example), or any (the variations)."""
    cands = [c for c in POOL if ok(c)]
    if not cands:
        raise AssertionError("no character fits")
    return cands[0] if rng is None else rng.choice(cands)


def gen(tree, rng, groups):
    """Text that the parsed regex tree matches: fewest repetitions and first
    alternatives when rng is None, random choices otherwise."""
    out = []
    for op, av in tree:
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.NOT_LITERAL:
            out.append(pick(rng, lambda c, av=av: ord(c) != av))
        elif op is sre_c.ANY:
            out.append(pick(rng, lambda c: True))
        elif op is sre_c.IN:
            out.append(pick(rng, lambda c, av=av: in_set(av, c)))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
            lo, hi, sub = av
            n = lo if rng is None else rng.randint(lo, min(hi, lo + 3))
            out.extend(gen(sub, rng, groups) for _ in range(n))
        elif op is sre_c.SUBPATTERN:
            text = gen(av[-1], rng, groups)
            if av[0] is not None:
                groups[av[0]] = text
            out.append(text)
        elif op is sre_c.BRANCH:
            alts = av[1]
            out.append(gen(alts[0] if rng is None else rng.choice(alts), rng, groups))
        elif op is sre_c.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is sre_c.AT:
            pass    # anchors: the line is checked against the regex below
        else:
            raise AssertionError("regex construct %r" % (op,))
    return "".join(out)


def matches(rule, line):
    if rule.get("regex"):
        return py_regex(rule["regex"]).search(line) is not None
    return rule["match"] in line


def filelog_of(rule):
    files = rule.get("files") or []
    return files[0] if files else "vmkernel"


def line_for(rules, i):
    """A vmkernel-style line that rule i matches and no rule before it does
    (the first rule that matches a line wins), holding its literal."""
    rule = rules[i]
    log = filelog_of(rule)
    earlier = [r for r in rules[:i] if not r.get("files") or log in r["files"]]
    tree = sre_parse.parse(py_regex(rule["regex"]).pattern) if rule.get("regex") else None
    for seed in range(400):
        rng = None if seed == 0 else random.Random(seed)
        body = gen(tree, rng, {}) if tree is not None else rule["match"]
        line = "%s %s" % (HEADER, body)
        if not matches(rule, line) or (rule.get("literal") and rule["literal"] not in line):
            continue
        if not any(matches(r, line) for r in earlier):
            return line
    harness.fail("no line found for rule %s that no earlier rule matches" % rule["name"])


def env_without_rules_file():
    return {k: v for k, v in os.environ.items() if k != "ESXWATCH_RULES_FILE"}


def test_every_built_in_rule_matches(d):
    installed = [p for p in INSTALLED if os.path.exists(p)]
    if installed:
        harness.fail("a catalogue is installed (%s): it would be used instead of the "
                     "built-in one; remove it to run this test" % installed[0])
    rules = catalogue()
    if len(rules) < 80:
        harness.fail("only %d rules read from %s" % (len(rules), CATALOGUE))
    lines = {}     # filelog -> [line]
    want = {}      # line -> rule
    for i, r in enumerate(rules):
        line = line_for(rules, i)
        if line in want:
            harness.fail("rules %s and %s get the same line" % (want[line], r["name"]))
        lines.setdefault(filelog_of(r), []).append(line)
        want[line] = r["name"]
    logs = os.path.join(d, "log")
    os.makedirs(logs)
    conf = ["server: {proto: file, path: %s/out.jsonl}" % d,
            "storage: {directory: %s/storage}" % d, OFF.rstrip(), "filelog:"]
    for name, ls in sorted(lines.items()):
        with open(os.path.join(logs, name + ".log"), "w") as f:
            f.write("".join(l + "\n" for l in ls))
        conf.append("  %s: {directory: %s, include: %s.log, read_from_head: yes}" % (name, logs, name))
    path = os.path.join(d, "agent.yaml")
    with open(path, "w") as f:
        f.write("\n".join(conf) + "\n")
    env = env_without_rules_file()

    p = subprocess.run([harness.BIN, "--print-config", "-c", path], capture_output=True,
                       text=True, timeout=30, env=env, cwd=d)
    harness.eq(p.returncode, 0, "--print-config (stderr %r)" % p.stderr[-300:])
    harness.eq(p.stdout.splitlines()[-1], "# rule catalogue in use: built-in (%d rules)" % len(rules),
               "--print-config's catalogue line")

    # from another directory than the source tree: nothing to find there
    p = subprocess.run([harness.BIN, "-v", "--once", "-c", path], capture_output=True,
                       text=True, timeout=120, env=env, cwd=d)
    harness.eq(p.returncode, 0, "--once (stderr %s)" % p.stderr[-800:])
    if "logwatch: %d rules from the built-in catalogue" % len(rules) not in p.stderr:
        harness.fail("no 'rules from the built-in catalogue' line: %s" % p.stderr[-800:])
    if "no rule catalogue found" in p.stderr:
        harness.fail("the agent found no catalogue: %s" % p.stderr[-800:])
    got = {}
    for e in harness.file_events(os.path.join(d, "out.jsonl")):
        if e.get("esxwatch_collector") == "logwatch":
            got.setdefault(e["text"], []).append(e)
    missed = []
    for line, name in want.items():
        evs = got.get(line, [])
        rule = [e.get("esxwatch_rule") for e in evs]
        if rule != [name] or evs[0].get("esxwatch_kind") != "alert":
            missed.append("%s: %r -> %r" % (name, line[len(HEADER) + 1:][:100], rule))
    if missed:
        harness.fail("%d of %d rules did not make their alert: %s" % (
            len(missed), len(rules), "; ".join(missed[:10])))
    harness.eq(len(got), len(rules), "events")


def test_rules_file_and_environment_still_override(d):
    """A catalogue file named by rules_file or ESXWATCH_RULES_FILE is used
    instead of the built-in one, and --print-config says which."""
    own = os.path.join(d, "own.yaml")
    with open(own, "w") as f:
        f.write("rules:\n  - name: mine\n    match: 'my own error'\n    severity: error\n"
                "    hint: \"a catalogue of one rule, for the test\"\n")
    path = os.path.join(d, "agent.yaml")
    with open(path, "w") as f:
        f.write("rules_file: %s\n" % own)
    env = env_without_rules_file()
    p = subprocess.run([harness.BIN, "--print-config", "-c", path], capture_output=True,
                       text=True, timeout=30, env=env)
    harness.eq(p.stdout.splitlines()[-1], "# rule catalogue in use: %s (1 rule)" % own, "rules_file")
    with open(path, "w") as f:
        f.write("logging: {debug_level: 0}\n")
    env["ESXWATCH_RULES_FILE"] = own
    p = subprocess.run([harness.BIN, "--print-config", "-c", path], capture_output=True,
                       text=True, timeout=30, env=env)
    harness.eq(p.stdout.splitlines()[-1], "# rule catalogue in use: %s (1 rule)" % own,
               "ESXWATCH_RULES_FILE")
    # a path set but missing: reported, not replaced by the built-in one
    env["ESXWATCH_RULES_FILE"] = os.path.join(d, "missing.yaml")
    p = subprocess.run([harness.BIN, "--print-config", "-c", path], capture_output=True,
                       text=True, timeout=30, env=env)
    harness.eq(p.stdout.splitlines()[-1], "# rule catalogue: %s cannot be read; only the rules "
               "above are used" % env["ESXWATCH_RULES_FILE"], "a missing ESXWATCH_RULES_FILE")


harness.main(globals())
