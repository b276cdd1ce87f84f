#!/usr/bin/env python3
"""Build the esxwatch ESXi VIB and its offline bundle without VMware's VIB Author.

    mkvib.py --bin build/esxwatch --version 0.1.0 --out build

writes build/esxwatch-<version>.vib and build/esxwatch-<version>-offline-bundle.zip.

Every byte is written here, from the standard library only, so the output is
the same on every machine (the reason for each choice is in the comments
below):

  payload    GNU-format tar (what `tar czf` writes and what every working
             community VIB ships; ESXi turns it into a vmtar tardisk on
             install), every directory listed on its own, paths relative to
             /, uid/gid 0 "root", sorted, one fixed mtime; gzip'd with no
             file name and mtime 0 in the header (`gzip -9 -n`).
  descriptor vib version 5.0, the element order VIB Author emits, and the
             three payload checksums in NutClient-ESXi's order: sha-256 of
             the gunzip'd tar, sha-256 of the gzip as stored, sha-1 of the
             tar (see payload_checksums for why this order and no other).
  ar         the 60-byte headers exactly as VIB Author writes them: names
             space-padded without GNU's '/', mtime/uid/gid/mode all "0".
  bundle     index.xml, vendor-index.xml, metadata.zip (vmware.xml with the
             bulletin and component name/version specs, bulletins/, vibs/),
             vib20/<name>/<vibID>.vib.

The fixed time is SOURCE_DATE_EPOCH when set, else the time of the last git
commit, else a constant: building the same tree twice gives identical files.

The functions are importable: the tests build deliberately broken VIBs with
them to check that packaging/verify-vib catches each broken rule.
"""
import argparse
import hashlib
import io
import os
import subprocess
import sys
import time
import zipfile
import zlib
from xml.sax.saxutils import escape, quoteattr

NAME = "esxwatch"
VENDOR = "esxwatch"
PAYLOAD = "esxwatch"		# payload (and ar member) name: <= 8 chars, 8.3-safe
RELEASE = "1"			# VIB version = <VERSION>-<RELEASE>
SUMMARY = "esxwatch: NIC, storage, vSAN, SMART and log monitoring agent"
DESCRIPTION = ("esxwatch watches NIC error counters, datastore paths (APD/PDL), vSAN "
	       "disk eligibility, SMART health and the host's logs for known error "
	       "strings, and ships structured events to VMware Log Insight, syslog "
	       "or HTTP.  Licence: Apache-2.0 (/opt/esxwatch/share/LICENSE).")
ESXI_MAJORS = ("6", "7", "8", "9")	# vendor-index / platforms: ESXi 6.7 - 9.x

OPTION_VMSG = "usr/lib/vmware/hostd/extensions/esxwatch/locale/en/option.vmsg"

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


# --- tar ---------------------------------------------------------------

def _octal(value, width):
	"""A numeric tar field the way GNU tar writes it: zero-padded octal
	digits and a NUL, width bytes in all."""
	s = "%0*o" % (width - 1, value)
	if len(s) > width - 1:
		raise ValueError("value %d does not fit a %d-byte tar field" % (value, width))
	return s.encode("ascii") + b"\0"


def _field(text, width):
	b = text.encode("utf-8")
	if len(b) > width:
		raise ValueError("%r longer than %d bytes" % (text, width))
	return b + b"\0" * (width - len(b))


def tar_header(path, mode, size, mtime, is_dir):
	"""One 512-byte header in GNU tar's default ("gnu") format: magic
	"ustar  \\0", uid/gid 0, uname/gname root, no device numbers.  Paths are
	kept under 100 bytes (the name field; the VIB file-list allows 99), so
	no GNU long-name records are ever needed."""
	if len(path.encode("utf-8")) >= 100:
		raise ValueError("tar path too long (>= 100 bytes): " + path)
	h = bytearray()
	h += _field(path, 100)
	h += _octal(mode, 8)
	h += _octal(0, 8)			# uid
	h += _octal(0, 8)			# gid
	h += _octal(size, 12)
	h += _octal(mtime, 12)
	h += b" " * 8				# checksum, filled below
	h += b"5" if is_dir else b"0"		# typeflag
	h += b"\0" * 100			# linkname
	h += b"ustar  \0"			# GNU magic + version
	h += _field("root", 32)			# uname
	h += _field("root", 32)			# gname
	h += b"\0" * 8 + b"\0" * 8		# devmajor, devminor (unused)
	h += b"\0" * 155			# prefix (unused in gnu format)
	h += b"\0" * 12
	assert len(h) == 512
	csum = sum(h)
	h[148:156] = ("%06o" % csum).encode("ascii") + b"\0 "
	return bytes(h)


