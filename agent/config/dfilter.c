/*
 * dfilter: a destination's filter (see dfilter.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfilter.h"
#include "../lib/lfilter.h"
#include "../lib/log.h"
#include "../lib/rx.h"
#include "../lib/str.h"

#define DFILTER_MAX	64	/* clauses of one destination */

struct dclause {
	char		 type[64];	/* "" = any */
	struct rx	*name;		/* NULL = any */
	struct lfilter	*expr;		/* NULL = every event */
};

struct dfilter {
	struct dclause	*v;
	size_t		 n;
};

static char *
dup_trim(const char *s, size_t n)
{
	char *r;

	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	r = malloc(n + 1);
	if (r == NULL)
		fatal("out of memory");
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

void
dfilter_add(struct dest_filters *f, const char *type, const char *name,
    const char *expr)
{
	struct dest_filter *nv = realloc(f->v, (f->n + 1) * sizeof(*nv));

	if (nv == NULL)
		fatal("out of memory");
	f->v = nv;
	f->v[f->n].type = dup_trim(type, strlen(type));
	f->v[f->n].name = dup_trim(name, strlen(name));
	f->v[f->n].expr = dup_trim(expr, strlen(expr));
	f->n++;
}

void
dfilter_clear(struct dest_filters *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].type);
		free(f->v[i].name);
		free(f->v[i].expr);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

/* The end of an expression: the '}' outside a "string", or where s ends. */
static size_t
expr_end(const char *s, size_t i)
{
	bool quoted = false;

	for (; s[i] != '\0'; i++) {
		if (quoted && s[i] == '\\' && s[i + 1] != '\0')
			i++;
		else if (s[i] == '"')
			quoted = !quoted;
		else if (!quoted && s[i] == '}')
			break;
	}
	return i;
}

/* One "{type; name; expression}" at s[*i]; the parts' offsets in o[3]. */
static int
parse_clause(const char *s, size_t *i, size_t o[3], char *err, size_t errlen,
    size_t *erroff)
{
	size_t p = *i + 1;

	for (int part = 0; part < 2; part++) {
		const char *semi;

		o[part] = p;
		semi = strchr(s + p, ';');
		if (semi == NULL || memchr(s + p, '}', (size_t)(semi - s - p)) != NULL) {
			snprintf(err, errlen, "a filter is {type; name regex; "
			    "expression}: the ';' after the %s is missing",
			    part == 0 ? "type" : "name");
			*erroff = (size_t)(str_skip_blanks(s + p) - s);
			return -1;
		}
		p = (size_t)(semi - s) + 1;
	}
	o[2] = p;
	p = expr_end(s, p);
	if (s[p] != '}') {
		snprintf(err, errlen, "the filter's '{' has no closing '}'");
		*erroff = *i;
		return -1;
	}
	*i = p + 1;
	return 0;
}

int
dfilter_parse(const char *s, struct dest_filters *out, size_t **offs,
    char *err, size_t errlen, size_t *erroff)
{
	struct dest_filters got = { NULL, 0 };
	size_t *o = NULL, i = (size_t)(str_skip_blanks(s) - s);

	while (s[i] != '\0') {
		size_t at[3], *no;
		char *part[3];

		if (s[i] != '{' || got.n == DFILTER_MAX) {
			snprintf(err, errlen, got.n == DFILTER_MAX ? "more than %d "
			    "filters" : "expected '{' (a filter is {type; name "
			    "regex; expression}, several separated by ',')",
			    DFILTER_MAX);
			*erroff = i;
			goto fail;
		}
		if (parse_clause(s, &i, at, err, errlen, erroff) < 0)
			goto fail;
		part[0] = dup_trim(s + at[0], at[1] - 1 - at[0]);
		part[1] = dup_trim(s + at[1], at[2] - 1 - at[1]);
		part[2] = dup_trim(s + at[2], i - 1 - at[2]);
		dfilter_add(&got, part[0], part[1], part[2]);
		for (int k = 0; k < 3; k++) {
			free(part[k]);
			at[k] = (size_t)(str_skip_blanks(s + at[k]) - s);	/* for messages */
		}
		no = realloc(o, got.n * 3 * sizeof(*o));
		if (no == NULL)
			fatal("out of memory");
		o = no;
		memcpy(o + (got.n - 1) * 3, at, sizeof(at));
		i = (size_t)(str_skip_blanks(s + i) - s);
		if (s[i] == ',')
			i = (size_t)(str_skip_blanks(s + (i + 1)) - s);
		else if (s[i] != '\0') {
			snprintf(err, errlen, "expected ',' or the end after a filter");
			*erroff = i;
			goto fail;
		}
	}
	for (size_t k = 0; k < got.n; k++)
		dfilter_add(out, got.v[k].type, got.v[k].name, got.v[k].expr);
	dfilter_clear(&got);
	if (offs != NULL)
		*offs = o;
	else
		free(o);
	return 0;
fail:
	dfilter_clear(&got);
	free(o);
	return -1;
}

