/*
 * datastore: is every datastore and the device behind it reachable?
 *
 * ESXi: six esxcli queries (device list, path list, vmfs extent list,
 * filesystem list, nfs list, nfs41 list), ONE per collect() call so that a
 * slow or hung esxcli costs at most one timeout before the other
 * collectors get their turn; then storage_ds derives one state per device
 * and per datastore: ok, degraded, apd, pdl, off, inaccessible, unmounted.
 * A device that looks unwell is checked against `vdq -q` for IsPDL.
 *
 * Linux: the NFS/CIFS mounts of /proc/self/mountinfo (ESXWATCH_MOUNTINFO
 * overrides the path, a test hook), each probed with statfs() in a forked
 * child that is given a few seconds: a hung NFS server can wedge the
 * child, never the agent.
 *
 * Events (docs/events.md): a sample per device and datastore every
 * interval, a change when a state differs from the one kept in ctx->state,
 * an alert (critical) when a device enters APD or PDL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../agent/lib/clock.h"
#include "../agent/lib/exec.h"
#include "../agent/lib/log.h"
#include "host/esxcli.h"
#include "host/host.h"
#include "host/mounts.h"
#include "storage_ds.h"
#include "storage_util.h"
#include "host/vdq.h"

/* A degraded path count that lasts this long becomes the new normal. */
#define DS_BASELINE_ACCEPT_S	(24 * 3600)
#define DS_PROBE_MAX_S		5

enum { Q_DEVS, Q_PATHS, Q_EXTENTS, Q_FS, Q_NFS, Q_NFS41, Q_N };

static const char *const *const queries[Q_N] = {
	(const char *const[]){ "storage", "core", "device", "list", NULL },
	(const char *const[]){ "storage", "core", "path", "list", NULL },
	(const char *const[]){ "storage", "vmfs", "extent", "list", NULL },
	(const char *const[]){ "storage", "filesystem", "list", NULL },
	(const char *const[]){ "storage", "nfs", "list", NULL },
	(const char *const[]){ "storage", "nfs41", "list", NULL },
};

struct ds_priv {
	int		 step;
	struct esx_out	 out[Q_N];
	bool		 ok[Q_N];
};

static void
round_reset(struct ds_priv *p)
{
	int	 i;

	for (i = 0; i < Q_N; i++) {
		esx_out_free(&p->out[i]);
		p->ok[i] = false;
	}
	p->step = 0;
}

static void
cmd_name(int q, char *out, size_t outlen)
{
	size_t	 off = (size_t)snprintf(out, outlen, "esxcli");
	int	 i;

	for (i = 0; queries[q][i] != NULL && off < outlen; i++)
		off += (size_t)snprintf(out + off, outlen - off, " %s", queries[q][i]);
}

static int
ds_init(struct collector_ctx *ctx)
{
	struct ds_priv *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return -1;
	ctx->priv = p;
	return 0;
}

static void
ds_fini(struct collector_ctx *ctx)
{
	struct ds_priv *p = ctx->priv;

	if (p == NULL)
		return;
	round_reset(p);
	free(p);
	ctx->priv = NULL;
}

/* ---- ESXi ----------------------------------------------------------------- */

/* Ask vdq for PDL evidence about the devices that look unwell. */
static void
pdl_evidence(struct collector_ctx *ctx, struct ds_snap *s)
{
	static const char *const args[] = { "-q", NULL };
	struct exec_result res;
	struct vdq_result vr;
	char	 what[256], err[160];
	int	 missing;
	size_t	 i;
	bool	 any = false;

	for (i = 0; i < s->ndev; i++)
		if (ds_dev_suspect(&s->devs[i]))
			any = true;
	if (!any)
		return;
	if (storage_run(ctx, "vdq", args, storage_timeout_s(ctx), &res, &missing,
	    what, sizeof(what)) == -1 || res.status != 0) {
		exec_result_free(&res);
		return;		/* supplementary: logged by storage_run, if at all */
	}
	if (vdq_parse(res.out, res.out_len, &vr, err, sizeof(err)) == 0) {
		for (i = 0; i < vr.n; i++) {
			struct ds_dev *d = ds_find_dev(s, vr.disks[i].name);

			if (d != NULL && strcmp(vr.disks[i].is_pdl, "1") == 0)
				d->pdl_evidence = true;
		}
		vdq_result_free(&vr);
	} else
		log_limited(LOG_WARN, "datastore:vdq", 3600,
		    "datastore: vdq -q: %s", err);
	exec_result_free(&res);
}

