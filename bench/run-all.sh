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
	*.py) timeout 3600 python3 "$b" || status=1 ;;
	*) sh "$b" || status=1 ;;
	esac
done
# The fleet: events per host per day by collector (sizing); recovery (50
# agents, a 20 s outage: the first delivery after it, and the jittered peak
# next to the fixed schedule's); then N agents against one receiver through
# a 60 s outage, full jitter and the fixed schedule (docs/fleet.md).  Each
# run is bounded by its own limits; timeout is the backstop.
echo "== bench/fleet_volume.py"
timeout 600 python3 bench/fleet_volume.py || status=1
echo "== bench/fleet.py --agents 50 --outage 20"
timeout 900 python3 bench/fleet.py --agents 50 --outage 20 || status=1
for n in 50 200; do
	echo "== bench/fleet.py --agents $n --outage 60"
	timeout 1500 python3 bench/fleet.py --agents "$n" --outage 60 || status=1
done
exit $status
