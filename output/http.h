/*
 * http: the HTTP sink (http.c).  Its keys, for the configuration's
 * tests.
 */
#ifndef ESXWATCH_HTTP_H
#define ESXWATCH_HTTP_H

#include "../agent/config/config.h"

/* The http sink's keys (its rows in http.c), a destination's block. */
struct http_opts {
	char		*url;		/* "": http(s)://hostname:port/ */
	char		*format;	/* json_lines | json_array (shared with syslog) */
	struct kvlist	 headers;	/* shared with cfapi */
	char		*compress;	/* gzip | none (shared with cfapi) */
};

/* d's block (NULL for a destination the loader did not make). */
struct http_opts *http_opts(const struct dest_conf *d);

#endif
