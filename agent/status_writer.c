/*
 * The status writer: a thread that rewrites storage.directory/status when
 * the figures change (see status.h).
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/config_host.h"
#include "lib/bell.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/platform.h"
#include "status.h"

struct status_writer {
	pthread_mutex_t			 mu;
	pthread_cond_t			 cv;
	pthread_t			 thread;
	bool				 stopping;
	char				 path[PATH_MAX];
	const struct status_source	*src;
	struct bell			*bell;	/* src->changed, or its own */
	bool				 own_bell;
};

static void
write_once(struct status_writer *w)
{
	struct status_snap *s = malloc(sizeof(*s));

	if (s == NULL)
		return;
	status_collect(w->src, s);
	status_write(s, w->path);
	free(s);
}

/* Sleep until mono time until or the stop; false: stopping. */
static bool
nap_until(struct status_writer *w, int64_t until)
{
	struct timespec ts;
	bool go;

	pthread_mutex_lock(&w->mu);
	while (!w->stopping && mono_ms() < until) {
		abstime_in_ms(&ts, until - mono_ms());
		(void)pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
	go = !w->stopping;
	pthread_mutex_unlock(&w->mu);
	return go;
}

static bool
writer_stopping(struct status_writer *w)
{
	bool r;

	pthread_mutex_lock(&w->mu);
	r = w->stopping;
	pthread_mutex_unlock(&w->mu);
	return r;
}

/*
 * Written when something changed (the bell: an event queued, a send's
 * outcome), at most every STATUS_PERIOD_MS, and at least every
 * STATUS_HEARTBEAT_MS (the process' memory and CPU, updated_ms).  An
 * idle agent wakes for it once a heartbeat, not every period.
 */
static void *
status_main(void *arg)
{
	struct status_writer *w = arg;
	int64_t last;

	for (;;) {
		bell_clear(w->bell);	/* what rings from now on is news */
		write_once(w);
		last = mono_ms();
		if (writer_stopping(w))
			break;
		(void)bell_wait(w->bell, last + STATUS_HEARTBEAT_MS);
		if (!nap_until(w, last + STATUS_PERIOD_MS))
			break;
	}
	return NULL;
}

struct status_writer *
status_start(const struct config *cfg, const struct status_source *src)
{
	const char *dir = config_storage_dir(cfg);
	struct status_writer *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	if ((size_t)snprintf(w->path, sizeof(w->path), "%s/%s", dir, STATUS_FILE) >=
	    sizeof(w->path)) {
		free(w);
		return NULL;
	}
	w->src = src;
	w->bell = src->changed;
	if (w->bell == NULL) {
		w->bell = bell_new();
		w->own_bell = true;
	}
	pthread_mutex_init(&w->mu, NULL);
	cond_init_mono(&w->cv);
	if (w->bell == NULL || platform_thread_start(&w->thread, "esxw-status",
	    PLATFORM_STACK_SMALL, status_main, w) != 0) {
		log_warn("cannot start the status thread");
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		if (w->own_bell)
			bell_free(w->bell);
		free(w);
		return NULL;
	}
	return w;
}

void
status_stop(struct status_writer *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	bell_ring(w->bell);	/* it may be waiting for news */
	pthread_join(w->thread, NULL);
	/* one last picture, so --status shows the final figures */
	write_once(w);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	if (w->own_bell)
		bell_free(w->bell);
	free(w);
}

