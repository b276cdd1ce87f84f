/*
 * bell: a flag and a condition variable (see bell.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "bell.h"
#include "clock.h"

struct bell {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 rung;		/* __atomic; written under mu */
};

struct bell *
bell_new(void)
{
	struct bell *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	pthread_mutex_init(&b->mu, NULL);
	cond_init_mono(&b->cv);
	return b;
}

void
bell_free(struct bell *b)
{
	if (b == NULL)
		return;
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b);
}

void
bell_ring(struct bell *b)
{
	if (b == NULL || __atomic_load_n(&b->rung, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&b->mu);
	__atomic_store_n(&b->rung, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

bool
bell_wait(struct bell *b, int64_t until)
{
	struct timespec ts;
	bool r;

	pthread_mutex_lock(&b->mu);
	while (!b->rung) {
		int64_t left = until - mono_ms();

		if (until != 0 && left <= 0)
			break;
		if (until == 0)
			pthread_cond_wait(&b->cv, &b->mu);
		else {
			abstime_in_ms(&ts, left);
			(void)pthread_cond_timedwait(&b->cv, &b->mu, &ts);
		}
	}
	r = b->rung != 0;
	pthread_mutex_unlock(&b->mu);
	return r;
}

void
bell_clear(struct bell *b)
{
	pthread_mutex_lock(&b->mu);
	__atomic_store_n(&b->rung, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&b->mu);
}
