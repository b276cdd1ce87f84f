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


def config(h, server, extra="", servers="", more_tags="", filelog="{}"):
    """server: the YAML flow mapping of the primary destination."""
    return ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "server: %s\n%s"
            "batch: {flush_interval: 1}\n"
            "tags: {site: \"lab \\\"7\\\" \\\\ ]x\", team: \"\u00e9quipe\"%s}\n"
            "collectors:\n"
            "  nic: {enabled: no}\n  datastore: {enabled: no}\n"
            "  vsan: {enabled: yes, interval: 1}\n  smart: {enabled: no}\n"
            "  agent: {enabled: no}\n"
            "  diagnosis: {enabled: no}\n"	# its alerts are not what is counted here
            "filelog: %s\n%s" % (h.tools_dir, server, servers, more_tags, filelog, extra))


# A multi-line log event with every character syslog and JSON must escape,
# and a rule that matches it (esxwatch_rule, severity warning).
LOG_TEXT = ('2026-11-30T10:00:00.000Z cpu1:123)WARNING: first "q" \\ ] line\n'
            '  continued \u00e9 \u65e5\u672c here\n'
            '2026-11-30T10:00:01.000Z cpu1:123)second line\n')


def logwatch(d):
    """filelog YAML and a rules section for LOG_TEXT in d/logs/test.log."""
    ld = os.path.join(d, "logs")
    os.makedirs(ld, exist_ok=True)
    with open(os.path.join(ld, "test.log"), "w", encoding="utf-8") as f:
        f.write(LOG_TEXT)
    fl = ('\n  t: {directory: %s, include: test.log, forward: all, read_from_head: yes, '
          'event_marker: "^[0-9]{4}-"}' % ld)
    rules = 'rules:\n  - {name: warn_line, match: "WARNING:", severity: warning, files: [t]}\n'
    return fl, rules
