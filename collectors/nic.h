/*
 * nic: link state and error counters of the host's network interfaces
 * (docs/events.md, collector "nic").
 *
 * The host fills the plain struct (host/nicinfo.h: esxcli's records or
 * Linux's /sys/class/net, or what another kind of host knows); the
 * platform-neutral part here, nic_observe(),
 * compares one observation with the previous one kept in the collector's
 * state store and produces the sample, change and alert events.
 */
#ifndef ESXWATCH_NIC_H
#define ESXWATCH_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/nicinfo.h"

struct collector_conf;
struct event;
struct kvstore;

/* Events produced by one observation (the caller emits or frees them). */
struct nic_events {
	struct event	*v[2 + NIC_NCOUNTERS];
	size_t		 n;
};

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
