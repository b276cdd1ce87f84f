/*
 * diagrules: the diagnosis rules, one table (docs/loginsight.md explains
 * each in plain words; agent/diagnosis/liexport.c turns each row into a Log Insight
 * alert).  A rule looks at events as they are observed and, when the
 * stage is evaluated, says what it concluded.
 */
#ifndef ESXWATCH_DIAGRULES_H
#define ESXWATCH_DIAGRULES_H

#include <stddef.h>
#include <stdint.h>

#include "diagstate.h"

struct diag_rule {
	const char	*name;		/* esxwatch_diagnosis */
	const char	*title;		/* the Log Insight alert's name */
	const char	*severity;
	const char	*meaning;	/* what the alert means, one sentence */
	const char	*next_step;	/* what to look at next */
	/* Called for every observed event (under the stage's lock). */
	void		(*observe)(struct diag *, const struct event *,
			    const char *collector, const char *kind);
	/* Called when the stage is evaluated; returns alerts written. */
	size_t		(*evaluate)(struct diag *, int64_t now_ms,
			    struct diag_alert *out, size_t max);
};

extern const struct diag_rule	diag_rules[];
extern const size_t		diag_nrules;

/* The silent-host rule's delivery check (diag_delivery()). */
size_t	diagrule_silent(struct diag *, int64_t now_ms, const struct diag_dest *,
	    size_t n, struct diag_alert *out, size_t max);

#endif
