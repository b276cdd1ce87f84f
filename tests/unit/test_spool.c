/*
 * The durable spool: append, read back, acknowledge, segment deletion,
 * reopen, torn tails, damaged records, the budget, destinations on reload,
 * a disk that refuses writes, and threads.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"

#include "../../agent/lib/log.h"
#include "../../agent/config/config.h"
#include "../../agent/spool/spool.h"
#include "../../agent/spool/spool_int.h"	/* curmu: the housekeeper held still */
#include "../../agent/spool/spoolrec.h"
#include "../../agent/status.h"
#include "../../output/sink.h"
#include "spooltest.h"


/*
 * fsync() as the spool sees it: this definition takes the place of the C
 * library's for the code linked into this test, so a test can count
 * directory syncs and make the sync of a segment file fail as a dying
 * disk does (EIO once; the next fsync succeeds, the data may be gone).
 */
static int	 fsync_dirs;		/* directory fsyncs seen */
static int	 fsync_seg_fail;	/* fail this many segment fsyncs */

int
fsync(int fd)
{
	struct stat st;
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		__atomic_add_fetch(&fsync_dirs, 1, __ATOMIC_SEQ_CST);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 4 && memcmp(path + n - 4, ".seg", 4) == 0 &&
	    __atomic_load_n(&fsync_seg_fail, __ATOMIC_SEQ_CST) > 0) {
		__atomic_sub_fetch(&fsync_seg_fail, 1, __ATOMIC_SEQ_CST);
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

/* pread() likewise: make reading a segment fail (a bad sector). */
static int	 pread_seg_fail;	/* fail this many segment reads */
static int	 pread_seg_skip;	/* ... after letting this many pass */

static bool
is_seg_fd(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	return n > 4 && memcmp(path + n - 4, ".seg", 4) == 0;
}

ssize_t
pread(int fd, void *p, size_t len, off_t off)
{
	if (__atomic_load_n(&pread_seg_fail, __ATOMIC_SEQ_CST) > 0 && is_seg_fd(fd)) {
		if (__atomic_load_n(&pread_seg_skip, __ATOMIC_SEQ_CST) > 0) {
			__atomic_sub_fetch(&pread_seg_skip, 1, __ATOMIC_SEQ_CST);
			return (ssize_t)syscall(SYS_pread64, fd, p, len, off);
		}
		__atomic_sub_fetch(&pread_seg_fail, 1, __ATOMIC_SEQ_CST);
		errno = EIO;
		return -1;
	}
	return (ssize_t)syscall(SYS_pread64, fd, p, len, off);
}

/* pwrite() likewise: count the writes to segment files. */
static int	 pwrite_segs;

ssize_t
pwrite(int fd, const void *p, size_t len, off_t off)
{
	if (is_seg_fd(fd))
		__atomic_add_fetch(&pwrite_segs, 1, __ATOMIC_SEQ_CST);
	return (ssize_t)syscall(SYS_pwrite64, fd, p, len, off);
}

static struct event *
mkev(int i)
{
	struct event *ev = event_newf(1700000000000 + i, "event number %d", i);

	event_set_i64(ev, "n", i);
	event_set(ev, "esxwatch_collector", "test");
	return ev;
}

static void
push_n(struct spool *sp, int from, int n)
{
	for (int i = from; i < from + n; i++) {
		struct event *ev = mkev(i);

		CHECK_INT(spool_push(sp, ev), 0);
		event_free(ev);
	}
}

/* Peek up to max, check they are from..from+k in order, ack them.
 * Returns how many were read. */
static int
read_ack(struct spool *sp, size_t d, int from, size_t max)
{
	struct batch b;
	int n;

	n = spool_peek(sp, d, max, 1 << 30, 0, &b);
	CHECK(n >= 0);
	for (int i = 0; i < n; i++) {
		const char *v = event_get(b.events[i], "n");
		char want[32];

		snprintf(want, sizeof(want), "%d", from + i);
		if (v == NULL || strcmp(v, want) != 0) {
			T_FAILF("event %d: n=%s, want %s", i, v ? v : "(null)", want);
			break;
		}
	}
	CHECK_INT(spool_ack(sp, d, (size_t)n), 0);
	spool_batch_free(&b);
	return n;
}

/* Read everything for d; returns the count, checks order (each n larger). */
static int
drain(struct spool *sp, size_t d, int *first, int *last)
{
	int total = 0, prev = -1;

	*first = *last = -1;
	for (;;) {
		struct batch b;
		int n = spool_peek(sp, d, 100, 1 << 30, 0, &b);

		if (n <= 0) {
			spool_batch_free(&b);
			break;
		}
		for (int i = 0; i < n; i++) {
			int v = atoi(event_get(b.events[i], "n"));

			if (v <= prev)
				T_FAILF("out of order: %d after %d", v, prev);
			if (*first < 0)
				*first = v;
			*last = prev = v;
		}
		total += n;
		spool_ack(sp, d, (size_t)n);
		spool_batch_free(&b);
	}
	return total;
}

static int
count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name), s = strlen(suffix);

		if (l > s && strcmp(de->d_name + l - s, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* The path of the n-th (0-based, by name) segment file. */
static int
seg_file(const char *dir, int nth, char *out, size_t len)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort), k = 0, rc = -1;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(list[i]->d_name);

		if (l > 4 && strcmp(list[i]->d_name + l - 4, ".seg") == 0 && k++ == nth) {
			snprintf(out, len, "%s/%s", dir, list[i]->d_name);
			rc = 0;
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

static off_t
file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? st.st_size : -1;
}

static const char *const one[] = { "server" };

TEST(append_read_ack)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct batch b;
	struct spool_stats st;

	opts(&o, 1 << 20, 64 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	CHECK(sp != NULL);
	push_n(sp, 0, 100);
	spool_stats(sp, &st);
	CHECK_INT(st.queued_events, 100);
	CHECK_INT(st.pushed_events, 100);
	CHECK_INT(spool_backlog(sp, 0), 100);

	/* a peek without ack gives the same events again */
	CHECK_INT(spool_peek(sp, 0, 10, 1 << 30, 0, &b), 10);
	CHECK_STR(b.events[0]->text, "event number 0");
	CHECK_INT(b.events[0]->timestamp_ms, 1700000000000);
	CHECK_STR(event_get(b.events[0], "esxwatch_collector"), "test");
	spool_batch_free(&b);
	CHECK_INT(read_ack(sp, 0, 0, 10), 10);
	CHECK_INT(spool_backlog(sp, 0), 90);

	/* acks in pieces of one peek consume it in order */
	CHECK_INT(spool_peek(sp, 0, 10, 1 << 30, 0, &b), 10);
	spool_batch_free(&b);
	spool_ack(sp, 0, 3);
	spool_drop(sp, 0, 1);
	spool_ack(sp, 0, 6);
	CHECK_INT(spool_backlog(sp, 0), 80);
	CHECK_INT(read_ack(sp, 0, 20, 1000), 80);
	CHECK_INT(spool_backlog(sp, 0), 0);
	{
		struct spool_dest_stats ds;

		CHECK_INT(spool_dest_stats(sp, 0, &ds), 0);
		CHECK_STR(ds.name, "server");
		CHECK_INT(ds.dropped_poison, 1);
		CHECK_INT(ds.acked_events, 99);
		CHECK_INT(spool_dest_stats(sp, 1, &ds), -1);
	}
	/* max_bytes: the first event always, then as many as fit */
	push_n(sp, 100, 10);
	CHECK_INT(spool_peek(sp, 0, 10, 1, 0, &b), 1);
	spool_batch_free(&b);
	CHECK_INT(spool_sync(sp), 0);
	spool_close(sp);
}

/* Everything for destination 0: n events, numbered first..last. */
static void
drained(struct spool *sp, int n, int first, int last)
{
	int f, l;

	CHECK_INT(drain(sp, 0, &f, &l), n);
	CHECK_INT(f, first);
	CHECK_INT(l, last);
}

/* The spool of dir opened again: nothing counted damaged, and destination
 * 0 gets n events, numbered first..last. */
static void
reopened_intact(const char *dir, const struct spool_opts *o, int n, int first,
    int last)
{
	struct spool *sp = spool_open_dir(dir, o, one, 1);
	struct spool_stats st;

	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, 0);
	drained(sp, n, first, last);
	spool_close(sp);
}

