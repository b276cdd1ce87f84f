/*
 * config_ini: liagent.ini into the same struct config, through the same
 * schema rows as agent.yaml (config_schema.c).
 *
 * liagent.ini: [section] or [type|name] headers, key=value lines, ; and #
 * comments on their own lines (a ; inside a value is a list separator, as
 * in include=a.log;b.log), values optionally quoted.  What esxwatch does
 * not know is a warning, never fatal: an admin can point esxwatch at the
 * liagent.ini they already have.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "../event.h"
#include "../lib/utf8.h"
#include "../lib/str.h"

/* IS_ROW: a section a registry row took (iini.row). */
enum isect {
	IS_NONE, IS_SERVER, IS_STORAGE, IS_LOGGING, IS_ROW, IS_SKIP
};

struct iini {
	struct lctx	*c;
	struct config	*cfg;
	enum isect	 sect;
	size_t		 idx;		/* servers[] index */
	bool		 primary;
	char		 secname[128];
	/* where each destination's keys were set, for dest_finish() */
	struct kpos	 server_pos[KPOS_MAX];
	int		 server_line;
	struct kpos	(*spos)[KPOS_MAX];
	int		*sline;
	/* one per registry section, in registry order */
	struct cfg_ini	*rows;
	size_t		 row;
};

/* A JSON string (or single-quoted, or a bare word) at *pp into out. */
static int
jsonish_string(const char **pp, struct strlist *tmp)
{
	const char *p = *pp;
	char *buf;
	size_t o = 0, cap;
	char q;

	if (*p != '"' && *p != '\'') {
		const char *s = p;

		while (*p != '\0' && (isalnum((unsigned char)*p) ||
		    strchr("_.-+", *p) != NULL))
			p++;
		if (p == s)
			return -1;
		strlist_addn(tmp, s, (size_t)(p - s));
		*pp = p;
		return 0;
	}
	q = *p++;
	cap = strlen(p) + 1;
	buf = xmalloc(cap);
	for (; *p != q; p++) {
		if (*p == '\0')
			goto err;
		if (*p != '\\' || q == '\'') {
			buf[o++] = *p;
			continue;
		}
		p++;
		switch (*p) {
		case '"': case '\\': case '/': case '\'':
			buf[o++] = *p;
			break;
		case 'n': buf[o++] = '\n'; break;
		case 't': buf[o++] = '\t'; break;
		case 'r': buf[o++] = '\r'; break;
		case 'b': buf[o++] = '\b'; break;
		case 'f': buf[o++] = '\f'; break;
		case 'u': {
			unsigned cp = 0;

			for (int i = 1; i <= 4; i++) {
				int d = p[i];

				if (!isxdigit(d))
					goto err;
				cp = cp * 16 + (unsigned)(isdigit(d) ? d - '0' :
				    (tolower(d) - 'a' + 10));
			}
			p += 4;
			/* lone surrogates and NUL cannot be kept */
			if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
				goto err;
			if (cp < 0x80)
				buf[o++] = (char)cp;
			else if (cp < 0x800) {
				buf[o++] = (char)(0xc0 | (cp >> 6));
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			} else {
				buf[o++] = (char)(0xe0 | (cp >> 12));
				buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			}
			break;
		}
		default:
			goto err;
		}
	}
	p++;
	strlist_addn(tmp, buf, o);
	free(buf);
	*pp = p;
	return 0;
err:
	free(buf);
	*pp = p;
	return -1;
}

/* True (after reporting) when an earlier name of t folds to norm too. */
static bool
tag_folds_twice(struct lctx *c, const struct cfg_key *k,
    const struct strlist *t, size_t i, const char *norm, int line, int col)
{
	char other[130];

	for (size_t j = 0; j < i; j += 2)
		if (field_name_normalize(t->v[j], other, sizeof(other)) >= 0 &&
		    strcmp(other, norm) == 0) {
			rep(c, true, line, col, "'%s': tag names '%s' and '%s' are "
			    "the same field '%s' in Log Insight", k->name, t->v[j],
			    t->v[i], norm);
			return true;
		}
	return false;
}

/*
 * The key/value pairs of a tags object into out.  liagent's names
 * (PRODUCT, Appname, vcf-component): Log Insight field names are
 * case-insensitive and VMware's clients fold them like this, so they are
 * folded with a warning, never dropped; two that fold to one are an error.
 */
