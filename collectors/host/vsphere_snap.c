/*
 * vsphere_snap: the snapshot of every host's facts (vsphere.h): its
 * reader, views and free.  vsphere_wait.c fills it through a
 * PropertyFilter over a ContainerView of HostSystem and one of
 * Datastore, only the properties the collectors use (vSphere API
 * reference: HostSystem.config.network.pnic (PhysicalNic),
 * config.storageDevice.scsiLun (ScsiLun.operationalState),
 * config.storageDevice.multipathInfo (HostMultipathInfoPath.state),
 * runtime.connectionState, runtime.inMaintenanceMode; Datastore.host
 * (DatastoreHostMount.mountInfo: HostMountInfo accessible, mounted,
 * inaccessibleReason), Datastore.info (VmfsDatastoreInfo.vmfs.extent,
 * NasDatastoreInfo.nas), summary.type).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/mem.h"
#include "vsphere.h"
#include "vsphere_rd.h"

#define VS_MAX_HOSTS	20000
#define VS_MAX_ITEMS	4096	/* pnics, LUNs, paths, mounts per object */


static void
cpy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src);
}

/* Grow *v (n items of size sz) by one zeroed item: it, or NULL at the cap. */
static void *
grow(void *vp, size_t *n, size_t sz, size_t max)
{
	void **v = vp;
	char *p;

	if (*n >= max)
		return NULL;
	*v = xrealloc(*v, (*n + 1) * sz);
	p = (char *)*v + *n * sz;
	memset(p, 0, sz);
	(*n)++;
	return p;
}

static struct vs_hostsnap *
cur_host(struct rd *r)
{
	return r->is_host && r->s->nhosts > 0 ? &r->s->hosts[r->s->nhosts - 1] :
	    NULL;
}

static struct vs_ds *
cur_ds(struct rd *r)
{
	return r->is_ds && r->s->nds > 0 ? &r->s->ds[r->s->nds - 1] : NULL;
}

static int
tri(const char *t)
{
	return strcmp(t, "true") == 0 ? 1 : strcmp(t, "false") == 0 ? 0 : -1;
}

int
vs_rd_start(void *arg, struct vx *x, int depth, const char *name)
{
	struct rd *r = arg;
	struct vs_hostsnap *h = cur_host(r);
	struct vs_ds *d = cur_ds(r);
	void *it = (void *)1;

	/* Envelope/Body/Response/returnval/objects/propSet/val/ITEM */
	if (depth == 5 + r->off && strcmp(name, r->objs) == 0) {
		r->is_host = r->is_ds = false;
		r->prop[0] = '\0';
	}
	if (depth != 8 + r->off || strcmp(vx_name_at(x, 7 + r->off), "val") != 0)
		return 0;
	if (h != NULL && strcmp(name, "PhysicalNic") == 0 &&
	    strcmp(r->prop, "config.network.pnic") == 0) {
		it = grow(&h->pnics, &h->npnics, sizeof(*h->pnics), VS_MAX_ITEMS);
		if (it != NULL) {
			h->pnics[h->npnics - 1].speed_mb = -1;
			h->pnics[h->npnics - 1].duplex = -1;
		}
	} else if (h != NULL && strcmp(name, "ScsiLun") == 0)
		it = grow(&h->luns, &h->nluns, sizeof(*h->luns), VS_MAX_ITEMS);
	else if (d != NULL && strcmp(name, "DatastoreHostMount") == 0) {
		it = grow(&d->mounts, &d->nmounts, sizeof(*d->mounts),
		    VS_MAX_ITEMS);
		if (it != NULL)
			d->mounts[d->nmounts - 1].mounted =
			    d->mounts[d->nmounts - 1].accessible = -1;
	}
	if (it == NULL)
		r->overflow = true;
	return 0;
}

