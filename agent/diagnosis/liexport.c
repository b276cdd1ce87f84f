/*
 * liexport: Log Insight alerts and a content pack from one table.
 *
 * Every alert and every dashboard widget is a row of li_table below (the
 * diagnosis alerts are rows made from agent/diagnosis/diagrules.c's table), queried
 * on esxwatch's static fields only (docs/events.md), so a renamed field
 * cannot leave a dashboard querying nothing: tests/e2e/test_loginsight.py
 * checks every field name against docs/events.md and runs every query
 * against the events of the diagnosis scenarios.
 *
 * The JSON follows VMware's public content packs (vmw-loginsight/vlcp:
 * VMware-vSphere-v8.16, Linux-Systemd-v1.1, Jenkins-v1.1; excerpts in
 * tests/fixtures/loginsight/): framework "#9c4", version "2.4", alerts with
 * chartQuery/messageQuery as JSON strings, dashboardSections -> views ->
 * rows -> widgets, agentClasses with an agentConfig snippet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diagrules.h"
#include "liexport.h"
#include "../lib/json.h"
#include "../lib/log.h"

#define NCONS	4
#define NGROUP	3

struct li_cons {
	const char	*field, *op, *value;	/* op: CONTAINS EXISTS GREATER_THAN */
};

struct li_row {
	const char	*name;
	const char	*info;		/* what it means */
	const char	*todo;		/* what to do (alerts: recommendation) */
	struct li_cons	 cons[NCONS];
	const char	*group[NGROUP];
	/* alert: */
	bool		 alert;
	const char	*hit_op;	/* GREATER_THAN | LESS_THAN */
	int		 hits;
	long		 period_ms, interval_ms;
	/* widget: */
	const char	*view;		/* NULL: not on a dashboard */
	const char	*chart;		/* column line pie bar */
	const char	*fn;		/* COUNT AVG MAX SUM */
	const char	*fn_field;
};

#define GH	{ "hostname", NULL, NULL }
#define COL(c)	{ "esxwatch_collector", "CONTAINS", c }

