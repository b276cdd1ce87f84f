"""The vSphere API simulator (tests/vcsim) and its helper (vcsim.py): every
control call checked through the documented API with plain SOAP requests
(vcsim.SoapClient: urllib and the XML written out), independently of
esxwatch's own client.

References (vSphere Web Services API reference, managed objects and data
objects named in each test): ServiceInstance.RetrieveServiceContent,
SessionManager.Login (InvalidLogin), PropertyCollector.RetrievePropertiesEx /
ContinueRetrievePropertiesEx, ViewManager.CreateContainerView,
HostSystem.config.network.pnic[].linkSpeed ("not set: link down"),
Datastore.host[].mountInfo (HostMountInfo.accessible / inaccessibleReason),
config.storageDevice.scsiLun[].operationalState, multipathInfo path state,
runtime.connectionState / inMaintenanceMode, PerformanceManager.QueryPerf /
QueryPerfCounter / perfCounter, EventManager.CreateCollectorForEvents,
EventHistoryCollector.ReadNextEvents / latestPage.
"""
import os
import ssl
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import eq, fail  # noqa: E402
import vcsim  # noqa: E402
from vcsim import NS, SoapClient, SoapFault, Vcsim, VcsimError  # noqa: E402


def start(d, **kw):
    return Vcsim(os.path.join(d, "sim"), **kw).start()


def client(sim, login=True):
    c = SoapClient(sim.url, sim.ssl_context())
    c.retrieve_service_content()
    if login:
        c.login(sim.username, sim.password)
    return c


def text(el, path):
    return el.findtext(path, namespaces=NS)


def by_name(props):
    return {p["name"].text: (moid, p) for moid, p in props.items()}


def expect_fault(kind, f, *a, **kw):
    try:
        f(*a, **kw)
    except SoapFault as e:
        eq(e.type, kind, "fault")
        return e
    fail("no %s fault" % kind)


def expect_control_error(status, f, *a, **kw):
    try:
        f(*a, **kw)
    except VcsimError as e:
        eq(e.status, status, "control status (%s)" % e.msg)
        return e
    fail("control call accepted")


def pnics(p):
    return {text(x, "v:device"): (text(x, "v:linkSpeed/v:speedMb"), text(x, "v:linkSpeed/v:duplex"))
            for x in p["config.network.pnic"]}


def test_tls_login_and_models(d):
    sim = start(d, cluster_hosts=2, standalone=1)
    try:
        eq(sim.hosts, 3, "hosts")
        eq(sim.url.startswith("https://127.0.0.1:"), True, "https url " + sim.url)
        # the certificate is self-signed: an unpinned client refuses it
        c = SoapClient(sim.url, ssl.create_default_context())
        try:
            c.retrieve_service_content()
            fail("an untrusted certificate was accepted")
        except urllib.error.URLError as e:
            eq(isinstance(e.reason, ssl.SSLCertVerificationError), True, "verify error %r" % e)
        c = client(sim, login=False)
        eq(text(c.retrieve_service_content(), "v:about/v:apiType"), "VirtualCenter", "apiType")
        expect_fault("NotAuthenticated", c.container_view)
        expect_fault("NotAuthenticated", c.retrieve, "PerformanceManager", ["perfCounter"],
                     objs=[c.ref("perfManager")])
        expect_fault("InvalidLogin", c.login, sim.username, "wrong")
        expect_fault("InvalidLogin", c.login, "root", sim.password)
        c.login(sim.username, sim.password)
        c.container_view()
        st = sim.stats()
        eq(st["methods"]["Login"], 3, "Logins counted")
        eq(st["total"], c.requests, "every request counted")
    finally:
        sim.stop()
    esx = start(d, model="esx", tls=False)
    try:
        eq(esx.hosts, 1, "esx hosts")
        c = client(esx)
        eq(text(c.sc and c.retrieve_service_content(), "v:about/v:apiType"), "HostAgent", "apiType")
        hosts = c.retrieve("HostSystem", ["name", "config.network.pnic", "configManager.vsanSystem"],
                           view=c.container_view())
        eq(list(hosts), ["ha-host"], "hostd's one host")
        # the host's own counter table (not vCenter's keys)
        ids = esx.counters()["counters"]
        eq(ids["net.errorsRx"], 196624, "ESX counter key")
        esx.set_counter("ha-host", "vmnic1", "net.errorsTx", 2)
        r = c.query_perf([("ha-host", [(ids["net.errorsTx"], "vmnic1")], 1)])
        eq(r["ha-host"][(ids["net.errorsTx"], "vmnic1")], [2], "ESX QueryPerf")
        col = c.create_event_collector(type_ids=["esx.problem.vob.vsan.pdl.offline"])
        k = esx.post_event("ha-host", "esx.problem.vob.vsan.pdl.offline", "vSAN device is offline")
        eq([e["key"] for e in c.read_next_events(col)], [k], "ESX event")
        vs = hosts["ha-host"]["configManager.vsanSystem"].text
        eq(len(c.query_disks_for_vsan(vs)), 3, "ESX QueryDisksForVsan")
    finally:
        esx.stop()


