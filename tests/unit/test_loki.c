/*
 * loki sink: the push body — streams by the four label fields only,
 * entries of a stream in time order, nanosecond strings, the other
 * fields as structured metadata (or the line as the event's JSON).
 */
#include "t.h"

#include "../../agent/event.h"
#include "../../agent/lib/json.h"
#include "../../output/loki.h"

TEST(streams_labels_and_order)
{
	struct event *e[3];
	struct batch b = { e, 3, 0, 0 };
	struct buf out = BUF_INIT;
	struct json_doc d;
	char err[64];
	const char *p1, *p2;

	e[0] = event_new(2000, "later");
	e[1] = event_new(1000, "earlier");
	e[2] = event_new(1500, "other host");
	for (int i = 0; i < 3; i++) {
		event_set(e[i], "hostname", i == 2 ? "esx02" : "esx01");
		event_set(e[i], "appname", "vmkernel");
		event_set(e[i], "esxwatch_nic", "vmnic0");
	}
	CHECK_INT(loki_encode(&b, true, &out), 0);
	CHECK_INT(json_parse(out.data, out.len, &d, err, sizeof(err)), 0);
	json_free(&d);
	CHECK(strstr(out.data, "{\"stream\":{\"hostname\":\"esx01\",\"appname\":\"vmkernel\"},"
	    "\"values\":[[\"1000000000\",\"earlier\",{\"esxwatch_nic\":\"vmnic0\"}],"
	    "[\"2000000000\",\"later\",{\"esxwatch_nic\":\"vmnic0\"}]]}") != NULL);
	p1 = strstr(out.data, "\"esx01\"");
	p2 = strstr(out.data, "\"esx02\"");
	CHECK(p1 != NULL && p2 != NULL && p1 < p2);
	CHECK(loki_is_label("esxwatch_severity"));
	CHECK(!loki_is_label("esxwatch_nic"));
	buf_reset(&out);
	CHECK_INT(loki_encode(&b, false, &out), 0);
	CHECK(strstr(out.data, "[\"1000000000\",\"{\\\"timestamp\\\":1000,\\\"text\\\":"
	    "\\\"earlier\\\"") != NULL);
	buf_free(&out);
	for (int i = 0; i < 3; i++)
		event_free(e[i]);
}

TEST(an_event_without_labels_still_has_one)
{
	struct event *e = event_new(1, "x");
	struct event *ev[1] = { e };
	struct batch b = { ev, 1, 0, 0 };
	struct buf out = BUF_INIT;

	CHECK_INT(loki_encode(&b, true, &out), 0);
	CHECK_STR(out.data, "{\"streams\":[{\"stream\":{\"appname\":\"esxwatch\"},"
	    "\"values\":[[\"1000000\",\"x\",{}]]}]}");
	buf_free(&out);
	event_free(e);
}

/* Equal lines of one millisecond: distinct nanoseconds from their
 * record numbers, the same ones when the batch is sent again. */
TEST(record_numbers_below_the_millisecond)
{
	struct event *e[2];
	struct batch b = { e, 2, 7, 1999999 };
	struct buf out = BUF_INIT;

	e[0] = event_new(5000, "same");
	e[1] = event_new(5000, "same");
	CHECK_INT(loki_encode(&b, true, &out), 0);
	/* 1999999 % 10^6 = 999999, then 2000000 % 10^6 = 0: by nanosecond */
	CHECK(strstr(out.data, "[[\"5000000000\",\"same\",{}],"
	    "[\"5000999999\",\"same\",{}]]") != NULL);
	buf_free(&out);
	for (int i = 0; i < 2; i++)
		event_free(e[i]);
}

int
main(void)
{
	T_PROG("test_loki");
	RUN(streams_labels_and_order);
	RUN(an_event_without_labels_still_has_one);
	RUN(record_numbers_below_the_millisecond);
	return t_done();
}
