"""The ESXi init script (/etc/init.d/esxwatch from the VIB), run without ESXi.

The real VIB is built from the real binary and unpacked into a temporary root;
the init script runs there (ESXWATCH_ROOT) under busybox sh when available
(ESXi's /bin/sh is busybox ash), else sh.  /sbin/watchdog.sh, localcli,
esxcfg-advcfg and logger are stubs that record their arguments and keep the
state a host would (scheduler groups, /UserVars settings); the watchdog stub
runs the real agent the way the real one does (in its own session, stripping
the "++group=..." token as VMkernel does at exec).
"""
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import io
import time
import gzip
import socket
import threading
import json

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(harness.TOP, "packaging"))
import mkvib  # noqa: E402

RULES = os.path.join(harness.TOP, "collectors", "logwatch", "rules", "esxi.yaml")
SHELL = ["busybox", "sh"] if shutil.which("busybox") else ["sh"]

WATCHDOG_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
echo "watchdog.sh $*" >> "$root/calls.log"
piddir=$root/var/run/vmware
mkdir -p "$piddir"
mode=""
tag=""
daemon=0
while getopts "dnab:s:k:r:u:q:t:i:c:f:e:" o; do
	case $o in
	d) daemon=1 ;;
	s) mode=start; tag=$OPTARG ;;
	k) mode=kill; tag=$OPTARG ;;
	r) mode=query; tag=$OPTARG ;;
	esac
done
shift $((OPTIND - 1))
pidfile=$piddir/watchdog-$tag.PID
case $mode in
start)
	# VMkernel takes "++..." parameters off a command line at exec.
	printf '%s\n' "$*" | tr ' ' '\n' | grep '^++' >> "$root/vmkparams.log"
	cmd=$(printf '%s' "$*" | sed 's/ ++[^ ]*//g')
	# Like the real one: respawn the command (eval'd once) until killed;
	# with -d the same loop in the background, once the pid file is there.
	# The command runs under a small shell that waits for it: ESXi's init
	# reaps an orphan at once, this machine's pid 1 may take a second, and
	# a dead agent must not linger as a zombie that kill -0 still finds.
	loop='echo $$ > "$1"; trap "rm -f \"$1\"; exit 0" HUP TERM
		n=0
		while [ $n -lt 3 ]; do
			setsid sh -c "eval \"env \$0 &\"; wait \$!" "$2" &
			wait $!
			n=$((n + 1))
			sleep 1
		done
		rm -f "$1"'
	if [ $daemon = 0 ]; then
		exec sh -c "$loop" watchdog "$pidfile" "$cmd" "$root/agent.out"
	fi
	setsid sh -c "$loop" watchdog "$pidfile" "$cmd" "$root/agent.out" </dev/null >/dev/null 2>&1 &
	i=0
	while [ ! -s "$pidfile" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	;;
kill)
	# Return once the respawner is gone (a zombie counts as gone): one
	# whose trap ran late, under load, would start the agent again beside
	# the next start's, or remove that one's pid file.
	if [ -s "$pidfile" ]; then
		p=$(cat "$pidfile")
		kill -HUP "$p" 2>/dev/null
		i=0
		while [ $i -lt 50 ] && [ -r "/proc/$p/stat" ] &&
		    [ "$(sed 's/^.*) \(.\).*$/\1/' "/proc/$p/stat" 2>/dev/null)" != Z ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	rm -f "$pidfile"
	;;
query)
	if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then cat "$pidfile"; else exit 1; fi
	;;
*)
	exit 1 ;;
esac
"""

LOCALCLI_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
case $1 in
++*)	echo "localcli $1 $2 $3" >> "$root/toolgroups.log"; shift ;;
esac
echo "localcli $*" >> "$root/calls.log"
st=$root/state/groups
mkdir -p "$st"
name=""; parent=""; path=""; verb=""; grab=0
for a in "$@"; do
	if [ $grab = 1 ]; then path=$a; grab=0; continue; fi
	case $a in
	--plugin-dir=*) ;;
	--group-name=*) name=${a#*=} ;;
	--parent-path=*) parent=${a#*=} ;;
	--group-path=*) path=${a#*=} ;;
	-g) grab=1; continue ;;
	--ruleset-id=*|--enabled=true|--enabled=false) ;;
	sched|group|network|firewall|ruleset) ;;
	add|list|delete|setmemconfig|refresh|set) [ -z "$verb" ] && verb=$a ;;
	esac
done
key=$(echo "$path" | tr / _)
case "$verb" in
list) [ -f "$st/$key" ] ;;
add) [ -n "$name" ] && [ -n "$parent" ] || exit 1
	[ -f "$st/refuse-$name" ] && { echo "Error: cannot create $name" >&2; exit 1; }
	k=$(echo "$parent/$name" | tr / _); [ -f "$st/$k" ] && exit 1; touch "$st/$k" ;;
setmemconfig) [ -f "$st/$key" ] || { echo "no such group" >&2; exit 1; } ;;
delete) [ -f "$st/$key" ] || exit 1; rm -f "$st/$key" ;;
refresh|set) exit 0 ;;
*) echo "Error: Unknown command or namespace $*" >&2; exit 1 ;;
esac
"""

ADVCFG_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
echo "esxcfg-advcfg $*" >> "$root/calls.log"
uv=$root/state/uservars
mkdir -p "$uv"
[ "$1" = -q ] && shift
case "$1" in
-g)	n=${2#/UserVars/}
	[ -f "$uv/$n" ] || { echo "Error: option $2 not found" >&2; exit 1; }
	cat "$uv/$n"; echo ;;
-s)	n=${3#/UserVars/}
	[ -f "$uv/$n" ] || exit 1
	printf '%s' "$2" > "$uv/$n" ;;
-A)	n=$2; shift 2; def=""; have=0; desc=""; typ=string
	while [ $# -gt 0 ]; do
		case $1 in -F) def=$2; have=1 ;; -E) desc=$2 ;; -T) typ=$2 ;; esac
		shift 2
	done
	[ $have = 1 ] || exit 1
	[ -f "$uv/$n" ] && { echo "Error: option exists" >&2; exit 1; }
	[ -f "$uv/.refuse-$n" ] && { echo "Error: cannot add $n" >&2; exit 1; }
	printf '%s' "$def" > "$uv/$n"
	mkdir -p "$uv/.meta"
	printf '%s' "$def" > "$uv/.meta/$n.default"
	printf '%s' "$desc" > "$uv/.meta/$n.desc"
	printf '%s' "$typ" > "$uv/.meta/$n.type" ;;
-L)	[ -f "$uv/$2" ] || exit 1; rm -f "$uv/$2" "$uv/.meta/$2".* ;;
# Every option, "/PATH [Type] : description", one of the host's own first.
-l)	echo "/Misc/HostName [String] : Host name"
	for f in "$uv"/*; do
		[ -f "$f" ] || continue
		n=${f##*/}
		t=String
		[ "$(cat "$uv/.meta/$n.type" 2>/dev/null)" = int ] && t=Integer
		echo "/UserVars/$n [$t] : $(cat "$uv/.meta/$n.desc" 2>/dev/null)"
	done ;;
*)	exit 1 ;;
esac
"""

# Like busybox logger: -t TAG -p PRIO, then the message, or (none given)
# one message per line of stdin.
LOGGER_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
tag=""; pri=user.notice
while getopts "t:p:" o; do
	case $o in t) tag=$OPTARG ;; p) pri=$OPTARG ;; esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	echo "logger -t $tag -p $pri $*" >> "$root/logger.log"
else
	while IFS= read -r l; do echo "logger -t $tag -p $pri $l" >> "$root/logger.log"; done
fi
"""

