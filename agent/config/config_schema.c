/*
 * config_schema: the walker.  Every row of every table (agent/
 * config_schema.h) is applied, defaulted and freed here, for both syntaxes:
 * the YAML reader hands it nodes, the liagent.ini reader strings, so a key
 * means exactly the same thing whichever syntax it arrives in.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"

int
kspec_index(const struct cfg_key *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Was the key present with a value that was refused (and reported)? */
bool
kspec_refused(const struct cfg_key *tab, size_t n, const struct kpos *pos,
    const char *name)
{
	int i = kspec_index(tab, n, name);

	return i >= 0 && pos[i].line > 0 && !pos[i].ok;
}

const char *
unknown_hint(const char *key, const struct cfg_key *tab, size_t n, char *buf,
    size_t len)
{
	const char *names[KPOS_MAX];

	for (size_t i = 0; i < n && i < KPOS_MAX; i++)
		names[i] = tab[i].name;
	return suggest(key, names, n < KPOS_MAX ? n : KPOS_MAX, buf, len);
}

/* ------------------------------------------------------------------ */
/* Scalar parsing                                                      */
/* ------------------------------------------------------------------ */

static int
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on" };
	static const char *const no[] = { "no", "false", "off" };

	for (size_t i = 0; i < NELEM(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* Plain decimal only: "0x10", "1e3", " 5", "5 " and "" are not numbers. */
static int
parse_long(const char *s, long *out, bool *overflow)
{
	const char *p = s;
	long v;
	char *end;

	*overflow = false;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE)
		*overflow = true;
	*out = v;
	return 0;
}

const char *
choices_text(const char *const *ch, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; ch[i] != NULL && o < len; i++) {
		int n = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", ch[i]);

		if (n < 0)
			break;
		o += (size_t)n;
	}
	return buf;
}

static int
choice_index(const char *const *ch, const char *s)
{
	for (int i = 0; ch[i] != NULL; i++)
		if (strcmp(ch[i], s) == 0)
			return i;
	return -1;
}

static const char *
ktype_what(enum ktype t)
{
	switch (t) {
	case KT_INT:
	case KT_LONG:	return "a number";
	case KT_BOOL:
	case KT_IBOOL:	return "a boolean (yes/no)";
	case KT_LIST:	return "a list";
	case KT_KV:	return "a mapping";
	case KT_CUSTOM:	return "a value";
	default:	return "a string";
	}
}

/* KT_PROTO's value: the sink of that name in the registry. */
static int
proto_value(const char *s, int *out)
{
	struct cfg_plugin sk;

	if (s == NULL || cfg_sink_named(s, &sk) < 0)
		return -1;
	*out = sk.id;
	return 0;
}

/*
 * The sink names, ordered by protocol number (cfapi, syslog, http, file).
 * The registry holds at most CFG_SINKS_MAX sinks numbered below
 * CFG_PROTO_MAX (output/sink.h's SINK_MAX and SINK_PROTO_MAX).
 */
#define CFG_SINKS_MAX	16
#define CFG_PROTO_MAX	128
const char *const *
proto_choices(void)
{
	static const char *names[CFG_SINKS_MAX + 1];
	struct cfg_plugin sk;
	size_t n = 0;

	for (int p = 0; p < CFG_PROTO_MAX && n < CFG_SINKS_MAX; p++)
		if (cfg_sink_find(p, &sk) >= 0)
			names[n++] = sk.name;
	names[n] = NULL;
	return names;
}

static int
apply_str(struct lctx *c, const struct cfg_key *k, char **field, const char *s,
    bool isnull, int line, int col)
{
	if (k->type == KT_STR) {
		if (isnull)
			s = "";
		/* a refused value is still kept (the file is invalid anyway),
		 * so a check across keys does not call it missing as well */
		set_str(field, s);
		if (k->check != NULL && k->check(c, k->name, s, line, col) != 0)
			return -1;
		return 0;
	}
	/* KT_OSTR: absent = NULL; "" too, unless the check refuses it */
	if (isnull) {
		set_str(field, NULL);
		return 0;
	}
	if (k->check != NULL && k->check(c, k->name, s, line, col) != 0)
		return -1;
	set_str(field, *s != '\0' ? s : NULL);
	return 0;
}

