/*
 * esxcli: one tolerant parser for the three shapes of esxcli's default
 * output (table, block, keyed list) plus its keyvalue formatter, and the
 * runner that prefers localcli.  See esxcli.h for the shapes.
 *
 * The text comes from a command we do not control (and in tests from a
 * fuzzer), so the parser works on explicit lengths, never trusts a column
 * position to be inside a line, and has a hard bound on everything it
 * allocates.
 */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../agent/config/config_host.h"
#include "esxcli.h"
#include "../../agent/lib/buf.h"
#include "../../agent/config/config.h"
#include "../../agent/lib/exec.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/platform.h"
#include "../../agent/lib/str.h"

#define ESX_MAX_DEPTH	8	/* nesting of "Parent:" blocks we follow */
#define ESX_MAX_ARGS	32

/* One input line: trailing blanks (and the \r of CRLF) already cut off. */
struct line {
	const char	*p;
	size_t		 len;
	size_t		 indent;	/* leading spaces/tabs */
};

struct parser {
	struct line	*lines;
	size_t		 nlines;
	struct esx_out	*out;
	char		*err;
	size_t		 errlen;
	size_t		 budget;	/* bytes of records we may still allocate */
};

static bool
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The first line of what went wrong, quoted in err (cut to fit). */
static void
set_err(struct parser *ps, const char *what, const struct line *l)
{
	size_t n;

	if (ps->err == NULL || ps->errlen == 0)
		return;
	if (l == NULL) {
		snprintf(ps->err, ps->errlen, "%s", what);
		return;
	}
	n = l->len - l->indent;
	if (n > 200)
		n = 200;
	snprintf(ps->err, ps->errlen, "%s%s%.*s", what, *what ? ": " : "",
	    (int)n, l->p + l->indent);
}

/*
 * Table rows repeat the header names, so the parsed form can be larger
 * than the text; a budget proportional to the input (real output stays
 * under 3x) keeps a hostile header of many long names from making it
 * quadratic.
 */
static int
charge(struct parser *ps, size_t n)
{
	if (n > ps->budget) {
		set_err(ps, "output too large to parse", NULL);
		return -1;
	}
	ps->budget -= n;
	return 0;
}

/*
 * Arrays in esx_rec/esx_out carry no capacity: they grow to the next
 * power of two (at least 8) whenever n reaches one, so the capacity is
 * always implied by n.
 */
static bool
needs_grow(size_t n)
{
	return n == 0 || (n >= 8 && (n & (n - 1)) == 0);
}

static size_t
grown(size_t n)
{
	return n == 0 ? 8 : n * 2;
}

static struct esx_rec *
add_rec(struct parser *ps, const char *title, size_t tlen)
{
	struct esx_out *o = ps->out;
	struct esx_rec *r;

	if (o->n >= ESX_MAX_RECS) {
		set_err(ps, "too many records", NULL);
		return NULL;
	}
	if (charge(ps, sizeof(*r) + tlen + 1) == -1)
		return NULL;
	if (needs_grow(o->n)) {
		r = reallocarray(o->recs, grown(o->n), sizeof(*r));
		if (r == NULL)
			goto nomem;
		o->recs = r;
	}
	r = &o->recs[o->n];
	memset(r, 0, sizeof(*r));
	r->title = strndup(title, tlen);
	if (r->title == NULL)
		goto nomem;
	o->n++;
	return r;
nomem:
	set_err(ps, "out of memory", NULL);
	return NULL;
}

