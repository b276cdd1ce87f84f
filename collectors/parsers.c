/*
 * parsers: liagent's agent parsers (see parsers.h).
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../agent/event.h"
#include "../agent/log.h"
#include "../agent/rx.h"
#include "logtime.h"
#include "parsers.h"

#define P_MAX_TOKENS	64
#define P_MAX_FIELDS	64	/* names in fields= */
#define P_MAX_DECODERS	16
#define P_MAX_DEPTH	8	/* next_parser / field_decoder nesting */
#define P_VALUE_MAX	4096	/* longer values are cut */
#define P_NAME_MAX	64

enum p_base { P_CLF, P_CSV, P_KVP, P_TIMESTAMP, P_REGEX, P_SYSLOG, P_JSON, P_AUTO };

static const char *const base_names[] = {
	"clf", "csv", "kvp", "timestamp", "regex", "syslog", "json", "auto",
};

/* A CLF format token: literal text, or a specifier. */
struct clf_tok {
	char	*lit;		/* literal, or NULL for a specifier */
	char	*field;		/* field name; NULL = skip the value */
	char	*tfmt;		/* %{FORMAT}t, or NULL = auto */
	bool	 is_time;
	bool	 rest;		/* %M */
};

/*
 * field_decoder entries: {"field":"parser"} runs parser on field's value;
 * the conditional form {"field":{"other":{"glob":"parser"}}} runs it only
 * when field other's value matches glob (fnmatch), as VMware's MongoDB
 * content pack writes it.
 */
struct decoder {
	char			*field;
	char			*cond_field;	/* NULL = always */
	char			*cond_glob;
	char			*pname;
	const struct parser	*p;
};

struct rename {
	char	*from;
	char	*to;
};

struct parser {
	char			*name;
	enum p_base		 base;
	struct clf_tok		 tok[P_MAX_TOKENS];
	size_t			 ntok;
	char			*fields[P_MAX_FIELDS];
	size_t			 nfields;
	bool			 all_fields;
	char			 delim[16];	/* csv: the column separator */
	size_t			 delim_len;
	char			*tfmt;		/* timestamp parser */
	struct rx		*re;
	bool			 extract_sd;
	bool			 debug;
	char			*next_name;
	const struct parser	*next;
	struct decoder		 dec[P_MAX_DECODERS];
	size_t			 ndec;
	char			*excl[P_MAX_FIELDS];
	size_t			 nexcl;
	struct rename		 ren[P_MAX_FIELDS];
	size_t			 nren;
};

struct parsers {
	struct parser	**v;
	size_t		  n;
	struct parser	 *builtin[8];
};

static char *
dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static const char *
val(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

static void
parser_free(struct parser *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->ntok; i++) {
		free(p->tok[i].lit);
		free(p->tok[i].field);
		free(p->tok[i].tfmt);
	}
	for (i = 0; i < p->nfields; i++)
		free(p->fields[i]);
	for (i = 0; i < p->ndec; i++) {
		free(p->dec[i].field);
		free(p->dec[i].cond_field);
		free(p->dec[i].cond_glob);
		free(p->dec[i].pname);
	}
	for (i = 0; i < p->nren; i++) {
		free(p->ren[i].from);
		free(p->ren[i].to);
	}
	for (i = 0; i < p->nexcl; i++)
		free(p->excl[i]);
	free(p->tfmt);
	free(p->next_name);
	free(p->name);
	rx_free(p->re);
	free(p);
}

struct parsers *
parsers_new(void)
{
	return calloc(1, sizeof(struct parsers));
}

void
parsers_free(struct parsers *ps)
{
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->n; i++)
		parser_free(ps->v[i]);
	for (i = 0; i < 8; i++)
		parser_free(ps->builtin[i]);
	free(ps->v);
	free(ps);
}

bool
parsers_known_base(const char *base)
{
	size_t i;

	for (i = 0; base != NULL && i < 8; i++)
		if (strcasecmp(base, base_names[i]) == 0)
			return true;
	return false;
}

/* ----------------------------------------------------------------- CLF */

static const char *
clf_name(char c)
{
	switch (c) {
	case 'a': return "remote_ip";
	case 'A': return "local_ip";
	case 'B': case 'b': return "response_size";
	case 'D': return "request_time_mcs";
	case 'E': return "error_status";
	case 'F': case 'f': return "file_name";
	case 'h': return "remote_host";
	case 'H': return "request_protocol";
	case 'k': return "keepalive_request_count";
	case 'l': return "remote_log_name";
	case 'L': return "request_log_id";
	case 'M': return "log_message";
	case 'm': return "request_method";
	case 'p': return "server_port";
	case 'P': return "process_id";
	case 'q': return "query_string";
	case 'r': return "request";
	case 'R': return "response_handler";
	case 's': return "status_code";
	case 't': return "timestamp";
	case 'T': return "request_time_sec";
	case 'u': return "remote_auth_user";
	case 'U': return "url_path";
	case 'v': return "server_name";
	case 'V': return "self_referential_server_name";
	default: return NULL;
	}
}

