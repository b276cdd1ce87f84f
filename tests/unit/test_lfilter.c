/*
 * lfilter: the examples of the Log Insight agent documentation
 * (GUID-519C6823, "Filtering events") and of NSX's generated [server]
 * filter (../shared/reference/loginsight-api.md).
 */
#include "t.h"

#include "../../agent/lib/lfilter.h"

static const char *const fields[][2] = {
	{ "response_size", "13" }, { "pri_severity", "5" },
	{ "msgid", "SWITCHING" }, { "remote_host", "127.0.0.1" },
	{ "empty", "" },
};

static const char *
get(void *arg, const char *name)
{
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(fields[i][0], name) == 0)
			return fields[i][1];
	return NULL;
}

static int
ev(const char *expr)
{
	char err[128];
	size_t off;
	struct lfilter *f = lfilter_compile(expr, err, sizeof(err), &off);
	int r;

	if (f == NULL) {
		T_FAILF("%s: %s at %zu", expr, err, off);
		return -9;
	}
	r = lfilter_eval(f, get, NULL);
	lfilter_free(f);
	return r;
}

TEST(documented_comparisons)
{
	CHECK_INT(ev("123.0 == \"000123\""), 1);
	CHECK_INT(ev("\"00987\" == \"987.00\""), 1);
	CHECK_INT(ev("response_size >= \"12.12\""), 1);
	CHECK_INT(ev("\"09123\" < \"234\""), 0);
	CHECK_INT(ev("remote_host != \"127.0.0.1\""), 0);
	CHECK_INT(ev("\"abc\" < \"abd\""), 1);
	CHECK_INT(ev("\"B\" < \"a\""), 1);	/* case-sensitive */
}

TEST(logic_and_missing_fields)
{
	CHECK_INT(ev("pri_severity <= 6 and ( msgid == \"SWITCHING\" or msgid == \"FIREWALL\" )"), 1);
	CHECK_INT(ev("pri_severity <= 4 && msgid == \"SWITCHING\""), 0);
	CHECK_INT(ev("!(pri_severity > 6) || nothere == 1"), 1);
	CHECK_INT(ev("nothere == 1"), -1);
	CHECK_INT(ev("nothere == 1 and msgid == \"X\""), 0);	/* false either way */
	CHECK_INT(ev("not msgid"), 0);
	CHECK_INT(ev("empty"), 0);
	CHECK_INT(ev("msgid == \"SWITCH\\\"ING\""), 0);
}

TEST(syntax_errors_name_the_offset)
{
	char err[128];
	size_t off = 0;

	CHECK(lfilter_compile("msgid == ", err, sizeof(err), &off) == NULL);
	CHECK_INT(off, 9);
	CHECK(lfilter_compile("(a == 1", err, sizeof(err), &off) == NULL);
	CHECK(strstr(err, "')'") != NULL);
	CHECK(lfilter_compile("a == \"x", err, sizeof(err), &off) == NULL);
	CHECK(lfilter_compile("a == 1 b", err, sizeof(err), &off) == NULL);
	CHECK(strstr(err, "after") != NULL);
	{
		char deep[200];

		memset(deep, '(', 100);
		memcpy(deep + 100, "a", 2);
		CHECK(lfilter_compile(deep, err, sizeof(err), &off) == NULL);
		CHECK(strstr(err, "deep") != NULL);
	}
}

int
main(void)
{
	T_PROG("test_lfilter");
	RUN(documented_comparisons);
	RUN(logic_and_missing_fields);
	RUN(syntax_errors_name_the_offset);
	return t_done();
}
