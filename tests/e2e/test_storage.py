"""Storage health end to end: the datastore, vsan and smart collectors of the
real binary against a simulated ESXi host built from real captures
(storage_host.py), with --once runs sharing one storage directory so that
every transition goes through the persisted previous state."""
import os
import time

import harness
from harness import Agent, FakeHost, eq, fail, select, wait_for
from storage_host import (SAN_DEV, SAN_DS, SATA_HDD, SATA_OLD, SMART_4COL,
                          SMART_5COL, StorageHost, device_record, fixture,
                          keyed, path_record, retable, smart_device_list,
                          smart_table)


def config(h, enable, extra="", platform="esxi", timeout=10):
    col = ""
    for name in ("nic", "datastore", "vsan", "smart", "agent"):
        if name in enable:
            col += "  %s: {enabled: yes, interval: %d, timeout: %d}\n" % (
                name, enable[name], timeout)
        else:
            col += "  %s: {enabled: no}\n" % name
    return ("host: {platform: %s, tools_dir: %s, hostname: esx01}\n"
            "storage: {directory: @STORAGE@}\n"
            "collectors:\n%s"
            "filelog: {}\n%s" % (platform, h.tools_dir, col, extra))


def once(a, env=None):
    rc, evs, err = a.once(env=env)
    if rc != 0:
        fail("--once exit status %d: %s" % (rc, err[-800:]))
    return evs, err


def only(events, **kw):
    got = select(events, **kw)
    if len(got) != 1:
        fail("want exactly one event with %r, got %d: %r" % (
            kw, len(got), [e.get("text") for e in got][:8]))
    return got[0]


def none_of(events, what, **kw):
    got = select(events, **kw)
    if got:
        fail("%s: unexpected %r" % (what, [e.get("text") for e in got][:5]))


# --- datastore --------------------------------------------------------------------

def ds_agent(d):
    h = StorageHost(os.path.join(d, "host"))
    h.apply()
    return h, Agent(d, config(h, {"datastore": 30}))


