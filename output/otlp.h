/*
 * otlp: the OTLP/HTTP logs sink (otlp.c).  Its keys and encoder, for the
 * configuration's and the unit tests.
 */
#ifndef ESXWATCH_OTLP_H
#define ESXWATCH_OTLP_H

#include <stdbool.h>
#include <stddef.h>

#include "../agent/config/config.h"
#include "../agent/event.h"
#include "../agent/lib/buf.h"

struct otlp_opts {
	char		*url;		/* the full endpoint; "": http(s)://hostname:port/v1/logs */
	char		*encoding;	/* json (protobuf: refused, not built in) */
	struct kvlist	 headers;	/* shared with http and cfapi */
	char		*compress;	/* gzip | none (shared with http and cfapi) */
};

/* d's block (NULL for a destination the loader did not make). */
struct otlp_opts *otlp_opts(const struct dest_conf *d);

/* esxwatch_severity -> SeverityNumber (0 for NULL). */
int	 otlp_severity_number(const char *severity);
/* s is a canonical decimal int64 (sent as intValue). */
bool	 otlp_is_int(const char *s);
/* Append the ExportLogsServiceRequest JSON of b. */
int	 otlp_encode(const struct batch *b, struct buf *out);

#endif
