/*
 * The sink registry: one row per protocol (as Fluent Bit registers its
 * output plugins).  Adding a sink is adding a file and a row: the file
 * defines `const struct sink sink_NAME` with its key table (and finish
 * hook), declared extern here; nothing in agent/ changes.  A test build
 * adds its own sinks with sink_register() before loading a configuration
 * (tests/unit/test_plugin.c): the registry is the built-in table followed
 * by those rows, and everything that walks sinks (the schema, printing,
 * the docs' key table) goes through sink_count()/sink_at().
 */
#include <stddef.h>
#include <string.h>

#include "sink.h"

extern const struct sink sink_file;
extern const struct sink sink_cfapi;
extern const struct sink sink_syslog;
extern const struct sink sink_http;
extern const struct sink sink_splunk_hec;
extern const struct sink sink_elasticsearch;
extern const struct sink sink_otlp;
extern const struct sink sink_loki;
extern const struct sink sink_gelf;

static const struct sink *const sinks_all[] = {
	&sink_file,
	&sink_cfapi,
	&sink_syslog,
	&sink_http,
	&sink_splunk_hec,
	&sink_elasticsearch,
	&sink_otlp,
	&sink_loki,
	&sink_gelf,
	NULL
};

#define NBUILTIN	(sizeof(sinks_all) / sizeof(sinks_all[0]) - 1)

static const struct sink *sinks_extra[SINK_MAX];
static size_t nextra;

size_t
sink_count(void)
{
	return NBUILTIN + nextra;
}

const struct sink *
sink_at(size_t i)
{
	if (i < NBUILTIN)
		return sinks_all[i];
	i -= NBUILTIN;
	return i < nextra ? sinks_extra[i] : NULL;
}

const struct sink *
sink_find(enum dest_proto proto)
{
	for (size_t i = 0; i < sink_count(); i++)
		if (sink_at(i)->proto == proto)
			return sink_at(i);
	return NULL;
}

const struct sink *
sink_find_name(const char *name)
{
	for (size_t i = 0; i < sink_count(); i++)
		if (strcmp(sink_at(i)->name, name) == 0)
			return sink_at(i);
	return NULL;
}

int
sink_register(const struct sink *sk)
{
	if (sk == NULL || sink_count() >= SINK_MAX || nextra >= SINK_MAX ||
	    (int)sk->proto < 0 || (int)sk->proto >= SINK_PROTO_MAX ||
	    sink_find(sk->proto) != NULL || sink_find_name(sk->name) != NULL)
		return -1;
	sinks_extra[nextra++] = sk;
	return 0;
}

const char *const sink_format_choices[] = {
	"rfc5424", "rfc3164", "json_lines", "json_array", NULL
};
const char *const sink_compress_choices[] = { "gzip", "none", NULL };

void *
sink_opts(const struct dest_conf *d, const struct sink *sk)
{
	if (d == NULL || d->opts == NULL || sk == NULL)
		return NULL;
	for (size_t i = 0; i < sink_count() && i < d->nopts; i++)
		if (sink_at(i) == sk)
			return d->opts[i];
	return NULL;
}

const char *
dest_proto_name(enum dest_proto p)
{
	const struct sink *sk = sink_find(p);

	return sk != NULL ? sk->name : "unknown";
}

int
dest_port(const struct dest_conf *d)
{
	const struct sink *sk;

	if (d->port != 0)
		return d->port;
	sk = sink_find(d->proto);
	if (sk == NULL)
		return 0;
	return d->ssl ? sk->tls_port : sk->port;
}
