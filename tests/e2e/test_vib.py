"""The ESXi VIB and offline bundle (make vib, packaging/mkvib.py) and their
verifier (packaging/verify-vib): the real binary is packaged, the output is
read back byte by byte, and deliberately broken copies must fail naming the
broken rule."""
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(harness.TOP, "packaging"))
import mkvib  # noqa: E402

VERIFY = os.path.join(harness.TOP, "packaging", "verify-vib")
MKVIB = os.path.join(harness.TOP, "packaging", "mkvib.py")
RULES = os.path.join(harness.TOP, "collectors", "logwatch", "rules", "esxi.yaml")
EPOCH = 1735689600
GZ_CACHE = {}


def verify(*paths):
	p = subprocess.run([sys.executable, VERIFY] + list(paths), capture_output=True, text=True, timeout=120)
	return p.returncode, p.stdout + p.stderr


def failed_rules(out):
	return sorted(set(re.findall(r"^FAIL \[([a-z0-9-]+)\]", out, re.M)))


def parse_ar(data):
	"""[(name, header, content)], independent of the verifier's parser."""
	assert data[:8] == b"!<arch>\n"
	off, out = 8, []
	while off < len(data):
		h = data[off:off + 60]
		size = int(h[48:58])
		out.append((h[:16].decode().rstrip(), h, data[off + 60:off + 60 + size]))
		off += 60 + size + (size & 1)
	return out


def build(d, **kw):
	"""Run the builder's CLI into d; returns (vib path, bundle path)."""
	env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
	p = subprocess.run([sys.executable, MKVIB, "--bin", harness.BIN, "--version", "0.1.0", "--out", d]
			   + (["--allow-dynamic"] if mkvib.elf_interp(read(harness.BIN)) else [])
			   + kw.get("extra", []), capture_output=True, text=True, timeout=120, env=env)
	harness.eq(p.returncode, 0, "mkvib exit status (%s)" % p.stderr.strip())
	return os.path.join(d, "esxwatch-0.1.0.vib"), os.path.join(d, "esxwatch-0.1.0-offline-bundle.zip")


def assemble(files=None, relationships=mkvib.descriptor_xml.__defaults__[0], order=None, desc_edit=None):
	"""A VIB built from the real payload with one thing changed."""
	files = files if files is not None else mkvib.payload_files(harness.BIN, RULES)
	tar = mkvib.make_tar(files, EPOCH)
	key = hashlib.sha256(tar).digest()
	if key not in GZ_CACHE:		# gzip -9 of the binary is the slow part
		GZ_CACHE[key] = mkvib.gzip_bytes(tar)
	gz = GZ_CACHE[key]
	desc = mkvib.descriptor_xml("0.1.0-1", EPOCH, sorted(files), mkvib.PAYLOAD, len(gz),
				    mkvib.payload_checksums(gz, tar), relationships=relationships)
	if desc_edit:
		desc = desc_edit(desc)
	members = [("descriptor.xml", desc), ("sig.pkcs7", b""), (mkvib.PAYLOAD, gz)]
	if order:
		members = [members[i] for i in order]
	return mkvib.make_ar(members)


def write(d, name, data):
	p = os.path.join(d, name)
	with open(p, "wb") as f:
		f.write(data)
	return p


def expect_only(d, name, data, rules):
	p = write(d, name, data)
	rc, out = verify(p)
	harness.eq(rc, 1, "verify-vib exit status on %s (output: %s)" % (name, out))
	harness.eq(failed_rules(out), sorted(rules), "rules failed by %s (output: %s)" % (name, out))
	for line in out.splitlines():
		if line.startswith("FAIL") and p not in line:
			harness.fail("failure line does not name the file: %r" % line)


def read(path):
	with open(path, "rb") as f:
		return f.read()


def make_vib(*args):
	p = subprocess.run(["make", "-s", "-C", harness.TOP, "vib"] + list(args), capture_output=True, text=True,
			   timeout=300)
	return p.returncode, p.stdout + p.stderr


