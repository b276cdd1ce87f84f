/*
 * json: the string escaper and the small reader (see json.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "utf8.h"

/* ---- writing ----------------------------------------------------------- */

/* 0: copy as is; 1: escape; 2: start of a multi-byte UTF-8 sequence */
static const unsigned char json_class[256] = {
	1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
	0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
	0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,
	0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
	2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
	2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
	2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
	2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
};

/* No byte of w needs attention: none < 0x20, '"', '\\' or >= 0x80
 * (the classic "has zero byte" bit trick, eight bytes at a time). */
static inline int
word_plain(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t highs = 0x8080808080808080ULL;
	uint64_t lt = (w - ones * 0x20) & ~w & highs;
	uint64_t q = w ^ (ones * 0x22), bs = w ^ (ones * 0x5c);

	q = (q - ones) & ~q & highs;
	bs = (bs - ones) & ~bs & highs;
	return ((lt | q | bs | (w & highs)) == 0);
}

char *
json_esc(char *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	const unsigned char *run;
	uint64_t w;
	size_t k;

	while (p < end) {
		run = p;
		while (end - p >= 8) {
			memcpy(&w, p, 8);
			if (!word_plain(w))
				break;
			p += 8;
		}
		while (p < end && json_class[*p] == 0)
			p++;
		if (p > run) {
			memcpy(o, run, (size_t)(p - run));
			o += p - run;
		}
		if (p >= end)
			break;
		if (json_class[*p] == 2) {
			k = utf8_seq(p, (size_t)(end - p));
			if (k > 0) {
				memcpy(o, p, k);
				o += k;
				p += k;
			} else {
				memcpy(o, "\xef\xbf\xbd", 3);
				o += 3;
				p++;
			}
			continue;
		}
		*o++ = '\\';
		switch (*p) {
		case '"':	*o++ = '"'; break;
		case '\\':	*o++ = '\\'; break;
		case '\n':	*o++ = 'n'; break;
		case '\r':	*o++ = 'r'; break;
		case '\t':	*o++ = 't'; break;
		case '\b':	*o++ = 'b'; break;
		case '\f':	*o++ = 'f'; break;
		default:
			*o++ = 'u'; *o++ = '0'; *o++ = '0';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
			break;
		}
		p++;
	}
	return o;
}

/* Input bytes escaped per piece when the whole string does not fit the
 * buffer's worst case (a buffer close to its limit). */
#define JSON_PIECE	512

int
json_put_str(struct buf *b, const char *s, size_t n)
{
	char piece[JSON_ESC_MAX(JSON_PIECE)], *o;
	size_t len0 = b->len, k;

	if (n <= (SIZE_MAX - 3) / 6 && buf_reserve(b, JSON_ESC_MAX(n) + 2) == 0) {
		o = b->data + b->len;
		*o++ = '"';
		o = json_esc(o, s, n);
		*o++ = '"';
		b->len = (size_t)(o - b->data);
		b->data[b->len] = '\0';
		return 0;
	}
	/* In pieces, each cut at a sequence start (utf8_cut): the escaping
	 * of a piece is what it is in the whole string. */
	if (buf_putc(b, '"') == -1)
		return -1;
	while (n > 0) {
		k = utf8_cut(s, n, JSON_PIECE);
		if (k == 0)	/* only continuation bytes: no sequence to split */
			k = JSON_PIECE;
		o = json_esc(piece, s, k);
		if (buf_append(b, piece, (size_t)(o - piece)) == -1)
			goto full;
		s += k;
		n -= k;
	}
	if (buf_putc(b, '"') == 0)
		return 0;
full:
	b->len = len0;
	if (b->data)
		b->data[len0] = '\0';
	return -1;
}

/* ---- reading: a small tolerant JSON reader ---------------------------------------- */

struct jp {
	const char	*p, *end;
	struct json_doc	*doc;
	int		 cap;
	char		*err;
	size_t		 errlen;
};

static void
jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' ||
	    *j->p == '\r' || *j->p == ','))
		j->p++;
}

static int
jp_node(struct jp *j, enum json_type t, const char *key, size_t keylen)
{
	struct json_doc *d = j->doc;
	struct json_node *nn;

	if (d->count >= JSON_MAX_NODES) {
		snprintf(j->err, j->errlen, "more than %d JSON values", JSON_MAX_NODES);
		return -1;
	}
	if (d->count == j->cap) {
		int nc = j->cap ? j->cap * 2 : 64;

		if (nc > JSON_MAX_NODES)
			nc = JSON_MAX_NODES;
		nn = realloc(d->n, (size_t)nc * sizeof(*nn));
		if (nn == NULL) {
			snprintf(j->err, j->errlen, "out of memory");
			return -1;
		}
		d->n = nn;
		j->cap = nc;
	}
	nn = &d->n[d->count];
	memset(nn, 0, sizeof(*nn));
	nn->type = t;
	nn->key = key;
	nn->keylen = keylen;
	nn->child = -1;
	nn->next = -1;
	return d->count++;
}

