/*
 * elasticsearch: the Elasticsearch / OpenSearch _bulk sink
 * (elasticsearch.c).  Its keys, and its document encoder for the tests
 * and the bench.
 */
#ifndef ESXWATCH_ELASTICSEARCH_H
#define ESXWATCH_ELASTICSEARCH_H

#include "../agent/config/config.h"
#include "../agent/event.h"

struct es_opts {
	char		*url;		/* base: https://es:9200 (shared) */
	char		*index;		/* index or data stream; "" esxwatch (shared) */
	char		*api_key_file;	/* 0600, the key's `encoded` value */
	char		*pipeline;	/* ingest pipeline, "" none */
};

struct es_opts	*es_opts(const struct dest_conf *d);
/* One event as an ECS-style document, appended to b.  0 or -1. */
int		 es_encode_doc(const struct event *, struct buf *b);

#endif
