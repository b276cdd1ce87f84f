"""vsphere: hosts polled through the vSphere API, end to end — the real
binary against VMware's own API simulator (govmomi's vcsim, tests/vcsim/,
driven through tests/e2e/vcsim.py): nic samples per pnic per host, a link
taken down, APD/PDL from the datastore mounts, the event stream, restarts of
the agent and of the simulator, and the failures that must be one clear
line (wrong password, unreachable, an untrusted certificate).

The facts the simulator serves follow the vSphere API reference:
PhysicalNic.linkSpeed unset = link down; HostMountInfo.inaccessibleReason
AllPathsDown_Start / PermanentDeviceLoss; EventHistoryCollector
ReadNextEvents.
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Agent, select, eq, fail, wait_for  # noqa: E402
from vcsim import Vcsim  # noqa: E402

ENTRY = "vc1"
SIM = None
SIMDIR = None


def sim():
    """One simulator for the module: 2 clustered hosts and 1 standalone."""
    global SIM, SIMDIR
    if SIM is None:
        SIMDIR = harness.tmpdir("esxwatch-vcsim-")
        SIM = Vcsim(SIMDIR, cluster_hosts=2, standalone=1).start()
    return SIM


def config(s, pwfile, trust="first_use", ca="", interval=60, url=None,
           events="yes", extra=""):
    return """server: {hostname: ""}
storage: {directory: "@STORAGE@"}
collectors:
  nic: {enabled: yes, interval: 3600}
  datastore: {enabled: yes, interval: 3600}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: yes, interval: 3600}
filelog: {}
vsphere:
  %s:
    url: "%s"
    username: "%s"
    password_file: "%s"
    trust: %s
    ca: "%s"
    interval: %d
    events: %s
