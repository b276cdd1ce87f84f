/*
 * rules_scan: which rules' literals a line contains (see rules_int.h), and
 * how far before its literal a rule's regex can start to match.
 *
 * The scanner takes from each literal a few of its rarest 4-byte grams
 * (3 bytes for a 3-byte literal) and hashes every step-th 4-byte window of
 * the line into a 64 Kbit filter (8 KB: it stays in L1).  The windows are independent, so the loop
 * runs at a few cycles a byte with no chain of dependent loads, whatever
 * the number of rules; a set bit (rare: the grams are picked to be rare in
 * log text) walks a short chain and memcmp()s the literal.  Every
 * occurrence of a literal contains its grams at the same offsets, one of
 * them at a window looked at, so nothing is missed, and the earliest
 * start verified is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

#define RSCAN_MULT	2654435761u

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define GRAM3_MASK	0xffffff00u
#else
#define GRAM3_MASK	0x00ffffffu
#endif

static inline uint32_t
load4(const char *p)
{
	uint32_t g;

	memcpy(&g, p, sizeof(g));
	return g;
}

static inline uint32_t
gram_hash(uint32_t g)
{
	return (g * RSCAN_MULT) >> (32 - RSCAN_BITS);
}

/*
 * How common a byte is in log text: the window with the lowest sum wins.
 * Brackets, quotes and the like are rare, upper case less common than
 * lower case, the most frequent letters and the space the most common.
 */
static int
byte_common(unsigned char c)
{
	if (c == ' ')
		return 30;
	if (c != '\0' && strchr("etaoinsrcdlu", c) != NULL)
		return 20;
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))
		return 14;
	if (c != '\0' && strchr(":.-_=,()/", c) != NULL)
		return 10;
	if (c >= 'A' && c <= 'Z')
		return 8;
	return 2;
}

static int
gram_common(const char *g)
{
	return byte_common((unsigned char)g[0]) + byte_common((unsigned char)g[1]) +
	    byte_common((unsigned char)g[2]) + byte_common((unsigned char)g[3]);
}

/* The rarest gram of lit[0..len) at an offset of residue r modulo step. */
static size_t
rarest_gram(const char *lit, size_t len, size_t step, size_t r)
{
	size_t k, best = r;
	int bs = 1 << 30;

	for (k = r; k + 4 <= len; k += step) {
		int sc = gram_common(lit + k);

		if (sc < bs) {
			bs = sc;
			best = k;
		}
	}
	return best;
}

void
rscan_free(struct rscan *s)
{
	free(s->ent);
	free(s->lit);
	free(s->litlen);
	free(s->last4);
	memset(s, 0, sizeof(*s));
}

static void
rscan_add(struct rscan *s, size_t rule, uint32_t gram, size_t off, bool three)
{
	struct rscan_ent *e = &s->ent[s->nent];
	uint16_t *head = three ? s->head3 : s->head4;
	uint64_t *bm = three ? s->bm3 : s->bm4;
	uint32_t h = gram_hash(gram);

	e->rule = (uint16_t)rule;
	e->off = (uint16_t)off;
	e->gram = gram;
	bm[h / 64] |= 1ull << (h % 64);
	e->next = head[h % RSCAN_HEADS];
	head[h % RSCAN_HEADS] = (uint16_t)++s->nent;
}

/*
 * The scan looks at every step-th window only: each literal of 4 bytes
 * or more gives step grams, the rarest at offsets of each residue modulo
 * step (step <= len - 3: each residue has one), so any occurrence has
 * one of them at a multiple of step.
 */
int
rscan_build(struct rscan *s, const char *const *lit, size_t n)
{
	size_t i, j, len, min4 = SIZE_MAX;

	rscan_free(s);
	if (n * RSCAN_STEP_MAX >= UINT16_MAX)
		return -1;
	s->ent = calloc(n ? n * RSCAN_STEP_MAX : 1, sizeof(*s->ent));
	s->lit = calloc(n ? n : 1, sizeof(*s->lit));
	s->litlen = calloc(n ? n : 1, sizeof(*s->litlen));
	s->last4 = calloc(n ? n : 1, sizeof(*s->last4));
	if (s->ent == NULL || s->lit == NULL || s->litlen == NULL ||
	    s->last4 == NULL) {
		rscan_free(s);
		return -1;
	}
	s->nrules = n;
	s->minlen = SIZE_MAX;
	for (i = 0; i < n; i++) {
		len = lit[i] != NULL ? strlen(lit[i]) : 0;
		if (len >= 4 && len < min4)
			min4 = len;
	}
	s->step = min4 == SIZE_MAX ? 1 : min4 - 3;
	if (s->step > RSCAN_STEP_MAX)
		s->step = RSCAN_STEP_MAX;
	for (i = 0; i < n; i++) {
		len = lit[i] != NULL ? strlen(lit[i]) : 0;
		if (len < 3 || len > UINT16_MAX)
			continue;	/* rules.c never lets one through */
		s->lit[i] = lit[i];
		s->litlen[i] = (uint32_t)len;
		s->last4[i] = len >= 4 ? load4(lit[i] + len - 4) : 0;
		if (len < s->minlen)
			s->minlen = len;
		if (len == 3) {
			char g3[4] = { lit[i][0], lit[i][1], lit[i][2], 0 };

			rscan_add(s, i, load4(g3) & GRAM3_MASK, 0, true);
			s->n3++;
			continue;
		}
		for (j = 0; j < s->step; j++) {
			size_t k = rarest_gram(lit[i], len, s->step, j);

			rscan_add(s, i, load4(lit[i] + k), k, false);
		}
	}
	return 0;
}