def test_hosts_pnics_and_link(d):
    sim = start(d, cluster_hosts=3, standalone=2)
    try:
        c = client(sim)
        view = c.container_view()
        n0 = c.requests
        props = c.retrieve("HostSystem", ["name", "config.network.pnic"], view=view, max_objects=2)
        eq(c.requests - n0 >= 3, True, "ContinueRetrievePropertiesEx pages (%d requests)" % (c.requests - n0))
        pc = vcsim.moref(*c.ref("propertyCollector"))
        expect_fault("InvalidArgument", c.call, "ContinueRetrievePropertiesEx", pc + "<token>nosuch</token>")
        hosts = by_name(props)
        eq(sorted(hosts), sorted(h["name"] for h in sim.host_list()), "every host")
        for name, (moid, p) in hosts.items():
            eq(pnics(p), {"vmnic0": ("10000", "true"), "vmnic1": ("10000", "true")}, name)
        sim.set_link("DC0_C0_H1", "vmnic1", up=False)
        hosts = by_name(c.retrieve("HostSystem", ["name", "config.network.pnic"], view=view))
        for name, (moid, p) in hosts.items():
            want = {"vmnic0": ("10000", "true"), "vmnic1": ("10000", "true")}
            if name == "DC0_C0_H1":
                want["vmnic1"] = (None, None)  # linkSpeed unset: link down
            eq(pnics(p), want, name)
        sim.set_link("DC0_C0_H1", "vmnic1", up=True, speed_mb=1000, duplex=False)
        moid, p = by_name(c.retrieve("HostSystem", ["name", "config.network.pnic"], view=view))["DC0_C0_H1"]
        eq(pnics(p)["vmnic1"], ("1000", "false"), "link back at 1000 half")
        expect_control_error(404, sim.set_link, "DC0_C0_H1", "vmnic9", up=False)
        expect_control_error(404, sim.set_link, "nosuchhost", "vmnic0", up=False)
        expect_control_error(400, sim.call, "set_link", host="DC0_C0_H1", pnic="vmnic0")
    finally:
        sim.stop()


