"""logwatch end to end: the real binary follows log files written by the
test and ships alerts to the file sink.

Real lines from tests/fixtures/logs, in both the ESXi 7 header
("2020-...Z cpu2:853571)..." / "2020-...Z: [netCorrelator] ...") and the
ESXi 8 header ("... In(182) vmkernel: ..." / "... In(14) vobd[tid]:  ...").
"""
import gzip
import json
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

LOGS = os.path.join(harness.FIXTURES, "logs")
TS7 = "2024-03-05T06:07:08.123Z"
TS_MS = 1709618828123

OFF = """collectors:
  nic: {enabled: no}
  datastore: {enabled: no}
  vsan: {enabled: no}
  smart: {enabled: no}
  agent: {enabled: no}
  logwatch: {interval: 1}
"""


def fixture_line(name, n):
    with open(os.path.join(LOGS, name)) as f:
        return f.read().splitlines()[n - 1]


def body_after(line, sep):
    return line[line.index(sep) + len(sep):]


def vmk7(line):
    """A vmkernel fixture line with its date replaced by TS7 (7.0 form)."""
    return TS7 + " " + line.split(" ", 1)[1]


def vmk8(line):
    """The same message with the ESXi 8 header."""
    return TS7 + " In(182) vmkernel: " + line.split(" ", 1)[1]


def vobd7(line):
    return TS7 + ": " + body_after(line, "Z: ")


def vobd8(line):
    return TS7 + " In(14) vobd[2097521]:  " + body_after(line, "Z: ")


def config(root, filelogs, extra=""):
    return ("server: {proto: file, path: %s/out.jsonl}\n"
            "storage: {directory: %s/storage}\n" % (root, root)) + OFF + \
        "filelog:\n" + filelogs + extra


def out_events(root):
    return harness.file_events(os.path.join(root, "out.jsonl"))


def logwatch_events(root):
    return [e for e in out_events(root) if e.get("esxwatch_collector") == "logwatch"]


def write(path, lines, mode="a"):
    with open(path, mode) as f:
        for l in lines:
            f.write(l + "\n")


# The lines of the "Done when" item, from the fixtures.
APD = fixture_line("vobd-log/esxi6-7-apd-sdcard-redacted.log", 3)
APD_TWIN = fixture_line("vobd-log/esxi6-7-apd-sdcard-redacted.log", 1)
LOST = fixture_line("vobd-log/esxi6-7-apd-sdcard-redacted.log", 4)
LINKDOWN = fixture_line("vobd-log/esxi6-link-down-up.log", 2)
INFO_VOBD = fixture_line("vobd-log/esxi6-link-down-up.log", 9)
PDL = fixture_line("vmkernel-log/esxi50-pdl.log", 4)
PDL_SENSE = fixture_line("vmkernel-log/esxi50-pdl.log", 7)
INFO_VMK = fixture_line("vmkernel-log/esxi90-header-format.log", 1)


def check_alert(ev, text, rule, vob=None, **fields):
    harness.eq(ev["text"], text, "text")
    harness.eq(ev.get("esxwatch_kind"), "alert", "kind of " + rule)
    harness.eq(ev.get("esxwatch_rule"), rule, "rule")
    harness.eq(ev.get("esxwatch_vob_id"), vob, "vob id of " + rule)
    harness.eq(ev.get("esxwatch_collector"), "logwatch", "collector")
    harness.eq(ev.get("timestamp"), TS_MS, "timestamp of " + rule)
    if not ev.get("esxwatch_hint"):
        harness.fail("no hint on " + rule)
    for k, v in fields.items():
        harness.eq(ev.get("esxwatch_" + k), v, k + " of " + rule)


def _alerts_both_formats(tmpdir, forward):
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    vobd_lines = []
    vmk_lines = []
    for fmt_vobd, fmt_vmk in ((vobd7, vmk7), (vobd8, vmk8)):
        vobd_lines += [fmt_vobd(APD), fmt_vobd(APD_TWIN), fmt_vobd(LOST),
                       fmt_vobd(LINKDOWN), fmt_vobd(INFO_VOBD)]
        vmk_lines += [fmt_vmk(PDL), fmt_vmk(PDL_SENSE), fmt_vmk(INFO_VMK)]
    write(os.path.join(log, "vobd.log"), vobd_lines, "w")
    write(os.path.join(log, "vmkernel.log"), vmk_lines, "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes, forward: %s}\n"
        "  vobd: {directory: %s, include: vobd.log, read_from_head: yes, forward: %s}\n"
        % (log, forward, log, forward)))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status (stderr: %s)" % err[-500:])
    return vobd_lines, vmk_lines, logwatch_events(tmpdir)


