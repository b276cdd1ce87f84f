/*
 * vspoll: one vsphere.NAME entry's poller (docs/vsphere.md).  The
 * scheduler runs it as a collector of its own (one per entry, on its own
 * thread, every vsphere.NAME.interval); each round:
 *
 *   1. one snapshot of every host (host/vsphere.h: kept between polls
 *      and patched with what changed — WaitForUpdatesEx, one request
 *      when nothing did —, read whole at the first poll or after a fault:
 *      whatever the number of hosts);
 *   2. per host wanted (vsphere.NAME.hosts): its connection state and
 *      maintenance mode as `change` events; then, while it is connected,
 *      the built-in nic and datastore collectors, unchanged, with a
 *      "vsphere" host answering from the snapshot, their previous
 *      observations kept per host (state/vsphere/NAME/HOST.COLLECTOR.kv);
 *      every event names the host (hostname), esxwatch_input: vsphere,
 *      esxwatch_vsphere: NAME and the collector (nic, datastore);
 *      vsan and smart on the polls that asked their own calls
 *      (QueryDisksForVsan per host, the vSAN health service's SMART
 *      summary per cluster, each on its collector's interval);
 *   3. the event stream (vcevents.c), when vsphere.NAME.events.
 *
 * A host's collector failing is that host's (logged); the whole poll
 * failing (unreachable, refused login, untrusted certificate) is logged
 * once per change of reason and tried again next interval.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/config/config_host.h"
#include "../agent/lib/clock.h"
#include "../agent/lib/fs.h"
#include "../agent/lib/log.h"
#include "../agent/lib/mem.h"
#include "collector.h"
#include "host/host.h"
#include "host/vsphere.h"
#include "vspoll.h"

/* n zeroed items of size sz (xmalloc's policy: out of memory is fatal). */
static void *
zalloc(size_t n, size_t sz)
{
	void *p = xmalloc(n * sz);

	memset(p, 0, n * sz);
	return p;
}

#define VP_NCOLL	4
static const char *const vp_colls[VP_NCOLL] = { "nic", "datastore", "vsan",
    "smart" };
#define VP_VSAN		2
#define VP_SMART	3

struct polled {
	char			 name[VS_NAME_MAX];
	struct collector_ctx	 ctx[VP_NCOLL];
	bool			 inited[VP_NCOLL];
};

struct vp {
	const struct vsphere_conf	*vc;
	struct vs_conn			*conn;
	struct vs_watch			*watch;	/* the snapshot, patched */
	struct polled			*hosts;
	size_t				 nhosts;
	struct vcev			*ev;
	int				 perf_ids[VS_NCTR];
	bool				 perf_tried;
	int64_t				 vsan_next_ms;	/* monotonic */
	int64_t				 smart_next_ms;
	char				 smart_gap[600];	/* said once */
	size_t				 nidx;
	char				 last_err[512];
	struct vsphere_figures		 fig;
};

/* ---- the emitter that names the polled host --------------------------- */

struct vem {
	struct emitter	 em;
	struct emitter	*up;
	const char	*host, *entry, *coll;
};

static int
name_it(struct vem *v, struct event *ev)
{
	if (ev == NULL)
		return -1;
	if (event_set_builtin(ev, "hostname", v->host) == -1 ||
	    event_set_builtin(ev, "esxwatch_collector", v->coll) == -1 ||
	    event_set_builtin(ev, "esxwatch_input", "vsphere") == -1 ||
	    event_set_builtin(ev, "esxwatch_vsphere", v->entry) == -1)
		return -1;
	return 0;
}

static int
vem_emit(struct emitter *em, struct event *ev)
{
	struct vem *v = em->arg;

	if (name_it(v, ev) == -1) {
		event_free(ev);
		return -1;
	}
	return emit(v->up, ev);
}

static size_t
vem_emit_many(struct emitter *em, struct event **evs, size_t n)
{
	struct vem *v = em->arg;
	size_t i;

	for (i = 0; i < n; i++)
		if (evs[i] != NULL && name_it(v, evs[i]) == -1) {
			event_free(evs[i]);
			evs[i] = NULL;
		}
	return emit_many(v->up, evs, n);
}

