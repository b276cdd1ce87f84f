/*
 * vsphere_host: the "vsphere" host kind (host.h, vsphere.h): one polled
 * host answering from the poll's snapshot.  The nic collector gets its
 * nic_info, the datastore collector the records of the esxcli commands it
 * asks, built from the API's facts:
 *
 *   storage core device list  a ScsiLun per record, titled by its
 *       canonicalName; Status from operationalState (ok = on, off = off,
 *       degraded = degraded, error / lostCommunication / timeout = dead),
 *       then from the mount of a datastore on it (HostMountInfo.
 *       inaccessibleReason AllPathsDown_Start / AllPathsDown_Timeout =
 *       dead, PermanentDeviceLoss = not connected, as esxcli shows them);
 *   storage core path list    multipathInfo's paths: Device, State;
 *   storage vmfs extent list  Volume Name, Device Name (the first extent);
 *   storage filesystem list   Volume Name, Type, Mount Point, Mounted;
 *   storage nfs list / nfs41  Volume Name, Host, Share, Accessible, Mounted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/config/config.h"
#include "../../agent/lib/buf.h"
#include "../../agent/lib/exec.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/mem.h"
#include "esxcli.h"
#include "host.h"
#include "nicinfo.h"
#include "vsphere.h"

/* n zeroed items of size sz (xmalloc's policy: out of memory is fatal). */
static void *
zalloc(size_t n, size_t sz)
{
	void *p = xmalloc(n * sz);

	memset(p, 0, n * sz);
	return p;
}

struct vs_host {
	struct host		 h;	/* first */
	const struct vs_snap	*s;
	size_t			 i;
};

static const struct vs_hostsnap *
hs(struct host *h)
{
	struct vs_host *v = (struct vs_host *)h;

	return &v->s->hosts[v->i];
}

/* The QueryPerf sums as the nic collector's counters (sums since the
 * host was first polled: events carry the _delta fields only). */
static void
perf_counters(const struct vs_pnic *p, struct nic_info *o)
{
	static const char *const fields[VS_NCTR] = {
		"rx_errors", "tx_errors", "rx_dropped", "tx_dropped"
	};
	size_t i, k;

	for (i = 0; i < VS_NCTR; i++) {
		if (!p->have_ctr[i])
			continue;
		for (k = 0; k < NIC_NCOUNTERS; k++)
			if (strcmp(nic_counters[k].field, fields[i]) == 0) {
				o->have[k] = true;
				o->ctr[k] = p->cum[i];
				o->sums_only = true;
			}
	}
}

static int
vsh_nics(struct host *h, const struct collector_conf *conf, int timeout_s,
    struct nic_info **out)
{
	const struct vs_hostsnap *x = hs(h);
	struct nic_info *ni;
	size_t i, n = 0;

	(void)timeout_s;
	ni = zalloc(x->npnics ? x->npnics : 1, sizeof(*ni));
	for (i = 0; i < x->npnics; i++) {
		const struct vs_pnic *p = &x->pnics[i];
		struct nic_info *o = &ni[n];

		if (p->device[0] == '\0' || (conf != NULL &&
		    !strlist_match(&conf->include, &conf->exclude, p->device)))
			continue;
		snprintf(o->name, sizeof(o->name), "%s", p->device);
		/* PhysicalNic.linkSpeed: "If this property is not set, the
		 * link is down" (vSphere API reference) */
		o->link = p->speed_mb >= 0 ? NIC_UP : NIC_DOWN;
		o->admin = NIC_UNKNOWN;
		o->speed_mbps = p->speed_mb;
		snprintf(o->duplex, sizeof(o->duplex), "%s", p->duplex == 1 ?
		    "full" : p->duplex == 0 ? "half" : "");
		snprintf(o->driver, sizeof(o->driver), "%s", p->driver);
		snprintf(o->mac, sizeof(o->mac), "%s", p->mac);
		o->mtu = -1;
		perf_counters(p, o);
		n++;
	}
	*out = ni;
	return (int)n;
}

/* ---- records as esxcli prints them ------------------------------------ */

static struct esx_rec *
rec_new(struct esx_out *o, const char *title)
{
	struct esx_rec *r;

	o->recs = xrealloc(o->recs, (o->n + 1) * sizeof(*o->recs));
	r = &o->recs[o->n++];
	memset(r, 0, sizeof(*r));
	r->title = xstrdup(title);
	return r;
}

static void
rec_set(struct esx_rec *r, const char *k, const char *v)
{
	r->keys = xrealloc(r->keys, (r->n + 1) * sizeof(*r->keys));
	r->vals = xrealloc(r->vals, (r->n + 1) * sizeof(*r->vals));
	r->keys[r->n] = xstrdup(k);
	r->vals[r->n] = xstrdup(v);
	r->n++;
}

static const char *
lun_status(const char *op)
{
	if (strcmp(op, "ok") == 0 || strcmp(op, "quiesced") == 0)
		return "on";
	if (strcmp(op, "off") == 0)
		return "off";
	if (strcmp(op, "degraded") == 0)
		return "degraded";
	if (strcmp(op, "error") == 0 || strcmp(op, "lostCommunication") == 0 ||
	    strcmp(op, "timeout") == 0)
		return "dead";
	return "unknown";
}

