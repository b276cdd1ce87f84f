/*
 * report_html_out: the sections of the HTML report, in the order a reader
 * wants them: the host and a summary, the timeline, the diagnoses, the
 * findings by severity then time, the logs read and the gaps.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../lib/json.h"
#include "../lib/utf8.h"
#include "report_html_int.h"

#ifndef ESXWATCH_VERSION
#define ESXWATCH_VERSION "dev"
#endif

/* Nothing may be fetched: no script, font, image, frame or form target. */
#define RH_CSP	"default-src 'none'; style-src 'unsafe-inline'; " \
		"img-src data:; base-uri 'none'; form-action 'none'"

static const char rh_css[] =
	":root{--crit:#8b0000;--err:#d32f2f;--warn:#c77700;--info:#1e63b5;"
	"--oth:#666;--diag:#6a1b9a;--line:#d0d4d9}\n"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	"color:#1b1f24;margin:0 auto;max-width:1200px;padding:16px 24px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;"
	"border-bottom:1px solid var(--line);padding-bottom:4px}\n"
	".sub{color:#555}table{border-collapse:collapse}\n"
	"td,th{text-align:left;vertical-align:top;padding:2px 10px 2px 0}\n"
	"th{font-weight:600;color:#444}\n"
	".sum{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}\n"
	".sum a,.sum span{display:inline-block;padding:4px 10px;border-radius:4px;"
	"background:#f0f2f5;color:inherit;text-decoration:none}\n"
	".b{display:inline-block;min-width:60px;text-align:center;color:#fff;"
	"border-radius:3px;padding:0 6px;font-size:12px;font-weight:600}\n"
	".s-critical{--c:var(--crit)}.s-error{--c:var(--err)}.s-warning{--c:var(--warn)}"
	".s-info{--c:var(--info)}.s-other{--c:var(--oth)}.s-diagnosis{--c:var(--diag)}\n"
	".b,.m{background:var(--c);fill:var(--c)}\n"
	".f{border-left:4px solid var(--c);padding:6px 10px;margin:8px 0;"
	"background:#fafbfc;break-inside:avoid}\n"
	".f header{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}\n"
	".f pre{white-space:pre-wrap;word-break:break-all;margin:6px 0;"
	"font:12.5px/1.4 ui-monospace,Menlo,Consolas,monospace;background:#fff;"
	"border:1px solid var(--line);padding:4px 6px}\n"
	"table.kv{font-size:13px}table.kv th{font-weight:500;color:#555}\n"
	"div.kv{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12.5px}\n"
	"div.kv span{word-break:break-all}.kv i,.note i{font-style:normal;color:#666;"
	"margin-right:3px}\n"
	".note{margin:3px 0;font-size:13px;white-space:pre-wrap}\n"
	".tl{width:100%;height:auto;border:1px solid var(--line);background:#fff}\n"
	".tl text{font:11px sans-serif;fill:#333}.tl .ax{stroke:#999}"
	".tl .g{stroke:#e4e7eb}\n"
	".logs td,.logs th{border-bottom:1px solid #eee;padding:3px 12px 3px 0}"
	".num{text-align:right}\n"
	"footer{margin-top:32px;color:#777;font-size:12px}\n"
	"@media print{body{max-width:none;padding:0}a{color:inherit;"
	"text-decoration:none}.f{background:none}h2{break-after:avoid}}\n";

/* ---- the head and the host ------------------------------------------------ */

static void
write_head(struct rh *r)
{
	int	 hn = json_get(&r->hostdoc, 0, "hostname");

	rh_put(r, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"" RH_CSP "\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<meta name=\"generator\" content=\"esxwatch " ESXWATCH_VERSION "\">\n"
	    "<title>esxwatch analysis: ");
	if (hn >= 0)
		rh_esc_node(r, &r->hostdoc, hn, 200);
	else
		rh_put(r, "unknown host");
	rh_put(r, "</title>\n<style>\n");
	rh_put(r, rh_css);
	rh_put(r, "</style>\n</head>\n<body>\n");
}

/* host.NAME's value, or "unknown" (never guessed). */
static void
write_host_field(struct rh *r, const char *name)
{
	int	 node = json_get(&r->hostdoc, 0, name);

	if (node >= 0)
		rh_esc_node(r, &r->hostdoc, node, 0);
	else
		rh_put(r, "<i>unknown</i>");
}

