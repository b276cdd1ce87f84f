/*
 * config_yaml: agent.yaml.  libyaml's event parser builds a small tree of
 * our own, so every node keeps the line and column it came from: errors
 * name the exact place, and duplicate keys (which libyaml's loader would
 * accept silently) are caught while the tree is built.  The tree is then
 * walked with the schema tables (config_schema.c).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config_int.h"

/* The schema is four levels deep; anything far deeper is garbage. */
#define YAML_MAX_DEPTH		64
/* Bounds the tree's memory whatever the input looks like. */
#define YAML_MAX_NODES		200000


void
ynode_free(struct ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++)
		ynode_free(n->v[i]);
	free(n->v);
	free(n->s);
	free(n);
}

static void
ynode_add(struct ynode *n, struct ynode *kid)
{
	if (n->n == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 8;
		n->v = xrealloc(n->v, n->cap * sizeof(*n->v));
	}
	n->v[n->n++] = kid;
}

const char *
ynode_what(const struct ynode *n)
{
	switch (n->type) {
	case YN_SEQ:	return "a list";
	case YN_MAP:	return "a mapping";
	default:	return n->null ? "an empty value" : "a scalar";
	}
}

static struct ynode *
ynode_new(struct lctx *c, enum ytype t, const yaml_mark_t *m)
{
	struct ynode *n = xmalloc(sizeof(*n));

	memset(n, 0, sizeof(*n));
	n->type = t;
	n->line = (int)(m->line + 1 > INT_MAX ? INT_MAX : m->line + 1);
	n->col = (int)(m->column + 1 > INT_MAX ? INT_MAX : m->column + 1);
	c->nnodes++;
	return n;
}

/* 1-based line and column of a byte offset (libyaml's reader errors). */
static void
offset_pos(const char *buf, size_t len, size_t off, int *line, int *col)
{
	int l = 1, cl = 1;

	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			l++;
			cl = 1;
		} else
			cl++;
	}
	*line = l;
	*col = cl;
}

static void
yaml_syntax_error(struct lctx *c, yaml_parser_t *p, const char *buf,
    size_t len)
{
	const char *prob = p->problem ? p->problem : "unknown problem";
	int line, col;

	if (p->error == YAML_MEMORY_ERROR) {
		rep(c, true, 0, 0, "YAML parser out of memory");
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		offset_pos(buf, len, p->problem_offset, &line, &col);
		rep(c, true, line, col, "YAML error: %s", prob);
		return;
	}
	line = (int)p->problem_mark.line + 1;
	col = (int)p->problem_mark.column + 1;
	if (p->context != NULL)
		rep(c, true, line, col, "YAML syntax error: %s (%s started at "
		    "line %d)", prob, p->context, (int)p->context_mark.line + 1);
	else
		rep(c, true, line, col, "YAML syntax error: %s", prob);
}

struct yreader {
	struct lctx	*c;
	yaml_parser_t	 p;
	const char	*buf;
	size_t		 len;
};

static int
ynext(struct yreader *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->p, ev)) {
		yaml_syntax_error(y->c, &y->p, y->buf, y->len);
		return -1;
	}
	return 0;
}

static int
ycmp_keys(const void *a, const void *b)
{
	const struct ynode *x = *(const struct ynode *const *)a;
	const struct ynode *z = *(const struct ynode *const *)b;
	int r = strcmp(x->s, z->s);

	if (r != 0)
		return r;
	if (x->line != z->line)
		return x->line < z->line ? -1 : 1;
	return x->col < z->col ? -1 : x->col > z->col;
}

/*
 * Duplicate keys are errors (YAML says so; libyaml does not check).  Sort
 * the keys so a hostile file with many keys stays O(n log n).
 */
static void
ymap_check(struct lctx *c, const struct ynode *m)
{
	const struct ynode **keys;
	size_t nk = 0;

	if (m->n < 4)
		return;
	keys = xmalloc(m->n / 2 * sizeof(*keys));
	for (size_t i = 0; i + 1 < m->n; i += 2)
		if (m->v[i]->type == YN_SCALAR)
			keys[nk++] = m->v[i];
	qsort(keys, nk, sizeof(*keys), ycmp_keys);
	for (size_t i = 1; i < nk; i++) {
		char b[96];

		if (strcmp(keys[i]->s, keys[i - 1]->s) != 0)
			continue;
		rep(c, true, keys[i]->line, keys[i]->col, "duplicate key '%s' "
		    "(first defined at line %d, column %d)",
		    show(keys[i]->s, b, sizeof(b)), keys[i - 1]->line,
		    keys[i - 1]->col);
	}
	free(keys);
}

