/*
 * spoolkeeper: the spool's housekeeping thread (see spool.c, "Locking"):
 * the batched fsync of the segment being written, the cursor files and
 * the destinations file (at most one round a sync period), the counts
 * kept across restarts, the directory checked for deletion, and the disk
 * tried again after it refused writes.  A room of its own: the slow
 * work, done away from the threads that push and peek.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/clock.h"
#include "segstore.h"
#include "spool.h"
#include "spool_int.h"

/* d's cursor file now says p (mu held): the segment files it passed go. */
static void
cursor_saved(struct spool *sp, const char *name, const struct seg_pos *p)
{
	for (size_t k = 0; k < sp->ndests; k++)
		if (strcmp(sp->dests[k]->name, name) == 0 &&
		    pos_cmp(p, sp->dests[k]->saved.seg, sp->dests[k]->saved.off) > 0)
			sp->dests[k]->saved = *p;
	release_segments(sp);
}

/* Write the cursor files that are behind.  Called with curmu held, not mu. */
void
save_cursors(struct spool *sp)
{
	for (;;) {
		char name[SPOOL_NAME_MAX];
		struct seg_pos p;
		bool found = false;
		int rc;

		pthread_mutex_lock(&sp->mu);
		for (size_t k = 0; k < sp->ndests; k++) {
			if (!sp->dests[k]->dirty)
				continue;
			sp->dests[k]->dirty = false;
			memcpy(name, sp->dests[k]->name, sizeof(name));
			p = sp->dests[k]->cur;
			found = true;
			break;
		}
		pthread_mutex_unlock(&sp->mu);
		if (!found)
			return;
		rc = segstore_cursor_write(&sp->st, name, &p);
		pthread_mutex_lock(&sp->mu);
		if (rc == 0) {
			cursor_saved(sp, name, &p);
			pthread_mutex_unlock(&sp->mu);
			continue;
		}
		/* keep it dirty; try again a little later, not at once: a full
		 * disk must not become a busy loop */
		for (size_t k = 0; k < sp->ndests; k++)
			if (strcmp(sp->dests[k]->name, name) == 0)
				sp->dests[k]->dirty = true;
		sp->cursor_next_ms = mono_ms() + sp->o.sync_ms;
		pthread_mutex_unlock(&sp->mu);
		return;
	}
}

/* The destinations file, after their cursor files.  With curmu held. */
void
save_dests(struct spool *sp)
{
	const char **names;
	size_t n;

	pthread_mutex_lock(&sp->mu);
	n = sp->ndests;
	names = calloc(n > 0 ? n : 1, sizeof(*names));
	for (size_t k = 0; names != NULL && k < n; k++)
		names[k] = sp->dests[k]->name;	/* stable: curmu keeps them */
	pthread_mutex_unlock(&sp->mu);
	if (names == NULL)
		return;
	(void)segstore_dests_write(&sp->st, names, n);
	free(names);
}

/*
 * The spool directory deleted under us (segstore_check_dir): every cursor
 * is clamped to what is left and written again.  With curmu and mu held.
 */
static void
check_dir(struct spool *sp)
{
	uint64_t from = sp->st.next_seq, corrupt0 = sp->st.corrupt;

	sp->dircheck_ms = mono_ms();
	for (size_t k = 0; k < sp->ndests; k++)
		if (sp->dests[k]->cur.seq < from)
			from = sp->dests[k]->cur.seq;
	if (segstore_check_dir(&sp->st, from, dropcounts_gap, &sp->dc) == 0)
		return;
	dropcounts_force(&sp->dc);
	for (size_t k = 0; k < sp->ndests; k++) {
		segstore_clamp(&sp->st, &sp->dests[k]->cur);
		sp->dests[k]->dirty = true;
		/* segments were lost (counted): an acknowledgement of a batch in
		 * flight settles nothing (not another reason's count; what was
		 * not lost is read again) */
		if (sp->st.corrupt > corrupt0)
			sp->dests[k]->npeek = sp->dests[k]->peek_used;
	}
	pthread_mutex_unlock(&sp->mu);
	save_dests(sp);
	pthread_mutex_lock(&sp->mu);
}

