#!/bin/sh
# Build esxwatch's vSphere API simulator (tests/vcsim/*.go over Debian's
# golang-github-vmware-govmomi-dev) once; cache the binary under
# ~/.cache/esxwatch/vcsim/ keyed by the Go sources, the govmomi package
# version and the Go version.  Prints the binary's path (a second call is
# instant).  Needs: golang-go golang-github-vmware-govmomi-dev
# (packaging/install-deps.sh test).  VCSIM_GOCACHE=dir keeps Go's build
# cache between source changes (development only).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
gocode=/usr/share/gocode
govmomi=$gocode/src/github.com/vmware/govmomi
if ! command -v go >/dev/null 2>&1 || [ ! -d "$govmomi/simulator" ]; then
	echo "vcsim/build.sh: needs golang-go and golang-github-vmware-govmomi-dev" \
		"(sh packaging/install-deps.sh test)" >&2
	exit 1
fi
ver=$(dpkg-query -W -f='${Version}' golang-github-vmware-govmomi-dev 2>/dev/null || echo unknown)
key=$( { cat "$here"/*.go; echo "$ver"; go version; } | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/esxwatch/vcsim
bin=$cache/esxwatch-vcsim-$key
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/gopath" "$tmp/src"
cp "$here"/*.go "$tmp/src/"
(cd "$tmp/src" && GO111MODULE=off GOPATH="$tmp/gopath:$gocode" GOFLAGS= \
	GOCACHE="${VCSIM_GOCACHE:-$tmp/gocache}" nice go build -o "$tmp/vcsim" .) >&2
mv "$tmp/vcsim" "$bin"
# keep the four newest builds (branches with other sources share this
# cache: deleting theirs would make them rebuild), drop older ones
ls -t "$cache"/esxwatch-vcsim-* 2>/dev/null | tail -n +5 | while read -r old; do
	rm -f "$old"
done
echo "$bin"
