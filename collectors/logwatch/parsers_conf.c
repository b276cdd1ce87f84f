/*
 * parsers_conf: the `parsers:` section (liagent [parser|NAME]), a
 * registry row (agent/config/config_section.h), and the
 * parser/filter keys of filelogs, beside the parsers themselves
 * (collectors/logwatch/parsers.c, agent/lib/lfilter.c): the rows, and the checks that
 * compile what was written so --check-config refuses exactly what would
 * not run, at its line (docs/parsers.md).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>

#include "../../agent/config/config_int.h"
#include "parsers.h"
#include "parsers_conf.h"

#define P(f)	offsetof(struct parser_conf, f)
static const struct cfg_key parser_keys[] = {
	{ .name = "base_parser", .type = KT_OSTR, .off = P(base_parser),
	  .doc = "clf, csv, kvp, timestamp, regex, syslog, json or auto" },
	{ .name = "format", .type = KT_OSTR, .off = P(format), .flags = KF_OMIT_NULL,
	  .doc = "clf: specifiers; timestamp: strftime-like; regex: the regex" },
	{ .name = "fields", .type = KT_OSTR, .off = P(fields), .flags = KF_OMIT_NULL,
	  .doc = "csv: column names; kvp, json: * or the names to keep" },
	{ .name = "delimiter", .type = KT_OSTR, .off = P(delimiter),
	  .flags = KF_OMIT_NULL, .doc = "csv: the column separator (default ,)" },
	{ .name = "field_decoder", .type = KT_OSTR, .off = P(field_decoder),
	  .flags = KF_OMIT_NULL, .doc = "{\"field\": \"parser\"}: parse a field's value" },
	{ .name = "field_rename", .type = KT_OSTR, .off = P(field_rename),
	  .flags = KF_OMIT_NULL, .doc = "{\"old\": \"new\"}" },
	{ .name = "next_parser", .type = KT_OSTR, .off = P(next_parser),
	  .flags = KF_OMIT_NULL, .doc = "Another parser run on the same text" },
	{ .name = "exclude_fields", .type = KT_OSTR, .off = P(exclude_fields),
	  .flags = KF_OMIT_NULL, .doc = "a;b: fields not sent" },
	{ .name = "extract_sd", .type = KT_OSTR, .off = P(extract_sd),
	  .flags = KF_OMIT_NULL, .doc = "syslog: yes adds the structured data" },
	{ .name = "debug", .type = KT_OSTR, .off = P(debug), .flags = KF_OMIT_NULL,
	  .doc = "yes: log at debug level what each event gave" },
};
static const size_t nparser_keys = NELEM(parser_keys);
#undef P

static void
parsers_conf_clear(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nparsers; i++) {
		keys_free(parser_keys, nparser_keys, &cfg->parsers[i]);
		free(cfg->parsers[i].name);
	}
	free(cfg->parsers);
	cfg->parsers = NULL;
	cfg->nparsers = 0;
}

static struct parser_conf *
parser_conf_add(struct config *cfg, const char *name, int line, int col)
{
	struct parser_conf *p;

	for (size_t i = 0; i < cfg->nparsers; i++)
		if (strcmp(cfg->parsers[i].name, name) == 0)
			return &cfg->parsers[i];
	cfg->parsers = xrealloc(cfg->parsers,
	    (cfg->nparsers + 1) * sizeof(*cfg->parsers));
	p = &cfg->parsers[cfg->nparsers++];
	memset(p, 0, sizeof(*p));
	p->name = xstrdup(name);
	p->src_line = line;
	p->src_col = col;
	keys_init(parser_keys, nparser_keys, p);
	return p;
}

static void
yaml_parsers(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96];

	if (!want_map(c, v, "parsers"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct parser_conf *p;

		if (key->type != YN_SCALAR)
			continue;
		if (!name_valid(key->s)) {
			rep(c, true, key->line, key->col, "parsers: '%s' is not "
			    "a valid name (1 to 64 of A-Z a-z 0-9 - _ .)",
			    show(key->s, b, sizeof(b)));
			continue;
		}
		p = parser_conf_add(cfg, key->s, key->line, key->col);
		snprintf(sect, sizeof(sect), "parsers.%s", key->s);
		if (want_map(c, val, sect))
			apply_map(c, parser_keys, nparser_keys, p, val, sect, NULL);
	}
}

static void
print_parsers(FILE *f, const struct config *cfg)
{
	fputs("parsers:", f);
	if (cfg->nparsers == 0)
		fputs(" {}", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nparsers; i++) {
		fputs("  ", f);
		print_str(f, cfg->parsers[i].name);
		fputs(":\n", f);
		keys_print(f, parser_keys, nparser_keys, &cfg->parsers[i], "    ",
		    0);
	}
}

static void
to_def(const struct parser_conf *p, struct parser_def *d)
{
	memset(d, 0, sizeof(*d));
	d->name = p->name;
	d->base_parser = p->base_parser;
	d->format = p->format;
	d->fields = p->fields;
	d->delimiter = p->delimiter;
	d->field_decoder = p->field_decoder;
	d->field_rename = p->field_rename;
	d->next_parser = p->next_parser;
	d->exclude_fields = p->exclude_fields;
	d->extract_sd = p->extract_sd;
	d->debug = p->debug;
}

/*
 * The parsers of cfg, compiled and linked; NULL after reporting (when c
 * is not NULL) what does not compile.  The logwatch collector builds its
 * own set the same way (parsers_from_config).
 */
