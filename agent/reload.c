/*
 * reload: the decision whether a reloaded configuration may replace the
 * running one (see reload.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_host.h"
#include "config/config.h"
#include "lib/platform.h"
#include "spool/queue.h"
#include "reload.h"
#include "shipper.h"

/* cfg's destination called name, or NULL. */
static const struct dest_conf *
dest_named(const struct config *cfg, const char *name)
{
	if (strcmp(name, "server") == 0)
		return &cfg->server;
	for (size_t i = 0; i < cfg->nservers; i++)
		if (strcmp(cfg->servers[i].name, name) == 0)
			return &cfg->servers[i];
	return NULL;
}

/*
 * Does ncfg keep a destination that has queued events?  A destination
 * turned from a server into the stdout fallback does not count as kept.
 */
static bool
keeps_a_backlog(const struct config *cur, const struct config *ncfg,
    struct queue *q, char *why, size_t len)
{
	const char **names = calloc(cur->nservers + 1, sizeof(*names));
	const char *first = NULL;
	size_t i, n, with = 0;
	uint64_t total = 0;

	if (names == NULL)
		return true;	/* cannot tell: the reload goes ahead as before */
	n = shipper_dest_names(cur, names, cur->nservers + 1);
	for (i = 0; i < n; i++) {
		const struct dest_conf *od = dest_named(cur, names[i]);
		const struct dest_conf *nd = dest_named(ncfg, names[i]);
		uint64_t backlog = queue_backlog(q, i);

		if (backlog == 0)
			continue;
		if (nd != NULL && (!nd->to_stdout || od->to_stdout))
			break;
		if (with++ == 0)
			first = names[i];
		total += backlog;
	}
	if (i == n && with > 0)
		snprintf(why, len, "it drops every destination with queued events "
		    "('%s'%s: %" PRIu64 " events)", first, with > 1 ? " and others" : "",
		    total);
	free(names);
	return i < n || with == 0;	/* one kept, or nothing queued to lose */
}

bool
reload_acceptable(const char *path, const struct config *cur,
    const struct config *ncfg, struct queue *q, char *why, size_t len)
{
	char sub[160];

	if (ncfg->file_empty) {
		snprintf(why, len, "%s is empty", path);
		return false;
	}
	if (q != NULL && !keeps_a_backlog(cur, ncfg, q, sub, sizeof(sub))) {
		snprintf(why, len, "%s: %s", path, sub);
		return false;
	}
	/* the spool stays where it was opened, and a new directory was
	 * never checked (fs_storage_check): only a restart moves it */
	if (strcmp(config_storage_dir(cur), config_storage_dir(ncfg)) != 0) {
		snprintf(why, len, "%s: storage.directory changes (%s to %s); "
		    "that takes a restart", path, config_storage_dir(cur),
		    config_storage_dir(ncfg));
		return false;
	}
	return true;
}
