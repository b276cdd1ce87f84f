/*
 * engine: the log-matching engine.  See engine.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/kvstore.h"
#include "../../agent/lib/lfilter.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/rx.h"
#include "../../agent/lib/utf8.h"
#include "engine.h"
#include "logline.h"
#include "logwatch.h"
#include "parsers.h"
#include "rules.h"
#include "rules_catalogue.h"
#include "rules_conf.h"
#include "scsi.h"
#include "storm.h"

/*
 * One condition, several lines: vobd logs most conditions twice, a vob.*
 * line and its esx.problem.* / esx.clear.* twin (seconds apart, in either
 * order), hostd's event manager logs the event's text once more
 * ("sub=Vimsvc.ha-eventmgr] Event 132032 : ..."), and vmkernel often has
 * its own line for it ("performance has deteriorated").  Where one rule matches
 * several of them for the same entity, only the first is an alert: recent
 * alerts are remembered with the origins seen.
 */
#define LW_TWINS	32
#define LW_TWIN_MS	30000

enum { TW_VOB = 1, TW_ESX = 2, TW_HOSTD = 4, TW_LINE = 8 };

/*
 * A storm and twin entity: the rule's first capture ("NAME\tVALUE"), after
 * "@HOST\x1f" on a stream about another host (collector mode): one host's
 * storm never holds back another host's alerts.
 */
#define LW_ENTITY_MAX	(RULES_CAP_VALUE_MAX + 48 + 260)

struct lwe_twin {
	const struct rule *rule;
	int		 seen;		/* TW_* origins */
	int64_t		 ts;
	char		 entity[LW_ENTITY_MAX];
};

struct lwe {
	struct lwe_twin	 twins[LW_TWINS];
	size_t		 ntwin;		/* next slot (ring) */
	struct rules	*rules;
	struct storm	*storm;
	struct parsers	*parsers;	/* the configuration's parsers */
	struct emitter	*em;		/* of the current (last) round */
	struct emit_batch batch;	/* handed on by lwe_emit() */
	int64_t		 now;
	struct buf	 text;
	struct lwe_counts counts;
};

/* ---- the catalogue ------------------------------------------------- */

static void
rules_report(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		log_error("logwatch: %s", msg);
	else
		log_warn("logwatch: %s", msg);
}

static int
load_rules(struct lwe *eng, const struct config *cfg)
{
	enum rules_catalogue_from from;
	char path[PATH_MAX], err[512];
	struct rule_conf *v = NULL;
	size_t n = 0, i;

	eng->rules = rules_new();
	if (eng->rules == NULL)
		return -1;
	if (rules_catalogue_load(cfg->rules_file, &from, path, sizeof(path), &v,
	    &n, rules_report, NULL) == 0) {
		for (i = 0; i < n; i++)
			if (rules_add(eng->rules, &v[i], err, sizeof(err)) < 0)
				log_error("logwatch: %s: %s", path, err);
		rule_conf_free_array(v, n);
		log_debug("logwatch: %zu rules from %s", n, from == RC_BUILTIN ?
		    "the built-in catalogue" : path);
	} else if (from == RC_MISSING)
		log_warn("logwatch: no rule catalogue found (%s); only the rules "
		    "of the configuration are used", path);
	else
		log_error("logwatch: the rule catalogue %s has errors; "
		    "only the rules of the configuration are used", path);
	/* agent.yaml rules: same name replaces, enabled: no disables. */
	for (i = 0; i < cfg->nrules; i++)
		if (rules_add(eng->rules, &cfg->rules[i], err, sizeof(err)) < 0)
			log_error("logwatch: %s:%d: %s", cfg->rules[i].src_file ?
			    cfg->rules[i].src_file : "config", cfg->rules[i].src_line, err);
	if (rules_compile(eng->rules, err, sizeof(err)) < 0) {
		log_error("logwatch: %s", err);
		return -1;
	}
	return 0;
}

/* ---- events -------------------------------------------------------- */