def test_first_sight_is_samples_only(d):
    h, a = ds_agent(d)
    evs, _ = once(a)
    none_of(evs, "first run", esxwatch_kind="change")
    none_of(evs, "first run", esxwatch_kind="alert")
    dev = only(evs, esxwatch_kind="sample", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(dev["esxwatch_state"], "ok", "device state")
    eq(dev["esxwatch_datastore"], SAN_DS, "device's datastore")
    eq(dev["esxwatch_paths_active"], "2", "active paths")
    eq(dev["esxwatch_paths_dead"], "0", "dead paths")
    eq(dev["esxwatch_fs_type"], "VMFS-6", "fs type")
    ds = only(evs, esxwatch_kind="sample", esxwatch_datastore="isos")
    eq(ds["esxwatch_state"], "ok", "nfs41 state")
    eq(ds["esxwatch_fs_type"], "NFS41", "nfs41 type")
    eq(ds["esxwatch_device"], "", "nfs has no device")
    only(evs, esxwatch_kind="sample", esxwatch_datastore="nfsbackup")
    osd = only(evs, esxwatch_kind="sample", esxwatch_device="mpx.vmhba0:C0:T0:L0", esxwatch_entity="device")
    if not osd["esxwatch_datastore"].startswith("OSDATA-"):
        fail("boot disk datastore %r" % osd["esxwatch_datastore"])
    # Same again: still nothing but samples.
    evs, _ = once(a)
    none_of(evs, "second run", esxwatch_kind="change")


def test_device_id_prefix_of_another(d):
    # A device whose id is the start of the SAN LUN's id, with its paths
    # dead: its paths are not the SAN datastore's.
    h, a = ds_agent(d)
    other = SAN_DEV[:-1]
    h.set_both("storage core device list", text=keyed([
        h.device_list(), device_record(other, local=False)]))
    h.set_both("storage core path list", text=keyed([
        h.path_list(), path_record(other, 5, "dead"),
        path_record(other, 6, "dead")]))
    evs, _ = once(a)
    ds = only(evs, esxwatch_kind="sample", esxwatch_datastore=SAN_DS,
              esxwatch_entity="datastore")
    eq(ds["esxwatch_paths_active"], "2", "active paths of the datastore")
    eq(ds["esxwatch_paths_dead"], "0", "dead paths of the datastore")
    eq(ds["esxwatch_state"], "ok", "datastore state")


def test_all_paths_dead_is_apd_then_recovers(d):
    h, a = ds_agent(d)
    once(a)
    h.san_paths = ["dead", "dead"]
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(ch["esxwatch_state"], "apd", "state")
    eq(ch["esxwatch_previous_state"], "ok", "previous")
    eq(ch["esxwatch_datastore"], SAN_DS, "names the datastore")
    eq(ch["esxwatch_paths_dead"], "2", "dead paths")
    eq(ch["esxwatch_severity"], "critical", "severity")
    al = only(evs, esxwatch_kind="alert", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(al["esxwatch_severity"], "critical", "apd alert severity")
    if SAN_DS not in al["text"]:
        fail("alert text does not name the datastore: %r" % al["text"])
    dsch = only(evs, esxwatch_kind="change", esxwatch_datastore=SAN_DS,
                esxwatch_entity="datastore")
    eq(dsch["esxwatch_state"], "apd", "datastore state")
    eq(dsch["esxwatch_device"], SAN_DEV, "datastore's device")
    # Still down: no repeated change or alert (also after a restart).
    evs, _ = once(a)
    none_of(evs, "still apd", esxwatch_kind="change")
    none_of(evs, "still apd", esxwatch_kind="alert")
    # Recovery.
    h.san_paths = ["active", "active"]
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(ch["esxwatch_state"], "ok", "recovered")
    eq(ch["esxwatch_previous_state"], "apd", "previous")
    none_of(evs, "recovery", esxwatch_kind="alert")


def test_one_path_dead_is_degraded(d):
    h, a = ds_agent(d)
    once(a)
    h.san_paths = ["active", "dead"]
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(ch["esxwatch_state"], "degraded", "state")
    eq(ch["esxwatch_paths_active"], "1", "active")
    eq(ch["esxwatch_severity"], "warning", "severity")
    none_of(evs, "degraded", esxwatch_kind="alert")
    # The dead path disappears after a rescan: still fewer than before.
    h.san_paths = ["active"]
    h.apply()
    evs, _ = once(a)
    none_of(evs, "path removed", esxwatch_kind="change")
    s = only(evs, esxwatch_kind="sample", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(s["esxwatch_state"], "degraded", "fewer paths than before")
    # A day later the lower count is the new normal: back to ok.
    kv = os.path.join(a.storage, "state", "datastore.kv")
    with open(kv) as f:
        lines = f.read().splitlines()
    key = "degsince:" + SAN_DEV
    if not any(l.startswith(key + "\t") for l in lines):
        fail("no degraded-since mark in %s" % kv)
    lines = [key + "\t1000" if l.startswith(key + "\t") else l for l in lines]
    with open(kv, "w") as f:
        f.write("\n".join(lines) + "\n")
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(ch["esxwatch_state"], "ok", "new baseline after a day")


def test_pdl_not_connected_alerts(d):
    h, a = ds_agent(d)
    once(a)
    h.san_status = "not connected"
    h.san_paths = ["dead", "dead"]
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(ch["esxwatch_state"], "pdl", "state")
    al = only(evs, esxwatch_kind="alert", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(al["esxwatch_severity"], "critical", "pdl alert")
    eq(al["esxwatch_state"], "pdl", "alert state")


def test_pdl_from_vdq_evidence(d):
    h, a = ds_agent(d)
    once(a)
    h.san_status = "dead"
    h.san_paths = ["dead", "dead"]
    h.apply()
    vdq = ('[\n   {\n      "Name"     : "%s",\n      "VSANUUID" : "",\n'
           '      "State"    : "Ineligible for use by VSAN",\n'
           '      "Reason"   : "Non-local disk",\n      "IsSSD"    : "0",\n'
           '"IsCapacityFlash": "0",\n      "IsPDL"    : "1",\n   },\n\n]\n' % SAN_DEV)
    h.set("vdq", "-q", text=vdq)
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SAN_DEV, esxwatch_entity="device")
    eq(ch["esxwatch_state"], "pdl", "vdq IsPDL 1")


def test_nfs41_inaccessible(d):
    h, a = ds_agent(d)
    once(a)
    h.nfs41_accessible = False
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_datastore="isos")
    eq(ch["esxwatch_state"], "inaccessible", "state")
    eq(ch["esxwatch_previous_state"], "ok", "previous")
    eq(ch["esxwatch_fs_type"], "NFS41", "type")
    eq(ch["esxwatch_nfs_host"], "10.1.0.7", "server")
    if "isos" not in ch["text"]:
        fail("text does not name the volume: %r" % ch["text"])
    h.nfs41_accessible = True
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_datastore="isos")
    eq(ch["esxwatch_state"], "ok", "back")


def test_vanished_datastore_is_unmounted_once(d):
    h, a = ds_agent(d)
    once(a)
    # A failed extent list must not look like a vanished datastore.
    h.set_both("storage vmfs extent list", text="Error: busy\n", rc=1)
    evs, _ = once(a)
    none_of(evs, "extent list failed", esxwatch_kind="change")
    h.san_ds_present = False
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_datastore=SAN_DS)
    eq(ch["esxwatch_state"], "unmounted", "vanished")
    eq(ch["esxwatch_previous_state"], "ok", "previous")
    evs, _ = once(a)
    none_of(evs, "still gone", esxwatch_kind="change")
    h.san_ds_present = True
    h.apply()
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_datastore=SAN_DS,
              esxwatch_entity="datastore")
    eq(ch["esxwatch_state"], "ok", "back")