# Records its calls; "system settings advanced set|list -o /UserVars/..."
# act on the settings esxcfg-advcfg keeps (as hostd shows them).  A first
# argument "++group=..." (what VMkernel would take off) is recorded apart.
ESXCLI_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
case $1 in
++*)	echo "esxcli $1" >> "$root/toolgroups.log"; shift ;;
esac
echo "esxcli $*" >> "$root/calls.log"
uv=$root/state/uservars
[ "$1 $2 $3" = "system settings advanced" ] || exit 0
verb=$4; shift 4; opt=""; val=""; have=0; dflt=0
while [ $# -gt 0 ]; do
	case $1 in
	-o) opt=$2; shift ;;
	-s|-i) val=$2; have=1; shift ;;
	-d) dflt=1 ;;
	esac
	shift
done
n=${opt#/UserVars/}
[ -f "$uv/$n" ] || { echo "Error: Unable to find option $n" >&2; exit 1; }
case $verb in
set)	if [ $have = 1 ]; then printf '%s' "$val" > "$uv/$n"
	elif [ $dflt = 1 ]; then cp "$uv/.meta/$n.default" "$uv/$n"
	else exit 1; fi ;;
list)	echo "   Path: $opt"
	if [ "$(cat "$uv/.meta/$n.type")" = int ]; then
		echo "   Type: integer"; echo "   Int Value: $(cat "$uv/$n")"
	else
		echo "   Type: string"; echo "   String Value: $(cat "$uv/$n")"
	fi
	echo "   Description: $(cat "$uv/.meta/$n.desc")" ;;
*)	exit 1 ;;
esac
"""

VIMCMD_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
echo "vim-cmd $*" >> "$root/calls.log"
"""

# ESXi's busybox has usleep (its /sbin/watchdog.sh polls with it).
USLEEP_STUB = r"""#!/bin/sh
exec sleep "$(awk -v u="$1" 'BEGIN { printf "%.6f", u / 1000000 }')"
"""

HOSTD_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "$1" = status ] && [ -f "$root/state/hostd-running" ]
"""

# Not every ESXi busybox has cmp: the script must not need it.
CMP_STUB = r"""#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
echo "cmp $*" >> "$root/calls.log"
exit 2
"""


def parse_ar(data):
	off, out = 8, {}
	while off < len(data):
		h = data[off:off + 60]
		size = int(h[48:58])
		out[h[:16].decode().strip()] = data[off + 60:off + 60 + size]
		off += 60 + size + (size & 1)
	return out


class Host:
	"""A temporary root with the VIB's payload and the stub tools."""

	def __init__(self, d):
		self.root = os.path.join(d, "root")
		os.makedirs(self.root)
		vib, _ = mkvib.build_vib(mkvib.payload_files(harness.BIN, RULES), "0.1.0-1", 1735689600)
		payload = gzip.decompress(parse_ar(vib)[mkvib.PAYLOAD])
		with tarfile.open(fileobj=io.BytesIO(payload)) as t:
			t.extractall(self.root)
		for sub in ("bin", "sbin", "var/log", "scratch"):
			os.makedirs(os.path.join(self.root, sub), exist_ok=True)
		for rel, text in (("sbin/watchdog.sh", WATCHDOG_STUB), ("bin/localcli", LOCALCLI_STUB),
				  ("bin/esxcfg-advcfg", ADVCFG_STUB), ("bin/logger", LOGGER_STUB),
				  ("bin/esxcli", ESXCLI_STUB), ("bin/vim-cmd", VIMCMD_STUB), ("bin/usleep", USLEEP_STUB),
				  ("bin/cmp", CMP_STUB), ("etc/init.d/hostd", HOSTD_STUB)):
			p = os.path.join(self.root, rel)
			with open(p, "w") as f:
				f.write(text)
			os.chmod(p, 0o755)
		os.makedirs(os.path.join(self.root, "state"), exist_ok=True)
		open(os.path.join(self.root, "state/hostd-running"), "w").close()
		self.bin = os.path.join(self.root, "opt/esxwatch/bin/esxwatch")
		self.conf = os.path.join(self.root, "scratch/esxwatch/agent.yaml")

	def init(self, *args, timeout=60, env=None):
		env = dict(os.environ, ESXWATCH_ROOT=self.root, **(env or {}))
		p = subprocess.run(SHELL + [os.path.join(self.root, "etc/init.d/esxwatch")] + list(args),
				   capture_output=True, text=True, timeout=timeout, env=env,
				   stdin=subprocess.DEVNULL)
		return p.returncode, p.stdout + p.stderr

	def lines(self, name):
		p = os.path.join(self.root, name)
		if not os.path.exists(p):
			return []
		with open(p) as f:
			return [l.rstrip("\n") for l in f]

	def calls(self, prefix=""):
		return [c for c in self.lines("calls.log") if c.startswith(prefix)]

	def clear_calls(self):
		for n in ("calls.log", "logger.log"):
			p = os.path.join(self.root, n)
			if os.path.exists(p):
				os.unlink(p)

	def agent_pids(self):
		"""Processes running this root's binary, found through /proc."""
		pids = []
		for e in os.listdir("/proc"):
			if not e.isdigit():
				continue
			try:
				if os.readlink("/proc/%s/exe" % e) == self.bin:
					pids.append(int(e))
			except OSError:
				pass
		return pids

	def cmdline(self, pid):
		with open("/proc/%d/cmdline" % pid, "rb") as f:
			return f.read().split(b"\0")[:-1]

	def uservar(self, name, value=None):
		p = os.path.join(self.root, "state/uservars", name)
		if value is None:
			if not os.path.exists(p):
				return None
			with open(p) as f:
				return f.read()
		with open(p, "w") as f:
			f.write(value)

	def leftovers(self):
		"""Every process whose command line names this root (watchdog stubs,
		agents): only this test started them."""
		found = []
		for e in os.listdir("/proc"):
			if e.isdigit() and int(e) != os.getpid():
				try:
					with open("/proc/%s/cmdline" % e, "rb") as f:
						if self.root.encode() + b"/" in f.read():
							found.append(int(e))
				except OSError:
					pass
		return found

	def cleanup(self):
		self.init("stop")
		for _ in range(3):	# watchdog loops first, then what they respawned
			pids = self.leftovers()
			if not pids:
				break
			for pid in pids:
				try:
					os.kill(pid, signal.SIGKILL)
				except OSError:
					pass
			time.sleep(0.2)


def with_host(fn):
	def run(tmpdir):
		h = Host(tmpdir)
		try:
			fn(h)
		finally:
			h.cleanup()
	run.__name__ = fn.__name__
	return run


def read(p):
	with open(p) as f:
		return f.read()


def tcp_sink():
	"""A TCP listener that accepts and discards (a syslog server that is up,
	so the agent's stop does not wait out its 5 s flush)."""
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	s.listen(8)

	def serve():
		while True:
			try:
				c, _ = s.accept()
			except OSError:
				return
			threading.Thread(target=lambda: [None for _ in iter(lambda: c.recv(65536), b"")],
					 daemon=True).start()
	threading.Thread(target=serve, daemon=True).start()
	return s, s.getsockname()[1]


def effective(h, conf=None):
	"""server: keys of `esxwatch --print-config` for the config in use."""
	p = subprocess.run([h.bin, "--print-config", "-c", conf or h.conf], capture_output=True,
			   text=True, timeout=30)
	harness.eq(p.returncode, 0, "--print-config exit status (stderr %s)" % p.stderr.strip())
	out, inserver = {}, False
	for line in p.stdout.splitlines():
		if not line.startswith(" "):
			inserver = line.startswith("server:")
			continue
		if inserver and line.startswith("  ") and not line.startswith("   ") and ":" in line:
			k, v = line.strip().split(":", 1)
			out[k] = v.split("#")[0].strip().strip('"')
	return out


