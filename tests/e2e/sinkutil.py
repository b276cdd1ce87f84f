"""Shared by the test_sinks_*.py end-to-end tests: a simulated host whose
collectors produce many events cheaply (vsan: one `vdq -q` call lists every
disk, one event each), and agent configurations."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

from harness import FakeHost  # noqa: E402

# vdq's reason text: ] and non-ASCII (the vdq parser keeps text up to the
# next quote).  Quotes and backslashes come from the tags below.
NASTY = ']br\u00e9 \u65e5\u672c'
SITE = 'lab "7" \\ ]x'


def make_host(d, ndisks=100, bios_uuid=False):
    h = FakeHost(os.path.join(d, "host"))
    disks = []
    for i in range(ndisks):
        disks.append('   {\n      "Name"     : "naa.%016x",\n      "VSANUUID" : "",\n'
                     '      "State"    : "Ineligible for use by VSAN",\n'
                     '      "Reason"   : "Has partitions %d %s",\n'
                     '      "IsSSD"    : "1",\n      "IsPDL"    : "0"\n   }' % (i, i, NASTY))
    h.set("vdq", "-q", text="[\n" + ",\n".join(disks) + "\n]\n")
    if bios_uuid:
        h.set_both("hardware platform get",
                   fixture="esxi/esxcli-hardware-platform-get/poweredge.txt")
    return h


def config(h, server, extra="", servers=""):
    """server: the YAML flow mapping of the primary destination."""
    return ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "server: %s\n%s"
            "batch: {flush_interval: 1}\n"
            "tags: {site: \"lab \\\"7\\\" \\\\ ]x\", team: \"\u00e9quipe\"}\n"
            "collectors:\n"
            "  nic: {enabled: no}\n  datastore: {enabled: no}\n"
            "  vsan: {enabled: yes, interval: 1}\n  smart: {enabled: no}\n"
            "  agent: {enabled: no}\n"
            "filelog: {}\n%s" % (h.tools_dir, server, servers, extra))
