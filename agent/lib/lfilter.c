/*
 * lfilter: liagent's filter expressions (see lfilter.h).  Compiled once
 * into a small tree; evaluated per event without allocating.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfilter.h"

#define LF_MAX_NODES	256
#define LF_MAX_DEPTH	32

enum lf_op {
	LF_FIELD, LF_STR, LF_NUM, LF_OR, LF_AND, LF_NOT,
	LF_EQ, LF_NE, LF_LT, LF_LE, LF_GT, LF_GE,
};

struct lf_node {
	enum lf_op	 op;
	char		*s;		/* field name or string literal */
	int		 a, b;		/* children (node indices) */
};

struct lfilter {
	struct lf_node	 n[LF_MAX_NODES];
	int		 nn;
	int		 root;
};

struct lp {
	struct lfilter	*f;
	const char	*s;
	size_t		 i;
	char		*err;
	size_t		 errlen;
	size_t		 erroff;
	int		 depth;
	bool		 failed;
};

static void
perr(struct lp *p, const char *msg)
{
	if (!p->failed) {
		snprintf(p->err, p->errlen, "%s", msg);
		p->erroff = p->i;
	}
	p->failed = true;
}

static void
skip(struct lp *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

static int
node(struct lp *p, enum lf_op op, char *s, int a, int b)
{
	struct lf_node *x;

	if (p->f->nn >= LF_MAX_NODES) {
		free(s);
		perr(p, "expression too long");
		return -1;
	}
	x = &p->f->n[p->f->nn];
	x->op = op;
	x->s = s;
	x->a = a;
	x->b = b;
	return p->f->nn++;
}

/* A word operator (and, or, not) at the cursor, as a whole word. */
static bool
word(struct lp *p, const char *w)
{
	size_t l = strlen(w);

	if (strncasecmp(p->s + p->i, w, l) != 0)
		return false;
	if (isalnum((unsigned char)p->s[p->i + l]) || p->s[p->i + l] == '_')
		return false;
	p->i += l;
	return true;
}

static bool
sym(struct lp *p, const char *w)
{
	size_t l = strlen(w);

	if (strncmp(p->s + p->i, w, l) != 0)
		return false;
	p->i += l;
	return true;
}

static int p_or(struct lp *);

static int
p_string(struct lp *p)
{
	size_t cap = 32, o = 0;
	char *s = malloc(cap), *ns;

	if (s == NULL) {
		perr(p, "out of memory");
		return -1;
	}
	p->i++;
	while (p->s[p->i] != '"') {
		char c = p->s[p->i];

		if (c == '\0') {
			free(s);
			perr(p, "string without its closing '\"'");
			return -1;
		}
		if (c == '\\' && p->s[p->i + 1] != '\0')
			c = p->s[++p->i];
		if (o + 2 > cap) {
			cap *= 2;
			ns = realloc(s, cap);
			if (ns == NULL) {
				free(s);
				perr(p, "out of memory");
				return -1;
			}
			s = ns;
		}
		s[o++] = c;
		p->i++;
	}
	p->i++;
	s[o] = '\0';
	return node(p, LF_STR, s, -1, -1);
}

static int
p_value(struct lp *p)
{
	size_t st;
	int r;

	skip(p);
	if (++p->depth > LF_MAX_DEPTH) {
		perr(p, "expression nested too deeply");
		return -1;
	}
	if (p->s[p->i] == '(') {
		p->i++;
		r = p_or(p);
		skip(p);
		if (r >= 0 && p->s[p->i] != ')') {
			perr(p, "expected ')'");
			r = -1;
		} else if (r >= 0)
			p->i++;
		p->depth--;
		return r;
	}
	p->depth--;
	if (p->s[p->i] == '"')
		return p_string(p);
	st = p->i;
	if (isdigit((unsigned char)p->s[p->i]) || ((p->s[p->i] == '-' ||
	    p->s[p->i] == '.') && isdigit((unsigned char)p->s[p->i + 1]))) {
		p->i++;
		while (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '.')
			p->i++;
		return node(p, LF_NUM, strndup(p->s + st, p->i - st), -1, -1);
	}
	if (isalpha((unsigned char)p->s[p->i]) || p->s[p->i] == '_') {
		while (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_')
			p->i++;
		return node(p, LF_FIELD, strndup(p->s + st, p->i - st), -1, -1);
	}
	perr(p, p->s[p->i] == '\0' ? "the expression ends too early" :
	    "expected a field name, a \"string\", a number or '('");
	return -1;
}

static int
p_cmp(struct lp *p)
{
	static const struct { const char *s; enum lf_op op; } ops[] = {
		{ "==", LF_EQ }, { "!=", LF_NE }, { "<=", LF_LE }, { ">=", LF_GE },
		{ "<", LF_LT }, { ">", LF_GT },
	};
	int a = p_value(p), b;
	size_t k;

	if (a < 0)
		return -1;
	skip(p);
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		if (!sym(p, ops[k].s))
			continue;
		b = p_value(p);
		return b < 0 ? -1 : node(p, ops[k].op, NULL, a, b);
	}
	return a;
}

static int
p_not(struct lp *p)
{
	int a;

	skip(p);
	if (word(p, "not") || (p->s[p->i] == '!' && p->s[p->i + 1] != '=' &&
	    sym(p, "!"))) {
		if (++p->depth > LF_MAX_DEPTH) {
			perr(p, "expression nested too deeply");
			return -1;
		}
		a = p_not(p);
		p->depth--;
		return a < 0 ? -1 : node(p, LF_NOT, NULL, a, -1);
	}
	return p_cmp(p);
}

static int
p_and(struct lp *p)
{
	int a = p_not(p), b;

	while (a >= 0) {
		skip(p);
		if (!word(p, "and") && !sym(p, "&&"))
			break;
		b = p_not(p);
		a = b < 0 ? -1 : node(p, LF_AND, NULL, a, b);
	}
	return a;
}

static int
p_or(struct lp *p)
{
	int a = p_and(p), b;

	while (a >= 0) {
		skip(p);
		if (!word(p, "or") && !sym(p, "||"))
			break;
		b = p_and(p);
		a = b < 0 ? -1 : node(p, LF_OR, NULL, a, b);
	}
	return a;
}

struct lfilter *
lfilter_compile(const char *expr, char *err, size_t errlen, size_t *erroff)
{
	struct lp p;

	memset(&p, 0, sizeof(p));
	p.f = calloc(1, sizeof(*p.f));
	if (p.f == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p.s = expr;
	p.err = err;
	p.errlen = errlen;
	p.f->root = p_or(&p);
	skip(&p);
	if (!p.failed && p.s[p.i] != '\0')
		perr(&p, "unexpected text after the expression");
	if (p.failed || p.f->root < 0) {
		if (erroff != NULL)
			*erroff = p.erroff;
		lfilter_free(p.f);
		return NULL;
	}
	return p.f;
}

void
lfilter_free(struct lfilter *f)
{
	int i;

	if (f == NULL)
		return;
	for (i = 0; i < f->nn; i++)
		free(f->n[i].s);
	free(f);
}

/* ----------------------------------------------------------- evaluate */

struct lv {
	const char	*s;	/* NULL = missing */
	char		 buf[32];
};

static bool
as_num(const char *s, double *d)
{
	char *e;

	if (s == NULL || *s == '\0')
		return false;
	errno = 0;
	*d = strtod(s, &e);
	while (isspace((unsigned char)*e))
		e++;
	return errno == 0 && *e == '\0';
}

static int eval(const struct lfilter *, int, lfilter_get_fn, void *);

/* The value of a node as text (comparisons and truth). */
static int
value(const struct lfilter *f, int i, lfilter_get_fn get, void *arg,
    struct lv *v)
{
	const struct lf_node *x = &f->n[i];
	int r;

	switch (x->op) {
	case LF_FIELD:
		v->s = get(arg, x->s);
		return v->s == NULL ? -1 : 0;
	case LF_STR: case LF_NUM:
		v->s = x->s;
		return 0;
	default:
		r = eval(f, i, get, arg);
		if (r < 0)
			return -1;
		snprintf(v->buf, sizeof(v->buf), "%d", r);
		v->s = v->buf;
		return 0;
	}
}

static int
compare(const struct lfilter *f, const struct lf_node *x, lfilter_get_fn get,
    void *arg)
{
	struct lv a, b;
	double da, db;
	int c;

	if (value(f, x->a, get, arg, &a) < 0 || value(f, x->b, get, arg, &b) < 0)
		return -1;
	if (as_num(a.s, &da) && as_num(b.s, &db))
		c = da < db ? -1 : da > db ? 1 : 0;
	else
		c = strcmp(a.s, b.s);
	switch (x->op) {
	case LF_EQ: return c == 0;
	case LF_NE: return c != 0;
	case LF_LT: return c < 0;
	case LF_LE: return c <= 0;
	case LF_GT: return c > 0;
	default:    return c >= 0;
	}
}

static int
eval(const struct lfilter *f, int i, lfilter_get_fn get, void *arg)
{
	const struct lf_node *x = &f->n[i];
	struct lv v;
	double d;
	int a, b;

	switch (x->op) {
	case LF_OR:
		a = eval(f, x->a, get, arg);
		if (a == 1)
			return 1;
		b = eval(f, x->b, get, arg);
		return b == 1 ? 1 : (a < 0 || b < 0) ? -1 : 0;
	case LF_AND:
		a = eval(f, x->a, get, arg);
		if (a == 0)
			return 0;
		b = eval(f, x->b, get, arg);
		return b == 0 ? 0 : (a < 0 || b < 0) ? -1 : 1;
	case LF_NOT:
		a = eval(f, x->a, get, arg);
		return a < 0 ? -1 : !a;
	case LF_FIELD: case LF_STR: case LF_NUM:
		if (value(f, i, get, arg, &v) < 0)
			return -1;
		if (as_num(v.s, &d))
			return d != 0;
		return v.s[0] != '\0';
	default:
		return compare(f, x, get, arg);
	}
}

int
lfilter_eval(const struct lfilter *f, lfilter_get_fn get, void *arg)
{
	if (f == NULL)
		return 1;
	return eval(f, f->root, get, arg);
}
