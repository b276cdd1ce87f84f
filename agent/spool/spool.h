/*
 * spool: the durable implementation of agent/spool/queue.h (docs/operations.md),
 * the top of three layers:
 *
 *	spool.c      the queue: open, close, destinations, figures, locks
 *	             (queue.c binds it to agent/spool/queue.h)
 *	spoolpush.c  the write side: records appended, the budget kept
 *	spoolpeek.c  the read side: batches handed out, settled, cursors moved
 *	spoolkeeper.c the housekeeper: syncs, cursor files, the directory
 *	spoolopen.c  opening a spool: what a previous run left
 *	dropcounts.c the per-reason counts kept across restarts
 *	segstore.c   segments in files or in memory (segwrite.c appends,
 *	             segread.c reads back), segcursor.c the cursor files
 *	segdir.c     the directory: created, locked, re-created if deleted
 *	spoolrec.c   the record format and the scan of a segment image (pure)
 *	spoolopts.c  the knobs (struct spool_opts) and their bounds
 *
 * Events are appended to segment files under storage.directory/spool/
 * (segstore.h) as records (spoolrec.h).
 *
 * Each destination has a cursor (segment, offset, sequence) kept in
 * spool/cursor.NAME, rewritten atomically (temp + fsync + rename) after every
 * acknowledgement.  A segment every cursor has passed is deleted.  Past the
 * budget the oldest segment is dropped and each destination that had not
 * read it yet counts what it lost.
 *
 * When the disk refuses a write (ENOSPC, EDQUOT, EIO...) the spool keeps
 * new events in memory segments (bounded like the disk), logs an error, and
 * retries the disk every few seconds; queue_sync() fails while it is so, so
 * nobody (log bookmarks) believes those events are safe.
 *
 * The spool_* names are the implementation; agent/spool/queue.c provides every
 * queue_* function of queue.h on top of them (struct queue is a struct
 * spool).
 */
#ifndef ESXWATCH_SPOOL_H
#define ESXWATCH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"
#include "../event.h"
#include "spoolrec.h"

struct spool;
struct batch;

#define SPOOL_NAME_MAX		128
/* The housekeeper of a spool with nothing unsynced and nothing unread
 * checks its directory this often (else every sync_ms); a push wakes it. */
#define SPOOL_IDLE_MS		30000

/* Knobs; spool_open() takes them from the configuration (storage.*) and
 * the retry interval from ESXWATCH_SPOOL_RETRY_MS, a test hook. */
struct spool_opts {
	uint64_t	budget;		/* bytes on disk (and in memory) */
	uint64_t	segment_size;	/* bytes; a segment is sealed past it */
	uint64_t	sync_bytes;	/* fsync after this many unsynced bytes */
	int		sync_ms;	/* ... or after this long */
	int		retry_ms;	/* memory-only: try the disk again */
	uint64_t	mem_max;	/* memory-only bound (0 = 32 MB or the budget) */
};

struct spool_dest_stats {
	char		name[SPOOL_NAME_MAX];
	uint64_t	backlog_events;
	uint64_t	backlog_bytes;
	uint64_t	acked_events;		/* since start */
	int64_t		last_ack_ms;		/* wall clock; 0 = never */
	int64_t		last_settle_ms;		/* acked, filtered or dropped */
	uint64_t	dropped_budget;		/* since start */
	uint64_t	dropped_poison;
	uint64_t	filtered;		/* its filter kept them out */
};

struct spool_stats {
	uint64_t	queued_events;	/* not yet acknowledged by every destination */
	uint64_t	queued_bytes;
	uint64_t	pushed_events;	/* since start */
	uint64_t	dropped_budget;	/* sum over destinations */
	uint64_t	dropped_poison;
	uint64_t	dropped_corrupt; /* damaged records skipped (found at start) */
	uint64_t	torn_tails;	/* torn records cut at start */
	uint64_t	disk_bytes;	/* segment bytes on disk */
	uint64_t	mem_bytes;	/* segment bytes held in memory */
	size_t		segments;
	bool		memory_only;	/* the disk refused writes */
	size_t		ndests;
	int64_t		counts_since_ms; /* wall clock: the drop counts since (dropcounts.h) */
};

void		 spool_default_opts(const struct config *, struct spool_opts *);
/* Hold the knobs to sane bounds (spoolopts.c, with the defaults). */
void		 spool_opts_fix(struct spool_opts *);
/* dir: the spool directory itself (created 0700). */
struct spool	*spool_open_dir(const char *dir, const struct spool_opts *,
		    const char *const *dests, size_t ndests);
/* storage.directory/spool with the configuration's knobs. */
struct spool	*spool_open(const struct config *, const char *const *dests, size_t ndests);
void		 spool_close(struct spool *);
int		 spool_set_dests(struct spool *, const char *const *dests, size_t ndests);

int		 spool_push(struct spool *, const struct event *);
/* The first events of evs that were queued (see queue_push_many()). */
size_t		 spool_push_many(struct spool *, const struct event *const *evs, size_t n);
int		 spool_sync(struct spool *);

/* Returns the number of events put in *out, or -1. */
int		 spool_peek(struct spool *, size_t d, size_t max_events,
		    size_t max_bytes, int wait_ms, struct batch *out);
int		 spool_ack(struct spool *, size_t d, size_t n);
int		 spool_drop(struct spool *, size_t d, size_t n);
/* Settled without a send: the destination's filter keeps them out. */
int		 spool_skip(struct spool *, size_t d, size_t n);
void		 spool_wakeup(struct spool *);
void		 spool_stats(struct spool *, struct spool_stats *);
/* i < ndests: fills *out and returns 0; else -1. */
int		 spool_dest_stats(struct spool *, size_t d, struct spool_dest_stats *out);
uint64_t	 spool_backlog(struct spool *, size_t d);
/* Free the events of a peeked batch (batch_free_events() does the same). */
void		 spool_batch_free(struct batch *);
/* Add ev to a batch being read (spoolbatch.c; *cap: its room).  0 or -1. */
int		 spool_batch_add(struct batch *, struct event *ev, size_t *cap);

#endif
