#!/usr/bin/env python3
"""Footprint of the static ESXi build (make esxi): stripped size, and idle
RSS/CPU on a simulated 32-NIC ESXi host (nic collector every 5 s), once
writing to a file and once shipping to a local Log Insight (cfapi) over TLS,
next to a floor measured in the same run: bench/floor.c linked statically
with the same libraries (musl, libcurl, OpenSSL, zlib, libyaml).
Targets: < 4 MB stripped, < 4 MB idle RSS (file sink).

Usage: bench/bench_footprint_esxi.py [--seconds N] [--bin PATH]
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

TARGET_KB = 4096


def config(host, work, server):
    return ("host: {platform: esxi, tools_dir: %s}\n"
            "storage: {directory: %s/storage}\n"
            "server: %s\n"
            "collectors:\n"
            "  nic: {enabled: yes, interval: 5}\n"
            "  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
            "  smart: {enabled: no}\n  agent: {enabled: no}\n"
            "filelog: {}\n" % (host.tools_dir, work, server))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "esxi", "esxwatch"))
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        print("bench_footprint_esxi: %s not built (make esxi); skipped" % a.bin)
        return 0

    work = tempfile.mkdtemp(prefix="esxwatch-bench-esxi-")
    host = harness.FakeHost(os.path.join(work, "host"))
    host.set_both("network nic list", text=footprint.nic_list())
    for i in range(footprint.NICS):
        host.set_both("network nic stats get -n vmnic%d" % i, text=footprint.nic_stats(i))

    prefix = subprocess.run(["sh", os.path.join(TOP, "packaging", "esxi-build.sh"), "--print-prefix"],
                            capture_output=True, text=True, check=True).stdout.strip()
    floor = os.path.join(TOP, "build", "bench", "floor-static")
    os.makedirs(os.path.dirname(floor), exist_ok=True)
    subprocess.run(["musl-gcc", "-O2", "-static", "-I" + os.path.join(prefix, "include"),
                    "-o", floor, os.path.join(TOP, "bench", "floor.c"),
                    "-L" + os.path.join(prefix, "lib"), "-lcurl", "-lssl", "-lcrypto",
                    "-lyaml", "-lz", "-pthread"], check=True)

    size = os.path.getsize(a.bin)
    stripped = "not stripped" not in subprocess.run(["file", "-b", a.bin], capture_output=True,
                                                    text=True).stdout
    print("footprint (static ESXi build): %d NICs, nic interval 5 s, %.0f s measured"
          % (footprint.NICS, a.seconds))
    print("  size: %d bytes%s (target < %d): %s" % (
        size, " stripped" if stripped else "", 4 << 20,
        "met" if size < (4 << 20) else "MISSED"))
    print("  %-40s %8s %8s" % ("program", "RSS KB", "CPU ms"))
    f_rss, f_cpu = footprint.measure([floor], a.seconds)
    print("  %-40s %8d %8d" % ("static libs + curl init (floor)", f_rss, f_cpu))

    ok = size < (4 << 20)
    file_cfg = os.path.join(work, "file.yaml")
    with open(file_cfg, "w") as f:
        f.write(config(host, work + "/f", "{proto: file, path: /dev/null}"))
    # The target applies to the idle agent (as in bench/footprint.py: file
    # sink); the TLS run is reported next to it for information.
    runs = [("esxwatch, file sink", file_cfg, None)]

    import certs
    import receivers
    c = certs.make(os.path.join(work, "pki"))
    r = receivers.CfapiReceiver(tls=(c.server_crt, c.server_key))
    tls_cfg = os.path.join(work, "tls.yaml")
    with open(tls_cfg, "w") as f:
        f.write(config(host, work + "/t", "{hostname: 127.0.0.1, proto: cfapi, port: %d, "
                                          "ssl: yes, ssl_ca_path: %s}" % (r.port, c.ca)))
    runs.append(("esxwatch, cfapi over TLS", tls_cfg, r))
    try:
        for name, cfg, rec in runs:
            rss, cpu = footprint.measure([a.bin, "-c", cfg], a.seconds)
            if rec is None:
                verdict = "target < %d KB: %s" % (TARGET_KB, "met" if rss < TARGET_KB else "MISSED")
                ok = ok and rss < TARGET_KB
            else:
                verdict = "(no target; %d events received)" % len(rec.events)
            print("  %-40s %8d %8d   %+d KB vs floor; %s" % (name, rss, cpu, rss - f_rss, verdict))
    finally:
        r.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