static const struct li_row li_table[] = {
	/* ---- alerts on the collectors' own findings ---- */
	{ "esxwatch: All Paths Down or Permanent Device Loss",
	  "A device entered All Paths Down or Permanent Device Loss (vobd/vmkernel lines the rules matched).",
	  "See esxwatch_hint on the event; check the array, the fabric or iSCSI/NFS network and the HBA; for PDL detach the device or restore the LUN.",
	  { COL("logwatch"), { "esxwatch_rule", "CONTAINS", "apd_start,apd_timeout,pdl_sense,pdl_device_lost" } },
	  { "hostname", "esxwatch_device", NULL }, true, "GREATER_THAN", 0, 300000, 60000, NULL, NULL, NULL, NULL },
	{ "esxwatch: datastore inaccessible",
	  "A datastore or device changed to apd, pdl or inaccessible (datastore collector).",
	  "Look at esxwatch_paths_dead and the device's paths (esxcli storage core path list -d DEV); for NFS check the server and the vmkernel port.",
	  { COL("datastore"), { "esxwatch_kind", "CONTAINS", "change" }, { "esxwatch_state", "CONTAINS", "apd,pdl,inaccessible" } },
	  { "hostname", "esxwatch_datastore", NULL }, true, "GREATER_THAN", 0, 300000, 60000, NULL, NULL, NULL, NULL },
	{ "esxwatch: NIC error counters growing",
	  "A NIC error counter (CRC, frame, length, missed, FIFO, ...) increased since the previous sample.",
	  "esxwatch_counter names the counter: CRC/frame/length errors point at the cable, SFP or switch port; missed/FIFO at receive ring exhaustion.",
	  { COL("nic"), { "esxwatch_kind", "CONTAINS", "alert" }, { "esxwatch_counter", "EXISTS", NULL } },
	  { "hostname", "esxwatch_nic", NULL }, true, "GREATER_THAN", 0, 300000, 60000, NULL, NULL, NULL, NULL },
	{ "esxwatch: NIC link down",
	  "A physical NIC's link went down (nic collector state change).",
	  "Check the cable, SFP and the switch port; see whether the teaming failed over.",
	  { COL("nic"), { "esxwatch_kind", "CONTAINS", "change" }, { "esxwatch_link", "CONTAINS", "down" } },
	  { "hostname", "esxwatch_nic", NULL }, true, "GREATER_THAN", 0, 300000, 60000, NULL, NULL, NULL, NULL },
	{ "esxwatch: vSAN disk ineligible",
	  "vSAN no longer considers a disk eligible (esxwatch_reason says why, e.g. Has partitions).",
	  "See the diagnosis alert vsan_disk_partitions for the partition table; otherwise vdq -qH on the host.",
	  { COL("vsan"), { "esxwatch_kind", "CONTAINS", "change" }, { "esxwatch_vsan_state", "CONTAINS", "ineligible" } },
	  { "hostname", "esxwatch_device", NULL }, true, "GREATER_THAN", 0, 300000, 60000, NULL, NULL, NULL, NULL },
	{ "esxwatch: SMART health not ok",
	  "A drive's SMART health is warning, impending_failure or failed.",
	  "Plan the replacement; esxcli storage core device smart get -d DEV shows the attributes.",
	  { COL("smart"), { "esxwatch_health", "CONTAINS", "warning,impending_failure,failed" } },
	  { "hostname", "esxwatch_device", NULL }, true, "GREATER_THAN", 0, 3600000, 600000, NULL, NULL, NULL, NULL },
	{ "esxwatch: agent dropping events",
	  "The agent dropped events since it started (disk buffer full or a destination rejected them).",
	  "Look at esxwatch_dropped_budget (storage.max_disk_buffer too small for an outage) and esxwatch_dropped_poison (events a destination refused).",
	  { COL("agent"), { "esxwatch_dropped_events", "GREATER_THAN", "0" } },
	  GH, true, "GREATER_THAN", 0, 900000, 300000, NULL, NULL, NULL, NULL },
	{ "esxwatch: agent failing to deliver",
	  "One of the agent's destinations is failing (status events report it).",
	  "esxwatch --status on the host names the destination and its last error; check the network path and the server.",
	  { COL("agent"), { "esxwatch_destinations_failing", "GREATER_THAN", "0" } },
	  GH, true, "GREATER_THAN", 0, 900000, 300000, NULL, NULL, NULL, NULL },
	/* ---- dashboards ---- */
	{ "Errors per NIC over time", "NIC error counter increases, per NIC.", NULL,
	  { COL("nic"), { "esxwatch_kind", "CONTAINS", "alert" }, { "esxwatch_counter", "EXISTS", NULL } },
	  { "hostname", "esxwatch_nic", NULL }, false, NULL, 0, 0, 0,
	  "esxwatch - Network", "column", "COUNT", NULL },
	{ "CRC errors per NIC", "Sum of esxwatch_rx_crc_errors_delta per NIC.", NULL,
	  { COL("nic"), { "esxwatch_rx_crc_errors_delta", "EXISTS", NULL } },
	  { "hostname", "esxwatch_nic", NULL }, false, NULL, 0, 0, 0,
	  "esxwatch - Network", "line", "SUM", "esxwatch_rx_crc_errors_delta" },
	{ "Link changes per NIC", "Link up/down transitions per NIC.", NULL,
	  { COL("nic"), { "esxwatch_kind", "CONTAINS", "change" }, { "esxwatch_link", "EXISTS", NULL } },
	  { "hostname", "esxwatch_nic", "esxwatch_link" }, false, NULL, 0, 0, 0,
	  "esxwatch - Network", "column", "COUNT", NULL },
	{ "Datastore states", "Datastore samples by state.", NULL,
	  { COL("datastore"), { "esxwatch_state", "EXISTS", NULL }, { "esxwatch_datastore", "EXISTS", NULL } },
	  { "hostname", "esxwatch_datastore", "esxwatch_state" }, false, NULL, 0, 0, 0,
	  "esxwatch - Storage", "bar", "COUNT", NULL },
	{ "SMART health per drive", "SMART samples by drive and health.", NULL,
	  { COL("smart"), { "esxwatch_health", "EXISTS", NULL } },
	  { "hostname", "esxwatch_device", "esxwatch_health" }, false, NULL, 0, 0, 0,
	  "esxwatch - Drives", "bar", "COUNT", NULL },
	{ "Drive temperature", "Highest temperature per drive (C).", NULL,
	  { COL("smart"), { "esxwatch_temperature_c", "EXISTS", NULL } },
	  { "hostname", "esxwatch_device", NULL }, false, NULL, 0, 0, 0,
	  "esxwatch - Drives", "line", "MAX", "esxwatch_temperature_c" },
	{ "vSAN eligibility", "vSAN disk samples by state.", NULL,
	  { COL("vsan"), { "esxwatch_vsan_state", "EXISTS", NULL } },
	  { "hostname", "esxwatch_device", "esxwatch_vsan_state" }, false, NULL, 0, 0, 0,
	  "esxwatch - vSAN", "pie", "COUNT", NULL },
	{ "Events queued", "Events waiting for delivery per host.", NULL,
	  { COL("agent"), { "esxwatch_queued_events", "EXISTS", NULL } },
	  GH, false, NULL, 0, 0, 0, "esxwatch - Agent delivery", "line", "MAX", "esxwatch_queued_events" },
	{ "Events dropped", "Events the agent dropped since it started, per host.", NULL,
	  { COL("agent"), { "esxwatch_dropped_events", "EXISTS", NULL } },
	  GH, false, NULL, 0, 0, 0, "esxwatch - Agent delivery", "line", "MAX", "esxwatch_dropped_events" },
	{ "Destinations failing", "Destinations failing per host.", NULL,
	  { COL("agent"), { "esxwatch_destinations_failing", "EXISTS", NULL } },
	  GH, false, NULL, 0, 0, 0, "esxwatch - Agent delivery", "line", "MAX", "esxwatch_destinations_failing" },
	{ "Diagnosis alerts", "What the diagnosis stage concluded, per rule.", NULL,
	  { COL("diagnosis"), { "esxwatch_diagnosis", "EXISTS", NULL } },
	  { "hostname", "esxwatch_diagnosis", NULL }, false, NULL, 0, 0, 0,
	  "esxwatch - Agent delivery", "column", "COUNT", NULL },
};
#define NROWS	(sizeof(li_table) / sizeof(li_table[0]))

