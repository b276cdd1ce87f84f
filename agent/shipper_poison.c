/*
 * shipper_poison: poison isolation.  A batch the server rejects is split
 * in halves until the rejected event is alone; only it is dropped (the
 * queue counts it when the batch is settled), the rest is delivered.
 * But reject_limit events rejected alone in a row mean the destination
 * refuses everything (a broken proxy, a wrong URL): it is failing then,
 * and its events are kept.  Apart from shipper_dest.c because it decides
 * what a rejection costs, not how a batch travels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../output/sink.h"
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

/* Room for the poison marks of an n-event batch, cleared. */
int
ship_poison_reset(struct dest *d, struct event **events, size_t n)
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
