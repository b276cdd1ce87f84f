/*
 * server.filter / servers.NAME.filter, liagent's [server] filter
 * (agent/config/dfilter.h; docs/outputs.md "Filtering a destination"): in
 * liagent.ini and agent.yaml the string "{type; name; expression}, ...",
 * in agent.yaml also a list of {type, name, expression} mappings.  Every
 * part is checked here, with the column of the part at fault.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "dfilter.h"
#include "../lib/rx.h"

/* "" or "*", filelog, winlog (none on this host: a warning), or the name
 * of an esxwatch collector. */
static int
check_filter_type(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	struct cfg_plugin cp;

	if (*v == '\0' || strcmp(v, "*") == 0 || strcmp(v, "filelog") == 0 ||
	    cfg_collector_named(v, &cp))
		return 0;
	if (strcmp(v, "winlog") == 0) {
		rep(c, false, line, col, "'%s': there are no Windows event logs "
		    "here; this filter keeps nothing", key);
		return 0;
	}
	rep(c, true, line, col, "'%s': the type '%.40s' is neither filelog, "
	    "an esxwatch collector (nic, datastore, vsan, smart, agent, ...) "
	    "nor empty or * (any)", key, v);
	return -1;
}

static int
check_filter_name(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	struct dest_filters one = { NULL, 0 };
	char err[160];
	size_t bad, off = 0;
	int part, rc = 0;
	struct dfilter *df;

	if (*v == '\0')
		return 0;
	dfilter_add(&one, "", v, "");
	df = dfilter_compile(&one, err, sizeof(err), &bad, &part, &off);
	if (df == NULL) {
		rep(c, true, line, col + (int)off, "'%s': invalid name regex: %s",
		    key, err);
		rc = -1;
	}
	dfilter_free(df);
	dfilter_clear(&one);
	return rc;
}

static int
check_filter_expr(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	return *v == '\0' ? 0 : check_lfilter(c, key, v, line, col);
}

#define FC(f)	offsetof(struct dest_filter, f)
static const struct cfg_key clause_keys[] = {
	{ .name = "type", .type = KT_STR, .off = FC(type),
	  .check = check_filter_type,
	  .doc = "filelog, an esxwatch collector, or empty/* for any" },
	{ .name = "name", .type = KT_STR, .off = FC(name),
	  .check = check_filter_name,
	  .doc = "Regex for the whole filelog (or collector) name; empty: any" },
	{ .name = "expression", .type = KT_STR, .off = FC(expr),
	  .check = check_filter_expr,
	  .doc = "liagent filter expression over the fields; empty: every event" },
};
#undef FC

static int
filter_apply_str(struct lctx *c, const struct cfg_key *k, void *field,
    const char *s, int line, int col)
{
	struct dest_filters *f = field, got = { NULL, 0 };
	char err[200];
	size_t *offs = NULL, off = 0;
	int rc = 0;

	dfilter_clear(f);
	if (dfilter_parse(s, &got, &offs, err, sizeof(err), &off) < 0) {
		rep(c, true, line, col + (int)off, "'%s': %s", k->name, err);
		return -1;
	}
	for (size_t i = 0; i < got.n; i++) {
		const struct dest_filter *d = &got.v[i];

		if (check_filter_type(c, k->name, d->type, line,
		    col + (int)offs[3 * i]) < 0 ||
		    check_filter_name(c, k->name, d->name, line,
		    col + (int)offs[3 * i + 1]) < 0 ||
		    check_filter_expr(c, k->name, d->expr, line,
		    col + (int)offs[3 * i + 2]) < 0)
			rc = -1;
	}
	free(offs);
	if (rc == 0)
		*f = got;
	else
		dfilter_clear(&got);
	return rc;
}

static int
filter_apply(struct lctx *c, const struct cfg_key *k, void *field,
    const struct ynode *v)
{
	struct dest_filters *f = field;
	int before = c->nerr;

	if (v->type == YN_SCALAR)
		return filter_apply_str(c, k, field, v->null ? "" : v->s,
		    v->line, v->col);
	dfilter_clear(f);
	if (v->type != YN_SEQ) {
		rep(c, true, v->line, v->col, "'%s': expected a list of {type, "
		    "name, expression} or a \"{type; name; expression}\" "
		    "string, got %s", k->name, ynode_what(v));
		return -1;
	}
	for (size_t i = 0; i < v->n; i++) {
		struct dest_filter d;

		if (!want_map(c, v->v[i], k->name))
			continue;
		memset(&d, 0, sizeof(d));
		keys_init(clause_keys, NELEM(clause_keys), &d);
		apply_map(c, clause_keys, NELEM(clause_keys), &d, v->v[i],
		    k->name, NULL);
		dfilter_add(f, d.type, d.name, d.expr);
		keys_free(clause_keys, NELEM(clause_keys), &d);
	}
	if (c->nerr == before)
		return 0;
	dfilter_clear(f);
	return -1;
}

static void
filter_free(void *field)
{
	dfilter_clear(field);
}

static void
filter_print(FILE *f, const struct cfg_key *k, const void *field,
    const char *in)
{
	const struct dest_filters *d = field;

	if (d->n == 0) {
		fprintf(f, "%s%s: []\n", in, k->name);
		return;
	}
	fprintf(f, "%s%s:\n", in, k->name);
	for (size_t i = 0; i < d->n; i++) {
		fprintf(f, "%s  - type: ", in);
		print_str(f, d->v[i].type);
		fprintf(f, "\n%s    name: ", in);
		print_str(f, d->v[i].name);
		fprintf(f, "\n%s    expression: ", in);
		print_str(f, d->v[i].expr);
		fputc('\n', f);
	}
}

const struct cfg_custom dest_filter_type = {
	.type_doc = "`{type; name; expression}` string or list",
	.apply = filter_apply,
	.apply_str = filter_apply_str,
	.free = filter_free,
	.print = filter_print,
};
