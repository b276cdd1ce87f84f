/*
 * dfilter: a destination's filter, liagent's [server] filter
 * "{type; name; expression}, ..." (agent/config/dfilter.h).  The first case is the
 * filter NSX writes into its liagent-effective.ini (VCF 9 "Configure
 * Remote Logging", ../shared/reference/loginsight-api.md [nsx-9]).
 */
#include "t.h"

#include "../../agent/config/dfilter.h"
#include "../../agent/lib/log.h"

static const char nsx[] = "{filelog; nsx-syslog; pri_severity <= 6 and ( "
    "msgid == \"SWITCHING\" or msgid == \"ROUTING\" or msgid == \"FABRIC\" "
    "or msgid == \"SYSTEM\" or msgid == \"POLICY\" or msgid == \"HEALTHCHECK\" "
    "or msgid == \"SHA\" or msgid == \"MONITORING\" )}";

TEST(parses_liagent_strings)
{
	struct dest_filters f = { NULL, 0 };
	char err[200];
	size_t *offs = NULL, off = 0;

	CHECK_INT(dfilter_parse(nsx, &f, &offs, err, sizeof(err), &off), 0);
	CHECK_INT(f.n, 1);
	if (f.n == 1) {
		CHECK_STR(f.v[0].type, "filelog");
		CHECK_STR(f.v[0].name, "nsx-syslog");
		CHECK(strncmp(f.v[0].expr, "pri_severity <= 6 and ( msgid == "
		    "\"SWITCHING\"", 40) == 0);
		CHECK(f.v[0].expr[strlen(f.v[0].expr) - 1] == ')');
		CHECK_INT(offs[0], 1);
		CHECK_INT(offs[1], 10);
		CHECK_INT(offs[2], 22);
	}
	free(offs);
	dfilter_clear(&f);

	/* several, empty parts, ';' and '}' inside a string, blanks */
	CHECK_INT(dfilter_parse("  {agent;;} ,{ * ; vm.* ; x == \"a;}b\" }", &f,
	    NULL, err, sizeof(err), &off), 0);
	CHECK_INT(f.n, 2);
	if (f.n == 2) {
		CHECK_STR(f.v[0].type, "agent");
		CHECK_STR(f.v[0].name, "");
		CHECK_STR(f.v[0].expr, "");
		CHECK_STR(f.v[1].type, "*");
		CHECK_STR(f.v[1].name, "vm.*");
		CHECK_STR(f.v[1].expr, "x == \"a;}b\"");
	}
	dfilter_clear(&f);
	CHECK_INT(dfilter_parse("", &f, NULL, err, sizeof(err), &off), 0);
	CHECK_INT(f.n, 0);
}

