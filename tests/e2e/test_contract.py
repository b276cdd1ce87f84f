"""What esxwatch promises its users, end to end through the real binary.

What Log Insight dashboards, alert definitions and scripts rely on and no
other test pins down as a whole:

- every event of every collector (samples, changes, alerts, status) carries
  the fields of "Fields on every event" with valid values, field names that
  are valid and not reserved, unique names, string values, and the fixed
  per-collector fields;
- --print-config of an empty file shows every documented default;
- the command line: exit statuses 0/1/2, -v over logging.debug_level, the
  configuration format chosen by content, the default file search order.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Agent, eq, fail, select  # noqa: E402
from storage_host import (SAN_DS, SATA_HDD, SATA_OLD,  # noqa: E402
                          SMART_4COL, SMART_5COL, StorageHost, fixture,
                          keyed, smart_table, device_record)

FIELD_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
RESERVED = {"text", "timestamp", "source", "event_type"}
# CONTRACT.md section 4 adds esxwatch_collector: diagnosis.
COLLECTORS = {"nic", "datastore", "vsan", "smart", "logwatch", "agent", "diagnosis"}
KINDS = {"sample", "change", "alert", "status"}
SEVERITIES = {"info", "warning", "error", "critical"}
TAGS = {"site": "ams1", "rack": "r12"}
# a filelog's own tags come on top; one of the same name wins
FILE_TAGS = {"site": "other", "rack": "r12", "team": "storage"}
NUMBER = re.compile(r"^[0-9]+$")

NIC_LIST = "esxcli-network-nic-list/esxi90-vmxnet3.txt"
NIC_STATS = "esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt"
VDQ8 = "vdq-q/esxi8.txt"


def log_fixture_line(name, n):
    with open(os.path.join(harness.FIXTURES, "logs", name)) as f:
        return f.read().splitlines()[n - 1]


APD_LINE = log_fixture_line("vobd-log/esxi6-7-apd-sdcard-redacted.log", 3)


def version():
    p = subprocess.run([harness.BIN, "-V"], capture_output=True, timeout=10)
    return p.stdout.decode().split()[1]


# --- one simulated host on which every collector has something to say ------------

def nic_stats(crc):
    t = fixture(NIC_STATS).replace("vmnic2", "vmnic0")
    return t.replace("Receive CRC errors: 0", "Receive CRC errors: %d" % crc)


def nic_list(link_up):
    t = fixture(NIC_LIST)
    if not link_up:
        t = t.replace("Up           10000  Full", "Down             0  Half")
    return t


def device_list(h):
    """The storage host's devices plus two local SATA disks for smart."""
    return keyed([h.device_list(),
                  device_record(SATA_HDD, vendor="ATA     ", model="ST20000NM007D-3D",
                                display="Local ATA Disk (%s)" % SATA_HDD),
                  device_record(SATA_OLD, vendor="ATA     ", model="WDC WD2502ABYS-1",
                                display="Local ATA Disk (%s)" % SATA_OLD)])


def full_host(d):
    h = StorageHost(os.path.join(d, "host"))
    h.apply()
    h.set_both("storage core device list", text=device_list(h))
    h.set_both("storage core device smart get -d " + SATA_HDD, fixture="esxi/" + SMART_5COL)
    h.set_both("storage core device smart get -d " + SATA_OLD, fixture="esxi/" + SMART_4COL)
    h.set_both("nvme device list", text="")
    h.set_both("network nic list", text=nic_list(True))
    h.set_both("network nic stats get -n vmnic0", text=nic_stats(0))
    h.set("vdq", "-q", fixture="esxi/" + VDQ8)
    return h


def full_config(h, out, extra=""):
    return ("host: {platform: esxi, tools_dir: %s, hostname: esx01, log_dir: %s}\n"
            "storage: {directory: @STORAGE@}\n"
            "server: {proto: file, path: %s}\n"
            "tags: {site: ams1, rack: r12}\n"
            "collectors:\n"
            "  nic: {interval: 60, timeout: 10}\n"
            "  datastore: {interval: 30, timeout: 10}\n"
            "  vsan: {interval: 300, timeout: 10}\n"
            "  smart: {interval: 3600, timeout: 10}\n"
            "  agent: {interval: 300}\n"
            "filelog:\n"
            "  vobd: {include: vobd.log, read_from_head: yes, tags: {site: other, team: storage}}\n"
            "%s" % (h.tools_dir, h.log_dir, out, extra))


