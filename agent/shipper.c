/*
 * shipper: the shipper's life cycle (see shipper.h): start one thread per
 * destination with its sink, filter and counters; drain and stop them
 * within a deadline, leaving behind a thread stuck in a send; the
 * counters since start kept across reloads (struct shipper_totals); the
 * figures the status writer reads.  What a destination's thread does is
 * shipper_dest.c; a rejected batch, shipper_poison.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../output/sink.h"
#include "lib/clock.h"
#include "config/dfilter.h"
#include "lib/log.h"
#include "lib/platform.h"
#include "shipper.h"
#include "shipper_int.h"

/*
 * A send still in flight this long after the stop's deadline (a server
 * that accepted the connection and never answers: the sink's own timeout
 * is 30 s) is abandoned: its thread is detached and never touches the
 * queue again, so neither SIGTERM nor a reload waits for it.
 */
#define ABANDON_GRACE_MS	500

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

static void	shipper_free(struct shipper *);

/*
 * A thread the stop left behind, its send over at last: it closes its own
 * sink (connection, TLS, buffers) and, the last of them once main has
 * orphaned the shipper, frees the shipper and hands back its
 * configuration.  It touches nothing else: the queue has moved on.
 */
void *
ship_abandoned_exit(struct dest *d)
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
		    ship_dest_thread, d) == 0)
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
		ship_poison_free(&sh->dests[i]);
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
