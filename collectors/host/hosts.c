/*
 * The host kind registry (host/host.h): one row per kind, as sinks and
 * collectors register theirs.  Adding a kind is adding a file and a row;
 * a test build adds its own with host_kind_register().
 */
#include <stdbool.h>
#include <string.h>

#include "../../agent/lib/exec.h"
#include "esxcli.h"
#include "host.h"

extern const struct host_kind host_kind_local;
extern const struct host_kind host_kind_bundle;

static const struct host_kind *const kinds_all[] = {
	&host_kind_local,
	&host_kind_bundle,
	NULL
};

#define NBUILTIN	(sizeof(kinds_all) / sizeof(kinds_all[0]) - 1)
#define EXTRA_MAX	8

static const struct host_kind *kinds_extra[EXTRA_MAX];
static size_t nextra;

/* Why the thread's last question went unanswered: per thread, as errno,
 * because collectors ask one host from several threads at once. */
static _Thread_local int last_err;

const struct host_kind *
host_kind_find(const char *name)
{
	size_t i;

	for (i = 0; i < NBUILTIN; i++)
		if (strcmp(kinds_all[i]->name, name) == 0)
			return kinds_all[i];
	for (i = 0; i < nextra; i++)
		if (strcmp(kinds_extra[i]->name, name) == 0)
			return kinds_extra[i];
	return NULL;
}

int
host_kind_register(const struct host_kind *k)
{
	if (k == NULL || k->name == NULL || k->open == NULL ||
	    nextra >= EXTRA_MAX || host_kind_find(k->name) != NULL)
		return -1;
	kinds_extra[nextra++] = k;
	return 0;
}

struct host *
host_open(const char *kind, const struct config *cfg)
{
	const struct host_kind *k = host_kind_find(kind);

	return k != NULL ? k->open(cfg) : NULL;
}

void
host_close(struct host *h)
{
	if (h != NULL && h->ops->close != NULL)
		h->ops->close(h);
}

int
host_err(void)
{
	return last_err;
}

void
host_set_err(int e)
{
	last_err = e;
}

/* Whether the host has the operation asked for; host_err() says so. */
static bool
answers(bool has_op)
{
	last_err = has_op ? 0 : HOST_EABSENT;
	return last_err == 0;
}

int
host_nics(struct host *h, const struct collector_conf *conf, int timeout_s,
    struct nic_info **out)
{
	*out = NULL;
	if (!answers(h != NULL && h->ops->nics != NULL))
		return -1;
	return h->ops->nics(h, conf, timeout_s, out);
}

int
host_esxcli(struct host *h, int timeout_s, const char *const args[],
    struct esx_out *out)
{
	memset(out, 0, sizeof(*out));
	if (!answers(h != NULL && h->ops->esxcli != NULL))
		return -1;
	return h->ops->esxcli(h, timeout_s, args, out);
}

int
host_run(struct host *h, const char *tool, const char *const args[],
    int timeout_s, struct exec_result *res)
{
	memset(res, 0, sizeof(*res));
	res->status = -1;
	if (!answers(h != NULL && h->ops->run != NULL))
		return -1;
	return h->ops->run(h, tool, args, timeout_s, res);
}

int
host_mounts(struct host *h, int timeout_s, struct host_mount **out)
{
	*out = NULL;
	if (!answers(h != NULL && h->ops->mounts != NULL))
		return -1;
	return h->ops->mounts(h, timeout_s, out);
}

int
host_smart(struct host *h, struct host_smart **out)
{
	*out = NULL;
	if (!answers(h != NULL && h->ops->smart != NULL))
		return -1;
	return h->ops->smart(h, out);
}
