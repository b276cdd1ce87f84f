/*
 * segdir: the spool directory itself -- created 0700 and locked at start
 * (segstore_attach), found deleted or replaced while the agent runs and
 * re-created (segstore_check_dir), and the segment files kept open so
 * that such a deletion loses nothing: every segment still open is
 * written back into the new directory from its descriptor (an open file
 * stays readable after its name is gone).
 *
 * Descriptors: a full spool holds at most budget / segment_size segments
 * (at most 4096, spoolopts.c); segstore_fd_budget() raises the soft
 * RLIMIT_NOFILE to fit them (within the hard limit) and holds the open
 * segment files to what fits, with FD_RESERVE descriptors left for
 * everything else.  A segment beyond that is opened for each read, as
 * before, and is what a deletion can still lose (counted, and said at
 * start).
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
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

#define FD_RESERVE	256	/* sockets, pipes of tools, logs, the rest */
#define COPY_CHUNK	(256u * 1024)

static int
make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_error("spool: cannot create %s: %s", dir, log_errstr(errno));
		return -1;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_error("spool: %s is not a directory", dir);
		return -1;
	}
	if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) < 0)
		log_warn("spool: cannot chmod 0700 %s: %s", dir, log_errstr(errno));
	return 0;
}

/*
 * One agent per spool: a second one appending to the same segments would
 * interleave records.  fcntl locks vanish with the process, kill -9
 * included, so a stale lock file never blocks a restart.
 */
