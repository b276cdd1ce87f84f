/*
 * spool_int: the spool's private state, shared by the rooms of the queue:
 * spool.c (open, close, destinations, figures), spoolpush.c (the write
 * side), spoolpeek.c (the read side), spoolkeeper.c (the housekeeper) and
 * spoolopen.c (what a previous run left).  Not for other modules.
 */
#ifndef ESXWATCH_SPOOL_INT_H
#define ESXWATCH_SPOOL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/buf.h"
#include "dropcounts.h"
#include "segstore.h"
#include "spool.h"

/* Records of one run end here in sp->rec (spool_push_many). */
#define SPOOL_RUN_BYTES	(64u * 1024)
#define SPOOL_RUN_MAX	64

struct dest {
	char		 name[SPOOL_NAME_MAX];
	struct seg_pos	 cur;
	bool		 dirty;		/* cursor file behind cur */
	/*
	 * What its cursor file says: a segment file is deleted only once
	 * every saved cursor has passed it, so that after a crash no cursor
	 * points into a deleted segment (its records would be counted as
	 * lost though they were delivered).
	 */
	struct seg_pos	 saved;
	struct seg_pos	*peek;		/* position after each peeked event */
	uint64_t	*peek_seq;	/* each peeked event's sequence */
	size_t		 npeek, peek_used, peek_cap;
	uint64_t	 acked, dropped_budget, dropped_poison, filtered;
	int64_t		 last_ack_ms;
	int64_t		 last_settle_ms;	/* acked, filtered or dropped */
	struct segwin	 win;		/* read window over one file segment */
	/* consecutive read errors at one position (a bad sector) */
	struct seg_pos	 rderr_at;
	int		 rderr_n;
};

struct spool {
	struct segstore	 st;
	struct spool_opts o;
	pthread_mutex_t	 mu;
	pthread_mutex_t	 curmu;
	pthread_cond_t	 cv;		/* events pushed, wakeup */
	pthread_cond_t	 hkcv;		/* work for the housekeeper */
	pthread_t	 hk;
	bool		 hk_started;
	bool		 closing;

	struct dest	**dests;
	size_t		 ndests;

	uint64_t	 wake_gen;
	int64_t		 cursor_next_ms;	/* no cursor files before this */
	int64_t		 dircheck_ms;	/* the directory still there? */
	bool		 sync_wanted;
	bool		 hk_idle;	/* the housekeeper sleeps SPOOL_IDLE_MS */

	/* counters since start */
	uint64_t	 pushed;
	uint64_t	 gone_budget, gone_poison;	/* of removed destinations */
	struct dropcounts dc;		/* the counts across restarts */

	struct buf	 rec;		/* push scratch */
	uint64_t	 instance;	/* this spool in the process (batch.src) */
};

/* Where a is against (seg, off): -1 before, 0 there, 1 after. */
static inline int
pos_cmp(const struct seg_pos *a, uint64_t seg, uint64_t off)
{
	if (a->seg != seg)
		return a->seg < seg ? -1 : 1;
	if (a->off != off)
		return a->off < off ? -1 : 1;
	return 0;
}

/* spool.c */
int	set_dests_locked(struct spool *, const char *const *, size_t, bool opening);
/* Delete the oldest segments every destination has passed. */
void	release_segments(struct spool *);
/* sp->mu taken and destination di, or NULL (sp->mu not held) when di is
 * past the list (a reload shortened it). */
struct dest *lock_dest(struct spool *, size_t di);

/* spoolpeek.c: does destination d have anything left to read?  With mu
 * held. */
bool	has_data(const struct spool *, const struct dest *);

/* spoolkeeper.c: the housekeeping thread (sp its argument); the cursor
 * files that are behind, then the destinations file (each with curmu
 * held, not mu). */
void	*housekeeper(void *sp);
void	save_cursors(struct spool *);
void	save_dests(struct spool *);

/* spoolopen.c: what a previous run left (segments, cursors, damage, the
 * counts); the counts now into sp->dc.cur (with mu held). */
int	spool_recover(struct spool *, const char *const *dests, size_t ndests);
void	spool_counts_snap(struct spool *);

#endif