static int
add_kv(struct parser *ps, struct esx_rec *r, const char *k, size_t klen,
    const char *v, size_t vlen)
{
	char **nk, **nv, *ks, *vs;

	if (r->n >= ESX_MAX_KEYS) {
		set_err(ps, "too many keys in one record", NULL);
		return -1;
	}
	if (charge(ps, klen + vlen + 2 + 2 * sizeof(char *)) == -1)
		return -1;
	if (needs_grow(r->n)) {
		nk = reallocarray(r->keys, grown(r->n), sizeof(*nk));
		if (nk == NULL)
			goto nomem;
		r->keys = nk;
		nv = reallocarray(r->vals, grown(r->n), sizeof(*nv));
		if (nv == NULL)
			goto nomem;
		r->vals = nv;
	}
	ks = strndup(k, klen);
	vs = strndup(v, vlen);
	if (ks == NULL || vs == NULL) {
		free(ks);
		free(vs);
		goto nomem;
	}
	r->keys[r->n] = ks;
	r->vals[r->n] = vs;
	r->n++;
	return 0;
nomem:
	set_err(ps, "out of memory", NULL);
	return -1;
}

/* Split text into lines; blank-only lines keep len 0. */
static int
split_lines(struct parser *ps, const char *text, size_t len)
{
	size_t i, n = 1, start;
	struct line *l;

	for (i = 0; i < len; i++)
		if (text[i] == '\n')
			n++;
	ps->lines = calloc(n, sizeof(*ps->lines));
	if (ps->lines == NULL) {
		set_err(ps, "out of memory", NULL);
		return -1;
	}
	start = 0;
	for (i = 0; i <= len; i++) {
		if (i < len && text[i] != '\n')
			continue;
		l = &ps->lines[ps->nlines++];
		l->p = text + start;
		l->len = i - start;
		while (l->len > 0 && is_blank((unsigned char)l->p[l->len - 1]))
			l->len--;
		while (l->indent < l->len && (l->p[l->indent] == ' ' ||
		    l->p[l->indent] == '\t'))
			l->indent++;
		start = i + 1;
	}
	return 0;
}

static bool
is_dash_line(const struct line *l)
{
	size_t i;
	bool dash = false;

	for (i = 0; i < l->len; i++) {
		if (l->p[i] == '-')
			dash = true;
		else if (l->p[i] != ' ')
			return false;
	}
	return dash;
}

/* ---- tables ---------------------------------------------------------- */

/*
 * Cut one line at the column starts.  Values are cut at the dash
 * boundaries; the one tolerance is for a right-aligned value wider than its
 * dashes, which then starts left of its column: when a word straddles a
 * boundary, the cut moves back to the space before that word.
 */
static void
cut_line(const struct line *l, const size_t *starts, size_t ncols,
    size_t *cuts)
{
	size_t i, c;

	cuts[0] = 0;
	for (i = 1; i < ncols; i++) {
		c = starts[i];
		if (c > l->len)
			c = l->len;
		if (c < cuts[i - 1])
			c = cuts[i - 1];
		if (c > cuts[i - 1] && c < l->len && l->p[c] != ' ' &&
		    l->p[c - 1] != ' ') {
			size_t b = c;

			while (b > cuts[i - 1] && l->p[b - 1] != ' ')
				b--;
			if (b > cuts[i - 1])
				c = b;
		}
		cuts[i] = c;
	}
	cuts[ncols] = l->len;
}

static void
cell(const struct line *l, const size_t *cuts, size_t i, const char **p,
    size_t *len)
{
	*p = l->p + cuts[i];
	*len = cuts[i + 1] - cuts[i];
	str_trim_span(p, len);
}

