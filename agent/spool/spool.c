/*
 * spool: the queue proper (see spool.h): opening and closing it, its
 * destinations (their list, what each has passed: the segments released)
 * and its figures.  The rest of the queue has a room each: the write side
 * (spoolpush.c: records in, the budget kept), the read side (spoolpeek.c:
 * what a destination is handed and settles) and the housekeeper thread
 * (spoolkeeper.c: syncs, cursor files, the directory watched), all over
 * the segment store (segstore.c) and its records (spoolrec.c);
 * agent/spool/queue.c binds it to agent/spool/queue.h.
 *
 * Locking: one mutex (mu) guards everything in struct spool, the segment
 * store included; the condition variable cv wakes waiting peeks when
 * events arrive.  A housekeeping thread does the slow work away from the
 * collecting thread: the batched fsync of the segment being written,
 * writing cursor files after acknowledgements, and trying the disk again
 * after it refused a write.  Cursor files are written under curmu (never
 * while holding mu), so a reload cannot remove a destination while its
 * cursor file is being rewritten.  Lock order: curmu, then mu.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../config/config_host.h"
#include "../lib/buf.h"
#include "../lib/clock.h"
#include "../lib/fs.h"
#include "../lib/log.h"
#include "../lib/platform.h"
#include "segstore.h"
#include "spool.h"
#include "spool_int.h"

static struct dest *
dest_new(const char *name)
{
	struct dest *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if (strlen(name) >= sizeof(d->name)) {
		log_error("spool: destination name too long: %.40s...", name);
		free(d);
		return NULL;
	}
	memcpy(d->name, name, strlen(name) + 1);
	return d;
}

static void
dest_free(struct dest *d)
{
	if (d == NULL)
		return;
	free(d->peek);
	free(d->peek_seq);
	free(d->win.buf);
	free(d);
}


/* Spools opened in this process: each one's batch.src. */
static uint64_t spool_instances;

static struct spool *
spool_alloc(const char *dir, const struct spool_opts *opts)
{
	struct spool *sp;

	sp = calloc(1, sizeof(*sp));
	if (sp == NULL)
		return NULL;
	sp->o = *opts;
	spool_opts_fix(&sp->o);
	if (segstore_init(&sp->st, dir, sp->o.segment_size, sp->o.mem_max,
	    &sp->hkcv) < 0) {
		free(sp);
		return NULL;
	}
	segstore_fd_budget(&sp->st, sp->o.budget);
	pthread_mutex_init(&sp->mu, NULL);
	pthread_mutex_init(&sp->curmu, NULL);
	cond_init_mono(&sp->cv);
	cond_init_mono(&sp->hkcv);
	buf_init(&sp->rec, SPOOL_RUN_BYTES + SPOOL_REC_MAX + SPOOL_REC_HDR);
	sp->instance = __atomic_add_fetch(&spool_instances, 1, __ATOMIC_RELAXED);
	return sp;
}

struct spool *
spool_open_dir(const char *dir, const struct spool_opts *opts,
    const char *const *dests, size_t ndests)
{
	struct spool *sp = spool_alloc(dir, opts);

	if (sp == NULL)
		return NULL;
	if (segstore_attach(&sp->st) < 0) {
		/* Better events in memory than no agent at all. */
		log_error("spool: %s unusable; events are kept in memory only "
		    "(at most %llu MB, lost on restart)", dir,
		    (unsigned long long)(sp->o.mem_max / (1024 * 1024)));
		dropcounts_load(&sp->dc, dir, true);
		sp->st.nodisk = sp->st.memonly = true;
		if (set_dests_locked(sp, dests, ndests, true) < 0)
			goto err;
	} else {
		if (spool_recover(sp, dests, ndests) < 0)
			goto err;
		/* before any event: a destination without a cursor file
		 * would start at the end after a crash, skipping them */
		save_cursors(sp);
		save_dests(sp);
	}
	sp->st.last_sync_ms = sp->st.last_retry_ms = mono_ms();
	if (platform_thread_start(&sp->hk, "esxw-spool", PLATFORM_STACK_SHIPPER,
	    housekeeper, sp) != 0) {
		log_error("spool: cannot start the housekeeping thread");
		goto err;
	}
	sp->hk_started = true;
	return sp;
err:
	spool_close(sp);
	return NULL;
}

struct spool *
spool_open(const struct config *cfg, const char *const *dests, size_t ndests)
{
	struct spool_opts o;
	const char *base = config_storage_dir(cfg);
	char dir[PATH_MAX];

	if (base == NULL || *base == '\0')
		base = ".";
	/* on failure spool_open_dir() falls back to memory: never no agent */
	if (fs_mkdir_p(base, 0700) < 0)
		log_error("spool: cannot create %s: %s", base, log_errstr(errno));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/spool", base) >= sizeof(dir)) {
		log_error("spool: storage directory path too long");
		return NULL;
	}
	spool_default_opts(cfg, &o);
	return spool_open_dir(dir, &o, dests, ndests);
}

