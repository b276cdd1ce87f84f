/*
 * The shipper against the real queue (the spool of this build) and a fake
 * sink whose answers the test scripts: batching, retry, the poison drop
 * (through queue_drop(), counted once), acknowledgements moving the
 * cursor, counters that outlive a shipper (a reload).
 */
#include <sys/stat.h>

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"

#include "../../agent/lib/clock.h"
#include "../../agent/config/config.h"
#include "../../agent/config/dfilter.h"
#include "../../agent/lib/log.h"
#include "../../agent/spool/queue.h"
#include "../../agent/shipper.h"
#include "../../output/sink.h"
#include "fakesink.h"

TEST(batches_of_max_events_in_order_and_acked)
{
	struct config *cfg = new_cfg(10);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct shipper_dest_stats ss;
	struct queue_dest_stats qs;

	fake_reset(0, NULL);
	push(q, 0, 25, -1);
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(25, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK(shipper_stop(sh, 1000, NULL));
	CHECK_INT(fk.sends, 3);
	CHECK_INT(fk.sizes[0], 10);
	CHECK_INT(fk.sizes[1], 10);
	CHECK_INT(fk.sizes[2], 5);
	CHECK_INT(fk.nseen, 25);
	CHECK_STR(fk.seen[0], "line 0");
	CHECK_STR(fk.seen[24], "line 24");
	CHECK_INT(fk.opens, 1);
	CHECK_INT(fk.closes, 1);
	/* the acknowledgements moved the cursor: nothing comes back */
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.acked_events, 25);
	CHECK_INT(qs.backlog_events, 0);
	queue_close(q);
	/* and survive a restart: a new queue over the same directory */
	q = open_q(cfg);
	CHECK_INT(queue_backlog(q, 0), 0);
	fake_reset(0, NULL);
	push(q, 25, 2, -1);
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(2, 5000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK(shipper_stop(sh, 1000, NULL));
	CHECK_STR(fk.seen[0], "line 25");
	CHECK_INT(fk.nseen, 2);
	queue_close(q);
	config_free(cfg);
}

/* After a failure the retry is a probe (its first event alone), the rest
 * follows in a full batch once the probe is delivered. */
TEST(retry_probes_with_one_event_then_sends_the_rest)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct shipper_dest_stats ss;

	fake_reset(1, NULL);
	push(q, 0, 5, -1);
	sh = shipper_start(cfg, q, &fake_deps);
	/* full jitter from a 1 s base: the second try within ~1.1 s */
	CHECK(wait_seen(5, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK(shipper_stop(sh, 1000, NULL));
	CHECK_INT(fk.sends, 3);
	CHECK_INT(fk.sizes[0], 5);
	CHECK_INT(fk.sizes[1], 1);	/* the probe */
	CHECK_INT(fk.sizes[2], 4);
	CHECK_STR(fk.seen[0], "line 0");	/* in order, each once */
	CHECK_STR(fk.seen[4], "line 4");
	CHECK_INT(fk.nseen, 5);		/* delivered once, after the retry */
	CHECK_INT(ss.failed_sends, 1);
	CHECK_INT(ss.sent_events, 5);
	CHECK_STR(ss.last_error, "fake: try again");
	CHECK(!ss.failing);
	CHECK(ss.last_success_ms > 0 && ss.last_error_ms > 0);
	queue_close(q);
	config_free(cfg);
}

/* Retry-After is honoured up to the backoff cap, never for a day. */
TEST(retry_after_capped_at_the_backoff_cap)
{
	CHECK_INT(shipper_retry_after_ms(7), 7000);
	CHECK_INT(shipper_retry_after_ms(300), 300000);
	CHECK_INT(shipper_retry_after_ms(301), 300000);
	CHECK_INT(shipper_retry_after_ms(86400), 300000);
	CHECK_INT(shipper_retry_after_ms(0), 0);
	CHECK_INT(shipper_retry_after_ms(-5), 0);
}

TEST(poison_dropped_alone_through_the_queue_counted_once)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct shipper_dest_stats ss;
	struct queue_dest_stats qs;
	struct queue_stats st;

	fake_reset(0, "POISON");
	push(q, 0, 8, 5);
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(7, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	/* not everything was delivered: the stop says so */
	CHECK(!shipper_stop(sh, 1000, NULL));
	CHECK_INT(fk.nseen, 7);
	for (size_t i = 0; i < fk.nseen; i++)
		CHECK(strstr(fk.seen[i], "POISON") == NULL);
	CHECK_STR(fk.seen[5], "line 6");	/* in order around the hole */
	/* one drop, in the queue (queue_drop), and nowhere else */
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.dropped_poison, 1);
	CHECK_INT(qs.acked_events, 7);
	queue_stats(q, &st);
	CHECK_INT(st.dropped_poison, 1);
	CHECK_INT(st.dropped_events, 0);
	CHECK_INT(ss.sent_events, 7);
	queue_close(q);
	config_free(cfg);
}

/*
 * The destination's filter (agent/config/dfilter.h): what it keeps out is never
 * sent, but settled: the cursor moves past it (nothing comes back after a
 * restart), counted as filtered, neither sent nor dropped; a poison event
 * among the kept ones is still dropped alone; a batch the filter empties
 * is settled without a send.
 */
TEST(filtered_events_settled_not_sent)
{
	struct config *cfg = new_cfg(4);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct queue_dest_stats qs;
	size_t kept = 0, out = 0;

	dfilter_add(&cfg->server.filter, "", "", "keep == \"yes\"");
	fake_reset(0, "POISON");
	for (int i = 0; i < 30; i++) {
		char text[32];
		struct event *ev;
		/* 0-2 and 12-19 kept out: two whole batches of 4 with nothing */
		bool in = !(i < 3 || (i >= 12 && i < 20) || i % 5 == 4);

		snprintf(text, sizeof(text), "line %d%s", i, i == 8 ? " POISON" : "");
		ev = event_new(now_ms(), text);
		event_set(ev, "keep", in ? "yes" : "no");
		CHECK_INT(queue_push(q, ev), 0);
		event_free(ev);
		if (in)
			kept++;
		else
			out++;
	}
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(kept - 1, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK(!shipper_stop(sh, 1000, NULL));	/* the poison one */
	CHECK_INT(fk.nseen, kept - 1);
	for (size_t i = 0; i < fk.nseen; i++) {
		int n = atoi(fk.seen[i] + 5);

		if (n < 3 || (n >= 12 && n < 20) || n % 5 == 4 || n == 8)
			T_FAILF("sent %s", fk.seen[i]);
	}
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.filtered, out);
	CHECK_INT(qs.dropped_poison, 1);
	CHECK_INT(qs.acked_events, kept - 1);
	CHECK_INT(qs.backlog_events, 0);
	queue_close(q);
	/* a restart sends nothing again */
	q = open_q(cfg);
	CHECK_INT(queue_backlog(q, 0), 0);
	queue_close(q);
	config_free(cfg);
}

TEST(counters_outlive_a_shipper)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper_totals *tot = shipper_totals_new();
	struct shipper_deps deps = { .totals = tot, .find = fake_find };
	struct shipper *sh;
	struct shipper_dest_stats ss;

	fake_reset(1, NULL);
	push(q, 0, 4, -1);
	sh = shipper_start(cfg, q, &deps);
	CHECK(wait_seen(4, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK(shipper_stop(sh, 1000, NULL));
	/* a reload: a new shipper, the same totals */
	fake_reset(0, NULL);
	sh = shipper_start(cfg, q, &deps);
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK_INT(ss.sent_events, 4);
	CHECK_INT(ss.failed_sends, 1);
	push(q, 4, 3, -1);
	CHECK(wait_seen(3, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK(shipper_stop(sh, 1000, NULL));
	sh = shipper_start(cfg, q, &deps);
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK_INT(ss.sent_events, 7);
	CHECK_INT(ss.failed_sends, 1);
	CHECK(shipper_stop(sh, 1000, NULL));
	/* without totals a shipper starts from zero */
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK_INT(ss.sent_events, 0);
	CHECK(shipper_stop(sh, 1000, NULL));
	shipper_totals_free(tot);
	queue_close(q);
	config_free(cfg);
}

/*
 * A destination that rejects every event (a proxy answering 400 to all):
 * reject_limit events are dropped one by one, then it is failing and the
 * rest are kept and retried, not emptied into it; once it takes events
 * again every kept one arrives.
 */
TEST(rejecting_everything_is_failing_not_poison)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper_totals *tot = shipper_totals_new();
	struct shipper_deps deps = { .totals = tot, .find = fake_find };
	struct shipper *sh;
	struct shipper_dest_stats ss;
	struct queue_dest_stats qs;
	int64_t end;

	cfg->server.reject_limit = 3;
	fake_reset(0, "line");			/* every event */
	push(q, 0, 20, -1);
	sh = shipper_start(cfg, q, &deps);
	end = mono_ms() + 5000;
	do {
		poll(NULL, 0, 20);
		CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	} while (!ss.failing && mono_ms() < end);
	CHECK(ss.failing);
	CHECK(strncmp(ss.last_error, "every event rejected: fake: rejected",
	    36) == 0);
	CHECK_INT(ss.rejected_in_row, 3);
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.dropped_poison, 3);	/* the limit, and no more */
	CHECK_INT(qs.backlog_events, 17);
	/* a reload keeps the state: still nothing more dropped */
	CHECK(!shipper_stop(sh, 200, NULL));
	sh = shipper_start(cfg, q, &deps);
	poll(NULL, 0, 300);
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.dropped_poison, 3);
	/* the server takes events again: the 17 kept ones arrive */
	pthread_mutex_lock(&fk.mu);
	fk.poison = NULL;
	pthread_mutex_unlock(&fk.mu);
	CHECK(wait_seen(17, 15000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK(!ss.failing);
	CHECK_INT(ss.rejected_in_row, 0);
	CHECK_STR(fk.seen[0], "line 3");
	CHECK_STR(fk.seen[16], "line 19");
	CHECK(shipper_stop(sh, 1000, NULL));
	shipper_totals_free(tot);
	queue_close(q);
	config_free(cfg);
}

/* Two cfapi destinations (server and b) over a fresh storage directory. */
static struct config *
two_dest_cfg(int max)
{
	char path[128], yaml[512];
	struct config *cfg;
	FILE *f;

	snprintf(path, sizeof(path), "%s/two.yaml", fake_dir);
	snprintf(yaml, sizeof(yaml),
	    "server: {hostname: 127.0.0.1, proto: cfapi}\n"
	    "servers:\n  b: {hostname: 127.0.0.1, proto: cfapi}\n"
	    "storage: {directory: \"%s/two\"}\n"
	    "batch: {max_events: %d}\n", fake_dir, max);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fputs(yaml, f);
	fclose(f);
	cfg = config_load(path, NULL, NULL);
	if (cfg != NULL)
		cfg->batch_flush_interval = 0;	/* no waiting to fill up */
	return cfg;
}

static bool
wait_both_settled(struct queue *q, int ms)
{
	int64_t end = mono_ms() + ms;

	while ((queue_backlog(q, 0) > 0 || queue_backlog(q, 1) > 0) &&
	    mono_ms() < end)
		poll(NULL, 0, 10);
	return queue_backlog(q, 0) == 0 && queue_backlog(q, 1) == 0;
}

/* Lines from..from+n-1 pushed, then a shipper until both have them all. */
static void
ship_to_both(struct config *cfg, struct queue *q, int from, int n)
{
	struct shipper *sh;

	fake_reset(0, NULL);
	push(q, from, n, -1);
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(2 * (size_t)n, 5000));
	CHECK(wait_both_settled(q, 5000));
	CHECK(shipper_stop(sh, 1000, NULL));
}

/*
 * With several destinations a full batch ends at a multiple of
 * batch.max_events of the queue's record numbers (from 1): two
 * destinations that resume at line 3 (record 4) cut records 4-9, 10-19,
 * 20-28 alike (so that a sink may share one encoding of each, as cfapi
 * does), not 4-13, 14-23, 24-28.
 */
TEST(several_destinations_cut_batches_alike)
{
	const char *names[] = { "server", "b" };
	struct config *cfg = two_dest_cfg(10);
	struct queue *q;
	size_t sorted[6];

	CHECK(cfg != NULL);
	if (cfg == NULL)
		return;
	CHECK_INT(cfg->nservers, 1);
	q = queue_open(cfg, names, 2);
	ship_to_both(cfg, q, 0, 3);
	ship_to_both(cfg, q, 3, 25);
	CHECK_INT(fk.sends, 6);
	for (size_t i = 0; i < 6; i++) {
		size_t v = fk.sizes[i], j = i;

		for (; j > 0 && sorted[j - 1] > v; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = v;
	}
	CHECK_INT(sorted[0], 6);
	CHECK_INT(sorted[1], 6);
	CHECK_INT(sorted[2], 9);
	CHECK_INT(sorted[3], 9);
	CHECK_INT(sorted[4], 10);
	CHECK_INT(sorted[5], 10);
	queue_close(q);
	config_free(cfg);
}

/* A fake sink with a group (what cfapi has): what its sends were handed. */
static struct {
	int	 made, freed;
	size_t	 n;
	void	*group[MAXSENDS];
	uint64_t src[MAXSENDS];
} grp;

static void *
grp_new(const struct config *cfg)
{
	(void)cfg;
	pthread_mutex_lock(&fk.mu);
	grp.made++;
	pthread_mutex_unlock(&fk.mu);
	return malloc(1);
}

static void
grp_free(void *g)
{
	pthread_mutex_lock(&fk.mu);
	grp.freed++;
	pthread_mutex_unlock(&fk.mu);
	free(g);
}

static enum send_result
grp_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	pthread_mutex_lock(&fk.mu);
	if (grp.n < MAXSENDS) {
		grp.group[grp.n] = ctx->group;
		grp.src[grp.n++] = b->src;
	}
	pthread_mutex_unlock(&fk.mu);
	return fake_send(ctx, b, retry_after);
}

static const struct sink grp_sink = {
	.name = "fake", .proto = PROTO_CFAPI, .open = fake_open,
	.send = grp_send, .close = fake_close, .group_new = grp_new,
	.group_free = grp_free,
};

static const struct sink *
grp_find(enum dest_proto p)
{
	(void)p;
	return &grp_sink;
}

/*
 * A sink's destinations of one configuration share one group state
 * (sink.group_new), made once and freed at the stop, and every batch
 * names its records (batch.src); a lone destination gets no group.
 */
TEST(a_sinks_destinations_share_one_group)
{
	static const struct shipper_deps deps = { .find = grp_find };
	const char *names[] = { "server", "b" };
	struct config *cfg = two_dest_cfg(10);
	struct shipper *sh;
	struct queue *q;

	CHECK(cfg != NULL);
	if (cfg == NULL)
		return;
	memset(&grp, 0, sizeof(grp));
	fake_reset(0, NULL);
	q = queue_open(cfg, names, 2);
	push(q, 0, 30, -1);
	sh = shipper_start(cfg, q, &deps);
	CHECK(wait_seen(60, 5000));
	CHECK(wait_both_settled(q, 5000));
	CHECK(shipper_stop(sh, 1000, NULL));
	CHECK_INT(grp.made, 1);
	CHECK_INT(grp.freed, 1);
	CHECK(grp.n >= 6);
	for (size_t i = 0; i < grp.n; i++) {
		CHECK(grp.group[i] != NULL && grp.group[i] == grp.group[0]);
		CHECK(grp.src[i] != 0);
	}
	queue_close(q);
	config_free(cfg);

	memset(&grp, 0, sizeof(grp));
	fake_reset(0, NULL);
	cfg = new_cfg(10);
	q = open_q(cfg);
	push(q, 0, 5, -1);
	sh = shipper_start(cfg, q, &deps);
	CHECK(wait_seen(5, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK(shipper_stop(sh, 1000, NULL));
	CHECK_INT(grp.made, 0);
	CHECK(grp.n >= 1 && grp.group[0] == NULL);
	queue_close(q);
	config_free(cfg);
}

int
main(void)
{
	T_PROG("test_shipper");
	config_plugins_builtin();
	log_init(0, "/dev/null");
	if (fake_root("/tmp/test_shipper.XXXXXX") < 0)
		return 1;
	RUN(batches_of_max_events_in_order_and_acked);
	RUN(retry_probes_with_one_event_then_sends_the_rest);
	RUN(retry_after_capped_at_the_backoff_cap);
	RUN(poison_dropped_alone_through_the_queue_counted_once);
	RUN(filtered_events_settled_not_sent);
	RUN(counters_outlive_a_shipper);
	RUN(rejecting_everything_is_failing_not_poison);
	RUN(several_destinations_cut_batches_alike);
	RUN(a_sinks_destinations_share_one_group);
	return t_done();
}
