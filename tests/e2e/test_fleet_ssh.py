"""packaging/fleet/esxwatch-fleet.sh end to end against simulated ESXi hosts.

The choice: a real OpenSSH server rather than an ssh/scp command shim, so
the tool's real ssh and scp command lines, its quoting of values and the
remote script it feeds to `sh -s` are what is tested.  One sshd (run by
this test, on a free port, with its own host key and authorized key)
listens on 127.0.0.2, .3 and .4; a `Match LocalAddress` block per address
chroots the session into that host's own root.  Each root holds busybox
(the ESXi shell's sh and tools), bash (root's login shell, which sshd runs
the command with) and stubs: esxcli (records every call, keeps the
acceptance level, the installed package's checksum and the /UserVars
values), /etc/init.d/esxwatch (records restart/status, writes the agent's
status file in agent/status.c's format with a fresh updated_ms) and
/opt/esxwatch/bin/esxwatch (on .2 it knows `--status --json`, on the
others it refuses the option, so the tool falls back to the status file).
scp goes through sshd's internal-sftp, which needs nothing in the chroot.
127.0.0.5 has no server: the unreachable row.

Needs root (chroot, sshd) and openssh-server.
"""
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

TOOL = os.path.join(harness.TOP, "packaging", "fleet", "esxwatch-fleet.sh")
HOSTS = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
DEAD = "127.0.0.5"
_CLEANUP = []
APPLETS = ("sh cat sed grep rm mkdir date sleep head tr echo printf test [ basename ls cp "
           "mv touch md5sum cut env true false expr").split()

ESXCLI = r"""#!/bin/sh
# stub esxcli: records the call, keeps state under /sim
echo "esxcli $*" >> /sim/calls.log
case "$*" in
"software acceptance set --level="*)
	echo "${4#--level=}" > /sim/acceptance; exit 0 ;;
"software vib install -v "*|"software vib install -d "*|"software component apply -d "*)
	f=$5
	[ -f "$f" ] || { echo "[Errno 2] No such file or directory: $f"; exit 1; }
	md5sum "$f" | cut -d' ' -f1 > /sim/installed
	echo "$2 $3" > /sim/installed.how
	echo "Installation Result"
	echo "   Message: Operation finished successfully."
	echo "   VIBs Installed: community_bootbank_esxwatch_0.1.0-1"
	exit 0 ;;
"software vib get -n esxwatch")
	[ -f /sim/installed ] || { echo "[NoMatchError]"; exit 1; }
	echo "community_bootbank_esxwatch_0.1.0-1"
	echo "   Name: esxwatch"
	echo "   Version: 0.1.0-1"
	exit 0 ;;
"system settings advanced list -o /UserVars/"*)
	n=${6#/UserVars/}
	case "$n" in
	EsxwatchServerPort|EsxwatchServerSsl) t=integer ;;
	Esxwatch*) t=string ;;
	*) echo "Unable to find option $n"; exit 1 ;;
	esac
	echo "   Path: /UserVars/$n"
	echo "   Type: $t"
	exit 0 ;;
"system syslog config set --loghost="*)
	v=${5#--loghost=}
	[ -f /sim/loghost_ignored ] && v="<none>"
	echo "$v" > /sim/loghost; exit 0 ;;
"system syslog reload")
	exit 0 ;;
"system syslog config get")
	echo "   Default Network Retry Timeout: 180"
	echo "   Local Log Output: /scratch/log"
	echo "   Remote Host: $(cat /sim/loghost 2>/dev/null || echo '<none>')"
	exit 0 ;;
"network firewall ruleset set --ruleset-id=syslog --enabled=true")
	echo syslog > /sim/firewall; exit 0 ;;
"network firewall refresh")
	exit 0 ;;
"system settings advanced set -o /UserVars/"*)
	n=${6#/UserVars/}
	mkdir -p /sim/uservars
	echo "$7 $8" > "/sim/uservars/$n"
	exit 0 ;;
esac
echo "Error: Unknown command or namespace $*"
exit 1
"""

