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
                    hostname=h, esxwatch_datastore=ds)
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
        if "certificate changed" not in err or polled(harness.parse_events(out)):
            fail("another certificate accepted under the pin: %s" % err[-1500:])
    finally:
        other.stop()
        shutil.rmtree(other_dir, ignore_errors=True)


def test_events_once_each_across_agent_restarts(d):
    s = sim()
    a = agent_for(d, s)
    h = host_names(s)[0]
    once(a)     # first start: history is not replayed
    k1 = s.post_event(h, "esx.problem.storage.apd.start",
                      "Device naa.600 has entered the All Paths Down state.",
                      severity="warning")
    evs, err = once(a)
    got = polled(evs, esxwatch_collector="vcevents")
    eq([(e["hostname"], e["esxwatch_vc_event"], e["esxwatch_vc_event_key"]) for e in got],
       [(h, "esx.problem.storage.apd.start", str(k1))], "one vcevents event (%s)" % err[-1000:])
    e = got[0]
    eq((e["esxwatch_kind"], e["esxwatch_severity"]), ("alert", "warning"), "kind, severity")
    eq(e.get("esxwatch_rule"), "apd_start", "the catalogue's rule")
    eq(e["text"], "Device naa.600 has entered the All Paths Down state.", "text")
    # posted while the agent is away: the next start has them, once
    k2 = s.post_event(h, "esx.clear.storage.apd.exit", "APD exit", severity="info")
    k3 = s.post_event(h, type="HostConnectionLostEvent", message="lost")
    evs, err = once(a)
    got = polled(evs, esxwatch_collector="vcevents")
    eq(sorted(int(e["esxwatch_vc_event_key"]) for e in got), sorted([k2, k3]),
       "events posted while away (%s)" % err[-1000:])
    evs, _ = once(a)
    eq(polled(evs, esxwatch_collector="vcevents"), [], "a restart repeats none")


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
        n0 = len(samples())
        wait_for(lambda: len(samples()) > n0, 30, what="samples after the sessions were dropped")
        s.restart()
        n1 = len(samples())
        wait_for(lambda: len(samples()) > n1, 30, what="samples after a process restart")
    finally:
        rc = a.stop()
    eq(rc, 0, "agent exit")


def teardown():
    if SIM is not None:
        SIM.stop()
        shutil.rmtree(SIMDIR, ignore_errors=True)


if __name__ == "__main__":
    try:
        harness.main(globals())
    finally:
        teardown()
