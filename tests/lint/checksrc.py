#!/usr/bin/env python3
"""checksrc: the house rules of docs/DESIGN (COMMON rules) checked on the C
sources, in the spirit of curl's scripts/checksrc.pl.

    python3 tests/lint/checksrc.py [--allow FILE] [--root DIR] [PATH...]

PATHs default to agent/ collectors/ output/ (every *.c and *.h below them).
Each finding is printed as "FILE:LINE: message [rule]"; the exit status is 1
when there is any.  Rules:

  assign-in-cond  an assignment (=, +=, <<=, ...) in the condition of an
                  if/while/do-while/switch or the test of a for; assign
                  first, then test.  `=` inside braces (compound literals,
                  designated initialisers) is not an assignment of the
                  condition and is ignored.
  banned          sprintf, vsprintf, strcpy, strcat, strtok, gets, system,
                  popen called (snprintf, memcpy with a checked length,
                  strtok_r, agent/exec instead).
  strerror        strerror/strerror_r outside agent/lib/log.c (use the log
                  helpers, which are thread-safe).
  file-size       a product .c file over 1200 lines.
  func-size       a function body over 80 lines (from the line of its
                  opening brace to the line of its closing brace).
  layer           an #include "..." that points up or sideways in the
                  house (docs/architecture.md, "The house"): agent/lib/
                  includes only itself; agent/config/ lib and the event;
                  agent/spool/ and agent/diagnosis/ those and themselves;
                  collectors/host/ lib, event and config; collectors/ and
                  output/ the layers below them and never each other; the
                  thin agent/ core (main, scheduler, shipper, status, ...)
                  anything.  The table is LAYERS below.
  one-of-each     a second copy of what agent/lib has once: a function
                  named like a UTF-8 validator or decoder (utf8 in its
                  name) outside agent/lib/utf8.c; rename() (an atomic
                  writer) outside agent/lib/fs.c; a JSON reader (json_find,
                  json_get, json_parse, ... or parse_json ...) outside
                  agent/lib/json.c; xmalloc, xrealloc, xstrdup, xstrndup
                  defined outside agent/lib/mem.c; trim, parse_u64,
                  copy_str, skip_blanks, unescape defined outside
                  agent/lib/str.c (use str.h, or a name that says how yours
                  differs).

The allowlist (default tests/lint/allow.txt) has one "PATH RULE" entry a line
(# comments); an entry excuses every finding of RULE in PATH.  An entry that
excuses nothing is reported as stale (a note on stderr, not a failure).
"""
import os
import re
import sys

MAX_FILE_LINES = 1200
MAX_FUNC_LINES = 80
BANNED = ("sprintf", "vsprintf", "strcpy", "strcat", "strtok", "gets",
          "system", "popen")
STRERROR_OK = {"agent/lib/log.c"}
# one-of-each: (what, the one file allowed it, a defined function's name)
ONE_OF_EACH = (
    ("a UTF-8 validator or decoder", "agent/lib/utf8.c",
     re.compile(r"(?i)utf_?8")),
    ("a JSON reader", "agent/lib/json.c",
     re.compile(r"(^|_)(json_(find|get|parse|read|scan|lookup)|"
                r"(find|get|parse|read|scan)_json)")),
    ("an allocator that cannot fail", "agent/lib/mem.c",
     re.compile(r"^x(malloc|calloc|realloc|strdup|strndup)$")),
    ("a string helper", "agent/lib/str.c",
     re.compile(r"^(trim|parse_u64|copy_str|skip_blanks|unescape)$")),
)
RENAME_OK = "agent/lib/fs.c"
RENAME_RE = re.compile(r"(?<![\w.>])(rename(?:at2?)?)\s*\(")
DIRS = ("agent", "collectors", "output")

