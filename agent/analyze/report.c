/*
 * analyze's reports: JSON (CONTRACT §5) and text (docs/analyze.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../event.h"
#include "../lib/json.h"
#include "analyze_int.h"

static const char *const sevs[] = { "critical", "error", "warning", "info", NULL };

static void
iso(int64_t ms, char *out, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	size_t n;

	out[0] = '\0';
	if (ms <= 0 || gmtime_r(&s, &tm) == NULL)
		return;
	n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, len - n, ".%03dZ", (int)(ms % 1000));
}

static bool
field_is(const struct event *ev, const char *name, const char *value)
{
	const char *v = event_get(ev, name);

	return v != NULL && strcmp(v, value) == 0;
}

bool
an_is_finding(const struct event *ev)
{
	return field_is(ev, "esxwatch_kind", "alert") ||
	    field_is(ev, "esxwatch_kind", "change");
}

bool
an_is_serious(const struct event *ev)
{
	return an_is_finding(ev) && (field_is(ev, "esxwatch_severity", "error") ||
	    field_is(ev, "esxwatch_severity", "critical"));
}

static int
kv_str(struct buf *b, const char *key, const char *v, bool comma)
{
	if (comma && buf_putc(b, ',') == -1)
		return -1;
	if (json_put_str(b, key, strlen(key)) == -1 || buf_putc(b, ':') == -1)
		return -1;
	return json_put_str(b, v ? v : "", v ? strlen(v) : 0);
}

static int
json_host(const struct an *a, struct buf *b)
{
	char t[40];

	iso(a->time_ms, t, sizeof(t));
	if (buf_puts(b, "\"host\":{") == -1 ||
	    kv_str(b, "hostname", a->hostname, false) == -1 ||
	    kv_str(b, "version", a->version, true) == -1 ||
	    kv_str(b, "build", a->build, true) == -1 ||
	    kv_str(b, "product", a->product, true) == -1 ||
	    kv_str(b, "time", t, true) == -1 ||
	    kv_str(b, "top_folder", a->b.top, true) == -1)
		return -1;
	if (a->uptime_s >= 0 && buf_printf(b, ",\"uptime_s\":%lld", a->uptime_s) == -1)
		return -1;
	return buf_puts(b, "}");
}

static int
json_events(const struct an *a, struct buf *b, bool diag_only)
{
	bool first = true;

	for (size_t i = 0; i < a->nev; i++) {
		if (diag_only && !field_is(a->ev[i], "esxwatch_collector", "diagnosis"))
			continue;
		if ((!first && buf_putc(b, ',') == -1) || event_to_json(a->ev[i], b) == -1)
			return -1;
		first = false;
	}
	return 0;
}

static int
json_logs(const struct an *a, struct buf *b)
{
	for (size_t i = 0; i < a->nlogv; i++) {
		const struct an_log *l = &a->logv[i];
		char f[40], t[40];

		iso(l->first, f, sizeof(f));
		iso(l->last, t, sizeof(t));
		if ((i && buf_putc(b, ',') == -1) || buf_putc(b, '{') == -1 ||
		    kv_str(b, "file", l->file, false) == -1 ||
		    buf_printf(b, ",\"lines\":%llu,\"matched\":%llu",
		    (unsigned long long)l->lines, (unsigned long long)l->matched) == -1 ||
		    kv_str(b, "first", f, true) == -1 || kv_str(b, "last", t, true) == -1 ||
		    buf_putc(b, '}') == -1)
			return -1;
	}
	return 0;
}

static size_t
count_sev(const struct an *a, const char *sev)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nev; i++)
		if (an_is_finding(a->ev[i]) && field_is(a->ev[i], "esxwatch_severity", sev))
			n++;
	return n;
}

static size_t
count_diag(const struct an *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nev; i++)
		if (field_is(a->ev[i], "esxwatch_collector", "diagnosis"))
			n++;
	return n;
}

int
an_report_json(const struct an *a, struct buf *b)
{
	if (buf_putc(b, '{') == -1 || kv_str(b, "bundle", a->path, false) == -1 ||
	    buf_putc(b, ',') == -1 || json_host(a, b) == -1 ||
	    buf_puts(b, ",\"events\":[") == -1 || json_events(a, b, false) == -1 ||
	    buf_puts(b, "],\"diagnoses\":[") == -1 || json_events(a, b, true) == -1 ||
	    buf_puts(b, "],\"logs\":[") == -1 || json_logs(a, b) == -1 ||
	    buf_puts(b, "],\"gaps\":[") == -1)
		return -1;
	for (size_t i = 0; i < a->ngaps; i++)
		if ((i && buf_putc(b, ',') == -1) ||
		    json_put_str(b, a->gaps[i], strlen(a->gaps[i])) == -1)
			return -1;
	if (buf_puts(b, "],\"summary\":{") == -1)
		return -1;
	for (int s = 0; sevs[s] != NULL; s++)
		if (buf_printf(b, "%s\"%s\":%zu", s ? "," : "", sevs[s], count_sev(a, sevs[s])) == -1)
			return -1;
	return buf_printf(b, ",\"events_total\":%zu,\"log_lines\":%llu}}\n", a->nev,
	    (unsigned long long)a->lines_total);
}

/* ---- text ----------------------------------------------------------- */