static void
ini_tags_set(struct lctx *c, const struct cfg_key *k, const struct strlist *t,
    int line, int col, struct kvlist *out)
{
	for (size_t i = 0; i + 1 < t->n; i += 2) {
		char norm[130];

		if (k->check == check_tag_name &&
		    field_name_normalize(t->v[i], norm, sizeof(norm)) == 1 &&
		    strlen(norm) <= 64) {
			if (tag_folds_twice(c, k, t, i, norm, line, col))
				continue;
			rep(c, false, line, col, "'%s': tag '%s' is sent as '%s' "
			    "(field names are lower case [a-z0-9_])", k->name,
			    t->v[i], norm);
			kvlist_set(out, norm, t->v[i + 1]);
			continue;
		}
		if (k->check != NULL && k->check(c, k->name, t->v[i], line,
		    col) != 0)
			continue;
		if (k->vcheck != NULL && k->vcheck(c, k->name, t->v[i + 1],
		    line, col) != 0)
			continue;
		kvlist_set(out, t->v[i], t->v[i + 1]);
	}
}

/*
 * liagent writes tags as a JSON object: tags={"k":"v", "k2":"v2"}.  Be
 * lenient about quoting (single quotes, bare words) but not about
 * structure.  Returns 0, or -1 after reporting where it went wrong.
 */
static int
ini_tags(struct lctx *c, const struct cfg_key *k, const char *s, int line,
    int col, struct kvlist *out)
{
	struct strlist tmp = { NULL, 0 };
	const char *p = s, *what = "'{'";

#define SKIPWS() while (isspace((unsigned char)*p)) p++
	SKIPWS();
	if (*p != '{')
		goto bad;
	p++;
	SKIPWS();
	while (*p != '}') {
		what = "a quoted key";
		if (jsonish_string(&p, &tmp) < 0)
			goto bad;
		SKIPWS();
		what = "':'";
		if (*p != ':')
			goto bad;
		p++;
		SKIPWS();
		what = "a value";
		if (jsonish_string(&p, &tmp) < 0)
			goto bad;
		SKIPWS();
		what = "',' or '}'";
		if (*p == ',') {
			p++;
			SKIPWS();
			continue;
		}
		if (*p != '}')
			goto bad;
	}
	p++;
	SKIPWS();
	what = "the end of the value";
	if (*p != '\0')
		goto bad;
#undef SKIPWS
	ini_tags_set(c, k, &tmp, line, col, out);
	strlist_free(&tmp);
	return 0;
bad:
	rep(c, true, line, col + (int)(p - s), "'%s': expected %s in the "
	    "JSON object (e.g. {\"k\":\"v\", \"k2\":\"v2\"})", k->name, what);
	strlist_free(&tmp);
	return -1;
}

int
ini_value(struct lctx *c, const struct cfg_key *k, void *base, const char *val,
    int line, int col)
{
	char *field = (char *)base + k->off;

	if (k->type == KT_LIST) {
		struct strlist *l = (struct strlist *)(void *)field;

		strlist_free(l);
		split_list(l, val);
		check_list(c, k, l, 0, line, col);
		return 0;
	}
	if (k->type == KT_CUSTOM) {
		if (k->custom->apply_str != NULL)
			return k->custom->apply_str(c, k, field, val, line,
			    col);
		rep(c, false, line, col, "'%s' cannot be set in liagent.ini; "
		    "ignored", k->name);
		return -1;
	}
	if (k->type == KT_KV)
		return ini_tags(c, k, val, line, col,
		    (struct kvlist *)(void *)field);
	return apply_scalar(c, k, base, val, *val == '\0' &&
	    k->type != KT_STR && k->type != KT_OSTR, line, col);
}

static struct kpos *
ini_dest_pos(struct iini *ii)
{
	return ii->primary ? ii->server_pos : ii->spos[ii->idx];
}

/*
 * liagent accepts section names esxwatch does not ("[filelog|my app]"):
 * keep the section under a usable name rather than drop it.  Returns sub,
 * rewritten in place, or NULL when nothing usable is left.
 */
