/*
 * storm: the windows of storm suppression (see storm.h): a table of
 * (rule, entity) entries, hashed, reused once their window is over, and
 * their checkpoint as state text.  Apart from rules.c because it counts
 * what matched and never looks at how: the engine asks it after a match.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/utf8.h"
#include "storm.h"

#define STORM_LINE_MAX	2048

struct storm_ent {
	char		*key;		/* rule \0 entity */
	size_t		 rlen;
	int64_t		 start;
	int64_t		 window;	/* of this rule */
	uint64_t	 limit;		/* of this rule */
	uint64_t	 count;
	uint64_t	 suppressed;
	char		*last;
	size_t		 lastcap;	/* bytes allocated at last */
	uint32_t	 hash;		/* of key */
	uint32_t	 hnext;		/* index + 1 in its bucket, 0 = end */
	bool		 used;
};

struct storm {
	int		 limit;
	int64_t		 window;
	struct storm_ent *v;
	size_t		 n, cap, max;
	uint32_t	*head;		/* hsize buckets of entries, index + 1 */
	size_t		 hsize;		/* a power of two, >= 2 * cap */
	size_t		 nidle;		/* at least the entries not used */
	bool		 dirty;		/* changed since storm_clean() */
};

struct storm *
storm_new(int limit, int64_t window_ms, size_t max_keys)
{
	struct storm *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->limit = limit;
	s->window = window_ms;
	s->max = max_keys;
	return s;
}

void
storm_free(struct storm *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].last);
	}
	free(s->v);
	free(s->head);
	free(s);
}

static uint32_t
storm_hash(const char *rule, const char *entity)
{
	uint32_t h = 2166136261u;

	for (; *rule != '\0'; rule++)
		h = (h ^ (unsigned char)*rule) * 16777619u;
	h = (h ^ 0xffu) * 16777619u;
	for (; *entity != '\0'; entity++)
		h = (h ^ (unsigned char)*entity) * 16777619u;
	return h;
}

/* Take entry i out of its bucket. */
static void
storm_unlink(struct storm *s, size_t i)
{
	uint32_t *k;

	if (s->head == NULL || s->v[i].key == NULL)
		return;
	for (k = &s->head[s->v[i].hash & (s->hsize - 1)]; *k != 0;
	    k = &s->v[*k - 1].hnext)
		if (*k == i + 1) {
			*k = s->v[i].hnext;
			break;
		}
}

static void
storm_link(struct storm *s, size_t i)
{
	uint32_t *b = &s->head[s->v[i].hash & (s->hsize - 1)];

	s->v[i].hnext = *b;
	*b = (uint32_t)(i + 1);
}

/* Room for one more entry: the array and the buckets (>= 2 per entry). */
static int
storm_grow(struct storm *s)
{
	size_t i, hs;

	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		struct storm_ent *nv = realloc(s->v, nc * sizeof(*nv));

		if (nv == NULL)
			return -1;
		s->v = nv;
		s->cap = nc;
	}
	if (s->hsize >= 2 * s->cap)
		return 0;
	for (hs = 32; hs < 2 * s->cap; hs *= 2)
		;
	free(s->head);
	s->head = calloc(hs, sizeof(*s->head));
	s->hsize = s->head != NULL ? hs : 0;
	if (s->head == NULL)
		return -1;
	for (i = 0; i < s->n; i++)
		if (s->v[i].key != NULL)
			storm_link(s, i);
	return 0;
}

static struct storm_ent *
storm_find(struct storm *s, const char *rule, const char *entity, bool create)
{
	size_t rl = strlen(rule), el = strlen(entity), i;
	uint32_t h = storm_hash(rule, entity), k;
	struct storm_ent *e;

	for (k = s->head ? s->head[h & (s->hsize - 1)] : 0; k != 0; k = e->hnext) {
		e = &s->v[k - 1];
		if (e->hash == h && e->rlen == rl && memcmp(e->key, rule, rl) == 0 &&
		    strcmp(e->key + rl + 1, entity) == 0)
			return e;
	}
	if (!create)
		return NULL;
	/* Reuse an idle entry before growing. */
	for (i = 0; s->nidle > 0 && i < s->n; i++)
		if (!s->v[i].used)
			break;
	if (s->nidle == 0 || i == s->n) {
		s->nidle = 0;
		if (s->n >= s->max || storm_grow(s) < 0)
			return NULL;
		i = s->n;
		memset(&s->v[s->n], 0, sizeof(s->v[0]));
		s->n++;
	} else {
		s->nidle--;
		storm_unlink(s, i);
	}
	e = &s->v[i];
	free(e->key);
	free(e->last);
	memset(e, 0, sizeof(*e));
	e->key = malloc(rl + el + 2);
	if (e->key == NULL) {
		s->nidle++;		/* an idle entry again */
		return NULL;
	}
	memcpy(e->key, rule, rl + 1);
	memcpy(e->key + rl + 1, entity, el + 1);
	e->rlen = rl;
	e->hash = h;
	e->used = true;
	storm_link(s, i);
	return e;
}

