/*
 * otlp sink: the ExportLogsServiceRequest JSON (grouped by host, int64 as
 * strings, typed attributes, escaping), the severity mapping and the
 * intValue rule (only what prints back the same).
 */
#include "t.h"

#include "../../agent/event.h"
#include "../../agent/lib/json.h"
#include "../../output/otlp.h"

TEST(severity_numbers)
{
	CHECK_INT(otlp_severity_number(NULL), 0);
	CHECK_INT(otlp_severity_number("info"), 9);
	CHECK_INT(otlp_severity_number("warning"), 13);
	CHECK_INT(otlp_severity_number("error"), 17);
	CHECK_INT(otlp_severity_number("critical"), 21);
	CHECK_INT(otlp_severity_number("odd"), 9);
}

TEST(int_values_only_when_canonical)
{
	CHECK(otlp_is_int("0"));
	CHECK(otlp_is_int("-12"));
	CHECK(otlp_is_int("9223372036854775807"));
	CHECK(otlp_is_int("-9223372036854775808"));
	CHECK(!otlp_is_int("9223372036854775808"));
	CHECK(!otlp_is_int("007"));
	CHECK(!otlp_is_int("-0"));
	CHECK(!otlp_is_int("+1"));
	CHECK(!otlp_is_int("1.5"));
	CHECK(!otlp_is_int(""));
	CHECK(!otlp_is_int("-"));
	CHECK(!otlp_is_int("00:50:56"));
}

TEST(request_grouped_by_host)
{
	struct event *e[3];
	struct batch b = { e, 3, 0, 0 };
	struct buf out = BUF_INIT;
	struct json_doc d;
	char err[64];
	long long n;
	int at;

	e[0] = event_new(1764496800123, "a \"q\"\n\xff");
	e[1] = event_new(1764496800124, "b");
	e[2] = event_new(1764496800125, "c");
	event_set(e[0], "hostname", "esx02");
	event_set(e[1], "hostname", "esx01");
	event_set(e[2], "hostname", "esx02");
	event_set(e[0], "esxwatch_severity", "error");
	event_set(e[0], "esxwatch_mtu", "9000");
	event_set(e[0], "esxwatch_mac", "007");
	CHECK_INT(otlp_encode(&b, &out), 0);
	CHECK_INT(json_parse(out.data, out.len, &d, err, sizeof(err)), 0);
	/* esx01 first (sorted), then esx02 with e[0] and e[2] in order */
	at = json_get(&d, 0, "resourceLogs");
	CHECK(at >= 0 && d.n[at].type == JSON_ARR);
	CHECK(strstr(out.data, "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"esx01\"}}") <
	    strstr(out.data, "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"esx02\"}}"));
	CHECK(strstr(out.data, "\"timeUnixNano\":\"1764496800123000000\"") != NULL);
	CHECK(strstr(out.data, "\"severityNumber\":17,\"severityText\":\"error\"") != NULL);
	CHECK(strstr(out.data, "{\"key\":\"esxwatch_mtu\",\"value\":{\"intValue\":\"9000\"}}") != NULL);
	CHECK(strstr(out.data, "{\"key\":\"esxwatch_mac\",\"value\":{\"stringValue\":\"007\"}}") != NULL);
	CHECK(strstr(out.data, "\"body\":{\"stringValue\":\"a \\\"q\\\"\\n\xef\xbf\xbd\"}") != NULL);
	/* hostname and severity are in their own places, not attributes */
	CHECK(strstr(out.data, "\"key\":\"hostname\"") == NULL);
	CHECK(strstr(out.data, "\"key\":\"esxwatch_severity\"") == NULL);
	CHECK(strstr(out.data, "\"esx02\"}},{\"key\":\"service.name\"") != NULL);
	CHECK(strstr(out.data, "\"stringValue\":\"c\"") > strstr(out.data, "\"stringValue\":\"a "));
	at = json_get(&d, 0, "resourceLogs");
	n = 0;
	for (int c = d.n[at].child; c >= 0; c = d.n[c].next)
		n++;
	CHECK_INT(n, 2);
	json_free(&d);
	buf_free(&out);
	for (int i = 0; i < 3; i++)
		event_free(e[i]);
}

TEST(empty_host_has_no_host_name)
{
	struct event *e = event_new(1000, "x");
	struct event *ev[1] = { e };
	struct batch b = { ev, 1, 0, 0 };
	struct buf out = BUF_INIT;

	CHECK_INT(otlp_encode(&b, &out), 0);
	CHECK(strstr(out.data, "host.name") == NULL);
	CHECK(strstr(out.data, "\"timeUnixNano\":\"1000000000\"") != NULL);
	CHECK(strstr(out.data, "severityNumber") == NULL);
	buf_free(&out);
	event_free(e);
}

int
main(void)
{
	T_PROG("test_otlp");
	RUN(severity_numbers);
	RUN(int_values_only_when_canonical);
	RUN(request_grouped_by_host);
	RUN(empty_host_has_no_host_name);
	return t_done();
}
