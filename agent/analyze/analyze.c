/*
 * analyze: the --analyze run (analyze.h).
 */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "../../collectors/host/bundle.h"
#include "../../collectors/host/host.h"
#include "../../collectors/host/nicinfo.h"
#include "../../collectors/logwatch/logline.h"
#include "../config/config.h"
#include "../diagnosis/diagnose.h"
#include "../event.h"
#include "../lib/log.h"
#include "analyze.h"
#include "analyze_int.h"
#include "report_html.h"

void
an_gap(struct an *a, const char *line)
{
	char *d;

	if (a->ngaps >= AN_MAX_GAPS) {
		a->gaps_dropped++;
		return;
	}
	if (a->ngaps == a->capgaps) {
		size_t nc = a->capgaps ? a->capgaps * 2 : 32;
		char **nv = realloc(a->gaps, nc * sizeof(*nv));

		if (nv == NULL)
			return;
		a->gaps = nv;
		a->capgaps = nc;
	}
	/* the same line once */
	for (size_t i = a->ngaps; i > 0 && i + 64 > a->ngaps; i--)
		if (strcmp(a->gaps[i - 1], line) == 0)
			return;
	d = strdup(line);
	if (d != NULL)
		a->gaps[a->ngaps++] = d;
}

static void
iso_ms(int64_t ms, char *out, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	size_t n;

	if (ms <= 0 || gmtime_r(&s, &tm) == NULL) {
		snprintf(out, len, "%s", "");
		return;
	}
	n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, len - n, ".%03dZ", (int)(ms % 1000));
}

/* ---- the emitter: events kept for the report ------------------------ */

/*
 * An event made by the engine rather than from a line (a storm summary)
 * has the time it was made: in a bundle that is the time of the last line
 * it counts ("... the last: LINE"), else the current line's.
 */
static void
summary_time(struct an *a, struct event *ev)
{
	const char *last = strstr(ev->text, "; the last: ");
	struct logline ll;

	ll.ts_ms = 0;
	if (last != NULL) {
		last += strlen("; the last: ");
		logline_parse(last, strlen(last), a->now > 0 ? a->now : a->start_ms, &ll);
	}
	if (ll.ts_ms > 0)
		ev->timestamp_ms = ll.ts_ms;
	else if (a->now > 0)
		ev->timestamp_ms = a->now;
}

static int
enrich(struct an *a, struct event *ev)
{
	const struct kvlist *tags = &a->cfg->tags;
	char iso[40];
	int r = 0;

	if (!a->from_log)
		ev->timestamp_ms = a->time_ms;	/* a command output's time */
	else if (ev->timestamp_ms >= a->start_ms)
		summary_time(a, ev);
	iso_ms(ev->timestamp_ms, iso, sizeof(iso));
	/* the host's name is known once commands/ is read: set then */
	if ((a->hostname[0] && event_set_builtin(ev, "hostname", a->hostname) == -1) ||
	    event_set_builtin(ev, "esxwatch_input", "bundle") == -1 ||
	    event_set_builtin_default(ev, "appname", "esxwatch") == -1 ||
	    event_set_builtin(ev, "esxwatch_collector", a->collector) == -1 ||
	    event_set_builtin_default(ev, "esxwatch_kind", "sample") == -1 ||
	    event_set_builtin_default(ev, "esxwatch_severity", "info") == -1 ||
	    event_set_builtin(ev, "esxwatch_version", ESXWATCH_VERSION) == -1 ||
	    (iso[0] && event_set_builtin(ev, "esxwatch_event_time", iso) == -1))
		r = -1;
	for (size_t i = 0; r == 0 && i < tags->n; i++)
		if (field_name_valid(tags->v[i].key))
			r = event_set_builtin_default(ev, tags->v[i].key,
			    tags->v[i].value);
	return r;
}