static int
text_host(const struct an *a, struct buf *b)
{
	char t[40], f[40] = "", l[40] = "";
	int64_t first = 0, last = 0;

	iso(a->time_ms, t, sizeof(t));
	for (size_t i = 0; i < a->nlogv; i++) {
		if (a->logv[i].first && (first == 0 || a->logv[i].first < first))
			first = a->logv[i].first;
		if (a->logv[i].last > last)
			last = a->logv[i].last;
	}
	iso(first, f, sizeof(f));
	iso(last, l, sizeof(l));
	if (buf_printf(b, "esxwatch --analyze %s\n\nhost     %s\nversion  %s%s%s%s%s%s\n",
	    a->path, a->hostname, a->version[0] ? "ESXi " : "unknown",
	    a->version, a->build[0] ? " build " : "", a->build,
	    a->product[0] ? " — " : "", a->product) == -1)
		return -1;
	if (a->uptime_s >= 0 && buf_printf(b, "uptime   %lld d %lld h\n",
	    a->uptime_s / 86400, a->uptime_s % 86400 / 3600) == -1)
		return -1;
	return buf_printf(b, "bundle   %s (top folder %s)\nlogs     %zu files, %llu "
	    "lines, %s .. %s\n", t, a->b.top[0] ? a->b.top : "none", a->nlogv,
	    (unsigned long long)a->lines_total, f[0] ? f : "?", l[0] ? l : "?");
}

static int
text_finding(const struct event *ev, struct buf *b)
{
	static const char *const ents[] = { "esxwatch_nic", "esxwatch_device",
	    "esxwatch_datastore", NULL };
	const char *rule = event_get(ev, "esxwatch_diagnosis");
	const char *coll = event_get(ev, "esxwatch_collector");
	const char *evid = event_get(ev, "esxwatch_evidence");
	char t[40];

	if (rule == NULL)
		rule = event_get(ev, "esxwatch_rule");
	iso(ev->timestamp_ms, t, sizeof(t));
	if (buf_printf(b, "  %s  %s%s%s", t[0] ? t : "(no time)", coll ? coll : "?",
	    rule ? " " : "", rule ? rule : "") == -1)
		return -1;
	for (int i = 0; ents[i] != NULL; i++) {
		const char *v = event_get(ev, ents[i]);

		if (v != NULL && v[0] && buf_printf(b, "  %s", v) == -1)
			return -1;
	}
	if (buf_printf(b, "\n      %s\n", ev->text) == -1)
		return -1;
	if (evid != NULL && buf_printf(b, "      evidence: %s\n", evid) == -1)
		return -1;
	return 0;
}

int
an_report_text(const struct an *a, struct buf *b)
{
	size_t total = 0;

	if (text_host(a, b) == -1)
		return -1;
	for (int s = 0; sevs[s] != NULL; s++) {
		size_t n = count_sev(a, sevs[s]);

		total += n;
		if (n == 0)
			continue;
		if (buf_printf(b, "\n%s (%zu)\n", sevs[s], n) == -1)
			return -1;
		for (size_t i = 0; i < a->nev; i++)
			if (an_is_finding(a->ev[i]) &&
			    field_is(a->ev[i], "esxwatch_severity", sevs[s]) &&
			    text_finding(a->ev[i], b) == -1)
				return -1;
	}
	if (total == 0 && buf_puts(b, "\nno finding\n") == -1)
		return -1;
	if (a->ngaps > 0 && buf_printf(b, "\nnot used (%zu)\n", a->ngaps) == -1)
		return -1;
	for (size_t i = 0; i < a->ngaps; i++)
		if (buf_printf(b, "  - %s\n", a->gaps[i]) == -1)
			return -1;
	return buf_printf(b, "\n%zu critical, %zu error, %zu warning, %zu info "
	    "finding(s), %zu of them diagnoses\n", count_sev(a, "critical"),
	    count_sev(a, "error"), count_sev(a, "warning"), count_sev(a, "info"),
	    count_diag(a));
}
