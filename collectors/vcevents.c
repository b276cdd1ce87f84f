/*
 * vcevents: a vsphere.NAME entry's event stream (esxwatch_collector:
 * vcevents; docs/vsphere.md, CONTRACT §5).
 *
 * An EventHistoryCollector (EventManager.CreateCollectorForEvents, filter:
 * the root folder and everything under it) read with ReadNextEvents, as
 * the vSphere API reference documents them: "ReadNextEvents reads the
 * scrollable view from the current position ... moved to the next newer
 * page after the read"; ResetCollector "moves the scrollable view to the
 * item immediately preceding the viewable latest page".
 *
 *   - first start (no key in the entry's state): ResetCollector, the
 *     latest page read and skipped: history is not replayed;
 *   - later, and after a restart: the collector is made with
 *     filter.time.beginTime = the last event's createdTime (inclusive),
 *     every event with a key <= the last one skipped: none repeated, none
 *     missed; when the last event itself is no longer in the history (the
 *     oldest key read is newer), vCenter rolled it over: a gap, counted
 *     and said;
 *   - the key and time are persisted (the entry's state) once the events
 *     are queued (emit_sync);
 *   - a failed read (session lost, collector gone) drops the collector:
 *     the next round makes a new one from the persisted position.
 *
 * Only events about a host (their `host` is set) become events, named by
 * that host; error and warning (EventEx.severity, else the category of
 * EventManager.description.eventInfo) are alerts of that severity, the
 * rest changes.  An eventTypeId the built-in catalogue names as a rule's
 * vob_id gives esxwatch_rule the rule's name.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/lib/buf.h"
#include "../agent/lib/log.h"
#include "../agent/lib/mem.h"
#include "host/vsphere_soap.h"
#include "logwatch/rules.h"
#include "logwatch/rules_catalogue.h"
#include "logwatch/rules_conf.h"
#include "vspoll.h"

/* n zeroed items of size sz (xmalloc's policy: out of memory is fatal). */
static void *
zalloc(size_t n, size_t sz)
{
	void *p = xmalloc(n * sz);

	memset(p, 0, n * sz);
	return p;
}

#define VC_PAGE		200	/* events per ReadNextEvents */
#define VC_MAX_PAGES	50	/* per round; the rest next round */
#define VC_MAX_INFO	4096

struct vc_info {
	char	key[128];
	char	category[16];
};

struct vcev {
	char		 coll[VS_REF_MAX];	/* the EventHistoryCollector, "" none */
	struct rule_conf *rules;
	size_t		 nrules;
	struct rules	*set;		/* the catalogue and rules:, compiled */
	struct vc_info	*info;
	size_t		 ninfo;
	bool		 have_info;
};

/* One event as read. */
struct vc_ev {
	char	type[96];		/* xsi:type */
	char	key[24];
	char	created[48];
	char	host[256];
	char	type_id[160];		/* EventEx.eventTypeId */
	char	severity[16];		/* EventEx.severity */
	char	*msg;
};

struct rd {
	struct vc_ev	*v;
	size_t		 n, cap;
	bool		 overflow;
};

static void
vc_evs_free(struct rd *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i].msg);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* ReadNextEventsResponse/returnval: one event each. */
static int
ev_start(void *arg, struct vx *x, int depth, const char *name)
{
	struct rd *r = arg;

	if (depth != 4 || strcmp(name, "returnval") != 0)
		return 0;
	if (r->n >= VC_PAGE * 2) {
		r->overflow = true;
		return 0;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	snprintf(r->v[r->n].type, sizeof(r->v[0].type), "%s", vx_type_at(x, 4));
	r->n++;
	return 0;
}

static int
ev_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct rd *r = arg;
	struct vc_ev *e;

	if (r->n == 0 || depth < 5 || strcmp(vx_name_at(x, 4), "returnval") != 0 ||
	    r->overflow)
		return 0;
	e = &r->v[r->n - 1];
	if (depth == 5 && strcmp(name, "key") == 0)
		snprintf(e->key, sizeof(e->key), "%s", t);
	else if (depth == 5 && strcmp(name, "createdTime") == 0)
		snprintf(e->created, sizeof(e->created), "%s", t);
	else if (depth == 5 && strcmp(name, "eventTypeId") == 0)
		snprintf(e->type_id, sizeof(e->type_id), "%s", t);
	else if (depth == 5 && strcmp(name, "severity") == 0)
		snprintf(e->severity, sizeof(e->severity), "%s", t);
	else if (depth == 6 && vx_path_ends(x, "returnval/host/name"))
		snprintf(e->host, sizeof(e->host), "%s", t);
	else if (depth == 5 && strcmp(name, "fullFormattedMessage") == 0 &&
	    e->msg == NULL)
		e->msg = xstrndup(t, len);
	return 0;
}