char *
cfg_ini_name(struct lctx *c, char *sub, int line, int col)
{
	char orig[96], b[96];
	size_t n = strlen(sub);

	if (n == 0)
		return NULL;
	if (name_valid(sub))
		return sub;
	snprintf(orig, sizeof(orig), "%s", show(sub, b, sizeof(b)));
	if (n > 64)
		sub[n = 64] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)sub[i]) && strchr("-_.", sub[i]) ==
		    NULL)
			sub[i] = '_';
	rep(c, false, line, col, "section name '%s' is used as '%s' (names "
	    "are 1 to 64 of A-Z a-z 0-9 - _ .)", orig, sub);
	return sub;
}

/* [server|NAME]: one more destination. */
static void
ini_server_section(struct iini *ii, char *sub, int line, int col)
{
	struct config *cfg = ii->cfg;

	sub = cfg_ini_name(ii->c, sub, line, col);
	if (sub == NULL) {
		rep(ii->c, false, line, col, "[server|]: no destination "
		    "name; section ignored");
		return;
	}
	ii->sect = IS_SERVER;
	ii->primary = false;
	for (ii->idx = 0; ii->idx < cfg->nservers; ii->idx++)
		if (strcmp(cfg->servers[ii->idx].name, sub) == 0)
			return;
	if (cfg->nservers + 1 >= CONFIG_MAX_DESTS) {
		rep(ii->c, true, line, col, "[server|%s] would be destination "
		    "%zu; at most %d ([server] and [server|NAME] together)", sub,
		    cfg->nservers + 2, CONFIG_MAX_DESTS);
		ii->sect = IS_SKIP;
		return;
	}
	server_add(cfg, sub);
	ii->spos = xrealloc(ii->spos, cfg->nservers * sizeof(*ii->spos));
	memset(ii->spos[ii->idx], 0, sizeof(ii->spos[ii->idx]));
	ii->sline = xrealloc(ii->sline, cfg->nservers * sizeof(*ii->sline));
	ii->sline[ii->idx] = line;
}

/*
 * Whether a registry row takes the header [type|sub] (ii->row says which):
 * 1 and its keys go to the row, -1 it is the row's but ignored (the row
 * said why), 0 no row's.
 */
static int
ini_row_header(struct iini *ii, const char *type, char *sub, int line, int col)
{
	for (size_t i = 0; i < cfg_nsections(); i++) {
		const struct cfg_section *s = cfg_section_at(i);
		int r;

		if (s->ini_header == NULL)
			continue;
		r = s->ini_header(&ii->rows[i], type, sub, line, col);
		if (r != 0) {
			ii->row = i;
			return r > 0 ? 1 : -1;
		}
	}
	return 0;
}

/* A header the core does not read: a registry row's, or ignored. */
static void
ini_other_section(struct iini *ii, const char *type, char *sub, int line,
    int col)
{
	int rh = ini_row_header(ii, type, sub, line, col);
	char b[96];

	if (rh != 0)
		ii->sect = rh > 0 ? IS_ROW : IS_SKIP;
	else if (strcasecmp(type, "update") == 0 ||
	    strcasecmp(type, "winlog") == 0 ||
	    strcasecmp(type, "journaldlog") == 0 ||
	    strcasecmp(type, "common") == 0)
		rep(ii->c, false, line, col, "[%s]: not supported by esxwatch; "
		    "section ignored", show(ii->secname, b, sizeof(b)));
	else
		rep(ii->c, false, line, col, "unknown section [%s]; ignored",
		    show(ii->secname, b, sizeof(b)));
}

static void
ini_section(struct iini *ii, char *name, int line, int col)
{
	char *bar = strchr(name, '|');
	char *type = name, *sub = bar ? bar + 1 : NULL;

	if (bar != NULL)
		*bar = '\0';
	type = str_trim(type);
	if (sub != NULL)
		sub = str_trim(sub);
	snprintf(ii->secname, sizeof(ii->secname), "%s%s%s", type,
	    sub ? "|" : "", sub ? sub : "");
	ii->sect = IS_SKIP;
	if (strcasecmp(type, "server") == 0 && sub == NULL) {
		ii->sect = IS_SERVER;
		ii->primary = true;
		if (ii->server_line == 0)
			ii->server_line = line;
	} else if (strcasecmp(type, "server") == 0) {
		ini_server_section(ii, sub, line, col);
	} else if (strcasecmp(type, "storage") == 0 && sub == NULL)
		ii->sect = IS_STORAGE;
	else if (strcasecmp(type, "logging") == 0 && sub == NULL)
		ii->sect = IS_LOGGING;
	else
		ini_other_section(ii, type, sub, line, col);
}

