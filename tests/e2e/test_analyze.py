"""--analyze BUNDLE (CONTRACT §5, docs/analyze.md): vm-support bundles
built here (bundleutil.py, the real layout of tests/fixtures/bundle/
SOURCES.md) from the real captures in tests/fixtures/; the report's
findings against what the live agent finds on the same outputs and logs."""
import json
import os
import re
import shutil
import subprocess
import sys

import harness
from harness import Agent, FakeHost, fail, eq
import bundleutil as bu


def log(rel):
    with open(os.path.join(harness.FIXTURES, "logs", rel)) as f:
        return f.read()


PDL = log("vmkernel-log/esxi50-pdl.log")
SCSI = log("vmkernel-log/esxi51-scsi-errors-heartbeat.log")
E1000E = log("vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log")
LINK = log("vobd-log/esxi6-link-down-up.log")

CONF = ("storage: {directory: @STORAGE@}\n"
        "server: {proto: file, path: @ROOT@/out.jsonl}\n"
        "collectors:\n"
        "  nic: {enabled: yes}\n  datastore: {enabled: yes}\n"
        "  vsan: {enabled: yes}\n  smart: {enabled: no}\n  agent: {enabled: no}\n"
        "filelog:\n"
        "  vmkernel: {directory: @ROOT@/log, include: vmkernel.log, read_from_head: yes}\n"
        "  vobd: {directory: @ROOT@/log, include: vobd.log, read_from_head: yes}\n")


def analyze(d, bundle, *args, fmt="json", conf=CONF):
    """Run --analyze; (rc, report (parsed JSON or text), stderr)."""
    a = Agent(d, conf)
    out = os.path.join(d, "report." + fmt)
    rc, _, err = a.run("--analyze", bundle, "--format", fmt, "-o", out, *args)
    if not os.path.exists(out):
        return rc, None, err
    with open(out) as f:
        text = f.read()
    return rc, (json.loads(text) if fmt == "json" else text), err


def alerts(events, collector="logwatch"):
    return sorted((e["timestamp"], e.get("esxwatch_rule", ""),
                   e.get("esxwatch_device", ""), e.get("esxwatch_nic", ""),
                   e["text"]) for e in events
                  if e.get("esxwatch_collector") == collector and
                  e.get("esxwatch_kind") == "alert")


def facts(events):
    """What the host collectors said, without the time."""
    return sorted((e["esxwatch_collector"], e.get("esxwatch_kind"),
                   e.get("esxwatch_severity"), e["text"]) for e in events
                  if e.get("esxwatch_collector") in ("nic", "datastore", "vsan")
                  and e.get("esxwatch_rule") != "nic_counter_not_zero")


def line_ms(line):
    """The ISO time a vmkernel/vobd line starts with, in ms."""
    import datetime
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z", line)
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1000 + int(m.group(2))