static int
parse_table(struct parser *ps, size_t hdr)
{
	const struct line *h = &ps->lines[hdr], *d = &ps->lines[hdr + 1];
	size_t starts[ESX_MAX_COLS] = { 0 }, cuts[ESX_MAX_COLS + 1];
	char *names[ESX_MAX_COLS];
	size_t ncols = 0, i, c, r;
	int rc = -1;

	for (i = 0; i < d->len; i++) {
		if (d->p[i] != '-' || (i > 0 && d->p[i - 1] == '-'))
			continue;
		if (ncols == ESX_MAX_COLS) {
			set_err(ps, "too many table columns", NULL);
			return -1;
		}
		starts[ncols++] = i;
	}
	ps->out->shape = ESX_TABLE;
	cut_line(h, starts, ncols, cuts);
	for (c = 0; c < ncols; c++) {
		const char *p;
		size_t len;
		char tmp[32];

		cell(h, cuts, c, &p, &len);
		if (len == 0) {
			snprintf(tmp, sizeof(tmp), "col%zu", c + 1);
			names[c] = strndup(tmp, strlen(tmp));
		} else
			names[c] = strndup(p, len);
		if (names[c] == NULL) {
			set_err(ps, "out of memory", NULL);
			ncols = c;
			goto out;
		}
	}
	for (r = hdr + 2; r < ps->nlines; r++) {
		const struct line *l = &ps->lines[r];
		struct esx_rec *rec;

		if (l->len == l->indent)
			continue;
		rec = add_rec(ps, "", 0);
		if (rec == NULL)
			goto out;
		cut_line(l, starts, ncols, cuts);
		for (c = 0; c < ncols; c++) {
			const char *p;
			size_t len;

			cell(l, cuts, c, &p, &len);
			if (add_kv(ps, rec, names[c], strlen(names[c]), p,
			    len) == -1)
				goto out;
		}
	}
	rc = 0;
out:
	for (c = 0; c < ncols; c++)
		free(names[c]);
	return rc;
}

/* ---- blocks and keyed lists ------------------------------------------ */

/*
 * What a key looks like: words ("Link Status", "Size(MB)", "IsSSD?",
 * "On-disk format version"), never an identifier.  Device ids, path UIDs
 * and IQNs hold '.', ':' or ',' ("naa.6000...", "sata.vmhba0-sata.0:0-t10...",
 * "iqn.1998-01.com.vmware:esx01"), and a UUID a digit and a '-' without
 * a space: those lines are record keys, not "Key: value" pairs.
 */
static bool
key_like(const char *k, size_t len)
{
	bool space = false, digit = false, dash = false;
	size_t i;

	if (len == 0 || len > 80 || !isalpha((unsigned char)k[0]))
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)k[i];

		if (c == ' ')
			space = true;
		else if (isdigit(c))
			digit = true;
		else if (c == '-')
			dash = true;
		else if (!isalpha(c) && (c == '\0' ||
		    strchr("()/?%#'+&[]_", c) == NULL))
			return false;	/* (strchr finds the terminator) */
	}
	return space || !(digit && dash);
}

/*
 * "Key: value", "Key:value" (KB pages, vsish, copied output), "Key:" ->
 * key and value.  The key ends at the first ':' and must look like a key;
 * the value keeps its own colons (PCI addresses, IQNs, "Bus Info:
 * 0000:02:01:0").
 */
static bool
split_kv(const char *p, size_t len, const char **k, size_t *klen,
    const char **v, size_t *vlen)
{
	const char *colon = memchr(p, ':', len);

	if (colon == NULL)
		return false;
	*k = p;
	*klen = (size_t)(colon - p);
	*v = colon + 1;
	*vlen = len - *klen - 1;
	str_trim_span(k, klen);
	str_trim_span(v, vlen);
	return key_like(*k, *klen);
}

struct nest {
	size_t	indent;
	size_t	keylen;		/* length of the joined prefix after this level */
};

struct blk {
	struct nest	 stack[ESX_MAX_DEPTH];
	size_t		 depth;
	struct esx_rec	*cur;
	size_t		 cur_indent;	/* of the current record's header line */
	bool		 cur_id;	/* that header is an id or title, no pair */
	size_t		 titled, nkeys;
	struct buf	 key;
};

/* The first key of the record: seeing it again is the next record. */
static bool
is_first_key(const struct esx_rec *r, const char *k, size_t klen)
{
	return r != NULL && r->n > 0 && strlen(r->keys[0]) == klen &&
	    memcmp(r->keys[0], k, klen) == 0;
}