def make_tar(files, mtime):
	"""files: {relative path: (mode, bytes)} of regular files.  Every parent
	directory is added as its own entry (mode 0755) and everything is sorted
	by path, so the archive is the same whatever order the caller used.
	Padded to GNU tar's 10240-byte record like `tar cf`."""
	entries = {}
	for path, (mode, data) in files.items():
		if path.startswith("/") or ".." in path.split("/") or path.endswith("/"):
			raise ValueError("bad payload path: " + path)
		entries[path] = (mode, data)
		parts = path.split("/")[:-1]
		for i in range(1, len(parts) + 1):
			entries.setdefault("/".join(parts[:i]) + "/", (0o755, None))
	out = bytearray()
	for path in sorted(entries):
		mode, data = entries[path]
		if data is None:
			out += tar_header(path, mode, 0, mtime, True)
		else:
			out += tar_header(path, mode, len(data), mtime, False)
			out += data
			if len(data) % 512:
				out += b"\0" * (512 - len(data) % 512)
	out += b"\0" * 1024			# end of archive: two zero blocks
	if len(out) % 10240:
		out += b"\0" * (10240 - len(out) % 10240)
	return bytes(out)


# --- gzip --------------------------------------------------------------

def gzip_bytes(data):
	"""gzip -9 -n: no FNAME, mtime 0, OS = Unix; deterministic."""
	c = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
	body = c.compress(data) + c.flush()
	header = b"\x1f\x8b\x08\x00" + b"\0\0\0\0" + b"\x02\x03"
	trailer = (zlib.crc32(data) & 0xffffffff).to_bytes(4, "little") + \
	    (len(data) & 0xffffffff).to_bytes(4, "little")
	return header + body + trailer


# --- ar ----------------------------------------------------------------

def ar_header(name, size):
	"""60 bytes exactly as VIB Author writes them (ghettovcb-2020-ar-headers.txt)."""
	if len(name) > 15 or "/" in name or " " in name:
		raise ValueError("bad ar member name: " + name)
	h = "%-16s%-12s%-6s%-6s%-8s%-10d`\n" % (name, "0", "0", "0", "0", size)
	return h.encode("ascii")


def make_ar(members):
	"""members: [(name, bytes)] in order."""
	out = bytearray(b"!<arch>\n")
	for name, data in members:
		out += ar_header(name, len(data))
		out += data
		if len(data) % 2:
			out += b"\n"
	return bytes(out)


# --- descriptor --------------------------------------------------------

def release_date(epoch):
	return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch))


def payload_checksums(gz, tar):
	"""The three checksums: sha-256 of the gunzipped payload, sha-256 of the
	payload as stored, sha-1 of the gunzipped payload -- in this order.

	ESXi 8 refuses a payload without the gunzip sha-256.  Hosts before 8.0
	appear to keep the *last* sha-256 element whatever its verify-process
	and check it against the stored (gzip) stream: VIBs that put the plain
	sha-256 first and the gunzip one after it (ghettoVCB's 8.x build,
	w2c/letsencrypt-esxi 1.1.0) fail there with "Calculated digest at EOF
	does not match expected result" (lamw/ghettoVCB#311 on 5.5, 6.x and
	7.x; w2c/letsencrypt-esxi#10 and #44 on 6.5), while NutClient-ESXi,
	gunzip sha-256 first since 2022, is published for ESXi 5.0 to 9.0
	with that order.  So the plain sha-256
	must come after the gunzip one; packaging/verify-vib refuses the other
	order (rule payload-sha256-last)."""
	return [("sha-256", "gunzip", hashlib.sha256(tar).hexdigest()),
		("sha-256", None, hashlib.sha256(gz).hexdigest()),
		("sha-1", "gunzip", hashlib.sha1(tar).hexdigest())]