/* Specifiers whose field name is the {NAME} given. */
static bool
clf_named(char c)
{
	return strchr("CceinoX", c) != NULL;
}

static int
clf_add_lit(struct parser *p, const char *s, size_t n, char *err, size_t errlen)
{
	if (n == 0)
		return 0;
	if (p->ntok >= P_MAX_TOKENS) {
		snprintf(err, errlen, "format: more than %d parts", P_MAX_TOKENS);
		return -1;
	}
	p->tok[p->ntok].lit = dupn(s, n);
	return p->tok[p->ntok++].lit == NULL ? -1 : 0;
}

/* One specifier at f (after '%'); returns bytes used or -1. */
static int
clf_add_spec(struct parser *p, const char *f, char *err, size_t errlen)
{
	const char *arg = NULL, *q = f;
	size_t alen = 0;
	struct clf_tok *t;
	const char *nm;

	if (*q == '{') {
		const char *e = strchr(q, '}');

		if (e == NULL) {
			snprintf(err, errlen, "format: '%%{' without '}'");
			return -1;
		}
		arg = q + 1;
		alen = (size_t)(e - arg);
		q = e + 1;
	}
	if (*q == '>' || *q == '<')	/* Apache's %>s: the final status */
		q++;
	if (p->ntok >= P_MAX_TOKENS || *q == '\0') {
		snprintf(err, errlen, "format: %s", *q == '\0' ?
		    "'%' at the end" : "too many parts");
		return -1;
	}
	t = &p->tok[p->ntok];
	memset(t, 0, sizeof(*t));
	if (*q == 't') {
		t->is_time = true;
		if (arg != NULL && alen > 0)
			t->tfmt = dupn(arg, alen);
	} else if (clf_named(*q)) {
		if (arg != NULL && alen > 0)
			t->field = dupn(arg, alen);	/* else: skipped */
	} else {
		nm = clf_name(*q);
		if (nm == NULL) {
			snprintf(err, errlen, "format: unknown specifier '%%%c'", *q);
			return -1;
		}
		t->field = strdup(nm);
		t->rest = *q == 'M';
	}
	p->ntok++;
	return (int)(q - f) + 1;
}

static int
clf_compile(struct parser *p, const char *fmt, char *err, size_t errlen)
{
	const char *s = fmt, *lit = fmt;
	int n;

	while (*s != '\0') {
		if (*s == '\\' && s[1] == '"') {	/* liagent writes \" */
			if (clf_add_lit(p, lit, (size_t)(s - lit), err, errlen) < 0)
				return -1;
			lit = s + 1;
			s += 2;
			continue;
		}
		if (*s != '%') {
			s++;
			continue;
		}
		if (s[1] == '%') {
			if (clf_add_lit(p, lit, (size_t)(s - lit) + 1, err, errlen) < 0)
				return -1;
			s += 2;
			lit = s;
			continue;
		}
		if (clf_add_lit(p, lit, (size_t)(s - lit), err, errlen) < 0)
			return -1;
		n = clf_add_spec(p, s + 1, err, errlen);
		if (n < 0)
			return -1;
		s += 1 + n;
		lit = s;
	}
	return clf_add_lit(p, lit, (size_t)(s - lit), err, errlen);
}

/* ------------------------------------------------------------- helpers */

static int
split_names(const char *list, char sep, char **out,
    size_t *n, bool keep_empty, char *err, size_t errlen)
{
	const char *s = list, *e;
	size_t l;

	while (s != NULL && *s != '\0') {
		e = strchr(s, sep);
		l = e != NULL ? (size_t)(e - s) : strlen(s);
		while (l > 0 && isspace((unsigned char)*s)) {
			s++;
			l--;
		}
		while (l > 0 && isspace((unsigned char)s[l - 1]))
			l--;
		if (l > 0 || keep_empty) {
			if (*n >= P_MAX_FIELDS) {
				snprintf(err, errlen, "more than %d names", P_MAX_FIELDS);
				return -1;
			}
			out[*n] = dupn(s, l);
			if (out[*n] == NULL)
				return -1;
			(*n)++;
		}
		s = e != NULL ? e + 1 : NULL;
	}
	return 0;
}

/*
 * A small reader for the JSON-like maps of field_decoder and field_rename:
 * objects of "key": "string" or "key": {object}, nothing else.
 */
struct jr {
	const char	*s;
	char		*err;
	size_t		 errlen;
	const char	*what;
};

static void
jr_ws(struct jr *j)
{
	while (isspace((unsigned char)*j->s))
		j->s++;
}

static int
jr_fail(struct jr *j, const char *msg)
{
	snprintf(j->err, j->errlen, "%s: %s", j->what, msg);
	return -1;
}

