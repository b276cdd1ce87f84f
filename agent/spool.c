/*
 * spool: append-only segment files with per-destination cursors; the
 * durable queue between the collecting thread and the shipping threads.
 * The format and the promises are described in spool.h.
 *
 * Locking: one mutex (mu) guards everything in struct spool; the condition
 * variable cv wakes waiting peeks when events arrive.  A housekeeping thread
 * does the slow work away from the collecting thread: the batched fsync of
 * the segment being written, writing cursor files after acknowledgements,
 * and trying the disk again after it refused a write.  Cursor files are
 * written under curmu (never while holding mu), so a reload cannot remove a
 * destination while its cursor file is being rewritten.  Lock order:
 * curmu, then mu.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "../output/sink.h"
#include "buf.h"
#include "log.h"
#include "platform.h"
#include "spool.h"

#define WIN_SIZE	(256u * 1024)		/* read window per destination */
#define MEM_MAX		(32ull * 1024 * 1024)	/* memory-only bound */
#define SEG_MAX		(64ull * 1024 * 1024)
#define SEG_MIN		1024ull
#define SEGS_MAX	4096ull			/* segments in a full spool */

struct seg {
	uint64_t	 id;
	uint64_t	 first_seq;	/* sequence of the first record */
	uint64_t	 end_seq;	/* one past the last record */
	uint64_t	 size;		/* bytes of whole records */
	uint64_t	 synced;	/* bytes known to be on disk */
	int		 fd;		/* -1 when closed */
	unsigned char	*mem;		/* non-NULL: a memory-only segment */
	size_t		 memcap;
};

/* A position in the stream: before the record at (seg, off), whose
 * sequence is seq (or the next one pushed). */
struct pos {
	uint64_t	seg;
	uint64_t	off;
	uint64_t	seq;
};

struct dest {
	char		 name[SPOOL_NAME_MAX];
	struct pos	 cur;
	bool		 dirty;		/* cursor file behind cur */
	struct pos	*peek;		/* position after each peeked event */
	uint64_t	*peek_seq;	/* each peeked event's sequence */
	size_t		 npeek, peek_used, peek_cap;
	uint64_t	 acked, dropped_budget, dropped_poison;
	int64_t		 last_ack_ms;
	/* read window over one file segment */
	unsigned char	*win;
	size_t		 win_cap, win_len;
	uint64_t	 win_seg, win_off;
	bool		 win_ok;
	/* consecutive read errors at one position (a bad sector) */
	struct pos	 rderr_at;
	int		 rderr_n;
	int		 rderr_errno;	/* of the last failed read */
};

struct spool {
	char		*dir;
	struct spool_opts o;
	pthread_mutex_t	 mu;
	pthread_mutex_t	 curmu;
	pthread_cond_t	 cv;		/* events pushed, wakeup */
	pthread_cond_t	 hkcv;		/* work for the housekeeper */
	pthread_t	 hk;
	bool		 hk_started;
	bool		 closing;

	struct seg	*segs;		/* ordered by id */
	size_t		 nsegs, segcap;
	bool		 active;	/* segs[nsegs-1] is being appended to */
	bool		 memonly;
	bool		 nodisk;	/* no usable directory at all: memory for good */
	int		 lockfd;	/* spool/lock, fcntl-locked while we run */
	uint64_t	 next_seq, next_id;

	struct dest	**dests;
	size_t		 ndests;

	uint64_t	 wake_gen;
	int64_t		 last_sync_ms, last_retry_ms;
	int64_t		 cursor_next_ms;	/* after a failed cursor write */
	bool		 sync_wanted;

	/* counters since start */
	uint64_t	 pushed, corrupt, torn;
	uint64_t	 gone_budget, gone_poison;	/* of removed destinations */

	struct buf	 rec;		/* push scratch */
	struct buf	 json;		/* peek scratch: JSON size of an event */
};

static pthread_mutex_t	 current_mu = PTHREAD_MUTEX_INITIALIZER;
static struct spool	*current;

static void	*housekeeper(void *);
static void	 release_segments(struct spool *);
static void	 seg_sync_failed(struct spool *, size_t, int);
static void	 save_cursors(struct spool *);

/* ---- small helpers ---------------------------------------------------- */

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = (v >> 16) & 0xff;
	p[3] = (v >> 24) & 0xff;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint32_t
rec_crc(const unsigned char *hdr, const unsigned char *payload, size_t len)
{
	uLong c = crc32(0L, Z_NULL, 0);

	c = crc32(c, hdr + 4, 12);
	/* zlib takes uInt lengths; payloads are bounded by SPOOL_REC_MAX */
	c = crc32(c, payload, (uInt)len);
	return (uint32_t)c;
}

/*
 * Is there a valid record at data[0..avail)?  Returns its payload length
 * (>= 0) or -1.  A length that runs past avail is not valid: a record is
 * whole or it is not there.
 */
static long
rec_valid(const unsigned char *data, size_t avail, uint64_t *seq)
{
	uint32_t len;

	if (avail < SPOOL_REC_HDR || get32(data) != SPOOL_REC_MAGIC)
		return -1;
	len = get32(data + 4);
	if (len > SPOOL_REC_MAX || len > avail - SPOOL_REC_HDR)
		return -1;
	if (rec_crc(data, data + SPOOL_REC_HDR, len) != get32(data + 16))
		return -1;
	if (seq != NULL)
		*seq = get64(data + 8);
	return (long)len;
}

static int
pos_cmp(const struct pos *a, uint64_t seg, uint64_t off)
{
	if (a->seg != seg)
		return a->seg < seg ? -1 : 1;
	if (a->off != off)
		return a->off < off ? -1 : 1;
	return 0;
}

static char *
seg_path(const struct spool *sp, uint64_t id, char *out, size_t len)
{
	snprintf(out, len, "%s/%016" PRIx64 ".seg", sp->dir, id);
	return out;
}

/* cursor.NAME with every byte outside [A-Za-z0-9_-] as %XX. */
static int
cursor_path(const struct spool *sp, const char *name, char *out, size_t len)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, PATH_MAX);
	if (buf_printf(&b, "%s/cursor.", sp->dir) < 0)
		goto out;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-') {
			if (buf_putc(&b, (char)*p) < 0)
				goto out;
		} else if (buf_printf(&b, "%%%02X", *p) < 0)
			goto out;
	}
	if (b.len + 1 > len)
		goto out;
	memcpy(out, b.data, b.len + 1);
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

