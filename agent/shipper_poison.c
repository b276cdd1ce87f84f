/*
 * shipper_poison: poison isolation.  A batch the server rejects is split
 * in halves until the rejected event is alone; only it is dropped (the
 * queue counts it when the batch is settled), the rest is delivered.
 * But reject_limit events rejected alone in a row mean the destination
 * refuses everything (a broken proxy, a wrong URL): it is failing then,
 * and its events are kept.  Apart from shipper_dest.c because it decides
 * what a rejection costs, not how a batch travels.
 *
 * A sink that answers per event (sink.h, per_item: Elasticsearch's _bulk)
 * needs no splitting: its refused items are the poison, its items to
 * retry stay (the cursor stops at the first), and the delivered ones past
 * it are remembered (d->ahead) so that the retry sends only what was not
 * delivered.  Every poison event goes to the destination's dead_letter
 * file when it has one (agent/deadletter.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../output/sink.h"
#include "deadletter.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "shipper.h"
#include "shipper_int.h"

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

/* The poison event ev (refused for good: why) to the dead_letter file. */
static void
dead_letter(struct dest *d, const struct event *ev, const char *why)
{
	char err[256] = "";
	enum dl_result r;

	if (d->conf.dead_letter == NULL || d->conf.dead_letter[0] == '\0')
		return;
	r = deadletter_append(d->conf.dead_letter,
	    (int64_t)d->conf.dead_letter_max_kb * 1024, d->st.name,
	    d->st.proto, why, ev, now_ms(), err, sizeof(err));
	pthread_mutex_lock(&d->sh->mtx);
	if (r == DL_WRITTEN)
		d->st.dead_lettered++;
	else
		d->st.dead_letter_dropped++;
	pthread_mutex_unlock(&d->sh->mtx);
	if (r == DL_WRITTEN) {
		d->dl_full_told = false;
		return;
	}
	if (d->dl_full_told)
		return;
	d->dl_full_told = true;
	if (r == DL_FULL)
		log_warn("destination %s: dead_letter %s is full "
		    "(dead_letter_max_kb %ld): refused events are counted, "
		    "not written (dead_letter_dropped)", d->st.name,
		    d->conf.dead_letter, d->conf.dead_letter_max_kb);
	else
		log_error("destination %s: dead_letter: %s (refused events are "
		    "counted, not written)", d->st.name, err);
}

/* events[0] (event i of the batch in flight) is poison: dropped when the
 * batch is settled (counted by queue_drop(), once), kept in dead_letter. */
static void
poison_one(struct dest *d, size_t i, const char *why)
{
	const struct event *ev = d->batch0[i];

	d->rejects++;
	d->poison[i] = 1;
	d->rejected = true;
	log_error("destination %s: event rejected, dropped: %s (text: %.200s)",
	    d->st.name, why[0] ? why : "rejected", ev->text);
	dead_letter(d, ev, why[0] ? why : "rejected");
}

/* The error line told every event is rejected: the destination fails. */
static void
say_everything_rejected(struct dest *d)
{
	static const char pre[] = "every event rejected: ";
	size_t pl = sizeof(pre) - 1, len;

	if (d->ctx.error[0] == '\0')
		snprintf(d->ctx.error, sizeof(d->ctx.error), "rejected");
	len = strnlen(d->ctx.error, sizeof(d->ctx.error) - 1 - pl);
	memmove(d->ctx.error + pl, d->ctx.error, len);
	memcpy(d->ctx.error, pre, pl);
	d->ctx.error[pl + len] = '\0';
}

/*
 * A per_item sink's marks for events[0..n) (from batch offset off): what
 * an earlier answer settled (d->ahead), the rest pending.  True when
 * nothing is left to send.
 */
static bool
items_preset(struct dest *d, size_t off, size_t n)
{
	bool all = true;

	for (size_t j = 0; j < n; j++) {
		unsigned char m = off + j < d->ahead_n ? d->ahead[off + j] :
		    SINK_ITEM_PENDING;

		d->item[off + j] = m;
		d->item_why[off + j][0] = '\0';
		if (m == SINK_ITEM_REJECT)
			d->poison[off + j] = 1;	/* dead-lettered when told */
		if (m == SINK_ITEM_PENDING)
			all = false;
	}
	return all;
}

/*
 * A per_item answer for events[0..n) (from batch offset off): poison the
 * refused ones, remember what is settled past the first not delivered;
 * *done: the events delivered or dropped from the start.
 */