static char *
jr_str(struct jr *j)
{
	char buf[512];
	size_t o = 0;

	jr_ws(j);
	if (*j->s != '"') {
		jr_fail(j, "expected a \"string\"");
		return NULL;
	}
	for (j->s++; *j->s != '"'; j->s++) {
		if (*j->s == '\0') {
			jr_fail(j, "a string without its closing '\"'");
			return NULL;
		}
		if (*j->s == '\\' && j->s[1] != '\0')
			j->s++;
		if (o + 1 < sizeof(buf))
			buf[o++] = *j->s;
	}
	j->s++;
	return dupn(buf, o);
}

typedef int (*jr_fn)(struct jr *, void *arg, const char *key, int depth);

/* {"key": value, ...}; fn reads each value. */
static int
jr_object(struct jr *j, jr_fn fn, void *arg, int depth)
{
	char *k;
	int rc;

	jr_ws(j);
	if (*j->s != '{')
		return jr_fail(j, "expected '{'");
	j->s++;
	jr_ws(j);
	if (*j->s == '}') {
		j->s++;
		return 0;
	}
	for (;;) {
		k = jr_str(j);
		if (k == NULL)
			return -1;
		jr_ws(j);
		if (*j->s != ':') {
			free(k);
			return jr_fail(j, "expected ':'");
		}
		j->s++;
		rc = fn(j, arg, k, depth);
		free(k);
		if (rc < 0)
			return -1;
		jr_ws(j);
		if (*j->s == ',') {
			j->s++;
			continue;
		}
		if (*j->s == '}') {
			j->s++;
			return 0;
		}
		return jr_fail(j, "expected ',' or '}'");
	}
}

struct dec_build {
	struct parser	*p;
	const char	*field;
	const char	*cond;
};

static int
dec_add(struct jr *j, struct parser *p, const char *field, const char *cond,
    const char *glob, char *pname)
{
	struct decoder *d;

	if (p->ndec >= P_MAX_DECODERS) {
		free(pname);
		return jr_fail(j, "too many entries");
	}
	d = &p->dec[p->ndec++];
	d->field = strdup(field);
	d->cond_field = cond != NULL ? strdup(cond) : NULL;
	d->cond_glob = glob != NULL ? strdup(glob) : NULL;
	d->pname = pname;
	return d->field == NULL ? -1 : 0;
}

static int
dec_value(struct jr *j, void *arg, const char *key, int depth)
{
	struct dec_build *b = arg, sub;
	char *v;

	jr_ws(j);
	if (*j->s == '{') {
		if (depth >= 2)
			return jr_fail(j, "nested too deeply");
		sub = *b;
		if (depth == 0)
			sub.field = key;
		else
			sub.cond = key;
		return jr_object(j, dec_value, &sub, depth + 1);
	}
	v = jr_str(j);
	if (v == NULL)
		return -1;
	if (depth == 0)
		return dec_add(j, b->p, key, NULL, NULL, v);
	if (depth == 2)
		return dec_add(j, b->p, b->field, b->cond, key, v);
	free(v);
	return jr_fail(j, "expected {\"field\":{\"other_field\":{\"glob\":\"parser\"}}}");
}

static int
ren_value(struct jr *j, void *arg, const char *key, int depth)
{
	struct parser *p = arg;
	char *v;

	(void)depth;
	v = jr_str(j);
	if (v == NULL)
		return -1;
	if (p->nren >= P_MAX_FIELDS) {
		free(v);
		return jr_fail(j, "too many entries");
	}
	p->ren[p->nren].from = strdup(key);
	p->ren[p->nren++].to = v;
	return 0;
}

static int
maps_parse(struct parser *p, const struct parser_def *d, char *err,
    size_t errlen)
{
	struct jr j = { NULL, err, errlen, NULL };
	struct dec_build b = { p, NULL, NULL };

	if (val(d->field_decoder) != NULL) {
		j.s = d->field_decoder;
		j.what = "field_decoder";
		if (jr_object(&j, dec_value, &b, 0) < 0)
			return -1;
		if (p->ndec == 0)
			return jr_fail(&j, "no entries");
	}
	if (val(d->field_rename) != NULL) {
		j.s = d->field_rename;
		j.what = "field_rename";
		if (jr_object(&j, ren_value, p, 0) < 0)
			return -1;
	}
	return 0;
}

static bool
yes(const char *s)
{
	return s != NULL && (strcasecmp(s, "yes") == 0 ||
	    strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0);
}

/*
 * delimiter= as liagent writes it: quoted ("," or ", ") or bare, with \t
 * for a tab.  Default ",".
 */
static int
delimiter_parse(struct parser *p, const char *dl, char *err, size_t errlen)
{
	size_t l, o = 0, i;

	if (dl == NULL)
		dl = ",";
	l = strlen(dl);
	if (l >= 2 && dl[0] == '"' && dl[l - 1] == '"') {
		dl++;
		l -= 2;
	}
	for (i = 0; i < l; i++) {
		char ch = dl[i];

		if (ch == '\\' && i + 1 < l) {
			i++;
			ch = dl[i] == 't' ? '\t' : dl[i];
		}
		if (o + 1 >= sizeof(p->delim)) {
			snprintf(err, errlen, "delimiter: longer than %zu characters",
			    sizeof(p->delim) - 1);
			return -1;
		}
		p->delim[o++] = ch;
	}
	if (o == 0) {
		snprintf(err, errlen, "delimiter: empty");
		return -1;
	}
	p->delim[o] = '\0';
	p->delim_len = o;
	return 0;
}