static int
keep(struct an *a, struct event *ev)
{
	if (ev == NULL)
		return -1;
	if (enrich(a, ev) == -1 || a->nev >= AN_MAX_EVENTS) {
		a->dropped++;
		event_free(ev);
		return -1;
	}
	if (a->nev == a->capev) {
		size_t nc = a->capev ? a->capev * 2 : 1024;
		struct event **nv = realloc(a->ev, nc * sizeof(*nv));

		if (nv == NULL) {
			a->dropped++;
			event_free(ev);
			return -1;
		}
		a->ev = nv;
		a->capev = nc;
	}
	a->ev[a->nev++] = ev;
	return 0;
}

static int
an_emit(struct emitter *em, struct event *ev)
{
	return keep(em->arg, ev);
}

static size_t
an_emit_many(struct emitter *em, struct event **evs, size_t n)
{
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		if (keep(em->arg, evs[i]) == -1)
			failed++;
	return failed;
}

static int
an_sync(struct emitter *em)
{
	(void)em;
	return 0;
}

static const struct emitter_ops an_ops = { an_emit, an_emit_many, an_sync };

/* ---- logs ----------------------------------------------------------- */

/* The filelog whose include names NAME.log, else one of its own (named
 * after the program, so rules naming no file apply). */
static struct lwe_log *
log_for(struct an *a, const char *program)
{
	char name[300];
	struct filelog_conf *fc;

	snprintf(name, sizeof(name), "%s.log", program);
	for (size_t i = 0; i < a->nlogs; i++) {
		fc = &a->fcs[i];
		if (i < a->cfg->nfilelogs ? (fc->enabled && !fc->broken &&
		    strlist_match(&fc->include, &fc->exclude, name)) :
		    strcmp(fc->name, program) == 0)
			return &a->logs[i];
	}
	if (a->nlogs == a->caplogs)
		return NULL;	/* a program too many: the caller says so */
	fc = &a->fcs[a->nlogs];
	memset(fc, 0, sizeof(*fc));
	fc->name = strdup(program);
	if (fc->name == NULL)
		return NULL;
	fc->forward = FORWARD_MATCHES;
	fc->enabled = true;
	lwe_log_init(a->eng, &a->logs[a->nlogs], fc);
	return &a->logs[a->nlogs++];
}

static void
on_open(void *arg, const char *path, const char *program, int rot)
{
	struct an *a = arg;
	struct lwe_log *lg = log_for(a, program);
	struct an_log *l;

	(void)rot;
	a->st_open = false;
	a->cur = NULL;
	if (lg == NULL) {
		char line[600];

		snprintf(line, sizeof(line), "%s: too many different logs; not read", path);
		an_gap(a, line);
		return;
	}
	if (a->nlogv == a->caplogv) {
		size_t nc = a->caplogv ? a->caplogv * 2 : 64;
		struct an_log *nv = realloc(a->logv, nc * sizeof(*nv));

		if (nv == NULL)
			return;
		a->logv = nv;
		a->caplogv = nc;
	}
	l = &a->logv[a->nlogv];
	memset(l, 0, sizeof(*l));
	l->file = strdup(path);
	if (l->file == NULL || lwe_stream_init(&a->st, lg, path) == -1) {
		free(l->file);
		return;
	}
	a->nlogv++;
	a->cur = l;
	a->st.hostname = a->hostname;
	a->st.input = "bundle";
	a->st_open = true;
}

static void
on_line(void *arg, const char *p, size_t n, bool truncated)
{
	struct an *a = arg;
	struct logline ll;

	if (!a->st_open)
		return;
	a->lines_total++;
	a->cur->lines++;
	/* the line's own time: storm windows and twins follow it */
	if (n > 0 && p[0] >= '0' && p[0] <= '9') {
		logline_parse(p, n, a->now > 0 ? a->now : a->start_ms, &ll);
		if (ll.ts_ms > 0) {
			a->now = ll.ts_ms;
			if (a->cur->first == 0 || ll.ts_ms < a->cur->first)
				a->cur->first = ll.ts_ms;
			if (ll.ts_ms > a->cur->last)
				a->cur->last = ll.ts_ms;
		}
	}
	lwe_begin(a->eng, &a->em, a->now > 0 ? a->now : a->start_ms);
	lwe_line(a->eng, &a->st, p, n, truncated);
	if (a->now - a->last_due >= 1000 || a->now < a->last_due) {
		lwe_storm_due(a->eng, false);
		a->last_due = a->now;
	}
	if (++a->since_emit >= 4096) {
		lwe_emit(a->eng);
		a->since_emit = 0;
	}
}