def test_same_findings_as_the_live_agent(d):
    """The live agent on the same command outputs (fake localcli/vdq) and
    the same log files, and --analyze on a bundle of them: the same
    alerts (rule, device, NIC, the line's time, text) and the same facts."""
    cmds = bu.base_commands(crc=0)
    live = os.path.join(d, "live")
    os.makedirs(live)
    h = FakeHost(os.path.join(live, "host"))
    h.set_both("network nic list", text=bu.NIC_LIST)
    h.set_both("network nic stats get -n vmnic0", text=bu.nic_stats("vmnic0"))
    for n, args in (("localcli_storage-core-device-list.txt", "storage core device list"),
                    ("localcli_storage-filesystem-list.txt", "storage filesystem list"),
                    ("localcli_storage-vmfs-extent-list.txt", "storage vmfs extent list")):
        h.set_both(args, text=cmds[n])
    h.set("vdq", "-q", text=cmds["vdq_-q--H.txt"])
    os.makedirs(os.path.join(live, "log"))
    for name, text in (("vmkernel.log", PDL + SCSI), ("vobd.log", LINK)):
        with open(os.path.join(live, "log", name), "w") as f:
            f.write(text)
    a = Agent(live, CONF.replace("storage: {", "host: {platform: esxi, tools_dir: %s, "
                                 "hostname: esx01.lab}\nstorage: {" % h.tools_dir))
    rc, _, err = a.run("--once")
    eq(rc, 0, "live --once (stderr %s)" % err[-400:])
    live_ev = harness.file_events(os.path.join(live, "out.jsonl"))
    tgz = bu.write_tgz(os.path.join(d, "b.tgz"), bu.members(
        cmds, [("vmkernel.log", PDL + SCSI), ("vobd.log", LINK)]))
    rc, rep, err = analyze(d, tgz)
    eq(rc, 1, "exit status (critical PDL alerts) stderr %s" % err[-300:])
    got, want = alerts(rep["events"]), alerts(live_ev)
    if not want:
        fail("the live agent found nothing: the comparison would be empty")
    eq(got, want, "logwatch alerts, bundle vs live")
    eq(facts(rep["events"]), facts(live_ev), "nic/datastore/vsan events")
    for c in ("nic", "vsan", "datastore"):
        if not any(f[0] == c for f in facts(live_ev)):
            fail("no %s event to compare: %r" % (c, facts(live_ev)))
    for e in rep["events"]:
        eq(e["hostname"], "esx01.lab", "hostname")
        eq(e.get("esxwatch_input"), "bundle", "esxwatch_input")


def test_line_times_rotated_gz_and_host(d):
    """Rotated .gz logs are read (archive with the logs before commands/),
    every alert carries its line's own time, events come sorted, the
    host's facts and the logs' spans are in the report."""
    logs = [("vmkernel.1.gz", bu.gz(PDL)), ("vmkernel.0.gz", bu.gz(SCSI)),
            ("vmkernel.log", E1000E), ("vobd.log", LINK)]
    mems = bu.members(bu.base_commands(), logs)
    mems = [mems[0]] + [m for m in mems if "/var/" in m[0]] + \
        [m for m in mems[1:] if "/var/" not in m[0]]
    rc, rep, err = analyze(d, bu.write_tgz(os.path.join(d, "b.tgz"), mems))
    eq(rc, 1, "exit status: %s" % err[-300:])
    eq(rep["host"]["hostname"], "esx01.lab", "host")
    eq((rep["host"]["version"], rep["host"]["build"]), ("7.0.3", "21930508"), "version")
    eq(rep["host"]["uptime_s"], 12 * 86400, "uptime")
    files = {l["file"]: l for l in rep["logs"]}
    for name, text in logs:
        l = files.get("var/run/log/" + name)
        if l is None:
            fail("log %s not in the report: %r" % (name, list(files)))
        eq(l["lines"], len(text.splitlines()) if isinstance(text, str) else
           len(PDL.splitlines() if name == "vmkernel.1.gz" else SCSI.splitlines()),
           "lines of " + name)
    lines = {l.rstrip("\n") for t in (PDL, SCSI, E1000E, LINK) for l in t.splitlines()}
    n = 0
    for e in rep["events"]:
        if e["esxwatch_collector"] == "logwatch" and e["text"] in lines:
            eq(e["timestamp"], line_ms(e["text"]), "time of " + e["text"][:60])
            n += 1
    if n < 10:
        fail("only %d alerts from the lines" % n)
    if not any(e["text"] in PDL for e in rep["events"]):
        fail("nothing from the rotated vmkernel.1.gz")
    ts = [e["timestamp"] for e in rep["events"]]
    eq(ts, sorted(ts), "events sorted by time")
    for e in rep["events"]:
        eq(e["hostname"], "esx01.lab", "hostname (logs read before commands/)")


