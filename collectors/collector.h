/*
 * The collector interface (docs/architecture.md).
 *
 * A collector observes one part of the host and emits events; it never
 * knows where they go.  Built-in collectors are listed in one static table
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

#include "../agent/config/config.h"
#include "../agent/config/config_schema.h"
#include "../agent/event.h"
#include "../agent/lib/kvstore.h"
#include "../agent/lib/platform.h"

struct emitter;
struct status_snap;

/*
 * The agent's figures about itself (queue, delivery, process: agent/status.h),
 * for the agent collector: handed in by main, never read from globals.
 */
struct logstats;
struct bell;

struct agent_figures {
	void	(*collect)(void *arg, struct status_snap *out);
	void	 *arg;
	/* logwatch publishes its per-filelog figures here (collectors/logwatch/logstats.h);
	 * NULL: nowhere */
	struct logstats *filelogs;
	/* rung for every event queued (the status writer); NULL: none */
	struct bell	*changed;
};

struct collector_ctx {
	const char			*name;
	const struct config		*cfg;
	const struct collector_conf	*conf;	/* its collectors.NAME section */
	enum platform			 platform;
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
	/* Keys of its own in collectors.NAME (none for most collectors). */
	const struct cfg_key	*keys;
	size_t			 nkeys;
	size_t			 opts_size;
};

/* Hand an event to the agent (takes ownership, even on error). */
int		 emit(struct emitter *, struct event *);
/* emit() for n events at once, queued in order with as few queue writes
 * as it can (queue_push_many()); frees every one (NULLs count as failed).
 * Returns how many could not be queued (0 = all). */
size_t		 emit_many(struct emitter *, struct event **evs, size_t n);
/* Returns 0 once everything emitted so far is safely queued (durable with
 * the spool): call it before persisting a position such as a log bookmark. */
int		 emit_sync(struct emitter *);

/* A new event with esxwatch_kind and esxwatch_severity set.
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