/* On the opening quote; leaves j->p after the closing one. */
static int
jp_string(struct jp *j, const char **s, size_t *n)
{
	const char *q = j->p + 1;

	while (q < j->end && *q != '"') {
		if (*q == '\\')
			q++;
		q++;
	}
	if (q >= j->end) {
		snprintf(j->err, j->errlen, "unterminated JSON string");
		return -1;
	}
	*s = j->p + 1;
	*n = (size_t)(q - *s);
	j->p = q + 1;
	return 0;
}

static int jp_value(struct jp *, int depth, const char *key, size_t keylen);

static int
jp_container(struct jp *j, int depth, const char *key, size_t keylen, bool obj)
{
	int	 me, last = -1, c;
	char	 close = obj ? '}' : ']';

	me = jp_node(j, obj ? JSON_OBJ : JSON_ARR, key, keylen);
	if (me < 0)
		return -1;
	j->p++;
	for (;;) {
		const char *k = NULL;
		size_t	 kn = 0;

		jp_ws(j);
		if (j->p >= j->end) {
			snprintf(j->err, j->errlen, "JSON ends inside %s",
			    obj ? "an object" : "an array");
			return -1;
		}
		if (*j->p == close) {
			j->p++;
			return me;
		}
		if (obj) {
			if (*j->p != '"') {
				snprintf(j->err, j->errlen, "JSON member name expected");
				return -1;
			}
			if (jp_string(j, &k, &kn) == -1)
				return -1;
			while (j->p < j->end && isspace((unsigned char)*j->p))
				j->p++;
			if (j->p >= j->end || *j->p != ':') {
				snprintf(j->err, j->errlen, "':' expected in JSON object");
				return -1;
			}
			j->p++;
		}
		c = jp_value(j, depth + 1, k, kn);
		if (c < 0)
			return -1;
		if (last < 0)
			j->doc->n[me].child = c;
		else
			j->doc->n[last].next = c;
		last = c;
	}
}

static int
jp_value(struct jp *j, int depth, const char *key, size_t keylen)
{
	const char *s;
	size_t	 n;
	int	 me;

	if (depth > JSON_MAX_DEPTH) {
		snprintf(j->err, j->errlen, "JSON nested deeper than %d", JSON_MAX_DEPTH);
		return -1;
	}
	while (j->p < j->end && isspace((unsigned char)*j->p))
		j->p++;
	if (j->p >= j->end) {
		snprintf(j->err, j->errlen, "JSON value expected");
		return -1;
	}
	switch (*j->p) {
	case '{':
		return jp_container(j, depth, key, keylen, true);
	case '[':
		return jp_container(j, depth, key, keylen, false);
	case '"':
		if (jp_string(j, &s, &n) == -1)
			return -1;
		me = jp_node(j, JSON_STR, key, keylen);
		break;
	default:
		s = j->p;
		while (j->p < j->end && (isalnum((unsigned char)*j->p) ||
		    *j->p == '-' || *j->p == '+' || *j->p == '.'))
			j->p++;
		n = (size_t)(j->p - s);
		if (n == 4 && memcmp(s, "true", 4) == 0)
			me = jp_node(j, JSON_BOOL, key, keylen);
		else if (n == 5 && memcmp(s, "false", 5) == 0)
			me = jp_node(j, JSON_BOOL, key, keylen);
		else if (n == 4 && memcmp(s, "null", 4) == 0)
			me = jp_node(j, JSON_NULL, key, keylen);
		else if (n > 0 && (isdigit((unsigned char)*s) || *s == '-'))
			me = jp_node(j, JSON_NUM, key, keylen);
		else {
			snprintf(j->err, j->errlen, "unexpected character in JSON");
			return -1;
		}
		break;
	}
	if (me < 0)
		return -1;
	j->doc->n[me].s = s;
	j->doc->n[me].len = n;
	return me;
}

