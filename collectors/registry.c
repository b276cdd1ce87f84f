/*
 * The collector registry: one row per built-in collector.  Adding a
 * collector is adding a file and a row: the file defines
 * `const struct collector collector_NAME`, declared extern here.
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

const struct collector *const collectors_all[] = {
	&collector_nic,
	&collector_datastore,
	&collector_vsan,
	&collector_smart,
	&collector_logwatch,
	&collector_agent,
	&collector_diagnosis,
	NULL
};

const struct collector *
collector_find(const char *name)
{
	size_t i;

	for (i = 0; collectors_all[i] != NULL; i++)
		if (strcmp(collectors_all[i]->name, name) == 0)
			return collectors_all[i];
	return NULL;
}