def test_alerts_esxi7_and_esxi8_headers(tmpdir):
    vobd_lines, vmk_lines, evs = _alerts_both_formats(tmpdir, "matches")
    by_text = {}
    for e in evs:
        by_text.setdefault(e["text"], []).append(e)
    for i in (0, 5):		# ESXi 7 then ESXi 8 header
        apd, twin, lost, down, info = vobd_lines[i:i + 5]
        pdl, sense, vinfo = vmk_lines[(i // 5) * 3:(i // 5) * 3 + 3]
        for line in (apd, lost, down, pdl, sense):
            harness.eq(len(by_text.get(line, [])), 1, "alerts for %r" % line[:80])
        check_alert(by_text[apd][0], apd, "apd_start", "esx.problem.storage.apd.start",
                    device="mpx.vmhba32:C0:T0:L0")
        check_alert(by_text[lost][0], lost, "storage_connectivity_lost",
                    "esx.problem.storage.connectivity.lost",
                    device="mpx.vmhba32:C0:T0:L0", path="vmhba32:C0:T0:L0")
        check_alert(by_text[down][0], down, "nic_link_down", "vob.net.vmnic.linkstate.down",
                    nic="vmnic6")
        check_alert(by_text[pdl][0], pdl, "pdl_device_lost",
                    device="naa.60a98000572d54724a34642d71325763")
        check_alert(by_text[sense][0], sense, "pdl_sense",
                    device="naa.60a98000572d54724a34642d71325763", scsi_sense="0x5 0x25 0x0",
                    scsi_host_status="1", scsi_device_status="0")
        if "LOGICAL UNIT NOT SUPPORTED" not in by_text[sense][0].get("esxwatch_scsi_sense_text", ""):
            harness.fail("sense not decoded: %r" % by_text[sense][0])
        for line in (twin, info, vinfo):
            harness.eq(by_text.get(line, []), [], "events for a line no rule knows")
    # appname: the program of the ESXi 8 header, else the filelog name.
    harness.eq(by_text[vobd_lines[5]][0]["appname"], "vobd", "appname (8.0)")
    harness.eq(by_text[vobd_lines[0]][0]["appname"], "vobd", "appname (7.0, filelog name)")
    harness.eq(by_text[vmk_lines[3]][0]["appname"], "vmkernel", "appname (8.0 vmkernel)")
    harness.eq(len(evs), 10, "number of events")


UP_VOB = fixture_line("vobd-log/esxi6-7-apd-sdcard-redacted.log", 5)
UP_ESX = fixture_line("vobd-log/esxi6-7-apd-sdcard-redacted.log", 6)
TS7_LATER = "2024-03-05T06:09:08.123Z"


def test_vobd_twins_are_one_alert(tmpdir):
    # vobd logs "[vob.net.vmnic.linkstate.up] vmnic vusb0 linkstate up" and
    # its "[esx.clear.net.vmnic.linkstate.up]" twin: one condition, one
    # alert; the same condition two minutes later is an alert again; the
    # twin is still forwarded as a plain line under forward: all.
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    later = TS7_LATER + ": " + body_after(UP_VOB, "Z: ")
    other = vobd7(UP_ESX).replace("vusb0", "vmnic1")
    lines = [vobd7(UP_VOB), vobd7(UP_ESX), later, other]
    write(os.path.join(log, "vobd.log"), lines, "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vobd: {directory: %s, include: vobd.log, read_from_head: yes, forward: all}\n" % log))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status (stderr: %s)" % err[-500:])
    by_text = {e["text"]: e for e in logwatch_events(tmpdir)}
    harness.eq(sorted(by_text), sorted(lines), "one event per line")
    harness.eq(by_text[lines[0]].get("esxwatch_rule"), "nic_link_up", "first line")
    harness.eq(by_text[lines[1]].get("esxwatch_kind"), "sample", "the twin is no alert")
    harness.eq(by_text[lines[1]].get("esxwatch_rule"), None, "the twin has no rule")
    harness.eq(by_text[lines[2]].get("esxwatch_rule"), "nic_link_up", "later: an alert again")
    harness.eq(by_text[lines[3]].get("esxwatch_rule"), "nic_link_up", "another NIC")
    harness.eq(by_text[lines[3]].get("esxwatch_nic"), "vmnic1", "its NIC")


def test_hostd_event_repeating_vobd_is_one_alert(tmpdir):
    # hostd's event manager logs the text of the event vobd reported: with
    # both logs watched, one link-flapping condition is one alert.
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    vobd = (TS7 + " In(14) vobd[2097521]:  [netCorrelator] 1012726884193us: "
            "[esx.problem.net.vmnic.linkstate.flapping] Taking down physical NIC "
            "vmnic5 because the link is flapping.")
    hostd = ("2024-03-05T06:07:09.001Z Wa(164) Hostd[169828]: [Originator@6876 "
             "sub=Vimsvc.ha-eventmgr] Event 132032 : Taking down physical NIC "
             "vmnic5 because the link is unstable.")
    # vmkernel's latency warning and vobd's event of it: one alert too; a
    # second vmkernel warning is a new occurrence.
    slow = ("Device naa.600508b1001c4d4e9f2e0b8d5e2a1f01 performance has deteriorated. "
            "I/O latency increased from average value of 1234 microseconds to "
            "123456 microseconds.")
    vmk = TS7 + " cpu3:2132)WARNING: ScsiDeviceIO: 1513: " + slow
    vobd_slow = (TS7 + ": [scsiCorrelator] 1012726884200us: "
                 "[esx.problem.scsi.device.io.latency.high] " + slow)
    vmk_again = "2024-03-05T06:07:20.000Z cpu3:2132)WARNING: ScsiDeviceIO: 1513: " + slow
    write(os.path.join(log, "vobd.log"), [vobd, vobd_slow], "w")
    write(os.path.join(log, "hostd.log"), [hostd], "w")
    write(os.path.join(log, "vmkernel.log"), [vmk, vmk_again], "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vobd: {directory: %s, include: vobd.log, read_from_head: yes}\n"
        "  hostd: {directory: %s, include: hostd.log, read_from_head: yes}\n"
        "  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes}\n"
        % (log, log, log)))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status (stderr: %s)" % err[-500:])
    alerts = [e for e in logwatch_events(tmpdir) if e.get("esxwatch_kind") == "alert"]
    flap = [e for e in alerts if e.get("esxwatch_rule") == "nic_link_flapping"]
    harness.eq(len(flap), 1, "alerts for one flapping condition")
    harness.eq(flap[0].get("esxwatch_nic"), "vmnic5", "nic")
    lat = [e for e in alerts if e.get("esxwatch_rule") == "io_latency_deteriorated"]
    harness.eq(len(lat), 2, "latency alerts (vmkernel + vobd once, then vmkernel again)")
    harness.eq(len(alerts), 3, "alerts in all")