int
json_parse(const char *text, size_t len, struct json_doc *doc, char *err,
    size_t errlen)
{
	struct jp j;

	memset(doc, 0, sizeof(*doc));
	if (len > JSON_MAX_INPUT) {
		snprintf(err, errlen, "JSON larger than %u bytes", JSON_MAX_INPUT);
		return -1;
	}
	memset(&j, 0, sizeof(j));
	j.p = text;
	j.end = text + len;
	j.doc = doc;
	j.err = err;
	j.errlen = errlen;
	while (j.p < j.end && *j.p != '{' && *j.p != '[') {
		if (!isspace((unsigned char)*j.p)) {
			snprintf(err, errlen, "not JSON");
			return -1;
		}
		j.p++;
	}
	if (j.p >= j.end) {
		snprintf(err, errlen, "empty output");
		return -1;
	}
	if (jp_value(&j, 0, NULL, 0) < 0) {
		json_free(doc);
		return -1;
	}
	return 0;
}

void
json_free(struct json_doc *doc)
{
	free(doc->n);
	memset(doc, 0, sizeof(*doc));
}

int
json_get(const struct json_doc *d, int at, const char *path)
{
	const char *comp = path;

	if (d == NULL || at < 0 || at >= d->count)
		return -1;
	while (*comp != '\0') {
		const char *dot = strchr(comp, '.');
		size_t	 cl = dot ? (size_t)(dot - comp) : strlen(comp);
		int	 c;

		if (d->n[at].type != JSON_OBJ)
			return -1;
		for (c = d->n[at].child; c >= 0; c = d->n[c].next)
			if (d->n[c].keylen == cl && memcmp(d->n[c].key, comp, cl) == 0)
				break;
		if (c < 0)
			return -1;
		at = c;
		comp += cl;
		if (*comp == '.')
			comp++;
	}
	return at;
}

bool
json_num(const struct json_doc *d, int node, long long *out)
{
	char	 tmp[40], *end;
	const struct json_node *nd;
	double	 dv;

	if (d == NULL || node < 0 || node >= d->count)
		return false;
	nd = &d->n[node];
	if ((nd->type != JSON_NUM && nd->type != JSON_STR) || nd->len == 0 ||
	    nd->len >= sizeof(tmp))
		return false;
	memcpy(tmp, nd->s, nd->len);
	tmp[nd->len] = '\0';
	errno = 0;
	*out = strtoll(tmp, &end, 10);
	if (errno == 0 && end != tmp && *end == '\0')
		return true;
	errno = 0;
	dv = strtod(tmp, &end);
	if (errno != 0 || end == tmp || *end != '\0' || !isfinite(dv) ||
	    dv > 9.0e18 || dv < -9.0e18)
		return false;
	*out = (long long)dv;
	return true;
}

bool
json_bool(const struct json_doc *d, int node, bool *out)
{
	if (d == NULL || node < 0 || node >= d->count || d->n[node].type != JSON_BOOL)
		return false;
	*out = d->n[node].len == 4;
	return true;
}