def descriptor_xml(version, epoch, file_list, payload_name, payload_size, checksums,
		   relationships=("depends", "conflicts", "replaces", "provides", "compatibleWith"),
		   extra=""):
	"""descriptor.xml on one line, elements in VIB Author's order.  extra is
	inserted after <software-tags/> (the depot's vibs/*.xml adds
	relative-path, packed-size and checksum there, as VIB Author does)."""
	x = ['<vib version="5.0">',
	     "<type>bootbank</type>",
	     "<name>%s</name>" % escape(NAME),
	     "<version>%s</version>" % escape(version),
	     "<vendor>%s</vendor>" % escape(VENDOR),
	     "<summary>%s</summary>" % escape(SUMMARY),
	     "<description>%s</description>" % escape(DESCRIPTION),
	     "<release-date>%s</release-date>" % release_date(epoch),
	     "<urls/>",
	     "<relationships>" + "".join("<%s/>" % r for r in relationships) + "</relationships>",
	     "<software-tags/>",
	     extra,
	     "<system-requires><maintenance-mode>false</maintenance-mode></system-requires>",
	     "<file-list>" + "".join("<file>%s</file>" % escape(f) for f in file_list) + "</file-list>",
	     "<acceptance-level>community</acceptance-level>",
	     "<live-install-allowed>true</live-install-allowed>",
	     "<live-remove-allowed>true</live-remove-allowed>",
	     "<cimom-restart>false</cimom-restart>",
	     "<stateless-ready>true</stateless-ready>",
	     "<overlay>false</overlay>",
	     "<payloads><payload name=%s type=\"tgz\" size=\"%d\">" % (quoteattr(payload_name), payload_size)]
	for ctype, vp, value in checksums:
		attrs = "checksum-type=%s" % quoteattr(ctype)
		if vp:
			attrs += " verify-process=%s" % quoteattr(vp)
		x.append("<checksum %s>%s</checksum>" % (attrs, value))
	x.append("</payload></payloads></vib>")
	return "".join(x).encode("utf-8")


# --- the VIB -------------------------------------------------------------

def read(path):
	with open(path, "rb") as f:
		return f.read()


def payload_files(bin_path, rules_path):
	"""{path in the payload: (mode, bytes)}.  Only community-allowed places:
	opt/esxwatch/..., etc/vmware/firewall, etc/vmware/service, usr/lib/vmware
	(the Host Client's labels for the /UserVars/Esxwatch* settings: ESXi 8
	shows none without them), and the init script in etc/init.d
	(partner-only in the 2012 schema, accepted on community VIBs in
	practice)."""
	esxi = os.path.join(HERE, "esxi")
	return {
		"opt/esxwatch/bin/esxwatch": (0o755, read(bin_path)),
		"opt/esxwatch/etc/agent.yaml": (0o644, read(os.path.join(esxi, "agent.yaml"))),
		"opt/esxwatch/share/rules/esxi.yaml": (0o644, read(rules_path)),
		"opt/esxwatch/share/LICENSE": (0o644, read(os.path.join(TOP, "LICENSE"))),
		"etc/init.d/esxwatch": (0o755, read(os.path.join(esxi, "esxwatch.init"))),
		"etc/vmware/firewall/esxwatch.xml": (0o644, read(os.path.join(esxi, "firewall.xml"))),
		"etc/vmware/service/esxwatch.xml": (0o644, read(os.path.join(esxi, "service.xml"))),
		OPTION_VMSG: (0o644, read(os.path.join(esxi, "option.vmsg"))),
	}


def elf_interp(data):
	"""True when data is an ELF with a PT_INTERP header (dynamically
	linked: it needs the host's ld.so and libraries, which ESXi lacks)."""
	if data[:4] != b"\x7fELF" or data[4] != 2 or len(data) < 64:
		return False
	phoff = int.from_bytes(data[32:40], "little")
	size, num = int.from_bytes(data[54:56], "little"), int.from_bytes(data[56:58], "little")
	return any(int.from_bytes(data[phoff + i * size:phoff + i * size + 4], "little") == 3
		   for i in range(num))


def build_vib(files, version, epoch):
	"""Returns (vib bytes, descriptor arguments for the depot's copy)."""
	tar = make_tar(files, epoch)
	gz = gzip_bytes(tar)
	dargs = (version, epoch, sorted(files), PAYLOAD, len(gz), payload_checksums(gz, tar))
	desc = descriptor_xml(*dargs)
	vib = make_ar([("descriptor.xml", desc), ("sig.pkcs7", b""), (PAYLOAD, gz)])
	return vib, dargs


