/*
 * follow: partial lines, over-long lines, bounds, and every kind of
 * rotation (rename + gzip while open, copytruncate, rotations while the
 * agent was down) — each line exactly once, in order.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "t.h"

#include "../../collectors/logwatch/follow.h"

static char dir[256], path[300];

/* Collected lines, joined by '|', with a 'T' prefix for truncated ones. */
static char got[1 << 20];
static size_t ngot, nlines;

static void
cb(void *arg, const char *line, size_t len, bool truncated)
{
	(void)arg;
	if (ngot + len + 3 >= sizeof(got))
		return;
	if (truncated)
		got[ngot++] = 'T';
	memcpy(got + ngot, line, len);
	ngot += len;
	got[ngot++] = '|';
	got[ngot] = '\0';
	nlines++;
}

static void
reset(void)
{
	ngot = nlines = 0;
	got[0] = '\0';
}

static void
setup(const char *name)
{
	snprintf(dir, sizeof(dir), "/tmp/esxwatch-test-follow-%d-%s", (int)getpid(), name);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/vmkernel.log", dir);
	unlink(path);
	reset();
}

static void
cleanup(void)
{
	char p[400];
	int k;

	unlink(path);
	for (k = 0; k < 10; k++) {
		snprintf(p, sizeof(p), "%s/vmkernel.%d.gz", dir, k);
		unlink(p);
		snprintf(p, sizeof(p), "%s.%d", path, k);
		unlink(p);
		snprintf(p, sizeof(p), "%s.%d.gz", path, k);
		unlink(p);
	}
	rmdir(dir);
}

static void
append(const char *p, const char *s)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		printf("  append %s failed\n", p);
	close(fd);
}

/* gzip path into dir/vmkernel.0.gz, shifting older copies first. */
static void
gzip_to_rotated(void)
{
	char from[400], to[400], *data;
	size_t len;
	gzFile gz;
	int k;

	for (k = 8; k >= 0; k--) {
		snprintf(from, sizeof(from), "%s/vmkernel.%d.gz", dir, k);
		snprintf(to, sizeof(to), "%s/vmkernel.%d.gz", dir, k + 1);
		(void)!rename(from, to);
	}
	data = t_slurp(path, &len);
	snprintf(to, sizeof(to), "%s/vmkernel.0.gz", dir);
	gz = gzopen(to, "wb");
	gzwrite(gz, data, (unsigned)len);
	gzclose(gz);
	free(data);
}

/* ESXi style: compress, remove, start a new file. */
static void
rotate_rename(void)
{
	gzip_to_rotated();
	unlink(path);
}

static void
rotate_copytruncate(void)
{
	gzip_to_rotated();
	if (truncate(path, 0) != 0)
		printf("  truncate failed\n");
}

/* gzip from into to (from removed), as logrotate's delaycompress does. */
static void
gzip_file(const char *from, const char *to)
{
	size_t len;
	char *data = t_slurp(from, &len);
	gzFile gz = gzopen(to, "wb");

	gzwrite(gz, data, (unsigned)len);
	gzclose(gz);
	free(data);
	unlink(from);
}

/* logrotate with delaycompress: NAME.1 -> NAME.2.gz, NAME -> NAME.1. */
static void
rotate_logrotate(void)
{
	char from[400], to[400];
	int k;

	for (k = 8; k >= 2; k--) {
		snprintf(from, sizeof(from), "%s.%d.gz", path, k);
		snprintf(to, sizeof(to), "%s.%d.gz", path, k + 1);
		(void)!rename(from, to);
	}
	snprintf(from, sizeof(from), "%s.1", path);
	snprintf(to, sizeof(to), "%s.2.gz", path);
	if (access(from, F_OK) == 0)
		gzip_file(from, to);
	if (rename(path, from) != 0)
		printf("  rename failed\n");
}

static off_t
file_size_of(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? st.st_size : -1;
}

static int
drain(struct follow *f)
{
	int r, guard = 0;

	while ((r = follow_read(f, 0, 0, cb, NULL)) == 1 && guard++ < 1000)
		;
	return r;
}

