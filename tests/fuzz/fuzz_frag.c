/* libFuzzer target: the .FRAG-NNNNN joiner (agent/analyze/frag.c).  The
 * input is cut at NUL bytes into pieces, "NAME\nDATA" each.  Whatever
 * they are: no crash or leak; the files come out sorted, one per name; a
 * joined file is exactly its pieces' bytes in order (its length the sum
 * of theirs), and a set that does not run 0, 1, 2, ... is never joined. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/analyze/frag.h"

#define MAXP	64

static void
gap(void *arg, const char *line)
{
	(*(int *)arg)++;
	if (line == NULL || line[0] == '\0')
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	struct frag_store s;
	struct frag_file *f = NULL;
	char names[MAXP][256], base[256];
	size_t lens[MAXP], np = 0, i = 0;
	int gaps = 0, idx;
	long n;

	frag_store_init(&s, 1u << 20);
	while (i < size && np < MAXP) {
		const uint8_t *z = memchr(d + i, 0, size - i);
		size_t len = z ? (size_t)(z - (d + i)) : size - i;
		const uint8_t *nl = memchr(d + i, '\n', len);
		size_t nlen = nl ? (size_t)(nl - (d + i)) : len;
		char *data;

		if (nlen == 0 || nlen >= sizeof(names[0]) || memchr(d + i, 0, nlen)) {
			i += len + 1;
			continue;
		}
		memcpy(names[np], d + i, nlen);
		names[np][nlen] = '\0';
		lens[np] = nl ? len - nlen - 1 : 0;
		data = malloc(lens[np] + 1);
		if (data == NULL)
			abort();
		if (lens[np])
			memcpy(data, nl + 1, lens[np]);
		(void)frag_split(names[np], base, sizeof(base), &idx);
		if (idx > FRAG_MAX_INDEX)
			abort();
		if (frag_add(&s, names[np], data, lens[np]) == 0)
			np++;
		i += len + 1;
	}
	n = frag_join(&s, &f, gap, &gaps);
	if (n < 0)
		return 0;
	for (long k = 0; k < n; k++) {
		size_t want = 0, pieces = 0;

		if (k > 0 && strcmp(f[k - 1].name, f[k].name) >= 0)
			abort();	/* sorted, one per name */
		for (size_t j = 0; j < np; j++) {
			(void)frag_split(names[j], base, sizeof(base), &idx);
			if (strcmp(base, f[k].name) == 0) {
				want += lens[j];
				pieces++;
			}
		}
		if (pieces == 0 || want != f[k].len || f[k].data[f[k].len] != '\0')
			abort();
	}
	frag_files_free(f, (size_t)n);
	return 0;
}
