/*
 * parsers: liagent's agent parsers on the examples of the Log Insight
 * agent documentation and the sflanders.net parser series (cited in
 * docs/parsers.md), and the timestamp forms of collectors/logwatch/logtime.h.
 */
#include "t.h"

#include "../../agent/event.h"
#include "../../collectors/logwatch/logtime.h"
#include "../../collectors/logwatch/parsers.h"

#define NOW 1733000000000LL	/* 2024-11-30T20:53:20Z */

static struct parsers *ps;

static const struct parser *
def(const char *name, const char *base, const char *format, const char *fields)
{
	struct parser_def d;
	char err[256];

	memset(&d, 0, sizeof(d));
	d.name = name;
	d.base_parser = base;
	d.format = format;
	d.fields = fields;
	if (parsers_add(ps, &d, err, sizeof(err)) < 0) {
		T_FAILF("parser %s: %s", name, err);
		return NULL;
	}
	if (parsers_link(ps, err, sizeof(err)) < 0)
		T_FAILF("link %s: %s", name, err);
	return parsers_get(ps, name);
}

static struct event *
run(const struct parser *p, const char *text)
{
	struct event *ev = event_new(NOW, text);

	event_set(ev, "hostname", "esx01");
	parser_apply(p, text, strlen(text), NOW, ev);
	return ev;
}

TEST(clf_default_apache_line)
{
	const struct parser *p = def("apache", "clf", NULL, NULL);
	struct event *ev = run(p, "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "
	    "\"GET /apache_pb.gif HTTP/1.0\" 200 2326");

	CHECK_STR(event_get(ev, "remote_host"), "127.0.0.1");
	CHECK(event_get(ev, "remote_log_name") == NULL);	/* "-" */
	CHECK_STR(event_get(ev, "remote_auth_user"), "frank");
	CHECK_STR(event_get(ev, "request"), "GET /apache_pb.gif HTTP/1.0");
	CHECK_STR(event_get(ev, "status_code"), "200");
	CHECK_STR(event_get(ev, "response_size"), "2326");
	CHECK_INT(ev->timestamp_ms, 971211336000LL);
	CHECK_STR(event_get(ev, "hostname"), "esx01");
	event_free(ev);
}

/* sflanders.net, "Log Insight 3.0 Agents: Parser Examples", test 1. */
TEST(clf_named_fields_and_rest)
{
	const struct parser *p = def("hq", "clf",
	    "%i %i %i %{severity}i  [%{class}i] [%{thread}i@%M", NULL);
	struct event *ev = run(p, "22-09-2015 15:37:36,109 UTC INFO  [AgentDaemonMain] "
	    "[ProductPluginManager@847] Loading plugin: system-plugin.jar");

	CHECK_STR(event_get(ev, "severity"), "INFO");
	CHECK_STR(event_get(ev, "class"), "AgentDaemonMain");
	CHECK_STR(event_get(ev, "thread"), "ProductPluginManager");
	CHECK_STR(event_get(ev, "log_message"), "847] Loading plugin: system-plugin.jar");
	CHECK_INT(ev->timestamp_ms, NOW);	/* no %t: the time is kept */
	event_free(ev);
}

TEST(clf_time_with_format)
{
	const struct parser *p = def("t", "clf", "%{%Y-%m-%d %H:%M:%S}t %{level}i %M", NULL);
	struct event *ev = run(p, "2015-09-22 15:37:36 WARN disk almost full");

	CHECK_INT(ev->timestamp_ms, 1442936256000LL);
	CHECK_STR(event_get(ev, "level"), "WARN");
	CHECK_STR(event_get(ev, "log_message"), "disk almost full");
	event_free(ev);
}

