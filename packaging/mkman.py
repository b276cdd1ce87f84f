#!/usr/bin/env python3
"""Generate the esxwatch(1) man page from the binary itself.

    mkman.py --bin build/esxwatch [-o build/esxwatch.1]

The synopsis and the options come from `esxwatch -h`, the version from
`esxwatch -V`, the prose from packaging/linux/esxwatch.1.in.  mkdeb.py calls
generate() on the binary it packages, so the page in the .deb cannot list an
option the binary lacks or miss one it has.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "linux", "esxwatch.1.in")


def esc(text):
	"""Roman text for roff: backslashes and dashes escaped."""
	return text.replace("\\", "\\e").replace("-", "\\-")


def words(spec):
	"""An option spec or synopsis group in roff: options bold, ARGS italic."""
	out = []
	for w in re.split(r"(\s+|[\[\]|,]|\.\.\.)", spec):
		if not w:
			continue
		if w.isspace():
			out.append(" ")
		elif w.startswith("-"):
			out.append("\\fB%s\\fR" % esc(w))
		elif re.fullmatch(r"[A-Z][A-Z_]*", w):
			out.append("\\fI%s\\fR" % esc(w))
		else:
			out.append(esc(w))
	return "".join(out)


def line(text):
	"""A roff text line: one starting with . or ' would be a request."""
	return "\\&" + text if text[:1] in (".", "'") else text


def split_groups(text):
	"""The synopsis' top-level words: "[...]" groups (nested ones kept
	whole, a trailing "..." attached) and bare words."""
	groups, cur, depth = [], "", 0
	for ch in text:
		if ch.isspace() and depth == 0:
			if cur:
				groups.append(cur)
			cur = ""
			continue
		cur += ch
		depth += {"[": 1, "]": -1}.get(ch, 0)
	if cur:
		groups.append(cur)
	return groups


def parse_help(text):
	"""(synopsis groups, [(spec, description)], trailing notes) of -h."""
	lines = text.rstrip("\n").split("\n")
	if not lines or not lines[0].startswith("usage: "):
		raise ValueError("esxwatch -h does not start with 'usage: ': %r" % lines[:1])
	usage = [lines[0][len("usage: "):]]
	i = 1
	while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
		usage.append(lines[i].strip())
		i += 1
	synopsis = " ".join(usage).split(None, 1)
	if synopsis[0] != "esxwatch":
		raise ValueError("usage line does not name esxwatch: %r" % lines[0])
	groups = split_groups(synopsis[1] if len(synopsis) > 1 else "")
	opts, notes = [], []
	for l in lines[i:]:
		if not l.strip():
			continue
		m = re.match(r"^ {2,8}(-\S.*?)(?: {2,}(\S.*))?$", l)
		if m:
			opts.append([m.group(1).strip(), m.group(2) or ""])
		elif opts and l.startswith("        "):
			opts[-1][1] = (opts[-1][1] + " " + l.strip()).strip()
		else:
			notes.append(l.strip())
	if not opts:
		raise ValueError("no options found in esxwatch -h")
	return groups, [tuple(o) for o in opts], notes


def render(help_text, version):
	groups, opts, notes = parse_help(help_text)
	syn = [".B esxwatch"] + [words(g) for g in groups]
	body = []
	for spec, desc in opts:
		body += [".TP", words(spec), line(esc(desc[:1].upper() + desc[1:]))]
	if notes:
		body += [".PP"] + [line(esc(n)) for n in notes]
	with open(TEMPLATE) as f:
		# The template's own comment lines are for this repository, not the page.
		tpl = "".join(l for l in f if not l.startswith('.\\"'))
	return tpl.replace("@VERSION@", esc(version)).replace("@SYNOPSIS@", "\n".join(syn)).replace(
		"@OPTIONS@", "\n".join(body))


def run(binary, arg):
	p = subprocess.run([binary, arg], capture_output=True, text=True, timeout=30)
	if p.returncode != 0:
		raise ValueError("%s %s exited %d: %s" % (binary, arg, p.returncode, p.stderr.strip()))
	return p.stdout or p.stderr


def generate(binary):
	version = run(binary, "-V").split()
	version = version[-1] if version else ""
	return render(run(binary, "-h"), version)


def main(argv):
	ap = argparse.ArgumentParser(description="generate esxwatch.1 from esxwatch -h")
	ap.add_argument("--bin", required=True)
	ap.add_argument("-o", "--out", default="-")
	a = ap.parse_args(argv)
	try:
		page = generate(a.bin)
	except (OSError, ValueError, subprocess.SubprocessError) as e:
		print("mkman: %s" % e, file=sys.stderr)
		return 1
	if a.out == "-":
		sys.stdout.write(page)
	else:
		with open(a.out + ".tmp", "w") as f:
			f.write(page)
		os.replace(a.out + ".tmp", a.out)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
