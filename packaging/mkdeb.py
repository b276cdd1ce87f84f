#!/usr/bin/env python3
"""Build build/esxwatch_<version>_amd64.deb with dpkg-deb (no debian/ tree).

    mkdeb.py --bin build/esxwatch --version 0.1.0 --out build

Contents: /usr/bin/esxwatch (stripped), /etc/esxwatch/agent.yaml (a conffile),
/usr/share/esxwatch/rules/esxi.yaml (the rule catalogue, where docs/rules.md
says), /lib/systemd/system/esxwatch.service, the man page (generated from the
packaged binary's -h by mkman.py), copyright and changelog; and collector
mode's unit, esxwatch-collector.service, with /etc/esxwatch/collector.yaml (a
conffile; the unit is installed, not enabled: docs/collector.md).
The maintainer scripts do what debhelper's systemd snippets do: enable the
unit, start it on install and restart it on upgrade when systemd runs, stop it
on removal, forget it (and /var/lib/esxwatch) on purge.  Depends comes from
dpkg-shlibdeps on the binary.  Reproducible: SOURCE_DATE_EPOCH (or the last
commit's time) is every file's mtime.
"""
import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
LINUX = os.path.join(HERE, "linux")
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from mkvib import source_epoch  # noqa: E402  (same fixed time as the VIB)
import mkman  # noqa: E402

MAINTAINER = os.environ.get("DEB_MAINTAINER", "esxwatch maintainers <esxwatch@users.noreply.github.com>")
FALLBACK_DEPENDS = "libc6 (>= 2.34), libcurl4 (>= 7.28.0), libyaml-0-2, zlib1g (>= 1:1.2.0)"

POSTINST = """#!/bin/sh
set -e
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
	if command -v deb-systemd-helper >/dev/null; then
		deb-systemd-helper unmask esxwatch.service >/dev/null || true
		if deb-systemd-helper --quiet was-enabled esxwatch.service; then
			deb-systemd-helper enable esxwatch.service >/dev/null || true
		else
			deb-systemd-helper update-state esxwatch.service >/dev/null || true
		fi
		# collector mode: known to systemd's state, enabled only by the admin
		deb-systemd-helper update-state esxwatch-collector.service >/dev/null || true
	fi
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		if [ -n "$2" ]; then
			deb-systemd-invoke try-restart esxwatch-collector.service >/dev/null || true
			deb-systemd-invoke restart esxwatch.service >/dev/null || true
		else
			deb-systemd-invoke start esxwatch.service >/dev/null || true
		fi
	fi
fi
exit 0
"""

PRERM = """#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	deb-systemd-invoke stop esxwatch.service esxwatch-collector.service >/dev/null || true
fi
exit 0
"""

POSTRM = """#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = remove ] && command -v deb-systemd-helper >/dev/null; then
	deb-systemd-helper mask esxwatch.service >/dev/null || true
fi
if [ "$1" = purge ]; then
	if command -v deb-systemd-helper >/dev/null; then
		deb-systemd-helper purge esxwatch.service esxwatch-collector.service >/dev/null || true
		deb-systemd-helper unmask esxwatch.service >/dev/null || true
	fi
	# The spool, bookmarks and agent id (systemd's StateDirectory), and the
	# agent's own log files (LogsDirectory); the collector's (DynamicUser:
	# its state lives under /var/lib/private).
	rm -rf /var/lib/esxwatch /var/log/esxwatch /var/lib/esxwatch-collector \
		/var/lib/private/esxwatch-collector /var/log/esxwatch-collector \
		/var/log/private/esxwatch-collector
fi
exit 0
"""

# The one lintian remark left (with -I): the unit has no sysvinit script
# beside it.  On purpose: the agent is supervised by systemd, whose
# hardening (ProtectSystem=, StateDirectory=, LogsDirectory=) has no
# init.d equivalent.
LINTIAN_OVERRIDES = """# systemd only: the unit's sandbox and directories have no init.d equivalent.
esxwatch: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/esxwatch.service]
esxwatch: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/esxwatch-collector.service]
"""


def changelog(version, epoch):
	date = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(epoch))
	return ("esxwatch (%s) unstable; urgency=medium\n\n"
		"  * Release %s.\n\n -- %s  %s\n" % (version, version, MAINTAINER, date)).encode()


def gz(data, epoch):
	return gzip.compress(data, compresslevel=9, mtime=0)


def shlib_depends(binary):
	"""dpkg-shlibdeps wants a debian/control next to it: give it a tiny one."""
	with tempfile.TemporaryDirectory() as d:
		os.makedirs(os.path.join(d, "debian"))
		with open(os.path.join(d, "debian", "control"), "w") as f:
			f.write("Source: esxwatch\n\nPackage: esxwatch\nArchitecture: any\n")
		try:
			p = subprocess.run(["dpkg-shlibdeps", "-O", os.path.abspath(binary)], cwd=d,
					   capture_output=True, text=True, timeout=60)
		except (OSError, subprocess.SubprocessError):
			return None
		if p.returncode != 0:
			return None
		for line in p.stdout.splitlines():
			if line.startswith("shlibs:Depends="):
				return line.split("=", 1)[1].strip()
		return ""	# a static binary depends on nothing


def put(stage, rel, data, mode):
	p = os.path.join(stage, rel)
	os.makedirs(os.path.dirname(p), exist_ok=True)
	with open(p, "wb") as f:
		f.write(data)
	os.chmod(p, mode)