static int
parser_build(struct parser *p, const struct parser_def *d, char *err,
    size_t errlen)
{
	const char *fmt = val(d->format), *fl = val(d->fields);

	if (delimiter_parse(p, val(d->delimiter), err, errlen) < 0)
		return -1;
	p->extract_sd = yes(d->extract_sd);
	p->debug = yes(d->debug);
	if (fl != NULL && strcmp(fl, "*") == 0)
		p->all_fields = true;
	else if (fl != NULL && split_names(fl, ',', p->fields, &p->nfields,
	    p->base == P_CSV, err, errlen) < 0)
		return -1;
	if (val(d->exclude_fields) != NULL && split_names(d->exclude_fields,
	    ';', p->excl, &p->nexcl, false, err, errlen) < 0)
		return -1;
	if (val(d->next_parser) != NULL) {
		p->next_name = strdup(d->next_parser);
		if (p->next_name == NULL)
			return -1;
	}
	if (maps_parse(p, d, err, errlen) < 0)
		return -1;
	switch (p->base) {
	case P_CLF:
		return clf_compile(p, fmt != NULL ? fmt : "%h %l %u %t \"%r\" %s %b",
		    err, errlen);
	case P_CSV:
		if (p->nfields == 0) {
			snprintf(err, errlen, "csv: fields= must name the columns");
			return -1;
		}
		return 0;
	case P_TIMESTAMP:
		p->tfmt = strdup(fmt != NULL ? fmt : "%Y-%m-%dT%H:%M:%S%f%z");
		return p->tfmt == NULL ? -1 : 0;
	case P_REGEX: {
		char m[200];
		size_t off = 0;

		if (fmt == NULL) {
			snprintf(err, errlen, "regex: format= must be a regex with named groups");
			return -1;
		}
		p->re = rx_compile(fmt, 0, m, sizeof(m), &off);
		if (p->re == NULL) {
			snprintf(err, errlen, "format: %s (at offset %zu)", m, off);
			return -1;
		}
		if (rx_names(p->re) == 0) {
			snprintf(err, errlen, "format: the regex has no named group (?<name>...)");
			return -1;
		}
		return 0;
	}
	case P_KVP: case P_JSON: case P_AUTO:
		if (fl == NULL)
			p->all_fields = true;
		return 0;
	case P_SYSLOG:
		return 0;
	}
	return 0;
}

static struct parser *
parser_make(const struct parser_def *d, char *err, size_t errlen)
{
	struct parser *p;
	size_t i;

	if (val(d->base_parser) == NULL) {
		snprintf(err, errlen, "base_parser: missing (one of clf, csv, "
		    "kvp, timestamp, regex, syslog, json, auto)");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	for (i = 0; i < 8; i++)
		if (strcasecmp(d->base_parser, base_names[i]) == 0)
			break;
	if (i == 8) {
		snprintf(err, errlen, "base_parser: unknown '%s' (one of clf, csv, "
		    "kvp, timestamp, regex, syslog, json, auto)", d->base_parser);
		free(p);
		return NULL;
	}
	p->base = (enum p_base)i;
	p->name = strdup(val(d->name) != NULL ? d->name : base_names[i]);
	if (p->name == NULL || parser_build(p, d, err, errlen) < 0) {
		parser_free(p);
		return NULL;
	}
	return p;
}

int
parsers_add(struct parsers *ps, const struct parser_def *d, char *err,
    size_t errlen)
{
	struct parser *p, **nv;
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (d->name != NULL && strcmp(ps->v[i]->name, d->name) == 0) {
			snprintf(err, errlen, "parser '%s' is defined twice", d->name);
			return -1;
		}
	p = parser_make(d, err, errlen);
	if (p == NULL)
		return -1;
	nv = realloc(ps->v, (ps->n + 1) * sizeof(*nv));
	if (nv == NULL) {
		parser_free(p);
		return -1;
	}
	ps->v = nv;
	ps->v[ps->n++] = p;
	return 0;
}

const struct parser *
parsers_get(struct parsers *ps, const char *name)
{
	struct parser_def d;
	char err[128];
	size_t i;

	if (ps == NULL || name == NULL)
		return NULL;
	for (i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i]->name, name) == 0)
			return ps->v[i];
	/* A base name alone: the parser with its defaults. */
	for (i = 0; i < 8; i++) {
		if (strcasecmp(name, base_names[i]) != 0 || i == P_CSV ||
		    i == P_REGEX)
			continue;
		if (ps->builtin[i] == NULL) {
			memset(&d, 0, sizeof(d));
			d.base_parser = base_names[i];
			ps->builtin[i] = parser_make(&d, err, sizeof(err));
		}
		return ps->builtin[i];
	}
	return NULL;
}