def test_failures_claim_nothing(d):
    h, a = ds_agent(d)
    once(a)
    # esxcli answers with an error line and a non-zero status.
    h.set_both("storage core path list", text="Error: Unable to get path list\n", rc=1)
    evs, err = once(a)
    none_of(evs, "failed path list", esxwatch_kind="sample")
    none_of(evs, "failed path list", esxwatch_kind="change")
    st = only(evs, esxwatch_kind="status", esxwatch_collector="datastore")
    eq(st["esxwatch_severity"], "error", "error event")
    if "storage core path list" not in err:
        fail("no log line naming the command: %r" % err[-500:])
    # Still failing: no second error event.
    evs, _ = once(a)
    none_of(evs, "still failing", esxwatch_kind="status")
    # Garbage, a header only, empty output: never a state change.
    for text in ("\x00\x01garbage\n", "UID  State\n---  -----\n", ""):
        h.set_both("storage core path list", text=text)
        evs, _ = once(a)
        none_of(evs, "bad output %r" % text, esxwatch_kind="change")
    # The device list truncated mid-record: still no false transition.
    h.apply()
    h.set_both("storage core device list", text=h.device_list()[:200])
    evs, _ = once(a)
    none_of(evs, "truncated device list", esxwatch_kind="change")
    # Working again: samples, no change (nothing changed on the host).
    h.apply()
    evs, _ = once(a)
    none_of(evs, "recovered", esxwatch_kind="change")
    only(evs, esxwatch_kind="sample", esxwatch_device=SAN_DEV, esxwatch_entity="device")


def test_hung_esxcli_costs_one_timeout(d):
    h = StorageHost(os.path.join(d, "host"))
    h.apply()
    a = Agent(d, config(h, {"datastore": 30}, timeout=2))
    once(a)
    h.set_both("storage core path list", text=h.path_list(), sleep=1000)
    t0 = time.time()
    evs, err = once(a)
    took = time.time() - t0
    if took > 2 + 4:
        fail("--once took %.1f s with a 2 s timeout" % took)
    st = only(evs, esxwatch_kind="status", esxwatch_collector="datastore")
    if "timed out" not in st["text"]:
        fail("error event text %r" % st["text"])
    none_of(evs, "hung path list", esxwatch_kind="sample")
    none_of(evs, "hung path list", esxwatch_kind="change")
    # The following queries were not even tried in that round.
    calls = [c for c in h.calls() if "nfs41" in c]
    eq(len(calls), 1, "nfs41 list asked only in the first round")