@with_host
def test_header_and_shell(h):
	text = read(os.path.join(h.root, "etc/init.d/esxwatch"))
	if not text.startswith("#!/bin/sh\n") or "\n# chkconfig: on 99 99\n" not in text:
		harness.fail("init script lacks #!/bin/sh or '# chkconfig: on 99 99'")
	rc, out = h.init("frobnicate")
	harness.eq(rc, 2, "exit status of an unknown action")
	# Syntax check with the shell ESXi uses (busybox ash) when we have it.
	p = subprocess.run(SHELL + ["-n", os.path.join(h.root, "etc/init.d/esxwatch")], capture_output=True)
	harness.eq(p.returncode, 0, "%s -n" % " ".join(SHELL))
	# POSIX sh only (busybox ash has no bash extensions), when shellcheck
	# is there to tell.
	if shutil.which("shellcheck"):
		p = subprocess.run(["shellcheck", "-s", "sh", "-S", "warning",
				    os.path.join(h.root, "etc/init.d/esxwatch")], capture_output=True, text=True)
		harness.eq(p.returncode, 0, "shellcheck -s sh (%s)" % p.stdout.strip())


@with_host
def test_install_start_status_stop_remove(h):
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install exit status (output: %s)" % out.strip())
	# The firewall ruleset from the VIB is loaded without a reboot, and
	# enabled (ESXi remembers a ruleset disabled by an earlier removal).
	calls = h.calls("localcli network firewall")
	harness.eq(calls, ["localcli network firewall refresh",
			   "localcli network firewall ruleset set --ruleset-id=esxwatch --enabled=true"],
		   "firewall calls on install")
	# hostd reads the new service XML (Host Client > Manage > Services).
	harness.eq(h.calls("vim-cmd"), ["vim-cmd hostsvc/refresh_services"], "hostd service refresh")
	# Advanced settings created, with their defaults.
	harness.eq(h.uservar("EsxwatchServerHostname"), "", "EsxwatchServerHostname default")
	harness.eq(h.uservar("EsxwatchServerProto"), "cfapi", "EsxwatchServerProto default")
	harness.eq(h.uservar("EsxwatchServerPort"), "0", "EsxwatchServerPort default")
	harness.eq(h.uservar("EsxwatchServerSsl"), "1", "EsxwatchServerSsl default")
	adds = h.calls("esxcfg-advcfg -A ")
	if not any("-T int" in c and "EsxwatchServerPort" in c and "-N 0 -M 65535" in c for c in adds):
		harness.fail("EsxwatchServerPort not created as an int 0..65535: %s" % adds)
	# hostd is told about each new setting (else the Host Client lists it
	# only after a hostd restart): a reset to its default, right after -A.
	calls = h.calls()
	for v in ("EsxwatchServerHostname", "EsxwatchServerProto", "EsxwatchServerPort", "EsxwatchServerSsl"):
		add = [i for i, c in enumerate(calls) if c.startswith("esxcfg-advcfg -A %s " % v)]
		ref = [i for i, c in enumerate(calls)
		       if c == "esxcli system settings advanced set -o /UserVars/%s -d" % v]
		if not (add and ref and add[0] < ref[0]):
			harness.fail("/UserVars/%s: want esxcfg-advcfg -A, then esxcli ... set -d: %s" % (v, calls))
	# Memory-capped scheduler group, created before the agent starts.
	calls = h.calls()
	grp = [i for i, c in enumerate(calls) if "sched group add --group-name=esxwatch --parent-path=host/vim/vimuser" in c]
	mem = [i for i, c in enumerate(calls) if "sched group setmemconfig -g host/vim/vimuser/esxwatch" in c
	       and "--min=0 --max=64 --minlimit=-1 -u mb" in c]
	wd = [i for i, c in enumerate(calls) if c.startswith("watchdog.sh -s esxwatch ")]
	if not (grp and mem and wd and grp[0] < mem[0] < wd[0]):
		harness.fail("want sched group add, setmemconfig, then watchdog.sh -s esxwatch: %s" % calls)
	if not all(c.startswith("localcli --plugin-dir=/usr/lib/vmware/esxcli/int sched group")
		   for c in calls if "sched group" in c):
		harness.fail("sched group calls must use localcli --plugin-dir=/usr/lib/vmware/esxcli/int")
	harness.eq(h.lines("vmkparams.log"), ["++group=host/vim/vimuser/esxwatch"], "VMkernel parameters")
	# VMkernel takes "++..." only as the first argument of the program it
	# execs: right after the agent's path.
	wdcall = [c for c in calls if c.startswith("watchdog.sh -s esxwatch ")][0]
	if "exec %s ++group=host/vim/vimuser/esxwatch -c " % h.bin not in wdcall:
		harness.fail("++group= is not the agent's first argument: %s" % wdcall)
	# The scratch config was created from the VIB's default (paths under the root).
	default = read(os.path.join(h.root, "opt/esxwatch/etc/agent.yaml"))
	harness.eq(read(h.conf), default.replace("directory: /", "directory: %s/" % h.root)
		   .replace("file: /", "file: %s/" % h.root), "scratch config")
	# The real agent runs, in the foreground of the watchdog, with that config.
	pids = h.agent_pids()
	harness.eq(len(pids), 1, "agent processes")
	argv = h.cmdline(pids[0])
	harness.eq(argv[1:], [b"-c", h.conf.encode()], "agent arguments")
	harness.eq(read(os.path.join(h.root, "var/run/esxwatch.pid")).strip(), str(pids[0]), "pid file")
	rc, out = h.init("status")
	harness.eq(rc, 0, "status exit status while running")
	if "is running" not in out or str(pids[0]) not in out:
		harness.fail("status output: %r" % out)
	if not any("-t esxwatch" in l and "started" in l for l in h.lines("logger.log")):
		harness.fail("start not logged via logger: %s" % h.lines("logger.log"))
	# A second start is a no-op that still succeeds.
	h.clear_calls()
	rc, _ = h.init("start")
	harness.eq(rc, 0, "start while running")
	harness.eq(h.agent_pids(), pids, "agent pids after a second start")
	harness.eq(h.calls("esxcfg-advcfg -A") + h.calls("esxcli"), [], "settings created or reset again")

	h.clear_calls()
	rc, out = h.init("stop", "remove")
	harness.eq(rc, 0, "stop remove exit status")
	harness.wait_for(lambda: not h.agent_pids(), 5, what="agent to exit")
	calls = h.calls()
	if "watchdog.sh -k esxwatch" not in calls:
		harness.fail("watchdog not stopped: %s" % calls)
	if not any("sched group delete --group-path=host/vim/vimuser/esxwatch" in c for c in calls):
		harness.fail("scheduler group not deleted: %s" % calls)
	for v in ("EsxwatchServerHostname", "EsxwatchServerProto", "EsxwatchServerPort", "EsxwatchServerSsl"):
		harness.eq(h.uservar(v), None, "/UserVars/%s after remove" % v)
	# The removed VIB's ports are closed now, not at the next reboot.
	harness.eq(h.calls("localcli network firewall"),
		   ["localcli network firewall ruleset set --ruleset-id=esxwatch --enabled=false"],
		   "firewall calls on remove")
	rc, out = h.init("status")
	harness.eq(rc, 3, "status exit status when stopped")
	if "not running" not in out:
		harness.fail("status output: %r" % out)
	# The agent's data on /scratch stays (a reinstall resumes).
	if not os.path.exists(h.conf):
		harness.fail("remove deleted the scratch config")