def test_forward_all(tmpdir):
    vobd_lines, vmk_lines, evs = _alerts_both_formats(tmpdir, "all")
    harness.eq(len(evs), len(vobd_lines) + len(vmk_lines), "one event per line")
    by_text = {e["text"]: e for e in evs}
    for line in (vobd_lines[4], vobd_lines[9], vmk_lines[2], vmk_lines[5]):
        e = by_text[line]
        harness.eq(e.get("esxwatch_kind"), "sample", "kind of a forwarded line")
        harness.eq(e.get("esxwatch_severity"), "info", "severity of a forwarded line")
        harness.eq(e.get("esxwatch_rule"), None, "rule of a forwarded line")
    harness.eq(by_text[vobd_lines[4]].get("esxwatch_vob_id"), "vob.user.dcui.network.restart", "vob id")
    harness.eq(by_text[vmk_lines[5]]["appname"], "vmkernel", "appname")
    harness.eq(by_text[vmk_lines[5]]["timestamp"], TS_MS, "timestamp from the line")
    harness.eq(by_text[vobd_lines[0]].get("esxwatch_kind"), "alert", "matches are still alerts")


def test_storm_is_summarised(tmpdir):
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    line = vmk7(fixture_line("vmkernel-log/esxi51-scsi-errors-heartbeat.log", 2))
    other = vmk7(fixture_line("vmkernel-log/esxi50-pdl.log", 5))
    write(os.path.join(log, "vmkernel.log"), [line] * 4812 + [other], "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes}\n" % log))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status")
    evs = logwatch_events(tmpdir)
    alerts = [e for e in evs if e["text"] == line]
    harness.eq(len(alerts), 10, "alerts before suppression")
    summ = [e for e in evs if "esxwatch_repeat_count" in e]
    harness.eq(len(summ), 1, "summaries")
    harness.eq(summ[0]["esxwatch_repeat_count"], "4802", "suppressed count")
    harness.eq(summ[0]["esxwatch_rule"], "scsi_cmd_failed", "summary rule")
    harness.eq(summ[0]["esxwatch_device"], "naa.xxx", "summary entity")
    want = "4,802 more matches of rule scsi_cmd_failed on naa.xxx in the last 60 s (not sent one by one)"
    if not summ[0]["text"].startswith(want):
        harness.fail("summary text: %r" % summ[0]["text"])
    harness.eq(summ[0]["esxwatch_repeat_window_s"], "60", "summary window")
    # Another device is another storm.
    harness.eq(len([e for e in evs if e["text"] == other]), 1, "other device")


def _status_json(agent):
    rc, out, err = agent.run("--status", "--json")
    harness.eq(rc, 0, "--status --json exit status (stderr: %r)" % err)
    return json.loads(out)


def _filelog(status, name):
    got = [f for f in status.get("filelogs", []) if f["name"] == name]
    return got[0] if got else None