def test_linux_nfs_mount_probe(d):
    h = FakeHost(os.path.join(d, "host"), tools=())
    mnt = os.path.join(d, "mnt", "nfs share")
    os.makedirs(mnt)
    mi = os.path.join(d, "mountinfo")
    with open(mi, "w") as f:
        f.write("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
        f.write("98 22 0:53 / %s rw,relatime shared:60 - nfs4 filer:/export/vm "
                "rw,vers=4.1\n" % mnt.replace(" ", "\\040"))
    a = Agent(d, config(h, {"datastore": 30}, platform="linux"))
    env = {"ESXWATCH_MOUNTINFO": mi}
    evs, _ = once(a, env=env)
    s = only(evs, esxwatch_kind="sample", esxwatch_datastore=mnt)
    eq(s["esxwatch_state"], "ok", "reachable mount")
    eq(s["esxwatch_fs_type"], "nfs4", "type")
    eq(s["esxwatch_nfs_share"], "filer:/export/vm", "source")
    none_of(evs, "ext4 is not a network fs", esxwatch_datastore="/")
    os.rmdir(mnt)
    evs, _ = once(a, env=env)
    ch = only(evs, esxwatch_kind="change", esxwatch_datastore=mnt)
    eq(ch["esxwatch_state"], "inaccessible", "gone")
    eq(ch["esxwatch_previous_state"], "ok", "previous")


# --- vsan --------------------------------------------------------------------------

VDQ8 = "esxi/vdq-q/esxi8.txt"
VDQ65 = "esxi/vdq-q/esxi65-trailing-commas-truncated.txt"
SAMSUNG = "t10.ATA_____Samsung_SSD_850_EVO_1TB_________________S2RENX0HB08493A_____"


def vsan_agent(d):
    h = FakeHost(os.path.join(d, "host"))
    return h, Agent(d, config(h, {"vsan": 300}))


def test_vsan_esxi8_has_partitions(d):
    h, a = vsan_agent(d)
    h.set("vdq", "-q", fixture=VDQ8)
    evs, _ = once(a)
    none_of(evs, "first sight", esxwatch_kind="change")
    e = only(evs, esxwatch_kind="sample", esxwatch_device="mpx.vmhba32:C0:T0:L0")
    eq(e["esxwatch_vsan_state"], "ineligible", "state")
    eq(e["esxwatch_reason"], "Has partitions", "reason")
    eq(e["esxwatch_vsan_state_text"], "Ineligible for use by VSAN", "text")
    eq(e["esxwatch_is_ssd"], "0", "is_ssd")
    eq(e["esxwatch_is_pdl"], "0", "is_pdl")
    eq(e["esxwatch_size_mb"], "60000", "size")
    if "partedUtil getptbl /vmfs/devices/disks/mpx.vmhba32:C0:T0:L0" not in e["text"]:
        fail("no partedUtil hint: %r" % e["text"])
    eq(len(select(evs, esxwatch_collector="vsan", esxwatch_kind="sample")), 3, "disks")


def test_vsan_trailing_commas_and_gaining_a_partition(d):
    h, a = vsan_agent(d)
    h.set("vdq", "-q", fixture=VDQ65)
    evs, _ = once(a)
    e = only(evs, esxwatch_kind="sample",
             esxwatch_device="t10.SanDisk00Ultra_Fit000000000000004C530001151112120280")
    eq(e["esxwatch_vsan_state"], "ineligible", "state")
    eq(e["esxwatch_reason"], "Has partitions", "reason")
    e = only(evs, esxwatch_kind="sample", esxwatch_device=SAMSUNG)
    eq(e["esxwatch_vsan_state"], "eligible", "eligible disk")
    eq(e["esxwatch_is_ssd"], "1", "ssd")
    # The Samsung gets a partition: ESXi 7 form, trailing commas everywhere.
    text = fixture("vdq-q/esxi65-trailing-commas-truncated.txt")
    i = text.index(SAMSUNG)
    j = text.index("}", i)
    rec = text[i:j].replace('"Eligible for use by VSAN"', '"Ineligible for use by VSAN"')
    rec = rec.replace('"Reason"   : "None"', '"Reason"   : "Has partitions"')
    rec = rec.replace('"IsPDL"    : "0",', '"IsPDL"    : "0",\n      "Size(MB)" : "953869",')
    h.set("vdq", "-q", text=text[:i] + rec + text[j:] + "\n]\n")
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_collector="vsan")
    eq(ch["esxwatch_device"], SAMSUNG, "device")
    eq(ch["esxwatch_vsan_state"], "ineligible", "state")
    eq(ch["esxwatch_previous_state"], "eligible", "previous")
    eq(ch["esxwatch_reason"], "Has partitions", "reason")
    eq(ch["esxwatch_size_mb"], "953869", "size")
    if "partedUtil getptbl" not in ch["text"]:
        fail("no partedUtil hint: %r" % ch["text"])


