/*
 * vsphere_wait: the hosts' properties kept between polls and patched with
 * what changed (vsphere.h, vs_watch_*).  docs/vsphere.md.
 *
 * Per vsphere entry, once per session: a private PropertyCollector
 * (PropertyCollector.CreatePropertyCollector: our filter does not mix with
 * other clients' on the session), two ContainerViews (HostSystem,
 * Datastore) and one PropertyFilter (CreateFilter) over them with the
 * properties the full read takes (vsphere_snap.c).  Each poll then calls
 * WaitForUpdatesEx(version, WaitOptions {maxWaitSeconds 0,
 * maxObjectUpdates}) — vSphere Web Services API reference,
 * PropertyCollector.WaitForUpdatesEx, data objects WaitOptions, UpdateSet,
 * PropertyFilterUpdate, ObjectUpdate, PropertyChange:
 *   - maxWaitSeconds 0: "the PropertyCollector [...] will return
 *     immediately" with what changed, or a null result when nothing did;
 *   - the first call (version "") reports every object as `enter` with all
 *     its properties (op assign): the full read;
 *   - later ones `modify` (changeSet: PropertyChange name, op assign |
 *     remove | indirectRemove | add, val), `enter` (a new object), `leave`
 *     (an object gone);
 *   - UpdateSet.truncated true: "there are more updates to retrieve":
 *     called again at once with the returned version.
 * partialUpdates is false: "a change should report the enclosing property
 * named in the filter" (CreateFilter), so every change names a property of
 * the spec and carries its whole new value, which replaces the kept one.
 * A change this reader cannot apply exactly (a nested name, op add, an
 * unknown kind, a modify of an object not kept) is refused like a fault.
 *
 * Any failure (a fault — InvalidCollectorVersion, ManagedObjectNotFound —,
 * a new session after NotAuthenticated, a restarted server, an unreadable
 * answer) drops everything (the snapshot too: never served stale) and the
 * same poll reads all again from a new collector and filter; logged once
 * per occurrence.  The answers go through the bounded reader (vsphere_xml.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/mem.h"
#include "vsphere.h"
#include "vsphere_rd.h"

#define VW_MAX_UPDATES	500	/* WaitOptions.maxObjectUpdates */
#define VW_MAX_ROUNDS	(2 * 20000 / VW_MAX_UPDATES + 4)

enum { VW_ENTER = 1, VW_MODIFY, VW_LEAVE };

struct vw_obj {
	int		kind;
	bool		host;
	size_t		idx;	/* in the update's hosts or ds */
	uint32_t	mask;	/* bit i: vs_host_props[i] / vs_ds_props[i] */
};

struct vs_watch {
	char		name[128];
	uint64_t	session;
	bool		live;
	char		pc[VS_REF_MAX], hview[VS_REF_MAX], dview[VS_REF_MAX];
	char		version[512];
	struct vs_snap	s;
	uint64_t	full_reads, updates;
};

/* One WaitForUpdatesEx answer being read. */
struct upd {
	struct rd	 rd;
	struct vs_snap	 d;
	struct vw_obj	*o;
	size_t		 no;
	int		 kind;
	char		 version[512];
	bool		 have_ret, truncated, bad;
	char		 why[192];
};

static void
bad(struct upd *u, const char *what, const char *t)
{
	if (!u->bad)
		snprintf(u->why, sizeof(u->why), "%s \"%.100s\"", what, t);
	u->bad = true;
}

static int
prop_bit(const char *const *props, const char *name)
{
	int i;

	for (i = 0; props[i] != NULL; i++)
		if (strcmp(props[i], name) == 0)
			return i;
	return -1;
}

static int
up_start(void *arg, struct vx *x, int depth, const char *name)
{
	struct upd *u = arg;

	if (depth == 4 && strcmp(name, "returnval") == 0)
		u->have_ret = true;
	return vs_rd_start(&u->rd, x, depth, name);
}

/* objectSet/kind, objectSet/obj (a record), changeSet/name and op,
 * missingSet/path (a property unreadable: absent, as in the full read) */