def test_frag_split_bundle_gives_the_same_report(d):
    """Every file over 300 bytes cut into .FRAG-NNNNN pieces (a .gz log
    too): the same report as the whole bundle."""
    logs = [("vmkernel.0.gz", bu.gz(SCSI)), ("vmkernel.log", PDL + E1000E),
            ("vobd.log", LINK)]
    cmds = bu.base_commands(crc=12)
    whole = bu.write_tgz(os.path.join(d, "whole.tgz"), bu.members(cmds, logs))
    mems = bu.members(cmds, logs, frag=300)
    if sum(".FRAG-00002" in p for p, _ in mems) < 3:
        fail("the split bundle has too few pieces: %r" % [p for p, _ in mems])
    split = bu.write_tgz(os.path.join(d, "split.tgz"), mems)
    rc1, r1, _ = analyze(d, whole)
    rc2, r2, _ = analyze(d, split)
    eq(rc2, rc1, "exit status")
    for k in ("events", "logs", "gaps", "host", "summary"):
        eq(r2[k], r1[k], k)
    if not any(e.get("esxwatch_counter") == "rx_crc_errors" for e in r1["events"]):
        fail("nicinfo.sh.txt in pieces did not give the NIC counters")
    # pieces stored last first (a tar of an unpacked bundle keeps directory
    # order): the same report
    rev = bu.write_tgz(os.path.join(d, "rev.tgz"), [mems[0]] + mems[1:][::-1])
    rc3, r3, _ = analyze(d, rev)
    eq(rc3, rc1, "exit status, pieces in reverse")
    for k in ("events", "gaps", "host", "summary"):
        eq(r3[k], r1[k], k + ", pieces in reverse")
    key = lambda l: l["file"]
    eq(sorted(r3["logs"], key=key), sorted(r1["logs"], key=key), "logs, pieces in reverse")


def test_60_layout_directory_and_a_symlink_not_followed(d):
    """ESXi 6.0 keeps its logs in var/log/; the bundle as an unpacked
    directory; a log that is a symlink out of it is not read."""
    root = os.path.join(d, "unpacked")
    top = bu.write_dir(root, bu.members(bu.base_commands(), [
        ("vmkernel.0", PDL), ("vmkernel.log", SCSI), ("vobd.log", LINK)], layout="6.0"))
    outside = os.path.join(d, "outside.log")
    with open(outside, "w") as f:
        f.write(E1000E)
    # ESXi 6.5+ keeps var/log/NAME as links: left out, not held against it
    os.symlink(outside, os.path.join(top, "var", "log", "hostd.log"))
    rc, rep, err = analyze(d, root)
    eq(rc, 1, "exit status: PDL findings, a var/log link only a gap (stderr %s)" % err[-300:])
    eq([l["file"] for l in rep["logs"]],
       ["var/log/vmkernel.0", "var/log/vmkernel.log", "var/log/vobd.log"],
       "logs read, rotations oldest first")
    if any("watchdog" in e["text"] for e in rep["events"]):
        fail("the file behind the symlink was read")
    if not any("hostd.log" in g and "symbolic link" in g for g in rep["gaps"]):
        fail("the symlink is not in gaps: %r" % rep["gaps"])
    if not any(e.get("esxwatch_rule") == "pdl_device_lost" for e in rep["events"]):
        fail("no PDL alert from var/log/vmkernel.0")
    # a link where a command output should be, out of the bundle: hostile
    os.symlink("/etc/passwd", os.path.join(top, "commands", "smartinfo.txt"))
    rc, rep2, err = analyze(d, root)
    eq(rc, 2, "exit status: a symlink out of the bundle in commands/ (stderr %s)" % err[-300:])
    if "symbolic link" not in err or "smartinfo.txt" not in err:
        fail("no clear line about the symlink: %r" % err[-300:])
    eq(rep2["events"], rep["events"], "the report beside the refused link")
    a = Agent(d, CONF)
    rc, _, err = a.run("--analyze", root, "-o", os.path.join(top, "commands", "r.txt"))
    eq(rc, 2, "-o inside the bundle: exit status")
    if "inside the bundle" not in err or os.path.exists(os.path.join(top, "commands", "r.txt")):
        fail("-o inside the bundle: %r" % err)