/* n events from `from` with one spool_push_many(); returns its result. */
static size_t
push_many_n(struct spool *sp, int from, int n)
{
	struct event **evs = calloc((size_t)n, sizeof(*evs));
	size_t r;

	for (int i = 0; i < n; i++)
		evs[i] = mkev(from + i);
	r = spool_push_many(sp, (const struct event *const *)evs, (size_t)n);
	for (int i = 0; i < n; i++)
		event_free(evs[i]);
	free(evs);
	return r;
}

/* The bytes of file dir/name; *len set; NULL if absent. */
static unsigned char *
slurp(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX];
	unsigned char *d;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || (d = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	if (read(fd, d, *len) != (ssize_t)*len)
		*len = 0;
	close(fd);
	return d;
}

/* Every segment file of dir a is in dir b with the same bytes, and b has
 * no other; returns how many there are. */
static int
same_segments(const char *a, const char *b)
{
	DIR *d = opendir(a);
	struct dirent *e;
	int n = 0, nb = 0;

	CHECK(d != NULL);
	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t la = 0, lb = 0, l = strlen(e->d_name);
		unsigned char *x, *y;

		if (l < 4 || strcmp(e->d_name + l - 4, ".seg") != 0)
			continue;
		x = slurp(a, e->d_name, &la);
		y = slurp(b, e->d_name, &lb);
		if (y == NULL || la != lb || memcmp(x, y, la) != 0)
			T_FAILF("segment %s differs (%zu and %zu bytes)", e->d_name, la, lb);
		free(x);
		free(y);
		n++;
	}
	if (d != NULL)
		closedir(d);
	d = opendir(b);
	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l >= 4 && strcmp(e->d_name + l - 4, ".seg") == 0)
			nb++;
	}
	if (d != NULL)
		closedir(d);
	CHECK_INT(nb, n);
	return n;
}

/*
 * spool_push_many() writes exactly the records spool_push() would, each in
 * the segment file (the kernel's page cache: safe from kill -9) when it
 * returns, with no sync asked; in one write per run where the segment has
 * room, record by record across a segment's end.
 */
TEST(push_many_writes_the_same_records_at_once)
{
	char one_by_one[300], many[300];
	struct spool_opts o;
	struct spool *a, *b;
	struct spool_stats st;
	int w;

	/* within one segment: 100 events, two runs of at most 64 */
	opts(&o, 1 << 24, 1 << 20);
	a = spool_open_dir(newdir(one_by_one, sizeof(one_by_one)), &o, one, 1);
	b = spool_open_dir(newdir(many, sizeof(many)), &o, one, 1);
	CHECK(a != NULL && b != NULL);
	push_n(a, 0, 100);
	w = __atomic_load_n(&pwrite_segs, __ATOMIC_SEQ_CST);
	CHECK_INT(push_many_n(b, 0, 100), 100);
	CHECK_INT(__atomic_load_n(&pwrite_segs, __ATOMIC_SEQ_CST) - w, 2);
	CHECK_INT(same_segments(one_by_one, many), 1);
	spool_stats(b, &st);
	CHECK_INT(st.pushed_events, 100);
	CHECK_INT(st.queued_events, 100);
	CHECK_INT(read_ack(b, 0, 0, 10), 10);
	CHECK_INT(push_many_n(b, 100, 5), 5);
	drained(b, 95, 10, 104);
	spool_close(a);
	spool_close(b);

	/* 8 KB segments: runs cross segment ends */
	opts(&o, 1 << 24, 8 * 1024);
	a = spool_open_dir(newdir(one_by_one, sizeof(one_by_one)), &o, one, 1);
	b = spool_open_dir(newdir(many, sizeof(many)), &o, one, 1);
	push_n(a, 0, 1000);
	CHECK_INT(push_many_n(b, 0, 1000), 1000);
	CHECK(same_segments(one_by_one, many) > 5);
	spool_close(a);
	spool_close(b);
	/* and they are read back after a restart */
	b = spool_open_dir(many, &o, one, 1);
	drained(b, 1000, 0, 999);
	spool_close(b);
}

/* A refused batch write leaves no partial record: the events go to memory
 * one by one, in order, all counted as queued. */
TEST(push_many_on_a_disk_that_refuses_writes)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	struct rlimit old, small;

	opts(&o, 1 << 20, 64 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	CHECK_INT(push_many_n(sp, 0, 10), 10);
	CHECK_INT(spool_sync(sp), 0);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = 4096;
	setrlimit(RLIMIT_FSIZE, &small);
	CHECK_INT(push_many_n(sp, 10, 200), 200);
	setrlimit(RLIMIT_FSIZE, &old);
	spool_stats(sp, &st);
	CHECK(st.memory_only);
	CHECK_INT(st.queued_events, 210);
	CHECK_INT(st.torn_tails, 0);
	drained(sp, 210, 0, 209);
	spool_close(sp);
}

TEST(reopen_resumes_at_cursor)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	int first, last;

	opts(&o, 1 << 20, 8 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 300);
	CHECK_INT(read_ack(sp, 0, 0, 120), 120);
	spool_close(sp);

	sp = spool_open_dir(dir, &o, one, 1);
	CHECK(sp != NULL);
	CHECK_INT(spool_backlog(sp, 0), 180);
	push_n(sp, 300, 10);
	CHECK_INT(drain(sp, 0, &first, &last), 190);
	CHECK_INT(first, 120);
	CHECK_INT(last, 309);
	spool_close(sp);

	/* everything acknowledged: nothing comes back, no segment is left */
	sp = spool_open_dir(dir, &o, one, 1);
	CHECK_INT(spool_backlog(sp, 0), 0);
	push_n(sp, 310, 1);
	CHECK_INT(read_ack(sp, 0, 310, 10), 1);
	spool_close(sp);
}

/*
 * Segment files go once the cursor files that passed them are written,
 * by the housekeeper within a sync period (50 ms here): wait for it, at
 * most 5 s, and say how many are left.
 */
static int
segs_after_cursor_save(const char *dir, int want)
{
	for (int i = 0; i < 500 && count_files(dir, ".seg") != want; i++)
		usleep(10 * 1000);
	return count_files(dir, ".seg");
}

TEST(segments_deleted_when_passed)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	int first, last;

	opts(&o, 1 << 20, 4 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	push_n(sp, 0, 500);
	CHECK(count_files(dir, ".seg") > 5);
	spool_stats(sp, &st);
	CHECK_INT(st.segments, count_files(dir, ".seg"));
	CHECK(st.disk_bytes > 500 * 40);
	CHECK_INT(drain(sp, 0, &first, &last), 500);
	/* only the segment being written remains, once the cursor is saved */
	CHECK_INT(segs_after_cursor_save(dir, 1), 1);
	spool_close(sp);
}

TEST(file_modes)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	struct stat st;

	opts(&o, 1 << 20, 64 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	push_n(sp, 0, 5);
	read_ack(sp, 0, 0, 2);
	spool_close(sp);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(seg_file(dir, 0, p, sizeof(p)) == 0);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	snprintf(p, sizeof(p), "%s/cursor.server", dir);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
}

TEST(torn_tail_is_cut)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	int fd, first, last;
	off_t size;

	opts(&o, 1 << 20, 64 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 20);
	spool_close(sp);
	/* a record cut in the middle of its write */
	CHECK(seg_file(dir, 0, p, sizeof(p)) == 0);
	size = file_size(p);
	fd = open(p, O_WRONLY | O_APPEND);
	CHECK(write(fd, "ESPL\x40\0\0\0\x15\0\0\0\0\0\0\0\1\2\3\4abc", 23) == 23);
	close(fd);

	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.torn_tails, 1);
	CHECK_INT(st.dropped_corrupt, 0);
	CHECK_INT(file_size(p), size);
	push_n(sp, 20, 5);
	CHECK_INT(drain(sp, 0, &first, &last), 25);
	CHECK_INT(first, 0);
	CHECK_INT(last, 24);
	spool_close(sp);
}

