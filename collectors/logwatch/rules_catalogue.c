/*
 * rules_catalogue: the catalogue in use, a file or the built-in text
 * (rules_catalogue.h).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules_catalogue.h"
#include "rules_conf.h"

static bool
readable(const char *p)
{
	return access(p, R_OK) == 0;
}

/* rules_file or $ESXWATCH_RULES_FILE, when either is set. */
static const char *
explicit_path(const char *rules_file)
{
	const char *env = getenv("ESXWATCH_RULES_FILE");

	if (rules_file != NULL && rules_file[0] != '\0')
		return rules_file;
	if (env != NULL && env[0] != '\0')
		return env;
	return NULL;
}

int
rules_catalogue_path(const char *rules_file, char *out, size_t outlen)
{
	static const char *const fixed[] = {
		"/opt/esxwatch/share/rules/esxi.yaml",
		"/usr/share/esxwatch/rules/esxi.yaml",
	};
	static const char *const rel[] = {
		"../share/rules/esxi.yaml",		/* /opt/esxwatch/bin */
		"../share/esxwatch/rules/esxi.yaml",	/* PREFIX/bin/esxwatch */
	};
	const char *set = explicit_path(rules_file);
	char exe[PATH_MAX], *slash;
	ssize_t n;
	size_t i;

	/* An explicit path is that path and nothing else: a wrong one is
	 * reported, never replaced by another catalogue. */
	if (set != NULL) {
		snprintf(out, outlen, "%s", set);
		return readable(out) ? 0 : -1;
	}
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (readable(fixed[i])) {
			snprintf(out, outlen, "%s", fixed[i]);
			return 0;
		}
	}
	/* an installation under a prefix: <prefix>/bin/esxwatch */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		goto none;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL)
		goto none;
	*slash = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
		if (snprintf(out, outlen, "%s/%s", exe, rel[i]) < (int)outlen &&
		    readable(out))
			return 0;
none:
	snprintf(out, outlen, "%s", fixed[0]);
	return -1;
}

int
rules_catalogue_load(const char *rules_file, enum rules_catalogue_from *from,
    char *what, size_t whatlen, struct rule_conf **rules, size_t *n,
    config_report_fn report, void *arg)
{
	*rules = NULL;
	*n = 0;
	if (rules_catalogue_path(rules_file, what, whatlen) == 0) {
		*from = RC_FILE;
		return config_load_rules_file(what, rules, n, report, arg);
	}
	if (explicit_path(rules_file) != NULL) {
		*from = RC_MISSING;
		return -1;
	}
	*from = RC_BUILTIN;
	snprintf(what, whatlen, "%s", RULES_CATALOGUE_BUILTIN);
	return config_load_rules_text(RULES_CATALOGUE_BUILTIN,
	    (const char *)rules_catalogue_builtin, rules_catalogue_builtin_len,
	    rules, n, report, arg);
}

static void
quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	(void)is_error;
	(void)msg;
}

/*
 * A YAML comment, so the printed configuration still reads back as
 * agent.yaml; a path is printed with its control characters as '?', so
 * it cannot end the comment.
 */
void
rules_catalogue_print(const char *rules_file, FILE *f)
{
	enum rules_catalogue_from from;
	struct rule_conf *v;
	char what[PATH_MAX];
	size_t n;
	int rc;

	rc = rules_catalogue_load(rules_file, &from, what, sizeof(what), &v, &n,
	    quiet, NULL);
	for (char *p = what; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (rc == 0)
		fprintf(f, "# rule catalogue in use: %s (%zu rule%s)\n", what, n,
		    n == 1 ? "" : "s");
	else if (from == RC_MISSING)
		fprintf(f, "# rule catalogue: %s cannot be read; only the rules "
		    "above are used\n", what);
	else
		fprintf(f, "# rule catalogue: %s has errors; only the rules "
		    "above are used\n", what);
	rule_conf_free_array(v, n);
}