def test_vsan_failure_and_not_esxi(d):
    h, a = vsan_agent(d)
    h.set("vdq", "-q", text="Error: VSAN is not available\n", rc=1)
    evs, err = once(a)
    none_of(evs, "failed vdq", esxwatch_kind="sample")
    only(evs, esxwatch_kind="status", esxwatch_collector="vsan")
    h.set("vdq", "-q", text="")
    evs, err = once(a)
    none_of(evs, "empty vdq", esxwatch_kind="sample")
    # On Linux: one info line, no events.
    a2 = Agent(os.path.join(d, "host"), config(h, {"vsan": 300}, platform="linux"),
               name="linux.yaml")
    evs, err = once(a2)
    none_of(evs, "linux", esxwatch_collector="vsan")
    if err.count("does not apply") != 1:
        fail("want one 'does not apply' line: %r" % err[-500:])


# --- smart -------------------------------------------------------------------------

def smart_host(d):
    h = FakeHost(os.path.join(d, "host"))
    h.set_both("storage core device list", text=smart_device_list())
    h.set_both("storage core device smart get -d " + SATA_HDD, fixture="esxi/" + SMART_5COL)
    h.set_both("storage core device smart get -d " + SATA_OLD, fixture="esxi/" + SMART_4COL)
    h.set_both("nvme device list", fixture="esxi/esxcli-nvme-device-list/esxi803.txt")
    h.set_both("storage core path list",
               fixture="esxi/esxcli-storage-core-path-list/esxi803-local-sata-nvme-usb.txt")
    for hba in ("vmhba0", "vmhba1", "vmhba4"):
        h.set_both("nvme device log smart get -A " + hba,
                   fixture="esxi/esxcli-nvme-device-log-smart-get/esxi803-wd-sn850x.txt")
    return h


WD_NVME = "t10.NVMe____WD_BLACK_SN850X_4000GB__________________4695514E8B441B00"


def test_smart_tables_and_nvme(d):
    h = smart_host(d)
    a = Agent(d, config(h, {"smart": 3600}))
    evs, _ = once(a)
    none_of(evs, "first sight", esxwatch_kind="change")
    none_of(evs, "healthy drives", esxwatch_kind="alert")
    none_of(evs, "healthy drives", esxwatch_kind="status")
    e = only(evs, esxwatch_kind="sample", esxwatch_device=SATA_HDD)
    eq(e["esxwatch_health"], "ok", "health")
    eq(e["esxwatch_temperature_c"], "30", "5-column temperature (packed raw)")
    eq(e["esxwatch_power_on_hours"], "23065", "5-column power-on hours")
    eq(e["esxwatch_reallocated_sectors"], "0", "reallocated")
    eq(e["esxwatch_pending_sectors"], "0", "pending")
    e = only(evs, esxwatch_kind="sample", esxwatch_device=SATA_OLD)
    # 4 columns (no Raw): Value is the drive's normalised score, never a
    # temperature or hours; it is reported as such.
    for f in ("esxwatch_temperature_c", "esxwatch_power_on_hours", "esxwatch_reallocated_sectors"):
        if f in e:
            fail("4-column table: %s from a normalised value: %r" % (f, e[f]))
    eq(e["esxwatch_drive_temperature_normalized"], "116", "4-column normalised temperature")
    eq(e["esxwatch_power_on_hours_normalized"], "70", "4-column normalised hours")
    e = only(evs, esxwatch_kind="sample", esxwatch_device=WD_NVME)
    eq(e["esxwatch_adapter"], "vmhba0", "adapter")
    eq(e["esxwatch_temperature_c"], "39", "kelvin")
    eq(e["esxwatch_power_on_hours"], str(0x63c6), "hex hours")
    eq(e["esxwatch_critical_warning"], "0", "critical warning")
    e = only(evs, esxwatch_kind="sample",
             esxwatch_device="t10.NVMe____WD_BLACK_SN850X_4000GB__________________243E584E8B441B00")
    eq(e["esxwatch_adapter"], "vmhba1", "second adapter")
    e = only(evs, esxwatch_kind="sample",
             esxwatch_device="t10.NVMe____EO000750KWTXC___________________________00014935E3E4D25C")
    eq(e["esxwatch_adapter"], "vmhba4", "third adapter")
    # Neither the USB disk nor the virtual disk was asked.
    for c in h.calls():
        if "smart get -d mpx." in c:
            fail("asked a USB/virtual disk: %s" % c)