static int
link_one(struct parsers *ps, struct parser *p, char *err, size_t errlen)
{
	size_t i;

	if (p->next_name != NULL) {
		p->next = parsers_get(ps, p->next_name);
		if (p->next == NULL) {
			snprintf(err, errlen, "parser '%s': next_parser '%s' is not defined",
			    p->name, p->next_name);
			return -1;
		}
	}
	for (i = 0; i < p->ndec; i++) {
		p->dec[i].p = parsers_get(ps, p->dec[i].pname);
		if (p->dec[i].p == NULL) {
			snprintf(err, errlen, "parser '%s': field_decoder names '%s', "
			    "which is not defined", p->name, p->dec[i].pname);
			return -1;
		}
	}
	return 0;
}

/* Depth of the chain below p, or -1 past P_MAX_DEPTH (a loop). */
static int
depth_of(const struct parser *p, int d)
{
	size_t i;

	if (p == NULL)
		return d;
	if (d > P_MAX_DEPTH)
		return -1;
	if (depth_of(p->next, d + 1) < 0)
		return -1;
	for (i = 0; i < p->ndec; i++)
		if (depth_of(p->dec[i].p, d + 1) < 0)
			return -1;
	return d;
}

int
parsers_link(struct parsers *ps, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (link_one(ps, ps->v[i], err, errlen) < 0)
			return -1;
	for (i = 0; i < ps->n; i++)
		if (depth_of(ps->v[i], 0) < 0) {
			snprintf(err, errlen, "parser '%s': next_parser/field_decoder "
			    "loop or a chain deeper than %d", ps->v[i]->name, P_MAX_DEPTH);
			return -1;
		}
	return 0;
}

/* ------------------------------------------------------------ applying */

struct pctx {
	struct event	*ev;
	int64_t		 now;
	int		 nset;
	const struct parser *p;
};

static bool
wanted(const struct parser *p, const char *name, size_t nlen)
{
	size_t i;

	if (p->all_fields || p->nfields == 0)
		return true;
	for (i = 0; i < p->nfields; i++)
		if (strlen(p->fields[i]) == nlen &&
		    strncasecmp(p->fields[i], name, nlen) == 0)
			return true;
	return false;
}

/* Set a parsed field (normalised name; the agent's own fields win). */
static void
put(struct pctx *c, const char *name, size_t nlen, const char *v, size_t vlen)
{
	char nm[P_NAME_MAX], raw[P_NAME_MAX], *vv;

	if (nlen == 0 || nlen >= sizeof(raw))
		return;
	memcpy(raw, name, nlen);
	raw[nlen] = '\0';
	if (field_name_normalize(raw, nm, sizeof(nm)) < 0)
		return;
	if (strcmp(nm, "hostname") == 0 || strcmp(nm, "appname") == 0 ||
	    strncmp(nm, "esxwatch_", 9) == 0 || event_get(c->ev, nm) != NULL)
		return;
	if (vlen > P_VALUE_MAX)
		vlen = P_VALUE_MAX;
	vv = dupn(v, vlen);
	if (vv == NULL)
		return;
	if (event_set(c->ev, nm, vv) == 0)
		c->nset++;
	free(vv);
}

static void
set_time(struct pctx *c, int64_t ms)
{
	if (ms > 0)
		c->ev->timestamp_ms = ms;
}

/* The value of a CLF specifier at s[*i]: up to stop (or blank, or end). */
static size_t
clf_value_end(const char *s, size_t len, size_t i, const char *stop)
{
	size_t k, sl;

	if (stop == NULL)
		return len;
	sl = strlen(stop);
	for (k = i; k + sl <= len; k++)
		if (memcmp(s + k, stop, sl) == 0)
			return k;
	return len;
}

static void
apply_clf(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	size_t i = 0, t, e, used;
	int64_t ms;

	for (t = 0; t < p->ntok && i <= len; t++) {
		const struct clf_tok *k = &p->tok[t];
		const char *stop = t + 1 < p->ntok ? p->tok[t + 1].lit : NULL;

		if (k->lit != NULL) {
			size_t l = strlen(k->lit);

			if (len - i < l || memcmp(s + i, k->lit, l) != 0)
				return;		/* the line does not fit the format */
			i += l;
			continue;
		}
		if (k->rest) {
			put(c, k->field, strlen(k->field), s + i, len - i);
			return;
		}
		if (k->is_time) {
			int rc = k->tfmt != NULL ?
			    logtime_format(k->tfmt, s + i, len - i, c->now, &ms, &used) :
			    logtime_auto(s + i, len - i, c->now, &ms, &used);

			if (rc == 0) {
				set_time(c, ms);
				i += used;
				continue;
			}
		}
		if (stop == NULL && t + 1 < p->ntok)
			stop = " ";	/* two specifiers in a row: a token each */
		e = clf_value_end(s, len, i, stop);
		if (k->field != NULL && !k->is_time && e > i &&
		    !(e - i == 1 && s[i] == '-'))
			put(c, k->field, strlen(k->field), s + i, e - i);
		i = e;
	}
}