static int
vem_sync(struct emitter *em)
{
	struct vem *v = em->arg;

	return emit_sync(v->up);
}

static const struct emitter_ops vem_ops = {
	.emit = vem_emit,
	.emit_many = vem_emit_many,
	.sync = vem_sync,
};

void
vp_emitter(struct vem_slot *s, struct emitter *up, const char *host,
    const char *entry, const char *coll)
{
	struct vem *v = (struct vem *)s->opaque;

	_Static_assert(sizeof(struct vem) <= sizeof(s->opaque), "vem_slot");
	v->em.ops = &vem_ops;
	v->em.arg = v;
	v->up = up;
	v->host = host;
	v->entry = entry;
	v->coll = coll;
	s->em = &v->em;
}

/* ---- per polled host ---------------------------------------------------- */

static void
safe_name(char *out, size_t outlen, const char *in)
{
	size_t i;

	for (i = 0; in[i] != '\0' && i + 1 < outlen; i++)
		out[i] = ((in[i] >= 'a' && in[i] <= 'z') || (in[i] >= 'A' &&
		    in[i] <= 'Z') || (in[i] >= '0' && in[i] <= '9') ||
		    in[i] == '.' || in[i] == '-' || in[i] == '_') ? in[i] : '_';
	out[i] = '\0';
}

static struct kvstore *
host_state(const struct config *cfg, const char *entry, const char *host,
    const char *coll)
{
	char dir[PATH_MAX], path[PATH_MAX], e[128], h[VS_NAME_MAX];
	struct kvstore *kv;

	safe_name(e, sizeof(e), entry);
	safe_name(h, sizeof(h), host);
	if (snprintf(dir, sizeof(dir), "%s/state/vsphere/%s",
	    config_storage_dir(cfg), e) >= (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s/%s.%s.kv", dir, h, coll) >=
	    (int)sizeof(path) || fs_mkdir_p(dir, 0700) == -1)
		return kv_open(NULL);
	kv = kv_open(path);
	return kv != NULL ? kv : kv_open(NULL);
}

static const struct collector_conf *
conf_of(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->ncollectors; i++)
		if (strcmp(cfg->collectors[i].name, name) == 0)
			return cfg->collectors[i].enabled ? &cfg->collectors[i] :
			    NULL;
	return NULL;
}

static struct polled *
polled_get(struct collector_ctx *ctx, struct vp *p, const char *name)
{
	struct polled *h;
	size_t i;

	for (i = 0; i < p->nhosts; i++)
		if (strcmp(p->hosts[i].name, name) == 0)
			return &p->hosts[i];
	p->hosts = xrealloc(p->hosts, (p->nhosts + 1) * sizeof(*p->hosts));
	h = &p->hosts[p->nhosts++];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	for (i = 0; i < VP_NCOLL; i++) {
		h->ctx[i].name = vp_colls[i];
		h->ctx[i].cfg = ctx->cfg;
		h->ctx[i].conf = conf_of(ctx->cfg, vp_colls[i]);
		h->ctx[i].platform = PLATFORM_ESXI;
		h->ctx[i].figures = ctx->figures;
		if (h->ctx[i].conf != NULL)
			h->ctx[i].state = host_state(ctx->cfg, p->vc->name, name,
			    vp_colls[i]);
	}
	return h;
}

static void
polled_fini(struct polled *h)
{
	size_t i;

	for (i = 0; i < VP_NCOLL; i++) {
		const struct collector *c = collector_find(vp_colls[i]);

		if (h->inited[i] && c != NULL && c->fini != NULL)
			c->fini(&h->ctx[i]);
		if (h->ctx[i].state != NULL) {
			(void)kv_save(h->ctx[i].state);
			kv_close(h->ctx[i].state);
		}
	}
}

/* The built-in collectors for one host, from the snapshot. */
static void
run_collectors(struct collector_ctx *ctx, struct emitter *em, struct vp *p,
    struct polled *h, struct host *host)
{
	struct vem_slot slot;
	size_t i;
	int r, rounds;

