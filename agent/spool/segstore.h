/*
 * segstore: the segments of the spool, on disk or in memory.
 *
 * Events are appended to segment files under storage.directory/spool/
 * (NNNNNNNNNNNNNNNN.seg, 0600, in a 0700 directory), as records of
 * spoolrec.h.  When the disk refuses a write (ENOSPC, EDQUOT, EIO...) new
 * records go to memory segments instead (the memory backend), until
 * segstore_try_disk() moves them back to files.  Without a usable
 * directory at all (nodisk) every segment is a memory one.  The queue
 * (spool.c) decides what to keep; this layer only stores, reads back and
 * persists the cursor files next to the segments.
 *
 *	segstore.c   the table of segments, opening, positions, sizes
 *	segwrite.c   appending, syncing, the memory backend
 *	segread.c    records read back through a window
 *	segcursor.c  the cursor files and the destinations file
 *	segdir.c     the directory: created, locked, re-created if deleted
 *	spoolend.c   the clean-stop mark
 *
 * Not thread-safe: the caller serialises every call (spool.c's mutex).
 */
#ifndef ESXWATCH_SEGSTORE_H
#define ESXWATCH_SEGSTORE_H

#include <sys/types.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoolrec.h"

#define SEG_MAX		(64ull * 1024 * 1024)
#define SEG_MIN		1024ull

struct seg {
	uint64_t	 id;
	uint64_t	 first_seq;	/* sequence of the first record */
	uint64_t	 end_seq;	/* one past the last record */
	uint64_t	 size;		/* bytes of whole records */
	uint64_t	 synced;	/* bytes known to be on disk */
	int		 fd;		/* -1 when closed */
	unsigned char	*mem;		/* non-NULL: a memory segment */
	size_t		 memcap;
};

/* A position in the stream: before the record at (seg, off), whose
 * sequence is seq (or the next one pushed). */
struct seg_pos {
	uint64_t	seg;
	uint64_t	off;
	uint64_t	seq;
};

/* One reader's window over a file segment (segstore_bytes()). */
struct segwin {
	unsigned char	*buf;
	size_t		 cap, len;
	uint64_t	 seg, off;
	uint64_t	 gen;		/* the store's gen when filled */
	bool		 ok;
	int		 err;		/* errno of the last failed read */
};

#define SEG_GAPS_MAX	32

struct segstore {
	char		*dir;
	uint64_t	 segment_size;	/* a segment is sealed past it */
	uint64_t	 mem_max;	/* memory backend bound (for the log) */
	pthread_cond_t	*wake;		/* signalled when the disk refuses */
	struct seg	*segs;		/* ordered by id */
	size_t		 nsegs, segcap;
	bool		 active;	/* segs[nsegs-1] is being appended to */
	bool		 memonly;	/* the disk refused: new records in memory */
	bool		 nodisk;	/* no usable directory: memory for good */
	int		 lockfd;	/* spool/lock, fcntl-locked while we run */
	uint64_t	 dir_dev, dir_ino;	/* the directory attached (0: none) */
	bool		 dir_refused;	/* deleted, not safe to re-create: no writes */
	uint64_t	 next_seq, next_id;
	uint64_t	 gen;		/* bumped when read windows go stale */
	int64_t		 last_sync_ms, last_retry_ms;
	uint64_t	 corrupt, torn;	/* since counts_since (dropcounts.h) */
	size_t		 fd_max;	/* segment files kept open (segdir.c) */
	/* sequence ranges [a, b) the budget dropped from the middle (memory
	 * segments): a gap on disk the clean-stop mark says is no damage */
	uint64_t	 gaps[SEG_GAPS_MAX][2];
	size_t		 ngaps;
};

int		 segstore_init(struct segstore *, const char *dir, uint64_t segment_size,
		    uint64_t mem_max, pthread_cond_t *wake);
/* Create (0700) and lock the directory: -1 if it cannot be ours. */
int		 segstore_attach(struct segstore *);
/* Seal, log what memory held, release every segment (files stay). */
void		 segstore_fini(struct segstore *);

/* At start: the segment ids (sorted) and cursor file names (escaped). */
int		 segstore_scan_dir(struct segstore *, uint64_t **ids, size_t *nids,
		    char ***curnames, size_t *ncur);
/* Scan segment file id into the store (last: the newest one). */
int		 segstore_load(struct segstore *, uint64_t id, bool last, struct spoolrec_scan *);

