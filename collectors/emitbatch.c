/*
 * emitbatch: see emitbatch.h.
 */
#include "emitbatch.h"


void
emit_batch_add(struct emit_batch *b, struct emitter *em, struct event *ev)
{
	if (b->n == EMIT_BATCH_MAX)
		emit_batch_flush(b, em);
	b->v[b->n++] = ev;
}

void
emit_batch_flush(struct emit_batch *b, struct emitter *em)
{
	if (b->n == 0)
		return;
	(void)emit_many(em, b->v, b->n);
	b->n = 0;
}

void
emit_batch_discard(struct emit_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		event_free(b->v[i]);
	b->n = 0;
}