/* The agent configuration snippet (liagent.ini syntax, which esxwatch reads). */
static const char agent_config[] =
    "[server]\n"
    "hostname=LOGINSIGHT\n"
    "proto=cfapi\n"
    "port=9543\n"
    "ssl=yes\n"
    "\n"
    "[filelog|vmkernel]\n"
    "directory=/var/log\n"
    "include=vmkernel.log\n"
    "\n"
    "[filelog|vobd]\n"
    "directory=/var/log\n"
    "include=vobd.log\n"
    "\n"
    "[filelog|hostd]\n"
    "directory=/var/log\n"
    "include=hostd.log\n";

/* A diagnosis rule as an alert row (rows built from agent/diagnosis/diagrules.c). */
static void
diag_row(const struct diag_rule *r, struct li_row *row, char *val, size_t vlen)
{
	memset(row, 0, sizeof(*row));
	snprintf(val, vlen, "%s", r->name);
	row->name = r->title;
	row->info = r->meaning;
	row->todo = r->next_step;
	row->cons[0] = (struct li_cons){ "esxwatch_collector", "CONTAINS", "diagnosis" };
	row->cons[1] = (struct li_cons){ "esxwatch_diagnosis", "CONTAINS", val };
	row->group[0] = "hostname";
	row->alert = true;
	row->hit_op = "GREATER_THAN";
	row->period_ms = 300000;
	row->interval_ms = 60000;
}