static enum send_result
items_settle(struct dest *d, size_t off, size_t n, size_t *done)
{
	size_t first = n, retry = 0, refused = 0;

	for (size_t j = 0; j < n; j++) {
		unsigned char *m = &d->item[off + j];

		if (*m == SINK_ITEM_REJECT && !d->poison[off + j]) {
			if (rejects_everything(d))
				*m = SINK_ITEM_RETRY;
			else {
				d->item_why[off + j][SINK_ITEM_WHY - 1] = '\0';
				poison_one(d, off + j, d->item_why[off + j]);
				refused++;
			}
		} else if (*m == SINK_ITEM_OK)
			d->rejects = 0;
		if (*m == SINK_ITEM_PENDING)
			*m = SINK_ITEM_RETRY;	/* the sink said nothing of it */
		if (*m == SINK_ITEM_RETRY) {
			retry++;
			if (first == n)
				first = j;
		}
	}
	for (size_t j = first; j < n; j++)
		d->ahead[off + j] = d->item[off + j] == SINK_ITEM_RETRY ?
		    SINK_ITEM_PENDING : d->item[off + j];
	if (d->ahead_n < off + n)
		d->ahead_n = off + n;
	*done = first;
	if (retry == 0)
		return SEND_OK;
	if (d->ctx.error[0] == '\0' || refused > 0) {
		char was[sizeof(d->ctx.error)];

		memcpy(was, d->ctx.error, sizeof(was));
		snprintf(d->ctx.error, sizeof(d->ctx.error), "%zu of %zu events "
		    "not accepted, to be sent again%s%.300s", retry, n,
		    was[0] ? ": " : "", was);
	}
	if (rejects_everything(d))
		say_everything_rejected(d);
	return SEND_RETRY;
}

/*
 * Send events[0..n); on a rejection split in halves until the poison
 * event is alone and drop only it.  *done is how many events from the
 * start were delivered or dropped (what may be acknowledged).
 */
enum send_result
ship_deliver(struct dest *d, struct event **events, size_t n, size_t *done,
    int *retry_after)
{
	/* what the queue said of the records, for a part of them too */
	struct batch b = { events, n, d->src,
	    d->src != 0 ? d->seq0 + (uint64_t)(events - d->batch0) : 0 };
	enum send_result r;
	size_t h, d1 = 0, d2 = 0;

	size_t off = (size_t)(events - d->batch0);

	*done = 0;
	*retry_after = 0;
	d->ctx.error[0] = '\0';
	d->ctx.item = NULL;
	d->ctx.item_why = NULL;
	if (d->sink->per_item) {
		if (items_preset(d, off, n)) {
			*done = n;	/* settled by an earlier answer */
			return SEND_OK;
		}
		d->ctx.item = d->item + off;
		d->ctx.item_why = d->item_why + off;
	}
	r = d->sink->send(&d->ctx, &b, retry_after);
	d->ctx.item = NULL;
	d->ctx.item_why = NULL;
	if (r == SEND_PARTIAL && d->sink->per_item)
		return items_settle(d, off, n, done);
	if (r == SEND_PARTIAL)
		r = SEND_RETRY;	/* a sink that cannot say */
	if (r == SEND_OK) {
		d->rejects = 0;
		*done = n;
		return SEND_OK;
	}
	if (r == SEND_RETRY)
		return SEND_RETRY;
	if (n == 1 && rejects_everything(d)) {
		say_everything_rejected(d);
		return SEND_RETRY;
	}
	if (n == 1) {
		poison_one(d, off, d->ctx.error);
		*done = 1;
		return SEND_OK;
	}
	if (ship_giving_up(d->sh))
		return SEND_RETRY;
	h = n / 2;
	r = ship_deliver(d, events, h, &d1, retry_after);
	if (r != SEND_OK) {
		*done = d1;
		return r;
	}
	if (ship_giving_up(d->sh)) {
		*done = h;
		return SEND_RETRY;
	}
	r = ship_deliver(d, events + h, n - h, &d2, retry_after);
	*done = h + d2;
	return r;
}

/* Room for the marks of an n-event batch (the per_item ones too). */
static int
marks_grow(struct dest *d, size_t n)
{
	unsigned char *p = realloc(d->poison, n);

	if (p == NULL)
		return -1;
	d->poison = p;
	if (d->sink != NULL && d->sink->per_item) {
		char (*w)[SINK_ITEM_WHY];

		p = realloc(d->item, n);
		if (p == NULL)
			return -1;
		d->item = p;
		p = realloc(d->ahead, n);
		if (p == NULL)
			return -1;
		if (n > d->poison_cap)
			memset(p + d->poison_cap, 0, n - d->poison_cap);
		d->ahead = p;
		w = realloc(d->item_why, n * sizeof(*w));
		if (w == NULL)
			return -1;
		d->item_why = w;
	}
	d->poison_cap = n;
	return 0;
}

/* Room for the poison marks of an n-event batch, cleared. */
int
ship_poison_reset(struct dest *d, struct event **events, size_t n)
{
	if (n > d->poison_cap && marks_grow(d, n) == -1)
		return -1;
	memset(d->poison, 0, n);
	d->batch0 = events;
	d->batch_n = n;
	return 0;
}

void
ship_ahead_consume(struct dest *d, size_t done)
{
	if (d->ahead_n <= done) {
		d->ahead_n = 0;
		return;
	}
	memmove(d->ahead, d->ahead + done, d->ahead_n - done);
	d->ahead_n -= done;
}

void
ship_poison_free(struct dest *d)
{
	free(d->poison);
	free(d->item);
	free(d->item_why);
	free(d->ahead);
	d->poison = d->item = d->ahead = NULL;
	d->item_why = NULL;
}