struct parsers *
parsers_from_config(struct lctx *c, const struct config *cfg)
{
	struct parsers *ps = parsers_new();
	struct parser_def d;
	char err[256];
	bool bad = false;

	if (ps == NULL)
		return NULL;
	for (size_t i = 0; i < cfg->nparsers; i++) {
		to_def(&cfg->parsers[i], &d);
		if (parsers_add(ps, &d, err, sizeof(err)) < 0) {
			if (c != NULL)
				rep(c, true, cfg->parsers[i].src_line,
				    cfg->parsers[i].src_col, "parser '%s': %s",
				    cfg->parsers[i].name, err);
			bad = true;
		}
	}
	if (!bad && parsers_link(ps, err, sizeof(err)) < 0) {
		if (c != NULL)
			rep(c, true, cfg->nparsers > 0 ? cfg->parsers[0].src_line : 1,
			    1, "%s", err);
		bad = true;
	}
	if (bad) {
		parsers_free(ps);
		return NULL;
	}
	return ps;
}

/*
 * CONFIG_KEEP_BROKEN_FILELOGS: a parser that does not compile on its own
 * (a regex, a format) is reported and left out, and so is every filelog
 * that names it (filelog_conf.broken); the rest loads.  A parser another
 * one links to (next_parser, field_decoder) is still an error of the file.
 */
static void
parser_broken(struct lctx *c, struct config *cfg, const struct parser_conf *p,
    const char *err)
{
	char msg[1024];
	bool named = false;

	snprintf(msg, sizeof(msg), "%s:%d:%d: parser '%s': %s", c->file,
	    p->src_line > 0 ? p->src_line : 1, p->src_col > 0 ? p->src_col : 1,
	    p->name, err);
	for (size_t k = 0; k < cfg->nfilelogs; k++) {
		struct filelog_conf *f = &cfg->filelogs[k];

		if (f->parser == NULL || strcmp(f->parser, p->name) != 0)
			continue;
		if (!named) {	/* reported once, for the first of them */
			c->broken = &f->broken;
			rep_compile(c, p->src_line, p->src_col, "parser '%s': %s",
			    p->name, err);
			c->broken = NULL;
			named = true;
		}
		if (f->broken == NULL)
			f->broken = xstrdup(msg);
	}
	if (!named)	/* no filelog to leave out: an error of the file */
		rep(c, true, p->src_line, p->src_col, "parser '%s': %s", p->name,
		    err);
}

static void
parsers_drop_broken(struct lctx *c, struct config *cfg)
{
	for (size_t i = 0; i < cfg->nparsers;) {
		struct parser_conf *p = &cfg->parsers[i];
		struct parsers *one = parsers_new();
		struct parser_def d;
		char err[256];
		int ok;

		if (one == NULL)
			return;
		to_def(p, &d);
		ok = parsers_add(one, &d, err, sizeof(err)) == 0;
		parsers_free(one);
		if (ok) {
			i++;
			continue;
		}
		parser_broken(c, cfg, p, err);
		keys_free(parser_keys, nparser_keys, p);
		free(p->name);
		memmove(p, p + 1, (cfg->nparsers - i - 1) * sizeof(*p));
		cfg->nparsers--;
	}
}

/* Cross-section checks: parsers compile, filelogs name parsers that exist. */
void
parsers_check(struct lctx *c, struct config *cfg)
{
	struct parsers *ps;

	if (c->keep_broken)
		parsers_drop_broken(c, cfg);
	ps = parsers_from_config(c, cfg);
	for (size_t i = 0; i < cfg->nfilelogs; i++) {
		const struct filelog_conf *f = &cfg->filelogs[i];

		if (f->parser == NULL || f->parser[0] == '\0' || ps == NULL ||
		    f->broken != NULL)
			continue;
		if (parsers_get(ps, f->parser) == NULL)
			rep(c, true, f->src_line > 0 ? f->src_line : 1,
			    f->src_col > 0 ? f->src_col : 1, "filelog.%s: parser '%s' is neither "
			    "defined under parsers nor a base parser (auto, clf, "
			    "kvp, json, syslog, timestamp)", f->name, f->parser);
	}
	parsers_free(ps);
}

/* ------------------------------------------------------------------ */
/* liagent.ini: [parser|NAME]                                          */
/* ------------------------------------------------------------------ */

static int
parsers_ini_header(struct cfg_ini *ci, const char *type, char *sub, int line,
    int col)
{
	size_t *idx;

	if (sub == NULL || strcasecmp(type, "parser") != 0)
		return 0;
	sub = cfg_ini_name(ci->c, sub, line, col);
	if (sub == NULL) {
		rep(ci->c, false, line, col, "[parser|]: no name; section "
		    "ignored");
		return -1;
	}
	if (ci->state == NULL)
		ci->state = xmalloc(sizeof(size_t));
	idx = ci->state;
	*idx = (size_t)(parser_conf_add(ci->cfg, sub, line, col) -
	    ci->cfg->parsers);
	return 1;
}

static void
parsers_ini_key(struct cfg_ini *ci, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	const size_t *idx = ci->state;
	int ki = kspec_index(parser_keys, nparser_keys, key);

	if (ki >= 0)
		ini_value(ci->c, &parser_keys[ki], &ci->cfg->parsers[*idx], val,
		    line, vcol);
	else
		cfg_ini_unknown(ci, key, line, kcol, "is not a parser key");
}

static void
parsers_ini_end(struct cfg_ini *ci)
{
	free(ci->state);
	ci->state = NULL;
}

const struct cfg_section parsers_section = {
	.name = "parsers",
	.after = "collectors",
	.doc_title = "parsers.NAME",
	.keys = parser_keys,
	.nkeys = NELEM(parser_keys),
	.clear = parsers_conf_clear,
	.apply = yaml_parsers,
	.print = print_parsers,
	.ini_header = parsers_ini_header,
	.ini_key = parsers_ini_key,
	.ini_end = parsers_ini_end,
};
