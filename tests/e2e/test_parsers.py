"""End-to-end: liagent's agent parsers and filters through the real binary to
the strict cfapi receiver (tests/lib/receivers.py), on the documented
examples (docs/parsers.md cites them): fields arrive with their names and
values, %t and timestamp parsers set the event time, exclude_fields removes,
next_parser chains, [common|filelog] tags reach every filelog, whitelist and
blacklist drop exactly what they say, PRODUCT arrives as product.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness  # noqa: E402
import receivers  # noqa: E402

OFF = ("collectors: {nic: {enabled: no}, datastore: {enabled: no}, vsan: {enabled: no},"
       " smart: {enabled: no}, agent: {enabled: no}, diagnosis: {enabled: no}}\n")


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def once(d, rx, body):
    cfg = ("server: {hostname: 127.0.0.1, proto: cfapi, port: %d, ssl: no}\n"
           "storage: {directory: \"@STORAGE@\"}\n" % rx.port) + OFF + body
    a = harness.Agent(d, cfg)
    rc, out, err = a.run("--once", timeout=90)
    harness.eq(rc, 0, "--once (stderr %s)" % err[-600:])
    if rx.violations:
        harness.fail("receiver saw protocol violations: %r" % rx.violations[:3])
    return [e for e in rx.events if e.get("esxwatch_collector") == "logwatch"]


def by_file(evs, name):
    return [e for e in evs if e.get("filepath", "").endswith(name)]


def test_parsers_fields_time_and_chains(d):
    logs = os.path.join(d, "logs")
    write(os.path.join(logs, "access.log"),
          ['127.0.0.1 - frank [10/Oct/2024:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'])
    write(os.path.join(logs, "app.log"),
          ["2015-09-22 15:37:36 WARN op=login user=bob secret=x"])
    write(os.path.join(logs, "stats.csv"), ['2015-01-01,"a, ""b""",7'])
    write(os.path.join(logs, "mongo.log"),
          ['{"t":{"$date":"2021-01-01T00:00:00.000Z"},"s":"I","attr":{"command":{"$db":"admin"}}}'])
    rx = receivers.CfapiReceiver()
    try:
        evs = once(d, rx, (
            "parsers:\n"
            "  apache: {base_parser: clf}\n"
            "  app: {base_parser: clf, format: '%%{%%Y-%%m-%%d %%H:%%M:%%S}t %%{level}i %%M',"
            " next_parser: kv, exclude_fields: 'log_message'}\n"
            "  kv: {base_parser: kvp, fields: '*'}\n"
            "  stats: {base_parser: csv, fields: 'date,text_col,count'}\n"
            "filelog:\n"
            "  web: {directory: %(l)s, include: access.log, read_from_head: yes, forward: all,"
            " parser: apache}\n"
            "  app: {directory: %(l)s, include: app.log, read_from_head: yes, forward: all,"
            " parser: app, exclude_fields: [secret]}\n"
            "  stats: {directory: %(l)s, include: stats.csv, read_from_head: yes, forward: all,"
            " parser: stats}\n"
            "  mongo: {directory: %(l)s, include: mongo.log, read_from_head: yes, forward: all,"
            " parser: json}\n") % {"l": logs})
    finally:
        rx.close()
    web = by_file(evs, "access.log")
    harness.eq(len(web), 1, "apache events")
    e = web[0]
    for k, v in (("remote_host", "127.0.0.1"), ("remote_auth_user", "frank"),
                 ("request", "GET /apache_pb.gif HTTP/1.0"), ("status_code", "200"),
                 ("response_size", "2326")):
        harness.eq(e.get(k), v, "apache %s" % k)
    harness.eq(e.get("timestamp"), 1728593736000, "%t sets the event time")
    app = by_file(evs, "app.log")[0]
    harness.eq(app.get("level"), "WARN", "clf %{level}i")
    harness.eq(app.get("op"), "login", "next_parser kvp")
    harness.eq(app.get("user"), "bob", "next_parser kvp")
    harness.eq("secret" in app, False, "filelog exclude_fields")
    harness.eq("log_message" in app, False, "parser exclude_fields")
    harness.eq(app.get("timestamp"), 1442936256000, "%{FORMAT}t")
    st = by_file(evs, "stats.csv")[0]
    harness.eq(st.get("text_col"), 'a, "b"', "csv quoted column")
    harness.eq(st.get("count"), "7", "csv")
    mg = by_file(evs, "mongo.log")[0]
    harness.eq(mg.get("attr_command__db"), "admin", "json flattened")
    harness.eq(mg.get("s"), "I", "json")