def events_of(path):
    """JSON lines -> events; a duplicate key in an object fails the test."""
    def no_dups(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                fail("duplicate field %r in one event" % k)
            seen.add(k)
        return dict(pairs)
    evs = []
    if not os.path.exists(path):
        return evs
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                evs.append(json.loads(line, object_pairs_hook=no_dups))
    return evs


def check_common(e, ver, t0_ms, t1_ms, tags=TAGS):
    """The fields every event carries, with valid values."""
    where = "%s/%s event %r" % (e.get("esxwatch_collector"), e.get("esxwatch_kind"),
                                str(e.get("text"))[:120])
    if not isinstance(e.get("text"), str) or not e["text"]:
        fail("%s: no text" % where)
    ts = e.get("timestamp")
    if not isinstance(ts, int) or isinstance(ts, bool):
        fail("%s: timestamp %r is not an integer" % (where, ts))
    for k, v in e.items():
        if k in ("text", "timestamp"):
            continue
        if not FIELD_NAME.match(k):
            fail("%s: field name %r" % (where, k))
        if k in RESERVED:
            fail("%s: reserved field name %r" % (where, k))
        if not isinstance(v, str):
            fail("%s: field %s = %r is not a string" % (where, k, v))
    eq(e.get("hostname"), "esx01", where + ": hostname")
    if e.get("esxwatch_collector") not in COLLECTORS:
        fail("%s: esxwatch_collector %r" % (where, e.get("esxwatch_collector")))
    if e.get("esxwatch_kind") not in KINDS:
        fail("%s: esxwatch_kind %r" % (where, e.get("esxwatch_kind")))
    if e.get("esxwatch_severity") not in SEVERITIES:
        fail("%s: esxwatch_severity %r" % (where, e.get("esxwatch_severity")))
    eq(e.get("esxwatch_version"), ver, where + ": esxwatch_version")
    for k, v in tags.items():
        eq(e.get(k), v, where + ": tag " + k)
    if e["esxwatch_collector"] == "logwatch":
        # the line's own time (2020s) or the read time; never seconds or us
        if not 1_000_000_000_000 <= ts <= t1_ms + 1000:
            fail("%s: timestamp %d is not ms since the epoch" % (where, ts))
        if not e.get("appname") or e["appname"] == "esxwatch":
            fail("%s: appname %r is not the log's program" % (where, e.get("appname")))
    else:
        if not t0_ms - 1000 <= ts <= t1_ms + 1000:
            fail("%s: timestamp %d outside the run [%d, %d]" % (where, ts, t0_ms, t1_ms))
        eq(e.get("appname"), "esxwatch", where + ": appname")
        if "\n" in e["text"]:
            fail("%s: text is not one line" % where)


def has(e, names, what):
    missing = [n for n in names if n not in e]
    if missing:
        fail("%s lacks %s: %r" % (what, ", ".join(missing), e.get("text")))


NIC_COUNTERS = ["rx_crc_errors", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped",
                "rx_missed_errors", "rx_fifo_errors", "rx_length_errors",
                "rx_frame_errors"]
DS_STATES = {"ok", "degraded", "apd", "pdl", "off", "inaccessible", "unmounted"}
VSAN_STATES = {"eligible", "ineligible", "in_use", "unknown"}
HEALTH = {"ok", "warning", "impending_failure", "failed", "unknown"}
AGENT_COUNTERS = ["esxwatch_queued_events", "esxwatch_queued_bytes", "esxwatch_sent_events",
                  "esxwatch_dropped_events", "esxwatch_failed_sends", "esxwatch_rss_kb",
                  "esxwatch_cpu_ms"]


def check_per_collector(e, second_run):
    c, k = e["esxwatch_collector"], e["esxwatch_kind"]
    what = "%s %s" % (c, k)
    if c == "nic" and k in ("sample", "change", "alert"):
        has(e, ["esxwatch_nic", "esxwatch_link", "esxwatch_admin", "esxwatch_speed_mbps",
                "esxwatch_duplex", "esxwatch_driver"], what)
        if e["esxwatch_link"] not in ("up", "down") or e["esxwatch_admin"] not in ("up", "down"):
            fail("%s: link/admin %r/%r" % (what, e["esxwatch_link"], e["esxwatch_admin"]))
        if k == "sample":
            names = ["esxwatch_" + n for n in NIC_COUNTERS]
            if second_run:
                names += [n + "_delta" for n in names]
            has(e, names, what)
            for n in names:
                if not NUMBER.match(e[n]):
                    fail("%s: %s = %r" % (what, n, e[n]))
    elif c == "diagnosis":
        has(e, ["esxwatch_diagnosis", "esxwatch_evidence"], what)
        if k != "alert":
            fail("%s: a diagnosis event is an alert" % what)
    elif c == "datastore" and k in ("sample", "change"):
        has(e, ["esxwatch_device", "esxwatch_datastore", "esxwatch_state",
                "esxwatch_fs_type"], what)
        if e["esxwatch_state"] not in DS_STATES:
            fail("%s: state %r" % (what, e["esxwatch_state"]))
        if e["esxwatch_device"]:
            if not re.match(r"^(naa|t10|mpx|eui)\.", e["esxwatch_device"].split(",")[0]):
                fail("%s: device %r" % (what, e["esxwatch_device"]))
            has(e, ["esxwatch_paths_active", "esxwatch_paths_dead"], what)
        if k == "change":
            has(e, ["esxwatch_previous_state"], what)
            if e["esxwatch_previous_state"] not in DS_STATES:
                fail("%s: previous state %r" % (what, e["esxwatch_previous_state"]))
    elif c == "vsan" and k in ("sample", "change"):
        has(e, ["esxwatch_device", "esxwatch_vsan_state", "esxwatch_vsan_state_text",
                "esxwatch_reason", "esxwatch_is_ssd", "esxwatch_is_pdl"], what)
        if e["esxwatch_vsan_state"] not in VSAN_STATES:
            fail("%s: vsan state %r" % (what, e["esxwatch_vsan_state"]))
        if e["esxwatch_is_ssd"] not in ("0", "1") or e["esxwatch_is_pdl"] not in ("0", "1"):
            fail("%s: is_ssd/is_pdl %r/%r" % (what, e["esxwatch_is_ssd"], e["esxwatch_is_pdl"]))
    elif c == "smart" and k in ("sample", "change", "alert"):
        has(e, ["esxwatch_device", "esxwatch_health", "esxwatch_health_text"], what)
        if e["esxwatch_health"] not in HEALTH:
            fail("%s: health %r" % (what, e["esxwatch_health"]))
    elif c == "logwatch" and k == "alert":
        has(e, ["esxwatch_rule", "esxwatch_file"], what)
    elif c == "agent" and k == "status":
        has(e, AGENT_COUNTERS, what)
        for n in AGENT_COUNTERS:
            if not NUMBER.match(e[n]):
                fail("%s: %s = %r" % (what, n, e[n]))


def run_once(a, out):
    t0 = int(time.time() * 1000)
    rc, _, err = a.run("--once", timeout=90)
    t1 = int(time.time() * 1000)
    eq(rc, 0, "--once exit status (stderr: %s)" % err[-600:])
    evs = events_of(out)
    os.unlink(out)
    return evs, t0, t1


def test_every_event_has_the_contract_fields(d):
    h = full_host(d)
    with open(os.path.join(h.log_dir, "vobd.log"), "w") as f:
        f.write(APD_LINE + "\n")
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, full_config(h, out))
    ver = version()

    evs, t0, t1 = run_once(a, out)
    if len(evs) < 10:
        fail("only %d events on the first run" % len(evs))
    for e in evs:
        check_common(e, ver, t0, t1,
                     FILE_TAGS if e.get("esxwatch_collector") == "logwatch" else TAGS)
        check_per_collector(e, False)
    if select(evs, esxwatch_kind="change"):
        fail("a change on the first observation: %r" %
             [e["text"] for e in select(evs, esxwatch_kind="change")][:5])
    for c in ("nic", "datastore", "vsan", "smart"):
        if not select(evs, esxwatch_collector=c, esxwatch_kind="sample"):
            fail("no %s sample on the first run" % c)
    if not select(evs, esxwatch_collector="agent", esxwatch_kind="status"):
        fail("no agent status event")
    al = select(evs, esxwatch_collector="logwatch", esxwatch_kind="alert")
    eq(len(al), 1, "logwatch alerts")
    eq(al[0]["text"], APD_LINE, "an alert's text is the original line")
    eq(al[0]["team"], "storage", "filelog tag")

    # Second run: every kind of transition at once.
    h.set_both("network nic list", text=nic_list(False))
    h.set_both("network nic stats get -n vmnic0", text=nic_stats(75414))
    h.san_paths = ["dead", "dead"]
    h.apply()
    h.set_both("storage core device list", text=device_list(h))
    h.set_both("storage core device smart get -d " + SATA_HDD,
               text=smart_table(SMART_5COL, health="IMPENDING FAILURE"))
    vdq = fixture(VDQ8)
    vdq2 = vdq.replace('"Ineligible for use by VSAN"', '"In-use for VSAN"', 1)
    if vdq2 == vdq:
        fail("fixture %s has no ineligible disk" % VDQ8)
    h.set("vdq", "-q", text=vdq2)
    evs, t0, t1 = run_once(a, out)
    for e in evs:
        check_common(e, ver, t0, t1,
                     FILE_TAGS if e.get("esxwatch_collector") == "logwatch" else TAGS)
        check_per_collector(e, True)
    for c in ("nic", "datastore", "vsan", "smart"):
        if not select(evs, esxwatch_collector=c, esxwatch_kind="change"):
            fail("no %s change on the second run" % c)
    for c in ("nic", "datastore", "smart"):
        if not select(evs, esxwatch_collector=c, esxwatch_kind="alert"):
            fail("no %s alert on the second run" % c)
    ch = select(evs, esxwatch_collector="datastore", esxwatch_kind="change",
                esxwatch_datastore=SAN_DS)
    # the device and the datastore it backs
    eq(sorted(set(e["esxwatch_state"] for e in ch)), ["apd"], "datastore change")
    s = select(evs, esxwatch_collector="nic", esxwatch_kind="sample")[0]
    eq(s["esxwatch_rx_crc_errors_delta"], "75414", "CRC delta")


