/*
 * libFuzzer target: the framing of a syslog TCP stream and the folding of
 * continuation lines (collectors/receiver/framer.c, fold.c).  The input
 * is a stream (with the first byte's two high bits set, its body repeated
 * to up to 128 KiB, so that cut messages and 2 MB-style lines are reached).  It
 * is framed twice — in one piece and in pieces of sizes drawn from the
 * input — and both must give the same messages and counts; no message is
 * longer than SYSLOG_MSG_MAX, the framer never holds more than the cap,
 * and every message goes through syslog_parse and a small fold.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/receiver/syslogwire.h"

#define NOW 1796623200000LL

struct sink {
	uint64_t	 hash, n;
	struct fold	*fold;
	int64_t		 now;
};

static void
on_rec(void *arg, const char *host, const char *program, const char *text,
    size_t len, int64_t first_ms, bool truncated)
{
	volatile char t;

	(void)arg;
	(void)first_ms;
	(void)truncated;
	if (len > SYSLOG_MSG_MAX || strlen(host) > 255 || strlen(program) > 63)
		abort();
	if (len > 0) {		/* both ends of the text are readable (ASan) */
		t = text[0];
		t = text[len - 1];
		(void)t;
	}
}

static void
on_msg(void *arg, const char *msg, size_t len, bool truncated)
{
	struct sink *s = arg;
	struct syslog_msg m;
	char host[256], app[64];
	size_t i;

	if (len > SYSLOG_MSG_MAX)
		abort();
	s->hash = (s->hash ^ len ^ (truncated ? 1u << 31 : 0)) * 1099511628211u;
	for (i = 0; i < len; i++)
		s->hash = (s->hash ^ (uint8_t)msg[i]) * 1099511628211u;
	s->n++;
	if (s->fold == NULL || s->n > 4096)	/* the first 4096 are enough */
		return;
	syslog_parse(msg, len, NOW, &m);
	memcpy(host, m.host.p ? m.host.p : "", m.host.len < 255 ?
	    m.host.len : 255);
	host[m.host.len < 255 ? m.host.len : 255] = '\0';
	memcpy(app, m.app.p ? m.app.p : "", m.app.len < 63 ? m.app.len : 63);
	app[m.app.len < 63 ? m.app.len : 63] = '\0';
	s->now += 7;
	fold_add(s->fold, host, app, m.text.p ? m.text.p : "", m.text.len,
	    syslog_is_continuation(m.msg.p ? m.msg.p : "", m.msg.len), s->now,
	    on_rec, NULL);
	if (fold_open(s->fold) > 4)
		abort();
	if (s->n % 16 == 0)
		fold_due(s->fold, s->now, false, on_rec, NULL);
}

/* Frame stream[0..n); steps (if any) give the piece sizes, cyclically. */
static void
run(const char *stream, size_t n, const uint8_t *steps, size_t nsteps,
    struct sink *s, struct framer_counts *c)
{
	struct framer *f = framer_new();
	size_t i = 0, k, j = 0;

	if (f == NULL)
		abort();
	/* pieces of 1 to 9436 bytes; of 1 to 263,000 in a long stream */
	while (i < n) {
		k = nsteps ? (size_t)steps[j++ % nsteps] * (n > 8192 ? 1031 : 37) +
		    1 : n - i;
		if (k > n - i)
			k = n - i;
		framer_feed(f, stream + i, k, on_msg, s);
		if (framer_held(f) > SYSLOG_MSG_MAX + 1)
			abort();
		i += k;
	}
	framer_end(f, on_msg, s);
	*c = *framer_counts(f);
	framer_free(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sink a = { 14695981039346656037u, 0, NULL, 0 };
	struct sink b = { 14695981039346656037u, 0, NULL, 0 };
	struct framer_counts ca, cb;
	size_t n = size, want, nsteps;
	char *stream;

	if (size < 2)
		return 0;
	if ((data[0] & 0xC0) == 0xC0) {
		want = ((size_t)data[1] + 1) * 512;
		n = size - 2 < 1 ? 1 : size - 2;
		if (want < n)
			want = n;
		stream = malloc(want);
		if (stream == NULL)
			return 0;
		for (size_t i = 0; i < want; i++)
			stream[i] = size > 2 ? (char)data[2 + i % (size - 2)] : 'x';
		n = want;
	} else {
		stream = malloc(size);
		if (stream == NULL)
			return 0;
		memcpy(stream, data, size);
	}
	nsteps = size < 16 ? size : 16;
	a.fold = fold_new(4, 50);
	run(stream, n, NULL, 0, &a, &ca);
	run(stream, n, data, nsteps, &b, &cb);
	if (a.hash != b.hash || a.n != b.n || ca.messages != cb.messages ||
	    ca.truncated != cb.truncated || ca.malformed != cb.malformed ||
	    ca.messages != a.n)
		abort();
	if (a.fold != NULL) {
		fold_due(a.fold, 0, true, on_rec, NULL);
		if (fold_open(a.fold) != 0)
			abort();
		fold_free(a.fold);
	}
	free(stream);
	return 0;
}