def tools_conf(h):
	"""The VIB's default, paths under the root, as ESXi (host.platform)
	with this root's stub tools (host.tools_dir)."""
	os.makedirs(os.path.dirname(h.conf), exist_ok=True)
	text = read(os.path.join(h.root, "opt/esxwatch/etc/agent.yaml"))
	text = text.replace("directory: /", "directory: %s/" % h.root).replace("file: /", "file: %s/" % h.root)
	with open(h.conf, "w") as f:
		f.write(text + "host:\n  platform: esxi\n  tools_dir: %s/bin\n" % h.root)


def environ(pid):
	with open("/proc/%d/environ" % pid, "rb") as f:
		return [e.decode() for e in f.read().split(b"\0") if e]


@with_host
def test_tools_run_outside_the_agents_group(h):
	# localcli and esxcli are Python on ESXi (tens of MB each): as the
	# agent's children they would run in its 64 MB group.  The script makes
	# a second group for them, and the agent starts each tool with
	# "++group=<that group>" first (VMkernel takes it off and starts the
	# tool there; the stubs record it).
	tools_conf(h)
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install (output %s)" % out.strip())
	calls = h.calls()
	add = [i for i, c in enumerate(calls)
	       if "sched group add --group-name=esxwatch-tools --parent-path=host/vim/vimuser" in c]
	mem = [i for i, c in enumerate(calls) if "sched group setmemconfig -g host/vim/vimuser/esxwatch-tools "
	       "--min=0 --max=300 --minlimit=-1 -u mb" in c]
	wd = [i for i, c in enumerate(calls) if c.startswith("watchdog.sh -s esxwatch ")]
	if not (add and mem and wd and add[0] < mem[0] < wd[0]):
		harness.fail("want the tools' group added and capped before the watchdog starts: %s" % calls)
	wdcall = calls[wd[0]]
	if "ESXWATCH_TOOLS_GROUP=host/vim/vimuser/esxwatch-tools; export ESXWATCH_TOOLS_GROUP; exec %s " \
	   "++group=host/vim/vimuser/esxwatch -c " % h.bin not in wdcall:
		harness.fail("the agent is not told the tools' group: %s" % wdcall)
	# The agent itself stays in its own capped group.
	harness.eq(h.lines("vmkparams.log"), ["++group=host/vim/vimuser/esxwatch"], "the agent's VMkernel parameters")
	pids = h.agent_pids()
	harness.eq(len(pids), 1, "agents")
	if "ESXWATCH_TOOLS_GROUP=host/vim/vimuser/esxwatch-tools" not in environ(pids[0]):
		harness.fail("the agent's environment lacks ESXWATCH_TOOLS_GROUP")
	# Every tool the agent ran was started in the tools' group.
	runs = harness.wait_for(lambda: h.lines("toolgroups.log"), 30, what="the agent to run a tool")
	for r in runs:
		if r.split()[1] != "++group=host/vim/vimuser/esxwatch-tools":
			harness.fail("a tool started outside the tools' group: %r (all: %s)" % (r, runs))
	# Stopped: both groups go.
	h.clear_calls()
	rc, _ = h.init("stop")
	harness.eq(rc, 0, "stop")
	for g in ("host/vim/vimuser/esxwatch", "host/vim/vimuser/esxwatch-tools"):
		if not any(c.endswith("sched group delete --group-path=%s" % g) for c in h.calls()):
			harness.fail("group %s not deleted: %s" % (g, h.calls()))
	harness.wait_for(lambda: not h.agent_pids(), 10, what="agent to exit")
	# Where the tools' group cannot be made: said so, the agent runs, its
	# tools without a group parameter (in the agent's group).
	open(os.path.join(h.root, "state/groups/refuse-esxwatch-tools"), "w").close()
	os.unlink(os.path.join(h.root, "toolgroups.log"))
	h.clear_calls()
	rc, out = h.init("start")
	harness.eq(rc, 0, "start without the tools' group (output %s)" % out.strip())
	if not logged(h, "-p daemon.warning", "host/vim/vimuser/esxwatch-tools unavailable"):
		harness.fail("missing tools' group not logged: %s" % h.lines("logger.log"))
	if "ESXWATCH_TOOLS_GROUP" in h.calls("watchdog.sh -s")[0]:
		harness.fail("tools' group named though not created: %s" % h.calls("watchdog.sh -s"))
	harness.wait_for(lambda: [c for c in h.calls() if c.startswith(("localcli network", "localcli storage",
									  "localcli vsan", "esxcli "))
				  and "firewall" not in c and "system settings" not in c], 30,
			 what="the agent to run a tool")
	harness.eq(h.lines("toolgroups.log"), [], "tools started with a group parameter")


def esxcli(h, *args):
	p = subprocess.run([os.path.join(h.root, "bin/esxcli")] + list(args), capture_output=True, text=True,
			   timeout=30)
	return p.stdout


def advanced(h, name):
	"""Value and description of /UserVars/name as esxcli (hostd) lists them."""
	out = {}
	for line in esxcli(h, "system", "settings", "advanced", "list", "-o", "/UserVars/" + name).splitlines():
		k, _, v = line.strip().partition(": ")
		out[k.rstrip(":")] = v
	return out.get("String Value", out.get("Int Value")), out.get("Description")


def put_vib(h, files, version):
	"""Build a VIB of files and lay its payload over the root, as the
	installer does before it runs the new init script."""
	vib, _ = mkvib.build_vib(files, version, 1735689600)
	payload = gzip.decompress(parse_ar(vib)[mkvib.PAYLOAD])
	with tarfile.open(fileobj=io.BytesIO(payload)) as t:
		t.extractall(h.root)


