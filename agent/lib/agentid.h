/*
 * agentid: the host's stable identity, for any module that names this
 * agent: Log Insight's ingestion API (POST /api/v1/events/ingest/{agentId}:
 * "Specify a BIOS UUID, a stored UUID4 or other stable identifier") and
 * whoever comes next.  main makes one object and hands it on (the sinks
 * get it in their ctx); it is resolved once, on first use, and survives
 * reloads.
 *
 * In order: (agentid_get() only) the destination's configured agent_id;
 * on ESXi the host's BIOS UUID from `esxcli hardware platform get`; a
 * UUID4 generated once from /dev/urandom (not getrandom(2): ESXi lacks it)
 * and kept in storage.directory/agent-id (mode 0600).
 */
#ifndef ESXWATCH_AGENTID_H
#define ESXWATCH_AGENTID_H

#include <stddef.h>

#include "platform.h"

struct agentid;

/* Where the host's id comes from: values, not the configuration
 * (agent/config/config_host.h fills it from host.* and storage.*). */
struct agentid_src {
	enum platform	 platform;	/* ESXi: the BIOS UUID first */
	const char	*storage_dir;	/* agent-id is kept here */
	const char	*tools_dir;	/* esxcli looked for here first; NULL: none */
};

#define AGENTID_LEN	36	/* 8-4-4-4-12 */

struct agentid	*agentid_new(void);
void		 agentid_free(struct agentid *);
/* The host's id: 0 and the id in out (>= AGENTID_LEN + 1 bytes), or -1
 * (logged) when none can be had. */
int	agentid_host(struct agentid *, const struct agentid_src *, char *out,
	    size_t outlen);
/* A destination's id: configured (its agent_id) if set (out may need
 * more room), else the host's. */
int	agentid_get(struct agentid *, const char *configured,
	    const struct agentid_src *, char *out, size_t outlen);

/* Parse `esxcli hardware platform get` output ("UUID: 0x4c 0x4c ..." or a
 * 32-digit hex string) into 8-4-4-4-12 lowercase.  -1 if absent, malformed,
 * all zeros or all ones. */
int	agentid_parse_esxcli(const char *text, char *out, size_t outlen);
/* A new random UUID4 from /dev/urandom. */
int	agentid_generate(char *out, size_t outlen);
/* Is s a UUID in 8-4-4-4-12 form? */
int	agentid_valid(const char *s);
/* Read storage_dir/agent-id, or create it.  Exposed for tests. */
int	agentid_stored(const char *storage_dir, char *out, size_t outlen);

#endif