def test_make_vib(tmpdir):
	# The Makefile target on the real tree: builds and verifies both files.
	# The static ESXi build when it is there (make esxi), else the glibc
	# build, which make vib packages only when told it is a test.
	vib = os.path.join(harness.TOP, "build", "esxwatch-0.1.0.vib")
	bundle = os.path.join(harness.TOP, "build", "esxwatch-0.1.0-offline-bundle.zip")
	static = os.path.join(harness.TOP, "build", "esxi", "esxwatch")
	if os.path.isfile(static):
		harness.eq(mkvib.elf_interp(read(static)), False, "build/esxi/esxwatch is static")
		rc, out = make_vib()
	else:
		print("note: no build/esxi/esxwatch (make esxi); packaging the glibc build as a test")
		rc, out = make_vib("VIB_BIN=" + harness.BIN, "VIB_ALLOW_DYNAMIC=1")
	harness.eq(rc, 0, "make vib (%s)" % out.strip()[-2000:])
	rc, out = verify(vib, bundle)
	harness.eq(rc, 0, "verify-vib on make vib's output (%s)" % out)
	if "OK" not in out:
		harness.fail("verify-vib printed no OK line: %s" % out)
	with tarfile.open(fileobj=io.BytesIO(gzip.decompress(parse_ar(read(vib))[2][2]))) as t:
		packaged = t.extractfile("opt/esxwatch/bin/esxwatch").read()
	harness.eq(packaged, read(static if os.path.isfile(static) else harness.BIN), "the binary make vib packaged")


def test_make_vib_refuses_a_dynamic_binary(tmpdir):
	# A glibc build in a VIB fails on ESXi as "invalid configuration" (no
	# libcurl/libyaml there): make vib must refuse it, and write nothing.
	# The glibc build: the binary under test, or build/esxwatch when the
	# suite runs with ESXWATCH_BIN pointing at the static build.
	dyn = harness.BIN if mkvib.elf_interp(read(harness.BIN)) else os.path.join(harness.TOP, "build", "esxwatch")
	harness.eq(mkvib.elf_interp(read(dyn)), True, "%s is dynamically linked" % dyn)
	out_dir = os.path.join(tmpdir, "out")
	env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
	p = subprocess.run([sys.executable, MKVIB, "--bin", dyn, "--version", "0.1.0", "--out", out_dir],
			   capture_output=True, text=True, timeout=120, env=env)
	harness.eq(p.returncode, 1, "mkvib on a dynamic binary (%s)" % p.stderr.strip())
	if "dynamically linked" not in p.stderr or "VIB_ALLOW_DYNAMIC=1" not in p.stderr:
		harness.fail("unclear refusal: %r" % p.stderr)
	if os.path.exists(out_dir) and os.listdir(out_dir):
		harness.fail("files written anyway: %s" % os.listdir(out_dir))
	vib = os.path.join(harness.TOP, "build", "esxwatch-0.1.0.vib")
	before = os.stat(vib).st_mtime_ns if os.path.exists(vib) else None
	rc, out = make_vib("VIB_BIN=" + dyn)
	harness.eq(rc != 0, True, "make vib with a dynamic VIB_BIN exit status (%s)" % out.strip()[-500:])
	if "dynamically linked" not in out:
		harness.fail("make vib's refusal does not say why: %s" % out.strip()[-500:])
	harness.eq(os.stat(vib).st_mtime_ns if os.path.exists(vib) else None, before, "build/esxwatch-0.1.0.vib touched")
	# The static-binary case of the same check: a copy of the binary with its
	# PT_INTERP header turned into PT_NULL is accepted without the override.
	data = bytearray(read(dyn))
	phoff = int.from_bytes(data[32:40], "little")
	size, num = int.from_bytes(data[54:56], "little"), int.from_bytes(data[56:58], "little")
	for i in range(num):
		o = phoff + i * size
		if int.from_bytes(data[o:o + 4], "little") == 3:
			data[o:o + 4] = b"\0\0\0\0"
	fake = os.path.join(tmpdir, "esxwatch-static")
	with open(fake, "wb") as f:
		f.write(data)
	p = subprocess.run([sys.executable, MKVIB, "--bin", fake, "--version", "0.1.0", "--out", out_dir],
			   capture_output=True, text=True, timeout=120, env=env)
	harness.eq(p.returncode, 0, "mkvib on a binary without PT_INTERP (%s)" % p.stderr.strip())


