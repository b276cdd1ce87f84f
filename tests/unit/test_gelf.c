/*
 * gelf sink: the GELF 1.1 message — required keys, timestamp in seconds
 * with milliseconds, level from the severity, fields as _name (never
 * _id), the host from the event or the fallback.
 */
#include "t.h"

#include "../../agent/event.h"
#include "../../agent/lib/json.h"
#include "../../output/gelf.h"

TEST(message_shape)
{
	struct event *e = event_new(1764496800007, "disk \"x\" failed\n");
	struct buf out = BUF_INIT;
	struct json_doc d;
	char err[64];

	event_set(e, "hostname", "esx01");
	event_set(e, "esxwatch_severity", "error");
	event_set(e, "id", "42");
	event_set(e, "esxwatch_disk", "naa.1");
	CHECK_INT(gelf_format(e, "agent", &out), 0);
	CHECK_STR(out.data, "{\"version\":\"1.1\",\"host\":\"esx01\","
	    "\"short_message\":\"disk \\\"x\\\" failed\\n\","
	    "\"timestamp\":1764496800.007,\"level\":3,"
	    "\"_esxwatch_severity\":\"error\",\"_esxwatch_field_id\":\"42\","
	    "\"_esxwatch_disk\":\"naa.1\"}");
	CHECK_INT(json_parse(out.data, out.len, &d, err, sizeof(err)), 0);
	json_free(&d);
	buf_free(&out);
	event_free(e);
}

TEST(fallback_host_and_default_level)
{
	struct event *e = event_new(1000, "x");
	struct buf out = BUF_INIT;

	CHECK_INT(gelf_format(e, "agent01", &out), 0);
	CHECK(strstr(out.data, "\"host\":\"agent01\"") != NULL);
	CHECK(strstr(out.data, "\"timestamp\":1.000,\"level\":6}") != NULL);
	buf_free(&out);
	event_free(e);
}

int
main(void)
{
	T_PROG("test_gelf");
	RUN(message_shape);
	RUN(fallback_host_and_default_level);
	return t_done();
}
