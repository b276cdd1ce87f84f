/*
 * queue: agent/spool/queue.h over the durable spool (agent/spool/spool.h): struct
 * queue is a struct spool.  The benchmark's in-memory queue
 * (bench/memqueue.c) replaces this file in a QUEUE=memqueue build.
 */
#include <stdio.h>
#include <string.h>

#include "queue.h"
#include "spool.h"

struct queue *
queue_open(const struct config *cfg, const char *const *dests, size_t ndests)
{
	return (struct queue *)spool_open(cfg, dests, ndests);
}

void
queue_close(struct queue *q)
{
	spool_close((struct spool *)q);
}

int
queue_set_dests(struct queue *q, const char *const *dests, size_t ndests)
{
	return spool_set_dests((struct spool *)q, dests, ndests);
}

int
queue_push(struct queue *q, const struct event *ev)
{
	return spool_push((struct spool *)q, ev);
}

size_t
queue_push_many(struct queue *q, const struct event *const *evs, size_t n)
{
	return spool_push_many((struct spool *)q, evs, n);
}

int
queue_sync(struct queue *q)
{
	return spool_sync((struct spool *)q);
}

int
queue_peek(struct queue *q, size_t d, size_t max_events, size_t max_bytes,
    int wait_ms, struct batch *out)
{
	return spool_peek((struct spool *)q, d, max_events, max_bytes, wait_ms, out);
}

int
queue_ack(struct queue *q, size_t d, size_t n)
{
	return spool_ack((struct spool *)q, d, n);
}

int
queue_drop(struct queue *q, size_t d, size_t n)
{
	return spool_drop((struct spool *)q, d, n);
}

int
queue_skip(struct queue *q, size_t d, size_t n)
{
	return spool_skip((struct spool *)q, d, n);
}

void
queue_wakeup(struct queue *q)
{
	spool_wakeup((struct spool *)q);
}

void
queue_stats(struct queue *q, struct queue_stats *st)
{
	struct spool_stats s;

	spool_stats((struct spool *)q, &s);
	memset(st, 0, sizeof(*st));
	st->queued_events = s.queued_events;
	st->queued_bytes = s.queued_bytes;
	st->dropped_events = s.dropped_budget;
	st->pushed_events = s.pushed_events;
	st->dropped_poison = s.dropped_poison;
	st->dropped_corrupt = s.dropped_corrupt;
	st->torn_tails = s.torn_tails;
	st->counts_since_ms = s.counts_since_ms;
	st->memory_only = s.memory_only;
	st->ndests = s.ndests;
}

int
queue_dest_stats(struct queue *q, size_t d, struct queue_dest_stats *out)
{
	struct spool_dest_stats s;
	int rc = spool_dest_stats((struct spool *)q, d, &s);

	memset(out, 0, sizeof(*out));
	if (rc < 0)
		return -1;
	snprintf(out->name, sizeof(out->name), "%s", s.name);
	out->backlog_events = s.backlog_events;
	out->backlog_bytes = s.backlog_bytes;
	out->acked_events = s.acked_events;
	out->last_ack_ms = s.last_ack_ms;
	out->last_settle_ms = s.last_settle_ms;
	out->dropped_budget = s.dropped_budget;
	out->dropped_poison = s.dropped_poison;
	out->filtered = s.filtered;
	return 0;
}

uint64_t
queue_backlog(struct queue *q, size_t d)
{
	return spool_backlog((struct spool *)q, d);
}

void
batch_free_events(struct batch *b)
{
	spool_batch_free(b);
}
