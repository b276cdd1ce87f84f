/*
 * memqueue: an in-memory implementation of agent/spool/queue.h, for the
 * benchmark only (bench/bench_spool.py: what durability costs).  Built in
 * instead of the spool with `make QUEUE=memqueue B=build/memq`.
 *
 * Events live in a deque ordered by sequence number; each destination has
 * a cursor (the sequence number of its next event).  An event is freed
 * once every cursor has passed it.  The memory used is bounded by
 * storage.max_disk_buffer: past it the oldest events are dropped and
 * counted, never silently.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/lib/clock.h"
#include "../agent/lib/log.h"
#include "../agent/spool/queue.h"

struct mq_rec {
	struct event	*ev;
	size_t		 json_len;
};

struct mq_dest {
	char		*name;
	uint64_t	 cursor;	/* next sequence number to deliver */
	uint64_t	 peeked;	/* events handed out by the last peek */
	uint64_t	 acked, poison, filtered;
	int64_t		 last_ack_ms;
};

struct queue {
	pthread_mutex_t	 mtx;
	pthread_cond_t	 cond;
	struct mq_rec	*recs;		/* ring buffer */
	size_t		 cap, head, count;
	uint64_t	 head_seq;	/* sequence number of recs[head] */
	uint64_t	 bytes;
	uint64_t	 max_bytes;
	uint64_t	 dropped, pushed;
	struct mq_dest	*dests;
	size_t		 ndests;
	unsigned	 wakeups;
};

static struct mq_rec *
rec_at(struct queue *q, uint64_t seq)
{
	return &q->recs[(q->head + (size_t)(seq - q->head_seq)) % q->cap];
}

static void
pop_head(struct queue *q)
{
	struct mq_rec *r = &q->recs[q->head];

	q->bytes -= r->json_len;
	event_free(r->ev);
	r->ev = NULL;
	q->head = (q->head + 1) % q->cap;
	q->head_seq++;
	q->count--;
}

/* Free what every destination has passed. */
static void
trim(struct queue *q)
{
	uint64_t min = q->head_seq + q->count;
	size_t i;

	for (i = 0; i < q->ndests; i++)
		if (q->dests[i].cursor < min)
			min = q->dests[i].cursor;
	while (q->count && q->head_seq < min)
		pop_head(q);
}

static int
set_dests(struct queue *q, const char *const *names, size_t n)
{
	struct mq_dest *nd = calloc(n ? n : 1, sizeof(*nd));
	size_t i, j;

	if (nd == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		nd[i].name = strdup(names[i]);
		if (nd[i].name == NULL)
			goto err;
		/* A new destination starts at the end: it has no history. */
		nd[i].cursor = q->head_seq + q->count;
		for (j = 0; j < q->ndests; j++)
			if (strcmp(q->dests[j].name, names[i]) == 0) {
				nd[i].cursor = q->dests[j].cursor;
				nd[i].acked = q->dests[j].acked;
				nd[i].poison = q->dests[j].poison;
				nd[i].filtered = q->dests[j].filtered;
				nd[i].last_ack_ms = q->dests[j].last_ack_ms;
			}
	}
	for (j = 0; j < q->ndests; j++)
		free(q->dests[j].name);
	free(q->dests);
	q->dests = nd;
	q->ndests = n;
	trim(q);
	return 0;
err:
	for (i = 0; i < n; i++)
		free(nd[i].name);
	free(nd);
	return -1;
}

struct queue *
queue_open(const struct config *cfg, const char *const *dests, size_t ndests)
{
	struct queue *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	pthread_mutex_init(&q->mtx, NULL);
	cond_init_mono(&q->cond);
	q->max_bytes = cfg->max_disk_buffer_kb > 0 ?
	    (uint64_t)cfg->max_disk_buffer_kb << 10 :
	    (uint64_t)(cfg->max_disk_buffer > 0 ? cfg->max_disk_buffer : 200) << 20;
	if (set_dests(q, dests, ndests) == -1) {
		queue_close(q);
		return NULL;
	}
	return q;
}

void
queue_close(struct queue *q)
{
	size_t i;

	if (q == NULL)
		return;
	while (q->count)
		pop_head(q);
	for (i = 0; i < q->ndests; i++)
		free(q->dests[i].name);
	free(q->dests);
	free(q->recs);
	pthread_mutex_destroy(&q->mtx);
	pthread_cond_destroy(&q->cond);
	free(q);
}

int
queue_set_dests(struct queue *q, const char *const *dests, size_t ndests)
{
	int r;

	pthread_mutex_lock(&q->mtx);
	r = set_dests(q, dests, ndests);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mtx);
	return r;
}

int
queue_push(struct queue *q, const struct event *ev)
{
	struct buf json;
	struct event *copy;
	size_t i;

	buf_init(&json, 0);
	copy = event_to_json(ev, &json) == -1 ? NULL : event_dup(ev);
	if (copy == NULL) {
		buf_free(&json);
		return -1;
	}
	pthread_mutex_lock(&q->mtx);
	if (q->ndests == 0) {
		/* Nowhere to go: nothing to keep. */
		pthread_mutex_unlock(&q->mtx);
		event_free(copy);
		buf_free(&json);
		return 0;
	}
	if (q->count == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 256;
		struct mq_rec *nr = calloc(ncap, sizeof(*nr));

		if (nr == NULL) {
			pthread_mutex_unlock(&q->mtx);
			event_free(copy);
			buf_free(&json);
			return -1;
		}
		for (i = 0; i < q->count; i++)
			nr[i] = q->recs[(q->head + i) % q->cap];
		free(q->recs);
		q->recs = nr;
		q->cap = ncap;
		q->head = 0;
	}
	q->recs[(q->head + q->count) % q->cap].ev = copy;
	q->recs[(q->head + q->count) % q->cap].json_len = json.len;
	q->count++;
	q->pushed++;
	q->bytes += json.len;
	/* Over the budget: drop the oldest, count it for whoever had not
	 * delivered it yet. */
	while (q->bytes > q->max_bytes && q->count > 1) {
		for (i = 0; i < q->ndests; i++)
			if (q->dests[i].cursor == q->head_seq) {
				q->dests[i].cursor++;
				if (q->dests[i].peeked)
					q->dests[i].peeked--;
			}
		q->dropped++;
		pop_head(q);
		log_limited(LOG_WARN, "queue:budget", 60,
		    "queue over max_disk_buffer: dropping the oldest events");
	}
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mtx);
	buf_free(&json);
	return 0;
}