TEST(damaged_records_skipped_and_counted)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	int fd, first, last, total;
	off_t size;
	unsigned char c;

	opts(&o, 1 << 20, 64 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 50);
	spool_close(sp);
	CHECK(seg_file(dir, 0, p, sizeof(p)) == 0);
	size = file_size(p);
	/* one flipped byte in the middle, one at the very start (a magic) */
	fd = open(p, O_RDWR);
	CHECK(pread(fd, &c, 1, size / 2) == 1);
	c ^= 0x5a;
	CHECK(pwrite(fd, &c, 1, size / 2) == 1);
	CHECK(pread(fd, &c, 1, 0) == 1);
	c ^= 0xff;
	CHECK(pwrite(fd, &c, 1, 0) == 1);
	close(fd);

	sp = spool_open_dir(dir, &o, one, 1);
	CHECK(sp != NULL);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, 2);
	CHECK_INT(st.torn_tails, 0);
	total = drain(sp, 0, &first, &last);
	CHECK_INT(total, 48);
	CHECK_INT(first, 1);
	CHECK_INT(last, 49);
	spool_close(sp);
}

/* The record start offsets of a segment file (at most max); returns the
 * count. */
struct recoffs {
	const unsigned char	*base;
	size_t			 n, max;
	size_t			*off;
};

static int
rec_off_cb(void *arg, uint64_t seq, const void *payload, size_t len)
{
	struct recoffs *r = arg;

	(void)seq;
	(void)len;
	if (r->n < r->max)
		r->off[r->n] = (size_t)((const unsigned char *)payload - r->base) -
		    SPOOL_REC_HDR;
	r->n++;
	return 0;
}

static size_t
record_offsets(const char *path, size_t *off, size_t max)
{
	struct recoffs r = { NULL, 0, max, off };
	unsigned char buf[64 * 1024];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	r.base = buf;
	spoolrec_scan_image(buf, (size_t)n, rec_off_cb, &r, NULL, NULL);
	return r.n;
}

/*
 * Damage right at record boundaries, which no CRC sees: a middle segment
 * deleted, the newest one cut after a clean stop.  What they held is
 * counted exactly, and once delivered past, not again.
 */
TEST(lost_segments_counted_at_record_boundaries)
{
	char dir[300], mid[400], last[400];
	size_t off[256], nmid, nlast, cut;
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	int nseg, first, lastev;

	opts(&o, 4 << 20, 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 200);
	spool_close(sp);
	nseg = count_files(dir, ".seg");
	CHECK(nseg >= 5);
	CHECK(seg_file(dir, 2, mid, sizeof(mid)) == 0);
	nmid = record_offsets(mid, off, 256);
	CHECK(nmid > 1);
	CHECK_INT(unlink(mid), 0);
	CHECK(seg_file(dir, nseg - 2, last, sizeof(last)) == 0);
	nlast = record_offsets(last, off, 256);
	CHECK(nlast > 1 && nlast <= 256);
	cut = nlast / 2;	/* keep the first half, cut at a record start */
	CHECK_INT(truncate(last, (off_t)off[nlast - cut]), 0);

	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, nmid + cut);
	CHECK_INT(st.torn_tails, 0);
	CHECK_INT(drain(sp, 0, &first, &lastev), 200 - (int)(nmid + cut));
	CHECK_INT(first, 0);
	spool_close(sp);
	/* delivered past the gaps: the next start counts nothing new (the
	 * count of the last run is kept: spool/counts) */
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, nmid + cut);
	push_n(sp, 200, 3);
	CHECK_INT(drain(sp, 0, &first, &lastev), 3);
	CHECK_INT(first, 200);
	spool_close(sp);
	/* and a clean stop with nothing lost since: nothing is invented */
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, nmid + cut);
	spool_close(sp);
}

/* A spool with 10 events, 4 acknowledged; p gets its cursor file's path. */
static void
ten_queued_four_acked(char *dir, size_t dlen, struct spool_opts *o, char *p, size_t plen)
{
	struct spool *sp;

	opts(o, 1 << 20, 64 * 1024);
	newdir(dir, dlen);
	sp = spool_open_dir(dir, o, one, 1);
	push_n(sp, 0, 10);
	read_ack(sp, 0, 0, 4);
	spool_close(sp);
	snprintf(p, plen, "%s/cursor.server", dir);
}

TEST(damaged_cursor_redelivers)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	int fd, first, last;

	ten_queued_four_acked(dir, sizeof(dir), &o, p, sizeof(p));
	fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "seg 1\noff 12", 12) == 12);	/* cut: no newline */
	close(fd);
	sp = spool_open_dir(dir, &o, one, 1);
	/* at-least-once: the oldest queued event, never a skip */
	CHECK_INT(drain(sp, 0, &first, &last), 10);
	CHECK_INT(first, 0);
	spool_close(sp);
}

/*
 * A lost cursor file (deleted, or pointing past the end) restarts its
 * destination at the oldest queued event; a destination added while
 * stopped (not in spool/destinations) still starts at the end.
 */
TEST(lost_cursor_redelivers_new_dest_starts_at_end)
{
	static const char *const two[] = { "server", "second" };
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	int fd, first, last;

	ten_queued_four_acked(dir, sizeof(dir), &o, p, sizeof(p));
	CHECK(unlink(p) == 0);
	sp = spool_open_dir(dir, &o, two, 2);
	CHECK_INT(spool_backlog(sp, 0), 10);
	CHECK_INT(spool_backlog(sp, 1), 0);
	spool_close(sp);
	/* past the end */
	fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "seg 99\noff 0\nseq 999\n", 22) == 22);
	close(fd);
	sp = spool_open_dir(dir, &o, two, 2);
	CHECK_INT(drain(sp, 0, &first, &last), 10);
	CHECK_INT(first, 0);
	CHECK_INT(spool_backlog(sp, 1), 0);
	spool_close(sp);
}

/*
 * The spool directory deleted while running: re-created, and every
 * segment (each still open) written back into it with the cursors:
 * nothing counted lost, everything there after a restart.
 */
TEST(directory_deleted_while_running)
{
	char dir[300], cur[400];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	uint64_t before;
	int nseg, first, last, guard = 0;

	opts(&o, 1 << 20, 4 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 200);
	read_ack(sp, 0, 0, 10);
	nseg = count_files(dir, ".seg");
	CHECK(nseg > 2);
	spool_stats(sp, &st);
	before = st.queued_events;
	CHECK_INT(before, 190);
	nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(cur, sizeof(cur), "%s/cursor.server", dir);
	do {
		usleep(20 * 1000);
		spool_stats(sp, &st);
	} while ((count_files(dir, ".seg") < nseg || access(cur, F_OK) != 0) &&
	    guard++ < 250);
	CHECK_INT(count_files(dir, ".seg"), nseg);
	CHECK(!st.memory_only);
	CHECK_INT(st.dropped_corrupt, 0);
	CHECK_INT(st.queued_events, before);
	push_n(sp, 200, 5);
	spool_close(sp);
	/* what was written back survives a restart, the cursor too */
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, 0);
	CHECK_INT(spool_backlog(sp, 0), before + 5);
	CHECK_INT(drain(sp, 0, &first, &last), (int)before + 5);
	CHECK_INT(first, 10);
	CHECK_INT(last, 204);
	spool_close(sp);
}

/* Segment files deleted, the directory left (an rm -rf that raced with a
 * file the agent wrote): written back too. */
TEST(segment_files_deleted_while_running)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	int nseg, guard = 0;

	opts(&o, 1 << 20, 4 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 200);
	nseg = count_files(dir, ".seg");
	CHECK(nseg > 2);
	for (int k = 1; k <= nseg; k++) {
		snprintf(p, sizeof(p), "%s/%016x.seg", dir, k);
		CHECK_INT(unlink(p), 0);
	}
	while (count_files(dir, ".seg") < nseg && guard++ < 250)
		usleep(20 * 1000);
	CHECK_INT(count_files(dir, ".seg"), nseg);
	spool_close(sp);
	reopened_intact(dir, &o, 200, 0, 199);
}

