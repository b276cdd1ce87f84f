/*
 * follow: a log file follower that survives rotation and restarts.  See
 * follow.h for the rules; the comments here say how.
 *
 * State: the open descriptor of the file being read (fd), its identity
 * (ino + fingerprint), and off = the offset of the first byte not yet
 * handed to the callback (always at a line start, or inside an over-long
 * line being skipped).  Reading is pread() from off into a buffer, so a
 * partial last line is simply read again next time.
 */
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
#include <zlib.h>

#include "../../agent/lib/log.h"
#include "follow.h"

#define READ_CHUNK	(64 * 1024)	/* > FOLLOW_LINE_MAX */
#define ROTATED_MAX	10

struct follow {
	char		*path;
	int		 fd;		/* -1 = not open */
	uint64_t	 ino;
	uint64_t	 off;
	uint32_t	 fp;
	size_t		 fplen;		/* 0 = no fingerprint yet */
	bool		 skipping;	/* inside an over-long line */
	bool		 draining;	/* fd is a rotated-away file: read to EOF */
	bool		 quiet;		/* read to the end of q_*: see unchanged() */
	struct timespec	 q_mtim, q_ctim;
	enum follow_start start;	/* for the next open */
	bool		 have_bm;	/* bm_* valid: resume or recover */
	uint64_t	 bm_ino, bm_off;
	uint32_t	 bm_fp;
	size_t		 bm_fplen;
	bool		 bm_skip;
	char		*buf;		/* READ_CHUNK */
};

struct follow *
follow_new(const char *path)
{
	struct follow *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->path = strdup(path);
	f->buf = malloc(READ_CHUNK);
	if (f->path == NULL || f->buf == NULL) {
		free(f->path);
		free(f->buf);
		free(f);
		return NULL;
	}
	f->fd = -1;
	f->start = FOLLOW_HEAD;
	return f;
}

void
follow_free(struct follow *f)
{
	if (f == NULL)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->buf);
	free(f);
}

void
follow_start(struct follow *f, const char *bm, enum follow_start start)
{
	unsigned long long ino, off;
	unsigned fp;
	size_t fplen;
	int skip;

	f->start = start;
	f->have_bm = false;
	if (bm != NULL && sscanf(bm, "ino=%llu fp=%x fplen=%zu off=%llu skip=%d",
	    &ino, &fp, &fplen, &off, &skip) == 5 && fplen <= FOLLOW_FP_LEN) {
		f->have_bm = true;
		f->bm_ino = ino;
		f->bm_fp = fp;
		f->bm_fplen = fplen;
		f->bm_off = off;
		f->bm_skip = skip != 0;
	}
}

void
follow_pos(const struct follow *f, char *out, size_t outlen)
{
	if (f->fd < 0 && !f->have_bm) {
		snprintf(out, outlen, "%s", "");
		return;
	}
	if (f->fd < 0) {
		/* Not reopened yet: keep what we were given. */
		snprintf(out, outlen, "ino=%" PRIu64 " fp=%08x fplen=%zu off=%" PRIu64
		    " skip=%d", f->bm_ino, (unsigned)f->bm_fp, f->bm_fplen,
		    f->bm_off, f->bm_skip);
		return;
	}
	snprintf(out, outlen, "ino=%" PRIu64 " fp=%08x fplen=%zu off=%" PRIu64
	    " skip=%d", f->ino, (unsigned)f->fp, f->fplen, f->off, f->skipping);
}

uint64_t
follow_offset(const struct follow *f)
{
	if (f->fd >= 0)
		return f->off;
	return f->have_bm ? f->bm_off : 0;
}

/* CRC32 of the first n bytes of fd; -1 if fewer exist. */
static int
fd_crc(int fd, size_t n, uint32_t *crc)
{
	unsigned char b[FOLLOW_FP_LEN];
	ssize_t r;

	if (n > sizeof(b))
		return -1;
	r = pread(fd, b, n, 0);
	if (r < 0 || (size_t)r != n)
		return -1;
	*crc = (uint32_t)crc32(0L, b, (uInt)n);
	return 0;
}