size_t
queue_push_many(struct queue *q, const struct event *const *evs, size_t n)
{
	return queue_push_each(q, evs, n);
}

int
queue_sync(struct queue *q)
{
	(void)q;	/* memory only: nothing more durable to reach */
	return 0;
}

int
queue_peek(struct queue *q, size_t d, size_t max_events, size_t max_bytes,
    int wait_ms, struct batch *out)
{
	struct mq_dest *dst;
	struct timespec until;
	uint64_t seq, end;
	size_t bytes = 0, n = 0;
	unsigned wk;

	/* no record numbers to name the batch by (batch.src): never shared */
	out->events = NULL;
	out->n = 0;
	out->src = out->seq0 = 0;
	abstime_in_ms(&until, wait_ms);
	pthread_mutex_lock(&q->mtx);
	wk = q->wakeups;
	while (d < q->ndests && q->dests[d].cursor >= q->head_seq + q->count &&
	    wait_ms > 0 && wk == q->wakeups)
		if (pthread_cond_timedwait(&q->cond, &q->mtx, &until) != 0)
			break;
	if (d >= q->ndests) {
		pthread_mutex_unlock(&q->mtx);
		return -1;
	}
	dst = &q->dests[d];
	end = q->head_seq + q->count;
	if (dst->cursor < q->head_seq)
		dst->cursor = q->head_seq;
	for (seq = dst->cursor; seq < end && n < max_events; seq++) {
		size_t jl = rec_at(q, seq)->json_len;

		if (n > 0 && bytes + jl > max_bytes)
			break;
		bytes += jl;
		n++;
	}
	if (n > 0) {
		out->events = calloc(n, sizeof(*out->events));
		if (out->events == NULL) {
			pthread_mutex_unlock(&q->mtx);
			return -1;
		}
		for (seq = dst->cursor; out->n < n; seq++) {
			out->events[out->n] = event_dup(rec_at(q, seq)->ev);
			if (out->events[out->n] == NULL)
				break;
			out->n++;
		}
	}
	dst->peeked = out->n;
	pthread_mutex_unlock(&q->mtx);
	return 0;
}

static int
advance(struct queue *q, size_t d, size_t n, bool poison, bool filtered)
{
	pthread_mutex_lock(&q->mtx);
	if (d < q->ndests) {
		struct mq_dest *dst = &q->dests[d];

		if (n > dst->peeked)
			n = (size_t)dst->peeked;
		dst->cursor += n;
		dst->peeked -= n;
		if (poison)
			dst->poison += n;
		else if (filtered)
			dst->filtered += n;
		else if (n > 0) {
			dst->acked += n;
			dst->last_ack_ms = now_ms();
		}
		trim(q);
	}
	pthread_mutex_unlock(&q->mtx);
	return 0;
}

int
queue_ack(struct queue *q, size_t d, size_t n)
{
	return advance(q, d, n, false, false);
}

int
queue_drop(struct queue *q, size_t d, size_t n)
{
	return advance(q, d, n, true, false);
}

int
queue_skip(struct queue *q, size_t d, size_t n)
{
	return advance(q, d, n, false, true);
}

void
queue_wakeup(struct queue *q)
{
	pthread_mutex_lock(&q->mtx);
	q->wakeups++;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mtx);
}

void
queue_stats(struct queue *q, struct queue_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&q->mtx);
	st->queued_events = q->count;
	st->queued_bytes = q->bytes;
	st->dropped_events = q->dropped;
	st->pushed_events = q->pushed;
	for (size_t i = 0; i < q->ndests; i++)
		st->dropped_poison += q->dests[i].poison;
	st->memory_only = true;
	st->ndests = q->ndests;
	pthread_mutex_unlock(&q->mtx);
}

int
queue_dest_stats(struct queue *q, size_t d, struct queue_dest_stats *out)
{
	int rc = -1;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->mtx);
	if (d < q->ndests) {
		const struct mq_dest *dst = &q->dests[d];

		snprintf(out->name, sizeof(out->name), "%s", dst->name);
		out->backlog_events = q->head_seq + q->count - dst->cursor;
		out->acked_events = dst->acked;
		out->last_ack_ms = dst->last_ack_ms;
		out->last_settle_ms = dst->last_ack_ms;
		out->dropped_poison = dst->poison;
		out->filtered = dst->filtered;
		rc = 0;
	}
	pthread_mutex_unlock(&q->mtx);
	return rc;
}

uint64_t
queue_backlog(struct queue *q, size_t d)
{
	uint64_t n = 0;

	pthread_mutex_lock(&q->mtx);
	if (d < q->ndests)
		n = q->head_seq + q->count - q->dests[d].cursor;
	pthread_mutex_unlock(&q->mtx);
	return n;
}

void
batch_free_events(struct batch *b)
{
	size_t i;

	for (i = 0; b->events != NULL && i < b->n; i++)
		event_free(b->events[i]);
	free(b->events);
	b->events = NULL;
	b->n = 0;
}
