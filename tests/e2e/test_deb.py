"""The Debian package (make deb, packaging/mkdeb.py): contents, lintian, and a
real install with dpkg -i on this machine, the service started (by systemd
when it runs here, else the unit's ExecStart by hand), removal and purge.

Installing into the real system is what the issue asks for (CI runs as root
on a throw-away machine).  Several engineers run this suite on one machine at
once, so installs are serialised with a lock file and dpkg's own lock is
waited for; the package is always purged at the end.  Without root the
install part is reported as a failure (it cannot be checked).
"""
import fcntl
import gzip
import json
import os
import re
import shutil
import signal
import socket
import pty
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(harness.TOP, "packaging"))
import mkman  # noqa: E402

MKDEB = os.path.join(harness.TOP, "packaging", "mkdeb.py")
RULES = os.path.join(harness.TOP, "collectors", "logwatch", "rules", "esxi.yaml")
LOCK = "/tmp/esxwatch-test-deb.lock"
DEB_NAME = "esxwatch_0.1.0_amd64.deb"


def build(d):
	p = subprocess.run([sys.executable, MKDEB, "--bin", harness.BIN, "--version", "0.1.0", "--out", d],
			   capture_output=True, text=True, timeout=300)
	harness.eq(p.returncode, 0, "mkdeb (%s)" % p.stderr.strip())
	return os.path.join(d, DEB_NAME)


def run(*cmd, timeout=120, check=True):
	p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout,
			   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
	if check and p.returncode != 0:
		harness.fail("%s: exit %d: %s" % (" ".join(cmd), p.returncode, (p.stdout + p.stderr).strip()[-1500:]))
	return p


def dpkg(*args):
	"""dpkg, waiting (up to 120 s) for another dpkg/apt run to let go of its lock."""
	end = time.time() + 120
	while True:
		p = run("dpkg", *args, check=False)
		if p.returncode == 0:
			return p
		if "lock" not in (p.stdout + p.stderr) or time.time() > end:
			harness.fail("dpkg %s: exit %d: %s" % (" ".join(args), p.returncode, (p.stdout + p.stderr).strip()[-1500:]))
		time.sleep(2)


def installed():
	p = run("dpkg-query", "-W", "-f=${Status}", "esxwatch", check=False)
	return p.returncode == 0 and "installed" in p.stdout and "not-installed" not in p.stdout


def dynamic(path):
	"""True when the ELF has a PT_INTERP program header."""
	with open(path, "rb") as f:
		data = f.read(1 << 16)
	phoff = int.from_bytes(data[32:40], "little")
	size, num = int.from_bytes(data[54:56], "little"), int.from_bytes(data[56:58], "little")
	return any(int.from_bytes(data[phoff + i * size:phoff + i * size + 4], "little") == 3 for i in range(num))


def test_make_deb(tmpdir):
	p = subprocess.run(["make", "-s", "-C", harness.TOP, "deb"], capture_output=True, text=True, timeout=300)
	harness.eq(p.returncode, 0, "make deb (%s)" % (p.stdout + p.stderr).strip()[-2000:])
	if not os.path.isfile(os.path.join(harness.TOP, "build", DEB_NAME)):
		harness.fail("make deb did not produce build/" + DEB_NAME)