static struct ynode *yparse_node(struct yreader *, yaml_event_t *, int);

/* Children until the closing event; ismap: pairs, keys must be scalars. */
static int
yparse_children(struct yreader *y, struct ynode *n, int depth, bool ismap)
{
	yaml_event_type_t end = ismap ? YAML_MAPPING_END_EVENT :
	    YAML_SEQUENCE_END_EVENT;

	for (;;) {
		yaml_event_t ev;
		struct ynode *kid;

		if (ynext(y, &ev) < 0)
			return -1;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		kid = yparse_node(y, &ev, depth + 1);
		if (kid == NULL)
			return -1;
		ynode_add(n, kid);
		if (ismap && (n->n % 2) == 1 && kid->type != YN_SCALAR)
			rep(y->c, true, kid->line, kid->col, "a mapping key "
			    "must be a plain value, not %s", ynode_what(kid));
	}
}

/* Consumes ev.  NULL = a fatal problem (already reported). */
static struct ynode *
yparse_node(struct yreader *y, yaml_event_t *ev, int depth)
{
	struct lctx *c = y->c;
	struct ynode *n = NULL;
	const char *s;
	size_t len;

	if (depth > YAML_MAX_DEPTH) {
		rep(c, true, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "nesting deeper than %d "
		    "levels", YAML_MAX_DEPTH);
		goto err;
	}
	if (c->nnodes >= YAML_MAX_NODES) {
		rep(c, true, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "more than %d values in "
		    "one file", YAML_MAX_NODES);
		goto err;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = ynode_new(c, YN_SCALAR, &ev->start_mark);
		s = (const char *)ev->data.scalar.value;
		len = ev->data.scalar.length;
		n->s = xstrndup(s, len);
		if (memchr(s, '\0', len) != NULL)
			rep(c, true, n->line, n->col, "a value must not "
			    "contain a NUL character");
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    (len == 0 || strcmp(n->s, "~") == 0 ||
		    strcmp(n->s, "null") == 0 || strcmp(n->s, "Null") == 0 ||
		    strcmp(n->s, "NULL") == 0))
			n->null = true;
		break;
	case YAML_ALIAS_EVENT:
		n = ynode_new(c, YN_SCALAR, &ev->start_mark);
		n->s = xstrdup("");
		n->null = true;
		rep(c, true, n->line, n->col, "YAML aliases (*%s) are not "
		    "supported", ev->data.alias.anchor ?
		    (const char *)ev->data.alias.anchor : "");
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		n = ynode_new(c, ev->type == YAML_MAPPING_START_EVENT ?
		    YN_MAP : YN_SEQ, &ev->start_mark);
		yaml_event_delete(ev);
		if (yparse_children(y, n, depth, n->type == YN_MAP) < 0)
			goto err;
		if (n->type == YN_MAP)
			ymap_check(c, n);
		return n;
	default:
		rep(c, true, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "unexpected YAML event");
		goto err;
	}
	yaml_event_delete(ev);
	return n;
err:
	yaml_event_delete(ev);
	ynode_free(n);
	return NULL;
}

/*
 * The one document of buf.  *ok false on a fatal problem; NULL with *ok
 * true = an empty file.
 */