size_t		 segstore_find(const struct segstore *, uint64_t id);
void		 segstore_release(struct segstore *, size_t i, bool unlink_file);
struct seg_pos	 segstore_end(const struct segstore *);
struct seg_pos	 segstore_start(const struct segstore *);
/* A loaded cursor: clamped to what the store holds; past its end? */
void		 segstore_clamp(const struct segstore *, struct seg_pos *);
bool		 segstore_beyond(const struct segstore *, const struct seg_pos *);
/* Events and bytes from p to the end. */
void		 segstore_backlog(const struct segstore *, const struct seg_pos *,
		    uint64_t *events, uint64_t *bytes);
size_t		 segstore_oldest_mem(const struct segstore *);
uint64_t	 segstore_mem_bytes(const struct segstore *);
uint64_t	 segstore_total_bytes(const struct segstore *);

/* Writing. */
int		 segstore_append(struct segstore *, const unsigned char *rec, size_t len,
		    uint64_t seq);
/* Records in one write (segwrite.c): how many were appended, 0 = append
 * the next one with segstore_append(). */
size_t		 segstore_append_run(struct segstore *, const unsigned char *recs,
		    const size_t *ends, size_t n, size_t from, uint64_t seq);
void		 segstore_seal(struct segstore *);
void		 segstore_memonly(struct segstore *, const char *what, int err);
/* fsync the active segment; mu (held) is released during the disk wait. */
int		 segstore_sync_active(struct segstore *, pthread_mutex_t *mu);
/* Memory segments back to files, oldest first. */
void		 segstore_try_disk(struct segstore *);
/*
 * segdir.c.  The directory deleted (or replaced) while we run?  Then
 * re-create and lock it (unless the path fails the start's storage check:
 * then dir_refused, memory only, nothing written there); open segments are written back into it from
 * their descriptors (or, failing that, go to memory and from there to
 * files again); the others are gone: their records from sequence from_seq
 * on are counted (corrupt): through gap (the scan's callback, struct
 * spoolrec_scan) when given, which notes them and returns how many were
 * not counted before.  1 if so (cursors may name released segments),
 * else 0.
 */
int		 segstore_check_dir(struct segstore *, uint64_t from_seq,
		    uint64_t (*gap)(void *, uint64_t, uint64_t), void *arg);
/* How many segment files may stay open for a spool of budget bytes
 * (raises the soft RLIMIT_NOFILE to fit them where it can). */
void		 segstore_fd_budget(struct segstore *, uint64_t budget);
/* The open segment files within fd_max? */
bool		 segstore_fd_kept(const struct segstore *);
/* Open sealed segment s's file and keep it open, when within fd_max. */
void		 segstore_hold(struct segstore *, struct seg *s);

/* Reading. */
int		 segstore_bytes(struct segstore *, struct segwin *, struct seg *,
		    uint64_t off, size_t len, const unsigned char **out);
int		 segstore_rec_at(struct segstore *, struct segwin *, struct seg *,
		    uint64_t off, uint64_t *seq, const unsigned char **p, size_t *plen);
uint64_t	 segstore_resync(struct segstore *, struct segwin *, struct seg *,
		    uint64_t off);

/* Cursor files (cursor.NAME, written atomically). */
int		 segstore_cursor_write(const struct segstore *, const char *name,
		    const struct seg_pos *);
int		 segstore_cursor_read(const char *path, struct seg_pos *);
void		 segstore_cursor_remove(const struct segstore *, const char *name);
int		 segstore_unescape(const char *s, char *out, size_t len);
/* spool/destinations: the names cursors are kept for (escaped). */
int		 segstore_dests_write(const struct segstore *, const char *const *names,
		    size_t n);
/* 1 listed, 0 not listed, -1 no readable file. */
int		 segstore_dests_listed(const struct segstore *, const char *name);

/*
 * The clean-stop mark (spoolend.c): the sequence the next event would
 * get, written by a clean stop.  At the next start segstore_end_check()
 * takes it (reads and removes it: a crash later finds none) and counts
 * as damaged the records below it past both the newest one found and
 * minseq (the oldest cursor).
 */
int		 segstore_end_write(const struct segstore *, uint64_t next_seq);
void		 segstore_end_check(struct segstore *, uint64_t minseq);
/* A segment dropped from the middle (the budget): its range is a gap the
 * mark keeps, counted already (a full table merges into its last row). */
void		 segstore_gap_note(struct segstore *, uint64_t first, uint64_t end);

#endif
