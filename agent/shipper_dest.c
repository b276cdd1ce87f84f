/*
 * shipper_dest: one destination's thread (see shipper.h): the next batch
 * from its cursor (let fill for flush_interval, cut alike for every
 * destination), its filter, the sink opened and sent to, what was
 * delivered settled in the queue, and a failure's wait (backoff or the
 * server's Retry-After) before the same batch again.  A room of its own:
 * it is the loop every event goes through, apart from how the shipper
 * starts and stops (shipper.c) and how a rejection is narrowed down
 * (shipper_poison.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../output/sink.h"
#include "lib/bell.h"
#include "lib/clock.h"
#include "config/dfilter.h"
#include "lib/log.h"
#include "shipper.h"
#include "shipper_int.h"

/*
 * The retry delay (docs/outputs.md): full jitter over base * 2^n, n the
 * failures in a row, capped at BACKOFF_CAP_MS.  A failure to connect at
 * all (refused: nothing listens, SINK_ERR_CONNECT) is capped at
 * BACKOFF_REFUSED_CAP_MS instead, probing it costs the receiver nothing,
 * and its wait is drawn from the upper half of [0, cap]: a fleet that
 * waits for the same receiver to return then arrives spread over the
 * interval (full jitter would bunch a third of it into the first sixth).
 * After a failure the next attempt is a probe (one event); full batches
 * follow its success.
 */
#define BACKOFF_BASE_MS		1000
#define BACKOFF_CAP_MS		(5 * 60 * 1000)
#define BACKOFF_REFUSED_CAP_MS	10000
#define IDLE_WAIT_MS		30000	/* see next_batch() */

/* Sleep until ms from now, or until the shipper stops waiting. */
static void
nap(struct shipper *sh, int64_t ms, bool until_stop_only)
{
	struct timespec until;
	int64_t end = mono_ms() + ms;

	pthread_mutex_lock(&sh->mtx);
	while (mono_ms() < end) {
		int64_t left;

		if (sh->stopping && !until_stop_only)
			break;
		if (sh->deadline_ms && mono_ms() >= sh->deadline_ms)
			break;
		left = end - mono_ms();
		if (sh->deadline_ms && sh->deadline_ms - mono_ms() < left)
			left = sh->deadline_ms - mono_ms();
		abstime_in_ms(&until, left);
		pthread_cond_timedwait(&sh->cond, &sh->mtx, &until);
	}
	pthread_mutex_unlock(&sh->mtx);
}

bool
ship_giving_up(struct shipper *sh)
{
	bool r;

	pthread_mutex_lock(&sh->mtx);
	r = sh->deadline_ms && mono_ms() >= sh->deadline_ms;
	pthread_mutex_unlock(&sh->mtx);
	return r;
}

static bool
is_stopping(struct shipper *sh)
{
	bool r;

	pthread_mutex_lock(&sh->mtx);
	r = sh->stopping;
	pthread_mutex_unlock(&sh->mtx);
	return r;
}

/*
 * Enter a call into the sink (open or send): refused once the stop's
 * deadline passed, so that a thread the stop does not abandon never
 * starts a send that could hang it.
 */
static bool
enter_sink(struct dest *d)
{
	struct shipper *sh = d->sh;
	bool ok;

	pthread_mutex_lock(&sh->mtx);
	ok = !(sh->deadline_ms && mono_ms() >= sh->deadline_ms);
	d->in_send = ok;
	pthread_mutex_unlock(&sh->mtx);
	return ok;
}

/* Leave the sink; false if the stop abandoned this thread meanwhile: it
 * must then touch neither the queue nor the sink again. */
static bool
leave_sink(struct dest *d)
{
	struct shipper *sh = d->sh;
	bool ok;

	pthread_mutex_lock(&sh->mtx);
	d->in_send = false;
	ok = !d->abandoned;
	pthread_mutex_unlock(&sh->mtx);
	return ok;
}

