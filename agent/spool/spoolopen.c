/*
 * spoolopen: opening a spool directory -- what a previous run left:
 * segments, cursors (lost, damaged or past the end: the destination
 * restarts at the oldest event), damage, and the counts of earlier runs
 * (dropcounts.h).  The queue itself is spool.c.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dropcounts.h"
#include "../lib/log.h"
#include "segstore.h"
#include "spool_int.h"

/* The counts of earlier runs (dropcounts.h) added to this one's. */
static void
counts_load(struct spool *sp)
{
	for (size_t k = 0; k < sp->ndests; k++) {
		struct dest *d = sp->dests[k];

		dropcounts_claim(&sp->dc, d->name, &d->dropped_budget,
		    &d->dropped_poison, &d->filtered);
	}
	dropcounts_rest(&sp->dc, &sp->gone_budget, &sp->gone_poison, &sp->st);
}

/* The counts now into dc.cur.  With mu held. */
void
spool_counts_snap(struct spool *sp)
{
	struct dc_snap *s = &sp->dc.cur;

	memset(s, 0, sizeof(*s));
	s->corrupt = sp->st.corrupt;
	s->torn = sp->st.torn;
	s->gone_budget = sp->gone_budget;
	s->gone_poison = sp->gone_poison;
	for (size_t k = 0; k < sp->ndests; k++) {
		const struct dest *d = sp->dests[k];

		dropcounts_snap_dest(s, d->name, d->dropped_budget, d->dropped_poison,
		    d->filtered);
	}
}

/* What a spool directory holds at start. */
struct found {
	uint64_t	*ids;		/* segment ids, sorted */
	size_t		 nids;
	char		**names;	/* cursor file names (escaped) */
	struct seg_pos	*pos;		/* their contents */
	bool		*bad;		/* unreadable */
	size_t		 ncur;
	uint64_t	 maxseg, maxseq, minseq;
};

static void
found_free(struct found *f)
{
	for (size_t i = 0; i < f->ncur; i++)
		free(f->names[i]);
	free(f->names);
	free(f->pos);
	free(f->bad);
	free(f->ids);
}

static int
load_cursors(struct spool *sp, struct found *f)
{
	if (f->ncur > 0) {
		f->pos = calloc(f->ncur, sizeof(*f->pos));
		f->bad = calloc(f->ncur, sizeof(*f->bad));
		if (f->pos == NULL || f->bad == NULL)
			return -1;
	}
	for (size_t i = 0; i < f->ncur; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/cursor.%s", sp->st.dir, f->names[i]);
		if (segstore_cursor_read(path, &f->pos[i]) < 0) {
			/* assign_cursors() restarts it at the oldest event */
			f->bad[i] = true;
			memset(&f->pos[i], 0, sizeof(f->pos[i]));
		}
		if (f->pos[i].seg > f->maxseg)
			f->maxseg = f->pos[i].seg;
		if (f->pos[i].seq > f->maxseq)
			f->maxseq = f->pos[i].seq;
		if (i == 0 || f->pos[i].seq < f->minseq)
			f->minseq = f->pos[i].seq;
	}
	return 0;
}

/*
 * A destination whose cursor is lost (missing, damaged, past the end)
 * restarts at the oldest queued event: at least once, never a silent skip.
 */
static void
cursor_restart(struct spool *sp, struct dest *d, const char *why)
{
	uint64_t ev, by;

	d->cur = segstore_start(&sp->st);
	d->saved = d->cur;
	segstore_backlog(&sp->st, &d->cur, &ev, &by);
	if (ev > 0)
		log_warn("spool: the cursor file of destination '%s' %s; it restarts "
		    "at the oldest queued event: %" PRIu64 " events will be sent "
		    "(again, for those it had already received)", d->name, why, ev);
}

/*
 * Known destinations get their cursor; cursors of others are removed.  A
 * destination without one is new (it starts at the end) unless the
 * destinations file lists it: then its cursor file was lost.
 */