def test_contents_and_lintian(tmpdir):
	deb = build(tmpdir)
	f = {k: run("dpkg-deb", "-f", deb, k).stdout.strip() for k in ("Package", "Version", "Architecture", "Depends")}
	harness.eq((f["Package"], f["Version"], f["Architecture"]), ("esxwatch", "0.1.0", "amd64"), "control")
	if dynamic(harness.BIN):
		for lib in ("libc6", "libcurl4", "libyaml-0-2", "zlib1g"):
			if lib not in f["Depends"]:
				harness.fail("Depends lacks %s: %s" % (lib, f["Depends"]))
	else:
		harness.eq(f["Depends"], "", "Depends of a static binary")
	listing = {}
	for line in run("dpkg-deb", "-c", deb).stdout.splitlines():
		parts = line.split()
		listing[parts[-1].lstrip(".")] = (parts[0], parts[1])
	for path, mode in (("/usr/bin/esxwatch", "-rwxr-xr-x"), ("/etc/esxwatch/agent.yaml", "-rw-r--r--"),
			   ("/lib/systemd/system/esxwatch.service", "-rw-r--r--"),
			   ("/etc/esxwatch/collector.yaml", "-rw-r--r--"),
			   ("/lib/systemd/system/esxwatch-collector.service", "-rw-r--r--"),
			   ("/usr/share/doc/esxwatch/copyright", "-rw-r--r--"),
			   ("/usr/share/esxwatch/rules/esxi.yaml", "-rw-r--r--"),
			   ("/usr/share/man/man1/esxwatch.1.gz", "-rw-r--r--")):
		if path not in listing:
			harness.fail("%s missing from the package: %s" % (path, sorted(listing)))
		harness.eq(listing[path], (mode, "root/root"), path)
	ctl = os.path.join(tmpdir, "ctl")
	run("dpkg-deb", "-e", deb, ctl)
	with open(os.path.join(ctl, "conffiles")) as fh:
		harness.eq(fh.read().split(), ["/etc/esxwatch/agent.yaml", "/etc/esxwatch/collector.yaml"],
			   "conffiles")
	# The unit: what the issue asks for.
	x = os.path.join(tmpdir, "x")
	run("dpkg-deb", "-x", deb, x)
	with open(os.path.join(x, "lib/systemd/system/esxwatch.service")) as fh:
		unit = fh.read()
	for want in ("Type=simple", "Restart=on-failure", "StateDirectory=esxwatch",
		     "ExecStart=/usr/bin/esxwatch -c /etc/esxwatch/agent.yaml", "ProtectSystem=strict",
		     "NoNewPrivileges=yes", "WantedBy=multi-user.target"):
		if want + "\n" not in unit:
			harness.fail("unit lacks %r" % want)
	check_unit(unit, x)
	check_collector_unit(x)
	check_metadata(x)
	check_man(x)
	# The shipped config is valid for the shipped binary.
	p = run(os.path.join(x, "usr/bin/esxwatch"), "--check-config", "-c", os.path.join(x, "etc/esxwatch/agent.yaml"),
		check=False)
	harness.eq(p.returncode, 0, "--check-config of /etc/esxwatch/agent.yaml (%s)" % p.stderr)
	# Deterministic.
	again = build(os.path.join(tmpdir, "again"))
	with open(deb, "rb") as a, open(again, "rb") as b:
		if a.read() != b.read():
			harness.fail("the .deb is not reproducible")
	if not dynamic(harness.BIN):
		# The .deb ships the Debian build (PKG_BIN); lintian rightly rejects
		# the static ESXi build (embedded curl/libyaml) when the suite runs
		# again with ESXWATCH_BIN pointing at it.
		print("note: static binary, lintian skipped")
	elif shutil.which("lintian"):
		p = run("lintian", "-I", "--tag-display-limit", "0", deb, check=False, timeout=300)
		bad = [l for l in p.stdout.splitlines() if l[:2] in ("E:", "W:", "I:")]
		if bad or p.returncode not in (0, 1):
			harness.fail("lintian: %s" % (bad or p.stderr.strip()))
	else:
		print("note: lintian not installed, skipped")


def unit_sections(text):
	"""{section: [(key, value)]} of a systemd unit, in order (no systemctl)."""
	out, sec = {}, None
	for raw in text.splitlines():
		l = raw.strip()
		if not l or l[0] in "#;":
			continue
		if l.startswith("[") and l.endswith("]"):
			sec = l[1:-1]
			out.setdefault(sec, [])
		elif "=" in l and sec:
			k, v = l.split("=", 1)
			out[sec].append((k.strip(), v.strip()))
	return out


def check_collector_unit(x):
	"""Collector mode's unit: no root, one capability (CAP_NET_BIND_SERVICE
	for port 514), its own config, checked before the start; the shipped
	collector.yaml is valid for the shipped binary."""
	with open(os.path.join(x, "lib/systemd/system/esxwatch-collector.service")) as fh:
		u = unit_sections(fh.read())

	def values(key):
		return [v for k, v in u.get("Service", []) if k == key]
	conf = "/etc/esxwatch/collector.yaml"
	harness.eq(values("ExecStartPre"), ["/usr/bin/esxwatch --check-config -c " + conf], "collector ExecStartPre")
	harness.eq(values("ExecStart"), ["/usr/bin/esxwatch -c " + conf], "collector ExecStart")
	harness.eq(values("DynamicUser"), ["yes"], "collector DynamicUser")
	harness.eq(values("AmbientCapabilities"), ["CAP_NET_BIND_SERVICE"], "AmbientCapabilities")
	harness.eq(values("CapabilityBoundingSet"), ["CAP_NET_BIND_SERVICE"], "CapabilityBoundingSet")
	harness.eq(values("StateDirectory"), ["esxwatch-collector"], "collector StateDirectory")
	p = run(os.path.join(x, "usr/bin/esxwatch"), "--check-config", "-c",
		os.path.join(x, "etc/esxwatch/collector.yaml"), check=False)
	harness.eq(p.returncode, 0, "--check-config of collector.yaml (%s)" % p.stderr)