def test_healthy_bundle_exits_0(d):
    """No error counter, no known error in the logs: exit 0, text report
    says no finding of error or critical."""
    info = log("vmkernel-log/esxi90-header-format.log")
    cmds = bu.base_commands(crc=0, dropped=0)
    tgz = bu.write_tgz(os.path.join(d, "ok.tgz"), bu.members(cmds, [("vmkernel.log", info)]))
    rc, text, err = analyze(d, tgz, fmt="text")
    eq(rc, 0, "exit status (stderr %s)\n%s" % (err[-300:], text))
    if "host     esx01.lab" not in text or "0 critical, 0 error" not in text:
        fail("text report: %s" % text[:600])


def test_diagnosis_over_the_timeline(d):
    """Link changes of one NIC, re-timed from the vobd capture, 20 s apart:
    the diagnosis stage, fed the timeline in order, finds link flapping at
    the lines' time (not the analysis' time), with its evidence, in
    `diagnoses` and in the text report."""
    import datetime
    down, up = LINK.splitlines()[1], LINK.splitlines()[3]
    t0 = datetime.datetime(2020, 4, 30, 7, 25, 58, tzinfo=datetime.timezone.utc)
    lines = []
    for i in range(8):
        t = t0 + datetime.timedelta(seconds=20 * i)
        body = (down if i % 2 == 0 else up).split("Z: ", 1)[1]
        lines.append(t.strftime("%Y-%m-%dT%H:%M:%S.000Z: ") + body)
    tgz = bu.write_tgz(os.path.join(d, "flap.tgz"), bu.members(
        bu.base_commands(), [("vobd.log", "\n".join(lines) + "\n")]))
    rc, rep, err = analyze(d, tgz)
    eq(rc, 1, "exit status (stderr %s)" % err[-300:])
    flaps = [e for e in rep["diagnoses"] if e.get("esxwatch_diagnosis") == "link_flapping"]
    if len(flaps) != 1:
        fail("want one link_flapping diagnosis, got %r" % [e["text"] for e in rep["diagnoses"]])
    f = flaps[0]
    eq((f["esxwatch_nic"], f["esxwatch_severity"], f["esxwatch_collector"]),
       ("vmnic6", "error", "diagnosis"), "the diagnosis")
    first, last = line_ms(lines[0]), line_ms(lines[-1])
    if not first <= f["timestamp"] <= last + 10000:
        fail("diagnosis time %d outside the lines' span %d..%d" % (f["timestamp"], first, last))
    if "linkstate" not in f.get("esxwatch_evidence", ""):
        fail("no evidence: %r" % f.get("esxwatch_evidence"))
    if f not in rep["events"]:
        fail("the diagnosis is not among the events")
    rc, text, _ = analyze(d, tgz, fmt="text")
    if "diagnosis link_flapping  vmnic6" not in text or "evidence: " not in text:
        fail("text report: %s" % text[:1500])


