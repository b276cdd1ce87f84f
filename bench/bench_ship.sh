#!/bin/sh
# Shipping throughput: the cfapi sink (JSON encoding + gzip + HTTP to a
# local counting receiver) on one core, next to zlib alone and to the
# gzip(1) command (`gzip -1`) on the very same JSON bytes, measured in the
# same run.  Targets: >= 50% of the zlib-only rate, > 100,000 events/s.
#
# Usage: bench/bench_ship.sh [N events, default 200000]
set -eu
cd "$(dirname "$0")/.."
n=${1:-200000}
B=${B:-build}
[ -f "$B/libesxwatch.a" ] || make -s "$B/libesxwatch.a"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
cc -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -DESXWATCH_VERSION='"bench"' \
	$(pkg-config --cflags libcurl zlib) -o "$tmp/bench_ship" bench/bench_ship.c \
	"$B/libesxwatch.a" $(pkg-config --libs libcurl yaml-0.1 zlib libpcre2-8) -lpthread -lm
"$tmp/bench_ship" "$n" "$tmp/bodies.json" 2>/dev/null | tee "$tmp/out"
# gzip -1 on the same bytes, pinned to one core like the sender, user+sys time
python3 - "$tmp/bodies.json" "$n" "$tmp/out" <<'PY'
import os, re, subprocess, sys, time
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
best = None
for _ in range(3):
    t0 = os.times()
    with open(path, "rb") as f, open(os.devnull, "wb") as null:
        subprocess.run(["taskset", "-c", "0", "gzip", "-1", "-c"], stdin=f, stdout=null, check=True)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    best = cpu if best is None else min(best, cpu)
m = re.search(r"RESULT ship_eps=(\d+)", open(out).read())
ship = int(m.group(1))
rate = n / best if best > 0 else float("inf")
print("gzip -1 (the command):      %.0f events/CPU-s, %.1f MB/s of JSON" % (rate, os.path.getsize(path) / best / 1e6))
print("ship / gzip -1:             %.0f%%" % (100.0 * ship / rate))
PY