INIT = r"""#!/bin/sh
# stub init script: records the verb; restart writes the agent's status file
echo "init $*" >> /sim/calls.log
case "$1" in
restart)
	mkdir -p /scratch/esxwatch
	now=$(date +%s)
	state=$(cat /sim/state)
	{
		echo "esxwatch-status: 1"
		echo "version: 0.1.0"
		echo "pid: 4242"
		echo "updated_ms: ${now}123"
		echo "started_ms: ${now}000"
		echo "spool: disk"
		echo "queued_events: 7"
		echo "dest: server"
		echo " proto: cfapi"
		echo " state: ${state}"
		echo " backlog_events: 7"
		echo " last_error: "
	} > /scratch/esxwatch/status
	touch /sim/running
	echo "esxwatch: started"
	exit 0 ;;
status)
	[ -f /sim/running ] && { echo "esxwatch is running (pid 4242)"; exit 0; }
	echo "esxwatch is not running"; exit 3 ;;
esac
exit 2
"""

AGENT_JSON = r"""#!/bin/sh
# stub agent that has --status --json
echo "agent $*" >> /sim/calls.log
if [ "$1 $2" = "--status --json" ]; then
	now=$(date +%s)
	printf '{"version": "0.1.0-json", "pid": 4242, "updated_ms": %s000,\n' "$now"
	printf ' "destinations": [{"name": "server", "proto": "cfapi", "state": "%s",\n' "$(cat /sim/state)"
	printf '   "backlog_events": 3}]}\n'
	exit 0
fi
exit 2
"""

AGENT_OLD = r"""#!/bin/sh
# stub agent from before --status --json
echo "agent $*" >> /sim/calls.log
echo "esxwatch: unknown option --json" >&2
exit 2
"""


