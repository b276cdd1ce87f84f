/*
 * gzip: one reusable deflate stream per sink instance.  zlib deflates raw;
 * the member's header and trailer (RFC 1952) are written here, the
 * trailer's CRC-32 by crc_update() (agent/lib/crc.h), which folds where zlib
 * would go through its tables.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../agent/lib/crc.h"
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
	/* windowBits -15: raw deflate, wrapped here (gzip_compress);
	 * memLevel 8 is zlib's default and its best speed/memory trade. */
	if (deflateInit2(&g->zs, level, Z_DEFLATED, -15, 8,
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

#define GZ_HEAD	10
#define GZ_TAIL	8

static void
put_le32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i) & 0xff);
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
	if (buf_reserve(out, GZ_HEAD + (size_t)bound + GZ_TAIL + 1) == -1)
		return -1;
	/* ID1 ID2, CM deflate, no flags, no mtime, XFL (2: best, 4:
	 * fastest), OS Unix: what zlib's own gzip wrapper writes */
	memcpy(out->data, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", GZ_HEAD);
	out->data[8] = (char)(g->level == 9 ? 2 : g->level < 2 ? 4 : 0);
	g->zs.next_in = (Bytef *)(uintptr_t)in;
	g->zs.avail_in = (uInt)len;
	g->zs.next_out = (Bytef *)out->data + GZ_HEAD;
	g->zs.avail_out = (uInt)bound;
	/* deflateBound() guarantees a single Z_FINISH call completes. */
	rc = deflate(&g->zs, Z_FINISH);
	if (rc != Z_STREAM_END)
		return -1;
	out->len = GZ_HEAD + (size_t)bound - g->zs.avail_out;
	put_le32(out->data + out->len, crc_update(0, in, len));
	put_le32(out->data + out->len + 4, (uint32_t)len);
	out->len += GZ_TAIL;
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