def check_unit(unit, x):
	"""What the issue asks of the unit: a config error is checked before the
	start, is not restarted every 5 s forever, and fails a reload."""
	u = unit_sections(unit)
	svc = u.get("Service", [])

	def values(sec, key):
		return [v for k, v in u.get(sec, []) if k == key]
	conf = "/etc/esxwatch/agent.yaml"
	harness.eq(values("Service", "ExecStartPre"), ["/usr/bin/esxwatch --check-config -c " + conf], "ExecStartPre")
	harness.eq(values("Service", "ExecStart"), ["/usr/bin/esxwatch -c " + conf], "ExecStart")
	harness.eq(values("Service", "RestartPreventExitStatus"), ["2"], "RestartPreventExitStatus")
	harness.eq(values("Service", "Restart"), ["on-failure"], "Restart")
	# StartLimit* belong in [Unit] (systemd ignores them in [Service] since v230).
	interval, burst = values("Unit", "StartLimitIntervalSec"), values("Unit", "StartLimitBurst")
	if len(interval) != 1 or len(burst) != 1 or int(interval[0]) < 60 or not 1 <= int(burst[0]) <= 10:
		harness.fail("StartLimitIntervalSec/StartLimitBurst in [Unit]: %s %s" % (interval, burst))
	harness.eq(values("Service", "StartLimitBurst") + values("Service", "StartLimitIntervalSec"), [],
		   "StartLimit* in [Service]")
	# Reload: the check first (a failing ExecReload= line stops the rest and
	# fails systemctl reload), then the signal.
	harness.eq(values("Service", "ExecReload"), ["/usr/bin/esxwatch --check-config -c " + conf,
						     "/bin/kill -HUP $MAINPID"], "ExecReload")
	harness.eq(values("Service", "LogsDirectory"), ["esxwatch"], "LogsDirectory")
	harness.eq(values("Service", "ProtectSystem"), ["strict"], "ProtectSystem")
	# The commands do what the unit expects of them, run the way systemd
	# would (first word the binary, from the package): a rejected file exits
	# 2 (so RestartPreventExitStatus applies and the reload fails), the
	# shipped file 0.
	pre = values("Service", "ExecStartPre")[0].split()
	binary = os.path.join(x, pre[0].lstrip("/"))
	p = run(binary, *pre[1:-1], os.path.join(x, conf.lstrip("/")), check=False)
	harness.eq(p.returncode, 0, "ExecStartPre on the shipped agent.yaml (%s)" % p.stderr.strip())
	bad = os.path.join(x, "bad.yaml")
	with open(bad, "w") as f:
		f.write("server:\n  hostnme: li.example.com\n")
	p = run(binary, *values("Service", "ExecReload")[0].split()[1:-1], bad, check=False)
	harness.eq(p.returncode, 2, "ExecReload's check on a rejected file (%s)" % p.stderr.strip())
	if "hostnme" not in p.stderr:
		harness.fail("the rejected file's error is not reported: %r" % p.stderr)
	# The default config's writable paths are the ones the sandbox allows.
	for k, v in svc:
		if k == "ReadWritePaths":
			harness.fail("unexpected ReadWritePaths=%s (docs/operations.md lists the writable paths)" % v)
	with open(os.path.join(harness.TOP, "docs", "operations.md")) as f:
		ops = f.read()
	for want in ("/var/lib/esxwatch", "/var/log/esxwatch", "ReadWritePaths="):
		if want not in ops:
			harness.fail("docs/operations.md does not name %s" % want)


