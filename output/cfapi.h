/*
 * cfapi: the Log Insight ingestion API sink (cfapi.c).  Its encoder and
 * response parser, exposed for the unit tests, the fuzz target and the
 * bench.
 */
#ifndef ESXWATCH_CFAPI_H
#define ESXWATCH_CFAPI_H

#include <stddef.h>
#include <stdint.h>

#include "../agent/config/config.h"
#include "../agent/lib/buf.h"
#include "../agent/event.h"

/* The cfapi sink's keys (its rows in cfapi.c), a destination's block. */
struct cfapi_opts {
	struct kvlist	 headers;	/* shared with http */
	char		*compress;	/* gzip | none (shared with http) */
};
/* d's block (NULL for a destination the loader did not make). */
struct cfapi_opts *cfapi_opts(const struct dest_conf *d);

/* One cfapi event object {"text":..,"timestamp":..,"fields":[..]}. */
int	 cfapi_encode_event(const struct event *, struct buf *);
/* Parse a cfapi response body: status "ok" and the ingested count (-1 if
 * absent).  0 if status is "ok", -1 otherwise. */
int	 cfapi_parse_response(const char *body, size_t len, long long *ingested);
uint64_t cfapi_not_ingested(void);

/* The stable agent id used in the cfapi URL lives in agent/lib/agentid.h. */

#endif
