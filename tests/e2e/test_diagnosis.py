"""The diagnosis stage end to end: the real binary on a simulated ESXi host
(tests/e2e/storage_host.py plus the network commands the NFS mapping runs),
each story in two --once runs (a baseline, then the fault), the events on
stdout.  The scenario functions return every event of their last run, so
tests/e2e/test_loginsight.py runs the exported queries against them."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Agent, eq, fail, select  # noqa: E402
import storage_host  # noqa: E402
from storage_host import StorageHost, fixture, parse_table, render_table  # noqa: E402

NIC_LIST = "esxcli-network-nic-list/esxi90-vmxnet3.txt"
NIC_STATS = "esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt"
LOGS = os.path.join(harness.FIXTURES, "logs")


def log_fixture(rel, n):
    with open(os.path.join(LOGS, rel)) as f:
        return f.read().splitlines()[n - 1]


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".000Z"


# --- the simulated host's network ------------------------------------------------

def nic_list(names, down=()):
    headers, rows = parse_table(fixture(NIC_LIST))
    out = []
    for i, n in enumerate(names):
        r = list(rows[0])
        r[0] = n
        r[1] = "0000:0%d:01.0" % (i + 2)
        if n in down:
            r[headers.index("Link Status")] = "Down"
        out.append(r)
    return render_table(headers, out, right=("Speed", "MTU"))


def nic_stats(name, crc=0):
    t = fixture(NIC_STATS).replace("vmnic2", name)
    t = t.replace("Receive CRC errors: 0", "Receive CRC errors: %d" % crc)
    return t.replace("Total receive errors: 0", "Total receive errors: %d" % crc)


def ipv4_get():
    """The 9.0 capture plus vmk1 on the NFS server's subnet."""
    headers, rows = parse_table(fixture("esxcli-network-ip-interface-ipv4-get/esxi90.txt"))
    rows.append(["vmk1", "10.1.0.20", "255.255.255.0", "10.1.0.255", "STATIC", "0.0.0.0", "false"])
    return render_table(headers, rows, right=("DHCP DNS",))


def interface_list():
    vmk0 = fixture("esxcli-network-ip-interface-list/blog-management-vmk0.txt")
    vmk1 = vmk0.replace("vmk0", "vmk1").replace("vSwitch0", "vSwitch1") \
        .replace("Portgroup: Management", "Portgroup: NFS") \
        .replace("00:50:56:6c:01:11", "00:50:56:6c:01:12").replace("33554443", "50331654")
    return vmk0.rstrip("\n") + "\n" + vmk1


def vswitch_list():
    vs0 = fixture("esxcli-network-vswitch-standard-list/blog-vswitch0.txt")
    vs1 = vs0.replace("vSwitch0", "vSwitch1").replace("Uplinks: vmnic2", "Uplinks: vmnic1, vmnic3") \
        .replace("Portgroups: WAN network, Management", "Portgroups: NFS")
    vs0 = vs0.replace("Uplinks: vmnic2", "Uplinks: vmnic0")
    return vs0.rstrip("\n") + "\n" + vs1


def failover_get(active):
    t = fixture("esxcli-network-vswitch-standard-policy-failover-get/migration-notes-indent-lost.txt")
    t = t.replace("Active Adapters: vmnic1", "Active Adapters: " + active)
    return "".join("   " + l + "\n" for l in t.splitlines())


def network(host, crc, nics=("vmnic0", "vmnic1"), down=()):
    host.set_both("network nic list", text=nic_list(nics, down))
    for n in nics:
        host.set_both("network nic stats get -n " + n, text=nic_stats(n, crc.get(n, 0)))
    host.set_both("network ip interface ipv4 get", text=ipv4_get())
    host.set_both("network ip interface list", text=interface_list())
    host.set_both("network vswitch standard list", text=vswitch_list())
    host.set_both("network vswitch standard portgroup policy failover get -p NFS",
                  text=failover_get("vmnic1"))