def check_metadata(x):
	"""The licence: Apache-2.0 in a machine-readable (DEP-5) copyright file,
	and the catalogue shipped where docs/rules.md says."""
	with open(os.path.join(x, "usr/share/doc/esxwatch/copyright")) as f:
		paras = [p for p in f.read().split("\n\n") if p.strip()]
	fields = []
	for p in paras:
		d = {}
		for l in p.splitlines():
			if not l.startswith(" ") and ":" in l:
				k, v = l.split(":", 1)
				d[k] = v.strip()
		fields.append(d)
	harness.eq(fields[0].get("Format"), "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
		   "copyright Format")
	files = [d for d in fields if "Files" in d]
	harness.eq([(d["Files"], d.get("License")) for d in files], [("*", "Apache-2.0")], "Files: * licence")
	if not any(d.get("License") == "Apache-2.0" and "Files" not in d for d in fields[1:]):
		harness.fail("no stand-alone License: Apache-2.0 paragraph")
	if "/usr/share/common-licenses/Apache-2.0" not in "\n".join(paras):
		harness.fail("copyright does not point at /usr/share/common-licenses/Apache-2.0")
	with open(os.path.join(harness.TOP, "LICENSE")) as f:
		lic = f.read()
	if "Apache License" not in lic or "Version 2.0, January 2004" not in lic or "END OF TERMS" not in lic:
		harness.fail("LICENSE is not the full Apache License 2.0 text")
	with open(os.path.join(x, "usr/share/esxwatch/rules/esxi.yaml"), "rb") as a, open(RULES, "rb") as b:
		harness.eq(a.read(), b.read(), "packaged rule catalogue")
	with open(os.path.join(harness.TOP, "docs", "rules.md")) as f:
		if "/usr/share/esxwatch/rules/esxi.yaml" not in f.read():
			harness.fail("docs/rules.md does not name the .deb's catalogue path")


def check_man(x):
	"""The man page is the one generated from the packaged binary's -h, and
	lists every option -h has (--status among them); groff has no warning."""
	with gzip.open(os.path.join(x, "usr/share/man/man1/esxwatch.1.gz"), "rt") as f:
		page = f.read()
	harness.eq(page, mkman.generate(harness.BIN), "man page vs mkman.py on the binary")
	helptext = run(harness.BIN, "-h").stdout
	opts = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", helptext))
	if "--status" not in opts:
		harness.fail("esxwatch -h lists no --status: %r" % helptext)
	for o in sorted(opts):
		if "\\fB%s\\fR" % o.replace("-", "\\-") not in page:
			harness.fail("man page lacks %s (from -h)" % o)
	if shutil.which("groff"):
		p = subprocess.run(["groff", "-man", "-ww", "-z", "-Tutf8"], input=page, capture_output=True,
				   text=True, timeout=30)
		harness.eq((p.returncode, p.stderr.strip()), (0, ""), "groff -man -ww on the page")


def installed_rules_count(tmpdir):
	"""Start the installed agent the way the unit does (from /) and read the
	number of catalogue rules it loaded from its debug log."""
	conf = os.path.join(tmpdir, "agent.yaml")
	with open("/etc/esxwatch/agent.yaml") as f:
		text = f.read()
	store = os.path.join(tmpdir, "store")
	with open(conf, "w") as f:
		f.write(text.replace("directory: /var/lib/esxwatch", "directory: " + store))
	# as the unit starts it: not with the source tree's catalogue that
	# the harness points the tests' agents at
	env = {k: v for k, v in os.environ.items() if k != "ESXWATCH_RULES_FILE"}
	p = subprocess.run(["/usr/bin/esxwatch", "-v", "--once", "-c", conf], cwd="/", capture_output=True,
			   text=True, timeout=60, env=env)
	m = re.search(r"logwatch: (\d+) rules from (\S+)", p.stderr)
	if not m:
		harness.fail("no 'logwatch: N rules from' line (exit %d): %s" % (p.returncode, p.stderr[-1500:]))
	harness.eq(m.group(2), "/usr/share/esxwatch/rules/esxi.yaml", "catalogue the installed agent loaded")
	if int(m.group(1)) <= 80:
		harness.fail("the installed agent loaded %s rules, want > 80" % m.group(1))
	for l in p.stderr.splitlines():
		if ": error: " in l:
			harness.fail("error from the installed agent: %s" % l)


def wait_line(path, timeout):
	end = time.time() + timeout
	while time.time() < end:
		if os.path.exists(path) and os.path.getsize(path) > 0:
			with open(path) as f:
				line = f.readline()
			if line.endswith("\n"):
				return line
		time.sleep(0.2)
	return None