/*
 * The last suppressed line, cut to STORM_LINE_MAX: its buffer is kept
 * and grown, not allocated again for every line of a storm.
 */
static void
storm_set_last(struct storm_ent *e, const char *line, size_t len)
{
	if (len >= STORM_LINE_MAX)
		len = utf8_cut(line, len, STORM_LINE_MAX - 1);
	if (e->last == NULL || len + 1 > e->lastcap) {
		char *n = realloc(e->last, len + 1);

		if (n == NULL) {
			free(e->last);
			e->last = NULL;
			e->lastcap = 0;
			return;
		}
		e->last = n;
		e->lastcap = len + 1;
	}
	memcpy(e->last, line, len);
	e->last[len] = '\0';
}

static int
storm_report(struct storm *s, struct storm_ent *e, storm_fn cb, void *arg)
{
	int n = 0;

	if (e->suppressed > 0) {
		cb(arg, e->key, e->key + e->rlen + 1, e->suppressed, e->window,
		    e->last ? e->last : "");
		s->dirty = true;
		n = 1;
	}
	e->suppressed = 0;
	return n;
}

int
storm_hit(struct storm *s, const char *rule, const char *entity, int64_t now,
    const char *line, size_t len, storm_fn cb, void *arg)
{
	if (s == NULL)
		return 1;
	return storm_hit_at(s, rule, entity, s->limit, s->window, now, line,
	    len, cb, arg);
}

int
storm_hit_at(struct storm *s, const char *rule, const char *entity, int limit,
    int64_t window, int64_t now, const char *line, size_t len, storm_fn cb,
    void *arg)
{
	struct storm_ent *e;

	if (s == NULL || limit <= 0 || window <= 0)
		return 1;
	e = storm_find(s, rule, entity, true);
	if (e == NULL)
		return 1;		/* no room to count: emit, never drop */
	s->dirty = true;
	if (!e->used || e->count == 0 || now - e->start >= e->window ||
	    now < e->start) {
		/* A new window: report what the old one suppressed first. */
		storm_report(s, e, cb, arg);
		e->used = true;
		e->start = now;
		e->count = 0;
	}
	e->window = window;
	e->limit = (uint64_t)limit;
	e->count++;
	if (e->count <= (uint64_t)limit)
		return 1;
	e->suppressed++;
	storm_set_last(e, line, len);
	return 0;
}

int
storm_due(struct storm *s, int64_t now, bool all, storm_fn cb, void *arg)
{
	size_t i;
	int n = 0;

	if (s == NULL)
		return 0;
	for (i = 0; i < s->n; i++) {
		struct storm_ent *e = &s->v[i];

		if (!e->used)
			continue;
		if (all || now - e->start >= e->window || now < e->start) {
			n += storm_report(s, e, cb, arg);
			if (!all || now - e->start >= e->window) {
				/* Window over: the entry may be reused. */
				e->used = false;
				s->nidle++;
				e->count = 0;
				s->dirty = true;
			}
		}
	}
	return n;
}

/* ---- checkpoint ---------------------------------------------------- */

/*
 * State text: "start window limit count suppressed last-line".  Only the
 * windows that limit anything: a window below its limit lost in a crash
 * costs at most limit-1 alerts sent again, never a count.
 */
void
storm_foreach(const struct storm *s, storm_state_fn fn, void *arg)
{
	char st[STORM_LINE_MAX + 96];
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		const struct storm_ent *e = &s->v[i];

		if (!e->used || e->count == 0 ||
		    (e->suppressed == 0 && e->count < e->limit))
			continue;
		snprintf(st, sizeof(st), "%lld %lld %llu %llu %llu %s",
		    (long long)e->start, (long long)e->window,
		    (unsigned long long)e->limit, (unsigned long long)e->count,
		    (unsigned long long)e->suppressed, e->last ? e->last : "");
		fn(arg, e->key, e->key + e->rlen + 1, st);
	}
}

static bool
next_num(const char **p, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(*p, &end, 10);
	if (errno != 0 || end == *p || *end != ' ' || *out < 0)
		return false;
	*p = end + 1;
	return true;
}

int
storm_restore(struct storm *s, const char *rule, const char *entity,
    const char *state)
{
	long long start, window, limit, count, supp;
	const char *p = state;
	struct storm_ent *e;

	if (s == NULL || !next_num(&p, &start) || !next_num(&p, &window) ||
	    !next_num(&p, &limit) || !next_num(&p, &count) ||
	    !next_num(&p, &supp) || window <= 0 || limit <= 0 || count <= 0 ||
	    supp > count)
		return -1;
	e = storm_find(s, rule, entity, true);
	if (e == NULL)
		return -1;
	e->used = true;
	e->start = start;
	e->window = window;
	e->limit = (uint64_t)limit;
	e->count = (uint64_t)count;
	e->suppressed = (uint64_t)supp;
	storm_set_last(e, p, strlen(p));
	return 0;
}

bool
storm_dirty(const struct storm *s)
{
	return s != NULL && s->dirty;
}

void
storm_clean(struct storm *s)
{
	if (s != NULL)
		s->dirty = false;
}