static void
up_object(struct upd *u, struct vx *x, int depth, const char *name,
    const char *t, size_t nh0, size_t nd0)
{
	struct vw_obj *o = u->no ? &u->o[u->no - 1] : NULL;
	int b;

	if (depth == 7 && strcmp(vx_name_at(x, 6), "objectSet") == 0) {
		if (strcmp(name, "kind") == 0) {
			u->kind = strcmp(t, "enter") == 0 ? VW_ENTER :
			    strcmp(t, "modify") == 0 ? VW_MODIFY :
			    strcmp(t, "leave") == 0 ? VW_LEAVE : 0;
			if (u->kind == 0)
				bad(u, "an ObjectUpdate of kind", t);
		} else if (strcmp(name, "obj") == 0 &&
		    (u->d.nhosts > nh0 || u->d.nds > nd0)) {
			u->o = xrealloc(u->o, (u->no + 1) * sizeof(*u->o));
			o = &u->o[u->no++];
			memset(o, 0, sizeof(*o));
			o->kind = u->kind;
			o->host = u->d.nhosts > nh0;
			o->idx = o->host ? u->d.nhosts - 1 : u->d.nds - 1;
		}
		return;
	}
	if (depth != 8 || o == NULL)
		return;
	if (strcmp(vx_name_at(x, 7), "changeSet") == 0 &&
	    strcmp(name, "name") == 0) {
		b = prop_bit(o->host ? vs_host_props : vs_ds_props, t);
		if (b < 0)
			bad(u, "a change of", t);
		else
			o->mask |= 1u << b;
	} else if (strcmp(vx_name_at(x, 7), "changeSet") == 0 &&
	    strcmp(name, "op") == 0 && strcmp(t, "assign") != 0 &&
	    strcmp(t, "remove") != 0 && strcmp(t, "indirectRemove") != 0)
		bad(u, "a PropertyChange of op", t);
	else if (strcmp(vx_name_at(x, 7), "missingSet") == 0 &&
	    strcmp(name, "path") == 0) {
		b = prop_bit(o->host ? vs_host_props : vs_ds_props, t);
		if (b >= 0)
			o->mask |= 1u << b;
	}
}

static int
up_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct upd *u = arg;
	size_t nh0 = u->d.nhosts, nd0 = u->d.nds;

	if (depth == 5 && strcmp(vx_name_at(x, 4), "returnval") == 0) {
		if (strcmp(name, "version") == 0) {
			if (len >= sizeof(u->version))
				bad(u, "a version too long:", "");
			else
				memcpy(u->version, t, len + 1);
		} else if (strcmp(name, "truncated") == 0)
			u->truncated = strcmp(t, "true") == 0;
		return 0;
	}
	if (vs_rd_end(&u->rd, x, depth, name, t, len) == -1)
		return -1;
	up_object(u, x, depth, name, t, nh0, nd0);
	return 0;
}

static struct upd *
upd_new(void)
{
	struct upd *u = xmalloc(sizeof(*u));

	memset(u, 0, sizeof(*u));
	u->rd.s = &u->d;
	u->rd.off = 1;
	u->rd.objs = "objectSet";
	u->rd.props = "changeSet";
	return u;
}

static void
upd_free(struct upd *u)
{
	if (u == NULL)
		return;
	vs_snap_free(&u->d);
	free(u->o);
	free(u);
}

static void
upd_out(struct vs_update *out, struct upd *u)
{
	out->priv = u;
	out->have_ret = u->have_ret;
	out->truncated = u->truncated;
	out->version = u->version;
	out->nobjs = u->no;
}

int
vs_update_parse(struct vs_update *out, const char *xml, size_t len,
    char *err, size_t errlen)
{
	struct upd *u = upd_new();
	struct vx_handler h = { up_start, up_end, u };
	int rc = vx_parse(&h, xml, len, err, errlen);

	upd_out(out, u);
	if (rc == 0 && u->bad) {
		snprintf(err, errlen, "%s", u->why);
		rc = -1;
	}
	return rc;
}

void
vs_update_free(struct vs_update *up)
{
	upd_free(up->priv);
	up->priv = NULL;
}

/* ---- applying an update to the kept snapshot -------------------------- */

static void
host_free(struct vs_hostsnap *h)
{
	free(h->pnics);
	free(h->luns);
	free(h->paths);
	free(h->vdisks);
	free(h->sdisks);
}

#define TAKE(k, d, arr, n) do {					\
	free((k)->arr);							\
	(k)->arr = (d)->arr;						\
	(k)->n = (d)->n;						\
	(d)->arr = NULL;						\
	(d)->n = 0;							\
} while (0)