TEST(syntax_errors_say_where)
{
	static const struct { const char *s; size_t off; const char *msg; } bad[] = {
		{ "filelog; x; y", 0, "expected '{'" },
		{ "{filelog}", 1, "after the type is missing" },
		{ "{filelog; x }", 10, "after the name is missing" },
		{ "{filelog; x; a == \"}", 0, "no closing '}'" },
		{ "{;;} {;;}", 5, "expected ','" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dest_filters f = { NULL, 0 };
		char err[200] = "";
		size_t off = 99;

		CHECK_INT(dfilter_parse(bad[i].s, &f, NULL, err, sizeof(err), &off), -1);
		CHECK_INT(f.n, 0);
		if (off != bad[i].off || strstr(err, bad[i].msg) == NULL)
			T_FAILF("%s: '%s' at %zu", bad[i].s, err, off);
	}
}

static struct event *
line_of(const char *filelog, const char *sev)
{
	struct event *ev = event_new(1, "a line");

	event_set(ev, "esxwatch_collector", "logwatch");
	event_set(ev, "esxwatch_filelog", filelog);
	if (sev != NULL)
		event_set(ev, "pri_severity", sev);
	return ev;
}

static bool
keeps(const char *spec, const struct event *ev)
{
	struct dest_filters f = { NULL, 0 };
	char err[200];
	size_t off, bad;
	int part;
	struct dfilter *df;
	bool r;

	if (dfilter_parse(spec, &f, NULL, err, sizeof(err), &off) < 0) {
		T_FAILF("%s: %s", spec, err);
		return false;
	}
	df = dfilter_compile(&f, err, sizeof(err), &bad, &part, &off);
	if (df == NULL && f.n > 0)
		T_FAILF("%s: %s", spec, err);
	r = dfilter_keeps(df, ev);
	dfilter_free(df);
	dfilter_clear(&f);
	return r;
}

TEST(what_a_destination_takes)
{
	struct event *nsx_err = line_of("nsx-syslog", "3");
	struct event *nsx_dbg = line_of("nsx-syslog", "7");
	struct event *other = line_of("nsx-syslog-old", "3");
	struct event *nosev = line_of("nsx-syslog", NULL);
	struct event *nic = event_new(1, "vmnic0 link down");

	event_set(nic, "esxwatch_collector", "nic");
	event_set(nsx_err, "msgid", "ROUTING");
	event_set(nsx_dbg, "msgid", "ROUTING");
	event_set(other, "msgid", "ROUTING");
	/* NSX's own filter */
	CHECK(keeps(nsx, nsx_err));
	CHECK(!keeps(nsx, nsx_dbg));		/* severity 7 */
	CHECK(!keeps(nsx, other));		/* the whole name must match */
	CHECK(!keeps(nsx, nosev));		/* not evaluable: not kept */
	CHECK(!keeps(nsx, nic));		/* not a log line */
	/* types */
	CHECK(keeps("{nic;;}", nic));
	CHECK(!keeps("{nic;;}", nsx_err));
	CHECK(keeps("{;;}", nic));
	CHECK(keeps("{*;;}", nsx_dbg));
	CHECK(keeps("{logwatch;;}", nsx_dbg));
	CHECK(!keeps("{winlog;;}", nsx_dbg));
	/* names: a regex for the whole name */
	CHECK(keeps("{filelog; nsx-.*;}", other));
	CHECK(!keeps("{filelog; nsx;}", other));
	CHECK(keeps("{*; ni.;}", nic));		/* a collector's name is its own */
	/* any clause keeps; no clause keeps everything */
	CHECK(keeps("{nic;;}, {filelog; nsx-syslog; pri_severity < 5}", nsx_err));
	CHECK(!keeps("{nic;;}, {filelog; nsx-syslog; pri_severity < 3}", nsx_err));
	CHECK(keeps("", nsx_dbg));
	event_free(nsx_err);
	event_free(nsx_dbg);
	event_free(other);
	event_free(nosev);
	event_free(nic);
}

TEST(compile_errors_name_the_part)
{
	struct dest_filters f = { NULL, 0 };
	char err[200] = "";
	size_t off = 0, bad = 9;
	int part = 0;

	dfilter_add(&f, "filelog", "a", "");
	dfilter_add(&f, "", "x(", "");
	CHECK(dfilter_compile(&f, err, sizeof(err), &bad, &part, &off) == NULL);
	CHECK_INT(bad, 1);
	CHECK_INT(part, 1);
	dfilter_clear(&f);
	dfilter_add(&f, "", "", "a == ");
	CHECK(dfilter_compile(&f, err, sizeof(err), &bad, &part, &off) == NULL);
	CHECK_INT(bad, 0);
	CHECK_INT(part, 2);
	dfilter_clear(&f);
}

int
main(void)
{
	T_PROG("test_dfilter");
	log_init(0, "/dev/null");
	RUN(parses_liagent_strings);
	RUN(syntax_errors_say_where);
	RUN(what_a_destination_takes);
	RUN(compile_errors_name_the_part);
	return t_done();
}