def test_tags_never_replace_fixed_fields(d):
    """A tag may not take a reserved name, and a tag named like a collector's
    field does not overwrite it."""
    h = full_host(d)
    out = os.path.join(d, "out.jsonl")
    for bad in ("text", "timestamp", "source", "event_type", "Site", "9lives", "a-b"):
        a = Agent(d, full_config(h, out).replace(
            "tags: {site: ams1, rack: r12}", "tags: {%s: x}" % bad))
        rc, _, err = a.run("--check-config")
        eq(rc, 2, "tag %r: exit status (stderr %r)" % (bad, err))
        if not re.search(r":\d+:\d+: ", err):
            fail("tag %r: no FILE:LINE:COL in %r" % (bad, err))
    a = Agent(d, full_config(h, out).replace(
        "tags: {site: ams1, rack: r12}",
        "tags: {site: ams1, rack: r12, esxwatch_collector: x, hostname: y}"))
    rc, _, err = a.run("--once", timeout=90)
    eq(rc, 0, "--once (stderr %s)" % err[-500:])
    evs = events_of(out)
    if not evs:
        fail("no events")
    for e in evs:
        if e["esxwatch_collector"] not in COLLECTORS or e["hostname"] != "esx01":
            fail("a tag replaced a fixed field: %r" % e)


