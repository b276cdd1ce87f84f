/*
 * shipper: per-destination delivery threads (see shipper.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../output/sink.h"
#include "lib/bell.h"
#include "lib/clock.h"
#include "config/dfilter.h"
#include "lib/log.h"
#include "lib/platform.h"
#include "shipper.h"

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
/*
 * A send still in flight this long after the stop's deadline (a server
 * that accepted the connection and never answers: the sink's own timeout
 * is 30 s) is abandoned: its thread is detached and never touches the
 * queue again, so neither SIGTERM nor a reload waits for it.
 */
#define ABANDON_GRACE_MS	500
#define IDLE_WAIT_MS		30000	/* see next_batch() */

struct dest {
	struct shipper		*sh;
	size_t			 index;
	const struct sink	*sink;
	struct dest_conf	 conf;		/* primary may be rewritten to file */
	struct sink_ctx		 ctx;
	bool			 opened;
	pthread_t		 thread;
	bool			 started;
	bool			 exited;	/* under sh->mtx */
	bool			 in_send;	/* under sh->mtx: in open() or send() */
	bool			 abandoned;	/* under sh->mtx: left behind by the stop */
	unsigned		 attempt;	/* consecutive failures */
	unsigned int		 seed;
	bool			 refused;	/* the last failure: no connection at all */
	bool			 rejected;	/* dropped a poison event (this run) */
	uint64_t		 rejects;	/* events rejected alone in a row
						 * (the thread's; st has a copy) */
	struct event		**batch0;	/* the batch in flight */
	size_t			 batch_n;	/* its length */
	uint64_t		 src, seq0;	/* its records (batch.src), 0: unknown */
	unsigned char		*poison;	/* per event of it: rejected alone */
	size_t			 poison_cap;
	struct dfilter		*filter;	/* NULL: every event goes */
	unsigned char		*fmark;		/* per peeked event: filtered out */
	struct event		**kept;		/* the peeked events it takes */
	size_t			 fcap;
	struct shipper_dest_stats st;		/* under sh->mtx */
};

struct shipper {
	const struct config	*cfg;
	struct queue		*q;
	pthread_mutex_t		 mtx;
	pthread_cond_t		 cond;
	bool			 stopping;	/* no more waiting for batches to fill */
	int64_t			 deadline_ms;	/* give up at this time (0 = never) */
	struct dest		*dests;
	size_t			 ndests;
	/* the sinks' states common to their destinations (sink.group_new) */
	struct sink_group {
		const struct sink	*sink;
		void			*state;
	}			*groups;
	size_t			 ngroups;
	struct shipper_totals	*totals;
	struct bell		*changed;	/* deps->changed */
	/* left behind by its stop (under mtx): abandoned threads still in a
	 * send; once orphaned, the last of them frees the shipper */
	size_t			 live_abandoned;
	bool			 orphaned;
	void			(*release)(void *);
	void			*release_arg;
};

/* Threads left behind in a send, over every shipper (for the exit). */
static size_t abandoned_threads;

/*
 * The counters since start, by destination name: a reload replaces the
 * shipper, not the figures (docs/operations.md "since start").
 */
struct shipper_totals {
	pthread_mutex_t			 mtx;
	struct shipper_dest_stats	*v;
	size_t				 n;
};

struct shipper_totals *
shipper_totals_new(void)
{
	struct shipper_totals *t = calloc(1, sizeof(*t));

	if (t != NULL)
		pthread_mutex_init(&t->mtx, NULL);
	return t;
}

void
shipper_totals_free(struct shipper_totals *t)
{
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->mtx);
	free(t->v);
	free(t);
}

/* A new shipper's destination continues the figures of its name. */
static void
totals_load(struct shipper_totals *t, struct shipper_dest_stats *st)
{
	if (t == NULL)
		return;
	pthread_mutex_lock(&t->mtx);
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, st->name) == 0) {
			char proto[sizeof(st->proto)];

			/* the counters carry on; what the new configuration
			 * says (protocol, no destination) is its own */
			memcpy(proto, st->proto, sizeof(proto));
			*st = t->v[i];
			memcpy(st->proto, proto, sizeof(proto));
			st->no_destination[0] = '\0';
			break;
		}
	pthread_mutex_unlock(&t->mtx);
}