/* The agent documentation's KVP example. */
TEST(kvp_all_fields)
{
	const struct parser *p = def("kv", "kvp", NULL, "*");
	struct event *ev = run(p, "scope=local; abstract=false; lazyInit=false; "
	    "autowireMode=0; dependencyCheck=0; name=\"a \\\"b\\\" c\" empty= free text");

	CHECK_STR(event_get(ev, "scope"), "local");
	CHECK_STR(event_get(ev, "abstract"), "false");
	CHECK_STR(event_get(ev, "lazyinit"), "false");
	CHECK_STR(event_get(ev, "autowiremode"), "0");
	CHECK_STR(event_get(ev, "dependencycheck"), "0");
	CHECK_STR(event_get(ev, "name"), "a \"b\" c");
	CHECK(event_get(ev, "empty") == NULL);
	event_free(ev);
	p = def("kv2", "kvp", NULL, "scope,name");
	ev = run(p, "scope=local abstract=false name=x");
	CHECK_STR(event_get(ev, "scope"), "local");
	CHECK(event_get(ev, "abstract") == NULL);
	event_free(ev);
}

TEST(csv_columns_quotes_and_delimiter)
{
	struct parser_def d;
	char err[256];
	struct event *ev;
	const struct parser *p = def("c", "csv", NULL, "date,,Event Text,count");

	ev = run(p, "2015-01-01,skipped,\"a, \"\"quoted\"\" b\",7");
	CHECK_STR(event_get(ev, "date"), "2015-01-01");
	CHECK_STR(event_get(ev, "event_text"), "a, \"quoted\" b");
	CHECK_STR(event_get(ev, "count"), "7");
	event_free(ev);
	memset(&d, 0, sizeof(d));
	d.name = "semi";
	d.base_parser = "csv";
	d.fields = "a,b";
	d.delimiter = ";";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	ev = run(parsers_get(ps, "semi"), "x;y");
	CHECK_STR(event_get(ev, "b"), "y");
	event_free(ev);
	d.name = "nofields";
	d.fields = NULL;
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), -1);
	CHECK(strstr(err, "fields") != NULL);
}

TEST(timestamp_and_regex)
{
	const struct parser *p = def("ts", "timestamp", "%Y-%m-%dT%H:%M:%S%f%z", NULL);
	struct event *ev = run(p, "2024-05-01T10:00:00.250+02:00 x");

	CHECK_INT(ev->timestamp_ms, 1714550400250LL);
	event_free(ev);
	p = def("re", "regex", "^(?<severity>[A-Z]+) \\[(?<ThreadName>[^]]+)\\] (?<message>.*)$", NULL);
	ev = run(p, "ERROR [pool-1] it broke");
	CHECK_STR(event_get(ev, "severity"), "ERROR");
	CHECK_STR(event_get(ev, "message"), "it broke");
	CHECK_STR(event_get(ev, "threadname"), "pool-1");
	event_free(ev);
}

/* RFC 5424's own example, with extract_sd. */
TEST(syslog_5424_and_3164)
{
	struct parser_def d;
	char err[256];
	struct event *ev;

	memset(&d, 0, sizeof(d));
	d.name = "sl";
	d.base_parser = "syslog";
	d.extract_sd = "yes";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	ev = run(parsers_get(ps, "sl"), "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com "
	    "evntslog - ID47 [exampleSDID@32473 iut=\"3\" eventSource=\"Application\" "
	    "eventID=\"1011\"] An application event log entry");
	CHECK_INT(ev->timestamp_ms, 1065910455003LL);
	CHECK_STR(event_get(ev, "syslog_host"), "mymachine.example.com");
	CHECK_STR(event_get(ev, "appname"), NULL);	/* the agent sets appname itself */
	CHECK_STR(event_get(ev, "msgid"), "ID47");
	CHECK(event_get(ev, "procid") == NULL);
	CHECK_STR(event_get(ev, "iut"), "3");
	CHECK_STR(event_get(ev, "eventsource"), "Application");
	CHECK_STR(event_get(ev, "syslog_facility"), "local4");
	CHECK_STR(event_get(ev, "syslog_severity"), "notice");
	event_free(ev);
	ev = run(parsers_get(ps, "syslog"), "<34>Oct 11 22:14:15 mymachine su[230]: 'su root' failed");
	CHECK_STR(event_get(ev, "syslog_host"), "mymachine");
	CHECK_STR(event_get(ev, "procid"), "230");
	CHECK_STR(event_get(ev, "syslog_severity"), "crit");
	event_free(ev);
}