def test_smart_impending_failure_and_growth(d):
    h = smart_host(d)
    a = Agent(d, config(h, {"smart": 3600}))
    once(a)
    bad = smart_table(SMART_5COL, health="IMPENDING FAILURE",
                      param="Reallocated Sector Count", column="Raw", value="24")
    h.set_both("storage core device smart get -d " + SATA_HDD, text=bad)
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SATA_HDD)
    eq(ch["esxwatch_health"], "impending_failure", "health")
    eq(ch["esxwatch_health_text"], "IMPENDING FAILURE", "text kept")
    eq(ch["esxwatch_previous_state"], "ok", "previous health")
    alerts = select(evs, esxwatch_kind="alert", esxwatch_device=SATA_HDD)
    crit = [x for x in alerts if x["esxwatch_severity"] == "critical"]
    if len(crit) != 1 or "IMPENDING FAILURE" not in crit[0]["text"]:
        fail("want one critical health alert, got %r" % [x["text"] for x in alerts])
    grew = [x for x in alerts if "reallocated sectors grew from 0 to 24" in x["text"]]
    eq(len(grew), 1, "reallocated growth alert")
    eq(grew[0]["esxwatch_reallocated_sectors"], "24", "count")
    # Unchanged: no repeated alert.
    evs, _ = once(a)
    none_of(evs, "still failing", esxwatch_kind="alert")
    # 4-column table with a health text of no known spelling: not ok,
    # so a warning (kept as said), with its alert.
    h.set_both("storage core device smart get -d " + SATA_OLD,
               text=smart_table(SMART_4COL, health="Degraded"))
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SATA_OLD)
    eq(ch["esxwatch_health"], "warning", "unrecognised health text")
    eq(ch["esxwatch_health_text"], "Degraded", "text kept")
    al = only(evs, esxwatch_kind="alert", esxwatch_device=SATA_OLD)
    eq(al["esxwatch_severity"], "warning", "alert severity")
    # "Unknown" says nothing about the drive: unknown, no alert.
    h.set_both("storage core device smart get -d " + SATA_OLD,
               text=smart_table(SMART_4COL, health="Unknown"))
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device=SATA_OLD)
    eq(ch["esxwatch_health"], "unknown", "unknown health")
    none_of(evs, "unknown is no alert", esxwatch_kind="alert",
            esxwatch_device=SATA_OLD)


def test_smart_esxi703_low_byte_raw(d):
    h = smart_host(d)
    h.set_both("storage core device smart get -d " + SATA_HDD,
               fixture="esxi/esxcli-storage-core-device-smart-get/esxi703-sata-ssd-raw-lowbyte.txt")
    a = Agent(d, config(h, {"smart": 3600}))
    evs, _ = once(a, env={"ESXWATCH_ESXI_RELEASE": "7.0.3"})
    e = only(evs, esxwatch_kind="sample", esxwatch_device=SATA_HDD)
    eq(e["esxwatch_temperature_c"], "38", "low byte is the temperature")
    eq(e.get("esxwatch_power_on_hours"), None, "233 is not the power-on hours")
    eq(e["esxwatch_raw_lowbyte"], "true", "marked")
    eq(e["esxwatch_media_wearout"], "99", "wearout")
    # On 8.x the same raw value is taken as it is.
    evs, _ = once(a, env={"ESXWATCH_ESXI_RELEASE": "8.0.3"})
    e = only(evs, esxwatch_kind="sample", esxwatch_device=SATA_HDD)
    eq(e["esxwatch_power_on_hours"], "233", "8.x raw")