/* A stopping shipper leaves its figures for the next one. */
static void
totals_save(struct shipper_totals *t, const struct shipper_dest_stats *st)
{
	struct shipper_dest_stats *n;

	if (t == NULL)
		return;
	pthread_mutex_lock(&t->mtx);
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, st->name) == 0) {
			t->v[i] = *st;
			pthread_mutex_unlock(&t->mtx);
			return;
		}
	n = realloc(t->v, (t->n + 1) * sizeof(*n));
	if (n != NULL) {
		t->v = n;
		t->v[t->n++] = *st;
	}
	pthread_mutex_unlock(&t->mtx);
}

size_t
shipper_dest_names(const struct config *cfg, const char **names, size_t max)
{
	size_t n = 0, i;

	if (max > 0)
		names[n++] = "server";
	for (i = 0; i < cfg->nservers && n < max; i++)
		names[n++] = cfg->servers[i].name;
	return n;
}

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

static bool
giving_up(struct shipper *sh)
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

	if (n == 0)
		return;
	pthread_mutex_lock(&d->sh->mtx);
	d->st.not_ingested += n;
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
 * reject_limit events rejected alone in a row: the destination refuses
 * everything, and dropping event after event would empty the spool into
 * it.  It is failing instead; a batch it takes again ends that.
 */
static bool
rejects_everything(const struct dest *d)
{
	return d->conf.reject_limit > 0 &&
	    d->rejects >= (uint64_t)d->conf.reject_limit;
}

/*
 * Send events[0..n); on a rejection split in halves until the poison
 * event is alone and drop only it.  *done is how many events from the
 * start were delivered or dropped (what may be acknowledged).
 */
static enum send_result
deliver(struct dest *d, struct event **events, size_t n, size_t *done,
    int *retry_after)
{
	/* what the queue said of the records, for a part of them too */
	struct batch b = { events, n, d->src,
	    d->src != 0 ? d->seq0 + (uint64_t)(events - d->batch0) : 0 };
	enum send_result r;
	size_t h, d1 = 0, d2 = 0;

	*done = 0;
	*retry_after = 0;
	d->ctx.error[0] = '\0';
	r = d->sink->send(&d->ctx, &b, retry_after);
	if (r == SEND_OK) {
		d->rejects = 0;
		*done = n;
		return SEND_OK;
	}
	if (r == SEND_RETRY)
		return SEND_RETRY;
	if (n == 1 && rejects_everything(d)) {
		static const char pre[] = "every event rejected: ";
		size_t pl = sizeof(pre) - 1, len;

		if (d->ctx.error[0] == '\0')
			snprintf(d->ctx.error, sizeof(d->ctx.error), "rejected");
		len = strnlen(d->ctx.error, sizeof(d->ctx.error) - 1 - pl);
		memmove(d->ctx.error + pl, d->ctx.error, len);
		memcpy(d->ctx.error, pre, pl);
		d->ctx.error[pl + len] = '\0';
		return SEND_RETRY;
	}
	if (n == 1) {
		/* counted by queue_drop(), once, when the batch is settled */
		d->rejects++;
		d->poison[events - d->batch0] = 1;
		d->rejected = true;
		log_error("destination %s: event rejected, dropped: %s (text: %.200s)",
		    d->st.name, d->ctx.error[0] ? d->ctx.error : "rejected",
		    events[0]->text);
		*done = 1;
		return SEND_OK;
	}
	if (giving_up(d->sh))
		return SEND_RETRY;
	h = n / 2;
	r = deliver(d, events, h, &d1, retry_after);
	if (r != SEND_OK) {
		*done = d1;
		return r;
	}
	if (giving_up(d->sh)) {
		*done = h;
		return SEND_RETRY;
	}
	r = deliver(d, events + h, n - h, &d2, retry_after);
	*done = h + d2;
	return r;
}