@with_host
def test_upgrade_updates_descriptions_keeps_values(h):
	# An older VIB whose init script had other descriptions for three
	# settings.  The upgrade to this one must show this one's text and
	# keep the values.
	script = os.path.join(h.root, "etc/init.d/esxwatch")
	files = mkvib.payload_files(harness.BIN, RULES)
	mode, data = files["etc/init.d/esxwatch"]
	new = data.decode()
	changed = {"EsxwatchServerProto": "esxwatch: protocol cfapi, syslog, http, file, otlp, loki or gelf (used when "
				  "EsxwatchServerHostname is set)",
		   "EsxwatchServerPort": "esxwatch: server port, 0 = protocol default (used when "
				 "EsxwatchServerHostname is set)",
		   "EsxwatchServerSsl": "esxwatch: 1 = TLS, 0 = plain (used when EsxwatchServerHostname is set)"}
	old = new
	for name, text in changed.items():
		if '"%s"' % text not in new:
			harness.fail("description of %s not found in the script" % name)
		old = old.replace('"%s"' % text, '"esxwatch: %s, old text"' % name)
	old_files = dict(files)
	old_files["etc/init.d/esxwatch"] = (mode, old.encode())
	put_vib(h, old_files, "0.0.9-1")
	harness.eq(read(script), old, "the old VIB's init script")
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "old VIB: start install (output %s)" % out.strip())
	harness.eq(advanced(h, "EsxwatchServerProto"), ("cfapi", "esxwatch: EsxwatchServerProto, old text"),
		   "old VIB's setting")
	# The admin's values.
	h.uservar("EsxwatchServerProto", "syslog")
	h.uservar("EsxwatchServerPort", "1514")
	h.uservar("EsxwatchTags", "site=lab1")
	tags_desc = advanced(h, "EsxwatchTags")[1]
	# The installer stops the old VIB's agent, puts the new files in place
	# and starts the new script.
	rc, _ = h.init("stop", "upgrade")
	harness.eq(rc, 0, "stop upgrade")
	put_vib(h, files, "0.1.0-1")
	harness.eq(read(script), new, "the new VIB's init script")
	h.clear_calls()
	rc, out = h.init("start", "upgrade")
	harness.eq(rc, 0, "new VIB: start upgrade (output %s)" % out.strip())
	for name, value in (("EsxwatchServerProto", "syslog"), ("EsxwatchServerPort", "1514"),
			    ("EsxwatchServerSsl", "1")):
		harness.eq(advanced(h, name), (value, changed[name]), "%s after the upgrade" % name)
	harness.eq(advanced(h, "EsxwatchTags"), ("site=lab1", tags_desc), "an unchanged setting")
	calls = h.calls()
	# Deleted, created with the new text, the value set back (locally,
	# then through hostd so that the Host Client shows the new text).
	for name, value, via in (("EsxwatchServerProto", "syslog", "-s syslog"), ("EsxwatchServerPort", "1514", "-i 1514"),
				 ("EsxwatchServerSsl", None, "-d")):
		seq = ["esxcfg-advcfg -L %s" % name, "esxcfg-advcfg -A %s " % name]
		if value is not None:
			seq.append("esxcfg-advcfg -q -s %s /UserVars/%s" % (value, name))
		seq.append("esxcli system settings advanced set -o /UserVars/%s %s" % (name, via))
		at = [next((i for i, c in enumerate(calls) if c.startswith(want)), -1) for want in seq]
		if -1 in at or at != sorted(at):
			harness.fail("%s: want %s in that order: %s" % (name, seq, calls))
		if value is None and any(c.startswith("esxcfg-advcfg -q -s") and name in c for c in calls):
			harness.fail("%s: a default value set back: %s" % (name, calls))
	if any(c.startswith("esxcfg-advcfg -L") and "EsxwatchTags" in c for c in calls):
		harness.fail("an unchanged setting was re-created: %s" % calls)
	harness.eq(len(logged(h, "-p daemon.info", "description updated, value kept")), 3, "updates logged")
	harness.eq(len(h.agent_pids()), 1, "agents after the upgrade")
	# Done once: the next start changes nothing.
	h.clear_calls()
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart after the upgrade")
	harness.eq(h.calls("esxcfg-advcfg -L") + h.calls("esxcfg-advcfg -A"), [], "settings re-created again")
	# A re-creation the host refuses after the delete: the lost value is
	# in the log, at error level, for the admin to set again.
	with open(script, "w") as f:
		f.write(old)
	open(os.path.join(h.root, "state/uservars/.refuse-EsxwatchServerProto"), "w").close()
	h.clear_calls()
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart with a refused re-creation")
	if not logged(h, "-p daemon.err", "/UserVars/EsxwatchServerProto", "its value was 'syslog'"):
		harness.fail("lost value not logged: %s" % h.lines("logger.log"))


@with_host
def test_uservars_mapped_into_config(h):
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install (output %s)" % out.strip())
	harness.eq(effective(h)["hostname"], "", "hostname before configuration")
	# The admin sets the server through advanced settings, then restarts.
	h.uservar("EsxwatchServerHostname", "127.0.0.1")
	h.uservar("EsxwatchServerProto", "syslog")
	sink, port = tcp_sink()
	h.uservar("EsxwatchServerPort", str(port))
	h.uservar("EsxwatchServerSsl", "0")
	old = h.agent_pids()
	rc, out = h.init("restart")
	harness.eq(rc, 0, "restart exit status (output %s)" % out.strip())
	new = h.agent_pids()
	if len(new) != 1 or new == old:
		harness.fail("restart did not start a new agent: %s -> %s" % (old, new))
	eff = effective(h)
	harness.eq((eff["hostname"], eff["proto"], eff["port"], eff["ssl"]),
		   ("127.0.0.1", "syslog", str(port), "no"), "server keys from /UserVars")
	if not any("updated server settings" in l for l in h.lines("logger.log")):
		harness.fail("changed settings not logged: %s" % h.lines("logger.log"))
	# Unchanged settings: the file is left alone (and no cmp is needed).
	h.clear_calls()
	before = os.stat(h.conf)
	rc, out = h.init("restart")
	harness.eq(rc, 0, "restart exit status (output %s)" % out.strip())
	if any("updated server settings" in l for l in h.lines("logger.log")):
		harness.fail("unchanged settings rewrote the config: %s" % h.lines("logger.log"))
	harness.eq(os.stat(h.conf).st_ino, before.st_ino, "config file replaced")
	harness.eq(h.calls("cmp"), [], "cmp calls")
	# Other keys are untouched.
	if "storage:\n  directory: %s/scratch/esxwatch" % h.root not in read(h.conf):
		harness.fail("storage block changed:\n" + read(h.conf))
	# A hand edit elsewhere survives a restart; clearing the hostname returns
	# the keys set from /UserVars to their defaults.
	with open(h.conf, "a") as f:
		f.write("tags:\n  site: lab1\n")
	h.uservar("EsxwatchServerHostname", "")
	rc, out = h.init("restart")
	harness.eq(rc, 0, "restart exit status")
	eff = effective(h)
	harness.eq((eff["hostname"], eff["proto"], eff["port"], eff["ssl"]), ("", "cfapi", "0", "yes"),
		   "server keys after clearing the hostname")
	if "tags:\n  site: lab1\n" not in read(h.conf):
		harness.fail("hand edit lost")
	# With the hostname empty, a hand-edited server block is left alone.
	text = read(h.conf).replace('  hostname: ""', '  hostname: "localhost"').replace(
		"  proto: cfapi", "  proto: syslog").replace("  port: 0", "  port: %d" % port).replace(
		"  ssl: yes", "  ssl: no")
	with open(h.conf, "w") as f:
		f.write(text)
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart exit status")
	eff = effective(h)
	harness.eq((eff["hostname"], eff["proto"], eff["port"]), ("localhost", "syslog", str(port)),
		   "hand-edited server block")
	# A value that is not a host name is refused, and logged.
	h.uservar("EsxwatchServerHostname", "a b;rm -rf /")
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart exit status")
	harness.eq(effective(h)["hostname"], "localhost", "hostname after a bad UserVar")
	if not any("not a host name" in l for l in h.lines("logger.log")):
		harness.fail("bad hostname not logged")


@with_host
def test_uservars_round_three_protocols(h):
	"""otlp, loki and gelf need only a host name and a port: the settings
	write them and the agent starts with them (the init script checks the
	configuration before it restarts).  splunk_hec and elasticsearch need a
	URL and credentials: refused with a line that says where to set them."""
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install (output %s)" % out.strip())
	h.uservar("EsxwatchServerHostname", "127.0.0.1")
	h.uservar("EsxwatchServerSsl", "0")
	for proto in ("loki", "gelf"):	# (otlp is written as loki is)
		h.uservar("EsxwatchServerProto", proto)
		rc, out = h.init("restart")
		harness.eq(rc, 0, "%s: restart (output %s)" % (proto, out.strip()))
		eff = effective(h)
		harness.eq((eff["hostname"], eff["proto"], eff["ssl"]), ("127.0.0.1", proto, "no"),
			   "server keys for %s" % proto)
		harness.eq(len(h.agent_pids()), 1, "%s: the agent runs" % proto)
	for proto in ("splunk_hec",):	# (elasticsearch takes the same branch)
		h.clear_calls()
		h.uservar("EsxwatchServerProto", proto)
		rc, out = h.init("restart")
		harness.eq(rc, 0, "%s: restart (output %s)" % (proto, out.strip()))
		harness.eq(effective(h)["proto"], "cfapi", "%s: the proto used" % proto)
		if not logged(h, "-p daemon.warning", "'%s' needs a url and credentials" % proto):
			harness.fail("%s: no line saying where to set it: %s" % (proto, h.lines("logger.log")))


