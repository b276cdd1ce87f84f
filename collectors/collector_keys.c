/*
 * The keys every collectors.NAME section has (agent/config/config_schema.h).
 * Apart from the registry (registry.c), so a test may bring a registry of
 * its own.
 */
#include <stddef.h>

#include "collector.h"

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
