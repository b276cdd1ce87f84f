/*
 * A fake sink for the unit tests of the shipping side (test_shipper,
 * test_status): its answers are scripted (retry the first N sends, reject
 * a batch holding a marked event) and it records what it was handed.
 * With helpers to build a configuration over a fresh storage directory,
 * open the real queue and push numbered events.
 */
#ifndef ESXWATCH_FAKESINK_H
#define ESXWATCH_FAKESINK_H

#include <sys/stat.h>

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/clock.h"
#include "../../agent/config/config.h"
#include "../../agent/spool/queue.h"
#include "../../agent/shipper.h"
#include "../../output/sink.h"
#include "t.h"

#define MAXSENDS	256
#define MAXSEEN		1024

/* The fake sink's script and what it saw (under fk.mu). */
static struct fake_state {
	pthread_mutex_t	 mu;
	int		 retry_first;	/* answer SEND_RETRY to this many sends */
	const char	*poison;	/* reject a batch with an event containing this */
	size_t		 sends;
	size_t		 sizes[MAXSENDS];
	size_t		 nseen;
	char		 seen[MAXSEEN][32];	/* texts delivered, in order */
	int		 opens, closes;
} fk __attribute__((unused)) = { .mu = PTHREAD_MUTEX_INITIALIZER };

static inline int
fake_open(struct sink_ctx *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&fk.mu);
	fk.opens++;
	pthread_mutex_unlock(&fk.mu);
	return 0;
}

static inline enum send_result
fake_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	enum send_result r = SEND_OK;

	*retry_after = 0;
	pthread_mutex_lock(&fk.mu);
	if (fk.sends < MAXSENDS)
		fk.sizes[fk.sends] = b->n;
	fk.sends++;
	if (fk.retry_first > 0) {
		fk.retry_first--;
		snprintf(ctx->error, sizeof(ctx->error), "fake: try again");
		r = SEND_RETRY;
	}
	for (size_t i = 0; r == SEND_OK && fk.poison != NULL && i < b->n; i++)
		if (strstr(b->events[i]->text, fk.poison) != NULL) {
			snprintf(ctx->error, sizeof(ctx->error), "fake: rejected");
			r = SEND_REJECT;
		}
	for (size_t i = 0; r == SEND_OK && i < b->n && fk.nseen < MAXSEEN; i++)
		snprintf(fk.seen[fk.nseen++], sizeof(fk.seen[0]), "%s", b->events[i]->text);
	pthread_mutex_unlock(&fk.mu);
	return r;
}

static inline void
fake_close(struct sink_ctx *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&fk.mu);
	fk.closes++;
	pthread_mutex_unlock(&fk.mu);
}

static const struct sink fake_sink __attribute__((unused)) = {
	.name = "fake", .proto = PROTO_FILE, .open = fake_open, .send = fake_send,
	.close = fake_close,
};

static inline const struct sink *
fake_find(enum dest_proto p)
{
	(void)p;
	return &fake_sink;
}

static const struct shipper_deps fake_deps __attribute__((unused)) = {
	.find = fake_find
};

static char fake_dir[64] __attribute__((unused));

static inline int
fake_root(const char *tmpl)
{
	snprintf(fake_dir, sizeof(fake_dir), "%s", tmpl);
	return mkdtemp(fake_dir) == NULL ? -1 : 0;
}

static inline void
fake_reset(int retry_first, const char *poison)
{
	pthread_mutex_lock(&fk.mu);
	fk.retry_first = retry_first;
	fk.poison = poison;
	fk.sends = fk.nseen = 0;
	fk.opens = fk.closes = 0;
	pthread_mutex_unlock(&fk.mu);
}

static inline size_t
fake_seen(void)
{
	size_t n;

	pthread_mutex_lock(&fk.mu);
	n = fk.nseen;
	pthread_mutex_unlock(&fk.mu);
	return n;
}

/* A configuration over a fresh storage directory: batches of max events,
 * no waiting for a batch to fill. */
static inline struct config *
new_cfg(int max)
{
	static int n;	/* one directory per configuration */
	struct config *cfg = config_default();
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/s%d", fake_dir, n++);
	free(cfg->storage_directory);
	cfg->storage_directory = strdup(dir);
	mkdir(dir, 0700);
	cfg->batch_max_events = max;
	cfg->batch_flush_interval = 0;
	return cfg;
}

static inline struct queue *
open_q(const struct config *cfg)
{
	const char *names[] = { "server" };

	return queue_open(cfg, names, 1);
}

static inline void
push(struct queue *q, int from, int n, int poison_at)
{
	for (int i = from; i < from + n; i++) {
		struct event *ev;
		char text[32];

		snprintf(text, sizeof(text), "line %d%s", i, i == poison_at ? " POISON" : "");
		ev = event_new(now_ms(), text);
		CHECK_INT(queue_push(q, ev), 0);
		event_free(ev);
	}
}

static inline bool
wait_seen(size_t n, int ms)
{
	int64_t end = mono_ms() + ms;

	while (fake_seen() < n && mono_ms() < end)
		poll(NULL, 0, 10);
	return fake_seen() >= n;
}

static inline bool
wait_backlog_empty(struct queue *q, int ms)
{
	int64_t end = mono_ms() + ms;

	while (queue_backlog(q, 0) > 0 && mono_ms() < end)
		poll(NULL, 0, 10);
	return queue_backlog(q, 0) == 0;
}

#endif
