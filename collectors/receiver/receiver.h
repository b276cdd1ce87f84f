/*
 * receiver: collector mode — the ESXi hosts' syslog received (UDP, TCP,
 * TLS) and watched as the agent watches its own files: every message is a
 * line of its program's log for the logwatch engine, per host
 * (docs/collector.md, CONTRACT §5).  The collector "receiver" runs while
 * receiver.syslog has a listener.
 *
 * Its figures (--status, --status --json, /metrics) are published as
 * RECEIVER_FIGURES: a struct receiver_pic.
 */
#ifndef ESXWATCH_RECEIVER_H
#define ESXWATCH_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECEIVER_FIGURES	"receiver"
/* Hosts kept at once; past it the host silent the longest is forgotten
 * (counted: hosts_evicted). */
#define RECEIVER_MAX_HOSTS	2048
#define RECEIVER_MAX_LISTENERS	16

/* Why a message or a sender was not taken (dropped_total{reason}). */
enum receiver_drop {
	RDROP_UDP_OVERFLOW,	/* the kernel's socket buffer was full */
	RDROP_MALFORMED,	/* a frame or message that is not syslog */
	RDROP_TRUNCATED,	/* cut at 64 KiB (delivered cut) */
	RDROP_REFUSED_ALLOW,	/* a sender outside receiver.allow */
	RDROP_REFUSED_TLS,	/* a failed or unfinished TLS handshake */
	RDROP_REFUSED_CONNECTIONS, /* past max_connections */
	RDROP_N
};
extern const char *const receiver_drop_names[RDROP_N];

struct receiver_listener_pic {
	char		 address[64];
	char		 transport[4];
	bool		 listening;
	char		 error[160];	/* why not, when not */
	uint64_t	 messages;
	uint64_t	 connections;	/* open now */
};

struct receiver_host_pic {
	char		 name[128];
	char		 peer[48];
	char		 transport[4];
	uint64_t	 messages, alerts;
	int64_t		 last_seen_ms;
	bool		 silent;
};

struct receiver_pic {
	bool		 on;
	bool		 paused;	/* back-pressure: TCP not read */
	uint64_t	 pauses;
	size_t		 nlisteners;
	struct receiver_listener_pic listeners[RECEIVER_MAX_LISTENERS];
	uint64_t	 dropped[RDROP_N];
	uint64_t	 messages;
	uint64_t	 hosts_evicted;
	size_t		 nhosts;
	struct receiver_host_pic hosts[RECEIVER_MAX_HOSTS];
};

#endif