def test_the_agents_configuration_applies(d):
    """-c: an extra rule, a disabled one, a rule's storm limit and tags act
    on the bundle as on the host; the storm summary has the lines' time."""
    conf = CONF + ("tags: {site: lab7}\n"
                   "rules:\n"
                   "  - {name: latency_changed, match: 'user latency of', severity: error}\n"
                   "  - {name: stack_frame, match: ' stack: 0x', severity: warning,\n"
                   "     storm: {max: 1, window: 60}}\n"
                   "  - {name: nic_link_down, enabled: no}\n")
    tgz = bu.write_tgz(os.path.join(d, "b.tgz"), bu.members(
        bu.base_commands(), [("vmkernel.log", E1000E + PDL), ("vobd.log", LINK)]))
    rc, rep, err = analyze(d, tgz, conf=conf)
    eq(rc, 1, "exit status (stderr %s)" % err[-300:])
    rules = [e.get("esxwatch_rule") for e in rep["events"]]
    eq(rules.count("latency_changed"), 1, "the extra rule")
    if "nic_link_down" in rules:
        fail("a disabled rule fired")
    frames = [l for l in E1000E.splitlines() if " stack: 0x" in l]
    st = [e for e in rep["events"] if e.get("esxwatch_rule") == "stack_frame"]
    eq([bool(e.get("esxwatch_repeat_count")) for e in st], [False, True],
       "stack_frame: one sent, the rest in one storm summary")
    eq(int(st[1]["esxwatch_repeat_count"]), len(frames) - 1, "repeat count")
    if not line_ms(frames[-1]) <= st[1]["timestamp"] <= line_ms(E1000E.splitlines()[-1]) + 60000:
        fail("the storm summary's time %d is not the lines' (%d)" % (
            st[1]["timestamp"], line_ms(frames[-1])))
    for e in rep["events"]:
        eq(e.get("site"), "lab7", "tag on " + e["text"][:40])


def test_progress_line_only_on_a_terminal(d):
    """stderr a terminal (script(1), util-linux): a progress line; a pipe:
    nothing but what went wrong."""
    tgz = bu.write_tgz(os.path.join(d, "b.tgz"), bu.members(
        bu.base_commands(), [("vobd.log", LINK)]))
    out = os.path.join(d, "r.txt")
    cmd = "%s --analyze %s -o %s" % (harness.BIN, tgz, out)
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, timeout=60)
    tty = p.stdout.decode(errors="replace")
    if "analyze: " not in tty or "log lines" not in tty:
        fail("no progress line on a terminal: %r" % tty)
    p = subprocess.run([harness.BIN, "--analyze", tgz, "-o", out], capture_output=True, timeout=60)
    eq(p.stderr.decode(), "", "stderr when it is not a terminal")


def test_html_report_from_the_json(d):
    """--format html: the same report (agent/analyze/report_html.c renders
    the JSON of --format json), one file, nothing fetched from elsewhere;
    every finding's rule and entity in it."""
    import html as htmlmod
    tgz = bu.write_tgz(os.path.join(d, "b.tgz"), bu.members(
        bu.base_commands(crc=4000), [("vmkernel.log", PDL), ("vobd.log", LINK)]))
    rc, rep, _ = analyze(d, tgz)
    rc2, page, err = analyze(d, tgz, fmt="html")
    eq(rc2, rc, "exit status (stderr %s)" % err[-300:])
    if not page.lstrip().lower().startswith("<!doctype html"):
        fail("not an HTML document: %r" % page[:80])
    for bad in ("<script src", "<link ", "url(http", "src=\"http", "@import"):
        if bad in page:
            fail("the page fetches something: %r" % bad)
    text = htmlmod.unescape(page)
    for e in rep["events"]:
        if e.get("esxwatch_kind") in ("alert", "change"):
            for k in ("esxwatch_rule", "esxwatch_nic", "esxwatch_device"):
                if e.get(k) and e[k] not in text:
                    fail("%s %r not in the HTML report" % (k, e[k]))
    if "esx01.lab" not in text:
        fail("the host is not in the HTML report")


