/*
 * shipper: the shipping side.  One thread per destination reads batches
 * from its cursor in the queue, sends them through the destination's sink
 * and acknowledges what was delivered (docs/architecture.md):
 *  - SEND_OK: ack, next batch;
 *  - SEND_RETRY: full-jitter exponential backoff (base 1 s, cap 5 min) or
 *    the server's Retry-After, then the same batch again;
 *  - SEND_REJECT: split the batch in halves until the poison event is
 *    alone, drop only it: queue_drop(), which counts it (once, there);
 *    but once reject_limit events in a row were rejected alone, the
 *    destination rejects everything (a broken proxy, a wrong URL): it is
 *    failing, and its events are kept and retried with backoff.
 * Destinations progress independently: a dead one never slows the others.
 */
#ifndef ESXWATCH_SHIPPER_H
#define ESXWATCH_SHIPPER_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "lib/platform.h"
#include "spool/queue.h"

struct shipper;

struct shipper_dest_stats {
	char		name[64];
	char		proto[16];
	uint64_t	sent_events;
	uint64_t	failed_sends;	/* send attempts that did not deliver */
	uint64_t	not_ingested;	/* accepted by the server but not ingested */
	uint64_t	dead_lettered;	/* refused for good, written to dead_letter */
	uint64_t	dead_letter_dropped; /* refused, dead_letter full or unwritable */
	uint64_t	resent_events;	/* sent again, maybe delivered twice (an
					 * acknowledgement that never came) */
	uint64_t	backlog;	/* events queued for it */
	int64_t		last_success_ms;	/* 0 = never */
	int64_t		last_error_ms;
	char		last_error[512];
	bool		failing;	/* the last attempt failed */
	uint64_t	rejected_in_row; /* single events rejected in a row */
	/* a host with no destination: "stdout" or "host_syslog" (where its
	 * events go, platform_nodest_name()); "" when one is configured */
	char		no_destination[16];
};

/* The destination names of a configuration, in order ("server", then
 * each servers.NAME).  Returns the count (<= max). */
size_t		 shipper_dest_names(const struct config *, const char **names, size_t max);
/* How long a server's Retry-After of s seconds makes a destination wait:
 * s, at most the backoff cap (5 min); 0 when s is not positive. */
int		 shipper_retry_after_ms(int s);

/*
 * The per-destination counters since start (sent, failed, not ingested,
 * last success and error), kept by name across shippers: main makes one
 * and hands it to every shipper_start(), so a reload does not reset them.
 */
struct shipper_totals;
struct shipper_totals *shipper_totals_new(void);
void		 shipper_totals_free(struct shipper_totals *);

/* What main hands every shipper (any member may be NULL). */
struct sink;
struct agentid;
struct bell;
struct shipper_deps {
	struct shipper_totals	*totals;	/* NULL: counters from zero */
	struct agentid		*agentid;	/* the host's identity, for the sinks */
	/* the sink of a protocol; NULL: sink_find() (tests: a fake one) */
	const struct sink	*(*find)(enum dest_proto);
	/* where a host with no destination sends (platform_nodest()) */
	enum nodest		 nodest;
	/* rung on every send's outcome (the status writer); NULL: none */
	struct bell		*changed;
};

struct shipper	*shipper_start(const struct config *, struct queue *,
		    const struct shipper_deps *);
/*
 * Stop: with drain_ms > 0, keep delivering until every destination's
 * backlog is empty or drain_ms passed.  Joins the threads, closes sinks;
 * never waits more than drain_ms and half a second, whatever a sink does.
 * Returns true if every event was delivered: every destination's backlog
 * is empty and none rejected an event while this shipper ran.
 *
 * A thread still in a send after that is left behind (detached; it never
 * touches the queue again): the shipper is then not freed but returned in
 * *kept (if not NULL), and the caller must keep it and the configuration
 * it was started with until the process ends.  *kept is NULL otherwise.
 */
bool		 shipper_stop(struct shipper *, int drain_ms, struct shipper **kept);
/* Start the stop without waiting: deliver what is queued without waiting
 * for batches to fill, giving up drain_ms from now (or earlier, if an
 * earlier drain said so).  The destinations' threads end once their
 * backlog is empty; shipper_stop() then joins them. */
void		 shipper_drain(struct shipper *, int drain_ms);
/*
 * Give up a shipper shipper_stop() left behind (*kept): each thread still
 * in a send closes its sink when the send ends, and the last one frees
 * the shipper and calls release(arg) (the configuration it read), so a
 * hung server costs nothing once its timeout passed.  Neither sh nor what
 * release frees may be used after this call.
 */
void		 shipper_orphan(struct shipper *, void (*release)(void *), void *arg);
/* Threads still in a send that their shipper's stop left behind. */
size_t		 shipper_abandoned_threads(void);
size_t		 shipper_ndests(const struct shipper *);
int		 shipper_stats(struct shipper *, size_t d, struct shipper_dest_stats *);

#endif