/* Room for the poison marks of an n-event batch, cleared. */
static int
poison_reset(struct dest *d, struct event **events, size_t n)
{
	if (n > d->poison_cap) {
		unsigned char *p = realloc(d->poison, n);

		if (p == NULL)
			return -1;
		d->poison = p;
		d->poison_cap = n;
	}
	memset(d->poison, 0, n);
	d->batch0 = events;
	d->batch_n = n;
	return 0;
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

static void	shipper_free(struct shipper *);

/*
 * A thread the stop left behind, its send over at last: it closes its own
 * sink (connection, TLS, buffers) and, the last of them once main has
 * orphaned the shipper, frees the shipper and hands back its
 * configuration.  It touches nothing else: the queue has moved on.
 */
static void *
abandoned_exit(struct dest *d)
{
	struct shipper *sh = d->sh;
	bool last;

	if (d->opened && d->sink->close)
		d->sink->close(&d->ctx);
	d->opened = false;
	pthread_mutex_lock(&sh->mtx);
	d->exited = true;
	sh->live_abandoned--;
	last = sh->live_abandoned == 0 && sh->orphaned;
	pthread_mutex_unlock(&sh->mtx);
	if (last) {
		void (*release)(void *) = sh->release;
		void *arg = sh->release_arg;

		shipper_free(sh);
		if (release != NULL)
			release(arg);
		platform_heap_trim();
	}
	/* last: the exit may now free what the sinks share */
	__atomic_sub_fetch(&abandoned_threads, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *
dest_thread(void *arg)
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

		if (giving_up(sh))
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
		if (nkept == 0 || poison_reset(d, kept, nkept) < 0) {
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
			return abandoned_exit(d);
		if (st == STEP_END)
			break;
		if (st == STEP_AGAIN)
			continue;
		r = deliver(d, kept, nkept, &done, &retry_after);
		if (!leave_sink(d)) {
			batch_free_events(&b);
			return abandoned_exit(d);
		}
		fold_not_ingested(d);
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

/* Its filter, checked by the configuration already: a failure here (out
 * of memory) sends every event rather than lose any. */
static void
dest_filter_compile(struct dest *d)
{
	char err[200];
	size_t bad, off;
	int part;

	if (d->conf.filter.n == 0)
		return;
	d->filter = dfilter_compile(&d->conf.filter, err, sizeof(err), &bad,
	    &part, &off);
	if (d->filter == NULL)
		log_error("destination %s: its filter does not compile (%s); "
		    "every event is sent to it", d->ctx.name, err);
}

/*
 * A host with no destination (config_resolve's nodest): stdout as
 * resolved, or the host's syslog through the syslog sink's local socket
 * (output/syslog.c).  Said once per start, at the level it deserves: on a
 * terminal stdout is what the user watches; a daemon that writes to
 * stdout or to the host's own log ships nowhere else.
 */
static void
no_destination(struct dest *d, enum nodest where)
{
	static const char set[] = "set server.hostname (on ESXi "
	    "/UserVars/EsxwatchServerHostname)";

	if (where == NODEST_HOST_SYSLOG) {
		d->conf.proto = PROTO_SYSLOG;
		d->conf.to_stdout = false;
		d->conf.host_syslog = true;
		log_warn("no destination configured: events go to the host's "
		    "syslog; %s", set);
	} else if (where == NODEST_STDOUT)
		log_warn("no destination configured: events are written to "
		    "standard output; %s", set);
	else
		log_info("no destination configured: events are written to "
		    "standard output");
}

/*
 * The state each sink keeps for its destinations of this configuration
 * (sink.group_new), for a sink with two or more of them: one per sink,
 * handed to each destination in sink_ctx.group.
 */
static void
groups_make(struct shipper *sh)
{
	sh->groups = calloc(sh->ndests, sizeof(*sh->groups));
	if (sh->groups == NULL)
		return;		/* out of memory: nothing shared */
	for (size_t i = 0; i < sh->ndests; i++) {
		const struct sink *sk = sh->dests[i].sink;
		size_t users = 0;
		void *g;

		if (sk == NULL || sk->group_new == NULL || sk->group_free == NULL ||
		    sh->dests[i].ctx.group != NULL)
			continue;
		for (size_t j = i; j < sh->ndests; j++)
			users += sh->dests[j].sink == sk;
		if (users < 2)
			continue;
		g = sk->group_new(sh->cfg);
		if (g == NULL)
			continue;
		sh->groups[sh->ngroups++] = (struct sink_group){ sk, g };
		for (size_t j = i; j < sh->ndests; j++)
			if (sh->dests[j].sink == sk)
				sh->dests[j].ctx.group = g;
	}
}

struct shipper *
shipper_start(const struct config *cfg, struct queue *q, const struct shipper_deps *deps)
{
	static const struct shipper_deps none = { .totals = NULL };
	const struct sink *(*find)(enum dest_proto);
	struct shipper *sh = calloc(1, sizeof(*sh));
	size_t i;

	if (sh == NULL)
		return NULL;
	if (deps == NULL)
		deps = &none;
	find = deps->find != NULL ? deps->find : sink_find;
	sh->cfg = cfg;
	sh->q = q;
	sh->totals = deps->totals;
	sh->changed = deps->changed;
	pthread_mutex_init(&sh->mtx, NULL);
	cond_init_mono(&sh->cond);
	sh->ndests = 1 + cfg->nservers;
	sh->dests = calloc(sh->ndests, sizeof(*sh->dests));
	if (sh->dests == NULL) {
		free(sh);
		return NULL;
	}
	for (i = 0; i < sh->ndests; i++) {
		struct dest *d = &sh->dests[i];

		d->sh = sh;
		d->index = i;
		d->conf = i == 0 ? cfg->server : cfg->servers[i - 1];
		/* the sink config_resolve chose (stdout for a primary with
		 * nowhere to send) */
		d->conf.proto = d->conf.sink_proto;
		if (d->conf.nodest)
			no_destination(d, deps->nodest);
		d->sink = find(d->conf.proto);
		d->ctx.name = i == 0 ? "server" : d->conf.name;
		d->ctx.conf = &d->conf;
		d->ctx.cfg = cfg;
		d->ctx.agentid = deps->agentid;
		d->seed = (unsigned)(now_ms() ^ (int64_t)getpid() ^ (int64_t)(i * 7919));
		snprintf(d->st.name, sizeof(d->st.name), "%s", d->ctx.name);
		dest_filter_compile(d);
		snprintf(d->st.proto, sizeof(d->st.proto), "%s", dest_proto_name(d->conf.proto));
		totals_load(sh->totals, &d->st);
		d->rejects = d->st.rejected_in_row;	/* a reload keeps it */
		if (d->conf.nodest)
			snprintf(d->st.no_destination, sizeof(d->st.no_destination),
			    "%s", platform_nodest_name(deps->nodest));
		if (d->sink == NULL)
			log_error("destination %s: no sink for protocol %s", d->ctx.name,
			    dest_proto_name(d->conf.proto));
	}
	/* every group made before any thread reads its sink_ctx */
	groups_make(sh);
	for (i = 0; i < sh->ndests; i++) {
		struct dest *d = &sh->dests[i];
		char tname[32];

		if (d->sink == NULL)
			continue;

		snprintf(tname, sizeof(tname), "esxw-ship-%zu", i);
		if (platform_thread_start(&d->thread, tname, PLATFORM_STACK_SHIPPER,
		    dest_thread, d) == 0)
			d->started = true;
		else
			log_error("destination %s: cannot start its thread", d->ctx.name);
	}
	return sh;
}

void
shipper_drain(struct shipper *sh, int drain_ms)
{
	int64_t deadline = mono_ms() + (drain_ms > 0 ? drain_ms : 0) + 1;

	if (sh == NULL)
		return;
	pthread_mutex_lock(&sh->mtx);
	sh->stopping = true;
	if (sh->deadline_ms == 0 || deadline < sh->deadline_ms)
		sh->deadline_ms = deadline;
	pthread_cond_broadcast(&sh->cond);
	pthread_mutex_unlock(&sh->mtx);
	queue_wakeup(sh->q);
}

/*
 * Wait for the threads until the deadline and a grace; one still in a
 * send then is left behind.  One that is not in a send finishes promptly
 * (it starts no send past the deadline) and is joined.  With sh->mtx held.
 */
static void
wait_threads(struct shipper *sh)
{
	int64_t abandon_at = sh->deadline_ms + ABANDON_GRACE_MS;
	struct timespec until;

	for (;;) {
		bool waiting = false;

		for (size_t i = 0; i < sh->ndests; i++)
			if (sh->dests[i].started && !sh->dests[i].exited)
				waiting = true;
		if (!waiting || mono_ms() >= abandon_at)
			break;
		abstime_in_ms(&until, abandon_at - mono_ms());
		pthread_cond_timedwait(&sh->cond, &sh->mtx, &until);
		/* A thread not in a send may be waiting in the queue. */
		pthread_mutex_unlock(&sh->mtx);
		queue_wakeup(sh->q);
		pthread_mutex_lock(&sh->mtx);
	}
}

bool
shipper_stop(struct shipper *sh, int drain_ms, struct shipper **kept)
{
	bool all = true, left_behind = false;
	size_t i;

	if (kept != NULL)
		*kept = NULL;
	if (sh == NULL)
		return true;
	shipper_drain(sh, drain_ms);
	pthread_mutex_lock(&sh->mtx);
	wait_threads(sh);
	for (i = 0; i < sh->ndests; i++) {
		struct dest *d = &sh->dests[i];

		if (d->started && !d->exited && d->in_send) {
			d->abandoned = true;
			left_behind = true;
			sh->live_abandoned++;
			__atomic_add_fetch(&abandoned_threads, 1, __ATOMIC_SEQ_CST);
			/* what it does from now on is not counted */
			totals_save(sh->totals, &d->st);
		}
	}
	pthread_mutex_unlock(&sh->mtx);

	for (i = 0; i < sh->ndests; i++) {
		struct dest *d = &sh->dests[i];

		if (d->abandoned) {
			log_warn("destination %s: a send is still in flight after the "
			    "stop's deadline; left behind (its events stay queued)",
			    d->st.name);
			pthread_detach(d->thread);
			all = false;
			continue;
		}
		if (d->started)
			pthread_join(d->thread, NULL);
		totals_save(sh->totals, &d->st);	/* joined: no more updates */
		if (d->opened && d->sink->close)
			d->sink->close(&d->ctx);
		if (queue_backlog(sh->q, i) > 0 || d->rejected)
			all = false;
	}
	if (left_behind) {
		/* a thread still uses it when its send returns: the caller
		 * keeps it (and its configuration), or orphans it */
		if (kept != NULL)
			*kept = sh;
		return false;
	}
	shipper_free(sh);
	return all;
}

static void
shipper_free(struct shipper *sh)
{
	for (size_t i = 0; i < sh->ndests; i++) {
		free(sh->dests[i].poison);
		free(sh->dests[i].fmark);
		free(sh->dests[i].kept);
		dfilter_free(sh->dests[i].filter);
	}
	/* every thread has ended: no sink uses its group any more */
	for (size_t i = 0; i < sh->ngroups; i++)
		sh->groups[i].sink->group_free(sh->groups[i].state);
	free(sh->groups);
	pthread_mutex_destroy(&sh->mtx);
	pthread_cond_destroy(&sh->cond);
	free(sh->dests);
	free(sh);
}

void
shipper_orphan(struct shipper *sh, void (*release)(void *), void *arg)
{
	bool now;

	pthread_mutex_lock(&sh->mtx);
	sh->orphaned = true;
	sh->release = release;
	sh->release_arg = arg;
	now = sh->live_abandoned == 0;
	pthread_mutex_unlock(&sh->mtx);
	if (now) {
		shipper_free(sh);
		if (release != NULL)
			release(arg);
	}
}

size_t
shipper_abandoned_threads(void)
{
	return __atomic_load_n(&abandoned_threads, __ATOMIC_SEQ_CST);
}

size_t
shipper_ndests(const struct shipper *sh)
{
	return sh ? sh->ndests : 0;
}

int
shipper_stats(struct shipper *sh, size_t i, struct shipper_dest_stats *st)
{
	if (sh == NULL || i >= sh->ndests)
		return -1;
	pthread_mutex_lock(&sh->mtx);
	*st = sh->dests[i].st;
	pthread_mutex_unlock(&sh->mtx);
	st->backlog = queue_backlog(sh->q, i);
	return 0;
}
