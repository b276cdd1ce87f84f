/*
 * receiver_conf: the receiver: section of the configuration (collector
 * mode, CONTRACT §5) as a registry row (agent/config/config_section.h),
 * and the two value readers the listener shares with it: a listener's
 * address and an allow CIDR.
 */
#ifndef ESXWATCH_RECEIVER_CONF_H
#define ESXWATCH_RECEIVER_CONF_H

#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../agent/config/config_section.h"

extern const struct cfg_section receiver_section;

/* A listener's HOST:PORT: an IPv4 literal, [IPv6] literal or "*" (every
 * IPv6 and IPv4 address).  0, or -1 with why. */
int	receiver_parse_address(const char *s, struct sockaddr_storage *sa,
	    socklen_t *salen, char *why, size_t whylen);

/* An allow entry: ADDRESS[/BITS], IPv4 or IPv6 (an IPv4 network also
 * matches IPv4-mapped IPv6 peers). */
struct receiver_cidr {
	int		family;		/* AF_INET, AF_INET6 */
	uint8_t		addr[16];
	int		bits;
};
int	receiver_parse_cidr(const char *s, struct receiver_cidr *out);
bool	receiver_cidr_match(const struct receiver_cidr *,
	    const struct sockaddr_storage *peer);

#endif
