/*
 * docs/configuration.md's key table is generated from the schema rows
 * (config_keys_markdown): this test fails when the block between the
 * markers differs from what the tables say.  To regenerate it:
 *
 *	ESXWATCH_UPDATE_DOCS=1 build/tests/test_configdoc
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/config/config.h"

#define DOC	"docs/configuration.md"
#define BEGIN	"<!-- BEGIN generated key table (tests/unit/test_configdoc.c) -->\n"
#define END	"<!-- END generated key table -->\n"

static char *
generated(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	config_keys_markdown(f);
	fclose(f);
	return buf;
}

static int
rewrite(const char *doc, const char *b, const char *e, const char *gen)
{
	FILE *f = fopen(DOC, "w");

	if (f == NULL)
		return -1;
	fwrite(doc, 1, (size_t)(b - doc) + strlen(BEGIN), f);
	fputs(gen, f);
	fputs(e, f);
	return fclose(f);
}

TEST(key_table_matches_the_schema)
{
	size_t len;
	char *doc = t_slurp(DOC, &len), *gen = generated(), *b, *e;

	b = strstr(doc, BEGIN);
	e = b != NULL ? strstr(b, END) : NULL;
	CHECK(b != NULL && e != NULL && gen != NULL);
	if (b == NULL || e == NULL || gen == NULL)
		goto out;
	/* every row has its doc line */
	CHECK(strstr(gen, " |  |\n") == NULL);
	if (getenv("ESXWATCH_UPDATE_DOCS") != NULL) {
		CHECK_INT(rewrite(doc, b, e, gen), 0);
		goto out;
	}
	if ((size_t)(e - (b + strlen(BEGIN))) != strlen(gen) ||
	    memcmp(b + strlen(BEGIN), gen, strlen(gen)) != 0)
		T_FAILF("%s: the generated key table is out of date; run "
		    "ESXWATCH_UPDATE_DOCS=1 build/tests/test_configdoc", DOC);
out:
	free(doc);
	free(gen);
}

int
main(void)
{
	T_PROG("test_configdoc");
	config_plugins_builtin();
	RUN(key_table_matches_the_schema);
	return t_done();
}
