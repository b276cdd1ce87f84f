/*
 * monitor_conf: the monitor: section (agent/monitor.h) and its address
 * rule, apart from the server so that loading a configuration does not
 * bring the server, the status writer and the queue along.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "monitor.h"

static int
check_listen(struct lctx *c, const char *key, const char *v, int line, int col)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	char why[160], b[64];
	size_t i;

	if (*v == '\0')
		return 0;	/* off */
	if (monitor_parse_listen(v, &sa, &salen, why, sizeof(why)) == 0)
		return 0;
	/* echoed on one line, whatever it holds */
	for (i = 0; v[i] != '\0' && i < sizeof(b) - 1; i++)
		b[i] = isprint((unsigned char)v[i]) ? v[i] : '?';
	b[i] = '\0';
	cfg_error(c, line, col, "'%s': '%s' %s", key, b, why);
	return -1;
}

#define C(f)	offsetof(struct config, f)
static const struct cfg_key monitor_keys[] = {
	{ .name = "listen", .type = KT_STR, .off = C(monitor_listen),
	  .check = check_listen,
	  .doc = "HOST:PORT on loopback (127.0.0.1, [::1], localhost) for GET "
	  "/health and /metrics; empty: off" },
};
#undef C

/* A plain section: the loader walks the rows onto struct config. */
const struct cfg_section monitor_section = {
	.name = "monitor",
	.after = "host",
	.keys = monitor_keys,
	.nkeys = sizeof(monitor_keys) / sizeof(monitor_keys[0]),
};

/* A port: 1..65535, decimal digits only. */
static int
parse_port(const char *p, int *port)
{
	long v = 0;

	if (*p == '\0' || strlen(p) > 5)
		return -1;
	for (; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

int
monitor_parse_listen(const char *s, struct sockaddr_storage *sa, socklen_t *salen,
    char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	size_t hl;
	int port;

	memset(sa, 0, sizeof(*sa));
	if (colon == NULL || parse_port(colon + 1, &port) < 0) {
		snprintf(why, whylen, "is not HOST:PORT with a port 1..65535 "
		    "(e.g. 127.0.0.1:2020)");
		return -1;
	}
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		hl = sizeof(host) - 1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;

		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1 &&
		    IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)port);
			*salen = sizeof(*a6);
			return 0;
		}
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)sa;

		if (strcasecmp(host, "localhost") == 0)
			snprintf(host, sizeof(host), "127.0.0.1");
		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1 &&
		    (ntohl(a4->sin_addr.s_addr) >> 24) == 127) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons((uint16_t)port);
			*salen = sizeof(*a4);
			return 0;
		}
	}
	snprintf(why, whylen, "is not a loopback address (127.0.0.0/8, [::1] "
	    "or localhost): the monitor must never be reachable from the network%s",
	    strchr(host, ':') != NULL && host[0] != '[' ?
	    "; an IPv6 address goes in brackets, [::1]:PORT" : "");
	return -1;
}