@with_host
def test_start_fails_unless_agent_runs(h):
	# An invalid configuration: start must fail (a live install then asks
	# for a reboot instead of reporting success with nothing running).
	os.makedirs(os.path.dirname(h.conf))
	with open(h.conf, "w") as f:
		f.write("server:\n  hostnme: x\n")
	rc, out = h.init("start")
	harness.eq(rc, 1, "start with a broken config (output %s)" % out.strip())
	harness.eq(h.agent_pids(), [], "agent processes")
	if not any("invalid configuration" in l and "hostnme" in l for l in h.lines("logger.log")):
		harness.fail("config error not logged: %s" % h.lines("logger.log"))
	rc, _ = h.init("status")
	harness.eq(rc, 3, "status after a failed start")
	# An agent that dies right after starting: start fails too, and the
	# watchdog is not left behind.
	os.unlink(h.conf)
	with open(h.bin, "rb") as f:
		real = f.read()
	os.unlink(h.bin)
	with open(h.bin, "w") as f:
		f.write("#!/bin/sh\nfor a; do [ \"$a\" = --check-config ] && exit 0; done\nexit 1\n")
	os.chmod(h.bin, 0o755)
	t0 = time.monotonic()
	rc, out = h.init("start")
	harness.eq(rc, 1, "start with an agent that exits at once (output %s)" % out.strip())
	# Noticed when its pid shows up dead, not after the full 10 s wait.
	if time.monotonic() - t0 > 6:
		harness.fail("failing start took %.1f s" % (time.monotonic() - t0))
	if not h.calls("watchdog.sh -k esxwatch"):
		harness.fail("watchdog not stopped after a failed start")
	# Missing binary.
	os.unlink(h.bin)
	rc, _ = h.init("start")
	harness.eq(rc, 1, "start without the binary")
	with open(h.bin, "wb") as f:
		f.write(real)
	os.chmod(h.bin, 0o755)


@with_host
def test_leftover_watchdog_replaced(h):
	# A watchdog waiting out a crash loop (sleeping, no agent): start must
	# stop it rather than run a second watchdog next to it.
	piddir = os.path.join(h.root, "var/run/vmware")
	os.makedirs(piddir)
	old = subprocess.Popen(["sh", "-c", 'echo $$ > "$1"; exec sleep 120', "old",
				os.path.join(piddir, "watchdog-esxwatch.PID")])
	try:
		harness.wait_for(lambda: os.path.exists(os.path.join(piddir, "watchdog-esxwatch.PID")), 5,
				 what="old watchdog")
		rc, out = h.init("start")
		harness.eq(rc, 0, "start next to a leftover watchdog (%s)" % out)
		try:
			old.wait(5)
		except subprocess.TimeoutExpired:
			harness.fail("leftover watchdog still running")
		harness.eq(len(h.agent_pids()), 1, "agents")
		if "watchdog.sh -k esxwatch" not in h.calls():
			harness.fail("leftover watchdog not stopped with -k: %s" % h.calls())
	finally:
		if old.poll() is None:
			old.kill()
			old.wait()


@with_host
def test_single_word_forms(h):
	rc, out = h.init("install")
	harness.eq(rc, 0, "install (output %s)" % out.strip())
	harness.eq(len(h.agent_pids()), 1, "agents after install")
	h.clear_calls()
	# Upgrade: the installer stops the old VIB's agent, then starts the new.
	rc, _ = h.init("stop", "upgrade")
	harness.eq(rc, 0, "stop upgrade")
	harness.wait_for(lambda: not h.agent_pids(), 5, what="agent to exit")
	harness.eq(h.uservar("EsxwatchServerProto"), "cfapi", "settings kept across an upgrade")
	rc, _ = h.init("upgrade")
	harness.eq(rc, 0, "upgrade")
	harness.eq(len(h.agent_pids()), 1, "agents after upgrade")
	if "localcli network firewall refresh" not in h.calls():
		harness.fail("no firewall refresh on upgrade")
	# An upgrade whose old agent was not stopped first: the agent is
	# restarted so that the new VIB's binary runs.
	old = h.agent_pids()
	rc, out = h.init("start", "upgrade")
	harness.eq(rc, 0, "start upgrade while running (output %s)" % out.strip())
	new = h.agent_pids()
	if len(new) != 1 or new == old:
		harness.fail("start upgrade did not restart the agent: %s -> %s" % (old, new))
	harness.eq(h.uservar("EsxwatchServerProto"), "cfapi", "settings kept across a restarting upgrade")
	rc, _ = h.init("remove")
	harness.eq(rc, 0, "remove")
	harness.wait_for(lambda: not h.agent_pids(), 5, what="agent to exit")
	harness.eq(h.uservar("EsxwatchServerHostname"), None, "settings after remove")
	# Settings created while hostd is down (early boot): esxcli, which
	# needs hostd, is not called.
	os.unlink(os.path.join(h.root, "state/hostd-running"))
	h.clear_calls()
	rc, _ = h.init("start", "install")
	harness.eq(rc, 0, "start install with hostd down")
	harness.eq(h.uservar("EsxwatchServerProto"), "cfapi", "settings created with hostd down")
	harness.eq(h.calls("esxcli") + h.calls("vim-cmd"), [], "esxcli/vim-cmd calls with hostd down")


@with_host
def test_no_scratch_falls_back_to_default(h):
	# /scratch not writable (e.g. no persistent storage configured yet):
	# the agent still runs, with the VIB's default configuration.
	os.rmdir(os.path.join(h.root, "scratch"))
	with open(os.path.join(h.root, "scratch"), "w") as f:
		f.write("not a directory")
	default = os.path.join(h.root, "opt/esxwatch/etc/agent.yaml")
	# The default's absolute paths are for ESXi; point them into the root.
	text = read(default).replace("/scratch/esxwatch", h.root + "/storage").replace(
		"/var/log", h.root + "/var/log")
	with open(default, "w") as f:
		f.write(text)
	rc, out = h.init("start")
	harness.eq(rc, 0, "start without /scratch (output %s)" % out.strip())
	pids = h.agent_pids()
	harness.eq(len(pids), 1, "agents")
	harness.eq(h.cmdline(pids[0])[1:], [b"-c", default.encode()], "agent arguments")
	if not any("cannot write" in l for l in h.lines("logger.log")):
		harness.fail("fallback not logged")


@with_host
def test_scratch_on_ramdisk_warns(h):
	# No persistent scratch location: ESXi points /scratch at /tmp/scratch
	# on the ramdisk.  The agent runs, and the log says the data is lost at
	# reboot.
	os.rmdir(os.path.join(h.root, "scratch"))
	os.makedirs(os.path.join(h.root, "tmp/scratch"))
	os.symlink("tmp/scratch", os.path.join(h.root, "scratch"))
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start on a ramdisk scratch (output %s)" % out.strip())
	harness.eq(len(h.agent_pids()), 1, "agents")
	if not any("ramdisk" in l and "warning" in l for l in h.lines("logger.log")):
		harness.fail("ramdisk scratch not logged: %s" % h.lines("logger.log"))


@with_host
def test_without_usleep(h):
	# A busybox without usleep: the waits fall back to whole seconds and
	# start/stop still work.
	os.unlink(os.path.join(h.root, "bin/usleep"))
	rc, out = h.init("start")
	harness.eq(rc, 0, "start without usleep (output %s)" % out.strip())
	harness.eq(len(h.agent_pids()), 1, "agents")
	rc, out = h.init("stop")
	harness.eq(rc, 0, "stop without usleep")
	harness.wait_for(lambda: not h.agent_pids(), 5, what="agent to exit")
	if "usleep" in out:
		harness.fail("usleep errors: %s" % out)