def test_wait_for_updates_sees_changes(d):
    sim = start(d, cluster_hosts=2, standalone=0)
    try:
        c = client(sim)
        hosts = {h["name"]: h["moid"] for h in sim.host_list()}
        c.create_filter("HostSystem", ["config.network.pnic", "summary.runtime"], c.container_view())
        version, initial = c.wait_for_updates("")
        eq(sorted(m for m, _ in initial), sorted(hosts.values()), "initial state of every host")
        sim.set_link("DC0_C0_H1", "vmnic0", up=False)
        sim.set_connection("DC0_C0_H0", "notResponding")
        seen = {}
        while len(seen) < 2:
            version, ups = c.wait_for_updates(version)
            if not ups:
                fail("no update within maxWaitSeconds (seen %r)" % seen)
            for moid, changes in ups:
                for name, op, val in changes:
                    seen[(moid, name)] = val
                    # PropertyChange.op is required (PropertyChangeOp: add,
                    # remove, assign, indirectRemove): a whole value is assign
                    eq(op, "assign", "the op of %s" % name)
        pn = seen[(hosts["DC0_C0_H1"], "config.network.pnic")]
        eq({text(x, "v:device"): text(x, "v:linkSpeed/v:speedMb") for x in pn},
           {"vmnic0": None, "vmnic1": "10000"}, "pnic update")
        rt = seen[(hosts["DC0_C0_H0"], "summary.runtime")]
        eq(text(rt, "v:connectionState"), "notResponding", "state update (summary.runtime)")
    finally:
        sim.stop()


def test_wait_for_updates_truncates_at_max_object_updates(d):
    """WaitOptions.maxObjectUpdates: at most that many ObjectUpdates per
    answer, UpdateSet.truncated true and a version that resumes the
    calculation (vSphere API reference, WaitOptions, UpdateSet)."""
    sim = start(d, cluster_hosts=2, standalone=1)
    try:
        c = client(sim)
        hosts = sorted(h["moid"] for h in sim.host_list())
        c.create_filter("HostSystem", ["name"], c.container_view())
        version, first = c.wait_for_updates("", max_wait=0, max_updates=2)
        eq((len(first), c.truncated), (2, True), "the first answer")
        version, rest = c.wait_for_updates(version, max_wait=0, max_updates=2)
        eq((len(rest), c.truncated), (1, False), "the rest")
        eq(sorted(m for m, _ in first + rest), hosts, "every host once")
    finally:
        sim.stop()


def mounts(c, view):
    out = {}
    for moid, p in c.retrieve("Datastore", ["name", "host", "summary.accessible", "info"], view=view).items():
        out[p["name"].text] = {
            "accessible": p["summary.accessible"].text,
            "lun": text(p["info"], "v:vmfs/v:extent/v:diskName"),
            "mounts": {text(m, "v:key"): (text(m, "v:mountInfo/v:accessible"),
                                          text(m, "v:mountInfo/v:inaccessibleReason"))
                       for m in p["host"]},
        }
    return out


def test_datastores_per_host(d):
    sim = start(d, cluster_hosts=2, standalone=1, datastores=2)
    try:
        c = client(sim)
        hosts = {h["name"]: h["moid"] for h in sim.host_list()}
        dview = c.container_view("Datastore")
        m = mounts(c, dview)
        eq(sorted(m), ["LocalDS_0", "LocalDS_1"], "datastores")
        for ds in m.values():
            # the simulator alone keeps only the last host's mount
            eq(ds["mounts"], {moid: ("true", None) for moid in hosts.values()}, "a mount per host")
            eq(ds["lun"].startswith("naa."), True, "VMFS extent on a SAN LUN")
        eq(m["LocalDS_0"]["lun"] != m["LocalDS_1"]["lun"], True, "a LUN each")
        sim.set_datastore("DC0_C0_H0", "LocalDS_0", accessible=False, reason="AllPathsDown_Start")
        sim.set_datastore("DC0_H0", "LocalDS_0", accessible=False, reason="PermanentDeviceLoss")
        m = mounts(c, dview)
        eq(m["LocalDS_0"]["mounts"], {
            hosts["DC0_C0_H0"]: ("false", "AllPathsDown_Start"),
            hosts["DC0_C0_H1"]: ("true", None),
            hosts["DC0_H0"]: ("false", "PermanentDeviceLoss")}, "per-host accessibility")
        eq(m["LocalDS_0"]["accessible"], "true", "still reachable from one host")
        eq(set(m["LocalDS_1"]["mounts"].values()), {("true", None)}, "the other datastore untouched")
        sim.set_datastore("DC0_C0_H1", "LocalDS_0", accessible=False, reason="AllPathsDown_Timeout")
        eq(mounts(c, dview)["LocalDS_0"]["accessible"], "false", "reachable from no host")
        sim.set_datastore("DC0_C0_H0", "LocalDS_0", accessible=True)
        eq(mounts(c, dview)["LocalDS_0"]["mounts"][hosts["DC0_C0_H0"]], ("true", None), "back")
        eq(sim.datastores()[0]["mounts"][0]["accessible"], True, "control view agrees")
        expect_control_error(400, sim.set_datastore, "DC0_H0", "LocalDS_0", False, reason="Flaky")
        expect_control_error(404, sim.set_datastore, "DC0_H0", "NoDS", False)
    finally:
        sim.stop()