static void
js(struct buf *b, const char *s)
{
	json_put_str(b, s ? s : "", s ? strlen(s) : 0);
}

static const char *
fn_label(const char *fn)
{
	return strcmp(fn, "AVG") == 0 ? "Average" : strcmp(fn, "MAX") == 0 ? "Max" :
	    strcmp(fn, "SUM") == 0 ? "Sum" : "Count";
}

static void
fn_json(struct buf *b, const char *fn)
{
	bool field = strcmp(fn, "COUNT") != 0;

	buf_printf(b, "{\"label\":\"%s\",\"value\":\"%s\",\"requiresField\":%s,"
	    "\"numericOnly\":%s}", fn_label(fn), fn, field ? "true" : "false",
	    field ? "true" : "false");
}

static void
cons_json(struct buf *b, const struct li_row *r)
{
	buf_puts(b, "\"fieldConstraints\":[");
	for (size_t i = 0; i < NCONS && r->cons[i].field; i++) {
		buf_printf(b, "%s{\"internalName\":", i ? "," : "");
		js(b, r->cons[i].field);
		buf_printf(b, ",\"operator\":\"%s\"", r->cons[i].op);
		if (r->cons[i].value) {
			buf_puts(b, ",\"value\":");
			js(b, r->cons[i].value);
		}
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"supplementalConstraints\":[],\"groupByFields\":[");
	for (size_t i = 0; i < NGROUP && r->group[i]; i++) {
		buf_printf(b, "%s{\"displayName\":", i ? "," : "");
		js(b, r->group[i]);
		buf_puts(b, ",\"internalName\":");
		js(b, r->group[i]);
		buf_puts(b, ",\"displayNamespace\":null,\"numericGroupByType\":\"EACH_VALUE\","
		    "\"numericGroupByValue\":null}");
	}
	buf_puts(b, "]");
}

/* The query object Log Insight keeps as a JSON string (chartQuery). */
static void
query_json(struct buf *b, const struct li_row *r, bool by_time)
{
	const char *fn = r->fn ? r->fn : "COUNT";

	buf_puts(b, "{\"query\":\"\",\"startTimeMillis\":0,\"endTimeMillis\":0,"
	    "\"piqlFunctionGroups\":[{\"functions\":[");
	fn_json(b, fn);
	buf_puts(b, "],\"field\":");
	if (r->fn_field) {
		buf_puts(b, "{\"internalName\":");
		js(b, r->fn_field);
		buf_puts(b, ",\"displayName\":");
		js(b, r->fn_field);
		buf_puts(b, ",\"displayNamespace\":null}");
	} else
		buf_puts(b, "null");
	buf_printf(b, "}],\"dateFilterPreset\":\"%s\",\"shouldGroupByTime\":%s,"
	    "\"includeAllContentPackFields\":true,\"eventSortOrder\":\"DESC\","
	    "\"summarySortOrder\":\"DESC\",\"compareQueryOrderBy\":\"TREND\","
	    "\"compareQuerySortOrder\":\"DESC\",\"compareQueryOptions\":null,"
	    "\"messageViewType\":\"EVENTS\",\"constraintToggle\":\"ALL\","
	    "\"piqlFunction\":", by_time ? "LAST_24_HOURS" : "LAST_5_MINUTES",
	    by_time ? "true" : "false");
	fn_json(b, fn);
	buf_puts(b, ",\"piqlFunctionField\":");
	if (r->fn_field)
		js(b, r->fn_field);
	else
		buf_puts(b, "null");
	buf_putc(b, ',');
	cons_json(b, r);
	buf_puts(b, ",\"contentPacksToIncludeFields\":[],\"extractedFields\":[]}");
}