def test_vib_layout(tmpdir):
	vib_path, bundle_path = build(tmpdir)
	rc, out = verify(vib_path, bundle_path)
	harness.eq(rc, 0, "verify-vib (%s)" % out)
	with open(vib_path, "rb") as f:
		vib = f.read()
	members = parse_ar(vib)
	harness.eq([m[0] for m in members], ["descriptor.xml", "sig.pkcs7", "esxwatch"], "ar members")
	for name, h, content in members:
		# Byte-for-byte VIB Author: name space-padded, no '/', zeros.
		want = name.ljust(16) + "0".ljust(12) + "0".ljust(6) + "0".ljust(6) + "0".ljust(8) + \
		    str(len(content)).ljust(10) + "`\n"
		harness.eq(h, want.encode(), "ar header of %s" % name)
	harness.eq(members[1][2], b"", "sig.pkcs7")
	desc = ET.fromstring(members[0][2])
	harness.eq(desc.get("version"), "5.0", "vib version")
	# The element order VIB Author writes.
	harness.eq([c.tag for c in desc],
		   ["type", "name", "version", "vendor", "summary", "description", "release-date", "urls",
		    "relationships", "software-tags", "system-requires", "file-list", "acceptance-level",
		    "live-install-allowed", "live-remove-allowed", "cimom-restart", "stateless-ready",
		    "overlay", "payloads"], "descriptor element order")
	for tag, want in (("type", "bootbank"), ("name", "esxwatch"), ("vendor", "esxwatch"),
			  ("version", "0.1.0-1"), ("acceptance-level", "community"),
			  ("live-install-allowed", "true"), ("live-remove-allowed", "true"),
			  ("stateless-ready", "true"), ("overlay", "false")):
		harness.eq(desc.findtext(tag), want, "<%s>" % tag)
	# The licence is named where esxcli software vib get shows it.
	if "Licence: Apache-2.0" not in desc.findtext("description"):
		harness.fail("<description> does not name Apache-2.0: %r" % desc.findtext("description"))
	if len(desc.findtext("summary")) > 80:
		harness.fail("summary longer than 80")
	harness.eq([c.tag for c in desc.find("relationships")],
		   ["depends", "conflicts", "replaces", "provides", "compatibleWith"], "relationships")
	gz = members[2][2]
	pl = desc.find("payloads/payload")
	harness.eq((pl.get("name"), pl.get("type"), pl.get("size")), ("esxwatch", "tgz", str(len(gz))), "payload")
	# gzip -n: no name, mtime 0.
	harness.eq(gz[3] & 0x08, 0, "gzip FNAME flag")
	harness.eq(gz[4:8], b"\0\0\0\0", "gzip mtime")
	tar = gzip.decompress(gz)
	harness.eq([(c.get("checksum-type"), c.get("verify-process"), c.text) for c in pl.findall("checksum")],
		   [("sha-256", "gunzip", hashlib.sha256(tar).hexdigest()),
		    ("sha-256", None, hashlib.sha256(gz).hexdigest()),
		    ("sha-1", "gunzip", hashlib.sha1(tar).hexdigest())], "checksums")
	harness.eq([f.text for f in desc.findall("file-list/file")],
		   ["etc/init.d/esxwatch", "etc/vmware/firewall/esxwatch.xml", "etc/vmware/service/esxwatch.xml",
		    "opt/esxwatch/bin/esxwatch", "opt/esxwatch/etc/agent.yaml",
		    "opt/esxwatch/share/LICENSE", "opt/esxwatch/share/rules/esxi.yaml",
		    "usr/lib/vmware/hostd/extensions/esxwatch/locale/en/option.vmsg"], "file-list")
	# The payload carries the real binary and rules, unchanged.
	import tarfile
	with tarfile.open(fileobj=io.BytesIO(tar)) as t:
		names = t.getnames()
		with open(harness.BIN, "rb") as f:
			harness.eq(t.extractfile("opt/esxwatch/bin/esxwatch").read(), f.read(), "packaged binary")
		with open(RULES, "rb") as f:
			harness.eq(t.extractfile("opt/esxwatch/share/rules/esxi.yaml").read(), f.read(), "packaged rules")
		with open(os.path.join(harness.TOP, "LICENSE"), "rb") as f:
			harness.eq(t.extractfile("opt/esxwatch/share/LICENSE").read(), f.read(), "packaged LICENSE")
		for m in t.getmembers():
			harness.eq((m.uid, m.gid, m.uname, m.gname, m.mtime), (0, 0, "root", "root", EPOCH), m.name)
		harness.eq(t.getmember("opt/esxwatch/bin/esxwatch").mode, 0o755, "binary mode")
		harness.eq(t.getmember("etc/init.d/esxwatch").mode, 0o755, "init script mode")
	harness.eq(names[:3], ["etc", "etc/init.d", "etc/init.d/esxwatch"], "directories listed explicitly")
	# GNU-compatible: GNU tar writes the very same bytes from the same tree.
	if shutil.which("tar"):
		stage = os.path.join(tmpdir, "stage")
		os.makedirs(stage)
		subprocess.run(["tar", "-C", stage, "-xf", "-"], input=tar, check=True)
		p = subprocess.run(["tar", "-C", stage, "--format=gnu", "--sort=name", "--mtime=@%d" % EPOCH,
				    "--owner=root:0", "--group=root:0", "-cf", "-", "etc", "opt", "usr"],
				   capture_output=True, check=True)
		if p.stdout != tar:
			harness.fail("payload differs from GNU tar's archive of the same tree")
	# The packaged default config is valid for the real agent.
	cfg = os.path.join(tmpdir, "agent.yaml")
	with tarfile.open(fileobj=io.BytesIO(tar)) as t, open(cfg, "wb") as f:
		f.write(t.extractfile("opt/esxwatch/etc/agent.yaml").read())
	p = subprocess.run([harness.BIN, "--check-config", "-c", cfg], capture_output=True, text=True, timeout=30)
	harness.eq(p.returncode, 0, "--check-config of the ESXi default (%s)" % p.stderr)
	fw = ET.fromstring(t_read(tar, "etc/vmware/firewall/esxwatch.xml"))
	harness.eq(sorted((r.findtext("direction"), r.findtext("protocol"), r.findtext("port"))
			  for r in fw.iter("rule")),
		   sorted([("outbound", "tcp", p) for p in ("9000", "9543", "514", "6514")] +
			  [("outbound", "udp", "514")]), "firewall rules")
	harness.eq(fw.findtext("service/enabled"), "true", "ruleset enabled")