static void
note_failure(struct dest *d, const char *why)
{
	struct shipper *sh = d->sh;

	pthread_mutex_lock(&sh->mtx);
	d->st.failed_sends++;
	d->st.rejected_in_row = d->rejects;
	d->st.last_error_ms = now_ms();
	snprintf(d->st.last_error, sizeof(d->st.last_error), "%s", why);
	if (!d->st.failing)
		log_warn("destination %s (%s): delivery failing: %s", d->st.name,
		    d->st.proto, why);
	d->st.failing = true;
	pthread_mutex_unlock(&sh->mtx);
	bell_ring(sh->changed);
}

/* What the sink counted during the send becomes the destination's figure. */
static void
fold_not_ingested(struct dest *d)
{
	uint64_t n = __atomic_exchange_n(&d->ctx.not_ingested, 0, __ATOMIC_RELAXED);
	uint64_t resent = __atomic_exchange_n(&d->ctx.resent, 0, __ATOMIC_RELAXED);

	if (n == 0 && resent == 0)
		return;
	pthread_mutex_lock(&d->sh->mtx);
	d->st.not_ingested += n;
	d->st.resent_events += resent;
	pthread_mutex_unlock(&d->sh->mtx);
}

static void
note_success(struct dest *d, size_t n)
{
	struct shipper *sh = d->sh;

	pthread_mutex_lock(&sh->mtx);
	d->st.sent_events += n;
	d->st.rejected_in_row = d->rejects;
	d->st.last_success_ms = now_ms();
	if (d->st.failing)
		log_info("destination %s (%s): delivering again", d->st.name, d->st.proto);
	d->st.failing = false;
	pthread_mutex_unlock(&sh->mtx);
	bell_ring(sh->changed);
}

/*
 * The destination's filter over a peeked batch: *kept gets the events it
 * takes, in order (without a filter: all of them, the batch's own array),
 * d->fmark[i] marks the ones it keeps out.  -1: out of memory.
 */
static int
filter_batch(struct dest *d, const struct batch *b, struct event ***kept,
    size_t *nkept)
{
	*kept = b->events;
	*nkept = b->n;
	if (d->filter == NULL)
		return 0;
	if (b->n > d->fcap) {
		unsigned char *m = realloc(d->fmark, b->n);
		struct event **k;

		*nkept = 0;
		if (m == NULL)
			return -1;
		d->fmark = m;
		k = realloc(d->kept, b->n * sizeof(*k));
		if (k == NULL)
			return -1;
		d->kept = k;
		d->fcap = b->n;
	}
	*nkept = 0;
	for (size_t i = 0; i < b->n; i++) {
		d->fmark[i] = !dfilter_keeps(d->filter, b->events[i]);
		if (!d->fmark[i])
			d->kept[(*nkept)++] = b->events[i];
	}
	*kept = d->kept;
	return 0;
}

static bool
filtered_out(const struct dest *d, size_t i)
{
	return d->filter != NULL && d->fmark[i];
}

/*
 * Of the n peeked events, settle what can be: the first done events the
 * destination takes (delivered runs acknowledged, poison ones dropped:
 * the queue counts them) and every event its filter keeps out before the
 * first one not done (skipped: settled, counted as filtered).  Returns
 * how many were delivered.
 */
static size_t
settle(struct dest *d, size_t n, size_t done)
{
	struct shipper *sh = d->sh;
	size_t i = 0, k = 0, delivered = 0;

	while (i < n) {
		size_t run = 0;

		if (filtered_out(d, i)) {
			while (i + run < n && filtered_out(d, i + run))
				run++;
			queue_skip(sh->q, d->index, run);
			i += run;
			continue;
		}
		if (k == done)
			break;
		if (d->poison[k]) {
			queue_drop(sh->q, d->index, 1);
			i++;
			k++;
			continue;
		}
		while (i + run < n && k + run < done && !filtered_out(d, i + run) &&
		    !d->poison[k + run])
			run++;
		queue_ack(sh->q, d->index, run);
		delivered += run;
		i += run;
		k += run;
	}
	return delivered;
}

static void	retry_later(struct dest *, int retry_after);

/* After a send of n peeked events, done of them delivered or dropped:
 * settle them and count the outcome; a failure waits for its retry. */
