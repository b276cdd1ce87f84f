/*
 * storage_ds: the host's storage picture and the states derived from it
 * (see storage_ds.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "host/esxcli.h"
#include "storage_ds.h"

static void
cpy(char *dst, size_t dstlen, const char *s)
{
	snprintf(dst, dstlen, "%s", s ? s : "");
}

bool
ds_in_list(const char *list, const char *item)
{
	size_t	 il = strlen(item);
	const char *p;

	if (il == 0)
		return false;
	for (p = strstr(list, item); p != NULL; p = strstr(p + 1, item))
		if ((p == list || (p - list >= 2 && p[-1] == ' ' &&
		    p[-2] == ',')) && (p[il] == '\0' || (p[il] == ',' &&
		    p[il + 1] == ' ')))
			return true;
	return false;
}

/* Append item to a ", "-separated list, unless it is there already. */
static void
list_add(char *list, size_t listlen, const char *item)
{
	size_t	 il = strlen(item), ll = strlen(list);

	if (il == 0 || ds_in_list(list, item))
		return;
	if (ll + il + 3 > listlen)
		return;			/* bounded: the rest is left out */
	snprintf(list + ll, listlen - ll, "%s%s", ll ? ", " : "", item);
}

static int
truthy(const char *v)
{
	char	 t[16];
	size_t	 i = 0;

	if (v == NULL)
		return -1;
	while (isspace((unsigned char)*v))
		v++;
	while (v[i] != '\0' && !isspace((unsigned char)v[i]) && i + 1 < sizeof(t)) {
		t[i] = v[i];
		i++;
	}
	t[i] = '\0';
	if (strcasecmp(t, "true") == 0 || strcasecmp(t, "yes") == 0)
		return 1;
	if (strcasecmp(t, "false") == 0 || strcasecmp(t, "no") == 0)
		return 0;
	return -1;
}

struct ds_dev *
ds_find_dev(struct ds_snap *s, const char *id)
{
	size_t	 i;

	for (i = 0; i < s->ndev; i++)
		if (strcmp(s->devs[i].id, id) == 0)
			return &s->devs[i];
	return NULL;
}

static struct ds_vol *
find_vol(struct ds_snap *s, const char *name)
{
	size_t	 i;

	for (i = 0; i < s->nvol; i++)
		if (strcmp(s->vols[i].name, name) == 0)
			return &s->vols[i];
	return NULL;
}

