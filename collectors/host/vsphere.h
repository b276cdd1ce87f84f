/*
 * vsphere: hosts polled through the vSphere API (docs/vsphere.md).
 *
 * The poller keeps every host's facts in a snapshot (vs_watch_*():
 * HostSystem properties and Datastore mounts, read whole once through a
 * PropertyFilter over ContainerViews, then patched with WaitForUpdatesEx's
 * changes); a "vsphere" host (host.h) then answers
 * the built-in collectors' questions for ONE host from that snapshot, so
 * the nic and datastore collectors run unchanged per polled host:
 *
 *   nics    config.network.pnic: linkSpeed absent = link down, speedMb,
 *           duplex, driver, mac.  Error/drop counters are not in the
 *           properties (the PerformanceManager has them per interval);
 *           CRC is in no API: absent, said once.
 *   esxcli  `storage core device list` (ScsiLun operationalState, and the
 *           datastore mount's inaccessibleReason: AllPathsDown_* = dead,
 *           PermanentDeviceLoss = not connected), `storage core path list`
 *           (multipathInfo path state), `storage vmfs extent list`,
 *           `storage filesystem list`, `storage nfs list`: the records
 *           esxcli prints, so storage_ds derives apd/pdl/degraded as on
 *           the host.  Any other namespace: HOST_EABSENT.
 */
#ifndef ESXWATCH_VSPHERE_H
#define ESXWATCH_VSPHERE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smartparse.h"
#include "vsphere_soap.h"

#define VS_NAME_MAX	256
/* net.errorsRx, net.errorsTx, net.droppedRx, net.droppedTx */
#define VS_NCTR		4
#define VS_PERF_BATCH	50	/* hosts per QueryPerf */

struct vs_pnic {
	char		device[64];
	char		driver[64];
	char		mac[40];
	long long	speed_mb;	/* -1: linkSpeed absent (link down) */
	int		duplex;		/* 1 full, 0 half, -1 unknown */
	/* QueryPerf: the samples' sum this poll; cum: the sums since the
	 * host was first polled (the poller keeps them), what nics answers */
	bool		have_ctr[VS_NCTR];
	uint64_t	sum[VS_NCTR];
	uint64_t	cum[VS_NCTR];
};

struct vs_lun {
	char	key[192];
	char	canonical[192];
	char	state[32];	/* operationalState[0] */
};

struct vs_path {
	char	lun[192];	/* the ScsiLun key */
	char	name[96];
	char	state[16];	/* active | standby | disabled | dead | unknown */
};

/* HostVsanSystem.QueryDisksForVsan: one VsanHostDiskResult. */
struct vs_vdisk {
	char	canonical[192];
	char	state[16];	/* eligible | ineligible | inUse */
	char	uuid[64];
	char	reason[192];	/* error: localizedMessage, else the fault's type */
	int	ssd;		/* 1, 0, -1 */
};

/* One disk of the vSAN health service's SMART summary
 * (VsanSmartDiskStats): its values, or why it has none. */
struct vs_sdisk {
	char			host[VS_NAME_MAX];	/* the summary's hostname */
	char			disk[192];
	char			error[256];	/* "" or "FAULT: reason" */
	struct smart_info	si;
};

/* VsanQueryVcClusterSmartStatsSummary's answer: the disks, and the hosts
 * summarised (a host with no vSAN disk is still answered). */
struct vs_smart {
	struct vs_sdisk	*d;
	size_t		 n;
	char		(*hosts)[VS_NAME_MAX];
	size_t		 nhosts;
	bool		 overflow;
};

struct vs_hostsnap {
	char		 moid[64];
	char		 cluster[64];	/* parent, a ClusterComputeResource; "" */
	char		 name[VS_NAME_MAX];
	char		 conn[32];	/* connected | notResponding | disconnected */
	int		 maint;		/* 1, 0, -1 unknown */
	struct vs_pnic	*pnics;
	size_t		 npnics;
	struct vs_lun	*luns;
	size_t		 nluns;
	struct vs_path	*paths;
	size_t		 npaths;
	char		 perf_ts[48];	/* the newest sample QueryPerf gave */
	bool		 perf_answered;
	char		 vsan_system[64];	/* configManager.vsanSystem */
	struct vs_vdisk	*vdisks;
	size_t		 nvdisks;
	bool		 vsan_fresh;	/* QueryDisksForVsan answered this poll */
	struct vs_sdisk	*sdisks;	/* the vSAN health service's SMART */
	size_t		 nsdisks;
	bool		 smart_fresh;	/* ... answered for it this poll */
};