def test_new_directory_and_file_picked_up(tmpdir):
    """A missing directory is one warning; its appearance one info line,
    its file read; --status shows the filelog, the file, its offset and
    the lines read and matched; the directory gone again is a warning
    again; a filelog matching no file one warning and no_match."""
    log = os.path.join(tmpdir, "later")
    path = os.path.join(log, "vobd.log")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vobd: {directory: %s, include: vobd.log}\n"
        "  none: {directory: %s, include: nothing.log}\n" % (log, tmpdir)))
    missing = "warning: logwatch: filelog vobd: directory %s does not exist" % log
    a.start()
    try:
        harness.wait_for(lambda: missing in a.stderr_text(),
                         timeout=15, what="the missing directory's warning")
        harness.wait_for(lambda: (_filelog(_status_json(a), "vobd") or {}).get("state")
                         == "directory_missing", timeout=15,
                         what="--status: directory_missing")
        os.makedirs(log)
        write(path, [vobd8(APD), "an unmatched line"], "w")
        harness.wait_for(lambda: [e for e in logwatch_events(tmpdir) if e.get("esxwatch_rule") == "apd_start"],
                         timeout=15, what="the alert of a file created after start")
        write(path, [vobd7(LINKDOWN)])
        harness.wait_for(lambda: [e for e in logwatch_events(tmpdir) if e.get("esxwatch_rule") == "nic_link_down"],
                         timeout=15, what="an appended line")
        size = os.path.getsize(path)
        harness.wait_for(lambda: (_filelog(_status_json(a), "vobd") or {}).get("lines_read") == 3,
                         timeout=15, what="--status --json: 3 lines read")
        fl = _filelog(_status_json(a), "vobd")
        harness.eq((fl["state"], fl["directory"], fl["files_followed"],
                    fl["lines_read"], fl["lines_matched"]),
                   ("ok", log, 1, 3, 2), "filelog in --status --json")
        harness.eq(fl["files"], [{"path": path, "offset": size, "lines_read": 3,
                                  "lines_matched": 2}], "its file")
        rc, text, err = a.run("--status")
        harness.eq(rc, 0, "--status exit status")
        for want in ("filelog vobd: ok, 1 file followed in %s; 3 lines read, "
                     "2 matched" % log,
                     "  %s: offset %d; 3 lines read, 2 matched" % (path, size),
                     "filelog none: no file matches, 0 files followed in %s; "
                     "0 lines read, 0 matched" % tmpdir):
            if want not in text.splitlines():
                harness.fail("no %r in --status:\n%s" % (want, text))
        harness.eq(_filelog(_status_json(a), "none")["state"], "no_match", "state of none")
        # the directory gone again: warned about again, once
        shutil.rmtree(log)
        harness.wait_for(lambda: a.stderr_text().count(missing) == 2, timeout=15,
                         what="the warning of the directory gone again")
    finally:
        harness.eq(a.stop(), 0, "exit status")
    harness.eq(len(logwatch_events(tmpdir)), 2, "events")
    log_text = a.stderr_text()
    harness.eq(log_text.count(missing), 2, "warnings: at start, once gone (log: %r)" % log_text)
    harness.eq(log_text.count("info: logwatch: filelog vobd: now following 1 file in %s"
                              % log), 1, "info lines")
    harness.eq(log_text.count("warning: logwatch: filelog none: no file in %s matches "
                              "include 'nothing.log'" % tmpdir), 1, "no-match warnings")


def test_existing_history_skipped_on_first_start(tmpdir):
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    write(os.path.join(log, "vobd.log"), [vobd7(APD)] * 3, "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vobd: {directory: %s, include: vobd.log}\n" % log))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status")
    harness.eq(logwatch_events(tmpdir), [], "events from history")
    write(os.path.join(log, "vobd.log"), [vobd8(LOST)])
    rc, out, err = a.run("--once")
    evs = logwatch_events(tmpdir)
    harness.eq([e.get("esxwatch_rule") for e in evs], ["storage_connectivity_lost"], "after the bookmark")
    with open(os.path.join(tmpdir, "storage", "bookmarks")) as f:
        harness.eq(len(f.read().splitlines()), 1, "bookmarks")
    # A filelog that no longer exists: its bookmark is forgotten.
    a.write_config(config(tmpdir, "  other: {directory: %s, include: other.log}\n" % log))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status")
    with open(os.path.join(tmpdir, "storage", "bookmarks")) as f:
        harness.eq(f.read(), "", "bookmarks after the filelog was removed")


def test_long_line_and_multiline_events(tmpdir):
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    long_line = vobd8(APD) + " " + "x" * 40000
    write(os.path.join(log, "vobd.log"), [long_line, vobd8(LOST)], "w")
    hostd = fixture_line("hostd-log/esxi90-header-format.log", 3)
    cont = fixture_line("hostd-log/esxi90-header-format.log", 2)
    nxt = fixture_line("hostd-log/esxi90-header-format.log", 4)
    write(os.path.join(log, "hostd.log"), [hostd, cont, cont, nxt], "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vobd: {directory: %s, include: vobd.log, read_from_head: yes}\n"
        "  hostd: {directory: %s, include: hostd.log, read_from_head: yes, forward: all,\n"
        "          event_marker: 'Hostd\\[[0-9]+\\]: [^-]', tags: {site: lab1}}\n" % (log, log)))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status")
    evs = logwatch_events(tmpdir)
    apd = [e for e in evs if e.get("esxwatch_rule") == "apd_start"]
    harness.eq(len(apd), 1, "one event for the long line")
    if not apd[0]["text"].endswith("...[truncated]") or len(apd[0]["text"].encode()) > 16 * 1024:
        harness.fail("long line not cut with a marker: %d bytes, ends %r" % (len(apd[0]["text"]), apd[0]["text"][-20:]))
    harness.eq(len([e for e in evs if e.get("esxwatch_rule") == "storage_connectivity_lost"]), 1,
               "the line after the long one")
    h = [e for e in evs if e.get("esxwatch_filelog") == "hostd"]
    harness.eq([e["text"] for e in h], [hostd + "\n" + cont + "\n" + cont, nxt], "hostd events")
    harness.eq(h[0]["appname"], "Hostd", "appname")
    harness.eq(h[0].get("site"), "lab1", "filelog tag")