def test_real_bundle_lines_be2net(d):
    """vmkernel.log lines of a real vm-support bundle (ESXi 5.1, be2net and
    lpfc820, a Virtual Connect module pulled; SOURCES.md): the NICs' link
    down and up and the FC devloss, each at its line's time."""
    with open(os.path.join(harness.FIXTURES, "bundle", "vmkernel-esxi51-be2net-vcm-pull.log")) as f:
        text = f.read()
    tgz = bu.write_tgz(os.path.join(d, "b.tgz"), bu.members(
        bu.base_commands(), [("vmkernel.log", text)]))
    rc, rep, err = analyze(d, tgz)
    eq(rc, 1, "exit status (stderr %s)" % err[-300:])
    got = [(e.get("esxwatch_rule"), e.get("esxwatch_nic"), e["timestamp"])
           for e in rep["events"] if e["esxwatch_collector"] == "logwatch"]
    lines = text.splitlines()
    want = [("nic_driver_link_down", "vmnic%d" % n, line_ms(lines[0])) for n in (0, 2, 4)]
    want += [("nic_driver_link_up", "vmnic%d" % n, line_ms(lines[8 + i]))
             for i, n in enumerate((0, 2, 4))]
    for w in want:
        if w not in got:
            fail("%r not found in %r" % (w, got))
    if sum(1 for g in got if g[0] == "fc_devloss_timeout") != 2:
        fail("FC devloss: %r" % got)


def test_smart_from_smartinfo_same_as_live(d):
    """A SATA drive's SMART table (the real Exos capture) in
    commands/smartinfo.txt after the drive's id (the layout assumed,
    SOURCES.md), and the live agent asking `smart get -d` of the same
    drive: the same smart events."""
    from storage_host import device_record
    dev = "naa.5000c500e5b8c3f1"
    devs = device_record(dev, vendor="ATA", model="ST16000NM001G-2K", display="Local ATA Disk")
    table = bu.fixture("esxi/esxcli-storage-core-device-smart-get/esxi803-sata-hdd-exos.txt")
    conf = CONF.replace("smart: {enabled: no}", "smart: {enabled: yes}")
    live = os.path.join(d, "live")
    os.makedirs(os.path.join(live, "log"))
    h = FakeHost(os.path.join(live, "host"))
    h.set_both("storage core device list", text=devs)
    h.set_both("storage core device smart get -d " + dev, text=table)
    a = Agent(live, conf.replace("storage: {", "host: {platform: esxi, tools_dir: %s, "
                                 "hostname: esx01.lab}\nstorage: {" % h.tools_dir))
    rc, _, err = a.run("--once")
    eq(rc, 0, "live --once (stderr %s)" % err[-400:])
    want = [e for e in harness.file_events(os.path.join(live, "out.jsonl"))
            if e.get("esxwatch_collector") == "smart"]
    cmds = {"uname_-a.txt": bu.UNAME, "vmware_-vl.txt": bu.VMWARE_VL,
            "localcli_storage-core-device-list.txt": devs,
            "smartinfo.txt": "%s\n%s\n" % (dev, table)}
    tgz = bu.write_tgz(os.path.join(d, "b.tgz"), bu.members(cmds, []))
    rc, rep, err = analyze(d, tgz, conf=conf)
    got = [e for e in rep["events"] if e.get("esxwatch_collector") == "smart"]
    if not any(e.get("esxwatch_device") == dev and e.get("esxwatch_kind") == "sample" for e in want):
        fail("the live agent gave no SMART sample: %r" % [e["text"] for e in want])
    strip = lambda evs: sorted(tuple(sorted((k, v) for k, v in e.items() if k not in (
        "timestamp", "esxwatch_event_time", "esxwatch_input", "hostname"))) for e in evs)
    eq(strip(got), strip(want), "smart events, bundle vs live")


def hostile(d, name, build):
    """Run --analyze on a hostile archive from cwd d/run: exit 2, one clear
    line, nothing written but -o."""
    run = os.path.join(d, "run")
    os.makedirs(run, exist_ok=True)
    path = os.path.join(d, name)
    build(path)
    conf = os.path.join(d, "a.yaml")
    with open(conf, "w") as f:
        f.write(CONF.replace("@STORAGE@", d + "/st").replace("@ROOT@", d))
    before = set(os.listdir(d))
    out = os.path.join(run, "r.json")
    p = subprocess.run([harness.BIN, "-c", conf, "--analyze", path, "--format",
                        "json", "-o", out], cwd=run, capture_output=True, timeout=60)
    err = p.stderr.decode()
    eq(p.returncode, 2, "%s: exit status (stderr %r)" % (name, err))
    if not err.strip() or len(err.strip().splitlines()) > 2:
        fail("%s: want one clear line on stderr, got %r" % (name, err))
    eq(sorted(os.listdir(run)), ["r.json"] if os.path.exists(out) else [],
       "%s: files written" % name)
    eq(set(os.listdir(d)) - before - {"run", "st"}, set(), "%s: files written" % name)
    return err, out