	for (i = 0; i < VP_NCOLL; i++) {
		const struct collector *c = collector_find(vp_colls[i]);
		struct collector_ctx *cc = &h->ctx[i];

		if (c == NULL || cc->conf == NULL || cc->state == NULL)
			continue;
		/* vSAN: on the polls that asked QueryDisksForVsan only */
		if (i == VP_VSAN && !((const struct vs_hostsnap *)
		    vs_host_snap(host))->vsan_fresh)
			continue;
		/* SMART: on the polls the vSAN health service answered for it */
		if (i == VP_SMART && !((const struct vs_hostsnap *)
		    vs_host_snap(host))->smart_fresh)
			continue;
		cc->host = host;
		if (!h->inited[i]) {
			if (c->init != NULL && c->init(cc) != 0)
				continue;
			h->inited[i] = true;
		}
		vp_emitter(&slot, em, h->name, p->vc->name, c->name);
		rounds = 0;
		do
			r = c->collect(cc, slot.em);
		while (r == 1 && ++rounds < 32);
		if (r == -1)
			log_limited(LOG_WARN, "vsphere:collect", 300, "vsphere %s: "
			    "host %s: %s failed (see above)", p->vc->name, h->name,
			    c->name);
		(void)kv_save(cc->state);
		cc->host = NULL;
	}
	(void)ctx;
}

/* Connection state and maintenance mode: a change when they differ from
 * the last poll's (kept in the entry's state, so a restart hides none). */
static void
host_changes(struct collector_ctx *ctx, struct emitter *em, struct vp *p,
    const struct vs_hostsnap *x)
{
	struct vem_slot slot;
	char key[VS_NAME_MAX + 16];
	const char *was, *now;
	struct event *ev;
	int k;

	vp_emitter(&slot, em, x->name, p->vc->name, "vsphere");
	for (k = 0; k < 2; k++) {
		snprintf(key, sizeof(key), "%s:%s", k == 0 ? "conn" : "maint",
		    x->name);
		now = k == 0 ? x->conn : x->maint == 1 ? "yes" : x->maint == 0 ?
		    "no" : "";
		if (*now == '\0')
			continue;
		was = kv_get(ctx->state, key);
		if (was != NULL && strcmp(was, now) != 0) {
			if (k == 0)
				ev = ev_new("change", strcmp(now, "connected") == 0 ?
				    "info" : "error", "host %s: connection state %s "
				    "(was %s), as vCenter sees it", x->name, now, was);
			else
				ev = ev_new("change", "info", "host %s: %s "
				    "maintenance mode", x->name, strcmp(now, "yes") ==
				    0 ? "entered" : "left");
			if (ev != NULL) {
				(void)event_set_builtin(ev, k == 0 ?
				    "esxwatch_connection_state" :
				    "esxwatch_maintenance_mode", now);
				(void)event_set_builtin(ev, "esxwatch_state", now);
				(void)event_set_builtin(ev,
				    "esxwatch_previous_state", was);
				(void)emit(slot.em, ev);
			}
		}
		(void)kv_set(ctx->state, key, now);
	}
}

static bool
host_wanted(const struct vsphere_conf *vc, const char *name)
{
	size_t i;

	if (vc->hosts.n == 0)
		return true;
	for (i = 0; i < vc->hosts.n; i++)
		if (fnmatch(vc->hosts.v[i], name, 0) == 0)
			return true;
	return false;
}

/* ---- NIC counters from the PerformanceManager ------------------------- */

/* The cumulated sums of a host's pnics, kept in its nic state:
 * vsperf:ts (the newest sample read), vsperf:NIC:K (the sum since the
 * host was first polled). */
static void
perf_apply(struct polled *h, struct vs_hostsnap *x, bool had_since)
{
	struct kvstore *st = h->ctx[0].state;
	char key[128], num[32];
	const char *v;
	size_t i;
	int k;

	for (i = 0; i < x->npnics; i++) {
		struct vs_pnic *pn = &x->pnics[i];

		for (k = 0; k < VS_NCTR; k++) {
			if (!pn->have_ctr[k])
				continue;
			snprintf(key, sizeof(key), "vsperf:%s:%d", pn->device, k);
			v = kv_get(st, key);
			pn->cum[k] = (v != NULL ? strtoull(v, NULL, 10) : 0) +
			    (had_since ? pn->sum[k] : 0);
			snprintf(num, sizeof(num), "%llu",
			    (unsigned long long)pn->cum[k]);
			(void)kv_set(st, key, num);
		}
	}
	if (x->perf_answered)
		(void)kv_set(st, "vsperf:ts", x->perf_ts);
}