static void
apply_csv(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	char v[P_VALUE_MAX];
	size_t i = 0, col = 0, vl;
	bool q;

	while (i <= len && col < p->nfields) {
		vl = 0;
		q = i < len && s[i] == '"';
		if (q)
			i++;
		while (i < len) {
			if (q && s[i] == '"') {
				if (i + 1 < len && s[i + 1] == '"') {
					if (vl < sizeof(v))
						v[vl++] = '"';
					i += 2;
					continue;
				}
				q = false;
				i++;
				continue;
			}
			if (!q && len - i >= p->delim_len &&
			    memcmp(s + i, p->delim, p->delim_len) == 0)
				break;
			if (vl < sizeof(v))
				v[vl++] = s[i];
			i++;
		}
		if (p->fields[col][0] != '\0' && vl > 0)
			put(c, p->fields[col], strlen(p->fields[col]), v, vl);
		col++;
		i += p->delim_len;	/* the delimiter */
	}
}

static bool
kv_sep(char ch)
{
	return isspace((unsigned char)ch) || ch == ';' || ch == ',';
}

/* A token at s[*i]: "quoted" (backslash escapes) or up to stop chars. */
static size_t
kv_token(const char *s, size_t len, size_t *i, char *out, size_t outlen,
    bool is_key)
{
	size_t o = 0;

	if (*i < len && s[*i] == '"') {
		(*i)++;
		while (*i < len && s[*i] != '"') {
			if (s[*i] == '\\' && *i + 1 < len)
				(*i)++;
			if (o < outlen)
				out[o++] = s[*i];
			(*i)++;
		}
		if (*i < len)
			(*i)++;
		return o;
	}
	while (*i < len && !kv_sep(s[*i]) && !(is_key && s[*i] == '=')) {
		if (o < outlen)
			out[o++] = s[*i];
		(*i)++;
	}
	return o;
}

static void
apply_kvp(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	char k[P_NAME_MAX], v[P_VALUE_MAX];
	size_t i = 0, kl, vl, start;

	while (i < len) {
		while (i < len && kv_sep(s[i]))
			i++;
		start = i;
		kl = kv_token(s, len, &i, k, sizeof(k), true);
		if (i >= len || s[i] != '=' || kl == 0 || kl >= sizeof(k)) {
			/* free text: skip the word */
			if (i == start)
				i++;
			continue;
		}
		i++;
		if (i >= len || kv_sep(s[i])) {
			if (!(i < len && s[i] == '"'))
				continue;	/* "key=" then nothing: free text */
		}
		vl = kv_token(s, len, &i, v, sizeof(v), false);
		if (wanted(p, k, kl))
			put(c, k, kl, v, vl);
	}
}

static void apply_one(struct pctx *, const struct parser *, const char *,
    size_t, int);

/* Skip a JSON array (or any bracketed value) at s[*i]. */
static void
json_skip(const char *s, size_t len, size_t *i)
{
	int depth = 0;

	for (; *i < len; (*i)++) {
		if (s[*i] == '"') {
			for ((*i)++; *i < len && s[*i] != '"'; (*i)++)
				if (s[*i] == '\\')
					(*i)++;
		} else if (s[*i] == '{' || s[*i] == '[') {
			depth++;
		} else if ((s[*i] == '}' || s[*i] == ']') && --depth == 0) {
			(*i)++;
			return;
		}
	}
}

/*
 * The members of the object at s[*i]; a nested object's members are
 * flattened as parent_child (liagent's json parser does the same:
 * {"attr":{"command":{"$db":..}}} gives attr_command__db).
 */
static void
json_obj(struct pctx *c, const struct parser *p, const char *s, size_t len,
    size_t *i, const char *prefix, int depth)
{
	char k[P_NAME_MAX], v[P_VALUE_MAX], name[P_NAME_MAX * 2];
	size_t kl, vl;

	(*i)++;
	while (*i < len) {
		while (*i < len && (isspace((unsigned char)s[*i]) || s[*i] == ','))
			(*i)++;
		if (*i >= len || s[*i] == '}') {
			(*i)++;
			return;
		}
		if (s[*i] != '"')
			return;
		kl = kv_token(s, len, i, k, sizeof(k) - 1, true);
		k[kl < sizeof(k) ? kl : sizeof(k) - 1] = '\0';
		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "_" : "", k);
		while (*i < len && isspace((unsigned char)s[*i]))
			(*i)++;
		if (*i >= len || s[*i] != ':')
			return;
		(*i)++;
		while (*i < len && isspace((unsigned char)s[*i]))
			(*i)++;
		if (*i < len && s[*i] == '{') {
			if (depth < P_MAX_DEPTH)
				json_obj(c, p, s, len, i, name, depth + 1);
			else
				json_skip(s, len, i);
			continue;
		}
		if (*i < len && s[*i] == '[') {
			json_skip(s, len, i);
			continue;
		}
		if (*i < len && s[*i] == '"') {
			vl = kv_token(s, len, i, v, sizeof(v), false);
		} else {
			vl = 0;
			while (*i < len && s[*i] != ',' && s[*i] != '}' &&
			    !isspace((unsigned char)s[*i])) {
				if (vl < sizeof(v))
					v[vl++] = s[*i];
				(*i)++;
			}
			if (vl == 4 && memcmp(v, "null", 4) == 0)
				continue;
		}
		if (wanted(p, name, strlen(name)))
			put(c, name, strlen(name), v, vl);
	}
}