%s""" % (ENTRY, url or s.url, s.username, pwfile, trust, ca, interval, events,
         extra)


def agent_for(d, s, password=None, **kw):
    d = harness.tmpdir()
    pw = os.path.join(d, "pw")
    with open(pw, "w") as f:
        f.write((password if password is not None else s.password) + "\n")
    os.chmod(pw, 0o600)
    return Agent(d, config(s, pw, **kw))


def polled(evs, **fields):
    return select(evs, esxwatch_input="vsphere", esxwatch_vsphere=ENTRY, **fields)


def once(a):
    rc, evs, err = a.once(timeout=60)
    return evs, err


def host_names(s):
    return [h["name"] for h in s.host_list()]


def test_nic_samples_every_pnic_of_every_host(d):
    s = sim()
    a = agent_for(d, s)
    evs, err = once(a)
    want = sorted((h["name"], p) for h in s.host_list() for p in h["pnics"])
    got = sorted((e["hostname"], e["esxwatch_nic"]) for e in
                 polled(evs, esxwatch_collector="nic", esxwatch_kind="sample"))
    if not want:
        fail("the simulator lists no pnic")
    eq(got, want, "nic samples (hostname, nic)")
    for e in polled(evs, esxwatch_collector="nic"):
        eq(e["esxwatch_link"], "up", "link of %s/%s" % (e["hostname"], e["esxwatch_nic"]))
        if "esxwatch_rx_crc_errors" in e or "esxwatch_rx_crc_errors_delta" in e:
            fail("a CRC counter through the API, where the API has none: %r" % e)
        if not e.get("esxwatch_speed_mbps") or not e.get("esxwatch_driver"):
            fail("speed or driver missing: %r" % e)
    # the agent's own events still name this machine
    if not select(evs, esxwatch_collector="agent"):
        fail("no agent event: %s" % err[-2000:])


def test_link_down_is_one_change_for_that_host_only(d):
    s = sim()
    a = agent_for(d, s)
    hosts = s.host_list()
    h, nic = hosts[0]["name"], hosts[0]["pnics"][-1]
    once(a)
    s.set_link(h, nic, up=False)
    try:
        evs, err = once(a)
    finally:
        s.set_link(h, nic, up=True)
    ch = polled(evs, esxwatch_collector="nic", esxwatch_kind="change")
    eq([(e["hostname"], e["esxwatch_nic"], e["esxwatch_link"]) for e in ch],
       [(h, nic, "down")], "nic changes")
    smp = polled(evs, esxwatch_collector="nic", esxwatch_kind="sample",
                 hostname=h, esxwatch_nic=nic)
    eq([e["esxwatch_link"] for e in smp], ["down"], "the sample after")


def test_changes_arrive_through_the_property_filter(d):
    """A running agent reads every property once (the filter's first
    WaitForUpdatesEx); later polls ask only what changed: a link going
    down and a datastore losing its device arrive as modify updates, with
    no RetrievePropertiesEx, no new view or filter, and fewer requests."""
    s = sim()
    hosts = s.host_list()
    h, nic = hosts[0]["name"], hosts[0]["pnics"][-1]
    ds = s.datastores()[0]["name"]
    a = agent_for(d, s, interval=5, events="no")
    a.start()
    try:
        def poll(n):
            v = status_json(a).get("vsphere") or []
            return v[0] if v and v[0]["polls"] >= n else None
        full = wait_for(lambda: poll(1), 30, what="the first poll")["requests"]
        s.stats(reset=True)
        s.set_link(h, nic, up=False)
        s.set_datastore(h, ds, accessible=False, reason="PermanentDeviceLoss")

        def changed():
            evs = a.stdout_events()
            link = polled(evs, esxwatch_collector="nic", esxwatch_kind="change",
                          hostname=h, esxwatch_nic=nic)
            dsc = polled(evs, esxwatch_collector="datastore", esxwatch_kind="change",
                         hostname=h, esxwatch_datastore=ds, esxwatch_entity="datastore")
            return (link, dsc) if link and dsc else None
        link, dsc = wait_for(changed, 20, what="the link and datastore changes")
        eq([e["esxwatch_link"] for e in link], ["down"], "the link change")
        eq([e["esxwatch_state"] for e in dsc], ["pdl"], "the datastore change")
        m = s.stats()["methods"]
        for gone in ("RetrievePropertiesEx", "ContinueRetrievePropertiesEx",
                     "CreateContainerView", "CreatePropertyCollector", "CreateFilter"):
            if m.get(gone):
                fail("%s called after the first poll: %r" % (gone, m))
        if not m.get("WaitForUpdatesEx"):
            fail("no WaitForUpdatesEx after the first poll: %r" % m)
        steady = wait_for(lambda: poll(2), 10, what="the second poll")["requests"]
        # first: CreatePropertyCollector, 2 CreateContainerView, CreateFilter,
        # WaitForUpdatesEx, QueryPerfCounter, QueryPerf (+ the login);
        # then WaitForUpdatesEx and QueryPerf
        if not steady < full - 3:
            fail("requests per poll did not fall: first %d, then %d" % (full, steady))
        if "reading every property again" in a.stderr_text():
            fail("a fallback without a fault: %s" % a.stderr_text()[-1500:])
        # a fault (the server forgot the version): said once, the state
        # dropped, everything read again in the same poll, which succeeds
        # with the link still down (read anew, not kept)
        polls = poll(1)["polls"]
        s.stats(reset=True)
        s.inject("WaitForUpdatesEx", "fault", fault="InvalidCollectorVersion")
        v = wait_for(lambda: poll(polls + 1), 10, what="the poll after the fault")
        eq((v["state"], v["last_error"]), ("ok", ""), "the poll after the fault")
        err = a.stderr_text()
        eq(len(re.findall(r"vsphere vc1: the property filter's updates failed "
                          r"\(fault InvalidCollectorVersion: .*reading every property again", err)),
           1, "the fallback said once: %s" % err[-1500:])
        m = s.stats()["methods"]
        eq((m.get("CreatePropertyCollector"), m.get("CreateFilter"), m.get("WaitForUpdatesEx")),
           (1, 1, 2), "a new collector and filter, then the full read: %r" % m)
        n0 = len(link)
        if len(polled(a.stdout_events(), esxwatch_collector="nic", esxwatch_kind="change",
                      hostname=h, esxwatch_nic=nic)) != n0:
            fail("the full read after the fault made a new link change")
    finally:
        s.inject("WaitForUpdatesEx", "fault", count=0)
        s.set_link(h, nic, up=True)
        s.set_datastore(h, ds, accessible=True)
        rc = a.stop()
    eq(rc, 0, "agent exit")


def ds_states(evs, host, entity):
    return {e.get("esxwatch_datastore") if entity == "datastore" else e["esxwatch_device"]:
            e["esxwatch_state"]
            for e in polled(evs, esxwatch_collector="datastore", hostname=host,
                            esxwatch_kind="sample", esxwatch_entity=entity)}


def test_datastore_apd_and_pdl_from_the_mount(d):
    s = sim()
    a = agent_for(d, s)
    dss = s.datastores()
    ds = dss[0]["name"]
    h, other = host_names(s)[0], host_names(s)[1]
    evs, _ = once(a)
    eq(ds_states(evs, h, "datastore").get(ds), "ok", "before")
    try:
        s.set_datastore(h, ds, accessible=False, reason="AllPathsDown_Start")
        evs, err = once(a)
        eq(ds_states(evs, h, "datastore").get(ds), "apd", "AllPathsDown_Start: %s" % err[-1500:])
        eq(ds_states(evs, other, "datastore").get(ds), "ok", "another host")
        ch = polled(evs, esxwatch_collector="datastore", esxwatch_kind="change",
                    hostname=h, esxwatch_datastore=ds, esxwatch_entity="datastore")
        eq([(e["esxwatch_previous_state"], e["esxwatch_state"]) for e in ch],
           [("ok", "apd")], "the change")
        s.set_datastore(h, ds, accessible=False, reason="PermanentDeviceLoss")
        evs, err = once(a)
        eq(ds_states(evs, h, "datastore").get(ds), "pdl", "PermanentDeviceLoss")
    finally:
        s.set_datastore(h, ds, accessible=True)
    evs, _ = once(a)
    eq(ds_states(evs, h, "datastore").get(ds), "ok", "after")


def test_dead_paths_degrade_the_device(d):
    s = sim()
    a = agent_for(d, s)
    d = s.datastores()[0]
    h = host_names(s)[0]
    once(a)
    path = "vmhba64:C0:T0:L%d" % 0
    try:
        lun = d["lun"]
        s.set_path(h, path, "dead")
        evs, err = once(a)
        devs = ds_states(evs, h, "device")
        if devs.get(lun) not in ("degraded", "apd"):
            fail("a dead path: device %s is %r (%s)" % (lun, devs.get(lun), err[-1500:]))
    finally:
        s.set_path(h, path, "active")


def test_vsan_eligibility_from_query_disks_for_vsan(d):
    """HostVsanSystem.QueryDisksForVsan (VsanHostDiskResult.state,
    error.localizedMessage) through the vsan collector, per host."""
    s = sim()
    a = agent_for(d, s, events="no")
    a.write_config(open(a.config).read().replace(
        "vsan: {enabled: no}", "vsan: {enabled: yes, interval: 3600}"))
    h = host_names(s)[0]
    disks = s.vsan_disks(h)
    if not disks:
        fail("the simulator lists no vSAN disk for %s" % h)
    want = {"eligible": "eligible", "ineligible": "ineligible", "inUse": "in_use"}
    evs, err = once(a)
    got = {e["esxwatch_device"]: e["esxwatch_vsan_state"] for e in
           polled(evs, esxwatch_collector="vsan", esxwatch_kind="sample", hostname=h)}
    eq(got, {k: want[v] for k, v in disks.items()}, "vsan samples (%s)" % err[-1500:])
    disk = sorted(k for k, v in disks.items() if v == "eligible")[0]
    s.set_vsan_disk(h, disk, "ineligible", message="Disk is in use by another host")
    try:
        evs, err = once(a)
    finally:
        s.set_vsan_disk(h, disk, "eligible")
    ch = polled(evs, esxwatch_collector="vsan", esxwatch_kind="change")
    eq([(e["hostname"], e["esxwatch_device"], e["esxwatch_vsan_state"],
         e.get("esxwatch_reason")) for e in ch],
       [(h, disk, "ineligible", "Disk is in use by another host")], "the change")


SMART_DEFAULTS = (  # the simulator's (tests/vcsim/README.md), restored after a test
    ("smarthealthstatus", 0, None, None), ("smartmediawearoutindicator", 100, 0, 100),
    ("smartwriteerrorcount", 0, 0, 0), ("smartreaderrorcount", 0, 0, 0),
    ("smartpoweronhours", 8760, 0, 8760), ("smartpowercyclecount", 12, 0, 12),
    ("smartreallocatedsectorct", 0, 10, 0), ("smartdrivetemperature", 34, 0, 41))


def smart_agent(d, s):
    """An agent with only the smart collector on (interval: one round per run)."""
    a = agent_for(d, s, events="no")
    a.write_config(open(a.config).read()
                   .replace("smart: {enabled: no}", "smart: {enabled: yes, interval: 3600}")
                   .replace("nic: {enabled: yes, interval: 3600}", "nic: {enabled: no}")
                   .replace("datastore: {enabled: yes, interval: 3600}", "datastore: {enabled: no}"))
    return a


def clustered(s):
    return [h["name"] for h in s.host_list() if h["parent"].startswith("ClusterComputeResource:")]


def smart_disks(s, h):
    """The disks the vSAN health service summarises (not ineligible)."""
    return sorted(k for k, v in s.vsan_disks(h).items() if v != "ineligible")


def smart_reset(s, h, disk):
    for p, v, t, w in SMART_DEFAULTS:
        s.set_smart(h, disk, p, v, threshold=t, worst=w)


def test_smart_from_the_vsan_health_service(d):
    """VsanVcClusterHealthSystem.VsanQueryVcClusterSmartStatsSummary (vSAN
    Management API; VsanSmartParameter.value, smarthealthstatus 0 OK /
    1 Warning): one request per cluster, the values in the smart
    collector's own fields, a health change and a growing reallocated count
    as the local source reports them; a host outside a cluster has none."""
    s = sim()
    a = smart_agent(d, s)
    hs = clustered(s)
    alone = [h["name"] for h in s.host_list() if h["name"] not in hs]
    if not hs or not alone:
        fail("the simulator has no clustered or no standalone host: %r" % s.host_list())
    h, disk = hs[0], smart_disks(s, hs[0])[0]
    for p, v, t, w in (("smartreallocatedsectorct", 3, 10, 3), ("smartdrivetemperature", 38, 0, 45),
                       ("smartpoweronhours", 12345, 0, 12345), ("smartreaderrorcount", 2, 0, 2),
                       ("smartwriteerrorcount", 1, 0, 1), ("smartmediawearoutindicator", 97, 0, 100),
                       ("smartpowercyclecount", 40, 0, 40)):
        s.set_smart(h, disk, p, v, threshold=t, worst=w)
    try:
        s.call("stats", reset=True)
        evs, err = once(a)
        calls = s.call("stats")["methods"].get("VsanQueryVcClusterSmartStatsSummary")
        smp = polled(evs, esxwatch_collector="smart", esxwatch_kind="sample")
        eq(sorted((e["hostname"], e["esxwatch_device"]) for e in smp),
           sorted((x, k) for x in hs for k in smart_disks(s, x)), "smart samples (%s)" % err[-1500:])
        eq(calls, 1, "VsanQueryVcClusterSmartStatsSummary calls (one cluster)")
        e = select(smp, hostname=h, esxwatch_device=disk)[0]
        keys = ("esxwatch_health", "esxwatch_health_text", "esxwatch_reallocated_sectors",
                "esxwatch_temperature_c", "esxwatch_power_on_hours", "esxwatch_read_errors",
                "esxwatch_write_errors", "esxwatch_media_wearout", "esxwatch_power_cycles",
                "esxwatch_smart_source", "esxwatch_pending_sectors")
        eq({k: e.get(k) for k in keys},
           {"esxwatch_health": "ok", "esxwatch_health_text": "OK",
            "esxwatch_reallocated_sectors": "3", "esxwatch_temperature_c": "38",
            "esxwatch_power_on_hours": "12345", "esxwatch_read_errors": "2",
            "esxwatch_write_errors": "1", "esxwatch_media_wearout": "97",
            "esxwatch_power_cycles": "40", "esxwatch_smart_source": "vsan-health",
            "esxwatch_pending_sectors": None}, "the parsed values")
        eq(select(evs, esxwatch_collector="smart", hostname=alone[0]), [],
           "smart events for a host outside a cluster")
        eq(len(re.findall(r"SMART absent for 1 host\(s\) outside a cluster", err)), 1,
           "the gap said once (%s)" % err[-1500:])
        s.set_smart(h, disk, "smarthealthstatus", 1)
        s.set_smart(h, disk, "smartreallocatedsectorct", 12, threshold=10, worst=12)
        evs, err = once(a)
    finally:
        smart_reset(s, h, disk)
    ch = polled(evs, esxwatch_collector="smart", esxwatch_kind="change")
    eq([(e["hostname"], e["esxwatch_device"], e["esxwatch_health"], e["esxwatch_previous_state"])
        for e in ch], [(h, disk, "warning", "ok")], "the health change (%s)" % err[-1500:])
    al = polled(evs, esxwatch_collector="smart", esxwatch_kind="alert")
    eq(sorted((e["hostname"], e["text"],
               e.get("esxwatch_counter")) for e in al),
       sorted([(h, "drive %s: SMART health warning (WARNING)" % disk, None),
               (h, "drive %s: reallocated sectors grew from 3 to 12" % disk, "realloc")]),
       "the alerts")


SCSI_LINE = ("<14>%s %s vmkernel: cpu2:2127)ScsiDeviceIO: 2316: Cmd(0x4124403c1fc0) 0x28, "
             "CmdSN 0xecab to dev \"%s\" failed H:0x0 D:0x2 P:0x0 Valid sense data: 0x3 0x11 0x0.")


def test_failing_drive_from_polled_smart_and_syslog(d):
    """The failing_drive diagnosis from a polled host's SMART (a growing
    reallocated count from the vSAN health service) and the same host's
    vmkernel medium error (sense key 3) received as syslog: one alert for
    that host and disk, as with the local source (test_diagnosis)."""
    import socket
    s = sim()
    root = harness.tmpdir()
    pw = os.path.join(root, "pw")
    with open(pw, "w") as f:
        f.write(s.password + "\n")
    os.chmod(pw, 0o600)
    udp = harness.free_port(socket.SOCK_DGRAM)
    out = os.path.join(root, "out.jsonl")
    cfg = config(s, pw, interval=5, events="no", extra=(
        "receiver:\n  syslog:\n    - {address: \"127.0.0.1:%d\", transport: udp}\n" % udp))
    cfg = (cfg.replace("server: {hostname: \"\"}",
                       "server: {proto: file, path: %s}\nbatch: {flush_interval: 1}" % out)
           .replace("smart: {enabled: no}", "smart: {enabled: yes, interval: 1}")
           .replace("nic: {enabled: yes, interval: 3600}", "nic: {enabled: no}")
           .replace("datastore: {enabled: yes, interval: 3600}", "datastore: {enabled: no}")
           .replace("  agent: {enabled: yes, interval: 3600}",
                    "  agent: {enabled: yes, interval: 3600}\n  diagnosis: {enabled: yes, interval: 1, window: 300}"))
    a = Agent(root, cfg)
    h = clustered(s)[0]
    disk = smart_disks(s, h)[-1]

    def smart(kind):
        return [e for e in harness.file_events(out) if e.get("esxwatch_collector") == "smart"
                and e.get("hostname") == h and e.get("esxwatch_device") == disk
                and e.get("esxwatch_kind") == kind]
    try:
        a.run("--once", timeout=60)     # the baseline, kept in the host's state
        if not smart("sample"):
            fail("no SMART sample in the baseline run")
        s.set_smart(h, disk, "smartreallocatedsectorct", 8, threshold=10, worst=8)
        a.start()
        wait_for(lambda: smart("alert"), timeout=20, what="the reallocated growth")
        wait_for(lambda: "receiver: listening on udp" in open(a.stderr_path).read(),
                 timeout=20, what="the syslog listener")
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        send_udp(udp, [SCSI_LINE % (now, h, disk)])
        got = wait_for(lambda: [e for e in harness.file_events(out)
                                if e.get("esxwatch_diagnosis") == "failing_drive"],
                       timeout=20, what="the failing_drive diagnosis")
    finally:
        a.stop()
        smart_reset(s, h, disk)
    eq([(e["hostname"], e.get("esxwatch_device")) for e in got], [(h, disk)], "the diagnosis")
    if "0x3 0x11 0x0" not in got[0]["esxwatch_evidence"] or \
            "reallocated_sectors grew (to 8)" not in got[0]["esxwatch_evidence"]:
        fail("evidence: %s" % got[0]["esxwatch_evidence"])


def test_smart_disk_error_is_absent_and_said_once(d):
    """VsanSmartDiskStats.error (SystemError): that disk's SMART absent,
    the reason one log line across runs; the host's other disks go on."""
    s = sim()
    a = smart_agent(d, s)
    h = clustered(s)[-1]
    bad, good = smart_disks(s, h)[0], smart_disks(s, h)[1:]
    s.set_smart(h, bad, error="CANNOT open device")
    try:
        evs, err = once(a)
        evs2, err2 = once(a)
    finally:
        smart_reset(s, h, bad)
    line = (r"warning: smart: host %s: drive %s: no SMART from vsan-health "
            r"\(SystemError: CANNOT open device\)" % (re.escape(h), re.escape(bad)))
    for n, (ev, er, want) in enumerate(((evs, err, 1), (evs2, err2, 0))):
        eq(sorted(e["esxwatch_device"] for e in polled(ev, esxwatch_collector="smart", hostname=h)),
           good, "run %d: the host's smart events (%s)" % (n, er[-1500:]))
        eq(len(re.findall(line, er)), want, "run %d: the reason said (%s)" % (n, er[-1500:]))