void
dfilter_free(struct dfilter *df)
{
	if (df == NULL)
		return;
	for (size_t i = 0; i < df->n; i++) {
		rx_free(df->v[i].name);
		lfilter_free(df->v[i].expr);
	}
	free(df->v);
	free(df);
}

/* The name regex must match the whole name: (?:NAME)\z, anchored.  The
 * name alone is compiled first, so that a message is about what the
 * admin wrote. */
static struct rx *
name_compile(const char *name, char *err, size_t errlen, size_t *erroff)
{
	char pat[RX_PATTERN_MAX + 16];
	struct rx *re = rx_compile(name, 0, err, errlen, erroff);

	if (re == NULL)
		return NULL;
	rx_free(re);
	if ((size_t)snprintf(pat, sizeof(pat), "(?:%s)\\z", name) >= sizeof(pat)) {
		snprintf(err, errlen, "the name regex is too long");
		*erroff = 0;
		return NULL;
	}
	re = rx_compile(pat, RX_ANCHORED, err, errlen, erroff);
	if (re == NULL)
		*erroff = 0;	/* e.g. "a)(b": balanced only when wrapped */
	return re;
}

struct dfilter *
dfilter_compile(const struct dest_filters *f, char *err, size_t errlen,
    size_t *bad, int *part, size_t *erroff)
{
	struct dfilter *df;

	if (f->n == 0)
		return NULL;
	*bad = 0;
	*part = 0;
	*erroff = 0;
	df = calloc(1, sizeof(*df));
	if (df != NULL)
		df->v = calloc(f->n, sizeof(*df->v));
	if (df == NULL || df->v == NULL) {
		free(df);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < f->n; i++, df->n++) {
		struct dclause *c = &df->v[i];
		const struct dest_filter *d = &f->v[i];

		*bad = i;
		snprintf(c->type, sizeof(c->type), "%s",
		    strcmp(d->type, "*") == 0 ? "" : d->type);
		*part = 1;
		if (d->name[0] != '\0') {
			c->name = name_compile(d->name, err, errlen, erroff);
			if (c->name == NULL)
				goto fail;
		}
		*part = 2;
		if (d->expr[0] != '\0') {
			c->expr = lfilter_compile(d->expr, err, errlen, erroff);
			if (c->expr == NULL)
				goto fail;
		}
	}
	return df;
fail:
	df->n++;
	dfilter_free(df);
	return NULL;
}

static const char *
get_field(void *arg, const char *name)
{
	return event_get(arg, name);
}

static bool
clause_keeps(const struct dclause *c, const struct event *ev)
{
	const char *col = event_get(ev, "esxwatch_collector");
	bool is_log = col != NULL && strcmp(col, "logwatch") == 0;
	const char *name;

	if (col == NULL)
		col = "";
	if (strcmp(c->type, "filelog") == 0) {
		if (!is_log)
			return false;
	} else if (c->type[0] != '\0' && strcmp(c->type, col) != 0)
		return false;
	if (c->name != NULL) {
		name = is_log ? event_get(ev, "esxwatch_filelog") : col;
		if (name == NULL)
			name = "";
		if (!rx_test(c->name, name, strlen(name)))
			return false;
	}
	return c->expr == NULL ||
	    lfilter_eval(c->expr, get_field, (void *)(uintptr_t)ev) == 1;
}

bool
dfilter_keeps(const struct dfilter *df, const struct event *ev)
{
	if (df == NULL)
		return true;
	for (size_t i = 0; i < df->n; i++)
		if (clause_keeps(&df->v[i], ev))
			return true;
	return false;
}
