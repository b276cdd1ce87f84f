/* libFuzzer target: the vSphere client's XML reader (collectors/host/
 * vsphere_xml.c) must never crash, leak or read out of bounds whatever the
 * bytes, keep its limits (depth, text length) and hand callbacks
 * NUL-terminated text of the length it says.  The input is fed in pieces
 * (the first byte picks the piece size) as libcurl hands it over.  The
 * same bytes go through the poll's snapshot reader (vsphere_snap.c): every
 * host and datastore it keeps has NUL-terminated names; and through the
 * vSAN health service's SMART reader (vsphere_smart.c): every disk and
 * host name NUL-terminated, within its caps; and through the
 * WaitForUpdatesEx reader (vsphere_wait.c), each update applied twice to a
 * kept snapshot (an enter after an enter replaces, a leave removes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/host/vsphere.h"
#include "../../collectors/host/vsphere_xml.h"

static int
on_start(void *arg, struct vx *x, int depth, const char *name)
{
	(void)arg;
	if (depth < 1 || depth > VX_MAX_DEPTH || depth != vx_depth(x) ||
	    strlen(name) >= VX_MAX_NAME || strcmp(vx_name_at(x, depth), name) != 0)
		abort();
	(void)vx_path_ends(x, "propSet/val");
	(void)vx_type_at(x, depth);
	return 0;
}

static int
on_end(void *arg, struct vx *x, int depth, const char *name, const char *text,
    size_t len)
{
	(*(size_t *)arg)++;
	if (depth != vx_depth(x) || strlen(text) > len || len >= VX_MAX_TEXT ||
	    text[len] != '\0' || *name == '\0')
		abort();
	return 0;
}

static void
snap(const uint8_t *data, size_t size)
{
	struct vs_snap s;
	char tok[512], err[256];
	size_t i;

	memset(&s, 0, sizeof(s));
	if (vs_snap_parse(&s, (const char *)data, size, tok, sizeof(tok), err,
	    sizeof(err)) == -1 && memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	for (i = 0; i < s.nhosts; i++)
		if (strlen(s.hosts[i].name) >= sizeof(s.hosts[i].name) ||
		    s.hosts[i].npnics > 4096)
			abort();
	for (i = 0; i < s.nds; i++)
		if (strlen(s.ds[i].name) >= sizeof(s.ds[i].name))
			abort();
	vs_snap_free(&s);
}

static void
update(const uint8_t *data, size_t size)
{
	struct vs_snap s;
	struct vs_update up;
	char err[256] = "";
	size_t i, k;

	memset(&s, 0, sizeof(s));
	for (k = 0; k < 2; k++) {
		if (vs_update_parse(&up, (const char *)data, size, err,
		    sizeof(err)) == 0 && up.have_ret)
			(void)vs_update_apply(&s, &up, err, sizeof(err));
		if (memchr(err, '\0', sizeof(err)) == NULL ||
		    strlen(up.version) >= 512)
			abort();
		vs_update_free(&up);
	}
	for (i = 0; i < s.nhosts; i++)
		if (strlen(s.hosts[i].name) >= sizeof(s.hosts[i].name) ||
		    s.hosts[i].npnics > 4096)
			abort();
	vs_snap_free(&s);
}

static void
smart(const uint8_t *data, size_t size)
{
	struct vs_smart o;
	char err[256];
	size_t i;

	if (vs_smart_parse(&o, (const char *)data, size, err, sizeof(err)) ==
	    -1 && memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	if (o.n > 4096 || o.nhosts > 1024)
		abort();
	for (i = 0; i < o.n; i++)
		if (strlen(o.d[i].disk) >= sizeof(o.d[i].disk) ||
		    strlen(o.d[i].host) >= sizeof(o.d[i].host) ||
		    strlen(o.d[i].error) >= sizeof(o.d[i].error) ||
		    strlen(o.d[i].si.health_text) >= sizeof(o.d[i].si.health_text))
			abort();
	for (i = 0; i < o.nhosts; i++)
		if (strlen(o.hosts[i]) >= sizeof(o.hosts[i]))
			abort();
	vs_smart_free(&o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t ends = 0, piece, off = 1;
	struct vx_handler h = { on_start, on_end, &ends };
	struct vx *x;
	int r = 0;

	if (size < 1)
		return 0;
	piece = (size_t)data[0] + 1;
	x = vx_new(&h);
	if (x == NULL)
		return 0;
	while (r == 0 && off < size) {
		size_t n = size - off < piece ? size - off : piece;

		r = vx_feed(x, data + off, n);
		off += n;
	}
	if (r == 0)
		r = vx_finish(x);
	if (r != 0 && *vx_error(x) == '\0')
		abort();
	vx_free(x);
	snap(data + 1, size - 1);
	update(data + 1, size - 1);
	smart(data + 1, size - 1);
	return 0;
}