def copy_with_libs(root, binary):
    dst = os.path.join(root, binary.lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(binary, dst)
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        lib = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if lib.startswith("/"):
            d = os.path.join(root, lib.lstrip("/"))
            os.makedirs(os.path.dirname(d), exist_ok=True)
            if not os.path.exists(d):
                shutil.copy2(os.path.realpath(lib), d)


def write_exec(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


def make_root(base, addr, json_status):
    r = os.path.join(base, "root-" + addr)
    os.makedirs(r)
    os.chmod(r, 0o755)
    busybox = shutil.which("busybox")
    copy_with_libs(r, busybox)
    copy_with_libs(r, "/bin/bash")
    os.makedirs(os.path.join(r, "bin"), exist_ok=True)
    for a in APPLETS:
        p = os.path.join(r, "bin", a)
        if not os.path.exists(p):
            os.symlink(busybox, p)
    for d in ("tmp", "sim", "dev", "scratch", "etc/init.d", "opt/esxwatch/bin"):
        os.makedirs(os.path.join(r, d), exist_ok=True)
    os.chmod(os.path.join(r, "tmp"), 0o1777)
    devnull = os.path.join(r, "dev", "null")
    try:
        os.mknod(devnull, 0o666 | 0o020000, os.makedev(1, 3))
    except OSError:
        open(devnull, "w").close()
        os.chmod(devnull, 0o666)
    write_exec(os.path.join(r, "bin", "esxcli"), ESXCLI)
    write_exec(os.path.join(r, "etc", "init.d", "esxwatch"), INIT)
    write_exec(os.path.join(r, "opt", "esxwatch", "bin", "esxwatch"),
               AGENT_JSON if json_status else AGENT_OLD)
    with open(os.path.join(r, "sim", "state"), "w") as f:
        f.write("delivering\n")
    return r


def free_port():
    return harness.free_port(host="127.0.0.2")


class Sshd:
    def __init__(self, base, roots):
        self.base = base
        self.port = free_port()
        self.key = os.path.join(base, "id_ed25519")
        hostkey = os.path.join(base, "hostkey")
        for k in (self.key, hostkey):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k], check=True)
        shutil.copy(self.key + ".pub", os.path.join(base, "authorized_keys"))
        conf = os.path.join(base, "sshd_config")
        with open(conf, "w") as f:
            for a in HOSTS:
                f.write("ListenAddress %s:%d\n" % (a, self.port))
            f.write("HostKey %s\nPidFile %s/sshd.pid\nAuthorizedKeysFile %s/authorized_keys\n"
                    "StrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nUsePAM no\nLogLevel VERBOSE\n"
                    "Subsystem sftp internal-sftp\n" % (hostkey, base, base))
            for a in HOSTS:
                f.write("Match LocalAddress %s\n  ChrootDirectory %s\n" % (a, roots[a]))
        os.makedirs("/run/sshd", exist_ok=True)		# privilege separation dir
        self.proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", conf],
                                     stderr=open(os.path.join(base, "sshd.log"), "wb"))
        harness._STARTED.append(self.proc)
        harness.wait_for(self._listening, 10, what="sshd listening")

    def _listening(self):
        try:
            socket.create_connection((HOSTS[-1], self.port), 1).close()
            return True
        except OSError:
            return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def read(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return f.read()


def run_tool(base, sshd, hosts, *args):
    hf = os.path.join(base, "hosts-%d.txt" % time.time_ns())
    with open(hf, "w") as f:
        f.write("# simulated ESXi hosts\n\n")
        for h in hosts:
            f.write("root@%s %d\n" % (h, sshd.port))
    logs = os.path.join(base, "logs")
    cmd = ["sh", TOOL, "-i", sshd.key, "-o", "StrictHostKeyChecking=no",
           "-o", "UserKnownHostsFile=%s/known_hosts" % base, "-o", "ConnectTimeout=3",
           "-l", logs, "-w", "6"] + list(args) + [hf]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    rows = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if w and w[0] in HOSTS + [DEAD]:
            rows[w[0]] = w
    return p, rows, logs


def setup(base):
    if os.geteuid() != 0 or not os.path.exists("/usr/sbin/sshd"):
        harness.fail("needs root and openssh-server (/usr/sbin/sshd)")
    # sshd chroots only into a path whose every component is root's and not
    # group/world writable: not under /tmp (1777).  The roots go under /run,
    # in a directory removed at the end of the test.
    croot = tempfile.mkdtemp(prefix="esxwatch-fleet-test-", dir="/run")
    os.chmod(croot, 0o755)
    _CLEANUP.append(croot)
    roots = {a: make_root(croot, a, a == HOSTS[0]) for a in HOSTS}
    return roots, Sshd(base, roots)


def test_install_configure_report(tmpdir):
    roots, sshd = setup(tmpdir)
    try:
        bundle = os.path.join(tmpdir, "esxwatch-0.1.0-offline-bundle.zip")
        with open(bundle, "wb") as f:
            f.write(os.urandom(40000))
        md5 = hashlib.md5(open(bundle, "rb").read()).hexdigest()
        t0 = time.time()
        p, rows, logs = run_tool(
            tmpdir, sshd, HOSTS + [DEAD], "-j", "2", "-b", bundle, "-a", "CommunitySupported",
            "-s", "EsxwatchServerHostname=li.example.com", "-s", "EsxwatchServerPort=9543",
            "-s", "EsxwatchServerSsl=1", "-s", "EsxwatchTags=site=eu west;rack='7'")
        out = p.stdout + p.stderr
        harness.eq(p.returncode, 1, "exit status with one unreachable host (%s)" % out[-1500:])
        for a in HOSTS:
            r = roots[a]
            sim = os.path.join(r, "sim")
            harness.eq(read(os.path.join(sim, "installed"), "").strip(), md5,
                       "%s: checksum of the bundle esxcli installed" % a)
            harness.eq(read(os.path.join(sim, "installed.how"), "").strip(), "vib install",
                       "%s: installed as" % a)
            harness.eq(read(os.path.join(sim, "acceptance"), "").strip(), "CommunitySupported",
                       "%s: acceptance level" % a)
            uv = os.path.join(sim, "uservars")
            harness.eq(read(os.path.join(uv, "EsxwatchServerHostname")), "-s li.example.com\n",
                       "%s: hostname setting" % a)
            harness.eq(read(os.path.join(uv, "EsxwatchServerPort")), "-i 9543\n", "%s: port" % a)
            harness.eq(read(os.path.join(uv, "EsxwatchServerSsl")), "-i 1\n", "%s: ssl" % a)
            harness.eq(read(os.path.join(uv, "EsxwatchTags")), "-s site=eu west;rack='7'\n",
                       "%s: a value with spaces, ; and quotes arrives whole" % a)
            calls = read(os.path.join(sim, "calls.log"), "").splitlines()
            if "init restart" not in calls:
                harness.fail("%s: service not restarted: %r" % (a, calls))
            order = [c for c in calls if c.startswith(("esxcli software acceptance",
                                                       "esxcli software vib install",
                                                       "esxcli software component", "init restart",
                                                       "esxcli system settings advanced set"))]
            harness.eq(order[0], "esxcli software acceptance set --level=CommunitySupported",
                       "%s: first step" % a)
            if not order[1].startswith("esxcli software vib install -d /tmp/esxwatch-0.1.0"):
                harness.fail("%s: install step %r" % (a, order[1]))
            harness.eq(order[-1], "init restart", "%s: restart after the settings" % a)
            harness.eq(os.listdir(os.path.join(r, "tmp")), [], "%s: package removed" % a)
            if not os.path.exists(os.path.join(logs, a + ".log")):
                harness.fail("%s: no per-host log" % a)
            row = rows.get(a)
            if row is None:
                harness.fail("%s: no summary row in %r" % (a, p.stdout))
            want_src, want_ver, want_backlog = (("json", "0.1.0-json", "3") if a == HOSTS[0]
                                                else ("file", "0.1.0", "7"))
            harness.eq(row[1:], ["ok", "ok", "ok", want_ver, "yes", "delivering", want_backlog,
                                 want_src, "ok"], "%s: summary row" % a)
        json_calls = read(os.path.join(roots[HOSTS[0]], "sim", "calls.log"))
        if "agent --status --json -c /opt/esxwatch/etc/agent.yaml" not in json_calls:
            harness.fail("--status --json not asked: %r" % json_calls)
        dead = rows.get(DEAD)
        if dead is None or dead[-1] != "FAILED" or dead[1] != "copy-failed":
            harness.fail("unreachable host row: %r" % (dead,))
        if "3 of 4 hosts ok" not in p.stdout:
            harness.fail("summary line: %r" % p.stdout[-300:])
        log = read(os.path.join(logs, HOSTS[1] + ".log"))
        for want in ("+ esxcli software vib install -d", "Operation finished successfully",
                     "+ /etc/init.d/esxwatch restart", "#   dest: server"):
            if want not in log:
                harness.fail("per-host log lacks %r:\n%s" % (want, log))
        # -j 2: two lanes ran at once, so the run took less than the hosts one by one
        # would have; at least the four rows came back within the bound.
        if time.time() - t0 > 170:
            harness.fail("run took %.0f s" % (time.time() - t0))

        # Second run: settings only, no package, one host failing: no install, a
        # FAILED row that says failing.
        for a in HOSTS:
            os.unlink(os.path.join(roots[a], "sim", "calls.log"))
        with open(os.path.join(roots[HOSTS[2]], "sim", "state"), "w") as f:
            f.write("failing\n")
        p, rows, logs = run_tool(tmpdir, sshd, HOSTS, "-j", "3",
                                 "-s", "EsxwatchServerHostname=li2.example.com")
        harness.eq(p.returncode, 1, "exit status with a failing host (%s)" % p.stdout[-800:])
        for a in HOSTS:
            calls = read(os.path.join(roots[a], "sim", "calls.log"), "")
            if "esxcli software" in calls.replace("esxcli software vib get", ""):
                harness.fail("%s: installed or set acceptance without -b/-a: %r" % (a, calls))
            harness.eq(read(os.path.join(roots[a], "sim", "uservars", "EsxwatchServerHostname")),
                       "-s li2.example.com\n", "%s: new hostname" % a)
        harness.eq(rows[HOSTS[2]][1:], ["-", "ok", "ok", "0.1.0", "yes", "failing", "7", "file",
                                        "FAILED"], "failing host row")
        harness.eq(rows[HOSTS[0]][-1], "ok", "JSON host row result")

        # Third run, collector mode: every host's syslog pointed at a
        # collector, nothing installed or restarted; a host whose esxcli
        # does not keep the value is a FAILED row (read back, not assumed).
        for a in HOSTS:
            os.unlink(os.path.join(roots[a], "sim", "calls.log"))
        open(os.path.join(roots[HOSTS[1]], "sim", "loghost_ignored"), "w").close()
        uri = "ssl://collector.example.com:1514?formatter=RFC_5424&framing=octet_counting"
        p, rows, logs = run_tool(tmpdir, sshd, HOSTS + [DEAD], "-j", "2", "-L", uri)
        harness.eq(p.returncode, 1, "collector mode exit status (%s)" % p.stdout[-800:])
        for a in (HOSTS[0], HOSTS[2]):
            sim = os.path.join(roots[a], "sim")
            harness.eq(read(os.path.join(sim, "loghost"), "").strip(), uri, "%s: logHost" % a)
            harness.eq(read(os.path.join(sim, "firewall"), "").strip(), "syslog", "%s: firewall" % a)
            calls = read(os.path.join(sim, "calls.log"), "")
            if "init " in calls or "esxcli software" in calls or "advanced set" in calls:
                harness.fail("%s: collector mode touched the agent: %r" % (a, calls))
            harness.eq(rows[a][1:], ["ok", "ok", "ok"], "%s: collector mode row" % a)
        harness.eq(rows[HOSTS[1]][1:], ["mismatch", "ok", "FAILED"], "host that kept no logHost")
        harness.eq(rows[DEAD][1:], ["unreachable", "unreachable", "FAILED"], "unreachable host")
        if "2 of 4 hosts send their syslog to " + uri not in p.stdout:
            harness.fail("collector mode summary: %r" % p.stdout[-300:])
        if "+ esxcli system syslog reload" not in read(os.path.join(logs, HOSTS[0] + ".log")):
            harness.fail("per-host log lacks the syslog reload")
    finally:
        sshd.stop()
        while _CLEANUP:
            shutil.rmtree(_CLEANUP.pop(), ignore_errors=True)


def test_usage_errors(tmpdir):
    hf = os.path.join(tmpdir, "hosts")
    with open(hf, "w") as f:
        f.write("h1\n")
    for args, want in ((["-s", "Foo=1"], "only /UserVars/Esxwatch"),
                       (["-a", "Bogus"], "CommunitySupported"),
                       (["-j", "0"], "not a number"),
                       (["-C", "-b", hf], "want a .vib"),
                       (["-L", "tcp://c:514", "-s", "EsxwatchTags=a"], "installs and configures nothing"),
                       (["-L", "collector:514"], "want udp://"),
                       (["-L", "tcp://c:514;reboot"], "not a logHost value")):
        p = subprocess.run(["sh", TOOL] + args + [hf], capture_output=True, text=True, timeout=30)
        harness.eq(p.returncode, 2, "exit status of %r" % args)
        if want not in p.stderr:
            harness.fail("%r: stderr %r" % (args, p.stderr))


harness.main(globals())
