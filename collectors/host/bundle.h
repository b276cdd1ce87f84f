/*
 * bundle: a host whose facts are a vm-support bundle's saved command
 * outputs (host/host.h; docs/analyze.md, "What is read").
 *
 * vm-support saves `localcli storage core device list` as
 * commands/localcli_storage-core-device-list.txt: the program, '_', the
 * arguments joined by '-'.  An esxcli question is answered from that file
 * (localcli_ first, then esxcli_); `network nic list` and `network nic
 * stats get -n NIC` also from commands/nicinfo.sh.txt (the table, then a
 * "NIC statistics for NIC" block per NIC); `storage core device smart get
 * -d DEV` also from commands/smartinfo.txt (DEV's line, then its table);
 * vdq -q from vdq_-q.txt or its human form vdq_-q--H.txt.  A file the
 * bundle lacks is HOST_EABSENT and one gap line; smartctl and the network
 * mounts are absent (a bundle has neither).
 */
#ifndef ESXWATCH_HOST_BUNDLE_H
#define ESXWATCH_HOST_BUNDLE_H

#include <stddef.h>

struct host;

/* The saved outputs, by their name under commands/ ("nicinfo.sh.txt"). */
struct bundle_cmds {
	const char	*(*get)(void *arg, const char *name, size_t *len);
	/* one line per question the bundle cannot answer (said once each) */
	void		 (*gap)(void *arg, const char *line);
	void		 *arg;
};

/* A host answering from cmds (copied; its arg must outlive the host). */
struct host	*bundle_host_new(const struct bundle_cmds *cmds);

/* The file name vm-support gives `prog args...` ("localcli",
 * {"storage", "core", "device", "list"}): 0, or -1 when it does not fit. */
int		 bundle_cmd_name(const char *prog, const char *const args[],
		    char *out, size_t len);

#endif