/* The device's state, keeping its path baseline in ctx->state. */
static enum ds_state
dev_state(struct collector_ctx *ctx, const struct ds_dev *d, int *baseline_out)
{
	char	 kb[DS_NAME_MAX + 16], ks[DS_NAME_MAX + 16], v[32];
	const char *bs, *ss;
	int	 base, live = d->active + d->standby;
	long long since;
	enum ds_state st;

	snprintf(kb, sizeof(kb), "base:%s", d->id);
	snprintf(ks, sizeof(ks), "degsince:%s", d->id);
	bs = kv_get(ctx->state, kb);
	base = bs ? atoi(bs) : 0;
	st = ds_dev_state(d, base);
	if (live >= base) {
		if (live > base) {
			snprintf(v, sizeof(v), "%d", live);
			(void)kv_set(ctx->state, kb, v);
			base = live;
		}
		(void)kv_del(ctx->state, ks);
	} else if (st == DS_DEGRADED && d->dead == 0 && live > 0) {
		/* Fewer paths than before, none dead: removed on purpose, or
		 * lost.  Say so for a day, then take the new count as normal. */
		ss = kv_get(ctx->state, ks);
		since = ss ? atoll(ss) : 0;
		if (since == 0) {
			snprintf(v, sizeof(v), "%lld", (long long)time(NULL));
			(void)kv_set(ctx->state, ks, v);
		} else if (time(NULL) - since > DS_BASELINE_ACCEPT_S) {
			snprintf(v, sizeof(v), "%d", live);
			(void)kv_set(ctx->state, kb, v);
			(void)kv_del(ctx->state, ks);
			base = live;
			st = ds_dev_state(d, base);
		}
	}
	*baseline_out = base;
	return st;
}

static void
set_paths(struct event *ev, const struct ds_dev *d)
{
	(void)event_set_i64(ev, "esxwatch_paths_active", d->active);
	(void)event_set_i64(ev, "esxwatch_paths_dead", d->dead);
	(void)event_set_i64(ev, "esxwatch_paths_standby", d->standby);
	(void)event_set_i64(ev, "esxwatch_paths_total", d->total);
}

static void
dev_fields(struct event *ev, const struct ds_dev *d, enum ds_state st)
{
	(void)event_set(ev, "esxwatch_entity", "device");
	(void)event_set(ev, "esxwatch_device", d->id);
	(void)event_set(ev, "esxwatch_datastore", d->datastores);
	(void)event_set(ev, "esxwatch_state", ds_state_name(st));
	(void)event_set(ev, "esxwatch_fs_type", d->fs_type);
	(void)event_set(ev, "esxwatch_device_status", d->status);
	set_paths(ev, d);
}

static void
dev_why(const struct ds_dev *d, enum ds_state st, int base, char *out, size_t len)
{
	switch (st) {
	case DS_APD:
		snprintf(out, len, "all %d paths dead", d->total);
		break;
	case DS_PDL:
		snprintf(out, len, "permanent device loss (status %s%s)", d->status,
		    d->pdl_evidence ? ", vdq IsPDL 1" : "");
		break;
	case DS_OFF:
		snprintf(out, len, "device %s", d->offline ? "offline" : "turned off");
		break;
	case DS_DEGRADED:
		snprintf(out, len, "status %s, %d of %d paths active, %d dead%s",
		    d->status, d->active, d->total, d->dead,
		    base > d->active + d->standby ? ", fewer live paths than before" : "");
		break;
	default:
		snprintf(out, len, "status %s, %d of %d paths active", d->status,
		    d->active, d->total);
		break;
	}
}

static void
emit_device(struct collector_ctx *ctx, struct emitter *em, const struct ds_dev *d,
    enum ds_state st, int base)
{
	char	 key[DS_NAME_MAX + 16], prev[32], why[200], on[DS_LIST_MAX + 32];
	struct event *ev;
	enum storage_seen seen;