/* EventManager.description.eventInfo: key -> category. */
static int
info_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct vcev *v = arg;

	(void)depth;
	(void)len;
	if (vx_path_ends(x, "eventInfo/key")) {
		if (v->ninfo >= VC_MAX_INFO)
			return 0;
		v->info = xrealloc(v->info, (v->ninfo + 1) * sizeof(*v->info));
		memset(&v->info[v->ninfo], 0, sizeof(v->info[0]));
		snprintf(v->info[v->ninfo].key, sizeof(v->info[0].key), "%s", t);
		v->ninfo++;
	} else if (vx_path_ends(x, "eventInfo/category") && v->ninfo > 0 &&
	    strcmp(name, "category") == 0)
		snprintf(v->info[v->ninfo - 1].category,
		    sizeof(v->info[0].category), "%s", t);
	return 0;
}

static void
load_info(struct vcev *v, struct vs_conn *c)
{
	const struct vs_service *sc = vs_service(c);
	struct vx_handler h = { NULL, info_end, v };
	char body[1024], err[256];

	v->have_info = true;
	snprintf(body, sizeof(body), "<RetrievePropertiesEx xmlns=\"urn:vim25\">"
	    "<_this type=\"PropertyCollector\">%s</_this><specSet><propSet>"
	    "<type>EventManager</type><pathSet>description.eventInfo</pathSet>"
	    "</propSet><objectSet><obj type=\"EventManager\">%s</obj>"
	    "</objectSet></specSet><options/></RetrievePropertiesEx>",
	    sc->property_collector, sc->event_manager);
	if (vs_call(c, body, &h, err, sizeof(err)) == -1)
		log_warn("vcevents: event categories unreadable (%s): events "
		    "without a severity of their own are changes", err);
}

static const char *
category_of(const struct vcev *v, const char *key)
{
	size_t i;

	for (i = 0; i < v->ninfo; i++)
		if (strcmp(v->info[i].key, key) == 0)
			return v->info[i].category;
	return "";
}

static void
catalogue_report(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		log_warn("vcevents: rule catalogue: %s", msg);
}

static struct vcev *
vcev_new(const struct config *cfg)
{
	struct vcev *v = zalloc(1, sizeof(*v));
	enum rules_catalogue_from from;
	char what[256];

	char err[256];
	size_t i;

	if (rules_catalogue_load(cfg->rules_file, &from, what, sizeof(what),
	    &v->rules, &v->nrules, catalogue_report, NULL) == -1) {
		v->rules = NULL;
		v->nrules = 0;
	}
	/* the same set logwatch runs: the catalogue, then rules: by name */
	v->set = rules_new();
	for (i = 0; v->set != NULL && i < v->nrules; i++)
		(void)rules_add(v->set, &v->rules[i], err, sizeof(err));
	for (i = 0; v->set != NULL && i < cfg->nrules; i++)
		(void)rules_add(v->set, &cfg->rules[i], err, sizeof(err));
	if (v->set != NULL && rules_compile(v->set, err, sizeof(err)) == -1) {
		log_warn("vcevents: rules: %s: events get esxwatch_rule from "
		    "vob_id only", err);
		rules_free(v->set);
		v->set = NULL;
	}
	return v;
}

void
vcev_free(struct vcev *v)
{
	if (v == NULL)
		return;
	rule_conf_free_array(v->rules, v->nrules);
	rules_free(v->set);
	free(v->info);
	free(v);
}

/* The rule whose vob_id is id (the configuration's rules first). */
static const char *
rule_for(const struct vcev *v, const struct config *cfg, const char *id)
{
	size_t i;

	if (*id == '\0')
		return NULL;
	for (i = 0; i < cfg->nrules; i++)
		if (cfg->rules[i].vob_id != NULL &&
		    strcmp(cfg->rules[i].vob_id, id) == 0)
			return cfg->rules[i].name;
	for (i = 0; i < v->nrules; i++)
		if (v->rules[i].vob_id != NULL && strcmp(v->rules[i].vob_id, id) == 0)
			return v->rules[i].name;
	return NULL;
}