static void
apply_json(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && isspace((unsigned char)s[i]))
		i++;
	if (i < len && s[i] == '{')
		json_obj(c, p, s, len, &i, "", 0);
}

static void
apply_regex(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	struct rx_span sp[RX_MAX_GROUPS + 1];
	size_t i, g;
	const char *n;

	if (rx_match(p->re, s, len, 0, sp, RX_MAX_GROUPS + 1) <= 0)
		return;
	for (i = 0; i < rx_names(p->re); i++) {
		n = rx_name_at(p->re, i, &g);
		if (n == NULL || sp[g].start < 0)
			continue;
		if (strcmp(n, "timestamp") == 0) {
			int64_t ms;
			size_t used;

			if (logtime_auto(s + sp[g].start, (size_t)(sp[g].end -
			    sp[g].start), c->now, &ms, &used) == 0) {
				set_time(c, ms);
				continue;
			}
		}
		put(c, n, strlen(n), s + sp[g].start, (size_t)(sp[g].end - sp[g].start));
	}
}

static size_t
word(const char *s, size_t len, size_t *i)
{
	size_t st;

	while (*i < len && s[*i] == ' ')
		(*i)++;
	st = *i;
	while (*i < len && s[*i] != ' ')
		(*i)++;
	return *i - st;
}

/* RFC 5424 structured data: [id k="v" ...][...] */
static size_t
syslog_sd(struct pctx *c, const struct parser *p, const char *s, size_t len,
    size_t i)
{
	char k[P_NAME_MAX], v[P_VALUE_MAX];
	size_t kl, vl;

	if (i < len && s[i] == '-')
		return i + 1;
	while (i < len && s[i] == '[') {
		while (i < len && s[i] != ' ' && s[i] != ']')
			i++;
		while (i < len && s[i] != ']') {
			while (i < len && s[i] == ' ')
				i++;
			kl = 0;
			while (i < len && s[i] != '=' && s[i] != ']' && s[i] != ' ') {
				if (kl < sizeof(k) - 1)
					k[kl++] = s[i];
				i++;
			}
			if (i >= len || s[i] != '=')
				continue;
			i++;
			if (i >= len || s[i] != '"')
				continue;
			i++;
			vl = 0;
			while (i < len && s[i] != '"') {
				if (s[i] == '\\' && i + 1 < len)
					i++;
				if (vl < sizeof(v))
					v[vl++] = s[i];
				i++;
			}
			i++;
			if (p->extract_sd)
				put(c, k, kl, v, vl);
		}
		i++;
	}
	return i;
}

static void
apply_syslog(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	static const char *const fac[] = {
		"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
		"uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
		"local0", "local1", "local2", "local3", "local4", "local5",
		"local6", "local7",
	};
	static const char *const sev[] = {
		"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
	};
	size_t i = 0, st, l, used;
	int pri = -1;
	int64_t ms;

	if (len > 0 && s[0] == '<') {
		for (i = 1, pri = 0; i < len && i < 5 && isdigit((unsigned char)s[i]); i++)
			pri = pri * 10 + (s[i] - '0');
		if (i >= len || s[i] != '>' || pri > 191)
			return;
		i++;
		put(c, "syslog_facility", 15, fac[pri / 8], strlen(fac[pri / 8]));
		put(c, "syslog_severity", 15, sev[pri % 8], strlen(sev[pri % 8]));
	}
	if (i + 1 < len && s[i] == '1' && s[i + 1] == ' ') {	/* RFC 5424 */
		const char *names[] = { "syslog_host", "appname", "procid", "msgid" };
		size_t k;

		i += 2;
		if (logtime_auto(s + i, len - i, c->now, &ms, &used) == 0) {
			set_time(c, ms);
			i += used;
		} else
			word(s, len, &i);
		for (k = 0; k < 4; k++) {
			l = word(s, len, &i);
			if (l > 0 && !(l == 1 && s[i - 1] == '-'))
				put(c, names[k], strlen(names[k]), s + i - l, l);
		}
		while (i < len && s[i] == ' ')
			i++;
		syslog_sd(c, p, s, len, i);
		return;
	}
	/* RFC 3164: Mmm dd hh:mm:ss host tag[pid]: msg */
	if (logtime_auto(s + i, len - i, c->now, &ms, &used) != 0)
		return;
	set_time(c, ms);
	i += used;
	l = word(s, len, &i);
	if (l > 0)
		put(c, "syslog_host", 11, s + i - l, l);
	while (i < len && s[i] == ' ')
		i++;
	st = i;
	while (i < len && s[i] != '[' && s[i] != ':' && s[i] != ' ')
		i++;
	if (i > st && i < len && (s[i] == '[' || s[i] == ':'))
		put(c, "appname", 7, s + st, i - st);
	if (i < len && s[i] == '[') {
		st = ++i;
		while (i < len && isdigit((unsigned char)s[i]))
			i++;
		if (i > st && i < len && s[i] == ']')
			put(c, "procid", 6, s + st, i - st);
	}
}