static void
write_host(struct rh *r)
{
	const struct json_doc *d = &r->hostdoc;
	int	 c;

	rh_put(r, "<header>\n<h1 id=\"host\">");
	write_host_field(r, "hostname");
	rh_put(r, "</h1>\n<div class=\"sub\">ESXi ");
	write_host_field(r, "version");
	rh_put(r, ", build ");
	write_host_field(r, "build");
	rh_put(r, " &middot; vm-support bundle analysed by esxwatch</div>\n"
	    "<table class=\"kv host\">\n");
	if (r->bundle.p != NULL) {
		struct json_node one;
		struct json_doc bd = { &one, 1 };

		rh_str_node(&one, r->bundle.p, r->bundle.len);
		rh_put(r, "<tr><th>bundle</th><td>");
		rh_esc_node(r, &bd, 0, 4096);
		rh_put(r, "</td></tr>\n");
	}
	for (c = d->n[0].child; c >= 0; c = d->n[c].next) {
		if (d->n[c].keylen == 8 && memcmp(d->n[c].key, "hostname", 8) == 0)
			continue;
		rh_put(r, "<tr><th>");
		rh_esc(r, d->n[c].key, d->n[c].keylen);
		rh_put(r, "</th><td>");
		rh_esc_node(r, d, c, 4096);
		rh_put(r, "</td></tr>\n");
	}
	rh_put(r, "</table>\n</header>\n");
}

static void
write_summary(struct rh *r)
{
	char	 a[40], b[40];
	int	 i;

	rh_put(r, "<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"sum\">\n");
	rh_printf(r, "<a href=\"#diagnoses\" class=\"s-diagnosis\">"
	    "<span class=\"b\">diagnoses</span> %lld</a>\n", r->ndiag);
	for (i = 0; i < RH_SEV_N; i++) {
		if (i == RH_SEV_OTHER && r->nsev[i] == 0)
			continue;
		rh_printf(r, "<a href=\"#sev-%s\" class=\"s-%s\"><span class=\"b\">%s"
		    "</span> %lld</a>\n", rh_sev_name[i], rh_sev_name[i],
		    rh_sev_name[i], r->nsev[i]);
	}
	rh_printf(r, "<a href=\"#samples\">measurements: %lld</a>\n", r->nsamples);
	rh_printf(r, "<a href=\"#logs\">logs read: %lld</a>\n"
	    "<a href=\"#gaps\">gaps: %lld</a>\n</div>\n", r->nlogs, r->ngaps);
	if (r->have_span) {
		rh_time(a, sizeof(a), r->t0, "%Y-%m-%d %H:%M:%S", false);
		rh_time(b, sizeof(b), r->t1, "%Y-%m-%d %H:%M:%S", false);
		rh_printf(r, "<p>Time span of the logs and findings: "
		    "<time>%s</time> to <time>%s</time> UTC.</p>\n", a, b);
	} else
		rh_put(r, "<p>No time span: no log line and no finding has a time.</p>\n");
	rh_put(r, "</section>\n");
}

/* ---- one finding ----------------------------------------------------------- */

/* Fields not repeated in a finding's list (they are in its header). */
static const char *const rh_hidden[] = { "text", "timestamp",
    "esxwatch_severity", "esxwatch_version", "esxwatch_event_time", NULL };
/* First in the list, in this order: what the finding is about. */
static const char *const rh_first[] = { "esxwatch_device", "esxwatch_datastore",
    "esxwatch_nic", "esxwatch_file", "esxwatch_vob_id", "esxwatch_counter",
    "esxwatch_value", NULL };
/* Sentences, each on a line of its own after the list. */
static const char *const rh_notes[] = { "esxwatch_evidence", "esxwatch_hint", NULL };

static bool
key_in(const struct json_node *n, const char *const *set)
{
	for (; *set != NULL; set++)
		if (n->keylen == strlen(*set) && memcmp(n->key, *set, n->keylen) == 0)
			return true;
	return false;
}

/* One field: its name without the esxwatch_ prefix, its value. */
static void
write_field(struct rh *r, const struct json_doc *d, int c, bool note)
{
	const char *k = d->n[c].key;
	size_t	 kn = d->n[c].keylen;

	if (kn > 9 && memcmp(k, "esxwatch_", 9) == 0) {
		k += 9;
		kn -= 9;
	}
	rh_put(r, note ? "<p class=\"note\"><i>" : "<span><i>");
	rh_esc(r, k, kn);
	rh_put(r, "</i> ");
	rh_esc_node(r, d, c, 65536);
	rh_put(r, note ? "</p>\n" : "</span>\n");
}