def t_read(tar, name):
	import tarfile
	with tarfile.open(fileobj=io.BytesIO(tar)) as t:
		return t.extractfile(name).read()


def test_bundle_layout(tmpdir):
	vib_path, bundle_path = build(tmpdir)
	with open(vib_path, "rb") as f:
		vib = f.read()
	z = zipfile.ZipFile(bundle_path)
	names = sorted(z.namelist())
	rel = "vib20/esxwatch/esxwatch_bootbank_esxwatch_0.1.0-1.vib"
	harness.eq(names, sorted(["index.xml", "vendor-index.xml", "metadata.zip", rel]), "bundle members")
	harness.eq(z.read(rel), vib, "VIB inside the bundle")
	vi = ET.fromstring(z.read("vendor-index.xml"))
	harness.eq([m.findtext("version") for m in vi.findall("metadata")], ["6.*", "7.*", "8.*", "9.*"],
		   "vendor-index versions")
	meta = zipfile.ZipFile(io.BytesIO(z.read("metadata.zip")))
	vm = ET.fromstring(meta.read("vmware.xml"))
	b = vm.find("bulletin")
	plat = [(p.get("productLineID"), p.get("version")) for p in b.findall("platforms/softwarePlatform")]
	harness.eq(plat, [("embeddedEsx", m) for m in ("6.*", "7.*", "8.*", "9.*")], "bulletin platforms")
	harness.eq([(p.get("productLineID"), p.get("version")) for p in b.findall("vibList/vib/systemReqs/swPlatform")],
		   plat, "vib systemReqs swPlatform")
	harness.eq((b.find("componentNameSpec").get("name"), b.find("componentVersionSpec").get("version")),
		   ("esxwatch", "0.1.0-1"), "component specs")
	v = b.find("vibList/vib")
	harness.eq((v.findtext("vibFile/relativePath"), v.findtext("vibFile/packedSize"),
		    v.findtext("vibFile/checksum/checksum")),
		   (rel, str(len(vib)), hashlib.sha256(vib).hexdigest()), "vibFile")
	vx = [n for n in meta.namelist() if n.startswith("vibs/")]
	d = ET.fromstring(meta.read(vx[0]))
	harness.eq((d.findtext("relative-path"), d.findtext("packed-size"), d.findtext("checksum")),
		   (rel, str(len(vib)), hashlib.sha256(vib).hexdigest()), "vibs/*.xml")
	if not any(n.startswith("bulletins/") for n in meta.namelist()):
		harness.fail("no bulletins/ in metadata.zip")
	# Deterministic: a second build is byte-identical.
	d2 = os.path.join(tmpdir, "again")
	vib2, bundle2 = build(d2)
	for a, b2 in ((vib_path, vib2), (bundle_path, bundle2)):
		with open(a, "rb") as f1, open(b2, "rb") as f2:
			if f1.read() != f2.read():
				harness.fail("%s is not reproducible" % os.path.basename(a))


