/*
 * config_plugins: what the configuration loader reads besides its own
 * sections, handed to it once (config_use()).  Sinks and collectors are
 * looked up in their registries at each walk, so one registered later (a
 * test build's, sink_register()) is seen; the sections are a table.
 */
#include <stddef.h>

#include "config_plugins.h"
#include "config/config_section.h"
#include "monitor.h"
#include "../collectors/collector.h"
#include "../collectors/logwatch/filelog_conf.h"
#include "../collectors/logwatch/parsers_conf.h"
#include "../collectors/logwatch/rules_conf.h"
#include "../collectors/host/vsphere_conf.h"
#include "../collectors/receiver/receiver_conf.h"
#include "../output/sink.h"

static size_t
nsinks(void)
{
	return sink_count();
}

static bool
sink_row(size_t i, struct cfg_plugin *out)
{
	const struct sink *sk = sink_at(i);

	if (sk == NULL)
		return false;
	out->name = sk->name;
	out->id = (int)sk->proto;
	out->keys = sk->keys;
	out->nkeys = sk->nkeys;
	out->opts_size = sk->opts_size;
	out->finish = sk->finish;
	out->has_target = sk->has_target;
	return true;
}

static size_t
ncollectors(void)
{
	return collector_count();
}

static bool
collector_row(size_t i, struct cfg_plugin *out)
{
	const struct collector *col = collector_at(i);

	if (col == NULL)
		return false;
	out->name = col->name;
	out->default_interval = col->default_interval;
	out->keys = col->keys;
	out->nkeys = col->nkeys;
	out->opts_size = col->opts_size;
	return true;
}

static const struct cfg_key *
common_collector_keys(size_t *n)
{
	*n = ncollector_keys;
	return collector_keys;
}

/*
 * In this order in "did you mean" after the loader's own; --print-config
 * and the docs place each after the loader's section it names (.after).
 */
static const struct cfg_section *const sections[] = {
	&monitor_section,
	&receiver_section,
	&filelog_section,
	&parsers_section,
	&rules_section,
	&vsphere_section,
};

static const struct cfg_registry builtin = {
	.nsinks = nsinks,
	.sink_at = sink_row,
	.ncollectors = ncollectors,
	.collector_at = collector_row,
	.collector_keys = common_collector_keys,
	.sections = sections,
	.nsections = sizeof(sections) / sizeof(sections[0]),
};

const struct cfg_registry *
config_plugins_registry(void)
{
	return &builtin;
}

void
config_plugins_builtin(void)
{
	config_use(&builtin);
}