NEW_UV = {"EsxwatchServerTrust": "verify", "EsxwatchServerCa": "", "EsxwatchServerTransport": "tcp",
	  "EsxwatchTags": ""}


def logged(h, *words):
	return [l for l in h.lines("logger.log") if all(w in l for w in words)]


@with_host
def test_restart_and_reload_check_first(h):
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install (output %s)" % out.strip())
	pids = h.agent_pids()
	harness.eq(len(pids), 1, "agents")
	good = read(h.conf)
	# A typo in the file: restart and reload refuse it and keep the agent.
	with open(h.conf, "a") as f:
		f.write("colectors: {}\n")
	for verb in ("restart", "reload"):
		h.clear_calls()
		rc, out = h.init(verb)
		harness.eq(rc, 1, "%s with an invalid file (output %s)" % (verb, out.strip()))
		harness.eq(h.agent_pids(), pids, "agent after a refused %s" % verb)
		if not logged(h, "-p daemon.err", "invalid configuration, keeping the running agent", "colectors"):
			harness.fail("refused %s not logged with the error: %s" % (verb, h.lines("logger.log")))
		harness.eq(h.calls("watchdog.sh -k"), [], "watchdog stopped by a refused %s" % verb)
	# A setting that changes the broken file: the new version is set aside,
	# the file the agent runs with stays as it was.
	h.uservar("EsxwatchTags", "site=lab1")
	rc, _ = h.init("reload")
	harness.eq(rc, 1, "reload of a broken file with a new setting")
	harness.eq(read(h.conf), good + "colectors: {}\n", "config after a refused reload")
	if "site" not in read(h.conf + ".rejected"):
		harness.fail("the rejected file is not kept: %s" % os.listdir(os.path.dirname(h.conf)))
	harness.eq(h.agent_pids(), pids, "agent after a refused reload")
	# Fixed: reload applies it without a restart (same pid; the agent says
	# it reloaded, in the host's syslog).
	with open(h.conf, "w") as f:
		f.write(good)
	h.clear_calls()
	rc, out = h.init("reload")
	harness.eq(rc, 0, "reload of a valid file (output %s)" % out.strip())
	harness.eq(h.agent_pids(), pids, "agent after a reload")
	harness.wait_for(lambda: logged(h, "-p daemon.info", "configuration reloaded"), 15,
			 what="the agent's 'configuration reloaded' in syslog")
	if 'site: "lab1"' not in read(h.conf):
		harness.fail("EsxwatchTags not applied by reload:\n" + read(h.conf))
	# A valid restart still restarts.
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart with a valid file")
	new = h.agent_pids()
	if len(new) != 1 or new == pids:
		harness.fail("restart did not replace the agent: %s -> %s" % (pids, new))
	h.init("stop")
	harness.wait_for(lambda: not h.agent_pids(), 10, what="agent to exit")
	rc, _ = h.init("reload")
	harness.eq(rc, 7, "reload with no agent")
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart with no agent starts one")
	harness.eq(len(h.agent_pids()), 1, "agents after restart from stopped")


@with_host
def test_agent_log_goes_to_syslog(h):
	# The ESXi default logs to stderr, which the init script relays.
	harness.eq(effective_key(h, os.path.join(h.root, "opt/esxwatch/etc/agent.yaml"), "logging", "file"), "",
		   "logging.file of the ESXi default")
	rc, out = h.init("start")
	harness.eq(rc, 0, "start (output %s)" % out.strip())
	harness.wait_for(lambda: logged(h, "-t esxwatch -p daemon.info info: esxwatch 0.1.0 started on"), 15,
			 what="the agent's start line in syslog")
	h.init("stop")
	harness.wait_for(lambda: not h.agent_pids(), 10, what="agent to exit")
	# Each line at its own level; a line that is not the agent's format at
	# notice; the agent's stdout is not logged.
	with open(h.bin, "rb") as f:
		real = f.read()
	os.unlink(h.bin)
	with open(h.bin, "w") as f:
		f.write("#!/bin/sh\nfor a; do case $a in --check-config) exit 0 ;; --print-config) exit 1 ;; esac; done\n"
			"echo '2026-12-01T10:00:00.000Z esxwatch['$$']: warning: disk 1 is hot' >&2\n"
			"echo '2026-12-01T10:00:00.000Z esxwatch['$$']: error: no route' >&2\n"
			"echo 'Segmentation fault in libfoo' >&2\n"
			"echo '{\"text\": \"an event\"}'\n"
			"exec sleep 60\n")
	os.chmod(h.bin, 0o755)
	try:
		h.clear_calls()
		rc, out = h.init("start")
		harness.eq(rc, 0, "start of the stand-in agent (output %s)" % out.strip())
		harness.wait_for(lambda: len(logged(h, "-t esxwatch", "Segmentation")) == 1, 15, what="relayed lines")
		harness.eq(logged(h, "disk 1 is hot"), ["logger -t esxwatch -p daemon.warning warning: disk 1 is hot"],
			   "warning line")
		harness.eq(logged(h, "no route"), ["logger -t esxwatch -p daemon.err error: no route"], "error line")
		harness.eq(logged(h, "Segmentation"), ["logger -t esxwatch -p daemon.notice Segmentation fault in libfoo"],
			   "foreign line")
		harness.eq(logged(h, "an event"), [], "stdout in syslog")
	finally:
		h.init("stop")
		os.unlink(h.bin)
		with open(h.bin, "wb") as f:
			f.write(real)
		os.chmod(h.bin, 0o755)


def effective_key(h, conf, block, key):
	p = subprocess.run([h.bin, "--print-config", "-c", conf], capture_output=True, text=True, timeout=30)
	harness.eq(p.returncode, 0, "--print-config (%s)" % p.stderr.strip())
	inblock = False
	for line in p.stdout.splitlines():
		if not line.startswith(" "):
			inblock = line.startswith(block + ":")
			continue
		if inblock and line.startswith("  ") and not line.startswith("   ") and ":" in line and \
		    line.split(":", 1)[0].strip().strip('"') == key:
			return line.split(":", 1)[1].split("#")[0].strip().strip('"')
	return None


def self_signed(d):
	key, crt = os.path.join(d, "ca.key"), os.path.join(d, "ca.pem")
	subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
			"-days", "2", "-subj", "/CN=li.example.com"], check=True, capture_output=True, timeout=120)
	return read(crt)