struct ynode *
yaml_tree(struct lctx *c, const char *buf, size_t len, bool *ok)
{
	struct yreader y;
	yaml_event_t ev;
	struct ynode *root = NULL;

	*ok = false;
	memset(&y, 0, sizeof(y));
	y.c = c;
	y.buf = buf;
	y.len = len;
	if (!yaml_parser_initialize(&y.p)) {
		rep(c, true, 0, 0, "cannot initialise the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&y.p, (const unsigned char *)buf, len);
	if (ynext(&y, &ev) < 0)
		goto out;
	yaml_event_delete(&ev);			/* STREAM-START */
	if (ynext(&y, &ev) < 0)
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		*ok = true;
		goto out;
	}
	yaml_event_delete(&ev);			/* DOCUMENT-START */
	if (ynext(&y, &ev) < 0)
		goto out;
	root = yparse_node(&y, &ev, 0);
	if (root == NULL)
		goto out;
	if (ynext(&y, &ev) < 0)			/* DOCUMENT-END */
		goto fail;
	yaml_event_delete(&ev);
	if (ynext(&y, &ev) < 0)
		goto fail;
	if (ev.type != YAML_STREAM_END_EVENT) {
		rep(c, true, (int)ev.start_mark.line + 1,
		    (int)ev.start_mark.column + 1, "only one YAML document "
		    "is allowed in a configuration file");
		yaml_event_delete(&ev);
		goto fail;
	}
	yaml_event_delete(&ev);
	*ok = true;
	goto out;
fail:
	ynode_free(root);
	root = NULL;
out:
	yaml_parser_delete(&y.p);
	return root;
}

/* ------------------------------------------------------------------ */
/* The top level                                                       */
/* ------------------------------------------------------------------ */

/* The core's; the registry's sections follow them in "did you mean". */
static const char *const top_keys[] = {
	"server", "servers", "storage", "logging", "batch", "host", "tags",
	"collectors", "rules_file"
};

/* The core sections that are a plain table onto struct config. */
static const struct {
	const char		*name;
	const struct cfg_key	*keys;
	const size_t		*n;
} core_sections[] = {
	{ "storage", storage_keys, &nstorage_keys },
	{ "logging", logging_keys, &nlogging_keys },
	{ "batch", batch_keys, &nbatch_keys },
	{ "host", host_keys, &nhost_keys },
};

/* A section of the registry's; -1 = none of that name. */
static int
yaml_registry_section(struct lctx *c, struct config *cfg, const char *k,
    const struct ynode *v)
{
	for (size_t i = 0; i < cfg_nsections(); i++) {
		const struct cfg_section *s = cfg_section_at(i);

		if (strcmp(k, s->name) != 0)
			continue;
		if (s->apply != NULL)
			s->apply(c, cfg, v);
		else if (want_map(c, v, k))
			apply_map(c, s->keys, s->nkeys, cfg, v, k, NULL);
		return 0;
	}
	return -1;
}

/* "did you mean": the core's sections, then the registry's. */
static const char *
top_hint(const char *key, char *buf, size_t len)
{
	const char *names[NELEM(top_keys) + 32];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(top_keys); i++)
		names[n++] = top_keys[i];
	for (size_t i = 0; i < cfg_nsections() && n < NELEM(names); i++)
		names[n++] = cfg_section_at(i)->name;
	return suggest(key, names, n, buf, len);
}

/* One top-level key; -1 = not a section we know. */
static int
yaml_section(struct lctx *c, struct config *cfg, const struct ynode *key,
    const struct ynode *v)
{
	const char *k = key->s;

	for (size_t i = 0; i < NELEM(core_sections); i++)
		if (strcmp(k, core_sections[i].name) == 0) {
			if (want_map(c, v, k))
				apply_map(c, core_sections[i].keys,
				    *core_sections[i].n, cfg, v, k, NULL);
			return 0;
		}
	if (strcmp(k, "server") == 0)
		yaml_dest(c, &cfg->server, v, "server", true, key->line,
		    key->col);
	else if (strcmp(k, "servers") == 0)
		yaml_servers(c, cfg, v);
	else if (strcmp(k, "tags") == 0)
		apply_node(c, &tags_key, cfg, v);
	else if (strcmp(k, "rules_file") == 0)
		apply_node(c, &rules_file_key, cfg, v);
	else if (strcmp(k, "collectors") == 0)
		yaml_collectors(c, cfg, v);
	else
		return yaml_registry_section(c, cfg, k, v);
	return 0;
}

void
yaml_apply(struct lctx *c, struct config *cfg, const struct ynode *root)
{
	char b[96], h[96];

	if (root->type == YN_SCALAR && root->null)
		return;
	if (root->type != YN_MAP) {
		rep(c, true, root->line, root->col, "the top level must be a "
		    "mapping of sections (server:, collectors:, ...), got %s",
		    ynode_what(root));
		return;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct ynode *key = root->v[i], *v = root->v[i + 1];

		if (key->type != YN_SCALAR)
			continue;
		if (yaml_section(c, cfg, key, v) < 0)
			rep(c, true, key->line, key->col, "unknown key '%s' at "
			    "the top level%s", show(key->s, b, sizeof(b)),
			    top_hint(key->s, h, sizeof(h)));
	}
}

/* ------------------------------------------------------------------ */
/* liagent.ini                                                         */
/* ------------------------------------------------------------------ */

/*
 * liagent.ini: [section] or [type|name] headers, key=value lines, ; and #
 * comments on their own lines (a ; inside a value is a list separator, as
 * in include=a.log;b.log), values optionally quoted.  What esxwatch does
 * not know is a warning, never fatal: an admin can point esxwatch at the
 * liagent.ini they already have.
 */