/* The properties of mask from d into k (d's arrays taken). */
static void
host_take(struct vs_hostsnap *k, struct vs_hostsnap *d, uint32_t mask)
{
	if (mask & 1u)
		memcpy(k->name, d->name, sizeof(k->name));
	if (mask & 2u)
		memcpy(k->conn, d->conn, sizeof(k->conn));
	if (mask & 4u)
		k->maint = d->maint;
	if (mask & 8u)
		TAKE(k, d, pnics, npnics);
	if (mask & 16u)
		TAKE(k, d, luns, nluns);
	if (mask & 32u)
		TAKE(k, d, paths, npaths);
	if (mask & 64u)
		memcpy(k->vsan_system, d->vsan_system, sizeof(k->vsan_system));
	if (mask & 128u)	/* parent: the cluster, "" when not one */
		memcpy(k->cluster, d->cluster, sizeof(k->cluster));
}

static void
ds_take(struct vs_ds *k, struct vs_ds *d, uint32_t mask)
{
	if (mask & 1u)
		memcpy(k->name, d->name, sizeof(k->name));
	if (mask & 2u)
		memcpy(k->type, d->type, sizeof(k->type));
	if (mask & 4u)
		TAKE(k, d, mounts, nmounts);
	if (mask & 8u) {
		memcpy(k->extent, d->extent, sizeof(k->extent));
		memcpy(k->nas_host, d->nas_host, sizeof(k->nas_host));
		memcpy(k->nas_path, d->nas_path, sizeof(k->nas_path));
	}
}

static int
apply_host(struct vs_snap *s, struct vs_hostsnap *d, const struct vw_obj *o)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (strcmp(s->hosts[i].moid, d->moid) == 0)
			break;
	if (o->kind == VW_LEAVE) {
		if (i < s->nhosts) {
			host_free(&s->hosts[i]);
			memmove(&s->hosts[i], &s->hosts[i + 1],
			    (s->nhosts - i - 1) * sizeof(s->hosts[0]));
			s->nhosts--;
		}
		return 0;
	}
	if (i == s->nhosts && o->kind == VW_MODIFY)
		return -1;
	if (i == s->nhosts) {
		s->hosts = xrealloc(s->hosts, (s->nhosts + 1) * sizeof(*d));
		s->nhosts++;
	} else if (o->kind == VW_ENTER)
		host_free(&s->hosts[i]);
	if (o->kind == VW_ENTER) {
		s->hosts[i] = *d;
		memset(d, 0, sizeof(*d));
	} else
		host_take(&s->hosts[i], d, o->mask);
	return 0;
}

static int
apply_ds(struct vs_snap *s, struct vs_ds *d, const struct vw_obj *o)
{
	size_t i;

	for (i = 0; i < s->nds; i++)
		if (strcmp(s->ds[i].moid, d->moid) == 0)
			break;
	if (o->kind == VW_LEAVE) {
		if (i < s->nds) {
			free(s->ds[i].mounts);
			memmove(&s->ds[i], &s->ds[i + 1],
			    (s->nds - i - 1) * sizeof(s->ds[0]));
			s->nds--;
		}
		return 0;
	}
	if (i == s->nds && o->kind == VW_MODIFY)
		return -1;
	if (i == s->nds) {
		s->ds = xrealloc(s->ds, (s->nds + 1) * sizeof(*d));
		s->nds++;
	} else if (o->kind == VW_ENTER)
		free(s->ds[i].mounts);
	if (o->kind == VW_ENTER) {
		s->ds[i] = *d;
		memset(d, 0, sizeof(*d));
	} else
		ds_take(&s->ds[i], d, o->mask);
	return 0;
}

int
vs_update_apply(struct vs_snap *s, struct vs_update *up, char *err,
    size_t errlen)
{
	struct upd *u = up->priv;
	size_t i;
	int rc;

	for (i = 0; i < u->no; i++) {
		const struct vw_obj *o = &u->o[i];

		rc = o->host ? apply_host(s, &u->d.hosts[o->idx], o) :
		    apply_ds(s, &u->d.ds[o->idx], o);
		if (rc == -1) {
			snprintf(err, errlen, "a modify of %s, which was never "
			    "entered", o->host ? u->d.hosts[o->idx].moid :
			    u->d.ds[o->idx].moid);
			return -1;
		}
	}
	return 0;
}