TEST(json_flat_members)
{
	const struct parser *p = def("j", "json", NULL, "*");
	struct event *ev = run(p, "{\"nodeToken\":\"589a\",\"system\":{\"start\":1},"
	    "\"cpu\":[1,2],\"usage\": 3.5, \"ok\":true, \"none\":null, \"msg\":\"a\\\"b\"}");

	CHECK_STR(event_get(ev, "nodetoken"), "589a");
	CHECK(event_get(ev, "system") == NULL);
	CHECK_STR(event_get(ev, "system_start"), "1");
	CHECK(event_get(ev, "cpu") == NULL);
	CHECK_STR(event_get(ev, "usage"), "3.5");
	CHECK_STR(event_get(ev, "ok"), "true");
	CHECK(event_get(ev, "none") == NULL);
	CHECK_STR(event_get(ev, "msg"), "a\"b");
	event_free(ev);
	/* MongoDB 4.4's log, as VMware's MongoDB content pack parses it */
	p = def("mongo", "json", NULL, NULL);
	ev = run(p, "{\"t\":{\"$date\":\"2021-01-01T00:00:00.000Z\"},\"s\":\"I\","
	    "\"c\":\"COMMAND\",\"attr\":{\"command\":{\"$db\":\"admin\"}}}");
	CHECK_STR(event_get(ev, "attr_command__db"), "admin");
	CHECK_STR(event_get(ev, "t__date"), "2021-01-01T00:00:00.000Z");
	CHECK_STR(event_get(ev, "s"), "I");
	event_free(ev);
}

/* The conditional decoders and renames of VMware's MongoDB pack. */
TEST(conditional_decoder_and_rename)
{
	struct parser_def d;
	char err[256];
	struct event *ev;

	memset(&d, 0, sizeof(d));
	d.name = "dbname_rename";
	d.base_parser = "regex";
	d.format = "(?<mdb_dropped_database_name>.*)";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	memset(&d, 0, sizeof(d));
	d.name = "mjson";
	d.base_parser = "json";
	d.field_decoder = "{\"attr_db\":{\"msg\":{\"dropDatabase\":\"dbname_rename\"}}}";
	d.field_rename = "{\"c\":\"mdb_component\", \"msg\": \"mdb_message\"}";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	CHECK_INT(parsers_link(ps, err, sizeof(err)), 0);
	ev = run(parsers_get(ps, "mjson"), "{\"c\":\"COMMAND\",\"msg\":\"dropDatabase\",\"attr\":{\"db\":\"test1\"}}");
	CHECK_STR(event_get(ev, "mdb_dropped_database_name"), "test1");
	CHECK_STR(event_get(ev, "mdb_component"), "COMMAND");
	CHECK_STR(event_get(ev, "mdb_message"), "dropDatabase");
	CHECK(event_get(ev, "c") == NULL);
	event_free(ev);
	ev = run(parsers_get(ps, "mjson"), "{\"msg\":\"createIndex\",\"attr\":{\"db\":\"test1\"}}");
	CHECK(event_get(ev, "mdb_dropped_database_name") == NULL);
	event_free(ev);
	d.field_decoder = "{\"a\": 3}";
	d.name = "bad";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), -1);
	CHECK(strstr(err, "field_decoder") != NULL);
}

TEST(chains_decoders_and_excludes)
{
	struct parser_def d;
	char err[256];
	struct event *ev;

	memset(&d, 0, sizeof(d));
	d.name = "kvrest";
	d.base_parser = "kvp";
	d.fields = "*";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	memset(&d, 0, sizeof(d));
	d.name = "head";
	d.base_parser = "clf";
	d.format = "%t %{level}i %{body}i";
	d.next_parser = "kvrest";
	d.field_decoder = "{\"body\": \"kvrest\"}";
	d.exclude_fields = "level;user";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	CHECK_INT(parsers_link(ps, err, sizeof(err)), 0);
	ev = run(parsers_get(ps, "head"), "2024-05-01T10:00:00Z INFO op=login user=bob");
	CHECK_INT(ev->timestamp_ms, 1714557600000LL);
	CHECK(event_get(ev, "level") == NULL);
	CHECK(event_get(ev, "user") == NULL);
	CHECK_STR(event_get(ev, "op"), "login");
	CHECK_STR(event_get(ev, "hostname"), "esx01");
	event_free(ev);
	/* unknown names and loops are refused */
	memset(&d, 0, sizeof(d));
	d.name = "loop1";
	d.base_parser = "kvp";
	d.next_parser = "loop2";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	d.name = "loop2";
	d.next_parser = "loop1";
	CHECK_INT(parsers_add(ps, &d, err, sizeof(err)), 0);
	CHECK_INT(parsers_link(ps, err, sizeof(err)), -1);
	CHECK(strstr(err, "loop") != NULL);
}