def config(host, nic=True, datastore=True, vsan=False, smart=False, agent=False, logs=True):
    yn = lambda b: "yes" if b else "no"
    return """server: {hostname: ""}
storage: {directory: "@STORAGE@"}
host: {platform: esxi, tools_dir: "%s", log_dir: "%s"}
collectors:
  nic: {enabled: %s}
  datastore: {enabled: %s}
  vsan: {enabled: %s}
  smart: {enabled: %s}
  agent: {enabled: %s}
  diagnosis: {enabled: yes, window: 300, flap_count: 5, flap_window: 300}
filelog:
""" % (host.tools_dir, host.log_dir, yn(nic), yn(datastore), yn(vsan), yn(smart), yn(agent)) + (
        "  vobd: {directory: \"%s\", include: vobd.log, read_from_head: yes}\n"
        "  vmkernel: {directory: \"%s\", include: vmkernel.log, read_from_head: yes}\n"
        % (host.log_dir, host.log_dir) if logs else "  {}\n")


def write_log(host, name, lines):
    with open(os.path.join(host.log_dir, name), "a") as f:
        for l in lines:
            f.write(l + "\n")


def once(agent):
    rc, evs, err = agent.once()
    if rc != 0:
        fail("--once exit %d: %s" % (rc, err[-800:]))
    return evs


def diagnoses(evs, rule=None):
    out = [e for e in evs if e.get("esxwatch_collector") == "diagnosis"]
    for e in out:
        eq(e.get("esxwatch_kind"), "alert", "kind of a diagnosis event")
        if "Next:" not in e["text"]:
            fail("the alert names no next step: %s" % e["text"])
        if not e.get("esxwatch_evidence"):
            fail("no evidence on %s" % e["text"])
    return [e for e in out if rule is None or e.get("esxwatch_diagnosis") == rule]


def setup(d, **kw):
    host = StorageHost(d)
    host.apply()
    for f in ("vobd.log", "vmkernel.log"):
        open(os.path.join(host.log_dir, f), "a").close()
    return host, Agent(d, config(host, **kw))


# --- the stories --------------------------------------------------------------------

def scenario_nfs_crc(d):
    """vmnic1 (the NFS vmknic's uplink) gets CRC errors while the NFS 4.1
    datastore isos goes inaccessible; vmnic0 (not on the path) too."""
    host, agent = setup(d, agent=True)
    network(host, {})
    once(agent)
    host.nfs41_accessible = False
    host.apply()
    network(host, {"vmnic1": 48042, "vmnic0": 7}, down=("vmnic0",))
    return host, once(agent)


def test_nfs_path_loss_names_the_uplink_and_the_datastore(d):
    host, evs = scenario_nfs_crc(d)
    changes = select(evs, esxwatch_collector="datastore", esxwatch_kind="change",
                     esxwatch_datastore="isos")
    eq([e.get("esxwatch_state") for e in changes], ["inaccessible"], "the datastore's change")
    got = diagnoses(evs)
    eq(len(got), 1, "diagnosis alerts (%r)" % [e["text"] for e in got])
    a = got[0]
    eq(a.get("esxwatch_diagnosis"), "path_loss_physical", "rule")
    eq(a.get("esxwatch_nic"), "vmnic1", "the NIC named (vmnic0 is not on the datastore's path)")
    eq(a.get("esxwatch_datastore"), "isos", "datastore")
    eq(a.get("esxwatch_uplinks"), "vmnic1", "uplinks of the NFS port group")
    eq(a.get("esxwatch_network_path"), "vmk1, port group NFS on vSwitch1", "path")
    if not a["text"].startswith("Likely physical layer on vmnic1: isos lost its storage path"):
        fail("text: %s" % a["text"])
    if "rx_crc_errors grew by 48042" not in a["esxwatch_evidence"] or \
            "inaccessible" not in a["esxwatch_evidence"]:
        fail("evidence: %s" % a["esxwatch_evidence"])
    calls = host.calls()
    for c in ("network ip interface ipv4 get", "network ip interface list",
              "network vswitch standard portgroup policy failover get -p NFS"):
        if not any(c in x for x in calls):
            fail("%s was not run: %r" % (c, calls[-10:]))


