/*
 * The local host (host/host.h): the machine esxwatch runs on, asked with
 * its own tools.  esxcli questions go to localcli or esxcli
 * (host/esxcli.c), tools are found under host.tools_dir first, then the
 * platform's usual places, and run with a timeout and an output cap
 * (agent/lib/exec.c); on Linux the NICs come from /sys/class/net
 * (ESXWATCH_SYSFS_ROOT: a fake tree for tests, docs/events.md) and the
 * network mounts from mountinfo, each probed in a child (host/mounts.c).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/config/config.h"
#include "../../agent/config/config_host.h"
#include "../../agent/lib/exec.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/platform.h"
#include "esxcli.h"
#include "host.h"
#include "mounts.h"
#include "nicinfo.h"

struct local_host {
	struct host		 h;	/* first: a struct host * is one of these */
	const struct config	*cfg;	/* the scheduler's; outlives the host */
	pthread_mutex_t		 mu;	/* pending: mounts() from any thread */
	struct mounts_pending	 pending;
};

static const struct config *
cfg_of(struct host *h)
{
	return ((struct local_host *)h)->cfg;
}

static int
local_nics(struct host *h, const struct collector_conf *conf, int timeout_s,
    struct nic_info **out)
{
	const char *root;
	int n;

	if (h->platform == PLATFORM_ESXI)
		n = nic_read_esxcli(h, conf, timeout_s, out);
	else {
		root = getenv("ESXWATCH_SYSFS_ROOT");
		n = nic_read_sysfs(root, conf, out);
		if (n == 0)
			log_limited(LOG_INFO, "nic:none", 3600, "nic: no physical "
			    "network interface under %s/class/net (loopback and "
			    "virtual interfaces are watched only when named in "
			    "include)", root && *root ? root : "/sys");
	}
	if (n < 0)
		host_set_err(HOST_EFAILED);
	return n;
}

static int
local_esxcli(struct host *h, int timeout_s, const char *const args[],
    struct esx_out *out)
{
	if (esxcli_query(cfg_of(h), timeout_s, args, out) == -1) {
		host_set_err(HOST_EFAILED);
		return -1;
	}
	return 0;
}

static int
local_run(struct host *h, const char *tool, const char *const args[],
    int timeout_s, struct exec_result *res)
{
	const char *argv[16];
	char	 path[PATH_MAX];
	size_t	 n;

	if (config_find_tool(cfg_of(h), tool, path, sizeof(path)) == -1) {
		host_set_err(HOST_EMISSING);
		return -1;
	}
	argv[0] = path;
	for (n = 0; args[n] != NULL && n + 2 < sizeof(argv) / sizeof(argv[0]); n++)
		argv[n + 1] = args[n];
	argv[n + 1] = NULL;
	if (exec_run(argv, timeout_s * 1000, EXEC_DEFAULT_MAX_OUT, res) == -1) {
		host_set_err(HOST_EFAILED);
		return -1;
	}
	return 0;
}

/* ESXWATCH_MOUNTINFO: a fake mountinfo for tests (docs/events.md). */
static int
local_mounts(struct host *h, int timeout_s, struct host_mount **out)
{
	struct local_host *l = (struct local_host *)h;
	const char *path = getenv("ESXWATCH_MOUNTINFO");
	struct host_mount *m;
	size_t n;

	*out = NULL;
	if (path == NULL || *path == '\0')
		path = "/proc/self/mountinfo";
	m = calloc(MOUNTS_MAX, sizeof(*m));
	if (m == NULL) {
		host_set_err(HOST_EFAILED);
		return -1;
	}
	n = mounts_read(path, m, MOUNTS_MAX);
	pthread_mutex_lock(&l->mu);
	mounts_reap(&l->pending);
	mounts_probe(&l->pending, m, n, timeout_s * 1000);
	pthread_mutex_unlock(&l->mu);
	*out = m;
	return (int)n;
}

static void
local_close(struct host *h)
{
	struct local_host *l = (struct local_host *)h;

	mounts_reap(&l->pending);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

static const struct host_ops local_ops = {
	.nics = local_nics,
	.esxcli = local_esxcli,
	.run = local_run,
	.mounts = local_mounts,
	.close = local_close,
};

static struct host *
local_open(const struct config *cfg)
{
	struct local_host *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		log_error("host: out of memory");
		return NULL;
	}
	l->h.ops = &local_ops;
	l->h.kind = "local";
	l->h.platform = config_platform(cfg);
	l->cfg = cfg;
	pthread_mutex_init(&l->mu, NULL);
	return &l->h;
}

const struct host_kind host_kind_local = {
	.name = "local",
	.open = local_open,
};
