/*
 * segstore: the spool's segment store (see segstore.h): the table of
 * segments (ordered by id), the segment files found at start and scanned
 * back into it, positions in the stream (start, end, a loaded cursor
 * clamped) and what the segments hold.  Two backends behind the same
 * functions: segment files in the spool directory and memory segments
 * (when the disk refuses writes, or there is no usable directory at
 * all).  Its other rooms: segwrite.c (appending, syncing, the memory
 * backend), segread.c (records read back), segcursor.c (the cursor files
 * and the destinations file), segdir.c (the directory itself).  No lock
 * of its own: the queue (spool.c) holds its mutex around every call.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"
#include "segstore_int.h"

char *
segstore_path(const struct segstore *st, uint64_t id, char *out, size_t len)
{
	snprintf(out, len, "%s/%016" PRIx64 ".seg", st->dir, id);
	return out;
}

struct seg *
segstore_add(struct segstore *st, uint64_t id)
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
	    unlink(segstore_path(st, s->id, path, sizeof(path))) < 0 && errno != ENOENT)
		log_warn("spool: cannot remove %s: %s", path, log_errstr(errno));
	st->gen++;	/* every read window may show what is gone */
	memmove(s, s + 1, (st->nsegs - i - 1) * sizeof(*s));
	st->nsegs--;
	if (i == st->nsegs)
		st->active = false;
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

	segstore_path(st, id, path, sizeof(path));
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
	s = segstore_add(st, id);
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

/* ---- life cycle, positions, sizes -------------------------------------- */

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

size_t
segstore_oldest_mem(const struct segstore *st)
{
	for (size_t i = 0; i + 1 < st->nsegs; i++)
		if (st->segs[i].mem != NULL)
			return i;
	return st->nsegs;
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
