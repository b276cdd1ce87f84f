/*
 * The sink registry: one row per protocol (as Fluent Bit registers its
 * output plugins).  Adding a sink is adding a file and a row: the file
 * defines `const struct sink sink_NAME`, declared extern here.
 */
#include <stddef.h>

#include "sink.h"

extern const struct sink sink_file;
extern const struct sink sink_cfapi;
extern const struct sink sink_syslog;
extern const struct sink sink_http;

static const struct sink *const sinks_all[] = {
	&sink_file,
	&sink_cfapi,
	&sink_syslog,
	&sink_http,
	NULL
};

const struct sink *
sink_find(enum dest_proto proto)
{
	size_t i;

	for (i = 0; sinks_all[i] != NULL; i++)
		if (sinks_all[i]->proto == proto)
			return sinks_all[i];
	return NULL;
}
