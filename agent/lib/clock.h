/*
 * clock: monotonic time and timed waits that a wall-clock step (NTP, an
 * admin setting the date) cannot stretch or cut short.
 */
#ifndef ESXWATCH_CLOCK_H
#define ESXWATCH_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC (for intervals, deadlines, backoff). */
int64_t	mono_ms(void);
/* A condition variable whose timed waits run on CLOCK_MONOTONIC. */
int	cond_init_mono(pthread_cond_t *);
/* The absolute CLOCK_MONOTONIC time ms from now, for pthread_cond_timedwait
 * on a cond_init_mono() condition variable. */
void	abstime_in_ms(struct timespec *, int64_t ms);

#endif