static void
host_value(struct rd *r, struct vs_hostsnap *h, struct vx *x, int depth,
    const char *t)
{
	struct vs_pnic *p = h->npnics ? &h->pnics[h->npnics - 1] : NULL;
	struct vs_lun *l = h->nluns ? &h->luns[h->nluns - 1] : NULL;

	if (depth == 7 + r->off && strcmp(r->prop, "name") == 0)
		cpy(h->name, sizeof(h->name), t);
	else if (depth == 7 + r->off && strcmp(r->prop, "runtime.connectionState") == 0)
		cpy(h->conn, sizeof(h->conn), t);
	else if (depth == 7 + r->off && strcmp(r->prop, "runtime.inMaintenanceMode") == 0)
		h->maint = tri(t);
	else if (depth == 7 + r->off && strcmp(r->prop, "configManager.vsanSystem") == 0)
		cpy(h->vsan_system, sizeof(h->vsan_system), t);
	else if (depth == 7 + r->off && strcmp(r->prop, "parent") == 0 &&
	    strcmp(vx_reftype_at(x, 7 + r->off), "ClusterComputeResource") == 0)
		cpy(h->cluster, sizeof(h->cluster), t);
	else if (p != NULL && vx_path_ends(x, "val/PhysicalNic/device"))
		cpy(p->device, sizeof(p->device), t);
	else if (p != NULL && vx_path_ends(x, "val/PhysicalNic/driver"))
		cpy(p->driver, sizeof(p->driver), t);
	else if (p != NULL && vx_path_ends(x, "val/PhysicalNic/mac"))
		cpy(p->mac, sizeof(p->mac), t);
	else if (p != NULL && vx_path_ends(x, "val/PhysicalNic/linkSpeed/speedMb"))
		p->speed_mb = strtoll(t, NULL, 10);
	else if (p != NULL && vx_path_ends(x, "val/PhysicalNic/linkSpeed/duplex"))
		p->duplex = tri(t);
	else if (l != NULL && vx_path_ends(x, "val/ScsiLun/key"))
		cpy(l->key, sizeof(l->key), t);
	else if (l != NULL && vx_path_ends(x, "val/ScsiLun/canonicalName"))
		cpy(l->canonical, sizeof(l->canonical), t);
	else if (l != NULL && vx_path_ends(x, "val/ScsiLun/operationalState") &&
	    l->state[0] == '\0')
		cpy(l->state, sizeof(l->state), t);
}

/* multipathInfo: val/lun/lun (the ScsiLun key) comes before its paths,
 * each path's name before its state (the WSDL's sequence order). */
static void
path_value(struct rd *r, struct vs_hostsnap *h, struct vx *x, const char *t)
{
	struct vs_path *pa;

	if (strcmp(r->prop, "config.storageDevice.multipathInfo") != 0)
		return;
	if (vx_path_ends(x, "val/lun/lun") && vx_depth(x) == 9 + r->off)
		cpy(r->mplun, sizeof(r->mplun), t);
	else if (vx_path_ends(x, "val/lun/path/name") && vx_depth(x) == 10 + r->off) {
		pa = grow(&h->paths, &h->npaths, sizeof(*h->paths), VS_MAX_ITEMS);
		if (pa == NULL) {
			r->overflow = true;
			return;
		}
		cpy(pa->name, sizeof(pa->name), t);
		cpy(pa->lun, sizeof(pa->lun), r->mplun);
	} else if (vx_path_ends(x, "val/lun/path/state") && h->npaths > 0)
		cpy(h->paths[h->npaths - 1].state, sizeof(h->paths[0].state), t);
}

static void
ds_value(struct rd *r, struct vs_ds *d, struct vx *x, int depth, const char *t)
{
	struct vs_mount *m = d->nmounts ? &d->mounts[d->nmounts - 1] : NULL;

	if (depth == 7 + r->off && strcmp(r->prop, "name") == 0)
		cpy(d->name, sizeof(d->name), t);
	else if (depth == 7 + r->off && strcmp(r->prop, "summary.type") == 0)
		cpy(d->type, sizeof(d->type), t);
	else if (m != NULL && vx_path_ends(x, "DatastoreHostMount/key"))
		cpy(m->host, sizeof(m->host), t);
	else if (m != NULL && vx_path_ends(x, "mountInfo/path"))
		cpy(m->path, sizeof(m->path), t);
	else if (m != NULL && vx_path_ends(x, "mountInfo/inaccessibleReason"))
		cpy(m->reason, sizeof(m->reason), t);
	else if (m != NULL && vx_path_ends(x, "mountInfo/mounted"))
		m->mounted = tri(t);
	else if (m != NULL && vx_path_ends(x, "mountInfo/accessible"))
		m->accessible = tri(t);
	else if (strcmp(r->prop, "info") == 0 &&
	    vx_path_ends(x, "val/vmfs/extent/diskName") && d->extent[0] == '\0')
		cpy(d->extent, sizeof(d->extent), t);
	else if (strcmp(r->prop, "info") == 0 &&
	    vx_path_ends(x, "val/nas/remoteHost"))
		cpy(d->nas_host, sizeof(d->nas_host), t);
	else if (strcmp(r->prop, "info") == 0 &&
	    vx_path_ends(x, "val/nas/remotePath"))
		cpy(d->nas_path, sizeof(d->nas_path), t);
}