def test_apd_with_crc_and_unknown_path_says_on_this_host(d):
    host, agent = setup(d)
    network(host, {})
    once(agent)
    line = log_fixture("vobd-log/esxi6-7-apd-sdcard-redacted.log", 3)
    line = iso(time.time() - 20) + line[line.index("Z:") + 1:]
    line = line.replace("mpx.vmhba32:C0:T0:L0", storage_host.SAN_DEV)
    write_log(host, "vobd.log", [line])
    network(host, {"vmnic1": 120})
    evs = once(agent)
    got = diagnoses(evs)
    eq(len(got), 1, "diagnosis alerts (%r)" % [e["text"] for e in got])
    a = got[0]
    eq(a.get("esxwatch_nic"), "vmnic1", "nic")
    eq(a.get("esxwatch_device"), storage_host.SAN_DEV, "device")
    eq(a.get("esxwatch_datastore"), storage_host.SAN_DS, "datastore (from the extent list)")
    if "on this host" not in a["text"] or "esxwatch_uplinks" in a:
        fail("an unmapped path must say 'on this host' and name no uplinks: %s" % a["text"])


def test_crc_unrelated_in_time_yields_nothing(d):
    host, agent = setup(d)
    network(host, {})
    once(agent)
    # An APD an hour before the CRC growth: no cause.
    line = log_fixture("vobd-log/esxi6-7-apd-sdcard-redacted.log", 3)
    write_log(host, "vobd.log", [iso(time.time() - 3600) + line[line.index("Z:") + 1:]])
    network(host, {"vmnic1": 120})
    evs = once(agent)
    if not select(evs, esxwatch_rule="apd_start"):
        fail("the APD line was not forwarded")
    if not select(evs, esxwatch_collector="nic", esxwatch_kind="alert", esxwatch_nic="vmnic1"):
        fail("no CRC alert")
    eq(diagnoses(evs), [], "diagnosis alerts")


def test_crc_without_path_loss_yields_nothing(d):
    host, agent = setup(d)
    network(host, {})
    once(agent)
    network(host, {"vmnic1": 500})
    evs = once(agent)
    eq(len(select(evs, esxwatch_collector="nic", esxwatch_kind="alert",
                  esxwatch_counter="rx_crc_errors")), 1, "CRC alerts")
    eq(diagnoses(evs), [], "diagnosis alerts")


def scenario_flapping(d):
    host, agent = setup(d, datastore=False)
    network(host, {})
    down = log_fixture("vobd-log/esxi6-link-down-up.log", 2)
    up = log_fixture("vobd-log/esxi6-link-down-up.log", 4)
    lines = []
    t0 = time.time() - 1500
    for w in (0, 900):		# two windows, 15 min apart
        for i in range(4):
            for j, l in enumerate((down, up)):
                t = t0 + w + i * 20 + j * 10
                lines.append(iso(t) + l[l.index("Z:") + 1:])
    write_log(host, "vobd.log", lines)
    return host, once(agent)


def test_flapping_nic_one_alert_per_window(d):
    host, evs = scenario_flapping(d)
    eq(len(select(evs, esxwatch_collector="logwatch", esxwatch_nic="vmnic6")), 16, "link events")
    got = diagnoses(evs, "link_flapping")
    eq(len(got), 2, "flapping alerts (%r)" % [e["text"] for e in got])
    for a in got:
        eq(a.get("esxwatch_nic"), "vmnic6", "nic")
        if "link flapping: 6 link changes within 300 s" not in a["text"]:
            fail("text: %s" % a["text"])
    eq(len(diagnoses(evs)), 2, "all diagnosis alerts")


NVME = "t10.NVMe____SKHynix_HFS001TEJ9XXXXX_________________C20C523500xxxxx"
USB = "mpx.vmhba32:C0:T0:L0"
USB2 = "mpx.vmhba34:C0:T0:L0"


