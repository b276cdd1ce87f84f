/*
 * framer: the messages of one syslog TCP/TLS stream (syslogwire.h).
 *
 * Each frame is detected from its first byte (RFC 6587 3.4): a digit
 * starts octet counting "LEN SP MSG", anything else a message ended by LF
 * (or NUL, as some relays write).  LF, CR and NUL between frames are
 * skipped.  A message is delivered straight from the caller's bytes when
 * they hold all of it (no copy), else assembled in a buffer that grows to
 * at most SYSLOG_MSG_MAX + 1 bytes and is given back after a long message.
 *
 * Cut messages: a message longer than SYSLOG_MSG_MAX is delivered as its
 * first SYSLOG_MSG_MAX bytes (truncated = true) as soon as they are in,
 * the rest skipped to the end of its frame.  The result is the same
 * whatever the split of the stream into reads (tests feed it one byte at a
 * time and all at once).  An LF-framed message loses one CR before its LF.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syslogwire.h"

#define LEN_DIGITS	8	/* "LEN " of more digits is malformed */
#define BUF_KEEP	16384	/* a buffer larger than this is freed after use */
#define BUF_MIN		4096

enum fstate {
	F_START,	/* between frames */
	F_LEN,		/* in the digits of "LEN " */
	F_OCTET,	/* in an octet-counted message: rem bytes to come */
	F_SKIP_OCTET,	/* in the cut tail of one: rem bytes to skip */
	F_LF,		/* in an LF-framed message */
	F_SKIP_LF	/* in the cut tail of one, or after a bad prefix */
};

struct framer {
	char		*buf;
	size_t		 len, cap;
	enum fstate	 st;
	uint64_t	 rem;
	unsigned	 ndig;
	bool		 cut;	/* F_OCTET: longer than SYSLOG_MSG_MAX */
	struct framer_counts c;
};

struct framer *
framer_new(void)
{
	return calloc(1, sizeof(struct framer));
}

void
framer_free(struct framer *f)
{
	if (f == NULL)
		return;
	free(f->buf);
	free(f);
}

const struct framer_counts *
framer_counts(const struct framer *f)
{
	return &f->c;
}

size_t
framer_held(const struct framer *f)
{
	return f->cap;
}

/* Room for want bytes in all; false when memory ran out. */
static bool
reserve(struct framer *f, size_t want)
{
	size_t cap = f->cap ? f->cap : BUF_MIN;
	char *p;

	if (want <= f->cap)
		return true;
	while (cap < want)
		cap *= 2;
	if (cap > SYSLOG_MSG_MAX + 1)
		cap = SYSLOG_MSG_MAX + 1;
	p = realloc(f->buf, cap);
	if (p == NULL)
		return false;
	f->buf = p;
	f->cap = cap;
	return true;
}

static void
release(struct framer *f)
{
	f->len = 0;
	if (f->cap > BUF_KEEP) {
		free(f->buf);
		f->buf = NULL;
		f->cap = 0;
	}
}

static void
deliver(struct framer *f, const char *msg, size_t len, bool cut,
    framer_cb cb, void *arg)
{
	if (len > SYSLOG_MSG_MAX) {
		len = SYSLOG_MSG_MAX;
		cut = true;
	}
	f->c.messages++;
	if (cut)
		f->c.truncated++;
	cb(arg, msg, len, cut);
}

/* An LF-framed message ends: one CR before the LF is not message. */
static void
deliver_lf(struct framer *f, const char *msg, size_t len, framer_cb cb,
    void *arg)
{
	if (len > 0 && msg[len - 1] == '\r')
		len--;
	if (len > 0)
		deliver(f, msg, len, false, cb, arg);
}

/* The end of an LF frame in d[0..n): LF or NUL, or n. */
static size_t
lf_end(const char *d, size_t n)
{
	const char *lf = memchr(d, '\n', n), *nul;

	if (lf != NULL)
		n = (size_t)(lf - d);
	nul = memchr(d, '\0', n);
	return nul != NULL ? (size_t)(nul - d) : n;
}

/* Append d[0..n) to the buffer (its capacity permitting). */
static bool
append(struct framer *f, const char *d, size_t n)
{
	if (!reserve(f, f->len + n))
		return false;
	memcpy(f->buf + f->len, d, n);
	f->len += n;
	return true;
}

