/*
 * loki: the Grafana Loki push sink (loki.c).  Its keys and encoder, for
 * the configuration's and the unit tests.
 */
#ifndef ESXWATCH_LOKI_H
#define ESXWATCH_LOKI_H

#include <stdbool.h>
#include <stddef.h>

#include "../agent/config/config.h"
#include "../agent/event.h"
#include "../agent/lib/buf.h"

struct loki_opts {
	char		*url;		/* the full endpoint; "": http(s)://hostname:port/loki/api/v1/push */
	char		*tenant;	/* X-Scope-OrgID, "" none */
	bool		 structured_metadata;	/* else the line is the event's JSON */
	struct kvlist	 headers;	/* shared with http and cfapi */
	char		*compress;	/* gzip | none (shared with http and cfapi) */
};

struct loki_opts *loki_opts(const struct dest_conf *d);

/* Is this field one of the stream labels? */
bool	 loki_is_label(const char *name);
/* Append the push body of b. */
int	 loki_encode(const struct batch *b, bool metadata, struct buf *out);

#endif