void
cfg_ini_unknown(struct cfg_ini *ci, const char *key, int line, int col,
    const char *why)
{
	char b[96];

	rep(ci->c, false, line, col, "'%s' in [%s] %s; ignored",
	    show(key, b, sizeof(b)), ci->secname, why);
}

static void
ini_unknown(struct iini *ii, const char *key, int line, int col,
    const char *why)
{
	struct cfg_ini ci = { ii->c, ii->cfg, ii->secname, NULL };

	cfg_ini_unknown(&ci, key, line, col, why);
}

static void
ini_server_key(struct iini *ii, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	struct config *cfg = ii->cfg;
	struct dest_conf *d = ii->primary ? &cfg->server : &cfg->servers[ii->idx];
	struct dkey dk;
	int ki = dest_key_find(d, key, &dk);

	if (ki >= 0) {
		if (ini_value(ii->c, dk.k, dk.base, val, line, vcol) != 0)
			return;
		dest_key_share(d, key, ki);
		if (ki < KPOS_MAX) {
			ini_dest_pos(ii)[ki].line = line;
			ini_dest_pos(ii)[ki].col = vcol;
			ini_dest_pos(ii)[ki].ok = true;
		}
	} else if (strcmp(key, "max_disk_buffer") == 0 && ii->primary)
		ini_value(ii->c, &storage_keys[kspec_index(storage_keys,
		    nstorage_keys, "max_disk_buffer")], cfg, val, line, vcol);
	else if (strcmp(key, "ssl_accept_any_trusted") == 0)
		ini_unknown(ii, key, line, kcol, "has no effect: "
		    "with ssl_ca_path any certificate the CA bundle "
		    "trusts is accepted and none is pinned");
	else if (strcmp(key, "central_config") == 0)
		ini_unknown(ii, key, line, kcol, "is not supported by "
		    "esxwatch");
	else
		ini_unknown(ii, key, line, kcol, "is not a known key");
}

static void
ini_keyval(struct iini *ii, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	struct lctx *c = ii->c;
	struct config *cfg = ii->cfg;
	char b[96];
	int ki;

	switch (ii->sect) {
	case IS_NONE:
		rep(c, false, line, kcol, "'%s' outside any [section]; "
		    "ignored", show(key, b, sizeof(b)));
		return;
	case IS_SKIP:
		return;
	case IS_SERVER:
		ini_server_key(ii, key, val, line, kcol, vcol);
		return;
	case IS_STORAGE:
		ki = kspec_index(storage_keys, nstorage_keys, key);
		if (ki >= 0)
			ini_value(c, &storage_keys[ki], cfg, val, line, vcol);
		else
			ini_unknown(ii, key, line, kcol, "is not a known key");
		return;
	case IS_LOGGING:
		if (strcmp(key, "debug_level") == 0)
			ini_value(c, &logging_keys[kspec_index(logging_keys,
			    nlogging_keys, key)], cfg, val, line, vcol);
		else if (strcmp(key, "file") == 0)
			ini_unknown(ii, key, line, kcol, "is not a liagent key "
			    "(use logging.file in agent.yaml)");
		else
			ini_unknown(ii, key, line, kcol, "is not supported by "
			    "esxwatch");
		return;
	case IS_ROW:
		cfg_section_at(ii->row)->ini_key(&ii->rows[ii->row], key, val,
		    line, kcol, vcol);
		return;
	}
}

/* Whether key, in the section being read, is a KF_RAW row. */
static bool
ini_key_raw(const struct iini *ii, const char *key)
{
	const struct cfg_section *s;
	int ki;

	if (ii->sect != IS_ROW)
		return false;
	s = cfg_section_at(ii->row);
	ki = kspec_index(s->keys, s->nkeys, key);
	return ki >= 0 && (s->keys[ki].flags & KF_RAW) != 0;
}