def test_hostname_is_the_hosts_name_without_override(d):
    h = full_host(d)
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, full_config(h, out).replace("hostname: esx01, ", ""))
    evs, _, _ = run_once(a, out)
    if not evs:
        fail("no events")
    for e in evs:
        eq(e.get("hostname"), socket.gethostname(), "hostname of %r" % e["text"][:80])


def test_docs_name_every_field_and_key(d):
    """docs/events.md names every field the collectors set, and
    docs/configuration.md every key --print-config shows."""
    with open(os.path.join(harness.TOP, "docs", "events.md")) as f:
        events_md = f.read()
    with open(os.path.join(harness.TOP, "docs", "configuration.md")) as f:
        config_md = f.read()
    h = full_host(d)
    with open(os.path.join(h.log_dir, "vobd.log"), "w") as f:
        f.write(APD_LINE + "\n")
    out = os.path.join(d, "out.jsonl")
    a = Agent(d, full_config(h, out))
    evs, _, _ = run_once(a, out)
    h.set_both("network nic stats get -n vmnic0", text=nic_stats(5))
    h.san_paths = ["dead", "dead"]
    h.apply()
    h.set_both("storage core device list", text=device_list(h))
    evs += run_once(a, out)[0]
    names = set()
    for e in evs:
        names.update(k for k in e if k not in ("text", "timestamp") and k not in FILE_TAGS)
    missing = sorted(n for n in names
                     if "`%s`" % re.sub(r"_delta$", "", n) not in events_md)
    if missing:
        fail("docs/events.md does not name %s" % ", ".join(missing))

    path = os.path.join(d, "empty.yaml")
    open(path, "w").close()
    rc, text, _ = run_bin(["--print-config", "-c", path])
    eq(rc, 0, "--print-config")
    keys = set()
    for line in text.splitlines():
        m = re.match(r"^ *([a-z_]+):", line)
        if m:
            keys.add(m.group(1))
    missing = sorted(k for k in keys if "`%s`" % k not in config_md and
                     not re.search(r"(?m)^## %s\b" % k, config_md))
    if missing:
        fail("docs/configuration.md does not name %s" % ", ".join(missing))