/* ---- destinations ---------------------------------------------------- */

/*
 * Replace the destination list.  Kept names keep their cursor; new names
 * start at the end (they have no history); removed ones are forgotten
 * (their cursor file removed, their backlog released).
 */
int
set_dests_locked(struct spool *sp, const char *const *names, size_t n, bool opening)
{
	struct dest **nd = NULL;
	bool *kept = NULL;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0) {
				log_error("spool: duplicate destination name '%s'", names[i]);
				return -1;
			}
	if (n > 0) {
		nd = calloc(n, sizeof(*nd));
		if (nd == NULL)
			return -1;
	}
	if (sp->ndests > 0) {
		kept = calloc(sp->ndests, sizeof(*kept));
		if (kept == NULL)
			goto err;
	}
	/* first everything that can fail, then the switch */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sp->ndests; k++)
			if (strcmp(sp->dests[k]->name, names[i]) == 0) {
				nd[i] = sp->dests[k];
				kept[k] = true;
				break;
			}
		if (nd[i] != NULL)
			continue;
		nd[i] = dest_new(names[i]);
		if (nd[i] == NULL)
			goto err;
		nd[i]->cur = segstore_end(&sp->st);
		/* nothing before the end is its: a crash before its cursor
		 * file is written makes it new again, starting at the end */
		nd[i]->saved = nd[i]->cur;
		nd[i]->dirty = true;
		if (!opening)
			log_info("spool: new destination '%s' starts with the next event",
			    names[i]);
	}
	for (size_t k = 0; k < sp->ndests; k++) {
		struct dest *d = sp->dests[k];

		if (kept[k])
			continue;
		sp->gone_budget += d->dropped_budget;
		sp->gone_poison += d->dropped_poison;
		segstore_cursor_remove(&sp->st, d->name);
		log_info("spool: destination '%s' removed; its backlog is released", d->name);
		dest_free(d);
	}
	free(kept);
	free(sp->dests);
	sp->dests = nd;
	sp->ndests = n;
	if (!opening)	/* at open, the cursors are loaded afterwards */
		release_segments(sp);
	sp->wake_gen++;
	pthread_cond_broadcast(&sp->cv);
	return 0;
err:
	for (size_t i = 0; i < n; i++) {
		bool old = false;

		for (size_t k = 0; k < sp->ndests; k++)
			if (nd[i] == sp->dests[k])
				old = true;
		if (!old)
			dest_free(nd[i]);
	}
	free(kept);
	free(nd);
	return -1;
}

int
spool_set_dests(struct spool *sp, const char *const *names, size_t n)
{
	int rc;

	pthread_mutex_lock(&sp->curmu);
	pthread_mutex_lock(&sp->mu);
	rc = set_dests_locked(sp, names, n, false);
	pthread_mutex_unlock(&sp->mu);
	/* new destinations get their cursor file now, not a moment later */
	if (rc == 0 && !sp->st.nodisk) {
		save_cursors(sp);
		save_dests(sp);
	}
	pthread_cond_signal(&sp->hkcv);
	pthread_mutex_unlock(&sp->curmu);
	return rc;
}

/* sp->mu taken and destination di, or NULL (sp->mu not held) when di is
 * past the list (a reload shortened it). */
struct dest *
lock_dest(struct spool *sp, size_t di)
{
	pthread_mutex_lock(&sp->mu);
	if (di < sp->ndests)
		return sp->dests[di];
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

/*
 * Has every destination passed segment i, as far as a restart would know?
 * A segment in memory is gone with the process anyway: the cursors in
 * memory decide.  A segment file waits for the cursor files (struct
 * dest.saved): the housekeeper writes them at most once per sync period
 * and releases what they passed (save_cursors()).
 */
static bool
seg_passed(const struct spool *sp, size_t i)
{
	const struct seg *s = &sp->st.segs[i];
	bool mem = s->mem != NULL || sp->st.nodisk;

	for (size_t k = 0; k < sp->ndests; k++)
		if (pos_cmp(mem ? &sp->dests[k]->cur : &sp->dests[k]->saved,
		    s->id, s->size) < 0)
			return false;
	return true;
}

/* Delete the oldest segments every destination has passed. */
void
release_segments(struct spool *sp)
{
	while (sp->st.nsegs > 0) {
		bool is_active = sp->st.active && sp->st.nsegs == 1;

		if (is_active || !seg_passed(sp, 0))
			break;
		segstore_release(&sp->st, 0, true);
	}
}

/* ---- figures --------------------------------------------------------- */

uint64_t
spool_backlog(struct spool *sp, size_t di)
{
	uint64_t ev = 0, by;

	pthread_mutex_lock(&sp->mu);
	if (di < sp->ndests)
		segstore_backlog(&sp->st, &sp->dests[di]->cur, &ev, &by);
	pthread_mutex_unlock(&sp->mu);
	return ev;
}

void
spool_stats(struct spool *sp, struct spool_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&sp->mu);
	if (sp->ndests == 0) {
		struct seg_pos p = segstore_start(&sp->st);

		segstore_backlog(&sp->st, &p, &st->queued_events, &st->queued_bytes);
	}
	for (size_t k = 0; k < sp->ndests; k++) {
		uint64_t ev, by;

		segstore_backlog(&sp->st, &sp->dests[k]->cur, &ev, &by);
		if (ev > st->queued_events)
			st->queued_events = ev;
		if (by > st->queued_bytes)
			st->queued_bytes = by;
		st->dropped_budget += sp->dests[k]->dropped_budget;
		st->dropped_poison += sp->dests[k]->dropped_poison;
	}
	st->dropped_budget += sp->gone_budget;
	st->dropped_poison += sp->gone_poison;
	st->pushed_events = sp->pushed;
	st->dropped_corrupt = sp->st.corrupt;
	st->torn_tails = sp->st.torn;
	st->mem_bytes = segstore_mem_bytes(&sp->st);
	st->disk_bytes = segstore_total_bytes(&sp->st) - st->mem_bytes;
	st->segments = sp->st.nsegs;
	st->memory_only = sp->st.memonly;
	st->ndests = sp->ndests;
	st->counts_since_ms = sp->dc.since_ms;
	pthread_mutex_unlock(&sp->mu);
}