/* QueryPerf for the hosts idx[0..n-1] (batched), their sums applied. */
static void
perf_round(struct collector_ctx *ctx, struct vp *p, struct vs_snap *s,
    const size_t *idx, size_t n)
{
	const char *since[VS_PERF_BATCH];
	size_t i, j, m;
	char err[512];
	int k, have = 0;

	if (!p->perf_tried) {
		p->perf_tried = true;
		if (vs_perf_ids(p->conn, p->perf_ids, err, sizeof(err)) == -1)
			log_warn("vsphere %s: the PerformanceManager's counters are "
			    "unreadable (%s): NIC error and drop counters absent",
			    p->vc->name, err);
	}
	for (k = 0; k < VS_NCTR; k++)
		have += p->perf_ids[k] >= 0;
	if (have == 0 || conf_of(ctx->cfg, "nic") == NULL)
		return;
	for (i = 0; i < n; i += m) {
		m = n - i < VS_PERF_BATCH ? n - i : VS_PERF_BATCH;
		for (j = 0; j < m; j++) {
			struct polled *h = polled_get(ctx, p,
			    s->hosts[idx[i + j]].name);

			since[j] = h->ctx[0].state != NULL ?
			    kv_get(h->ctx[0].state, "vsperf:ts") : NULL;
		}
		if (vs_perf_query(p->conn, p->perf_ids, s, idx + i, since, m, err,
		    sizeof(err)) == -1) {
			log_limited(LOG_WARN, "vsphere:perf", 300, "vsphere %s: "
			    "QueryPerf: %s (NIC counters of %zu hosts absent this "
			    "poll)", p->vc->name, err, m);
			for (j = 0; j < m; j++)
				for (size_t q = 0; q < s->hosts[idx[i + j]].npnics; q++)
					memset(s->hosts[idx[i + j]].pnics[q].have_ctr, 0,
					    sizeof(s->hosts[0].pnics[0].have_ctr));
			continue;
		}
		for (j = 0; j < m; j++)
			perf_apply(polled_get(ctx, p, s->hosts[idx[i + j]].name),
			    &s->hosts[idx[i + j]], since[j] != NULL &&
			    since[j][0] != '\0');
	}
}

/* ---- vSAN disk eligibility --------------------------------------------- */

/* QueryDisksForVsan per host with a HostVsanSystem, every
 * collectors.vsan.interval (one request per host: not every poll). */
static void
vsan_round(struct collector_ctx *ctx, struct vp *p, struct vs_snap *s,
    const size_t *idx, size_t n)
{
	const struct collector_conf *vc = conf_of(ctx->cfg, "vsan");
	int64_t now = mono_ms();
	char err[512];
	size_t i;

	if (vc == NULL || now < p->vsan_next_ms)
		return;
	p->vsan_next_ms = now + (int64_t)(vc->interval > 0 ? vc->interval : 300) *
	    1000;
	for (i = 0; i < n; i++) {
		struct vs_hostsnap *x = &s->hosts[idx[i]];

		if (x->vsan_system[0] == '\0')
			continue;
		if (vs_vsan_query(p->conn, x, err, sizeof(err)) == -1)
			log_limited(LOG_WARN, "vsphere:vsan", 300, "vsphere %s: host "
			    "%s: QueryDisksForVsan: %s (vSAN disk states absent "
			    "this poll)", p->vc->name, x->name, err);
	}
}

/* ---- SMART from the vSAN health service --------------------------------- */

/* Why SMART is absent for this entry, said once per reason. */
static void
smart_gap(struct vp *p, const char *why)
{
	if (strcmp(p->smart_gap, why) == 0)
		return;
	snprintf(p->smart_gap, sizeof(p->smart_gap), "%s", why);
	log_warn("vsphere %s: %s", p->vc->name, why);
}

/* One VsanQueryVcClusterSmartStatsSummary per cluster of the hosts
 * idx[0..n-1], every collectors.smart.interval; the hosts outside a
 * cluster, or of a server without the service, have no SMART (absent). */