def storage(c, view, host):
    moid, p = by_name(c.retrieve("HostSystem", [
        "name", "config.storageDevice.scsiLun", "config.storageDevice.multipathInfo"], view=view))[host]
    luns = {text(x, "v:canonicalName"): [s.text for s in x.findall("v:operationalState", NS)]
            for x in p["config.storageDevice.scsiLun"]}
    paths = {text(x, "v:name"): (text(x, "v:state"), text(x, "v:pathState"))
             for x in p["config.storageDevice.multipathInfo"].iter("{urn:vim25}path")}
    return luns, paths


def test_luns_paths_and_host_state(d):
    sim = start(d, cluster_hosts=2, standalone=0)
    try:
        c = client(sim)
        view = c.container_view()
        lun = sim.datastores()[0]["lun"]
        luns, paths = storage(c, view, "DC0_C0_H0")
        eq(luns[lun], ["ok"], "LUN ok")
        eq(paths["vmhba64:C0:T0:L0"], ("active", "active"), "path T0")
        eq(paths["vmhba64:C0:T1:L0"], ("standby", "standby"), "path T1")
        sim.set_path("DC0_C0_H0", "vmhba64:C0:T0:L0", "dead")
        sim.set_lun("DC0_C0_H0", "LocalDS_0", "lostCommunication")
        luns, paths = storage(c, view, "DC0_C0_H0")
        eq(paths["vmhba64:C0:T0:L0"], ("dead", "dead"), "dead path")
        eq(luns[lun], ["lostCommunication"], "LUN state")
        luns, paths = storage(c, view, "DC0_C0_H1")
        eq((luns[lun], paths["vmhba64:C0:T0:L0"]), (["ok"], ("active", "active")), "other host untouched")
        expect_control_error(400, sim.set_path, "DC0_C0_H0", "vmhba64:C0:T0:L0", "broken")
        expect_control_error(404, sim.set_path, "DC0_C0_H0", "vmhba9:C0:T0:L0", "dead")
        expect_control_error(400, sim.set_lun, "DC0_C0_H0", lun, "bad")

        sim.set_connection("DC0_C0_H1", "notResponding")
        sim.set_maintenance("DC0_C0_H0", True)
        st = by_name(c.retrieve("HostSystem", ["name", "runtime.connectionState", "runtime.inMaintenanceMode",
                                               "summary.runtime.connectionState"], view=view))
        got = {n: (p["runtime.connectionState"].text, p["runtime.inMaintenanceMode"].text,
                   p["summary.runtime.connectionState"].text) for n, (m, p) in st.items()}
        eq(got, {"DC0_C0_H0": ("connected", "true", "connected"),
                 "DC0_C0_H1": ("notResponding", "false", "notResponding")}, "runtime")
        expect_control_error(400, sim.set_connection, "DC0_C0_H1", "gone")
    finally:
        sim.stop()


