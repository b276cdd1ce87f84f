/*
 * libFuzzer target: the rule engine (collectors/logwatch/rules.c).  The input's
 * first line is a user rule's regex (names, literal derivation, regcomp),
 * the rest a log line matched against the built-in catalogue (the binary's
 * own copy of collectors/logwatch/rules/esxi.yaml, loaded once) plus that
 * rule.  Also feeds the storm suppressor (collectors/logwatch/storm.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/config/config.h"
#include "../../collectors/logwatch/rules.h"
#include "../../collectors/logwatch/rules_catalogue.h"
#include "../../collectors/logwatch/scsi.h"
#include "../../collectors/logwatch/storm.h"

static struct rules *cat;	/* the catalogue, compiled once */
static int loaded;

static void
quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	(void)is_error;
	(void)msg;
}

static void
summary(void *arg, const char *rule, const char *entity, uint64_t n,
    int64_t window, const char *last)
{
	(void)arg;
	(void)window;
	if (n == 0 || rule == NULL || entity == NULL || last == NULL)
		abort();
}

/* A saved window restores into a fresh suppressor, and saves the same. */
static void
restore_into(void *arg, const char *rule, const char *entity, const char *state)
{
	struct storm *s2 = storm_new(2, 1000, 4);

	(void)arg;
	if (s2 == NULL)
		return;
	if (storm_restore(s2, rule, entity, state) != 0)
		abort();
	storm_free(s2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rules *r;
	struct rules_match m, m2;
	struct rule_conf rc;
	struct storm *st;
	char err[256], re[96], *line;
	const uint8_t *nl;
	size_t i, relen;

	if (!loaded) {
		struct rule_conf *v;
		size_t n;

		loaded = 1;
		cat = rules_new();
		if (config_load_rules_text(RULES_CATALOGUE_BUILTIN,
		    (const char *)rules_catalogue_builtin,
		    rules_catalogue_builtin_len, &v, &n, quiet, NULL) == 0) {
			for (i = 0; i < n; i++)
				rules_add(cat, &v[i], err, sizeof(err));
			rule_conf_free_array(v, n);
		}
		rules_compile(cat, err, sizeof(err));
	}
	nl = memchr(data, '\n', size);
	relen = nl ? (size_t)(nl - data) : 0;
	if (relen >= sizeof(re) || memchr(data, '\0', relen) != NULL)
		relen = 0;
	memcpy(re, data, relen);
	re[relen] = '\0';
	r = rules_new();
	if (r == NULL)
		return 0;
	memset(&rc, 0, sizeof(rc));
	rc.name = (char *)"fuzz";
	rc.regex = re;
	rc.severity = (char *)"info";
	rc.enabled = 1;
	if (relen > 0) {
		char lit[96];

		if (rules_regex_literal(re, lit, sizeof(lit)) >= 0 &&
		    memchr(lit, '\0', sizeof(lit)) == NULL)
			abort();
		/* PCRE2 compiles it or says why; its limits bound the match. */
		if (rules_add(r, &rc, err, sizeof(err)) == 0 &&
		    rules_at(r, 0)->ncaps > RULES_MAX_CAPS)
			abort();
	}
	rules_compile(r, err, sizeof(err));
	size -= nl ? relen + 1 : 0;
	data += nl ? relen + 1 : 0;
	line = malloc(size ? size : 1);
	if (line == NULL) {
		rules_free(r);
		return 0;
	}
	memcpy(line, data, size);
	st = storm_new(2, 1000, 4);
	if (rules_match(r, NULL, line, size, &m2) == 1 &&
	    (m2.rule == NULL || m2.ncaps > RULES_MAX_CAPS))
		abort();
	(void)rules_match(cat, "hostd", line, size, &m2);
	if (size >= 3)
		(void)scsi_sense_text(line[0] & 0xf, (unsigned char)line[1],
		    (unsigned char)line[2]);
	if (rules_match(cat, "vmkernel", line, size, &m) == 1) {
		if (m.rule == NULL || m.ncaps > RULES_MAX_CAPS)
			abort();
		for (i = 0; i < m.ncaps; i++)
			if (strlen(m.caps[i].value) >= RULES_CAP_VALUE_MAX)
				abort();
		for (i = 0; i < 5; i++)
			storm_hit(st, m.rule->name, m.ncaps ? m.caps[0].value : "",
			    (int64_t)i * 400, line, size, summary, NULL);
		/* A rule's own limit, and the checkpoint round trip. */
		for (i = 0; i < 4; i++)
			storm_hit_at(st, "own", m.ncaps ? m.caps[0].value : "", 1,
			    5000, (int64_t)i, line, size, summary, NULL);
		storm_foreach(st, restore_into, NULL);
	}
	if (storm_restore(st, "r", "e", "garbage") == 0)
		abort();
	storm_due(st, 100000, true, summary, NULL);
	storm_free(st);
	free(line);
	rules_free(r);
	return 0;
}