def test_smart_above_rated_max_temperature(d):
    h = smart_host(d)
    a = Agent(d, config(h, {"smart": 3600}))
    t = smart_table(SMART_4COL, param="Drive Temperature", column="Value", value="48")
    # Without a Worst the Value is a real reading (a normalised score of an
    # ATA attribute has one, and is never taken as C).
    t = retable(t, "Drive Temperature", "Worst", "N/A")
    t = retable(t, "Driver Rated Max Temperature", "Value", "70")
    h.set_both("storage core device smart get -d " + SATA_OLD, text=t)
    evs, _ = once(a)
    e = only(evs, esxwatch_kind="sample", esxwatch_device=SATA_OLD)
    eq(e["esxwatch_temperature_c"], "48", "temperature")
    eq(e["esxwatch_max_temperature_c"], "70", "rated maximum")
    none_of(evs, "cool drive", esxwatch_kind="alert")
    h.set_both("storage core device smart get -d " + SATA_OLD,
               text=retable(t, "Drive Temperature", "Value", "73"))
    evs, _ = once(a)
    al = only(evs, esxwatch_kind="alert", esxwatch_device=SATA_OLD)
    if "above its rated maximum 70 C" not in al["text"]:
        fail("alert text %r" % al["text"])
    evs, _ = once(a)
    none_of(evs, "still hot", esxwatch_kind="alert")


def test_smart_bad_answers_claim_nothing(d):
    h = smart_host(d)
    a = Agent(d, config(h, {"smart": 3600}))
    once(a)
    cmd = "storage core device smart get -d " + SATA_HDD
    cases = [("Error: Cannot get SMART data for device\n", 1),
             ("", 0), ("Parameter  Value  Threshold  Worst  Raw\n"
                       "---------  -----  ---------  -----  ---\n", 0),
             ("\x00\xff garbage \x01\n", 0),
             (fixture(SMART_5COL)[:150], 0)]
    for i, (text, rc) in enumerate(cases):
        h.set_both(cmd, text=text, rc=rc or None)
        evs, _ = once(a)
        none_of(evs, "bad answer %d" % i, esxwatch_kind="change")
        none_of(evs, "bad answer %d" % i, esxwatch_kind="alert")
        none_of(evs, "bad answer %d" % i, esxwatch_kind="sample",
                esxwatch_device=SATA_HDD)
        st = select(evs, esxwatch_kind="status", esxwatch_collector="smart")
        eq(len(st), 1 if i == 0 else 0, "error events for bad answer %d" % i)
        # The other drive is still watched.
        only(evs, esxwatch_kind="sample", esxwatch_device=SATA_OLD)


def test_smart_nvme_critical_warning(d):
    h = smart_host(d)
    a = Agent(d, config(h, {"smart": 3600}))
    once(a)
    log = fixture("esxcli-nvme-device-log-smart-get/esxi803-wd-sn850x.txt")
    log = log.replace("Read Only Mode: false", "Read Only Mode: true")
    h.set_both("nvme device log smart get -A vmhba0", text=log)
    evs, _ = once(a)
    al = [x for x in select(evs, esxwatch_kind="alert", esxwatch_device=WD_NVME)
          if "critical warning" in x["text"]]
    eq(len(al), 1, "critical warning alert")
    eq(al[0]["esxwatch_severity"], "critical", "severity")
    eq(al[0]["esxwatch_critical_warning"], str(0x08), "bits")


def test_smart_linux_smartctl(d):
    h = FakeHost(os.path.join(d, "host"), tools=("smartctl",))
    a = Agent(d, config(h, {"smart": 3600}, platform="linux"))
    h.set("smartctl", "--scan", text="/dev/sda -d sat # /dev/sda [SAT], ATA device\n")
    js = ('{"smartctl": {"exit_status": 0}, "smart_status": {"passed": true},'
          ' "temperature": {"current": 35}, "power_on_time": {"hours": 812},'
          ' "ata_smart_attributes": {"table": [{"id": 5, "value": 100,'
          ' "raw": {"value": 0}}, {"id": 197, "value": 100, "raw": {"value": 0}},]}}')
    h.set("smartctl", "--json -a -d sat /dev/sda", text=js)
    evs, _ = once(a)
    e = only(evs, esxwatch_kind="sample", esxwatch_device="/dev/sda")
    eq(e["esxwatch_health"], "ok", "health")
    eq(e["esxwatch_temperature_c"], "35", "temperature")
    eq(e["esxwatch_power_on_hours"], "812", "hours")
    eq(e["esxwatch_smart_source"], "smartctl", "source")
    # Exit status bit 3: DISK FAILING.
    h.set("smartctl", "--json -a -d sat /dev/sda",
          text=js.replace('"passed": true', '"passed": false'), rc=8)
    evs, _ = once(a)
    ch = only(evs, esxwatch_kind="change", esxwatch_device="/dev/sda")
    eq(ch["esxwatch_health"], "failed", "failed")
    al = only(evs, esxwatch_kind="alert", esxwatch_device="/dev/sda")
    eq(al["esxwatch_severity"], "critical", "severity")
    # smartctl cannot open the device (bit 1): an error, no health claimed.
    h.set("smartctl", "--json -a -d sat /dev/sda",
          text=fixture("smartctl-json/esxi803-nvme-unable-to-detect.json"), rc=2)
    evs, _ = once(a)
    none_of(evs, "unreadable", esxwatch_kind="sample")
    none_of(evs, "unreadable", esxwatch_kind="change")
    only(evs, esxwatch_kind="status", esxwatch_collector="smart")


