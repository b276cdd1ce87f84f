#!/bin/sh
# Build build/esxi/esxwatch: a fully static x86-64 binary (musl) with its own
# libcurl, OpenSSL, zlib and libyaml, for the ESXi userworld.  `make esxi`.
#
# The libraries come from Debian source packages only, at the versions pinned
# in packaging/esxi-build/pins: `apt-get source --download-only`, checksums
# verified against the signed apt Sources index and the .dsc, unpacked with
# dpkg-source.  They are built once into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/esxwatch/esxi-deps/<pin-hash>/
# and reused until a pin or the recipe (packaging/esxi-build/build-deps.sh)
# changes.  The agent itself is compiled by the project's Makefile with
# CC=musl-gcc, its usual warning flags and the static libraries' headers.
#
# Usage: packaging/esxi-build.sh [--deps-only | --print-prefix]
# See docs/esxi-build.md.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/packaging/esxi-build
out=$top/build/esxi
mode=${1:-build}

say() { echo "esxi-build: $*" >&2; }
die() { say "$*"; exit 1; }

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

# --- pins and the cache key ------------------------------------------------

# "name version" lines, with ESXI_PIN_<NAME> overrides applied.
resolved_pins() {
	grep -v '^[[:space:]]*#' "$here/pins" | grep -v '^[[:space:]]*$' |
	while read -r name ver; do
		var=ESXI_PIN_$(echo "$name" | tr 'a-z-' 'A-Z_')
		eval "ov=\${$var:-}"
		[ -n "$ov" ] && ver=$ov
		printf '%s %s\n' "$name" "$ver"
	done
}