/*
 * Does line l (a header, a parent, or a pair; child = the next non-blank
 * line is indented further) start a new record?  From the record's shape,
 * never from the column alone: a line that is no "Key: value" (device id,
 * path UID, title); a first line with children ("SMART And Health Info:",
 * "UUID: 52e1..."); a "Title:" with children at column 0 or not deeper
 * than the record's own header; and the record's first key coming round
 * again at the top level (a record whose header was lost).
 */
static bool
starts_record(const struct blk *b, const struct line *l, bool kv, bool child,
    const char *k, size_t klen, size_t vlen, bool first)
{
	if (!kv)
		return true;
	if (child && first)
		return true;
	if (child && vlen == 0 && (l->indent == 0 || (b->cur != NULL &&
	    b->cur_id && l->indent <= b->cur_indent)))
		return true;
	return b->depth == 0 && is_first_key(b->cur, k, klen);
}

static int
block_header(struct parser *ps, struct blk *b, const struct line *l, bool kv,
    const char *k, size_t klen, const char *v, size_t vlen, bool child)
{
	const char *t = l->p + l->indent;
	size_t tlen = l->len - l->indent;

	if (kv && !child)
		tlen = 0;	/* a repeated first key: an untitled record */
	if (tlen > 0 && t[tlen - 1] == ':')
		tlen--;
	str_trim_span(&t, &tlen);
	b->cur = add_rec(ps, t, tlen);
	if (b->cur == NULL)
		return -1;
	b->cur_indent = l->indent;
	b->cur_id = !kv;
	if (tlen > 0)
		b->titled++;
	b->depth = 0;
	/* "UUID: 52e1..." as a header also says what it is. */
	if (kv && (vlen > 0 || !child)) {
		if (add_kv(ps, b->cur, k, klen, v, vlen) == -1)
			return -1;
		b->nkeys++;
	}
	return 0;
}

static int
block_pair(struct parser *ps, struct blk *b, const struct line *l,
    const char *k, size_t klen, const char *v, size_t vlen, bool child)
{
	if (b->cur == NULL) {
		b->cur = add_rec(ps, "", 0);
		if (b->cur == NULL)
			return -1;
		b->cur_indent = l->indent;
		b->cur_id = false;
	}
	b->key.len = b->depth > 0 ? b->stack[b->depth - 1].keylen : 0;
	if (b->key.data != NULL)
		b->key.data[b->key.len] = '\0';
	if ((b->depth > 0 && buf_putc(&b->key, '.') == -1) ||
	    buf_append(&b->key, k, klen) == -1) {
		set_err(ps, "key too long", l);
		return -1;
	}
	if (add_kv(ps, b->cur, b->key.data, b->key.len, v, vlen) == -1)
		return -1;
	b->nkeys++;
	/* Only an empty "Parent:" has children: a value indented unevenly
	 * under a "Key: value" is its sibling. */
	if (child && vlen == 0 && b->depth < ESX_MAX_DEPTH) {
		b->stack[b->depth].indent = l->indent;
		b->stack[b->depth].keylen = b->key.len;
		b->depth++;
	}
	return 0;
}

static int
parse_blocks(struct parser *ps, size_t first)
{
	struct blk b;
	size_t i, j;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	buf_init(&b.key, 64 * 1024);
	for (i = first; i < ps->nlines; i = j) {
		const struct line *l = &ps->lines[i];
		const char *c = l->p + l->indent, *k = NULL, *v = NULL;
		size_t clen = l->len - l->indent, klen = 0, vlen = 0;
		bool child, kv, blank_after = false;

		for (j = i + 1; j < ps->nlines; j++) {
			if (ps->lines[j].len > ps->lines[j].indent)
				break;
			blank_after = true;
		}
		if (clen == 0)
			continue;
		child = j < ps->nlines && !blank_after &&
		    ps->lines[j].indent > l->indent;
		kv = split_kv(c, clen, &k, &klen, &v, &vlen);
		while (b.depth > 0 && b.stack[b.depth - 1].indent >= l->indent)
			b.depth--;
		if (starts_record(&b, l, kv, child, k, klen, vlen, i == first)) {
			if (block_header(ps, &b, l, kv, k, klen, v, vlen,
			    child) == -1)
				goto out;
		} else if (block_pair(ps, &b, l, k, klen, v, vlen, child) == -1)
			goto out;
		if (blank_after)
			b.depth = 0;	/* a blank line closes every nesting */
	}
	if (b.nkeys == 0) {
		set_err(ps, "unrecognised esxcli output", &ps->lines[first]);
		goto out;
	}
	ps->out->shape = b.titled >= 2 ? ESX_KEYED : ESX_BLOCK;
	rc = 0;
out:
	buf_free(&b.key);
	return rc;
}

