/*
 * scheduler: the collecting side.  Runs each enabled collector at its
 * interval, enriches what they emit and hands it to the queue.
 */
#ifndef ESXWATCH_SCHEDULER_H
#define ESXWATCH_SCHEDULER_H

#include <signal.h>

#include "config.h"
#include "queue.h"

struct scheduler;
struct agent_figures;

struct scheduler *sched_start(const struct config *, struct queue *);
/* The same, with the agent's own figures for the collectors' ctx
 * (collector_ctx.figures; main hands them in). */
struct scheduler *sched_start_with(const struct config *, struct queue *,
		    const struct agent_figures *);
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
