#!/bin/sh
# Every benchmark, one after the other; each prints its figures next to a
# reference measured in the same run.  Targets are reported, not asserted.
cd "$(dirname "$0")/.."
status=0
for b in bench/footprint.py; do
	echo "== $b"
	python3 "$b" || status=1
done
for b in bench/bench_*.sh bench/bench_*.py; do
	[ -f "$b" ] || continue
	echo "== $b"
	case "$b" in
	*.py) python3 "$b" || status=1 ;;
	*) sh "$b" || status=1 ;;
	esac
done
exit $status