# --- the offline bundle ------------------------------------------------

def vib_id(version):
	return "%s_bootbank_%s_%s" % (VENDOR, NAME, version)


def index_xml():
	return ("<vendorList>\n  <vendor>\n    <name>%s</name>\n    <code>%s</code>\n"
		"    <indexfile>vendor-index.xml</indexfile>\n    <patchUrl></patchUrl>\n"
		"    <relativePath></relativePath>\n    <content>\n      <name>VMware ESX</name>\n"
		"      <type>http://www.vmware.com/depotmanagement/esx</type>\n    </content>\n"
		"  </vendor>\n</vendorList>\n" % (VENDOR, VENDOR)).encode()


def vendor_index_xml(metadata_name):
	x = "<metaList>\n"
	for major in ESXI_MAJORS:
		x += ("  <metadata>\n    <productId>embeddedEsx</productId>\n    <version>%s.*</version>\n"
		      "    <locale></locale>\n    <url>%s</url>\n    <channelName>default</channelName>\n"
		      "  </metadata>\n" % (major, metadata_name))
	return (x + "</metaList>\n").encode()


def platforms(tag):
	"""One <tag locale="" version="N.*" productLineID="embeddedEsx"/> per
	supported major: the bulletin's <platforms> and, as VIB Author writes
	it, the vib's <systemReqs> in vmware.xml."""
	return "".join('<%s locale="" version="%s.*" productLineID="embeddedEsx"/>' % (tag, m)
		       for m in ESXI_MAJORS)


def bulletin_id(version):
	return "%s_%s" % (NAME, version)


def bulletin_head(version, epoch):
	return ("<id>%s</id><vendor>%s</vendor><summary>%s</summary><severity>general</severity>"
		"<category>enhancement</category><urgency>moderate</urgency>"
		"<releaseType>extension</releaseType><description>%s</description>"
		"<kbUrl></kbUrl><contact></contact>"
		"<componentNameSpec uiString=%s name=%s/>"
		"<componentVersionSpec uiString=%s version=%s/>"
		"<releaseDate>%s</releaseDate><platforms>%s</platforms>" % (
			bulletin_id(version), VENDOR, escape(SUMMARY), escape(DESCRIPTION),
			quoteattr(NAME), quoteattr(NAME), quoteattr(version), quoteattr(version),
			release_date(epoch), platforms("softwarePlatform")))


def vmware_xml(version, epoch, rel_path, vib_size, vib_sha256):
	ts = time.strftime("%Y-%m-%dT%H:%M:%S.000000", time.gmtime(epoch))
	vib = ("<vib><vibVersion>1.4.5</vibVersion><vibID>%s</vibID><name>%s</name>"
	       "<version>%s</version><vendor>%s</vendor><vibType>bootbank</vibType>"
	       "<summary>%s</summary><systemReqs><maintenanceMode>false</maintenanceMode>%s"
	       "</systemReqs><relationships><depends/><conflicts/><replaces/><provides/>"
	       "<compatibleWith/></relationships><postInstall><rebootRequired>false"
	       "</rebootRequired><hostdRestart>false</hostdRestart></postInstall>"
	       "<vibFile><sourceUrl></sourceUrl><relativePath>%s</relativePath>"
	       "<packedSize>%d</packedSize><checksum><checksumType>sha-256</checksumType>"
	       "<checksum>%s</checksum></checksum></vibFile></vib>" % (
		       vib_id(version), NAME, version, VENDOR, escape(SUMMARY),
		       platforms("swPlatform"), rel_path, vib_size, vib_sha256))
	return ("<metadataResponse><version>3.0</version><timestamp>%s</timestamp>"
		"<bulletin>%s<vibList>%s</vibList></bulletin></metadataResponse>" % (
			ts, bulletin_head(version, epoch), vib)).encode()


def bulletin_xml(version, epoch):
	return ("<bulletin>%s<vibList><vibID>%s</vibID></vibList></bulletin>" % (
		bulletin_head(version, epoch), vib_id(version))).encode()


def make_zip(members, epoch):
	"""members: [(name, bytes, compress)] -> deterministic zip bytes."""
	dt = time.gmtime(max(epoch, 315532800))[:6]	# zip dates start in 1980
	buf = io.BytesIO()
	with zipfile.ZipFile(buf, "w") as z:
		for name, data, compress in members:
			zi = zipfile.ZipInfo(name, date_time=dt)
			zi.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
			zi.external_attr = 0o644 << 16
			zi.create_system = 3
			z.writestr(zi, data)
	return buf.getvalue()


