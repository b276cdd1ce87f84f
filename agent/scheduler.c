/*
 * scheduler: the collecting side and the emitter.
 *
 * Every collector runs on a thread of its own, sleeping on a condition
 * variable until its next interval (no epoll/timerfd: ESXi's VMkernel has
 * neither).  A collector waits on slow host tools — a SMART query takes
 * seconds, a hung esxcli its whole timeout — and on one shared thread that
 * would delay every other collector; on its own it delays only itself, so
 * nic keeps its schedule and logwatch keeps following the logs while smart
 * waits.  A collector that returns 1 from collect() has more work (one
 * device at a time) and is called again at once.  --once runs them one
 * after the other on the calling thread.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/config_host.h"
#include "../collectors/collector.h"
#include "../collectors/host/host.h"
#include "../collectors/vspoll.h"
#include "lib/bell.h"
#include "lib/clock.h"
#include "lib/exec.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/platform.h"
#include "scheduler.h"

struct entry {
	const struct collector	*c;
	struct scheduler	*sched;
	struct collector_ctx	 ctx;
	struct emitter		 em;	/* its arg: this entry */
	int64_t			 next_ms;	/* monotonic */
	int64_t			 round_ms;	/* monotonic: this round's start */
	int			 tix;		/* its row in the totals; -1 none */
	bool			 again;		/* collect() asked to be called again */
	bool			 inited;
	pthread_t		 thread;
	bool			 running;	/* thread started */
	/* a vsphere.NAME poller: its events name their own collector (nic,
	 * datastore, vcevents) and host; own_conf is its ctx.conf */
	bool			 polled;
	struct collector_conf	 own_conf;
	char			 own_name[96];
};

struct scheduler {
	const struct config	*cfg;
	struct queue		*q;
	struct entry		*entries;
	size_t			 n;
	unsigned long long	 failed;
	struct sched_totals	*totals;
	const char		*hostname;
	enum platform		 platform;
	struct host		*host;		/* where the facts come from */
	struct bell		*changed;	/* figures->changed */
	struct emit_filter	 filter;	/* on_event NULL: none */
	pthread_mutex_t		 mtx;
	pthread_cond_t		 cond;
	bool			 stopping;	/* under mtx */
};

struct sched_totals {
	pthread_mutex_t			 mtx;
	struct sched_collector_stats	 v[SCHED_MAX_COLLECTORS];
	size_t				 n;
};

struct sched_totals *
sched_totals_new(void)
{
	struct sched_totals *t = calloc(1, sizeof(*t));

	if (t != NULL)
		pthread_mutex_init(&t->mtx, NULL);
	return t;
}

void
sched_totals_free(struct sched_totals *t)
{
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->mtx);
	free(t);
}

size_t
sched_totals_get(struct sched_totals *t, struct sched_collector_stats *out,
    size_t max)
{
	size_t n;

	if (t == NULL)
		return 0;
	pthread_mutex_lock(&t->mtx);
	n = t->n < max ? t->n : max;
	memcpy(out, t->v, n * sizeof(*out));
	pthread_mutex_unlock(&t->mtx);
	return n;
}

/* The row of a collector's name, made on first use; -1: none left. */
static int
totals_row(struct sched_totals *t, const char *name)
{
	int r = -1;

	if (t == NULL)
		return -1;
	pthread_mutex_lock(&t->mtx);
	for (size_t i = 0; i < t->n && r < 0; i++)
		if (strcmp(t->v[i].name, name) == 0)
			r = (int)i;
	if (r < 0 && t->n < SCHED_MAX_COLLECTORS) {
		snprintf(t->v[t->n].name, sizeof(t->v[t->n].name), "%s", name);
		r = (int)t->n++;
	}
	pthread_mutex_unlock(&t->mtx);
	return r;
}