	dev_why(d, st, base, why, sizeof(why));
	snprintf(on, sizeof(on), "%s%s%s", d->datastores[0] ? " (datastore " : "",
	    d->datastores, d->datastores[0] ? ")" : "");
	ev = ev_new("sample", "info", "device %s%s: %s: %s", d->id, on,
	    ds_state_name(st), why);
	if (ev != NULL) {
		dev_fields(ev, d, st);
		(void)emit(em, ev);
	}
	snprintf(key, sizeof(key), "dev:%s", d->id);
	seen = storage_transition(ctx->state, key, ds_state_name(st), prev, sizeof(prev));
	if (seen == STORAGE_CHANGED) {
		ev = ev_new("change", ds_state_severity(st),
		    "device %s%s changed from %s to %s: %s", d->id, on, prev,
		    ds_state_name(st), why);
		if (ev != NULL) {
			dev_fields(ev, d, st);
			(void)event_set(ev, "esxwatch_previous_state", prev);
			(void)emit(em, ev);
		}
	}
	/* APD and PDL are alerts, once per episode (kept across restarts). */
	snprintf(key, sizeof(key), "alerted:%s", d->id);
	if (st == DS_APD || st == DS_PDL) {
		const char *was = kv_get(ctx->state, key);

		if (was == NULL || strcmp(was, ds_state_name(st)) != 0) {
			ev = ev_new("alert", "critical", "device %s%s is in %s: %s",
			    d->id, on, st == DS_APD ? "All Paths Down" :
			    "Permanent Device Loss", why);
			if (ev != NULL) {
				dev_fields(ev, d, st);
				(void)emit(em, ev);
			}
			(void)kv_set(ctx->state, key, ds_state_name(st));
		}
	} else
		(void)kv_del(ctx->state, key);
}

static void
vol_fields(struct event *ev, const struct ds_snap *s, const struct ds_vol *v,
    enum ds_state st)
{
	size_t	 i;
	int	 act = 0, dead = 0;

	(void)event_set(ev, "esxwatch_entity", "datastore");
	(void)event_set(ev, "esxwatch_datastore", v->name);
	(void)event_set(ev, "esxwatch_device", v->devices);
	(void)event_set(ev, "esxwatch_state", ds_state_name(st));
	(void)event_set(ev, "esxwatch_fs_type", v->fs_type);
	if (v->mount[0] != '\0')
		(void)event_set(ev, "esxwatch_mount_point", v->mount);
	if (v->nfs) {
		(void)event_set(ev, "esxwatch_nfs_host", v->host);
		(void)event_set(ev, "esxwatch_nfs_share", v->share);
		return;
	}
	for (i = 0; i < s->ndev; i++)
		if (ds_in_list(v->devices, s->devs[i].id)) {
			act += s->devs[i].active;
			dead += s->devs[i].dead;
		}
	(void)event_set_i64(ev, "esxwatch_paths_active", act);
	(void)event_set_i64(ev, "esxwatch_paths_dead", dead);
}

static void
emit_volume(struct collector_ctx *ctx, struct emitter *em, const struct ds_snap *s,
    const struct ds_vol *v, enum ds_state st)
{
	char	 key[DS_NAME_MAX + 16], prev[32], what[DS_LIST_MAX + DS_NAME_MAX + 64];
	struct event *ev;

	if (v->nfs)
		snprintf(what, sizeof(what), "%s %s:%s", v->fs_type, v->host, v->share);
	else
		snprintf(what, sizeof(what), "%s on %s", v->fs_type[0] ? v->fs_type :
		    "volume", v->devices[0] ? v->devices : "no known device");
	ev = ev_new("sample", "info", "datastore %s (%s): %s", v->name, what,
	    ds_state_name(st));
	if (ev != NULL) {
		vol_fields(ev, s, v, st);
		(void)emit(em, ev);
	}
	snprintf(key, sizeof(key), "ds:%s", v->name);
	if (storage_transition(ctx->state, key, ds_state_name(st), prev,
	    sizeof(prev)) == STORAGE_CHANGED) {
		ev = ev_new("change", ds_state_severity(st),
		    "datastore %s (%s) changed from %s to %s", v->name, what, prev,
		    ds_state_name(st));
		if (ev != NULL) {
			vol_fields(ev, s, v, st);
			(void)event_set(ev, "esxwatch_previous_state", prev);
			(void)emit(em, ev);
		}
	}
}