/* This host's mount of datastore d, or NULL. */
static const struct vs_mount *
mount_of(const struct vs_ds *d, const char *moid)
{
	size_t i;

	for (i = 0; i < d->nmounts; i++)
		if (strcmp(d->mounts[i].host, moid) == 0)
			return &d->mounts[i];
	return NULL;
}

/* What the mounts of datastores on device canon say about it: "dead"
 * (APD), "not connected" (PDL) or NULL. */
static const char *
mount_status(const struct vs_snap *s, const char *moid, const char *canon)
{
	const struct vs_mount *m;
	size_t i;

	for (i = 0; i < s->nds; i++) {
		if (strcmp(s->ds[i].extent, canon) != 0)
			continue;
		m = mount_of(&s->ds[i], moid);
		if (m == NULL)
			continue;
		if (strcmp(m->reason, "PermanentDeviceLoss") == 0)
			return "not connected";
		if (strncmp(m->reason, "AllPathsDown", 12) == 0)
			return "dead";
	}
	return NULL;
}

static void
devices(struct vs_host *v, struct esx_out *o)
{
	const struct vs_hostsnap *x = &v->s->hosts[v->i];
	const char *st;
	size_t i;

	o->shape = ESX_BLOCK;
	for (i = 0; i < x->nluns; i++) {
		const struct vs_lun *l = &x->luns[i];
		struct esx_rec *r;

		if (l->canonical[0] == '\0')
			continue;
		st = mount_status(v->s, x->moid, l->canonical);
		r = rec_new(o, l->canonical);
		rec_set(r, "Display Name", l->canonical);
		rec_set(r, "Status", st != NULL ? st : lun_status(l->state));
		rec_set(r, "Is Offline", strcmp(l->state, "off") == 0 ?
		    "true" : "false");
	}
}

static const char *
canon_of(const struct vs_hostsnap *x, const char *key)
{
	size_t i;

	for (i = 0; i < x->nluns; i++)
		if (strcmp(x->luns[i].key, key) == 0)
			return x->luns[i].canonical;
	return NULL;
}

static void
paths(struct vs_host *v, struct esx_out *o)
{
	const struct vs_hostsnap *x = &v->s->hosts[v->i];
	const char *dev;
	size_t i;

	o->shape = ESX_BLOCK;
	for (i = 0; i < x->npaths; i++) {
		struct esx_rec *r;

		dev = canon_of(x, x->paths[i].lun);
		if (dev == NULL || x->paths[i].state[0] == '\0')
			continue;
		r = rec_new(o, x->paths[i].name);
		rec_set(r, "Runtime Name", x->paths[i].name);
		rec_set(r, "Device", dev);
		rec_set(r, "State", x->paths[i].state);
	}
}

static const char *
tf(int v)
{
	return v == 1 ? "true" : v == 0 ? "false" : "";
}

/* which: 0 extents, 1 filesystems, 2 nfs (v3), 3 nfs41 */
static void
volumes(struct vs_host *v, struct esx_out *o, int which)
{
	const struct vs_hostsnap *x = &v->s->hosts[v->i];
	size_t i;

	o->shape = ESX_TABLE;
	for (i = 0; i < v->s->nds; i++) {
		const struct vs_ds *d = &v->s->ds[i];
		const struct vs_mount *m = mount_of(d, x->moid);
		bool nfs = strncmp(d->type, "NFS", 3) == 0;
		struct esx_rec *r;

		if (m == NULL || d->name[0] == '\0')
			continue;
		if (which == 0 && d->extent[0] != '\0') {
			r = rec_new(o, "");
			rec_set(r, "Volume Name", d->name);
			rec_set(r, "Device Name", d->extent);
		} else if (which == 1) {
			r = rec_new(o, "");
			rec_set(r, "Mount Point", m->path);
			rec_set(r, "Volume Name", d->name);
			rec_set(r, "Mounted", tf(m->mounted));
			rec_set(r, "Type", d->type);
		} else if ((which == 2 && nfs && strcmp(d->type, "NFS41") != 0) ||
		    (which == 3 && strcmp(d->type, "NFS41") == 0)) {
			r = rec_new(o, "");
			rec_set(r, "Volume Name", d->name);
			rec_set(r, "Host", d->nas_host);
			rec_set(r, "Share", d->nas_path);
			rec_set(r, "Accessible", tf(m->accessible));
			rec_set(r, "Mounted", tf(m->mounted));
		}
	}
}

static bool
is(const char *const args[], const char *a, const char *b, const char *c,
    const char *d)
{
	const char *want[] = { a, b, c, d, NULL };
	size_t i;

	for (i = 0; want[i] != NULL; i++)
		if (args[i] == NULL || strcmp(args[i], want[i]) != 0)
			return false;
	return args[i] == NULL;
}