/* Take (or extend) the fingerprint of the open file, up to FOLLOW_FP_LEN. */
static void
take_fp(struct follow *f, uint64_t size)
{
	size_t n = size < FOLLOW_FP_LEN ? (size_t)size : FOLLOW_FP_LEN;
	uint32_t crc;

	if (n > f->fplen && fd_crc(f->fd, n, &crc) == 0) {
		f->fp = crc;
		f->fplen = n;
	}
}

/*
 * Extend the fingerprint with the bytes just read at offset o (f->buf,
 * n bytes): computed from what we read, never from a later look at the
 * file, so it cannot mix two files when one replaces the other between
 * two reads.
 */
static void
extend_fp(struct follow *f, uint64_t o, size_t n)
{
	uint64_t end = o + n < FOLLOW_FP_LEN ? o + n : FOLLOW_FP_LEN;

	if (f->fplen >= FOLLOW_FP_LEN || o > f->fplen || end <= f->fplen)
		return;
	f->fp = (uint32_t)crc32(f->fp, (const unsigned char *)f->buf +
	    (f->fplen - o), (uInt)(end - f->fplen));
	f->fplen = (size_t)end;
}

/* Does the open file still start with the bytes we fingerprinted? */
static bool
same_fp(int fd, uint32_t fp, size_t fplen)
{
	uint32_t crc;

	if (fplen == 0)
		return true;
	return fd_crc(fd, fplen, &crc) == 0 && crc == fp;
}

/*
 * Hand the complete lines of buf[0..n) to cb.  final: the data ends here
 * for good (a rotated file), so a last line without newline counts too.
 * Stops after *budget lines (when non-NULL).  Returns the bytes consumed.
 */
static size_t
split(struct follow *f, const char *buf, size_t n, bool final,
    size_t *budget, follow_line_fn cb, void *arg)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(buf + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (buf + i)) : n - i;

		if (f->skipping) {
			if (nl == NULL)
				return n;		/* still inside it */
			f->skipping = false;
			i += len + 1;
			continue;
		}
		if (budget != NULL && *budget == 0)
			break;
		if (nl == NULL && len <= FOLLOW_LINE_MAX && !final)
			break;			/* partial: read again later */
		if (len > FOLLOW_LINE_MAX) {
			/* Cut at a character boundary by the event code;
			 * the rest of the line is skipped, not split. */
			cb(arg, buf + i, FOLLOW_LINE_MAX, true);
			if (nl == NULL) {
				f->skipping = !final;
				return n;
			}
		} else {
			size_t l = len;

			if (l > 0 && buf[i + l - 1] == '\r')
				l--;
			if (l > 0)
				cb(arg, buf + i, l, false);
		}
		i += len + (nl != NULL);
		if (budget != NULL)
			(*budget)--;
	}
	return i;
}

/*
 * Read the open file from f->off.  final: it will not grow any more.
 * Returns 1 if the bounds stopped us, 0 at EOF, 2 if the file was
 * truncated or rewritten (its first bytes changed), -1 on error.
 */
static int
read_fd(struct follow *f, bool final, size_t max_bytes, size_t max_lines,
    follow_line_fn cb, void *arg)
{
	size_t done = 0, budget = max_lines, *bp = max_lines ? &budget : NULL;

	for (;;) {
		ssize_t r;
		size_t used;

		if (max_bytes && done >= max_bytes)
			return 1;
		r = pread(f->fd, f->buf, READ_CHUNK, (off_t)f->off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			log_limited(LOG_WARN, f->path, 300, "logwatch: read %s: %s",
			    f->path, log_errstr(errno));
			return -1;
		}
		if (r == 0)
			return 0;
		/* Replaced under us (copytruncate and regrown) since the last
		 * check?  Then this chunk may be the new file's: drop it. */
		if (!same_fp(f->fd, f->fp, f->fplen))
			return 2;
		extend_fp(f, f->off, (size_t)r);
		used = split(f, f->buf, (size_t)r, final && r < READ_CHUNK, bp,
		    cb, arg);
		f->off += used;
		done += used;
		if (bp != NULL && budget == 0)
			return 1;
		if ((size_t)r < READ_CHUNK)
			return 0;	/* the end (maybe after a partial line) */
	}
}

