/*
 * shipper_int: the shipper's private state, shared by its three rooms and
 * by nothing else: shipper.c (start, drain, stop, the threads left behind,
 * the totals), shipper_dest.c (a destination's thread: batches, sends,
 * settling, retries) and shipper_poison.c (a rejected batch split until
 * the poison event is alone).
 */
#ifndef ESXWATCH_SHIPPER_INT_H
#define ESXWATCH_SHIPPER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../output/sink.h"
#include "shipper.h"

struct dfilter;

struct dest {
	struct shipper		*sh;
	size_t			 index;
	const struct sink	*sink;
	struct dest_conf	 conf;		/* primary may be rewritten to file */
	struct sink_ctx		 ctx;
	bool			 opened;
	pthread_t		 thread;
	bool			 started;
	bool			 exited;	/* under sh->mtx */
	bool			 in_send;	/* under sh->mtx: in open() or send() */
	bool			 abandoned;	/* under sh->mtx: left behind by the stop */
	unsigned		 attempt;	/* consecutive failures */
	unsigned int		 seed;
	bool			 refused;	/* the last failure: no connection at all */
	bool			 rejected;	/* dropped a poison event (this run) */
	uint64_t		 rejects;	/* events rejected alone in a row
						 * (the thread's; st has a copy) */
	struct event		**batch0;	/* the batch in flight */
	size_t			 batch_n;	/* its length */
	uint64_t		 src, seq0;	/* its records (batch.src), 0: unknown */
	unsigned char		*poison;	/* per event of it: rejected alone */
	size_t			 poison_cap;
	/* per_item sinks (sink.h): marks and reasons for the send, and the
	 * events past the first not delivered that an answer settled
	 * already (ahead[i]: event i of the batch from the cursor) */
	unsigned char		*item;
	char			(*item_why)[SINK_ITEM_WHY];
	unsigned char		*ahead;
	size_t			 ahead_n;
	bool			 dl_full_told;	/* dead_letter full: logged */
	struct dfilter		*filter;	/* NULL: every event goes */
	unsigned char		*fmark;		/* per peeked event: filtered out */
	struct event		**kept;		/* the peeked events it takes */
	size_t			 fcap;
	struct shipper_dest_stats st;		/* under sh->mtx */
};

struct shipper {
	const struct config	*cfg;
	struct queue		*q;
	pthread_mutex_t		 mtx;
	pthread_cond_t		 cond;
	bool			 stopping;	/* no more waiting for batches to fill */
	int64_t			 deadline_ms;	/* give up at this time (0 = never) */
	struct dest		*dests;
	size_t			 ndests;
	/* the sinks' states common to their destinations (sink.group_new) */
	struct sink_group {
		const struct sink	*sink;
		void			*state;
	}			*groups;
	size_t			 ngroups;
	struct shipper_totals	*totals;
	struct bell		*changed;	/* deps->changed */
	/* left behind by its stop (under mtx): abandoned threads still in a
	 * send; once orphaned, the last of them frees the shipper */
	size_t			 live_abandoned;
	bool			 orphaned;
	void			(*release)(void *);
	void			*release_arg;
};

/* shipper.c: a thread the stop left behind ends here, its send over. */
void	*ship_abandoned_exit(struct dest *);

/* shipper_dest.c: a destination's thread (started by shipper_start()). */
void	*ship_dest_thread(void *);
/* Has the stop's deadline passed?  No new send then. */
bool	 ship_giving_up(struct shipper *);

/*
 * shipper_poison.c.  Send events[0..n) (a part of the batch in flight,
 * d->batch0); on a rejection split it until the poison event is alone,
 * mark it in d->poison and count it.  *done: delivered or dropped from the
 * start.
 */
enum send_result ship_deliver(struct dest *, struct event **events, size_t n,
		    size_t *done, int *retry_after);
/* The batch in flight is events[0..n): its poison marks, cleared. */
int	 ship_poison_reset(struct dest *, struct event **events, size_t n);
/* After a send that settled done events from the cursor: the marks of
 * events ahead move with it. */
void	 ship_ahead_consume(struct dest *, size_t done);
/* Free what shipper_poison.c allocated for d. */
void	 ship_poison_free(struct dest *);

#endif