/* ---- keyvalue formatter ---------------------------------------------- */

/* "structure[0].Nic.Name.string=vmnic0": a dotted path of word chars. */
static bool
is_kv_path_line(const struct line *l)
{
	const char *p = l->p + l->indent;
	size_t n = l->len - l->indent, i;
	bool dot = false, space = false;

	if (n == 0 || !isalpha((unsigned char)p[0]))
		return false;
	for (i = 0; i < n && p[i] != '='; i++) {
		if (p[i] == ' ')
			space = true;	/* only before '=': "list[] = " */
		else if (space)
			return false;
		else if (p[i] == '.')
			dot = true;
		else if (!isalnum((unsigned char)p[i]) && p[i] != '_' &&
		    p[i] != '[' && p[i] != ']')
			return false;
	}
	return dot && i < n;
}

static int
parse_keyvalue(struct parser *ps, size_t first)
{
	struct esx_rec *cur = NULL;
	const char *curid = NULL;
	size_t curidlen = 0, i;

	ps->out->shape = ESX_KEYVALUE;
	for (i = first; i < ps->nlines; i++) {
		const struct line *l = &ps->lines[i];
		const char *p = l->p + l->indent, *eq, *path, *v, *id, *ks, *ke;
		size_t n = l->len - l->indent, plen, vlen, idlen, comp = 0, j;

		if (!is_kv_path_line(l))
			continue;
		eq = memchr(p, '=', n);
		path = p;
		plen = (size_t)(eq - p);
		v = eq + 1;
		vlen = n - plen - 1;
		str_trim_span(&path, &plen);
		str_trim_span(&v, &vlen);
		/* Record id: the first component when it is a list element. */
		id = path;
		idlen = 0;
		for (j = 0; j < plen && path[j] != '.'; j++)
			;
		if (j > 0 && path[j - 1] == ']')
			idlen = j;
		/* Key: drop the id, the structure type and the value type. */
		ks = path;
		ke = path + plen;
		for (j = 0; j < plen; j++) {
			if (path[j] != '.')
				continue;
			comp++;
			if (comp == (idlen > 0 ? 2u : 1u))
				ks = path + j + 1;
		}
		for (j = plen; j > 0; j--)
			if (path[j - 1] == '.')
				break;
		if (j > 0 && path + j - 1 > ks)
			ke = path + j - 1;
		if (ks >= ke) {
			ks = path;
			ke = path + plen;
		}
		if (cur == NULL || idlen != curidlen ||
		    memcmp(id, curid, idlen) != 0) {
			cur = add_rec(ps, "", 0);
			if (cur == NULL)
				return -1;
			curid = id;
			curidlen = idlen;
		}
		if (add_kv(ps, cur, ks, (size_t)(ke - ks), v, vlen) == -1)
			return -1;
	}
	if (ps->out->n == 0) {
		set_err(ps, "unrecognised esxcli output", &ps->lines[first]);
		return -1;
	}
	return 0;
}

/* ---- entry points ---------------------------------------------------- */

static bool
starts_with(const struct line *l, const char *s)
{
	size_t n = strlen(s);

	return l->len - l->indent >= n && memcmp(l->p + l->indent, s, n) == 0;
}

