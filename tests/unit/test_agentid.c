/*
 * agentid: the host identity object main hands to the sinks.  On ESXi the
 * BIOS UUID from `esxcli hardware platform get` (a fake esxcli in
 * host.tools_dir printing a real host's output), else the UUID4 stored in
 * storage.directory/agent-id; resolved once per object; a destination's
 * agent_id wins.
 */
#include <sys/stat.h>

#include <unistd.h>

#include "../../agent/config/config_host.h"
#include "t.h"
#include "../../agent/config_plugins.h"

#include "../../agent/lib/agentid.h"
#include "../../agent/config/config.h"
#include "../../agent/lib/log.h"

static char root[64];

static void
set(char **field, const char *v)
{
	free(*field);
	*field = strdup(v);
}

/* A tools dir whose esxcli prints the fixture (or fails: fixture NULL). */
static void
fake_esxcli(const char *dir, const char *fixture)
{
	char path[256], cwd[256];
	FILE *f;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return;
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/esxcli", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	if (fixture != NULL)
		fprintf(f, "#!/bin/sh\nexec cat %s/%s\n", cwd, fixture);
	else
		fprintf(f, "#!/bin/sh\nexit 1\n");
	fclose(f);
	chmod(path, 0700);
}

TEST(esxi_host_id_is_the_bios_uuid_resolved_once)
{
	struct config *cfg = config_default();
	struct agentid *a = agentid_new();
	char tools[128], store[128], id[64];

	snprintf(tools, sizeof(tools), "%s/tools", root);
	snprintf(store, sizeof(store), "%s/esxi", root);
	mkdir(store, 0700);
	fake_esxcli(tools, "tests/fixtures/esxi/esxcli-hardware-platform-get/poweredge.txt");
	set(&cfg->platform, "esxi");
	set(&cfg->tools_dir, tools);
	set(&cfg->storage_directory, store);
	CHECK_INT(config_agent_id(a, cfg, id, sizeof(id)), 0);
	CHECK_STR(id, "4c4c4544-004a-1038-804e-b3c04f524b32");
	/* resolved once: a failing esxcli now changes nothing */
	fake_esxcli(tools, NULL);
	CHECK_INT(config_agent_id(a, cfg, id, sizeof(id)), 0);
	CHECK_STR(id, "4c4c4544-004a-1038-804e-b3c04f524b32");
	/* a destination's agent_id wins */
	set(&cfg->server.agent_id, "configured-1");
	CHECK_INT(config_dest_agent_id(a, cfg, &cfg->server, id, sizeof(id)), 0);
	CHECK_STR(id, "configured-1");
	set(&cfg->server.agent_id, "");
	CHECK_INT(config_dest_agent_id(a, cfg, &cfg->server, id, sizeof(id)), 0);
	CHECK_STR(id, "4c4c4544-004a-1038-804e-b3c04f524b32");
	/* no room: refused, not cut */
	CHECK_INT(config_agent_id(a, cfg, id, AGENTID_LEN), -1);
	agentid_free(a);
	/* a new object with esxcli failing: the stored UUID4 */
	a = agentid_new();
	CHECK_INT(config_agent_id(a, cfg, id, sizeof(id)), 0);
	CHECK(agentid_valid(id));
	CHECK(strcmp(id, "4c4c4544-004a-1038-804e-b3c04f524b32") != 0);
	agentid_free(a);
	CHECK_INT(config_agent_id(NULL, cfg, id, sizeof(id)), -1);
	config_free(cfg);
}

TEST(linux_host_id_is_stored_and_kept)
{
	struct config *cfg = config_default();
	struct agentid *a = agentid_new(), *b = agentid_new();
	char store[128], path[160], one[64], two[64];
	struct stat st;

	snprintf(store, sizeof(store), "%s/linux", root);
	mkdir(store, 0700);
	set(&cfg->platform, "linux");
	set(&cfg->storage_directory, store);
	CHECK_INT(config_agent_id(a, cfg, one, sizeof(one)), 0);
	CHECK(agentid_valid(one));
	snprintf(path, sizeof(path), "%s/agent-id", store);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	/* another object (the next start) reads the same id */
	CHECK_INT(config_agent_id(b, cfg, two, sizeof(two)), 0);
	CHECK_STR(two, one);
	agentid_free(a);
	agentid_free(b);
	config_free(cfg);
}

int
main(void)
{
	T_PROG("test_agentid");
	config_plugins_builtin();
	log_init(0, "/dev/null");
	snprintf(root, sizeof(root), "/tmp/test_agentid.XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	RUN(esxi_host_id_is_the_bios_uuid_resolved_once);
	RUN(linux_host_id_is_stored_and_kept);
	return t_done();
}
