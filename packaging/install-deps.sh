#!/bin/sh
# Install what building (build), testing (test) or benchmarking (bench)
# needs, from Debian's packages, only when something is missing.  Safe to
# run again.
set -eu
what=${1:-build}
pkgs="gcc make pkg-config libcurl4-openssl-dev libssl-dev libyaml-dev zlib1g-dev libpcre2-dev libexpat1-dev"
if [ "$what" = test ]; then
	pkgs="$pkgs python3 openssl rsyslog rsyslog-gnutls rsyslog-openssl strace file binutils"
	# collector mode: logger (util-linux's, in bsdutils) as a real sender
	pkgs="$pkgs bsdutils"
	# the monitor test: Prometheus' own text-format parser
	pkgs="$pkgs python3-prometheus-client"
	# the fleet rollout test: a real sshd on loopback addresses
	pkgs="$pkgs openssh-server openssh-client"
	# packaging tests: busybox (ESXi's sh), dpkg-shlibdeps, lintian
	pkgs="$pkgs busybox dpkg-dev lintian"
	# fuzz targets (libFuzzer with ASan/UBSan)
	pkgs="$pkgs clang libclang-rt-14-dev"
	# the vSphere API tests: VMware's simulator (govmomi's vcsim package,
	# Go source) built by tests/vcsim/build.sh
	pkgs="$pkgs golang-go golang-github-vmware-govmomi-dev"
	# the --analyze HTML report in a headless browser (test_report_html.py)
	pkgs="$pkgs chromium chromium-driver"
fi
if [ "$what" = bench ]; then
	# the peers measured in the same run (bench/bench_logwatch.py,
	# bench/bench_forward_all.py): rsyslog imfile -> omfwd, collectd's tail
	# plugin (collectd-core: the daemon and its plugins, no recommends)
	pkgs="$pkgs python3 grep gzip rsyslog collectd-core"
	# the footprint benches: openssl (certificates), file(1)
	pkgs="$pkgs openssl file binutils"
	# the vSphere poll bench: 1,000 simulated hosts (tests/vcsim/build.sh)
	pkgs="$pkgs golang-go golang-github-vmware-govmomi-dev"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