/* Embed a query as the JSON string value a pack carries. */
static void
query_str(struct buf *b, const struct li_row *r, bool by_time)
{
	struct buf q = BUF_INIT;

	query_json(&q, r, by_time);
	json_put_str(b, q.data ? q.data : "", q.len);
	buf_free(&q);
}

static void
info_html(struct buf *b, const struct li_row *r)
{
	struct buf t = BUF_INIT;

	buf_printf(&t, "<span>%s</span>", r->info);
	if (r->todo)
		buf_printf(&t, "<br><br><b>Next:</b> <span>%s</span>", r->todo);
	json_put_str(b, t.data, t.len);
	buf_free(&t);
}

static void
alert_json(struct buf *b, const struct li_row *r, bool api)
{
	buf_puts(b, "{\"name\":");
	js(b, r->name);
	buf_puts(b, ",\"info\":");
	info_html(b, r);
	buf_puts(b, ",\"recommendation\":");
	js(b, r->todo);
	buf_printf(b, ",\"alertType\":\"%s\",\"chartQuery\":",
	    r->group[0] ? "RATE_BASED_WITH_GROUPS" : "RATE_BASED");
	query_str(b, r, false);
	buf_printf(b, ",\"messageQuery\":\"\",\"hitCount\":%d.0,\"hitOperator\":\"%s\","
	    "\"searchPeriod\":%ld,\"searchInterval\":%ld", r->hits, r->hit_op,
	    r->period_ms, r->interval_ms);
	if (api)
		buf_puts(b, ",\"enabled\":true,\"emailEnabled\":false,\"emails\":\"\","
		    "\"webhookEnabled\":false,\"webhookURLs\":\"\",\"vcopsEnabled\":false,"
		    "\"autoClearAlertAfterTimeout\":false");
	buf_putc(b, '}');
}

/* Every alert: the diagnosis rules first, then the table's. */
static void
alerts_json(struct buf *b, bool api)
{
	struct li_row row;
	char val[64];
	bool first = true;

	buf_putc(b, '[');
	for (size_t i = 0; i < diag_nrules; i++) {
		diag_row(&diag_rules[i], &row, val, sizeof(val));
		if (!first)
			buf_putc(b, ',');
		alert_json(b, &row, api);
		first = false;
	}
	for (size_t i = 0; i < NROWS; i++) {
		if (!li_table[i].alert)
			continue;
		buf_putc(b, ',');
		alert_json(b, &li_table[i], api);
	}
	buf_putc(b, ']');
}

static void
widget_json(struct buf *b, const struct li_row *r)
{
	buf_puts(b, "{\"name\":");
	js(b, r->name);
	buf_puts(b, ",\"info\":");
	js(b, r->info);
	buf_puts(b, ",\"chartType\":");
	js(b, r->chart);
	buf_puts(b, ",\"chartOptions\":\"{\\\"logaxis\\\":false,\\\"legend\\\":true,"
	    "\\\"stacking\\\":\\\"normal\\\",\\\"spline\\\":false}\",\"widgetType\":\"chart\","
	    "\"gridWidth\":\"1/2\",\"chartQuery\":");
	query_str(b, r, true);
	buf_puts(b, ",\"messageQuery\":\"\"}");
}