/* Every field of a finding: what it is about first, then the rest, then
 * the sentences (hint, evidence). */
static void
write_fields(struct rh *r, const struct json_doc *d)
{
	const struct json_node *n = d->n;
	int	 c, i;

	rh_put(r, "<div class=\"kv\">\n");
	for (i = 0; rh_first[i] != NULL; i++) {
		c = json_get(d, 0, rh_first[i]);
		if (c >= 0)
			write_field(r, d, c, false);
	}
	for (c = n[0].child; c >= 0; c = n[c].next)
		if (!key_in(&n[c], rh_hidden) && !key_in(&n[c], rh_first) &&
		    !key_in(&n[c], rh_notes))
			write_field(r, d, c, false);
	rh_put(r, "</div>\n");
	for (c = n[0].child; c >= 0; c = n[c].next)
		if (key_in(&n[c], rh_notes))
			write_field(r, d, c, true);
}

/* id: 'f' (an event, its index in events) or 'd' (a diagnosis). */
static void
write_finding(struct rh *r, const struct json_doc *d, char id, long long idx)
{
	const char *sev = rh_sev_name[rh_sev_of(d)];
	int	 rule = json_get(d, 0, id == 'd' ? "esxwatch_diagnosis" : "esxwatch_rule");
	int64_t	 ts;
	char	 t[48];

	rh_printf(r, "<article class=\"f s-%s\" id=\"%c%lld\">\n<header>"
	    "<span class=\"b\">%s</span> ", id == 'd' ? "diagnosis" : sev, id,
	    idx, sev);
	if (rh_ts(d, &ts)) {
		rh_time(t, sizeof(t), ts, "%Y-%m-%d %H:%M:%S", true);
		rh_printf(r, "<time>%s UTC</time> ", t);
	} else
		rh_put(r, "<time>no time</time> ");
	if (rule < 0)
		rule = json_get(d, 0, "esxwatch_collector");
	if (rule >= 0) {
		rh_put(r, "<b class=\"rule\">");
		rh_esc_node(r, d, rule, 200);
		rh_put(r, "</b>");
	}
	rh_put(r, "</header>\n<pre class=\"text\">");
	rh_esc_node(r, d, json_get(d, 0, "text"), 0);
	rh_put(r, "</pre>\n");
	write_fields(r, d);
	rh_put(r, "</article>\n");
}

static int
out_diag(struct rh *r, const struct json_doc *d, long long idx)
{
	write_finding(r, d, 'd', idx);
	return 0;
}

static int
out_event(struct rh *r, const struct json_doc *d, long long idx)
{
	if (rh_sev_of(d) != r->cur_sev)
		return 0;
	if ((r->diagnoses.p != NULL && rh_is_diag_event(d)) || rh_is_sample(d))
		return 0;
	write_finding(r, d, 'f', idx);
	return 0;
}

static int
write_findings(struct rh *r)
{
	rh_printf(r, "<section id=\"diagnoses\">\n<h2>Diagnoses (%lld)</h2>\n", r->ndiag);
	if (r->ndiag == 0)
		rh_put(r, "<p>No diagnosis: no cause found across the signals.</p>\n");
	if (rh_each(r, &r->diagnoses, JSON_OBJ, out_diag) == -1)
		return -1;
	rh_put(r, "</section>\n");
	for (r->cur_sev = 0; r->cur_sev < RH_SEV_N; r->cur_sev++) {
		const char *s = rh_sev_name[r->cur_sev];

		if (r->cur_sev == RH_SEV_OTHER && r->nsev[r->cur_sev] == 0)
			continue;
		rh_printf(r, "<section id=\"sev-%s\">\n<h2>%c%s (%lld)</h2>\n", s,
		    s[0] - 'a' + 'A', s + 1, r->nsev[r->cur_sev]);
		if (r->nsev[r->cur_sev] == 0)
			rh_printf(r, "<p>No %s finding.</p>\n", s);
		if (rh_each(r, &r->events, JSON_OBJ, out_event) == -1)
			return -1;
		rh_put(r, "</section>\n");
	}
	return 0;
}