def build_bundle(vib, dargs):
	"""dargs: what build_vib returned next to the VIB."""
	version, epoch = dargs[0], dargs[1]
	rel_path = "vib20/%s/%s.vib" % (NAME, vib_id(version))
	size = len(vib)
	sha = hashlib.sha256(vib).hexdigest()
	extra = ("<relative-path>%s</relative-path><packed-size>%d</packed-size>"
		 "<checksum checksum-type=\"sha-256\">%s</checksum>" % (rel_path, size, sha))
	vib_meta = descriptor_xml(*dargs, extra=extra)
	metadata = make_zip([
		("vmware.xml", vmware_xml(version, epoch, rel_path, size, sha), True),
		("vendor-index.xml", vendor_index_xml("metadata.zip"), True),
		("bulletins/%s.xml" % bulletin_id(version), bulletin_xml(version, epoch), True),
		("vibs/%s-%s.xml" % (NAME, sha[:16]), vib_meta, True),
	], epoch)
	return make_zip([
		("index.xml", index_xml(), True),
		("vendor-index.xml", vendor_index_xml("metadata.zip"), True),
		("metadata.zip", metadata, False),
		(rel_path, vib, False),
	], epoch)


# --- main ----------------------------------------------------------------

def source_epoch():
	if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
		return int(os.environ["SOURCE_DATE_EPOCH"])
	try:
		out = subprocess.run(["git", "-C", TOP, "log", "-1", "--format=%ct"],
				     capture_output=True, timeout=10).stdout.strip()
		if out.isdigit():
			return int(out)
	except (OSError, subprocess.SubprocessError):
		pass
	return 1735689600	# 2025-01-01T00:00:00Z


def write_atomic(path, data):
	tmp = path + ".tmp"
	with open(tmp, "wb") as f:
		f.write(data)
	os.replace(tmp, path)


def main(argv):
	ap = argparse.ArgumentParser(description="build the esxwatch VIB and offline bundle")
	ap.add_argument("--bin", required=True, help="the 64-bit ELF agent binary to package")
	ap.add_argument("--version", required=True, help="e.g. 0.1.0 (VIB version becomes 0.1.0-1)")
	ap.add_argument("--rules", default=os.path.join(TOP, "collectors", "logwatch", "rules", "esxi.yaml"))
	ap.add_argument("--out", default=os.path.join(TOP, "build"), help="output directory")
	ap.add_argument("--allow-dynamic", action="store_true",
			help="package a dynamically linked binary (tests only: it does not run on ESXi)")
	a = ap.parse_args(argv)

	for what, p in (("agent binary", a.bin), ("rules catalogue", a.rules)):
		if not os.path.isfile(p):
			print("mkvib: %s %s is missing; cannot build the VIB" % (what, p), file=sys.stderr)
			return 1
	try:
		dynamic = elf_interp(read(a.bin))
	except OSError as e:
		print("mkvib: %s" % e, file=sys.stderr)
		return 1
	if dynamic and not a.allow_dynamic:
		print("mkvib: %s is dynamically linked: ESXi has none of the libraries it needs, so the "
		      "agent would not start there.  Package the static build (make esxi; make vib), or "
		      "set VIB_ALLOW_DYNAMIC=1 for a test VIB" % a.bin, file=sys.stderr)
		return 1
	version = "%s-%s" % (a.version, RELEASE)
	epoch = source_epoch()
	try:
		files = payload_files(a.bin, a.rules)
		vib, dargs = build_vib(files, version, epoch)
		bundle = build_bundle(vib, dargs)
	except (OSError, ValueError) as e:
		print("mkvib: %s" % e, file=sys.stderr)
		return 1
	os.makedirs(a.out, exist_ok=True)
	vib_path = os.path.join(a.out, "%s-%s.vib" % (NAME, a.version))
	zip_path = os.path.join(a.out, "%s-%s-offline-bundle.zip" % (NAME, a.version))
	write_atomic(vib_path, vib)
	write_atomic(zip_path, bundle)
	print("mkvib: %s (%d bytes), %s (%d bytes), VIB %s" % (
		vib_path, len(vib), zip_path, len(bundle), vib_id(version)))
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