int
vs_rd_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct rd *r = arg;
	struct vs_hostsnap *h;
	struct vs_ds *d;

	(void)len;
	if (r->off == 0 && depth == 5 && strcmp(name, "token") == 0) {
		cpy(r->token, r->tokenlen, t);
		return 0;
	}
	if (depth == 6 + r->off && strcmp(name, "obj") == 0 &&
	    strcmp(vx_name_at(x, 5 + r->off), r->objs) == 0) {
		const char *type = vx_type_at(x, 6 + r->off);

		if (strcmp(type, "HostSystem") == 0) {
			h = grow(&r->s->hosts, &r->s->nhosts, sizeof(*h),
			    VS_MAX_HOSTS);
			if (h == NULL)
				return -1;
			cpy(h->moid, sizeof(h->moid), t);
			h->maint = -1;
			r->is_host = true;
		} else if (strcmp(type, "Datastore") == 0) {
			d = grow(&r->s->ds, &r->s->nds, sizeof(*d), VS_MAX_HOSTS);
			if (d == NULL)
				return -1;
			cpy(d->moid, sizeof(d->moid), t);
			r->is_ds = true;
		}
		return 0;
	}
	if (depth == 7 + r->off && strcmp(name, "name") == 0 &&
	    strcmp(vx_name_at(x, 6 + r->off), r->props) == 0) {
		cpy(r->prop, sizeof(r->prop), t);
		return 0;
	}
	if (depth < 7 + r->off || strcmp(vx_name_at(x, 6 + r->off), r->props) != 0)
		return 0;
	/* a PropertyChange's op (name, op, val): not a value */
	if (depth == 7 + r->off && strcmp(name, "val") != 0)
		return 0;
	h = cur_host(r);
	d = cur_ds(r);
	if (h != NULL) {
		host_value(r, h, x, depth, t);
		path_value(r, h, x, t);
	} else if (d != NULL)
		ds_value(r, d, x, depth, t);
	return 0;
}

int
vs_snap_parse(struct vs_snap *s, const char *xml, size_t len, char *token,
    size_t tokenlen, char *err, size_t errlen)
{
	struct rd r = { .s = s, .token = token, .tokenlen = tokenlen,
	    .objs = "objects", .props = "propSet" };
	struct vx_handler h = { vs_rd_start, vs_rd_end, &r };

	token[0] = '\0';
	return vx_parse(&h, xml, len, err, errlen);
}

void
vs_snap_free(struct vs_snap *s)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++) {
		free(s->hosts[i].pnics);
		free(s->hosts[i].luns);
		free(s->hosts[i].paths);
		free(s->hosts[i].vdisks);
		free(s->hosts[i].sdisks);
	}
	for (i = 0; i < s->nds; i++)
		free(s->ds[i].mounts);
	free(s->hosts);
	free(s->ds);
	memset(s, 0, sizeof(*s));
}

/* ---- the calls ------------------------------------------------------- */

int
vs_make_view(struct vs_conn *v, const char *type, char *view, char *err,
    size_t errlen)
{
	const struct vs_service *sc = vs_service(v);
	struct vx_handler h = { NULL, vs_returnval_end, view };
	char body[1024];

	view[0] = '\0';
	if (vs_login(v, err, errlen) == -1)
		return -1;
	snprintf(body, sizeof(body), "<CreateContainerView xmlns=\"urn:vim25\">"
	    "<_this type=\"ViewManager\">%s</_this><container type=\"Folder\">"
	    "%s</container><type>%s</type><recursive>true</recursive>"
	    "</CreateContainerView>", sc->view_manager, sc->root_folder, type);
	if (vs_call(v, body, &h, err, errlen) == -1)
		return -1;
	if (view[0] == '\0') {
		snprintf(err, errlen, "CreateContainerView returned no view");
		return -1;
	}
	return 0;
}

void
vs_drop_view(struct vs_conn *v, const char *view)
{
	char body[512], err[256];

	if (*view == '\0')
		return;
	snprintf(body, sizeof(body), "<DestroyView xmlns=\"urn:vim25\"><_this "
	    "type=\"ContainerView\">%s</_this></DestroyView>", view);
	(void)vs_call(v, body, NULL, err, sizeof(err));
}

const char *const vs_host_props[] = {
	"name", "runtime.connectionState", "runtime.inMaintenanceMode",
	"config.network.pnic", "config.storageDevice.scsiLun",
	"config.storageDevice.multipathInfo", "configManager.vsanSystem", "parent", NULL
};
const char *const vs_ds_props[] = {
	"name", "summary.type", "host", "info", NULL
};