static int
apply_num(struct lctx *c, const struct cfg_key *k, char *field, const char *s,
    bool isnull, int line, int col)
{
	char b[96];
	bool ovf;
	long lv;

	if (isnull) {
		rep(c, true, line, col, "'%s': expected a number, got "
		    "an empty value", k->name);
		return -1;
	}
	if (parse_long(s, &lv, &ovf) < 0) {
		rep(c, true, line, col, "'%s': expected a number, got "
		    "'%s'", k->name, show(s, b, sizeof(b)));
		return -1;
	}
	if (ovf || lv < k->min || lv > k->max) {
		rep(c, true, line, col, "'%s': %s is out of range "
		    "%ld..%ld", k->name, show(s, b, sizeof(b)),
		    k->min, k->max);
		return -1;
	}
	if (k->type == KT_INT)
		*(int *)(void *)field = (int)lv;
	else
		*(long *)(void *)field = lv;
	return 0;
}

static int
apply_bool(struct lctx *c, const struct cfg_key *k, char *field, const char *s,
    bool isnull, int line, int col)
{
	char b[96];
	bool bv;

	if (isnull || parse_bool(s, &bv) < 0) {
		rep(c, true, line, col, "'%s': expected a boolean "
		    "(yes/no/true/false/on/off), got '%s'", k->name,
		    isnull ? "" : show(s, b, sizeof(b)));
		return -1;
	}
	if (k->type == KT_BOOL)
		*(bool *)(void *)field = bv;
	else
		*(int *)(void *)field = bv ? 1 : 0;
	return 0;
}

static int
apply_choice(struct lctx *c, const struct cfg_key *k, char *field,
    const char *s, bool isnull, int line, int col)
{
	const char *const *ch = k->type == KT_PROTO ? proto_choices() :
	    k->choices;
	char b[96], chb[256];
	int ci = isnull ? -1 : choice_index(ch, s), pv = 0;

	if (ci >= 0 && k->type == KT_PROTO && proto_value(s, &pv) < 0)
		ci = -1;
	if (ci < 0) {
		rep(c, true, line, col, "'%s': expected one of %s; got "
		    "'%s'", k->name, choices_text(ch, chb,
		    sizeof(chb)), isnull ? "" : show(s, b, sizeof(b)));
		return -1;
	}
	if (k->type == KT_ENUM)
		set_str((char **)(void *)field, s);
	else if (k->type == KT_PROTO)
		*(enum dest_proto *)(void *)field = (enum dest_proto)pv;
	else
		*(enum forward_mode *)(void *)field = (enum forward_mode)ci;
	return 0;
}

/*
 * Apply one scalar value.  isnull: the YAML value was empty/~/null (INI:
 * an empty value).  Returns 0 when the value was stored.
 */
int
apply_scalar(struct lctx *c, const struct cfg_key *k, void *base, const char *s,
    bool isnull, int line, int col)
{
	char *field = (char *)base + k->off;

	switch (k->type) {
	case KT_STR:
	case KT_OSTR:
		return apply_str(c, k, (char **)(void *)field, s, isnull, line,
		    col);
	case KT_INT:
	case KT_LONG:
		return apply_num(c, k, field, s, isnull, line, col);
	case KT_BOOL:
	case KT_IBOOL:
		return apply_bool(c, k, field, s, isnull, line, col);
	case KT_ENUM:
	case KT_PROTO:
	case KT_FORWARD:
		return apply_choice(c, k, field, s, isnull, line, col);
	case KT_LIST:
	case KT_KV:
	case KT_CUSTOM:
		break;
	}
	return -1;
}

/* One row's default (def as it would be written in YAML). */
static void
key_default(const struct cfg_key *k, char *field)
{
	const char *d = k->def;
	bool bv = false;
	int pv = 0;

	switch (k->type) {
	case KT_STR:
	case KT_ENUM:
		set_str((char **)(void *)field, d != NULL ? d : "");
		break;
	case KT_OSTR:
		set_str((char **)(void *)field, d);
		break;
	case KT_INT:
		*(int *)(void *)field = d != NULL ? (int)strtol(d, NULL, 10) : 0;
		break;
	case KT_LONG:
		*(long *)(void *)field = d != NULL ? strtol(d, NULL, 10) : 0;
		break;
	case KT_BOOL:
	case KT_IBOOL:
		if (d != NULL)
			(void)parse_bool(d, &bv);
		if (k->type == KT_BOOL)
			*(bool *)(void *)field = bv;
		else
			*(int *)(void *)field = bv ? 1 : 0;
		break;
	case KT_PROTO:
		(void)proto_value(d != NULL ? d : proto_choices()[0], &pv);
		*(enum dest_proto *)(void *)field = (enum dest_proto)pv;
		break;
	case KT_FORWARD:
		pv = d != NULL ? choice_index(k->choices, d) : 0;
		*(enum forward_mode *)(void *)field =
		    (enum forward_mode)(pv > 0 ? pv : 0);
		break;
	case KT_LIST:
		if (d != NULL)
			split_list((struct strlist *)(void *)field, d);
		break;
	case KT_KV:
		break;
	case KT_CUSTOM:
		if (k->custom->init != NULL)
			k->custom->init(k, field);
		break;
	}
}

