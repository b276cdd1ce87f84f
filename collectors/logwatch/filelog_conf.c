/*
 * filelog_conf: the filelog: section of the configuration (liagent.ini's
 * [filelog|NAME], [common|filelog] and [common|global]) as a registry row
 * (agent/config/config_section.h): the files logwatch follows.  The rows
 * are walked by the schema machinery; the defaults, liagent's merging of
 * common keys and what other sections name are here.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/config/config_int.h"
#include "filelog_conf.h"
#include "parsers_conf.h"
#include "rules_conf.h"

static const char *const forward_choices[] = { "matches", "all", NULL };

/* The filelogs a configuration without a filelog section follows. */
static const char *const filelog_defaults[] = { "vmkernel", "vobd", "hostd" };

#define F(f)	offsetof(struct filelog_conf, f)
static const struct cfg_key filelog_keys[] = {
	/* NULL = "not given": filelog_resolve() fills host.log_dir in */
	{ .name = "directory", .type = KT_OSTR, .off = F(directory),
	  .doc = "Where the files are; empty: host.log_dir" },
	{ .name = "include", .type = KT_LIST, .off = F(include),
	  .check = check_file_glob,
	  .doc = "File-name globs; empty: every file in the directory" },
	{ .name = "exclude", .type = KT_LIST, .off = F(exclude),
	  .check = check_file_glob,
	  .doc = "File names or globs not to follow" },
	{ .name = "event_marker", .type = KT_OSTR, .off = F(event_marker),
	  .check = check_regex, .flags = KF_RAW,
	  .doc = "Perl-compatible regex (PCRE2) matching the first line of a multi-line event" },
	{ .name = "tags", .type = KT_KV, .off = F(tags), .check = check_tag_name,
	  .doc = "Fields added to this file's events" },
	{ .name = "forward", .type = KT_FORWARD, .off = F(forward),
	  .choices = forward_choices, .def = "matches",
	  .doc = "matches: only lines a rule matched; all: every line" },
	{ .name = "read_from_head", .type = KT_BOOL, .off = F(read_from_head),
	  .def = "no", .doc = "A file seen for the first time is read from its start" },
	{ .name = "enabled", .type = KT_BOOL, .off = F(enabled), .def = "yes",
	  .doc = "Follow this filelog" },
	{ .name = "parser", .type = KT_OSTR, .off = F(parser), .flags = KF_OMIT_NULL,
	  .doc = "A parsers: name, or auto, clf, kvp, json, syslog, timestamp (docs/parsers.md)" },
	{ .name = "whitelist", .type = KT_OSTR, .off = F(whitelist),
	  .flags = KF_OMIT_NULL, .check = check_lfilter,
	  .doc = "Only events for which this filter expression is true are sent" },
	{ .name = "blacklist", .type = KT_OSTR, .off = F(blacklist),
	  .flags = KF_OMIT_NULL, .check = check_lfilter,
	  .doc = "Events for which this filter expression is true are dropped" },
	{ .name = "exclude_fields", .type = KT_LIST, .off = F(exclude_fields),
	  .doc = "Fields not sent (;-separated or a list)" },
};
static const size_t nfilelog_keys = NELEM(filelog_keys);
#undef F

/* ------------------------------------------------------------------ */
/* filelog                                                             */
/* ------------------------------------------------------------------ */

static void
filelogs_clear(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nfilelogs; i++) {
		keys_free(filelog_keys, nfilelog_keys, &cfg->filelogs[i]);
		free(cfg->filelogs[i].name);
		free(cfg->filelogs[i].broken);
	}
	free(cfg->filelogs);
	cfg->filelogs = NULL;
	cfg->nfilelogs = 0;
}

