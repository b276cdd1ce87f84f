/*
 * The status writer: a thread that takes the agent's picture when the
 * figures change, writes it to storage.directory/status and puts that same
 * picture up on the board the monitor answers from (see status.h).
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config_host.h"
#include "lib/bell.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/platform.h"
#include "status.h"

/* ---- the board ----------------------------------------------------------- */

/*
 * One picture, copied in and out under mu: the writer's last, which the
 * status file holds too.  The monitor asking for a newer one rings the
 * writer's bell (registered here while a writer runs) and waits on cv.
 */
struct status_board {
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;		/* a picture was put up */
	struct status_snap	*cur;		/* NULL until the first */
	int64_t			 put_ms;	/* mono time cur was put up */
	struct bell		*writer;	/* the running writer's; NULL: none */
};

struct status_board *
status_board_new(void)
{
	struct status_board *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	pthread_mutex_init(&b->mu, NULL);
	cond_init_mono(&b->cv);
	return b;
}

void
status_board_free(struct status_board *b)
{
	if (b == NULL)
		return;
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b->cur);
	free(b);
}

void
status_board_put(struct status_board *b, const struct status_snap *s)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	if (b->cur == NULL)
		b->cur = malloc(sizeof(*b->cur));
	if (b->cur != NULL) {
		memcpy(b->cur, s, sizeof(*s));
		b->put_ms = mono_ms();
	}
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void
status_board_take(struct status_board *b, struct status_snap **snap)
{
	struct status_snap *old;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	old = b->cur;
	b->cur = *snap;
	b->put_ms = mono_ms();
	*snap = old;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

static bool
board_fresh(const struct status_board *b, int64_t max_age_ms)
{
	return b->cur != NULL && mono_ms() - b->put_ms <= max_age_ms;
}

/*
 * The writer's bell is rung under mu, so status_stop() cannot free it
 * meanwhile.  A writer that stops during the wait puts up its last
 * picture, then leaves the board: either ends the wait.
 */
int
status_board_get(struct status_board *b, int64_t max_age_ms, int wait_ms,
    struct status_snap *out)
{
	int64_t until = mono_ms() + wait_ms;
	int rc = -1;

	pthread_mutex_lock(&b->mu);
	if (!board_fresh(b, max_age_ms) && b->writer != NULL) {
		bell_ring(b->writer);
		while (!board_fresh(b, max_age_ms) && b->writer != NULL &&
		    mono_ms() < until) {
			struct timespec ts;

			abstime_in_ms(&ts, until - mono_ms());
			(void)pthread_cond_timedwait(&b->cv, &b->mu, &ts);
		}
	}
	if (b->cur != NULL) {
		memcpy(out, b->cur, sizeof(*out));
		rc = 0;
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/* Register bell as the one to ring for a new picture (NULL: no writer). */
static void
board_attach(struct status_board *b, struct bell *bell)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->writer = bell;
	pthread_cond_broadcast(&b->cv);	/* a reader waiting for it: no more */
	pthread_mutex_unlock(&b->mu);
}

/* ---- the writer ---------------------------------------------------------- */

struct status_writer {
	pthread_mutex_t			 mu;
	pthread_cond_t			 cv;
	pthread_t			 thread;
	bool				 stopping;
	char				 path[PATH_MAX];
	const struct status_source	*src;
	struct status_board		*board;	/* NULL: the file only */
	struct status_snap		*snap;	/* the picture being taken */
	struct bell			*bell;	/* src->changed, or its own */
	bool				 own_bell;
};

/*
 * One picture, written and then put up: whoever has seen it on the board
 * finds the file at least as new.
 */
static void
write_once(struct status_writer *w)
{
	/* A picture is 150 KB of mostly fixed tables: the board keeps the
	 * last one and the writer none between writes (the static build's
	 * malloc gives a freed one back to the system). */
	if (w->snap == NULL)
		w->snap = malloc(sizeof(*w->snap));
	if (w->snap == NULL) {
		log_limited(LOG_WARN, "status:mem", 300, "status: out of memory");
		return;
	}
	status_collect(w->src, w->snap);
	status_write(w->snap, w->path);
	if (w->board != NULL) {
		status_board_take(w->board, &w->snap);
		free(w->snap);
		w->snap = NULL;
	}
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
 * outcome, a reader of the board wanting a newer picture), at most every
 * STATUS_PERIOD_MS, and at least every STATUS_HEARTBEAT_MS (the process'
 * memory and CPU, updated_ms).  An idle agent wakes for it once a
 * heartbeat, not every period.
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
status_start(const struct config *cfg, const struct status_source *src,
    struct status_board *board)
{
	const char *dir = config_storage_dir(cfg);
	struct status_writer *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	if ((size_t)snprintf(w->path, sizeof(w->path), "%s/%s", dir,
	    STATUS_FILE) >= sizeof(w->path)) {
		free(w);
		return NULL;
	}
	w->src = src;
	w->board = board;
	w->bell = src->changed;
	if (w->bell == NULL) {
		w->bell = bell_new();
		w->own_bell = true;
	}
	pthread_mutex_init(&w->mu, NULL);
	cond_init_mono(&w->cv);
	/* before the first picture: a reader finding none waits for it */
	board_attach(board, w->bell);
	if (w->bell == NULL || platform_thread_start(&w->thread, "esxw-status",
	    PLATFORM_STACK_SMALL, status_main, w) != 0) {
		log_warn("cannot start the status thread");
		board_attach(board, NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		if (w->own_bell)
			bell_free(w->bell);
		free(w->snap);
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
	board_attach(w->board, NULL);	/* before its bell may go */
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	if (w->own_bell)
		bell_free(w->bell);
	free(w->snap);
	free(w);
}

