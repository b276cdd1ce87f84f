/*
 * rules_conf: the rules section of the configuration (a registry row,
 * agent/config/config_section.h), and rule catalogue files
 * (collectors/logwatch/rules/esxi.yaml), beside the engine that uses them
 * (collectors/logwatch/rules.c).  The rows are walked by the schema
 * machinery (agent/config/config_schema.h); what spans keys — exactly one
 * of match or regex, a rule defined twice, files naming filelogs — is
 * here.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/config/config_int.h"
#include "rules_conf.h"

static const char *const severity_choices[] = {
	"info", "warning", "error", "critical", NULL
};


/*
 * rules[].storm: "off" (every match is sent: storm_max -1; "on" = the
 * defaults) or {max: 1..100000, window: 1..86400 s}, a key left out keeping
 * its default (0 = the catalogue's 10 per 60 s).  The row's field is
 * storm_max; storm_window is the int right after it (struct rule_conf).
 */
static const struct cfg_key storm_keys[] = {
	{ .name = "max", .type = KT_INT, .off = 0, .min = 1, .max = 100000,
	  .doc = "Alerts per window and entity before the rest are counted (10)" },
	{ .name = "window", .type = KT_INT, .off = sizeof(int), .min = 1,
	  .max = 86400, .doc = "The window, seconds (60)" },
};

static int
storm_apply(struct lctx *c, const struct cfg_key *k, void *field,
    const struct ynode *v)
{
	int *f = field, pair[2] = { 0, 0 };

	_Static_assert(offsetof(struct rule_conf, storm_window) ==
	    offsetof(struct rule_conf, storm_max) + sizeof(int),
	    "storm_window follows storm_max");
	if (v->type == YN_SCALAR && !v->null && (strcasecmp(v->s, "off") == 0 ||
	    strcasecmp(v->s, "no") == 0 || strcasecmp(v->s, "false") == 0)) {
		f[0] = -1;
		f[1] = 0;
		return 0;
	}
	if (v->type == YN_SCALAR && !v->null && (strcasecmp(v->s, "on") == 0 ||
	    strcasecmp(v->s, "yes") == 0 || strcasecmp(v->s, "true") == 0)) {
		f[0] = f[1] = 0;
		return 0;
	}
	if (!want_map(c, v, k->name))
		return -1;
	apply_map(c, storm_keys, NELEM(storm_keys), pair, v, k->name, NULL);
	f[0] = pair[0];
	f[1] = pair[1];
	return 0;
}

static void
storm_print(FILE *f, const struct cfg_key *k, const void *field,
    const char *in)
{
	const int *v = field;

	if (v[0] < 0)
		fprintf(f, "%s%s: off\n", in, k->name);
	else if (v[0] > 0 || v[1] > 0)
		fprintf(f, "%s%s: { max: %d, window: %d }\n", in, k->name,
		    v[0] > 0 ? v[0] : 10, v[1] > 0 ? v[1] : 60);
}

static const struct cfg_custom storm_type = {
	.type_doc = "`off` or {max, window}",
	.apply = storm_apply,
	.print = storm_print,
};

/* In the order --print-config writes them. */
#define R(f)	offsetof(struct rule_conf, f)
static const struct cfg_key rule_keys[] = {
	{ .name = "name", .type = KT_OSTR, .off = R(name), .check = check_name,
	  .doc = "Rule name (required, unique)" },
	{ .name = "match", .type = KT_OSTR, .off = R(match),
	  .check = check_nonempty, .flags = KF_OMIT_NULL,
	  .doc = "Fixed substring a line must contain" },
	{ .name = "regex", .type = KT_OSTR, .off = R(regex),
	  .check = check_rule_regex, .flags = KF_OMIT_NULL,
	  .doc = "POSIX extended regex, (?<name>...) groups become fields" },
	{ .name = "severity", .type = KT_ENUM, .off = R(severity),
	  .choices = severity_choices, .def = "warning",
	  .doc = "Severity of the alert" },
	{ .name = "files", .type = KT_LIST, .off = R(files),
	  .doc = "filelog names it applies to; empty: all" },
	{ .name = "enabled", .type = KT_IBOOL, .off = R(enabled), .def = "yes",
	  .doc = "no: switch a (built-in) rule off" },
	{ .name = "hint", .type = KT_OSTR, .off = R(hint), .flags = KF_OMIT_NULL,
	  .doc = "What to do about it (esxwatch_hint)" },
	{ .name = "vob_id", .type = KT_OSTR, .off = R(vob_id),
	  .flags = KF_OMIT_NULL, .doc = "The VOB id the rule is about" },
	{ .name = "literal", .type = KT_OSTR, .off = R(literal),
	  .flags = KF_OMIT_NULL, .doc = "Required literal for the prefilter" },
	{ .name = "storm", .type = KT_CUSTOM, .off = R(storm_max),
	  .custom = &storm_type,
	  .doc = "Alerts per window: off (every match) or {max: 10, window: 60}" },
};
#undef R

