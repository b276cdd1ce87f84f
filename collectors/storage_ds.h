/*
 * storage_ds: one consistent picture of the host's storage, built from the
 * esxcli outputs the datastore collector gathers, and the state of every
 * device and datastore derived from it (docs/events.md, "datastore").
 *
 *   storage core device list    Status (on, off, degraded, dead,
 *                               not connected), Is Offline
 *   storage core path list      State per path: active, standby, disabled, dead
 *   storage vmfs extent list    VMFS datastore -> device(s)
 *   storage filesystem list     mounted volumes: name, type, Mounted
 *   storage nfs / nfs41 list    Accessible, Mounted
 *
 * Pure functions over parsed output, so the unit tests can drive every
 * state from fixtures.
 */
#ifndef ESXWATCH_STORAGE_DS_H
#define ESXWATCH_STORAGE_DS_H

#include <stdbool.h>
#include <stddef.h>

struct esx_out;

/* In increasing order of badness: a datastore takes its worst device's. */
enum ds_state {
	DS_OK = 0,
	DS_DEGRADED,
	DS_UNMOUNTED,
	DS_OFF,
	DS_INACCESSIBLE,
	DS_APD,
	DS_PDL
};

#define DS_NAME_MAX	256
#define DS_LIST_MAX	1024

struct ds_dev {
	char	 id[DS_NAME_MAX];
	char	 status[32];		/* as esxcli printed it */
	char	 display[DS_NAME_MAX];
	bool	 offline;
	bool	 pdl_evidence;		/* vdq -q said IsPDL 1 */
	int	 active, standby, disabled, dead, total;
	char	 datastores[DS_LIST_MAX];	/* "a, b" */
	char	 fs_type[32];		/* of the (first) datastore it backs */
};

struct ds_vol {
	char	 name[DS_NAME_MAX];
	char	 fs_type[32];		/* VMFS-6, NFS, NFS41, vsan, vfat ... */
	char	 mount[DS_LIST_MAX];
	int	 mounted;		/* 1, 0, -1 unknown */
	int	 accessible;		/* NFS only: 1, 0; -1 unknown */
	bool	 nfs;
	char	 host[DS_NAME_MAX];
	char	 share[DS_LIST_MAX];
	char	 devices[DS_LIST_MAX];	/* backing devices, "a, b"; "" for NFS */
};

struct ds_snap {
	struct ds_dev	*devs;
	size_t		 ndev;
	struct ds_vol	*vols;
	size_t		 nvol;
};

/*
 * Build the picture.  devs and paths are required; extents, fs, nfs and
 * nfs41 may be NULL (that source failed: its part is left out, never
 * guessed).  Returns 0, or -1 with a reason when devs/paths are not what
 * the commands print (an empty device list is an error: a host always has
 * devices).
 */
int		 ds_snap_build(struct ds_snap *, const struct esx_out *devs,
		    const struct esx_out *paths, const struct esx_out *extents,
		    const struct esx_out *fs, const struct esx_out *nfs,
		    const struct esx_out *nfs41, char *err, size_t errlen);
void		 ds_snap_free(struct ds_snap *);
struct ds_dev	*ds_find_dev(struct ds_snap *, const char *id);
/* Is item a whole element of a ", "-separated list (devices, datastores)? */
bool		 ds_in_list(const char *list, const char *item);
/* A device that looks unwell: worth asking vdq for PDL evidence. */
bool		 ds_dev_suspect(const struct ds_dev *);

/*
 * The device's state.  baseline_live is the most live (active + standby)
 * paths seen for it before (0 = none known): fewer now means degraded.
 */
enum ds_state	 ds_dev_state(const struct ds_dev *, int baseline_live);
/* The datastore's state, from its devices' states (devstate[i] for
 * snap->devs[i]). */
enum ds_state	 ds_vol_state(const struct ds_snap *, const struct ds_vol *,
		    const enum ds_state *devstate);
const char	*ds_state_name(enum ds_state);
/* info, warning, error or critical for an event about this state. */
const char	*ds_state_severity(enum ds_state);

#endif