def test_perf_counters(d):
    sim = start(d, cluster_hosts=2, standalone=0)
    try:
        c = client(sim)
        ids = sim.counters()["counters"]
        eq(sorted(ids), ["net.droppedRx", "net.droppedTx", "net.errorsRx", "net.errorsTx"], "counters")
        got = c.query_perf_counter(list(ids.values()))
        eq(got, {k: (n, "summation") for n, k in ids.items()}, "QueryPerfCounter")
        expect_fault("InvalidArgument", c.query_perf_counter, [999999])
        pm = c.retrieve("PerformanceManager", ["perfCounter"], objs=[c.ref("perfManager")])
        table = {int(text(x, "v:key")): text(x, "v:groupInfo/v:key") + "." + text(x, "v:nameInfo/v:key")
                 for x in list(pm.values())[0]["perfCounter"]}
        for n, k in ids.items():
            eq(table[k], n, "perfCounter property")
        hosts = {h["name"]: h["moid"] for h in sim.host_list()}
        sim.set_counter("DC0_C0_H0", "vmnic0", "net.errorsRx", 7)
        sim.set_counter("DC0_C0_H0", "vmnic1", "net.errorsRx", 5)
        sim.set_counter("DC0_C0_H1", "vmnic1", "net.droppedTx", 3)
        rx, tx = ids["net.errorsRx"], ids["net.droppedTx"]
        r = c.query_perf([(hosts["DC0_C0_H0"], [(rx, "*"), (tx, "vmnic1")], 1),
                          (hosts["DC0_C0_H1"], [(rx, "vmnic0"), (tx, "vmnic1"), (tx, "")], 3)])
        h0, h1 = r[hosts["DC0_C0_H0"]], r[hosts["DC0_C0_H1"]]
        eq(len(h0["_samples"]), 1, "maxSample 1")
        eq(h0["_samples"][0][1], 20, "real-time interval")
        eq({k: v for k, v in h0.items() if k != "_samples"},
           {(rx, ""): [12], (rx, "vmnic0"): [7], (rx, "vmnic1"): [5], (tx, "vmnic1"): [0]}, "host 0")
        eq({k: v for k, v in h1.items() if k != "_samples"},
           {(rx, "vmnic0"): [0, 0, 0], (tx, "vmnic1"): [0, 0, 3], (tx, ""): [0, 0, 3]}, "host 1")
        expect_control_error(400, sim.set_counter, "DC0_C0_H0", "vmnic0", "net.crc", 1)
        expect_control_error(404, sim.set_counter, "DC0_C0_H0", "vmnic7", "net.errorsRx", 1)
    finally:
        sim.stop()


