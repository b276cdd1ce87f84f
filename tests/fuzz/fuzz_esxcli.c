/*
 * Fuzz the esxcli text parser: any bytes must parse or fail cleanly, and
 * whatever it returns must be internally consistent (every key and value a
 * string, esx_get finding the first key of every record).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../collectors/esxcli.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct esx_out out;
	char err[256];
	size_t i, k, total = 0;
	volatile size_t sink;

	if (esxcli_parse((const char *)data, size, &out, err, sizeof(err)) == -1) {
		if (out.n != 0 || out.recs != NULL || strlen(err) >= sizeof(err))
			__builtin_trap();
		return 0;
	}
	for (i = 0; i < out.n; i++) {
		const struct esx_rec *r = &out.recs[i];

		if (r->title == NULL)
			__builtin_trap();
		total += strlen(r->title);
		for (k = 0; k < r->n; k++)
			total += strlen(r->keys[k]) + strlen(r->vals[k]);
		if (r->n > 0 && esx_get(r, r->keys[0]) != r->vals[0])
			__builtin_trap();
	}
	sink = total;
	(void)sink;
	esx_out_free(&out);
	return 0;
}
