/*
 * A section of a module's own reaches the configuration loader as a
 * registry row (agent/config/config_section.h) and nothing else: this test
 * adds two to a copy of the built-in table and loads agent.yaml and
 * liagent.ini files through them, with no edit in agent/config/.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/config/config.h"
#include "../../agent/config/config_int.h"

static char tmpdir[64];

/* "extra:": a custom row, its value kept here (struct config has no
 * field for a test's section). */
static int extra_value, extra_inits, extra_clears, extra_checks;
static char extra_ini[64];

static const struct cfg_key extra_keys[] = {
	{ .name = "level", .type = KT_INT, .off = 0, .min = 1, .max = 9,
	  .def = "3", .doc = "A test's level" },
};

static void
extra_init(struct config *cfg)
{
	(void)cfg;
	extra_inits++;
	extra_value = 3;
}

static void
extra_clear(struct config *cfg)
{
	(void)cfg;
	extra_clears++;
}

static void
extra_apply(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	(void)cfg;
	if (want_map(c, v, "extra"))
		apply_map(c, extra_keys, NELEM(extra_keys), &extra_value, v,
		    "extra", NULL);
}

static void
extra_check(struct lctx *c, struct config *cfg)
{
	(void)cfg;
	extra_checks++;
	if (extra_value == 7)
		rep(c, true, 1, 1, "extra: 7 is not allowed with the rest");
}

static void
extra_print(FILE *f, const struct config *cfg)
{
	(void)cfg;
	fprintf(f, "extra:\n  level: %d\n", extra_value);
}

static int
extra_ini_header(struct cfg_ini *ci, const char *type, char *sub, int line,
    int col)
{
	(void)ci;
	(void)line;
	(void)col;
	return sub == NULL && strcmp(type, "extra") == 0;
}

static void
extra_ini_key(struct cfg_ini *ci, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	(void)vcol;
	if (strcmp(key, "note") == 0)
		snprintf(extra_ini, sizeof(extra_ini), "%s", val);
	else
		cfg_ini_unknown(ci, key, line, kcol, "is not an extra key");
}

static const struct cfg_section extra_section = {
	.name = "extra",
	.keys = extra_keys,
	.nkeys = NELEM(extra_keys),
	.init = extra_init,
	.clear = extra_clear,
	.apply = extra_apply,
	.check = extra_check,
	.print = extra_print,
	.ini_header = extra_ini_header,
	.ini_key = extra_ini_key,
};

/* "plain:": a plain row onto struct config (here host.tools_dir, which
 * it shares for the test), placed after host:. */
static const struct cfg_key plain_keys[] = {
	{ .name = "alias", .type = KT_STR, .off = offsetof(struct config,
	  tools_dir), .doc = "Where the tools are, again" },
};

static const struct cfg_section plain_section = {
	.name = "plain",
	.after = "host",
	.keys = plain_keys,
	.nkeys = NELEM(plain_keys),
};

/* "early:": another, right after storage: (onto host.log_dir). */
static const struct cfg_key early_keys[] = {
	{ .name = "dir", .type = KT_STR, .off = offsetof(struct config,
	  log_dir), .doc = "Where the logs are, again" },
};

static const struct cfg_section early_section = {
	.name = "early",
	.after = "storage",
	.keys = early_keys,
	.nkeys = NELEM(early_keys),
};

static struct cfg_registry reg;
static const struct cfg_section *sections[16];

static void
use_extended(void)
{
	const struct cfg_registry *b = config_plugins_registry();
	size_t n = 0;

	reg = *b;
	for (size_t i = 0; i < b->nsections && n + 3 < NELEM(sections); i++)
		sections[n++] = b->sections[i];
	sections[n++] = &extra_section;
	sections[n++] = &plain_section;
	sections[n++] = &early_section;
	reg.sections = sections;
	reg.nsections = n;
	config_use(&reg);
}

static char msgs[4096];

static void
collect(void *arg, bool is_error, const char *msg)
{
	size_t o = strlen(msgs);

	(void)arg;
	snprintf(msgs + o, sizeof(msgs) - o, "%s%s\n", is_error ? "" :
	    "warning: ", msg);
}