def test_events(d):
    sim = start(d, cluster_hosts=2, standalone=1)
    try:
        c = client(sim)
        hosts = {h["name"]: h["moid"] for h in sim.host_list()}
        ids = ["esx.problem.storage.apd.start", "vprob.net.connectivity.lost", "HostConnectionLostEvent"]
        col = c.create_event_collector(entity=("Folder", c.sc["rootFolder"]), type_ids=ids)
        one = c.create_event_collector(entity=("HostSystem", hosts["DC0_C0_H1"]), recursion="self")
        eq(c.read_next_events(col), [], "nothing yet")
        eq(c.read_next_events(col), [], "at the end")
        k1 = sim.post_event("DC0_C0_H0", "esx.problem.storage.apd.start", "Device naa.1 has entered APD",
                            severity="warning", arguments={"1": "naa.1"})
        ev = c.read_next_events(col)
        eq([(e["key"], e["type"], e["eventTypeId"], e["hostName"], e["host"]) for e in ev],
           [(k1, "EventEx", "esx.problem.storage.apd.start", "DC0_C0_H0", hosts["DC0_C0_H0"])],
           "posted after the end was reached")
        eq((ev[0]["message"], ev[0]["severity"], ev[0]["arguments"]),
           ("Device naa.1 has entered APD", "warning", {"1": "naa.1"}), "event fields")
        eq(c.read_next_events(col), [], "read once")
        sim.post_event("DC0_C0_H0", "esx.audit.net.firewall.config.changed", "not in the filter")
        k2 = sim.post_event("DC0_C0_H1", type="HostConnectionLostEvent", message="lost")
        k3 = sim.post_event("DC0_H0", "vprob.net.connectivity.lost", "vmnic1 down")
        ev = c.read_next_events(col, max_count=1) + c.read_next_events(col, max_count=10)
        eq([(e["key"], e["type"], e["eventTypeId"]) for e in ev],
           [(k2, "HostConnectionLostEvent", None), (k3, "EventEx", "vprob.net.connectivity.lost")],
           "type filter, oldest first, paged")
        eq([e["key"] for e in c.read_next_events(one)], [k2], "entity filter: one host")
        # latestPage (newest first) through the PropertyCollector
        lp = c.retrieve("EventHistoryCollector", ["latestPage"], objs=[("EventHistoryCollector", col)])
        keys = [int(text(e, "v:key")) for e in list(lp.values())[0]["latestPage"]]
        eq(keys, [k3, k2, k1], "latestPage")
        # a new collector (an agent restarted) starts at the oldest event;
        # a time filter starts where the agent left off
        again = c.create_event_collector(type_ids=ids)
        eq([e["key"] for e in c.read_next_events(again)], [k1, k2, k3], "from the oldest")
        since = c.create_event_collector(type_ids=ids, begin=ev[0]["created"])
        eq([e["key"] for e in c.read_next_events(since)], [k2, k3], "beginTime")
        c.destroy_collector(again)
        expect_fault("ManagedObjectNotFound", c.read_next_events, again)
        expect_control_error(400, sim.post_event, "DC0_H0", None, "x")
        expect_control_error(400, sim.post_event, "DC0_H0", type="NoSuchEvent")
    finally:
        sim.stop()


def test_event_history_rolls_over(d):
    sim = start(d, cluster_hosts=1, standalone=0, event_history=5)
    try:
        c = client(sim)
        col = c.create_event_collector(type_ids=["esx.problem.test"])
        keys = [sim.post_event("DC0_C0_H0", "esx.problem.test", "n%d" % i) for i in range(8)]
        info = sim.events()
        eq(info["count"], 5, "history size")
        eq(info["newest_key"], keys[-1], "newest")
        eq(info["rolled_over"] >= 3, True, "rolled over %r" % info)
        got = [e["key"] for e in c.read_next_events(col, max_count=100)]
        eq(got, keys[3:], "the oldest are gone (a gap a client must count)")
    finally:
        sim.stop()


def test_restarts(d):
    sim = start(d, cluster_hosts=1, standalone=0)
    try:
        c = client(sim)
        view = c.container_view()
        eq(sim.drop_sessions() >= 1, True, "sessions dropped")
        expect_fault("NotAuthenticated", c.retrieve, "HostSystem", ["name"], view=view)
        expect_fault("NotAuthenticated", c.container_view)
        c.login(sim.username, sim.password)
        c.container_view()
        eq(sim.stats()["restarts"], 1, "restart counted")
        with open(sim.cert) as f:
            cert = f.read()
        url = sim.url
        sim.restart()
        eq(sim.url, url, "same address after a process restart")
        with open(sim.cert) as f:
            eq(f.read(), cert, "same certificate")
        expect_fault("NotAuthenticated", c.container_view)
        c.login(sim.username, sim.password)
        c.container_view()
        sim.restart(new_cert=True)
        with open(sim.cert) as f:
            eq(f.read() != cert, True, "a new certificate")
        sim.kill()
        try:
            c.container_view()
            fail("a killed simulator answered")
        except urllib.error.URLError:
            pass
    finally:
        sim.stop()


