/*
 * spoolpush: the write side of the queue (see spool.h, spool_push_many):
 * events serialized into records and appended in runs, one write per
 * segment they land in; the sync cadence; and the budgets, which drop
 * the oldest segment (counted per destination) when the disk or memory
 * bound is passed.  A room of its own: the only place events enter, and
 * the only place the spool decides to lose some.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../lib/buf.h"
#include "../lib/log.h"
#include "segstore.h"
#include "spool.h"
#include "spool_int.h"

/*
 * Drop segment i (over budget): count what each destination had not read
 * yet, move the cursors that were in it to the next segment.
 */
static void
drop_segment(struct spool *sp, size_t i, const char *why)
{
	struct seg *s = &sp->st.segs[i];
	struct seg *next = &sp->st.segs[i + 1];
	uint64_t lost_max = 0;

	for (size_t k = 0; k < sp->ndests; k++) {
		struct dest *d = sp->dests[k];
		uint64_t from;

		if (pos_cmp(&d->cur, s->id, s->size) >= 0)
			continue;
		from = d->cur.seq > s->first_seq ? d->cur.seq : s->first_seq;
		if (s->end_seq > from) {
			d->dropped_budget += s->end_seq - from;
			if (s->end_seq - from > lost_max)
				lost_max = s->end_seq - from;
		}
		if (d->cur.seg >= s->id) {
			d->cur.seg = next->id;
			d->cur.off = 0;
			d->cur.seq = next->first_seq;
			d->dirty = true;
		}
	}
	if (lost_max > 0)
		log_limited(LOG_ERROR, "spool:budget", 60, "spool: %s; dropped the "
		    "oldest %" PRIu64 " undelivered events", why, lost_max);
	if (i > 0)
		segstore_gap_note(&sp->st, s->first_seq, s->end_seq);
	segstore_release(&sp->st, i, true);
}


/* ev as one sealed record (sequence seq) at the end of sp->rec: 0, or -1
 * with sp->rec as it was. */
static int
rec_add(struct spool *sp, const struct event *ev, uint64_t seq)
{
	static const char zero[SPOOL_REC_HDR];
	size_t at = sp->rec.len;

	if (buf_append(&sp->rec, zero, SPOOL_REC_HDR) < 0 ||
	    event_serialize(ev, &sp->rec) < 0 ||
	    sp->rec.len - at > SPOOL_REC_MAX + SPOOL_REC_HDR) {
		sp->rec.len = at;
		log_limited(LOG_ERROR, "spool:serialize", 60,
		    "spool: cannot serialize an event (too large?)");
		return -1;
	}
	spoolrec_seal((unsigned char *)sp->rec.data + at, sp->rec.len - at - SPOOL_REC_HDR,
	    seq);
	return 0;
}

/* After each append, as before any next one: the budgets. */
static void
keep_budget(struct spool *sp)
{
	while (sp->st.nsegs > 1 && segstore_total_bytes(&sp->st) > sp->o.budget)
		drop_segment(sp, 0, "storage.max_disk_buffer is full");
	/* Memory is bounded on its own; what is on disk stays. */
	while (sp->st.memonly && segstore_mem_bytes(&sp->st) > sp->o.mem_max) {
		size_t i = segstore_oldest_mem(&sp->st);

		if (i == sp->st.nsegs)
			break;
		drop_segment(sp, i, "the in-memory buffer is full (the disk refuses writes)");
	}
}

/* After records were appended: the sync cadence, wakeups (once a run). */
static void
pushed(struct spool *sp)
{
	if (!sp->st.memonly && sp->st.active) {
		struct seg *s = &sp->st.segs[sp->st.nsegs - 1];

		if (s->size - s->synced >= sp->o.sync_bytes) {
			sp->sync_wanted = true;
			pthread_cond_signal(&sp->hkcv);
		}
	}
	if (sp->hk_idle)	/* asleep for SPOOL_IDLE_MS: its sync is due */
		pthread_cond_signal(&sp->hkcv);
	pthread_cond_broadcast(&sp->cv);
}

/*
 * One run: up to SPOOL_RUN_MAX events serialized into sp->rec and written
 * with segstore_append_run() (one write per segment they land in), record
 * by record where it cannot (a new segment, memory, a refused write).  *bad: an event could
 * not be serialized (it ends the run).  Returns how many were appended.
 */
static size_t
push_run(struct spool *sp, const struct event *const *evs, size_t n, bool *bad)
{
	size_t ends[SPOOL_RUN_MAX], m = 0, i, from = 0;
	uint64_t seq = sp->st.next_seq;
	const unsigned char *data;

	buf_reset(&sp->rec);
	*bad = false;
	while (m < n && m < SPOOL_RUN_MAX && sp->rec.len < SPOOL_RUN_BYTES) {
		if (rec_add(sp, evs[m], seq + m) < 0) {
			*bad = true;
			break;
		}
		ends[m++] = sp->rec.len;
	}
	if (m == 0)
		return 0;
	data = (const unsigned char *)sp->rec.data;
	for (i = 0; i < m; from = ends[i - 1]) {
		size_t k = segstore_append_run(&sp->st, data + from, ends + i, m - i,
		    from, seq + i);

		if (k == 0) {	/* this one alone: a new segment, memory, ... */
			if (segstore_append(&sp->st, data + from, ends[i] - from,
			    seq + i) < 0) {
				log_limited(LOG_ERROR, "spool:push", 60,
				    "spool: out of memory, event lost");
				*bad = true;
				break;
			}
			k = 1;
		}
		i += k;
		keep_budget(sp);
	}
	sp->st.next_seq += i;
	sp->pushed += i;
	return i;
}

/*
 * The events in order, each as its own record exactly as spool_push()
 * writes it, in as few writes as the segments allow: every record counted
 * here is in the kernel's page cache (or, memory-only, in the spool) when
 * this returns.  Returns how many, from the first, were queued.
 */
size_t
spool_push_many(struct spool *sp, const struct event *const *evs, size_t n)
{
	size_t done = 0, k;
	bool bad = false;

	pthread_mutex_lock(&sp->mu);
	if (sp->ndests == 0) {
		/* nowhere to go: nothing to keep (as the in-memory queue) */
		pthread_mutex_unlock(&sp->mu);
		return n;
	}
	while (done < n && !bad) {
		k = push_run(sp, evs + done, n - done, &bad);
		done += k;
		if (k == 0)
			break;
	}
	if (done > 0)
		pushed(sp);
	pthread_mutex_unlock(&sp->mu);
	return done;
}

int
spool_push(struct spool *sp, const struct event *ev)
{
	return spool_push_many(sp, &ev, 1) == 1 ? 0 : -1;
}

int
spool_sync(struct spool *sp)
{
	int rc;

	pthread_mutex_lock(&sp->mu);
	rc = segstore_sync_active(&sp->st, &sp->mu);
	if (sp->st.memonly)
		rc = -1;	/* those events are not safe: say so */
	pthread_mutex_unlock(&sp->mu);
	return rc;
}