/* The directory deleted and a symlink planted in its place before the
 * agent re-creates it: nothing is created, chmod-ed or written through
 * the link; the spool stays whole (files open, new events in memory) and
 * is written back once the path is safe again. */
TEST(link_planted_for_a_deleted_directory_refused)
{
	char dir[300], target[300], old[320], p[400];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	struct stat sb;
	int guard = 0;

	opts(&o, 1 << 20, 4 * 1024);
	newdir(dir, sizeof(dir));
	newdir(target, sizeof(target));
	CHECK_INT(mkdir(target, 0755), 0);
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 200);
	read_ack(sp, 0, 0, 10);
	/* the cursor saved first: a write before the housekeeper sees the
	 * directory gone goes by the path (what is left, see reliability.md) */
	usleep(300 * 1000);
	snprintf(old, sizeof(old), "%s.old", dir);
	CHECK_INT(rename(dir, old), 0);
	CHECK_INT(symlink(target, dir), 0);
	nftw(old, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	push_n(sp, 200, 5);
	usleep(400 * 1000);	/* several of the housekeeper's checks */
	CHECK_INT(count_files(target, ".seg"), 0);
	snprintf(p, sizeof(p), "%s/lock", target);
	CHECK(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/cursor.server", target);
	CHECK(access(p, F_OK) != 0);
	CHECK_INT(stat(target, &sb), 0);
	CHECK_INT(sb.st_mode & 0777, 0755);
	spool_stats(sp, &st);
	CHECK(st.memory_only);
	CHECK_INT(st.dropped_corrupt, 0);
	CHECK_INT(st.queued_events, 195);
	/* the link gone: the spool goes back where it was */
	CHECK_INT(unlink(dir), 0);
	snprintf(p, sizeof(p), "%s/cursor.server", dir);
	do {
		usleep(20 * 1000);
		spool_stats(sp, &st);
	} while ((st.memory_only || access(p, F_OK) != 0) && guard++ < 250);
	CHECK(!st.memory_only);
	spool_close(sp);
	reopened_intact(dir, &o, 195, 10, 204);
}

/* A stop while a planted link is in the place of the deleted directory:
 * no cursor, counts or clean-stop mark written through it. */
TEST(stop_with_a_link_planted_writes_nothing_there)
{
	char dir[300], target[300], old[320];
	struct spool_opts o;
	struct spool *sp;
	int n;

	opts(&o, 1 << 20, 4 * 1024);
	newdir(dir, sizeof(dir));
	newdir(target, sizeof(target));
	CHECK_INT(mkdir(target, 0755), 0);
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 20);
	usleep(300 * 1000);
	snprintf(old, sizeof(old), "%s.old", dir);
	CHECK_INT(rename(dir, old), 0);
	CHECK_INT(symlink(target, dir), 0);
	nftw(old, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	usleep(200 * 1000);
	read_ack(sp, 0, 0, 10);
	spool_close(sp);
	n = count_files(target, "");
	CHECK_INT(n, 2);	/* "." and ".." */
	CHECK_INT(unlink(dir), 0);
}

/* The disk full while the segments are written back into the re-created
 * directory: they stay in their open files (not pulled into memory and
 * dropped there by its bound) and are written back when space returns. */
TEST(disk_full_during_write_back_keeps_the_open_files)
{
	char dir[300], old[320], p[400];
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	struct rlimit lim, small;
	int nseg, guard = 0;

	opts(&o, 1 << 20, 4 * 1024);
	o.mem_max = 8 * 1024;
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 200);
	nseg = count_files(dir, ".seg");
	CHECK(nseg > 4);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &lim);
	small = lim;
	small.rlim_cur = 512;	/* no segment fits: as on a full disk */
	setrlimit(RLIMIT_FSIZE, &small);
	snprintf(old, sizeof(old), "%s.old", dir);
	CHECK_INT(rename(dir, old), 0);
	nftw(old, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(p, sizeof(p), "%s/lock", dir);
	while (access(p, F_OK) != 0 && guard++ < 250)
		usleep(20 * 1000);
	usleep(200 * 1000);
	push_n(sp, 200, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_budget, 0);
	CHECK_INT(st.dropped_corrupt, 0);
	CHECK_INT(st.queued_events, 201);
	CHECK(st.mem_bytes <= 8 * 1024);
	setrlimit(RLIMIT_FSIZE, &lim);
	guard = 0;
	do {
		usleep(20 * 1000);
		spool_stats(sp, &st);
	} while ((count_files(dir, ".seg") < nseg || st.memory_only) && guard++ < 250);
	CHECK(count_files(dir, ".seg") >= nseg);
	CHECK(!st.memory_only);
	spool_close(sp);
	reopened_intact(dir, &o, 201, 0, 200);
}

TEST(budget_drops_oldest_and_counts)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	struct spool_dest_stats ds;
	uint64_t maxdisk = 0;
	int first, last, total;
	const int n = 3000;

	opts(&o, 32 * 1024, 4 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	for (int i = 0; i < n; i++) {
		push_n(sp, i, 1);
		spool_stats(sp, &st);
		if (st.disk_bytes > maxdisk)
			maxdisk = st.disk_bytes;
	}
	CHECK(maxdisk <= 32 * 1024 + 4 * 1024);
	spool_stats(sp, &st);
	CHECK(st.dropped_budget > 0);
	CHECK_INT(st.dropped_budget + st.queued_events, n);
	spool_dest_stats(sp, 0, &ds);
	CHECK_INT(ds.dropped_budget, st.dropped_budget);
	total = drain(sp, 0, &first, &last);
	CHECK_INT(total, n - (int)st.dropped_budget);
	/* the oldest were dropped, the newest kept, in order */
	CHECK_INT(first, (int)st.dropped_budget);
	CHECK_INT(last, n - 1);
	spool_close(sp);
}

TEST(budget_undrop_when_in_flight_batch_delivered)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	struct batch b;
	int n;

	opts(&o, 8 * 1024, 2 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	push_n(sp, 0, 10);
	n = spool_peek(sp, 0, 10, 1 << 30, 0, &b);
	CHECK_INT(n, 10);
	push_n(sp, 10, 500);	/* the budget drops the peeked ones */
	spool_stats(sp, &st);
	CHECK(st.dropped_budget >= 10);
	/* ...but the shipper delivered its batch after all */
	spool_ack(sp, 0, (size_t)n);
	spool_batch_free(&b);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_budget + st.queued_events + 10, 510);
	spool_close(sp);
}

TEST(two_destinations_and_reload)
{
	char dir[300], p[400];
	const char *const two[] = { "server", "backup" };
	const char *const renamed[] = { "server", "backup2" };
	struct spool_opts o;
	struct spool *sp;
	int first, last;

	opts(&o, 1 << 20, 4 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, two, 2);
	push_n(sp, 0, 200);
	/* the live one delivers everything; the dead one holds the segments */
	CHECK_INT(drain(sp, 0, &first, &last), 200);
	CHECK_INT(spool_backlog(sp, 1), 200);
	CHECK(count_files(dir, ".seg") > 1);
	CHECK_INT(read_ack(sp, 1, 0, 50), 50);
	spool_close(sp);

	/* restart: both resume where they stood */
	sp = spool_open_dir(dir, &o, two, 2);
	CHECK_INT(spool_backlog(sp, 0), 0);
	CHECK_INT(spool_backlog(sp, 1), 150);
	/* reload renaming backup: backup2 starts fresh at the end, backup's
	 * cursor and backlog are released */
	CHECK_INT(spool_set_dests(sp, renamed, 2), 0);
	CHECK_INT(spool_backlog(sp, 0), 0);
	CHECK_INT(spool_backlog(sp, 1), 0);
	CHECK_INT(count_files(dir, ".seg"), 0);
	snprintf(p, sizeof(p), "%s/cursor.backup", dir);
	CHECK(access(p, F_OK) != 0);
	push_n(sp, 200, 5);
	CHECK_INT(drain(sp, 1, &first, &last), 5);
	CHECK_INT(first, 200);
	/* kept names keep their cursor */
	CHECK_INT(spool_backlog(sp, 0), 5);
	CHECK_INT(spool_set_dests(sp, renamed, 2), 0);
	CHECK_INT(spool_backlog(sp, 0), 5);
	/* a duplicate name is refused and changes nothing */
	{
		const char *const dup[] = { "x", "x" };

		CHECK_INT(spool_set_dests(sp, dup, 2), -1);
		CHECK_INT(spool_backlog(sp, 0), 5);
	}
	spool_close(sp);

	/* a destination removed from the configuration while stopped */
	sp = spool_open_dir(dir, &o, one, 1);
	snprintf(p, sizeof(p), "%s/cursor.backup2", dir);
	CHECK(access(p, F_OK) != 0);
	CHECK_INT(spool_backlog(sp, 0), 5);
	spool_close(sp);
}