def test_vsan_disks_and_smart(d):
    sim = start(d, cluster_hosts=2, standalone=1)
    try:
        c = client(sim)
        props = by_name(c.retrieve("HostSystem", ["name", "configManager.vsanSystem", "parent"],
                                   view=c.container_view()))
        vs = {n: p["configManager.vsanSystem"].text for n, (m, p) in props.items()}
        disks = sim.vsan_disks("DC0_C0_H0")
        eq(sorted(disks.values()), ["eligible", "eligible", "ineligible"], "default disk states")
        cache = sorted(n for n, s in disks.items() if s == "eligible")[0]
        got = c.query_disks_for_vsan(vs["DC0_C0_H0"])
        eq(sorted((n, s, f) for n, s, f, m in got),
           sorted((n, s, "DiskHasPartitions" if s == "ineligible" else None) for n, s in disks.items()),
           "QueryDisksForVsan")
        sim.set_vsan_disk("DC0_C0_H0", cache, "inUse")
        other = [n for n, s in disks.items() if s == "eligible" and n != cache][0]
        sim.set_vsan_disk("DC0_C0_H0", other, "ineligible", fault="DiskIsUSB", message="USB disk")
        got = {n: (s, f, m) for n, s, f, m in c.query_disks_for_vsan(vs["DC0_C0_H0"], [cache, other])}
        eq(got, {cache: ("inUse", None, None), other: ("ineligible", "DiskIsUSB", "USB disk")}, "changed")
        eq(len(c.query_disks_for_vsan(vs["DC0_C0_H1"])), 3, "other host untouched")
        clusters = c.retrieve("ClusterComputeResource", ["name"], view=c.container_view("ClusterComputeResource"))
        cluster = list(clusters)[0]
        h1disk = sorted(n for n, s in sim.vsan_disks("DC0_C0_H1").items() if s == "eligible")[0]
        sim.set_smart("DC0_C0_H1", h1disk, "smartreallocatedsectorct", value=37, threshold=10, worst=37)
        sm = c.smart_summary(cluster)
        eq(sorted(sm), ["DC0_C0_H0", "DC0_C0_H1"], "cluster hosts")
        eq(sorted(sm["DC0_C0_H0"]), [cache], "SMART for the disks vSAN can use")
        eq(len(sm["DC0_C0_H1"]), 2, "both eligible disks")
        d1 = sm["DC0_C0_H1"][h1disk]
        eq(d1["smartreallocatedsectorct"], (37, 10, 37), "value set")
        eq(d1["smartwriteerrorcount"], (0, 0, 0), "a zero is sent")
        sim.set_smart("DC0_C0_H0", cache, error="smartctl: no SMART support")
        eq(c.smart_summary(cluster)["DC0_C0_H0"][cache], ("error", "SystemError"), "SMART error")
        expect_control_error(400, sim.set_smart, "DC0_C0_H0", cache, "smartcrc", value=1)
        expect_control_error(400, sim.set_vsan_disk, "DC0_C0_H0", cache, "broken")
        expect_control_error(404, sim.set_vsan_disk, "DC0_C0_H0", "naa.none", "eligible")
        nc = SoapClient(sim.url, sim.ssl_context())
        nc.retrieve_service_content()
        expect_fault("NotAuthenticated", nc.smart_summary, cluster)
    finally:
        sim.stop()