def start_by_hand(tmpdir):
	"""No systemd here: do what the unit says.  StateDirectory= is created by
	systemd before ExecStart, so create it the same way."""
	with open("/lib/systemd/system/esxwatch.service") as f:
		unit = f.read()
	exec_start = [l.split("=", 1)[1] for l in unit.splitlines() if l.startswith("ExecStart=")][0]
	state = [l.split("=", 1)[1] for l in unit.splitlines() if l.startswith("StateDirectory=")][0]
	os.makedirs("/var/lib/" + state, mode=0o750, exist_ok=True)
	out = os.path.join(tmpdir, "stdout")
	err = os.path.join(tmpdir, "stderr")
	proc = subprocess.Popen(exec_start.split(), stdout=open(out, "wb"), stderr=open(err, "wb"))
	try:
		line = wait_line(out, 30)
		if line is None:
			harness.fail("no event on stdout within 30 s (stderr: %s)" % open(err).read()[-1000:])
		ev = json.loads(line)
		if not ev.get("text") or "timestamp" not in ev:
			harness.fail("first stdout line is not an event: %r" % line)
		if proc.poll() is not None:
			harness.fail("agent exited (%d): %s" % (proc.returncode, open(err).read()[-1000:]))
	finally:
		if proc.poll() is None:
			proc.send_signal(signal.SIGTERM)
			try:
				proc.wait(15)
			except subprocess.TimeoutExpired:
				proc.kill()
				proc.wait()
	harness.eq(proc.returncode, 0, "exit status after SIGTERM (stderr %s)" % open(err).read()[-500:])
	if not os.listdir("/var/lib/" + state):
		harness.fail("nothing kept in /var/lib/%s" % state)


def test_install_run_remove_purge(tmpdir):
	if os.geteuid() != 0:
		harness.fail("installing the package needs root (run the suite as root, as CI does)")
	deb = build(tmpdir)
	with open(LOCK, "w") as lock:
		fcntl.flock(lock, fcntl.LOCK_EX)
		try:
			dpkg("-i", deb)
			if not installed():
				harness.fail("dpkg -i succeeded but esxwatch is not installed")
			p = run("/usr/bin/esxwatch", "-V")
			if "0.1.0" not in p.stdout + p.stderr:
				harness.fail("esxwatch -V: %r" % (p.stdout + p.stderr))
			installed_rules_count(tmpdir)
			conff = run("dpkg-query", "-W", "-f=${Conffiles}", "esxwatch").stdout
			if "/etc/esxwatch/agent.yaml" not in conff:
				harness.fail("agent.yaml not registered as a conffile: %r" % conff)
			if os.path.isdir("/run/systemd/system"):
				# postinst started it.
				harness.wait_for(lambda: run("systemctl", "is-active", "esxwatch", check=False)
						 .stdout.strip() == "active", 30, what="esxwatch.service active")
				run("systemctl", "stop", "esxwatch")
			else:
				start_by_hand(tmpdir)
			# An admin's edit to the conffile survives removal, not purge.
			with open("/etc/esxwatch/agent.yaml", "a") as f:
				f.write("tags:\n  site: test\n")
			dpkg("-r", "esxwatch")
			if os.path.exists("/usr/bin/esxwatch"):
				harness.fail("/usr/bin/esxwatch still there after dpkg -r")
			if not os.path.exists("/etc/esxwatch/agent.yaml"):
				harness.fail("conffile removed by dpkg -r (only purge may)")
			dpkg("--purge", "esxwatch")
			for p in ("/etc/esxwatch/agent.yaml", "/etc/esxwatch", "/var/lib/esxwatch",
				  "/lib/systemd/system/esxwatch.service", "/etc/esxwatch/collector.yaml",
				  "/lib/systemd/system/esxwatch-collector.service"):
				if os.path.exists(p):
					harness.fail("%s still there after purge" % p)
			harness.eq(installed(), False, "installed after purge")
		finally:
			if installed() or run("dpkg-query", "-W", "esxwatch", check=False).returncode == 0:
				run("dpkg", "--purge", "esxwatch", check=False)
			fcntl.flock(lock, fcntl.LOCK_UN)


