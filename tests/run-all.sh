#!/bin/sh
# Run every test program and count results.  A test program prints
# "PASS: name" / "FAIL: name" lines; one that dies without a FAIL line counts
# as one failure.  The last line is "N passed, N failed".
#
# Environment: ESXWATCH_BIN (default build/esxwatch) is the binary the
# end-to-end tests run; TESTS_ONLY=pattern limits what runs.
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
# One log directory per run, so two runs at once never clobber each other.
mkdir -p "$top/build/test-logs"
logdir=$(mktemp -d "$top/build/test-logs/run.XXXXXX")
pass=0
fail=0
failed_names=""

run_one() {	# label, command...
	label=$1
	shift
	if [ -n "${TESTS_ONLY:-}" ] && ! echo "$label" | grep -q -- "$TESTS_ONLY"; then
		return
	fi
	log=$logdir/$(echo "$label" | tr '/ ' '__').log
	start=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "FAIL: $label/exit: exit status $rc" >>"$log"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	echo "$label: $p passed, $f failed ($(( $(date +%s) - start ))s)"
	if [ "$f" -ne 0 ]; then
		failed_names="$failed_names $label"
		grep -E '^(FAIL|  check failed)' "$log" | head -40 | sed 's/^/    /'
		echo "    --- last lines of $log:"
		tail -n 30 "$log" | sed 's/^/    | /'
	fi
}

for t in build/tests/test_*; do
	[ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
done
for t in build/asan/tests/test_*; do
	[ -x "$t" ] && run_one "asan/$(basename "$t")" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$t"
done
run_one "lint/checksrc" python3 tests/lint/test_checksrc.py
run_one "fuzz/smoke" sh tests/fuzz/smoke.sh
for t in tests/e2e/test_*.py; do
	[ -f "$t" ] && run_one "e2e/$(basename "$t" .py)" python3 "$t"
done
for t in tests/e2e/test_*.sh; do
	[ -f "$t" ] && run_one "e2e/$(basename "$t" .sh)" sh "$t"
done
# The static ESXi build (make esxi), when there is one, runs the same
# end-to-end tests once more (test_esxi_build checks it in the first pass).
esxi_bin=$top/build/esxi/esxwatch
if [ -z "${ESXWATCH_BIN:-}" ] && [ -x "$esxi_bin" ]; then
	for t in tests/e2e/test_*.py tests/e2e/test_*.sh; do
		[ -f "$t" ] || continue
		n=$(basename "$t"); n=${n%.*}
		# Packaging and rollout tests do not run the agent binary; the
		# fleet benchmark's check (jittered reconnects) is the shipper's
		# code, the same in both builds, and takes half a minute (time).
		# The soak, the restart ledger and the diagnosis suites test
		# logic that has no libc- or TLS-dependent part beyond what
		# test_durability, test_storage and test_agent run here (time:
		# the suite stays under 30 minutes on 2 cores).  Collector mode, the
		# vSphere API and --analyze are Linux-side features (a bundle is
		# read on an admin's machine; test_vsphere passes on the static
		# build too, checked by hand).
		case "$n" in test_esxi_build|test_deb|test_vib|test_initscript|test_fleet_ps1|test_fleet_ssh|test_fleet_bench|test_receiver*|test_analyze|test_vsphere) continue ;; esac
		case "$n" in test_soak|test_durability_restart|test_diagnosis) continue ;; esac
		# Round three's HEC, _bulk and dead-letter suites: the shipper and
		# the sinks' encoders, the same code in both builds over the one
		# libcurl transport test_sinks_http runs here (time).
		case "$n" in test_sinks_hec|test_sinks_es|test_sinks_deadletter) continue ;; esac
		# The vSphere API simulator's self-test runs no agent binary.
		case "$n" in test_vcsim) continue ;; esac
		# The HTML report is rendered by a unit-test hook, not the agent
		# binary: nothing of the static build to test there.
		case "$n" in test_report_html) continue ;; esac
		# The round-three sinks (otlp, loki, gelf) go through the same
		# libcurl transport and sockets (netconn.c) that test_sinks_http
		# and test_sinks_syslog run here on the static build (time).
		case "$n" in test_sinks_otlp|test_sinks_loki|test_sinks_gelf) continue ;; esac
		case "$t" in
		*.py) run_one "e2e-esxi/$n" env ESXWATCH_BIN="$esxi_bin" python3 "$t" ;;
		*) run_one "e2e-esxi/$n" env ESXWATCH_BIN="$esxi_bin" sh "$t" ;;
		esac
	done
fi

if [ -n "$failed_names" ]; then
	echo "failed:$failed_names (logs in $logdir)"
else
	rm -rf "$logdir"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
