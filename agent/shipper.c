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
#include "clock.h"
#include "log.h"
#include "shipper.h"

#define BACKOFF_BASE_MS		1000
#define BACKOFF_CAP_MS		(5 * 60 * 1000)
/*
 * A send still in flight this long after the stop's deadline (a server
 * that accepted the connection and never answers: the sink's own timeout
 * is 30 s) is abandoned: its thread is detached and never touches the
 * queue again, so neither SIGTERM nor a reload waits for it.
 */
#define ABANDON_GRACE_MS	500

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
	struct shipper		*next_abandoned;
};

/* Shippers with a thread left behind in a hung send: kept (never freed)
 * because that thread still uses them when its send returns. */
static pthread_mutex_t	 abandoned_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct shipper	*abandoned_list;
static unsigned		 abandoned_threads;	/* __atomic */

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
	d->st.last_error_ms = now_ms();
	snprintf(d->st.last_error, sizeof(d->st.last_error), "%s", why);
	if (!d->st.failing)
		log_warn("destination %s (%s): delivery failing: %s", d->st.name,
		    d->st.proto, why);
	d->st.failing = true;
	pthread_mutex_unlock(&sh->mtx);
}

static void
note_success(struct dest *d, size_t n)
{
	struct shipper *sh = d->sh;

	pthread_mutex_lock(&sh->mtx);
	d->st.sent_events += n;
	d->st.last_success_ms = now_ms();
	if (d->st.failing)
		log_info("destination %s (%s): delivering again", d->st.name, d->st.proto);
	d->st.failing = false;
	pthread_mutex_unlock(&sh->mtx);
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
	struct batch b = { events, n };
	enum send_result r;
	size_t h, d1 = 0, d2 = 0;

	*done = 0;
	d->ctx.error[0] = '\0';
	*retry_after = 0;
	r = d->sink->send(&d->ctx, &b, retry_after);
	if (r == SEND_OK) {
		*done = n;
		return SEND_OK;
	}
	if (r == SEND_RETRY)
		return SEND_RETRY;
	if (n == 1) {
		pthread_mutex_lock(&d->sh->mtx);
		d->st.dropped_poison++;
		pthread_mutex_unlock(&d->sh->mtx);
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

static int
backoff_ms(struct dest *d, int retry_after_s)
{
	int64_t cap = BACKOFF_BASE_MS;
	unsigned i;

	if (retry_after_s > 0)
		return retry_after_s * 1000;
	for (i = 0; i < d->attempt && cap < BACKOFF_CAP_MS; i++)
		cap *= 2;
	if (cap > BACKOFF_CAP_MS)
		cap = BACKOFF_CAP_MS;
	/* Full jitter, but never a busy loop. */
	return 100 + (int)(rand_r(&d->seed) % (unsigned)cap);
}

static void *
dest_thread(void *arg)
{
	struct dest *d = arg;
	struct shipper *sh = d->sh;
	const struct config *cfg = sh->cfg;
	int flush_ms = cfg->batch_flush_interval * 1000;
	size_t max_bytes = (size_t)cfg->batch_max_bytes;

	if (d->sink->encoded_pct > 100)
		max_bytes = max_bytes / d->sink->encoded_pct * 100;

	for (;;) {
		struct batch b;
		size_t done = 0;
		int retry_after = 0;
		enum send_result r;

		if (giving_up(sh))
			break;
		if (queue_peek(sh->q, d->index, (size_t)cfg->batch_max_events,
		    max_bytes, is_stopping(sh) ? 0 : 1000, &b) == -1)
			break;
		if (b.n == 0) {
			if (is_stopping(sh))
				break;
			/* Events waiting but none handed out: the queue could
			 * not read them (out of memory, an I/O error).  Try
			 * again a little later, not in a busy loop. */
			if (queue_backlog(sh->q, d->index) > 0)
				nap(sh, 200, false);
			continue;
		}
		/* Let a small batch fill up for flush_interval, unless more
		 * events are already waiting (a batch cut by max_bytes: a
		 * backlog of large events must not drain one batch a second). */
		if (b.n < (size_t)cfg->batch_max_events && !is_stopping(sh) && flush_ms > 0 &&
		    queue_backlog(sh->q, d->index) <= b.n) {
			batch_free_events(&b);
			nap(sh, flush_ms, false);
			if (queue_peek(sh->q, d->index, (size_t)cfg->batch_max_events,
			    max_bytes, 0, &b) == -1)
				break;
			if (b.n == 0)
				continue;
		}
		if (!enter_sink(d)) {
			batch_free_events(&b);
			break;
		}
		if (!d->opened) {
			int o = d->sink->open(&d->ctx);

			if (!leave_sink(d)) {
				batch_free_events(&b);
				return NULL;
			}
			if (o == 0)
				d->opened = true;
			else {
				note_failure(d, d->ctx.error[0] ? d->ctx.error : "cannot open");
				batch_free_events(&b);
				d->attempt++;
				nap(sh, backoff_ms(d, 0), true);
				continue;
			}
			if (!enter_sink(d)) {
				batch_free_events(&b);
				break;
			}
		}
		r = deliver(d, b.events, b.n, &done, &retry_after);
		if (!leave_sink(d)) {
			batch_free_events(&b);
			return NULL;
		}
		if (done > 0) {
			queue_ack(sh->q, d->index, done);
			note_success(d, done);
		}
		batch_free_events(&b);
		if (r == SEND_OK) {
			d->attempt = 0;
			continue;
		}
		note_failure(d, d->ctx.error[0] ? d->ctx.error : "send failed");
		{
			int ms = backoff_ms(d, retry_after);

			log_debug("destination %s: retrying in %d ms", d->st.name, ms);
			d->attempt++;
			nap(sh, ms, true);
		}
	}
	pthread_mutex_lock(&sh->mtx);
	d->exited = true;
	pthread_cond_broadcast(&sh->cond);
	pthread_mutex_unlock(&sh->mtx);
	return NULL;
}

static struct shipper *current;

struct shipper *
shipper_current(void)
{
	return current;
}

struct shipper *
shipper_start(const struct config *cfg, struct queue *q)
{
	struct shipper *sh = calloc(1, sizeof(*sh));
	size_t i;

	if (sh == NULL)
		return NULL;
	sh->cfg = cfg;
	sh->q = q;
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
		d->sink = sink_find(d->conf.proto);
		d->ctx.name = i == 0 ? "server" : d->conf.name;
		d->ctx.conf = &d->conf;
		d->ctx.cfg = cfg;
		d->seed = (unsigned)(now_ms() ^ (int64_t)getpid() ^ (int64_t)(i * 7919));
		snprintf(d->st.name, sizeof(d->st.name), "%s", d->ctx.name);
		snprintf(d->st.proto, sizeof(d->st.proto), "%s", dest_proto_name(d->conf.proto));
		if (d->sink == NULL) {
			log_error("destination %s: no sink for protocol %s", d->ctx.name,
			    dest_proto_name(d->conf.proto));
			continue;
		}
		if (pthread_create(&d->thread, NULL, dest_thread, d) == 0)
			d->started = true;
		else
			log_error("destination %s: cannot start its thread", d->ctx.name);
	}
	current = sh;
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

bool
shipper_stop(struct shipper *sh, int drain_ms)
{
	struct timespec until;
	int64_t abandon_at;
	bool all = true, left_behind = false;
	size_t i;

	if (sh == NULL)
		return true;
	if (current == sh)
		current = NULL;
	shipper_drain(sh, drain_ms);
	pthread_mutex_lock(&sh->mtx);
	abandon_at = sh->deadline_ms + ABANDON_GRACE_MS;
	pthread_mutex_unlock(&sh->mtx);

	/*
	 * Wait for the threads until the deadline and a grace; one still in
	 * a send then is left behind.  One that is not in a send finishes
	 * promptly (it starts no send past the deadline) and is joined.
	 */
	pthread_mutex_lock(&sh->mtx);
	for (;;) {
		bool waiting = false;

		for (i = 0; i < sh->ndests; i++)
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
	for (i = 0; i < sh->ndests; i++) {
		struct dest *d = &sh->dests[i];

		if (d->started && !d->exited && d->in_send) {
			d->abandoned = true;
			left_behind = true;
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
			__atomic_add_fetch(&abandoned_threads, 1, __ATOMIC_SEQ_CST);
			all = false;
			continue;
		}
		if (d->started)
			pthread_join(d->thread, NULL);
		if (d->opened && d->sink->close)
			d->sink->close(&d->ctx);
		if (queue_backlog(sh->q, i) > 0 || d->st.dropped_poison > 0)
			all = false;
	}
	if (left_behind) {
		pthread_mutex_lock(&abandoned_mtx);
		sh->next_abandoned = abandoned_list;
		abandoned_list = sh;
		pthread_mutex_unlock(&abandoned_mtx);
		return false;
	}
	pthread_mutex_destroy(&sh->mtx);
	pthread_cond_destroy(&sh->cond);
	free(sh->dests);
	free(sh);
	return all;
}

unsigned
shipper_abandoned(void)
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
	st->not_ingested = __atomic_load_n(&sh->dests[i].ctx.not_ingested,
	    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&sh->mtx);
	st->backlog = queue_backlog(sh->q, i);
	return 0;
}