def test_rules_override_and_disable(tmpdir):
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    write(os.path.join(log, "vobd.log"), [vobd8(APD), vobd8(LINKDOWN), vobd8(INFO_VOBD)], "w")
    extra = ("rules:\n"
             "  - {name: apd_start, match: 'has entered the All Paths Down state', severity: error,\n"
             "     hint: 'call the storage team'}\n"
             "  - {name: nic_link_down, enabled: no}\n"
             "  - {name: dcui_restart, regex: 'Restarting (?<what>Management Network)', severity: info,\n"
             "     hint: 'someone restarted the management network from the DCUI'}\n")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vobd: {directory: %s, include: vobd.log, read_from_head: yes}\n" % log, extra))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status (%s)" % err[-300:])
    evs = logwatch_events(tmpdir)
    harness.eq(sorted(e["esxwatch_rule"] for e in evs), ["apd_start", "dcui_restart"], "rules")
    apd = [e for e in evs if e["esxwatch_rule"] == "apd_start"][0]
    harness.eq(apd["esxwatch_severity"], "error", "overridden severity")
    harness.eq(apd["esxwatch_hint"], "call the storage team", "overridden hint")
    d = [e for e in evs if e["esxwatch_rule"] == "dcui_restart"][0]
    harness.eq(d.get("esxwatch_what"), "Management Network", "named capture of a user rule")


def _gzip_rotate(path, copytruncate=False):
    d = os.path.dirname(path)
    stem = os.path.join(d, "vmkernel")
    for k in range(8, -1, -1):
        if os.path.exists("%s.%d.gz" % (stem, k)):
            os.rename("%s.%d.gz" % (stem, k), "%s.%d.gz" % (stem, k + 1))
    with open(path, "rb") as f:
        data = f.read()
    tmp = stem + ".0.gz.tmp"
    with gzip.open(tmp, "wb") as g:
        g.write(data)
    os.rename(tmp, stem + ".0.gz")
    if copytruncate:
        with open(path, "r+b") as f:
            f.truncate(0)
    else:
        os.unlink(path)


def test_rotation_and_restarts_exactly_once(tmpdir):
    """100,000 lines; rotated to .0.gz three times (rename while running,
    rename while the agent is down, copytruncate while running); the agent
    restarted twice: every matching line arrives exactly once."""
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    path = os.path.join(log, "vmkernel.log")
    open(path, "w").close()
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes}\n" % log))
    total, every = 100000, 10
    template = ("2024-03-05T06:07:08.123Z In(182) vmkernel: cpu1:2097)NMP: "
                "nmp_ThrottleLogForDevice:3546: last error status from device naa.%06d repeated 7 times")
    filler = "2024-03-05T06:07:08.123Z In(182) vmkernel: cpu1:2097)Config: 727: \"TrackMigrations\" = %d, Old Value: 0"
    want = set()
    verbose = ("-v",) if os.environ.get("LOGWATCH_DEBUG") else ()
    a.start(*verbose)
    f = open(path, "a")
    try:
        for i in range(total):
            if i % every == 0:
                l = template % i
                want.add(l)
            else:
                l = filler % i
            f.write(l + "\n")
            if i % 2000 == 1999:
                f.flush()
                time.sleep(0.01)
            if i == 25000:		# ESXi style, while running
                f.close()
                _gzip_rotate(path)
                f = open(path, "a")
            elif i == 40000:		# restart 1, rotation while down
                f.flush()
                harness.eq(a.stop(), 0, "exit status at restart 1")
                f.write(template % 1000001 + "\n")
                want.add(template % 1000001)
                f.close()
                _gzip_rotate(path)
                f = open(path, "a")
                a.start(*verbose)
            elif i == 60000:		# copytruncate while running
                f.close()
                _gzip_rotate(path, copytruncate=True)
                f = open(path, "a")
            elif i == 80000:		# restart 2
                f.flush()
                harness.eq(a.stop(), 0, "exit status at restart 2")
                a.start(*verbose)
        f.close()

        def done():
            return len([e for e in logwatch_events(tmpdir) if e.get("esxwatch_rule")]) >= len(want)
        harness.wait_for(done, timeout=60, interval=0.5, what="every matching line")
        time.sleep(1.5)		# anything extra (duplicates) would arrive now
    finally:
        a.stop()
    got = [e["text"] for e in logwatch_events(tmpdir) if e.get("esxwatch_rule") == "nmp_error_repeated"]
    dup = len(got) - len(set(got))
    missing = want - set(got)
    if missing or dup:
        harness.fail("%d missing (e.g. %r), %d duplicates, of %d" % (
            len(missing), sorted(missing)[:2], dup, len(want)))
    harness.eq(len([e for e in logwatch_events(tmpdir) if not e.get("esxwatch_rule")]), 0,
               "events for non-matching lines")


