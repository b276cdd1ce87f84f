/*
 * shipper: the shipping side.  One thread per destination reads batches
 * from its cursor in the queue, sends them through the destination's sink
 * and acknowledges what was delivered (docs/architecture.md):
 *  - SEND_OK: ack, next batch;
 *  - SEND_RETRY: full-jitter exponential backoff (base 1 s, cap 5 min) or
 *    the server's Retry-After, then the same batch again;
 *  - SEND_REJECT: split the batch in halves until the poison event is
 *    alone, drop only it and count it.
 * Destinations progress independently: a dead one never slows the others.
 */
#ifndef ESXWATCH_SHIPPER_H
#define ESXWATCH_SHIPPER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "queue.h"

struct shipper;

struct shipper_dest_stats {
	char		name[64];
	char		proto[16];
	uint64_t	sent_events;
	uint64_t	failed_sends;	/* send attempts that did not deliver */
	uint64_t	dropped_poison;	/* events the destination rejected alone */
	uint64_t	not_ingested;	/* accepted by the server but not ingested */
	uint64_t	backlog;	/* events queued for it */
	int64_t		last_success_ms;	/* 0 = never */
	int64_t		last_error_ms;
	char		last_error[512];
	bool		failing;	/* the last attempt failed */
};

/* The destination names of a configuration, in order ("server", then
 * each servers.NAME).  Returns the count (<= max). */
size_t		 shipper_dest_names(const struct config *, const char **names, size_t max);

struct shipper	*shipper_start(const struct config *, struct queue *);
/*
 * Stop: with drain_ms > 0, keep delivering until every destination's
 * backlog is empty or drain_ms passed.  Joins the threads, closes sinks;
 * never waits more than drain_ms and half a second, whatever a sink does.
 * Returns true if every event was delivered: every destination's backlog
 * is empty and none rejected an event while this shipper ran.
 */
bool		 shipper_stop(struct shipper *, int drain_ms);
/* Start the stop without waiting: deliver what is queued without waiting
 * for batches to fill, giving up drain_ms from now (or earlier, if an
 * earlier drain said so).  The destinations' threads end once their
 * backlog is empty; shipper_stop() then joins them. */
void		 shipper_drain(struct shipper *, int drain_ms);
/*
 * Threads shipper_stop() left behind in a send that outlived the drain
 * deadline (by half a second), since start.  Such a thread still reads
 * the configuration the shipper was started with when its send returns:
 * that configuration must be kept, never freed.
 */
unsigned	 shipper_abandoned(void);
size_t		 shipper_ndests(const struct shipper *);
/* The running shipper (NULL between a stop and the next start): for the
 * status writer and the agent collector. */
struct shipper	*shipper_current(void);
int		 shipper_stats(struct shipper *, size_t d, struct shipper_dest_stats *);

#endif