/* F_LF at d[0..n): bytes consumed. */
static size_t
feed_lf(struct framer *f, const char *d, size_t n, framer_cb cb, void *arg)
{
	size_t e = lf_end(d, n), room;

	if (e < n && f->len == 0 && e <= SYSLOG_MSG_MAX + 1) {
		deliver_lf(f, d, e, cb, arg);	/* all of it here: no copy */
		f->st = F_START;
		return e + 1;
	}
	room = SYSLOG_MSG_MAX + 1 - f->len;
	if (e > room || !append(f, d, e)) {
		/* longer than any message may be: its head goes now */
		if (f->len < SYSLOG_MSG_MAX)
			(void)append(f, d, e < SYSLOG_MSG_MAX - f->len ? e :
			    SYSLOG_MSG_MAX - f->len);
		deliver(f, f->buf ? f->buf : "", f->len, true, cb, arg);
		release(f);
		f->st = F_SKIP_LF;
		return e;
	}
	if (e == n)
		return n;
	deliver_lf(f, f->buf, f->len, cb, arg);
	release(f);
	f->st = F_START;
	return e + 1;
}

/* F_OCTET at d[0..n): bytes consumed. */
static size_t
feed_octet(struct framer *f, const char *d, size_t n, framer_cb cb, void *arg)
{
	/* rem: bytes of the frame still to come; goal: bytes to deliver */
	size_t take, goal = f->cut ? SYSLOG_MSG_MAX : f->len + (size_t)f->rem;

	if (f->len == 0 && n >= goal) {
		deliver(f, d, goal, f->cut, cb, arg);	/* no copy */
	} else {
		take = goal - f->len < n ? goal - f->len : n;
		if (!append(f, d, take)) {
			deliver(f, f->buf ? f->buf : "", f->len, true, cb, arg);
			release(f);
			f->rem -= take;
			f->st = f->rem ? F_SKIP_OCTET : F_START;
			return take;
		}
		f->rem -= take;
		if (f->len < goal)
			return take;
		deliver(f, f->buf, f->len, f->cut, cb, arg);
		release(f);
		f->st = f->rem ? F_SKIP_OCTET : F_START;
		return take;
	}
	f->rem -= goal;
	f->st = f->rem ? F_SKIP_OCTET : F_START;
	return goal;
}

/* F_START and F_LEN at d[0..n): bytes consumed (0: state changed). */
static size_t
feed_head(struct framer *f, const char *d, size_t n)
{
	size_t i = 0;

	if (f->st == F_START) {
		while (i < n && (d[i] == '\n' || d[i] == '\r' || d[i] == '\0'))
			i++;
		if (i == n)
			return i;
		if (d[i] < '1' || d[i] > '9') {
			f->st = F_LF;
			return i;
		}
		f->st = F_LEN;
		f->rem = 0;
		f->ndig = 0;
	}
	for (; i < n && d[i] >= '0' && d[i] <= '9'; i++) {
		if (++f->ndig > LEN_DIGITS)
			break;
		f->rem = f->rem * 10 + (uint64_t)(d[i] - '0');
	}
	if (i == n)
		return i;
	if (d[i] == ' ' && f->ndig <= LEN_DIGITS) {
		f->cut = f->rem > SYSLOG_MSG_MAX;
		f->st = F_OCTET;
		return i + 1;
	}
	f->c.malformed++;	/* resync on the next LF */
	f->st = F_SKIP_LF;
	return i;
}

int
framer_feed(struct framer *f, const char *data, size_t len, framer_cb cb,
    void *arg)
{
	size_t i = 0, e, k;

	while (i < len) {
		switch (f->st) {
		case F_START:
		case F_LEN:
			i += feed_head(f, data + i, len - i);
			break;
		case F_OCTET:
			i += feed_octet(f, data + i, len - i, cb, arg);
			break;
		case F_SKIP_OCTET:
			k = len - i < f->rem ? len - i : (size_t)f->rem;
			f->rem -= k;
			i += k;
			if (f->rem == 0)
				f->st = F_START;
			break;
		case F_LF:
			i += feed_lf(f, data + i, len - i, cb, arg);
			break;
		case F_SKIP_LF:
			e = lf_end(data + i, len - i);
			i += e;
			if (i < len) {
				i++;
				f->st = F_START;
			}
			break;
		}
	}
	return 0;
}

void
framer_end(struct framer *f, framer_cb cb, void *arg)
{
	switch (f->st) {
	case F_LF:
		if (f->len > 0)
			deliver_lf(f, f->buf, f->len, cb, arg);
		break;
	case F_OCTET:
		/* the stream ended inside a frame: what came is kept, cut */
		if (f->len > 0)
			deliver(f, f->buf, f->len, true, cb, arg);
		else
			f->c.malformed++;
		break;
	case F_LEN:
		f->c.malformed++;
		break;
	default:
		break;
	}
	release(f);
	f->st = F_START;
}