def test_timestamp_regex_syslog_auto(d):
    logs = os.path.join(d, "logs")
    write(os.path.join(logs, "ts.log"), ["2024-05-01T10:00:00.250+02:00 job done"])
    write(os.path.join(logs, "re.log"), ["ERROR [pool-1] it broke"])
    write(os.path.join(logs, "sl.log"), [
        '<165>1 2024-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 '
        '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] An application event'])
    write(os.path.join(logs, "au.log"), ["2024-06-01 08:30:00,123 user=alice action=logout"])
    rx = receivers.CfapiReceiver()
    try:
        evs = once(d, rx, (
            "parsers:\n"
            "  ts: {base_parser: timestamp, format: '%%Y-%%m-%%dT%%H:%%M:%%S%%f%%z'}\n"
            "  re: {base_parser: regex, format: '^(?<severity>[A-Z]+) \\[(?<thread>[^]]+)\\] (?<message>.*)$'}\n"
            "  sl: {base_parser: syslog, extract_sd: 'yes'}\n"
            "filelog:\n"
            "  ts: {directory: %(l)s, include: ts.log, read_from_head: yes, forward: all, parser: ts}\n"
            "  re: {directory: %(l)s, include: re.log, read_from_head: yes, forward: all, parser: re}\n"
            "  sl: {directory: %(l)s, include: sl.log, read_from_head: yes, forward: all, parser: sl}\n"
            "  au: {directory: %(l)s, include: au.log, read_from_head: yes, forward: all, parser: auto}\n"
            ) % {"l": logs})
    finally:
        rx.close()
    harness.eq(by_file(evs, "ts.log")[0].get("timestamp"), 1714550400250, "timestamp parser")
    r = by_file(evs, "re.log")[0]
    harness.eq((r.get("severity"), r.get("thread"), r.get("message")), ("ERROR", "pool-1", "it broke"),
               "regex parser named groups")
    sl = by_file(evs, "sl.log")[0]
    harness.eq(sl.get("timestamp"), 1728684855003, "syslog parser time")
    harness.eq((sl.get("syslog_host"), sl.get("msgid"), sl.get("iut"), sl.get("eventsource")),
               ("mymachine.example.com", "ID47", "3", "Application"), "syslog parser with extract_sd")
    au = by_file(evs, "au.log")[0]
    harness.eq((au.get("user"), au.get("action")), ("alice", "logout"), "auto parser kvp")


def test_liagent_ini_common_filters_and_names(d):
    logs = os.path.join(d, "logs")
    write(os.path.join(logs, "a.log"), ["level=debug msg=one", "level=error msg=two"])
    write(os.path.join(logs, "b.log"), ["level=info msg=three", "status=500 msg=four"])
    write(os.path.join(logs, ".hidden.log"), ["level=info msg=hidden"])
    rx = receivers.CfapiReceiver()
    ini = os.path.join(d, "liagent.ini")
    with open(ini, "w") as f:
        f.write("[server]\nhostname=127.0.0.1\nproto=cfapi\nport=%d\nssl=no\n"
                "[storage]\ndirectory=%s\n"
                "[common|global]\ntags={\"PRODUCT\":\"esx\"}\n"
                "[common|filelog]\ntags={\"site\":\"lab\"}\nparser=kv\n"
                "[parser|kv]\nbase_parser=kvp\nfields=*\n"
                "[filelog|a]\ndirectory=%s\ninclude=a.log\nread_from_head=yes\nblacklist=level == \"debug\"\n"
                "[filelog|b]\ndirectory=%s\ninclude=*.log\nexclude=a.log\nread_from_head=yes\n"
                "whitelist=level == \"info\"\n" % (rx.port, os.path.join(d, "storage"), logs, logs))
    try:
        a = harness.Agent(d, open(ini).read(), name="liagent.ini")
        rc, out, err = a.run("--once", timeout=90)
        harness.eq(rc, 0, "--once (stderr %s)" % err[-600:])
        if "'PRODUCT' is sent as 'product'" not in err:
            harness.fail("no warning for the folded tag name: %r" % err[-600:])
        evs = [e for e in rx.events if e.get("esxwatch_collector") == "logwatch"]
    finally:
        rx.close()
    msgs = sorted(e.get("msg") for e in evs)
    # a: debug blacklisted; b: only level=info whitelisted (status=500 has no
    # level: not evaluable, so the whitelist drops it); hidden files are read
    harness.eq(msgs, ["hidden", "three", "two"], "messages after the filters")
    for e in evs:
        harness.eq(e.get("product"), "esx", "[common|global] tag PRODUCT as product")
        harness.eq(e.get("site"), "lab", "[common|filelog] tag on every filelog")
        if not e.get("filepath", "").startswith(logs):
            harness.fail("filepath missing or wrong: %r" % e.get("filepath"))


if __name__ == "__main__":
    harness.main(globals())
