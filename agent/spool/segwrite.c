/*
 * segwrite: records appended to the segments (see segstore.h, "Writing"):
 * a new segment started, one sealed, runs of records in one write, the
 * active segment synced, and the memory backend: where records go when
 * the disk refuses a write or a sync, until segstore_try_disk() moves
 * them back to files.  A room of its own: every way the disk can fail a
 * write is handled here, and nowhere else.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"
#include "segstore_int.h"

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
int
segstore_to_mem(struct segstore *st, struct seg *s)
{
	unsigned char *copy = malloc(s->size > 0 ? (size_t)s->size : 1);

	if (copy == NULL || segstore_open_fd(st, s) < 0 ||
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
	if (s->mem == NULL && segstore_to_mem(st, s) < 0)
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
		fd = open(segstore_path(st, st->next_id, path, sizeof(path)),
		    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			segstore_memonly(st, "create a segment", errno);
		else
			(void)fs_fsync_dir(st->dir);
	}
	s = segstore_add(st, st->next_id);
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
			(void)unlink(segstore_path(st, s->id, path, sizeof(path)));
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
		segstore_path(st, s->id, path, sizeof(path));
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