def test_missing_rules_fail_clearly(tmpdir):
	env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
	p = subprocess.run([sys.executable, MKVIB, "--bin", harness.BIN, "--version", "0.1.0", "--out", tmpdir,
			    "--rules", os.path.join(tmpdir, "nope.yaml")], capture_output=True, text=True, env=env)
	harness.eq(p.returncode, 1, "mkvib without the rules catalogue")
	if "rules catalogue" not in p.stderr or "nope.yaml" not in p.stderr:
		harness.fail("unclear error: %r" % p.stderr)
	if os.path.exists(os.path.join(tmpdir, "esxwatch-0.1.0.vib")):
		harness.fail("a VIB was written anyway")


def test_broken_vibs_fail_naming_the_rule(tmpdir):
	# The unbroken assembly passes, so each failure below is the mutation's.
	ok = write(tmpdir, "ok.vib", assemble())
	rc, out = verify(ok)
	harness.eq(rc, 0, "verify-vib on the reference assembly (%s)" % out)
	expect_only(tmpdir, "order.vib", assemble(order=[1, 0, 2]), ["ar-member-order"])
	expect_only(tmpdir, "relationships.vib",
		    assemble(relationships=("depends", "replaces", "provides", "compatibleWith")),
		    ["descriptor-relationships"])
	files = mkvib.payload_files(harness.BIN, RULES)
	files["usr/bin/esxwatch"] = (0o755, b"#!/bin/sh\n")
	expect_only(tmpdir, "path.vib", assemble(files=files), ["community-paths"])
	# The Host Client entry names an init script the VIB does not have.
	files = mkvib.payload_files(harness.BIN, RULES)
	mode, data = files["etc/vmware/service/esxwatch.xml"]
	files["etc/vmware/service/esxwatch.xml"] = (mode, data.replace(
		b"<initfilename>esxwatch<", b"<initfilename>esxwatchd<"))
	expect_only(tmpdir, "service.vib", assemble(files=files), ["service-xml"])
	# A /UserVars setting without its Host Client label.
	files = mkvib.payload_files(harness.BIN, RULES)
	mode, data = files[mkvib.OPTION_VMSG]
	files[mkvib.OPTION_VMSG] = (mode, re.sub(rb"(?m)^.*EsxwatchServerPort\.label.*\n", b"", data))
	expect_only(tmpdir, "vmsg.vib", assemble(files=files), ["option-vmsg"])
	# Every setting the init script creates has its label and summary, the
	# second round's too.
	init = mkvib.payload_files(harness.BIN, RULES)["etc/init.d/esxwatch"][1]
	for name in ("EsxwatchServerTrust", "EsxwatchServerCa", "EsxwatchServerTransport", "EsxwatchTags"):
		if ("=%s\n" % name).encode() not in init:
			harness.fail("the init script does not define /UserVars/%s" % name)
		files = mkvib.payload_files(harness.BIN, RULES)
		mode, data = files[mkvib.OPTION_VMSG]
		files[mkvib.OPTION_VMSG] = (mode, re.sub(rb"(?m)^.*\." + name.encode() + rb"\.summary.*\n", b"", data))
		expect_only(tmpdir, "vmsg-%s.vib" % name, assemble(files=files), ["option-vmsg"])

	def bad_sum(desc):
		m = re.search(rb'<checksum checksum-type="sha-256">([0-9a-f]{64})</checksum>', desc)
		return desc.replace(m.group(1), b"0" * 64)
	expect_only(tmpdir, "checksum.vib", assemble(desc_edit=bad_sum), ["payload-checksum"])
	# The plain sha-256 before the gunzip one (ghettoVCB's and w2c's order):
	# hosts before 8.0 refuse it, and the verifier says so in a rule of
	# its own, also when the sha-1 moves too.
	expect_only(tmpdir, "order-sums.vib", assemble(desc_edit=lambda d: re.sub(
		rb'(<checksum checksum-type="sha-256" verify-process="gunzip">[0-9a-f]+</checksum>)'
		rb'(<checksum checksum-type="sha-256">[0-9a-f]+</checksum>)', rb"\2\1", d)),
		["payload-checksum-order", "payload-sha256-last"])
	expect_only(tmpdir, "order-sha1-first.vib", assemble(desc_edit=lambda d: re.sub(
		rb'(<checksum checksum-type="sha-256" verify-process="gunzip">[0-9a-f]+</checksum>)'
		rb'(<checksum checksum-type="sha-256">[0-9a-f]+</checksum>)'
		rb'(<checksum checksum-type="sha-1" verify-process="gunzip">[0-9a-f]+</checksum>)', rb"\3\2\1", d)),
		["payload-checksum-order", "payload-sha256-last"])
	p = write(tmpdir, "order-why.vib", assemble(desc_edit=lambda d: re.sub(
		rb'(<checksum checksum-type="sha-256" verify-process="gunzip">[0-9a-f]+</checksum>)'
		rb'(<checksum checksum-type="sha-256">[0-9a-f]+</checksum>)', rb"\2\1", d)))
	out = verify(p)[1]
	if not any("payload-sha256-last" in l and "before ESXi 8.0" in l for l in out.splitlines()):
		harness.fail("payload-sha256-last does not say why: %s" % out)
	# Only the sha-1 out of place: no harm to old hosts, the order rule only.
	expect_only(tmpdir, "order-sha1.vib", assemble(desc_edit=lambda d: re.sub(
		rb'(<checksum checksum-type="sha-256" verify-process="gunzip">[0-9a-f]+</checksum>)'
		rb'(<checksum checksum-type="sha-256">[0-9a-f]+</checksum>)'
		rb'(<checksum checksum-type="sha-1" verify-process="gunzip">[0-9a-f]+</checksum>)', rb"\3\1\2", d)),
		["payload-checksum-order"])
	expect_only(tmpdir, "level.vib", assemble(desc_edit=lambda d: d.replace(
		b"<acceptance-level>community<", b"<acceptance-level>partner<")), ["descriptor-acceptance-level"])
	expect_only(tmpdir, "version.vib", assemble(desc_edit=lambda d: d.replace(
		b"<version>0.1.0-1</version>", b"<version>0.1.0</version>")), ["descriptor-version"])
	# The descriptor's elements out of VIB Author's order.
	expect_only(tmpdir, "elemorder.vib", assemble(desc_edit=lambda d: d.replace(
		b"<acceptance-level>community</acceptance-level>", b"").replace(
		b"<type>bootbank</type>", b"<type>bootbank</type><acceptance-level>community</acceptance-level>")),
		["descriptor-element-order"])
	expect_only(tmpdir, "date.vib", assemble(desc_edit=lambda d: re.sub(
		rb"<release-date>[^<]*<", b"<release-date>2025-01-01 00:00:00<", d)), ["descriptor-release-date"])
	expect_only(tmpdir, "nolicence.vib", assemble(desc_edit=lambda d: d.replace(b"Apache-2.0", b"MIT")),
		    ["licence"])
	files = mkvib.payload_files(harness.BIN, RULES)
	files["opt/esxwatch/share/LICENSE"] = (0o644, b"All rights reserved.\n")
	expect_only(tmpdir, "licencetext.vib", assemble(files=files), ["licence"])
	expect_only(tmpdir, "cimom.vib", assemble(desc_edit=lambda d: d.replace(
		b"<cimom-restart>false<", b"<cimom-restart>true<")), ["descriptor-cimom-restart"])
	# GNU ar's own headers ("name/", mode 644) are not what VIB Author writes.
	gnu = bytearray(assemble())
	gnu[8:8 + 16] = b"descriptor.xml/ "
	expect_only(tmpdir, "gnuar.vib", bytes(gnu), ["ar-header"])
	# Missing file-list entry.
	expect_only(tmpdir, "filelist.vib", assemble(desc_edit=lambda d: d.replace(
		b"<file>opt/esxwatch/etc/agent.yaml</file>", b"")), ["file-list"])
	# A 32-bit binary.
	files = mkvib.payload_files(harness.BIN, RULES)
	mode, data = files["opt/esxwatch/bin/esxwatch"]
	files["opt/esxwatch/bin/esxwatch"] = (mode, data[:4] + b"\x01" + data[5:])
	expect_only(tmpdir, "elf32.vib", assemble(files=files), ["binary-elf64"])
	# The payload changed after the descriptor was written.
	members = parse_ar(assemble())
	gz = members[2][2]
	tampered = mkvib.gzip_bytes(gzip.decompress(gz) + b"\0" * 512)
	expect_only(tmpdir, "payload.vib", mkvib.make_ar([(m[0], m[2]) for m in members[:2]] +
							  [(members[2][0], tampered)]),
		    ["payload-checksum", "payload-size"])