static void
on_close(void *arg)
{
	struct an *a = arg;

	if (!a->st_open)
		return;
	lwe_flush(a->eng, &a->st);
	lwe_emit(a->eng);
	a->cur->matched = a->st.matched;
	lwe_stream_fini(&a->st);
	a->st_open = false;
}

static void
on_gap(void *arg, const char *line)
{
	an_gap(arg, line);
}

static void
on_progress(void *arg, uint64_t bytes)
{
	struct an *a = arg;

	if (a->tty)
		fprintf(stderr, "\ranalyze: %llu MiB read, %llu log lines",
		    (unsigned long long)(bytes >> 20),
		    (unsigned long long)a->lines_total);
}

/* ---- the host ------------------------------------------------------- */

static const char *
cmd_get(void *arg, const char *name, size_t *len)
{
	return bundle_cmd(&((struct an *)arg)->b, name, len);
}

static void
cmd_gap(void *arg, const char *line)
{
	an_gap(arg, line);
}

/* The first line of commands/NAME, trimmed, or NULL. */
static const char *
first_line(struct an *a, const char *name, char *out, size_t len, int nth)
{
	size_t n, i = 0;
	const char *t = bundle_cmd(&a->b, name, &n), *end;

	if (t == NULL)
		return NULL;
	end = t + n;
	for (; nth > 0 && t < end; nth--) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));

		t = nl ? nl + 1 : end;
	}
	while (t < end && *t != '\n' && *t != '\r' && i + 1 < len)
		out[i++] = *t++;
	out[i] = '\0';
	return i > 0 ? out : NULL;
}

/* "esx-esx01.lab-2024-05-01--10.22-12345" -> "esx01.lab" */
static void
host_from_top(const char *top, char *out, size_t len)
{
	const char *s = strncmp(top, "esx-", 4) == 0 ? top + 4 : top;
	const char *e = s + strlen(s);

	for (const char *p = s; *p; p++)
		if (p[0] == '-' && strlen(p) >= 6 && p[1] >= '1' && p[1] <= '2' &&
		    p[2] >= '0' && p[2] <= '9' && p[3] >= '0' && p[3] <= '9' &&
		    p[4] >= '0' && p[4] <= '9' && p[5] == '-') {
			e = p;
			break;
		}
	snprintf(out, len, "%.*s", (int)(e - s), s);
}

/* Host name, version, build, uptime: uname -a, vmware -vl, uptime get. */
static void
host_facts(struct an *a)
{
	char l[512], w[5][160];
	int n;

	a->uptime_s = -1;
	if (first_line(a, "uname_-a.txt", l, sizeof(l), 0) != NULL &&
	    sscanf(l, "%159s %159s", w[0], w[1]) == 2 && strcmp(w[0], "VMkernel") == 0)
		snprintf(a->hostname, sizeof(a->hostname), "%.159s", w[1]);
	else {
		an_gap(a, "commands/uname_-a.txt: absent or not `VMkernel HOST ...`: "
		    "the host name is taken from the top folder's name");
		host_from_top(a->b.top[0] ? a->b.top : "unknown", a->hostname,
		    sizeof(a->hostname));
	}
	/* "VMware ESXi 7.0.3 build-21930508", then "VMware ESXi 7.0 Update 3" */
	n = first_line(a, "vmware_-vl.txt", l, sizeof(l), 0) ? sscanf(l,
	    "%159s %159s %159s %159s", w[0], w[1], w[2], w[3]) : 0;
	/* (sscanf, not strncmp: an inlined compare leaves the immediate
	 * "buil" in the binary, a misspelling to lintian) */
	if (n == 4 && sscanf(w[3], "build-%63[0-9]", a->build) == 1) {
		snprintf(a->version, sizeof(a->version), "%.63s", w[2]);
		if (first_line(a, "vmware_-vl.txt", l, sizeof(l), 1) != NULL)
			snprintf(a->product, sizeof(a->product), "%.159s", l);
	} else
		an_gap(a, "commands/vmware_-vl.txt: absent or not `VMware ESXi "
		    "VERSION build-N`: version and build unknown");
	/* localcli system stats uptime get: microseconds since boot */
	if (first_line(a, "localcli_system-stats-uptime-get.txt", l, sizeof(l), 0) &&
	    strspn(l, "0123456789") == strlen(l) && strlen(l) < 20)
		a->uptime_s = (long long)(strtoull(l, NULL, 10) / 1000000ull);
	else
		an_gap(a, "commands/localcli_system-stats-uptime-get.txt: absent: "
		    "the host's uptime is unknown");
}