/* A fresh test directory and a follower of its log from the start. */
static struct follow *
from_head(const char *name)
{
	struct follow *f;

	setup(name);
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_HEAD);
	return f;
}

/* A fresh test directory, text written and read: its bookmark in bm. */
static void
bookmark_after(const char *name, const char *text, char *bm)
{
	struct follow *f;

	f = from_head(name);
	append(path, text);
	drain(f);
	follow_pos(f, bm, FOLLOW_POS_MAX);
	follow_free(f);
}

TEST(partial_lines_and_tail)
{
	struct follow *f;

	setup("partial");
	append(path, "old line\n");
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_TAIL);
	CHECK_INT(drain(f), 0);
	CHECK_STR(got, "");
	append(path, "one\ntw");
	drain(f);
	CHECK_STR(got, "one|");
	append(path, "o\r\n\nthree\n");
	drain(f);
	CHECK_STR(got, "one|two|three|");
	follow_free(f);

	/* From the head. */
	reset();
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_HEAD);
	drain(f);
	CHECK_STR(got, "old line|one|two|three|");
	follow_free(f);
	cleanup();
}

TEST(long_lines_are_cut_not_split)
{
	struct follow *f;
	char *big = malloc(40001);

	setup("long");
	memset(big, 'x', 40000);
	big[40000] = '\0';
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_HEAD);
	append(path, "a\n");
	append(path, big);		/* no newline yet, already > 16 KB */
	drain(f);
	append(path, big);
	append(path, "\nb\n");
	drain(f);
	CHECK_INT(nlines, 3);
	CHECK(got[0] == 'a' && got[1] == '|' && got[2] == 'T');
	CHECK_INT(strlen(got), 2 + 1 + FOLLOW_LINE_MAX + 1 + 2);
	CHECK(strcmp(got + strlen(got) - 2, "b|") == 0);
	follow_free(f);
	free(big);
	cleanup();
}

TEST(bounded_reads)
{
	struct follow *f;
	char line[32];
	int i, calls = 0, r;

	setup("bounded");
	for (i = 0; i < 100; i++) {
		snprintf(line, sizeof(line), "line %d\n", i);
		append(path, line);
	}
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_HEAD);
	while ((r = follow_read(f, 0, 30, cb, NULL)) == 1)
		calls++;
	CHECK_INT(r, 0);
	CHECK_INT(calls, 3);
	CHECK_INT(nlines, 100);
	follow_free(f);

	/* Far more than one read buffer, lines across its boundaries. */
	reset();
	{
		static char big[300000];
		size_t o = 0;

		for (i = 0; i < 10000; i++)
			o += (size_t)snprintf(big + o, sizeof(big) - o, "line number %d\n", i);
		append(path, big);
	}
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_HEAD);
	CHECK_INT(follow_read(f, 0, 0, cb, NULL), 0);
	CHECK_INT(nlines, 100 + 10000);
	CHECK(strstr(got, "|line number 9999|") != NULL);
	follow_free(f);
	cleanup();
}

TEST(rename_gzip_rotation_while_open)
{
	struct follow *f;

	f = from_head("rename");
	append(path, "a1\na2\n");
	drain(f);
	append(path, "b1\nb2-partial-at-rotation");	/* unread when rotated */
	rotate_rename();
	append(path, "c1\n");
	drain(f);
	CHECK_STR(got, "a1|a2|b1|b2-partial-at-rotation|c1|");
	/* And the rotation before any new file exists. */
	rotate_rename();
	drain(f);
	append(path, "d1\n");
	drain(f);
	CHECK_STR(got, "a1|a2|b1|b2-partial-at-rotation|c1|d1|");
	follow_free(f);
	cleanup();
}

/*
 * Read parts[0], then write each further part with a rotation between
 * them (none after the last), and read once: a follower to go on with.
 */
static struct follow *
through_rotations(const char *name, void (*rotate)(void), const char *const *parts,
    size_t nparts)
{
	struct follow *f;

	f = from_head(name);
	append(path, parts[0]);
	drain(f);
	for (size_t i = 1; i < nparts; i++) {
		append(path, parts[i]);
		if (i + 1 < nparts)
			rotate();
	}
	drain(f);
	return f;
}