static void
after_send(struct dest *d, size_t n, size_t done, enum send_result r,
    int retry_after)
{
	size_t delivered = settle(d, n, done);

	if (done > 0)
		note_success(d, delivered);
	if (r == SEND_OK)
		d->attempt = 0;
	else
		retry_later(d, retry_after);
}

/*
 * A server's Retry-After is honoured up to the backoff cap: a proxy or a
 * broken server asking for a day must not park a destination (and its
 * backlog) for a day.
 */
int
shipper_retry_after_ms(int retry_after_s)
{
	if (retry_after_s <= 0)
		return 0;
	if (retry_after_s > BACKOFF_CAP_MS / 1000)
		return BACKOFF_CAP_MS;
	return retry_after_s * 1000;
}

static int
backoff_ms(struct dest *d, int retry_after_s)
{
	int64_t cap = BACKOFF_BASE_MS;
	int64_t limit = d->refused ? BACKOFF_REFUSED_CAP_MS : BACKOFF_CAP_MS;
	unsigned i;

	if (retry_after_s > 0)
		return shipper_retry_after_ms(retry_after_s);
	for (i = 0; i < d->attempt && cap < limit; i++)
		cap *= 2;
	if (cap > limit)
		cap = limit;
	/* Test knob for bench/fleet.py only: ESXWATCH_FIXED_BACKOFF=1 drops
	 * the jitter (every agent retries at base * 2^n), the worst case the
	 * jitter is measured against.  Never set it in production. */
	if (getenv("ESXWATCH_FIXED_BACKOFF") != NULL &&
	    strcmp(getenv("ESXWATCH_FIXED_BACKOFF"), "1") == 0)
		return (int)cap;
	if (d->refused)
		return (int)(cap / 2 + rand_r(&d->seed) % (unsigned)(cap - cap / 2));
	/* Full jitter, but never a busy loop. */
	return 100 + (int)(rand_r(&d->seed) % (unsigned)cap);
}

enum step { STEP_SEND, STEP_AGAIN, STEP_END, STEP_ABANDONED };

/*
 * With several destinations, a full batch ends at the next multiple of
 * max_events of the queue's record numbers (batch.src): destinations that
 * read the same records at different moments (one cut short by its flush
 * wait, another not) cut them alike from there on, so that a sink may
 * encode each batch once for all of them (cfapi, sink.group_new).  The
 * events past the cut are the next batch.  A batch cut short by max_bytes
 * is left alone: from the same record every destination cuts it alike
 * anyway, and cutting it again would only add requests.
 */
static void
align_batch(struct dest *d, size_t max_events, struct batch *b)
{
	size_t room;

	if (d->sh->ndests < 2 || max_events < 2 || b->n < max_events ||
	    b->src == 0)
		return;
	room = max_events - (size_t)(b->seq0 % max_events);
	if (b->n <= room)
		return;
	for (size_t i = room; i < b->n; i++)
		event_free(b->events[i]);
	b->n = room;
}

/* The next batch to send from d's cursor into *b. */
static enum step
next_batch(struct dest *d, size_t max_bytes, struct batch *b)
{
	struct shipper *sh = d->sh;
	const struct config *cfg = sh->cfg;
	int flush_ms = cfg->batch_flush_interval * 1000;
	/* after a failure, a probe: one event, then full batches again */
	size_t max_events = d->attempt > 0 ? 1 : (size_t)cfg->batch_max_events;

	/* An idle destination sleeps until an event is pushed or the stop
	 * wakes the queue (shipper_drain): the long wait is only a floor
	 * for its wakeups, not a poll. */
	if (queue_peek(sh->q, d->index, max_events, max_bytes,
	    is_stopping(sh) ? 0 : IDLE_WAIT_MS, b) == -1)
		return STEP_END;
	if (b->n == 0) {
		if (is_stopping(sh))
			return STEP_END;
		/* Events waiting but none handed out: the queue could
		 * not read them (out of memory, an I/O error).  Try
		 * again a little later, not in a busy loop. */
		if (queue_backlog(sh->q, d->index) > 0)
			nap(sh, 200, false);
		return STEP_AGAIN;
	}
	/* Let a small batch fill up for flush_interval, unless more
	 * events are already waiting (a batch cut by max_bytes: a
	 * backlog of large events must not drain one batch a second). */
	if (b->n < max_events && !is_stopping(sh) && flush_ms > 0 &&
	    queue_backlog(sh->q, d->index) <= b->n) {
		batch_free_events(b);
		nap(sh, flush_ms, false);
		if (queue_peek(sh->q, d->index, max_events, max_bytes, 0, b) == -1)
			return STEP_END;
		if (b->n == 0)
			return STEP_AGAIN;
	}
	align_batch(d, max_events, b);
	return STEP_SEND;
}