def read(p):
	with open(p, "rb") as f:
		return f.read()


def build(binary, version, out, epoch, rules):
	stage = tempfile.mkdtemp(prefix="esxwatch-deb-")
	try:
		# A stripped copy: the .deb carries no debug symbols (lintian).
		bin_copy = os.path.join(stage, "usr", "bin", "esxwatch")
		os.makedirs(os.path.dirname(bin_copy))
		shutil.copyfile(binary, bin_copy)
		subprocess.run(["strip", "--strip-unneeded", "--remove-section=.comment",
				"--remove-section=.note", bin_copy], check=True)
		os.chmod(bin_copy, 0o755)
		put(stage, "etc/esxwatch/agent.yaml", read(os.path.join(LINUX, "agent.yaml")), 0o644)
		put(stage, "lib/systemd/system/esxwatch.service", read(os.path.join(LINUX, "esxwatch.service")), 0o644)
		put(stage, "etc/esxwatch/collector.yaml", read(os.path.join(LINUX, "collector.yaml")), 0o644)
		put(stage, "lib/systemd/system/esxwatch-collector.service",
		    read(os.path.join(LINUX, "esxwatch-collector.service")), 0o644)
		put(stage, "usr/share/esxwatch/rules/esxi.yaml", read(rules), 0o644)
		put(stage, "usr/share/man/man1/esxwatch.1.gz", gz(mkman.generate(binary).encode(), epoch), 0o644)
		put(stage, "usr/share/lintian/overrides/esxwatch", LINTIAN_OVERRIDES.encode(), 0o644)
		put(stage, "usr/share/doc/esxwatch/copyright", read(os.path.join(LINUX, "copyright")), 0o644)
		put(stage, "usr/share/doc/esxwatch/changelog.gz", gz(changelog(version, epoch), epoch), 0o644)

		md5 = []
		size = 0
		for dirpath, dirnames, filenames in os.walk(stage):
			dirnames.sort()
			for fn in sorted(filenames):
				p = os.path.join(dirpath, fn)
				rel = os.path.relpath(p, stage)
				data = read(p)
				size += (len(data) + 1023) // 1024
				md5.append("%s  %s\n" % (hashlib.md5(data).hexdigest(), rel))
		depends = shlib_depends(bin_copy)
		if depends is None:
			print("mkdeb: dpkg-shlibdeps unavailable; using a fixed Depends", file=sys.stderr)
			depends = FALLBACK_DEPENDS
		control = (
			"Package: esxwatch\n"
			"Version: %s\n"
			"Architecture: amd64\n"
			"Maintainer: %s\n"
			"Installed-Size: %d\n"
			"%s"
			"Section: admin\n"
			"Priority: optional\n"
			"Description: monitoring agent for VMware ESXi and Linux hosts\n"
			" esxwatch watches NIC error counters, datastore and disk health, SMART\n"
			" data and the host's logs for known error strings, and ships structured\n"
			" events to VMware Log Insight (Aria Operations for Logs), syslog or any\n"
			" HTTP endpoint, keeping them on disk while the destination is down.\n"
		) % (version, MAINTAINER, size, "Depends: %s\n" % depends if depends else "")
		put(stage, "DEBIAN/control", control.encode(), 0o644)
		put(stage, "DEBIAN/conffiles", b"/etc/esxwatch/agent.yaml\n/etc/esxwatch/collector.yaml\n",
		    0o644)
		put(stage, "DEBIAN/md5sums", "".join(md5).encode(), 0o644)
		put(stage, "DEBIAN/postinst", POSTINST.encode(), 0o755)
		put(stage, "DEBIAN/prerm", PRERM.encode(), 0o755)
		put(stage, "DEBIAN/postrm", POSTRM.encode(), 0o755)
		for dirpath, dirnames, filenames in os.walk(stage):
			os.chmod(dirpath, 0o755)
			for n in dirnames + filenames:
				os.utime(os.path.join(dirpath, n), (epoch, epoch), follow_symlinks=False)
		os.utime(stage, (epoch, epoch))
		os.makedirs(out, exist_ok=True)
		deb = os.path.join(out, "esxwatch_%s_amd64.deb" % version)
		env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch))
		subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", stage, deb + ".tmp"],
			       check=True, env=env, stdout=subprocess.DEVNULL)
		os.replace(deb + ".tmp", deb)
		return deb
	finally:
		shutil.rmtree(stage, ignore_errors=True)


def main(argv):
	ap = argparse.ArgumentParser(description="build the esxwatch .deb")
	ap.add_argument("--bin", required=True)
	ap.add_argument("--version", required=True)
	ap.add_argument("--rules", default=os.path.join(TOP, "collectors", "logwatch", "rules", "esxi.yaml"))
	ap.add_argument("--out", default=os.path.join(TOP, "build"))
	a = ap.parse_args(argv)
	for what, p in (("agent binary", a.bin), ("rules catalogue", a.rules)):
		if not os.path.isfile(p):
			print("mkdeb: %s %s is missing; build it first (make)" % (what, p), file=sys.stderr)
			return 1
	try:
		deb = build(a.bin, a.version, a.out, source_epoch(), a.rules)
	except (OSError, ValueError, subprocess.SubprocessError) as e:
		print("mkdeb: %s" % e, file=sys.stderr)
		return 1
	print("mkdeb: %s" % deb)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
