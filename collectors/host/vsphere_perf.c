/*
 * vsphere_perf: NIC error and drop counters from the PerformanceManager
 * (vsphere.h).  vSphere API reference: PerformanceManager.perfCounter
 * (PerfCounterInfo: key, groupInfo.key "net", nameInfo.key errorsRx,
 * errorsTx, droppedRx, droppedTx; rollupType summation, statsType delta),
 * QueryPerf with one PerfQuerySpec per host (intervalId 20, the real-time
 * interval; instance "*": every vmnic), answered with PerfEntityMetric
 * (sampleInfo timestamps, PerfMetricIntSeries per counter and instance).
 * Each series is the count per 20 s sample: the samples newer than the
 * last one read are summed (the first poll of a host only takes its
 * newest timestamp: a baseline, no delta).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/mem.h"
#include "vsphere.h"

static const char *const perf_names[VS_NCTR] = {
	"errorsRx", "errorsTx", "droppedRx", "droppedTx"
};

struct ids_rd {
	int	*ids;
	int	 key;
	char	 group[32], name[32], rollup[32];
};

static int
ids_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct ids_rd *r = arg;
	int i;

	(void)len;
	(void)depth;
	if (vx_path_ends(x, "PerfCounterInfo/key"))
		r->key = atoi(t);
	else if (vx_path_ends(x, "PerfCounterInfo/nameInfo/key"))
		snprintf(r->name, sizeof(r->name), "%s", t);
	else if (vx_path_ends(x, "PerfCounterInfo/groupInfo/key"))
		snprintf(r->group, sizeof(r->group), "%s", t);
	else if (vx_path_ends(x, "PerfCounterInfo/rollupType"))
		snprintf(r->rollup, sizeof(r->rollup), "%s", t);
	else if (strcmp(name, "PerfCounterInfo") == 0) {
		if (strcmp(r->group, "net") == 0 &&
		    strcmp(r->rollup, "summation") == 0)
			for (i = 0; i < VS_NCTR; i++)
				if (strcmp(r->name, perf_names[i]) == 0)
					r->ids[i] = r->key;
		r->key = -1;
		r->group[0] = r->name[0] = r->rollup[0] = '\0';
	}
	return 0;
}

int
vs_perf_ids(struct vs_conn *v, int ids[VS_NCTR], char *err, size_t errlen)
{
	const struct vs_service *sc = vs_service(v);
	struct ids_rd r = { .ids = ids, .key = -1 };
	struct vx_handler h = { NULL, ids_end, &r };
	char body[1024];
	int i;

	for (i = 0; i < VS_NCTR; i++)
		ids[i] = -1;
	if (vs_login(v, err, errlen) == -1)
		return -1;
	snprintf(body, sizeof(body), "<RetrievePropertiesEx xmlns=\"urn:vim25\">"
	    "<_this type=\"PropertyCollector\">%s</_this><specSet><propSet>"
	    "<type>PerformanceManager</type><pathSet>perfCounter</pathSet>"
	    "</propSet><objectSet><obj type=\"PerformanceManager\">%s</obj>"
	    "</objectSet></specSet><options/></RetrievePropertiesEx>",
	    sc->property_collector, sc->perf_manager);
	return vs_call(v, body, &h, err, errlen);
}

/* ---- QueryPerf ------------------------------------------------------- */

struct q_rd {
	struct vs_snap	*s;
	const int	*ids;
	struct vs_hostsnap *h;	/* the returnval's entity */
	int		 ctr;	/* the series' counter index, -1 */
	char		 inst[64];
};

static struct vs_hostsnap *
host_by_moid(struct vs_snap *s, const char *moid)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (strcmp(s->hosts[i].moid, moid) == 0)
			return &s->hosts[i];
	return NULL;
}

static struct vs_pnic *
pnic_by_name(struct vs_hostsnap *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->npnics; i++)
		if (strcmp(h->pnics[i].device, name) == 0)
			return &h->pnics[i];
	return NULL;
}

static int
q_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct q_rd *r = arg;
	struct vs_pnic *p;
	int i;

	(void)len;
	if (depth == 5 && strcmp(name, "entity") == 0) {
		r->h = host_by_moid(r->s, t);
		return 0;
	}
	if (r->h == NULL)
		return 0;
	if (depth == 6 && vx_path_ends(x, "sampleInfo/timestamp")) {
		/* oldest first: the last one is the newest */
		snprintf(r->h->perf_ts, sizeof(r->h->perf_ts), "%s", t);
		r->h->perf_answered = true;
	} else if (depth == 7 && vx_path_ends(x, "value/id/counterId")) {
		r->ctr = -1;
		for (i = 0; i < VS_NCTR; i++)
			if (r->ids[i] == atoi(t))
				r->ctr = i;
	} else if (depth == 7 && vx_path_ends(x, "value/id/instance"))
		snprintf(r->inst, sizeof(r->inst), "%s", t);
	else if (depth == 6 && vx_path_ends(x, "returnval/value/value") &&
	    r->ctr >= 0 && r->inst[0] != '\0') {
		p = pnic_by_name(r->h, r->inst);
		if (p != NULL && t[0] != '-') {
			p->have_ctr[r->ctr] = true;
			p->sum[r->ctr] += strtoull(t, NULL, 10);
		}
	} else if (depth == 5 && strcmp(name, "value") == 0) {
		r->ctr = -1;
		r->inst[0] = '\0';
	}
	return 0;
}