def test_make_run_as_nobody(tmpdir):
	"""make run as a normal user (nobody): its storage directory is its own
	(RUN_DIR, build/run by default), so no permission error about
	/var/lib/esxwatch, and a clean stop prints no error ("lost at exit")."""
	if os.geteuid() != 0 or not shutil.which("setpriv"):
		harness.fail("needs root and setpriv to run make as nobody")
	p = subprocess.run(["make", "-s", "-C", harness.TOP, "all"], capture_output=True, text=True, timeout=600)
	harness.eq(p.returncode, 0, "make all (%s)" % p.stderr[-1000:])
	run_dir = os.path.join(tmpdir, "run")
	os.makedirs(run_dir)
	os.chmod(tmpdir, 0o755)
	os.chown(run_dir, 65534, 65534)
	out, err = os.path.join(tmpdir, "stdout"), os.path.join(tmpdir, "stderr")
	# make run is a foreground run on a terminal (a daemon without a
	# destination would warn that its events go to stdout): a pty, copied
	# to the file wait_line reads.
	master, slave = pty.openpty()
	with open(err, "wb") as e:
		proc = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
					 "make", "-s", "-C", harness.TOP, "run", "RUN_DIR=" + run_dir],
					stdout=slave, stderr=e, stdin=subprocess.DEVNULL, start_new_session=True)
	os.close(slave)

	def copy():
		with open(out, "wb") as o:
			while True:
				try:
					b = os.read(master, 65536)
				except OSError:
					return
				if not b:
					return
				o.write(b.replace(b"\r\n", b"\n"))
				o.flush()
	threading.Thread(target=copy, daemon=True).start()
	try:
		line = wait_line(out, 30)
		if line is None:
			harness.fail("make run printed no event in 30 s: %s" % open(err).read()[-1500:])
		json.loads(line)
		harness.wait_for(lambda: os.path.exists(os.path.join(run_dir, "status")), 15, what="status file")
	finally:
		if proc.poll() is None:
			os.killpg(proc.pid, signal.SIGTERM)
		try:
			proc.wait(20)
		except subprocess.TimeoutExpired:
			os.killpg(proc.pid, signal.SIGKILL)
			proc.wait()
		os.close(master)
	with open(err) as f:
		text = f.read()
	bad = [l for l in text.splitlines() if ": error: " in l or ": warning: " in l or
	       "Permission denied" in l or "lost" in l]
	harness.eq(bad, [], "errors and warnings from make run as nobody")
	if "/var/lib/esxwatch" in text:
		harness.fail("make run used /var/lib/esxwatch: %s" % text[-1000:])
	st = os.stat(os.path.join(run_dir, "spool"))
	harness.eq((st.st_uid, st.st_mode & 0o777), (65534, 0o700), "spool directory owner and mode")
	# A --once whose spool is in memory only (nobody cannot write the default
	# /var/lib/esxwatch) and that delivered everything (stdout) loses nothing:
	# no "lost at exit" line.
	p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", harness.BIN,
			    "--once", "-c", os.path.join(harness.TOP, "agent.yaml")], cwd=tmpdir,
			   capture_output=True, text=True, timeout=60)
	harness.eq(p.returncode, 0, "--once as nobody (%s)" % p.stderr[-1000:])
	if "in memory only" not in p.stderr:
		harness.fail("the --once run did not use a memory-only spool: %s" % p.stderr[-1000:])
	lost = [l for l in p.stderr.splitlines() if "lost at exit" in l]
	harness.eq(lost, [], "'lost at exit' after a --once that delivered everything")
	# ...while events that were not delivered are still reported lost: a
	# memory-only spool and a syslog server that refuses connections.
	with open(os.path.join(harness.TOP, "agent.yaml")) as f:
		text = f.read()
	closed = socket.socket()
	closed.bind(("127.0.0.1", 0))
	port = closed.getsockname()[1]
	closed.close()
	bad = os.path.join(tmpdir, "refused.yaml")
	with open(bad, "w") as f:
		f.write(text.replace('  hostname: ""', '  hostname: "127.0.0.1"', 1).replace(
			"  proto: cfapi", "  proto: syslog", 1).replace("  port: 0", "  port: %d" % port, 1).replace(
			"  ssl: yes", "  ssl: no", 1))
	os.chmod(bad, 0o644)
	proc = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", harness.BIN,
				 "-c", bad], cwd=tmpdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
	time.sleep(3)
	proc.send_signal(signal.SIGTERM)
	try:
		_, errtext = proc.communicate(timeout=30)
	except subprocess.TimeoutExpired:
		proc.kill()
		_, errtext = proc.communicate()
	if not re.search(r"error: spool: [1-9]\d* undelivered events held in memory are lost at exit", errtext):
		harness.fail("undelivered events not reported lost at exit: %s" % errtext[-1500:])


harness.main(globals())