size_t
follow_rotated(const char *path, char **out, size_t max)
{
	char stem[PATH_MAX], cand[PATH_MAX + 32];
	const char *dot;
	size_t n = 0, k, plen = strlen(path), j;
	struct stat st;

	if (plen >= sizeof(stem))
		return 0;
	memcpy(stem, path, plen + 1);
	dot = strrchr(path, '.');
	if (dot != NULL && strchr(dot, '/') == NULL && strcmp(dot, ".log") == 0)
		stem[dot - path] = '\0';
	for (k = 0; k < ROTATED_MAX && n < max; k++) {
		for (j = 0; j < 3 && n < max; j++) {
			if (j == 1 && strcmp(stem, path) == 0)
				continue;
			/* stem.k.gz (ESXi), path.k.gz, path.k (logrotate) */
			snprintf(cand, sizeof(cand), "%s.%zu%s", j == 0 ? stem : path,
			    k, j == 2 ? "" : ".gz");
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
				out[n] = strdup(cand);
				if (out[n] != NULL)
					n++;
			}
		}
	}
	return n;
}

/* A damaged or cut gzip copy: what follows byte pos of it is not read. */
static void
rotated_damage(const struct follow *f, gzFile gz, uint64_t pos)
{
	int err = Z_OK;
	const char *msg = gzerror(gz, &err);

	if (err != Z_OK && err != Z_STREAM_END)
		log_limited(LOG_WARN, f->path, 300, "logwatch: %s: a rotated copy is "
		    "damaged after byte %" PRIu64 " of its text (%s): the rest of it "
		    "cannot be read", f->path, pos, msg != NULL ? msg : "?");
}

/*
 * Read an open rotated copy (gzip or plain: gzread does both) from offset
 * off to its end.  check: only if its first fplen bytes have CRC fp; returns
 * 1 read, 0 not this file, -1 error.
 */
static int
read_rotated(struct follow *f, gzFile gz, bool check, uint32_t fp,
    size_t fplen, uint64_t off, follow_line_fn cb, void *arg)
{
	unsigned char head[FOLLOW_FP_LEN];
	uint64_t pos = 0;
	size_t have = 0;
	int r;

	if (gzrewind(gz) != 0)
		return -1;
	if (check && fplen > 0) {
		r = gzread(gz, head, (unsigned)fplen);
		if (r != (int)fplen ||
		    (uint32_t)crc32(0L, head, (uInt)fplen) != fp)
			return 0;
		pos = fplen;
		if (off < pos) {
			/* Resume inside the fingerprinted head. */
			have = (size_t)(pos - off);
			memcpy(f->buf, head + off, have);
		}
	}
	/* Skip to off. */
	while (pos + have < off) {
		uint64_t want = off - pos;

		r = gzread(gz, f->buf, want > READ_CHUNK ? READ_CHUNK : (unsigned)want);
		if (r <= 0)
			break;
		pos += (unsigned)r;
	}
	if (pos < off)
		return 1;	/* shorter than the bookmark: nothing unread */
	for (;;) {
		size_t used;

		r = gzread(gz, f->buf + have, (unsigned)(READ_CHUNK - have));
		if (r < 0)
			break;
		pos += (unsigned)r;
		have += (size_t)r;
		used = split(f, f->buf, have, r == 0, NULL, cb, arg);
		memmove(f->buf, f->buf + used, have - used);
		have -= used;
		if (r == 0)
			break;
	}
	rotated_damage(f, gz, pos);
	return 1;
}

/*
 * The file we knew (fp/fplen, read up to off) is gone from path: find it
 * among the rotated copies, read it from off, then every newer copy in
 * full.  Lines of copies older than the match are not ours to read.
 */