/* One row per measurement: what the collectors saw in the bundle's command
 * outputs (NICs, devices, datastores), for the findings' context. */
static int
out_sample(struct rh *r, const struct json_doc *d, long long idx)
{
	static const char *const ent[] = { "esxwatch_nic", "esxwatch_device",
	    "esxwatch_datastore" };
	int64_t	 ts;
	char	 t[48];
	size_t	 i;
	int	 node = -1;

	if (!rh_is_sample(d))
		return 0;
	for (i = 0; i < sizeof(ent) / sizeof(ent[0]) && node < 0; i++)
		node = json_get(d, 0, ent[i]);
	if (rh_ts(d, &ts))
		rh_time(t, sizeof(t), ts, "%Y-%m-%d %H:%M:%S", false);
	else
		snprintf(t, sizeof(t), "no time");
	rh_printf(r, "<tr id=\"s%lld\"><td>%s</td><td>", idx, t);
	rh_esc_node(r, d, json_get(d, 0, "esxwatch_collector"), 64);
	rh_put(r, "</td><td>");
	rh_esc_node(r, d, node, 256);
	rh_put(r, "</td><td>");
	rh_esc_node(r, d, json_get(d, 0, "text"), 4096);
	rh_put(r, "</td></tr>\n");
	return 0;
}

static int
write_samples(struct rh *r)
{
	rh_printf(r, "<section id=\"samples\">\n<h2>Measurements (%lld)</h2>\n",
	    r->nsamples);
	if (r->nsamples == 0) {
		rh_put(r, "<p>None in the report.</p>\n</section>\n");
		return 0;
	}
	rh_put(r, "<table class=\"logs\">\n<tr><th>time (UTC)</th><th>collector</th>"
	    "<th>of</th><th>text</th></tr>\n");
	if (rh_each(r, &r->events, JSON_OBJ, out_sample) == -1)
		return -1;
	rh_put(r, "</table>\n</section>\n");
	return 0;
}

/* ---- logs, gaps ----------------------------------------------------------- */

static int
out_log(struct rh *r, const struct json_doc *d, long long idx)
{
	static const char *const cols[] = { "file", "lines", "matched", "first", "last" };
	size_t	 i;

	(void)idx;
	rh_put(r, "<tr>");
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		rh_put(r, i == 1 || i == 2 ? "<td class=\"num\">" : "<td>");
		rh_esc_node(r, d, json_get(d, 0, cols[i]), 4096);
		rh_put(r, "</td>");
	}
	rh_put(r, "</tr>\n");
	return 0;
}

static int
out_gap(struct rh *r, const struct json_doc *d, long long idx)
{
	(void)idx;
	rh_put(r, "<li>");
	rh_esc_node(r, d, 0, 65536);
	rh_put(r, "</li>\n");
	return 0;
}

static int
write_logs_gaps(struct rh *r)
{
	rh_printf(r, "<section id=\"logs\">\n<h2>Logs read (%lld)</h2>\n", r->nlogs);
	rh_put(r, "<table class=\"logs\">\n<tr><th>file</th><th class=\"num\">lines"
	    "</th><th class=\"num\">matched</th><th>first</th><th>last</th></tr>\n");
	if (rh_each(r, &r->logs, JSON_OBJ, out_log) == -1)
		return -1;
	rh_printf(r, "</table>\n</section>\n<section id=\"gaps\">\n"
	    "<h2>Gaps (%lld)</h2>\n", r->ngaps);
	if (r->ngaps == 0)
		rh_put(r, "<p>None: every part of the bundle was read.</p>\n");
	rh_put(r, "<ul>\n");
	if (rh_each(r, &r->gaps, JSON_STR, out_gap) == -1)
		return -1;
	rh_put(r, "</ul>\n</section>\n");
	return 0;
}

int
rh_write_all(struct rh *r)
{
	write_head(r);
	write_host(r);
	write_summary(r);
	if (rh_write_timeline(r) == -1 || write_findings(r) == -1 ||
	    write_samples(r) == -1 || write_logs_gaps(r) == -1)
		return -1;
	rh_printf(r, "<footer>%lld events in the report. Written by esxwatch "
	    ESXWATCH_VERSION "; times in UTC.</footer>\n</body>\n</html>\n",
	    r->nevents);
	return 0;
}
