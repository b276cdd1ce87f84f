"""The simulated ESXi host of the idle and footprint benchmarks: 32 NICs
and 54 local SATA disks (every collector has work), answered by the fake
esxcli/localcli/vdq of tests/e2e/harness.py from the real captures in
tests/fixtures/esxi/, and a log directory with the default filelogs'
files (vmkernel.log, vobd.log, hostd.log) that nothing writes to.

    host = simhost.make(root)         # harness.FakeHost, answers set
    cfg = simhost.config(host, storage_dir, server, collectors="all")

Not a benchmark itself (bench/run-all.sh runs bench_*.py only).
"""
import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "e2e"))
import harness  # noqa: E402
import storage_host  # noqa: E402

NICS = 32
DISKS = 54
LOGS = ("vmkernel.log", "vobd.log", "hostd.log")
SMART = "esxcli-storage-core-device-smart-get/esxi803-sata-hdd-exos.txt"


def nic_list():
    hdr = ("Name    PCI Device    Driver  Admin Status  Link Status  Speed  Duplex  "
           "MAC Address         MTU   Description")
    dash = ("------  ------------  ------  ------------  -----------  -----  ------  "
            "-----------------  ----  -----------")
    rows = ["%-6s  0000:%02x:00.0  ixgben  Up            Up           10000  Full    "
            "00:50:56:00:00:%02x  1500  Intel X710" % ("vmnic%d" % i, i, i)
            for i in range(NICS)]
    return "\n".join([hdr, dash] + rows) + "\n"


def nic_stats(i):
    with open(os.path.join(TOP, "tests", "fixtures", "esxi", "esxcli-network-nic-stats-get",
                           "kb341594-vmnic2-rx-drops.txt")) as f:
        return f.read().replace("vmnic2", "vmnic%d" % i)


def disk_name(i):
    # a t10 SATA name of the real shape (vendor, model, serial padded)
    return "t10.ATA_____ST20000NM007D2D3DJ103________________________________ZVTB%04d" % i


def device_list():
    return storage_host.keyed([
        storage_host.device_record(disk_name(i), vendor="ATA     ", model="ST20000NM007D-3D",
                                   display="Local ATA Disk (%s)" % disk_name(i))
        for i in range(DISKS)])


def path_list():
    return storage_host.keyed([storage_host.path_record(disk_name(i), i, "active",
                                                        adapter="vmhba%d" % (i % 4))
                               for i in range(DISKS)])


def vdq():
    recs = []
    for i in range(DISKS):
        recs.append('   {\n      "Name"     : "%s",\n      "VSANUUID" : "",\n'
                    '      "State"    : "Ineligible for use by VSAN",\n'
                    '      "Reason"   : "Has partitions",\n      "IsSSD"    : "0",\n'
                    '"IsCapacityFlash": "0",\n      "IsPDL"    : "0",\n'
                    '      "Size(MB)" : "19074048",\n    "FormatType" : "512e"\n   }'
                    % disk_name(i))
    return "[\n" + ",\n\n".join(recs) + "\n]\n"


def make(root):
    """A FakeHost with every answer the collectors ask for set."""
    host = storage_host.StorageHost(root)
    host.apply()
    host.set_both("network nic list", text=nic_list())
    for i in range(NICS):
        host.set_both("network nic stats get -n vmnic%d" % i, text=nic_stats(i))
    host.set_both("storage core device list", text=device_list())
    host.set_both("storage core path list", text=path_list())
    smart = storage_host.fixture(SMART)
    for i in range(DISKS):
        host.set_both("storage core device smart get -d %s" % disk_name(i), text=smart)
    host.set("vdq", "-q", text=vdq())
    for name in LOGS:
        with open(os.path.join(host.log_dir, name), "a") as f:
            f.write("2026-01-01T00:00:00.000Z cpu0:1000)simhost: started\n")
    return host


COLLECTORS = ("nic", "datastore", "vsan", "smart", "agent", "logwatch", "diagnosis")


def config(host, storage, server, collectors="all", intervals=None):
    """agent.yaml text: collectors "all" (each at its default interval
    unless intervals says otherwise) or a list of the ones on; the default
    filelogs in the host's log directory."""
    on = COLLECTORS if collectors == "all" else collectors
    lines = []
    for c in COLLECTORS:
        if c not in on:
            lines.append("  %s: {enabled: no}" % c)
        elif intervals and c in intervals:
            lines.append("  %s: {enabled: yes, interval: %d}" % (c, intervals[c]))
        else:
            lines.append("  %s: {enabled: yes}" % c)
    return ("host: {platform: esxi, tools_dir: %s, log_dir: %s}\n"
            "storage: {directory: %s}\n"
            "server: %s\n"
            "collectors:\n%s\n" % (host.tools_dir, host.log_dir, storage, server,
                                    "\n".join(lines)))


__all__ = ["make", "config", "nic_list", "nic_stats", "NICS", "DISKS", "harness"]