int
vs_perf_query(struct vs_conn *v, const int ids[VS_NCTR], struct vs_snap *s,
    const size_t *which, const char *const *since, size_t n, char *err,
    size_t errlen)
{
	const struct vs_service *sc = vs_service(v);
	struct q_rd r = { .s = s, .ids = ids, .ctr = -1 };
	struct vx_handler h = { NULL, q_end, &r };
	struct buf b = BUF_INIT;
	size_t i;
	int k, rc;

	buf_init(&b, 0);
	buf_printf(&b, "<QueryPerf xmlns=\"urn:vim25\"><_this type=\""
	    "PerformanceManager\">%s</_this>", sc->perf_manager);
	for (i = 0; i < n; i++) {
		const struct vs_hostsnap *x = &s->hosts[which[i]];

		buf_printf(&b, "<querySpec><entity type=\"HostSystem\">%s</entity>",
		    x->moid);
		if (since[i] != NULL && since[i][0] != '\0')
			buf_printf(&b, "<startTime>%s</startTime>", since[i]);
		else
			buf_puts(&b, "<maxSample>1</maxSample>");
		for (k = 0; k < VS_NCTR; k++)
			if (ids[k] >= 0)
				buf_printf(&b, "<metricId><counterId>%d</counterId>"
				    "<instance>*</instance></metricId>", ids[k]);
		buf_puts(&b, "<intervalId>20</intervalId></querySpec>");
	}
	buf_puts(&b, "</QueryPerf>");
	rc = b.data != NULL ? vs_call(v, b.data, &h, err, errlen) : -1;
	buf_free(&b);
	return rc;
}

/* ---- vSAN disk eligibility -------------------------------------------- */

/* QueryDisksForVsanResponse/returnval: VsanHostDiskResult (vSphere API
 * reference): disk (HostScsiDisk: canonicalName, ssd), state, vsanUuid,
 * error (LocalizedMethodFault: fault, localizedMessage). */
static int
vd_start(void *arg, struct vx *x, int depth, const char *name)
{
	struct vs_hostsnap *h = arg;

	(void)x;
	if (depth == 4 && strcmp(name, "returnval") == 0 && h->nvdisks < 4096) {
		h->vdisks = xrealloc(h->vdisks, (h->nvdisks + 1) * sizeof(*h->vdisks));
		memset(&h->vdisks[h->nvdisks], 0, sizeof(h->vdisks[0]));
		h->vdisks[h->nvdisks].ssd = -1;
		h->nvdisks++;
	} else if (depth == 6 && h->nvdisks > 0 &&
	    vx_path_ends(x, "returnval/error/fault") &&
	    h->vdisks[h->nvdisks - 1].reason[0] == '\0')
		snprintf(h->vdisks[h->nvdisks - 1].reason,
		    sizeof(h->vdisks[0].reason), "%s", vx_type_at(x, 6));
	return 0;
}

static int
vd_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct vs_hostsnap *h = arg;
	struct vs_vdisk *d;

	(void)len;
	(void)name;
	if (h->nvdisks == 0 || depth < 5 || strcmp(vx_name_at(x, 4), "returnval") != 0)
		return 0;
	d = &h->vdisks[h->nvdisks - 1];
	if (vx_path_ends(x, "returnval/disk/canonicalName"))
		snprintf(d->canonical, sizeof(d->canonical), "%s", t);
	else if (vx_path_ends(x, "returnval/disk/ssd"))
		d->ssd = strcmp(t, "true") == 0 ? 1 : strcmp(t, "false") == 0 ? 0 : -1;
	else if (vx_path_ends(x, "returnval/state"))
		snprintf(d->state, sizeof(d->state), "%s", t);
	else if (vx_path_ends(x, "returnval/vsanUuid"))
		snprintf(d->uuid, sizeof(d->uuid), "%s", t);
	else if (vx_path_ends(x, "returnval/error/localizedMessage") && *t != '\0') {
		snprintf(d->reason, sizeof(d->reason), "%s", t);
		for (char *c = d->reason; *c != '\0'; c++)
			if (*c == '"' || *c == '\\' || *c == '\n' || *c == '\r')
				*c = ' ';	/* one value of vdq's text */
	}
	return 0;
}

int
vs_vsan_query(struct vs_conn *v, struct vs_hostsnap *x, char *err,
    size_t errlen)
{
	struct vx_handler h = { vd_start, vd_end, x };
	char body[512];

	free(x->vdisks);
	x->vdisks = NULL;
	x->nvdisks = 0;
	x->vsan_fresh = false;
	snprintf(body, sizeof(body), "<QueryDisksForVsan xmlns=\"urn:vim25\">"
	    "<_this type=\"HostVsanSystem\">%s</_this></QueryDisksForVsan>",
	    x->vsan_system);
	if (vs_call(v, body, &h, err, errlen) == -1)
		return -1;
	x->vsan_fresh = true;
	return 0;
}