/* "2026-12-07T05:44:50.381934126Z" -> ms since the epoch, or 0. */
static int64_t
iso_ms(const char *s)
{
	struct tm tm;
	const char *p;
	int64_t ms = 0;
	int k;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return 0;
	if (*p == '.')
		for (p++, k = 0; *p >= '0' && *p <= '9'; p++, k++)
			if (k < 3)
				ms = ms * 10 + (*p - '0');
	return (int64_t)timegm(&tm) * 1000 + ms;
}

static int
match_as_vobd(struct vcev *v, const char *id, const char *msg,
    struct rules_match *m)
{
	char line[4096];
	int n;

	if (v->set == NULL || msg == NULL || (strncmp(id, "esx.", 4) != 0 &&
	    strncmp(id, "vob.", 4) != 0 && strncmp(id, "vprob.", 6) != 0))
		return 0;
	n = snprintf(line, sizeof(line), "[%s] %s", id, msg);
	if (n < 0 || n >= (int)sizeof(line))
		return 0;
	return rules_match(v->set, "vobd", line, (size_t)n, m);
}

static void
emit_one(struct collector_ctx *ctx, struct emitter *em, struct vcev *v,
    const struct vc_ev *e)
{
	const char *vsname = ((const struct vsphere_conf *)ctx->conf->opts)->name;
	const char *id = e->type_id[0] ? e->type_id : e->type;
	const char *sev = e->severity[0] ? e->severity : category_of(v, id);
	const char *rule = NULL;
	struct rules_match m;
	bool alert = strcmp(sev, "error") == 0 || strcmp(sev, "warning") == 0;
	struct vem_slot slot;
	struct event *ev;
	int64_t ts = iso_ms(e->created);

	ev = ev_new(alert ? "alert" : "change", alert ? sev : "info", "%s",
	    e->msg != NULL && *e->msg ? e->msg : id);
	if (ev == NULL)
		return;
	if (ts > 0)
		ev->timestamp_ms = ts;
	(void)event_set_builtin(ev, "esxwatch_vc_event", id);
	(void)event_set_builtin(ev, "esxwatch_vc_event_key", e->key);
	if (strncmp(id, "esx.", 4) == 0 || strncmp(id, "vprob.", 6) == 0 ||
	    strncmp(id, "vob.", 4) == 0)
		(void)event_set_builtin(ev, "esxwatch_vob_id", id);
	/* vobd logs it as "[ID] MESSAGE": matched as that line of vobd.log,
	 * the event gets the same rule and captures (device, ...) */
	if (match_as_vobd(v, id, e->msg, &m) == 1) {
		rule = m.rule->name;
		for (size_t i = 0; i < m.ncaps; i++) {
			char f[96];

			snprintf(f, sizeof(f), "esxwatch_%s", m.caps[i].name);
			(void)event_set(ev, f, m.caps[i].value);
		}
	} else
		rule = rule_for(v, ctx->cfg, id);
	if (rule != NULL)
		(void)event_set_builtin(ev, "esxwatch_rule", rule);
	vp_emitter(&slot, em, e->host, vsname, "vcevents");
	(void)emit(slot.em, ev);
}

static bool
host_wanted(const struct vsphere_conf *vc, const char *name)
{
	size_t i;

	if (*name == '\0')
		return false;
	if (vc->hosts.n == 0)
		return true;
	for (i = 0; i < vc->hosts.n; i++)
		if (fnmatch(vc->hosts.v[i], name, 0) == 0)
			return true;
	return false;
}

/* The collector, from the persisted position (time "" = first start). */
static int
make_collector(struct vcev *v, struct vs_conn *c, const char *time_s,
    bool reset, char *err, size_t errlen)
{
	const struct vs_service *sc = vs_service(c);
	struct vx_handler h = { NULL, vs_returnval_end, v->coll };
	char body[2048], t[128], tf[256] = "";

	if (*time_s != '\0' && vx_escape(time_s, t, sizeof(t)) == 0)
		snprintf(tf, sizeof(tf), "<time><beginTime>%s</beginTime></time>",
		    t);
	snprintf(body, sizeof(body), "<CreateCollectorForEvents xmlns=\"urn:"
	    "vim25\"><_this type=\"EventManager\">%s</_this><filter><entity>"
	    "<entity type=\"Folder\">%s</entity><recursion>all</recursion>"
	    "</entity>%s</filter></CreateCollectorForEvents>",
	    sc->event_manager, sc->root_folder, tf);
	v->coll[0] = '\0';
	if (vs_call(c, body, &h, err, errlen) == -1)
		return -1;
	if (v->coll[0] == '\0') {
		snprintf(err, errlen, "CreateCollectorForEvents returned nothing");
		return -1;
	}
	if (!reset)
		return 0;
	snprintf(body, sizeof(body), "<ResetCollector xmlns=\"urn:vim25\">"
	    "<_this type=\"EventHistoryCollector\">%s</_this></ResetCollector>",
	    v->coll);
	return vs_call(c, body, NULL, err, errlen);
}

