/*
 * The sink interface (docs/architecture.md).
 *
 * A sink sends one batch to one destination and says how it went; it never
 * knows where events came from and never retries by itself — the shipper
 * owns retries, backoff and poison-event isolation.
 */
#ifndef ESXWATCH_SINK_H
#define ESXWATCH_SINK_H

#include "../agent/config/config.h"
#include "../agent/config/config_schema.h"
#include "../agent/event.h"

enum send_result {
	SEND_OK,	/* delivered (all of it) */
	SEND_RETRY,	/* not delivered; try again later (retry_after_s if > 0) */
	SEND_REJECT,	/* the destination refuses this batch: split it, drop the poison */
	SEND_PARTIAL	/* per_item sinks: sink_ctx.item says how each event went */
};

/*
 * A sink whose server answers per event (Elasticsearch's _bulk) says so
 * with .per_item; the shipper then hands it sink_ctx.item, one mark per
 * event of the batch.  On entry a mark other than SINK_ITEM_PENDING is an
 * event settled already (delivered, or refused for good, by an earlier
 * answer of a batch retried in part): the sink leaves it out of the
 * request.  Answering SEND_PARTIAL, the sink marks every event it sent:
 * SINK_ITEM_OK delivered, SINK_ITEM_RETRY not delivered (429, 5xx: the
 * shipper sends it again, alone or with the next batch, never the ones
 * already delivered), SINK_ITEM_REJECT refused for good, its reason in
 * sink_ctx.item_why (the shipper drops it as poison and writes it to the
 * dead_letter file).  Other answers cover the whole batch as before.
 */
enum sink_item {
	SINK_ITEM_PENDING,
	SINK_ITEM_OK,
	SINK_ITEM_RETRY,
	SINK_ITEM_REJECT
};
#define SINK_ITEM_WHY	200

struct agentid;

/*
 * A send that failed because no connection could be made at all (refused,
 * no route: nothing was sent, the destination is down) says so by this
 * prefix of sink_ctx.error.  The shipper probes such a destination again
 * sooner than one that failed later in the exchange (agent/shipper_dest.c,
 * backoff_ms(): a refused connection costs the receiver nothing).
 */
#define SINK_ERR_CONNECT	"cannot connect to "

struct sink_ctx {
	const char		*name;		/* destination name: "server" or NAME */
	const struct dest_conf	*conf;
	const struct config	*cfg;
	struct agentid		*agentid;	/* the host's identity (agent/lib/agentid.h) */
	void			*priv;		/* the sink's own */
	char			 error[512];	/* last error, human-readable */
	/* Events the server accepted but said it did not ingest (cfapi's
	 * "ingested" below the count sent), added during send(): the
	 * shipper moves them to the destination's counters after it. */
	uint64_t		 not_ingested;
	/*
	 * The sink's state common to its destinations of one configuration
	 * (sink.group_new), NULL when it keeps none or has one destination.
	 */
	void			*group;
	/* per_item sinks (above): one mark and one reason per event of the
	 * batch being sent, the shipper's; NULL for other sinks */
	unsigned char		*item;
	char			(*item_why)[SINK_ITEM_WHY];
	/* Events sent again, maybe delivered twice, added during send()
	 * (splunk_hec: a request whose acknowledgement never came, resent):
	 * the shipper counts them (resent_events). */
	uint64_t		 resent;
};

struct sink {
	const char	*name;		/* cfapi, syslog, http, file */
	enum dest_proto	 proto;
	int		(*open)(struct sink_ctx *);
	enum send_result (*send)(struct sink_ctx *, const struct batch *, int *retry_after_s);
	void		(*close)(struct sink_ctx *);
	/*
	 * How large the sink's encoding of a batch is, in percent of the
	 * flat JSON the shipper measures batches by (0 = 100).  The shipper
	 * shrinks batch.max_bytes by it so that one batch is one request:
	 * a batch split over two requests is resent whole when the second
	 * fails, and its first half would arrive twice.
	 */
	unsigned	 encoded_pct;
	/* The server answers per event: SEND_PARTIAL and sink_ctx.item. */
	bool		 per_item;
	/*
	 * Optional: state the sink's destinations of one configuration have
	 * in common (cfapi: the gzip bodies of the last batches, encoded
	 * once for all, struct batch.src).  With two or more destinations of
	 * the sink, the shipper makes it before their threads start, hands
	 * it to each in sink_ctx.group and frees it once all have ended: a
	 * reload's new configuration gets a new one.  NULL: out of memory,
	 * nothing shared.
	 */
	void		*(*group_new)(const struct config *);
	void		(*group_free)(void *);
	/* The protocol's default ports (dest_port), plain and with TLS. */
	int		 port, tls_port;
	/*
	 * Configuration (agent/config/config_schema.h): the sink's own keys,
	 * rows on its options block of opts_size bytes, which the schema
	 * walker allocates, defaults, prints and frees for every destination
	 * (sink_opts() reads it).  A key two sinks declare (format, headers,
	 * compress) is one key to the user: both rows must agree on type,
	 * choices and checks; the first sink's row reads and reports, the
	 * other block gets a copy (agent/config/config.c, dest_key_share()).
	 * finish() checks what spans keys once a destination is read.
	 */
	const struct cfg_key	*keys;
	size_t			 nkeys;
	size_t			 opts_size;
	void		(*finish)(const struct cfg_finish *);
	/*
	 * Optional: whether the destination has somewhere to send (http: a
	 * url or a host name; file: always).  NULL: when it has a host
	 * name.  A primary with nowhere goes to stdout (config_resolve).
	 */
	bool		(*has_target)(const struct dest_conf *);
};

/* At most this many sinks, protocol numbers below SINK_PROTO_MAX. */
#define SINK_MAX	16
#define SINK_PROTO_MAX	128

const struct sink	*sink_find(enum dest_proto);
const struct sink	*sink_find_name(const char *name);
/* The registry in order: the built-in rows, then registered ones. */
size_t			 sink_count(void);
const struct sink	*sink_at(size_t i);
/*
 * Add a sink that is not in the built-in table (a test build's sink):
 * before the first configuration is loaded.  0, or -1 when its name or
 * protocol number is taken or the registry is full.
 */
int			 sink_register(const struct sink *);
/* A destination's options block for sk (NULL when it has none: a
 * destination the loader did not make, as tests do). */
void			*sink_opts(const struct dest_conf *, const struct sink *sk);
/*
 * The choices of the keys two sinks share, one list each so both rows
 * give the same message: format (syslog rfc*, http json_*; which fits is
 * the sink's finish hook) and compress (cfapi, http).
 */
extern const char *const sink_format_choices[];
extern const char *const sink_compress_choices[];
/* A destination's port, or its sink's default (plain or TLS). */
int			 dest_port(const struct dest_conf *);
/* The sink name of a protocol number, or "unknown". */
const char		*dest_proto_name(enum dest_proto);

#endif