def test_smart_call_logs_in_again_on_not_authenticated(d):
    """The vSAN health service answering NotAuthenticated (the vim25
    session expired): one login more and the call repeated, SMART there."""
    s = sim()
    a = smart_agent(d, s)
    s.inject("VsanQueryVcClusterSmartStatsSummary", "fault", fault="NotAuthenticated")
    try:
        s.call("stats", reset=True)
        evs, err = once(a)
        methods = s.call("stats")["methods"]
    finally:
        s.inject("VsanQueryVcClusterSmartStatsSummary", "fault", count=0)
    eq((methods.get("VsanQueryVcClusterSmartStatsSummary"), methods.get("Login")), (2, 2),
       "calls and logins (%s)" % err[-1500:])
    h = clustered(s)[0]
    eq(sorted(e["esxwatch_device"] for e in polled(evs, esxwatch_collector="smart",
                                                  esxwatch_kind="sample", hostname=h)),
       smart_disks(s, h), "SMART after the new login")


def test_smart_absent_without_the_vsan_health_service(d):
    """A vCenter without the service (/vsanHealth answers HTTP 404, or a
    SOAP fault) and an ESXi host's own API (the ESX model): no smart
    events, one line why."""
    s = sim()
    for kind, kw, why in (("status", {"status": 404}, "HTTP 404"),
                          ("fault", {"fault": "SystemError"}, "fault SystemError")):
        a = smart_agent(harness.tmpdir(), s)
        s.inject("VsanQueryVcClusterSmartStatsSummary", kind, count=5, **kw)
        try:
            evs, err = once(a)
        finally:
            s.inject("VsanQueryVcClusterSmartStatsSummary", kind, count=0)
        eq(select(evs, esxwatch_collector="smart"), [], "smart events without the service")
        eq(len(re.findall(r"warning: vsphere vc1: SMART absent: the vSAN health service "
                          r"\(/vsanHealth, VsanQueryVcClusterSmartStatsSummary\) did not "
                          r"answer: " + why, err)), 1, "the reason (%s)" % err[-1500:])
    esxdir = harness.tmpdir("esxwatch-vcsim-esx-")
    esx = Vcsim(esxdir, model="esx").start()
    try:
        evs, err = once(smart_agent(d, esx))
    finally:
        esx.stop()
        shutil.rmtree(esxdir, ignore_errors=True)
    eq(select(evs, esxwatch_collector="smart"), [], "smart events on the ESX model")
    eq(len(re.findall(r"warning: vsphere vc1: SMART absent: the vSAN health service "
                      r"\(VsanQueryVcClusterSmartStatsSummary\) is vCenter's", err)), 1,
       "the reason (%s)" % err[-1500:])