/* The gram g hashed to h at position i: verify the chain's literals. */
static bool
rscan_hit(const struct rscan *s, const uint16_t *head, uint32_t g, uint32_t h,
    const char *p, size_t len, size_t i, uint64_t *cand, uint32_t *first)
{
	bool any = false;
	uint16_t k;

	for (k = head[h % RSCAN_HEADS]; k != 0; k = s->ent[k - 1].next) {
		const struct rscan_ent *e = &s->ent[k - 1];
		size_t r = e->rule, st;

		bool seen = (cand[r / 64] & (1ull << (r % 64))) != 0;

		if (e->gram != g || i < e->off)
			continue;
		st = i - e->off;
		if ((seen && st >= first[r]) || st + s->litlen[r] > len ||
		    (s->litlen[r] >= 4 &&
		    load4(p + st + s->litlen[r] - 4) != s->last4[r]) ||
		    memcmp(p + st, s->lit[r], s->litlen[r]) != 0)
			continue;
		/* With step > 1 a later window may hold an earlier start. */
		cand[r / 64] |= 1ull << (r % 64);
		first[r] = (uint32_t)st;
		any = true;
	}
	return any;
}

bool
rscan_find(const struct rscan *s, const char *p, size_t len, uint64_t *cand,
    size_t nwords, uint32_t *first)
{
	const uint64_t *bm4 = s->bm4, *bm3 = s->bm3;
	bool any = false;
	size_t i, step = s->step;

	memset(cand, 0, nwords * sizeof(uint64_t));
	if (s->nent == 0 || len < s->minlen || len > UINT32_MAX)
		return false;
	for (i = 0; i + 4 <= len; i += step) {
		uint32_t g = load4(p + i), h = gram_hash(g);

		if ((bm4[h / 64] >> (h % 64)) & 1)
			any |= rscan_hit(s, s->head4, g, h, p, len, i, cand, first);
	}
	if (s->n3 == 0)
		return any;
	for (i = 0; i + 3 <= len; i++) {
		char w[4] = { p[i], p[i + 1], p[i + 2], 0 };
		uint32_t g = load4(w) & GRAM3_MASK, h = gram_hash(g);

		if ((bm3[h / 64] >> (h % 64)) & 1)
			any |= rscan_hit(s, s->head3, g, h, p, len, i, cand, first);
	}
	return any;
}

/* ---- how far before its literal a match can start ------------------ */

#define ML_INF	(1L << 40)	/* unbounded, or not understood */

struct rxp {
	const char	*s;
	size_t		 i;
	bool		 bad;		/* a construct we do not reason about */
};

enum quant { Q_ONE, Q_OPT, Q_MORE };	/* exactly once, may be absent, 1+ */

static long
ml_add(long a, long b)
{
	return a >= ML_INF || b >= ML_INF || a + b >= ML_INF ? ML_INF : a + b;
}

static long
ml_mul(long a, long n)
{
	if (a == 0 || n == 0)
		return 0;
	if (a >= ML_INF || n >= ML_INF || a > ML_INF / n)
		return ML_INF;
	return a * n;
}

static bool
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* p->s[p->i] is '[': step over the class (one byte wide). */
static void
skip_class(struct rxp *p)
{
	const char *s = p->s;
	size_t i = p->i + 1;

	if (s[i] == '^')
		i++;
	if (s[i] == ']')
		i++;
	while (s[i] != '\0' && s[i] != ']') {
		if (s[i] == '\\' && s[i + 1] != '\0') {
			i += 2;
		} else if (s[i] == '[' && s[i + 1] == ':') {
			const char *e = strstr(s + i + 2, ":]");

			if (e == NULL)
				break;
			i = (size_t)(e - s) + 2;
		} else {
			i++;
		}
	}
	if (s[i] != ']')
		p->bad = true;
	else
		p->i = i + 1;
}