TEST(odd_destination_names)
{
	char dir[300];
	const char *const odd[] = { "../etc/passwd", "a b%c" };
	struct spool_opts o;
	struct spool *sp;

	opts(&o, 1 << 20, 64 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, odd, 2);
	push_n(sp, 0, 3);
	read_ack(sp, 0, 0, 2);
	read_ack(sp, 1, 0, 1);
	spool_close(sp);
	CHECK_INT(count_files(dir, ".seg"), 1);
	sp = spool_open_dir(dir, &o, odd, 2);
	CHECK_INT(spool_backlog(sp, 0), 1);
	CHECK_INT(spool_backlog(sp, 1), 2);
	spool_close(sp);
}

static int64_t
now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

TEST(disk_refuses_writes_memory_only_then_recovers)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	struct rlimit old, small;
	int first, last;
	int64_t end;

	opts(&o, 1 << 20, 16 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 10);
	CHECK_INT(spool_sync(sp), 0);
	/* files may not grow past 4 KB: writes fail as on a full disk */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = 4096;
	setrlimit(RLIMIT_FSIZE, &small);
	push_n(sp, 10, 200);
	spool_stats(sp, &st);
	CHECK(st.memory_only);
	CHECK(st.mem_bytes > 0);
	CHECK_INT(st.queued_events, 210);
	CHECK_INT(spool_sync(sp), -1);	/* not safe: say so */
	/* still readable, in order */
	CHECK_INT(read_ack(sp, 0, 0, 50), 50);
	/* space returns: the housekeeper moves memory to disk */
	setrlimit(RLIMIT_FSIZE, &old);
	end = now_mono() + 5000;
	do {
		usleep(20000);
		spool_stats(sp, &st);
	} while (st.memory_only && now_mono() < end);
	CHECK(!st.memory_only);
	CHECK_INT(st.mem_bytes, 0);
	push_n(sp, 210, 10);
	CHECK_INT(spool_sync(sp), 0);
	spool_close(sp);
	/* and it survives a restart */
	sp = spool_open_dir(dir, &o, one, 1);
	CHECK_INT(drain(sp, 0, &first, &last), 170);
	CHECK_INT(first, 50);
	CHECK_INT(last, 219);
	spool_close(sp);
}

TEST(second_agent_on_same_dir_is_memory_only)
{
	char dir[300];
	struct spool_opts o;
	struct spool *a;
	int first, last, status = -1;
	pid_t pid;

	opts(&o, 1 << 20, 64 * 1024);
	newdir(dir, sizeof(dir));
	a = spool_open_dir(dir, &o, one, 1);
	push_n(a, 0, 3);
	CHECK_INT(spool_sync(a), 0);
	/* fcntl locks belong to processes: the second agent is a child */
	/*
	 * The child execs a fresh copy of this program: a forked copy of a
	 * process whose spool threads are running may inherit a lock held in
	 * malloc at the moment of fork() and hang on its first allocation.
	 */
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "test_spool", "--second-agent", dir,
		    (char *)NULL);
		_exit(2);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the first one's data is untouched */
	CHECK_INT(drain(a, 0, &first, &last), 3);
	CHECK_INT(first, 0);
	spool_close(a);
}

/*
 * --drain-and-die DIR: open the spool with cursor files written at most
 * once a minute, push 500 events, drain them all (acknowledged in memory),
 * then end at once as kill -9 would: no close, no cursor saved.
 */
static int
drain_and_die(const char *dir)
{
	struct spool_opts o;
	struct spool *sp;
	int first, last;

	opts(&o, 1 << 20, 4 * 1024);
	o.sync_ms = 60000;
	sp = spool_open_dir(dir, &o, one, 1);
	if (sp == NULL)
		_exit(2);
	push_n(sp, 0, 500);
	if (spool_sync(sp) != 0 || drain(sp, 0, &first, &last) != 500)
		_exit(3);
	_exit(0);
}

/*
 * A segment file is deleted only once the cursor files that passed it are
 * on disk: after a crash between the acknowledgement and the cursor's
 * save, the next start resends those events (at least once) and counts
 * nothing as damaged, instead of finding the cursor in a deleted segment
 * and counting delivered events as lost.
 */
TEST(crash_before_the_cursor_save_counts_nothing_lost)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	int status, first, last, n;
	pid_t pid;

	newdir(dir, sizeof(dir));
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "test_spool", "--drain-and-die", dir,
		    (char *)NULL);
		_exit(2);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	opts(&o, 1 << 20, 4 * 1024);
	sp = spool_open_dir(dir, &o, one, 1);
	CHECK(sp != NULL);
	if (sp == NULL)
		return;
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, 0);
	CHECK_INT(st.dropped_budget, 0);
	/* what the cursor file had not passed comes again, up to the end */
	n = drain(sp, 0, &first, &last);
	CHECK(n > 0);
	CHECK_INT(last, 499);
	CHECK_INT(first, 500 - n);
	spool_close(sp);
}

TEST(memory_cap_drops_memory_not_disk)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	struct rlimit old, none;
	int first, last, total, prev = -1, gap = 0;
	int64_t end;

	opts(&o, 1 << 20, 4 * 1024);
	o.mem_max = 16 * 1024;
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 50);		/* on disk */
	CHECK_INT(spool_sync(sp), 0);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	none = old;
	none.rlim_cur = 0;
	setrlimit(RLIMIT_FSIZE, &none);
	push_n(sp, 50, 400);		/* memory only, over its cap */
	spool_stats(sp, &st);
	CHECK(st.memory_only);
	CHECK(st.mem_bytes <= 16 * 1024 + 4 * 1024);
	CHECK(st.dropped_budget > 0);
	CHECK_INT(st.dropped_budget + st.queued_events, 450);
	setrlimit(RLIMIT_FSIZE, &old);
	end = now_mono() + 5000;
	do {
		usleep(20000);
		spool_stats(sp, &st);
	} while (st.memory_only && now_mono() < end);
	CHECK(!st.memory_only);
	spool_close(sp);

	/* the dropped memory segments leave a gap that is not damage */
	sp = spool_open_dir(dir, &o, one, 1);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt, 0);
	total = 0;
	for (;;) {
		struct batch b;
		int n = spool_peek(sp, 0, 100, 1 << 30, 0, &b);

		for (int i = 0; i < n; i++) {
			int v = atoi(event_get(b.events[i], "n"));

			if (v != prev + 1)
				gap++;
			prev = v;
		}
		spool_batch_free(&b);
		if (n <= 0)
			break;
		spool_ack(sp, 0, (size_t)n);
		total += n;
	}
	/* everything that was on disk, then the newest from memory */
	CHECK_INT(gap, 1);
	CHECK_INT(prev, 449);
	CHECK(total > 50);
	(void)first;
	(void)last;
	spool_close(sp);
}

struct thr {
	struct spool	*sp;
	size_t		 d;
	int		 n, got, bad;
};

static void *
producer(void *arg)
{
	struct thr *t = arg;

	for (int i = 0; i < t->n; i++) {
		struct event *ev = mkev(i);

		if (spool_push(t->sp, ev) != 0)
			t->bad++;
		event_free(ev);
		if (i % 500 == 0)
			spool_sync(t->sp);
	}
	return NULL;
}