static struct filelog_conf *
filelog_add(struct config *cfg, const char *name)
{
	struct filelog_conf *f;

	cfg->filelogs = xrealloc(cfg->filelogs,
	    (cfg->nfilelogs + 1) * sizeof(*cfg->filelogs));
	f = &cfg->filelogs[cfg->nfilelogs++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	keys_init(filelog_keys, nfilelog_keys, f);
	return f;
}

/* The default filelogs; their directories stay unresolved (NULL). */
static void
filelogs_default(struct config *cfg)
{
	for (size_t i = 0; i < NELEM(filelog_defaults); i++) {
		struct filelog_conf *f = filelog_add(cfg, filelog_defaults[i]);
		char inc[64];

		snprintf(inc, sizeof(inc), "%s.log", filelog_defaults[i]);
		strlist_add(&f->include, inc);
	}
}

/* filelog: replaces the default map (a user lists what they want). */
static void
yaml_filelogs(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96];

	filelogs_clear(cfg);
	if (!want_map(c, v, "filelog"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct filelog_conf *f;

		if (!entry_named(c, key, "filelog"))
			continue;
		f = filelog_add(cfg, key->s);
		f->src_line = key->line;
		f->src_col = key->col;
		snprintf(sect, sizeof(sect), "filelog.%s", key->s);
		if (want_map(c, val, sect)) {
			c->broken = &f->broken;
			apply_map(c, filelog_keys, nfilelog_keys, f, val,
			    sect, NULL);
			c->broken = NULL;
		}
	}
}

static void
print_filelogs(FILE *f, const struct config *cfg)
{
	fputs("filelog:", f);
	if (cfg->nfilelogs == 0)
		fputs(" {}", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nfilelogs; i++) {
		fputs("  ", f);
		print_str(f, cfg->filelogs[i].name);
		fputs(":\n", f);
		keys_print(f, filelog_keys, nfilelog_keys, &cfg->filelogs[i],
		    "    ", 0);
	}
}

/* A filelog without a directory reads host.log_dir. */
static void
filelog_resolve(struct config *cfg)
{
	const char *dir = cfg->log_dir[0] != '\0' ? cfg->log_dir : "/var/log";

	for (size_t i = 0; i < cfg->nfilelogs; i++)
		if (cfg->filelogs[i].directory == NULL)
			cfg->filelogs[i].directory = xstrdup(dir);
}

/*
 * What names a filelog or is named by one, once everything is read:
 * rules' files (warnings), then the parsers filelogs name (errors, only
 * when nothing failed so far).
 */
static void
filelog_check(struct lctx *c, struct config *cfg)
{
	rules_check_files(c, cfg);
	if (c->nerr == 0)
		parsers_check(c, cfg);
}

/* ------------------------------------------------------------------ */
/* liagent.ini                                                         */
/* ------------------------------------------------------------------ */

enum flsect { FL_FILELOG, FL_GLOBAL, FL_COMMON };

/* The row's state through one liagent.ini load. */
struct flini {
	enum flsect	 sect;
	size_t		 idx;		/* filelogs[] index */
	bool		 replaced;	/* the default filelogs are gone */
	/* [common|filelog] and [common|global] keys every filelog gets (as
	 * liagent: lists merged, single values the filelog's own first) */
	struct filelog_conf	 common;
	bool			 have_common;
};

static struct flini *
flini(struct cfg_ini *ci)
{
	if (ci->state == NULL) {
		ci->state = xmalloc(sizeof(struct flini));
		memset(ci->state, 0, sizeof(struct flini));
	}
	return ci->state;
}

static int
filelog_ini_header(struct cfg_ini *ci, const char *type, char *sub, int line,
    int col)
{
	struct config *cfg = ci->cfg;
	struct flini *st;

	if (sub != NULL && strcasecmp(type, "common") == 0 &&
	    (strcasecmp(sub, "global") == 0 || strcasecmp(sub, "filelog") == 0)) {
		flini(ci)->sect = strcasecmp(sub, "global") == 0 ? FL_GLOBAL :
		    FL_COMMON;
		return 1;
	}
	if (sub == NULL || strcasecmp(type, "filelog") != 0)
		return 0;
	sub = cfg_ini_name(ci->c, sub, line, col);
	if (sub == NULL) {
		rep(ci->c, false, line, col, "[filelog|]: no name; section "
		    "ignored");
		return -1;
	}
	st = flini(ci);
	if (!st->replaced) {
		filelogs_clear(cfg);
		st->replaced = true;
	}
	st->sect = FL_FILELOG;
	for (st->idx = 0; st->idx < cfg->nfilelogs; st->idx++)
		if (strcmp(cfg->filelogs[st->idx].name, sub) == 0)
			return 1;
	/* liagent forwards every line of a filelog */
	filelog_add(cfg, sub)->forward = FORWARD_ALL;
	cfg->filelogs[cfg->nfilelogs - 1].src_line = line;
	cfg->filelogs[cfg->nfilelogs - 1].src_col = col;
	return 1;
}

static void
ini_filelog_key(struct cfg_ini *ci, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	struct filelog_conf *f = &ci->cfg->filelogs[flini(ci)->idx];
	int ki = kspec_index(filelog_keys, nfilelog_keys, key);

	if (ki >= 0) {
		/* event_marker is Perl-compatible as it is (PCRE2) */
		ci->c->broken = &f->broken;
		ini_value(ci->c, &filelog_keys[ki], f, val, line, vcol);
		ci->c->broken = NULL;
	} else if (strcmp(key, "charset") == 0)
		cfg_ini_unknown(ci, key, line, kcol, "is not supported by "
		    "esxwatch (files are read as UTF-8; other bytes are "
		    "replaced)");
	else
		cfg_ini_unknown(ci, key, line, kcol, "is not a known key");
}

/* A key of [common|filelog] or [common|global] (other than tags). */
static void
ini_common_key(struct cfg_ini *ci, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	struct flini *st = flini(ci);
	int ki = kspec_index(filelog_keys, nfilelog_keys, key);

	if (!st->have_common) {
		memset(&st->common, 0, sizeof(st->common));
		keys_init(filelog_keys, nfilelog_keys, &st->common);
		st->have_common = true;
	}
	if (ki >= 0 && strcmp(key, "directory") != 0 &&
	    strcmp(key, "forward") != 0 && strcmp(key, "read_from_head") != 0 &&
	    strcmp(key, "enabled") != 0)
		ini_value(ci->c, &filelog_keys[ki], &st->common, val, line, vcol);
	else
		cfg_ini_unknown(ci, key, line, kcol, ki >= 0 ? "is not a common "
		    "option (liagent: tags, include, exclude, event_marker, "
		    "exclude_fields, parser)" : "is not a known key");
}

static void
filelog_ini_key(struct cfg_ini *ci, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	switch (flini(ci)->sect) {
	case FL_FILELOG:
		ini_filelog_key(ci, key, val, line, kcol, vcol);
		return;
	case FL_GLOBAL:
		/* [common|global] tags are every event's (the core's tags:) */
		if (strcmp(key, "tags") == 0)
			ini_value(ci->c, &tags_key, ci->cfg, val, line, vcol);
		else
			ini_common_key(ci, key, val, line, kcol, vcol);
		return;
	case FL_COMMON:
		ini_common_key(ci, key, val, line, kcol, vcol);
		return;
	}
}

/* Apply the common keys to every filelog, as liagent merges them. */
static void
filelog_ini_end(struct cfg_ini *ci)
{
	struct flini *st = ci->state;
	struct filelog_conf *cm;

	if (st == NULL)
		return;
	cm = &st->common;
	for (size_t i = 0; st->have_common && i < ci->cfg->nfilelogs; i++) {
		struct filelog_conf *f = &ci->cfg->filelogs[i];

		for (size_t k = 0; k < cm->include.n; k++)
			strlist_add(&f->include, cm->include.v[k]);
		for (size_t k = 0; k < cm->exclude.n; k++)
			strlist_add(&f->exclude, cm->exclude.v[k]);
		for (size_t k = 0; k < cm->exclude_fields.n; k++)
			strlist_add(&f->exclude_fields, cm->exclude_fields.v[k]);
		for (size_t k = 0; k < cm->tags.n; k++)
			if (kvlist_get(&f->tags, cm->tags.v[k].key) == NULL)
				kvlist_set(&f->tags, cm->tags.v[k].key,
				    cm->tags.v[k].value);
		if (f->event_marker == NULL && cm->event_marker != NULL)
			set_str(&f->event_marker, cm->event_marker);
		if (f->parser == NULL && cm->parser != NULL)
			set_str(&f->parser, cm->parser);
		if (f->whitelist == NULL && cm->whitelist != NULL)
			set_str(&f->whitelist, cm->whitelist);
		if (f->blacklist == NULL && cm->blacklist != NULL)
			set_str(&f->blacklist, cm->blacklist);
	}
	if (st->have_common)
		keys_free(filelog_keys, nfilelog_keys, cm);
	free(st);
	ci->state = NULL;
}

const struct cfg_section filelog_section = {
	.name = "filelog",
	.after = "collectors",
	.doc_title = "filelog.NAME",
	.keys = filelog_keys,
	.nkeys = NELEM(filelog_keys),
	.init = filelogs_default,
	.clear = filelogs_clear,
	.apply = yaml_filelogs,
	.resolve = filelog_resolve,
	.check = filelog_check,
	.print = print_filelogs,
	.ini_header = filelog_ini_header,
	.ini_key = filelog_ini_key,
	.ini_end = filelog_ini_end,
};
