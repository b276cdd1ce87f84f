/* libFuzzer target for collectors/storage_ds.c: the input is split at 0xff
 * bytes into up to six esxcli outputs (device list, path list, extent list,
 * filesystem list, nfs list, nfs41 list), each parsed by esxcli_parse, and
 * the storage picture built from them with every state derived.  Nothing
 * may crash, leak or read out of bounds, whatever the outputs say; every
 * string of the picture stays terminated, and a datastore lists each of its
 * devices as a whole element (ds_in_list).  The seeds under
 * tests/fuzz/seeds/datastore/ hold the six outputs of real hosts so joined. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/host/esxcli.h"
#include "../../collectors/storage_ds.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct esx_out out[6];
	const struct esx_out *use[6];
	struct ds_snap s;
	enum ds_state *st;
	char	 err[256];
	size_t	 i, start = 0, part = 0;

	memset(out, 0, sizeof(out));
	for (i = 0; i < 6; i++)
		use[i] = NULL;
	for (i = 0; i <= size && part < 6; i++) {
		if (i < size && data[i] != 0xff)
			continue;
		if (esxcli_parse((const char *)data + start, i - start, &out[part],
		    err, sizeof(err)) == 0)
			use[part] = &out[part];
		part++;
		start = i + 1;
	}
	if (ds_snap_build(&s, use[0], use[1], use[2], use[3], use[4], use[5], err,
	    sizeof(err)) == 0) {
		st = calloc(s.ndev + 1, sizeof(*st));
		if (st == NULL)
			abort();
		for (i = 0; i < s.ndev; i++) {
			const struct ds_dev *d = &s.devs[i];

			if (memchr(d->id, '\0', sizeof(d->id)) == NULL ||
			    memchr(d->datastores, '\0', sizeof(d->datastores)) == NULL ||
			    memchr(d->display, '\0', sizeof(d->display)) == NULL)
				abort();
			st[i] = ds_dev_state(&s.devs[i], (int)(size % 4));
			if (ds_state_severity(st[i]) == NULL)
				abort();
			(void)ds_dev_suspect(&s.devs[i]);
			if (ds_find_dev(&s, s.devs[i].id) == NULL)
				abort();
		}
		for (i = 0; i < s.nvol; i++) {
			const struct ds_vol *v = &s.vols[i];

			if (memchr(v->devices, '\0', sizeof(v->devices)) == NULL ||
			    memchr(v->name, '\0', sizeof(v->name)) == NULL)
				abort();
			if (ds_state_name(ds_vol_state(&s, v, st)) == NULL)
				abort();
			(void)ds_in_list(v->devices, v->name);
			(void)ds_in_list(v->name, v->devices);
		}
		free(st);
		ds_snap_free(&s);
	}
	for (i = 0; i < 6; i++)
		esx_out_free(&out[i]);
	return 0;
}
