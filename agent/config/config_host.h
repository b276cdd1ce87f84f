/*
 * config_host: the host.* and storage.* keys resolved to values for
 * agent/lib, which takes values and never the configuration (platform.h,
 * agentid.h).  A NULL configuration means "nothing configured": the
 * platform is detected and every default applies.
 */
#ifndef ESXWATCH_CONFIG_HOST_H
#define ESXWATCH_CONFIG_HOST_H

#include <stddef.h>

#include "../lib/agentid.h"
#include "../lib/platform.h"

struct config;
struct dest_conf;

/* host.platform, or the platform detected. */
enum platform	 config_platform(const struct config *);
/* host.hostname, or the host's name. */
const char	*config_hostname(const struct config *);
/* storage.directory, or the platform's default. */
const char	*config_storage_dir(const struct config *);
/* platform_find_tool() with host.tools_dir looked in first. */
int		 config_find_tool(const struct config *, const char *name,
		    char *out, size_t outlen);
/* agentid_host() from the configured platform, storage and tools. */
int		 config_agent_id(struct agentid *, const struct config *,
		    char *out, size_t outlen);
/* agentid_get(): the destination's agent_id if set, else the host's. */
int		 config_dest_agent_id(struct agentid *, const struct config *,
		    const struct dest_conf *, char *out, size_t outlen);

#endif