/* Datastores seen before (ctx->state) that no list shows any more. */
struct gone {
	const struct ds_snap *s;
	char	**names;
	size_t	  n;
};

static int
gone_cb(void *arg, const char *key, const char *value)
{
	struct gone *g = arg;
	const char *name = key + 3;		/* after "ds:" */
	size_t	 i;
	char	**nn;

	if (strcmp(value, ds_state_name(DS_UNMOUNTED)) == 0)
		return 0;			/* already said */
	for (i = 0; i < g->s->nvol; i++)
		if (strcmp(g->s->vols[i].name, name) == 0)
			return 0;
	if (g->n >= 256)
		return 1;
	nn = realloc(g->names, (g->n + 1) * sizeof(*nn));
	if (nn == NULL)
		return 1;
	g->names = nn;
	g->names[g->n] = strdup(name);
	if (g->names[g->n] != NULL)
		g->n++;
	return 0;
}

/*
 * A datastore that vanished from every list (unmounted and removed, or
 * its device removed after a PDL) is reported once as unmounted.  Only
 * when every list was read: a failed list must not look like a vanished
 * datastore.
 */
static void
report_gone(struct collector_ctx *ctx, struct emitter *em, const struct ds_snap *s)
{
	struct gone g = { s, NULL, 0 };
	char	 key[DS_NAME_MAX + 16], prev[32];
	size_t	 i;

	(void)kv_foreach(ctx->state, "ds:", gone_cb, &g);
	for (i = 0; i < g.n; i++) {
		struct event *ev;

		snprintf(key, sizeof(key), "ds:%s", g.names[i]);
		ev = NULL;
		if (storage_transition(ctx->state, key, ds_state_name(DS_UNMOUNTED),
		    prev, sizeof(prev)) == STORAGE_CHANGED)
			ev = ev_new("change", ds_state_severity(DS_UNMOUNTED),
			    "datastore %s changed from %s to unmounted: the host no "
			    "longer lists it", g.names[i], prev);
		if (ev != NULL) {
			(void)event_set(ev, "esxwatch_entity", "datastore");
			(void)event_set(ev, "esxwatch_datastore", g.names[i]);
			(void)event_set(ev, "esxwatch_device", "");
			(void)event_set(ev, "esxwatch_state", "unmounted");
			(void)event_set(ev, "esxwatch_fs_type", "");
			(void)event_set(ev, "esxwatch_previous_state", prev);
			(void)emit(em, ev);
		}
		free(g.names[i]);
	}
	free(g.names);
}

static bool
wanted(const struct collector_ctx *ctx, const char *name)
{
	return strlist_match(&ctx->conf->include, &ctx->conf->exclude, name);
}

static int
evaluate(struct collector_ctx *ctx, struct emitter *em, struct ds_priv *p)
{
	struct ds_snap s;
	enum ds_state *devst;
	int	*base;
	char	 err[200];
	size_t	 i;

	if (ds_snap_build(&s, &p->out[Q_DEVS], &p->out[Q_PATHS],
	    p->ok[Q_EXTENTS] ? &p->out[Q_EXTENTS] : NULL,
	    p->ok[Q_FS] ? &p->out[Q_FS] : NULL, p->ok[Q_NFS] ? &p->out[Q_NFS] : NULL,
	    p->ok[Q_NFS41] ? &p->out[Q_NFS41] : NULL, err, sizeof(err)) == -1) {
		log_limited(LOG_ERROR, "datastore:build", 300, "datastore: %s", err);
		storage_cmd_failed(ctx, em, "esxcli storage core device list",
		    "datastore: cannot read the host's storage: %s", err);
		return -1;
	}
	storage_cmd_ok(ctx, "esxcli storage core device list");
	pdl_evidence(ctx, &s);
	devst = calloc(s.ndev + 1, sizeof(*devst));
	base = calloc(s.ndev + 1, sizeof(*base));
	if (devst == NULL || base == NULL) {
		free(devst);
		free(base);
		ds_snap_free(&s);
		return -1;
	}
	for (i = 0; i < s.ndev; i++)
		devst[i] = dev_state(ctx, &s.devs[i], &base[i]);
	for (i = 0; i < s.ndev; i++)
		if (wanted(ctx, s.devs[i].id))
			emit_device(ctx, em, &s.devs[i], devst[i], base[i]);
	for (i = 0; i < s.nvol; i++)
		if (wanted(ctx, s.vols[i].name))
			emit_volume(ctx, em, &s, &s.vols[i],
			    ds_vol_state(&s, &s.vols[i], devst));
	if (p->ok[Q_EXTENTS] && p->ok[Q_FS] && p->ok[Q_NFS] && p->ok[Q_NFS41])
		report_gone(ctx, em, &s);
	free(devst);
	free(base);
	ds_snap_free(&s);
	return 0;
}

