/*
 * dropcounts: the spool's per-reason counts, kept across restarts in
 * spool/counts (docs/reliability.md, "Counts across restarts").
 *
 * What is kept: per destination the events dropped over the budget,
 * rejected alone (poison) and kept out by its filter; for the spool the
 * damaged records skipped, the torn tails cut, and what destinations a
 * reload removed had dropped.  Events sent and pushed stay "since the
 * agent started" (throughput, not loss).
 *
 * The file is text, at most DC_FILE_MAX bytes, written atomically (temp +
 * fsync + rename, 0600, O_NOFOLLOW/O_EXCL by fs_write_atomic) and closed by
 * a CRC: a file that is missing, garbled or fails its CRC gives one warning
 * and the counts start from zero (with a new counts_since), never a wrong
 * number.  It is written when the counts changed, at most every interval
 * (batch.flush_interval), and at a clean stop: a crash loses at most the
 * increments of the last interval or two.
 *
 * Damage the start's scan finds is a gap in the sequence numbers; the file
 * keeps the gaps already counted (DC_RANGES_MAX ranges, those a cursor has
 * not passed), so a damaged segment still in the spool at the next start
 * is not counted again; so are the segments a deleted directory took
 * while running (segstore_check_dir notes them through dropcounts_gap).
 *
 * Not thread-safe: the spool calls it from one thread at a time (at open,
 * from the housekeeper, at close).
 */
#ifndef ESXWATCH_DROPCOUNTS_H
#define ESXWATCH_DROPCOUNTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spool.h"

#define DC_DESTS_MAX	64		/* CONFIG_MAX_DESTS; more fold into gone_* */
#define DC_RANGES_MAX	64
#define DC_FILE_MAX	(64 * 1024)

struct segstore;

struct dc_dest {
	char		name[SPOOL_NAME_MAX];
	uint64_t	budget, poison, filtered;
};

/* The counts at one moment (what the file holds). */
struct dc_snap {
	uint64_t	corrupt, torn, gone_budget, gone_poison;
	size_t		n;
	struct dc_dest	d[DC_DESTS_MAX];
};

struct dropcounts {
	char		path[PATH_MAX];
	int64_t		since_ms;	/* wall clock: counting began */
	struct dc_snap	loaded;		/* the file at start (taken by the spool) */
	bool		claimed[DC_DESTS_MAX];
	struct dc_snap	cur;		/* scratch: the spool's counts now */
	struct dc_snap	saved;		/* the last written */
	bool		have_saved;
	int64_t		next_ms;	/* monotonic: not written again before */
	uint64_t	ranges[DC_RANGES_MAX][2];	/* gaps counted: [a, b) */
	size_t		nranges;
};

/* Read dir/counts (a warning if it is damaged); since_ms = now without one.
 * nodisk: no file at all (the counts are since start). */
void		dropcounts_load(struct dropcounts *, const char *dir, bool nodisk);
/* The scan's gap callback (struct spoolrec_scan): [a, b) is missing; returns
 * how many of them no earlier run counted, and notes the range. */
uint64_t	dropcounts_gap(void *dc, uint64_t a, uint64_t b);
/* After the start's scan: gaps below minseq (the oldest cursor) are not
 * scanned again, the budget's gaps (the clean-stop mark) are no damage,
 * sequences from next_seq on may be reused. */
void		dropcounts_after_scan(struct dropcounts *, const struct segstore *,
		    uint64_t minseq);
/* Add the loaded counts of destination name (once) to the three. */
void		dropcounts_claim(struct dropcounts *, const char *name, uint64_t *budget,
		    uint64_t *poison, uint64_t *filtered);
/* What destinations no longer configured had dropped: into gone_*; the
 * loaded damage counts into the store's. */
void		dropcounts_rest(struct dropcounts *, uint64_t *gone_budget,
		    uint64_t *gone_poison, struct segstore *);
/* Building dc->cur: a destination's counts (folded into gone_* when full). */
void		dropcounts_snap_dest(struct dc_snap *, const char *name, uint64_t budget,
		    uint64_t poison, uint64_t filtered);
/* Does dc->cur differ from what was saved, and may it be written now? */
/* The counts differ from what was last saved (a save is wanted, due or not). */
bool		dropcounts_pending(const struct dropcounts *);
bool		dropcounts_due(const struct dropcounts *, int64_t now_mono);
/* Write dc->cur; next write not before now + interval_ms. */
int		dropcounts_save(struct dropcounts *, int64_t now_mono, int interval_ms);
/* Write dc->cur at the next chance (the directory was re-created). */
void		dropcounts_force(struct dropcounts *);

#endif