/* ---- the calls ---------------------------------------------------------- */

struct vs_watch *
vs_watch_new(const char *name)
{
	struct vs_watch *w = xmalloc(sizeof(*w));

	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", name);
	return w;
}

/* Forget the collector, its filter and views (destroyed when they are of
 * the current session; a new session has none of them), and the snapshot. */
static void
drop(struct vs_conn *v, struct vs_watch *w, bool destroy)
{
	char body[768], err[256];

	if (destroy && w->live && w->session == vs_session(v) &&
	    w->pc[0] != '\0') {
		snprintf(body, sizeof(body), "<DestroyPropertyCollector xmlns="
		    "\"urn:vim25\"><_this type=\"PropertyCollector\">%s</_this>"
		    "</DestroyPropertyCollector>", w->pc);
		(void)vs_call(v, body, NULL, err, sizeof(err));
		vs_drop_view(v, w->hview);
		vs_drop_view(v, w->dview);
	}
	w->live = false;
	w->pc[0] = w->hview[0] = w->dview[0] = w->version[0] = '\0';
	vs_snap_free(&w->s);
}

static void
spec_props(struct buf *b, const char *type, const char *const *props)
{
	size_t i;

	buf_printf(b, "<propSet><type>%s</type>", type);
	for (i = 0; props[i] != NULL; i++)
		buf_printf(b, "<pathSet>%s</pathSet>", props[i]);
	buf_printf(b, "</propSet>");
}

static void
spec_view(struct buf *b, const char *view)
{
	buf_printf(b, "<objectSet><obj type=\"ContainerView\">%s</obj><skip>"
	    "true</skip><selectSet xsi:type=\"TraversalSpec\"><name>view</name>"
	    "<type>ContainerView</type><path>view</path><skip>false</skip>"
	    "</selectSet></objectSet>", view);
}

/* A private collector, the views and the filter. */
static int
setup(struct vs_conn *v, struct vs_watch *w, char *err, size_t errlen)
{
	struct vx_handler h = { NULL, vs_returnval_end, NULL };
	char body[768], filter[VS_REF_MAX] = "";
	struct buf b = BUF_INIT;
	int rc;

	if (vs_login(v, err, errlen) == -1)
		return -1;
	w->session = vs_session(v);
	w->live = true;
	h.arg = w->pc;
	snprintf(body, sizeof(body), "<CreatePropertyCollector xmlns=\"urn:vim25\">"
	    "<_this type=\"PropertyCollector\">%s</_this>"
	    "</CreatePropertyCollector>", vs_service(v)->property_collector);
	if (vs_call(v, body, &h, err, errlen) == -1 ||
	    vs_make_view(v, "HostSystem", w->hview, err, errlen) == -1 ||
	    vs_make_view(v, "Datastore", w->dview, err, errlen) == -1)
		return -1;
	if (w->pc[0] == '\0') {
		snprintf(err, errlen, "CreatePropertyCollector returned none");
		return -1;
	}
	buf_init(&b, 0);
	buf_printf(&b, "<CreateFilter xmlns=\"urn:vim25\"><_this type=\""
	    "PropertyCollector\">%s</_this><spec>", w->pc);
	spec_props(&b, "HostSystem", vs_host_props);
	spec_props(&b, "Datastore", vs_ds_props);
	spec_view(&b, w->hview);
	spec_view(&b, w->dview);
	buf_printf(&b, "</spec><partialUpdates>false</partialUpdates>"
	    "</CreateFilter>");
	h.arg = filter;
	rc = vs_call(v, b.data, &h, err, errlen);
	buf_free(&b);
	if (rc == 0 && filter[0] == '\0') {
		snprintf(err, errlen, "CreateFilter returned no filter");
		rc = -1;
	}
	return rc;
}