static int
collect_esxi(struct collector_ctx *ctx, struct emitter *em, struct ds_priv *p)
{
	int	 q = p->step, t = storage_timeout_s(ctx), rc;
	int64_t	 t0 = mono_ms();
	char	 cmd[128];

	cmd_name(q, cmd, sizeof(cmd));
	if (host_esxcli(ctx->host, t, queries[q], &p->out[q]) == 0) {
		p->ok[q] = true;
		if (q != Q_DEVS)
			storage_cmd_ok(ctx, cmd);
	} else {
		bool timed_out = mono_ms() - t0 >= (int64_t)t * 1000 - 50;

		storage_cmd_failed(ctx, em, cmd, "datastore: `%s` %s", cmd,
		    timed_out ? "timed out" : "failed (see the agent log)");
		/* Without devices and paths there is nothing to say; after a
		 * timeout the next query would most likely hang as well. */
		if (q == Q_DEVS || q == Q_PATHS || timed_out) {
			round_reset(p);
			return -1;
		}
	}
	if (++p->step < Q_N)
		return 1;
	rc = evaluate(ctx, em, p);
	round_reset(p);
	return rc;
}

static int
collect_linux(struct collector_ctx *ctx, struct emitter *em, struct ds_priv *p)
{
	struct host_mount *m = NULL;
	int	 t = storage_timeout_s(ctx), n, i;

	(void)p;
	n = host_mounts(ctx->host, t < DS_PROBE_MAX_S ? t : DS_PROBE_MAX_S, &m);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		enum ds_state st = m[i].answered ? DS_OK : DS_INACCESSIBLE;
		char	 key[1100], prev[32];
		struct event *ev;
		int	 k;

		if (!wanted(ctx, m[i].point))
			continue;
		for (k = 0; k < 2; k++) {
			if (k == 0)
				ev = ev_new("sample", "info", "datastore %s (%s %s): %s",
				    m[i].point, m[i].fstype, m[i].source,
				    ds_state_name(st));
			else {
				snprintf(key, sizeof(key), "ds:%s", m[i].point);
				if (storage_transition(ctx->state, key,
				    ds_state_name(st), prev, sizeof(prev)) !=
				    STORAGE_CHANGED)
					break;
				ev = ev_new("change", ds_state_severity(st),
				    "datastore %s (%s %s) changed from %s to %s%s",
				    m[i].point, m[i].fstype, m[i].source, prev,
				    ds_state_name(st), m[i].answered ? "" :
				    ": statfs() failed or did not answer");
			}
			if (ev == NULL)
				continue;
			(void)event_set(ev, "esxwatch_entity", "datastore");
			(void)event_set(ev, "esxwatch_device", "");
			(void)event_set(ev, "esxwatch_datastore", m[i].point);
			(void)event_set(ev, "esxwatch_state", ds_state_name(st));
			(void)event_set(ev, "esxwatch_fs_type", m[i].fstype);
			(void)event_set(ev, "esxwatch_mount_point", m[i].point);
			(void)event_set(ev, "esxwatch_nfs_share", m[i].source);
			if (k == 1)
				(void)event_set(ev, "esxwatch_previous_state", prev);
			(void)emit(em, ev);
		}
	}
	free(m);
	return 0;
}

static int
ds_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct ds_priv *p = ctx->priv;

	if (p == NULL)
		return -1;
	if (ctx->platform == PLATFORM_ESXI)
		return collect_esxi(ctx, em, p);
	return collect_linux(ctx, em, p);
}

const struct collector collector_datastore = {
	.name = "datastore",
	.default_interval = 30,
	.init = ds_init,
	.collect = ds_collect,
	.fini = ds_fini,
};
