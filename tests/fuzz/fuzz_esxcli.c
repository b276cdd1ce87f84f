/*
 * Fuzz the esxcli text parser (every shape: table, block, keyed list,
 * keyvalue formatter, detected from the text): any bytes must parse or fail
 * cleanly, and whatever it returns must be internally consistent (a known
 * shape, no records for empty output, table rows untitled, every key and
 * value a string, esx_get finding the first key of every record).  The
 * records then go through the nic reader (a `nic list` row with the next
 * record as its `nic stats get` block), which must keep its strings
 * terminated.  Block and keyed records: no key holds a ':' (the key of
 * "Key:value" ends at the first one) or starts/ends with a blank, and a
 * record's first key is in it once (seeing it again starts the next
 * record).  Expected keys that are absent are counted, never silently.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../collectors/host/esxcli.h"
#include "../../collectors/nic.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct esx_out out;
	char err[256];
	size_t i, k, total = 0;
	volatile size_t sink;
	struct nic_info ni;

	if (esxcli_parse((const char *)data, size, &out, err, sizeof(err)) == -1) {
		if (out.n != 0 || out.recs != NULL || strlen(err) >= sizeof(err))
			__builtin_trap();
		return 0;
	}
	if (out.shape < ESX_NONE || out.shape > ESX_KEYVALUE ||
	    (out.shape == ESX_NONE && out.n != 0))
		__builtin_trap();
	for (i = 0; i < out.n; i++) {
		const struct esx_rec *r = &out.recs[i];

		if (r->title == NULL ||
		    (out.shape == ESX_TABLE && r->title[0] != '\0'))
			__builtin_trap();
		if (nic_from_esxcli(r, i + 1 < out.n ? &out.recs[i + 1] : NULL,
		    &ni) == 0 && (memchr(ni.name, '\0', sizeof(ni.name)) == NULL ||
		    memchr(ni.duplex, '\0', sizeof(ni.duplex)) == NULL ||
		    memchr(ni.driver, '\0', sizeof(ni.driver)) == NULL ||
		    memchr(ni.mac, '\0', sizeof(ni.mac)) == NULL))
			__builtin_trap();
		total += strlen(r->title);
		for (k = 0; k < r->n; k++)
			total += strlen(r->keys[k]) + strlen(r->vals[k]);
		if (r->n > 0 && esx_get(r, r->keys[0]) != r->vals[0])
			__builtin_trap();
		if (out.shape == ESX_BLOCK || out.shape == ESX_KEYED) {
			for (k = 0; k < r->n; k++) {
				size_t kl = strlen(r->keys[k]);

				if (kl == 0 || strchr(r->keys[k], ':') != NULL ||
				    r->keys[k][0] == ' ' || r->keys[k][kl - 1] == ' ')
					__builtin_trap();
				if (k > 0 && strcmp(r->keys[k], r->keys[0]) == 0)
					__builtin_trap();
			}
		}
		{
			uint64_t g = esxcli_parse_gaps();
			const char *v = esx_want(r, "fuzz", "", "Fuzz Key");

			if ((v == NULL) != (esxcli_parse_gaps() == g + 1))
				__builtin_trap();
		}
	}
	sink = total;
	(void)sink;
	esx_out_free(&out);
	return 0;
}
