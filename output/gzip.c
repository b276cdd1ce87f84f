/*
 * gzip: one reusable deflate stream per sink instance.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip.h"

struct gzip {
	z_stream	zs;
	int		level;
};

struct gzip *
gzip_new(int level)
{
	struct gzip *g;

	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->level = level;
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's;
	 * memLevel 8 is zlib's default and its best speed/memory trade. */
	if (deflateInit2(&g->zs, level, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return NULL;
	}
	return g;
}

void
gzip_free(struct gzip *g)
{
	if (g == NULL)
		return;
	deflateEnd(&g->zs);
	free(g);
}

int
gzip_compress(struct gzip *g, const void *in, size_t len, struct buf *out)
{
	uLong bound;
	int rc;

	if (len > UINT_MAX)
		return -1;
	if (deflateReset(&g->zs) != Z_OK)
		return -1;
	bound = deflateBound(&g->zs, (uLong)len);
	buf_reset(out);
	if (buf_reserve(out, (size_t)bound + 1) == -1)
		return -1;
	g->zs.next_in = (Bytef *)(uintptr_t)in;
	g->zs.avail_in = (uInt)len;
	g->zs.next_out = (Bytef *)out->data;
	g->zs.avail_out = (uInt)bound;
	/* deflateBound() guarantees a single Z_FINISH call completes. */
	rc = deflate(&g->zs, Z_FINISH);
	if (rc != Z_STREAM_END)
		return -1;
	out->len = (size_t)bound - g->zs.avail_out;
	out->data[out->len] = '\0';
	return 0;
}

int
gzip_decompress(const void *in, size_t len, struct buf *out, size_t max)
{
	z_stream zs;
	char chunk[16384];
	int rc;

	if (len > UINT_MAX)
		return -1;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	buf_reset(out);
	do {
		zs.next_out = (Bytef *)chunk;
		zs.avail_out = sizeof(chunk);
		rc = inflate(&zs, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END)
			goto err;
		if (out->len + (sizeof(chunk) - zs.avail_out) > max)
			goto err;
		if (buf_append(out, chunk, sizeof(chunk) - zs.avail_out) == -1)
			goto err;
	} while (rc != Z_STREAM_END && (zs.avail_in > 0 || zs.avail_out == 0));
	if (rc != Z_STREAM_END)
		goto err;
	inflateEnd(&zs);
	return 0;
err:
	inflateEnd(&zs);
	return -1;
}