def _logrotate(path):
    """logrotate with delaycompress: NAME.1 -> NAME.2.gz (older shift), NAME -> NAME.1."""
    for k in range(8, 1, -1):
        if os.path.exists("%s.%d.gz" % (path, k)):
            os.rename("%s.%d.gz" % (path, k), "%s.%d.gz" % (path, k + 1))
    if os.path.exists(path + ".1"):
        with open(path + ".1", "rb") as f, gzip.open(path + ".2.gz", "wb") as g:
            g.write(f.read())
        os.unlink(path + ".1")
    os.rename(path, path + ".1")


def test_several_rotations_between_two_polls(tmpdir):
    """Three rotations in a row between two polls, ESXi style (NAME.0.gz
    shifting) and logrotate style (NAME.1, NAME.2.gz): every line of the
    files rotated in between arrives, exactly once, in order."""
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    vmk, app = os.path.join(log, "vmkernel.log"), os.path.join(log, "app.log")
    write(vmk, [])
    write(app, [])
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log, forward: all, read_from_head: yes}\n"
        "  app: {directory: %s, include: app.log, forward: all, read_from_head: yes}\n" % (log, log))
        .replace("logwatch: {interval: 1}", "logwatch: {interval: 2}"))
    want = {vmk: [], app: []}

    def add(path, n):
        lines = ["%s rotation line %03d" % (os.path.basename(path), len(want[path]) + i)
                 for i in range(n)]
        write(path, lines)
        want[path] += lines
    a.start()
    try:
        for p in (vmk, app):
            add(p, 10)
        harness.wait_for(lambda: len(logwatch_events(tmpdir)) >= 20, timeout=15,
                         what="the first lines")
        for _ in range(3):      # within a few ms: between two polls 2 s apart
            for p in (vmk, app):
                add(p, 10)
            _gzip_rotate(vmk)
            _logrotate(app)
        for p in (vmk, app):
            add(p, 10)
        harness.wait_for(lambda: len(logwatch_events(tmpdir)) >= 100, timeout=20,
                         what="every line")
        time.sleep(2.5)         # a duplicate would arrive by now
    finally:
        a.stop()
    evs = logwatch_events(tmpdir)
    for p in (vmk, app):
        got = [e["text"] for e in evs if e.get("esxwatch_file") == p]
        harness.eq(got, want[p], "lines of %s" % os.path.basename(p))
    harness.eq(len(evs), 100, "events")


def _catalogue_regex(name):
    """The regex of a catalogue rule, as written in collectors/logwatch/rules/esxi.yaml."""
    path = os.path.join(os.path.dirname(harness.FIXTURES), "..", "collectors", "logwatch", "rules", "esxi.yaml")
    with open(path) as f:
        lines = f.read().splitlines()
    i = lines.index("  - name: " + name)
    for l in lines[i + 1:]:
        if l.strip().startswith("regex: "):
            return l.strip()[len("regex: "):]
    raise AssertionError("no regex for " + name)


def _storm_lines(n):
    """n different SCSI failures of one device (the CmdSN differs), ESXi 7
    and ESXi 8 headers alternating: one rule, one entity, n messages."""
    base = fixture_line("vmkernel-log/esxi51-scsi-errors-heartbeat.log", 2)
    out = []
    for i in range(n):
        l = base.replace("CmdSN 0x8000006c", "CmdSN 0x%x" % (0x80000000 + i))
        out.append(vmk7(l) if i % 2 == 0 else vmk8(l))
    return out


def _storm_run(tmpdir, storm, lines, per_step, step_s, kill_at):
    """Write lines per_step at a time every step_s seconds to a followed
    vmkernel.log, kill -9 the agent after kill_at lines and start it again,
    stop it at the end.  Returns the logwatch events."""
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    path = os.path.join(log, "vmkernel.log")
    write(path, [], "w")
    rules = ("rules:\n  - name: scsi_cmd_failed\n    regex: %s\n    severity: warning\n"
             "    storm: %s\n" % (_catalogue_regex("scsi_cmd_failed"), storm))
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log}\n" % log, rules))
    a.start()
    try:
        time.sleep(1.5)   # the file is followed (from its end: it is empty)
        for i in range(0, len(lines), per_step):
            write(path, lines[i:i + per_step])
            time.sleep(step_s)
            if i + per_step == kill_at:
                time.sleep(1.2)     # read and bookmarked, windows still open
                a.kill9()
                a.start()
        time.sleep(2.5)
    finally:
        harness.eq(a.stop(), 0, "exit status")
    return logwatch_events(tmpdir)


