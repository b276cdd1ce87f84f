/*
 * scheduler: the collecting thread's loop and the emitter.
 *
 * A poll() loop with timers, nothing newer (ESXi's VMkernel has no
 * epoll/timerfd).  A collector that returns 1 from collect() has more
 * work (one slow device at a time): it is called again after every other
 * due collector had its turn, so a slow SMART query never starves nic.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../collectors/collector.h"
#include "log.h"
#include "scheduler.h"

struct emitter {
	struct scheduler	*sched;
	const char		*collector;
};

struct entry {
	const struct collector	*c;
	struct collector_ctx	 ctx;
	struct emitter		 em;
	int64_t			 next_ms;	/* monotonic */
	bool			 again;		/* collect() asked to be called again */
	bool			 inited;
};

struct scheduler {
	const struct config	*cfg;
	struct queue		*q;
	struct entry		*entries;
	size_t			 n;
	unsigned long long	 emitted;
	unsigned long long	 failed;
	const char		*hostname;
	enum platform		 platform;
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct event *
ev_new(const char *kind, const char *severity, const char *fmt, ...)
{
	struct buf b;
	struct event *ev;
	va_list ap;

	buf_init(&b, 0);
	va_start(ap, fmt);
	if (buf_vprintf(&b, fmt, ap) == -1) {
		va_end(ap);
		buf_free(&b);
		return NULL;
	}
	va_end(ap);
	ev = event_new(0, b.data ? b.data : "");
	buf_free(&b);
	if (ev == NULL)
		return NULL;
	if (event_set(ev, "esxwatch_kind", kind) == -1 ||
	    event_set(ev, "esxwatch_severity", severity) == -1) {
		event_free(ev);
		return NULL;
	}
	return ev;
}

/*
 * Every event gets the fields CONTRACT §3 puts on all events; what the
 * collector set itself (appname of a forwarded log line) wins.
 */
int
emit(struct emitter *em, struct event *ev)
{
	struct scheduler *s = em->sched;
	const struct kvlist *tags = &s->cfg->tags;
	size_t i;
	int r = 0;

	if (ev == NULL)
		return -1;
	if (event_set_default(ev, "hostname", s->hostname) == -1 ||
	    event_set_default(ev, "appname", "esxwatch") == -1 ||
	    event_set_default(ev, "esxwatch_collector", em->collector) == -1 ||
	    event_set_default(ev, "esxwatch_kind", "sample") == -1 ||
	    event_set_default(ev, "esxwatch_severity", "info") == -1 ||
	    event_set(ev, "esxwatch_version", ESXWATCH_VERSION) == -1)
		r = -1;
	for (i = 0; r == 0 && i < tags->n; i++)
		if (field_name_valid(tags->v[i].key))
			r = event_set_default(ev, tags->v[i].key, tags->v[i].value);
	if (r == 0)
		r = queue_push(s->q, ev);
	if (r == 0)
		s->emitted++;
	else {
		s->failed++;
		log_limited(LOG_ERROR, "emit", 60, "could not queue an event from %s",
		    em->collector);
	}
	event_free(ev);
	return r;
}

int
emit_sync(struct emitter *em)
{
	return queue_sync(em->sched->q);
}

static struct kvstore *
open_state(const struct config *cfg, const char *name)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *base = platform_storage_dir(cfg);
	struct kvstore *kv;

	if (snprintf(dir, sizeof(dir), "%s/state", base) >= (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s/%s.kv", dir, name) >= (int)sizeof(path))
		return kv_open(NULL);
	if (mkdir_p(dir, 0700) == -1) {
		log_limited(LOG_WARN, "state-dir", 3600,
		    "cannot create %s (%s): previous observations will not survive a restart",
		    dir, strerror(errno));
		return kv_open(NULL);
	}
	kv = kv_open(path);
	return kv ? kv : kv_open(NULL);
}

struct scheduler *
sched_start(const struct config *cfg, struct queue *q)
{
	struct scheduler *s = calloc(1, sizeof(*s));
	int64_t now = mono_ms();
	size_t i;

	if (s == NULL)
		return NULL;
	s->cfg = cfg;
	s->q = q;
	s->hostname = platform_hostname(cfg);
	s->platform = platform_get(cfg);
	s->entries = calloc(cfg->ncollectors ? cfg->ncollectors : 1, sizeof(*s->entries));
	if (s->entries == NULL) {
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
		e->ctx.state = open_state(cfg, c->name);
		e->em.sched = s;
		e->em.collector = c->name;
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
		s->n++;
		log_debug("collector %s: every %d s", c->name, cc->interval);
	}
	return s;
}

static void
run_entry(struct scheduler *s, struct entry *e)
{
	int r = e->c->collect(&e->ctx, &e->em);
	int interval = e->ctx.conf->interval > 0 ? e->ctx.conf->interval :
	    e->c->default_interval > 0 ? e->c->default_interval : 60;

	(void)s;
	if (!e->again)
		e->next_ms += (int64_t)interval * 1000;
	e->again = r == 1;
	/* Fell behind (a suspended host, a slow tool): do not catch up in a burst. */
	if (e->next_ms < mono_ms() - (int64_t)interval * 1000)
		e->next_ms = mono_ms() + (int64_t)interval * 1000;
	if (e->ctx.state && kv_dirty(e->ctx.state))
		kv_save(e->ctx.state);
}

void
sched_run_once(struct scheduler *s)
{
	size_t i;
	int guard;

	for (i = 0; i < s->n; i++) {
		struct entry *e = &s->entries[i];

		/* Bounded: a collector that always says "again" cannot hang --once. */
		for (guard = 0; guard < 100000; guard++) {
			run_entry(s, e);
			if (!e->again)
				break;
		}
	}
}

void
sched_loop(struct scheduler *s, volatile sig_atomic_t *stop,
    volatile sig_atomic_t *reload)
{
	while (!*stop && !*reload) {
		int64_t now = mono_ms(), next = now + 1000;
		bool ran = false;
		size_t i;

		for (i = 0; i < s->n && !*stop && !*reload; i++) {
			struct entry *e = &s->entries[i];

			if (e->again || e->next_ms <= now) {
				run_entry(s, e);
				ran = true;
			}
		}
		if (ran)
			continue;	/* something may be due again ("again") */
		for (i = 0; i < s->n; i++)
			if (s->entries[i].next_ms < next)
				next = s->entries[i].next_ms;
		now = mono_ms();
		if (next > now) {
			int64_t wait = next - now;

			/* Wake at least every 250 ms to see signal flags: the
			 * signal may have gone to a shipping thread. */
			poll(NULL, 0, wait > 250 ? 250 : (int)wait);
		}
	}
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
	free(s);
}

unsigned long long
sched_emitted(const struct scheduler *s)
{
	return s ? s->emitted : 0;
}
