/*
 * rules_catalogue: which catalogue of known error strings logwatch loads,
 * and loading it (docs/rules.md "Where the catalogue comes from").
 *
 * The catalogue is built in: the Makefile turns
 * collectors/logwatch/rules/esxi.yaml into a C array at build time
 * (packaging/embed.sh, $(B)/gen/rules_catalogue_builtin.c), so a binary run
 * straight from the build tree, a copied binary or a static ESXi one
 * always has it, and parses it with the same code as a file.  A file
 * overrides it, in this order:
 *
 *   1. rules_file (agent.yaml), if set: that path and nothing else;
 *   2. $ESXWATCH_RULES_FILE, if set: that path and nothing else;
 *   3. the first that exists of /opt/esxwatch/share/rules/esxi.yaml (the
 *      VIB), /usr/share/esxwatch/rules/esxi.yaml (the .deb),
 *      <binary's dir>/../share/rules/esxi.yaml and
 *      <binary's dir>/../share/esxwatch/rules/esxi.yaml (an install under
 *      a prefix): the packages install the same text as the binary's;
 *   4. the built-in one.
 *
 * A path set in 1 or 2 that cannot be read is reported, never replaced by
 * another catalogue: whoever set it meant that file.
 */
#ifndef ESXWATCH_RULES_CATALOGUE_H
#define ESXWATCH_RULES_CATALOGUE_H

#include <stdio.h>

#include "../../agent/config/config.h"

/* What messages call the built-in catalogue (FILE:LINE:COL's FILE). */
#define RULES_CATALOGUE_BUILTIN	"built-in"

/* The text of collectors/logwatch/rules/esxi.yaml, NUL-terminated (the
 * generated source; len without the NUL). */
extern const unsigned char rules_catalogue_builtin[];
extern const size_t rules_catalogue_builtin_len;

/*
 * The catalogue file of 1-3 above: 0 and its path in out, or -1 when
 * none applies (out names a path that was looked for: with rules_file or
 * $ESXWATCH_RULES_FILE set, that path).
 */
int	rules_catalogue_path(const char *rules_file, char *out, size_t outlen);

/* Where the catalogue in use comes from: a file, the built-in text, or
 * nowhere (a path set in 1 or 2 cannot be read). */
enum rules_catalogue_from { RC_FILE, RC_BUILTIN, RC_MISSING };

/*
 * Load the catalogue in use for rules_file into *rules and *n (free with
 * rule_conf_free_array()); what names it: its path, or
 * RULES_CATALOGUE_BUILTIN.  Returns 0, or -1 (*rules NULL) when it is
 * missing or has errors (each reported through report, as for a file).
 */
int	rules_catalogue_load(const char *rules_file, enum rules_catalogue_from *from,
	    char *what, size_t whatlen, struct rule_conf **rules, size_t *n,
	    config_report_fn report, void *arg);

/* For --print-config: one comment line naming the catalogue in use and
 * the number of its rules (or why there is none). */
void	rules_catalogue_print(const char *rules_file, FILE *);

#endif
