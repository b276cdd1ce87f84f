"""esxwatch --export-loginsight: the alert definitions and the content pack
against the shape of three real public content packs
(tests/fixtures/loginsight/), every field a query names against
docs/events.md and docs/loginsight.md, and every dashboard widget's query
(and the diagnosis alerts') run by a small evaluator against the events of
the diagnosis scenarios (tests/e2e/test_diagnosis.py)."""
import json
import os
import re
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import eq, fail  # noqa: E402
import test_diagnosis  # noqa: E402

PACKS = os.path.join(harness.FIXTURES, "loginsight")
RULES = ["path_loss_physical", "link_flapping", "vsan_disk_partitions", "failing_drive",
         "silent_host"]


def real_packs():
    out = []
    for f in sorted(os.listdir(PACKS)):
        if f.endswith(".vlcp"):
            with open(os.path.join(PACKS, f)) as fh:
                out.append(json.load(fh))
    if len(out) < 3:
        fail("fewer than three real packs in %s" % PACKS)
    return out


def export(d, what):
    path = os.path.join(d, what + ".json")
    p = harness.subprocess.run([harness.BIN, "--export-loginsight", what, "-o", path],
                               capture_output=True)
    eq(p.returncode, 0, "exit status of --export-loginsight %s (%s)" % (what, p.stderr[-300:]))
    eq(stat.S_IMODE(os.stat(path).st_mode), 0o600, "mode of the export")
    with open(path) as f:
        return json.load(f)


def widgets(pack):
    for s in pack["dashboardSections"]:
        for v in s["views"]:
            for r in v["rows"]:
                for w in r["widgets"]:
                    yield v, w


def common(dicts):
    keys = None
    for d in dicts:
        keys = set(d) if keys is None else keys & set(d)
    return keys or set()


def check_types(mine, theirs, what):
    for k in theirs:
        a, b = mine.get(k), theirs[k]
        if b is None or a is None:
            continue
        num = (int, float)
        if isinstance(b, num) and not isinstance(a, num) or \
                isinstance(b, str) and not isinstance(a, str) or \
                isinstance(b, list) and not isinstance(a, list):
            fail("%s: %s is %r, real packs have %r" % (what, k, type(a).__name__, type(b).__name__))


# --- shape ----------------------------------------------------------------------

def test_content_pack_has_the_shape_real_packs_share(d):
    real = real_packs()
    cp = export(d, "content-pack")
    top = common(real)
    missing = top - set(cp)
    if missing:
        fail("content pack lacks %s" % sorted(missing))
    check_types(cp, real[0], "content pack")
    eq(cp["framework"], real[0]["framework"], "framework")
    eq(cp["version"], real[0]["version"], "version")
    akeys = common(a for p in real for a in p["alerts"])
    for a in cp["alerts"]:
        if akeys - set(a):
            fail("alert %s lacks %s" % (a["name"], sorted(akeys - set(a))))
        check_types(a, real[0]["alerts"][0], "alert " + a["name"])
    wkeys = common(w for p in real for _, w in widgets(p) if w.get("widgetType") == "chart")
    vkeys = common(v for p in real for v, _ in widgets(p))
    qkeys = common(json.loads(w["chartQuery"]) for p in real for _, w in widgets(p)
                   if w.get("chartQuery"))
    n = 0
    for v, w in widgets(cp):
        n += 1
        if wkeys - set(w):
            fail("widget %s lacks %s" % (w["name"], sorted(wkeys - set(w))))
        if vkeys - set(v):
            fail("view %s lacks %s" % (v["name"], sorted(vkeys - set(v))))
        q = json.loads(w["chartQuery"])
        if qkeys - set(q):
            fail("widget %s query lacks %s" % (w["name"], sorted(qkeys - set(q))))
        json.loads(w["chartOptions"])
    if n < 10:
        fail("only %d widgets" % n)
    ac = common(c for p in real for c in p.get("agentClasses", []))
    for c in cp["agentClasses"]:
        if ac - set(c):
            fail("agent class lacks %s" % sorted(ac - set(c)))


