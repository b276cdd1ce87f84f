/*
 * nic: link state and error counters of the host's network interfaces
 * (docs/events.md, collector "nic").
 *
 * Two readers fill the same plain struct: ESXi (`esxcli network nic list`
 * and `network nic stats get -n NIC`, through localcli when present) and
 * Linux (/sys/class/net).  The platform-neutral part, nic_observe(),
 * compares one observation with the previous one kept in the collector's
 * state store and produces the sample, change and alert events.
 */
#ifndef ESXWATCH_NIC_H
#define ESXWATCH_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/esxcli.h"

struct collector_conf;
struct event;
struct kvstore;

#define NIC_NAME_MAX	64
#define NIC_MAX		1024	/* interfaces per host we look at */
#define NIC_NCOUNTERS	23

enum nic_state { NIC_UNKNOWN = -1, NIC_DOWN = 0, NIC_UP = 1 };

/* How a counter is named on each side, and whether its growth is an alert. */
struct nic_counter_def {
	const char	*field;		/* esxwatch_<field>, esxwatch_<field>_delta */
	const char	*label;		/* esxcli's name, also used in alert text */
	const char	*sysfs;		/* statistics/<name>, NULL if Linux has none */
	const char	*alert;		/* severity when it grows, NULL = no alert */
};
extern const struct nic_counter_def nic_counters[NIC_NCOUNTERS];

struct nic_info {
	char		name[NIC_NAME_MAX];
	int		link;		/* enum nic_state */
	int		admin;		/* enum nic_state */
	long long	speed_mbps;	/* -1 unknown */
	char		duplex[16];	/* full | half | "" unknown */
	char		driver[64];
	char		mac[40];
	long long	mtu;		/* -1 unknown */
	bool		have[NIC_NCOUNTERS];
	uint64_t	ctr[NIC_NCOUNTERS];
};

/* Events produced by one observation (the caller emits or frees them). */
struct nic_events {
	struct event	*v[2 + NIC_NCOUNTERS];
	size_t		 n;
};

/*
 * Fill ni from one row of `network nic list` (both the 7.0+ and the 5.5
 * column sets) and, if stats is not NULL, the block of `network nic stats
 * get`.  Returns -1 if the row has no Name.
 */
int	nic_from_esxcli(const struct esx_rec *row, const struct esx_rec *stats,
	    struct nic_info *ni);

/*
 * Read ROOT/class/net (ROOT = ESXWATCH_SYSFS_ROOT or /sys).  Interfaces
 * without a `device` link (loopback, bridges, veth, ...) are skipped
 * unless an include pattern names them; include/exclude apply to all.
 * Returns the number of interfaces in *out (sorted by name, caller frees),
 * or -1 if the directory cannot be read.
 */
int	nic_read_sysfs(const char *root, const struct collector_conf *conf,
	    struct nic_info **out);

/*
 * Compare ni with what state holds for it, update state, and append the
 * events: a `change` when the link went up<->down (never on first sight),
 * one `alert` per error/drop counter that grew, and the `sample`.  Deltas
 * appear only when there is a previous value that is not larger than the
 * current one (a counter that went backwards starts a new baseline).
 */
int	nic_observe(struct kvstore *state, const struct nic_info *ni,
	    int64_t now_ms, struct nic_events *evs);
void	nic_events_free(struct nic_events *);

#endif
