/*
 * config_host: the configuration's host keys handed to agent/lib as
 * values (see config_host.h).
 */
#include <stddef.h>

#include "config.h"
#include "config_host.h"

enum platform
config_platform(const struct config *cfg)
{
	return platform_detect(cfg != NULL ? cfg->platform : NULL);
}

const char *
config_hostname(const struct config *cfg)
{
	return platform_hostname(cfg != NULL ? cfg->hostname : NULL);
}

const char *
config_storage_dir(const struct config *cfg)
{
	return platform_storage_dir(cfg != NULL ? cfg->storage_directory : NULL,
	    config_platform(cfg));
}

int
config_find_tool(const struct config *cfg, const char *name, char *out,
    size_t outlen)
{
	return platform_find_tool(cfg != NULL ? cfg->tools_dir : NULL, name, out,
	    outlen);
}

static void
agentid_src_of(const struct config *cfg, struct agentid_src *src)
{
	src->platform = config_platform(cfg);
	src->storage_dir = config_storage_dir(cfg);
	src->tools_dir = cfg != NULL ? cfg->tools_dir : NULL;
}

int
config_agent_id(struct agentid *a, const struct config *cfg, char *out,
    size_t outlen)
{
	struct agentid_src src;

	agentid_src_of(cfg, &src);
	return agentid_host(a, &src, out, outlen);
}

int
config_dest_agent_id(struct agentid *a, const struct config *cfg,
    const struct dest_conf *d, char *out, size_t outlen)
{
	struct agentid_src src;

	agentid_src_of(cfg, &src);
	return agentid_get(a, d != NULL ? d->agent_id : NULL, &src, out, outlen);
}
