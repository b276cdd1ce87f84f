/*
 * segread: records read back from the segments (see segstore.h,
 * "Reading"): each reader's window over a file segment, a record at an
 * offset checked by its CRC, and the next valid record after damage.  A
 * room of its own: reading never changes the store, and a read error is
 * the caller's to judge (spoolpeek.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"
#include "segstore_int.h"

#define WIN_SIZE	(256u * 1024)		/* read window per reader */

int
segstore_open_fd(struct segstore *st, struct seg *s)
{
	char path[PATH_MAX];

	if (s->fd >= 0)
		return s->fd;
	s->fd = fs_open_read(segstore_path(st, s->id, path, sizeof(path)));
	if (s->fd < 0) {
		int err = errno;

		log_limited(LOG_ERROR, "spool:open", 60, "spool: cannot open %s: %s",
		    path, log_errstr(err));
		errno = err;
	}
	return s->fd;
}

/*
 * Point *out at bytes [off, off+len) of segment s, through destination d's
 * read window for file segments.  The pointer stays valid until the next
 * call for d.  -1 on a read error or if the range is past the segment.
 */
int
segstore_bytes(struct segstore *st, struct segwin *w, struct seg *s, uint64_t off,
    size_t len, const unsigned char **out)
{
	size_t want;
	int rc, err;

	if (off > s->size || len > s->size - off) {
		w->err = EINVAL;
		return -1;
	}
	if (s->mem != NULL) {
		*out = s->mem + off;
		return 0;
	}
	if (w->ok && w->gen == st->gen && w->seg == s->id && off >= w->off &&
	    off + len <= w->off + w->len) {
		*out = w->buf + (off - w->off);
		return 0;
	}
	want = len > WIN_SIZE ? len : WIN_SIZE;
	if (want > s->size - off)
		want = (size_t)(s->size - off);
	if (want > w->cap) {
		unsigned char *n = realloc(w->buf, want);

		if (n == NULL) {
			w->err = ENOMEM;
			return -1;
		}
		w->buf = n;
		w->cap = want;
	}
	w->ok = false;
	if (segstore_open_fd(st, s) < 0) {
		w->err = errno;
		return -1;
	}
	rc = fs_read_all(s->fd, w->buf, want, (off_t)off);
	err = errno;
	/* a sealed segment's descriptor is kept within fd_max (segdir.c) */
	if (!(st->active && s == &st->segs[st->nsegs - 1]) && !segstore_fd_kept(st)) {
		close(s->fd);
		s->fd = -1;
	}
	if (rc < 0) {
		w->err = err;
		log_limited(LOG_ERROR, "spool:read", 60, "spool: cannot read segment %016"
		    PRIx64 ": %s", s->id, log_errstr(err));
		return -1;
	}
	w->ok = true;
	w->gen = st->gen;
	w->seg = s->id;
	w->off = off;
	w->len = want;
	*out = w->buf;
	return 0;
}

/* The record at (s, off): 1 valid (payload in *p), 0 damaged, -1 error. */
int
segstore_rec_at(struct segstore *st, struct segwin *w, struct seg *s, uint64_t off,
    uint64_t *seq, const unsigned char **p, size_t *plen)
{
	const unsigned char *h;
	uint32_t len;
	long v;

	if (s->size - off < SPOOL_REC_HDR)
		return 0;
	if (segstore_bytes(st, w, s, off, SPOOL_REC_HDR, &h) < 0)
		return -1;
	if (spoolrec_get32(h) != SPOOL_REC_MAGIC)
		return 0;
	len = spoolrec_get32(h + 4);
	if (len > SPOOL_REC_MAX || len > s->size - off - SPOOL_REC_HDR)
		return 0;
	if (segstore_bytes(st, w, s, off, SPOOL_REC_HDR + len, &h) < 0)
		return -1;
	v = spoolrec_valid(h, SPOOL_REC_HDR + len, seq);
	if (v < 0)
		return 0;
	*p = h + SPOOL_REC_HDR;
	*plen = (size_t)v;
	return 1;
}

/*
 * Offset of the next valid record at or after off (s->size if none).  A
 * read error stops the search where it happened: the caller reads there
 * again and decides (a passing error must not skip the rest unseen).
 */
uint64_t
segstore_resync(struct segstore *st, struct segwin *w, struct seg *s, uint64_t off)
{
	for (; off + SPOOL_REC_HDR <= s->size; off++) {
		const unsigned char *p;
		uint64_t seq;
		size_t plen;
		int r;

		if (segstore_bytes(st, w, s, off, 4, &p) < 0)
			return off;
		if (spoolrec_get32(p) != SPOOL_REC_MAGIC)
			continue;
		r = segstore_rec_at(st, w, s, off, &seq, &p, &plen);
		if (r < 0)
			return off;
		if (r == 1)
			return off;
	}
	return s->size;
}
