"""nic collector end to end: the real binary against a simulated ESXi host
(fake localcli/esxcli replaying captured output) and a fake Linux sysfs."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import FakeHost, Agent, select, eq, fail  # noqa: E402

LIST = "esxi/esxcli-network-nic-list/esxi90-vmxnet3.txt"
STATS = "esxi/esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt"


def fixture(rel):
    with open(os.path.join(harness.FIXTURES, rel)) as f:
        return f.read()


def esxi_config(host):
    return """server: {hostname: ""}
storage: {directory: "@STORAGE@"}
host: {platform: esxi, tools_dir: "%s"}
collectors:
  nic: {enabled: yes, interval: 60}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
filelog: {}
""" % host.tools_dir


def nic_list(name="vmnic2", link="Up"):
    """The 9.0 capture with the NIC renamed and the link (and, when down,
    speed/duplex) changed, column widths kept."""
    text = fixture(LIST).replace("vmnic0", name)
    if link == "Down":
        text = text.replace("Up           10000  Full", "Down             0  Half")
    return text


def nic_stats(name="vmnic2", crc=0, dropped=2452783244):
    text = fixture(STATS).replace("vmnic2", name)
    text = text.replace("Receive CRC errors: 0", "Receive CRC errors: %d" % crc)
    text = text.replace("Total receive errors: 0", "Total receive errors: %d" % crc)
    return text.replace("Receive packets dropped: 2452783244",
                        "Receive packets dropped: %d" % dropped)


def setup(d, crc=0, link="Up"):
    host = FakeHost(d)
    host.set_both("network nic list", text=nic_list(link=link))
    host.set_both("network nic stats get -n vmnic2", text=nic_stats(crc=crc))
    return host, Agent(d, esxi_config(host))


def once(agent):
    rc, evs, err = agent.once()
    if rc != 0:
        fail("--once exit %d: %s" % (rc, err[-500:]))
    return [e for e in evs if e.get("esxwatch_collector") == "nic"], err


def check_deltas_sane(events):
    for e in events:
        for k, v in e.items():
            if k.endswith("_delta"):
                if not re.fullmatch(r"[0-9]+", v) or int(v) >= 2 ** 62:
                    fail("%s = %r is not a sane delta" % (k, v))


def test_crc_growth_gives_delta_and_alert(d):
    host, agent = setup(d, crc=48042)
    evs, _ = once(agent)
    samples = select(evs, esxwatch_kind="sample", esxwatch_nic="vmnic2")
    eq(len(samples), 1, "samples on the first run")
    s = samples[0]
    eq(s["esxwatch_rx_crc_errors"], "48042", "first total")
    if "esxwatch_rx_crc_errors_delta" in s:
        fail("first sample has a delta")
    eq(select(evs, esxwatch_kind="alert"), [], "alerts on first sight")
    eq(s["esxwatch_link"], "up", "link")
    eq(s["esxwatch_admin"], "up", "admin")
    eq(s["esxwatch_speed_mbps"], "10000", "speed")
    eq(s["esxwatch_duplex"], "full", "duplex")
    eq(s["esxwatch_driver"], "nvmxnet3", "driver")
    eq(s["esxwatch_severity"], "info", "severity")
    eq(s["hostname"] != "", True, "hostname set")

    host.set_both("network nic stats get -n vmnic2", text=nic_stats(crc=123456))
    evs, _ = once(agent)
    s = select(evs, esxwatch_kind="sample", esxwatch_nic="vmnic2")[0]
    eq(s["esxwatch_rx_crc_errors"], "123456", "second total")
    eq(s["esxwatch_rx_crc_errors_delta"], "75414", "CRC delta")
    eq(s["esxwatch_rx_dropped_delta"], "0", "dropped delta")
    alerts = select(evs, esxwatch_kind="alert", esxwatch_counter="rx_crc_errors")
    eq(len(alerts), 1, "CRC alerts")
    a = alerts[0]
    if not re.fullmatch(r"vmnic2: Receive CRC errors increased by 75414 \(to 123456\)"
                        r" in the last [0-9]+ s", a["text"]):
        fail("alert text %r" % a["text"])
    eq(a["esxwatch_severity"], "error", "CRC alert severity")
    eq(a["esxwatch_rx_crc_errors_delta"], "75414", "alert delta")
    eq(a["esxwatch_nic"], "vmnic2", "alert nic")
    # Total receive errors grew too: its own alert, a warning.
    eq([x["esxwatch_severity"] for x in
        select(evs, esxwatch_kind="alert", esxwatch_counter="rx_errors")], ["warning"],
       "rx_errors alert")
    check_deltas_sane(evs)


def test_link_down_is_a_change(d):
    host, agent = setup(d)
    evs, _ = once(agent)
    eq(select(evs, esxwatch_kind="change"), [], "changes on first sight")

    host.set_both("network nic list", text=nic_list(link="Down"))
    evs, _ = once(agent)
    ch = select(evs, esxwatch_kind="change")
    eq(len(ch), 1, "changes after link down")
    eq(ch[0]["esxwatch_link"], "down", "link")
    eq(ch[0]["esxwatch_previous_state"], "up", "previous state")
    eq(ch[0]["esxwatch_severity"], "warning", "severity")
    eq(ch[0]["esxwatch_nic"], "vmnic2", "nic")
    s = select(evs, esxwatch_kind="sample")[0]
    eq(s["esxwatch_link"], "down", "sample link")
    eq(s["esxwatch_speed_mbps"], "0", "speed when down")

    evs, _ = once(agent)   # still down: nothing new
    eq(select(evs, esxwatch_kind="change"), [], "changes while still down")

    host.set_both("network nic list", text=nic_list(link="Up"))
    evs, _ = once(agent)
    ch = select(evs, esxwatch_kind="change")
    eq([(c["esxwatch_link"], c["esxwatch_previous_state"], c["esxwatch_severity"])
        for c in ch], [("up", "down", "info")], "change back up")


def test_counter_backwards_is_a_new_baseline(d):
    host, agent = setup(d, crc=123456)
    once(agent)
    host.set_both("network nic stats get -n vmnic2", text=nic_stats(crc=5, dropped=7))
    evs, _ = once(agent)
    check_deltas_sane(evs)
    eq(select(evs, esxwatch_kind="alert"), [], "alerts after a reset")
    s = select(evs, esxwatch_kind="sample")[0]
    for f in ("esxwatch_rx_crc_errors_delta", "esxwatch_rx_dropped_delta"):
        if f in s:
            fail("%s present after the counter went backwards: %r" % (f, s[f]))
    eq(s["esxwatch_rx_crc_errors"], "5", "new total")
    # from the new baseline on, growth counts again
    host.set_both("network nic stats get -n vmnic2", text=nic_stats(crc=9, dropped=7))
    evs, _ = once(agent)
    s = select(evs, esxwatch_kind="sample")[0]
    eq(s["esxwatch_rx_crc_errors_delta"], "4", "delta from the new baseline")
    eq(len(select(evs, esxwatch_kind="alert", esxwatch_counter="rx_crc_errors")), 1,
       "alert from the new baseline")


def test_localcli_preferred_over_esxcli(d):
    host, agent = setup(d)
    once(agent)
    calls = host.calls()
    eq(calls, ["localcli network nic list", "localcli network nic stats get -n vmnic2"],
       "calls with localcli present")
    host.remove_tool("localcli")
    evs, _ = once(agent)
    eq(host.calls()[2:], ["esxcli network nic list", "esxcli network nic stats get -n vmnic2"],
       "calls without localcli")
    eq(len(select(evs, esxwatch_kind="sample", esxwatch_nic="vmnic2")), 1, "sample via esxcli")


def test_esxcli_error_is_logged_not_emitted(d):
    host, agent = setup(d)
    host.set_both("network nic list", text="Error: Unknown command or namespace network nic list\n", rc=1)
    rc, evs, err = agent.once()
    eq([e for e in evs if e.get("esxwatch_collector") == "nic"], [], "nic events")
    if "localcli network nic list" not in err or "Unknown command" not in err:
        fail("stderr does not explain the failure: %r" % err[-400:])
    # a NIC whose stats fail still gets its link sample
    host.set_both("network nic list", text=nic_list())
    host.set_both("network nic stats get -n vmnic2", text="garbage\n", rc=1)
    evs, err = once(agent)
    s = select(evs, esxwatch_kind="sample", esxwatch_nic="vmnic2")
    eq(len(s), 1, "sample without stats")
    eq(s[0]["esxwatch_link"], "up", "link without stats")
    if "esxwatch_rx_crc_errors" in s[0]:
        fail("counters invented")


def test_include_exclude_and_odd_names(d):
    host = FakeHost(d)
    text = nic_list()
    row = [l for l in text.splitlines() if l.startswith("vmnic2")][0]
    # vmnic3 is excluded; a name that would read as an option is refused
    text = text.rstrip("\n") + "\n" + row.replace("vmnic2", "vmnic3") + "\n" + \
        row.replace("vmnic2", "-a    ") + "\n"
    host.set_both("network nic list", text=text)
    host.set_both("network nic stats get -n vmnic2", text=nic_stats())
    host.set_both("network nic stats get -n vmnic3", text=nic_stats(name="vmnic3"))
    agent = Agent(d, esxi_config(host).replace(
        "nic: {enabled: yes, interval: 60}",
        "nic: {enabled: yes, interval: 60, exclude: [vmnic3]}"))
    evs, _ = once(agent)
    eq(sorted(e["esxwatch_nic"] for e in select(evs, esxwatch_kind="sample")), ["vmnic2"],
       "sampled NICs")
    eq(host.calls(), ["localcli network nic list", "localcli network nic stats get -n vmnic2"],
       "commands run")


def make_sysfs(root, ifaces):
    """ifaces: name -> dict(device=bool, carrier, crc)."""
    net = os.path.join(root, "class", "net")
    drv = os.path.join(root, "bus", "pci", "drivers", "igb")
    os.makedirs(net)
    os.makedirs(drv)
    for name, a in ifaces.items():
        p = os.path.join(net, name)
        os.makedirs(os.path.join(p, "statistics"))
        files = {"operstate": "up" if a.get("carrier", 1) else "down",
                 "carrier": str(a.get("carrier", 1)), "flags": "0x1003",
                 "speed": "1000", "duplex": "full", "mtu": "1500",
                 "address": "00:11:22:33:44:55",
                 "statistics/rx_crc_errors": str(a.get("crc", 0)),
                 "statistics/rx_errors": str(a.get("crc", 0)),
                 "statistics/tx_errors": "0", "statistics/rx_dropped": "0"}
        for f, v in files.items():
            with open(os.path.join(p, f), "w") as fh:
                fh.write(v + "\n")
        if a.get("device"):
            dev = os.path.join(root, "devices", "pci0000:00", name)
            os.makedirs(dev)
            os.symlink(drv, os.path.join(dev, "driver"))
            os.symlink(dev, os.path.join(p, "device"))


def linux_agent(d):
    return Agent(d, """server: {hostname: ""}
