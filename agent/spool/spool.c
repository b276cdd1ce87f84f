/*
 * spool: the queue proper (see spool.h): per-destination cursors, the
 * budget, the locks and the housekeeper, over the segment store
 * (segstore.c) and its records (spoolrec.c); agent/spool/queue.c binds it to
 * agent/spool/queue.h.
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
#include <time.h>
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

/* Records of one run end here in sp->rec (spool_push_many). */
#define SPOOL_RUN_BYTES	(64u * 1024)
#define SPOOL_RUN_MAX	64

static void	*housekeeper(void *);
static void	 save_cursors(struct spool *);
static void	 save_dests(struct spool *);

static int
pos_cmp(const struct seg_pos *a, uint64_t seg, uint64_t off)
{
	if (a->seg != seg)
		return a->seg < seg ? -1 : 1;
	if (a->off != off)
		return a->off < off ? -1 : 1;
	return 0;
}

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

/* Has every destination passed segment i? */
static bool
seg_passed(const struct spool *sp, size_t i)
{
	const struct seg *s = &sp->st.segs[i];

	for (size_t k = 0; k < sp->ndests; k++)
		if (pos_cmp(&sp->dests[k]->cur, s->id, s->size) < 0)
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

/* ---- shipping -------------------------------------------------------- */

static int
peek_reserve(struct dest *d, size_t n)
{
	if (n <= d->peek_cap)
		return 0;
	struct seg_pos *p = realloc(d->peek, n * sizeof(*p));
	if (p == NULL)
		return -1;
	d->peek = p;
	uint64_t *q = realloc(d->peek_seq, n * sizeof(*q));
	if (q == NULL)
		return -1;
	d->peek_seq = q;
	d->peek_cap = n;
	return 0;
}

/* sp->mu taken and destination di, or NULL (sp->mu not held) when di is
 * past the list (a reload shortened it). */
static struct dest *
lock_dest(struct spool *sp, size_t di)
{
	pthread_mutex_lock(&sp->mu);
	if (di < sp->ndests)
		return sp->dests[di];
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

/* Does destination d have anything left to read? */
static bool
has_data(const struct spool *sp, const struct dest *d)
{
	for (size_t i = segstore_find(&sp->st, d->cur.seg); i < sp->st.nsegs; i++) {
		const struct seg *s = &sp->st.segs[i];

		if (s->id == d->cur.seg ? s->size > d->cur.off : s->size > 0)
			return true;
	}
	return false;
}

/*
 * Reading segment i failed at *p.  Once or twice it may pass (the log says
 * so); the third time in a row at the same place, the rest of the segment
 * is unreadable: skip it and count its events lost, rather than stop this
 * destination for good.  Returns true when *p moved.
 */
#define READ_ERR_SKIP	3

static bool
read_error_skip(struct spool *sp, struct dest *d, size_t i, struct seg_pos *p)
{
	struct seg *s = &sp->st.segs[i];
	uint64_t lost;

	/* short of memory or descriptors: the data is fine, wait */
	if (d->win.err == ENOMEM || d->win.err == EMFILE ||
	    d->win.err == ENFILE)
		return false;
	if (d->rderr_n > 0 && pos_cmp(&d->rderr_at, p->seg, p->off) == 0)
		d->rderr_n++;
	else {
		d->rderr_at = *p;
		d->rderr_n = 1;
	}
	if (d->rderr_n < READ_ERR_SKIP)
		return false;
	lost = s->end_seq > p->seq ? s->end_seq - p->seq : 0;
	log_error("spool: destination '%s': segment %016" PRIx64 " cannot be "
	    "read at offset %" PRIu64 "; skipping the rest of it (%" PRIu64
	    " events lost)", d->name, s->id, p->off, lost);
	sp->st.corrupt += lost;
	d->rderr_n = 0;
	if (i + 1 < sp->st.nsegs) {
		p->seg = sp->st.segs[i + 1].id;
		p->off = 0;
		p->seq = sp->st.segs[i + 1].first_seq;
	} else {
		p->off = s->size;
		p->seq = s->end_seq;
	}
	d->cur = *p;
	d->dirty = true;
	return true;
}

/* Skip damaged bytes at p in s up to the next record; commit if none read. */
static void
skip_damaged(struct spool *sp, struct dest *d, struct seg *s,
    struct seg_pos *p, size_t nread)
{
	uint64_t next = segstore_resync(&sp->st, &d->win, s, p->off + 1);

	log_limited(LOG_WARN, "spool:damaged", 60, "spool: destination '%s': "
	    "skipped %" PRIu64 " damaged bytes in segment %016" PRIx64,
	    d->name, next - p->off, s->id);
	p->off = next;
	if (nread == 0) {
		d->cur = *p;
		d->dirty = true;
	}
}

/* Consecutive records: which ones (batch.src, shared encodings). */
static void
batch_source(const struct spool *sp, const struct dest *d, struct batch *out)
{
	size_t n = out->n;

	out->src = 0;
	out->seq0 = 0;
	if (n > 0 && d->peek_seq[n - 1] - d->peek_seq[0] == n - 1) {
		out->src = sp->instance;
		out->seq0 = d->peek_seq[0];
	}
}

/* The next records from d's cursor into out, decoded: how many. */
static size_t
read_batch(struct spool *sp, struct dest *d, size_t max_events, size_t max_bytes,
    struct batch *out)
{
	struct seg_pos p = d->cur;
	size_t bytes = 0, cap = 0, n = 0;

	d->npeek = d->peek_used = 0;
	while (n < max_events) {
		size_t i = segstore_find(&sp->st, p.seg);
		const unsigned char *payload;
		struct seg *s;
		struct event *ev = NULL;
		uint64_t seq;
		size_t plen, jlen;
		int r;

		if (i == sp->st.nsegs)
			break;
		s = &sp->st.segs[i];
		if (s->id != p.seg) {
			p.seg = s->id;
			p.off = 0;
			if (p.seq < s->first_seq)
				p.seq = s->first_seq;
		}
		if (p.off >= s->size) {
			if (i + 1 == sp->st.nsegs)
				break;
			p.seg = sp->st.segs[i + 1].id;
			p.off = 0;
			p.seq = sp->st.segs[i + 1].first_seq;
			continue;
		}
		r = segstore_rec_at(&sp->st, &d->win, s, p.off, &seq, &payload, &plen);
		if (r < 0) {
			if (n > 0 || !read_error_skip(sp, d, i, &p))
				break;
			continue;
		}
		if (r == 0) {
			skip_damaged(sp, d, s, &p, n);
			continue;
		}
		/* the record's CRC vouches for it: not validated again */
		ev = event_decode_spooled(payload, plen);
		if (ev == NULL) {
			log_limited(LOG_WARN, "spool:decode", 60, "spool: undecodable "
			    "record %" PRIu64 " skipped", seq);
			sp->st.corrupt++;
			p.off += SPOOL_REC_HDR + plen;
			p.seq = seq + 1;
			if (n == 0) {
				d->cur = p;
				d->dirty = true;
			}
			continue;
		}
		/* the batch's size in flat JSON, near enough: only escapes make
		 * JSON longer than the serialized form, and a sink splits a
		 * batch its request limit cannot take (encode_part) */
		jlen = plen;
		if (n > 0 && bytes + jlen > max_bytes) {
			event_free(ev);
			break;
		}
		if (peek_reserve(d, n + 1) < 0 ||
		    spool_batch_add(out, ev, &cap) < 0) {
			event_free(ev);
			break;
		}
		bytes += jlen;
		p.off += SPOOL_REC_HDR + plen;
		p.seq = seq + 1;
		d->peek[n] = p;
		d->peek_seq[n] = seq;
		n++;
	}
	d->npeek = n;
	batch_source(sp, d, out);
	return n;
}

int
spool_peek(struct spool *sp, size_t di, size_t max_events, size_t max_bytes,
    int wait_ms, struct batch *out)
{
	struct dest *d;
	uint64_t gen;
	size_t n;

	out->events = NULL;
	out->n = 0;
	out->src = out->seq0 = 0;
	if (max_events == 0)
		return 0;
	d = lock_dest(sp, di);
	if (d == NULL)
		return -1;
	gen = sp->wake_gen;
	if (!has_data(sp, d) && wait_ms > 0) {
		struct timespec ts;

		abstime_in_ms(&ts, wait_ms);
		while (!sp->closing && gen == sp->wake_gen && di < sp->ndests &&
		    !has_data(sp, sp->dests[di]))
			if (pthread_cond_timedwait(&sp->cv, &sp->mu, &ts) == ETIMEDOUT)
				break;
		if (di >= sp->ndests) {
			pthread_mutex_unlock(&sp->mu);
			return -1;
		}
		d = sp->dests[di];
	}
	n = read_batch(sp, d, max_events, max_bytes, out);
	pthread_mutex_unlock(&sp->mu);
	return (int)n;
}

/* How the next peeked events were settled. */
enum settled { SETTLED_ACK, SETTLED_POISON, SETTLED_FILTERED };

/* Move past the next n peeked events, counted as how says. */
static int
advance(struct spool *sp, size_t di, size_t n, enum settled how)
{
	bool poison = how == SETTLED_POISON;
	struct dest *d;
	uint64_t *count;
	size_t last;

	if (n == 0)
		return 0;
	d = lock_dest(sp, di);
	if (d == NULL)
		return -1;
	count = poison ? &d->dropped_poison : how == SETTLED_FILTERED ?
	    &d->filtered : &d->acked;
	if (d->peek_used + n > d->npeek)
		n = d->npeek - d->peek_used;
	for (size_t i = d->peek_used; i < d->peek_used + n; i++) {
		if (d->peek_seq[i] < d->cur.seq) {
			/*
			 * The budget dropped this event while it was in flight
			 * and counted it lost; it was settled after all.
			 */
			if (!poison && d->dropped_budget > 0)
				d->dropped_budget--;
			if (!poison)
				(*count)++;
			continue;
		}
		(*count)++;
	}
	d->peek_used += n;
	if (n > 0)
		d->last_settle_ms = now_ms();
	if (how == SETTLED_ACK && n > 0)
		d->last_ack_ms = d->last_settle_ms;
	if (n > 0) {
		last = d->peek_used - 1;
		if (pos_cmp(&d->cur, d->peek[last].seg, d->peek[last].off) < 0) {
			d->cur = d->peek[last];
			d->dirty = true;
		}
	}
	release_segments(sp);
	pthread_mutex_unlock(&sp->mu);
	pthread_cond_signal(&sp->hkcv);
	return 0;
}

int
spool_ack(struct spool *sp, size_t d, size_t n)
{
	return advance(sp, d, n, SETTLED_ACK);
}

int
spool_drop(struct spool *sp, size_t d, size_t n)
{
	return advance(sp, d, n, SETTLED_POISON);
}

int
spool_skip(struct spool *sp, size_t d, size_t n)
{
	return advance(sp, d, n, SETTLED_FILTERED);
}

void
spool_wakeup(struct spool *sp)
{
	pthread_mutex_lock(&sp->mu);
	sp->wake_gen++;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

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

/* ---- housekeeping ---------------------------------------------------- */

/* Write the cursor files that are behind.  Called with curmu held, not mu. */
static void
save_cursors(struct spool *sp)
{
	for (;;) {
		char name[SPOOL_NAME_MAX];
		struct seg_pos p;
		bool found = false;

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
		if (segstore_cursor_write(&sp->st, name, &p) < 0) {
			/* keep it dirty; try again a little later, not at once:
			 * a full disk must not become a busy loop */
			pthread_mutex_lock(&sp->mu);
			for (size_t k = 0; k < sp->ndests; k++)
				if (strcmp(sp->dests[k]->name, name) == 0)
					sp->dests[k]->dirty = true;
			sp->cursor_next_ms = mono_ms() + sp->o.sync_ms;
			pthread_mutex_unlock(&sp->mu);
			return;
		}
	}
}

/* The destinations file, after their cursor files.  With curmu held. */
static void
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

static void *
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
