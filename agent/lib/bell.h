/*
 * bell: "something changed", from many threads to one that sleeps until
 * then (the status writer: it writes when the figures change, not on a
 * clock).  Ringing a bell that is already ringing costs one atomic load,
 * so it can be rung for every event.
 */
#ifndef ESXWATCH_BELL_H
#define ESXWATCH_BELL_H

#include <stdbool.h>
#include <stdint.h>

struct bell;

struct bell	*bell_new(void);
void		 bell_free(struct bell *);
/* Ring it (NULL: nothing). */
void		 bell_ring(struct bell *);
/* Until it rings or until (mono_ms(), 0: no limit): true if it rang.
 * Returns at once if it rang since the last bell_clear(). */
bool		 bell_wait(struct bell *, int64_t until);
/* Silence it: a ring from now on wakes the next bell_wait(). */
void		 bell_clear(struct bell *);

#endif