static int
read_page(struct vcev *v, struct vs_conn *c, struct rd *r, char *err,
    size_t errlen)
{
	struct vx_handler h = { ev_start, ev_end, r };
	char body[512];

	snprintf(body, sizeof(body), "<ReadNextEvents xmlns=\"urn:vim25\"><_this "
	    "type=\"EventHistoryCollector\">%s</_this><maxCount>%d</maxCount>"
	    "</ReadNextEvents>", v->coll, VC_PAGE);
	return vs_call(c, body, &h, err, errlen);
}

/* The position, once what was read is queued (emit_sync). */
static void
persist(struct collector_ctx *ctx, struct emitter *em, long long last,
    const char *lastt, bool first)
{
	char num[24];

	if (last >= 0 && (emit_sync(em) == 0 || first)) {
		snprintf(num, sizeof(num), "%lld", last);
		(void)kv_set(ctx->state, "ev:key", num);
		(void)kv_set(ctx->state, "ev:time", lastt);
		(void)kv_save(ctx->state);
	} else if (first && last < 0) {
		/* no event at all yet: everything from now on is new */
		(void)kv_set(ctx->state, "ev:key", "0");
		(void)kv_set(ctx->state, "ev:time", "");
		(void)kv_save(ctx->state);
	}
}

int
vcev_poll(struct collector_ctx *ctx, struct emitter *em, struct vs_conn *c,
    struct vcev **evp, uint64_t *emitted, uint64_t *gaps, char *err,
    size_t errlen)
{
	const struct vsphere_conf *vc = ctx->conf->opts;
	struct vcev *v = *evp;
	const char *ks = kv_get(ctx->state, "ev:key");
	const char *ts = kv_get(ctx->state, "ev:time");
	long long last = ks != NULL ? atoll(ks) : -1, k;
	char lastt[64];
	bool fresh = false, first = ks == NULL, made = false;
	struct rd r;
	int pages, rc = 0;
	size_t i;

	if (v == NULL) {
		v = vcev_new(ctx->cfg);
		*evp = v;
	}
	if (!v->have_info)
		load_info(v, c);
	snprintf(lastt, sizeof(lastt), "%s", ts != NULL ? ts : "");
	if (v->coll[0] == '\0') {
		if (make_collector(v, c, first ? "" : lastt, first, err,
		    errlen) == -1) {
			v->coll[0] = '\0';
			return -1;
		}
		fresh = !first && lastt[0] != '\0';
		made = true;
	}
	for (pages = 0; pages < VC_MAX_PAGES; pages++) {
		memset(&r, 0, sizeof(r));
		rc = read_page(v, c, &r, err, errlen);
		if (rc == -1 && pages == 0 && !made) {
			/* the collector is gone with its session (vCenter
			 * restarted): a new one from the persisted position */
			vc_evs_free(&r);
			memset(&r, 0, sizeof(r));
			made = true;
			rc = make_collector(v, c, first ? "" : lastt, first, err,
			    errlen);
			fresh = rc == 0 && !first && lastt[0] != '\0';
			if (rc == 0)
				rc = read_page(v, c, &r, err, errlen);
		}
		if (rc == -1) {
			vc_evs_free(&r);
			v->coll[0] = '\0';	/* made again next round */
			break;
		}
		if (fresh && r.n > 0 && atoll(r.v[0].key) > last) {
			(*gaps)++;
			log_warn("vsphere %s: events between key %lld and %s may "
			    "be missing: vCenter's event history no longer has the "
			    "last one read (rolled over while esxwatch was away)",
			    vc->name, last, r.v[0].key);
		}
		fresh = false;
		for (i = 0; i < r.n; i++) {
			k = atoll(r.v[i].key);
			if (k <= last && !first)
				continue;
			if (!first && host_wanted(vc, r.v[i].host)) {
				emit_one(ctx, em, v, &r.v[i]);
				(*emitted)++;
			}
			if (k > last) {
				last = k;
				snprintf(lastt, sizeof(lastt), "%s", r.v[i].created);
			}
		}
		i = r.n;
		vc_evs_free(&r);
		if (i == 0)
			break;
	}
	persist(ctx, em, last, lastt, first);
	return rc;
}