pins=$(resolved_pins)
key=$( { printf '%s\n' "$pins"; cat "$here/build-deps.sh"; } | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/esxwatch/esxi-deps/$key
P=$cache/prefix

if [ "$mode" = --print-prefix ]; then
	echo "$P"
	exit 0
fi

# --- build tools -------------------------------------------------------------

ensure_tools() {
	missing=""
	for p in musl-tools dpkg-dev make patch perl file binutils; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
}

# --- Debian sources ----------------------------------------------------------

# The Sources stanza of package $1 at version $2 (empty if apt does not know it).
src_stanza() {
	apt-cache showsrc "$1" 2>/dev/null | awk -v want="$2" '
		/^$/ { if (ok) { printf "%s", buf; done = 1; exit } buf = ""; ok = 0; next }
		{ buf = buf $0 "\n" }
		/^Version: / { if ($2 == want) ok = 1 }
		END { if (ok && !done) printf "%s", buf }'
}

# deb-src entries for the suites the machine already uses, in deb822 form
# next to debian.sources (the one-line sources.list format is handled too).
ensure_deb_src() {
	f=/etc/apt/sources.list.d/esxwatch-src.sources
	[ -f "$f" ] && return 0
	tmp=$(mktemp)
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		# Each stanza whose Types include deb, as a deb-src stanza.
		awk '
			function flush() { if (has_deb) printf "%s\n", buf; buf = ""; has_deb = 0 }
			/^[[:space:]]*$/ { flush(); next }
			/^#/ { next }
			/^Types:/ { if ($0 ~ /[[:space:]]deb([[:space:]]|$)/) has_deb = 1
				buf = buf "Types: deb-src\n"; next }
			{ buf = buf $0 "\n" }
			END { flush() }' /etc/apt/sources.list.d/debian.sources >"$tmp"
	fi
	for l in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$l" ] || continue
		# Only a Debian archive (deb.debian.org or a mirror of it): other
		# repositories (cloud SDKs, node) are not where our sources come from.
		sed -n 's|^deb \(.*/debian\(-security\)\{0,1\}/\{0,1\} .*\)$|deb-src \1|p' "$l"
	done >"$tmp.list"
	if [ ! -s "$tmp" ] && [ ! -s "$tmp.list" ]; then
		rm -f "$tmp" "$tmp.list"
		die "no Debian apt source found to derive deb-src entries from"
	fi
	say "adding deb-src entries ($f)"
	[ -s "$tmp" ] && $SUDO install -m 644 "$tmp" "$f"
	[ -s "$tmp.list" ] && $SUDO install -m 644 "$tmp.list" /etc/apt/sources.list.d/esxwatch-src.list
	rm -f "$tmp" "$tmp.list"
	$SUDO apt-get update -qq
}

# Download name=version into $cache/src and verify: the .dsc's SHA-256 must be
# the one in apt's Sources index (authenticated by the InRelease signature),
# and every file the .dsc lists must match the .dsc's SHA-256.
fetch_verify() {	# name version
	name=$1 ver=$2
	stanza=$(src_stanza "$name" "$ver")
	if [ -z "$stanza" ]; then
		ensure_deb_src
		stanza=$(src_stanza "$name" "$ver")
	fi
	if [ -z "$stanza" ]; then
		$SUDO apt-get update -qq
		stanza=$(src_stanza "$name" "$ver")
	fi
	[ -n "$stanza" ] || die "apt offers no source $name=$ver; offered: $(apt-cache showsrc "$name" | sed -n 's/^Version: //p' | tr '\n' ' ') (update packaging/esxi-build/pins)"
	dsc_line=$(printf '%s' "$stanza" | awk '
		/^Checksums-Sha256:/ { on = 1; next }
		/^[^ ]/ { on = 0 }
		on && $3 ~ /\.dsc$/ { print $1, $3 }' | head -n 1)
	[ -n "$dsc_line" ] || die "$name=$ver: no .dsc checksum in the Sources index"
	dsc_sum=${dsc_line%% *}
	dsc=${dsc_line#* }
	mkdir -p "$cache/src"
	if [ ! -f "$cache/src/$dsc" ]; then
		(cd "$cache/src" && apt-get source --download-only -qq "$name=$ver" 2>&1 |
			grep -v 'Download is performed unsandboxed' >&2) || true
	fi
	[ -f "$cache/src/$dsc" ] || die "$name=$ver: download failed"
	got=$(sha256sum "$cache/src/$dsc" | cut -d' ' -f1)
	[ "$got" = "$dsc_sum" ] || die "$dsc: sha256 $got, Sources index says $dsc_sum"
	awk '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 } on && NF == 3 { print $1, $3 }' \
		"$cache/src/$dsc" >"$cache/src/$dsc.sums"
	[ -s "$cache/src/$dsc.sums" ] || die "$dsc: no Checksums-Sha256"
	while read -r sum file; do
		got=$(sha256sum "$cache/src/$file" | cut -d' ' -f1)
		[ "$got" = "$sum" ] || die "$file: sha256 $got, $dsc says $sum"
	done <"$cache/src/$dsc.sums"
	say "verified $dsc ($(wc -l <"$cache/src/$dsc.sums") files)"
	DSC=$cache/src/$dsc
}

# --- the libraries -----------------------------------------------------------

build_dep() {	# name version
	fetch_verify "$1" "$2"
	work=$cache/work/$1
	rm -rf "$work"
	mkdir -p "$cache/work"
	dpkg-source --no-copy -x "$DSC" "$work" >"$cache/work/$1.unpack.log" 2>&1 ||
		{ cat "$cache/work/$1.unpack.log" >&2; die "$1: dpkg-source -x failed"; }
	t0=$(date +%s)
	(cd "$work" && "build_$1") || die "$1: build failed (logs in $work)"
	say "built $1 $2 ($(( $(date +%s) - t0 ))s)"
	rm -rf "$work"
}

build_deps() {
	if [ -f "$P/.complete" ]; then
		say "reusing $P"
		return 0
	fi
	ensure_tools
	mkdir -p "$cache"
	# shellcheck source=packaging/esxi-build/build-deps.sh
	. "$here/build-deps.sh"
	rm -rf "$P"
	mkdir -p "$P"
	all0=$(date +%s)
	# Order matters: curl links against the others.
	for n in zlib libyaml openssl curl pcre2 expat; do
		v=$(printf '%s\n' "$pins" | awk -v n="$n" '$1 == n { print $2 }')
		[ -n "$v" ] || die "no pin for $n"
		build_dep "$n" "$v"
	done
	printf '%s\n' "$pins" >"$P/pins"
	touch "$P/.complete"
	say "libraries ready in $(( $(date +%s) - all0 ))s: $P"
}

# A concurrent `make esxi` (CI job, another shell) waits for the first one
# instead of building the same cache directory twice.
mkdir -p "$(dirname "$cache")"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$cache.lock"
	flock 9
fi
build_deps
[ "$mode" = --deps-only ] && exit 0

# --- the agent ---------------------------------------------------------------

# Kernel UAPI headers (<linux/...>) are not part of musl; when the agent asks
# for them, give musl-gcc only those three directories, never glibc's.
kh=$cache/kheaders
if [ ! -d "$kh" ] && [ -d /usr/include/linux ]; then
	mkdir -p "$kh.tmp"
	ln -sfn /usr/include/linux "$kh.tmp/linux"
	ln -sfn /usr/include/asm-generic "$kh.tmp/asm-generic"
	ma=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	[ -d "/usr/include/$ma/asm" ] && ln -sfn "/usr/include/$ma/asm" "$kh.tmp/asm"
	mv "$kh.tmp" "$kh"
fi
kh_flag=""
[ -d "$kh" ] && kh_flag="-idirafter $kh"

mkdir -p "$out"
# Objects compiled against another set of libraries (a pin changed) are
# rebuilt; a binary left from an earlier build must not pass for this one.
stamp="$P -Os"
if [ "$(cat "$out/.prefix" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$out/obj" "$out/libesxwatch.a"
	echo "$stamp" >"$out/.prefix"
fi
rm -f "$out/esxwatch"
libs="-L$P/lib -lcurl -lssl -lcrypto -lyaml -lz -lpcre2-8 -lexpat -pthread"
# B= puts objects under build/esxi/obj; the Makefile's own CFLAGS (warnings,
# -Werror, hardening) apply unchanged; only the compiler, the libraries and
# the optimisation differ: -Os and one section per function, which
# --gc-sections then drops when unused (the size limit, docs/esxi-build.md;
# the agent's hot loops are the regex engine's, not its own code).
CFLAGS="-Os -g -ffunction-sections -fdata-sections" \
make -C "$top" -j2 --no-print-directory \
	B=build/esxi CC=musl-gcc \
	PKG_CFLAGS="-I$P/include $kh_flag -DESXWATCH_STATIC_BUILD=1" \
	PKG_LIBS="$libs" \
	LDFLAGS="-static -Wl,--gc-sections" \
	build/esxi/esxwatch || die "the agent does not build with musl (see above)"

bin=$out/esxwatch
# Keep the symbols next to it, ship the stripped one.
if file "$bin" | grep -q 'not stripped'; then
	cp "$bin" "$bin.debug"
	strip --strip-all "$bin"
fi
file "$bin" | grep -q 'statically linked' || die "$bin is not statically linked: $(file "$bin")"
say "$(file -b "$bin" | cut -d, -f1-2), $(wc -c <"$bin") bytes stripped: $bin"
