/*
 * rules_conf: the configuration's rules: section as a registry row
 * (agent/config/config_section.h), and rule catalogue files.
 * agent/config_plugins.c hands the row to the loader.
 */
#ifndef ESXWATCH_RULES_CONF_H
#define ESXWATCH_RULES_CONF_H

#include <stddef.h>

#include "../../agent/config/config.h"
#include "../../agent/config/config_section.h"

/* rules: (agent.yaml only) */
extern const struct cfg_section rules_section;
/* Warn about rules whose files: name no filelog (filelog_section's check). */
void	 rules_check_files(struct lctx *, struct config *);

/*
 * A rule catalogue file (collectors/logwatch/rules/esxi.yaml): top level `rules:`,
 * a list of the same mappings as agent.yaml's rules (same checks, same
 * FILE:LINE:COL messages).  0 and *rules and *n filled (*n may be 0), or -1
 * after reporting every error, with *rules NULL.  Free with
 * rule_conf_free_array().  In a loaded rule, match, regex, hint, vob_id
 * and literal are NULL when absent (an empty value counts as absent);
 * name and severity are never NULL.  A rule may have neither match nor
 * regex only when it says enabled: no (it switches a built-in rule off).
 */
int		 config_load_rules_file(const char *path, struct rule_conf **rules,
		    size_t *n, config_report_fn report, void *arg);
/* The same from text in memory (the built-in catalogue); name stands for
 * the file in messages. */
int		 config_load_rules_text(const char *name, const char *text,
		    size_t len, struct rule_conf **rules, size_t *n,
		    config_report_fn report, void *arg);
void		 rule_conf_free_array(struct rule_conf *, size_t);

#endif
