/*
 * spoolbatch: the batches spool_peek() hands out (spool.h): events read
 * back from the spool, owned by the batch until spool_batch_free().
 */
#include <stdlib.h>

#include "../event.h"
#include "spool.h"

int
spool_batch_add(struct batch *b, struct event *ev, size_t *cap)
{
	if (b->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct event **n = realloc(b->events, ncap * sizeof(*n));

		if (n == NULL)
			return -1;
		b->events = n;
		*cap = ncap;
	}
	b->events[b->n++] = ev;
	return 0;
}

void
spool_batch_free(struct batch *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; b->events != NULL && i < b->n; i++)
		event_free(b->events[i]);
	free(b->events);
	b->events = NULL;
	b->n = 0;
}
