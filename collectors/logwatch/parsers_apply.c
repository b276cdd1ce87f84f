/*
 * parsers_apply: running a parser over an event's text (see parsers.h).
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
	vv = p_dupn(v, vlen);
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
