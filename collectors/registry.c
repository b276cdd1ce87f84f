/*
 * The collector registry: one row per built-in collector.  Adding a
 * collector is adding a file and a row: the file defines
 * `const struct collector collector_NAME`, declared extern here; its
 * configuration section comes from the row (agent/config/config_schema.h), so
 * nothing else changes.  A test build adds rows with collector_register()
 * before it loads a configuration (tests/unit/test_plugin.c); a test that
 * needs a registry of its own defines these five symbols itself
 * (tests/unit/test_scheduler.c), which is why the keys every collector
 * section has live in collector_keys.c.
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
extern const struct collector collector_diagnosis;
extern const struct collector collector_receiver;

/* In this order in --print-config, "known:" messages and the scheduler. */
const struct collector *const collectors_all[] = {
	&collector_nic,
	&collector_datastore,
	&collector_vsan,
	&collector_smart,
	&collector_agent,
	&collector_logwatch,
	&collector_receiver,
	&collector_diagnosis,	/* last: with --once it sees what the others emitted */
	NULL
};

#define NBUILTIN	(sizeof(collectors_all) / sizeof(collectors_all[0]) - 1)
#define EXTRA_MAX	16

static const struct collector *collectors_extra[EXTRA_MAX];
static size_t nextra;


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