/* One collect() call's outcome r: a failure, the end of a round. */
static void
totals_count(struct sched_totals *t, struct entry *e, int r)
{
	struct sched_collector_stats *st;

	if (t == NULL || e->tix < 0)
		return;
	pthread_mutex_lock(&t->mtx);
	st = &t->v[e->tix];
	if (r < 0)
		st->errors++;
	if (r != 1) {
		st->runs++;
		st->last_duration_ms = (uint64_t)(mono_ms() - e->round_ms);
		st->last_run_ms = now_ms();
	}
	pthread_mutex_unlock(&t->mtx);
}

/* esxwatch_event_time: the event's own time, ISO 8601 UTC with ms, kept
 * when Log Insight clamps an unauthenticated `timestamp` (CONTRACT §4). */
static int
set_event_time(struct event *ev)
{
	/* the formatted second, kept per thread: events come in runs */
	static __thread time_t last_sec = -1;
	static __thread char last[32];
	static __thread size_t last_n;
	char iso[40];
	time_t sec = (time_t)(ev->timestamp_ms / 1000);
	struct tm tm;

	if (ev->timestamp_ms <= 0)
		return 0;
	if (sec != last_sec) {
		if (gmtime_r(&sec, &tm) == NULL)
			return 0;
		last_n = strftime(last, sizeof(last), "%Y-%m-%dT%H:%M:%S", &tm);
		if (last_n == 0)
			return 0;
		last_sec = sec;
	}
	memcpy(iso, last, last_n);
	snprintf(iso + last_n, sizeof(iso) - last_n, ".%03dZ",
	    (int)(ev->timestamp_ms % 1000));
	return event_set_builtin(ev, "esxwatch_event_time", iso);
}

/*
 * Every event gets the fields docs/events.md puts on all events.
 * esxwatch_collector and esxwatch_version are the agent's to say (a tag or
 * a rule capture cannot change them; a collector that names_collector
 * may: the receiver's alerts on received lines are logwatch's, and so may
 * a polled host's collectors: vcevents); hostname is the host the event is
 * about: the agent's own unless the collector named another (a received
 * host's, a polled one's, a bundle's); appname, kind and severity are the
 * collector's when it set them (a forwarded log line's program).
 */
static int
enrich(struct entry *e, struct event *ev)
{
	struct scheduler *s = e->sched;
	const struct kvlist *tags = &s->cfg->tags;
	size_t i;
	int r = 0;

	/* the agent's own names: valid by construction (event.h) */
	if (event_set_builtin_default(ev, "hostname", s->hostname) == -1 ||
	    event_set_builtin_default(ev, "appname", "esxwatch") == -1 ||
	    (e->c->names_collector || e->polled ? event_set_builtin_default(ev,
	    "esxwatch_collector", e->c->name) : event_set_builtin(ev,
	    "esxwatch_collector", e->c->name)) == -1 ||
	    event_set_builtin_default(ev, "esxwatch_kind", "sample") == -1 ||
	    event_set_builtin_default(ev, "esxwatch_severity", "info") == -1 ||
	    event_set_builtin(ev, "esxwatch_version", ESXWATCH_VERSION) == -1 ||
	    set_event_time(ev) == -1)
		r = -1;
	/* a tag's name comes from the configuration: checked here */
	for (i = 0; r == 0 && i < tags->n; i++)
		if (field_name_valid(tags->v[i].key))
			r = event_set_builtin_default(ev, tags->v[i].key,
			    tags->v[i].value);
	/* the diagnosis stage looks at it before it is queued */
	if (r == 0 && s->filter.on_event != NULL)
		s->filter.on_event(s->filter.arg, ev);
	return r;
}

static void
emit_failed(struct entry *e, size_t n)
{
	__atomic_add_fetch(&e->sched->failed, n, __ATOMIC_RELAXED);
	log_limited(LOG_ERROR, "emit", 60, "could not queue an event from %s",
	    e->c->name);
}

/* The emitter's operations (collector.h): em->arg is the entry. */
static int
sched_emit(struct emitter *em, struct event *ev)
{
	struct entry *e = em->arg;
	struct scheduler *s = e->sched;
	int r;

	if (ev == NULL)
		return -1;
	r = enrich(e, ev);
	if (r == 0) {
		r = queue_push(s->q, ev);
		if (r == 0)
			bell_ring(s->changed);
	}
	if (r != 0)
		emit_failed(e, 1);
	event_free(ev);
	return r;
}