static void *
consumer(void *arg)
{
	struct thr *t = arg;
	int64_t end = now_mono() + 20000;

	while (t->got < t->n && now_mono() < end) {
		struct batch b;
		int n = spool_peek(t->sp, t->d, 97, 1 << 30, 200, &b);

		for (int i = 0; i < n; i++)
			if (atoi(event_get(b.events[i], "n")) != t->got + i)
				t->bad++;
		/* acknowledge in two pieces, as a split batch would */
		if (n > 1) {
			spool_ack(t->sp, t->d, (size_t)n / 2);
			spool_ack(t->sp, t->d, (size_t)n - (size_t)n / 2);
		} else if (n == 1)
			spool_ack(t->sp, t->d, 1);
		if (n > 0)
			t->got += n;
		spool_batch_free(&b);
	}
	return NULL;
}

TEST(threads_push_peek_ack)
{
	char dir[300];
	const char *const two[] = { "a", "b" };
	struct spool_opts o;
	struct thr p, c1, c2;
	pthread_t tp, t1, t2;

	opts(&o, 64 << 20, 32 * 1024);
	memset(&p, 0, sizeof(p));
	p.sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, two, 2);
	p.n = 20000;
	c1 = p;
	c2 = p;
	c2.d = 1;
	pthread_create(&t1, NULL, consumer, &c1);
	pthread_create(&t2, NULL, consumer, &c2);
	pthread_create(&tp, NULL, producer, &p);
	pthread_join(tp, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	CHECK_INT(p.bad, 0);
	CHECK_INT(c1.got, p.n);
	CHECK_INT(c2.got, p.n);
	CHECK_INT(c1.bad + c2.bad, 0);
	CHECK_INT(spool_backlog(p.sp, 0), 0);
	CHECK_INT(segs_after_cursor_save(dir, 1), 1);
	spool_close(p.sp);
}

static void *
late_push(void *arg)
{
	usleep(100000);
	push_n(arg, 0, 1);
	return NULL;
}

TEST(peek_waits_and_wakes)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct batch b;
	pthread_t t;
	int64_t t0;

	opts(&o, 1 << 20, 64 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, one, 1);
	t0 = now_mono();
	CHECK_INT(spool_peek(sp, 0, 10, 1 << 20, 150, &b), 0);
	CHECK(now_mono() - t0 >= 140);
	pthread_create(&t, NULL, late_push, sp);
	t0 = now_mono();
	CHECK_INT(spool_peek(sp, 0, 10, 1 << 20, 5000, &b), 1);
	CHECK(now_mono() - t0 < 3000);
	pthread_join(t, NULL);
	spool_batch_free(&b);
	CHECK_INT(spool_peek(sp, 5, 10, 1 << 20, 0, &b), -1);
	spool_close(sp);
}

static int
count_cb(void *arg, uint64_t seq, const void *p, size_t len)
{
	(void)seq;
	(void)p;
	(void)len;
	(*(int *)arg)++;
	return 0;
}

/* A cursor file is only durable once the directory holding it is synced. */
TEST(cursor_rename_syncs_the_directory)
{
	char dir[300], cur[400];
	struct spool_opts o;
	struct spool *sp;
	struct pos_text { char t[128]; } before, after;
	int64_t end;
	int fd;
	ssize_t n;

	opts(&o, 1 << 20, 16 * 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 5);
	CHECK_INT(spool_sync(sp), 0);
	snprintf(cur, sizeof(cur), "%s/cursor.server", dir);
	/* the initial cursor file is written first */
	end = now_mono() + 3000;
	while (file_size(cur) <= 0 && now_mono() < end)
		usleep(10000);
	memset(&before, 0, sizeof(before));
	if ((fd = open(cur, O_RDONLY)) >= 0) {
		n = read(fd, before.t, sizeof(before.t) - 1);
		(void)n;
		close(fd);
	}
	usleep(100000);
	__atomic_store_n(&fsync_dirs, 0, __ATOMIC_SEQ_CST);
	CHECK_INT(read_ack(sp, 0, 0, 5), 5);
	/* the housekeeper writes the cursor and syncs the directory */
	end = now_mono() + 3000;
	do {
		usleep(10000);
		memset(&after, 0, sizeof(after));
		if ((fd = open(cur, O_RDONLY)) >= 0) {
			n = read(fd, after.t, sizeof(after.t) - 1);
			(void)n;
			close(fd);
		}
	} while ((strcmp(before.t, after.t) == 0 ||
	    __atomic_load_n(&fsync_dirs, __ATOMIC_SEQ_CST) == 0) && now_mono() < end);
	CHECK(strcmp(before.t, after.t) != 0);
	CHECK(__atomic_load_n(&fsync_dirs, __ATOMIC_SEQ_CST) > 0);
	spool_close(sp);
}

/*
 * Every destination has its cursor file before the first event can be
 * pushed for it: after a crash, one without would start at the end and
 * skip what was queued (and already counted durable by spool_sync).
 */
TEST(cursor_files_exist_before_any_event)
{
	static const char *const two[] = { "server", "second" };
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;

	opts(&o, 1 << 20, 16 * 1024);
	o.sync_ms = 60000;
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	snprintf(p, sizeof(p), "%s/cursor.server", dir);
	CHECK(file_size(p) > 0);
	CHECK_INT(spool_set_dests(sp, two, 2), 0);
	snprintf(p, sizeof(p), "%s/cursor.second", dir);
	CHECK(file_size(p) > 0);
	spool_close(sp);
}

/*
 * A failed fsync of a segment: its events must not be reported durable by
 * a later spool_sync() (a second fsync "succeeds" once the kernel has
 * reported the error); they stay safe in memory until the segment is
 * rewritten, and are all there after a restart.
 */
TEST(failed_fsync_is_not_durable)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	int first, last;
	int64_t end;

	opts(&o, 1 << 20, 16 * 1024);
	o.sync_ms = 60000;	/* only explicit syncs */
	o.sync_bytes = 1 << 20;
	o.retry_ms = 200;
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 5);
	__atomic_store_n(&fsync_seg_fail, 1, __ATOMIC_SEQ_CST);
	CHECK_INT(spool_sync(sp), -1);
	CHECK_INT(spool_sync(sp), -1);	/* still not durable */
	spool_stats(sp, &st);
	CHECK(st.memory_only);
	push_n(sp, 5, 5);
	CHECK_INT(spool_sync(sp), -1);
	/* the housekeeper rewrites the segments and syncs them */
	end = now_mono() + 5000;
	do {
		usleep(20000);
		spool_stats(sp, &st);
	} while (st.memory_only && now_mono() < end);
	CHECK(!st.memory_only);
	CHECK_INT(st.mem_bytes, 0);
	CHECK_INT(spool_sync(sp), 0);
	CHECK_INT(read_ack(sp, 0, 0, 3), 3);
	spool_close(sp);
	sp = spool_open_dir(dir, &o, one, 1);
	CHECK_INT(drain(sp, 0, &first, &last), 7);
	CHECK_INT(first, 3);
	CHECK_INT(last, 9);
	spool_close(sp);
	/* a failed fsync when a full segment is sealed: same promise */
	newdir(dir, sizeof(dir));
	opts(&o, 1 << 20, 1024);
	o.sync_ms = 60000;
	o.sync_bytes = 1 << 20;
	o.retry_ms = 200;
	sp = spool_open_dir(dir, &o, one, 1);
	__atomic_store_n(&fsync_seg_fail, 1, __ATOMIC_SEQ_CST);
	push_n(sp, 0, 40);	/* several segments: sealing fsyncs */
	CHECK_INT(spool_sync(sp), -1);
	end = now_mono() + 5000;
	do {
		usleep(20000);
		spool_stats(sp, &st);
	} while (st.memory_only && now_mono() < end);
	CHECK(!st.memory_only);
	CHECK_INT(spool_sync(sp), 0);
	spool_close(sp);
	sp = spool_open_dir(dir, &o, one, 1);
	CHECK_INT(drain(sp, 0, &first, &last), 40);
	CHECK_INT(first, 0);
	CHECK_INT(last, 39);
	spool_close(sp);
}