bool
json_str(const struct json_doc *d, int node, char *out, size_t outlen)
{
	const struct json_node *nd;
	size_t	 i, o = 0;

	if (outlen == 0 || d == NULL || node < 0 || node >= d->count)
		return false;
	nd = &d->n[node];
	if (nd->type != JSON_STR)
		return false;
	for (i = 0; i < nd->len && o + 1 < outlen; i++) {
		char c = nd->s[i];

		if (c == '\\' && i + 1 < nd->len) {
			c = nd->s[++i];
			switch (c) {
			case 'n': case 't': case 'r': case 'b': case 'f':
				c = ' ';
				break;
			case 'u':
				i += 4 < nd->len - i ? 4 : nd->len - i - 1;
				c = '?';
				break;
			default:
				break;
			}
		}
		if ((unsigned char)c < 0x20)
			c = ' ';
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}


bool
json_str_is(const struct json_doc *d, int node, const char *s)
{
	size_t n = strlen(s);

	if (d == NULL || node < 0 || node >= d->count || d->n[node].type != JSON_STR)
		return false;
	return d->n[node].len == n && memcmp(d->n[node].s, s, n) == 0;
}

/* ---- reading: a string with every escape undone ---------------------------- */

static int
hex4(const char *s, size_t n, uint32_t *v)
{
	size_t	 i;

	if (n < 4)
		return -1;
	*v = 0;
	for (i = 0; i < 4; i++) {
		int c = (unsigned char)s[i];

		if (!isxdigit(c))
			return -1;
		*v = *v * 16 + (uint32_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
	}
	return 0;
}

/* The code point cp as UTF-8 at o (room for 4); returns the length. */
static size_t
cp_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At s[0..n) just after "\u": the code point (a pair joined, a lone
 * surrogate or bad hex as U+FFFD); returns the bytes used after "\u". */
static size_t
u_escape(const char *s, size_t n, uint32_t *cp)
{
	uint32_t lo;

	if (hex4(s, n, cp) == -1) {
		*cp = 0xfffd;
		return 0;
	}
	if (*cp >= 0xdc00 && *cp <= 0xdfff) {
		*cp = 0xfffd;
		return 4;
	}
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 4;
	if (n >= 10 && s[4] == '\\' && s[5] == 'u' && hex4(s + 6, n - 6, &lo) == 0 &&
	    lo >= 0xdc00 && lo <= 0xdfff) {
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
		return 10;
	}
	*cp = 0xfffd;
	return 4;
}

bool
json_str_buf(const struct json_doc *d, int node, struct buf *b)
{
	const struct json_node *nd;
	size_t	 i = 0, run, len0 = b->len;
	char	 u[4], c;
	uint32_t cp;

	if (d == NULL || node < 0 || node >= d->count || d->n[node].type != JSON_STR)
		return false;
	nd = &d->n[node];
	while (i < nd->len) {
		for (run = i; i < nd->len && nd->s[i] != '\\'; i++)
			;
		if (i > run && buf_append(b, nd->s + run, i - run) == -1)
			goto full;
		if (i + 1 >= nd->len) {
			i = nd->len;	/* a trailing lone backslash: dropped */
			break;
		}
		c = nd->s[i + 1];
		i += 2;
		switch (c) {
		case 'n':	c = '\n'; break;
		case 't':	c = '\t'; break;
		case 'r':	c = '\r'; break;
		case 'b':	c = '\b'; break;
		case 'f':	c = '\f'; break;
		case 'u':
			i += u_escape(nd->s + i, nd->len - i, &cp);
			if (buf_append(b, u, cp_put(u, cp)) == -1)
				goto full;
			continue;
		default:
			break;
		}
		if (buf_putc(b, c) == -1)
			goto full;
	}
	return true;
full:
	b->len = len0;
	if (b->data)
		b->data[len0] = '\0';
	return false;
}

/* ---- walking a document without building it -------------------------------- */

int
json_walk_init(struct json_walk *w, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p >= end || (*p != '{' && *p != '['))
		return -1;
	w->obj = *p == '{';
	w->done = false;
	w->p = p + 1;
	w->end = end;
	return 0;
}

/* After the opening quote at p: just past the closing one, or NULL. */
static const char *
walk_string(const char *p, const char *end)
{
	while (p < end && *p != '"')
		p += *p == '\\' ? 2 : 1;
	return p < end ? p + 1 : NULL;
}

/* The end of the value starting at p (not whitespace), or NULL: brackets
 * must pair up, nesting at most JSON_MAX_DEPTH. */
static const char *
walk_value(const char *p, const char *end)
{
	char	 open[JSON_MAX_DEPTH];
	int	 depth = 0;

	if (*p == '"')
		return walk_string(p + 1, end);
	if (*p != '{' && *p != '[') {
		const char *s = p;

		while (p < end && (isalnum((unsigned char)*p) || *p == '-' ||
		    *p == '+' || *p == '.'))
			p++;
		return p > s ? p : NULL;
	}
	while (p < end) {
		if (*p == '"') {
			p = walk_string(p + 1, end);
			if (p == NULL)
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[') {
			if (depth == JSON_MAX_DEPTH)
				return NULL;
			open[depth++] = *p == '{' ? '}' : ']';
		} else if (*p == '}' || *p == ']') {
			if (open[--depth] != *p)
				return NULL;
			if (depth == 0)
				return p + 1;
		}
		p++;
	}
	return NULL;
}

int
json_walk_next(struct json_walk *w, const char **key, size_t *keylen,
    const char **val, size_t *vallen)
{
	const char *q;

	*key = NULL;
	*keylen = 0;
	if (w->done)
		return 0;
	while (w->p < w->end && (isspace((unsigned char)*w->p) || *w->p == ','))
		w->p++;
	if (w->p >= w->end)
		return -1;
	if (*w->p == (w->obj ? '}' : ']')) {
		w->done = true;
		return 0;
	}
	if (w->obj) {
		if (*w->p != '"')
			return -1;
		q = walk_string(w->p + 1, w->end);
		if (q == NULL)
			return -1;
		*key = w->p + 1;
		*keylen = (size_t)(q - 1 - *key);
		for (w->p = q; w->p < w->end && isspace((unsigned char)*w->p); w->p++)
			;
		if (w->p >= w->end || *w->p != ':')
			return -1;
		for (w->p++; w->p < w->end && isspace((unsigned char)*w->p); w->p++)
			;
		if (w->p >= w->end)
			return -1;
	}
	q = walk_value(w->p, w->end);
	if (q == NULL)
		return -1;
	*val = w->p;
	*vallen = (size_t)(q - w->p);
	w->p = q;
	return 1;
}
