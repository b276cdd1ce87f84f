/*
 * The collector interface (docs/architecture.md).
 *
 * A collector observes one part of a host and emits events; it never
 * knows where they go, nor which kind of host it observes: it asks the
 * host in its context (ctx->host, collectors/host/host.h) for its facts
 * and never runs a tool, reads /sys or probes a mount itself.  Built-in collectors are listed in one static table
 * (collectors/registry.c); adding one is adding a file and a table row.
 * Its configuration section collectors.NAME exists from that row alone:
 * the common keys (enabled, interval = .default_interval, include,
 * exclude, timeout) and the collector's own rows (.keys, in its options
 * block, ctx->conf->opts), agent/config/config_schema.h.
 *
 * The agent calls init() once (and again after a reload), collect() every
 * interval on the collector's own thread (calls to one collector never
 * overlap; different collectors run concurrently, so a collector keeps no
 * mutable state outside its ctx), fini() on shutdown or reload.  The
 * agent fills in hostname, appname (default "esxwatch"),
 * esxwatch_collector, esxwatch_version and the tags of every emitted event;
 * the collector sets esxwatch_kind and esxwatch_severity (ev_new() does).
 */
#ifndef ESXWATCH_COLLECTOR_H
#define ESXWATCH_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "../agent/config/config.h"
#include "../agent/config/config_schema.h"
#include "../agent/event.h"
#include "../agent/lib/kvstore.h"
#include "../agent/lib/platform.h"

struct emitter;
struct host;

/*
 * The agent's figures about itself, as the agent and diagnosis collectors
 * read them: main fills them from the status snapshot (agent/status.h) and
 * from the host layer; counters are cumulative since start.
 */
enum agent_dest_state { AGENT_DEST_IDLE, AGENT_DEST_DELIVERING, AGENT_DEST_FAILING };

#define AGENT_MAX_DESTS		64
struct agent_dest {
	char			 name[128];
	char			 proto[16];
	enum agent_dest_state	 state;
	uint64_t		 backlog_events;
	uint64_t		 dropped_budget, dropped_poison;
	int64_t			 last_success_ms;	/* 0 = never */
	char			 last_error[512];
};

struct agent_snap {
	bool		 have_spool, memory_only;
	uint64_t	 queued_events, queued_bytes, sent_events, failed_sends;
	uint64_t	 dropped_budget, dropped_poison, dropped_corrupt;
	int64_t		 counts_since_ms;	/* the dropped counts: since */
	uint64_t	 not_ingested;
	uint64_t	 rss_kb, cpu_ms;
	uint64_t	 parse_gaps;	/* tool output lines not understood */
	uint64_t	 diag_memory_bytes;	/* the diagnosis stage's; 0: none */
	size_t		 ndests;
	struct agent_dest dests[AGENT_MAX_DESTS];
};

/*
 * What main hands the collectors (collector_ctx.figures), never read from
 * globals.
 */
struct bell;
struct diag;

struct agent_figures {
	/* the figures now; 0, or -1 when they cannot be had */
	int	(*collect)(void *arg, struct agent_snap *out);
	void	 *arg;
	/*
	 * A collector's own figures for the status snapshot (the status
	 * file, --status, /metrics): its picture pic under a name, handed to
	 * the table main keeps for that name across reloads (pic's type is
	 * the publisher's and that table's business).  0, or -1 when no
	 * table has that name.  NULL: figures are kept nowhere.
	 */
	int	(*publish)(void *arg, const char *name, const void *pic);
	/* rung for every event queued (the status writer); NULL: none */
	struct bell	*changed;
	/* the diagnosis stage (agent/diagnosis/diagnose.h): made by main,
	 * fed every event by the scheduler, driven by the diagnosis
	 * collector; NULL: collectors.diagnosis is off */
	struct diag	*diag;
};

struct collector_ctx {
	const char			*name;
	const struct config		*cfg;
	const struct collector_conf	*conf;	/* its collectors.NAME section */
	enum platform			 platform;	/* host->platform */
	/* Where its facts come from (collectors/host/host.h): ask it,
	 * never the machine directly. */
	struct host			*host;
	/* Previous observations, persisted by the agent in
	 * storage.directory/state/NAME.kv after every collect(). */
	struct kvstore			*state;
	const struct agent_figures	*figures;	/* NULL: none */
	void				*priv;	/* the collector's own */
};

struct collector {
	const char	*name;		/* as in agent.yaml */
	int		 default_interval;	/* seconds, when the config has none */
	int		(*init)(struct collector_ctx *);
	/*
	 * Once per interval.  Return 0 when done, 1 to be called again soon
	 * (after the other due collectors had their turn) — for collectors
	 * that work through slow commands one at a time — or -1 on error
	 * (already logged).
	 */
	int		(*collect)(struct collector_ctx *, struct emitter *);
	void		(*fini)(struct collector_ctx *);
	/* Its events may name the collector they are from (the receiver:
	 * alerts on received lines are logwatch's, CONTRACT §5); else the
	 * agent writes this collector's name on every one. */
	bool		 names_collector;
	/* Keys of its own in collectors.NAME (none for most collectors). */
	const struct cfg_key	*keys;
	size_t			 nkeys;
	size_t			 opts_size;
};

/*
 * Where a collector's events go: the handle collect() is given, carrying
 * the operations of whoever made it (the agent's scheduler, a test's
 * own).  A collector calls the wrappers below and knows nothing more.
 */
struct emitter_ops {
	int	(*emit)(struct emitter *, struct event *);
	size_t	(*emit_many)(struct emitter *, struct event **evs, size_t n);
	int	(*sync)(struct emitter *);
};
struct emitter {
	const struct emitter_ops	*ops;
	void				*arg;	/* the maker's own */
};

/* Hand an event to the agent (takes ownership, even on error). */
static inline int
emit(struct emitter *em, struct event *ev)
{
	return em->ops->emit(em, ev);
}

/* emit() for n events at once, queued in order with as few queue writes
 * as it can (queue_push_many()); frees every one (NULLs count as failed).
 * Returns how many could not be queued (0 = all). */
static inline size_t
emit_many(struct emitter *em, struct event **evs, size_t n)
{
	return em->ops->emit_many(em, evs, n);
}

/* Returns 0 once everything emitted so far is safely queued (durable with
 * the spool): call it before persisting a position such as a log bookmark. */
static inline int
emit_sync(struct emitter *em)
{
	return em->ops->sync(em);
}

/* A new event with esxwatch_kind and esxwatch_severity set
 * (collectors/collector.c).
 * kind: sample | change | alert | status; severity: info | warning | error | critical */
struct event	*ev_new(const char *kind, const char *severity, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

/* The registry. */
/* The keys every collectors.NAME section has (collector_keys.c). */
extern const struct cfg_key collector_keys[];
extern const size_t ncollector_keys;
const struct collector	*collector_find(const char *name);
extern const struct collector *const collectors_all[];	/* NULL-terminated */
/* collectors_all[] then registered rows (the configuration walks these). */
size_t			 collector_count(void);
const struct collector	*collector_at(size_t i);
/*
 * Add a collector that is not in the built-in table (a test build's), so
 * that its section is known to the configuration; before the first load.
 * 0, or -1 when the name is taken or the table is full.
 */
int			 collector_register(const struct collector *);

#endif