/*
 * A segment that cannot be read (EIO): a passing error is retried, one
 * that persists skips the rest of that segment (counted) instead of
 * stopping the destination for good.
 */
TEST(unreadable_segment_skipped_not_stuck)
{
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	struct spool_stats st;
	struct batch b;
	int first, last, total = 0;

	opts(&o, 1 << 20, 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 40);	/* several sealed segments */
	CHECK_INT(spool_sync(sp), 0);
	spool_close(sp);
	sp = spool_open_dir(dir, &o, one, 1);
	/* once: nothing this time, all of it the next */
	__atomic_store_n(&pread_seg_fail, 1, __ATOMIC_SEQ_CST);
	CHECK_INT(spool_peek(sp, 0, 100, 1 << 30, 0, &b), 0);
	spool_batch_free(&b);
	CHECK_INT(read_ack(sp, 0, 0, 3), 3);
	/* for good: each unreadable segment is skipped after a few tries */
	__atomic_store_n(&pread_seg_fail, 1000000, __ATOMIC_SEQ_CST);
	for (int k = 0; k < 300; k++) {
		int n = spool_peek(sp, 0, 100, 1 << 30, 0, &b);

		spool_batch_free(&b);
		if (n > 0) {
			spool_ack(sp, 0, (size_t)n);
			total += n;
		}
	}
	__atomic_store_n(&pread_seg_fail, 0, __ATOMIC_SEQ_CST);
	/* the destination is not stuck: new events flow */
	push_n(sp, 40, 10);
	CHECK_INT(drain(sp, 0, &first, &last), 10);
	CHECK_INT(first, 40);
	CHECK_INT(last, 49);
	spool_stats(sp, &st);
	CHECK_INT(st.dropped_corrupt + (uint64_t)total, 37);
	spool_close(sp);
}

/* A read error while skipping a damaged region is not the region's end. */
TEST(read_error_in_damaged_region_not_a_skip)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;
	unsigned char zero[4096];
	int fd, first, last;

	opts(&o, 8 << 20, 1 << 20);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 5000);	/* one segment of about 400 KB */
	CHECK_INT(spool_sync(sp), 0);
	spool_close(sp);
	CHECK_INT(seg_file(dir, 0, p, sizeof(p)), 0);
	CHECK(file_size(p) > 290 * 1024);
	/* the first 280 KB destroyed: the search crosses a read window */
	memset(zero, 0, sizeof(zero));
	fd = open(p, O_WRONLY);
	for (off_t off = 0; off < 280 * 1024; off += sizeof(zero))
		CHECK(pwrite(fd, zero, sizeof(zero), off) == (ssize_t)sizeof(zero));
	close(fd);
	sp = spool_open_dir(dir, &o, one, 1);
	/* the first window loads, the next read (during the search) fails */
	__atomic_store_n(&pread_seg_skip, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&pread_seg_fail, 1, __ATOMIC_SEQ_CST);
	CHECK(drain(sp, 0, &first, &last) > 0);
	__atomic_store_n(&pread_seg_fail, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&pread_seg_skip, 0, __ATOMIC_SEQ_CST);
	CHECK(first > 0);
	CHECK_INT(last, 4999);	/* what follows the damage is delivered */
	spool_close(sp);
}

static int
count_fds(void)
{
	return count_files("/proc/self/fd", "");
}

/* The segment files kept open (for a deleted directory: segdir.c) stay
 * within their bound (here none); reading a long backlog past it holds no
 * more (another destination that lags keeps every segment alive). */
TEST(reading_a_backlog_holds_few_descriptors)
{
	static const char *const two[] = { "a", "b" };
	char dir[300];
	struct spool_opts o;
	struct spool *sp;
	int first, last, n0, base = count_fds();

	opts(&o, 4 << 20, 1024);
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, two, 2);
	push_n(sp, 0, 400);
	CHECK_INT(spool_sync(sp), 0);
	spool_close(sp);
	setenv("ESXWATCH_SPOOL_MAX_FDS", "0", 1);
	sp = spool_open_dir(dir, &o, two, 2);
	unsetenv("ESXWATCH_SPOOL_MAX_FDS");
	CHECK(count_files(dir, ".seg") > 20);
	n0 = count_fds();
	/* the lock file (and a cursor file being saved), none of the 20+ segments */
	CHECK(n0 - base <= 3);
	CHECK_INT(drain(sp, 0, &first, &last), 400);
	CHECK(count_fds() - n0 <= 2);
	/*
	 * Out of descriptors is no reason to skip anything: wait.  The
	 * housekeeper opens and closes descriptors of its own (a cursor file
	 * being saved, every sync_ms while batches are acknowledged), all
	 * with curmu held: held here, it has none open, and none it closes
	 * later can give a peek the descriptor the limit denies.
	 */
	{
		struct rlimit old, small;
		struct batch b;
		int lowest;

		pthread_mutex_lock(&sp->curmu);
		lowest = dup(0);
		close(lowest);
		getrlimit(RLIMIT_NOFILE, &old);
		small = old;
		small.rlim_cur = (rlim_t)lowest;
		setrlimit(RLIMIT_NOFILE, &small);
		for (int k = 0; k < 5; k++) {
			CHECK_INT(spool_peek(sp, 1, 100, 1 << 30, 0, &b), 0);
			spool_batch_free(&b);
		}
		setrlimit(RLIMIT_NOFILE, &old);
		pthread_mutex_unlock(&sp->curmu);
	}
	CHECK_INT(drain(sp, 1, &first, &last), 400);
	CHECK_INT(first, 0);
	spool_close(sp);
}

/* storage.max_disk_buffer_kb and storage.segment_kb size the spool. */
TEST(storage_keys_size_the_spool)
{
	struct config cfg;
	struct spool_opts o;

	memset(&cfg, 0, sizeof(cfg));
	cfg.max_disk_buffer = 200;
	cfg.batch_flush_interval = 1;
	spool_default_opts(&cfg, &o);
	CHECK(o.budget == 200ull * 1024 * 1024);
	CHECK(o.segment_size == 4ull * 1024 * 1024);
	cfg.max_disk_buffer_kb = 512;
	spool_default_opts(&cfg, &o);
	CHECK(o.budget == 512ull * 1024);
	CHECK(o.segment_size == 64ull * 1024);
	cfg.segment_kb = 16;
	spool_default_opts(&cfg, &o);
	CHECK(o.budget == 512ull * 1024);
	CHECK(o.segment_size == 16ull * 1024);
}

/* Tiny segments in a big budget are raised: at most 4096 segments. */
TEST(segment_count_is_bounded)
{
	char dir[300], p[400];
	struct spool_opts o;
	struct spool *sp;

	opts(&o, 8 << 20, 1024);	/* 8 MB in 1 KB segments: 8192 */
	newdir(dir, sizeof(dir));
	sp = spool_open_dir(dir, &o, one, 1);
	push_n(sp, 0, 100);
	CHECK_INT(spool_sync(sp), 0);
	CHECK_INT(seg_file(dir, 0, p, sizeof(p)), 0);
	CHECK(file_size(p) > 1024);	/* 2 KB segments */
	CHECK(file_size(p) <= 2048);
	spool_close(sp);
}

TEST(scan_image_garbage)
{
	unsigned char junk[4096];
	uint64_t corrupt, regions;
	int n = 0;
	size_t end;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 7 + 3);
	memcpy(junk + 100, "ESPL\xff\xff\xff\xff", 8);	/* a huge length */
	end = spoolrec_scan_image(junk, sizeof(junk), count_cb, &n, &corrupt, &regions);
	CHECK_INT(end, 0);
	CHECK_INT(n, 0);
	CHECK_INT(regions, 1);
	CHECK_INT(spoolrec_scan_image(junk, 0, NULL, NULL, NULL, NULL), 0);
}