/*
 * Two or three rotations between two reads while the file is open: the
 * open file is read to its end, then every copy newer than it, then the
 * new file (ESXi's NAME.N.gz shifting, logrotate's NAME.1 / NAME.2.gz,
 * copytruncate).
 */
TEST(several_rotations_between_two_reads)
{
	static const char *const parts[] = {
		"2023-01-01 a1\n", "a2\n", "2023-01-02 b1 of the second file\n",
		"2023-01-03 c1 of the third file\n", "2023-01-04 d1 of the live file\n"
	};
	static const char *const want = "2023-01-01 a1|a2|2023-01-02 b1 of the second "
	    "file|2023-01-03 c1 of the third file|2023-01-04 d1 of the live file|";
	struct follow *f;

	f = through_rotations("several", rotate_rename, parts, 5);
	CHECK_STR(got, want);
	follow_free(f);
	cleanup();

	f = through_rotations("logrotate", rotate_logrotate, parts, 5);
	CHECK_STR(got, want);
	/* one rotation: nothing twice */
	reset();
	append(path, "d2\n");
	rotate_logrotate();
	append(path, "e1 of the next file\n");
	drain(f);
	CHECK_STR(got, "d2|e1 of the next file|");
	follow_free(f);
	cleanup();

	f = through_rotations("copytrunc2", rotate_copytruncate, parts, 5);
	CHECK_STR(got, want);
	follow_free(f);
	cleanup();
}

/* A rotated copy cut short (a full disk while gzip wrote it): what it
 * holds up to the cut is read, then the new file. */
TEST(cut_gzip_copy_read_up_to_the_cut)
{
	struct follow *f;
	char bm[FOLLOW_POS_MAX], gz[400];
	off_t size;

	bookmark_after("cutgz", "2023-01-01 a1\n", bm);
	for (int i = 0; i < 2000; i++)
		append(path, "a line that compresses well enough to need more than a block\n");
	rotate_rename();
	snprintf(gz, sizeof(gz), "%s/vmkernel.0.gz", dir);
	size = file_size_of(gz);
	CHECK(truncate(gz, size / 2) == 0);
	append(path, "2023-01-02 b1\n");
	reset();
	f = follow_new(path);
	follow_start(f, bm, FOLLOW_TAIL);
	drain(f);
	CHECK(nlines > 1 && nlines < 2001);
	CHECK(strstr(got, "2023-01-02 b1|") != NULL);
	follow_free(f);
	cleanup();
}

TEST(copytruncate_rotation)
{
	struct follow *f;

	f = from_head("copytrunc");
	append(path, "2023-01-01 first line of the file\na2\n");
	drain(f);
	append(path, "b1\nb2\n");
	rotate_copytruncate();
	append(path, "2023-01-02 c1\n");
	drain(f);
	CHECK_STR(got, "2023-01-01 first line of the file|a2|b1|b2|2023-01-02 c1|");
	/* Truncated and regrown past our offset before we looked: the first
	 * bytes changed, so it is still seen as a rotation. */
	reset();
	append(path, "c2\n");
	rotate_copytruncate();
	append(path, "2023-01-03 d1 a much longer line than before to pass the offset\n");
	drain(f);
	CHECK_STR(got, "c2|2023-01-03 d1 a much longer line than before to pass the offset|");
	follow_free(f);
	cleanup();
}

/*
 * A file read to its end is not re-checked while its size and times stay
 * the same; a copytruncate regrown to exactly our offset still moves its
 * times (past one tick of the file-system clock), so it is still seen.
 */
TEST(copytruncate_regrown_to_the_same_size)
{
	struct follow *f;

	f = from_head("samesize");
	append(path, "2023-01-01 aaaa\n");
	CHECK_INT(drain(f), 0);
	CHECK_INT(follow_read(f, 0, 0, cb, NULL), 0);	/* unchanged */
	CHECK_STR(got, "2023-01-01 aaaa|");
	usleep(30000);
	rotate_copytruncate();
	append(path, "2023-01-02 bbbb\n");
	CHECK_INT((int)file_size_of(path), (int)follow_offset(f));
	reset();
	CHECK_INT(drain(f), 0);
	CHECK_STR(got, "2023-01-02 bbbb|");
	reset();
	append(path, "c\n");
	drain(f);
	CHECK_STR(got, "c|");
	follow_free(f);
	cleanup();
}