def scenario_partitions(d):
    """The ESXi 8 vdq capture: its three disks are ineligible, "Has partitions"."""
    host, agent = setup(d, nic=False, datastore=False, vsan=True, logs=False)
    host.add_tool("partedUtil")
    host.set("vdq", "-q", fixture="esxi/vdq-q/esxi8.txt")
    host.set("partedUtil", "getptbl /vmfs/devices/disks/" + NVME,
             fixture="esxi/partedUtil-getptbl/foreign-partitions-unknown.txt")
    host.set("partedUtil", "getptbl /vmfs/devices/disks/" + USB,
             fixture="esxi/partedUtil-getptbl/esxi7-bootdisk.txt")
    host.set("partedUtil", "getptbl /vmfs/devices/disks/" + USB2,
             fixture="esxi/partedUtil-getptbl/empty-gpt.txt")
    return host, once(agent)


def test_ineligible_disk_alert_carries_its_partition_table(d):
    host, evs = scenario_partitions(d)
    got = diagnoses(evs, "vsan_disk_partitions")
    eq(sorted(a.get("esxwatch_device") for a in got), sorted([NVME, USB, USB2]), "partition alerts")
    a = [x for x in got if x["esxwatch_device"] == NVME][0]
    eq(a.get("esxwatch_partitions"), "gpt table, 3 partitions: #1 unknown 8.0 GiB, "
       "#2 unknown 2.0 GiB, #3 unknown 3.6 TiB", "partitions")
    if not a.get("esxwatch_partition_table", "").startswith("gpt / 486401 255 63 7814037168 / 1 8192"):
        fail("table: %r" % a.get("esxwatch_partition_table"))
    if "3 partitions: #1 unknown 8.0 GiB" not in a["text"] or "Has partitions" not in a["text"]:
        fail("text: %s" % a["text"])
    b = [x for x in got if x["esxwatch_device"] == USB][0]
    if "#8 vmfs" not in b["text"]:
        fail("boot disk text: %s" % b["text"])
    if not any(("partedUtil getptbl /vmfs/devices/disks/" + NVME) in c for c in host.calls()):
        fail("partedUtil not run from host.tools_dir")


def test_partition_table_unknown_is_said(d):
    host = StorageHost(d)
    host.apply()
    host.set("vdq", "-q", fixture="esxi/vdq-q/esxi8.txt")
    agent = Agent(d, config(host, nic=False, datastore=False, vsan=True, logs=False))
    got = diagnoses(once(agent), "vsan_disk_partitions")
    eq(len(got), 3, "alerts without partedUtil")
    for a in got:
        if "partition table unknown: partedUtil not found" not in a["text"] or \
                "esxwatch_partitions" in a:
            fail("text: %s" % a["text"])


def scenario_failing_drive(d, scsi=True, growth=True):
    host, agent = setup(d, nic=False, datastore=False, smart=True)
    host.set_both("storage core device list", text=storage_host.smart_device_list())
    dev = storage_host.SATA_HDD
    old = storage_host.SATA_OLD
    table = lambda pend: storage_host.smart_table(storage_host.SMART_5COL, param="Pending Sector Reallocation Count",
                                                  column="Raw", value=str(pend))
    host.set_both("storage core device smart get -d " + dev, text=table(0))
    host.set_both("storage core device smart get -d " + old, text=table(0))
    once(agent)
    if growth:
        host.set_both("storage core device smart get -d " + dev, text=table(16))
    if scsi:
        l = log_fixture("vmkernel-log/esxi50-pdl.log", 7)
        l = iso(time.time() - 30) + l[l.index("Z ") + 1:]
        l = l.replace("naa.60a98000572d54724a34642d71325763", dev) \
            .replace("Possible sense data: 0x5 0x25 0x0", "Valid sense data: 0x3 0x11 0x0") \
            .replace("H:0x1 D:0x0", "H:0x0 D:0x2")
        write_log(host, "vmkernel.log", [l])
    return host, once(agent), dev


