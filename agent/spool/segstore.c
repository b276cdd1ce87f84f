/*
 * segstore: the spool's segment store (see segstore.h).  Two backends
 * behind the same functions: segment files in the spool directory and
 * memory segments (when the disk refuses writes, or there is no usable
 * directory at all).  No lock of its own: the queue (spool.c) holds its
 * mutex around every call.
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
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/clock.h"
#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"

#define WIN_SIZE	(256u * 1024)		/* read window per reader */

static char *
seg_path(const struct segstore *st, uint64_t id, char *out, size_t len)
{
	snprintf(out, len, "%s/%016" PRIx64 ".seg", st->dir, id);
	return out;
}

static int
cursor_path(const struct segstore *st, const char *name, char *out, size_t len)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, PATH_MAX);
	if (buf_printf(&b, "%s/cursor.", st->dir) < 0)
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

int
segstore_unescape(const char *s, char *out, size_t len)
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

/* ---- scanning a segment image ---------------------------------------- */

static struct seg *
seg_add(struct segstore *st, uint64_t id)
{
	struct seg *s;

	if (st->nsegs == st->segcap) {
		size_t ncap = st->segcap ? st->segcap * 2 : 16;
		struct seg *n = realloc(st->segs, ncap * sizeof(*n));

		if (n == NULL)
			return NULL;
		st->segs = n;
		st->segcap = ncap;
	}
	s = &st->segs[st->nsegs++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->fd = -1;
	s->first_seq = s->end_seq = st->next_seq;
	return s;
}

/* Index of the first segment with id >= id (nsegs if none). */
size_t
segstore_find(const struct segstore *st, uint64_t id)
{
	size_t lo = 0, hi = st->nsegs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->segs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
segstore_release(struct segstore *st, size_t i, bool unlink_file)
{
	struct seg *s = &st->segs[i];
	char path[PATH_MAX];

	if (s->fd >= 0)
		close(s->fd);
	if (s->mem != NULL)
		free(s->mem);
	/* a memory segment may have a file too (its fsync failed); without
	 * a directory of our own, ids are not ours to unlink */
	if (unlink_file && !st->nodisk &&
	    unlink(seg_path(st, s->id, path, sizeof(path))) < 0 && errno != ENOENT)
		log_warn("spool: cannot remove %s: %s", path, log_errstr(errno));
	st->gen++;	/* every read window may show what is gone */
	memmove(s, s + 1, (st->nsegs - i - 1) * sizeof(*s));
	st->nsegs--;
	if (i == st->nsegs)
		st->active = false;
}

static int
seg_open_fd(struct segstore *st, struct seg *s)
{
	char path[PATH_MAX];

	if (s->fd >= 0)
		return s->fd;
	s->fd = fs_open_read(seg_path(st, s->id, path, sizeof(path)));
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
	if (seg_open_fd(st, s) < 0) {
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

/* ---- cursors ----------------------------------------------------------- */

int
segstore_cursor_write(const struct segstore *st, const char *name, const struct seg_pos *p)
{
	char path[PATH_MAX], text[128];
	int n;

	if (cursor_path(st, name, path, sizeof(path)) < 0)
		return -1;
	n = snprintf(text, sizeof(text), "seg %" PRIu64 "\noff %" PRIu64 "\nseq %"
	    PRIu64 "\n", p->seg, p->off, p->seq);
	/*
	 * The directory fsync makes the rename durable: without it a power
	 * cut can leave no cursor file at all next to synced segments, and a
	 * destination without a cursor starts at the end -- every queued
	 * event would be skipped.  The fixed temp name: the directory scan
	 * knows cursor.*.tmp as a crashed write's leftover.
	 */
	if (fs_replace(path, text, (size_t)n, 0600, FS_DURABLE | FS_TMP_FIXED) < 0) {
		log_limited(LOG_ERROR, "spool:cursor", 60, "spool: cannot save cursor %s: %s",
		    path, log_errstr(errno));
		return -1;
	}
	return 0;
}

int
segstore_cursor_read(const char *path, struct seg_pos *p)
{
	char text[256];
	unsigned long long v[3] = { 0, 0, 0 };
	bool have[3] = { false, false, false };
	static const char *const keys[3] = { "seg ", "off ", "seq " };
	ssize_t n;
	char *line;
	int fd;

	fd = fs_open_read(path);
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

/*
 * The destinations file (spool/destinations): the escaped names of the
 * destinations the spool keeps cursors for, one a line.  At start it tells
 * a destination whose cursor file was lost (listed) from one just added to
 * the configuration (not listed).
 */
int
segstore_dests_write(const struct segstore *st, const char *const *names, size_t n)
{
	char path[PATH_MAX], cur[PATH_MAX];
	size_t plen = strlen(st->dir) + strlen("/cursor.");
	struct buf b;
	int rc = -1;

	buf_init(&b, 64 * 1024);
	snprintf(path, sizeof(path), "%s/destinations", st->dir);
	for (size_t i = 0; i < n; i++)
		if (cursor_path(st, names[i], cur, sizeof(cur)) < 0 ||
		    buf_printf(&b, "%s\n", cur + plen) < 0)
			goto out;
	if (fs_write_atomic(path, b.data != NULL ? b.data : "", b.len, 0600) < 0) {
		log_limited(LOG_ERROR, "spool:dests", 60, "spool: cannot save %s: %s",
		    path, log_errstr(errno));
		goto out;
	}
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

/* Is name listed?  1 yes, 0 no, -1 no (readable) file. */
int
segstore_dests_listed(const struct segstore *st, const char *name)
{
	char esc[PATH_MAX], path[PATH_MAX], text[64 * 1024];
	size_t skip = strlen(st->dir) + strlen("/cursor."), l;
	ssize_t n;
	int fd;

	if (cursor_path(st, name, esc, sizeof(esc)) < 0)
		return -1;
	l = strlen(esc + skip);
	snprintf(path, sizeof(path), "%s/destinations", st->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = fs_read_upto(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -1;
	text[n] = '\0';
	for (const char *line = text; *line != '\0';) {
		const char *nl = strchr(line, '\n');

		if (nl == NULL)
			return -1;	/* cut: not to be trusted */
		if ((size_t)(nl - line) == l && memcmp(line, esc + skip, l) == 0)
			return 1;
		line = nl + 1;
	}
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
	int fd = fs_open_read(path);

	*data = NULL;
	*len = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size > 4 * SEG_MAX)
		goto err;
	*len = (size_t)st.st_size;
	*data = malloc(*len + 1);
	if (*data == NULL || fs_read_all(fd, *data, *len, 0) < 0)
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
int
segstore_load(struct segstore *st, uint64_t id, bool last, struct spoolrec_scan *sc)
{
	char path[PATH_MAX];
	unsigned char *data;
	size_t len, end;
	uint64_t corrupt0 = sc->corrupt, regions0 = sc->regions;
	struct seg *s;

	seg_path(st, id, path, sizeof(path));
	if (load_file(path, &data, &len) < 0) {
		log_error("spool: cannot read %s: %s; skipping it", path, log_errstr(errno));
		return 0;
	}
	sc->nrec = 0;
	end = spoolrec_scan(data, len, NULL, NULL, sc);
	free(data);
	if (end < len) {
		if (last) {
			st->torn++;
			log_warn("spool: %s: torn record at the end (%zu bytes), cut off",
			    path, len - end);
		} else {
			sc->regions++;
			log_warn("spool: %s: %zu damaged bytes at the end, cut off",
			    path, len - end);
		}
		if (truncate(path, (off_t)end) < 0)
			log_error("spool: cannot truncate %s: %s", path, log_errstr(errno));
	}
	if (sc->regions > regions0)
		log_warn("spool: %s: %" PRIu64 " damaged regions, %" PRIu64
		    " records lost", path, sc->regions - regions0, sc->corrupt - corrupt0);
	st->corrupt += sc->corrupt - corrupt0;
	if (sc->nrec == 0) {
		/* nothing worth keeping */
		if (unlink(path) < 0)
			log_warn("spool: cannot remove %s: %s", path, log_errstr(errno));
		return 0;
	}
	s = seg_add(st, id);
	if (s == NULL)
		return -1;
	s->first_seq = sc->first;
	s->end_seq = sc->last + 1;
	s->size = s->synced = end;
	if (s->end_seq > st->next_seq)
		st->next_seq = s->end_seq;
	segstore_hold(st, s);	/* readable should the directory be deleted */
	return 0;
}

int
segstore_scan_dir(struct segstore *st, uint64_t **ids, size_t *nids, char ***curnames, size_t *ncur)
{
	DIR *dir = opendir(st->dir);
	struct dirent *de;
	size_t cap = 0, ccap = 0;

	*ids = NULL;
	*nids = 0;
	*curnames = NULL;
	*ncur = 0;
	if (dir == NULL)
		return -1;
	for (;;) {
		const char *n;
		size_t l;

		de = readdir(dir);
		if (de == NULL)
			break;
		n = de->d_name;
		l = strlen(n);

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
			(*curnames)[*ncur] = strdup(n + 7);
			if ((*curnames)[*ncur] == NULL)
				goto err;
			(*ncur)++;
		} else if (strncmp(n, "cursor.", 7) == 0) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/%s", st->dir, n);
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

size_t
segstore_oldest_mem(const struct segstore *st)
{
	for (size_t i = 0; i + 1 < st->nsegs; i++)
		if (st->segs[i].mem != NULL)
			return i;
	return st->nsegs;
}

/* ---- pushing --------------------------------------------------------- */

static void	seg_sync_failed(struct segstore *, size_t, int);

void
segstore_seal(struct segstore *st)
{
	struct seg *s;

	if (!st->active)
		return;
	s = &st->segs[st->nsegs - 1];
	if (s->mem == NULL && s->fd >= 0) {
		if (s->synced < s->size && fsync(s->fd) < 0) {
			int err = errno;

			log_error("spool: fsync segment %016" PRIx64 ": %s", s->id,
			    log_errstr(err));
			seg_sync_failed(st, st->nsegs - 1, err);
		} else {
			s->synced = s->size;
			if (!segstore_fd_kept(st)) {
				close(s->fd);
				s->fd = -1;
			}
		}
	}
	st->active = false;
}

void
segstore_memonly(struct segstore *st, const char *what, int err)
{
	if (!st->memonly)
		log_error("spool: cannot %s in %s: %s; keeping new events in memory "
		    "(at most %llu MB, not crash-safe) until the disk accepts writes "
		    "again", what, st->dir, log_errstr(err),
		    (unsigned long long)(st->mem_max / (1024 * 1024)));
	st->memonly = true;
	st->last_retry_ms = mono_ms();
	if (st->wake != NULL)
		pthread_cond_signal(st->wake);
}

/* Read file segment s into memory (it becomes a memory segment). */
static int
seg_to_mem(struct segstore *st, struct seg *s)
{
	unsigned char *copy = malloc(s->size > 0 ? (size_t)s->size : 1);

	if (copy == NULL || seg_open_fd(st, s) < 0 ||
	    fs_read_all(s->fd, copy, (size_t)s->size, 0) < 0) {
		free(copy);
		return -1;
	}
	close(s->fd);
	s->fd = -1;
	s->mem = copy;
	s->memcap = s->size > 0 ? (size_t)s->size : 1;
	s->synced = 0;
	st->gen++;	/* every read window may show what is gone */
	return 0;
}

/*
 * fsync failed on segment i: what the kernel still caches may never reach
 * the disk, and a second fsync would report success (the error is reported
 * once).  Keep the segment's bytes in memory, as if the disk had refused
 * the write: spool_sync() fails until the housekeeper has rewritten and
 * synced the file.  With mu held.
 */
static void
seg_sync_failed(struct segstore *st, size_t i, int err)
{
	struct seg *s = &st->segs[i];

	segstore_memonly(st, "sync a segment", err);
	if (s->mem == NULL && seg_to_mem(st, s) < 0)
		log_error("spool: cannot read back segment %016" PRIx64 " after the "
		    "failed sync; its events may be lost in a crash", s->id);
}

/* Start a new segment for appending. */
static struct seg *
new_active(struct segstore *st)
{
	char path[PATH_MAX];
	struct seg *s;
	int fd = -1;

	segstore_seal(st);
	if (!st->memonly) {
		fd = open(seg_path(st, st->next_id, path, sizeof(path)),
		    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			segstore_memonly(st, "create a segment", errno);
		else
			(void)fs_fsync_dir(st->dir);
	}
	s = seg_add(st, st->next_id);
	if (s == NULL) {
		if (fd >= 0) {
			close(fd);
			(void)unlink(path);
		}
		return NULL;
	}
	st->next_id++;
	s->fd = fd;
	if (fd < 0) {
		s->mem = malloc(SEG_MIN);
		if (s->mem != NULL)
			s->memcap = SEG_MIN;
	}
	if (fd < 0 && s->mem == NULL) {
		st->nsegs--;
		return NULL;
	}
	st->active = true;
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
		n = realloc(s->mem, ncap);
		if (n == NULL)
			return -1;
		s->mem = n;
		s->memcap = ncap;
	}
	memcpy(s->mem + s->size, p, len);
	return 0;
}

uint64_t
segstore_mem_bytes(const struct segstore *st)
{
	uint64_t n = 0;

	for (size_t i = 0; i < st->nsegs; i++)
		if (st->segs[i].mem != NULL)
			n += st->segs[i].size;
	return n;
}

uint64_t
segstore_total_bytes(const struct segstore *st)
{
	uint64_t n = 0;

	for (size_t i = 0; i < st->nsegs; i++)
		n += st->segs[i].size;
	return n;
}

int
segstore_append(struct segstore *st, const unsigned char *rec, size_t len, uint64_t seq)
{
	struct seg *s;

	if (!st->active || st->segs[st->nsegs - 1].size + len > st->segment_size ||
	    (st->segs[st->nsegs - 1].mem != NULL && !st->memonly)) {
		if (st->active && st->segs[st->nsegs - 1].size == 0 &&
		    st->segs[st->nsegs - 1].mem == NULL && !st->memonly)
			s = &st->segs[st->nsegs - 1];	/* one record bigger than a segment */
		else {
			s = new_active(st);
			if (s == NULL)
				return -1;
		}
	} else
		s = &st->segs[st->nsegs - 1];
	if (s->mem == NULL) {
		if (fs_write_all(s->fd, rec, len, (off_t)s->size) == 0)
			goto done;
		/* the disk refused: cut what part of the record got there */
		segstore_memonly(st, "write a segment", errno);
		if (ftruncate(s->fd, (off_t)s->size) < 0)
			log_warn("spool: cannot cut segment %016" PRIx64 ": %s", s->id,
			    log_errstr(errno));
		if (s->size == 0) {
			/* an empty file: forget it, keep its id for memory */
			char path[PATH_MAX];

			close(s->fd);
			s->fd = -1;
			(void)unlink(seg_path(st, s->id, path, sizeof(path)));
			s->mem = malloc(SEG_MIN);
			if (s->mem == NULL) {
				st->nsegs--;
				st->active = false;
				return -1;
			}
			s->memcap = SEG_MIN;
		} else {
			s = new_active(st);
			if (s == NULL)
				return -1;
		}
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

/*
 * Records in one write: record j of the n is recs[ends[j-1] - from ..
 * ends[j] - from) (ends[-1] = from), sequence seq + j.  Writes the
 * longest first part that fits in the active file segment (starting one
 * where segstore_append() would for the first record) and returns how
 * many records that is, exactly as that many segstore_append() calls
 * would have left the store.  0: nothing appended (memory only, no room,
 * or the write failed and was cut back): append the next record with
 * segstore_append(), which rolls the segment or handles the error.
 */
size_t
segstore_append_run(struct segstore *st, const unsigned char *recs, const size_t *ends,
    size_t n, size_t from, uint64_t seq)
{
	struct seg *s;
	uint64_t room;
	size_t k = 0;

	if (n == 0 || st->memonly)
		return 0;
	s = st->active ? &st->segs[st->nsegs - 1] : NULL;
	if (s == NULL || s->mem != NULL) {
		if (ends[0] - from > st->segment_size)
			return 0;	/* one record bigger than a segment */
		s = new_active(st);
		if (s == NULL || s->mem != NULL || s->fd < 0)
			return 0;
	}
	room = s->size < st->segment_size ? st->segment_size - s->size : 0;
	while (k < n && ends[k] - from <= room)
		k++;
	if (k == 0)
		return 0;
	if (fs_write_all(s->fd, recs, ends[k - 1] - from, (off_t)s->size) != 0) {
		if (ftruncate(s->fd, (off_t)s->size) < 0)
			log_warn("spool: cannot cut segment %016" PRIx64 ": %s", s->id,
			    log_errstr(errno));
		return 0;
	}
	if (s->size == 0)
		s->first_seq = seq;
	s->size += ends[k - 1] - from;
	s->end_seq = seq + k;
	return k;
}

/*
 * fsync the segment being written without holding the lock through the
 * disk wait: a dup of its descriptor stays valid even if the segment is
 * sealed meanwhile.  Called with mu held; returns with mu held.
 */
int
segstore_sync_active(struct segstore *st, pthread_mutex_t *mu)
{
	struct seg *s;
	uint64_t id, target;
	int fd, rc = 0, err = 0;

	if (!st->active || st->segs[st->nsegs - 1].mem != NULL)
		return 0;
	s = &st->segs[st->nsegs - 1];
	if (s->synced >= s->size)
		return 0;
	fd = dup(s->fd);
	if (fd < 0)
		return -1;
	id = s->id;
	target = s->size;
	pthread_mutex_unlock(mu);
	if (fsync(fd) < 0) {
		err = errno;
		log_limited(LOG_ERROR, "spool:fsync", 60, "spool: fsync: %s",
		    log_errstr(err));
		rc = -1;
	}
	close(fd);
	pthread_mutex_lock(mu);
	st->last_sync_ms = mono_ms();
	{
		size_t i = segstore_find(st, id);

		if (i < st->nsegs && st->segs[i].id == id) {
			if (rc < 0)
				seg_sync_failed(st, i, err);
			else if (st->segs[i].synced < target)
				st->segs[i].synced = target;
		}
	}
	return rc;
}

/*
 * The disk refused writes: try to move the memory segments to files, oldest
 * first.  With mu held.
 */
void
segstore_try_disk(struct segstore *st)
{
	uint64_t moved = 0;

	st->last_retry_ms = mono_ms();
	if (st->dir_refused)
		return;		/* segdir.c: no file into that directory */
	for (size_t i = 0; i < st->nsegs; i++) {
		struct seg *s = &st->segs[i];
		char path[PATH_MAX];
		int fd;

		if (s->mem == NULL)
			continue;
		seg_path(st, s->id, path, sizeof(path));
		fd = fs_create_new(path, O_RDWR, 0600);
		if (fd < 0)
			return;
		if (fs_write_all(fd, s->mem, s->size, 0) < 0 || fsync(fd) < 0) {
			log_limited(LOG_ERROR, "spool:retry", 60, "spool: the disk still "
			    "refuses writes in %s: %s", st->dir, log_errstr(errno));
			close(fd);
			(void)unlink(path);
			return;
		}
		(void)fs_fsync_dir(st->dir);
		free(s->mem);
		s->mem = NULL;
		s->memcap = 0;
		s->synced = s->size;
		moved += s->end_seq - s->first_seq;
		s->fd = fd;	/* kept: the active one to append to, others within fd_max */
		if (!(i + 1 == st->nsegs && st->active) && !segstore_fd_kept(st)) {
			close(fd);
			s->fd = -1;
		}
	}
	st->memonly = false;
	log_warn("spool: the disk accepts writes again in %s; %" PRIu64
	    " events moved from memory to disk", st->dir, moved);
}

/* ---- life cycle ------------------------------------------------------- */

/* For segdir.c. */
char *
segstore_path(const struct segstore *st, uint64_t id, char *out, size_t len)
{
	return seg_path(st, id, out, len);
}

int
segstore_to_mem(struct segstore *st, struct seg *s)
{
	return seg_to_mem(st, s);
}

int
segstore_init(struct segstore *st, const char *dir, uint64_t segment_size,
    uint64_t mem_max, pthread_cond_t *wake)
{
	memset(st, 0, sizeof(*st));
	st->dir = strdup(dir);
	if (st->dir == NULL)
		return -1;
	st->segment_size = segment_size;
	st->mem_max = mem_max;
	st->wake = wake;
	st->next_seq = 1;
	st->next_id = 1;
	st->lockfd = -1;
	return 0;
}

void
segstore_fini(struct segstore *st)
{
	/* what memory segments still held for a destination is the queue's
	 * to report (spool_close: it knows the cursors) */
	segstore_seal(st);
	while (st->nsegs > 0)
		segstore_release(st, st->nsegs - 1, false);
	free(st->segs);
	st->segs = NULL;
	if (st->lockfd >= 0)
		close(st->lockfd);
	st->lockfd = -1;
	free(st->dir);
	st->dir = NULL;
}

struct seg_pos
segstore_end(const struct segstore *st)
{
	struct seg_pos p;

	if (st->nsegs > 0) {
		p.seg = st->segs[st->nsegs - 1].id;
		p.off = st->segs[st->nsegs - 1].size;
	} else {
		p.seg = st->next_id;
		p.off = 0;
	}
	p.seq = st->next_seq;
	return p;
}

/* Clamp a loaded cursor to what the store holds. */
void
segstore_clamp(const struct segstore *st, struct seg_pos *p)
{
	size_t i = segstore_find(st, p->seg);

	if (i == st->nsegs) {
		/* past every segment: the end (and its data was delivered) */
		*p = segstore_end(st);
		return;
	}
	if (st->segs[i].id != p->seg) {
		p->seg = st->segs[i].id;
		p->off = 0;
		if (p->seq < st->segs[i].first_seq || p->seq > st->segs[i].end_seq)
			p->seq = st->segs[i].first_seq;
		return;
	}
	if (p->off > st->segs[i].size || p->seq > st->segs[i].end_seq ||
	    p->seq < st->segs[i].first_seq) {
		/* beyond what survived (an unsynced tail) or inconsistent */
		if (p->off >= st->segs[i].size) {
			p->off = st->segs[i].size;
			p->seq = st->segs[i].end_seq;
		} else {
			p->off = 0;
			p->seq = st->segs[i].first_seq;
		}
	}
}

/* Does a loaded cursor point past what the store holds? */
bool
segstore_beyond(const struct segstore *st, const struct seg_pos *p)
{
	const struct seg *last;

	if (st->nsegs == 0)
		return false;	/* nothing left to deliver again anyway */
	last = &st->segs[st->nsegs - 1];
	return p->seg > last->id || (p->seg == last->id && p->off > last->size) ||
	    p->seq > st->next_seq;
}

/* Events and bytes from position p to the end. */
void
segstore_backlog(const struct segstore *st, const struct seg_pos *p, uint64_t *events,
    uint64_t *bytes)
{
	*events = *bytes = 0;
	for (size_t i = segstore_find(st, p->seg); i < st->nsegs; i++) {
		const struct seg *s = &st->segs[i];

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

/* Before the oldest record (the end when there is none). */
struct seg_pos
segstore_start(const struct segstore *st)
{
	struct seg_pos p = segstore_end(st);

	if (st->nsegs > 0) {
		p.seg = st->segs[0].id;
		p.off = 0;
		p.seq = st->segs[0].first_seq;
	}
	return p;
}

void
segstore_cursor_remove(const struct segstore *st, const char *name)
{
	char path[PATH_MAX];

	if (cursor_path(st, name, path, sizeof(path)) == 0)
		(void)unlink(path);
}
