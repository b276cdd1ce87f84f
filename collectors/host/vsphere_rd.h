/*
 * vsphere_rd: the reader of host and datastore properties shared by the
 * full read (RetrievePropertiesEx, vsphere_snap.c) and the updates
 * (WaitForUpdatesEx, vsphere_wait.c).  Internal to collectors/host.
 *
 * The two answers carry the same values one level apart:
 *   RetrieveResult  returnval/objects/{obj, propSet/{name, val/ITEM}}
 *   UpdateSet       returnval/filterSet/objectSet/{kind, obj,
 *                       changeSet/{name, op, val/ITEM}}
 * so the reader takes the offset (off 0 or 1) and the element names
 * (objects/propSet or objectSet/changeSet).
 */
#ifndef ESXWATCH_VSPHERE_RD_H
#define ESXWATCH_VSPHERE_RD_H

#include "vsphere.h"

struct rd {
	struct vs_snap	*s;
	char		*token;
	size_t		 tokenlen;
	char		 prop[128];
	bool		 is_host, is_ds;
	bool		 overflow;
	char		 mplun[192];
	int		 off;
	const char	*objs, *props;
};

int	vs_rd_start(void *arg, struct vx *x, int depth, const char *name);
int	vs_rd_end(void *arg, struct vx *x, int depth, const char *name,
	    const char *t, size_t len);

/* The properties read, NULL-terminated (the bits of an update's mask). */
extern const char *const vs_host_props[];
extern const char *const vs_ds_props[];

/* A ContainerView of type under the root folder: 0, or -1 with err. */
int	vs_make_view(struct vs_conn *, const char *type, char *view,
	    char *err, size_t errlen);
void	vs_drop_view(struct vs_conn *, const char *view);

#endif