/* What esxcli prints instead of a result: one complaint, exit status 1. */
static bool
is_error_line(const struct line *l)
{
	static const char *const pfx[] = { "Error:", "Error ", "Unable to ",
	    "Usage:", "Invalid ", "Unknown command", NULL };
	size_t i;

	for (i = 0; pfx[i] != NULL; i++)
		if (starts_with(l, pfx[i]))
			return true;
	return false;
}

int
esxcli_parse(const char *text, size_t len, struct esx_out *out, char *err,
    size_t errlen)
{
	struct parser ps;
	size_t first, i, nonblank = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&ps, 0, sizeof(ps));
	ps.out = out;
	ps.err = err;
	ps.errlen = errlen;
	ps.budget = len * 8 + 64 * 1024;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (text == NULL)
		len = 0;
	if (len > ESX_MAX_INPUT) {
		set_err(&ps, "output too large", NULL);
		return -1;
	}
	if (split_lines(&ps, text, len) == -1)
		goto out;
	for (first = SIZE_MAX, i = 0; i < ps.nlines; i++) {
		if (ps.lines[i].len == ps.lines[i].indent)
			continue;
		if (first == SIZE_MAX)
			first = i;
		nonblank++;
	}
	if (first == SIZE_MAX) {
		rc = 0;			/* empty: no records, not an error */
		goto out;
	}
	if (is_error_line(&ps.lines[first])) {
		set_err(&ps, "", &ps.lines[first]);
		goto out;
	}
	if (first + 1 < ps.nlines && is_dash_line(&ps.lines[first + 1]))
		rc = parse_table(&ps, first);
	else if (is_kv_path_line(&ps.lines[first]))
		rc = parse_keyvalue(&ps, first);
	else if (nonblank == 1 && ps.lines[first].indent == 0) {
		/* Real blocks indent their keys: a lone line is a message. */
		set_err(&ps, "", &ps.lines[first]);
	} else
		rc = parse_blocks(&ps, first);
out:
	free(ps.lines);
	if (rc == -1)
		esx_out_free(out);
	return rc;
}

const char *
esx_get(const struct esx_rec *r, const char *key)
{
	size_t i;

	if (r == NULL || key == NULL)
		return NULL;
	for (i = 0; i < r->n; i++)
		if (strcmp(r->keys[i], key) == 0)
			return r->vals[i];
	return NULL;
}

static uint64_t parse_gaps;	/* atomic: collectors run in threads */

void
esx_gap(const char *cmd, const char *entity, const char *key, const char *why)
{
	char lkey[256];

	if (cmd == NULL)
		cmd = "esxcli";
	if (entity == NULL)
		entity = "";
	__atomic_add_fetch(&parse_gaps, 1, __ATOMIC_RELAXED);
	snprintf(lkey, sizeof(lkey), "esxcli-gap:%s:%s", cmd, entity);
	log_limited(LOG_WARN, lkey, 86400, "%s%s%s: expected key '%s' %s: "
	    "the value is left out (the output's layout is not the one "
	    "known)", cmd, entity[0] ? " " : "", entity, key ? key : "?",
	    why ? why : "is missing");
}

const char *
esx_want(const struct esx_rec *r, const char *cmd, const char *entity,
    const char *key)
{
	const char *v = esx_get(r, key);

	if (v == NULL && r != NULL)
		esx_gap(cmd, entity, key, "is missing");
	return v;
}

uint64_t
esxcli_parse_gaps(void)
{
	return __atomic_load_n(&parse_gaps, __ATOMIC_RELAXED);
}

void
esx_out_free(struct esx_out *o)
{
	size_t i, k;

	if (o == NULL)
		return;
	for (i = 0; i < o->n; i++) {
		struct esx_rec *r = &o->recs[i];

		for (k = 0; k < r->n; k++) {
			free(r->keys[k]);
			free(r->vals[k]);
		}
		free(r->keys);
		free(r->vals);
		free(r->title);
	}
	free(o->recs);
	memset(o, 0, sizeof(*o));
}