static struct ds_vol *
add_vol(struct ds_snap *s, const char *name)
{
	struct ds_vol *v;

	v = find_vol(s, name);
	if (v != NULL)
		return v;
	v = realloc(s->vols, (s->nvol + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	s->vols = v;
	v = &s->vols[s->nvol++];
	memset(v, 0, sizeof(*v));
	cpy(v->name, sizeof(v->name), name);
	v->mounted = -1;
	v->accessible = -1;
	return v;
}

static int
add_devices(struct ds_snap *s, const struct esx_out *o, char *err, size_t errlen)
{
	size_t	 i;

	if (o == NULL || o->n == 0) {
		snprintf(err, errlen, "device list is empty");
		return -1;
	}
	s->devs = calloc(o->n, sizeof(*s->devs));
	if (s->devs == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < o->n; i++) {
		const struct esx_rec *r = &o->recs[i];
		const char *id = r->title && *r->title ? r->title : esx_get(r, "Device");
		struct ds_dev *d;

		if (id == NULL || *id == '\0')
			continue;	/* not a device record */
		if (esx_want(r, "storage core device list", id, "Status") == NULL)
			continue;
		if (ds_find_dev(s, id) != NULL)
			continue;
		d = &s->devs[s->ndev++];
		cpy(d->id, sizeof(d->id), id);
		cpy(d->status, sizeof(d->status), esx_get(r, "Status"));
		cpy(d->display, sizeof(d->display), esx_get(r, "Display Name"));
		d->offline = truthy(esx_get(r, "Is Offline")) == 1;
	}
	if (s->ndev == 0) {
		snprintf(err, errlen, "not a device list (no record with a Status)");
		return -1;
	}
	return 0;
}

static int
add_paths(struct ds_snap *s, const struct esx_out *o, char *err, size_t errlen)
{
	size_t	 i, used = 0;

	if (o == NULL) {
		snprintf(err, errlen, "no path list");
		return -1;
	}
	for (i = 0; i < o->n; i++) {
		const char *dev = esx_get(&o->recs[i], "Device");
		const char *st = esx_get(&o->recs[i], "State");
		struct ds_dev *d;

		if (dev != NULL && st == NULL)
			esx_gap("storage core path list", dev, "State", "is missing");
		if (dev == NULL || st == NULL)
			continue;
		used++;
		d = ds_find_dev(s, dev);
		if (d == NULL)
			continue;	/* a path to a device not listed (yet) */
		d->total++;
		if (strncasecmp(st, "active", 6) == 0)
			d->active++;
		else if (strcasecmp(st, "standby") == 0)
			d->standby++;
		else if (strcasecmp(st, "disabled") == 0)
			d->disabled++;
		else if (strcasecmp(st, "dead") == 0)
			d->dead++;
		/* "unknown": counted in total only */
	}
	/* Every device has at least one path (even a dead one): a list
	 * without any is broken output, not a host without paths. */
	if (used == 0) {
		snprintf(err, errlen, "not a path list (no path with Device and State)");
		return -1;
	}
	return 0;
}

static void
add_extents(struct ds_snap *s, const struct esx_out *o)
{
	size_t	 i;

	for (i = 0; o != NULL && i < o->n; i++) {
		const char *vn = esx_get(&o->recs[i], "Volume Name");
		const char *dn = esx_get(&o->recs[i], "Device Name");
		struct ds_vol *v;
		struct ds_dev *d;

		if (vn == NULL || dn == NULL || *vn == '\0' || *dn == '\0')
			continue;
		v = add_vol(s, vn);
		if (v == NULL)
			continue;
		list_add(v->devices, sizeof(v->devices), dn);
		d = ds_find_dev(s, dn);
		if (d != NULL)
			list_add(d->datastores, sizeof(d->datastores), vn);
	}
}

static void
add_filesystems(struct ds_snap *s, const struct esx_out *o)
{
	size_t	 i;

	for (i = 0; o != NULL && i < o->n; i++) {
		const struct esx_rec *r = &o->recs[i];
		const char *vn = esx_get(r, "Volume Name");
		struct ds_vol *v;

		if (vn == NULL || *vn == '\0')
			vn = esx_get(r, "UUID");
		if (vn == NULL || *vn == '\0')
			continue;
		v = add_vol(s, vn);
		if (v == NULL)
			continue;
		cpy(v->fs_type, sizeof(v->fs_type), esx_get(r, "Type"));
		cpy(v->mount, sizeof(v->mount), esx_get(r, "Mount Point"));
		v->mounted = truthy(esx_get(r, "Mounted"));
		if (strncasecmp(v->fs_type, "NFS", 3) == 0)
			v->nfs = true;
	}
}

static void
add_nfs(struct ds_snap *s, const struct esx_out *o, const char *type)
{
	size_t	 i;

	for (i = 0; o != NULL && i < o->n; i++) {
		const struct esx_rec *r = &o->recs[i];
		const char *vn = esx_get(r, "Volume Name");
		const char *host = esx_get(r, "Host");
		struct ds_vol *v;

		if (host == NULL)
			host = esx_get(r, "Host(s)");
		if (vn == NULL || *vn == '\0')
			continue;
		v = add_vol(s, vn);
		if (v == NULL)
			continue;
		v->nfs = true;
		cpy(v->fs_type, sizeof(v->fs_type), type);
		cpy(v->host, sizeof(v->host), host);
		cpy(v->share, sizeof(v->share), esx_get(r, "Share"));
		v->accessible = truthy(esx_get(r, "Accessible"));
		if (truthy(esx_get(r, "Mounted")) != -1)
			v->mounted = truthy(esx_get(r, "Mounted"));
	}
}

int
ds_snap_build(struct ds_snap *s, const struct esx_out *devs,
    const struct esx_out *paths, const struct esx_out *extents,
    const struct esx_out *fs, const struct esx_out *nfs,
    const struct esx_out *nfs41, char *err, size_t errlen)
{
	size_t	 i;

	memset(s, 0, sizeof(*s));
	if (add_devices(s, devs, err, errlen) == -1 ||
	    add_paths(s, paths, err, errlen) == -1) {
		ds_snap_free(s);
		return -1;
	}
	add_extents(s, extents);
	add_filesystems(s, fs);
	add_nfs(s, nfs, "NFS");
	add_nfs(s, nfs41, "NFS41");
	/* Each device's filesystem type: that of the first datastore it backs. */
	for (i = 0; i < s->nvol; i++) {
		struct ds_vol *v = &s->vols[i];
		size_t	 j;

		for (j = 0; j < s->ndev; j++) {
			struct ds_dev *d = &s->devs[j];

			if (d->fs_type[0] == '\0' && v->fs_type[0] != '\0' &&
			    ds_in_list(d->datastores, v->name))
				cpy(d->fs_type, sizeof(d->fs_type), v->fs_type);
		}
	}
	return 0;
}

void
ds_snap_free(struct ds_snap *s)
{
	free(s->devs);
	free(s->vols);
	memset(s, 0, sizeof(*s));
}

bool
ds_dev_suspect(const struct ds_dev *d)
{
	return strcasecmp(d->status, "on") != 0 || d->dead > 0 || d->offline;
}

enum ds_state
ds_dev_state(const struct ds_dev *d, int baseline_live)
{
	int	 live = d->active + d->standby;

	if (d->offline || strcasecmp(d->status, "off") == 0)
		return DS_OFF;
	/* "not connected" is how ESXi shows a device it has declared lost
	 * for good (PDL); IsPDL from vdq is the same evidence. */
	if (strcasecmp(d->status, "not connected") == 0 || d->pdl_evidence)
		return DS_PDL;
	if (d->total > 0 && d->dead == d->total)
		return DS_APD;
	if (strcasecmp(d->status, "dead") == 0)
		return DS_APD;
	if (strcasecmp(d->status, "degraded") == 0 || d->dead > 0)
		return DS_DEGRADED;
	if (baseline_live > 0 && live < baseline_live)
		return DS_DEGRADED;
	return DS_OK;
}

enum ds_state
ds_vol_state(const struct ds_snap *s, const struct ds_vol *v,
    const enum ds_state *devstate)
{
	enum ds_state st = DS_OK;
	size_t	 i;

	if (v->nfs) {
		if (v->accessible == 0)
			return DS_INACCESSIBLE;
		if (v->mounted == 0)
			return DS_UNMOUNTED;
		return DS_OK;
	}
	for (i = 0; i < s->ndev; i++)
		if (ds_in_list(v->devices, s->devs[i].id) && devstate[i] > st)
			st = devstate[i];
	if (v->mounted == 0 && st < DS_UNMOUNTED)
		st = DS_UNMOUNTED;
	return st;
}

const char *
ds_state_name(enum ds_state st)
{
	switch (st) {
	case DS_OK:		return "ok";
	case DS_DEGRADED:	return "degraded";
	case DS_UNMOUNTED:	return "unmounted";
	case DS_OFF:		return "off";
	case DS_INACCESSIBLE:	return "inaccessible";
	case DS_APD:		return "apd";
	case DS_PDL:		return "pdl";
	}
	return "ok";
}

const char *
ds_state_severity(enum ds_state st)
{
	switch (st) {
	case DS_OK:		return "info";
	case DS_DEGRADED:
	case DS_UNMOUNTED:
	case DS_OFF:		return "warning";
	case DS_INACCESSIBLE:	return "error";
	case DS_APD:
	case DS_PDL:		return "critical";
	}
	return "info";
}
