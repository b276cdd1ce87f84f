/*
 * host: where the collectors' facts come from (docs/architecture.md, "One
 * idea of a host").
 *
 * A host answers three kinds of question, and the collectors ask nothing
 * else of the machine:
 *
 *   nics    the network interfaces with link, speed and counters, in the
 *           nic collector's own struct (host/nicinfo.h);
 *   esxcli  an esxcli namespace's answer as records ("storage core device
 *           list"): devices, paths, filesystems, SMART, NVMe;
 *   run     a host tool's output (vdq -q, smartctl -j ...);
 *   mounts  the network filesystems a Linux host has mounted, and whether
 *           each answers (host/mounts.h);
 *   smart   every drive's SMART in one answer, where the host has it so
 *           (vCenter's vSAN health service); elsewhere HOST_EABSENT and the
 *           collector asks drive by drive through esxcli and run.
 *
 * The local host (host/local.c) answers with today's readers: esxcli or
 * localcli, vdq and smartctl found under host.tools_dir or the usual places,
 * /sys on Linux.  Other kinds (the vSphere API, a vm-support bundle, ...)
 * are one file each and one row in the kind registry (host/hosts.c);
 * where a kind has no answer for a question it returns -1 with
 * HOST_EABSENT, says why once in its log, and the collector reports the
 * fact as absent: a value is never guessed.
 *
 * Calls to one host come from several collector threads at once: an
 * implementation keeps what it shares behind its own lock.
 */
#ifndef ESXWATCH_HOST_H
#define ESXWATCH_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "../../agent/lib/platform.h"

struct config;
struct collector_conf;
struct esx_out;
struct exec_result;
struct nic_info;
struct host_mount;
struct host_smart;
struct host;

/* How a question went unanswered (host_err()): */
#define HOST_EFAILED	1	/* the host was asked and failed (logged) */
#define HOST_EABSENT	2	/* this kind of host has no such fact */
#define HOST_EMISSING	3	/* run: no such tool on the host */

struct host_ops {
	/*
	 * The NICs the collector's include/exclude want (conf may be NULL:
	 * all), sorted by name: their number with *out (caller frees), or -1.
	 */
	int	(*nics)(struct host *, const struct collector_conf *conf,
		    int timeout_s, struct nic_info **out);
	/* An esxcli command's records: 0, or -1 with out empty. */
	int	(*esxcli)(struct host *, int timeout_s, const char *const args[],
		    struct esx_out *out);
	/*
	 * A tool's output: 0 once it ran (look at res->status, timed_out),
	 * -1 when it could not (HOST_EMISSING: the host has no such tool).
	 * res is filled in both cases (exec_result_free()).
	 */
	int	(*run)(struct host *, const char *tool, const char *const args[],
		    int timeout_s, struct exec_result *res);
	/* The network mounts, probed within timeout_s: their number with
	 * *out (caller frees), or -1. */
	int	(*mounts)(struct host *, int timeout_s, struct host_mount **out);
	/* Every drive's SMART in one answer (host/smartparse.h): their number
	 * with *out (caller frees), or -1 (HOST_EABSENT: this kind of host is
	 * asked drive by drive; HOST_EFAILED: it had no answer this time). */
	int	(*smart)(struct host *, struct host_smart **out);
	void	(*close)(struct host *);
};

struct host {
	const struct host_ops	*ops;
	const char		*kind;		/* "local", ... */
	/* The host's name where it is not the agent's own (a polled host's
	 * inventory name), for the collectors' log lines; NULL: this one. */
	const char		*name;
	/* What the host's facts look like: esxcli's or Linux's. */
	enum platform		 platform;
	void			*priv;		/* the implementation's own */
};

/*
 * A kind of host: one row each (host/hosts.c), as sinks and collectors
 * register theirs.  open() makes a host from the configuration, or NULL
 * (logged).
 */
struct host_kind {
	const char	*name;
	struct host	*(*open)(const struct config *);
};

const struct host_kind	*host_kind_find(const char *name);
/* A kind that is not in the built-in table (a test build's): 0, or -1 when
 * the name is taken or the table is full. */
int			 host_kind_register(const struct host_kind *);
/* host_kind_find(name)->open(cfg), or NULL. */
struct host		*host_open(const char *kind, const struct config *);
void			 host_close(struct host *);

/* The questions, through h's operations; -1 with host_err() set when h has
 * none (HOST_EABSENT) or it failed. */
int	host_nics(struct host *h, const struct collector_conf *conf, int timeout_s,
	    struct nic_info **out);
int	host_esxcli(struct host *h, int timeout_s, const char *const args[],
	    struct esx_out *out);
int	host_run(struct host *h, const char *tool, const char *const args[],
	    int timeout_s, struct exec_result *res);
int	host_mounts(struct host *h, int timeout_s, struct host_mount **out);
int	host_smart(struct host *h, struct host_smart **out);
/* Why the calling thread's last host_*() call returned -1 (HOST_E*). */
int	host_err(void);
/* For implementations: set what host_err() returns. */
void	host_set_err(int);

#endif