static void
smart_round(struct collector_ctx *ctx, struct vp *p, struct vs_snap *s,
    const size_t *idx, size_t n)
{
	const struct collector_conf *sc = conf_of(ctx->cfg, "smart");
	const struct vs_service *svc = vs_service(p->conn);
	int64_t now = mono_ms();
	size_t i, j, alone = 0;
	char err[400], why[600];
	bool failed = false;

	if (sc == NULL || now < p->smart_next_ms)
		return;
	p->smart_next_ms = now + (int64_t)(sc->interval > 0 ? sc->interval :
	    3600) * 1000;
	if (strcmp(svc->api_type, "VirtualCenter") != 0) {
		smart_gap(p, "SMART absent: the vSAN health service "
		    "(VsanQueryVcClusterSmartStatsSummary) is vCenter's; this "
		    "server is not a vCenter");
		return;
	}
	for (i = 0; i < n; i++) {
		struct vs_hostsnap *x = &s->hosts[idx[i]];
		struct vs_smart ans;

		if (x->cluster[0] == '\0') {
			alone++;
			continue;
		}
		for (j = 0; j < i; j++)	/* asked already for an earlier host */
			if (strcmp(s->hosts[idx[j]].cluster, x->cluster) == 0)
				break;
		if (j < i)
			continue;
		if (vs_smart_query(p->conn, x->cluster, &ans, err,
		    sizeof(err)) == -1) {
			snprintf(why, sizeof(why), "SMART absent: the vSAN health "
			    "service (/vsanHealth, VsanQueryVcClusterSmartStats"
			    "Summary) did not answer: %s", err);
			smart_gap(p, why);
			failed = true;
			continue;
		}
		if (ans.overflow)
			log_limited(LOG_WARN, "vsphere:smart-overflow", 3600,
			    "vsphere %s: the vSAN health service's answer for "
			    "cluster %s has more disks or hosts than kept (%zu "
			    "disks): the rest have no SMART", p->vc->name,
			    x->cluster, ans.n);
		for (j = i; j < n; j++) {
			struct vs_hostsnap *y = &s->hosts[idx[j]];

			if (strcmp(y->cluster, x->cluster) != 0)
				continue;
			vs_smart_take(y, &ans);
			if (!y->smart_fresh)
				log_limited(LOG_WARN, "vsphere:smart-unnamed", 3600,
				    "vsphere %s: host %s: the vSAN health service's "
				    "answer for its cluster %s does not name it: its "
				    "SMART is absent", p->vc->name, y->name, x->cluster);
		}
		vs_smart_free(&ans);
	}
	if (alone > 0 && !failed) {
		snprintf(why, sizeof(why), "SMART absent for %zu host(s) outside "
		    "a cluster: the vSAN health service summarises clusters only",
		    alone);
		smart_gap(p, why);
	} else if (!failed && p->smart_gap[0] != '\0') {
		log_info("vsphere %s: SMART from the vSAN health service",
		    p->vc->name);
		p->smart_gap[0] = '\0';
	}
}

/* ---- the collector ------------------------------------------------------ */

static int
vp_init(struct collector_ctx *ctx)
{
	struct vp *p = zalloc(1, sizeof(*p));

	p->vc = ctx->conf->opts;
	snprintf(p->fig.name, sizeof(p->fig.name), "%s", p->vc->name);
	snprintf(p->fig.state, sizeof(p->fig.state), "starting");
	ctx->priv = p;
	log_limited(LOG_INFO, "vsphere:absent", 86400, "vsphere %s: through "
	    "the API, NIC CRC counters are absent (no API property has them): "
	    "the nic events carry no esxwatch_rx_crc_errors; SMART comes from "
	    "vCenter's vSAN health service for hosts in a cluster; vSAN disk "
	    "eligibility from QueryDisksForVsan where a host has a vSAN system",
	    p->vc->name);
	return 0;
}