# The house's layers, most specific prefix first, and what each may
# include (besides itself).  collectors/ holds the collectors, their
# interface and the logwatch engine (one room: collector.h is the
# interface logwatch implements); collectors/host/ sits below them.
LAYERS = (
    ("agent/lib/", "lib"),
    ("agent/event.", "event"),
    ("agent/config/", "config"),
    ("agent/spool/", "spool"),
    ("agent/diagnosis/", "diagnosis"),
    ("agent/analyze/", "analyze"),
    ("agent/", "core"),
    ("collectors/host/", "host"),
    ("collectors/", "collectors"),
    ("output/", "output"),
)
MAY_INCLUDE = {
    "lib": {"lib"},
    "event": {"lib"},
    "config": {"lib", "event"},
    "spool": {"lib", "event", "config"},
    "diagnosis": {"lib", "event", "config"},
    "host": {"lib", "event", "config"},
    "collectors": {"lib", "event", "config", "diagnosis", "host"},
    "output": {"lib", "event", "config"},
    "analyze": {"lib", "event", "config", "diagnosis", "host",
                "collectors", "output"},
    "core": {"lib", "event", "config", "spool", "diagnosis", "host",
             "collectors", "output", "analyze"},
}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

BANNED_RE = re.compile(r"(?<![\w.>])(%s)\s*\(" % "|".join(BANNED))
STRERROR_RE = re.compile(r"(?<![\w.>])(strerror(?:_r|_l)?)\s*\(")
KEYWORD_RE = re.compile(r"\b(if|while|for|switch)\s*\(")
# An assignment operator: =, op= (+ - * / % & | ^ << >>), not ==, <=, >=, !=.
ASSIGN_RE = re.compile(r"(<<=|>>=|[-+*/%&|^]=|(?<![=!<>])=(?!=))")