/* One view per distinct view name, in table order; two widgets a row. */
static void
views_json(struct buf *b)
{
	bool first_view = true;

	for (size_t i = 0; i < NROWS; i++) {
		const char *v = li_table[i].view;
		size_t k, nw = 0;
		bool seen = false;

		if (v == NULL)
			continue;
		for (k = 0; k < i; k++)
			if (li_table[k].view && strcmp(li_table[k].view, v) == 0)
				seen = true;
		if (seen)
			continue;
		buf_printf(b, "%s{\"name\":", first_view ? "" : ",");
		js(b, v);
		buf_puts(b, ",\"constraints\":[{\"internalName\":\"hostname\",\"operator\":"
		    "\"CONTAINS\"}],\"rows\":[{\"widgets\":[");
		for (k = i; k < NROWS; k++) {
			if (li_table[k].view == NULL || strcmp(li_table[k].view, v) != 0)
				continue;
			if (nw > 0)
				buf_puts(b, nw % 2 == 0 ? "]},{\"widgets\":[" : ",");
			widget_json(b, &li_table[k]);
			nw++;
		}
		buf_puts(b, "]}]}");
		first_view = false;
	}
}

static void
content_pack_json(struct buf *b)
{
	buf_printf(b, "{\"name\":\"esxwatch - ESXi host health\",\"namespace\":"
	    "\"io.esxwatch\",\"contentPackId\":\"io.esxwatch\",\"framework\":\"#9c4\","
	    "\"version\":\"2.4\",\"contentVersion\":\"%s\",\"author\":\"esxwatch\","
	    "\"url\":\"\",\"info\":", ESXWATCH_VERSION);
	js(b, "<span>Alerts and dashboards for the events of esxwatch, the ESXi host "
	    "agent: NIC error counters and links, datastore states, SMART health and "
	    "temperature, vSAN eligibility, the agent's own delivery health, and the "
	    "causes its diagnosis stage found.</span>");
	buf_puts(b, ",\"instructions\":");
	js(b, "<span>Install esxwatch on the ESXi hosts and point server.hostname at "
	    "this cluster (proto cfapi). Every query uses esxwatch's static fields; no "
	    "extracted field is needed. Configure the alerts' email or webhook "
	    "after import.</span>");
	buf_puts(b, ",\"icon\":\"\",\"extractedFields\":[],\"queries\":[],\"alerts\":");
	alerts_json(b, false);
	buf_puts(b, ",\"dashboardSections\":[{\"header\":\"\",\"views\":[");
	views_json(b);
	buf_puts(b, "]}],\"agentClasses\":[{\"name\":\"esxwatch\",\"info\":");
	js(b, "The esxwatch configuration in liagent.ini syntax (esxwatch reads it as "
	    "is: save it as agent.yaml's replacement, e.g. /scratch/esxwatch/agent.ini, "
	    "and start esxwatch -c with it). Replace LOGINSIGHT with this cluster's "
	    "address.");
	buf_puts(b, ",\"agentConfig\":");
	js(b, agent_config);
	buf_puts(b, "}],\"aliasFields\":[],\"aliasRules\":[]}");
}

int
liexport_build(const char *what, struct buf *out)
{
	if (strcmp(what, "alerts") == 0)
		alerts_json(out, true);
	else if (strcmp(what, "content-pack") == 0)
		content_pack_json(out);
	else
		return -1;
	return buf_putc(out, '\n');
}

int
liexport_main(const char *what, const char *path)
{
	struct buf b = BUF_INIT;
	int fd = STDOUT_FILENO, rc = 0;
	size_t off = 0;

	if (liexport_build(what, &b) == -1) {
		fprintf(stderr, "esxwatch: --export-loginsight takes alerts or content-pack, "
		    "not '%s'\n", what);
		buf_free(&b);
		return 2;
	}
	if (path != NULL && strcmp(path, "-") != 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd == -1) {
			log_error("cannot write %s: %s", path, log_errstr(errno));
			buf_free(&b);
			return 1;
		}
	}
	while (off < b.len) {
		ssize_t n = write(fd, b.data + off, b.len - off);

		if (n <= 0 && errno != EINTR) {
			log_error("cannot write the export: %s", log_errstr(errno));
			rc = 1;
			break;
		}
		if (n > 0)
			off += (size_t)n;
	}
	if (fd != STDOUT_FILENO && close(fd) == -1)
		rc = 1;
	buf_free(&b);
	return rc;
}
