/*
 * dfilter: a destination's filter, liagent's [server] filter (docs/outputs.md
 * "Filtering a destination"):
 *
 *	filter = {filelog; nsx-syslog; pri_severity <= 6}, {agent; ; }
 *
 * A list of clauses {type; name; expression}.  An event goes to the
 * destination when one clause keeps it: its type matches (empty or "*":
 * any; "filelog": a log line, a logwatch event; else the name of the
 * esxwatch collector that made it), the name regex matches the whole
 * name (the filelog's, or the collector's; empty: any) and the expression
 * (agent/lib/lfilter.h; empty: every event) is true.  An expression that
 * cannot be evaluated (a field the event lacks) does not keep it, as a
 * whitelist.  No clause at all: every event goes.
 *
 * The configuration keeps the clauses as written (struct dest_filters,
 * config.h); the shipper compiles them once per destination.
 */
#ifndef ESXWATCH_DFILTER_H
#define ESXWATCH_DFILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "../event.h"

/*
 * Append the clauses of liagent's string s to *out.  offs (may be NULL)
 * receives, per clause appended, the byte offsets in s of its type, name
 * and expression (3 each; the caller frees it).  0, or -1 with a message
 * and the offset of the problem (nothing appended).  "" is no clause.
 */
int		 dfilter_parse(const char *s, struct dest_filters *out,
		    size_t **offs, char *err, size_t errlen, size_t *erroff);
void		 dfilter_clear(struct dest_filters *);
void		 dfilter_add(struct dest_filters *, const char *type,
		    const char *name, const char *expr);

struct dfilter;

/*
 * Compile; NULL when there is no clause (every event goes) or on an
 * error: *bad is then the clause, *part 1 (name) or 2 (expression), a
 * message in err and *erroff its offset in that part.
 */
struct dfilter	*dfilter_compile(const struct dest_filters *, char *err,
		    size_t errlen, size_t *bad, int *part, size_t *erroff);
void		 dfilter_free(struct dfilter *);
/* Does the destination take ev? */
bool		 dfilter_keeps(const struct dfilter *, const struct event *);

#endif