def test_connection_state_is_a_change(d):
    s = sim()
    a = agent_for(d, s)
    h = host_names(s)[-1]
    once(a)
    try:
        s.set_connection(h, "notResponding")
        evs, _ = once(a)
    finally:
        s.set_connection(h, "connected")
    ch = polled(evs, esxwatch_collector="vsphere", esxwatch_kind="change")
    eq([(e["hostname"], e["esxwatch_state"], e["esxwatch_previous_state"]) for e in ch],
       [(h, "notResponding", "connected")], "connection changes")
    eq(polled(evs, esxwatch_collector="nic", hostname=h), [],
       "no stale nic facts for a host vCenter cannot reach")


def test_nic_error_counters_are_deltas(d):
    """QueryPerf's per-sample counts (net.errorsRx per vmnic, real-time
    interval): the sum since the previous poll, _delta fields only."""
    s = sim()
    a = agent_for(d, s)
    h, nic = s.host_list()[1]["name"], s.host_list()[1]["pnics"][0]
    once(a)                     # the baseline: the newest sample's time
    t0 = int(time.time()) // 20
    s.set_counter(h, nic, "net.errorsRx", 7)
    try:
        # the value is the newest sample's: wait for the next 20 s sample
        wait_for(lambda: int(time.time()) // 20 > t0, 25, what="the next sample")
        evs, err = once(a)
    finally:
        s.set_counter(h, nic, "net.errorsRx", 0)
    smp = polled(evs, esxwatch_collector="nic", esxwatch_kind="sample", hostname=h,
                 esxwatch_nic=nic)
    eq([e.get("esxwatch_rx_errors_delta") for e in smp], ["7"], "rx_errors_delta (%s)" % err[-1500:])
    if "esxwatch_rx_errors" in smp[0]:
        fail("a total where the API gives per-interval counts: %r" % smp[0])
    al = polled(evs, esxwatch_collector="nic", esxwatch_kind="alert", hostname=h)
    eq([(e["esxwatch_nic"], e["esxwatch_counter"], e["esxwatch_rx_errors_delta"]) for e in al],
       [(nic, "rx_errors", "7")], "the alert")
    other = polled(evs, esxwatch_collector="nic", esxwatch_kind="sample",
                   hostname=s.host_list()[0]["name"])
    if any(e.get("esxwatch_rx_errors_delta") not in (None, "0") for e in other):
        fail("another host's counters moved: %r" % other)


def test_huge_and_deep_answers_are_refused_with_bounded_memory(d):
    import resource
    s = sim()
    a = agent_for(d, s, events="no")
    # a 100 MB answer stops at the first limit it crosses: 32 MB in all,
    # or 256 KB of one element's text.  The hosts' properties come from
    # WaitForUpdatesEx (the property filter's first answer is the full read)
    for kind, kw, want in (("huge", {"size_mb": 100}, r"answer refused: XML (answer larger|"
                            r"element text longer) than the limit"),
                           ("deep", {"depth": 100000}, r"answer refused: XML nested deeper "
                            r"than the limit")):
        s.inject("WaitForUpdatesEx", kind, **kw)
        try:
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            rc, out, err = a.run("--once", timeout=120)
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        finally:
            s.inject("WaitForUpdatesEx", kind, count=0)
        if not re.search(r"error: vsphere vc1: .*" + want, err):
            fail("%s: no clear refusal: %s" % (kind, err[-1500:]))
        if rss > max(before, 80 * 1024):
            fail("%s: the agent grew to %d kB" % (kind, rss))
        if not select(harness.parse_events(out), esxwatch_collector="agent"):
            fail("%s: the rest of the agent stopped" % kind)
    evs, err = once(a)
    if not polled(evs, esxwatch_collector="nic"):
        fail("no recovery after the refused answers: %s" % err[-1500:])


def test_a_failing_call_costs_only_its_facts(d):
    """QueryPerf answered with a fault: the poll goes on (every host's nic
    samples, without counters), the reason logged; then it recovers."""
    s = sim()
    a = agent_for(d, s, events="no")
    s.inject("QueryPerf", "fault", fault="SystemError")
    try:
        evs, err = once(a)
    finally:
        s.inject("QueryPerf", "fault", count=0)
    want = sorted((h["name"], p) for h in s.host_list() for p in h["pnics"])
    got = sorted((e["hostname"], e["esxwatch_nic"]) for e in
                 polled(evs, esxwatch_collector="nic", esxwatch_kind="sample"))
    eq(got, want, "nic samples despite the failed QueryPerf")
    if not re.search(r"warning: vsphere vc1: QueryPerf: fault SystemError", err):
        fail("the failure is not said: %s" % err[-1500:])
    if not polled(evs, esxwatch_collector="datastore"):
        fail("no datastore events: %s" % err[-1500:])


def test_wrong_password_is_a_clear_line(d):
    s = sim()
    secret = "Not-The-Password-42"
    a = agent_for(d, s, password=secret)
    rc, out, err = a.run("--once", timeout=60)
    if not re.search(r"vsphere vc1: .*wrong user name or password", err):
        fail("no clear line: %s" % err[-2000:])
    if secret in out or secret in err:
        fail("the password appears in the output")
    evs = harness.parse_events(out)
    if not select(evs, esxwatch_collector="agent"):
        fail("the rest of the agent stopped")
    rc, out, err = a.run("--print-config")
    if secret in out or secret in err:
        fail("the password appears in --print-config")


def status_json(a):
    """--status --json's object; {} while the agent has written none (3)."""
    import json
    rc, out, err = a.run("--status", "--json")
    if rc == 3:
        return {}
    eq(rc, 0, "--status --json (%s)" % err[-500:])
    return json.loads(out)


def test_status_json_and_metrics_per_entry(d):
    """--status, --status --json and /metrics: a good entry is ok with its
    hosts; a wrong password is the entry's error, in words."""
    import urllib.request
    s = sim()
    port = harness.free_port()
    a = agent_for(d, s, interval=5, events="no",
                  extra='monitor: {listen: "127.0.0.1:%d"}\n' % port)
    bad = agent_for(d, s, password="Wrong-Password-9", interval=5, events="no")
    a.start()
    bad.start()
    try:
        def ok():
            v = status_json(a).get("vsphere") or []
            return v if v and v[0]["polls"] >= 1 else None
        v = wait_for(ok, 30, what="a poll in --status --json")[0]
        eq((v["name"], v["state"], v["hosts"], v["last_error"]),
           (ENTRY, "ok", len(s.host_list()), ""), "the entry")
        if v["requests"] < 5 or v["last_poll_ms"] <= 0:
            fail("requests or last poll missing: %r" % v)
        rc, text, _ = a.run("--status")
        if not re.search(r"\n  vc1: ok, %d hosts, last poll \d+ s ago" % len(s.host_list()), text):
            fail("--status has no vsphere line: %s" % text[-1500:])
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
            m = r.read().decode()
        if not re.search(r'^esxwatch_vsphere_polls_total\{name="vc1"\} [1-9]', m, re.M):
            fail("/metrics has no esxwatch_vsphere_polls_total: %s" % m[-1500:])

        def failed():
            v = status_json(bad).get("vsphere") or []
            return v if v and v[0]["errors"] >= 1 else None
        v = wait_for(failed, 30, what="the failed poll in --status --json")[0]
        eq(v["state"], "error", "state with a wrong password")
        if "wrong user name or password" not in v["last_error"]:
            fail("the error is not in words: %r" % v)
        rc, text, _ = bad.run("--status")
        if "wrong user name or password" not in text or "Wrong-Password-9" in text:
            fail("--status: %s" % text[-1500:])
    finally:
        eq(a.stop(), 0, "agent exit")
        eq(bad.stop(), 0, "agent exit")


def test_check_config_errors_at_their_line(d):
    a = Agent(d, """storage: {directory: "@STORAGE@"}
vsphere:
  good:
    url: https://vc.example.com/sdk
    username: u
    password_file: /etc/esxwatch/vc.pw
    hosts: [esx0*, esx10]
    interval: 30
  clear:
    url: http://vc.example.com/sdk
    username: u
    password_file: /x
""")
    rc, out, err = a.run("--check-config")
    eq(rc, 2, "--check-config exit")
    if not re.search(r"agent\.yaml:10:10: 'url' must be an https:// URL", err):
        fail("no FILE:LINE:COL error: %r" % err)
    a.write_config(open(a.config).read().replace("http://", "https://").replace(
        "    password_file: /x\n", ""))
    rc, out, err = a.run("--check-config")
    eq(rc, 2, "--check-config exit")
    if not re.search(r"agent\.yaml:9:3: vsphere\.clear: 'password_file' is required", err):
        fail("no error for the missing password_file: %r" % err)
    a.write_config(open(a.config).read().replace("  clear:\n", "  clear:\n    password_file: /y\n"))
    rc, out, err = a.run("--print-config")
    eq(rc, 0, "--print-config (%s)" % err[-500:])
    block = out[out.index("\nvsphere:\n"):]
    for want in ('  "good":\n    url: "https://vc.example.com/sdk"', 'password_file: "/etc/esxwatch/vc.pw"',
                 "trust: verify", 'hosts: ["esx0*", "esx10"]', "interval: 30", "events: yes"):
        if want not in block:
            fail("--print-config lacks %r: %s" % (want, block[:800]))


def test_password_file_readable_by_others_is_refused(d):
    s = sim()
    a = agent_for(d, s)
    pw = os.path.join(a.root, "pw")
    os.chmod(pw, 0o644)
    rc, out, err = a.run("--once", timeout=60)
    if "must be a regular file of mode 0600" not in err:
        fail("a 0644 password file accepted: %s" % err[-1500:])
    if s.password in out or s.password in err:
        fail("the password appears in the output")


def test_unreachable_endpoint_is_a_clear_line(d):
    s = sim()
    port = harness.free_port()
    a = agent_for(d, s, url="https://127.0.0.1:%d/sdk" % port)
    rc, out, err = a.run("--once", timeout=60)
    if not re.search(r"error: vsphere vc1: https://127\.0\.0\.1:%d/sdk: .*(connect|refused)" % port,
                     err, re.I):
        fail("no clear line: %s" % err[-2000:])
    if not select(harness.parse_events(out), esxwatch_collector="agent"):
        fail("the rest of the agent stopped")


def test_self_signed_with_verify_is_refused_then_ca_verifies(d):
    s = sim()
    a = agent_for(d, s, trust="verify")
    rc, out, err = a.run("--once", timeout=60)
    if not re.search(r"error: vsphere vc1: .*certificate", err, re.I):
        fail("no clear certificate line: %s" % err[-2000:])
    if polled(harness.parse_events(out)):
        fail("events from an untrusted endpoint")
    a = agent_for(d, s, trust="verify", ca=s.cert)
    evs, err = once(a)
    if not polled(evs, esxwatch_collector="nic"):
        fail("verify with the simulator's CA: no event (%s)" % err[-1500:])


def test_first_use_pins_and_refuses_another_certificate(d):
    s = sim()
    a = agent_for(d, s, trust="first_use")
    evs, err = once(a)
    pin = os.path.join(a.storage, "trust-vsphere.%s.pin" % ENTRY)
    if not os.path.exists(pin) or not polled(evs):
        fail("first_use: no pin or no events (%s)" % err[-1500:])
    eq(oct(os.stat(pin).st_mode & 0o777), oct(0o600), "pin file mode")
    other_dir = harness.tmpdir("esxwatch-vcsim2-")
    other = Vcsim(other_dir, cluster_hosts=1, standalone=0).start()
    try:
        a.write_config(config(other, os.path.join(a.root, "pw"), url=other.url)
                       .replace(s.username, other.username))
        with open(os.path.join(a.root, "pw"), "w") as f:
            f.write(other.password + "\n")
        rc, out, err = a.run("--once", timeout=60)
        if not re.search(r"error: vsphere vc1: .*certificate of 127\.0\.0\.1:\d+ changed",
                         err) or polled(harness.parse_events(out)):
            fail("another certificate accepted under the pin: %s" % err[-1500:])
        # the admin accepts the new certificate: --trust-reset vsphere.NAME
        rc, out, err = a.run("--trust-reset", "vsphere." + ENTRY)
        eq(rc, 0, "--trust-reset (%s)" % (out + err)[-500:])
        evs, err = once(a)
        if not polled(evs, esxwatch_collector="nic"):
            fail("no events after --trust-reset: %s" % err[-1500:])
    finally:
        other.stop()
        shutil.rmtree(other_dir, ignore_errors=True)


def test_events_once_each_across_agent_restarts(d):
    s = sim()
    a = agent_for(d, s)
    h = host_names(s)[0]
    once(a)     # first start: history is not replayed
    msg = ("Device or filesystem with identifier [naa.600a0b80005ad1d70000001a4f5c2e1d] "
           "has entered the All Paths Down state.")
    k1 = s.post_event(h, "esx.problem.storage.apd.start", msg, severity="warning")
    evs, err = once(a)
    got = polled(evs, esxwatch_collector="vcevents")
    eq([(e["hostname"], e["esxwatch_vc_event"], e["esxwatch_vc_event_key"]) for e in got],
       [(h, "esx.problem.storage.apd.start", str(k1))], "one vcevents event (%s)" % err[-1000:])
    e = got[0]
    eq((e["esxwatch_kind"], e["esxwatch_severity"]), ("alert", "warning"), "kind, severity")
    # matched as vobd's line "[ID] MESSAGE": the catalogue's rule and captures
    eq((e.get("esxwatch_rule"), e.get("esxwatch_device")),
       ("apd_start", "naa.600a0b80005ad1d70000001a4f5c2e1d"), "the catalogue's rule")
    eq(e["text"], msg, "text")
    # posted while the agent is away: the next start has them, once
    k2 = s.post_event(h, "esx.clear.storage.apd.exit", "APD exit", severity="info")
    k3 = s.post_event(h, type="HostConnectionLostEvent", message="lost")
    evs, err = once(a)
    got = polled(evs, esxwatch_collector="vcevents")
    eq(sorted(int(e["esxwatch_vc_event_key"]) for e in got), sorted([k2, k3]),
       "events posted while away (%s)" % err[-1000:])
    if "may be missing" in err:
        fail("a gap where there is none: %s" % err[-1000:])
    evs, _ = once(a)
    eq(polled(evs, esxwatch_collector="vcevents"), [], "a restart repeats none")
    # vCenter restarted (every session and collector gone): recovered in
    # the same poll, nothing repeated
    k4 = s.post_event(h, "esx.problem.net.vmnic.linkstate.down", "Physical NIC vmnic1 linkstate is down",
                      severity="error")
    s.drop_sessions()
    evs, err = once(a)
    eq([e["esxwatch_vc_event_key"] for e in polled(evs, esxwatch_collector="vcevents")],
       [str(k4)], "after the sessions were dropped (%s)" % err[-1000:])


def test_event_history_rolled_over_is_a_counted_gap(d):
    """vCenter's history keeps N events: those posted while the agent was
    away beyond N are gone; the gap is said, the rest arrive once."""
    import json
    simdir = os.path.join(d, "sim")
    os.makedirs(simdir)
    s2 = Vcsim(simdir, cluster_hosts=1, standalone=0, event_history=5).start()
    try:
        a = agent_for(d, s2)
        h = host_names(s2)[0]
        once(a)
        k0 = s2.post_event(h, "esx.problem.test.one", "one", severity="info")
        evs, _ = once(a)
        eq([e["esxwatch_vc_event_key"] for e in polled(evs, esxwatch_collector="vcevents")],
           [str(k0)], "the first event")
        keys = [s2.post_event(h, "esx.problem.test.n", "n%d" % i, severity="info")
                for i in range(8)]
        if not s2.events().get("rolled_over"):
            fail("the simulator kept every event: %r" % s2.events())
        evs, err = once(a)
        got = [int(e["esxwatch_vc_event_key"]) for e in polled(evs, esxwatch_collector="vcevents")]
        if not got or got != sorted(got) or not set(got) <= set(keys) or got[-1] != keys[-1]:
            fail("after the roll-over: got %r of %r" % (got, keys))
        # (the agent's own logins are events too: the last key read may be
        # one of those, after k0)
        m = re.search(r"vsphere vc1: events between key (\d+) and (\d+) may be missing", err)
        if not m or not k0 <= int(m.group(1)) < keys[0]:
            fail("the gap after key %d is not said: %s" % (k0, err[-1500:]))
    finally:
        s2.stop()


def test_simulator_restart_recovers_by_itself(d):
    s = sim()
    a = agent_for(d, s, interval=5, events="no")
    a.start()
    try:
        def samples():
            return polled(a.stdout_events(), esxwatch_collector="nic", esxwatch_kind="sample")
        wait_for(samples, 30, what="first samples")
        s.drop_sessions()
        wait_for(lambda: "session lost" in a.stderr_text(), 30, what="the session loss noticed")
        # the property filter went with the session: said, and read again
        wait_for(lambda: "reading every property again" in a.stderr_text(), 30,
                 what="the filter's loss noticed")
        n0 = len(samples())
        wait_for(lambda: len(samples()) > n0, 30, what="samples after the sessions were dropped")
        s.restart()
        n1 = len(samples())
        wait_for(lambda: len(samples()) > n1, 30, what="samples after a process restart")
    finally:
        rc = a.stop()
    eq(rc, 0, "agent exit")


# The vmkernel log's APD line as vobd sends it over syslog (RFC 3164, the
# framing of tests/fixtures/syslog/esxi8-rfc3164.log; the message of
# tests/fixtures/logs/vobd-log/esxi6-7-apd-sdcard-redacted.log).
APD_LINE = ("<14>%s %s vobd[2097521]:  [APDCorrelator] 1960324330689us: "
            "[esx.problem.storage.apd.start] Device or filesystem with identifier "
            "[%s] has entered the All Paths Down state.")


def send_udp(port, lines):
    import socket
    so = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for l in lines:
        so.sendto(l.encode(), ("127.0.0.1", port))
    so.close()


def test_polled_host_and_its_syslog_are_one_host(d):
    """One agent polls the simulator and receives syslog: a host's vmkernel
    APD line (HOSTNAME in lower case, or a DNS name whose first label is the
    inventory name) and its datastore's APD and dead path from the API go to
    one diagnosis memory — the stage's memory grows by one host for an
    unknown sender, by none for these (esxwatch_diagnosis_memory_bytes of
    the agent's own samples: (1 + other hosts) x one host's memory)."""
    import socket
    s = sim()
    root = harness.tmpdir()
    pw = os.path.join(root, "pw")
    with open(pw, "w") as f:
        f.write(s.password + "\n")
    os.chmod(pw, 0o600)
    udp = harness.free_port(socket.SOCK_DGRAM)
    out = os.path.join(root, "out.jsonl")
    cfg = config(s, pw, interval=5, events="no", extra=(
        "receiver:\n  syslog:\n    - {address: \"127.0.0.1:%d\", transport: udp}\n" % udp))
    cfg = cfg.replace("server: {hostname: \"\"}",
                      "server: {proto: file, path: %s}\nbatch: {flush_interval: 1}" % out)
    cfg = cfg.replace("  agent: {enabled: yes, interval: 3600}",
                      "  agent: {enabled: yes, interval: 1}\n"
                      "  diagnosis: {enabled: yes, window: 300}")
    a = Agent(root, cfg)
    names = host_names(s)
    ds = s.datastores()[0]
    h0, h2 = names[0], names[-1]
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())

    def memory_after(pred, what):
        """The diagnosis memory in the first agent sample emitted after
        every event pred wants (file order = emit order = observe order)."""
        def get():
            evs = harness.file_events(out)
            idx = [i for i, e in enumerate(evs) if pred(e)]
            if not idx:
                return None
            later = [e for e in evs[max(idx) + 1:] if e.get("esxwatch_collector") == "agent"
                     and "esxwatch_diagnosis_memory_bytes" in e]
            return int(later[0]["esxwatch_diagnosis_memory_bytes"]) if later else None
        return wait_for(get, timeout=20, what=what)

    a.start()
    try:
        wait_for(lambda: {e["hostname"] for e in harness.file_events(out)
                          if e.get("esxwatch_input") == "vsphere"} >= set(names),
                 timeout=20, what="every host polled")
        polled_mem = memory_after(lambda e: e.get("esxwatch_input") == "vsphere", "memory polled")
        send_udp(udp, [APD_LINE % (now, "esx-other", "naa.600a0000")])
        other_mem = memory_after(lambda e: e.get("hostname") == "esx-other", "memory other")
        one = other_mem - polled_mem
        if one <= 0:
            fail("an unknown sender did not add a host's memory: %d -> %d" % (polled_mem, other_mem))
        s.set_datastore(h0, ds["name"], accessible=False, reason="AllPathsDown_Start")
        s.set_path(h0, "vmhba64:C0:T0:L0", "dead")
        send_udp(udp, [APD_LINE % (now, h0.lower(), ds["lun"]),
                       APD_LINE % (now, h2 + ".example.com", ds["lun"])])
        got = wait_for(lambda: [e for e in harness.file_events(out)
                                if e.get("esxwatch_rule") == "apd_start" and
                                e.get("esxwatch_input") == "syslog" and
                                e.get("hostname") in (h0.lower(), h2 + ".example.com")]
                       if len([1 for e in harness.file_events(out)
                               if e.get("esxwatch_collector") == "datastore" and
                               e.get("hostname") == h0 and e.get("esxwatch_kind") == "change" and
                               e.get("esxwatch_state") == "apd"]) >= 1 else None,
                       timeout=20, what="the APD lines and the API's apd change")
        eq(sorted(e["hostname"] for e in got), sorted([h0.lower(), h2 + ".example.com"]),
           "the syslog APD alerts keep the sender's HOSTNAME")
        eq(got[0].get("esxwatch_device"), ds["lun"], "the APD line's device")
        both_mem = memory_after(lambda e: e in got or (
            e.get("esxwatch_collector") == "datastore" and e.get("hostname") == h0 and
            e.get("esxwatch_state") == "apd"), "memory after both sources")
        eq(both_mem, other_mem, "the diagnosis memory (no new host for %s, %s.example.com; one "
           "host is %d bytes)" % (h0.lower(), h2, one))
    finally:
        s.set_path(h0, "vmhba64:C0:T0:L0", "active")
        s.set_datastore(h0, ds["name"], accessible=True)
        a.stop()


def teardown():
    if SIM is not None:
        SIM.stop()
        shutil.rmtree(SIMDIR, ignore_errors=True)


if __name__ == "__main__":
    try:
        harness.main(globals())
    finally:
        teardown()