#define EMIT_RUN	64

/* Up to EMIT_RUN events: enriched, then queued with one queue_push_many()
 * where the queue takes them all.  Returns how many were not queued. */
static size_t
emit_run(struct entry *e, struct event **evs, size_t n)
{
	const struct event *ok[EMIT_RUN];
	size_t i, k = 0, m = 0, q, failed = 0;

	for (i = 0; i < n; i++)
		if (evs[i] == NULL || enrich(e, evs[i]) != 0)
			failed++;
		else
			ok[k++] = evs[i];
	while (m < k) {
		q = queue_push_many(e->sched->q, ok + m, k - m);
		if (q > 0)
			bell_ring(e->sched->changed);
		m += q;
		if (m < k) {	/* the queue refused that one: the rest go on */
			failed++;
			m++;
		}
	}
	return failed;
}

static size_t
sched_emit_many(struct emitter *em, struct event **evs, size_t n)
{
	struct entry *e = em->arg;
	size_t i, k, failed = 0;

	for (i = 0; i < n; i += k) {
		k = n - i < EMIT_RUN ? n - i : EMIT_RUN;
		failed += emit_run(e, evs + i, k);
	}
	if (failed > 0)
		emit_failed(e, failed);
	for (i = 0; i < n; i++)
		event_free(evs[i]);
	return failed;
}

static int
sched_emit_sync(struct emitter *em)
{
	struct entry *e = em->arg;

	return queue_sync(e->sched->q);
}

static const struct emitter_ops sched_emitter_ops = {
	.emit = sched_emit,
	.emit_many = sched_emit_many,
	.sync = sched_emit_sync,
};

