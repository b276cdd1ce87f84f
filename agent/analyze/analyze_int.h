/*
 * analyze's own parts: the run's state (analyze.c) and the report writers
 * (report.c).
 */
#ifndef ESXWATCH_ANALYZE_INT_H
#define ESXWATCH_ANALYZE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../collectors/collector.h"
#include "../../collectors/logwatch/engine.h"
#include "../lib/buf.h"
#include "bundle.h"

#define AN_MAX_EVENTS	1000000	/* kept for the report; past it a gap */
#define AN_MAX_GAPS	10000

struct an_log {
	char		*file;
	uint64_t	 lines, matched;
	int64_t		 first, last;	/* ms; 0 = no dated line */
};

struct an {
	const struct config	*cfg;
	const char		*path;
	struct bundle		 b;
	struct lwe		*eng;
	struct lwe_log		*logs;		/* per filelog, then per program */
	struct filelog_conf	*fcs;		/* the logs' settings */
	size_t			 nlogs, caplogs;
	struct lwe_stream	 st;
	bool			 st_open;
	struct an_log		*cur;
	int64_t			 now;		/* the current line's time, ms */
	int64_t			 last_due;
	uint64_t		 since_emit;
	int64_t			 start_ms;	/* wall clock at the start */
	const char		*collector;	/* whose events come now */
	bool			 from_log;
	struct emitter		 em;
	struct event		**ev;
	size_t			 nev, capev;
	uint64_t		 dropped;
	char			**gaps;
	size_t			 ngaps, capgaps;
	uint64_t		 gaps_dropped;
	struct an_log		*logv;
	size_t			 nlogv, caplogv;
	char			 hostname[256];
	char			 version[64];
	char			 build[64];
	char			 product[160];
	long long		 uptime_s;	/* -1 unknown */
	int64_t			 time_ms;	/* the bundle's time */
	bool			 tty;
	uint64_t		 lines_total;
};

void	an_gap(struct an *, const char *line);
/* The report as JSON (CONTRACT §5) into out. */
int	an_report_json(const struct an *, struct buf *out);
/* The text report. */
int	an_report_text(const struct an *, struct buf *out);
/* Whether an event is a finding of severity error or critical. */
bool	an_is_serious(const struct event *);
/* The findings: alerts (every collector) and changes. */
bool	an_is_finding(const struct event *);

#endif
