/*
 * spoolpeek: the read side of the queue (see spool.h): a destination is
 * handed the next records from its cursor, decoded (spool_peek), skipping
 * damaged bytes and, after repeated read errors, an unreadable rest of a
 * segment; then settles them (acknowledged, dropped as poison, filtered)
 * and its cursor moves on.  A room of its own: everything a shipper asks
 * of the queue, apart from how events got there (spoolpush.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../lib/clock.h"
#include "../lib/log.h"
#include "segstore.h"
#include "spool.h"
#include "spool_int.h"

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

/* Does destination d have anything left to read? */
bool
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