def test_hostile_archives_are_refused_cleanly(d):
    import io
    import tarfile
    good = bu.members(bu.base_commands(), [("vobd.log", LINK)])

    def traversal(p):
        def extra(t):
            ti = tarfile.TarInfo("../../evil.txt")
            ti.size = 4
            t.addfile(ti, io.BytesIO(b"evil"))
            ti = tarfile.TarInfo(bu.TOP + "/var/run/log/hostd.log")
            ti.type = tarfile.SYMTYPE
            ti.linkname = "/etc/passwd"
            t.addfile(ti)
        bu.write_tgz(p, good, extra=extra)
    err, out = hostile(d, "traversal.tgz", traversal)
    if "outside" not in err and "link" not in err:
        fail("traversal: %r" % err)
    rep = json.load(open(out))
    if not any("evil.txt" in g for g in rep["gaps"]) or \
            not any("hostd.log" in g and "link" in g for g in rep["gaps"]):
        fail("traversal: the refused members are not in gaps: %r" % rep["gaps"])
    if os.path.exists(os.path.join(d, "evil.txt")) or os.path.exists("/evil.txt"):
        fail("a member was written outside")

    def truncated(p):
        bu.write_tgz(p + ".full", good)
        data = open(p + ".full", "rb").read()
        os.unlink(p + ".full")
        open(p, "wb").write(data[:len(data) * 2 // 3])
    err, out = hostile(d, "truncated.tgz", truncated)
    if "truncated" not in err:
        fail("truncated: %r" % err)

    def huge(p):
        hdr = bytearray(512)
        name = (bu.TOP + "/var/run/log/vmkernel.log").encode()
        hdr[0:len(name)] = name
        hdr[100:108] = b"0000644\0"
        hdr[124:136] = b"%011o\0" % (10 * 1024 ** 3)
        hdr[136:148] = b"00000000000\0"
        hdr[156:157] = b"0"
        hdr[257:263] = b"ustar\0"
        hdr[263:265] = b"00"
        hdr[148:156] = b" " * 8
        hdr[148:156] = b"%06o\0 " % sum(hdr)
        import gzip
        with gzip.open(p, "wb") as f:
            f.write(bytes(hdr) + b"2024-05-01T10:00:00.000Z x\n" * 100)
    err, out = hostile(d, "huge.tgz", huge)
    if "cap" not in err and "truncated" not in err:
        fail("huge: %r" % err)

    # -o the bundle itself: refused before anything is read or written
    tgz = bu.write_tgz(os.path.join(d, "self.tgz"), good)
    size = os.path.getsize(tgz)
    p = subprocess.run([harness.BIN, "--analyze", tgz, "-o", tgz], capture_output=True, timeout=60)
    eq(p.returncode, 2, "-o the bundle: exit status")
    eq(os.path.getsize(tgz), size, "-o the bundle: the bundle left as it was")

    def notbundle(p):
        open(p, "w").write("just some text, not an archive\n" * 20)
    err, _ = hostile(d, "notes.txt", notbundle)
    if "not a" not in err:
        fail("not a bundle: %r" % err)

    def other_tar(p):
        bu.write_tgz(p, [("photos/cat.jpg", b"\xff\xd8" * 100)])
    err, _ = hostile(d, "other.tgz", other_tar)
    if "not a vm-support bundle" not in err:
        fail("another tgz: %r" % err)


harness.main(globals())
