/*
 * syslog: the syslog sink (syslog.c).  Its message formatter, exposed for
 * the unit tests and the fuzz target.
 */
#ifndef ESXWATCH_SYSLOG_H
#define ESXWATCH_SYSLOG_H

#include <stdbool.h>
#include <stddef.h>

#include "../agent/lib/buf.h"
#include "../agent/event.h"

/* syslog formatting options */
struct syslog_fmt {
	bool		 rfc3164;
	bool		 keep_newlines;		/* octet counting keeps them */
	bool		 bom;			/* UTF-8 BOM before MSG (5424) */
	int		 facility;		/* 0..23 */
	const char	*sd_id;			/* e.g. esxwatch@32473 */
	const char	*hostname;		/* used when the event has none */
	size_t		 max_msg;		/* 0 = no limit (the whole message) */
};
/* The syslog sink's keys (its rows in syslog.c), a destination's block. */
struct syslog_opts {
	char	*format;		/* rfc5424 | rfc3164 (shared with http) */
	char	*transport;		/* udp | tcp */
	char	*framing;		/* octet-counting | newline */
	char	*facility;		/* a facility name, default local4 */
	char	*sd_id;			/* default esxwatch@32473 */
	int	 max_message_size;	/* over UDP, default 2048 */
};
struct dest_conf;
/* d's block (NULL for a destination the loader did not make). */
struct syslog_opts *syslog_opts(const struct dest_conf *d);

/* Append one syslog message (no framing) for ev. */
int	 syslog_format(const struct syslog_fmt *, const struct event *,
	    struct buf *out);
/* Append ev in the host's syslog form (syslog(3)'s local form, the event
 * as JSON in MSG, tag esxwatch[pid]), at most f->max_msg bytes if set. */
int	 syslog_format_local(const struct syslog_fmt *, const struct event *,
	    long pid, struct buf *out);
int	 syslog_facility_code(const char *name);	/* -1 if unknown */
int	 syslog_severity_code(const char *severity);	/* default 6 */

#endif