/* WaitForUpdatesEx until not truncated, each answer applied. */
static int
updates(struct vs_conn *v, struct vs_watch *w, char *err, size_t errlen)
{
	char ever[sizeof(w->version) * 6];
	struct vs_update up;
	struct buf b = BUF_INIT;
	int rounds, rc = 0;

	buf_init(&b, 0);
	for (rounds = 0; rc == 0; rounds++) {
		struct upd *u = upd_new();
		struct vx_handler h = { up_start, up_end, u };

		if (rounds == VW_MAX_ROUNDS ||
		    vx_escape(w->version, ever, sizeof(ever)) == -1) {
			snprintf(err, errlen, "WaitForUpdatesEx: still truncated "
			    "after %d answers", rounds);
			upd_free(u);
			rc = -1;
			break;
		}
		buf_reset(&b);
		buf_printf(&b, "<WaitForUpdatesEx xmlns=\"urn:vim25\"><_this type="
		    "\"PropertyCollector\">%s</_this><version>%s</version><options>"
		    "<maxWaitSeconds>0</maxWaitSeconds><maxObjectUpdates>%d"
		    "</maxObjectUpdates></options></WaitForUpdatesEx>", w->pc, ever,
		    VW_MAX_UPDATES);
		rc = vs_call(v, b.data, &h, err, errlen);
		upd_out(&up, u);
		if (rc == 0 && u->bad) {
			snprintf(err, errlen, "WaitForUpdatesEx: %s", u->why);
			rc = -1;
		}
		if (rc == 0 && u->have_ret) {
			rc = vs_update_apply(&w->s, &up, err, errlen);
			snprintf(w->version, sizeof(w->version), "%s", u->version);
		}
		if (u->rd.overflow)
			log_limited(LOG_WARN, "vsphere:overflow", 3600, "vsphere: an "
			    "object has more than 4096 NICs, LUNs, paths or mounts: "
			    "the rest are not watched");
		w->updates += u->no;
		upd_free(u);
		if (rc == 0 && !(up.have_ret && up.truncated))
			break;
	}
	buf_free(&b);
	return rc;
}

/* What a poll fills in anew (QueryPerf, QueryDisksForVsan). */
static void
poll_reset(struct vs_snap *s)
{
	size_t i, j;

	for (i = 0; i < s->nhosts; i++) {
		struct vs_hostsnap *h = &s->hosts[i];

		for (j = 0; j < h->npnics; j++) {
			memset(h->pnics[j].have_ctr, 0, sizeof(h->pnics[j].have_ctr));
			memset(h->pnics[j].sum, 0, sizeof(h->pnics[j].sum));
			memset(h->pnics[j].cum, 0, sizeof(h->pnics[j].cum));
		}
		h->perf_ts[0] = '\0';
		h->perf_answered = false;
		free(h->vdisks);
		h->vdisks = NULL;
		h->nvdisks = 0;
		h->vsan_fresh = false;
		free(h->sdisks);
		h->sdisks = NULL;
		h->nsdisks = 0;
		h->smart_fresh = false;
	}
}

int
vs_watch_poll(struct vs_conn *v, struct vs_watch *w, char *err, size_t errlen)
{
	bool answered;

	if (w->live && w->session != vs_session(v)) {
		log_warn("vsphere %s: a new session: the property filter is gone; "
		    "reading every property again", w->name);
		drop(v, w, false);
	}
	if (w->live) {
		if (updates(v, w, err, errlen) == 0 &&
		    w->session == vs_session(v)) {
			poll_reset(&w->s);
			return 0;
		}
		/* a fault or a new session: the server is there, read all again
		 * now; a transport error (unreachable, timeout): not again in
		 * this poll (each call would wait its timeout) */
		answered = vs_last_fault(v)[0] != '\0' ||
		    w->session != vs_session(v);
		log_warn("vsphere %s: the property filter's updates failed (%s): "
		    "reading every property again%s", w->name,
		    w->session == vs_session(v) ? err : "a new session",
		    answered ? "" : " at the next poll");
		drop(v, w, answered);
		if (!answered)
			return -1;
	}
	w->full_reads++;
	err[0] = '\0';
	if (setup(v, w, err, errlen) == -1 || updates(v, w, err, errlen) == -1 ||
	    w->session != vs_session(v)) {
		if (w->session != vs_session(v) && err[0] == '\0')
			snprintf(err, errlen, "the session changed during the read");
		drop(v, w, vs_last_fault(v)[0] != '\0');
		return -1;
	}
	poll_reset(&w->s);
	return 0;
}

struct vs_snap *
vs_watch_snap(struct vs_watch *w)
{
	return &w->s;
}

uint64_t
vs_watch_full_reads(const struct vs_watch *w)
{
	return w->full_reads;
}

void
vs_watch_free(struct vs_watch *w)
{
	if (w == NULL)
		return;
	/* the session's objects go with its Logout (vs_close) */
	vs_snap_free(&w->s);
	free(w);
}