def test_concurrent_clients(d):
    """Clients polling in parallel while the world changes and sessions are
    dropped: every call answers (no deadlock, no crash), faults are only
    NotAuthenticated, every posted event is read exactly once."""
    import threading
    import time
    sim = start(d, cluster_hosts=3, standalone=1)
    errors, read = [], {}
    stop = time.time() + 1.5
    ids = sim.counters()["counters"]
    hosts = [h["moid"] for h in sim.host_list()]

    def worker(i):
        c = client(sim)
        view = c.container_view()
        col = c.create_event_collector(type_ids=["esx.problem.test"])
        got = read.setdefault(i, [])
        while time.time() < stop:
            try:
                c.retrieve("HostSystem", ["name", "config.network.pnic"], view=view)
                got += [e["key"] for e in c.read_next_events(col)]
                c.query_perf([(h, [(ids["net.errorsRx"], "*")], 1) for h in hosts])
            except SoapFault as e:
                if e.type != "NotAuthenticated":
                    errors.append(repr(e))
                    return
                c.login(sim.username, sim.password)
                view = c.container_view()
                col = c.create_event_collector(type_ids=["esx.problem.test"])
                got.append("restart")
    posted = []

    def poster():
        i = 0
        while time.time() < stop:
            posted.append(sim.post_event("DC0_H0", "esx.problem.test", "m%d" % i))
            sim.set_link("DC0_C0_H1", "vmnic0", up=bool(i % 2))
            if i == 10:
                sim.drop_sessions()
            i += 1
    try:
        ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)] + [threading.Thread(target=poster)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        eq(errors, [], "faults")
        c = client(sim)
        col = c.create_event_collector(type_ids=["esx.problem.test"])
        eq([e["key"] for e in c.read_next_events(col, 1000)], posted, "every event, in order")
        for i, got in read.items():
            # per collector (a new one after each re-login starts at the
            # oldest event): ascending keys, none twice
            seg = []
            for k in got + ["restart"]:
                if k == "restart":
                    eq(seg, sorted(set(seg)), "worker %d: one collector's keys" % i)
                    seg = []
                else:
                    seg.append(k)
    finally:
        sim.stop()


def raw_post(sim, c, method):
    """One SOAP call, the raw answer: (status, body bytes)."""
    body = ('<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="%s"><soapenv:Body>'
            '<%s xmlns="urn:vim25">%s</%s></soapenv:Body></soapenv:Envelope>' % (
                vcsim.SOAPENV, method, vcsim.moref(*c.ref("perfManager")), method)).encode()
    req = urllib.request.Request(sim.url, data=body, headers={"Content-Type": "text/xml", "Cookie": c.cookie})
    try:
        with urllib.request.urlopen(req, context=sim.ssl_context(), timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_injections(d):
    import time
    sim = start(d, cluster_hosts=1, standalone=0)
    try:
        c = client(sim)
        sim.inject("QueryPerfCounter", "huge", size_mb=3)
        st, body = raw_post(sim, c, "QueryPerfCounter")
        eq((st, len(body) >= 3 << 20, body.endswith(b"</soapenv:Envelope>")), (200, True, True), "huge")
        sim.inject("QueryPerfCounter", "deep", depth=5000)
        st, body = raw_post(sim, c, "QueryPerfCounter")
        eq((st, body.count(b"<returnval>")), (200, 5000), "deep")
        sim.inject("QueryPerfCounter", "garbage")
        st, body = raw_post(sim, c, "QueryPerfCounter")
        eq((st, body.startswith(b"\x00")), (200, True), "garbage")
        sim.inject("*", "status", status=503, count=2)
        eq(raw_post(sim, c, "QueryPerfCounter")[0], 503, "status, any method")
        eq(raw_post(sim, c, "QueryPerfProviderSummary")[0], 503, "status, twice")
        sim.inject("QueryPerfCounter", "fault", fault="SystemError")
        expect_fault("SystemError", c.query_perf_counter, [sim.counters()["counters"]["net.errorsRx"]])
        eq(len(c.query_perf_counter([sim.counters()["counters"]["net.errorsRx"]])), 1, "count used up")
        expect_control_error(400, sim.inject, "X", "explode")
        sim.set_delay(300, method="QueryPerfCounter")
        t0 = time.time()
        c.query_perf_counter([sim.counters()["counters"]["net.errorsRx"]])
        eq(time.time() - t0 >= 0.3, True, "delayed")
        sim.set_delay(0, method="QueryPerfCounter")
    finally:
        sim.stop()


def test_control_errors(d):
    sim = start(d, cluster_hosts=1, standalone=0)
    try:
        expect_control_error(404, sim.call, "no_such_call")
        expect_control_error(404, sim.set_maintenance, "nosuch", True)
        expect_control_error(400, sim.call, "set_maintenance", host="DC0_C0_H0", on="yes")
    finally:
        sim.stop()


harness.main(globals())