/* A group name ending with close: step over it, or give up. */
static size_t
skip_name(struct rxp *p, size_t i, char close)
{
	size_t j = i;

	while (is_alnum(p->s[j]) || p->s[j] == '_')
		j++;
	if (j == i || p->s[j] != close)
		p->bad = true;
	return j + 1;
}

static long parse_alt(struct rxp *p);

static long
parse_group(struct rxp *p)
{
	const char *s = p->s;
	size_t i = p->i + 1;
	bool zero = false;
	long m;

	if (s[i] == '*') {
		p->bad = true;			/* (*VERB) */
		return ML_INF;
	}
	if (s[i] == '?') {
		char a = s[i + 1], b = s[i + 2];

		if (a == ':' || a == '>') {
			i += 2;
		} else if (a == '=' || a == '!') {
			i += 2;
			zero = true;
		} else if (a == '<' && (b == '=' || b == '!')) {
			i += 3;
			zero = true;
		} else if (a == '<') {
			i = skip_name(p, i + 2, '>');
		} else if (a == 'P' && b == '<') {
			i = skip_name(p, i + 3, '>');
		} else if (a == '\'') {
			i = skip_name(p, i + 2, '\'');
		} else {
			p->bad = true;	/* options, comments, recursion, ... */
		}
		if (p->bad)
			return ML_INF;
	}
	p->i = i;
	m = parse_alt(p);
	if (p->bad || s[p->i] != ')') {
		p->bad = true;
		return ML_INF;
	}
	p->i++;
	return zero ? 0 : m;
}

/* One atom's width at most; *lit is its byte when it is a plain one. */
static long
parse_atom(struct rxp *p, int *lit)
{
	const char *s = p->s;
	char c = s[p->i], d;

	*lit = -1;
	switch (c) {
	case '\\':
		d = s[p->i + 1];
		p->i += 2;
		if (d == '\0' || (is_alnum(d) && strchr("dDwWsShHvVbB", d) == NULL)) {
			p->bad = true;
			return ML_INF;
		}
		if (d == 'b' || d == 'B')
			return 0;
		if (!is_alnum(d))
			*lit = (unsigned char)d;
		return 1;
	case '[':
		skip_class(p);
		return 1;
	case '.':
		p->i++;
		return 1;
	case '^':
	case '$':
		p->i++;
		return 0;
	case '(':
		return parse_group(p);
	case '*':
	case '+':
	case '?':
	case '{':
	case ')':
	case '|':
	case '\0':
		p->bad = true;
		return ML_INF;
	default:
		p->i++;
		*lit = (unsigned char)c;
		return 1;
	}
}

static bool
parse_num(const char *s, size_t *i, long *out)
{
	size_t j = *i;
	long v = 0;

	while (s[j] >= '0' && s[j] <= '9' && v < 100000)
		v = v * 10 + (s[j++] - '0');
	if (j == *i || (s[j] >= '0' && s[j] <= '9'))
		return false;
	*i = j;
	*out = v;
	return true;
}

/* A quantifier after an atom of width m: the width it makes. */
static long
parse_quant(struct rxp *p, long m, enum quant *q)
{
	const char *s = p->s;
	size_t i = p->i;
	long lo = 1, hi = 1;

	*q = Q_ONE;
	if (s[i] == '?' || s[i] == '*' || s[i] == '+') {
		lo = s[i] == '+' ? 1 : 0;
		hi = s[i] == '?' ? 1 : ML_INF;
		i++;
	} else if (s[i] == '{') {
		i++;
		if (!parse_num(s, &i, &lo)) {
			p->bad = true;
			return ML_INF;
		}
		hi = lo;
		if (s[i] == ',') {
			i++;
			hi = ML_INF;
			if (s[i] != '}' && !parse_num(s, &i, &hi))
				p->bad = true;
		}
		if (p->bad || s[i] != '}' || hi < lo) {
			p->bad = true;
			return ML_INF;
		}
		i++;
	} else {
		return m;
	}
	if (s[i] == '?' || s[i] == '+')
		i++;		/* lazy or possessive: the same widths */
	if (s[i] == '?' || s[i] == '*' || s[i] == '+' || s[i] == '{') {
		p->bad = true;
		return ML_INF;
	}
	p->i = i;
	*q = lo == 0 ? Q_OPT : (lo == 1 && hi == 1 ? Q_ONE : Q_MORE);
	return ml_mul(m, hi);
}

