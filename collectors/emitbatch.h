/*
 * emitbatch: events a collector makes in a run (the lines of one read)
 * held briefly and handed to emit_many() together, so the queue writes
 * them at once.  Nothing held counts as queued: the collector flushes
 * before it syncs the queue or persists anything that says "done".
 */
#ifndef ESXWATCH_EMITBATCH_H
#define ESXWATCH_EMITBATCH_H

#include <stddef.h>

#include "collector.h"

#define EMIT_BATCH_MAX	64

struct emit_batch {
	struct event	*v[EMIT_BATCH_MAX];
	size_t		 n;
};

/* Hold ev (NULL is counted as a failed emit); flushes when full. */
void	emit_batch_add(struct emit_batch *, struct emitter *, struct event *);
/* emit_many() what is held. */
void	emit_batch_flush(struct emit_batch *, struct emitter *);
/* Free what is held without queuing it (teardown with no emitter). */
void	emit_batch_discard(struct emit_batch *);

#endif