def test_smart_linux_without_smartctl(d):
    for p in ("/usr/sbin/smartctl", "/usr/bin/smartctl", "/sbin/smartctl",
              "/usr/local/sbin/smartctl", "/bin/smartctl"):
        if os.path.exists(p):
            return      # the machine has one: absence cannot be simulated
    h = FakeHost(os.path.join(d, "host"), tools=())
    a = Agent(d, config(h, {"smart": 3600}, platform="linux"))
    evs, err = once(a)
    none_of(evs, "no smartctl", esxwatch_collector="smart")
    if err.count("smartctl") != 1:
        fail("want one line about smartctl: %r" % err[-500:])


# --- a hung tool --------------------------------------------------------------------

def test_hung_smart_query_does_not_stall_nic(d):
    h = smart_host(d)
    h.set_both("network nic list", fixture="esxi/esxcli-network-nic-list/esxi90-vmxnet3.txt")
    h.set_both("network nic stats get -n vmnic0",
               fixture="esxi/esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt")
    h.set_both("storage core device smart get -d " + SATA_HDD, sleep=1000,
               fixture="esxi/" + SMART_5COL)
    out = os.path.join(d, "out.jsonl")
    cfg = ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
           "storage: {directory: @STORAGE@}\n"
           "server: {proto: file, path: %s}\n"
           "batch: {flush_interval: 1}\n"
           "collectors:\n"
           "  nic: {enabled: yes, interval: 1}\n"
           "  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
           "  smart: {enabled: yes, interval: 3600, timeout: 3}\n"
           "  agent: {enabled: no}\n"
           "filelog: {}\n" % (h.tools_dir, out))
    a = Agent(d, cfg)
    a.start()
    try:
        def events():
            return harness.file_events(out)
        # The whole smart round: the hung query costs its 3 s timeout.
        wait_for(lambda: select(events(), esxwatch_kind="sample",
                                esxwatch_device=SATA_OLD), timeout=30,
                 what="the smart round to reach the next drive")
        time.sleep(1.5)
        evs = events()
    finally:
        rc = a.stop()
    eq(rc, 0, "exit status")
    errs = select(evs, esxwatch_collector="smart", esxwatch_kind="status")
    eq(len(errs), 1, "one error event for the hung query")
    if "timed out" not in errs[0]["text"] or SATA_HDD not in errs[0]["text"]:
        fail("error event text %r" % errs[0]["text"])
    none_of(evs, "hung drive", esxwatch_kind="sample", esxwatch_device=SATA_HDD)
    # nic kept its 1 s schedule around the hung query: it waited at most
    # for that one query (3 s), and its samples kept coming before and after.
    nic = sorted(e["timestamp"] for e in select(evs, esxwatch_collector="nic",
                                                esxwatch_kind="sample"))
    smart_err_ts = errs[0]["timestamp"]
    if not nic or nic[0] > smart_err_ts or nic[-1] < smart_err_ts + 500:
        fail("nic samples do not surround the hang: %r (error at %d)" % (nic, smart_err_ts))
    gaps = [b - a for a, b in zip(nic, nic[1:])]
    if max(gaps) > 3000 + 1500:
        fail("nic waited %d ms between samples (timeout 3 s)" % max(gaps))


harness.main(globals())
