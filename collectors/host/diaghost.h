/*
 * diaghost: the questions the diagnosis rules ask the host, answered with
 * the host's own tools through agent/exec (host.tools_dir first).
 *
 *  uplinks  which vmkernel interface reaches an NFS/iSCSI server address
 *           (the one whose IPv4 subnet holds it: `network ip interface
 *           ipv4 get`), its port group or dvSwitch (`network ip interface
 *           list`), and the physical uplinks under it (`network vswitch
 *           standard portgroup policy failover get -p PG`, falling back to
 *           `network vswitch standard list`; `network vswitch dvs vmware
 *           list` for a dvSwitch).  A server name (not an address) or an
 *           address no vmknic's subnet holds (routed) is "unknown": no
 *           uplink is guessed.
 *  ptable   `partedUtil getptbl /vmfs/devices/disks/DEV`, summarised.
 */
#ifndef ESXWATCH_DIAGHOST_H
#define ESXWATCH_DIAGHOST_H

#include <stdbool.h>
#include <stddef.h>

struct config;

/* true: uplinks ("vmnic1,vmnic2") and path ("vmk1, port group NFS on
 * vSwitch1") filled; false: why not, in path. */
bool	diaghost_uplinks(const struct config *, int timeout_s, const char *server,
	    char *uplinks, size_t ulen, char *path, size_t plen);
/* true: summary ("gpt; 3 partitions: ...") and the table as printed (lines
 * joined by " / "); false: why not, in table. */
bool	diaghost_ptable(const struct config *, int timeout_s, const char *dev,
	    char *summary, size_t slen, char *table, size_t tlen);
/* Summarise partedUtil getptbl output; false if it is not one. */
bool	diaghost_parse_ptable(const char *text, char *summary, size_t slen,
	    char *table, size_t tlen);

#endif