TEST(bad_definitions)
{
	struct parsers *p2 = parsers_new();
	struct parser_def d;
	char err[256];

	memset(&d, 0, sizeof(d));
	d.name = "x";
	d.base_parser = "xml";
	CHECK_INT(parsers_add(p2, &d, err, sizeof(err)), -1);
	CHECK(strstr(err, "base_parser") != NULL);
	d.base_parser = "clf";
	d.format = "%h %Q";
	CHECK_INT(parsers_add(p2, &d, err, sizeof(err)), -1);
	CHECK(strstr(err, "%Q") != NULL);
	d.base_parser = "regex";
	d.format = "(a";
	CHECK_INT(parsers_add(p2, &d, err, sizeof(err)), -1);
	d.format = "(a)";
	CHECK_INT(parsers_add(p2, &d, err, sizeof(err)), -1);
	CHECK(strstr(err, "named group") != NULL);
	d.base_parser = "kvp";
	d.format = NULL;
	d.next_parser = "nope";
	CHECK_INT(parsers_add(p2, &d, err, sizeof(err)), 0);
	CHECK_INT(parsers_link(p2, err, sizeof(err)), -1);
	CHECK(strstr(err, "nope") != NULL);
	parsers_free(p2);
}

TEST(logtime_forms)
{
	int64_t ms = 0;
	size_t used = 0;
	const char *s;

	s = "2024-05-01T10:00:00.123Z cpu1";
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), 0);
	CHECK_INT(ms, 1714557600123LL);
	CHECK_INT(used, 24);
	s = "[10/Oct/2000:13:55:36 -0700] x";
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), 0);
	CHECK_INT(ms, 971211336000LL);
	s = "Nov 30 20:00:00 host";
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), 0);
	CHECK(ms < NOW && ms > NOW - 86400000LL);
	s = "Dec 25 10:00:00 host";		/* in the future: last year */
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), 0);
	CHECK(ms < NOW);
	s = "1733000000 rest";
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), 0);
	CHECK_INT(ms, NOW);
	s = "12345 rest";
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), -1);
	s = "01/02/24 03:04:05 PM";
	CHECK_INT(logtime_format("%D %I:%M:%S %p", s, strlen(s), NOW, &ms, &used), 0);
	s = "2024-13-01 10:00:00";
	CHECK_INT(logtime_auto(s, strlen(s), NOW, &ms, &used), -1);
}

TEST(names_normalised)
{
	char out[129];

	CHECK_INT(field_name_normalize("PRODUCT", out, sizeof(out)), 1);
	CHECK_STR(out, "product");
	CHECK_INT(field_name_normalize("Event Text-1", out, sizeof(out)), 1);
	CHECK_STR(out, "event_text_1");
	CHECK_INT(field_name_normalize("9lives", out, sizeof(out)), 1);
	CHECK_STR(out, "_9lives");
	CHECK_INT(field_name_normalize("timestamp", out, sizeof(out)), 1);
	CHECK_STR(out, "_timestamp");
	CHECK_INT(field_name_normalize("ok_name", out, sizeof(out)), 0);
	CHECK_INT(field_name_normalize("", out, sizeof(out)), -1);
}

int
main(void)
{
	setenv("TZ", "UTC", 1);
	T_PROG("test_parsers");
	ps = parsers_new();
	RUN(clf_default_apache_line);
	RUN(clf_named_fields_and_rest);
	RUN(clf_time_with_format);
	RUN(kvp_all_fields);
	RUN(csv_columns_quotes_and_delimiter);
	RUN(timestamp_and_regex);
	RUN(syslog_5424_and_3164);
	RUN(json_flat_members);
	RUN(conditional_decoder_and_rename);
	RUN(chains_decoders_and_excludes);
	RUN(bad_definitions);
	RUN(logtime_forms);
	RUN(names_normalised);
	parsers_free(ps);
	return t_done();
}
