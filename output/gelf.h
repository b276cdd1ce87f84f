/*
 * gelf: the GELF 1.1 sink (gelf.c).  Its keys and message formatter, for
 * the configuration's and the unit tests.
 */
#ifndef ESXWATCH_GELF_H
#define ESXWATCH_GELF_H

#include "../agent/config/config.h"
#include "../agent/event.h"
#include "../agent/lib/buf.h"

struct gelf_opts {
	char	*transport;		/* tcp | udp (shared with syslog) */
	int	 max_message_size;	/* UDP datagram, shared with syslog */
	char	*compress;		/* UDP: gzip | none (shared with http) */
};

struct gelf_opts *gelf_opts(const struct dest_conf *d);

/* Append ev's GELF 1.1 JSON (no framing); fallback_host when the event
 * has no hostname. */
int	 gelf_format(const struct event *ev, const char *fallback_host,
	    struct buf *out);

#endif
