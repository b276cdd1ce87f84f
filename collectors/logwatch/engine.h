/*
 * engine: the log-matching engine — lines in, events out.
 *
 * The rule catalogue and the configuration's rules, storm control (with
 * its counts kept beside a line source's positions), the twins of one
 * condition logged by vobd, hostd and vmkernel, event_marker folding, the
 * liagent parser, tags, whitelist/blacklist and exclude_fields.  Where the
 * lines come from is a line source's business: the file follower
 * (logwatch.c: files, rotation, bookmarks) today; the syslog listener and
 * the vm-support bundle reader give the engine their lines the same way.
 *
 * A log (struct lwe_log) is one filelog's settings, compiled; a stream
 * (struct lwe_stream) is one source of that log's lines — a followed file,
 * or a host's program — with the multi-line event it is assembling.  One
 * round: lwe_begin() with the emitter and the time, lwe_line() for every
 * line of every stream, lwe_flush() at a stream's end of input, and
 * lwe_emit() to hand the events held to the emitter.  Calls to one engine
 * never overlap (a collector's thread).
 */
#ifndef ESXWATCH_LW_ENGINE_H
#define ESXWATCH_LW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../agent/lib/buf.h"
#include "../emitbatch.h"

struct config;
struct filelog_conf;
struct kvstore;
struct lfilter;
struct parser;
struct rx;
struct lwe;

struct lwe_log {
	const struct filelog_conf *conf;
	bool		 has_marker;
	struct rx	*marker;	/* PCRE2 */
	const struct parser *parser;	/* filelog.NAME.parser, or NULL */
	struct lfilter	*white;		/* whitelist / blacklist, or NULL */
	struct lfilter	*black;
	uint64_t	 lines, matched;	/* since the driver last took them */
};

struct lwe_stream {
	struct lwe_log	*log;
	char		*origin;	/* esxwatch_file and filepath: the path */
	/*
	 * The host the lines are about, when it is not this one (collector
	 * mode, --analyze; docs/events.md): hostname, esxwatch_input
	 * ("syslog", "bundle") and esxwatch_peer go on every event of the
	 * stream.  NULL: the agent's own host.  The line source owns them.
	 */
	const char	*hostname;
	const char	*input;
	const char	*peer;
	/* appname of its events (a received program); NULL: the line's own
	 * program, else the filelog's name */
	const char	*appname;
	struct buf	 pending;	/* a multi-line event being assembled */
	bool		 pending_trunc;
	uint64_t	 lines, matched;	/* since the driver last took them */
};

/* What the engine did since it was made. */
struct lwe_counts {
	uint64_t	lines, alerts, suppressed, twins_dropped, filtered;
};

/* The rules (catalogue, then cfg's), storm control and parsers; NULL
 * (logged) when the rules cannot be compiled. */
struct lwe	*lwe_new(const struct config *cfg);
void		 lwe_free(struct lwe *);
size_t		 lwe_rules(const struct lwe *);
const struct lwe_counts *lwe_counts(const struct lwe *);

/* fc's parser, filters and event_marker (what does not compile is logged
 * and left out, never the log). */
void		 lwe_log_init(struct lwe *, struct lwe_log *, const struct filelog_conf *fc);
void		 lwe_log_fini(struct lwe_log *);
int		 lwe_stream_init(struct lwe_stream *, struct lwe_log *, const char *origin);
void		 lwe_stream_fini(struct lwe_stream *);

/* A round: events go to em, "now" (ms, wall clock) is now_ms for lines
 * without a time of their own, storm windows and the twins' memory. */
void		 lwe_begin(struct lwe *, struct emitter *em, int64_t now_ms);
/* One line of st (without its newline); truncated: cut at the cap. */
void		 lwe_line(struct lwe *, struct lwe_stream *st, const char *line,
		    size_t len, bool truncated);
/* The event st is assembling (event_marker), as it stands. */
void		 lwe_flush(struct lwe *, struct lwe_stream *st);
/* Hand the events held to the round's emitter (before a sync). */
void		 lwe_emit(struct lwe *);

/* Storm windows that ended (all: every one, at shutdown) reported as
 * summaries; how many. */
int		 lwe_storm_due(struct lwe *, bool all);
bool		 lwe_storm_dirty(const struct lwe *);
/* The storm counts as keys of kv (beside the source's positions, in the
 * same atomic save: a position never gets ahead of the counts of the
 * lines before it), and back.  lwe_storm_key(): is key one of them. */
void		 lwe_storm_save(struct lwe *, struct kvstore *kv);
void		 lwe_storm_load(struct lwe *, struct kvstore *kv);
bool		 lwe_storm_key(const char *key);

#endif