static void
recover(struct follow *f, uint32_t fp, size_t fplen, uint64_t off, bool skip,
    follow_line_fn cb, void *arg)
{
	char *rot[ROTATED_MAX * 3], real[PATH_MAX];
	gzFile gz[ROTATED_MAX * 3];
	bool same[ROTATED_MAX * 3];
	const char *p = f->path;
	size_t n, i, match = SIZE_MAX;
	struct stat st;

	/* /var/log/x.log is a symlink into /var/run/log: the copies are
	 * next to the target (which may be missing right after a rotation,
	 * leaving the link dangling). */
	if (realpath(f->path, real) != NULL)
		p = real;
	else {
		ssize_t l = readlink(f->path, real, sizeof(real) - 1);

		if (l > 0 && real[0] == '/') {
			real[l] = '\0';
			p = real;
		}
	}
	n = follow_rotated(p, rot, sizeof(rot) / sizeof(rot[0]));
	/* Open them all first: another rotation while we read renames the
	 * names, not the open files. */
	for (i = 0; i < n; i++) {
		/* the renamed file we hold open and just read to its end */
		same[i] = f->draining && stat(rot[i], &st) == 0 &&
		    (uint64_t)st.st_ino == f->ino;
		gz[i] = gzopen(rot[i], "rb");
	}
	if (fplen > 0) {
		for (i = 0; i < n && match == SIZE_MAX; i++) {
			f->skipping = skip;
			if (same[i] || (gz[i] != NULL && read_rotated(f, gz[i], true,
			    fp, fplen, off, cb, arg) == 1))
				match = i;
		}
	}
	if (match == SIZE_MAX && f->draining && n > 0)
		log_limited(LOG_WARN, f->path, 300, "logwatch: %s: the rotated file "
		    "just read to its end is not among its %zu rotated copies: if it "
		    "was rotated more than once since the last poll, the copies in "
		    "between are not read", f->path, n);
	else if (match == SIZE_MAX && !f->draining && fplen > 0)
		log_limited(LOG_WARN, f->path, 300, "logwatch: %s: the file read up "
		    "to byte %" PRIu64 " was rotated or replaced and is not among its %zu "
		    "rotated copies (deleted, or named in a way esxwatch does not look for): what "
		    "was written to it after that cannot be read; reading the new "
		    "file from its start", f->path, off, n);
	else if (match == SIZE_MAX)
		log_debug("logwatch: %s: the rotated file was not found; "
		    "reading the new file from its start", f->path);
	else
		log_debug("logwatch: %s: read the rest of %s", f->path, rot[match]);
	for (i = match == SIZE_MAX ? 0 : match; i-- > 0;) {
		f->skipping = false;
		if (gz[i] != NULL)
			read_rotated(f, gz[i], false, 0, 0, 0, cb, arg);
	}
	for (i = 0; i < n; i++) {
		if (gz[i] != NULL)
			gzclose(gz[i]);
		free(rot[i]);
	}
	f->skipping = false;
}

/* Open path and decide where to begin.  0 opened, 1 not there yet, -1 error. */
static int
open_live(struct follow *f, follow_line_fn cb, void *arg)
{
	struct stat st;
	int fd;

	fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			log_limited(LOG_WARN, f->path, 300, "logwatch: open %s: %s",
			    f->path, log_errstr(errno));
		if (f->have_bm && errno == ENOENT) {
			/* Rotated while we were away and no new file yet. */
			recover(f, f->bm_fp, f->bm_fplen, f->bm_off, f->bm_skip,
			    cb, arg);
			f->have_bm = false;
			f->start = FOLLOW_HEAD;
		}
		return errno == ENOENT || errno == ENOTDIR ? 1 : -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	f->fd = fd;
	f->ino = (uint64_t)st.st_ino;
	f->fp = 0;
	f->fplen = 0;
	f->skipping = false;
	f->draining = false;
	/* Fingerprint the live file now, before the (slow) recovery below:
	 * if it is rotated meanwhile, the next check sees it. */
	take_fp(f, (uint64_t)st.st_size);
	if (f->have_bm) {
		f->have_bm = false;
		if (f->bm_ino == f->ino && same_fp(fd, f->bm_fp, f->bm_fplen) &&
		    (uint64_t)st.st_size >= f->bm_off) {
			f->off = f->bm_off;
			f->fp = f->bm_fp;
			f->fplen = f->bm_fplen;
			f->skipping = f->bm_skip;
		} else {
			recover(f, f->bm_fp, f->bm_fplen, f->bm_off, f->bm_skip,
			    cb, arg);
			f->off = 0;
		}
	} else if (f->start == FOLLOW_TAIL)
		f->off = (uint64_t)st.st_size;
	else
		f->off = 0;
	f->start = FOLLOW_HEAD;		/* any later (re)open is a new file */
	return 0;
}