/* Nothing unsynced, no cursor to write, nothing unread: the housekeeper
 * sleeps SPOOL_IDLE_MS (a push wakes it).  With mu held. */
static bool
hk_is_idle(const struct spool *sp)
{
	const struct seg *l = sp->st.nsegs > 0 ? &sp->st.segs[sp->st.nsegs - 1] : NULL;

	if (sp->st.memonly || sp->sync_wanted || dropcounts_pending(&sp->dc) ||
	    (sp->st.active && l != NULL && l->mem == NULL && l->synced < l->size))
		return false;
	for (size_t k = 0; k < sp->ndests; k++)
		if (sp->dests[k]->dirty || has_data(sp, sp->dests[k]))
			return false;
	return true;
}

/* A cursor file to write, now or once cursor_next_ms comes.  With mu
 * held. */
static bool
cursors_dirty(const struct spool *sp)
{
	if (sp->st.nodisk || sp->st.dir_refused)
		return false;
	for (size_t k = 0; k < sp->ndests; k++)
		if (sp->dests[k]->dirty)
			return true;
	return false;
}

void *
housekeeper(void *arg)
{
	struct spool *sp = arg;

	pthread_mutex_lock(&sp->curmu);
	pthread_mutex_lock(&sp->mu);
	while (!sp->closing) {
		struct timespec ts;
		int64_t now = mono_ms(), period;
		bool dirty, cursors;

		spool_counts_snap(sp);
		sp->hk_idle = hk_is_idle(sp);
		period = sp->hk_idle ? SPOOL_IDLE_MS : sp->o.sync_ms;

		dirty = cursors_dirty(sp);
		cursors = dirty && now >= sp->cursor_next_ms;
		if (!sp->st.nodisk && now - sp->dircheck_ms >= period) {
			check_dir(sp);
			continue;
		}
		if (!sp->st.dir_refused && dropcounts_due(&sp->dc, now)) {
			/* before the cursors: a count is on disk before its event
			 * is passed */
			pthread_mutex_unlock(&sp->mu);
			(void)dropcounts_save(&sp->dc, now, sp->o.sync_ms);
			pthread_mutex_lock(&sp->mu);
			continue;
		}
		if (cursors) {
			/* at most one round of cursor files per sync period while
			 * batches keep being acknowledged: a crash in between sends
			 * that period's events again (at-least-once), and a busy
			 * destination costs one rename + fsync a second, not one
			 * per batch */
			sp->cursor_next_ms = now + sp->o.sync_ms;
			pthread_mutex_unlock(&sp->mu);
			save_cursors(sp);
			pthread_mutex_lock(&sp->mu);
			continue;
		}
		if (sp->st.active && sp->st.segs[sp->st.nsegs - 1].mem == NULL &&
		    sp->st.segs[sp->st.nsegs - 1].synced < sp->st.segs[sp->st.nsegs - 1].size &&
		    (sp->sync_wanted || now - sp->st.last_sync_ms >= sp->o.sync_ms)) {
			sp->sync_wanted = false;
			(void)segstore_sync_active(&sp->st, &sp->mu);
			continue;
		}
		if (sp->st.memonly && !sp->st.nodisk && now - sp->st.last_retry_ms >= sp->o.retry_ms) {
			segstore_try_disk(&sp->st);
			continue;
		}
		/* nothing due: sleep until the next deadline or a signal */
		if (sp->st.memonly && sp->o.retry_ms < period)
			period = sp->o.retry_ms;
		if (dirty && sp->cursor_next_ms - now < period)
			period = sp->cursor_next_ms - now;
		pthread_mutex_unlock(&sp->curmu);
		abstime_in_ms(&ts, period);
		(void)pthread_cond_timedwait(&sp->hkcv, &sp->mu, &ts);
		pthread_mutex_unlock(&sp->mu);
		pthread_mutex_lock(&sp->curmu);
		pthread_mutex_lock(&sp->mu);
	}
	pthread_mutex_unlock(&sp->mu);
	pthread_mutex_unlock(&sp->curmu);
	return NULL;
}
