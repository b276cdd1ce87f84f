/*
 * config_section: the registry the top layer hands the loader
 * (config_section.h), and the lookups the loader walks it with.  An empty
 * registry is a loader with the core's sections only.
 */
#include <string.h>

#include "config_int.h"

static const struct cfg_registry *reg;

void
config_use(const struct cfg_registry *r)
{
	reg = r;
}

size_t
cfg_nsinks(void)
{
	return reg != NULL && reg->nsinks != NULL ? reg->nsinks() : 0;
}

bool
cfg_sink_at(size_t i, struct cfg_plugin *out)
{
	memset(out, 0, sizeof(*out));
	return i < cfg_nsinks() && reg->sink_at(i, out);
}

int
cfg_sink_find(int id, struct cfg_plugin *out)
{
	for (size_t i = 0; i < cfg_nsinks(); i++)
		if (cfg_sink_at(i, out) && out->id == id)
			return (int)i;
	memset(out, 0, sizeof(*out));
	return -1;
}

int
cfg_sink_named(const char *name, struct cfg_plugin *out)
{
	for (size_t i = 0; i < cfg_nsinks(); i++)
		if (cfg_sink_at(i, out) && strcmp(out->name, name) == 0)
			return (int)i;
	memset(out, 0, sizeof(*out));
	return -1;
}

const char *
cfg_proto_name(int id)
{
	struct cfg_plugin sk;

	return cfg_sink_find(id, &sk) >= 0 ? sk.name : "unknown";
}

size_t
cfg_ncollectors(void)
{
	return reg != NULL && reg->ncollectors != NULL ? reg->ncollectors() : 0;
}

bool
cfg_collector_at(size_t i, struct cfg_plugin *out)
{
	memset(out, 0, sizeof(*out));
	return i < cfg_ncollectors() && reg->collector_at(i, out);
}

bool
cfg_collector_named(const char *name, struct cfg_plugin *out)
{
	for (size_t i = 0; i < cfg_ncollectors(); i++)
		if (cfg_collector_at(i, out) && strcmp(out->name, name) == 0)
			return true;
	memset(out, 0, sizeof(*out));
	return false;
}

const struct cfg_key *
cfg_collector_keys(size_t *n)
{
	*n = 0;
	return reg != NULL && reg->collector_keys != NULL ?
	    reg->collector_keys(n) : NULL;
}

size_t
cfg_nsections(void)
{
	return reg != NULL ? reg->nsections : 0;
}

const struct cfg_section *
cfg_section_at(size_t i)
{
	return i < cfg_nsections() ? reg->sections[i] : NULL;
}