TEST(status_file_round_trip_and_print)
{
	char dir[300], path[400], out[4096];
	struct status_snap *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct config *cfg = config_default();
	FILE *f;
	size_t len;
	char *text;
	pid_t dead;

	newdir(dir, sizeof(dir));
	mkdir(dir, 0700);
	a->pid = (long)getpid();
	a->updated_ms = now_ms();
	a->have_spool = true;
	a->queued_events = 12;
	a->pushed_events = 99;
	a->dropped_budget = 7;
	a->dropped_corrupt = 2;
	a->ndests = 2;
	snprintf(a->dests[0].name, sizeof(a->dests[0].name), "server");
	snprintf(a->dests[0].proto, sizeof(a->dests[0].proto), "cfapi");
	a->dests[0].state = DEST_DELIVERING;
	a->dests[0].backlog_events = 12;
	a->dests[0].last_success_ms = 1796039333527;
	snprintf(a->dests[0].no_destination, sizeof(a->dests[0].no_destination),
	    "host_syslog");
	snprintf(a->dests[1].name, sizeof(a->dests[1].name), "backup");
	a->dests[1].state = DEST_FAILING;
	a->dests[1].last_error_ms = 1796039333000;
	snprintf(a->dests[1].last_error, sizeof(a->dests[1].last_error),
	    "connect: refused\nsecond line");
	snprintf(path, sizeof(path), "%s/status", dir);
	CHECK_INT(status_write(a, path), 0);
	text = t_slurp(path, &len);
	CHECK_INT(status_parse(text, len, b), 0);
	CHECK_INT(b->pid, a->pid);
	CHECK_INT(b->queued_events, 12);
	CHECK_INT(b->pushed_events, 99);
	CHECK_INT(b->dropped_budget, 7);
	CHECK_INT(b->dropped_corrupt, 2);
	CHECK_INT(b->ndests, 2);
	CHECK_STR(b->dests[0].name, "server");
	CHECK_STR(b->dests[0].proto, "cfapi");
	CHECK_INT(b->dests[0].state, DEST_DELIVERING);
	CHECK_INT(b->dests[0].last_success_ms, 1796039333527);
	CHECK_INT(b->dests[1].state, DEST_FAILING);
	CHECK_STR(b->dests[1].last_error, "connect: refused second line");
	CHECK_STR(b->dests[0].no_destination, "host_syslog");
	CHECK_STR(b->dests[1].no_destination, "");
	free(text);
	CHECK_INT(status_parse("hello: 1\n", 9, b), -1);
	CHECK_INT(status_parse("esxwatch-status: 1\npid: x\n", 26, b), -1);

	/* the writer is alive: exit 0 and the picture */
	free(cfg->storage_directory);
	cfg->storage_directory = strdup(dir);
	f = fmemopen(out, sizeof(out), "w");
	CHECK_INT(status_print(cfg, f), 0);
	fclose(f);
	CHECK(strstr(out, "esxwatch: running") != NULL);
	CHECK(strstr(out, "destination server (cfapi): delivering") != NULL);
	CHECK(strstr(out, "destination backup (-): never delivered (connect: "
	    "refused second line)\n") != NULL);
	CHECK(strstr(out, "\nno destination configured: events go to the host's "
	    "syslog\n") != NULL);
	CHECK(strstr(out, "backlog:      12 events") != NULL);
	CHECK(strstr(out, "connect: refused") != NULL);
	CHECK(strstr(out, "7 over storage.max_disk_buffer") != NULL);

	/* the writer is gone: exit 3 */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	a->pid = (long)dead;
	CHECK_INT(status_write(a, path), 0);
	f = fmemopen(out, sizeof(out), "w");
	CHECK_INT(status_print(cfg, f), 3);
	fclose(f);
	CHECK(strstr(out, "NOT running") != NULL);

	/* no status file at all */
	unlink(path);
	f = fmemopen(out, sizeof(out), "w");
	CHECK_INT(status_print(cfg, f), 3);
	fclose(f);
	CHECK(strstr(out, "not running") != NULL);
	config_free(cfg);
	free(a);
	free(b);
}

TEST(status_collect_from_the_spool)
{
	char dir[300];
	const char *const two[] = { "server", "backup" };
	struct spool_opts o;
	struct spool *sp;
	struct status_snap *s = calloc(1, sizeof(*s));
	struct status_source src = { .started_ms = 0 };

	opts(&o, 1 << 20, 64 * 1024);
	sp = spool_open_dir(newdir(dir, sizeof(dir)), &o, two, 2);
	push_n(sp, 0, 10);
	read_ack(sp, 0, 0, 4);
	src.q = (struct queue *)sp;	/* the spool is the queue of this build */
	status_collect(&src, s);
	CHECK(s->have_spool);
	CHECK_INT(s->pushed_events, 10);
	CHECK_INT(s->queued_events, 10);
	CHECK_INT(s->ndests, 2);
	CHECK_STR(s->dests[0].name, "server");
	CHECK_INT(s->dests[0].backlog_events, 6);
	CHECK_INT(s->dests[0].sent_events, 4);
	CHECK(s->dests[0].last_success_ms > 0);
	CHECK_INT(s->dests[1].backlog_events, 10);
	CHECK(s->rss_kb > 0);
	spool_close(sp);
	src.q = NULL;
	status_collect(&src, s);
	CHECK(!s->have_spool);
	free(s);
}

/* The child of second_agent_on_same_dir_is_memory_only (its own process). */
static int
second_agent(const char *dir)
{
	struct spool_opts o;
	struct spool *b;
	struct spool_stats st;
	struct event *ev;
	int ok;

	opts(&o, 1 << 20, 64 * 1024);
	b = spool_open_dir(dir, &o, one, 1);
	spool_stats(b, &st);
	ok = st.memory_only && st.queued_events == 0;
	ok = ok && spool_backlog(b, 0) == 0;
	ev = mkev(100);
	ok = ok && spool_push(b, ev) == 0;
	event_free(ev);
	ok = ok && spool_sync(b) == -1;
	spool_close(b);
	return ok ? 0 : 1;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--second-agent") == 0) {
		log_init(0, "/dev/null");
		return second_agent(argv[2]);
	}
	if (argc == 3 && strcmp(argv[1], "--drain-and-die") == 0) {
		log_init(0, "/dev/null");
		return drain_and_die(argv[2]);
	}
	T_PROG("test_spool");
	config_plugins_builtin();
	log_init(0, "/dev/null");
	snprintf(root, sizeof(root), "/tmp/test_spool.XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	RUN(append_read_ack);
	RUN(push_many_writes_the_same_records_at_once);
	RUN(push_many_on_a_disk_that_refuses_writes);
	RUN(reopen_resumes_at_cursor);
	RUN(segments_deleted_when_passed);
	RUN(crash_before_the_cursor_save_counts_nothing_lost);
	RUN(file_modes);
	RUN(torn_tail_is_cut);
	RUN(damaged_records_skipped_and_counted);
	RUN(lost_segments_counted_at_record_boundaries);
	RUN(damaged_cursor_redelivers);
	RUN(lost_cursor_redelivers_new_dest_starts_at_end);
	RUN(directory_deleted_while_running);
	RUN(segment_files_deleted_while_running);
	RUN(link_planted_for_a_deleted_directory_refused);
	RUN(stop_with_a_link_planted_writes_nothing_there);
	RUN(disk_full_during_write_back_keeps_the_open_files);
	RUN(budget_drops_oldest_and_counts);
	RUN(budget_undrop_when_in_flight_batch_delivered);
	RUN(two_destinations_and_reload);
	RUN(odd_destination_names);
	RUN(disk_refuses_writes_memory_only_then_recovers);
	RUN(second_agent_on_same_dir_is_memory_only);
	RUN(memory_cap_drops_memory_not_disk);
	RUN(threads_push_peek_ack);
	RUN(peek_waits_and_wakes);
	RUN(cursor_rename_syncs_the_directory);
	RUN(failed_fsync_is_not_durable);
	RUN(cursor_files_exist_before_any_event);
	RUN(unreadable_segment_skipped_not_stuck);
	RUN(read_error_in_damaged_region_not_a_skip);
	RUN(reading_a_backlog_holds_few_descriptors);
	RUN(storage_keys_size_the_spool);
	RUN(segment_count_is_bounded);
	RUN(scan_image_garbage);
	RUN(status_file_round_trip_and_print);
	RUN(status_collect_from_the_spool);
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	log_close();
	return t_done();
}