# --- --print-config of an empty file: every default ----------------------------------

def parse_printed(text):
    """The YAML --print-config writes (2-space block mappings, flow {} and
    [] of scalars, double-quoted strings) -> nested dicts.  Strict: a line
    it does not understand fails the test."""
    root = {}
    stack = [(-1, root)]
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        ind = len(raw) - len(raw.lstrip(" "))
        m = re.match(r'^("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.\-]+):(?: (.*))?$', raw.strip())
        if not m:
            fail("cannot read printed line %r" % raw)
        key = json.loads(m.group(1)) if m.group(1).startswith('"') else m.group(1)
        while stack[-1][0] >= ind:
            stack.pop()
        parent = stack[-1][1]
        val = m.group(2)
        if val is None:
            parent[key] = {}
            stack.append((ind, parent[key]))
        else:
            parent[key] = scalar(val)
    return root


def scalar(v):
    v = v.strip()
    if v == "{}":
        return {}
    if v.startswith("[") and v.endswith("]"):
        inner = v[1:-1].strip()
        return [scalar(x) for x in split_flow(inner)] if inner else []
    if v.startswith("{") and v.endswith("}"):
        out = {}
        for item in split_flow(v[1:-1]):
            k, _, x = item.partition(":")
            out[scalar(k)] = scalar(x)
        return out
    if v.startswith('"'):
        return json.loads(v)
    return v


def split_flow(s):
    out, cur, q = [], "", False
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and q:
            cur += s[i:i + 2]
            i += 2
            continue
        if ch == '"':
            q = not q
        if ch == "," and not q:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


# Every key of the user-facing agent.yaml with its documented default.
DEFAULTS = {
    "server": {
        "hostname": "", "proto": "cfapi", "port": "0", "ssl": "yes", "ssl_ca_path": "",
        "ssl_accept_any": "no", "ssl_cn": "", "reconnect": "30", "agent_id": "",
        "transport": "tcp", "format": "rfc5424", "framing": "octet-counting", "url": "",
        "headers": {}, "compress": "gzip", "path": "",
    },
    "servers": {},
    "storage": {"directory": "", "max_disk_buffer": "200"},
    "logging": {"debug_level": "0", "file": ""},
    "batch": {"max_events": "500", "max_bytes": "1048576", "flush_interval": "1"},
    "host": {"platform": "auto", "tools_dir": "", "log_dir": "", "hostname": ""},
    "tags": {},
    "monitor": {"listen": ""},
    "collectors": {
        "nic": {"enabled": "yes", "interval": "60"},
        "datastore": {"enabled": "yes", "interval": "30"},
        "vsan": {"enabled": "yes", "interval": "300"},
        "smart": {"enabled": "yes", "interval": "3600"},
        "agent": {"enabled": "yes", "interval": "300"},
    },
    "filelog": {
        "vmkernel": {"directory": "/var/log", "include": ["vmkernel.log"], "forward": "matches"},
        "vobd": {"directory": "/var/log", "include": ["vobd.log"], "forward": "matches"},
        "hostd": {"directory": "/var/log", "include": ["hostd.log"], "forward": "matches"},
    },
}


def check_defaults(want, got, where):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            fail("%s: %r is not a mapping" % (where, got))
        if not want and got:
            fail("%s: want {}, got %r" % (where, got))
        for k, v in want.items():
            if k not in got:
                fail("%s.%s is not printed" % (where, k))
            check_defaults(v, got[k], where + "." + k)
    elif want != got:
        fail("%s: printed %r, the default is %r" % (where, got, want))


