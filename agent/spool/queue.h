/*
 * queue: the single hand-off between the collecting side and the shipping
 * side (docs/architecture.md).  Every destination reads the same stream of
 * events from its own cursor and acknowledges what it delivered.
 *
 * This header is the seam the durable spool implements; the collecting
 * side only ever calls queue_push(), queue_push_many() and queue_sync().
 */
#ifndef ESXWATCH_QUEUE_H
#define ESXWATCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"
#include "../event.h"

struct queue;

struct queue_stats {
	uint64_t	queued_events;	/* not yet acknowledged by every destination */
	uint64_t	queued_bytes;
	uint64_t	dropped_events;	/* over the budget, since start */
	uint64_t	pushed_events;	/* since start */
	uint64_t	dropped_poison;	/* queue_drop()ped, since start */
	uint64_t	dropped_corrupt; /* damaged records skipped */
	uint64_t	torn_tails;	/* torn records cut at start */
	int64_t		counts_since_ms; /* wall clock: the drop, damage and filtered
					  * counts are since then (across restarts) */
	bool		memory_only;	/* events are not on disk */
	size_t		ndests;
};

struct queue_dest_stats {
	char		name[128];
	uint64_t	backlog_events;
	uint64_t	backlog_bytes;
	uint64_t	acked_events;		/* since start */
	int64_t		last_ack_ms;		/* wall clock; 0 = never */
	int64_t		last_settle_ms;		/* acked, filtered or dropped */
	uint64_t	dropped_budget;		/* since start */
	uint64_t	dropped_poison;		/* since start */
	uint64_t	filtered;		/* its filter kept them out */
};

/* dests: the destination names ("server", NAME...) in config order. */
struct queue	*queue_open(const struct config *, const char *const *dests, size_t ndests);
void		 queue_close(struct queue *);
/* Replace the destination list (reload): kept names keep their cursor. */
int		 queue_set_dests(struct queue *, const char *const *dests, size_t ndests);

/* Collecting side.  The event is copied.  0 = queued. */
int		 queue_push(struct queue *, const struct event *);
/* n events in order, as n queue_push() calls would queue them, with as
 * few writes as the queue can: returns how many, from the first, are
 * queued (n = all; each is as safe as after queue_push()).  Stops at the
 * first it cannot queue. */
size_t		 queue_push_many(struct queue *, const struct event *const *evs, size_t n);
/* queue_push_many() as n queue_push() calls, for a queue that has no
 * batched append (the test and bench doubles of this interface). */
static inline size_t
queue_push_each(struct queue *q, const struct event *const *evs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (queue_push(q, evs[i]) != 0)
			break;
	return i;
}
/* Everything pushed so far survives a crash once this returns 0. */
int		 queue_sync(struct queue *);

/*
 * Shipping side.  queue_peek() fills *out (caller frees with
 * batch_free_events) with up to max_events events / about max_bytes of
 * flat JSON (the spool counts its records' serialized size, which only
 * escapes exceed; sinks split what their request limit cannot take) from
 * destination d's cursor, waiting at most wait_ms for the first one.
 * out->src and out->seq0 name the records when they are consecutive (0
 * when the queue cannot say; struct batch).
 * queue_ack() moves the cursor past the first n events of the last peek;
 * queue_drop() does the same but counts them as dropped (poison).
 */
int		 queue_peek(struct queue *, size_t d, size_t max_events,
		    size_t max_bytes, int wait_ms, struct batch *out);
int		 queue_ack(struct queue *, size_t d, size_t n);
/* The one way an event is dropped as poison: counted here, once. */
int		 queue_drop(struct queue *, size_t d, size_t n);
/* The same, for events the destination's filter keeps out: settled,
 * neither sent nor dropped; counted as filtered. */
int		 queue_skip(struct queue *, size_t d, size_t n);
void		 queue_wakeup(struct queue *);	/* make waiting peeks return */
void		 queue_stats(struct queue *, struct queue_stats *);
/* d < ndests: fills *out and returns 0; else -1. */
int		 queue_dest_stats(struct queue *, size_t d, struct queue_dest_stats *out);
uint64_t	 queue_backlog(struct queue *, size_t d);

void		 batch_free_events(struct batch *);

#endif