/* First non-blank line of s, cut to fit buf. */
static const char *
first_line(const char *s, size_t len, char *buf, size_t buflen)
{
	const char *e;
	size_t n;

	buf[0] = '\0';
	if (s == NULL)
		return buf;
	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	e = memchr(s, '\n', len);
	n = e != NULL ? (size_t)(e - s) : len;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	snprintf(buf, buflen, "%.*s", (int)(n > 300 ? 300 : n), s);
	return buf;
}

/*
 * localcli before esxcli, and host.tools_dir before the usual places: a
 * tools_dir holding only esxcli wins over a localcli in /bin.
 */
static const char *
find_cli(const struct config *cfg, char *path, size_t len)
{
	static const char *const tools[] = { "localcli", "esxcli", NULL };
	size_t i;

	if (cfg != NULL && cfg->tools_dir != NULL && cfg->tools_dir[0] != '\0')
		for (i = 0; tools[i] != NULL; i++)
			if (snprintf(path, len, "%s/%s", cfg->tools_dir,
			    tools[i]) < (int)len && access(path, X_OK) == 0)
				return tools[i];
	for (i = 0; tools[i] != NULL; i++)
		if (config_find_tool(cfg, tools[i], path, len) == 0)
			return tools[i];
	return NULL;
}

int
esxcli_query(const struct config *cfg, int timeout_s,
    const char *const args[], struct esx_out *out)
{
	const char *argv[ESX_MAX_ARGS + 2];
	char path[PATH_MAX], cmd[512], key[600], how[128], line[320];
	char perr[256];
	const char *tool;
	struct exec_result res;
	size_t n, off;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&res, 0, sizeof(res));
	tool = find_cli(cfg, path, sizeof(path));
	if (tool == NULL) {
		log_limited(LOG_ERROR, "esxcli:notool", 3600,
		    "neither localcli nor esxcli found (host.tools_dir "
		    "or the usual places): cannot query the host");
		return -1;
	}
	/* The command as the user would type it, for the log. */
	off = (size_t)snprintf(cmd, sizeof(cmd), "%s", tool);
	argv[0] = path;
	for (n = 0; args[n] != NULL; n++) {
		if (n == ESX_MAX_ARGS) {
			log_error("esxcli: too many arguments");
			return -1;
		}
		argv[n + 1] = args[n];
		if (off < sizeof(cmd))
			off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
			    " %s", args[n]);
	}
	argv[n + 1] = NULL;
	snprintf(key, sizeof(key), "esxcli:%s", cmd);
	if (timeout_s <= 0)
		timeout_s = 30;

	if (exec_run(argv, timeout_s * 1000, EXEC_DEFAULT_MAX_OUT, &res) == -1) {
		if (exec_aborting())
			goto out;	/* the agent is stopping: not a failure */
		log_limited(LOG_ERROR, key, 300, "%s: cannot run %s: %s", cmd,
		    path, first_line(res.err, res.err_len, line, sizeof(line)));
		goto out;
	}
	if (res.cancelled) {
		log_debug("%s: cancelled (the agent is stopping)", cmd);
		goto out;
	}
	if (res.timed_out || res.status != 0 || res.truncated) {
		first_line(res.err, res.err_len, line, sizeof(line));
		if (line[0] == '\0')
			first_line(res.out, res.out_len, line, sizeof(line));
		log_limited(LOG_ERROR, key, 300, "%s: %s%s%s%s", cmd,
		    res.truncated ? "output too large, " : "",
		    exec_describe(&res, how, sizeof(how)),
		    line[0] ? ": " : "", line);
		goto out;
	}
	if (esxcli_parse(res.out, res.out_len, out, perr, sizeof(perr)) == -1) {
		log_limited(LOG_ERROR, key, 300, "%s: cannot parse its output: %s",
		    cmd, perr);
		goto out;
	}
	rc = 0;
out:
	exec_result_free(&res);
	return rc;
}
