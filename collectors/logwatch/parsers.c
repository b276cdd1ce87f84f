/*
 * parsers: liagent's agent parsers (see parsers.h).
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/rx.h"
#include "logtime.h"
#include "parsers.h"
#include "parsers_int.h"

const char *const parser_base_names[8] = {
	"clf", "csv", "kvp", "timestamp", "regex", "syslog", "json", "auto",
};

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
		if (strcasecmp(base, parser_base_names[i]) == 0)
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
	p->tok[p->ntok].lit = p_dupn(s, n);
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
			t->tfmt = p_dupn(arg, alen);
	} else if (clf_named(*q)) {
		if (arg != NULL && alen > 0)
			t->field = p_dupn(arg, alen);	/* else: skipped */
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
			out[*n] = p_dupn(s, l);
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
	return p_dupn(buf, o);
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
		if (strcasecmp(d->base_parser, parser_base_names[i]) == 0)
			break;
	if (i == 8) {
		snprintf(err, errlen, "base_parser: unknown '%s' (one of clf, csv, "
		    "kvp, timestamp, regex, syslog, json, auto)", d->base_parser);
		free(p);
		return NULL;
	}
	p->base = (enum p_base)i;
	p->name = strdup(val(d->name) != NULL ? d->name : parser_base_names[i]);
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
		if (strcasecmp(name, parser_base_names[i]) != 0 || i == P_CSV ||
		    i == P_REGEX)
			continue;
		if (ps->builtin[i] == NULL) {
			memset(&d, 0, sizeof(d));
			d.base_parser = parser_base_names[i];
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

