"""End-to-end: the configuration as the real binary sees it.

--check-config exits 0 on a valid file and 2 on an invalid one with every
error on stderr as FILE:LINE:COL: message; --print-config prints the
effective configuration (a liagent.ini mapped onto agent.yaml's keys), and
what it prints is itself a valid configuration.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

REPO_YAML = os.path.join(harness.TOP, "agent.yaml")
INI_FIXTURE = os.path.join(harness.FIXTURES, "config", "liagent.ini")


def run(*args):
    p = subprocess.run([harness.BIN] + list(args), capture_output=True,
                       timeout=30, cwd=harness.TOP)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def write(tmpdir, name, text):
    path = os.path.join(tmpdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def error_lines(path, stderr):
    """stderr lines of the form PATH:LINE:COL: message -> [(l, c, msg)]."""
    out = []
    pat = re.compile(r"^" + re.escape(path) + r":(\d+):(\d+): (.*)$")
    for line in stderr.splitlines():
        m = pat.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return out


def check_invalid(tmpdir, text, line, col, msg):
    path = write(tmpdir, "agent.yaml", text)
    rc, out, err = run("--check-config", "-c", path)
    harness.eq(rc, 2, "exit status (stderr: %r)" % err)
    errs = error_lines(path, err)
    if not any(l == line and c == col and m.startswith(msg) for l, c, m in errs):
        harness.fail("no %s:%d:%d: %s in stderr %r" % (path, line, col, msg, err))
    return errs


def test_repo_agent_yaml_is_valid(tmpdir):
    rc, out, err = run("--check-config", REPO_YAML)
    harness.eq(rc, 0, "exit status (stderr: %r)" % err)
    harness.eq(err.strip(), "", "stderr")
    # also as -c FILE
    rc, out, err = run("-c", REPO_YAML, "--check-config")
    harness.eq(rc, 0, "exit status with -c")


def test_typo_key(tmpdir):
    check_invalid(tmpdir, "server:\n  hostnme: li.example.com\n", 2, 3,
                  "unknown key 'hostnme' in section 'server'")


def test_string_for_number(tmpdir):
    check_invalid(tmpdir, "server:\n  hostname: li\n  port: abc\n", 3, 9,
                  "'port': expected a number, got 'abc'")


def test_port_out_of_range(tmpdir):
    check_invalid(tmpdir, "# li\nserver:\n  port: 70000\n", 3, 9,
                  "'port': 70000 is out of range 0..65535")


def test_every_error_on_its_own_line(tmpdir):
    text = ("server:\n"
            "  hostnme: x\n"
            "  port: abc\n"
            "  ssl: perhaps\n"
            "batch:\n"
            "  max_events: 9999\n"
            "collectors:\n"
            "  nic: { interval: 0 }\n"
            "rules:\n"
            "  - name: bad\n"
            "    regex: 'a(b'\n")
    errs = check_invalid(tmpdir, text, 2, 3, "unknown key 'hostnme'")
    got = [(l, c) for l, c, _ in errs]
    harness.eq(got, [(2, 3), (3, 9), (4, 8), (6, 15), (8, 20), (11, 12)],
               "error positions")
    path = os.path.join(tmpdir, "agent.yaml")
    rc, out, err = run("--check-config", "-c", path)
    for line in err.splitlines():
        if not line.startswith(path + ":"):
            harness.fail("stderr line not FILE:LINE:COL: %r" % line)


def test_hostname_with_port_scheme_or_path(tmpdir):
    text = ("server:\n"
            "  hostname: li:9000\n"
            "servers:\n"
            "  a: { hostname: \"https://li.example.com\" }\n"
            "  b: { hostname: li/path, proto: syslog }\n"
            "  c: { hostname: \"li.example.com:9543\" }\n"
            "  v6: { hostname: \"fe80::1\", proto: syslog }\n"
            "  v6b: { hostname: \"[fe80::2]\", proto: syslog }\n"
            "filelog:\n"
            "  vmk: { include: /var/log/vmkernel.log }\n")
    errs = check_invalid(tmpdir, text, 2, 13,
                         "'hostname': 'li:9000' holds a port: use port: 9000")
    harness.eq([(l, c) for l, c, _ in errs],
               [(2, 13), (4, 18), (5, 18), (6, 18), (10, 19)],
               "one error each, IPv6 literals accepted: %r" % errs)
    msgs = [m for _, _, m in errs]
    for want in ("holds a scheme", "holds a path", "use port: 9543",
                 "use directory: /var/log and include: vmkernel.log"):
        if not any(want in m for m in msgs):
            harness.fail("no %r in %r" % (want, msgs))
    # liagent.ini: the same errors at the value's place
    path = write(tmpdir, "liagent.ini", "[server]\nhostname=li:9000\n"
                 "[filelog|vmk]\ninclude=/var/log/vmkernel.log\n")
    rc, out, err = run("--check-config", "-c", path)
    harness.eq(rc, 2, "exit status (stderr: %r)" % err)
    harness.eq([(l, c, m.split(":")[0]) for l, c, m in error_lines(path, err)],
               [(2, 10, "'hostname'"), (4, 9, "'include'")],
               "liagent.ini errors: %r" % err)


def test_yaml_syntax_error(tmpdir):
    check_invalid(tmpdir, "server:\n  hostname: x\n port: 1\n", 3, 2,
                  "YAML syntax error")


def test_missing_file(tmpdir):
    path = os.path.join(tmpdir, "nope.yaml")
    rc, out, err = run("--check-config", "-c", path)
    harness.eq(rc, 2, "exit status")
    harness.eq(err.strip(), path + ": cannot open: No such file or directory",
               "stderr")


def test_liagent_ini_accepted(tmpdir):
    ini = os.path.join(tmpdir, "liagent.ini")
    shutil.copy(INI_FIXTURE, ini)
    rc, out, err = run("--check-config", "-c", ini)
    harness.eq(rc, 0, "exit status (stderr: %r)" % err)
    # what esxwatch does not do is warned about, never fatal
    for line in err.splitlines():
        if not re.match(re.escape(ini) + r":\d+:\d+: warning: ", line):
            harness.fail("not a warning line: %r" % line)
    if "ssl_accept_any_trusted" not in err or "[update]" not in err:
        harness.fail("expected warnings missing: %r" % err)


def yaml_section(text, name):
    """The indented block under a top-level key of printed YAML."""
    lines = text.splitlines()
    out, inside = [], False
    for l in lines:
        if re.match(r"^[a-z_]+:", l):
            inside = l.startswith(name + ":")
            continue
        if inside:
            out.append(l)
    return "\n".join(out)


def test_liagent_ini_print_config(tmpdir):
    ini = os.path.join(tmpdir, "liagent.ini")
    shutil.copy(INI_FIXTURE, ini)
    rc, out, err = run("--print-config", "-c", ini)
    harness.eq(rc, 0, "exit status (stderr: %r)" % err)
    server = yaml_section(out, "server")
    for want in ('  hostname: "li-vip.corp.example"', "  proto: cfapi",
                 "  port: 9543", "  ssl: yes", "  reconnect: 20",
                 '  ssl_ca_path: "/etc/pki/tls/certs/ca.pem"'):
        if want not in server.splitlines():
            harness.fail("server: no %r in %r" % (want, server))
    servers = yaml_section(out, "servers")
    for want in ('  "archive":', '    hostname: "syslog-archive.corp.example"',
                 "    proto: syslog", "    port: 514"):
        if want not in servers.splitlines():
            harness.fail("servers: no %r in %r" % (want, servers))
    tags = yaml_section(out, "tags").splitlines()
    for want in ('  "vmw_datacenter": "dc1"', '  "env": "prod"'):
        if want not in tags:
            harness.fail("tags: no %r in %r" % (want, tags))
    filelog = yaml_section(out, "filelog")
    names = re.findall(r'^  "([^"]+)":$', filelog, re.M)
    harness.eq(names, ["syslog", "lighttpd", "vpxd"], "filelog names")
    for want in ('    directory: "/opt/vmware/var/log/lighttpd"',
                 '    include: ["messages", "messages.?", "syslog"]',
                 '      "vcf_component": "lighttpd"', "    forward: all"):
        if want not in filelog.splitlines():
            harness.fail("filelog: no %r in %r" % (want, filelog))
    if "  max_disk_buffer: 500" not in out.splitlines():
        harness.fail("storage.max_disk_buffer not mapped")
    if "  debug_level: 1" not in out.splitlines():
        harness.fail("logging.debug_level not mapped")
    # the printed configuration is a valid agent.yaml that prints the same
    printed = write(tmpdir, "printed.yaml", out)
    rc, out2, err2 = run("--check-config", "-c", printed)
    harness.eq(rc, 0, "printed config check (stderr: %r)" % err2)
    rc, out2, err2 = run("--print-config", "-c", printed)
    harness.eq(rc, 0, "printed config print")
    harness.eq(out2, out, "print of the printed config")


def test_print_config_fills_defaults(tmpdir):
    path = write(tmpdir, "agent.yaml", "server:\n  proto: http\n  url: http://x/\n")
    rc, out, err = run("--print-config", "-c", path)
    harness.eq(rc, 0, "exit status (stderr: %r)" % err)
    lines = out.splitlines()
    for want in ("  format: json_lines", "  max_disk_buffer: 200",
                 "  max_events: 500", "  platform: auto", "  logwatch:",
                 '  "vmkernel":', '    directory: "/var/log"',
                 "    interval: 3600", 'rules_file: ""'):
        if want not in lines:
            harness.fail("no %r in printed config" % want)


harness.main(globals())
