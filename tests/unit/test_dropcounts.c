/*
 * The spool's per-reason counts across restarts (agent/spool/dropcounts.h):
 * budget, poison and filtered per destination, damage once however often
 * the spool is opened, what removed destinations dropped, a damaged or
 * planted counts file (zero and a new counts_since, never a wrong number).
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <unistd.h>

#include "t.h"

#include "../../agent/spool/dropcounts.h"
#include "../../agent/lib/log.h"
#include "../../agent/spool/spool.h"
#include "spooltest.h"

static const char *const one[] = { "server" };
static const char *const two[] = { "server", "servers.b" };

static void
push_n(struct spool *sp, int from, int n)
{
	for (int i = from; i < from + n; i++) {
		struct event *ev = event_newf(1700000000000 + i, "event number %d", i);

		event_set_i64(ev, "n", i);
		CHECK_INT(spool_push(sp, ev), 0);
		event_free(ev);
	}
}

/* Peek n for d and settle them: 'a' ack, 'p' poison, 'f' filtered. */
static void
settle(struct spool *sp, size_t d, size_t n, char how)
{
	struct batch b;

	CHECK_INT(spool_peek(sp, d, n, 1 << 30, 0, &b), (int)n);
	if (how == 'p')
		CHECK_INT(spool_drop(sp, d, n), 0);
	else if (how == 'f')
		CHECK_INT(spool_skip(sp, d, n), 0);
	else
		CHECK_INT(spool_ack(sp, d, n), 0);
	spool_batch_free(&b);
}

static void
dest_counts(struct spool *sp, size_t d, uint64_t *budget, uint64_t *poison,
    uint64_t *filtered)
{
	struct spool_dest_stats ds;

	CHECK_INT(spool_dest_stats(sp, d, &ds), 0);
	*budget = ds.dropped_budget;
	*poison = ds.dropped_poison;
	*filtered = ds.filtered;
}

/* Poison and filtered for two destinations, a budget drop: all kept by a
 * clean stop; since_ms stays; a removed destination's drops stay in the
 * spool's total. */
TEST(counts_survive_a_clean_stop)
{
	char dir[300];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	uint64_t b, p, f, budget0, total;
	int64_t since;

	opts(&o, 16 * 1024, 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, two, 2);
	push_n(sp, 0, 10);
	settle(sp, 0, 3, 'p');
	settle(sp, 0, 4, 'f');
	settle(sp, 1, 2, 'p');
	settle(sp, 1, 8, 'a');
	push_n(sp, 10, 400);	/* 0 lags: over the budget */
	dest_counts(sp, 0, &budget0, &p, &f);
	CHECK(budget0 > 0);
	spool_stats(sp, &st);
	since = st.counts_since_ms;
	CHECK(since > 0);
	spool_close(sp);

	sp = spool_open_dir(dir, &o, two, 2);
	dest_counts(sp, 0, &b, &p, &f);
	CHECK_INT(b, budget0);
	CHECK_INT(p, 3);
	CHECK_INT(f, 4);
	dest_counts(sp, 1, &b, &p, &f);
	CHECK_INT(p, 2);
	CHECK_INT(f, 0);
	spool_stats(sp, &st);
	CHECK_INT(st.counts_since_ms, since);
	CHECK_INT(st.dropped_poison, 5);
	total = st.dropped_budget;	/* both lagged */
	CHECK(total > budget0);
	spool_close(sp);

	/* servers.b removed while stopped: its 2 stay in the total */
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_poison, 5);
	CHECK_INT(st.dropped_budget, total);
	spool_close(sp);
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_poison, 5);
	spool_close(sp);
}

/* Written while running (at most every sync_ms): a crash after that keeps
 * them.  The crash: the file is copied away while the spool runs, the
 * spool closed, the copy put back. */
TEST(counts_written_while_running)
{
	char dir[300], path[400], saved[DC_FILE_MAX];
	struct spool_opts o;
	struct spool *sp;
	uint64_t b, p, f;
	ssize_t n = 0;
	int fd, guard = 0;

	opts(&o, 1 << 20, 4096);
	newdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/counts", dir);
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 5);
	settle(sp, 0, 2, 'p');
	do {
		usleep(20 * 1000);
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, saved, sizeof(saved));
			close(fd);
		}
	} while ((n <= 0 || strstr(saved, "dest server 0 2 0\n") == NULL) && guard++ < 100);
	CHECK(n > 0);
	spool_close(sp);
	CHECK_INT(unlink(path), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(write(fd, saved, (size_t)n) == n);
	close(fd);
	sp = spool_open_dir(dir, &o, one, 1);
	dest_counts(sp, 0, &b, &p, &f);
	CHECK_INT(p, 2);
	spool_close(sp);
}

/* Flip the bits of the byte at off in file p. */
static void
flip(const char *p, off_t off)
{
	unsigned char c;
	int fd = open(p, O_RDWR);

	CHECK(pread(fd, &c, 1, off) == 1);
	c ^= 0x5a;
	CHECK(pwrite(fd, &c, 1, off) == 1);
	close(fd);
}

/* Damage the start finds is counted once however often the spool opens
 * with the damaged segment still there; new damage is added. */
