/*
 * diagnose: the diagnosis stage (docs/architecture.md, docs/loginsight.md).
 *
 * A processing stage between the collectors and the queue, the way a
 * Fluent Bit filter sits between inputs and outputs.  main makes it (from
 * collectors.diagnosis) and hands it to the scheduler as its emit filter,
 * which shows it every enriched event (diag_on_event(), read-only: it
 * looks at event fields, never at a collector's internals); it keeps a short window of
 * recent observations per entity (NIC, device, datastore, destination) in
 * fixed-size tables, and its rules (agent/diagnosis/diagrules.c, one table) turn
 * combinations of observations into alerts naming the likely cause and the
 * next step.  The stage emits its own events through the `diagnosis`
 * collector (collectors/diagnosis.c), which also answers the questions
 * rules ask the host (which uplinks carry traffic to an NFS server, what
 * partition table a disk has) outside the stage's lock.
 *
 * Memory is bounded: every table has a fixed number of entries and every
 * entry a fixed number of observations; a full table forgets its least
 * recently seen entity.  diag_memory_bytes() is the whole of it.
 */
#ifndef ESXWATCH_DIAGNOSE_H
#define ESXWATCH_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diagstate.h"

void	diag_conf_defaults(struct diag_conf *);

struct diag;

/* conf NULL: the defaults (collectors.diagnosis's options block is a
 * struct diag_conf, collectors/diagnosis.c). */
struct diag	*diag_new(const struct diag_conf *);
void		 diag_free(struct diag *);
/* Look at one event (thread-safe, cheap, never blocks on the host). */
void		 diag_observe(struct diag *, const struct event *);
/* The questions the rules wait for; returns how many (<= max). */
size_t		 diag_wants(struct diag *, struct diag_want *out, size_t max);
/* The answer: ok = false when the host could not tell (the rule then says
 * "on this host" — another host's alert names that host, "on esx07" —
 * / "partition table unknown").  a, b: uplinks and the path
 * ("vmk1, port group NFS on vSwitch1"), or the partition table. */
void		 diag_answer(struct diag *, const struct diag_want *, bool ok,
		    const char *a, const char *b);
/* Run the rules; the alerts found are copied to out.  Returns the count. */
size_t		 diag_evaluate(struct diag *, int64_t now_ms,
		    struct diag_alert *out, size_t max);
/* The silent-host rule: the destinations' delivery state now. */
size_t		 diag_delivery(struct diag *, int64_t now_ms,
		    const struct diag_dest *, size_t n, struct diag_alert *out,
		    size_t max);
size_t		 diag_memory_bytes(const struct diag *);

/* diag_observe() as an emit filter's on_event (agent/scheduler.h): arg is
 * the stage.  Under the stage's own lock, held for the rules' look only. */
void		 diag_on_event(void *arg, const struct event *);

#endif