static int
vsh_esxcli(struct host *h, int timeout_s, const char *const args[],
    struct esx_out *out)
{
	struct vs_host *v = (struct vs_host *)h;

	(void)timeout_s;
	if (is(args, "storage", "core", "device", "list"))
		devices(v, out);
	else if (is(args, "storage", "core", "path", "list"))
		paths(v, out);
	else if (is(args, "storage", "vmfs", "extent", "list"))
		volumes(v, out, 0);
	else if (is(args, "storage", "filesystem", "list", NULL))
		volumes(v, out, 1);
	else if (is(args, "storage", "nfs", "list", NULL))
		volumes(v, out, 2);
	else if (is(args, "storage", "nfs41", "list", NULL))
		volumes(v, out, 3);
	else {
		host_set_err(HOST_EABSENT);
		return -1;
	}
	return 0;
}

/*
 * `vdq -q` as vdq prints it (host/vdq.h reads it), from QueryDisksForVsan:
 * State "Eligible for use by VSAN" / "Ineligible for use by VSAN" /
 * "In-use for VSAN", Reason the error's localizedMessage (or its fault
 * type), IsPDL "0" (QueryDisksForVsan does not say: the datastore
 * collector's PDL comes from the mount instead).  Only a poll that asked
 * (vsphere.NAME on collectors.vsan's interval) has an answer; any other
 * tool: none on a polled host.
 */
static int
vsh_run(struct host *h, const char *tool, const char *const args[],
    int timeout_s, struct exec_result *res)
{
	const struct vs_hostsnap *x = hs(h);
	struct buf b = BUF_INIT;
	size_t i;

	(void)timeout_s;
	if (strcmp(tool, "vdq") != 0 || args[0] == NULL ||
	    strcmp(args[0], "-q") != 0 || args[1] != NULL || !x->vsan_fresh) {
		host_set_err(HOST_EMISSING);
		return -1;
	}
	buf_init(&b, 0);
	buf_puts(&b, "[\n");
	for (i = 0; i < x->nvdisks; i++) {
		const struct vs_vdisk *d = &x->vdisks[i];
		const char *st = strcmp(d->state, "eligible") == 0 ?
		    "Eligible for use by VSAN" : strcmp(d->state, "inUse") == 0 ?
		    "In-use for VSAN" : strcmp(d->state, "ineligible") == 0 ?
		    "Ineligible for use by VSAN" : d->state;

		buf_printf(&b, "   {\n      \"Name\"     : \"%s\",\n"
		    "      \"VSANUUID\" : \"%s\",\n      \"State\"    : \"%s\",\n"
		    "      \"Reason\"   : \"%s\",\n      \"IsSSD\"    : \"%s\",\n"
		    "      \"IsPDL\"    : \"0\",\n   },\n", d->canonical, d->uuid, st,
		    d->reason[0] ? d->reason : "None", d->ssd == 1 ? "1" : "0");
	}
	buf_puts(&b, "]\n");
	if (b.data == NULL) {
		host_set_err(HOST_EFAILED);
		return -1;
	}
	res->out_len = b.len;
	res->out = buf_steal(&b);
	res->err = xstrdup("");
	res->status = 0;
	return 0;
}

static void
vsh_close(struct host *h)
{
	free(h);
}

/*
 * The vSAN health service's SMART for this host, as the poll read it
 * (vsphere_smart.c): every drive at once.  A poll that had no answer for
 * the host (no cluster, no service, a failed call: said by the poll) is
 * HOST_EFAILED; collectors/vspoll.c runs the smart collector only on the
 * polls that had one.
 */
static int
vsh_smart(struct host *h, struct host_smart **out)
{
	const struct vs_hostsnap *x = vs_host_snap(h);
	struct host_smart *v;

	if (!x->smart_fresh) {
		host_set_err(HOST_EFAILED);
		return -1;
	}
	v = x->nsdisks > 0 ? zalloc(x->nsdisks, sizeof(*v)) : NULL;
	for (size_t i = 0; i < x->nsdisks; i++) {
		snprintf(v[i].disk, sizeof(v[i].disk), "%s", x->sdisks[i].disk);
		snprintf(v[i].error, sizeof(v[i].error), "%s", x->sdisks[i].error);
		v[i].si = x->sdisks[i].si;
		v[i].source = "vsan-health";
	}
	*out = v;
	return (int)x->nsdisks;
}

static const struct host_ops vsh_ops = {
	.nics = vsh_nics,
	.esxcli = vsh_esxcli,
	.run = vsh_run,
	.smart = vsh_smart,
	.close = vsh_close,
};

const void *
vs_host_snap(const struct host *h)
{
	const struct vs_host *v = (const struct vs_host *)h;

	return &v->s->hosts[v->i];
}

struct host *
vs_host_open(const struct vs_snap *s, size_t i)
{
	struct vs_host *v = zalloc(1, sizeof(*v));

	v->h.ops = &vsh_ops;
	v->h.kind = "vsphere";
	v->h.name = s->hosts[i].name;
	v->h.platform = PLATFORM_ESXI;
	v->s = s;
	v->i = i;
	return &v->h;
}