void
keys_init(const struct cfg_key *tab, size_t n, void *base)
{
	for (size_t i = 0; i < n; i++)
		key_default(&tab[i], (char *)base + tab[i].off);
}

void
keys_free(const struct cfg_key *tab, size_t n, void *base)
{
	for (size_t i = 0; i < n; i++) {
		char *field = (char *)base + tab[i].off;

		switch (tab[i].type) {
		case KT_STR:
		case KT_OSTR:
		case KT_ENUM:
			free(*(char **)(void *)field);
			*(char **)(void *)field = NULL;
			break;
		case KT_LIST:
			strlist_free((struct strlist *)(void *)field);
			break;
		case KT_KV:
			kvlist_free((struct kvlist *)(void *)field);
			break;
		case KT_CUSTOM:
			if (tab[i].custom->free != NULL)
				tab[i].custom->free(field);
			break;
		default:
			break;
		}
	}
}

/*
 * One row's value into another row's field of the same type (a key two
 * sinks declare, config.c dest_key_share()): a copy, so nothing is
 * checked or reported twice.  -1: the types differ or are custom.
 */
int
key_copy(const struct cfg_key *to, void *tobase, const struct cfg_key *from,
    const void *frombase)
{
	char *dst = (char *)tobase + to->off;
	const char *src = (const char *)frombase + from->off;
	const struct strlist *sl = (const void *)src;
	const struct kvlist *kl = (const void *)src;
	struct strlist nl = { NULL, 0 };
	struct kvlist nk = { NULL, 0 };

	if (to->type != from->type)
		return -1;
	switch (from->type) {
	case KT_STR:
	case KT_OSTR:
	case KT_ENUM:
		set_str((char **)(void *)dst, *(char *const *)(const void *)src);
		return 0;
	case KT_INT:
	case KT_IBOOL:
		memcpy(dst, src, sizeof(int));
		return 0;
	case KT_LONG:
		memcpy(dst, src, sizeof(long));
		return 0;
	case KT_BOOL:
		memcpy(dst, src, sizeof(bool));
		return 0;
	case KT_PROTO:
		memcpy(dst, src, sizeof(enum dest_proto));
		return 0;
	case KT_FORWARD:
		memcpy(dst, src, sizeof(enum forward_mode));
		return 0;
	case KT_LIST:
		for (size_t i = 0; i < sl->n; i++)
			strlist_add(&nl, sl->v[i]);
		strlist_free((struct strlist *)(void *)dst);
		*(struct strlist *)(void *)dst = nl;
		return 0;
	case KT_KV:
		for (size_t i = 0; i < kl->n; i++)
			kvlist_set(&nk, kl->v[i].key, kl->v[i].value);
		kvlist_free((struct kvlist *)(void *)dst);
		*(struct kvlist *)(void *)dst = nk;
		return 0;
	case KT_CUSTOM:
		break;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* YAML nodes                                                          */
/* ------------------------------------------------------------------ */

/* A list row's check, item by item (each reports its own error). */
void
check_list(struct lctx *c, const struct cfg_key *k, const struct strlist *l,
    size_t from, int line, int col)
{
	if (k->check == NULL)
		return;
	for (size_t i = from; i < l->n; i++)
		(void)k->check(c, k->name, l->v[i], line, col);
}

static void
apply_list_node(struct lctx *c, const struct cfg_key *k, struct strlist *l,
    const struct ynode *v)
{
	struct strlist nl = { NULL, 0 };

	if (v->type == YN_SCALAR) {
		if (!v->null)
			split_list(&nl, v->s);
		check_list(c, k, &nl, 0, v->line, v->col);
	} else if (v->type == YN_SEQ) {
		for (size_t i = 0; i < v->n; i++) {
			const struct ynode *e = v->v[i];

			if (e->type != YN_SCALAR || e->null || *e->s == '\0') {
				rep(c, true, e->line, e->col, "'%s': a list "
				    "item must be a non-empty string, got %s",
				    k->name, e->type == YN_SCALAR && !e->null ?
				    "''" : ynode_what(e));
				continue;
			}
			strlist_add(&nl, e->s);
			check_list(c, k, &nl, nl.n - 1, e->line, e->col);
		}
	} else {
		rep(c, true, v->line, v->col, "'%s': expected a list or a "
		    ";-separated string, got %s", k->name, ynode_what(v));
		return;
	}
	strlist_free(l);
	*l = nl;
}

static void
apply_kv_node(struct lctx *c, const struct cfg_key *k, struct kvlist *l,
    const struct ynode *v)
{
	struct kvlist nl = { NULL, 0 };
	char b[96];

	if (v->type == YN_SCALAR && v->null) {
		kvlist_free(l);
		return;
	}
	if (v->type != YN_MAP) {
		rep(c, true, v->line, v->col, "'%s': expected a mapping, got "
		    "%s", k->name, ynode_what(v));
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		const char *vs;

		if (key->type != YN_SCALAR)
			continue;
		if (val->type != YN_SCALAR) {
			rep(c, true, val->line, val->col, "'%s': the value of "
			    "'%s' must be a string, got %s", k->name,
			    show(key->s, b, sizeof(b)), ynode_what(val));
			continue;
		}
		vs = val->null ? "" : val->s;
		if (k->check != NULL && k->check(c, k->name, key->s, key->line,
		    key->col) != 0)
			continue;
		if (k->vcheck != NULL && k->vcheck(c, k->name, vs, val->line,
		    val->col) != 0)
			continue;
		kvlist_set(&nl, key->s, vs);
	}
	kvlist_free(l);
	*l = nl;
}

int
apply_node(struct lctx *c, const struct cfg_key *k, void *base,
    const struct ynode *v)
{
	char *field = (char *)base + k->off;

	if (k->type == KT_LIST) {
		apply_list_node(c, k, (struct strlist *)(void *)field, v);
		return 0;
	}
	if (k->type == KT_CUSTOM)
		return k->custom->apply(c, k, field, v);
	if (k->type == KT_KV) {
		apply_kv_node(c, k, (struct kvlist *)(void *)field, v);
		return 0;
	}
	if (v->type != YN_SCALAR) {
		char chb[256];
		const char *const *ch = k->type == KT_PROTO ?
		    proto_choices() : k->choices;

		if (ch != NULL)
			rep(c, true, v->line, v->col, "'%s': expected one of "
			    "%s; got %s", k->name, choices_text(ch, chb,
			    sizeof(chb)), ynode_what(v));
		else
			rep(c, true, v->line, v->col, "'%s': expected %s, got "
			    "%s", k->name, ktype_what(k->type), ynode_what(v));
		return -1;
	}
	return apply_scalar(c, k, base, v->s, v->null, v->line, v->col);
}

/*
 * A mapping of known keys onto base.  pos (KPOS_MAX entries) records where
 * each key was set.  section names the mapping in messages.
 */
void
apply_map(struct lctx *c, const struct cfg_key *tab, size_t ntab, void *base,
    const struct ynode *m, const char *section, struct kpos *pos)
{
	char b[96], h[96];

	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct ynode *key = m->v[i], *val = m->v[i + 1];
		bool ok;
		int ki;

		if (key->type != YN_SCALAR)
			continue;
		ki = kspec_index(tab, ntab, key->s);
		if (ki < 0) {
			rep(c, true, key->line, key->col, "unknown key '%s' in "
			    "section '%s'%s", show(key->s, b, sizeof(b)),
			    section, unknown_hint(key->s, tab, ntab, h,
			    sizeof(h)));
			continue;
		}
		/* the position of a key that was there, valid or not */
		ok = apply_node(c, &tab[ki], base, val) == 0;
		if (pos != NULL) {
			pos[ki].line = val->line;
			pos[ki].col = val->col;
			pos[ki].ok = ok;
		}
	}
}

/* A section's value: a mapping, or empty (= all defaults). */
bool
want_map(struct lctx *c, const struct ynode *v, const char *what)
{
	if (v->type == YN_MAP)
		return true;
	if (v->type == YN_SCALAR && v->null)
		return false;
	rep(c, true, v->line, v->col, "'%s': expected a mapping, got %s", what,
	    ynode_what(v));
	return false;
}

/* A key of a map of named entries (servers, filelog): a scalar that is a
 * valid name; any other name is reported. */
bool
entry_named(struct lctx *c, const struct ynode *key, const char *what)
{
	char b[96];

	if (key->type != YN_SCALAR)
		return false;
	if (name_valid(key->s))
		return true;
	rep(c, true, key->line, key->col, "%s: '%s' is not a valid name "
	    "(1 to 64 of A-Z a-z 0-9 - _ .)", what, show(key->s, b, sizeof(b)));
	return false;
}
