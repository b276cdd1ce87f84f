/*
 * logwatch: the log-following collector.  See logwatch.h.
 *
 * Every collect() call: report storm windows that ended, look for new
 * files (a directory is listed again only when its mtime moved), read what
 * is new in every followed file (bounded per call), turn lines into events,
 * and once the emitter says everything is queued (emit_sync), persist the
 * bookmarks.  A crash between emitting and saving re-reads lines, it never
 * skips them.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../agent/config/config_host.h"
#include "../../agent/lib/buf.h"
#include "../../agent/lib/fs.h"
#include "../../agent/lib/lfilter.h"
#include "../../agent/lib/log.h"
#include "logstats.h"
#include "../../agent/lib/rx.h"
#include "../../agent/lib/utf8.h"
#include "../emitbatch.h"
#include "follow.h"
#include "logline.h"
#include "logwatch.h"
#include "parsers.h"
#include "rules.h"
#include "rules_catalogue.h"

struct lw_log {
	const struct filelog_conf *conf;
	bool		 has_marker;
	struct rx	*marker;	/* PCRE2 */
	const struct parser *parser;	/* filelog.NAME.parser, or NULL */
	struct lfilter	*white;		/* whitelist / blacklist, or NULL */
	struct lfilter	*black;
	bool		 listed;
	struct timespec	 dir_mtime;
	size_t		 nfiles;
	/* what the last look at the directory found, and whether the log
	 * has said so (once per change, never every poll) */
	enum logstats_state state;
	bool		 reported;
	uint64_t	 lines, matched;	/* since the last publish */
};

struct lw_file {
	struct lw_log	*log;
	struct follow	*fo;
	char		*path;
	struct buf	 pending;	/* a multi-line event being assembled */
	bool		 pending_trunc;
	char		 saved[FOLLOW_POS_MAX];	/* last bookmark written */
	uint64_t	 lines, matched;	/* since the last publish */
};

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

struct lw_twin {
	const struct rule *rule;
	int		 seen;		/* TW_* origins */
	int64_t		 ts;
	char		 entity[RULES_CAP_VALUE_MAX + 48];
};