/* ---- the collectors ----------------------------------------------- */

static const char *const host_collectors[] = { "nic", "datastore", "vsan",
    "smart", NULL };

static void
run_collector(struct an *a, struct host *h, const struct collector_conf *cc)
{
	const struct collector *c = collector_find(cc->name);
	struct collector_ctx ctx;
	int guard = 0, r;

	memset(&ctx, 0, sizeof(ctx));
	ctx.name = c->name;
	ctx.cfg = a->cfg;
	ctx.conf = cc;
	ctx.platform = h->platform;
	ctx.host = h;
	ctx.state = kv_open(NULL);	/* a first observation: nothing to compare */
	if (ctx.state == NULL)
		return;
	a->collector = c->name;
	a->from_log = false;
	if (c->init == NULL || c->init(&ctx) == 0) {
		do
			r = c->collect(&ctx, &a->em);
		while (r == 1 && ++guard < 100000);
		if (c->fini)
			c->fini(&ctx);
	} else {
		char line[200];

		snprintf(line, sizeof(line), "collector %s: could not start", c->name);
		an_gap(a, line);
	}
	kv_close(ctx.state);
}

static void
run_collectors(struct an *a)
{
	struct bundle_cmds bc = { cmd_get, cmd_gap, a };
	struct host *h = bundle_host_new(&bc);

	if (h == NULL)
		return;
	for (size_t i = 0; i < a->cfg->ncollectors; i++) {
		const struct collector_conf *cc = &a->cfg->collectors[i];

		for (int k = 0; host_collectors[k] != NULL; k++)
			if (cc->enabled && strcmp(cc->name, host_collectors[k]) == 0 &&
			    collector_find(cc->name) != NULL)
				run_collector(a, h, cc);
	}
	host_close(h);
}

/* ---- a snapshot's NIC counters -------------------------------------- */

/*
 * A bundle is one look: a counter cannot be seen growing, so an error
 * counter that is not zero is a finding of its own (docs/analyze.md,
 * "Thresholds"): warning from 1; rx_crc_errors, whose growth is an error
 * live, is an error from AN_CRC_ERROR on.
 */
#define AN_CRC_ERROR	1000

static void
nic_finding(struct an *a, const char *nic, const struct nic_counter_def *d,
    unsigned long long v)
{
	const char *sev = strcmp(d->field, "rx_crc_errors") == 0 &&
	    v >= AN_CRC_ERROR ? d->alert : "warning";
	char up[64] = "the host's uptime unknown";
	struct event *ev;

	if (a->uptime_s >= 0)
		snprintf(up, sizeof(up), "the host up %lld d %lld h", a->uptime_s / 86400,
		    a->uptime_s % 86400 / 3600);
	ev = ev_new("alert", sev, "%s: %s = %llu since the counters were last "
	    "reset (%s); one snapshot cannot show when they grew", nic, d->label,
	    v, up);
	if (ev == NULL)
		return;
	if (event_set(ev, "esxwatch_nic", nic) == -1 ||
	    event_set(ev, "esxwatch_rule", "nic_counter_not_zero") == -1 ||
	    event_set(ev, "esxwatch_counter", d->field) == -1 ||
	    event_setf(ev, "esxwatch_value", "%llu", v) == -1 ||
	    (a->uptime_s >= 0 && event_setf(ev, "esxwatch_uptime_s", "%lld",
	    a->uptime_s) == -1)) {
		event_free(ev);
		return;
	}
	keep(a, ev);
}