def test_failing_drive_on_combined_evidence(d):
    host, evs, dev = scenario_failing_drive(d)
    got = diagnoses(evs, "failing_drive")
    eq(len(got), 1, "failing-drive alerts (%r)" % [e["text"] for e in diagnoses(evs)])
    a = got[0]
    eq(a.get("esxwatch_device"), dev, "device")
    if "0x3 0x11 0x0" not in a["esxwatch_evidence"] or "pending_sectors grew" not in a["esxwatch_evidence"]:
        fail("evidence: %s" % a["esxwatch_evidence"])


def test_failing_drive_not_on_scsi_errors_alone(d):
    host, evs, dev = scenario_failing_drive(d, growth=False)
    if not select(evs, esxwatch_collector="logwatch", esxwatch_device=dev):
        fail("the SCSI error line was not forwarded")
    eq(diagnoses(evs), [], "diagnosis alerts")


def test_failing_drive_not_on_smart_growth_alone(d):
    host, evs, dev = scenario_failing_drive(d, scsi=False)
    if not select(evs, esxwatch_collector="smart", esxwatch_kind="alert", esxwatch_device=dev):
        fail("no SMART growth alert")
    eq(diagnoses(evs), [], "diagnosis alerts")


def test_agent_reports_the_diagnosis_memory(d):
    host, evs = scenario_nfs_crc(d)
    st = select(evs, esxwatch_collector="agent", esxwatch_kind="status")
    eq(len(st), 1, "status events")
    v = int(st[0]["esxwatch_diagnosis_memory_bytes"])
    if not 10000 < v < 1024 * 1024:
        fail("esxwatch_diagnosis_memory_bytes = %d" % v)


def test_silent_host_logs_and_reports_on_resume(d):
    """The destination answers 503 (Retry-After 4 s) four times, then
    accepts: past silent_after (10 s) the agent logs the silence once, and
    once delivery resumes an event says how long it lasted."""
    sys.path.insert(0, os.path.join(harness.TOP, "tests", "lib"))
    import receivers
    host = harness.FakeHost(d)
    network(host, {})
    with receivers.HttpReceiver(script=["503:ra=4"] * 4) as r:
        agent = Agent(d, """server: {proto: http, url: "http://127.0.0.1:%d/v1/logs", ssl: no, compress: none}
storage: {directory: "@STORAGE@"}
host: {platform: esxi, tools_dir: "%s"}
collectors:
  nic: {enabled: yes, interval: 1}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
  diagnosis: {enabled: yes, interval: 1, silent_after: 10}
filelog: {}
""" % (r.port, host.tools_dir))
        agent.start()
        got = harness.wait_for(lambda: [e for e in list(r.events)
                                        if e.get("esxwatch_diagnosis") == "silent_host"],
                               timeout=90, what="the silent_host event")
        agent.stop()
    eq(len(got), 1, "silent_host events")
    a = got[0]
    eq(a.get("esxwatch_destination"), "server", "destination")
    if not 10 < int(a["esxwatch_outage_s"]) < 60:
        fail("outage %s s" % a["esxwatch_outage_s"])
    if int(a["esxwatch_queued_events"]) < 1 or a.get("esxwatch_dropped_events") != "0":
        fail("queued/dropped: %r" % a)
    if "Next:" not in a["text"] or "was interrupted for" not in a["text"]:
        fail("text: %s" % a["text"])
    log = agent.stderr_text()
    eq(log.count("no event has reached destination server"), 1, "silence log lines")


def all_scenario_events(root):
    """Every event of the stories, for the Log Insight query test."""
    evs = []
    for i, fn in enumerate((scenario_nfs_crc, scenario_flapping)):
        d = os.path.join(root, "s%d" % i)
        os.makedirs(d)
        evs += fn(d)[1]
    d = os.path.join(root, "drive")
    os.makedirs(d)
    evs += scenario_failing_drive(d)[1]
    d = os.path.join(root, "vsan")
    os.makedirs(d)
    evs += scenario_partitions(d)[1]
    return evs


if __name__ == "__main__":
    harness.main(globals())