struct vs_mount {
	char	host[64];	/* HostSystem moid */
	char	path[256];
	char	reason[48];	/* inaccessibleReason, "" */
	int	mounted, accessible;	/* 1, 0, -1 */
};

struct vs_ds {
	char		 moid[VS_NAME_MAX];
	char		 name[VS_NAME_MAX];
	char		 type[16];	/* VMFS | NFS | NFS41 | vsan | ... */
	char		 extent[192];	/* first extent's diskName, "" */
	char		 nas_host[128], nas_path[256];
	struct vs_mount	*mounts;
	size_t		 nmounts;
};

struct vs_snap {
	struct vs_hostsnap	*hosts;
	size_t			 nhosts;
	struct vs_ds		*ds;
	size_t			 nds;
};

void	vs_snap_free(struct vs_snap *);

/*
 * The snapshot kept between polls (vsphere_wait.c): a private
 * PropertyCollector and PropertyFilter per entry, each poll patching the
 * snapshot with WaitForUpdatesEx's changes; any fault or new session
 * drops it and reads all again (logged).  vs_watch_poll: 0, or -1 with err
 * (then the snapshot is empty).  vs_watch_snap: the snapshot (per-poll
 * fields — NIC counters, vSAN disks — cleared at each poll).
 */
struct vs_watch;
struct vs_watch	*vs_watch_new(const char *entry);
int		 vs_watch_poll(struct vs_conn *, struct vs_watch *, char *err,
		    size_t errlen);
struct vs_snap	*vs_watch_snap(struct vs_watch *);
/* Full reads so far (the first one included). */
uint64_t	 vs_watch_full_reads(const struct vs_watch *);
void		 vs_watch_free(struct vs_watch *);

/* One WaitForUpdatesEx answer (the unit tests' and fuzzer's entry):
 * parse (0 or -1 with err), apply to s (0, or -1: a modify of an object
 * s does not have), free. */
struct vs_update {
	void		*priv;
	bool		 have_ret;	/* false: a null result, nothing changed */
	bool		 truncated;
	const char	*version;
	size_t		 nobjs;
};
int	vs_update_parse(struct vs_update *, const char *xml, size_t len,
	    char *err, size_t errlen);
int	vs_update_apply(struct vs_snap *, struct vs_update *, char *err,
	    size_t errlen);
void	vs_update_free(struct vs_update *);

/* Parsing one RetrievePropertiesEx answer into s (the fuzzer's and the
 * unit tests' entry too): 0 or -1 with err; *token the continuation token
 * ("" at the end). */
int	vs_snap_parse(struct vs_snap *s, const char *xml, size_t len,
	    char *token, size_t tokenlen, char *err, size_t errlen);

/* The counter keys of VS_NCTR (-1: the server has none): 0 or -1. */
int	vs_perf_ids(struct vs_conn *, int ids[VS_NCTR], char *err,
	    size_t errlen);
/* QueryPerf for the hosts s->hosts[which[0..n-1]], the samples after
 * since[i] ("" or NULL: the newest only): fills their pnics' have_ctr and
 * sum, perf_ts.  0 or -1. */
int	vs_perf_query(struct vs_conn *, const int ids[VS_NCTR],
	    struct vs_snap *s, const size_t *which, const char *const *since,
	    size_t n, char *err, size_t errlen);

/* QueryDisksForVsan of host x (its vsanSystem): x->vdisks, vsan_fresh.
 * 0 or -1. */
int	vs_vsan_query(struct vs_conn *, struct vs_hostsnap *x, char *err,
	    size_t errlen);

/*
 * SMART from vCenter's vSAN health service (vsphere_smart.c): one
 * VsanQueryVcClusterSmartStatsSummary of cluster (a ClusterComputeResource
 * moid) on /vsanHealth.  0, or -1 with err (HTTP 404: no such service).
 */
int	vs_smart_query(struct vs_conn *, const char *cluster,
	    struct vs_smart *out, char *err, size_t errlen);
/* Parsing one answer (a whole SOAP envelope): the unit tests' and the
 * fuzzer's entry.  0, or -1 with err. */
int	vs_smart_parse(struct vs_smart *, const char *xml, size_t len,
	    char *err, size_t errlen);
/* Host x's part of an answer into x->sdisks (smart_fresh when the answer
 * summarised it, matched by name, case-insensitively). */
void	vs_smart_take(struct vs_hostsnap *x, const struct vs_smart *);
void	vs_smart_free(struct vs_smart *);

/* A host answering from the snapshot's host i (borrowed: the snapshot
 * outlives it). */
struct host	*vs_host_open(const struct vs_snap *, size_t i);
/* The snapshot host (struct vs_hostsnap) a vsphere host answers from. */
const void	*vs_host_snap(const struct host *);

#endif
