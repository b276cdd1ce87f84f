/*
 * splunk_hec: the Splunk HTTP Event Collector sink (splunk_hec.c).  Its
 * keys, and its encoder for the tests and the bench.
 */
#ifndef ESXWATCH_SPLUNK_HEC_H
#define ESXWATCH_SPLUNK_HEC_H

#include <stdbool.h>

#include "../agent/config/config.h"
#include "../agent/event.h"

struct splunk_hec_opts {
	char		*url;		/* base: https://splunk:8088 (shared) */
	char		*token_file;	/* 0600, the HEC token */
	char		*index;		/* "" the token's default (shared) */
	char		*sourcetype;	/* esxwatch */
	bool		 ack;		/* indexer acknowledgement */
	int		 ack_timeout;	/* s before an unacknowledged resend */
};

struct splunk_hec_opts *splunk_hec_opts(const struct dest_conf *d);
/* One event as HEC's JSON envelope, appended to b.  0 or -1. */
int	splunk_hec_encode(const struct event *, const char *index,
	    const char *sourcetype, struct buf *b);

#endif
