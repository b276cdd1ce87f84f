/* libFuzzer target: the bundle archive reader (agent/analyze/tarstream.c),
 * gzip and tar, fed in pieces of any size.  Whatever the bytes: no crash,
 * no read out of bounds, no leak; every member handed on has a clean path
 * inside the archive (never absolute, never ..), is given at most the
 * bytes its header declares, and is ended once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/analyze/tarstream.h"

struct st {
	int		 open;
	uint64_t	 size, got;
};

/* Whether a path has a ".." component. */
static int
has_dotdot(const char *p)
{
	for (const char *c = p; *c; c++)
		if ((c == p || c[-1] == '/') && c[0] == '.' && c[1] == '.' &&
		    (c[2] == '/' || c[2] == '\0'))
			return 1;
	return 0;
}

static int
member(void *arg, const struct tar_entry *e)
{
	struct st *s = arg;

	if (s->open || e->path[0] == '/' || e->path[0] == '\0' || has_dotdot(e->path))
		abort();
	s->open = 1;
	s->size = e->size;
	s->got = 0;
	return 1;
}

static int
data(void *arg, const char *p, size_t n)
{
	struct st *s = arg;

	(void)p;
	if (!s->open)
		abort();
	s->got += n;
	if (s->got > s->size)
		abort();
	return 0;
}

static int
end(void *arg)
{
	struct st *s = arg;

	if (!s->open || s->got != s->size)
		abort();
	s->open = 0;
	return 0;
}

static void
refused(void *arg, const char *path, const char *why, bool hostile)
{
	(void)arg;
	(void)hostile;
	if (path == NULL || why == NULL || why[0] == '\0')
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	struct st s = { 0, 0, 0 };
	struct tar_cb cb = { member, data, end, refused, &s };
	struct tar *t = tar_new(&cb, 1u << 20);
	struct tgz *g = t ? tgz_new(t) : NULL;
	size_t step, i = 0;

	if (g == NULL || size == 0) {
		tgz_free(g);
		tar_free(t);
		return 0;
	}
	/* the first byte sets the size of the pieces the rest is fed in */
	step = (size_t)d[0] * 7 + 1;
	for (i = 1; i < size; i += step)
		if (tgz_feed(g, d + i, size - i < step ? size - i : step) == -1)
			break;
	if (tgz_finish(g) == -1 && tgz_error(g)[0] == '\0')
		abort();
	tgz_free(g);
	tar_free(t);
	return 0;
}