def test_print_config_of_an_empty_file_shows_every_default(d):
    for name, text in (("empty.yaml", ""), ("comment.yaml", "# nothing here\n")):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([harness.BIN, "--print-config", "-c", path],
                           capture_output=True, timeout=30)
        eq(p.returncode, 0, "--print-config exit status (%r)" % p.stderr[-300:])
        eq(p.stderr, b"", "stderr")
        got = parse_printed(p.stdout.decode())
        check_defaults(DEFAULTS, got, name)
        # the default file list is exactly the three, in this order
        eq(list(got["filelog"]), ["vmkernel", "vobd", "hostd"], "default filelogs")
        eq([k for k in got["collectors"] if k in DEFAULTS["collectors"]],
           ["nic", "datastore", "vsan", "smart", "agent"], "collectors")


def test_print_config_is_yaml_a_yaml_reader_agrees_with(d):
    """Where PyYAML is installed, it reads the printed configuration to the
    same values (booleans and numbers as YAML 1.1 reads them)."""
    try:
        import yaml  # noqa: F401
    except ImportError:
        return
    path = os.path.join(d, "agent.yaml")
    with open(path, "w") as f:
        f.write('tags: {site: "a: b", q: "say \\"hi\\""}\n'
                'collectors:\n  nic: {include: ["vmnic*", "x,y"]}\n')
    p = subprocess.run([harness.BIN, "--print-config", "-c", path],
                       capture_output=True, timeout=30)
    eq(p.returncode, 0, "exit status")
    import yaml
    y = yaml.safe_load(p.stdout.decode())
    eq(y["tags"], {"site": "a: b", "q": 'say "hi"'}, "tags")
    eq(y["collectors"]["nic"]["include"], ["vmnic*", "x,y"], "include")
    eq(y["server"]["ssl"], True, "ssl")
    eq(y["batch"]["max_events"], 500, "max_events")


# --- command line ---------------------------------------------------------------------