static void
nic_findings(struct an *a)
{
	size_t n = a->nev;

	a->collector = "nic";
	a->from_log = false;
	for (size_t i = 0; i < n; i++) {
		const struct event *ev = a->ev[i];
		const char *c = event_get(ev, "esxwatch_collector"),
		    *k = event_get(ev, "esxwatch_kind"), *nic = event_get(ev, "esxwatch_nic");

		if (c == NULL || strcmp(c, "nic") != 0 || k == NULL ||
		    strcmp(k, "sample") != 0 || nic == NULL)
			continue;
		for (size_t j = 0; j < NIC_NCOUNTERS; j++) {
			char f[80];
			const char *v;
			char *end;
			unsigned long long x;

			if (nic_counters[j].alert == NULL)
				continue;
			snprintf(f, sizeof(f), "esxwatch_%s", nic_counters[j].field);
			v = event_get(ev, f);
			if (v == NULL)
				continue;
			x = strtoull(v, &end, 10);
			if (*end == '\0' && x > 0)
				nic_finding(a, nic, &nic_counters[j], x);
		}
	}
}

/* ---- the diagnosis over the timeline -------------------------------- */

static int
ev_cmp(const void *x, const void *y)
{
	const struct event *a = *(const struct event *const *)x;
	const struct event *b = *(const struct event *const *)y;

	if (a->timestamp_ms != b->timestamp_ms)
		return a->timestamp_ms < b->timestamp_ms ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void
sort_events(struct an *a)
{
	if (a->nev > 1)
		qsort(a->ev, a->nev, sizeof(*a->ev), ev_cmp);
}

#define DIAG_EVERY_MS	10000	/* as the live diagnosis collector's interval */
#define DIAG_ALERTS	16

static void
diag_round(struct an *a, struct diag *d, int64_t now, struct diag_alert *al)
{
	struct diag_want w[8];
	size_t n, nw = diag_wants(d, w, 8);

	/* what a rule asks the host: a bundle cannot answer (said so) */
	for (size_t i = 0; i < nw; i++)
		diag_answer(d, &w[i], false, "", "");
	n = diag_evaluate(d, now, al, DIAG_ALERTS);
	a->collector = "diagnosis";
	a->from_log = true;
	for (size_t i = 0; i < n; i++) {
		struct event *ev = ev_new("alert", al[i].severity, "%s", al[i].text);

		if (ev == NULL)
			continue;
		ev->timestamp_ms = now;
		event_set(ev, "esxwatch_diagnosis", al[i].rule);
		event_set(ev, "esxwatch_evidence", al[i].evidence);
		if (al[i].nic[0])
			event_set(ev, "esxwatch_nic", al[i].nic);
		if (al[i].device[0])
			event_set(ev, "esxwatch_device", al[i].device);
		if (al[i].datastore[0])
			event_set(ev, "esxwatch_datastore", al[i].datastore);
		for (size_t k = 0; k < al[i].nextra; k++)
			event_set(ev, al[i].extra_name[k], al[i].extra_value[k]);
		keep(a, ev);
	}
}

static const struct diag_conf *
diag_conf_of(const struct config *cfg, bool *enabled)
{
	*enabled = true;
	for (size_t i = 0; i < cfg->ncollectors; i++)
		if (strcmp(cfg->collectors[i].name, "diagnosis") == 0) {
			*enabled = cfg->collectors[i].enabled;
			return cfg->collectors[i].opts;
		}
	return NULL;
}

static void
diagnose_all(struct an *a)
{
	bool on;
	const struct diag_conf *dc = diag_conf_of(a->cfg, &on);
	struct diag *d = on ? diag_new(dc) : NULL;
	struct diag_alert *al = calloc(DIAG_ALERTS, sizeof(*al));
	size_t n = a->nev;
	int64_t next = 0, saved_now = a->now;

	if (d == NULL || al == NULL) {
		if (on)
			an_gap(a, "the diagnosis stage could not start (out of memory)");
		diag_free(d);
		free(al);
		return;
	}
	sort_events(a);
	for (size_t i = 0; i < n; i++) {
		int64_t t = a->ev[i]->timestamp_ms;

		if (next != 0 && t >= next) {
			diag_round(a, d, next, al);
			next = 0;
		}
		diag_observe(d, a->ev[i]);
		if (next == 0)
			next = t + DIAG_EVERY_MS;
	}
	if (next != 0)
		diag_round(a, d, next, al);
	a->now = saved_now;
	diag_free(d);
	free(al);
}

/* ---- the run -------------------------------------------------------- */

static void
read_logs_and_commands(struct an *a, int *rc)
{
	static const struct bundle_log_cb cb0 = { on_open, on_line, on_close,
	    on_gap, on_progress, NULL };
	struct bundle_log_cb cb = cb0;
	char line[700];
	int r;

	cb.arg = a;
	a->collector = "logwatch";
	a->from_log = true;
	r = bundle_read(a->path, &cb, &a->b);
	if (a->tty)
		fputc('\n', stderr);
	if (r == -1) {
		fprintf(stderr, "esxwatch: %s: not a readable bundle: %s\n", a->path,
		    a->b.err);
		*rc = 2;
		return;
	}
	lwe_storm_due(a->eng, true);
	lwe_emit(a->eng);
	if (r == 1) {
		fprintf(stderr, "esxwatch: %s: %s (the report covers what could "
		    "be read)\n", a->path, a->b.err);
		snprintf(line, sizeof(line), "the bundle: %s; the report covers "
		    "what could be read", a->b.err);
		an_gap(a, line);
		*rc = 2;
	}
	a->time_ms = a->b.time_s > 0 ? a->b.time_s * 1000 : a->start_ms;
	if (a->b.time_s <= 0)
		an_gap(a, "no commands/ file with a time: the bundle's time is "
		    "the time of the analysis");
}

static int
an_init(struct an *a, const struct config *cfg, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->cfg = cfg;
	a->path = path;
	a->start_ms = now_ms();
	a->uptime_s = -1;
	a->em.ops = &an_ops;
	a->em.arg = a;
	a->tty = isatty(2);
	a->caplogs = cfg->nfilelogs + 256;
	a->logs = calloc(a->caplogs, sizeof(*a->logs));
	a->fcs = calloc(a->caplogs, sizeof(*a->fcs));
	a->eng = lwe_new(cfg);
	if (a->logs == NULL || a->fcs == NULL || a->eng == NULL)
		return -1;
	for (size_t i = 0; i < cfg->nfilelogs; i++) {
		a->fcs[i] = cfg->filelogs[i];	/* a shallow copy: cfg owns it */
		lwe_log_init(a->eng, &a->logs[i], &cfg->filelogs[i]);
	}
	a->nlogs = cfg->nfilelogs;
	return 0;
}

static void
an_fini(struct an *a)
{
	for (size_t i = 0; i < a->nlogs; i++) {
		lwe_log_fini(&a->logs[i]);
		if (i >= a->cfg->nfilelogs)
			free(a->fcs[i].name);
	}
	lwe_free(a->eng);
	free(a->logs);
	free(a->fcs);
	for (size_t i = 0; i < a->nev; i++)
		event_free(a->ev[i]);
	free(a->ev);
	for (size_t i = 0; i < a->ngaps; i++)
		free(a->gaps[i]);
	free(a->gaps);
	for (size_t i = 0; i < a->nlogv; i++)
		free(a->logv[i].file);
	free(a->logv);
	bundle_free(&a->b);
}

static int
write_report(const struct an *a, const char *format, FILE *f)
{
	struct buf b;
	int r;

	buf_init(&b, 1024u * 1024 * 1024);
	if (strcmp(format, "text") == 0)
		r = an_report_text(a, &b);
	else
		r = an_report_json(a, &b);
	if (r == 0 && strcmp(format, "html") == 0)
		r = report_html_write(f, b.data, b.len);
	else if (r == 0 && fwrite(b.data, 1, b.len, f) != b.len)
		r = -1;
	buf_free(&b);
	return r;
}

static FILE *
open_out(const char *out)
{
	int fd;

	if (out == NULL || strcmp(out, "-") == 0)
		return stdout;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? NULL : fdopen(fd, "w");
}

static int
finish(struct an *a, const char *format, const char *out, int rc)
{
	FILE *f = open_out(out);
	bool serious = false;

	if (f == NULL) {
		fprintf(stderr, "esxwatch: -o %s: %s\n", out, log_errstr(errno));
		return 2;
	}
	if (write_report(a, format, f) == -1 || fflush(f) != 0) {
		fprintf(stderr, "esxwatch: cannot write the report%s%s\n",
		    out ? " to " : "", out ? out : "");
		rc = 2;
	}
	if (f != stdout)
		fclose(f);
	for (size_t i = 0; i < a->nev && !serious; i++)
		serious = an_is_serious(a->ev[i]);
	return rc != 0 ? rc : serious ? 1 : 0;
}

/* Whether -o OUT would land inside the bundle (a directory): never. */
static bool
out_inside(const char *bundle, const char *out)
{
	char b[PATH_MAX], o[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	size_t n;

	struct stat so, sb;

	if (out == NULL || strcmp(out, "-") == 0 || realpath(bundle, b) == NULL)
		return false;
	/* the bundle file itself (or a link to it) */
	if (stat(out, &so) == 0 && stat(bundle, &sb) == 0 &&
	    so.st_dev == sb.st_dev && so.st_ino == sb.st_ino)
		return true;
	slash = strrchr(out, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - out) : 1,
	    slash ? (slash == out ? "/" : out) : ".");
	if (realpath(dir, o) == NULL)
		return false;
	n = strlen(b);
	return strncmp(o, b, n) == 0 && (o[n] == '\0' || o[n] == '/');
}

int
analyze_main(const struct config *cfg, const char *bundle, const char *format,
    const char *out)
{
	struct an *a;
	int rc = 0;

	if (out_inside(bundle, out)) {
		fprintf(stderr, "esxwatch: -o %s is inside the bundle %s: the "
		    "bundle is never written to\n", out, bundle);
		return 2;
	}
	if (format == NULL)
		format = "text";
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0 &&
	    strcmp(format, "html") != 0) {
		fprintf(stderr, "esxwatch: --format %s: text, json or html\n", format);
		return 2;
	}
	a = malloc(sizeof(*a));
	if (a == NULL || an_init(a, cfg, bundle) == -1) {
		fprintf(stderr, "esxwatch: --analyze: cannot start (out of memory "
		    "or rules that do not compile)\n");
		if (a != NULL)
			an_fini(a);
		free(a);
		return 2;
	}
	read_logs_and_commands(a, &rc);
	if (a->b.ncmds > 0 || a->b.logs_seen > 0 || rc != 2) {
		host_facts(a);
		for (size_t i = 0; i < a->nev; i++)
			event_set_builtin(a->ev[i], "hostname", a->hostname);
		run_collectors(a);
		nic_findings(a);
		diagnose_all(a);
		sort_events(a);
		if (a->dropped > 0) {
			char line[200];

			snprintf(line, sizeof(line), "%llu events past the report's cap "
			    "of %d: left out", (unsigned long long)a->dropped, AN_MAX_EVENTS);
			an_gap(a, line);
		}
		rc = finish(a, format, out, rc);
	}
	an_fini(a);
	free(a);
	return rc;
}
