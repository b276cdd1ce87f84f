/*
 * clock: monotonic time and timed waits (see clock.h).
 */
#include "clock.h"

int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int r;

	if (pthread_condattr_init(&a) != 0)
		return -1;
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	r = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return r == 0 ? 0 : -1;
}

void
abstime_in_ms(struct timespec *ts, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