TEST(damage_counted_once_across_starts)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	off_t size;
	int fd;

	opts(&o, 1 << 20, 64 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 50);
	spool_close(sp);
	snprintf(p, sizeof(p), "%s/0000000000000001.seg", dir);
	fd = open(p, O_RDONLY);
	size = lseek(fd, 0, SEEK_END);
	close(fd);
	flip(p, size / 2);
	for (int k = 0; k < 3; k++) {
		sp = spool_open_dir(dir, &o, one, 1);
		spool_stats(sp, &st);
		CHECK_INT(st.dropped_corrupt, 1);
		spool_close(sp);
	}
	flip(p, size / 4);
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, 2);
	spool_close(sp);
}

/* A garbled file, one with a wrong CRC, a symlink in its place: zero and
 * a new counts_since; the file is written again. */
TEST(damaged_counts_file_starts_from_zero)
{
	static const char *const bad[] = {
		"garbage\n",
		"esxwatch-counts 1\nsince_ms 5\ncorrupt 7\ntorn 0\ngone_budget 0\n"
		"gone_poison 0\ncrc 00000000\n",
		"",
	};
	char dir[300], path[400], tmp[420];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	struct stat sb;

	opts(&o, 1 << 20, 4096);
	for (size_t i = 0; i < 4; i++) {
		newdir(dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/counts", dir);
		sp = spool_open_dir(dir, &o, one, 1);
		push_n(sp, 0, 3);
		settle(sp, 0, 1, 'p');
		spool_close(sp);
		CHECK_INT(unlink(path), 0);
		if (i < 3) {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

			CHECK(write(fd, bad[i], strlen(bad[i])) == (ssize_t)strlen(bad[i]));
			close(fd);
		} else
			CHECK_INT(symlink("/etc/passwd", path), 0);
		/* and a temp file a crash left: removed */
		snprintf(tmp, sizeof(tmp), "%s.tmp.1.1", path);
		close(open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600));
		sp = spool_open_dir(dir, &o, one, 1);
		CHECK(access(tmp, F_OK) != 0);
		spool_stats(sp, &st);
		CHECK_INT(st.dropped_poison, 0);
		CHECK_INT(st.dropped_corrupt, 0);
		CHECK(st.counts_since_ms > 5);
		spool_close(sp);
		CHECK_INT(lstat(path, &sb), 0);
		CHECK(S_ISREG(sb.st_mode));
		CHECK_INT(sb.st_mode & 0777, 0600);
	}
}

/* A new spool in dir holding 300 events in 4 KB segments, at most 2 of
 * them held open: the others can vanish unseen. */
static struct spool *
open_unheld(char *dir, size_t len, struct spool_opts *o)
{
	struct spool *sp;

	opts(o, 1 << 20, 4 * 1024);
	newdir(dir, len);
	setenv("ESXWATCH_SPOOL_MAX_FDS", "2", 1);
	sp = spool_open_dir(dir, o, one, 1);
	unsetenv("ESXWATCH_SPOOL_MAX_FDS");
	push_n(sp, 0, 300);
	return sp;
}

/* Segments lost with a deleted directory (not held open) are counted
 * while running; the gap they leave is not counted again at the next
 * start. */
TEST(lost_with_the_directory_counted_once)
{
	char dir[300], p[400], old[320];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	uint64_t lost;
	int guard = 0;

	sp = open_unheld(dir, sizeof(dir), &o);
	/* gone at once (no file of it re-created meanwhile) */
	snprintf(old, sizeof(old), "%s.old", dir);
	CHECK_INT(rename(dir, old), 0);
	nftw(old, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(p, sizeof(p), "%s/cursor.server", dir);
	do {
		usleep(20 * 1000);
		spool_stats(sp, &st);
	} while ((st.dropped_corrupt == 0 || access(p, F_OK) != 0) && guard++ < 250);
	lost = st.dropped_corrupt;
	CHECK(lost > 0);
	CHECK(lost < 300);
	spool_close(sp);
	for (int k = 0; k < 2; k++) {
		sp = spool_open_dir(dir, &o, one, 1);
		spool_stats(sp, &st);
		CHECK_INT(st.dropped_corrupt, lost);
		CHECK_INT(st.queued_events + lost, 300);
		spool_close(sp);
	}
}

/* Segment files deleted from a kept directory, some not held open: those
 * are counted while running (once), not only at the next start. */
TEST(unheld_segment_files_deleted_counted_while_running)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	uint64_t lost;
	int guard = 0;

	sp = open_unheld(dir, sizeof(dir), &o);
	spool_stats(sp, &st);
	for (int k = 1; k <= (int)st.segments; k++) {
		snprintf(p, sizeof(p), "%s/%016x.seg", dir, k);
		CHECK_INT(unlink(p), 0);
	}
	do {
		usleep(20 * 1000);
		spool_stats(sp, &st);
	} while (st.dropped_corrupt == 0 && guard++ < 100);
	lost = st.dropped_corrupt;
	CHECK(lost > 0);
	CHECK_INT(st.queued_events + lost, 300);
	spool_close(sp);
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, lost);
	CHECK_INT(st.queued_events + lost, 300);
	spool_close(sp);
}

int
main(void)
{
	T_PROG("test_dropcounts");
	log_init(0, "/dev/null");
	snprintf(root, sizeof(root), "/tmp/test_dropcounts.XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	RUN(counts_survive_a_clean_stop);
	RUN(counts_written_while_running);
	RUN(damage_counted_once_across_starts);
	RUN(damaged_counts_file_starts_from_zero);
	RUN(lost_with_the_directory_counted_once);
	RUN(unheld_segment_files_deleted_counted_while_running);
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	log_close();
	return t_done();
}
