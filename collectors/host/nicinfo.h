/*
 * nicinfo: a network interface as the collectors see it, whatever kind of
 * host reported it (host/host.h), and the two readers of the local kinds:
 * esxcli's records (`network nic list`, `network nic stats get -n NIC`,
 * through any host's esxcli answers) and Linux's /sys/class/net.  A
 * counter a host cannot report is not "have": absent, never zero.
 */
#ifndef ESXWATCH_NICINFO_H
#define ESXWATCH_NICINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "esxcli.h"

struct collector_conf;
struct host;

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
	/* ctr are sums of per-interval samples since the host was first
	 * polled (the vSphere API's PerformanceManager), not the device's
	 * totals: events carry the _delta fields only (CONTRACT §5) */
	bool		sums_only;
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
 * `network nic list`, then `network nic stats get -n NIC` per NIC conf
 * wants, through h's esxcli answers: the number of NICs with *out (caller
 * frees), or -1.
 */
/* "up"/"down" (any case) as enum nic_state; anything else NIC_UNKNOWN. */
int	nic_parse_state(const char *);
int	nic_read_esxcli(struct host *h, const struct collector_conf *conf,
	    int timeout_s, struct nic_info **out);

#endif