/* Inside the sink (enter_sink() done): open it if it is not yet.  Frees
 * *b unless the answer is STEP_SEND (then still inside the sink). */
static enum step
open_sink(struct dest *d, struct batch *b)
{
	int o;

	if (d->opened)
		return STEP_SEND;
	o = d->sink->open(&d->ctx);
	if (o == 0)
		d->opened = true;
	if (!leave_sink(d)) {
		batch_free_events(b);
		return STEP_ABANDONED;
	}
	if (o != 0) {
		note_failure(d, d->ctx.error[0] ? d->ctx.error : "cannot open");
		batch_free_events(b);
		d->attempt++;
		nap(d->sh, backoff_ms(d, 0), true);
		return STEP_AGAIN;
	}
	if (!enter_sink(d)) {
		batch_free_events(b);
		return STEP_END;
	}
	return STEP_SEND;
}

static void
retry_later(struct dest *d, int retry_after)
{
	int ms;

	note_failure(d, d->ctx.error[0] ? d->ctx.error : "send failed");
	d->refused = strncmp(d->ctx.error, SINK_ERR_CONNECT,
	    sizeof(SINK_ERR_CONNECT) - 1) == 0;
	ms = backoff_ms(d, retry_after);
	log_debug("destination %s: retrying in %d ms", d->st.name, ms);
	d->attempt++;
	nap(d->sh, ms, true);
}

void *
ship_dest_thread(void *arg)
{
	struct dest *d = arg;
	struct shipper *sh = d->sh;
	size_t max_bytes = (size_t)sh->cfg->batch_max_bytes;

	if (d->sink->encoded_pct > 100)
		max_bytes = max_bytes / d->sink->encoded_pct * 100;

	for (;;) {
		struct batch b;
		struct event **kept;
		size_t done = 0, nkept, n;
		int retry_after = 0;
		enum send_result r;
		enum step st;

		if (ship_giving_up(sh))
			break;
		st = next_batch(d, max_bytes, &b);
		if (st == STEP_END)
			break;
		if (st == STEP_AGAIN)
			continue;
		if (filter_batch(d, &b, &kept, &nkept) == 0 && nkept == 0) {
			/* nothing for this destination: settled, no send */
			settle(d, b.n, 0);
			batch_free_events(&b);
			continue;
		}
		/* a filtered batch is not the queue's run of records */
		d->src = kept == b.events ? b.src : 0;
		d->seq0 = b.seq0;
		if (nkept == 0 || ship_poison_reset(d, kept, nkept) < 0) {
			batch_free_events(&b);	/* out of memory */
			nap(sh, 200, false);
			continue;
		}
		if (!enter_sink(d)) {
			batch_free_events(&b);
			break;
		}
		st = open_sink(d, &b);
		if (st == STEP_ABANDONED)
			return ship_abandoned_exit(d);
		if (st == STEP_END)
			break;
		if (st == STEP_AGAIN)
			continue;
		r = ship_deliver(d, kept, nkept, &done, &retry_after);
		if (!leave_sink(d)) {
			batch_free_events(&b);
			return ship_abandoned_exit(d);
		}
		fold_not_ingested(d);
		ship_ahead_consume(d, done);
		n = b.n;
		batch_free_events(&b);
		after_send(d, n, done, r, retry_after);
	}
	pthread_mutex_lock(&sh->mtx);
	d->exited = true;
	pthread_cond_broadcast(&sh->cond);
	pthread_mutex_unlock(&sh->mtx);
	return NULL;
}