int
spool_dest_stats(struct spool *sp, size_t di, struct spool_dest_stats *out)
{
	struct dest *d;

	memset(out, 0, sizeof(*out));
	d = lock_dest(sp, di);
	if (d == NULL)
		return -1;
	memcpy(out->name, d->name, sizeof(out->name));
	segstore_backlog(&sp->st, &d->cur, &out->backlog_events, &out->backlog_bytes);
	out->acked_events = d->acked;
	out->last_ack_ms = d->last_ack_ms;
	out->last_settle_ms = d->last_settle_ms;
	out->dropped_budget = d->dropped_budget;
	out->dropped_poison = d->dropped_poison;
	out->filtered = d->filtered;
	pthread_mutex_unlock(&sp->mu);
	return 0;
}

/* ---- closing --------------------------------------------------------- */

/* Memory-segment events some destination has not read yet (the most
 * behind destination's count per segment): what an exit loses. */
static uint64_t
mem_undelivered(const struct spool *sp)
{
	uint64_t n = 0;

	for (size_t i = 0; i < sp->st.nsegs; i++) {
		const struct seg *s = &sp->st.segs[i];
		uint64_t most = 0;

		if (s->mem == NULL)
			continue;
		for (size_t k = 0; k < sp->ndests; k++) {
			const struct dest *d = sp->dests[k];
			uint64_t from = d->cur.seq > s->first_seq ? d->cur.seq : s->first_seq;

			if (pos_cmp(&d->cur, s->id, s->size) < 0 && s->end_seq > from &&
			    s->end_seq - from > most)
				most = s->end_seq - from;
		}
		n += most;
	}
	return n;
}

void
spool_close(struct spool *sp)
{
	if (sp == NULL)
		return;
	if (sp->hk_started) {
		pthread_mutex_lock(&sp->mu);
		sp->closing = true;
		pthread_cond_broadcast(&sp->hkcv);
		pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
		pthread_join(sp->hk, NULL);
		pthread_mutex_lock(&sp->curmu);
		/* a directory not safe to re-create (segdir.c): nothing there */
		if (!sp->st.nodisk && !sp->st.dir_refused) {
			save_cursors(sp);
			pthread_mutex_lock(&sp->mu);
			spool_counts_snap(sp);
			pthread_mutex_unlock(&sp->mu);
			if (dropcounts_due(&sp->dc, INT64_MAX))
				(void)dropcounts_save(&sp->dc, 0, 0);
			(void)segstore_end_write(&sp->st, sp->st.next_seq);
		}
		pthread_mutex_unlock(&sp->curmu);
	}
	pthread_mutex_lock(&sp->mu);
	segstore_seal(&sp->st);
	if (sp->st.memonly && mem_undelivered(sp) > 0)
		log_error("spool: %" PRIu64 " undelivered events held in memory are lost "
		    "at exit (the disk refused them)", mem_undelivered(sp));
	segstore_fini(&sp->st);
	pthread_mutex_unlock(&sp->mu);
	for (size_t k = 0; k < sp->ndests; k++)
		dest_free(sp->dests[k]);
	free(sp->dests);
	buf_free(&sp->rec);
	pthread_cond_destroy(&sp->cv);
	pthread_cond_destroy(&sp->hkcv);
	pthread_mutex_destroy(&sp->mu);
	pthread_mutex_destroy(&sp->curmu);
	free(sp);
}