def test_storm_counts_survive_kill9(tmpdir):
    """200 matching lines of one rule over about 20 s, window 15 s, a kill -9
    late in the first window (about 110 matches counted, not sent): the
    alerts sent plus the counts of the summaries account for every line
    (95-110 %: lines read again after the crash may be sent twice, none is
    lost)."""
    lines = _storm_lines(200)
    evs = _storm_run(tmpdir, "{max: 10, window: 15}", lines, 5, 0.5, 120)
    sent = set(lines)
    alerts = [e for e in evs if e["text"] in sent]
    summ = [e for e in evs if "esxwatch_repeat_count" in e]
    counted = sum(int(e["esxwatch_repeat_count"]) for e in summ)
    total = len(alerts) + counted
    if not 190 <= total <= 220:
        harness.fail("alerts %d + summarised %d = %d of 200 lines" % (len(alerts), counted, total))
    if not summ:
        harness.fail("no storm summary")
    for e in summ:
        harness.eq(e["esxwatch_rule"], "scsi_cmd_failed", "summary rule")
        harness.eq(e["esxwatch_repeat_window_s"], "15", "summary window")
        harness.eq(e["esxwatch_device"], "naa.xxx", "summary entity")
        want = "%s more match%s of rule scsi_cmd_failed on naa.xxx in the last 15 s (not sent one by one)" % (
            "{:,}".format(int(e["esxwatch_repeat_count"])), "" if e["esxwatch_repeat_count"] == "1" else "es")
        if not e["text"].startswith(want):
            harness.fail("summary text %r, want %r" % (e["text"], want))
    # At most 10 alerts per 15 s window and entity (plus lines read again
    # after the crash): far fewer than the lines.
    if len(alerts) > 60:
        harness.fail("%d alerts: the storm was not limited" % len(alerts))


def test_storm_off_sends_every_match(tmpdir):
    """storm: off: every one of 200 matches is an alert, across a kill -9."""
    lines = _storm_lines(200)
    evs = _storm_run(tmpdir, "off", lines, 20, 0.3, 100)
    got = {e["text"] for e in evs if e.get("esxwatch_rule") == "scsi_cmd_failed"}
    harness.eq(len(got & set(lines)), 200, "distinct matches arrived")
    harness.eq([e for e in evs if "esxwatch_repeat_count" in e], [], "summaries")


def test_storm_with_forward_all_ships_every_line(tmpdir):
    """forward: all: a storm of 100 matches with storm {max: 10} ships all
    100 lines; only 10 of them are alerts carrying the rule's fields, the
    other 90 go as plain lines, and one summary counts them (issue 19)."""
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    lines = _storm_lines(100)
    write(os.path.join(log, "vmkernel.log"), lines, "w")
    rules = ("rules:\n  - name: scsi_cmd_failed\n    regex: %s\n    severity: warning\n"
             "    storm: {max: 10, window: 60}\n" % _catalogue_regex("scsi_cmd_failed"))
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes, forward: all}\n" % log,
        rules))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status")
    evs = logwatch_events(tmpdir)
    want = set(lines)
    shipped = [e for e in evs if e["text"] in want]
    harness.eq(len(shipped), 100, "every line shipped once")
    harness.eq(len({e["text"] for e in shipped}), 100, "distinct lines shipped")
    alerts = [e for e in shipped if e.get("esxwatch_kind") == "alert"]
    harness.eq(len(alerts), 10, "alerts (storm limit)")
    ruled = [e for e in shipped if "esxwatch_rule" in e or "esxwatch_device" in e]
    harness.eq(len(ruled), 10, "lines carrying the rule's fields")
    for e in shipped:
        if e.get("esxwatch_kind") != "alert":
            harness.eq(e.get("esxwatch_kind"), "sample", "a suppressed match's kind")
            harness.eq(e.get("esxwatch_severity"), "info", "a suppressed match's severity")
    summ = [e for e in evs if "esxwatch_repeat_count" in e]
    harness.eq([e["esxwatch_repeat_count"] for e in summ], ["90"], "summarised")
    harness.eq(summ[0]["esxwatch_rule"], "scsi_cmd_failed", "summary rule")