static int
unescape_name(const char *s, char *out, size_t len)
{
	size_t n = 0;

	while (*s) {
		unsigned int c;

		if (*s == '%') {
			char hex[3] = { 0, 0, 0 };
			char *end;

			if (s[1] == '\0' || s[2] == '\0')
				return -1;
			hex[0] = s[1];
			hex[1] = s[2];
			c = (unsigned int)strtoul(hex, &end, 16);
			if (*end != '\0' || c == 0)
				return -1;
			s += 3;
		} else
			c = (unsigned char)*s++;
		if (n + 1 >= len)
			return -1;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

static void
fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

static int
write_all(int fd, const void *p, size_t len, off_t off)
{
	const unsigned char *c = p;

	while (len > 0) {
		ssize_t w = off >= 0 ? pwrite(fd, c, len, off) : write(fd, c, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		c += w;
		len -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}

static int
read_all(int fd, void *p, size_t len, off_t off)
{
	unsigned char *c = p;

	while (len > 0) {
		ssize_t r = pread(fd, c, len, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;	/* the file is shorter than we know it is */
			return -1;
		}
		c += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

/* ---- scanning a segment image ---------------------------------------- */

struct scan {
	uint64_t	expected;	/* next sequence expected, 0 = unknown */
	uint64_t	corrupt;
	uint64_t	regions;
	uint64_t	first, last;	/* sequences seen */
	uint64_t	nrec;
	/*
	 * The previous segment ended with a whole record: a sequence gap
	 * right at this boundary is a segment the budget dropped (memory
	 * segments are dropped from the middle), not damage.
	 */
	bool		clean_start;
};

static size_t
scan_image(const unsigned char *data, size_t len, spool_rec_fn cb, void *arg,
    struct scan *sc)
{
	size_t off = 0, end = 0;
	bool bad = false;

	while (off + SPOOL_REC_HDR <= len) {
		uint64_t seq;
		long plen = rec_valid(data + off, len - off, &seq);

		if (plen < 0) {
			bad = true;
			off++;
			continue;
		}
		if (bad) {
			sc->regions++;
			if (sc->expected == 0)
				sc->corrupt++;
		}
		if (sc->expected != 0 && seq > sc->expected &&
		    !(sc->nrec == 0 && !bad && sc->clean_start))
			sc->corrupt += seq - sc->expected;
		if (sc->expected == 0 || seq + 1 > sc->expected)
			sc->expected = seq + 1;
		if (sc->nrec == 0)
			sc->first = seq;
		sc->last = seq;
		sc->nrec++;
		bad = false;
		if (cb != NULL && cb(arg, seq, data + off + SPOOL_REC_HDR, (size_t)plen) != 0)
			return off + SPOOL_REC_HDR + (size_t)plen;
		off += SPOOL_REC_HDR + (size_t)plen;
		end = off;
	}
	return end;
}

size_t
spool_scan_image(const unsigned char *data, size_t len, spool_rec_fn cb,
    void *arg, uint64_t *corrupt_records, uint64_t *bad_regions)
{
	struct scan sc;
	size_t end;

	memset(&sc, 0, sizeof(sc));
	end = scan_image(data, len, cb, arg, &sc);
	if (end < len)
		sc.regions++;	/* trailing garbage */
	if (corrupt_records != NULL)
		*corrupt_records = sc.corrupt;
	if (bad_regions != NULL)
		*bad_regions = sc.regions;
	return end;
}

/* ---- segments ---------------------------------------------------------- */

static struct seg *
seg_add(struct spool *sp, uint64_t id)
{
	struct seg *s;

	if (sp->nsegs == sp->segcap) {
		size_t ncap = sp->segcap ? sp->segcap * 2 : 16;
		struct seg *n = realloc(sp->segs, ncap * sizeof(*n));

		if (n == NULL)
			return NULL;
		sp->segs = n;
		sp->segcap = ncap;
	}
	s = &sp->segs[sp->nsegs++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->fd = -1;
	s->first_seq = s->end_seq = sp->next_seq;
	return s;
}

/* Index of the first segment with id >= id (nsegs if none). */
static size_t
seg_find(const struct spool *sp, uint64_t id)
{
	size_t lo = 0, hi = sp->nsegs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sp->segs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
seg_release(struct spool *sp, size_t i, bool unlink_file)
{
	struct seg *s = &sp->segs[i];
	char path[PATH_MAX];

	if (s->fd >= 0)
		close(s->fd);
	if (s->mem != NULL)
		free(s->mem);
	/* a memory segment may have a file too (its fsync failed); without
	 * a directory of our own, ids are not ours to unlink */
	if (unlink_file && !sp->nodisk &&
	    unlink(seg_path(sp, s->id, path, sizeof(path))) < 0 && errno != ENOENT)
		log_warn("spool: cannot remove %s: %s", path, strerror(errno));
	for (size_t k = 0; k < sp->ndests; k++)
		if (sp->dests[k]->win_ok && sp->dests[k]->win_seg == s->id)
			sp->dests[k]->win_ok = false;
	memmove(s, s + 1, (sp->nsegs - i - 1) * sizeof(*s));
	sp->nsegs--;
	if (i == sp->nsegs)
		sp->active = false;
}

static int
seg_open_fd(struct spool *sp, struct seg *s)
{
	char path[PATH_MAX];

	if (s->fd >= 0)
		return s->fd;
	s->fd = open(seg_path(sp, s->id, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		int err = errno;

		log_limited(LOG_ERROR, "spool:open", 60, "spool: cannot open %s: %s",
		    path, strerror(err));
		errno = err;
	}
	return s->fd;
}

/*
 * Point *out at bytes [off, off+len) of segment s, through destination d's
 * read window for file segments.  The pointer stays valid until the next
 * call for d.  -1 on a read error or if the range is past the segment.
 */
static int
seg_bytes(struct spool *sp, struct dest *d, struct seg *s, uint64_t off,
    size_t len, const unsigned char **out)
{
	size_t want;
	int rc, err;

	if (off > s->size || len > s->size - off) {
		d->rderr_errno = EINVAL;
		return -1;
	}
	if (s->mem != NULL) {
		*out = s->mem + off;
		return 0;
	}
	if (d->win_ok && d->win_seg == s->id && off >= d->win_off &&
	    off + len <= d->win_off + d->win_len) {
		*out = d->win + (off - d->win_off);
		return 0;
	}
	want = len > WIN_SIZE ? len : WIN_SIZE;
	if (want > s->size - off)
		want = (size_t)(s->size - off);
	if (want > d->win_cap) {
		unsigned char *n = realloc(d->win, want);

		if (n == NULL) {
			d->rderr_errno = ENOMEM;
			return -1;
		}
		d->win = n;
		d->win_cap = want;
	}
	d->win_ok = false;
	if (seg_open_fd(sp, s) < 0) {
		d->rderr_errno = errno;
		return -1;
	}
	rc = read_all(s->fd, d->win, want, (off_t)off);
	err = errno;
	/* a sealed segment's descriptor is not kept: a long backlog of
	 * segments must not hold as many descriptors */
	if (!(sp->active && s == &sp->segs[sp->nsegs - 1])) {
		close(s->fd);
		s->fd = -1;
	}
	if (rc < 0) {
		d->rderr_errno = err;
		log_limited(LOG_ERROR, "spool:read", 60, "spool: cannot read segment %016"
		    PRIx64 ": %s", s->id, strerror(err));
		return -1;
	}
	d->win_ok = true;
	d->win_seg = s->id;
	d->win_off = off;
	d->win_len = want;
	*out = d->win;
	return 0;
}

/* The record at (s, off): 1 valid (payload in *p), 0 damaged, -1 error. */
static int
rec_at(struct spool *sp, struct dest *d, struct seg *s, uint64_t off,
    uint64_t *seq, const unsigned char **p, size_t *plen)
{
	const unsigned char *h;
	uint32_t len;
	long v;

	if (s->size - off < SPOOL_REC_HDR)
		return 0;
	if (seg_bytes(sp, d, s, off, SPOOL_REC_HDR, &h) < 0)
		return -1;
	if (get32(h) != SPOOL_REC_MAGIC)
		return 0;
	len = get32(h + 4);
	if (len > SPOOL_REC_MAX || len > s->size - off - SPOOL_REC_HDR)
		return 0;
	if (seg_bytes(sp, d, s, off, SPOOL_REC_HDR + len, &h) < 0)
		return -1;
	v = rec_valid(h, SPOOL_REC_HDR + len, seq);
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
static uint64_t
resync(struct spool *sp, struct dest *d, struct seg *s, uint64_t off)
{
	for (; off + SPOOL_REC_HDR <= s->size; off++) {
		const unsigned char *p;
		uint64_t seq;
		size_t plen;
		int r;

		if (seg_bytes(sp, d, s, off, 4, &p) < 0)
			return off;
		if (get32(p) != SPOOL_REC_MAGIC)
			continue;
		r = rec_at(sp, d, s, off, &seq, &p, &plen);
		if (r < 0)
			return off;
		if (r == 1)
			return off;
	}
	return s->size;
}

/* ---- cursors ----------------------------------------------------------- */

static struct pos
end_pos(const struct spool *sp)
{
	struct pos p;

	if (sp->nsegs > 0) {
		p.seg = sp->segs[sp->nsegs - 1].id;
		p.off = sp->segs[sp->nsegs - 1].size;
	} else {
		p.seg = sp->next_id;
		p.off = 0;
	}
	p.seq = sp->next_seq;
	return p;
}

static int
cursor_write(const struct spool *sp, const char *name, const struct pos *p)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], text[128];
	int fd, n;

	if (cursor_path(sp, name, path, sizeof(path)) < 0)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(text, sizeof(text), "seg %" PRIu64 "\noff %" PRIu64 "\nseq %"
	    PRIu64 "\n", p->seg, p->off, p->seq);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto err;
	if (write_all(fd, text, (size_t)n, -1) < 0 || fsync(fd) < 0) {
		close(fd);
		goto err;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0)
		goto err;
	/*
	 * The rename is durable only once the directory is: without this a
	 * power cut can leave no cursor file at all next to synced segments,
	 * and a destination without a cursor starts at the end -- every
	 * queued event would be skipped.
	 */
	fsync_dir(sp->dir);
	return 0;
err:
	log_limited(LOG_ERROR, "spool:cursor", 60, "spool: cannot save cursor %s: %s",
	    path, strerror(errno));
	(void)unlink(tmp);
	return -1;
}

static int
cursor_read(const char *path, struct pos *p)
{
	char text[256];
	unsigned long long v[3] = { 0, 0, 0 };
	bool have[3] = { false, false, false };
	static const char *const keys[3] = { "seg ", "off ", "seq " };
	ssize_t n;
	char *line;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	for (line = text; *line != '\0';) {
		char *nl = strchr(line, '\n'), *end;
		unsigned long long x;
		int k;

		if (nl == NULL)
			return -1;	/* every line ends: a cut file is not a cursor */
		*nl = '\0';
		for (k = 0; k < 3; k++)
			if (strncmp(line, keys[k], 4) == 0)
				break;
		if (k == 3 || !(line[4] >= '0' && line[4] <= '9'))
			return -1;
		errno = 0;
		x = strtoull(line + 4, &end, 10);
		if (errno != 0 || *end != '\0')
			return -1;
		v[k] = x;
		have[k] = true;
		line = nl + 1;
	}
	if (!have[0] || !have[1] || !have[2])
		return -1;
	p->seg = v[0];
	p->off = v[1];
	p->seq = v[2];
	return 0;
}

/* ---- opening --------------------------------------------------------- */

static int
id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
load_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*data = NULL;
	*len = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size > 4 * SEG_MAX)
		goto err;
	*len = (size_t)st.st_size;
	*data = malloc(*len + 1);
	if (*data == NULL || read_all(fd, *data, *len, 0) < 0)
		goto err;
	close(fd);
	return 0;
err:
	close(fd);
	free(*data);
	*data = NULL;
	return -1;
}

/*
 * Scan one segment file at open: find its sequences and valid size, count
 * damaged records, cut trailing garbage.  last: the newest segment, whose
 * trailing garbage is a torn write rather than damage.
 */
static int
open_segment(struct spool *sp, uint64_t id, bool last, struct scan *sc)
{
	char path[PATH_MAX];
	unsigned char *data;
	size_t len, end;
	uint64_t corrupt0 = sc->corrupt, regions0 = sc->regions;
	struct seg *s;

	seg_path(sp, id, path, sizeof(path));
	if (load_file(path, &data, &len) < 0) {
		log_error("spool: cannot read %s: %s; skipping it", path, strerror(errno));
		return 0;
	}
	sc->nrec = 0;
	end = scan_image(data, len, NULL, NULL, sc);
	free(data);
	sc->clean_start = end == len && sc->nrec > 0;
	if (end < len) {
		if (last) {
			sp->torn++;
			log_warn("spool: %s: torn record at the end (%zu bytes), cut off",
			    path, len - end);
		} else {
			sc->regions++;
			log_warn("spool: %s: %zu damaged bytes at the end, cut off",
			    path, len - end);
		}
		if (truncate(path, (off_t)end) < 0)
			log_error("spool: cannot truncate %s: %s", path, strerror(errno));
	}
	if (sc->regions > regions0)
		log_warn("spool: %s: %" PRIu64 " damaged regions, %" PRIu64
		    " records lost", path, sc->regions - regions0, sc->corrupt - corrupt0);
	sp->corrupt += sc->corrupt - corrupt0;
	if (sc->nrec == 0) {
		/* nothing worth keeping */
		if (unlink(path) < 0)
			log_warn("spool: cannot remove %s: %s", path, strerror(errno));
		return 0;
	}
	s = seg_add(sp, id);
	if (s == NULL)
		return -1;
	s->first_seq = sc->first;
	s->end_seq = sc->last + 1;
	s->size = s->synced = end;
	if (s->end_seq > sp->next_seq)
		sp->next_seq = s->end_seq;
	return 0;
}

static int
scan_dir(struct spool *sp, uint64_t **ids, size_t *nids, char ***curnames, size_t *ncur)
{
	DIR *dir = opendir(sp->dir);
	struct dirent *de;
	size_t cap = 0, ccap = 0;

	*ids = NULL;
	*nids = 0;
	*curnames = NULL;
	*ncur = 0;
	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		const char *n = de->d_name;
		size_t l = strlen(n);

		if (l == 20 && strcmp(n + 16, ".seg") == 0) {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(n, &end, 16);
			if (errno != 0 || end != n + 16)
				continue;
			if (*nids == cap) {
				size_t nc = cap ? cap * 2 : 64;
				uint64_t *x = realloc(*ids, nc * sizeof(*x));

				if (x == NULL)
					goto err;
				*ids = x;
				cap = nc;
			}
			(*ids)[(*nids)++] = v;
		} else if (strncmp(n, "cursor.", 7) == 0 &&
		    (l < 4 || strcmp(n + l - 4, ".tmp") != 0)) {
			if (*ncur == ccap) {
				size_t nc = ccap ? ccap * 2 : 8;
				char **x = realloc(*curnames, nc * sizeof(*x));

				if (x == NULL)
					goto err;
				*curnames = x;
				ccap = nc;
			}
			if (((*curnames)[*ncur] = strdup(n + 7)) == NULL)
				goto err;
			(*ncur)++;
		} else if (strncmp(n, "cursor.", 7) == 0) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/%s", sp->dir, n);
			(void)unlink(path);	/* a temp file of a crashed write */
		}
	}
	closedir(dir);
	if (*nids > 1)
		qsort(*ids, *nids, sizeof(**ids), id_cmp);
	return 0;
err:
	closedir(dir);
	return -1;
}

static struct dest *
dest_new(const char *name)
{
	struct dest *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if (strlen(name) >= sizeof(d->name)) {
		log_error("spool: destination name too long: %.40s...", name);
		free(d);
		return NULL;
	}
	memcpy(d->name, name, strlen(name) + 1);
	return d;
}

static void
dest_free(struct dest *d)
{
	if (d == NULL)
		return;
	free(d->peek);
	free(d->peek_seq);
	free(d->win);
	free(d);
}

/* Clamp a loaded cursor to what the spool holds. */
static void
cursor_clamp(struct spool *sp, struct pos *p)
{
	size_t i = seg_find(sp, p->seg);

	if (i == sp->nsegs) {
		/* past every segment: the end (and its data was delivered) */
		*p = end_pos(sp);
		return;
	}
	if (sp->segs[i].id != p->seg) {
		p->seg = sp->segs[i].id;
		p->off = 0;
		if (p->seq < sp->segs[i].first_seq || p->seq > sp->segs[i].end_seq)
			p->seq = sp->segs[i].first_seq;
		return;
	}
	if (p->off > sp->segs[i].size || p->seq > sp->segs[i].end_seq ||
	    p->seq < sp->segs[i].first_seq) {
		/* beyond what survived (an unsynced tail) or inconsistent */
		if (p->off >= sp->segs[i].size) {
			p->off = sp->segs[i].size;
			p->seq = sp->segs[i].end_seq;
		} else {
			p->off = 0;
			p->seq = sp->segs[i].first_seq;
		}
	}
}

void
spool_default_opts(const struct config *cfg, struct spool_opts *o)
{
	const char *e;
	long mb = cfg != NULL && cfg->max_disk_buffer > 0 ? cfg->max_disk_buffer : 200;
	uint64_t seg;

	memset(o, 0, sizeof(*o));
	o->budget = (uint64_t)mb * 1024 * 1024;
	if (cfg != NULL && cfg->max_disk_buffer_kb > 0)
		o->budget = (uint64_t)cfg->max_disk_buffer_kb * 1024;
	seg = o->budget / 8;
	if (seg > 4 * 1024 * 1024)
		seg = 4 * 1024 * 1024;
	if (cfg != NULL && cfg->segment_kb > 0)
		seg = (uint64_t)cfg->segment_kb * 1024;
	o->segment_size = seg;
	o->sync_bytes = 256 * 1024;
	o->sync_ms = cfg != NULL && cfg->batch_flush_interval > 0 ?
	    cfg->batch_flush_interval * 1000 : 1000;
	o->retry_ms = 5000;
	/* a test hook: how soon a refused disk is tried again */
	if ((e = getenv("ESXWATCH_SPOOL_RETRY_MS")) != NULL && atoi(e) > 0)
		o->retry_ms = atoi(e);
}

static void
opts_fix(struct spool_opts *o)
{
	if (o->budget < 4 * SEG_MIN)
		o->budget = 4 * SEG_MIN;
	if (o->segment_size == 0 || o->segment_size > o->budget / 2)
		o->segment_size = o->budget / 2;
	/* a directory of a million tiny files helps nobody */
	if (o->segment_size < o->budget / SEGS_MAX)
		o->segment_size = o->budget / SEGS_MAX;
	if (o->segment_size < SEG_MIN)
		o->segment_size = SEG_MIN;
	if (o->segment_size > SEG_MAX)
		o->segment_size = SEG_MAX;
	if (o->sync_bytes == 0)
		o->sync_bytes = 256 * 1024;
	if (o->sync_ms <= 0)
		o->sync_ms = 1000;
	if (o->retry_ms <= 0)
		o->retry_ms = 5000;
	if (o->mem_max == 0 || o->mem_max > MEM_MAX)
		o->mem_max = MEM_MAX;
	if (o->mem_max > o->budget)
		o->mem_max = o->budget;
}

static int
make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_error("spool: cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_error("spool: %s is not a directory", dir);
		return -1;
	}
	if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) < 0)
		log_warn("spool: cannot chmod 0700 %s: %s", dir, strerror(errno));
	return 0;
}

static int set_dests_locked(struct spool *, const char *const *, size_t, bool);

/*
 * One agent per spool: a second one appending to the same segments would
 * interleave records.  fcntl locks vanish with the process, kill -9
 * included, so a stale lock file never blocks a restart.
 */
static int
lock_dir(struct spool *sp)
{
	char path[PATH_MAX], pid[32];
	struct flock fl;
	int n;

	snprintf(path, sizeof(path), "%s/lock", sp->dir);
	sp->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (sp->lockfd < 0) {
		log_error("spool: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(sp->lockfd, F_SETLK, &fl) < 0) {
		int err = errno;

		if (err != EAGAIN && err != EACCES) {
			/* a filesystem without locks: run unguarded rather than
			 * not durable at all */
			log_warn("spool: cannot lock %s: %s; make sure only one "
			    "esxwatch uses %s", path, strerror(err), sp->dir);
			return 0;
		}
		if (fcntl(sp->lockfd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
			log_error("spool: %s is in use by another esxwatch (pid %ld)",
			    sp->dir, (long)fl.l_pid);
		else
			log_error("spool: %s is in use by another esxwatch", sp->dir);
		close(sp->lockfd);
		sp->lockfd = -1;
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(sp->lockfd, 0) < 0 || write_all(sp->lockfd, pid, (size_t)n, 0) < 0)
		log_warn("spool: cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* What a spool directory holds at start. */
struct found {
	uint64_t	*ids;		/* segment ids, sorted */
	size_t		 nids;
	char		**names;	/* cursor file names (escaped) */
	struct pos	*pos;		/* their contents */
	size_t		 ncur;
	uint64_t	 maxseg, maxseq, minseq;
};

static void
found_free(struct found *f)
{
	for (size_t i = 0; i < f->ncur; i++)
		free(f->names[i]);
	free(f->names);
	free(f->pos);
	free(f->ids);
}

static int
load_cursors(struct spool *sp, struct found *f)
{
	if (f->ncur > 0 && (f->pos = calloc(f->ncur, sizeof(*f->pos))) == NULL)
		return -1;
	for (size_t i = 0; i < f->ncur; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/cursor.%s", sp->dir, f->names[i]);
		if (cursor_read(path, &f->pos[i]) < 0) {
			/* unreadable: deliver everything again rather than skip */
			log_warn("spool: %s is damaged; that destination restarts at "
			    "the oldest queued event", path);
			memset(&f->pos[i], 0, sizeof(f->pos[i]));
		}
		if (f->pos[i].seg > f->maxseg)
			f->maxseg = f->pos[i].seg;
		if (f->pos[i].seq > f->maxseq)
			f->maxseq = f->pos[i].seq;
		if (i == 0 || f->pos[i].seq < f->minseq)
			f->minseq = f->pos[i].seq;
	}
	return 0;
}

/* Known destinations get their cursor; cursors of others are removed. */
static void
assign_cursors(struct spool *sp, const struct found *f)
{
	for (size_t i = 0; i < f->ncur; i++) {
		char name[SPOOL_NAME_MAX], path[PATH_MAX];
		size_t k;

		if (unescape_name(f->names[i], name, sizeof(name)) < 0)
			continue;
		for (k = 0; k < sp->ndests; k++)
			if (strcmp(sp->dests[k]->name, name) == 0)
				break;
		if (k < sp->ndests) {
			sp->dests[k]->cur = f->pos[i];
			cursor_clamp(sp, &sp->dests[k]->cur);
			continue;
		}
		/* a destination no longer configured: release its backlog */
		snprintf(path, sizeof(path), "%s/cursor.%s", sp->dir, f->names[i]);
		log_info("spool: destination '%s' is no longer configured; its "
		    "backlog is released", name);
		(void)unlink(path);
	}
	for (size_t k = 0; k < sp->ndests; k++)
		sp->dests[k]->dirty = true;
}

/* Scan what a previous run left: segments, cursors, damage. */
static int
recover(struct spool *sp, const char *const *dests, size_t ndests)
{
	struct found f;
	struct scan sc;
	int rc = -1;

	memset(&f, 0, sizeof(f));
	if (scan_dir(sp, &f.ids, &f.nids, &f.names, &f.ncur) < 0 || load_cursors(sp, &f) < 0)
		goto out;
	/* Expect the first record at the oldest cursor so damage right at
	 * the start of the oldest segment is counted exactly. */
	memset(&sc, 0, sizeof(sc));
	sc.expected = f.minseq;
	for (size_t i = 0; i < f.nids; i++)
		if (open_segment(sp, f.ids[i], i + 1 == f.nids, &sc) < 0)
			goto out;
	sp->next_id = (f.nids > 0 ? f.ids[f.nids - 1] : 0) + 1;
	if (f.maxseg >= sp->next_id)
		sp->next_id = f.maxseg + 1;
	if (sp->nsegs == 0 && f.maxseq > sp->next_seq)
		sp->next_seq = f.maxseq;	/* sequences are never reused */
	/* new destinations start at the end */
	if (set_dests_locked(sp, dests, ndests, true) < 0)
		goto out;
	assign_cursors(sp, &f);
	release_segments(sp);
	if (sp->corrupt > 0 || sp->torn > 0)
		log_warn("spool: %s: %" PRIu64 " damaged records skipped, %" PRIu64
		    " torn tail(s) cut", sp->dir, sp->corrupt, sp->torn);
	log_info("spool: %s: %zu segment(s), %" PRIu64 " events queued", sp->dir,
	    sp->nsegs, sp->nsegs ? sp->segs[sp->nsegs - 1].end_seq -
	    sp->segs[0].first_seq : 0);
	rc = 0;
out:
	found_free(&f);
	return rc;
}

static struct spool *
spool_alloc(const char *dir, const struct spool_opts *opts)
{
	struct spool *sp;
	pthread_condattr_t ca;

	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		return NULL;
	if ((sp->dir = strdup(dir)) == NULL) {
		free(sp);
		return NULL;
	}
	sp->o = *opts;
	opts_fix(&sp->o);
	pthread_mutex_init(&sp->mu, NULL);
	pthread_mutex_init(&sp->curmu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sp->cv, &ca);
	pthread_cond_init(&sp->hkcv, &ca);
	pthread_condattr_destroy(&ca);
	buf_init(&sp->rec, SPOOL_REC_MAX + SPOOL_REC_HDR);
	buf_init(&sp->json, 0);
	sp->next_seq = 1;
	sp->next_id = 1;
	sp->lockfd = -1;
	return sp;
}

struct spool *
spool_open_dir(const char *dir, const struct spool_opts *opts,
    const char *const *dests, size_t ndests)
{
	struct spool *sp = spool_alloc(dir, opts);

	if (sp == NULL)
		return NULL;
	if (make_dir(dir) < 0 || lock_dir(sp) < 0) {
		/* Better events in memory than no agent at all. */
		log_error("spool: %s unusable; events are kept in memory only "
		    "(at most %llu MB, lost on restart)", dir,
		    (unsigned long long)(sp->o.mem_max / (1024 * 1024)));
		sp->nodisk = sp->memonly = true;
		if (set_dests_locked(sp, dests, ndests, true) < 0)
			goto err;
	} else if (recover(sp, dests, ndests) < 0)
		goto err;
	else
		/* before any event: a destination without a cursor file
		 * would start at the end after a crash, skipping them */
		save_cursors(sp);
	sp->last_sync_ms = sp->last_retry_ms = mono_ms();
	if (pthread_create(&sp->hk, NULL, housekeeper, sp) != 0) {
		log_error("spool: cannot start the housekeeping thread");
		goto err;
	}
	sp->hk_started = true;
	pthread_mutex_lock(&current_mu);
	current = sp;
	pthread_mutex_unlock(&current_mu);
	return sp;
err:
	spool_close(sp);
	return NULL;
}

struct spool *
spool_open(const struct config *cfg, const char *const *dests, size_t ndests)
{
	struct spool_opts o;
	const char *base = platform_storage_dir(cfg);
	char dir[PATH_MAX];

	if (base == NULL || *base == '\0')
		base = ".";
	/* on failure spool_open_dir() falls back to memory: never no agent */
	if (mkdir_p(base, 0700) < 0)
		log_error("spool: cannot create %s: %s", base, strerror(errno));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/spool", base) >= sizeof(dir)) {
		log_error("spool: storage directory path too long");
		return NULL;
	}
	spool_default_opts(cfg, &o);
	return spool_open_dir(dir, &o, dests, ndests);
}

/* ---- destinations ---------------------------------------------------- */

/*
 * Replace the destination list.  Kept names keep their cursor; new names
 * start at the end (they have no history); removed ones are forgotten
 * (their cursor file removed, their backlog released).
 */
static int
set_dests_locked(struct spool *sp, const char *const *names, size_t n, bool opening)
{
	struct dest **nd = NULL;
	bool *kept = NULL;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0) {
				log_error("spool: duplicate destination name '%s'", names[i]);
				return -1;
			}
	if (n > 0 && (nd = calloc(n, sizeof(*nd))) == NULL)
		return -1;
	if (sp->ndests > 0 && (kept = calloc(sp->ndests, sizeof(*kept))) == NULL)
		goto err;
	/* first everything that can fail, then the switch */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sp->ndests; k++)
			if (strcmp(sp->dests[k]->name, names[i]) == 0) {
				nd[i] = sp->dests[k];
				kept[k] = true;
				break;
			}
		if (nd[i] != NULL)
			continue;
		if ((nd[i] = dest_new(names[i])) == NULL)
			goto err;
		nd[i]->cur = end_pos(sp);
		nd[i]->dirty = true;
		if (!opening)
			log_info("spool: new destination '%s' starts with the next event",
			    names[i]);
	}
	for (size_t k = 0; k < sp->ndests; k++) {
		struct dest *d = sp->dests[k];
		char path[PATH_MAX];

		if (kept[k])
			continue;
		sp->gone_budget += d->dropped_budget;
		sp->gone_poison += d->dropped_poison;
		if (cursor_path(sp, d->name, path, sizeof(path)) == 0)
			(void)unlink(path);
		log_info("spool: destination '%s' removed; its backlog is released", d->name);
		dest_free(d);
	}
	free(kept);
	free(sp->dests);
	sp->dests = nd;
	sp->ndests = n;
	if (!opening)	/* at open, the cursors are loaded afterwards */
		release_segments(sp);
	sp->wake_gen++;
	pthread_cond_broadcast(&sp->cv);
	return 0;
err:
	for (size_t i = 0; i < n; i++) {
		bool old = false;

		for (size_t k = 0; k < sp->ndests; k++)
			if (nd[i] == sp->dests[k])
				old = true;
		if (!old)
			dest_free(nd[i]);
	}
	free(kept);
	free(nd);
	return -1;
}

int
spool_set_dests(struct spool *sp, const char *const *names, size_t n)
{
	int rc;

	pthread_mutex_lock(&sp->curmu);
	pthread_mutex_lock(&sp->mu);
	rc = set_dests_locked(sp, names, n, false);
	pthread_mutex_unlock(&sp->mu);
	/* new destinations get their cursor file now, not a moment later */
	if (rc == 0 && !sp->nodisk)
		save_cursors(sp);
	pthread_cond_signal(&sp->hkcv);
	pthread_mutex_unlock(&sp->curmu);
	return rc;
}

/* Has every destination passed segment i? */
static bool
seg_passed(const struct spool *sp, size_t i)
{
	const struct seg *s = &sp->segs[i];

	for (size_t k = 0; k < sp->ndests; k++)
		if (pos_cmp(&sp->dests[k]->cur, s->id, s->size) < 0)
			return false;
	return true;
}

/* Delete the oldest segments every destination has passed. */
static void
release_segments(struct spool *sp)
{
	while (sp->nsegs > 0) {
		bool is_active = sp->active && sp->nsegs == 1;

		if (is_active || !seg_passed(sp, 0))
			break;
		seg_release(sp, 0, true);
	}
}

/*
 * Drop segment i (over budget): count what each destination had not read
 * yet, move the cursors that were in it to the next segment.
 */
static void
drop_segment(struct spool *sp, size_t i, const char *why)
{
	struct seg *s = &sp->segs[i];
	struct seg *next = &sp->segs[i + 1];
	uint64_t lost_max = 0;

	for (size_t k = 0; k < sp->ndests; k++) {
		struct dest *d = sp->dests[k];
		uint64_t from;

		if (pos_cmp(&d->cur, s->id, s->size) >= 0)
			continue;
		from = d->cur.seq > s->first_seq ? d->cur.seq : s->first_seq;
		if (s->end_seq > from) {
			d->dropped_budget += s->end_seq - from;
			if (s->end_seq - from > lost_max)
				lost_max = s->end_seq - from;
		}
		if (d->cur.seg >= s->id) {
			d->cur.seg = next->id;
			d->cur.off = 0;
			d->cur.seq = next->first_seq;
			d->dirty = true;
		}
	}
	if (lost_max > 0)
		log_limited(LOG_ERROR, "spool:budget", 60, "spool: %s; dropped the "
		    "oldest %" PRIu64 " undelivered events", why, lost_max);
	seg_release(sp, i, true);
}

/* The oldest memory segment that is not the one being written, or nsegs. */
static size_t
oldest_mem(const struct spool *sp)
{
	for (size_t i = 0; i + 1 < sp->nsegs; i++)
		if (sp->segs[i].mem != NULL)
			return i;
	return sp->nsegs;
}

/* ---- pushing --------------------------------------------------------- */

static void
seal_active(struct spool *sp)
{
	struct seg *s;

	if (!sp->active)
		return;
	s = &sp->segs[sp->nsegs - 1];
	if (s->mem == NULL && s->fd >= 0) {
		if (s->synced < s->size && fsync(s->fd) < 0) {
			int err = errno;

			log_error("spool: fsync segment %016" PRIx64 ": %s", s->id,
			    strerror(err));
			seg_sync_failed(sp, sp->nsegs - 1, err);
		} else {
			s->synced = s->size;
			close(s->fd);
			s->fd = -1;
		}
	}
	sp->active = false;
}

static void
enter_memonly(struct spool *sp, const char *what, int err)
{
	if (!sp->memonly)
		log_error("spool: cannot %s in %s: %s; keeping new events in memory "
		    "(at most %llu MB, not crash-safe) until the disk accepts writes "
		    "again", what, sp->dir, strerror(err),
		    (unsigned long long)(sp->o.mem_max / (1024 * 1024)));
	sp->memonly = true;
	sp->last_retry_ms = mono_ms();
	pthread_cond_signal(&sp->hkcv);
}

/*
 * fsync failed on segment i: what the kernel still caches may never reach
 * the disk, and a second fsync would report success (the error is reported
 * once).  Keep the segment's bytes in memory, as if the disk had refused
 * the write: spool_sync() fails until the housekeeper has rewritten and
 * synced the file.  With mu held.
 */
static void
seg_sync_failed(struct spool *sp, size_t i, int err)
{
	struct seg *s = &sp->segs[i];
	unsigned char *copy;

	enter_memonly(sp, "sync a segment", err);
	if (s->mem != NULL)
		return;
	copy = malloc(s->size > 0 ? (size_t)s->size : 1);
	if (copy == NULL || seg_open_fd(sp, s) < 0 ||
	    read_all(s->fd, copy, (size_t)s->size, 0) < 0) {
		log_error("spool: cannot read back segment %016" PRIx64 " after the "
		    "failed sync; its events may be lost in a crash", s->id);
		free(copy);
		return;
	}
	close(s->fd);
	s->fd = -1;
	s->mem = copy;
	s->memcap = s->size > 0 ? (size_t)s->size : 1;
	s->synced = 0;
	for (size_t k = 0; k < sp->ndests; k++)
		if (sp->dests[k]->win_ok && sp->dests[k]->win_seg == s->id)
			sp->dests[k]->win_ok = false;
}

/* Start a new segment for appending. */
static struct seg *
new_active(struct spool *sp)
{
	char path[PATH_MAX];
	struct seg *s;
	int fd = -1;

	seal_active(sp);
	if (!sp->memonly) {
		fd = open(seg_path(sp, sp->next_id, path, sizeof(path)),
		    O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			enter_memonly(sp, "create a segment", errno);
		else
			fsync_dir(sp->dir);
	}
	if ((s = seg_add(sp, sp->next_id)) == NULL) {
		if (fd >= 0) {
			close(fd);
			(void)unlink(path);
		}
		return NULL;
	}
	sp->next_id++;
	s->fd = fd;
	if (fd < 0 && (s->mem = malloc(SEG_MIN)) != NULL)
		s->memcap = SEG_MIN;
	if (fd < 0 && s->mem == NULL) {
		sp->nsegs--;
		return NULL;
	}
	sp->active = true;
	return s;
}

static int
mem_append(struct seg *s, const void *p, size_t len)
{
	if (s->size + len > s->memcap) {
		size_t ncap = s->memcap ? s->memcap : SEG_MIN;
		unsigned char *n;

		while (ncap < s->size + len)
			ncap *= 2;
		if ((n = realloc(s->mem, ncap)) == NULL)
			return -1;
		s->mem = n;
		s->memcap = ncap;
	}
	memcpy(s->mem + s->size, p, len);
	return 0;
}

static uint64_t
mem_bytes(const struct spool *sp)
{
	uint64_t n = 0;

	for (size_t i = 0; i < sp->nsegs; i++)
		if (sp->segs[i].mem != NULL)
			n += sp->segs[i].size;
	return n;
}

static uint64_t
total_bytes(const struct spool *sp)
{
	uint64_t n = 0;

	for (size_t i = 0; i < sp->nsegs; i++)
		n += sp->segs[i].size;
	return n;
}

static int
append_record(struct spool *sp, const unsigned char *rec, size_t len, uint64_t seq)
{
	struct seg *s;

	if (!sp->active || sp->segs[sp->nsegs - 1].size + len > sp->o.segment_size ||
	    (sp->segs[sp->nsegs - 1].mem != NULL && !sp->memonly)) {
		if (sp->active && sp->segs[sp->nsegs - 1].size == 0 &&
		    sp->segs[sp->nsegs - 1].mem == NULL && !sp->memonly)
			s = &sp->segs[sp->nsegs - 1];	/* one record bigger than a segment */
		else if ((s = new_active(sp)) == NULL)
			return -1;
	} else
		s = &sp->segs[sp->nsegs - 1];
	if (s->mem == NULL) {
		if (write_all(s->fd, rec, len, (off_t)s->size) == 0)
			goto done;
		/* the disk refused: cut what part of the record got there */
		enter_memonly(sp, "write a segment", errno);
		if (ftruncate(s->fd, (off_t)s->size) < 0)
			log_warn("spool: cannot cut segment %016" PRIx64 ": %s", s->id,
			    strerror(errno));
		if (s->size == 0) {
			/* an empty file: forget it, keep its id for memory */
			char path[PATH_MAX];

			close(s->fd);
			s->fd = -1;
			(void)unlink(seg_path(sp, s->id, path, sizeof(path)));
			if ((s->mem = malloc(SEG_MIN)) == NULL) {
				sp->nsegs--;
				sp->active = false;
				return -1;
			}
			s->memcap = SEG_MIN;
		} else if ((s = new_active(sp)) == NULL)
			return -1;
	}
	if (mem_append(s, rec, len) < 0)
		return -1;
done:
	if (s->size == 0)
		s->first_seq = seq;
	s->size += len;
	s->end_seq = seq + 1;
	return 0;
}

int
spool_push(struct spool *sp, const struct event *ev)
{
	unsigned char *h;
	size_t plen;
	uint64_t seq;
	int rc = -1;

	pthread_mutex_lock(&sp->mu);
	if (sp->ndests == 0) {
		/* nowhere to go: nothing to keep (as the in-memory queue) */
		pthread_mutex_unlock(&sp->mu);
		return 0;
	}
	buf_reset(&sp->rec);
	if (buf_append(&sp->rec, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
	    SPOOL_REC_HDR) < 0 || event_serialize(ev, &sp->rec) < 0) {
		log_limited(LOG_ERROR, "spool:serialize", 60,
		    "spool: cannot serialize an event (too large?)");
		goto out;
	}
	plen = sp->rec.len - SPOOL_REC_HDR;
	seq = sp->next_seq;
	h = (unsigned char *)sp->rec.data;
	put32(h, SPOOL_REC_MAGIC);
	put32(h + 4, (uint32_t)plen);
	put64(h + 8, seq);
	put32(h + 16, rec_crc(h, h + SPOOL_REC_HDR, plen));
	if (append_record(sp, h, sp->rec.len, seq) < 0) {
		log_limited(LOG_ERROR, "spool:push", 60, "spool: out of memory, event lost");
		goto out;
	}
	sp->next_seq++;
	sp->pushed++;
	while (sp->nsegs > 1 && total_bytes(sp) > sp->o.budget)
		drop_segment(sp, 0, "storage.max_disk_buffer is full");
	/* Memory is bounded on its own; what is on disk stays. */
	while (sp->memonly && mem_bytes(sp) > sp->o.mem_max) {
		size_t i = oldest_mem(sp);

		if (i == sp->nsegs)
			break;
		drop_segment(sp, i, "the in-memory buffer is full (the disk refuses writes)");
	}
	if (!sp->memonly && sp->active) {
		struct seg *s = &sp->segs[sp->nsegs - 1];

		if (s->size - s->synced >= sp->o.sync_bytes) {
			sp->sync_wanted = true;
			pthread_cond_signal(&sp->hkcv);
		}
	}
	pthread_cond_broadcast(&sp->cv);
	rc = 0;
out:
	pthread_mutex_unlock(&sp->mu);
	return rc;
}

/*
 * fsync the segment being written without holding the lock through the
 * disk wait: a dup of its descriptor stays valid even if the segment is
 * sealed meanwhile.  Called with mu held; returns with mu held.
 */
static int
sync_active_locked(struct spool *sp)
{
	struct seg *s;
	uint64_t id, target;
	int fd, rc = 0, err = 0;

	if (!sp->active || sp->segs[sp->nsegs - 1].mem != NULL)
		return 0;
	s = &sp->segs[sp->nsegs - 1];
	if (s->synced >= s->size)
		return 0;
	if ((fd = dup(s->fd)) < 0)
		return -1;
	id = s->id;
	target = s->size;
	pthread_mutex_unlock(&sp->mu);
	if (fsync(fd) < 0) {
		err = errno;
		log_limited(LOG_ERROR, "spool:fsync", 60, "spool: fsync: %s",
		    strerror(err));
		rc = -1;
	}
	close(fd);
	pthread_mutex_lock(&sp->mu);
	sp->last_sync_ms = mono_ms();
	{
		size_t i = seg_find(sp, id);

		if (i < sp->nsegs && sp->segs[i].id == id) {
			if (rc < 0)
				seg_sync_failed(sp, i, err);
			else if (sp->segs[i].synced < target)
				sp->segs[i].synced = target;
		}
	}
	return rc;
}

int
spool_sync(struct spool *sp)
{
	int rc;

	pthread_mutex_lock(&sp->mu);
	rc = sync_active_locked(sp);
	if (sp->memonly)
		rc = -1;	/* those events are not safe: say so */
	pthread_mutex_unlock(&sp->mu);
	return rc;
}

/* ---- shipping -------------------------------------------------------- */

static int
peek_reserve(struct dest *d, size_t n)
{
	if (n <= d->peek_cap)
		return 0;
	struct pos *p = realloc(d->peek, n * sizeof(*p));
	if (p == NULL)
		return -1;
	d->peek = p;
	uint64_t *q = realloc(d->peek_seq, n * sizeof(*q));
	if (q == NULL)
		return -1;
	d->peek_seq = q;
	d->peek_cap = n;
	return 0;
}

static int
batch_add(struct batch *b, struct event *ev, size_t *cap)
{
	if (b->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct event **n = realloc(b->events, ncap * sizeof(*n));

		if (n == NULL)
			return -1;
		b->events = n;
		*cap = ncap;
	}
	b->events[b->n++] = ev;
	return 0;
}

/* Does destination d have anything left to read? */
static bool
has_data(const struct spool *sp, const struct dest *d)
{
	for (size_t i = seg_find(sp, d->cur.seg); i < sp->nsegs; i++) {
		const struct seg *s = &sp->segs[i];

		if (s->id == d->cur.seg ? s->size > d->cur.off : s->size > 0)
			return true;
	}
	return false;
}

/*
 * Reading segment i failed at *p.  Once or twice it may pass (the log says
 * so); the third time in a row at the same place, the rest of the segment
 * is unreadable: skip it and count its events lost, rather than stop this
 * destination for good.  Returns true when *p moved.
 */
#define READ_ERR_SKIP	3

static bool
read_error_skip(struct spool *sp, struct dest *d, size_t i, struct pos *p)
{
	struct seg *s = &sp->segs[i];
	uint64_t lost;

	/* short of memory or descriptors: the data is fine, wait */
	if (d->rderr_errno == ENOMEM || d->rderr_errno == EMFILE ||
	    d->rderr_errno == ENFILE)
		return false;
	if (d->rderr_n > 0 && pos_cmp(&d->rderr_at, p->seg, p->off) == 0)
		d->rderr_n++;
	else {
		d->rderr_at = *p;
		d->rderr_n = 1;
	}
	if (d->rderr_n < READ_ERR_SKIP)
		return false;
	lost = s->end_seq > p->seq ? s->end_seq - p->seq : 0;
	log_error("spool: destination '%s': segment %016" PRIx64 " cannot be "
	    "read at offset %" PRIu64 "; skipping the rest of it (%" PRIu64
	    " events lost)", d->name, s->id, p->off, lost);
	sp->corrupt += lost;
	d->rderr_n = 0;
	if (i + 1 < sp->nsegs) {
		p->seg = sp->segs[i + 1].id;
		p->off = 0;
		p->seq = sp->segs[i + 1].first_seq;
	} else {
		p->off = s->size;
		p->seq = s->end_seq;
	}
	d->cur = *p;
	d->dirty = true;
	return true;
}

static void
read_batch(struct spool *sp, struct dest *d, size_t max_events, size_t max_bytes,
    struct batch *out)
{
	struct pos p = d->cur;
	size_t bytes = 0, cap = 0;

	d->npeek = d->peek_used = 0;
	while (out->n < max_events) {
		size_t i = seg_find(sp, p.seg);
		const unsigned char *payload;
		struct seg *s;
		struct event *ev;
		uint64_t seq;
		size_t plen;
		int r;

		if (i == sp->nsegs)
			break;
		s = &sp->segs[i];
		if (s->id != p.seg) {
			p.seg = s->id;
			p.off = 0;
			if (p.seq < s->first_seq)
				p.seq = s->first_seq;
		}
		if (p.off >= s->size) {
			if (i + 1 == sp->nsegs)
				break;
			p.seg = sp->segs[i + 1].id;
			p.off = 0;
			p.seq = sp->segs[i + 1].first_seq;
			continue;
		}
		r = rec_at(sp, d, s, p.off, &seq, &payload, &plen);
		if (r < 0) {
			if (out->n > 0 || !read_error_skip(sp, d, i, &p))
				break;
			continue;
		}
		if (r == 0) {
			uint64_t next = resync(sp, d, s, p.off + 1);

			log_limited(LOG_WARN, "spool:damaged", 60, "spool: destination '%s': "
			    "skipped %" PRIu64 " damaged bytes in segment %016" PRIx64,
			    d->name, next - p.off, s->id);
			p.off = next;
			if (out->n == 0) {
				d->cur = p;
				d->dirty = true;
			}
			continue;
		}
		ev = event_deserialize(payload, plen);
		if (ev == NULL) {
			log_limited(LOG_WARN, "spool:decode", 60, "spool: undecodable "
			    "record %" PRIu64 " skipped", seq);
			sp->corrupt++;
			p.off += SPOOL_REC_HDR + plen;
			p.seq = seq + 1;
			if (out->n == 0) {
				d->cur = p;
				d->dirty = true;
			}
			continue;
		}
		buf_reset(&sp->json);
		if (event_to_json(ev, &sp->json) == 0 && out->n > 0 &&
		    bytes + sp->json.len > max_bytes) {
			event_free(ev);
			break;
		}
		if (peek_reserve(d, out->n + 1) < 0 || batch_add(out, ev, &cap) < 0) {
			event_free(ev);
			break;
		}
		bytes += sp->json.len;
		p.off += SPOOL_REC_HDR + plen;
		p.seq = seq + 1;
		d->peek[out->n - 1] = p;
		d->peek_seq[out->n - 1] = seq;
	}
	d->npeek = out->n;
}

static void
deadline_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

int
spool_peek(struct spool *sp, size_t di, size_t max_events, size_t max_bytes,
    int wait_ms, struct batch *out)
{
	struct dest *d;
	uint64_t gen;

	out->events = NULL;
	out->n = 0;
	if (max_events == 0)
		return 0;
	pthread_mutex_lock(&sp->mu);
	if (di >= sp->ndests) {
		pthread_mutex_unlock(&sp->mu);
		return -1;
	}
	d = sp->dests[di];
	gen = sp->wake_gen;
	if (!has_data(sp, d) && wait_ms > 0) {
		struct timespec ts;

		deadline_after(&ts, wait_ms);
		while (!sp->closing && gen == sp->wake_gen && di < sp->ndests &&
		    !has_data(sp, sp->dests[di]))
			if (pthread_cond_timedwait(&sp->cv, &sp->mu, &ts) == ETIMEDOUT)
				break;
		if (di >= sp->ndests) {
			pthread_mutex_unlock(&sp->mu);
			return -1;
		}
		d = sp->dests[di];
	}
	read_batch(sp, d, max_events, max_bytes, out);
	pthread_mutex_unlock(&sp->mu);
	return (int)out->n;
}

/* Move past the next n peeked events; poison: count them dropped. */
static int
advance(struct spool *sp, size_t di, size_t n, bool poison)
{
	struct dest *d;
	size_t last;

	if (n == 0)
		return 0;
	pthread_mutex_lock(&sp->mu);
	if (di >= sp->ndests) {
		pthread_mutex_unlock(&sp->mu);
		return -1;
	}
	d = sp->dests[di];
	if (d->peek_used + n > d->npeek)
		n = d->npeek - d->peek_used;
	for (size_t i = d->peek_used; i < d->peek_used + n; i++) {
		if (d->peek_seq[i] < d->cur.seq) {
			/*
			 * The budget dropped this event while it was in flight
			 * and counted it lost; it was delivered after all.
			 */
			if (!poison && d->dropped_budget > 0)
				d->dropped_budget--;
			if (!poison)
				d->acked++;
			continue;
		}
		if (poison)
			d->dropped_poison++;
		else
			d->acked++;
	}
	d->peek_used += n;
	if (!poison && n > 0)
		d->last_ack_ms = now_ms();
	if (n > 0) {
		last = d->peek_used - 1;
		if (pos_cmp(&d->cur, d->peek[last].seg, d->peek[last].off) < 0) {
			d->cur = d->peek[last];
			d->dirty = true;
		}
	}
	release_segments(sp);
	pthread_mutex_unlock(&sp->mu);
	pthread_cond_signal(&sp->hkcv);
	return 0;
}

int
spool_ack(struct spool *sp, size_t d, size_t n)
{
	return advance(sp, d, n, false);
}

int
spool_drop(struct spool *sp, size_t d, size_t n)
{
	return advance(sp, d, n, true);
}

void
spool_wakeup(struct spool *sp)
{
	pthread_mutex_lock(&sp->mu);
	sp->wake_gen++;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

/* Events and bytes from position p to the end. */
static void
backlog_from(const struct spool *sp, const struct pos *p, uint64_t *events,
    uint64_t *bytes)
{
	*events = *bytes = 0;
	for (size_t i = seg_find(sp, p->seg); i < sp->nsegs; i++) {
		const struct seg *s = &sp->segs[i];

		if (s->id == p->seg) {
			if (p->off < s->size) {
				*bytes += s->size - p->off;
				if (s->end_seq > p->seq)
					*events += s->end_seq - (p->seq > s->first_seq ?
					    p->seq : s->first_seq);
			}
		} else {
			*bytes += s->size;
			*events += s->end_seq - s->first_seq;
		}
	}
}

uint64_t
spool_backlog(struct spool *sp, size_t di)
{
	uint64_t ev = 0, by;

	pthread_mutex_lock(&sp->mu);
	if (di < sp->ndests)
		backlog_from(sp, &sp->dests[di]->cur, &ev, &by);
	pthread_mutex_unlock(&sp->mu);
	return ev;
}

void
spool_stats(struct spool *sp, struct spool_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&sp->mu);
	if (sp->ndests == 0 && sp->nsegs > 0) {
		struct pos p = { sp->segs[0].id, 0, sp->segs[0].first_seq };

		backlog_from(sp, &p, &st->queued_events, &st->queued_bytes);
	}
	for (size_t k = 0; k < sp->ndests; k++) {
		uint64_t ev, by;

		backlog_from(sp, &sp->dests[k]->cur, &ev, &by);
		if (ev > st->queued_events)
			st->queued_events = ev;
		if (by > st->queued_bytes)
			st->queued_bytes = by;
		st->dropped_budget += sp->dests[k]->dropped_budget;
		st->dropped_poison += sp->dests[k]->dropped_poison;
	}
	st->dropped_budget += sp->gone_budget;
	st->dropped_poison += sp->gone_poison;
	st->pushed_events = sp->pushed;
	st->dropped_corrupt = sp->corrupt;
	st->torn_tails = sp->torn;
	st->mem_bytes = mem_bytes(sp);
	st->disk_bytes = total_bytes(sp) - st->mem_bytes;
	st->segments = sp->nsegs;
	st->memory_only = sp->memonly;
	st->ndests = sp->ndests;
	pthread_mutex_unlock(&sp->mu);
}

int
spool_dest_stats(struct spool *sp, size_t di, struct spool_dest_stats *out)
{
	struct dest *d;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&sp->mu);
	if (di >= sp->ndests) {
		pthread_mutex_unlock(&sp->mu);
		return -1;
	}
	d = sp->dests[di];
	memcpy(out->name, d->name, sizeof(out->name));
	backlog_from(sp, &d->cur, &out->backlog_events, &out->backlog_bytes);
	out->acked_events = d->acked;
	out->last_ack_ms = d->last_ack_ms;
	out->dropped_budget = d->dropped_budget;
	out->dropped_poison = d->dropped_poison;
	pthread_mutex_unlock(&sp->mu);
	return 0;
}

void
spool_batch_free(struct batch *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->n; i++)
		event_free(b->events[i]);
	free(b->events);
	b->events = NULL;
	b->n = 0;
}

struct spool *
spool_current(void)
{
	struct spool *sp;

	pthread_mutex_lock(&current_mu);
	sp = current;
	pthread_mutex_unlock(&current_mu);
	return sp;
}

/* ---- housekeeping ---------------------------------------------------- */

/* Write the cursor files that are behind.  Called with curmu held, not mu. */
static void
save_cursors(struct spool *sp)
{
	for (;;) {
		char name[SPOOL_NAME_MAX];
		struct pos p;
		bool found = false;

		pthread_mutex_lock(&sp->mu);
		for (size_t k = 0; k < sp->ndests; k++) {
			if (!sp->dests[k]->dirty)
				continue;
			sp->dests[k]->dirty = false;
			memcpy(name, sp->dests[k]->name, sizeof(name));
			p = sp->dests[k]->cur;
			found = true;
			break;
		}
		pthread_mutex_unlock(&sp->mu);
		if (!found)
			return;
		if (cursor_write(sp, name, &p) < 0) {
			/* keep it dirty; try again a little later, not at once:
			 * a full disk must not become a busy loop */
			pthread_mutex_lock(&sp->mu);
			for (size_t k = 0; k < sp->ndests; k++)
				if (strcmp(sp->dests[k]->name, name) == 0)
					sp->dests[k]->dirty = true;
			sp->cursor_next_ms = mono_ms() + sp->o.sync_ms;
			pthread_mutex_unlock(&sp->mu);
			return;
		}
	}
}

/*
 * The disk refused writes: try to move the memory segments to files, oldest
 * first.  With mu held.
 */
static void
try_disk(struct spool *sp)
{
	uint64_t moved = 0;

	sp->last_retry_ms = mono_ms();
	for (size_t i = 0; i < sp->nsegs; i++) {
		struct seg *s = &sp->segs[i];
		char path[PATH_MAX];
		int fd;

		if (s->mem == NULL)
			continue;
		seg_path(sp, s->id, path, sizeof(path));
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return;
		if (write_all(fd, s->mem, s->size, 0) < 0 || fsync(fd) < 0) {
			log_limited(LOG_ERROR, "spool:retry", 60, "spool: the disk still "
			    "refuses writes in %s: %s", sp->dir, strerror(errno));
			close(fd);
			(void)unlink(path);
			return;
		}
		fsync_dir(sp->dir);
		free(s->mem);
		s->mem = NULL;
		s->memcap = 0;
		s->synced = s->size;
		moved += s->end_seq - s->first_seq;
		if (i + 1 == sp->nsegs && sp->active)
			s->fd = fd;	/* keep appending to it */
		else
			close(fd);
	}
	sp->memonly = false;
	log_warn("spool: the disk accepts writes again in %s; %" PRIu64
	    " events moved from memory to disk", sp->dir, moved);
}

static void *
housekeeper(void *arg)
{
	struct spool *sp = arg;

	pthread_mutex_lock(&sp->curmu);
	pthread_mutex_lock(&sp->mu);
	while (!sp->closing) {
		struct timespec ts;
		int64_t now = mono_ms();
		bool cursors = false;

		for (size_t k = 0; k < sp->ndests && !sp->nodisk &&
		    now >= sp->cursor_next_ms; k++)
			if (sp->dests[k]->dirty)
				cursors = true;
		if (cursors) {
			pthread_mutex_unlock(&sp->mu);
			save_cursors(sp);
			pthread_mutex_lock(&sp->mu);
			continue;
		}
		if (sp->active && sp->segs[sp->nsegs - 1].mem == NULL &&
		    sp->segs[sp->nsegs - 1].synced < sp->segs[sp->nsegs - 1].size &&
		    (sp->sync_wanted || now - sp->last_sync_ms >= sp->o.sync_ms)) {
			sp->sync_wanted = false;
			(void)sync_active_locked(sp);
			continue;
		}
		if (sp->memonly && !sp->nodisk && now - sp->last_retry_ms >= sp->o.retry_ms) {
			try_disk(sp);
			continue;
		}
		/* nothing due: sleep until the next deadline or a signal */
		pthread_mutex_unlock(&sp->curmu);
		deadline_after(&ts, sp->memonly && sp->o.retry_ms < sp->o.sync_ms ?
		    sp->o.retry_ms : sp->o.sync_ms);
		(void)pthread_cond_timedwait(&sp->hkcv, &sp->mu, &ts);
		pthread_mutex_unlock(&sp->mu);
		pthread_mutex_lock(&sp->curmu);
		pthread_mutex_lock(&sp->mu);
	}
	pthread_mutex_unlock(&sp->mu);
	pthread_mutex_unlock(&sp->curmu);
	return NULL;
}

/* Events in memory segments that some destination has not read yet (the
 * most behind destination's count per segment): what an exit loses. */
static uint64_t
mem_undelivered(const struct spool *sp)
{
	uint64_t n = 0;

	for (size_t i = 0; i < sp->nsegs; i++) {
		const struct seg *s = &sp->segs[i];
		uint64_t most = 0;

		if (s->mem == NULL)
			continue;
		for (size_t k = 0; k < sp->ndests; k++) {
			const struct dest *d = sp->dests[k];
			uint64_t from = d->cur.seq > s->first_seq ? d->cur.seq : s->first_seq;

			if (pos_cmp(&d->cur, s->id, s->size) < 0 && s->end_seq > from &&
			    s->end_seq - from > most)
				most = s->end_seq - from;
		}
		n += most;
	}
	return n;
}

void
spool_close(struct spool *sp)
{
	if (sp == NULL)
		return;
	pthread_mutex_lock(&current_mu);
	if (current == sp)
		current = NULL;
	pthread_mutex_unlock(&current_mu);
	if (sp->hk_started) {
		pthread_mutex_lock(&sp->mu);
		sp->closing = true;
		pthread_cond_broadcast(&sp->hkcv);
		pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
		pthread_join(sp->hk, NULL);
		pthread_mutex_lock(&sp->curmu);
		if (!sp->nodisk)
			save_cursors(sp);
		pthread_mutex_unlock(&sp->curmu);
	}
	pthread_mutex_lock(&sp->mu);
	seal_active(sp);
	if (sp->memonly && mem_undelivered(sp) > 0)
		log_error("spool: %" PRIu64 " undelivered events held in memory are lost "
		    "at exit (the disk refused them)", mem_undelivered(sp));
	while (sp->nsegs > 0)
		seg_release(sp, sp->nsegs - 1, false);
	pthread_mutex_unlock(&sp->mu);
	for (size_t k = 0; k < sp->ndests; k++)
		dest_free(sp->dests[k]);
	free(sp->dests);
	free(sp->segs);
	if (sp->lockfd >= 0)
		close(sp->lockfd);
	buf_free(&sp->rec);
	buf_free(&sp->json);
	pthread_cond_destroy(&sp->cv);
	pthread_cond_destroy(&sp->hkcv);
	pthread_mutex_destroy(&sp->mu);
	pthread_mutex_destroy(&sp->curmu);
	free(sp->dir);
	free(sp);
}

/* ---- queue.h on top of the spool -------------------------------------- */

#ifdef ESXWATCH_SPOOL_QUEUE
#include "queue.h"

struct queue *
queue_open(const struct config *cfg, const char *const *dests, size_t ndests)
{
	return (struct queue *)spool_open(cfg, dests, ndests);
}

void
queue_close(struct queue *q)
{
	spool_close((struct spool *)q);
}

int
queue_set_dests(struct queue *q, const char *const *dests, size_t ndests)
{
	return spool_set_dests((struct spool *)q, dests, ndests);
}

int
queue_push(struct queue *q, const struct event *ev)
{
	return spool_push((struct spool *)q, ev);
}

int
queue_sync(struct queue *q)
{
	return spool_sync((struct spool *)q);
}

int
queue_peek(struct queue *q, size_t d, size_t max_events, size_t max_bytes,
    int wait_ms, struct batch *out)
{
	return spool_peek((struct spool *)q, d, max_events, max_bytes, wait_ms, out);
}

int
queue_ack(struct queue *q, size_t d, size_t n)
{
	return spool_ack((struct spool *)q, d, n);
}

int
queue_drop(struct queue *q, size_t d, size_t n)
{
	return spool_drop((struct spool *)q, d, n);
}

void
queue_wakeup(struct queue *q)
{
	spool_wakeup((struct spool *)q);
}

void
queue_stats(struct queue *q, struct queue_stats *st)
{
	struct spool_stats s;

	spool_stats((struct spool *)q, &s);
	st->queued_events = s.queued_events;
	st->queued_bytes = s.queued_bytes;
	st->dropped_events = s.dropped_budget;
}

uint64_t
queue_backlog(struct queue *q, size_t d)
{
	return spool_backlog((struct spool *)q, d);
}

void
batch_free_events(struct batch *b)
{
	spool_batch_free(b);
}
#endif
