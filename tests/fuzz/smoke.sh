#!/bin/sh
# A short run of every fuzz target (seconds each, seeded with the fixtures)
# inside `make test`: proves the targets build and that no known input or
# quick mutation of it crashes a parser.  Long runs are by hand:
#   make fuzz && build/fuzz/fuzz_esxcli -max_total_time=600 CORPUS_DIR
# Prints "PASS: fuzz/NAME" or "FAIL: fuzz/NAME: ..." per target.
set -u
cd "$(dirname "$0")/../.."
secs=${FUZZ_SMOKE_SECONDS:-5}
if ! make -s -j"$(nproc)" fuzz >build/fuzz-build.log 2>&1; then
	echo "FAIL: fuzz/build: make fuzz failed (build/fuzz-build.log)"
	tail -20 build/fuzz-build.log
	exit 1
fi
seeds() {	# target -> seed files: fixtures, and tests/fuzz/seeds/TARGET/*
	f=tests/fixtures
	ls tests/fuzz/seeds/"$1"/* 2>/dev/null
	case "$1" in
	esxcli) ls $f/esxi/esxcli-*/* $f/esxi-layout/*.txt ;;
	vdq) ls $f/esxi/vdq-*/* ;;
	smart) ls $f/esxi/esxcli-storage-core-device-smart-get/* $f/esxi/esxcli-nvme-*/* \
		$f/esxi/smartctl-json/* ;;
	datastore) ls $f/esxi/esxcli-storage-*/* ;;
	logline|rules) ls $f/logs/*/* ;;
	config) ls $f/config/* agent.yaml ;;
	report_html) ls $f/analyze/*.json ;;
	*) ;;
	esac 2>/dev/null
}
status=0
for bin in build/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin#build/fuzz/fuzz_}
	corpus=$(mktemp -d)
	for s in $(seeds "$name"); do
		cp "$s" "$corpus/" 2>/dev/null
	done
	log=$corpus.log
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="build/fuzz/crash-$name-" \
	    "$corpus" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "PASS: fuzz/$name ($runs runs in ${secs}s)"
	else
		echo "FAIL: fuzz/$name: the fuzzer found a crash"
		grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -10
		status=1
	fi
	rm -rf "$corpus" "$log"
done
exit $status