static void
ini_line(struct iini *ii, char *s, size_t len, int line)
{
	struct lctx *c = ii->c;
	char *p = s, *e, *eq, *key, *val;
	size_t bad;

	if (memchr(s, '\0', len) != NULL) {
		rep(c, true, line, (int)strlen(s) + 1, "NUL character in the "
		    "file");
		return;
	}
	bad = utf8_valid_len(s, len);
	if (bad < len) {
		rep(c, true, line, (int)bad + 1, "invalid UTF-8");
		return;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == ';' || *p == '#')
		return;
	if (*p == '[') {
		e = strchr(p, ']');
		if (e == NULL || e == p + 1) {
			rep(c, false, line, (int)(p - s) + 1, "malformed "
			    "section header; ignored");
			ii->sect = IS_SKIP;
			return;
		}
		{
			const char *after = e + 1;

			while (*after == ' ' || *after == '\t')
				after++;
			if (*after != '\0' && *after != ';' && *after != '#') {
				rep(c, true, line, (int)(after - s) + 1, "text after ']' "
				    "on a section line: '%.40s' (a section header must be "
				    "alone on its line; put each key on a line of its own)",
				    after);
				ii->sect = IS_SKIP;
				return;
			}
		}
		*e = '\0';
		ini_section(ii, p + 1, line, (int)(p - s) + 1);
		return;
	}
	eq = strchr(p, '=');
	if (eq == NULL) {
		rep(c, false, line, (int)(p - s) + 1, "expected 'key = "
		    "value'; line ignored");
		return;
	}
	key = p;
	e = eq;
	while (e > key && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	val = eq + 1;
	while (isspace((unsigned char)*val))
		val++;
	e = val + strlen(val);
	/* a regex (KF_RAW) keeps its exact bytes, a trailing blank included */
	if (!ini_key_raw(ii, key))
		while (e > val && isspace((unsigned char)e[-1]))
			e--;
	*e = '\0';
	if (e - val >= 2 && (*val == '"' || *val == '\'') && e[-1] == *val) {
		e[-1] = '\0';
		val++;
	}
	if (*key == '\0') {
		rep(c, false, line, (int)(p - s) + 1, "empty key; line "
		    "ignored");
		return;
	}
	ini_keyval(ii, key, val, line, (int)(key - s) + 1,
	    (int)(val - s) + 1);
}

void
ini_load(struct lctx *c, struct config *cfg, char *buf, size_t len)
{
	struct iini ii;
	size_t off = 0;
	int line = 0;

	memset(&ii, 0, sizeof(ii));
	ii.c = c;
	ii.cfg = cfg;
	ii.sect = IS_NONE;
	ii.rows = xmalloc((cfg_nsections() + 1) * sizeof(*ii.rows));
	for (size_t i = 0; i < cfg_nsections(); i++) {
		ii.rows[i].c = c;
		ii.rows[i].cfg = cfg;
		ii.rows[i].secname = ii.secname;
		ii.rows[i].state = NULL;
	}
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		off = 3;			/* Windows editors' BOM */
	while (off < len) {
		char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
		char *s = buf + off;

		line++;
		s[n] = '\0';			/* the \n or the final NUL */
		if (n > 0 && s[n - 1] == '\r')
			s[--n] = '\0';
		ini_line(&ii, s, n, line);
		off = nl ? (size_t)(nl - buf) + 1 : len;
	}
	for (size_t i = 0; i < cfg_nsections(); i++)
		if (cfg_section_at(i)->ini_end != NULL)
			cfg_section_at(i)->ini_end(&ii.rows[i]);
	free(ii.rows);
	dest_finish(c, &cfg->server, ii.server_pos, true, ii.server_line, 1);
	for (size_t i = 0; i < cfg->nservers; i++)
		dest_finish(c, &cfg->servers[i], ii.spos[i], false,
		    ii.sline[i], 1);
	free(ii.spos);
	free(ii.sline);
}

/* INI when the first meaningful line is a [section] header. */
bool
looks_ini(const char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len) {
		size_t s = i, e;

		while (i < len && buf[i] != '\n')
			i++;
		e = i++;
		while (s < e && isspace((unsigned char)buf[s]))
			s++;
		while (e > s && isspace((unsigned char)buf[e - 1]))
			e--;
		if (s == e || buf[s] == ';' || buf[s] == '#')
			continue;
		if (buf[s] != '[')
			return false;
		{
			const char *rb = memchr(buf + s, ']', e - s);
			size_t h = rb != NULL ? (size_t)(rb - buf) : 0;

			if (rb == NULL || h - s < 2)
				return false;
			for (size_t j = s + 1; j < h; j++)
				if (strchr(",[]{}\"'", buf[j]) != NULL)
					return false;
			/* "[type|name] junk" is still liagent's (ini_line says
			 * what is wrong with it); YAML never has text after a
			 * flow sequence */
			return h == e - 1 || memchr(buf + s, '|', h - s) != NULL;
		}
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

