/*
 * gzip: compress a buffer into a gzip member (RFC 1952) with zlib.
 *
 * A struct gzip keeps one deflate stream for its whole life and resets it
 * between buffers: deflateInit2() allocates ~256 KB, and doing that for
 * every request would cost more than compressing a small batch.
 */
#ifndef ESXWATCH_GZIP_H
#define ESXWATCH_GZIP_H

#include <stddef.h>

#include "../agent/lib/buf.h"

/* Level 1: an agent on a hypervisor trades ratio for CPU (JSON still
 * shrinks 5-10x). */
#define GZIP_LEVEL_DEFAULT	1

struct gzip;

struct gzip	*gzip_new(int level);
void		 gzip_free(struct gzip *);
/* Replace out's content with the gzip of in[0..len).  0 ok, -1 error. */
int		 gzip_compress(struct gzip *, const void *in, size_t len,
		    struct buf *out);
/* Decompress a whole gzip member (tests, and a sanity check); at most
 * max bytes of output.  0 ok, -1 corrupt or too large. */
int		 gzip_decompress(const void *in, size_t len, struct buf *out,
		    size_t max);

#endif