static void
apply_auto(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	size_t i = 0, used;
	int64_t ms;

	while (i < len && isspace((unsigned char)s[i]))
		i++;
	if (logtime_auto(s + i, len - i, c->now, &ms, &used) == 0) {
		set_time(c, ms);
		i += used;
	}
	while (i < len && isspace((unsigned char)s[i]))
		i++;
	if (i < len && s[i] == '{')
		apply_json(c, p, s + i, len - i);
	else
		apply_kvp(c, p, s + i, len - i);
}

static void
apply_base(struct pctx *c, const struct parser *p, const char *s, size_t len)
{
	size_t i = 0, used;
	int64_t ms;

	switch (p->base) {
	case P_CLF: apply_clf(c, p, s, len); break;
	case P_CSV: apply_csv(c, p, s, len); break;
	case P_KVP: apply_kvp(c, p, s, len); break;
	case P_REGEX: apply_regex(c, p, s, len); break;
	case P_SYSLOG: apply_syslog(c, p, s, len); break;
	case P_JSON: apply_json(c, p, s, len); break;
	case P_AUTO: apply_auto(c, p, s, len); break;
	case P_TIMESTAMP:
		while (i < len && isspace((unsigned char)s[i]))
			i++;
		if (logtime_format(p->tfmt, s + i, len - i, c->now, &ms, &used) == 0)
			set_time(c, ms);
		break;
	}
}

static bool
dec_applies(struct pctx *c, const struct decoder *d)
{
	char nm[P_NAME_MAX];
	const char *v;

	if (d->cond_field == NULL)
		return true;
	if (field_name_normalize(d->cond_field, nm, sizeof(nm)) < 0)
		return false;
	v = event_get(c->ev, nm);
	return v != NULL && fnmatch(d->cond_glob, v, 0) == 0;
}

/* field_rename: move each parsed field to its new name. */
static void
renames(struct pctx *c, const struct parser *p)
{
	char from[P_NAME_MAX], to[P_NAME_MAX], *v;
	const char *cur;
	size_t i;

	for (i = 0; i < p->nren; i++) {
		if (field_name_normalize(p->ren[i].from, from, sizeof(from)) < 0 ||
		    field_name_normalize(p->ren[i].to, to, sizeof(to)) < 0 ||
		    strcmp(from, to) == 0 || strcmp(from, "hostname") == 0 ||
		    strncmp(from, "esxwatch_", 9) == 0)
			continue;
		cur = event_get(c->ev, from);
		if (cur == NULL || event_get(c->ev, to) != NULL)
			continue;
		v = strdup(cur);
		if (v == NULL)
			continue;
		event_unset(c->ev, from);
		event_set(c->ev, to, v);
		free(v);
	}
}

static void
apply_one(struct pctx *c, const struct parser *p, const char *s, size_t len,
    int depth)
{
	const char *fv;
	char *copy;
	size_t i;

	if (p == NULL || depth > P_MAX_DEPTH)
		return;
	apply_base(c, p, s, len);
	for (i = 0; i < p->ndec; i++) {
		char nm[P_NAME_MAX];

		if (field_name_normalize(p->dec[i].field, nm, sizeof(nm)) < 0)
			continue;
		fv = event_get(c->ev, nm);
		if (fv == NULL || !dec_applies(c, &p->dec[i]))
			continue;
		copy = strdup(fv);	/* the decoder may add fields */
		if (copy == NULL)
			continue;
		apply_one(c, p->dec[i].p, copy, strlen(copy), depth + 1);
		free(copy);
	}
	apply_one(c, p->next, s, len, depth + 1);
	renames(c, p);
	for (i = 0; i < p->nexcl; i++) {
		char nm[P_NAME_MAX];

		if (field_name_normalize(p->excl[i], nm, sizeof(nm)) >= 0 &&
		    strcmp(nm, "hostname") != 0 && strncmp(nm, "esxwatch_", 9) != 0)
			event_unset(c->ev, nm);
	}
}

int
parser_apply(const struct parser *p, const char *text, size_t len,
    int64_t now_ms, struct event *ev)
{
	struct pctx c;

	memset(&c, 0, sizeof(c));
	c.ev = ev;
	c.now = now_ms;
	c.p = p;
	apply_one(&c, p, text, len, 0);
	if (p != NULL && p->debug)
		log_limited(LOG_DEBUG, p->name, 1, "parser %s: %d fields from "
		    "an event of %zu bytes", p->name, c.nset, len);
	return c.nset;
}