static void
assign_cursors(struct spool *sp, const struct found *f)
{
	bool *have = calloc(sp->ndests > 0 ? sp->ndests : 1, sizeof(*have));

	for (size_t i = 0; i < f->ncur; i++) {
		char name[SPOOL_NAME_MAX], path[PATH_MAX];
		size_t k;

		if (segstore_unescape(f->names[i], name, sizeof(name)) < 0)
			continue;
		for (k = 0; k < sp->ndests; k++)
			if (strcmp(sp->dests[k]->name, name) == 0)
				break;
		if (k < sp->ndests) {
			if (have != NULL)
				have[k] = true;
			if (f->bad[i])
				cursor_restart(sp, sp->dests[k], "is damaged");
			else if (segstore_beyond(&sp->st, &f->pos[i]))
				cursor_restart(sp, sp->dests[k],
				    "points past the end of the spool");
			else {
				sp->dests[k]->cur = f->pos[i];
				segstore_clamp(&sp->st, &sp->dests[k]->cur);
				sp->dests[k]->saved = sp->dests[k]->cur;
			}
			continue;
		}
		/* a destination no longer configured: release its backlog */
		snprintf(path, sizeof(path), "%s/cursor.%s", sp->st.dir, f->names[i]);
		log_info("spool: destination '%s' is no longer configured; its "
		    "backlog is released", name);
		(void)unlink(path);
	}
	for (size_t k = 0; k < sp->ndests; k++) {
		/* no file to tell (out of memory, older agent): at least once */
		if ((have == NULL || !have[k]) &&
		    segstore_dests_listed(&sp->st, sp->dests[k]->name) != 0)
			cursor_restart(sp, sp->dests[k], "is missing");
		sp->dests[k]->dirty = true;
	}
	free(have);
}

/* Scan what a previous run left: segments, cursors, damage. */
int
spool_recover(struct spool *sp, const char *const *dests, size_t ndests)
{
	struct found f;
	struct spoolrec_scan sc;
	int rc = -1;

	memset(&f, 0, sizeof(f));
	if (segstore_scan_dir(&sp->st, &f.ids, &f.nids, &f.names, &f.ncur) < 0 || load_cursors(sp, &f) < 0)
		goto out;
	/* Expect the first record at the oldest cursor so damage right at
	 * the start of the oldest segment is counted exactly. */
	memset(&sc, 0, sizeof(sc));
	sc.expected = f.minseq;
	dropcounts_load(&sp->dc, sp->st.dir, false);
	sc.gap = dropcounts_gap;	/* damage counted by an earlier run */
	sc.gap_arg = &sp->dc;
	for (size_t i = 0; i < f.nids; i++)
		if (segstore_load(&sp->st, f.ids[i], i + 1 == f.nids, &sc) < 0)
			goto out;
	segstore_end_check(&sp->st, f.minseq);
	dropcounts_after_scan(&sp->dc, &sp->st, f.minseq);
	sp->st.next_id = (f.nids > 0 ? f.ids[f.nids - 1] : 0) + 1;
	if (f.maxseg >= sp->st.next_id)
		sp->st.next_id = f.maxseg + 1;
	if (sp->st.nsegs == 0 && f.maxseq > sp->st.next_seq)
		sp->st.next_seq = f.maxseq;	/* sequences are never reused */
	/* new destinations start at the end */
	if (set_dests_locked(sp, dests, ndests, true) < 0)
		goto out;
	assign_cursors(sp, &f);
	release_segments(sp);
	if (sp->st.corrupt > 0 || sp->st.torn > 0)
		log_warn("spool: %s: %" PRIu64 " damaged records skipped, %" PRIu64
		    " torn tail(s) cut", sp->st.dir, sp->st.corrupt, sp->st.torn);
	counts_load(sp);
	log_info("spool: %s: %zu segment(s), %" PRIu64 " events queued", sp->st.dir,
	    sp->st.nsegs, sp->st.nsegs ? sp->st.segs[sp->st.nsegs - 1].end_seq -
	    sp->st.segs[0].first_seq : 0);
	rc = 0;
out:
	found_free(&f);
	return rc;
}