/* ------------------------------------------------------------------ */
/* rules                                                               */
/* ------------------------------------------------------------------ */

void
rule_conf_free_array(struct rule_conf *rules, size_t n)
{
	if (rules == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		keys_free(rule_keys, NELEM(rule_keys), &rules[i]);
		free(rules[i].src_file);
	}
	free(rules);
}

/* A bad regex also names its rule, wherever the name is in the mapping. */
static void
rule_where(const struct ynode *it, char *where, size_t len)
{
	char b[96];

	snprintf(where, len, " (rule at line %d)", it->line);
	for (size_t j = 0; j + 1 < it->n; j += 2)
		if (it->v[j]->type == YN_SCALAR &&
		    strcmp(it->v[j]->s, "name") == 0 &&
		    it->v[j + 1]->type == YN_SCALAR)
			snprintf(where, len, " (rule '%s' at line %d)",
			    show(it->v[j + 1]->s, b, sizeof(b)), it->line);
}

/* What spans a rule's keys, once its mapping is read. */
static void
rule_finish(struct lctx *c, struct rule_conf *rules, size_t n,
    const struct ynode *it, const struct kpos *pos, size_t item)
{
	struct rule_conf *r = &rules[n - 1];
	bool hm, hr;

	if (r->name == NULL) {
		if (!kspec_refused(rule_keys, NELEM(rule_keys), pos, "name"))
			rep(c, true, it->line, it->col, "rules: item %zu has "
			    "no 'name'", item);
		return;
	}
	/*
	 * Exactly one of match/regex (present but invalid counts: the value
	 * was reported already), except for a name with enabled: no, which
	 * switches a built-in rule off.
	 */
	hm = r->match != NULL || kspec_refused(rule_keys, NELEM(rule_keys), pos,
	    "match");
	hr = r->regex != NULL || kspec_refused(rule_keys, NELEM(rule_keys), pos,
	    "regex");
	if (hm == hr && !(!hm && r->enabled == 0))
		rep(c, true, it->line, it->col, "rule '%s': exactly one of "
		    "'match' or 'regex' is required", r->name);
	for (size_t j = 0; j + 1 < n; j++)
		if (rules[j].name != NULL && strcmp(rules[j].name, r->name) == 0) {
			rep(c, true, it->line, it->col, "rule '%s' is defined "
			    "twice (first at line %d)", r->name,
			    rules[j].src_line);
			break;
		}
}

/*
 * rules: a list of mappings.  Used for agent.yaml and for rule catalogue
 * files alike, so the two can never drift apart.
 */
static void
yaml_rules(struct lctx *c, const struct ynode *v, struct rule_conf **rulesp,
    size_t *np)
{
	struct rule_conf *rules = NULL;
	size_t n = 0;

	if (v->type == YN_SCALAR && v->null)
		goto out;
	if (v->type != YN_SEQ) {
		rep(c, true, v->line, v->col, "'rules': expected a list of "
		    "rules, got %s", ynode_what(v));
		goto out;
	}
	rules = xmalloc((v->n ? v->n : 1) * sizeof(*rules));
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *it = v->v[i];
		struct rule_conf *r = &rules[n];
		struct kpos pos[KPOS_MAX];
		char sect[96], where[160];

		if (it->type != YN_MAP) {
			rep(c, true, it->line, it->col, "rules: item %zu must "
			    "be a mapping (name, match or regex, ...), got %s",
			    i + 1, ynode_what(it));
			continue;
		}
		memset(r, 0, sizeof(*r));
		keys_init(rule_keys, NELEM(rule_keys), r);
		r->src_file = xstrdup(c->file);
		r->src_line = it->line;
		snprintf(sect, sizeof(sect), "rules[%zu]", i + 1);
		memset(pos, 0, sizeof(pos));
		rule_where(it, where, sizeof(where));
		c->where = where;
		apply_map(c, rule_keys, NELEM(rule_keys), r, it, sect, pos);
		c->where = NULL;
		n++;
		rule_finish(c, rules, n, it, pos, i + 1);
	}