/* Branches up to a ')' or the end: the widest. */
static long
parse_alt(struct rxp *p)
{
	long best = 0, cur = 0, m;
	enum quant q;
	int lit;

	while (!p->bad && p->s[p->i] != '\0' && p->s[p->i] != ')') {
		if (p->s[p->i] == '|') {
			best = cur > best ? cur : best;
			cur = 0;
			p->i++;
			continue;
		}
		m = parse_atom(p, &lit);
		if (!p->bad)
			m = parse_quant(p, m, &q);
		cur = ml_add(cur, m);
	}
	return p->bad ? ML_INF : (cur > best ? cur : best);
}

struct rx_item {
	size_t		 at;		/* where it starts in the pattern */
	long		 width;		/* at most */
	int		 lit;		/* its byte, or -1 */
	enum quant	 q;
};

/*
 * The top level of re as items, in v (strlen(re) of them at most); -1
 * unless all of it is understood and it has no top-level |.
 */
static int
top_items(const char *re, struct rx_item *v, size_t *n)
{
	struct rxp p = { re, 0, false };

	*n = 0;
	if (strstr(re, "\\Q") != NULL || strstr(re, "\\E") != NULL)
		return -1;
	while (re[p.i] != '\0') {
		struct rx_item *it = &v[*n];

		if (re[p.i] == '|' || re[p.i] == ')')
			return -1;
		it->at = p.i;
		it->width = parse_atom(&p, &it->lit);
		if (!p.bad)
			it->width = parse_quant(&p, it->width, &it->q);
		if (p.bad)
			return -1;
		(*n)++;
	}
	return 0;
}

/*
 * In v[from..n): the first run of plain bytes that each occur exactly
 * once (a byte with + occurs at least once: it ends the run) holding lit
 * (NULL: the longest run), as the widest the items before it (from
 * v[from]) can be, and its place and length in *at, *len.  -1 if none.
 */
static long
find_run(const struct rx_item *v, size_t from, size_t n, const char *lit,
    char *run, size_t runmax, size_t *len)
{
	size_t ll = lit != NULL ? strlen(lit) : 0, rl = 0, i, bl = 0;
	long pre = 0, runpre = 0, best = -1;
	char cur[512];

	for (i = from; i < n; i++) {
		if (v[i].lit >= 0 && v[i].q != Q_OPT) {
			if (rl == 0)
				runpre = pre;
			if (rl >= sizeof(cur))
				return -1;
			cur[rl++] = (char)v[i].lit;
			if (lit != NULL && rl >= ll &&
			    memcmp(cur + rl - ll, lit, ll) == 0) {
				*len = ll;
				return runpre >= ML_INF ? -1 : runpre + (long)(rl - ll);
			}
			if (lit == NULL && rl > bl && rl < runmax &&
			    runpre < ML_INF) {
				memcpy(run, cur, rl);
				bl = rl;
				best = runpre;
			}
			if (v[i].q == Q_MORE)
				rl = 0;
		} else {
			rl = 0;
		}
		pre = ml_add(pre, v[i].width);
	}
	if (lit != NULL || bl == 0)
		return -1;
	run[bl] = '\0';
	*len = bl;
	return best;
}

/*
 * Every match holds lit after items at most the returned width wide: the
 * first top-level run that holds it, when what precedes is bounded.
 */
long
rules_regex_prefix(const char *re, const char *lit)
{
	struct rx_item *v = malloc((strlen(re) + 1) * sizeof(*v));
	size_t n, len;
	long pre = -1;

	if (v == NULL || strlen(lit) == 0)
		goto out;
	if (top_items(re, v, &n) == 0)
		pre = find_run(v, 0, n, lit, NULL, 0, &len);
out:
	free(v);
	return pre;
}

int
rules_regex_tail(const char *re, size_t *split, char *anchor, size_t alen,
    long *pre, bool *lit_only)
{
	struct rx_item *v = malloc((strlen(re) + 1) * sizeof(*v));
	size_t n, u, i, len = 0, rl = 0, last = 0;
	int rc = -1;

	if (v == NULL || top_items(re, v, &n) != 0)
		goto out;
	/* Split after the last unbounded item before the last fixed run. */
	for (i = 0; i < n; i++) {
		rl = v[i].lit >= 0 && v[i].q != Q_OPT ? rl + 1 : 0;
		if (rl == 3)
			last = i - 2;
		if (v[i].lit >= 0 && v[i].q == Q_MORE)
			rl = 0;
	}
	for (u = n, i = 0; i < last; i++)
		if (v[i].width >= ML_INF)
			u = i;
	if (u == n)
		goto out;
	*pre = find_run(v, u + 1, n, NULL, anchor, alen, &len);
	if (*pre < 0 || len < 3)
		goto out;
	*split = v[u + 1].at;
	*lit_only = true;
	for (i = u + 1; i < n; i++)
		if (v[i].lit < 0 || v[i].q != Q_ONE)
			*lit_only = false;
	rc = 0;
out:
	free(v);
	return rc;
}