static struct kvstore *
open_state(const struct config *cfg, const char *name)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *base = config_storage_dir(cfg);
	struct kvstore *kv;

	if (snprintf(dir, sizeof(dir), "%s/state", base) >= (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s/%s.kv", dir, name) >= (int)sizeof(path))
		return kv_open(NULL);
	if (fs_mkdir_p(dir, 0700) == -1) {
		log_limited(LOG_WARN, "state-dir", 3600,
		    "cannot create %s (%s): previous observations will not survive a restart",
		    dir, log_errstr(errno));
		return kv_open(NULL);
	}
	kv = kv_open(path);
	return kv ? kv : kv_open(NULL);
}

/*
 * One entry per vsphere.NAME (collectors/vspoll.c): a collector of its
 * own, on its own thread, every vsphere.NAME.interval; its state (the
 * event stream's position, hosts' connection states) in
 * state/vsphere.NAME.kv.
 */
static void
add_pollers(struct scheduler *s, const struct config *cfg,
    const struct agent_figures *figures, struct sched_totals *totals,
    int64_t now)
{
	size_t i;

	for (i = 0; i < cfg->nvsphere; i++) {
		struct entry *e = &s->entries[s->n];

		e->c = &vsphere_poller;
		e->polled = true;
		snprintf(e->own_name, sizeof(e->own_name), "vsphere.%s",
		    cfg->vsphere[i].name);
		e->own_conf.name = e->own_name;
		e->own_conf.enabled = true;
		e->own_conf.interval = cfg->vsphere[i].interval;
		e->own_conf.timeout = cfg->vsphere[i].timeout;
		e->own_conf.opts = &cfg->vsphere[i];
		e->ctx.name = e->c->name;
		e->ctx.cfg = cfg;
		e->ctx.conf = &e->own_conf;
		e->ctx.platform = PLATFORM_ESXI;
		e->ctx.state = open_state(cfg, e->own_name);
		e->ctx.figures = figures;
		e->sched = s;
		e->em.ops = &sched_emitter_ops;
		e->em.arg = e;
		/* several entries: their polls spread over the interval */
		e->next_ms = now + (int64_t)i * cfg->vsphere[i].interval * 1000 /
		    (int64_t)cfg->nvsphere;
		if (e->ctx.state == NULL || e->c->init(&e->ctx) != 0) {
			log_error("%s: cannot start", e->own_name);
			if (e->ctx.state != NULL)
				kv_close(e->ctx.state);
			memset(e, 0, sizeof(*e));
			continue;
		}
		e->inited = true;
		e->tix = totals_row(totals, e->own_name);
		s->n++;
	}
}

struct scheduler *
sched_start(const struct config *cfg, struct queue *q)
{
	return sched_start_with(cfg, q, NULL, NULL, NULL);
}

struct scheduler *
sched_start_with(const struct config *cfg, struct queue *q,
    const struct agent_figures *figures, struct sched_totals *totals,
    const struct emit_filter *filter)
{
	struct scheduler *s = calloc(1, sizeof(*s));
	int64_t now = mono_ms();
	size_t i;

	if (s == NULL)
		return NULL;
	s->cfg = cfg;
	s->q = q;
	s->totals = totals;
	s->changed = figures != NULL ? figures->changed : NULL;
	if (filter != NULL)
		s->filter = *filter;
	s->hostname = config_hostname(cfg);
	/* The machine it runs on; other kinds of host come with this round's
	 * collector mode, API and bundle readers (collectors/host/host.h). */
	s->host = host_open("local", cfg);
	if (s->host == NULL) {
		free(s);
		return NULL;
	}
	s->platform = s->host->platform;
	pthread_mutex_init(&s->mtx, NULL);
	cond_init_mono(&s->cond);
	s->entries = calloc(cfg->ncollectors + cfg->nvsphere + 1,
	    sizeof(*s->entries));
	if (s->entries == NULL) {
		host_close(s->host);
		pthread_mutex_destroy(&s->mtx);
		pthread_cond_destroy(&s->cond);
		free(s);
		return NULL;
	}
	for (i = 0; i < cfg->ncollectors; i++) {
		const struct collector_conf *cc = &cfg->collectors[i];
		const struct collector *c;
		struct entry *e;

		if (!cc->enabled)
			continue;
		c = collector_find(cc->name);
		if (c == NULL) {
			log_debug("collector %s is not built in; skipped", cc->name);
			continue;
		}
		e = &s->entries[s->n];
		e->c = c;
		e->ctx.name = c->name;
		e->ctx.cfg = cfg;
		e->ctx.conf = cc;
		e->ctx.platform = s->platform;
		e->ctx.host = s->host;
		e->ctx.state = open_state(cfg, c->name);
		e->ctx.figures = figures;
		e->sched = s;
		e->em.ops = &sched_emitter_ops;
		e->em.arg = e;
		e->next_ms = now;
		if (e->ctx.state == NULL) {
			log_error("collector %s: out of memory", c->name);
			continue;
		}
		if (c->init && c->init(&e->ctx) != 0) {
			log_error("collector %s: initialisation failed; disabled", c->name);
			kv_close(e->ctx.state);
			memset(e, 0, sizeof(*e));
			continue;
		}
		e->inited = true;
		e->tix = totals_row(totals, c->name);
		s->n++;
		log_debug("collector %s: every %d s", c->name, cc->interval);
	}
	add_pollers(s, cfg, figures, totals, now);
	return s;
}

static void
run_entry(struct scheduler *s, struct entry *e)
{
	int interval = e->ctx.conf->interval > 0 ? e->ctx.conf->interval :
	    e->c->default_interval > 0 ? e->c->default_interval : 60;
	int r;

	if (!e->again)
		e->round_ms = mono_ms();
	r = e->c->collect(&e->ctx, &e->em);
	totals_count(s->totals, e, r);
	if (!e->again)
		e->next_ms += (int64_t)interval * 1000;
	e->again = r == 1;
	/* Fell behind (a suspended host, a slow tool): do not catch up in a burst. */
	if (e->next_ms < mono_ms() - (int64_t)interval * 1000)
		e->next_ms = mono_ms() + (int64_t)interval * 1000;
	if (e->ctx.state && kv_dirty(e->ctx.state))
		kv_save(e->ctx.state);
	/* A round of a slow collector (esxcli answers, 54 disks' tables)
	 * leaves free blocks in the heap: given back, not kept for the next
	 * round minutes away.  Not after logwatch's 1 s polls. */
	if (!e->again && interval >= 10)
		platform_heap_trim();
}

void
sched_run_once(struct scheduler *s, volatile sig_atomic_t *stop)
{
	size_t i;
	int guard;

	for (i = 0; i < s->n && !*stop; i++) {
		struct entry *e = &s->entries[i];

		/* Bounded: a collector that always says "again" cannot hang --once. */
		for (guard = 0; guard < 100000 && !*stop; guard++) {
			run_entry(s, e);
			if (!e->again)
				break;
		}
	}
}

/* Wait on the scheduler's condition variable until ms from now or stop. */
static void
wait_ms(struct scheduler *s, int64_t ms)
{
	struct timespec until;

	abstime_in_ms(&until, ms);
	pthread_mutex_lock(&s->mtx);
	if (!s->stopping)
		pthread_cond_timedwait(&s->cond, &s->mtx, &until);
	pthread_mutex_unlock(&s->mtx);
}

static bool
stopping(struct scheduler *s)
{
	bool r;

	pthread_mutex_lock(&s->mtx);
	r = s->stopping;
	pthread_mutex_unlock(&s->mtx);
	return r;
}

static void *
entry_thread(void *arg)
{
	struct entry *e = arg;
	struct scheduler *s = e->sched;

	while (!stopping(s)) {
		int64_t now = mono_ms();

		if (e->again || e->next_ms <= now) {
			run_entry(s, e);
			continue;
		}
		wait_ms(s, e->next_ms - now);
	}
	return NULL;
}

void
sched_loop(struct scheduler *s, volatile sig_atomic_t *stop,
    volatile sig_atomic_t *reload, int wake_fd)
{
	size_t i;

	pthread_mutex_lock(&s->mtx);
	s->stopping = false;
	pthread_mutex_unlock(&s->mtx);
	/* The collector threads never take the daemon's signals. */
	for (i = 0; i < s->n; i++) {
		struct entry *e = &s->entries[i];
		char name[48];	/* cut to 15 by the thread's name */

		snprintf(name, sizeof(name), "esxw-c-%s", e->c->name);
		if (platform_thread_start(&e->thread, name, PLATFORM_STACK_COLLECTOR,
		    entry_thread, e) == 0)
			e->running = true;
		else
			log_error("collector %s: cannot start its thread", e->c->name);
	}

	/* The signal handlers set a flag, then write to wake_fd: a signal
	 * between the test and poll() leaves its byte for poll() to see. */
	while (!*stop && !*reload) {
		struct pollfd pfd = { .fd = wake_fd, .events = POLLIN };
		char drain[64];

		if (wake_fd < 0) {
			poll(NULL, 0, 250);
			continue;
		}
		if (poll(&pfd, 1, -1) > 0)
			while (read(wake_fd, drain, sizeof(drain)) > 0)
				;
	}

	pthread_mutex_lock(&s->mtx);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mtx);
	exec_abort_all();	/* a hung tool must not hold up the stop */
	for (i = 0; i < s->n; i++) {
		struct entry *e = &s->entries[i];

		if (e->running)
			pthread_join(e->thread, NULL);
		e->running = false;
	}
	exec_abort_reset();
}

void
sched_stop(struct scheduler *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		struct entry *e = &s->entries[i];

		if (e->inited && e->c->fini)
			e->c->fini(&e->ctx);
		if (e->ctx.state) {
			kv_save(e->ctx.state);
			kv_close(e->ctx.state);
		}
	}
	free(s->entries);
	host_close(s->host);
	pthread_mutex_destroy(&s->mtx);
	pthread_cond_destroy(&s->cond);
	free(s);
}