out:
	rule_conf_free_array(*rulesp, *np);
	*rulesp = rules;
	*np = n;
}

/* Cross-section checks, once everything is known. */
void
rules_check_files(struct lctx *c, struct config *cfg)
{
	char b[96];

	for (size_t i = 0; i < cfg->nrules; i++) {
		struct rule_conf *r = &cfg->rules[i];

		for (size_t j = 0; j < r->files.n; j++) {
			size_t k;

			for (k = 0; k < cfg->nfilelogs; k++)
				if (strcmp(cfg->filelogs[k].name,
				    r->files.v[j]) == 0)
					break;
			if (k == cfg->nfilelogs)
				rep(c, false, r->src_line, 1, "rule '%s': "
				    "'%s' is not a filelog name",
				    r->name ? r->name : "?",
				    show(r->files.v[j], b, sizeof(b)));
		}
	}
}

static void
print_rules(FILE *f, const struct config *cfg)
{
	fputs("rules:", f);
	if (cfg->nrules == 0)
		fputs(" []", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nrules; i++) {
		/* the first row opens the list item */
		key_print(f, &rule_keys[0], &cfg->rules[i], "  - ");
		keys_print(f, rule_keys + 1, NELEM(rule_keys) - 1,
		    &cfg->rules[i], "    ", 0);
	}
}

static void
rules_apply(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	yaml_rules(c, v, &cfg->rules, &cfg->nrules);
}

static void
rules_clear(struct config *cfg)
{
	rule_conf_free_array(cfg->rules, cfg->nrules);
	cfg->rules = NULL;
	cfg->nrules = 0;
}

const struct cfg_section rules_section = {
	.name = "rules",
	.after = "collectors",
	.doc_title = "rules[]",
	.keys = rule_keys,
	.nkeys = NELEM(rule_keys),
	.clear = rules_clear,
	.apply = rules_apply,
	.print = print_rules,
};

static void
rules_file_top(struct lctx *c, const struct ynode *root,
    struct rule_conf **rules, size_t *n)
{
	char b[96];

	if (root->type == YN_SCALAR && root->null)
		return;
	if (root->type != YN_MAP) {
		rep(c, true, root->line, root->col, "a rules file must be a "
		    "mapping with one key, 'rules:', got %s", ynode_what(root));
		return;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct ynode *key = root->v[i];

		if (key->type != YN_SCALAR)
			continue;
		if (strcmp(key->s, "rules") == 0)
			yaml_rules(c, root->v[i + 1], rules, n);
		else
			rep(c, true, key->line, key->col, "unknown key '%s' "
			    "at the top level of a rules file (only 'rules')",
			    show(key->s, b, sizeof(b)));
	}
}

/* The catalogue text buf (len bytes) read as a rules file named c->file. */
static int
rules_text(struct lctx *c, const char *buf, size_t len,
    struct rule_conf **rules, size_t *n)
{
	struct ynode *root;
	bool ok;

	root = yaml_tree(c, buf, len, &ok);
	if (root != NULL)
		rules_file_top(c, root, rules, n);
	ynode_free(root);
	lctx_flush(c);
	if (c->nerr > 0) {
		rule_conf_free_array(*rules, *n);
		*rules = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int
config_load_rules_file(const char *path, struct rule_conf **rules, size_t *n,
    config_report_fn report, void *arg)
{
	struct lctx c;
	char *buf;
	size_t len;
	int rc;

	*rules = NULL;
	*n = 0;
	memset(&c, 0, sizeof(c));
	c.file = path;
	c.report = report;
	c.arg = arg;
	buf = read_whole_file(&c, path, &len);
	if (buf == NULL) {
		lctx_flush(&c);
		return -1;
	}
	rc = rules_text(&c, buf, len, rules, n);
	free(buf);
	return rc;
}

int
config_load_rules_text(const char *name, const char *text, size_t len,
    struct rule_conf **rules, size_t *n, config_report_fn report, void *arg)
{
	struct lctx c;

	*rules = NULL;
	*n = 0;
	memset(&c, 0, sizeof(c));
	c.file = name;
	c.report = report;
	c.arg = arg;
	return rules_text(&c, text, len, rules, n);
}