static const char *
write_file(const char *name, const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

static char *
printed(const struct config *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	config_print(cfg, f);
	fclose(f);
	return buf;
}

TEST(a_row_is_a_section_of_agent_yaml)
{
	const char *p = write_file("a.yaml", "extra:\n  level: 5\n"
	    "plain:\n  alias: /opt/x\n");
	struct config *cfg;
	char *out, *host, *plain, *tags, *extra, *rf, *storage, *early, *logging;

	extra_inits = extra_clears = extra_checks = 0;
	msgs[0] = '\0';
	cfg = config_load(p, collect, NULL);
	CHECK(cfg != NULL);
	CHECK_STR(msgs, "");
	if (cfg == NULL)
		return;
	CHECK_INT(extra_inits, 1);
	CHECK_INT(extra_checks, 1);
	CHECK_INT(extra_value, 5);
	CHECK_STR(cfg->tools_dir, "/opt/x");
	out = printed(cfg);
	CHECK(out != NULL);
	/* placed after the section each names, or at the end */
	host = out != NULL ? strstr(out, "\nhost:\n") : NULL;
	plain = out != NULL ? strstr(out, "\nplain:\n  alias: \"/opt/x\"\n") : NULL;
	tags = out != NULL ? strstr(out, "\ntags:") : NULL;
	rf = out != NULL ? strstr(out, "\nrules_file:") : NULL;
	extra = out != NULL ? strstr(out, "\nextra:\n  level: 5\n") : NULL;
	CHECK(host != NULL && plain != NULL && tags != NULL && rf != NULL &&
	    extra != NULL);
	CHECK(host < plain && plain < tags && rf < extra);
	storage = out != NULL ? strstr(out, "\nstorage:\n") : NULL;
	early = out != NULL ? strstr(out, "\nearly:\n  dir: \"\"\n") : NULL;
	logging = out != NULL ? strstr(out, "\nlogging:\n") : NULL;
	CHECK(storage != NULL && early != NULL && logging != NULL);
	CHECK(storage < early && early < logging);
	free(out);
	config_free(cfg);
	CHECK_INT(extra_clears, 1);
}

TEST(a_row_reports_like_the_loader)
{
	const char *p = write_file("b.yaml", "extra:\n  level: 12\n  lvl: 1\n"
	    "extr: {}\n");

	msgs[0] = '\0';
	CHECK(config_load(p, collect, NULL) == NULL);
	CHECK(strstr(msgs, "b.yaml:2:10: ") != NULL);
	CHECK(strstr(msgs, "b.yaml:3:3: unknown key 'lvl' in section "
	    "'extra'") != NULL);
	CHECK(strstr(msgs, "b.yaml:4:1: unknown key 'extr' at the top level "
	    "(did you mean 'extra'?)") != NULL);
	/* a row's check runs once the file is read, and fails the load */
	p = write_file("c.yaml", "extra:\n  level: 7\n");
	msgs[0] = '\0';
	CHECK(config_load(p, collect, NULL) == NULL);
	CHECK(strstr(msgs, "c.yaml:1:1: extra: 7 is not allowed with the "
	    "rest") != NULL);
}

TEST(a_row_takes_its_liagent_ini_sections)
{
	const char *p = write_file("d.ini", "[extra]\nnote = hello\n"
	    "other = 1\n[server]\nhostname = li.example.com\n");
	struct config *cfg;

	extra_ini[0] = '\0';
	msgs[0] = '\0';
	cfg = config_load(p, collect, NULL);
	CHECK(cfg != NULL);
	CHECK_STR(extra_ini, "hello");
	CHECK(strstr(msgs, "d.ini:3:1: warning: 'other' in [extra] is not an "
	    "extra key; ignored") != NULL);
	if (cfg != NULL)
		CHECK_STR(cfg->server.hostname, "li.example.com");
	config_free(cfg);
}

TEST(the_docs_table_has_the_rows)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (f == NULL)
		return;
	config_keys_markdown(f);
	fclose(f);
	CHECK(strstr(buf, "\n#### extra\n") != NULL);
	CHECK(strstr(buf, "| `level` | integer | `3` | 1..9 | A test's level |")
	    != NULL);
	CHECK(strstr(buf, "\n#### host\n") < strstr(buf, "\n#### plain\n"));
	free(buf);
}

int
main(void)
{
	T_PROG("test_cfgsection");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/esxwatch-test-cfgsect-XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		printf("FAIL: test_cfgsection/setup: mkdtemp\n");
		return 1;
	}
	use_extended();
	RUN(a_row_is_a_section_of_agent_yaml);
	RUN(a_row_reports_like_the_loader);
	RUN(a_row_takes_its_liagent_ini_sections);
	RUN(the_docs_table_has_the_rows);
	unlink(write_file("a.yaml", ""));
	unlink(write_file("b.yaml", ""));
	unlink(write_file("c.yaml", ""));
	unlink(write_file("d.ini", ""));
	rmdir(tmpdir);
	return t_done();
}
