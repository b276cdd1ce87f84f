#!/usr/bin/env python3
"""checksrc (make lint): the tree passes; a planted violation in a copy of the
tree fails with FILE:LINE; the comparisons and initialisers that look like
assignments do not.  Prints PASS:/FAIL: lines (tests/run-all.sh)."""
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKSRC = os.path.join(TOP, "tests/lint/checksrc.py")
failed = 0


def result(name, ok, detail=""):
    global failed
    print("%s: lint/%s%s" % ("PASS" if ok else "FAIL", name,
                            "" if ok or not detail else ": " + detail))
    if not ok:
        failed += 1


def run(root, *args):
    p = subprocess.run([sys.executable, CHECKSRC, "--root", root] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout


def tree_copy():
    d = tempfile.mkdtemp(prefix="esxwatch-lint-")
    for sub in ("agent", "collectors", "output"):
        shutil.copytree(os.path.join(TOP, sub), os.path.join(d, sub))
    os.makedirs(os.path.join(d, "tests/lint"))
    shutil.copy(os.path.join(TOP, "tests/lint/allow.txt"),
                os.path.join(d, "tests/lint/allow.txt"))
    return d


def plant(root, rel, text, marker):
    """Append text to rel; the line number of marker in the file."""
    path = os.path.join(root, rel)
    with open(path) as f:
        n = f.read().count("\n")
    with open(path, "a") as f:
        f.write(text)
    return n + 1 + text[:text.index(marker)].count("\n")


def one_file(code, name="agent/x.c"):
    d = tempfile.mkdtemp(prefix="esxwatch-lint-")
    os.makedirs(os.path.join(d, os.path.dirname(name)))
    with open(os.path.join(d, name), "w") as f:
        f.write(code)
    rc, out = run(d, "--allow", "/dev/null", name)
    shutil.rmtree(d)
    return rc, out


def test_tree_passes():
    rc, out = run(TOP)
    result("tree_passes", rc == 0 and out == "", out[:2000])


def test_planted(name, rel, text, marker, rule):
    d = tree_copy()
    try:
        line = plant(d, rel, text, marker)
        rc, out = run(d)
        want = "%s:%d:" % (rel, line)
        result(name, rc != 0 and want in out and "[%s]" % rule in out,
               "rc=%d, want %s ... [%s] in %r" % (rc, want, rule, out))
    finally:
        shutil.rmtree(d)


def test_no_false_positives():
    code = r'''
struct p { int a, b; };
static int f(struct p q) { return q.a; }
int g(int x, int y, const char *s)
{
	int i, n = 0;
	char b[8];

	if (x == y || x <= y || x >= y || x != y)
		n++;
	if (f((struct p){ .a = 1, .b = x }) == 1)
		n++;
	while (x < y && !(x == 3))
		x++;
	for (i = 0, n = 1; i < n; i += 2, n = n * 2)
		n--;
	if (s[0] == '=' && strcmp(s, "if ((x = y))") == 0)	/* if ((a = b)) */
		n++;
	if (snprintf(b, sizeof(b), "%d", n) < 0 || fgets(b, 8, stdin) == NULL)
		n++;
	// while ((n = read()) > 0)
	switch (x >> 1 << 2) {
	default:
		break;
	}
	return n;
}
'''
    rc, out = one_file(code)
    result("no_false_positives", rc == 0 and out == "", out)


def test_catches():
    cases = [
        ("while_read", "int r(int fd, char *b)\n{\n\tint n;\n\twhile ((n = read(fd, b, 1)) > 0)\n\t\t;\n\treturn n;\n}\n", 4, "assign-in-cond"),
        ("for_test", "void r(char *p)\n{\n\tfor (; (*p = 0) != 1;)\n\t\t;\n}\n", 3, "assign-in-cond"),
        ("compound_op", "int r(int x)\n{\n\tif ((x += 2) > 3)\n\t\treturn 1;\n\treturn 0;\n}\n", 3, "assign-in-cond"),
        ("shift_assign", "int r(int x)\n{\n\tif (x <<= 1)\n\t\treturn 1;\n\treturn 0;\n}\n", 3, "assign-in-cond"),
        ("do_while", "int r(int x)\n{\n\tdo\n\t\tx--;\n\twhile ((x /= 10) != 0);\n\treturn x;\n}\n", 5, "assign-in-cond"),
        ("strcpy", "void r(char *a)\n{\n\tstrcpy(a, \"x\");\n}\n", 3, "banned"),
        ("popen", "void r(void)\n{\n\t(void)popen(\"ls\", \"r\");\n}\n", 3, "banned"),
        ("strerror", "const char *r(int e)\n{\n\treturn strerror(e);\n}\n", 3, "strerror"),
        ("long_function", "void r(void)\n{\n" + "\t;\n" * 79 + "}\n", 2, "func-size"),
        ("long_file", "int x;\n" * 1201, 1201, "file-size"),
    ]
    for name, code, line, rule in cases:
        rc, out = one_file(code)
        want = "agent/x.c:%d:" % line
        result("catches_" + name, rc == 1 and want in out and "[%s]" % rule in out,
               "want %s [%s], got %r" % (want, rule, out))
    # exactly 80 lines is within the limit; strerror in the log helpers is fine
    rc, out = one_file("void r(void)\n{\n" + "\t;\n" * 78 + "}\n")
    result("function_of_80_lines_ok", rc == 0, out)
    rc, out = one_file("const char *r(int e)\n{\n\treturn strerror(e);\n}\n",
                       "agent/lib/log.c")
    result("strerror_in_log_ok", rc == 0, out)


def test_layers():
    """Each arrow that points up or sideways fails with FILE:LINE [layer];
    the arrows the house allows pass."""
    bad = [
        ("lib_to_config", "agent/lib/x.c", '#include "../config/config.h"\n'),
        ("lib_to_event", "agent/lib/x.c", '#include "../event.h"\n'),
        ("config_to_collectors", "agent/config/x.c",
         '#include "../../collectors/collector.h"\n'),
        ("config_to_core", "agent/config/x.c", '#include "../monitor.h"\n'),
        ("spool_to_output", "agent/spool/x.c", '#include "../../output/sink.h"\n'),
        ("spool_to_diagnosis", "agent/spool/x.c",
         '#include "../diagnosis/diagnose.h"\n'),
        ("collector_to_scheduler", "collectors/x.c",
         '#include "../agent/scheduler.h"\n'),
        ("logwatch_to_status", "collectors/logwatch/x.c",
         '#include "../../agent/status.h"\n'),
        ("collector_to_output", "collectors/x.c", '#include "../output/sink.h"\n'),
        ("output_to_collectors", "output/x.c",
         '#include "../collectors/collector.h"\n'),
        ("output_to_spool", "output/x.c", '#include "../agent/spool/queue.h"\n'),
        ("host_to_collectors", "collectors/host/x.c", '#include "../nic.h"\n'),
        ("analyze_to_core", "agent/analyze/x.c", '#include "../status.h"\n'),
        ("lib_to_analyze", "agent/lib/x.c", '#include "../analyze/report_html.h"\n'),
    ]
    for name, rel, inc in bad:
        rc, out = one_file("#include <stdio.h>\n" + inc, rel)
        want = "%s:2:" % rel
        result("layer_" + name, rc == 1 and want in out and "[layer]" in out,
               "want %s [layer], got %r" % (want, out))
    good = [
        ("lib_in_lib", "agent/lib/x.c", '#include "buf.h"\n'),
        ("config_to_lib", "agent/config/x.c", '#include "../lib/buf.h"\n'),
        ("spool_to_event", "agent/spool/x.c", '#include "../event.h"\n'),
        ("collector_to_host", "collectors/x.c", '#include "host/host.h"\n'),
        ("logwatch_to_collector", "collectors/logwatch/x.c",
         '#include "../collector.h"\n'),
        ("output_to_config", "output/x.c", '#include "../agent/config/config.h"\n'),
        ("analyze_to_logwatch", "agent/analyze/x.c",
         '#include "../../collectors/logwatch/logline.h"\n#include "../lib/json.h"\n'),
        ("core_to_analyze", "agent/x.c", '#include "analyze/report_html.h"\n'),
        ("core_to_all", "agent/x.c",
         '#include "../collectors/collector.h"\n#include "../output/sink.h"\n'),
    ]
    for name, rel, inc in good:
        rc, out = one_file(inc, rel)
        result("layer_ok_" + name, rc == 0 and out == "", out)

def test_one_of_each():
    cases = [
        ("utf8_validator", "static int\nis_utf8(const char *s)\n{\n\treturn s != 0;\n}\n", 2),
        ("rename", "int r(const char *a, const char *b)\n{\n\treturn rename(a, b);\n}\n", 3),
        ("json_reader", "const char *\njson_find_key(const char *b)\n{\n\treturn b;\n}\n", 2),
        ("parse_json", "int parse_json_reply(const char *b)\n{\n\treturn b != 0;\n}\n", 1),
        ("xstrdup", "char *\nxstrdup(const char *s)\n{\n\treturn (char *)s;\n}\n", 2),
        ("trim", "static char *\ntrim(char *s)\n{\n\treturn s;\n}\n", 2),
    ]
    for name, code, line in cases:
        rc, out = one_file(code)
        want = "agent/x.c:%d:" % line
        result("one_of_each_" + name, rc == 1 and want in out and
               "[one-of-each]" in out, "want %s [one-of-each], got %r" % (want, out))
    # each in its own file; callers, and names that say how they differ
    ok = [
        ("agent/lib/fs.c", "int r(const char *a, const char *b)\n{\n\treturn rename(a, b);\n}\n"),
        ("agent/lib/utf8.c", "int utf8_ok(const char *s)\n{\n\treturn s != 0;\n}\n"),
        ("agent/lib/mem.c", "char *\nxstrdup(const char *s)\n{\n\treturn (char *)s;\n}\n"),
        ("agent/x.c", "static char *\nkv_unescape(char *s)\n{\n\treturn s;\n}\n"
         "static int\nwidget_json(int d)\n{\n\treturn json_get(0, d, \"a\");\n}\n"
         "static int\nstatus_json_str(int d)\n{\n\treturn d; /* rename() */\n}\n"),
    ]
    for rel, code in ok:
        rc, out = one_file(code, rel)
        result("one_of_each_ok_" + rel.replace("/", "_"), rc == 0 and out == "", out)


def test_allowlist():
    d = tempfile.mkdtemp(prefix="esxwatch-lint-")
    try:
        os.makedirs(os.path.join(d, "agent"))
        with open(os.path.join(d, "agent/x.c"), "w") as f:
            f.write("void r(char *a)\n{\n\tstrcat(a, \"x\");\n}\n")
        allow = os.path.join(d, "allow.txt")
        with open(allow, "w") as f:
            f.write("# comment\nagent/x.c banned\n")
        rc, out = run(d, "--allow", allow, "agent")
        result("allowlist_excuses", rc == 0 and out == "", out)
        with open(allow, "w") as f:
            f.write("agent/x.c strerror\n")
        rc, out = run(d, "--allow", allow, "agent")
        result("allowlist_is_per_rule", rc == 1 and "agent/x.c:3:" in out, out)
    finally:
        shutil.rmtree(d)


test_tree_passes()
test_planted("fails_on_planted_assignment", "agent/lib/buf.c",
             "\nint lint_planted(int (*f)(void))\n{\n\tint x;\n\n\tif ((x = f()))\n\t\treturn x;\n\treturn 0;\n}\n",
             "if ((x", "assign-in-cond")
test_planted("fails_on_planted_sprintf", "output/gzip.c",
             "\nvoid lint_planted(char *b, int n)\n{\n\tsprintf(b, \"%d\", n);\n}\n",
             "sprintf", "banned")
test_no_false_positives()
test_catches()
test_layers()
test_one_of_each()
test_allowlist()
print("lint: %d failed" % failed)
sys.exit(1 if failed else 0)