/* 4812 -> "4,812" */
static void
thousands(uint64_t v, char *out, size_t outlen)
{
	char tmp[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (i = 0; i < n && o + 2 < outlen; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = tmp[i];
	}
	out[o] = '\0';
}

static const struct rule *
rule_named(const struct lwe *eng, const char *name)
{
	size_t i;

	for (i = 0; i < rules_total(eng->rules); i++)
		if (strcmp(rules_at(eng->rules, i)->name, name) == 0)
			return rules_at(eng->rules, i);
	return NULL;
}

/* Entity key for storm suppression: "name\tvalue" of the first capture. */
static void
entity_of(const struct rules_match *m, char *out, size_t outlen)
{
	if (m->ncaps == 0)
		snprintf(out, outlen, "%s", "");
	else
		snprintf(out, outlen, "%s\t%s", m->caps[0].name, m->caps[0].value);
}

/*
 * A capture named NAME becomes esxwatch_NAME, unless the event already has
 * that field: a rule's capture never replaces what the agent itself says
 * (esxwatch_kind, esxwatch_severity, esxwatch_file, esxwatch_rule ...).
 */
static void
set_capture(struct event *ev, const char *name, const char *value)
{
	char fname[64];

	if (snprintf(fname, sizeof(fname), "esxwatch_%s", name) >= (int)sizeof(fname) ||
	    !field_name_valid(fname))
		return;
	event_set_default(ev, fname, value);
}

static void
storm_summary(void *arg, const char *rule, const char *entity, uint64_t n,
    int64_t window_ms, const char *last)
{
	struct lwe *eng = arg;
	const struct rule *ru = rule_named(eng, rule);
	const char *tab, *us = entity[0] == '@' ? strchr(entity, '\x1f') : NULL;
	char count[32], host[256];
	struct event *ev;

	if (eng->em == NULL)
		return;
	host[0] = '\0';
	if (us != NULL) {	/* another host's (LW_ENTITY_MAX) */
		snprintf(host, sizeof(host), "%.*s", (int)(us - entity - 1),
		    entity + 1);
		entity = us + 1;
	}
	tab = strchr(entity, '\t');
	thousands(n, count, sizeof(count));
	ev = ev_new("alert", ru ? ru->severity : "warning",
	    "%s more match%s of rule %s%s%s in the last %lld s (not sent one by "
	    "one); the last: %s", count, n == 1 ? "" : "es", rule,
	    tab ? " on " : "", tab ? tab + 1 : "",
	    (long long)(window_ms / 1000), last);
	if (ev == NULL)
		return;
	event_set(ev, "esxwatch_rule", rule);
	event_set_builtin(ev, "esxwatch_collector", "logwatch");
	if (host[0] != '\0')
		event_set_builtin(ev, "hostname", host);
	event_setf(ev, "esxwatch_repeat_count", "%llu", (unsigned long long)n);
	event_setf(ev, "esxwatch_repeat_window_s", "%lld", (long long)(window_ms / 1000));
	if (tab != NULL) {
		char name[48];
		size_t l = (size_t)(tab - entity);

		if (l < sizeof(name)) {
			memcpy(name, entity, l);
			name[l] = '\0';
			set_capture(ev, name, tab + 1);
		}
	}
	if (ru != NULL && ru->hint[0] != '\0')
		event_set(ev, "esxwatch_hint", ru->hint);
	emit_batch_add(&eng->batch, eng->em, ev);
}

/*
 * "... Invalid sense data: 0x75 0x70 0x64.": ESXi itself says these bytes
 * are no sense data.  Whatever rule captured them as scsi_sense, they go to
 * esxwatch_scsi_sense_invalid and are not decoded: never a key/ASC/ASCQ
 * that the device did not send.
 */
static bool
sense_invalid(const char *line, size_t len, const struct rules_cap *c)
{
	static const char pfx[] = "Invalid sense data: ";
	char want[sizeof(pfx) + RULES_CAP_VALUE_MAX];
	int n;

	if (strcmp(c->name, "scsi_sense") != 0)
		return false;
	n = snprintf(want, sizeof(want), "%s%s", pfx, c->value);
	return n > 0 && (size_t)n < sizeof(want) &&
	    memmem(line, len, want, (size_t)n) != NULL;
}

static void
scsi_texts(struct event *ev)
{
	const char *v, *t;
	unsigned a, b, c;

	v = event_get(ev, "esxwatch_scsi_sense");
	if (v != NULL && sscanf(v, "0x%x 0x%x 0x%x", &a, &b, &c) == 3) {
		t = scsi_sense_text(a, b, c);
		if (t != NULL)
			event_set(ev, "esxwatch_scsi_sense_text", t);
	}
	v = event_get(ev, "esxwatch_scsi_host_status");
	if (v != NULL && sscanf(v, "%x", &a) == 1) {
		t = scsi_host_status_text(a);
		if (t != NULL)
			event_set(ev, "esxwatch_scsi_host_status_text", t);
	}
	v = event_get(ev, "esxwatch_scsi_device_status");
	if (v != NULL && sscanf(v, "%x", &a) == 1) {
		t = scsi_device_status_text(a);
		if (t != NULL)
			event_set(ev,
			    "esxwatch_scsi_device_status_text", t);
	}
}

/* exclude_fields: never the fields the agent itself relies on. */
static void
exclude_fields(struct event *ev, const struct strlist *names)
{
	char nm[130];

	for (size_t i = 0; i < names->n; i++) {
		if (field_name_normalize(names->v[i], nm, sizeof(nm)) < 0 ||
		    strcmp(nm, "hostname") == 0 || strncmp(nm, "esxwatch_", 9) == 0)
			continue;
		event_unset(ev, nm);
	}
}

static const char *
ev_field(void *arg, const char *name)
{
	char nm[130];

	if (field_name_normalize(name, nm, sizeof(nm)) < 0)
		return NULL;
	return event_get(arg, nm);
}

/* whitelist and blacklist, as liagent: a whitelist that cannot be
 * evaluated drops, a blacklist that cannot be evaluated keeps. */
static bool
filters_pass(const struct lwe_log *lg, struct event *ev)
{
	if (lg->white != NULL && lfilter_eval(lg->white, ev_field, ev) != 1)
		return false;
	if (lg->black != NULL && lfilter_eval(lg->black, ev_field, ev) == 1)
		return false;
	return true;
}

static struct event *
make_event(struct lwe *eng, struct lwe_stream *st, const char *line, size_t len,
    bool truncated, const struct rules_match *m)
{
	const struct filelog_conf *fc = st->log->conf;
	struct logline ll;
	struct event *ev;
	char vob[160];
	size_t i;

	/* the text is cut at EVENT_TEXT_MAX (event_new, with the marker):
	 * only that much is repaired, so a received record of up to 64 KiB,
	 * cut and marked, or full of bytes to repair, still fits eng->text */
	buf_reset(&eng->text);
	if (utf8_repair(&eng->text, line, len > EVENT_TEXT_MAX + 1 ?
	    EVENT_TEXT_MAX + 1 : len) < 0 ||
	    (truncated && buf_puts(&eng->text, EVENT_TRUNC_MARKER) < 0))
		return NULL;
	logline_parse(line, len, eng->now, &ll);
	ev = event_new(ll.ts_ms ? ll.ts_ms : eng->now, eng->text.data);
	if (ev == NULL)
		return NULL;
	/* a new event: these are its first fields, none there yet */
	event_add_builtin(ev, "esxwatch_collector", "logwatch");	/* whoever drives it */
	event_add_builtin(ev, "esxwatch_kind", m ? "alert" : "sample");
	event_add_builtin(ev, "esxwatch_severity", m ? m->rule->severity : "info");
	event_add_builtin(ev, "appname", st->appname != NULL ? st->appname :
	    ll.appname[0] ? ll.appname : fc->name);
	event_add_builtin(ev, "esxwatch_file", st->origin);
	if (st->hostname != NULL)
		event_add_builtin(ev, "hostname", st->hostname);
	if (st->input != NULL)
		event_add_builtin(ev, "esxwatch_input", st->input);
	if (st->peer != NULL)
		event_add_builtin(ev, "esxwatch_peer", st->peer);
	event_add_builtin(ev, "esxwatch_filelog", fc->name);
	if (logline_vob_id(line, len, vob, sizeof(vob)) > 0)
		event_add_builtin(ev, "esxwatch_vob_id", vob);
	if (truncated)
		event_add_builtin(ev, "esxwatch_truncated", "yes");
	/* a capture is esxwatch_NAME: never filepath */
	event_add_builtin(ev, "filepath", st->origin);	/* liagent's own field */
	if (m != NULL) {
		event_add_builtin(ev, "esxwatch_rule", m->rule->name);
		for (i = 0; i < m->ncaps; i++)
			set_capture(ev, sense_invalid(line, len, &m->caps[i]) ?
			    "scsi_sense_invalid" : m->caps[i].name, m->caps[i].value);
		scsi_texts(ev);
		if (m->rule->hint[0] != '\0')
			event_set(ev, "esxwatch_hint", m->rule->hint);
	}
	for (i = 0; i < fc->tags.n; i++)	/* never the host it is about */
		if (field_name_valid(fc->tags.v[i].key) &&
		    strcmp(fc->tags.v[i].key, "hostname") != 0)
			event_set_default(ev, fc->tags.v[i].key, fc->tags.v[i].value);
	if (st->log->parser != NULL)
		parser_apply(st->log->parser, line, len, eng->now, ev);
	exclude_fields(ev, &fc->exclude_fields);
	return ev;
}

/* Where a line comes from, for recognising the same condition twice. */
static int
twin_origin(const char *text, size_t len)
{
	static const char ev[] = "sub=Vimsvc.ha-eventmgr] Event ";
	char id[128];

	if (logline_vob_id(text, len, id, sizeof(id)) > 0)
		return strncmp(id, "vob.", 4) == 0 ? TW_VOB : TW_ESX;
	if (memmem(text, len, ev, sizeof(ev) - 1) != NULL)
		return TW_HOSTD;
	return TW_LINE;		/* vmkernel's own message, and the rest */
}

/*
 * True when this alert repeats one sent shortly before from another origin
 * (same rule and entity, within LW_TWIN_MS by the lines' own time).  A
 * line of an origin already seen is a new occurrence: an alert again.
 */
static bool
twin_seen(struct lwe *eng, const struct rule *ru, const char *text, size_t len,
    const char *entity)
{
	int origin = twin_origin(text, len);
	struct logline ll;
	struct lwe_twin *t;
	int64_t ts;
	size_t i;

	logline_parse(text, len, eng->now, &ll);
	ts = ll.ts_ms ? ll.ts_ms : eng->now;
	for (i = 0; i < LW_TWINS; i++) {
		t = &eng->twins[i];
		if (t->rule != ru || llabs(t->ts - ts) > LW_TWIN_MS ||
		    strcmp(t->entity, entity) != 0)
			continue;
		if (t->seen & origin) {		/* a new occurrence */
			t->seen = origin;
			t->ts = ts;
			return false;
		}
		t->seen |= origin;
		return true;
	}
	t = &eng->twins[eng->ntwin];
	eng->ntwin = (eng->ntwin + 1) % LW_TWINS;
	t->rule = ru;
	t->seen = origin;
	t->ts = ts;
	snprintf(t->entity, sizeof(t->entity), "%s", entity);
	return false;
}

/*
 * Storm control of one match: the rule's own storm: {max, window}, the
 * defaults, or none (storm: off: every match is sent).  1 = send it.
 */
static int
storm_pass(struct lwe *eng, const struct rule *ru, const char *entity,
    const char *text, size_t len)
{
	int limit = ru->storm_max > 0 ? ru->storm_max : LOGWATCH_STORM_LIMIT;
	int64_t window = ru->storm_window > 0 ?
	    (int64_t)ru->storm_window * 1000 : LOGWATCH_STORM_WINDOW_MS;

	if (ru->storm_max < 0)
		return 1;
	return storm_hit_at(eng->storm, ru->name, entity, limit, window, eng->now,
	    text, len, storm_summary, eng);
}

/* One complete event text (a line, or lines joined by event_marker). */
static void
handle(struct lwe *eng, struct lwe_stream *st, const char *text, size_t len,
    bool truncated)
{
	struct rules_match m;
	char entity[LW_ENTITY_MAX];
	struct event *ev;
	int matched, off;

	if (len == 0)
		return;
	eng->counts.lines++;
	/* Only the entity's capture until the storm lets the alert through. */
	matched = rules_find(eng->rules, st->log->conf->name, text, len, &m);
	if (matched) {
		st->matched++;
		st->log->matched++;
		off = st->hostname == NULL ? 0 : snprintf(entity,
		    sizeof(entity), "@%.255s\x1f", st->hostname);
		entity_of(&m, entity + off, sizeof(entity) - (size_t)off);
		if (twin_seen(eng, m.rule, text, len, entity)) {
			eng->counts.twins_dropped++;
			matched = 0;	/* forwarded as a plain line, if at all */
		}
	}
	if (!matched && st->log->conf->forward != FORWARD_ALL)
		return;
	if (matched && !storm_pass(eng, m.rule, entity, text, len)) {
		eng->counts.suppressed++;
		/* forward: all ships every line; the storm only limits alerts. */
		if (st->log->conf->forward != FORWARD_ALL)
			return;
		matched = 0;
	}
	if (matched)
		rules_caps(&m);
	ev = make_event(eng, st, text, len, truncated, matched ? &m : NULL);
	if (ev != NULL && !filters_pass(st->log, ev)) {
		eng->counts.filtered++;		/* the admin's filter said so */
		event_free(ev);
		return;
	}
	if (matched)
		eng->counts.alerts++;
	emit_batch_add(&eng->batch, eng->em, ev);
}

void
lwe_flush(struct lwe *eng, struct lwe_stream *st)
{
	if (st->pending.len == 0)
		return;
	handle(eng, st, st->pending.data, st->pending.len, st->pending_trunc);
	buf_reset(&st->pending);
	st->pending_trunc = false;
}

static bool
starts_event(struct lwe_log *lg, const char *line, size_t len)
{
	int rc;

	/* PCRE2 matches bytes with a length: NULs and all. */
	rc = rx_match(lg->marker, line, len, 0, NULL, 0);
	if (rc == RX_LIMIT)
		log_limited(LOG_WARN, lg->conf->name, 3600, "logwatch: filelog %s: "
		    "event_marker hit PCRE2's match limit on a line; the line "
		    "starts an event", lg->conf->name);
	return rc != RX_NOMATCH;
}

void
lwe_line(struct lwe *eng, struct lwe_stream *st, const char *line, size_t len,
    bool truncated)
{
	st->lines++;
	st->log->lines++;
	if (!st->log->has_marker) {
		handle(eng, st, line, len, truncated);
		return;
	}
	if (st->pending.len > 0 && !starts_event(st->log, line, len)) {
		/* A continuation: belongs to the event above, up to the cap. */
		if (st->pending.len + 1 + len > EVENT_TEXT_MAX ||
		    buf_putc(&st->pending, '\n') < 0 ||
		    buf_append(&st->pending, line, len) < 0)
			st->pending_trunc = true;
		return;
	}
	lwe_flush(eng, st);
	if (buf_append(&st->pending, line, len) < 0) {
		handle(eng, st, line, len, truncated);
		return;
	}
	st->pending_trunc = truncated;
}

/* ---- storm counts kept with a line source's positions ---------- */

/*
 * Storm counts live next to the bookmarks, in the same file and the same
 * atomic save: a bookmark never gets ahead of the counts of the lines
 * before it, so a kill -9 loses no count (the lines after the bookmark are
 * read and counted again).  Key "storm:RULE\tENTITY", value the state text
 * of storm_foreach().
 */
#define LW_STORM_PFX	"storm:"

bool
lwe_storm_key(const char *key)
{
	return strncmp(key, LW_STORM_PFX, strlen(LW_STORM_PFX)) == 0;
}

static int
storm_key_del(void *arg, const char *key, const char *value)
{
	struct buf *keys = arg;

	(void)value;
	if (buf_append(keys, key, strlen(key) + 1) < 0)
		return 1;
	return 0;
}

static void
storm_key_put(void *arg, const char *rule, const char *entity, const char *state)
{
	struct kvstore *kv = arg;
	char key[RULES_CAP_VALUE_MAX + 256];

	if (snprintf(key, sizeof(key), LW_STORM_PFX "%s\t%s", rule, entity) <
	    (int)sizeof(key))
		(void)kv_set(kv, key, state);
}

void
lwe_storm_save(struct lwe *eng, struct kvstore *kv)
{
	struct buf keys = BUF_INIT;
	size_t off;

	buf_init(&keys, 4u * 1024 * 1024);
	kv_foreach(kv, LW_STORM_PFX, storm_key_del, &keys);
	for (off = 0; off < keys.len; off += strlen(keys.data + off) + 1)
		kv_del(kv, keys.data + off);
	buf_free(&keys);
	storm_foreach(eng->storm, storm_key_put, kv);
	storm_clean(eng->storm);
}

static int
storm_key_load(void *arg, const char *key, const char *value)
{
	struct lwe *eng = arg;
	const char *rule = key + strlen(LW_STORM_PFX), *tab = strchr(rule, '\t');
	char name[256];
	size_t rl;

	if (tab == NULL)
		return 0;
	rl = (size_t)(tab - rule);
	if (rl >= sizeof(name))
		return 0;
	memcpy(name, rule, rl);
	name[rl] = '\0';
	if (storm_restore(eng->storm, name, tab + 1, value) < 0)
		log_limited(LOG_WARN, "logwatch-storm", 3600, "logwatch: a saved "
		    "storm count of rule %s is unreadable; it starts again", name);
	return 0;
}

void
lwe_storm_load(struct lwe *eng, struct kvstore *kv)
{
	kv_foreach(kv, LW_STORM_PFX, storm_key_load, eng);
	storm_clean(eng->storm);
}

/* ---- logs --------------------------------------------------------- */

/* The filelog's parser and filters (checked by --check-config already:
 * a failure here is logged and that part is left out, never the file). */
void
lwe_log_init(struct lwe *eng, struct lwe_log *lg, const struct filelog_conf *fc)
{
	char err[160];
	size_t off;

	memset(lg, 0, sizeof(*lg));
	lg->conf = fc;

	if (fc->parser != NULL && fc->parser[0] != '\0') {
		lg->parser = parsers_get(eng->parsers, fc->parser);
		if (lg->parser == NULL)
			log_error("logwatch: filelog %s: parser '%s' is not "
			    "defined; events are sent unparsed", fc->name, fc->parser);
	}
	if (fc->whitelist != NULL && fc->whitelist[0] != '\0') {
		lg->white = lfilter_compile(fc->whitelist, err, sizeof(err), &off);
		if (lg->white == NULL)
			log_error("logwatch: filelog %s: whitelist: %s", fc->name, err);
	}
	if (fc->blacklist != NULL && fc->blacklist[0] != '\0') {
		lg->black = lfilter_compile(fc->blacklist, err, sizeof(err), &off);
		if (lg->black == NULL)
			log_error("logwatch: filelog %s: blacklist: %s", fc->name, err);
	}
	if (fc->event_marker != NULL && fc->event_marker[0] != '\0') {
		char m[200];

		off = 0;
		lg->marker = rx_compile(fc->event_marker, 0, m, sizeof(m), &off);
		if (lg->marker == NULL)
			log_error("logwatch: filelog %s: bad event_marker "
			    "(%s at offset %zu); lines are events one by one",
			    fc->name, m, off);
		else
			lg->has_marker = true;
	}
}

void
lwe_log_fini(struct lwe_log *lg)
{
	rx_free(lg->marker);
	lfilter_free(lg->white);
	lfilter_free(lg->black);
	memset(lg, 0, sizeof(*lg));
}

/* ---- the engine's life ---------------------------------------------- */

struct lwe *
lwe_new(const struct config *cfg)
{
	struct lwe *eng = calloc(1, sizeof(*eng));

	if (eng == NULL)
		return NULL;
	buf_init(&eng->text, EVENT_TEXT_MAX * 4);
	eng->storm = storm_new(LOGWATCH_STORM_LIMIT, LOGWATCH_STORM_WINDOW_MS, 4096);
	if (eng->storm == NULL || load_rules(eng, cfg) < 0) {
		lwe_free(eng);
		return NULL;
	}
	eng->parsers = parsers_from_config(NULL, cfg);
	if (eng->parsers == NULL)
		log_error("logwatch: the parsers do not compile (esxwatch "
		    "--check-config says why); events are sent unparsed");
	return eng;
}

void
lwe_free(struct lwe *eng)
{
	if (eng == NULL)
		return;
	parsers_free(eng->parsers);
	rules_free(eng->rules);
	storm_free(eng->storm);
	buf_free(&eng->text);
	emit_batch_discard(&eng->batch);	/* empty: the driver emits */
	free(eng);
}

size_t
lwe_rules(const struct lwe *eng)
{
	return rules_count(eng->rules);
}

const struct lwe_counts *
lwe_counts(const struct lwe *eng)
{
	return &eng->counts;
}

void
lwe_begin(struct lwe *eng, struct emitter *em, int64_t now)
{
	eng->em = em;
	eng->now = now;
}

void
lwe_emit(struct lwe *eng)
{
	if (eng->em != NULL)
		emit_batch_flush(&eng->batch, eng->em);
}

int
lwe_storm_due(struct lwe *eng, bool all)
{
	return storm_due(eng->storm, eng->now, all, storm_summary, eng);
}

bool
lwe_storm_dirty(const struct lwe *eng)
{
	return storm_dirty(eng->storm);
}

int
lwe_stream_init(struct lwe_stream *st, struct lwe_log *lg, const char *origin)
{
	memset(st, 0, sizeof(*st));
	st->log = lg;
	st->origin = strdup(origin);
	buf_init(&st->pending, EVENT_TEXT_MAX + 1);
	return st->origin != NULL ? 0 : -1;
}

void
lwe_stream_fini(struct lwe_stream *st)
{
	buf_free(&st->pending);
	free(st->origin);
	st->origin = NULL;
}