def test_broken_filelog_leaves_the_others_running(tmpdir):
    """One filelog's event_marker does not compile: --check-config exits 2
    with FILE:LINE:COL; a started agent logs that filelog as disabled,
    lists it in --status (and --json), and ships the other filelog's lines;
    a SIGHUP with the marker fixed takes it back (issue 12)."""
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    write(os.path.join(log, "good.log"), ["good line %d" % i for i in range(3)], "w")
    write(os.path.join(log, "bad.log"), ["bad line 0"], "w")
    fl = ("  good: {directory: %s, include: good.log, read_from_head: yes, forward: all}\n"
          "  bad: {directory: %s, include: bad.log, read_from_head: yes, forward: all,\n"
          "        event_marker: \"%s\"}\n")
    a = harness.Agent(tmpdir, config(tmpdir, fl % (log, log, "^(\\\\d+")))
    rc, out, err = a.run("--check-config")
    harness.eq(rc, 2, "--check-config exit status")
    if "agent.yaml:13:" not in err or "event_marker" not in err:
        harness.fail("--check-config: %r" % err)
    a.start()
    try:
        harness.wait_for(lambda: len(logwatch_events(tmpdir)) >= 3, what="the good filelog's lines")
        write(os.path.join(log, "bad.log"), ["bad line 1"])
        write(os.path.join(log, "good.log"), ["good line 3"])
        harness.wait_for(lambda: len(logwatch_events(tmpdir)) >= 4, what="a line written later")
        harness.wait_for(lambda: "filelog bad: disabled" in a.run("--status")[1], what="--status")
        rc, out, err = a.run("--status")
        if not any(l.startswith("filelog bad: disabled: ") and "agent.yaml:13:" in l and "event_marker" in l
                   for l in out.splitlines()):
            harness.fail("--status: %r" % out)
        if "filelog good: disabled" in out or "filelog good: ok" not in out:
            harness.fail("--status does not show the good filelog running: %r" % out)
        rc, out, err = a.run("--status", "--json")
        dis = json.loads(out)["disabled_filelogs"]
        harness.eq([d["name"] for d in dis], ["bad"], "--status --json disabled_filelogs")
        if "filelog bad: disabled" not in a.stderr_text():
            harness.fail("the log does not name the broken filelog: %r" % a.stderr_text()[-800:])
        # fixed and reloaded: it runs, --status no longer lists it
        a.write_config(config(tmpdir, fl % (log, log, "^bad")))
        a.signal(signal.SIGHUP)
        harness.wait_for(lambda: any(e["text"].startswith("bad line") for e in logwatch_events(tmpdir)),
                         what="the fixed filelog's lines")
        harness.wait_for(lambda: "disabled" not in a.run("--status")[1], what="--status after the reload")
    finally:
        harness.eq(a.stop(), 0, "exit status")
    texts = [e["text"] for e in logwatch_events(tmpdir)]
    harness.eq(sorted(t for t in texts if t.startswith("good")), ["good line %d" % i for i in range(4)],
               "the good filelog's lines, once each")


def test_invalid_sense_and_relayed_time(tmpdir):
    """ESXi's "Invalid sense data" goes to esxwatch_scsi_sense_invalid, never
    to the sense fields (KB 318611 line); a line received through a syslog
    relay keeps the host's own time (KB 318898 line, relay 5 h behind)."""
    log = os.path.join(tmpdir, "log")
    os.makedirs(log)
    invalid = vmk8("2021-02-02T19:38:02.935Z cpu14:2097225)ScsiDeviceIO: 4062: Cmd(0x45ba92263280) 0x1a, "
                   "CmdSN 0x1fea2a8 from world 0 to dev \"mpx.vmhba32:C0:T0:L0\" failed H:0x7 D:0x0 P:0x0 "
                   "Invalid sense data: 0xc7 0xf 0x43.")
    valid = vmk7(fixture_line("vmkernel-log/esxi51-scsi-errors-heartbeat.log", 2))
    relayed = fixture_line("vobd-log/relayed-kb318898.log", 1)
    write(os.path.join(log, "vmkernel.log"), [invalid, valid], "w")
    write(os.path.join(log, "vobd.log"), [relayed], "w")
    a = harness.Agent(tmpdir, config(tmpdir,
        "  vmkernel: {directory: %s, include: vmkernel.log, read_from_head: yes}\n"
        "  vobd: {directory: %s, include: vobd.log, read_from_head: yes}\n" % (log, log)))
    rc, out, err = a.run("--once")
    harness.eq(rc, 0, "exit status")
    by = {e["text"]: e for e in logwatch_events(tmpdir)}
    e = by[invalid]
    harness.eq(e.get("esxwatch_scsi_sense_invalid"), "0xc7 0xf 0x43", "invalid sense")
    for f in ("esxwatch_scsi_sense", "esxwatch_scsi_sense_text"):
        harness.eq(e.get(f), None, f + " of invalid sense")
    harness.eq(e.get("esxwatch_scsi_host_status"), "7", "host status still decoded")
    e = by[valid]
    harness.eq(e.get("esxwatch_scsi_sense"), "0x0 0x0 0x0", "possible sense kept")
    harness.eq(e.get("esxwatch_scsi_sense_invalid"), None, "not invalid")
    e = by[relayed]
    harness.eq(e.get("esxwatch_rule"), "uplink_down", "relayed line matched")
    t = time.gmtime(e["timestamp"] / 1000)
    harness.eq((t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min), (11, 29, 3, 25), "host's time, not the relay's")


harness.main(globals())
