/*
 * vsan: will vSAN claim each local disk, and if not, why?
 *
 * ESXi only: `vdq -q` (in /usr/lib/vmware/vsan/bin; host.tools_dir first),
 * read with the tolerant vdq parser.  One sample per disk every interval;
 * a change when its eligibility differs from the one kept in ctx->state.
 * An ineligible disk whose reason is "Has partitions" says in its text how
 * to look at those partitions.  Elsewhere the collector says once that it
 * does not apply and stays quiet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../agent/lib/exec.h"
#include "../agent/lib/log.h"
#include "storage_util.h"
#include "host/vdq.h"

#define VDQ_CMD	"vdq -q"

struct vsan_priv {
	bool	 noted;		/* "not applicable" said */
};

static int
vsan_init(struct collector_ctx *ctx)
{
	ctx->priv = calloc(1, sizeof(struct vsan_priv));
	return ctx->priv ? 0 : -1;
}

static void
vsan_fini(struct collector_ctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

static void
disk_fields(struct event *ev, const struct vdq_disk *d, enum vdq_state st)
{
	(void)event_set(ev, "esxwatch_device", d->name);
	(void)event_set(ev, "esxwatch_vsan_state", vdq_state_name(st));
	(void)event_set(ev, "esxwatch_vsan_state_text", d->state);
	(void)event_set(ev, "esxwatch_reason", d->reason);
	if (d->is_ssd[0] != '\0')
		(void)event_set(ev, "esxwatch_is_ssd", d->is_ssd);
	if (d->is_capacity_flash[0] != '\0')
		(void)event_set(ev, "esxwatch_is_capacity_flash", d->is_capacity_flash);
	if (d->is_pdl[0] != '\0')
		(void)event_set(ev, "esxwatch_is_pdl", d->is_pdl);
	if (d->size_mb[0] != '\0')
		(void)event_set(ev, "esxwatch_size_mb", d->size_mb);
	if (d->format_type[0] != '\0')
		(void)event_set(ev, "esxwatch_format_type", d->format_type);
	if (d->vsan_uuid[0] != '\0')
		(void)event_set(ev, "esxwatch_vsan_uuid", d->vsan_uuid);
	if (d->storage_pool_state[0] != '\0')
		(void)event_set(ev, "esxwatch_storage_pool_state", d->storage_pool_state);
	if (d->storage_pool_reason[0] != '\0')
		(void)event_set(ev, "esxwatch_storage_pool_reason", d->storage_pool_reason);
	if (d->is_vsan_direct[0] != '\0')
		(void)event_set(ev, "esxwatch_is_vsan_direct", d->is_vsan_direct);
}

/* The text's tail: the reason, and for partitions how to see them. */
static void
why(const struct vdq_disk *d, enum vdq_state st, char *out, size_t len)
{
	if (st == VDQ_INELIGIBLE && strcasecmp(d->reason, "Has partitions") == 0)
		snprintf(out, len, "reason: Has partitions (see them with "
		    "`partedUtil getptbl /vmfs/devices/disks/%s`; vSAN claims "
		    "only disks without partitions)", d->name);
	else if (d->reason[0] != '\0' && strcasecmp(d->reason, "None") != 0)
		snprintf(out, len, "reason: %s", d->reason);
	else
		out[0] = '\0';
}

static void
emit_disk(struct collector_ctx *ctx, struct emitter *em, const struct vdq_disk *d)
{
	enum vdq_state st = vdq_state_of(d->state);
	char	 key[VDQ_VAL_MAX + 8], prev[32], tail[VDQ_VAL_MAX * 2 + 160];
	struct event *ev;

	why(d, st, tail, sizeof(tail));
	ev = ev_new("sample", "info", "vSAN disk %s: %s (%s)%s%s", d->name,
	    vdq_state_name(st), d->state, tail[0] ? "; " : "", tail);
	if (ev != NULL) {
		disk_fields(ev, d, st);
		(void)emit(em, ev);
	}
	snprintf(key, sizeof(key), "disk:%s", d->name);
	if (storage_transition(ctx->state, key, vdq_state_name(st), prev,
	    sizeof(prev)) == STORAGE_CHANGED) {
		ev = ev_new("change", st == VDQ_INELIGIBLE ? "warning" : "info",
		    "vSAN disk %s changed from %s to %s (%s)%s%s", d->name, prev,
		    vdq_state_name(st), d->state, tail[0] ? "; " : "", tail);
		if (ev != NULL) {
			disk_fields(ev, d, st);
			(void)event_set(ev, "esxwatch_previous_state", prev);
			(void)emit(em, ev);
		}
	}
}

static int
vsan_collect(struct collector_ctx *ctx, struct emitter *em)
{
	static const char *const args[] = { "-q", NULL };
	struct vsan_priv *p = ctx->priv;
	struct exec_result res;
	struct vdq_result vr;
	char	 what[300], err[200], line[200];
	int	 missing, rc = -1;
	size_t	 i;

	if (ctx->platform != PLATFORM_ESXI) {
		if (p != NULL && !p->noted) {
			log_info("vsan: not an ESXi host: the vsan collector does "
			    "not apply and stays quiet");
			p->noted = true;
		}
		return 0;
	}
	if (storage_run(ctx, "vdq", args, storage_timeout_s(ctx), &res, &missing,
	    what, sizeof(what)) == -1) {
		if (missing)
			log_limited(LOG_ERROR, "vsan:novdq", 3600, "vsan: vdq not "
			    "found (host.tools_dir, /usr/lib/vmware/vsan/bin)");
		storage_cmd_failed(ctx, em, VDQ_CMD, "vsan: %s", missing ?
		    "vdq not found: cannot query vSAN disk eligibility" : what);
		goto out;
	}
	if (res.status != 0) {
		const char *msg = res.err && res.err[0] ? res.err :
		    res.out ? res.out : "";

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(msg, "\n"), msg);
		log_limited(LOG_ERROR, "vsan:vdq", 300, "vsan: vdq -q: exit status "
		    "%d%s%s", res.status, line[0] ? ": " : "", line);
		storage_cmd_failed(ctx, em, VDQ_CMD, "vsan: `vdq -q` failed with "
		    "exit status %d%s%s", res.status, line[0] ? ": " : "", line);
		goto out;
	}
	if (vdq_parse(res.out, res.out_len, &vr, err, sizeof(err)) == -1) {
		log_limited(LOG_ERROR, "vsan:parse", 300, "vsan: vdq -q: %s", err);
		storage_cmd_failed(ctx, em, VDQ_CMD, "vsan: cannot read `vdq -q` "
		    "output: %s", err);
		goto out;
	}
	storage_cmd_ok(ctx, VDQ_CMD);
	if (vr.skipped > 0)
		log_limited(LOG_WARN, "vsan:skipped", 3600, "vsan: vdq -q: %zu "
		    "incomplete record(s) skipped", vr.skipped);
	for (i = 0; i < vr.n; i++)
		if (strlist_match(&ctx->conf->include, &ctx->conf->exclude,
		    vr.disks[i].name))
			emit_disk(ctx, em, &vr.disks[i]);
	vdq_result_free(&vr);
	rc = 0;
out:
	exec_result_free(&res);
	return rc;
}

const struct collector collector_vsan = {
	.name = "vsan",
	.default_interval = 300,
	.init = vsan_init,
	.collect = vsan_collect,
	.fini = vsan_fini,
};