@with_host
def test_trust_ca_transport_tags_settings(h):
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install (output %s)" % out.strip())
	for name, want in NEW_UV.items():
		harness.eq(h.uservar(name), want, "/UserVars/%s default" % name)
	sink, port = tcp_sink()
	h.uservar("EsxwatchServerHostname", "127.0.0.1")
	h.uservar("EsxwatchServerProto", "syslog")
	h.uservar("EsxwatchServerPort", str(port))
	h.uservar("EsxwatchServerSsl", "0")
	h.uservar("EsxwatchServerTransport", "udp")
	h.uservar("EsxwatchTags", "site=lab1, rack = r12,bad key=x,ok=a;b")
	# The PEM text on one line, as the Host Client keeps it.
	pem = self_signed(h.root)
	h.uservar("EsxwatchServerCa", " ".join(pem.split("\n")))
	h.clear_calls()
	rc, out = h.init("restart")
	harness.eq(rc, 0, "restart (output %s)" % out.strip())
	eff = effective(h)
	ca_file = os.path.join(h.root, "scratch/esxwatch/server-ca.pem")
	harness.eq((eff["transport"], eff["ssl_ca_path"]), ("udp", ca_file), "transport and ssl_ca_path")
	harness.eq(read(ca_file), pem, "the CA written from the PEM text")
	harness.eq(os.stat(ca_file).st_mode & 0o777, 0o600, "CA file mode")
	text = read(h.conf)
	for want in ('  site: "lab1"  # from /UserVars', '  rack: "r12"  # from /UserVars'):
		if want not in text:
			harness.fail("tags not written (%r):\n%s" % (want, text))
	harness.eq(effective_key(h, h.conf, "tags", "site"), "lab1", "tags.site")
	for bad in ("bad key=x", "ok=a;b"):
		if not logged(h, "-p daemon.warning", "ignoring tag '%s'" % bad):
			harness.fail("refused tag %r not logged: %s" % (bad, h.lines("logger.log")))
	if "bad" in text or "a;b" in text:
		harness.fail("a refused tag was written:\n" + text)
	# A CA path under /scratch is used as it is; one elsewhere is refused.
	os.makedirs(os.path.join(h.root, "scratch/certs"))
	with open(os.path.join(h.root, "scratch/certs/li.pem"), "w") as f:
		f.write(pem)
	h.uservar("EsxwatchServerCa", "/scratch/certs/li.pem")
	rc, _ = h.init("reload")
	harness.eq(rc, 0, "reload with a CA path")
	harness.eq(effective(h)["ssl_ca_path"], os.path.join(h.root, "scratch/certs/li.pem"), "ssl_ca_path from a path")
	h.uservar("EsxwatchServerCa", "/etc/ssl/evil.pem")
	rc, _ = h.init("reload")
	harness.eq(rc, 0, "reload with a refused CA path")
	harness.eq(effective(h)["ssl_ca_path"], "", "ssl_ca_path after a refused path")
	if not logged(h, "ignoring /UserVars/EsxwatchServerCa"):
		harness.fail("refused CA path not logged")
	# trust: written as the key the agent reads.  (The file is checked
	# before use: while the agent lacks the key the restart is refused and
	# the text is in the .rejected file.)
	h.uservar("EsxwatchServerTrust", "first_use")
	rc, _ = h.init("restart")
	text = read(h.conf if rc == 0 else h.conf + ".rejected")
	if "  trust: first_use  # from /UserVars\n" not in text:
		harness.fail("trust: first_use not written (restart rc %d):\n%s" % (rc, text))
	h.uservar("EsxwatchServerTrust", "verify")
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart with trust verify")
	if "trust:" in read(h.conf):
		harness.fail("trust: line left for verify (the agent's default):\n" + read(h.conf))
	# Cleared: the lines written from the settings go, hand edits stay.
	h.uservar("EsxwatchTags", "")
	h.uservar("EsxwatchServerHostname", "")
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart after clearing")
	text = read(h.conf)
	for gone in ("site:", "rack:", "transport:", "ssl_ca_path:", "# from /UserVars"):
		if gone in text:
			harness.fail("%r left after clearing the settings:\n%s" % (gone, text))
	rc, _ = h.init("stop", "remove")
	for name in NEW_UV:
		harness.eq(h.uservar(name), None, "/UserVars/%s after remove" % name)
	sink.close()


@with_host
def test_no_destination_is_logged(h):
	# Empty hostname: the host is not silently unmonitored.
	rc, out = h.init("start", "install")
	harness.eq(rc, 0, "start install (output %s)" % out.strip())
	harness.eq(effective(h)["hostname"], "", "hostname")
	if not logged(h, "-p daemon.warning", "no destination configured", "EsxwatchServerHostname",
		      "events go to the host's syslog"):
		harness.fail("no destination not logged: %s" % h.lines("logger.log"))
	if "no destination configured" not in out:
		harness.fail("no destination not on the script's output: %s" % out)
	# A host name with a port, or a URL: refused, said why, no server.
	for bad, why in (("li.example.com:9000", "set the port in /UserVars/EsxwatchServerPort"),
			 ("https://li.example.com", "not a host name or address")):
		h.uservar("EsxwatchServerHostname", bad)
		h.clear_calls()
		rc, _ = h.init("restart")
		harness.eq(rc, 0, "restart with hostname %r" % bad)
		harness.eq(effective(h)["hostname"], "", "hostname after %r" % bad)
		if not logged(h, "ignoring /UserVars/EsxwatchServerHostname", why):
			harness.fail("%r: refusal not logged: %s" % (bad, h.lines("logger.log")))
		if not logged(h, "no destination configured"):
			harness.fail("%r: no destination not logged: %s" % (bad, h.lines("logger.log")))
	# A server set by hand in the file is a destination: no warning.
	text = read(h.conf).replace('  hostname: ""', '  hostname: "127.0.0.1"')
	with open(h.conf, "w") as f:
		f.write(text)
	h.uservar("EsxwatchServerHostname", "")
	h.clear_calls()
	rc, _ = h.init("restart")
	harness.eq(rc, 0, "restart with a hand-set server")
	harness.eq(logged(h, "no destination"), [], "no-destination warning with a server")


@with_host
def test_no_destination_sends_to_the_host_syslog(h):
	# The agent on ESXi (host.platform stands in for uname's VMkernel) with
	# no server: its events reach vmsyslogd's socket, a datagram socket of
	# this test's (ESXWATCH_HOST_SYSLOG), and --status says where they go.
	os.makedirs(os.path.dirname(h.conf), exist_ok=True)
	text = read(os.path.join(h.root, "opt/esxwatch/etc/agent.yaml"))
	text = text.replace("directory: /", "directory: %s/" % h.root).replace("file: /", "file: %s/" % h.root)
	with open(h.conf, "w") as f:
		f.write(text + "host:\n  platform: esxi\n")
	path = os.path.join(h.root, "dev-log")
	rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
	rx.bind(path)
	rx.settimeout(30)
	try:
		rc, out = h.init("start", "install", env={"ESXWATCH_HOST_SYSLOG": path})
		harness.eq(rc, 0, "start install (output %s)" % out.strip())
		msg = rx.recv(65536).decode()
		# syslog(3)'s local form: <PRI>Mmm dd hh:mm:ss esxwatch[PID]: {event}
		head, _, body = msg.partition("]: ")
		pid = h.agent_pids()
		if not (head.startswith("<") and head.endswith("esxwatch[%d" % pid[0])):
			harness.fail("not syslog(3)'s local form from the agent (pid %s): %r" % (pid, msg[:200]))
		ev = json.loads(body)
		harness.eq(ev.get("appname"), "esxwatch", "appname of the event")
		for k in ("timestamp", "text", "esxwatch_collector", "esxwatch_kind"):
			if k not in ev:
				harness.fail("event without %s: %r" % (k, ev))
		st = harness.wait_for(lambda: status_when(h, "delivering"), timeout=20,
				      what="--status delivering to the host's syslog")
		if "\nno destination configured: events go to the host's syslog\n" not in st:
			harness.fail("--status does not say where the events go:\n" + st)
		p = subprocess.run([h.bin, "-c", h.conf, "--status", "--json"], capture_output=True, text=True,
				   timeout=30)
		j = json.loads(p.stdout)
		harness.eq(j.get("no_destination"), "host_syslog", "no_destination in --status --json")
		harness.eq(j["destinations"][0]["proto"], "syslog", "destination proto")
	finally:
		rx.close()


def status_when(h, word):
	p = subprocess.run([h.bin, "-c", h.conf, "--status"], capture_output=True, text=True, timeout=30)
	return p.stdout if "destination server (syslog): %s" % word in p.stdout else None


harness.main(globals())
