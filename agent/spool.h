/*
 * spool: the durable implementation of agent/queue.h (docs/operations.md).
 *
 * Events are appended to segment files under storage.directory/spool/
 * (NNNNNNNNNNNNNNNN.seg, 0600, in a 0700 directory).  Every record is
 *
 *	magic "ESPL" | length u32 | sequence u64 | crc32 u32 | payload
 *
 * (little endian; the CRC, zlib's crc32, covers length, sequence and
 * payload; the payload is event_serialize()'s form).  The magic lets a
 * reader resynchronise after a damaged record; the sequence number, one per
 * event and never reused, lets the spool count exactly how many records a
 * damaged region or a dropped segment held.
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
 * The spool_* names are the implementation; when the build defines
 * ESXWATCH_SPOOL_QUEUE, spool.c also provides every queue_* function of
 * queue.h on top of them (struct queue is then a struct spool).
 */
#ifndef ESXWATCH_SPOOL_H
#define ESXWATCH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "event.h"

struct spool;
struct batch;

#define SPOOL_REC_MAGIC		0x4c505345u	/* "ESPL" read as little endian */
#define SPOOL_REC_HDR		20
#define SPOOL_REC_MAX		(8u * 1024 * 1024)	/* payload bound */
#define SPOOL_NAME_MAX		128

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
	uint64_t	dropped_budget;		/* since start */
	uint64_t	dropped_poison;
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
};

void		 spool_default_opts(const struct config *, struct spool_opts *);
/* dir: the spool directory itself (created 0700). */
struct spool	*spool_open_dir(const char *dir, const struct spool_opts *,
		    const char *const *dests, size_t ndests);
/* storage.directory/spool with the configuration's knobs. */
struct spool	*spool_open(const struct config *, const char *const *dests, size_t ndests);
void		 spool_close(struct spool *);
int		 spool_set_dests(struct spool *, const char *const *dests, size_t ndests);

int		 spool_push(struct spool *, const struct event *);
int		 spool_sync(struct spool *);

/* Returns the number of events put in *out, or -1. */
int		 spool_peek(struct spool *, size_t d, size_t max_events,
		    size_t max_bytes, int wait_ms, struct batch *out);
int		 spool_ack(struct spool *, size_t d, size_t n);
int		 spool_drop(struct spool *, size_t d, size_t n);
void		 spool_wakeup(struct spool *);
void		 spool_stats(struct spool *, struct spool_stats *);
/* i < ndests: fills *out and returns 0; else -1. */
int		 spool_dest_stats(struct spool *, size_t d, struct spool_dest_stats *out);
uint64_t	 spool_backlog(struct spool *, size_t d);
/* Free the events of a peeked batch (batch_free_events() does the same). */
void		 spool_batch_free(struct batch *);

/*
 * The spool the agent runs with (the last one opened and not yet closed),
 * for the agent collector and the status file, which have no handle of
 * their own.  NULL when none.
 */
struct spool	*spool_current(void);

/*
 * Walk the records of one segment image (a file's bytes).  cb gets each
 * valid record (sequence, payload); damaged regions are skipped by
 * resynchronising on the next valid header.  Returns the offset just past
 * the last valid record; *corrupt_records (if not NULL) gets the number of
 * records the damaged regions held (from the sequence gaps) and
 * *bad_regions the number of damaged regions.  Used at start and by the
 * fuzz target.
 */
typedef int (*spool_rec_fn)(void *arg, uint64_t seq, const void *payload, size_t len);
size_t		 spool_scan_image(const unsigned char *data, size_t len,
		    spool_rec_fn cb, void *arg, uint64_t *corrupt_records,
		    uint64_t *bad_regions);

#endif
