#!/usr/bin/env python3
"""Footprint of the static ESXi build (make esxi): stripped size, and idle
RSS/CPU on the simulated host of bench/simhost.py (32 NICs, 54 local
disks, every collector on at its default interval), once writing to a file
and once shipping to a local Log Insight (cfapi) over TLS, next to a floor
measured in the same run: bench/floor.c linked statically with the same
libraries (musl, libcurl, OpenSSL, zlib, libyaml, PCRE2).  RSS is the peak
over the window after the start-up round (every collector has run once).
Targets: < 4 MB stripped, < 3 MB idle RSS (file sink).

Usage: bench/bench_footprint_esxi.py [--seconds N] [--bin PATH]
Last line: RESULT rss_kb=... floor_kb=... size_bytes=... target=met|missed
"""
import argparse
import os
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
import footprint  # noqa: E402  (nic_list, nic_stats, measure)
import harness  # noqa: E402

TARGET_KB = 3072


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "esxi", "esxwatch"))
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        print("bench_footprint_esxi: %s not built (make esxi); skipped" % a.bin)
        print("RESULT rss_kb=n/a target=skipped")
        return 0

    work = tempfile.mkdtemp(prefix="esxwatch-bench-esxi-")

    prefix = subprocess.run(["sh", os.path.join(TOP, "packaging", "esxi-build.sh"), "--print-prefix"],
                            capture_output=True, text=True, check=True).stdout.strip()
    floor = os.path.join(TOP, "build", "bench", "floor-static")
    os.makedirs(os.path.dirname(floor), exist_ok=True)
    subprocess.run(["musl-gcc", "-O2", "-static", "-I" + os.path.join(prefix, "include"),
                    "-o", floor, os.path.join(TOP, "bench", "floor.c"),
                    "-L" + os.path.join(prefix, "lib"), "-lcurl", "-lssl", "-lcrypto",
                    "-lyaml", "-lz", "-lpcre2-8", "-pthread"], check=True)

    size = os.path.getsize(a.bin)
    stripped = "not stripped" not in subprocess.run(["file", "-b", a.bin], capture_output=True,
                                                    text=True).stdout
    print("footprint (static ESXi build): %d NICs, %d disks, every collector at its default "
          "interval, %.0f s measured after the start-up round"
          % (footprint.NICS, footprint.simhost.DISKS, a.seconds))
    print("  size: %d bytes%s (target < %d): %s" % (
        size, " stripped" if stripped else "", 4 << 20,
        "met" if size < (4 << 20) else "MISSED"))
    print("  %-40s %8s %8s" % ("program", "RSS KB", "CPU ms"))
    f_rss, f_cpu = footprint.measure([floor], a.seconds)
    print("  %-40s %8d %8d" % ("static libs + curl init (floor)", f_rss, f_cpu))

    ok = size < (4 << 20)
    fhost, file_cfg = footprint.agent_setup(work, name="file")
    # The target applies to the idle agent (as in bench/footprint.py: file
    # sink); the TLS run is reported next to it for information.
    runs = [("esxwatch, file sink", file_cfg, None, fhost)]

    import certs
    import receivers
    c = certs.make(os.path.join(work, "pki"))
    r = receivers.CfapiReceiver(tls=(c.server_crt, c.server_key))
    thost, tls_cfg = footprint.agent_setup(
        work, "{hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: yes, ssl_ca_path: %s}"
        % (r.port, c.ca), name="tls")
    runs.append(("esxwatch, cfapi over TLS", tls_cfg, r, thost))
    res = []
    try:
        for name, cfg, rec, host in runs:
            rss, cpu = footprint.measure([a.bin, "-c", cfg], a.seconds,
                                         ready=footprint.smart_round_done(host))
            if rec is None:
                verdict = "target < %d KB: %s" % (TARGET_KB, "met" if rss < TARGET_KB else "MISSED")
                ok = ok and rss < TARGET_KB
                res = ["rss_kb=%d" % rss, "floor_kb=%d" % f_rss, "over_floor_kb=%d" % (rss - f_rss)]
            else:
                verdict = "(no target; %d events received)" % len(rec.events)
            print("  %-40s %8d %8d   %+d KB vs floor; %s" % (name, rss, cpu, rss - f_rss, verdict))
    finally:
        r.close()
    print("RESULT %s size_bytes=%d target=%s" % (" ".join(res), size, "met" if ok else "missed"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
