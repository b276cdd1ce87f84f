/*
 * fuzz_follow: the log follower's line splitting.  The input is written to
 * a file in pieces (the first bytes choose the piece sizes), with a read
 * after each piece, then a final newline; the lines delivered must be
 * exactly the file's lines: split at '\n', one trailing '\r' removed,
 * empty lines skipped, a line longer than FOLLOW_LINE_MAX cut there (and
 * marked) with the rest skipped — however the writes fell.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../collectors/logwatch/follow.h"

struct got {
	char	*buf;
	size_t	 len, cap;
};

static void
add(struct got *g, const char *s, size_t n, char tag)
{
	if (g->len + n + 2 > g->cap) {
		g->cap = (g->len + n + 2) * 2;
		g->buf = realloc(g->buf, g->cap);
		if (g->buf == NULL)
			abort();
	}
	g->buf[g->len++] = tag;
	memcpy(g->buf + g->len, s, n);
	g->len += n;
	g->buf[g->len++] = '\n';
}

static void
on_line(void *arg, const char *line, size_t len, bool truncated)
{
	add(arg, line, len, truncated ? 'T' : 'L');
}

/* What the lines of data[0..n) must come out as. */
static void
model(const uint8_t *data, size_t n, struct got *g)
{
	size_t i = 0, len;
	const uint8_t *nl;

	while (i < n) {
		nl = memchr(data + i, '\n', n - i);
		len = nl != NULL ? (size_t)(nl - (data + i)) : n - i;
		if (len > FOLLOW_LINE_MAX)
			add(g, (const char *)data + i, FOLLOW_LINE_MAX, 'T');
		else {
			size_t l = len;

			if (l > 0 && data[i + l - 1] == '\r')
				l--;
			if (l > 0)
				add(g, (const char *)data + i, l, 'L');
		}
		i += len + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64], path[96];
	struct got got = { NULL, 0, 0 }, want = { NULL, 0, 0 };
	struct follow *f;
	size_t off = 0, piece, k = 0;
	uint8_t sizes[4] = { 1, 7, 200, 255 };
	int fd;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-follow-XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(path, sizeof(path), "%s/app.log", dir);
	}
	if (size < 4 || size > 200000)
		return 0;
	memcpy(sizes, data, 4);
	data += 4;
	size -= 4;
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	f = follow_new(path);
	follow_start(f, NULL, FOLLOW_HEAD);
	while (off < size) {
		/* pieces from 1 byte to ~64 KB, so lines cross the reads */
		piece = (size_t)sizes[k % 4] * ((k % 3) ? 1 : 257) + 1;
		k++;
		if (piece > size - off)
			piece = size - off;
		if (write(fd, data + off, piece) != (ssize_t)piece)
			abort();
		off += piece;
		while (follow_read(f, 0, 0, on_line, &got) == 1)
			;
	}
	if (write(fd, "\n", 1) != 1)
		abort();
	while (follow_read(f, 0, 0, on_line, &got) == 1)
		;
	close(fd);
	follow_free(f);
	{
		uint8_t *all = malloc(size + 1);

		if (all == NULL)
			abort();
		memcpy(all, data, size);
		all[size] = '\n';
		model(all, size + 1, &want);
		free(all);
	}
	if (got.len != want.len || (got.len > 0 && memcmp(got.buf, want.buf, got.len) != 0))
		abort();
	free(got.buf);
	free(want.buf);
	return 0;
}