storage: {directory: "@STORAGE@"}
host: {platform: linux}
collectors:
  nic: {enabled: yes, interval: 60}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
filelog: {}
""")


def test_linux_sysfs_real_devices_only(d):
    root = os.path.join(d, "sys")
    make_sysfs(root, {"eno1": {"device": True, "crc": 10},
                      "eno2": {"device": True, "carrier": 0},
                      "lo": {}, "docker0": {}, "veth1a2b": {}})
    agent = linux_agent(d)
    env = {"ESXWATCH_SYSFS_ROOT": root}
    rc, evs, err = agent.once(env=env)
    eq(rc, 0, "exit status")
    nics = sorted(e["esxwatch_nic"] for e in select(evs, esxwatch_collector="nic",
                                                     esxwatch_kind="sample"))
    eq(nics, ["eno1", "eno2"], "interfaces sampled")
    e1 = select(evs, esxwatch_nic="eno1")[0]
    eq(e1["esxwatch_driver"], "igb", "driver from the device/driver link")
    eq(e1["esxwatch_link"], "up", "eno1 link")
    eq(e1["esxwatch_rx_crc_errors"], "10", "eno1 crc")
    eq(select(evs, esxwatch_nic="eno2")[0]["esxwatch_link"], "down", "eno2 link")
    with open(os.path.join(root, "class/net/eno1/statistics/rx_crc_errors"), "w") as f:
        f.write("25\n")
    rc, evs, err = agent.once(env=env)
    a = select(evs, esxwatch_kind="alert", esxwatch_counter="rx_crc_errors")
    eq(len(a), 1, "CRC alert on Linux")
    eq(a[0]["esxwatch_rx_crc_errors_delta"], "15", "Linux CRC delta")


def test_linux_no_physical_interface_says_so_once(d):
    root = os.path.join(d, "sys")
    make_sysfs(root, {"lo": {}, "veth0": {}})
    agent = linux_agent(d)
    rc, evs, err = agent.once(env={"ESXWATCH_SYSFS_ROOT": root})
    eq(rc, 0, "exit status")
    eq(select(evs, esxwatch_collector="nic"), [], "nic events")
    lines = [l for l in err.splitlines() if "no physical network interface" in l]
    eq(len(lines), 1, "info lines about no interface")


harness.main(globals())
