/*
 * The collector registry: one row per built-in collector.  Adding a
 * collector is adding a file and a row: the file defines
 * `const struct collector collector_NAME`, declared extern here; its
 * configuration section comes from the row (agent/config_schema.h), so
 * nothing else changes.  A test build adds rows with collector_register()
 * before it loads a configuration (tests/unit/test_plugin.c).
 */
#include <stddef.h>
#include <string.h>

#include "collector.h"

extern const struct collector collector_nic;
extern const struct collector collector_datastore;
extern const struct collector collector_vsan;
extern const struct collector collector_smart;
extern const struct collector collector_logwatch;
extern const struct collector collector_agent;

const struct collector *const collectors_all[] = {
	&collector_nic,
	&collector_datastore,
	&collector_vsan,
	&collector_smart,
	&collector_logwatch,
	&collector_agent,
	NULL
};

#define NBUILTIN	(sizeof(collectors_all) / sizeof(collectors_all[0]) - 1)
#define EXTRA_MAX	16

static const struct collector *collectors_extra[EXTRA_MAX];
static size_t nextra;

/* The keys every collectors.NAME section has. */
#define K(f)	offsetof(struct collector_conf, f)
const struct cfg_key collector_keys[] = {
	{ .name = "enabled", .type = KT_BOOL, .off = K(enabled), .def = "yes",
	  .doc = "Run this collector" },
	{ .name = "interval", .type = KT_INT, .off = K(interval), .min = 1,
	  .max = 604800,
	  .doc = "Seconds between runs; default: the collector's own" },
	{ .name = "include", .type = KT_LIST, .off = K(include),
	  .doc = "Entity names to watch (globs); empty = all" },
	{ .name = "exclude", .type = KT_LIST, .off = K(exclude),
	  .doc = "Entity names to skip (globs), after include" },
	{ .name = "timeout", .type = KT_INT, .off = K(timeout), .min = 1,
	  .max = 3600, .def = "30", .doc = "Seconds a command (esxcli, vdq, smartctl) may run" },
};
const size_t ncollector_keys = sizeof(collector_keys) /
    sizeof(collector_keys[0]);
#undef K

size_t
collector_count(void)
{
	return NBUILTIN + nextra;
}

const struct collector *
collector_at(size_t i)
{
	if (i < NBUILTIN)
		return collectors_all[i];
	i -= NBUILTIN;
	return i < nextra ? collectors_extra[i] : NULL;
}

const struct collector *
collector_find(const char *name)
{
	for (size_t i = 0; i < collector_count(); i++)
		if (strcmp(collector_at(i)->name, name) == 0)
			return collector_at(i);
	return NULL;
}

int
collector_register(const struct collector *col)
{
	if (col == NULL || nextra >= EXTRA_MAX || collector_find(col->name))
		return -1;
	collectors_extra[nextra++] = col;
	return 0;
}