TEST(bookmark_resume_and_rotations_while_down)
{
	struct follow *f;
	char bm[FOLLOW_POS_MAX];

	bookmark_after("restart", "2023-01-01 a1\na2\n", bm);

	/* Same file, more lines: resumes, nothing twice. */
	reset();
	append(path, "a3\n");
	f = follow_new(path);
	follow_start(f, bm, FOLLOW_TAIL);
	drain(f);
	CHECK_STR(got, "a3|");
	follow_pos(f, bm, sizeof(bm));
	follow_free(f);

	/* Down through two rotations. */
	reset();
	append(path, "b1\n");
	rotate_rename();
	append(path, "2023-01-02 c1\nc2\n");
	rotate_rename();
	append(path, "2023-01-03 d1\n");
	f = follow_new(path);
	follow_start(f, bm, FOLLOW_TAIL);
	drain(f);
	CHECK_STR(got, "b1|2023-01-02 c1|c2|2023-01-03 d1|");
	follow_pos(f, bm, sizeof(bm));
	follow_free(f);

	/* Down through a rotation, no new file yet. */
	reset();
	append(path, "d2\n");
	rotate_rename();
	f = follow_new(path);
	follow_start(f, bm, FOLLOW_TAIL);
	drain(f);
	CHECK_STR(got, "d2|");
	append(path, "e1\n");
	drain(f);
	CHECK_STR(got, "d2|e1|");
	follow_free(f);

	/* A bookmark for another file entirely: the current one is new. */
	reset();
	f = follow_new(path);
	follow_start(f, "ino=1 fp=12345678 fplen=20 off=5 skip=0", FOLLOW_TAIL);
	drain(f);
	CHECK_STR(got, "e1|");
	follow_free(f);
	cleanup();
}

/* /var/log/vmkernel.log -> /var/run/log/vmkernel.log, rotated there. */
TEST(symlinked_log_rotated_while_down)
{
	struct follow *f;
	char link[400], bm[FOLLOW_POS_MAX];

	setup("symlink");
	snprintf(link, sizeof(link), "%s/link.log", dir);
	unlink(link);
	append(path, "2023-01-01 a1\n");
	if (symlink(path, link) != 0)
		printf("  symlink failed\n");
	f = follow_new(link);
	follow_start(f, NULL, FOLLOW_HEAD);
	drain(f);
	follow_pos(f, bm, sizeof(bm));
	follow_free(f);
	append(path, "a2\n");
	rotate_rename();		/* the link dangles now */
	reset();
	f = follow_new(link);
	follow_start(f, bm, FOLLOW_TAIL);
	drain(f);
	CHECK_STR(got, "a2|");
	append(path, "b1\n");
	drain(f);
	CHECK_STR(got, "a2|b1|");
	follow_free(f);
	unlink(link);
	cleanup();
}

TEST(rotated_names)
{
	char *v[8];
	size_t n, i;

	setup("names");
	append(path, "x\n");
	rotate_rename();
	append(path, "y\n");
	rotate_rename();
	n = follow_rotated(path, v, 8);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK(strstr(v[0], "/vmkernel.0.gz") != NULL);
		CHECK(strstr(v[1], "/vmkernel.1.gz") != NULL);
	}
	for (i = 0; i < n; i++)
		free(v[i]);
	cleanup();
}

int
main(void)
{
	T_PROG("test_follow");
	RUN(partial_lines_and_tail);
	RUN(long_lines_are_cut_not_split);
	RUN(bounded_reads);
	RUN(rename_gzip_rotation_while_open);
	RUN(several_rotations_between_two_reads);
	RUN(copytruncate_rotation);
	RUN(copytruncate_regrown_to_the_same_size);
	RUN(cut_gzip_copy_read_up_to_the_cut);
	RUN(bookmark_resume_and_rotations_while_down);
	RUN(symlinked_log_rotated_while_down);
	RUN(rotated_names);
	return t_done();
}