def test_alerts_api_definitions(d):
    alerts = export(d, "alerts")
    real = real_packs()
    qkeys = common(json.loads(a["chartQuery"]) for p in real for a in p["alerts"])
    names = [a["name"] for a in alerts]
    for a in alerts:
        if a["alertType"] not in ("RATE_BASED", "RATE_BASED_WITH_GROUPS", "NEW_EVENT_TYPE"):
            fail("alertType %r" % a["alertType"])
        if a["hitOperator"] not in ("GREATER_THAN", "LESS_THAN"):
            fail("hitOperator %r" % a["hitOperator"])
        if not 0 <= a["hitCount"] <= 100000 or a["searchPeriod"] < 60000:
            fail("%s: hitCount/searchPeriod out of range" % a["name"])
        q = json.loads(a["chartQuery"])
        if qkeys - set(q):
            fail("%s: query lacks %s" % (a["name"], sorted(qkeys - set(q))))
        if a["alertType"] == "RATE_BASED_WITH_GROUPS" and \
                "hostname" not in [g["internalName"] for g in q["groupByFields"]]:
            fail("%s: not grouped by hostname" % a["name"])
        for k in ("emailEnabled", "webhookEnabled", "vcopsEnabled"):
            eq(a.get(k), False, k + " of " + a["name"])
    diag = sorted(c["value"] for a in alerts for c in json.loads(a["chartQuery"])["fieldConstraints"]
                  if c["internalName"] == "esxwatch_diagnosis")
    eq(diag, sorted(RULES), "diagnosis rules with an alert")
    for want in ("All Paths Down", "datastore inaccessible", "NIC error", "link down",
                 "vSAN disk ineligible", "SMART", "dropping events", "failing to deliver"):
        if not any(want in n for n in names):
            fail("no alert about %r in %r" % (want, names))
    cp = export(d, "content-pack")
    eq([a["name"] for a in cp["alerts"]], names, "the pack's alerts are the API's")


def test_export_usage_errors(d):
    p = harness.subprocess.run([harness.BIN, "--export-loginsight", "dashboards"],
                               capture_output=True)
    eq(p.returncode, 2, "unknown export")
    p = harness.subprocess.run([harness.BIN, "-o", os.path.join(d, "x")], capture_output=True)
    eq(p.returncode, 2, "-o without --export-loginsight")


# --- fields ----------------------------------------------------------------------

def documented_fields():
    names = {"hostname", "appname", "text"}
    for doc in ("events.md", "loginsight.md"):
        with open(os.path.join(harness.TOP, "docs", doc)) as f:
            names |= set(re.findall(r"\b(esxwatch_[a-z0-9_]+)\b", f.read()))
    return names


def query_fields(q):
    out = [c["internalName"] for c in q["fieldConstraints"]]
    out += [g["internalName"] for g in q["groupByFields"]]
    if q.get("piqlFunctionField"):
        out.append(q["piqlFunctionField"])
    return out


def all_queries(d):
    cp = export(d, "content-pack")
    for a in cp["alerts"]:
        yield "alert " + a["name"], json.loads(a["chartQuery"])
    for _, w in widgets(cp):
        yield "widget " + w["name"], json.loads(w["chartQuery"])


def test_every_queried_field_is_documented(d):
    known = documented_fields()
    for what, q in all_queries(d):
        for f in query_fields(q):
            if f not in known:
                fail("%s queries %s, which docs/events.md and docs/loginsight.md do not name" % (what, f))


# --- the query evaluator ------------------------------------------------------------

def matches(ev, c):
    v = ev.get(c["internalName"])
    op = c["operator"]
    if op == "EXISTS":
        return v is not None and v != ""
    if v is None:
        return op == "DOES_NOT_CONTAIN"
    if op in ("GREATER_THAN", "LESS_THAN"):
        try:
            x, y = float(v), float(c["value"])
        except ValueError:
            return False
        return x > y if op == "GREATER_THAN" else x < y
    # Log Insight: case-insensitive; a comma separates alternatives; a
    # trailing * is a prefix; a static field's value matches as a whole.
    alts = [a.strip().lower() for a in c["value"].split(",")]
    lv = str(v).lower()
    hit = any(lv.startswith(a[:-1]) if a.endswith("*") else lv == a for a in alts)
    return hit if op == "CONTAINS" else not hit


def run_query(q, events):
    hits = [e for e in events if all(matches(e, c) for c in q["fieldConstraints"])]
    f = q.get("piqlFunctionField")
    if f:
        hits = [e for e in hits if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", str(e.get(f, "")))]
    return hits


def test_every_widget_and_diagnosis_alert_finds_scenario_events(d):
    events = test_diagnosis.all_scenario_events(d)
    if len(events) < 30:
        fail("only %d scenario events" % len(events))
    out = os.path.join(d, "out")
    os.makedirs(out)
    for what, q in all_queries(out):
        diag = [c.get("value") for c in q["fieldConstraints"]
                if c["internalName"] == "esxwatch_diagnosis"]
        if what.startswith("alert") and (not diag or diag[0] == "silent_host"):
            continue	# not every alert's condition is in the stories
        n = len(run_query(q, events))
        if n == 0:
            fail("%s returns no event of the scenarios" % what)
    # And the evaluator can say no.
    eq(run_query({"fieldConstraints": [{"internalName": "esxwatch_collector", "operator": "CONTAINS",
                                        "value": "nosuch"}]}, events), [], "a query for nothing")


def test_agent_config_snippet_is_accepted(d):
    cp = export(d, "content-pack")
    snippet = cp["agentClasses"][0]["agentConfig"]
    path = os.path.join(d, "liagent.ini")
    with open(path, "w") as f:
        f.write(snippet)
    p = harness.subprocess.run([harness.BIN, "--check-config", "-c", path], capture_output=True)
    eq(p.returncode, 0, "--check-config of the snippet (%s)" % p.stderr[-300:])


if __name__ == "__main__":
    harness.main(globals())