def run_bin(args, cwd=None, timeout=60, env=None):
    p = subprocess.run([harness.BIN] + args, capture_output=True, timeout=timeout, cwd=cwd,
                       env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def quiet_config(d, extra=""):
    """Only the nic collector, on a simulated host, events to a file."""
    h = full_host(d)
    return h, ("host: {platform: esxi, tools_dir: %s, hostname: esx01}\n"
               "storage: {directory: %s/storage}\n"
               "collectors:\n  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
               "  smart: {enabled: no}\n  agent: {enabled: no}\n"
               "filelog: {}\n%s" % (h.tools_dir, d, extra))


def test_exit_status_usage_is_2(d):
    for args in (["--bogus"], ["-x"], ["-c"], ["--once", "extra-argument"]):
        rc, out, err = run_bin(args)
        eq(rc, 2, "exit status of %r (stderr %r)" % (args, err))
        if "usage" not in err:
            fail("%r: no usage on stderr: %r" % (args, err))
    rc, out, err = run_bin(["-h"])
    eq(rc, 0, "-h")
    for opt in ("-c, --config FILE", "--once", "--check-config", "--print-config",
                "-v", "-V, --version", "-h, --help"):
        if opt not in out:
            fail("-h does not show %r" % opt)
    rc, out, _ = run_bin(["--version"])
    eq((rc, out.strip()), (0, "esxwatch " + version()), "--version")


def test_exit_status_configuration_error_is_2_for_every_mode(d):
    path = os.path.join(d, "bad.yaml")
    with open(path, "w") as f:
        f.write("batch:\n  max_events: 501\n")
    for mode in ([], ["--once"], ["--check-config"], ["--print-config"]):
        rc, out, err = run_bin(["-c", path] + mode, timeout=30)
        eq(rc, 2, "%r with a bad configuration (stderr %r)" % (mode, err))
        if not err.startswith(path + ":2:15: "):
            fail("%r: error not as FILE:LINE:COL: %r" % (mode, err))
        eq(out, "", "%r: stdout" % mode)


def test_exit_status_undelivered_once_is_1(d):
    """--once exits 0 only if every event was delivered: a destination that
    refuses connections makes it 1 (after its bounded wait)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    h, cfg = quiet_config(d, "server: {hostname: 127.0.0.1, proto: http, "
                             "url: 'http://127.0.0.1:%d/', timeout: 2}\n" % port)
    path = os.path.join(d, "agent.yaml")
    with open(path, "w") as f:
        f.write(cfg)
    # the test hook shortens the 30 s delivery wait: the outcome is the same
    t0 = time.time()
    rc, out, err = run_bin(["-c", path, "--once"], timeout=120,
                           env=dict(os.environ, ESXWATCH_ONCE_DRAIN_MS="4000"))
    eq(rc, 1, "--once with an unreachable destination (stderr %s)" % err[-400:])
    if "not every event was delivered" not in err:
        fail("--once does not say why it exits 1: %s" % err[-400:])
    if time.time() - t0 > 25:   # the default wait is 30 s
        fail("--once waited %.0f s with a 4 s delivery wait" % (time.time() - t0))


def test_v_overrides_debug_level(d):
    h, cfg = quiet_config(d, "logging: {debug_level: 0}\n")
    path = os.path.join(d, "agent.yaml")
    with open(path, "w") as f:
        f.write(cfg)
    rc, out, err = run_bin(["-c", path, "--once"])
    eq(rc, 0, "--once")
    if ": debug: " in err:
        fail("debug lines at debug_level 0: %r" % err[:300])
    for args in (["-v"], ["-vv"], ["-v", "-v"]):
        rc, out, err = run_bin(["-c", path, "--once"] + args)
        eq(rc, 0, "--once %r" % args)
        if ": debug: " not in err:
            fail("%r printed no debug line: %r" % (args, err[:300]))
    # -v also applies when the log goes to a file
    log = os.path.join(d, "agent.log")
    with open(path, "w") as f:
        f.write(cfg.replace("{debug_level: 0}", "{debug_level: 0, file: %s}" % log))
    rc, out, err = run_bin(["-c", path, "--once", "-v"])
    eq(rc, 0, "--once -v with logging.file")
    with open(log) as f:
        if ": debug: " not in f.read():
            fail("-v did not raise the level of logging.file")


def test_sigint_like_sigterm_and_status_exit_3(d):
    """SIGINT stops the daemon as SIGTERM does (exit 0, the queue
    delivered); --status then says no agent runs (exit 3)."""
    h, cfg = quiet_config(d, "server: {proto: file, path: %s/out.jsonl}\n"
                             "collectors: {nic: {interval: 1}, datastore: {enabled: no}, "
                             "vsan: {enabled: no}, smart: {enabled: no}, agent: {enabled: yes}}\n" % d)
    cfg = cfg.replace("collectors:\n  datastore: {enabled: no}\n  vsan: {enabled: no}\n"
                      "  smart: {enabled: no}\n  agent: {enabled: no}\n", "")
    a = Agent(d, cfg)
    a.start()
    harness.wait_for(lambda: events_of(os.path.join(d, "out.jsonl")), what="events")
    rc, out, err = a.run("--status")
    eq(rc, 0, "--status while running (%r)" % (out + err))
    a.signal(signal.SIGINT)
    a.proc.wait(10)
    eq(a.proc.returncode, 0, "exit status after SIGINT")
    a.proc = None
    rc, out, err = a.run("--status")
    eq(rc, 3, "--status after the stop (%r)" % (out + err))


def test_format_chosen_by_content(d):
    ini = os.path.join(d, "agent.yaml")
    with open(ini, "w") as f:
        f.write("; liagent.ini under a YAML name\n[server]\nhostname=li.example\n")
    yml = os.path.join(d, "liagent.ini")
    with open(yml, "w") as f:
        f.write("# YAML under an INI name\nserver:\n  hostname: li2.example\n")
    for path, host in ((ini, "li.example"), (yml, "li2.example")):
        rc, out, err = run_bin(["--print-config", "-c", path])
        eq(rc, 0, "%s (stderr %r)" % (path, err))
        eq(parse_printed(out)["server"]["hostname"], host, path)


def test_default_config_search_order_linux(d):
    """Without -c on Linux: /etc/esxwatch/agent.yaml, then ./agent.yaml."""
    if os.path.exists("/etc/esxwatch/agent.yaml"):
        return  # this machine has its own; the order is then not observable here
    with open(os.path.join(d, "agent.yaml"), "w") as f:
        f.write("host: {hostname: from-cwd}\n")
    rc, out, err = run_bin(["--print-config"], cwd=d)
    eq(rc, 0, "--print-config without -c (stderr %r)" % err)
    eq(parse_printed(out)["host"]["hostname"], "from-cwd", "./agent.yaml used")
    empty = os.path.join(d, "empty")
    os.mkdir(empty)
    rc, out, err = run_bin(["--check-config"], cwd=empty)
    eq(rc, 2, "--check-config without any file (stderr %r)" % err)


harness.main(globals())