struct lw {
	struct lw_twin	 twins[LW_TWINS];
	size_t		 ntwin;		/* next slot (ring) */
	struct lw_log	*logs;
	size_t		 nlogs;
	struct lw_file	**files;
	size_t		 nfiles;
	struct rules	*rules;
	struct storm	*storm;
	struct kvstore	*bm;
	bool		 first_scan;
	struct emitter	*em;		/* of the current (last) collect() */
	struct emit_batch batch;	/* flushed after each read, before a sync */
	struct lw_file	*cur;
	int64_t		 now;
	int64_t		 saved_at;	/* last bookmark save (ms) */
	struct buf	 text;
	struct parsers	*parsers;	/* the configuration's parsers: */
	uint64_t	 lines, alerts, suppressed, twins_dropped, filtered;
	bool		 esxi;		/* the platform */
	const struct agent_figures *figs;	/* publishes pic; NULL: nowhere */
	struct logstats_snap *pic;	/* what is published (LOGSTATS_FIGURES) */
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
load_rules(struct lw *lw, const struct config *cfg)
{
	enum rules_catalogue_from from;
	char path[PATH_MAX], err[512];
	struct rule_conf *v = NULL;
	size_t n = 0, i;

	lw->rules = rules_new();
	if (lw->rules == NULL)
		return -1;
	if (rules_catalogue_load(cfg->rules_file, &from, path, sizeof(path), &v,
	    &n, rules_report, NULL) == 0) {
		for (i = 0; i < n; i++)
			if (rules_add(lw->rules, &v[i], err, sizeof(err)) < 0)
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
		if (rules_add(lw->rules, &cfg->rules[i], err, sizeof(err)) < 0)
			log_error("logwatch: %s:%d: %s", cfg->rules[i].src_file ?
			    cfg->rules[i].src_file : "config", cfg->rules[i].src_line, err);
	if (rules_compile(lw->rules, err, sizeof(err)) < 0) {
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
rule_named(const struct lw *lw, const char *name)
{
	size_t i;

	for (i = 0; i < rules_total(lw->rules); i++)
		if (strcmp(rules_at(lw->rules, i)->name, name) == 0)
			return rules_at(lw->rules, i);
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
	struct lw *lw = arg;
	const struct rule *ru = rule_named(lw, rule);
	const char *tab = strchr(entity, '\t');
	char count[32];
	struct event *ev;

	if (lw->em == NULL)
		return;
	thousands(n, count, sizeof(count));
	ev = ev_new("alert", ru ? ru->severity : "warning",
	    "%s more match%s of rule %s%s%s in the last %lld s (not sent one by "
	    "one); the last: %s", count, n == 1 ? "" : "es", rule,
	    tab ? " on " : "", tab ? tab + 1 : "",
	    (long long)(window_ms / 1000), last);
	if (ev == NULL)
		return;
	event_set(ev, "esxwatch_rule", rule);
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
	emit_batch_add(&lw->batch, lw->em, ev);
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
filters_pass(const struct lw_log *lg, struct event *ev)
{
	if (lg->white != NULL && lfilter_eval(lg->white, ev_field, ev) != 1)
		return false;
	if (lg->black != NULL && lfilter_eval(lg->black, ev_field, ev) == 1)
		return false;
	return true;
}

static struct event *
make_event(struct lw *lw, struct lw_file *lf, const char *line, size_t len,
    bool truncated, const struct rules_match *m)
{
	const struct filelog_conf *fc = lf->log->conf;
	struct logline ll;
	struct event *ev;
	char vob[160];
	size_t i;

	buf_reset(&lw->text);
	if (utf8_repair(&lw->text, line, len) < 0 ||
	    (truncated && buf_puts(&lw->text, EVENT_TRUNC_MARKER) < 0))
		return NULL;
	logline_parse(line, len, lw->now, &ll);
	ev = event_new(ll.ts_ms ? ll.ts_ms : lw->now, lw->text.data);
	if (ev == NULL)
		return NULL;
	/* a new event: these are its first fields, none there yet */
	event_add_builtin(ev, "esxwatch_kind", m ? "alert" : "sample");
	event_add_builtin(ev, "esxwatch_severity", m ? m->rule->severity : "info");
	event_add_builtin(ev, "appname", ll.appname[0] ? ll.appname : fc->name);
	event_add_builtin(ev, "esxwatch_file", lf->path);
	event_add_builtin(ev, "esxwatch_filelog", fc->name);
	if (logline_vob_id(line, len, vob, sizeof(vob)) > 0)
		event_add_builtin(ev, "esxwatch_vob_id", vob);
	if (truncated)
		event_add_builtin(ev, "esxwatch_truncated", "yes");
	/* a capture is esxwatch_NAME: never filepath */
	event_add_builtin(ev, "filepath", lf->path);	/* liagent's own field */
	if (m != NULL) {
		event_add_builtin(ev, "esxwatch_rule", m->rule->name);
		for (i = 0; i < m->ncaps; i++)
			set_capture(ev, sense_invalid(line, len, &m->caps[i]) ?
			    "scsi_sense_invalid" : m->caps[i].name, m->caps[i].value);
		scsi_texts(ev);
		if (m->rule->hint[0] != '\0')
			event_set(ev, "esxwatch_hint", m->rule->hint);
	}
	for (i = 0; i < fc->tags.n; i++)
		if (field_name_valid(fc->tags.v[i].key))
			event_set_default(ev, fc->tags.v[i].key, fc->tags.v[i].value);
	if (lf->log->parser != NULL)
		parser_apply(lf->log->parser, line, len, lw->now, ev);
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
twin_seen(struct lw *lw, const struct rule *ru, const char *text, size_t len,
    const char *entity)
{
	int origin = twin_origin(text, len);
	struct logline ll;
	struct lw_twin *t;
	int64_t ts;
	size_t i;

	logline_parse(text, len, lw->now, &ll);
	ts = ll.ts_ms ? ll.ts_ms : lw->now;
	for (i = 0; i < LW_TWINS; i++) {
		t = &lw->twins[i];
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
	t = &lw->twins[lw->ntwin];
	lw->ntwin = (lw->ntwin + 1) % LW_TWINS;
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
storm_pass(struct lw *lw, const struct rule *ru, const char *entity,
    const char *text, size_t len)
{
	int limit = ru->storm_max > 0 ? ru->storm_max : LOGWATCH_STORM_LIMIT;
	int64_t window = ru->storm_window > 0 ?
	    (int64_t)ru->storm_window * 1000 : LOGWATCH_STORM_WINDOW_MS;

	if (ru->storm_max < 0)
		return 1;
	return storm_hit_at(lw->storm, ru->name, entity, limit, window, lw->now,
	    text, len, storm_summary, lw);
}

/* One complete event text (a line, or lines joined by event_marker). */
static void
handle(struct lw *lw, struct lw_file *lf, const char *text, size_t len,
    bool truncated)
{
	struct rules_match m;
	char entity[RULES_CAP_VALUE_MAX + 48];
	struct event *ev;
	int matched;

	if (len == 0)
		return;
	lw->lines++;
	/* Only the entity's capture until the storm lets the alert through. */
	matched = rules_find(lw->rules, lf->log->conf->name, text, len, &m);
	if (matched) {
		lf->matched++;
		lf->log->matched++;
		entity_of(&m, entity, sizeof(entity));
		if (twin_seen(lw, m.rule, text, len, entity)) {
			lw->twins_dropped++;
			matched = 0;	/* forwarded as a plain line, if at all */
		}
	}
	if (!matched && lf->log->conf->forward != FORWARD_ALL)
		return;
	if (matched && !storm_pass(lw, m.rule, entity, text, len)) {
		lw->suppressed++;
		/* forward: all ships every line; the storm only limits alerts. */
		if (lf->log->conf->forward != FORWARD_ALL)
			return;
		matched = 0;
	}
	if (matched)
		rules_caps(&m);
	ev = make_event(lw, lf, text, len, truncated, matched ? &m : NULL);
	if (ev != NULL && !filters_pass(lf->log, ev)) {
		lw->filtered++;		/* the admin's filter said so */
		event_free(ev);
		return;
	}
	if (matched)
		lw->alerts++;
	emit_batch_add(&lw->batch, lw->em, ev);
}

static void
flush_pending(struct lw *lw, struct lw_file *lf)
{
	if (lf->pending.len == 0)
		return;
	handle(lw, lf, lf->pending.data, lf->pending.len, lf->pending_trunc);
	buf_reset(&lf->pending);
	lf->pending_trunc = false;
}

static bool
starts_event(struct lw_log *lg, const char *line, size_t len)
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

/* follow_line_fn */
static void
on_line(void *arg, const char *line, size_t len, bool truncated)
{
	struct lw *lw = arg;
	struct lw_file *lf = lw->cur;

	lf->lines++;
	lf->log->lines++;
	if (!lf->log->has_marker) {
		handle(lw, lf, line, len, truncated);
		return;
	}
	if (lf->pending.len > 0 && !starts_event(lf->log, line, len)) {
		/* A continuation: belongs to the event above, up to the cap. */
		if (lf->pending.len + 1 + len > EVENT_TEXT_MAX ||
		    buf_putc(&lf->pending, '\n') < 0 ||
		    buf_append(&lf->pending, line, len) < 0)
			lf->pending_trunc = true;
		return;
	}
	flush_pending(lw, lf);
	if (buf_append(&lf->pending, line, len) < 0) {
		handle(lw, lf, line, len, truncated);
		return;
	}
	lf->pending_trunc = truncated;
}

/* ---- files --------------------------------------------------------- */

static bool
followed(const struct lw *lw, const char *path)
{
	size_t i;

	for (i = 0; i < lw->nfiles; i++)
		if (strcmp(lw->files[i]->path, path) == 0)
			return true;
	return false;
}

static void
add_file(struct lw *lw, struct lw_log *lg, const char *path)
{
	struct lw_file *lf, **nv;
	const char *bm;

	if (lg->nfiles >= LOGWATCH_MAX_FILES) {
		log_limited(LOG_WARN, lg->conf->name, 3600, "logwatch: filelog %s: "
		    "more than %d files match; %s is not followed", lg->conf->name,
		    LOGWATCH_MAX_FILES, path);
		return;
	}
	nv = realloc(lw->files, (lw->nfiles + 1) * sizeof(*nv));
	if (nv == NULL)
		return;
	lw->files = nv;
	lf = calloc(1, sizeof(*lf));
	if (lf == NULL)
		return;
	lf->log = lg;
	lf->path = strdup(path);
	lf->fo = follow_new(path);
	buf_init(&lf->pending, EVENT_TEXT_MAX + 1);
	if (lf->path == NULL || lf->fo == NULL) {
		free(lf->path);
		follow_free(lf->fo);
		free(lf);
		return;
	}
	bm = kv_get(lw->bm, path);
	if (bm != NULL && bm[0] != '\0') {
		snprintf(lf->saved, sizeof(lf->saved), "%s", bm);
		follow_start(lf->fo, bm, FOLLOW_HEAD);
	} else
		follow_start(lf->fo, NULL, lw->first_scan &&
		    !lg->conf->read_from_head ? FOLLOW_TAIL : FOLLOW_HEAD);
	lw->files[lw->nfiles++] = lf;
	lg->nfiles++;
	log_debug("logwatch: following %s (%s)", path, bm ? "bookmark" :
	    lw->first_scan && !lg->conf->read_from_head ? "from the end" :
	    "from the start");
}

static bool
is_compressed(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".gz") == 0;
}

/*
 * Say what a look at the filelog's directory found, once per change
 * (logstats_tell()).  err: the errno of a failed stat() or opendir().
 */
static void
tell_state(struct lw *lw, struct lw_log *lg, enum logstats_state st, int err)
{
	if (lg->reported && lg->state == st)
		return;
	logstats_tell(lg->conf, st, lg->reported, lg->nfiles, err, lw->esxi);
	lg->state = st;
	lg->reported = true;
}

/* List the filelog's directory if it changed since the last listing. */
static void
scan(struct lw *lw, struct lw_log *lg)
{
	const struct filelog_conf *fc = lg->conf;
	char path[PATH_MAX];
	struct stat st;
	struct dirent *de;
	size_t matching = 0;
	DIR *d;
	int err;

	if (fc->directory == NULL)
		return;
	err = stat(fc->directory, &st) < 0 ? errno :
	    S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (err != 0) {
		lg->listed = false;	/* list it when it is back */
		tell_state(lw, lg, err == EACCES ? LOGSTATS_UNREADABLE :
		    LOGSTATS_NO_DIR, err);
		return;
	}
	/* A directory's mtime only has the kernel's tick resolution: list
	 * again while it is fresh, so a file created just after a listing
	 * with the same mtime is not missed. */
	if (lg->listed && st.st_mtim.tv_sec == lg->dir_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == lg->dir_mtime.tv_nsec &&
	    lw->now / 1000 - (int64_t)st.st_mtim.tv_sec > 2)
		return;
	d = opendir(fc->directory);
	if (d == NULL) {
		lg->listed = false;
		tell_state(lw, lg, LOGSTATS_UNREADABLE, errno);
		return;
	}
	lg->listed = true;
	lg->dir_mtime = st.st_mtim;
	for (;;) {
		de = readdir(d);
		if (de == NULL)
			break;
		/* hidden files are followed as liagent does (exclude=.* skips
		 * them); only . and .. are not files */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    is_compressed(de->d_name))
			continue;
		if (!strlist_match(&fc->include, &fc->exclude, de->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", fc->directory,
		    de->d_name) >= (int)sizeof(path))
			continue;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		matching++;
		if (!followed(lw, path))
			add_file(lw, lg, path);
	}
	closedir(d);
	/* a file being rotated may be missing for a moment: while one is
	 * followed, the filelog is not without files */
	tell_state(lw, lg, matching > 0 || lg->nfiles > 0 ? LOGSTATS_OK :
	    LOGSTATS_NO_MATCH, 0);
}

/*
 * Storm counts live next to the bookmarks, in the same file and the same
 * atomic save: a bookmark never gets ahead of the counts of the lines
 * before it, so a kill -9 loses no count (the lines after the bookmark are
 * read and counted again).  Key "storm:RULE\tENTITY", value the state text
 * of storm_foreach().
 */
#define LW_STORM_PFX	"storm:"

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
	struct lw *lw = arg;
	char key[RULES_CAP_VALUE_MAX + 256];

	if (snprintf(key, sizeof(key), LW_STORM_PFX "%s\t%s", rule, entity) <
	    (int)sizeof(key))
		(void)kv_set(lw->bm, key, state);
}

static void
storm_checkpoint(struct lw *lw)
{
	struct buf keys = BUF_INIT;
	size_t off;

	buf_init(&keys, 4u * 1024 * 1024);
	kv_foreach(lw->bm, LW_STORM_PFX, storm_key_del, &keys);
	for (off = 0; off < keys.len; off += strlen(keys.data + off) + 1)
		kv_del(lw->bm, keys.data + off);
	buf_free(&keys);
	storm_foreach(lw->storm, storm_key_put, lw);
	storm_clean(lw->storm);
}

static int
storm_key_load(void *arg, const char *key, const char *value)
{
	struct lw *lw = arg;
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
	if (storm_restore(lw->storm, name, tab + 1, value) < 0)
		log_limited(LOG_WARN, "logwatch-storm", 3600, "logwatch: a saved "
		    "storm count of rule %s is unreadable; it starts again", name);
	return 0;
}

static void
storm_load(struct lw *lw)
{
	kv_foreach(lw->bm, LW_STORM_PFX, storm_key_load, lw);
	storm_clean(lw->storm);
}

static void
save_bookmarks(struct lw *lw, struct emitter *em)
{
	char pos[FOLLOW_POS_MAX];
	bool changed = false;
	size_t i;

	emit_batch_flush(&lw->batch, em);	/* held events first */
	for (i = 0; i < lw->nfiles; i++) {
		follow_pos(lw->files[i]->fo, pos, sizeof(pos));
		if (pos[0] != '\0' && strcmp(pos, lw->files[i]->saved) != 0)
			changed = true;
	}
	if (!changed && !storm_dirty(lw->storm))
		return;
	/* The lines before these positions must be safely queued first. */
	if (emit_sync(em) != 0) {
		log_limited(LOG_WARN, "logwatch-sync", 300, "logwatch: events "
		    "not yet safely queued; bookmarks not advanced");
		return;
	}
	for (i = 0; i < lw->nfiles; i++) {
		struct lw_file *lf = lw->files[i];

		follow_pos(lf->fo, pos, sizeof(pos));
		if (pos[0] == '\0' || strcmp(pos, lf->saved) == 0)
			continue;
		if (kv_set(lw->bm, lf->path, pos) == 0)
			snprintf(lf->saved, sizeof(lf->saved), "%s", pos);
	}
	storm_checkpoint(lw);
	if (kv_save(lw->bm) < 0)
		log_limited(LOG_WARN, "logwatch-bm", 300, "logwatch: cannot save "
		    "the bookmarks: lines may be read again after a restart");
}

/*
 * Bookmarks of files no filelog matches any more (configuration changed,
 * dated file names) would pile up: forget them at start.  A file that is
 * only missing for the moment (rotated while we were down) still matches
 * its filelog and keeps its bookmark.
 */
struct prune {
	struct lw	*lw;
	char		**del;
	size_t		 n, cap;
};

static int
prune_cb(void *arg, const char *key, const char *value)
{
	struct prune *p = arg;
	const char *slash = strrchr(key, '/');
	size_t i, dl;
	char **nv;

	(void)value;
	if (strncmp(key, LW_STORM_PFX, strlen(LW_STORM_PFX)) == 0)
		return 0;	/* storm counts, not a bookmark */
	if (slash != NULL) {
		dl = (size_t)(slash - key);
		for (i = 0; i < p->lw->nlogs; i++) {
			const struct filelog_conf *fc = p->lw->logs[i].conf;

			if (fc->directory != NULL && strlen(fc->directory) == dl &&
			    strncmp(fc->directory, key, dl) == 0 &&
			    strlist_match(&fc->include, &fc->exclude, slash + 1))
				return 0;
		}
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		nv = realloc(p->del, p->cap * sizeof(*nv));
		if (nv == NULL)
			return 1;
		p->del = nv;
	}
	p->del[p->n] = strdup(key);
	if (p->del[p->n] != NULL)
		p->n++;
	return 0;
}

static void
prune_bookmarks(struct lw *lw)
{
	struct prune p = { lw, NULL, 0, 0 };
	size_t i;

	kv_foreach(lw->bm, "", prune_cb, &p);
	for (i = 0; i < p.n; i++) {
		log_debug("logwatch: forgetting the bookmark of %s (no filelog "
		    "matches it)", p.del[i]);
		kv_del(lw->bm, p.del[i]);
		free(p.del[i]);
	}
	free(p.del);
	if (p.n > 0)
		kv_save(lw->bm);
}

/* ---- figures ----------------------------------------------------- */

/*
 * Hand the filelogs' states, files, offsets and the lines read since the
 * last time to main's table (collectors/logwatch/logstats.h, published as
 * LOGSTATS_FIGURES), which keeps the totals.
 */
static void
publish(struct lw *lw)
{
	struct logstats_snap *p = lw->pic;

	if (lw->figs == NULL || p == NULL)
		return;
	p->nfilelogs = p->nfiles = 0;
	for (size_t i = 0; i < lw->nlogs && i < LOGSTATS_MAX_FILELOGS; i++) {
		struct lw_log *lg = &lw->logs[i];
		struct logstats_filelog *f = &p->filelogs[p->nfilelogs++];

		snprintf(f->name, sizeof(f->name), "%s", lg->conf->name);
		logstats_copy_path(f->directory, lg->conf->directory ?
		    lg->conf->directory : "");
		f->state = lg->state;
		f->lines_read = lg->lines;
		f->lines_matched = lg->matched;
		f->nfiles = lg->nfiles;
		lg->lines = lg->matched = 0;
	}
	for (size_t i = 0; i < lw->nfiles; i++) {
		struct lw_file *lf = lw->files[i];
		size_t li = (size_t)(lf->log - lw->logs);
		struct logstats_file *f;

		if (li >= p->nfilelogs || p->nfiles == LOGSTATS_MAX_FILES)
			continue;	/* counted in its filelog still */
		f = &p->files[p->nfiles++];
		logstats_copy_path(f->path, lf->path);
		f->filelog = li;
		f->offset = follow_offset(lf->fo);
		f->lines_read = lf->lines;
		f->lines_matched = lf->matched;
		lf->lines = lf->matched = 0;
	}
	(void)lw->figs->publish(lw->figs->arg, LOGSTATS_FIGURES, p);
}

/* ---- the collector ------------------------------------------------- */

static void lw_free(struct lw *);

/* The filelog's parser and filters (checked by --check-config already:
 * a failure here is logged and that part is left out, never the file). */
static void
lw_log_filters(struct lw *lw, struct lw_log *lg)
{
	const struct filelog_conf *fc = lg->conf;
	char err[160];
	size_t off;

	if (fc->parser != NULL && fc->parser[0] != '\0') {
		lg->parser = parsers_get(lw->parsers, fc->parser);
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
}

static int
lw_init(struct collector_ctx *ctx)
{
	const struct config *cfg = ctx->cfg;
	char path[PATH_MAX];
	const char *dir = config_storage_dir(cfg);
	struct lw *lw;
	size_t i;

	lw = calloc(1, sizeof(*lw));
	if (lw == NULL)
		return -1;
	buf_init(&lw->text, EVENT_TEXT_MAX * 4);
	lw->first_scan = true;
	lw->esxi = ctx->platform == PLATFORM_ESXI;
	lw->storm = storm_new(LOGWATCH_STORM_LIMIT, LOGWATCH_STORM_WINDOW_MS, 4096);
	lw->logs = calloc(cfg->nfilelogs ? cfg->nfilelogs : 1, sizeof(*lw->logs));
	if (lw->storm == NULL || lw->logs == NULL || load_rules(lw, cfg) < 0)
		goto err;
	if (ctx->figures != NULL && ctx->figures->publish != NULL) {
		lw->pic = calloc(1, sizeof(*lw->pic));
		lw->figs = lw->pic != NULL ? ctx->figures : NULL;
	}
	lw->parsers = parsers_from_config(NULL, cfg);
	if (lw->parsers == NULL)
		log_error("logwatch: the parsers do not compile (esxwatch "
		    "--check-config says why); events are sent unparsed");
	for (i = 0; i < cfg->nfilelogs; i++) {
		const struct filelog_conf *fc = &cfg->filelogs[i];
		struct lw_log *lg = &lw->logs[lw->nlogs];

		if (!fc->enabled)
			continue;
		if (fc->broken != NULL) {
			/* the others run (--status lists it) */
			log_error("logwatch: filelog %s: disabled: %s", fc->name,
			    fc->broken);
			continue;
		}
		lg->conf = fc;
		lw_log_filters(lw, lg);
		if (fc->event_marker != NULL && fc->event_marker[0] != '\0') {
			char m[200];
			size_t off = 0;

			lg->marker = rx_compile(fc->event_marker, 0, m, sizeof(m),
			    &off);
			if (lg->marker == NULL)
				log_error("logwatch: filelog %s: bad event_marker "
				    "(%s at offset %zu); lines are events one by one",
				    fc->name, m, off);
			else
				lg->has_marker = true;
		}
		lw->nlogs++;
	}
	if (fs_mkdir_p(dir, 0700) < 0 ||
	    snprintf(path, sizeof(path), "%s/bookmarks", dir) >= (int)sizeof(path))
		lw->bm = NULL;
	else
		lw->bm = kv_open(path);
	if (lw->bm == NULL) {
		log_warn("logwatch: cannot keep bookmarks in %s: after a restart "
		    "files are read from their end", dir);
		lw->bm = kv_open(NULL);
		if (lw->bm == NULL)
			goto err;
	}
	prune_bookmarks(lw);
	storm_load(lw);
	ctx->priv = lw;
	log_debug("logwatch: %zu filelogs, %zu rules", lw->nlogs,
	    rules_count(lw->rules));
	return 0;
err:
	lw_free(lw);
	return -1;
}

static int
lw_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct lw *lw = ctx->priv;
	int more = 0, r;
	size_t i;

	if (lw == NULL)
		return -1;
	lw->em = em;
	lw->now = now_ms();
	/* A summary sent: its count is no longer owed; say so at once. */
	if (storm_due(lw->storm, lw->now, false, storm_summary, lw) > 0)
		save_bookmarks(lw, em);
	for (i = 0; i < lw->nlogs; i++)
		scan(lw, &lw->logs[i]);
	lw->first_scan = false;
	for (i = 0; i < lw->nfiles; i++) {
		struct lw_file *lf = lw->files[i];

		lw->cur = lf;
		r = follow_read(lf->fo, LOGWATCH_MAX_BYTES, LOGWATCH_MAX_LINES,
		    on_line, lw);
		if (r == 1)
			more = 1;
		flush_pending(lw, lf);
		emit_batch_flush(&lw->batch, em);
	}
	lw->cur = NULL;
	/* A backlog is read in bounded calls back to back: sync the queue
	 * and save the bookmarks once a second, not after every call. */
	if (!more || lw->now - lw->saved_at >= 1000) {
		save_bookmarks(lw, em);
		lw->saved_at = lw->now;
	}
	publish(lw);
	return more;
}

static void
lw_free(struct lw *lw)
{
	size_t i;

	if (lw == NULL)
		return;
	for (i = 0; i < lw->nfiles; i++) {
		follow_free(lw->files[i]->fo);
		buf_free(&lw->files[i]->pending);
		free(lw->files[i]->path);
		free(lw->files[i]);
	}
	free(lw->files);
	for (i = 0; i < lw->nlogs; i++) {
		rx_free(lw->logs[i].marker);
		lfilter_free(lw->logs[i].white);
		lfilter_free(lw->logs[i].black);
	}
	free(lw->logs);
	parsers_free(lw->parsers);
	rules_free(lw->rules);
	storm_free(lw->storm);
	if (lw->bm != NULL)
		kv_close(lw->bm);
	buf_free(&lw->text);
	emit_batch_discard(&lw->batch);	/* empty: collect() and fini() flush */
	free(lw->pic);
	free(lw);
}

/*
 * Shutdown (and the end of --once): what storm suppression still holds is
 * reported now, never dropped.  The agent calls fini() before it drains the
 * queue, through the emitter of the last collect() call.
 */
static void
lw_fini(struct collector_ctx *ctx)
{
	struct lw *lw = ctx->priv;
	size_t i;

	if (lw == NULL)
		return;
	if (lw->em != NULL) {
		lw->now = now_ms();
		for (i = 0; i < lw->nfiles; i++) {
			lw->cur = lw->files[i];
			flush_pending(lw, lw->files[i]);
		}
		storm_due(lw->storm, lw->now, true, storm_summary, lw);
		save_bookmarks(lw, lw->em);
		publish(lw);
	}
	log_debug("logwatch: %llu lines, %llu alerts, %llu suppressed by storm "
	    "control, %llu repeats of one condition", (unsigned long long)lw->lines,
	    (unsigned long long)lw->alerts, (unsigned long long)lw->suppressed,
	    (unsigned long long)lw->twins_dropped);
	lw_free(lw);
	ctx->priv = NULL;
}

const struct collector collector_logwatch = {
	.name = "logwatch",
	.default_interval = 1,
	.init = lw_init,
	.collect = lw_collect,
	.fini = lw_fini,
};