static int
segstore_lock(struct segstore *st)
{
	char path[PATH_MAX], pid[32];
	struct flock fl;
	int n;

	snprintf(path, sizeof(path), "%s/lock", st->dir);
	st->lockfd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (st->lockfd < 0) {
		log_error("spool: cannot open %s: %s", path, log_errstr(errno));
		return -1;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(st->lockfd, F_SETLK, &fl) < 0) {
		int err = errno;

		if (err != EAGAIN && err != EACCES) {
			/* a filesystem without locks: run unguarded rather than
			 * not durable at all */
			log_warn("spool: cannot lock %s: %s; make sure only one "
			    "esxwatch uses %s", path, log_errstr(err), st->dir);
			return 0;
		}
		if (fcntl(st->lockfd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
			log_error("spool: %s is in use by another esxwatch (pid %ld)",
			    st->dir, (long)fl.l_pid);
		else
			log_error("spool: %s is in use by another esxwatch", st->dir);
		close(st->lockfd);
		st->lockfd = -1;
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(st->lockfd, 0) < 0 || fs_write_all(st->lockfd, pid, (size_t)n, 0) < 0)
		log_warn("spool: cannot write %s: %s", path, log_errstr(errno));
	return 0;
}
static void
dir_identity(struct segstore *st)
{
	struct stat sb;

	st->dir_dev = st->dir_ino = 0;
	if (stat(st->dir, &sb) == 0) {
		st->dir_dev = (uint64_t)sb.st_dev;
		st->dir_ino = (uint64_t)sb.st_ino;
	}
}

int
segstore_attach(struct segstore *st)
{
	if (make_dir(st->dir) < 0 || segstore_lock(st) < 0)
		return -1;
	dir_identity(st);
	return 0;
}

void
segstore_fd_budget(struct segstore *st, uint64_t budget)
{
	uint64_t need = budget / (st->segment_size > 0 ? st->segment_size : 1) + 2;
	struct rlimit rl;
	uint64_t avail;
	const char *e;

	st->fd_max = (size_t)need;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	if (rl.rlim_cur < need + 2 * FD_RESERVE && rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = rl;

		want.rlim_cur = need + 2 * FD_RESERVE;
		if (want.rlim_cur > rl.rlim_max)
			want.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
	}
	avail = rl.rlim_cur > 2 * FD_RESERVE ? rl.rlim_cur - FD_RESERVE : rl.rlim_cur / 4;
	/* a test hook: fewer, to see what a deletion then loses */
	e = getenv("ESXWATCH_SPOOL_MAX_FDS");
	if (e != NULL && atoi(e) >= 0 && (uint64_t)atoi(e) < avail)
		avail = (uint64_t)atoi(e);
	if (avail < need) {
		st->fd_max = (size_t)avail;
		log_warn("spool: only %zu of the %" PRIu64 " segment files a full spool "
		    "holds can stay open (RLIMIT_NOFILE %llu): should %s be deleted "
		    "while the agent runs, the events of the others are lost (and "
		    "counted)", st->fd_max, need, (unsigned long long)rl.rlim_cur, st->dir);
	}
}

bool
segstore_fd_kept(const struct segstore *st)
{
	size_t n = 0;

	for (size_t i = 0; i < st->nsegs; i++)
		if (st->segs[i].fd >= 0)
			n++;
	return n <= st->fd_max;
}

void
segstore_hold(struct segstore *st, struct seg *s)
{
	char path[PATH_MAX];

	if (s->fd >= 0 || s->mem != NULL || st->nodisk)
		return;
	s->fd = fs_open_read(segstore_path(st, s->id, path, sizeof(path)));
	if (s->fd >= 0 && !segstore_fd_kept(st)) {
		close(s->fd);
		s->fd = -1;
	}
}

/* Copy segment s from its open descriptor to a new file of its name. */
static int
copy_back(struct segstore *st, struct seg *s, bool active)
{
	char path[PATH_MAX];
	unsigned char *buf = malloc(COPY_CHUNK);
	int fd;

	if (buf == NULL)
		return -1;
	fd = fs_create_new(segstore_path(st, s->id, path, sizeof(path)), O_RDWR, 0600);
	for (uint64_t off = 0; fd >= 0 && off < s->size;) {
		size_t n = s->size - off > COPY_CHUNK ? COPY_CHUNK : (size_t)(s->size - off);

		if (fs_read_all(s->fd, buf, n, (off_t)off) < 0 ||
		    fs_write_all(fd, buf, n, (off_t)off) < 0) {
			close(fd);
			fd = -1;
			(void)unlink(path);
		}
		off += n;
	}
	free(buf);
	if (fd < 0 || fsync(fd) < 0) {
		log_limited(LOG_ERROR, "spool:writeback", 60, "spool: cannot write "
		    "segment %016" PRIx64 " back into %s: %s", s->id, st->dir,
		    log_errstr(errno));
		if (fd >= 0) {
			close(fd);
			(void)unlink(path);
		}
		return -1;
	}
	close(s->fd);
	s->fd = fd;
	s->synced = s->size;
	if (!active && !segstore_fd_kept(st)) {
		close(s->fd);
		s->fd = -1;
	}
	return 0;
}

/* Was the file of segment s (open) unlinked, its directory still there? */
static bool
unlinked(const struct seg *s)
{
	struct stat sb;

	return s->mem == NULL && s->fd >= 0 && fstat(s->fd, &sb) == 0 && sb.st_nlink == 0;
}

/* Is the file of segment s (not open: beyond fd_max) gone? */
static bool
missing(const struct segstore *st, const struct seg *s)
{
	char path[PATH_MAX];
	struct stat sb;

	return s->mem == NULL && s->fd < 0 &&
	    lstat(segstore_path(st, s->id, path, sizeof(path)), &sb) < 0 && errno == ENOENT;
}

/*
 * Every segment into the re-created directory (only: just those whose
 * file was unlinked or, not open, is missing): from its open descriptor,
 * or (that failing) into memory; the rest are lost: their records from
 * sequence from_seq on are returned (those gap does not know of already,
 * when given: it notes them, so that a later start does not count their
 * absence again).  *written gets the events written back.
 */
static uint64_t
write_back(struct segstore *st, uint64_t from_seq, bool only, uint64_t *written,
    bool *mem, uint64_t (*gap)(void *, uint64_t, uint64_t), void *arg)
{
	uint64_t lost = 0;

	*written = 0;
	*mem = false;
	for (size_t i = 0; i < st->nsegs;) {
		struct seg *s = &st->segs[i];
		uint64_t from = from_seq > s->first_seq ? from_seq : s->first_seq;
		bool active = st->active && i + 1 == st->nsegs;

		if (only && !unlinked(s) && !missing(st, s)) {
			i++;
			continue;
		}
		if (s->mem == NULL && s->fd >= 0 && copy_back(st, s, active) == 0) {
			*written += s->end_seq - s->first_seq;
			i++;
			continue;
		}
		if (s->mem == NULL && unlinked(s)) {
			/* the copy failed (a full disk): its open file still
			 * holds it, written back at the next check */
			i++;
			continue;
		}
		if (s->mem != NULL || (s->fd >= 0 && segstore_to_mem(st, s) == 0)) {
			*mem = true;
			i++;
			continue;
		}
		if (s->end_seq > from)
			lost += gap != NULL ? gap(arg, from, s->end_seq) : s->end_seq - from;
		segstore_release(st, i, false);
	}
	return lost;
}

/*
 * May the spool be written back where the directory was?  The start's
 * storage check (fs_storage_check) on its parent, before anything there is
 * created, chmod-ed or followed: a link planted in its place, a directory
 * of another user's or one others may write to is refused.
 */
static int
dir_safe(struct segstore *st)
{
	char parent[PATH_MAX], err[512];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", st->dir);
	slash = strrchr(parent, '/');
	if (slash == NULL)
		snprintf(parent, sizeof(parent), ".");
	else
		slash[slash == parent ? 1 : 0] = '\0';
	err[0] = '\0';
	if (fs_storage_check(parent, err, sizeof(err)) != -2)
		return 0;
	log_limited(LOG_ERROR, "spool:unsafe", 60, "spool: %s was deleted while the "
	    "agent runs and is not safe to re-create: %s; the spool stays open and "
	    "new events are kept in memory until it is", st->dir, err);
	return -1;
}

/* Is the directory attached still there?  Else re-create and lock it:
 * 1; -1 gone but not safe to re-create (nothing written there). */
static int
dir_gone(struct segstore *st)
{
	struct stat sb;

	if (stat(st->dir, &sb) == 0) {
		if ((uint64_t)sb.st_dev == st->dir_dev && (uint64_t)sb.st_ino == st->dir_ino)
			return 0;
	} else if (errno != ENOENT && errno != ENOTDIR)
		return 0;	/* EACCES, EIO...: not known to be gone */
	if (dir_safe(st) < 0) {
		st->dir_refused = true;
		return -1;
	}
	st->dir_refused = false;
	log_error("spool: %s was deleted while the agent runs; re-creating it",
	    st->dir);
	if (fs_mkdir_p(st->dir, 0700) < 0 || make_dir(st->dir) < 0)
		log_error("spool: cannot re-create %s: %s", st->dir, log_errstr(errno));
	if (st->lockfd >= 0)
		close(st->lockfd);
	st->lockfd = -1;
	(void)segstore_lock(st);
	dir_identity(st);
	return 1;
}

int
segstore_check_dir(struct segstore *st, uint64_t from_seq,
    uint64_t (*gap)(void *, uint64_t, uint64_t), void *arg)
{
	uint64_t lost, written;
	bool mem, gone, some = false;
	int r;

	if (st->nodisk || st->dir_ino == 0)
		return 0;
	r = dir_gone(st);
	if (r < 0) {
		segstore_memonly(st, "re-create the spool directory safely", EPERM);
		return 0;
	}
	gone = r > 0;
	/* the directory stays, segment files went (an rm -rf that raced
	 * with a file the agent wrote, a hand that deleted them) */
	for (size_t i = 0; !gone && !some && i < st->nsegs; i++)
		some = unlinked(&st->segs[i]) || missing(st, &st->segs[i]);
	if (!gone && !some)
		return 0;
	lost = write_back(st, from_seq, !gone, &written, &mem, gap, arg);
	(void)fs_fsync_dir(st->dir);
	st->corrupt += lost;
	if (gone || written > 0 || lost > 0 || mem)
		log_warn("spool: %s %s; %" PRIu64 " queued events written back into "
		    "it from the open segment files", st->dir, gone ? "re-created" :
		    "lost segment files", written);
	if (lost > 0)
		log_error("spool: %" PRIu64 " queued events were in segment files "
		    "deleted with %s and not open: lost (counted as damaged)", lost, st->dir);
	if (mem) {
		/* what is in memory goes to the new directory at once */
		st->memonly = true;
		st->last_retry_ms = 0;
	}
	st->gen++;
	return 1;
}
