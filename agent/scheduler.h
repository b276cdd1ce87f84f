/*
 * scheduler: the collecting side.  Runs each enabled collector at its
 * interval, enriches what they emit and hands it to the queue.
 */
#ifndef ESXWATCH_SCHEDULER_H
#define ESXWATCH_SCHEDULER_H

#include <signal.h>
#include <stdint.h>

#include "config/config.h"
#include "spool/queue.h"

struct scheduler;
struct agent_figures;
struct event;

/*
 * A collector's figures since start (--status, /metrics).  A run is one
 * round: a collector that works one device per collect() call (returns 1)
 * completes a run when it returns 0 or -1; its duration is the round's.
 */
#define SCHED_MAX_COLLECTORS	32
struct sched_collector_stats {
	char		name[32];
	uint64_t	runs;			/* rounds completed */
	uint64_t	errors;			/* collect() calls that failed */
	uint64_t	last_duration_ms;	/* the last round's wall time */
	int64_t		last_run_ms;		/* its end, wall clock; 0 = never */
};

/*
 * The per-collector figures, kept by name across schedulers: main makes
 * one and hands it to every sched_start_with(), so a reload does not
 * reset them; the status writer reads them while schedulers come and go.
 */
struct sched_totals;
struct sched_totals *sched_totals_new(void);
void		 sched_totals_free(struct sched_totals *);
/* A copy of every collector's figures (at most max); returns the count. */
size_t		 sched_totals_get(struct sched_totals *,
		    struct sched_collector_stats *, size_t max);

/*
 * A stage every enriched event passes on its way to the queue: main hands
 * in the diagnosis stage (agent/diagnosis/diagnose.h).  on_event looks at
 * the event, never changes or keeps it, and does its own locking: it is
 * called on every collector's thread, so it has to be cheap.
 */
struct emit_filter {
	void	(*on_event)(void *arg, const struct event *);
	void	 *arg;
};

struct scheduler *sched_start(const struct config *, struct queue *);
/* The same, with the agent's own figures for the collectors' ctx
 * (collector_ctx.figures; main hands them in), the totals the runs are
 * counted in and the emit filter (copied; its arg must outlive the
 * scheduler).  Any of them may be NULL. */
struct scheduler *sched_start_with(const struct config *, struct queue *,
		    const struct agent_figures *, struct sched_totals *,
		    const struct emit_filter *);
/* Run every collector once, to completion (--once); stops early once
 * *stop becomes non-zero. */
void	sched_run_once(struct scheduler *, volatile sig_atomic_t *stop);
/* Start a thread per collector and run until *stop or *reload becomes
 * non-zero; then stop and join them (collectors stay initialised).
 * wake_fd: the read end of a pipe the signal handlers write a byte to
 * (the loop sleeps until then, no polling); -1: look at the flags four
 * times a second. */
void	sched_loop(struct scheduler *, volatile sig_atomic_t *stop,
	    volatile sig_atomic_t *reload, int wake_fd);
/* fini() every collector and persist its state. */
void	sched_stop(struct scheduler *);

#endif