static void
close_live(struct follow *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->draining = false;
	f->quiet = false;
}

/*
 * The live file is as it was when we last read it to its end: the same
 * size (= our offset) and the same modification and change times.  A
 * write grows it, a truncation or a rewrite sets both times, so nothing
 * needs reading or checking (the fingerprint is not re-read) until one of
 * them moves.  Only a rewrite to the very same size within one tick of a
 * coarse file-system clock could hide, until the next write.
 */
static bool
unchanged(const struct follow *f, const struct stat *st)
{
	return f->quiet && (uint64_t)st->st_size == f->off &&
	    st->st_mtim.tv_sec == f->q_mtim.tv_sec &&
	    st->st_mtim.tv_nsec == f->q_mtim.tv_nsec &&
	    st->st_ctim.tv_sec == f->q_ctim.tv_sec &&
	    st->st_ctim.tv_nsec == f->q_ctim.tv_nsec;
}

/*
 * The live file was truncated (copytruncate) or rewritten in place: the
 * rest of what we had is in the rotated copy; then the file from 0.
 */
static void
rotated_in_place(struct follow *f, follow_line_fn cb, void *arg)
{
	struct stat fst;
	uint32_t ofp = f->fp;
	size_t ofplen = f->fplen;

	/* Fingerprint what is there now first (see open_live). */
	f->fp = 0;
	f->fplen = 0;
	if (fstat(f->fd, &fst) == 0)
		take_fp(f, (uint64_t)fst.st_size);
	recover(f, ofp, ofplen, f->off, f->skipping, cb, arg);
	f->off = 0;
}

int
follow_read(struct follow *f, size_t max_bytes, size_t max_lines,
    follow_line_fn cb, void *arg)
{
	struct stat st, fst;
	bool fst_ok = false;	/* fst: the live file before this read */
	int r, guard;

	if (f->fd < 0) {
		r = open_live(f, cb, arg);
		if (r != 0)
			return r > 0 ? 0 : -1;
	}
	if (!f->draining) {
		bool gone = stat(f->path, &st) < 0;

		if (gone || (uint64_t)st.st_ino != f->ino)
			f->draining = true;	/* renamed away: finish it */
		else if (fstat(f->fd, &fst) == 0) {
			if (unchanged(f, &fst))
				return 0;
			fst_ok = true;
			if ((uint64_t)fst.st_size < f->off ||
			    !same_fp(f->fd, f->fp, f->fplen)) {
				rotated_in_place(f, cb, arg);
				fst_ok = false;
			}
		}
	}
	f->quiet = false;
	if (f->draining) {
		r = read_fd(f, true, max_bytes, max_lines, cb, arg);
		if (r == 1 || r < 0)
			return r;
		/*
		 * r == 0: read to its end.  More rotations may have followed
		 * this one before we looked: the copies newer than it are
		 * read before the new file (recover() finds it among them).
		 * r == 2: the renamed file was rewritten?  Nothing more of
		 * it can be trusted; move on to the new one.
		 */
		if (r == 0)
			recover(f, f->fp, f->fplen, f->off, false, cb, arg);
		close_live(f);
		/* The new file, if it exists yet, from its start. */
		f->start = FOLLOW_HEAD;
		r = open_live(f, cb, arg);
		if (r != 0)
			return r > 0 ? 0 : -1;
	}
	for (guard = 0; guard < 4; guard++) {
		r = read_fd(f, false, max_bytes, max_lines, cb, arg);
		if (r != 2) {
			if (r == 0 && fst_ok && f->off == (uint64_t)fst.st_size) {
				f->quiet = true;
				f->q_mtim = fst.st_mtim;
				f->q_ctim = fst.st_ctim;
			}
			return r;
		}
		rotated_in_place(f, cb, arg);
		fst_ok = false;
	}
	return 1;
}