def rezip(data, edit):
	"""A copy of a zip with edit(name, bytes) -> bytes applied to each member."""
	src = zipfile.ZipFile(io.BytesIO(data))
	buf = io.BytesIO()
	with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
		for n in src.namelist():
			out.writestr(n, edit(n, src.read(n)))
	return buf.getvalue()


def test_broken_bundles_fail_naming_the_rule(tmpdir):
	_, bundle_path = build(tmpdir)
	with open(bundle_path, "rb") as f:
		bundle = f.read()

	def meta_edit(fn):
		return lambda n, b: rezip(b, fn) if n == "metadata.zip" else b
	expect_only(tmpdir, "size.zip", rezip(bundle, meta_edit(
		lambda n, b: re.sub(rb"<packedSize>\d+<", b"<packedSize>1<", b) if n == "vmware.xml" else b)),
		["bundle-vib-size"])
	expect_only(tmpdir, "sum.zip", rezip(bundle, meta_edit(
		lambda n, b: re.sub(rb'(</packed-size><checksum checksum-type="sha-256">)[0-9a-f]{64}<',
				    rb"\1" + b"f" * 64 + b"<", b)
		if n.startswith("vibs/") else b)), ["bundle-vib-checksum"])
	# vmware.xml's vib without the platforms VIB Author lists in systemReqs.
	expect_only(tmpdir, "swplatform.zip", rezip(bundle, meta_edit(
		lambda n, b: re.sub(rb"<swPlatform [^>]*/>", b"", b) if n == "vmware.xml" else b)),
		["bundle-platforms"])
	expect_only(tmpdir, "platform9.zip", rezip(bundle, meta_edit(
		lambda n, b: b.replace(b'<softwarePlatform locale="" version="9.*" productLineID="embeddedEsx"/>', b"")
		if n.startswith("bulletins/") else b)), ["bundle-platforms"])
	expect_only(tmpdir, "component.zip", rezip(bundle, meta_edit(
		lambda n, b: re.sub(rb"<componentNameSpec[^>]*/>", b"", b) if n == "vmware.xml" else b)),
		["bundle-component-spec"])
	# A broken VIB inside the bundle is reported too.
	expect_only(tmpdir, "inner.zip", rezip(bundle, lambda n, b: assemble(order=[1, 0, 2])
					       if n.endswith(".vib") else b),
		    ["ar-member-order", "bundle-vib-checksum"])
	rc, out = verify(write(tmpdir, "junk.vib", b"hello"))
	harness.eq((rc, failed_rules(out)), (1, ["file-kind"]), "verify-vib on junk (%s)" % out)


harness.main(globals())