static void
fail(struct collector_ctx *ctx, struct vp *p, const char *state,
    const char *err)
{
	if (strcmp(p->last_err, err) != 0)
		log_error("vsphere %s: %s: %s", p->vc->name, p->vc->url, err);
	snprintf(p->last_err, sizeof(p->last_err), "%s", err);
	snprintf(p->fig.state, sizeof(p->fig.state), "%s", state);
	snprintf(p->fig.last_error, sizeof(p->fig.last_error), "%s", err);
	p->fig.errors++;
	vsphere_publish(ctx, &p->fig);
}

static int
connect_once(struct collector_ctx *ctx, struct vp *p, char *err, size_t errlen)
{
	struct vs_endpoint ep = {
		.cfg = ctx->cfg, .name = p->vc->name, .url = p->vc->url,
		.username = p->vc->username, .password_file = p->vc->password_file,
		.trust = p->vc->trust, .ca = p->vc->ca,
		.timeout_s = p->vc->timeout,
	};

	if (p->conn != NULL)
		return 0;
	p->conn = vs_open(&ep, err, errlen);
	return p->conn != NULL ? 0 : -1;
}

static int
vp_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct vp *p = ctx->priv;
	struct vs_snap *s;
	char err[512];
	size_t i, n = 0, *idx;
	uint64_t req0;

	if (connect_once(ctx, p, err, sizeof(err)) == -1) {
		fail(ctx, p, "error", err);
		return -1;
	}
	req0 = vs_requests(p->conn);
	if (p->watch == NULL)
		p->watch = vs_watch_new(p->vc->name);
	if (vs_watch_poll(p->conn, p->watch, err, sizeof(err)) == -1) {
		fail(ctx, p, "error", err);
		return -1;
	}
	s = vs_watch_snap(p->watch);
	/* the hosts wanted and connected (a host vCenter cannot reach has
	 * only vCenter's stale copy of its facts) */
	idx = xmalloc((s->nhosts ? s->nhosts : 1) * sizeof(*idx));
	for (i = 0; i < s->nhosts; i++) {
		const struct vs_hostsnap *x = &s->hosts[i];

		if (x->name[0] == '\0' || !host_wanted(p->vc, x->name))
			continue;
		p->fig.hosts = ++n;
		host_changes(ctx, em, p, x);
		if (strcmp(x->conn, "connected") == 0)
			idx[p->nidx++] = i;
	}
	perf_round(ctx, p, s, idx, p->nidx);
	vsan_round(ctx, p, s, idx, p->nidx);
	smart_round(ctx, p, s, idx, p->nidx);
	for (i = 0; i < p->nidx; i++) {
		struct host *host = vs_host_open(s, idx[i]);

		run_collectors(ctx, em, p, polled_get(ctx, p, s->hosts[idx[i]].name),
		    host);
		host_close(host);
	}
	p->nidx = 0;
	free(idx);
	if (p->vc->events && vcev_poll(ctx, em, p->conn, &p->ev,
	    &p->fig.events, &p->fig.event_gaps, err, sizeof(err)) == -1) {
		fail(ctx, p, "error", err);
		return -1;
	}
	if (p->last_err[0] != '\0')
		log_info("vsphere %s: polling again (%zu hosts)", p->vc->name, n);
	p->last_err[0] = '\0';
	snprintf(p->fig.state, sizeof(p->fig.state), "ok");
	p->fig.last_error[0] = '\0';
	p->fig.hosts = n;
	p->fig.polls++;
	p->fig.last_poll_ms = now_ms();
	p->fig.last_requests = vs_requests(p->conn) - req0;
	vsphere_publish(ctx, &p->fig);
	return 0;
}

static void
vp_fini(struct collector_ctx *ctx)
{
	struct vp *p = ctx->priv;
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nhosts; i++)
		polled_fini(&p->hosts[i]);
	free(p->hosts);
	vcev_free(p->ev);
	vs_watch_free(p->watch);
	vs_close(p->conn);
	free(p);
	ctx->priv = NULL;
}

void
vsphere_publish(struct collector_ctx *ctx, const struct vsphere_figures *f)
{
	if (ctx->figures != NULL && ctx->figures->publish != NULL)
		(void)ctx->figures->publish(ctx->figures->arg, VSPHERE_FIGURES, f);
}

const struct collector vsphere_poller = {
	.name = "vsphere",
	.default_interval = 60,
	.init = vp_init,
	.collect = vp_collect,
	.fini = vp_fini,
};
