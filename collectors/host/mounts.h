/*
 * mounts: a Linux host's network filesystems (nfs, nfs4, cifs, smb3,
 * smbfs) from mountinfo, each probed with statfs() in a child of its own
 * so that a hung NFS server costs a timeout, not the collector's thread.
 * The local host's datastore facts off ESXi (host/host.h).
 */
#ifndef ESXWATCH_MOUNTS_H
#define ESXWATCH_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MOUNTS_MAX		256
#define MOUNTS_PENDING_MAX	64

struct host_mount {
	char	 point[1024];
	char	 source[512];
	char	 fstype[32];
	bool	 answered;	/* statfs() answered in time */
};

/* Probes killed but not reaped yet (they may sit in the kernel until
 * the NFS client gives up): reaped at the next round and at the end. */
struct mounts_pending {
	pid_t	 pid[MOUNTS_PENDING_MAX];
	size_t	 n;
};

/* mountinfo at path (proc(5)): the network mounts, at most max. */
size_t	mounts_read(const char *path, struct host_mount *m, size_t max);
/* statfs() every m[i].point at once; at most timeout_ms for them all. */
void	mounts_probe(struct mounts_pending *, struct host_mount *m, size_t n,
	    int timeout_ms);
void	mounts_reap(struct mounts_pending *);

#endif