def strip(text):
    """Comments, string and character literals blanked (newlines kept), so
    that line numbers and offsets stay those of the original text."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_preprocessor(code):
    """#include/#define/... lines (with their continuations) blanked: macro
    bodies are not statements of a function."""
    lines = code.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.endswith("\\")
            lines[k] = " " * len(line)
    return "\n".join(lines)


def matching(code, i, open_c, close_c):
    """Index of the bracket closing the one at code[i], or -1."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == open_c:
            depth += 1
        elif code[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return -1


def outside_braces(s):
    """s with every {...} (compound literal, designated initialiser, statement
    expression) blanked."""
    out, depth = [], 0
    for c in s:
        if c == "{":
            depth += 1
        if depth:
            out.append(" ")
        else:
            out.append(c)
        if c == "}" and depth:
            depth -= 1
    return "".join(out)


def for_test(s):
    """The test (between the two top-level semicolons) of a for header."""
    depth, semis = 0, []
    for k, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            semis.append(k)
    if len(semis) < 2:
        return ""
    return s[semis[0] + 1:semis[1]]


def line_of(code, pos):
    return code.count("\n", 0, pos) + 1


def check_conditions(code, report):
    for m in KEYWORD_RE.finditer(code):
        open_at = m.end() - 1
        close_at = matching(code, open_at, "(", ")")
        if close_at < 0:
            continue
        inner = code[open_at + 1:close_at]
        if m.group(1) == "for":
            inner = for_test(inner)
        inner = outside_braces(inner)
        if ASSIGN_RE.search(inner):
            report(line_of(code, m.start()), "assign-in-cond",
                   "assignment in the condition of '%s': assign first, "
                   "then test" % m.group(1))


def check_calls(code, rel, report):
    for m in BANNED_RE.finditer(code):
        report(line_of(code, m.start()), "banned",
               "banned function %s()" % m.group(1))
    if rel not in STRERROR_OK:
        for m in STRERROR_RE.finditer(code):
            report(line_of(code, m.start()), "strerror",
                   "%s() outside the log helpers (agent/lib/log.h)" % m.group(1))


def functions(code):
    """(name, line of the name, first line, last line) of each function
    defined: top-level brace blocks whose header ends in ')'."""
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "{":
            end = matching(code, i, "{", "}")
            if end < 0:
                return
            head = code[:i].rstrip()
            if head.endswith(")"):
                # the name: identifier before the parameter list
                depth, k = 0, len(head) - 1
                while k >= 0:
                    if head[k] == ")":
                        depth += 1
                    elif head[k] == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    k -= 1
                name = re.search(r"(\w+)\s*$", head[:max(k, 0)])
                yield (name.group(1) if name else "?",
                       line_of(code, name.start(1)) if name else line_of(code, i),
                       line_of(code, i), line_of(code, end))
            i = end + 1
        else:
            i += 1


def layer_of(rel):
    for prefix, name in LAYERS:
        if rel.startswith(prefix):
            return name
    return None


def check_layers(text, rel, report):
    """Every quoted include resolved against the including file's folder:
    its layer must be the file's own or one MAY_INCLUDE names."""
    mine = layer_of(rel)
    if mine is None:
        return
    for m in INCLUDE_RE.finditer(text):
        target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
        theirs = layer_of(target)
        if theirs is None or theirs == mine or theirs in MAY_INCLUDE[mine]:
            continue
        report(line_of(text, m.start()), "layer",
               "%s (%s) includes %s (%s): an arrow up or sideways in "
               "the house" % (rel, mine, target, theirs))

def check_functions(code, report):
    for name, _, first, last in functions(code):
        length = last - first + 1
        if length > MAX_FUNC_LINES:
            report(first, "func-size", "function %s is %d lines (max %d)" %
                   (name, length, MAX_FUNC_LINES))


def check_one_of_each(code, rel, report):
    for name, line, _, _ in functions(code):
        for what, home, name_re in ONE_OF_EACH:
            if rel != home and name_re.search(name):
                report(line, "one-of-each", "%s defined here (%s): %s has "
                       "the one" % (name, what, home))
    if rel != RENAME_OK:
        for m in RENAME_RE.finditer(code):
            report(line_of(code, m.start()), "one-of-each",
                   "%s() outside %s: replace files with fs_write_atomic() "
                   "or fs_replace()" % (m.group(1), RENAME_OK))


def check_file(path, rel, report):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    check_layers(text, rel, report)
    code = strip(text)
    check_calls(code, rel, report)
    code = blank_preprocessor(code)
    check_conditions(code, report)
    check_functions(code, report)
    check_one_of_each(code, rel, report)
    nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if rel.endswith(".c") and nlines > MAX_FILE_LINES:
        report(nlines, "file-size", "file is %d lines (max %d)" %
               (nlines, MAX_FILE_LINES))


def load_allow(path):
    allow = {}
    if not path or not os.path.exists(path):
        return allow
    with open(path) as f:
        for num, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) != 2:
                sys.exit("%s:%d: want 'PATH RULE'" % (path, num))
            allow[(line[0], line[1])] = 0
    return allow


def sources(root, paths):
    for p in paths:
        full = os.path.join(root, p)
        if os.path.isfile(full):
            yield p
            continue
        for d, dirs, files in os.walk(full):
            dirs.sort()
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, name), root)


def main(argv):
    root = "."
    allow_path = None
    args = []
    it = iter(argv)
    for a in it:
        if a == "--root":
            root = next(it)
        elif a == "--allow":
            allow_path = next(it)
        else:
            args.append(a)
    if allow_path is None:
        allow_path = os.path.join(root, "tests/lint/allow.txt")
    allow = load_allow(allow_path)
    found = 0
    for rel in sources(root, args or DIRS):
        def report(line, rule, msg, rel=rel):
            nonlocal found
            key = (rel, rule)
            if key in allow:
                allow[key] += 1
                return
            found += 1
            print("%s:%d: %s [%s]" % (rel, line, msg, rule))
        check_file(os.path.join(root, rel), rel, report)
    for (rel, rule), used in sorted(allow.items()):
        if not used and not args:
            print("checksrc: note: stale allowlist entry '%s %s'" % (rel, rule),
                  file=sys.stderr)
    if found:
        print("checksrc: %d problem%s" % (found, "" if found == 1 else "s"),
              file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
