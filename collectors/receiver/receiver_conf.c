/*
 * receiver_conf: the receiver: section (receiver_conf.h).  A plain
 * section (its rows are walked onto struct config by the loader) with one
 * custom row, syslog: a list of listeners, each a mapping walked with its
 * own table; what spans a listener's keys (tls needs cert and key; cert,
 * key and client_ca only with tls; one address and transport once) is
 * checked as each is read.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/config/config_int.h"
#include "receiver_conf.h"

static const char *const transport_choices[] = { "udp", "tcp", "tls", NULL };
static const char *const hostname_choices[] = { "header", "peer", NULL };
static const char *const forward_choices[] = { "matches", "all", NULL };

/* ---- value readers ------------------------------------------------- */

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
receiver_parse_address(const char *s, struct sockaddr_storage *sa,
    socklen_t *salen, char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':');
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
	char host[64];
	size_t hl;
	int port;

	memset(sa, 0, sizeof(*sa));
	if (colon == NULL || parse_port(colon + 1, &port) < 0) {
		snprintf(why, whylen, "is not HOST:PORT with a port 1..65535 "
		    "(e.g. 0.0.0.0:514, [::]:1514)");
		return -1;
	}
	hl = (size_t)(colon - s);
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(why, whylen, "has no address before the port "
		    "(0.0.0.0, [::], * or one of the machine's addresses)");
		return -1;
	}
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (strcmp(host, "*") == 0 || (hl > 2 && host[0] == '[' &&
	    host[hl - 1] == ']')) {
		if (strcmp(host, "*") == 0)
			a6->sin6_addr = in6addr_any;
		else {
			host[hl - 1] = '\0';
			if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
				goto bad;
		}
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*salen = sizeof(*a6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*salen = sizeof(*a4);
		return 0;
	}
bad:
	snprintf(why, whylen, "is not an IP address and port (an IPv4 "
	    "address, an IPv6 address in brackets such as [::]:514, or "
	    "*:PORT for every address)");
	return -1;
}

int
receiver_parse_cidr(const char *s, struct receiver_cidr *out)
{
	char a[64];
	const char *slash = strchr(s, '/');
	size_t l = slash ? (size_t)(slash - s) : strlen(s);
	int max, bits;

	memset(out, 0, sizeof(*out));
	if (l == 0 || l >= sizeof(a))
		return -1;
	memcpy(a, s, l);
	a[l] = '\0';
	if (inet_pton(AF_INET, a, out->addr) == 1) {
		out->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, a, out->addr) == 1) {
		out->family = AF_INET6;
		max = 128;
	} else
		return -1;
	bits = max;
	if (slash != NULL) {
		const char *p = slash + 1;

		if (*p == '\0' || strlen(p) > 3)
			return -1;
		bits = 0;
		for (; *p != '\0'; p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			bits = bits * 10 + (*p - '0');
		}
		if (bits > max)
			return -1;
	}
	out->bits = bits;
	return 0;
}

static bool
prefix_eq(const uint8_t *a, const uint8_t *b, int bits)
{
	int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, (size_t)full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[full] ^ b[full]) & (0xff << (8 - rest))) == 0;
}

bool
receiver_cidr_match(const struct receiver_cidr *c,
    const struct sockaddr_storage *peer)
{
	const struct sockaddr_in *a4 = (const void *)peer;
	const struct sockaddr_in6 *a6 = (const void *)peer;

	if (peer->ss_family == AF_INET)
		return c->family == AF_INET &&
		    prefix_eq((const uint8_t *)&a4->sin_addr, c->addr, c->bits);
	if (peer->ss_family != AF_INET6)
		return false;
	if (c->family == AF_INET6)
		return prefix_eq(a6->sin6_addr.s6_addr, c->addr, c->bits);
	/* an IPv4 network and a mapped peer (::ffff:a.b.c.d) */
	return IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) &&
	    prefix_eq(a6->sin6_addr.s6_addr + 12, c->addr, c->bits);
}

/* ---- checks -------------------------------------------------------- */

static void
echo(const char *v, char *b, size_t n)
{
	size_t i;

	for (i = 0; v[i] != '\0' && i < n - 1; i++)
		b[i] = isprint((unsigned char)v[i]) ? v[i] : '?';
	b[i] = '\0';
}

static int
check_address(struct lctx *c, const char *key, const char *v, int line, int col)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	char why[200], b[80];

	if (receiver_parse_address(v, &sa, &salen, why, sizeof(why)) == 0)
		return 0;
	echo(v, b, sizeof(b));
	cfg_error(c, line, col, "'%s': '%s' %s", key, b, why);
	return -1;
}

static int
check_cidr(struct lctx *c, const char *key, const char *v, int line, int col)
{
	struct receiver_cidr cidr;
	char b[80];

	if (receiver_parse_cidr(v, &cidr) == 0)
		return 0;
	echo(v, b, sizeof(b));
	cfg_error(c, line, col, "'%s': '%s' is not a network: expected "
	    "ADDRESS/BITS (10.0.0.0/8, fd00::/8) or one address", key, b);
	return -1;
}

/* ---- syslog: the listeners ---------------------------------------- */

#define L(f)	offsetof(struct receiver_listen, f)
static const struct cfg_key listen_keys[] = {
	{ .name = "address", .type = KT_OSTR, .off = L(address),
	  .check = check_address,
	  .doc = "HOST:PORT to listen on (0.0.0.0:514, [::]:1514, *:514); required" },
	{ .name = "transport", .type = KT_ENUM, .off = L(transport),
	  .choices = transport_choices, .def = "udp",
	  .doc = "udp, tcp or tls (tcp and tls: octet counting or LF framing, per connection)" },
	{ .name = "cert", .type = KT_OSTR, .off = L(cert), .flags = KF_OMIT_NULL,
	  .doc = "tls: the server certificate (PEM, with its chain)" },
	{ .name = "key", .type = KT_OSTR, .off = L(key), .flags = KF_OMIT_NULL,
	  .doc = "tls: the certificate's private key (PEM)" },
	{ .name = "client_ca", .type = KT_OSTR, .off = L(client_ca),
	  .flags = KF_OMIT_NULL,
	  .doc = "tls: when set, a client certificate signed by this CA is required" },
};
#undef L

static void
listen_free_all(struct receiver_conf *rc)
{
	for (size_t i = 0; i < rc->nsyslog; i++)
		keys_free(listen_keys, NELEM(listen_keys), &rc->syslog[i]);
	free(rc->syslog);
	rc->syslog = NULL;
	rc->nsyslog = 0;
}

/* What spans one listener's keys, and listeners twice. */
static void
listen_finish(struct lctx *c, struct receiver_conf *rc,
    const struct ynode *it, const struct kpos *pos, size_t item)
{
	struct receiver_listen *l = &rc->syslog[rc->nsyslog - 1];
	bool tls;

	if (l->address == NULL) {
		if (!kspec_refused(listen_keys, NELEM(listen_keys), pos,
		    "address"))
			rep(c, true, it->line, it->col, "receiver.syslog: item "
			    "%zu has no 'address' (HOST:PORT, e.g. "
			    "0.0.0.0:514)", item);
		return;
	}
	tls = l->transport != NULL && strcmp(l->transport, "tls") == 0;
	if (tls && (l->cert == NULL || l->key == NULL))
		rep(c, true, it->line, it->col, "receiver.syslog[%zu]: "
		    "transport tls needs 'cert' and 'key' (the server's "
		    "certificate and private key, PEM)", item);
	if (!tls && (l->cert != NULL || l->key != NULL || l->client_ca != NULL))
		rep(c, true, it->line, it->col, "receiver.syslog[%zu]: 'cert', "
		    "'key' and 'client_ca' are for transport tls, not %s", item,
		    l->transport ? l->transport : "udp");
	for (size_t j = 0; j + 1 < rc->nsyslog; j++)
		if (rc->syslog[j].address != NULL &&
		    strcmp(rc->syslog[j].address, l->address) == 0 &&
		    (strcmp(rc->syslog[j].transport, "udp") == 0) ==
		    (strcmp(l->transport, "udp") == 0)) {
			rep(c, true, it->line, it->col, "receiver.syslog[%zu]: "
			    "%s %s is already a listener (line %d)", item,
			    l->transport, l->address, rc->syslog[j].src_line);
			break;
		}
}

static int
syslog_apply(struct lctx *c, const struct cfg_key *k, void *field,
    const struct ynode *v)
{
	struct receiver_conf *rc = field;

	(void)k;
	listen_free_all(rc);
	if (v->type == YN_SCALAR && v->null)
		return 0;
	if (v->type != YN_SEQ) {
		rep(c, true, v->line, v->col, "'receiver.syslog': expected a "
		    "list of listeners ({address, transport, ...}), got %s",
		    ynode_what(v));
		return -1;
	}
	rc->syslog = xmalloc((v->n ? v->n : 1) * sizeof(*rc->syslog));
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *it = v->v[i];
		struct receiver_listen *l = &rc->syslog[rc->nsyslog];
		struct kpos pos[KPOS_MAX];
		char sect[64];

		if (it->type != YN_MAP) {
			rep(c, true, it->line, it->col, "receiver.syslog: item "
			    "%zu must be a mapping (address, transport, ...), "
			    "got %s", i + 1, ynode_what(it));
			continue;
		}
		memset(l, 0, sizeof(*l));
		keys_init(listen_keys, NELEM(listen_keys), l);
		l->src_line = it->line;
		snprintf(sect, sizeof(sect), "receiver.syslog[%zu]", i + 1);
		memset(pos, 0, sizeof(pos));
		apply_map(c, listen_keys, NELEM(listen_keys), l, it, sect, pos);
		rc->nsyslog++;
		listen_finish(c, rc, it, pos, i + 1);
	}
	return 0;
}

static void
syslog_free(void *field)
{
	listen_free_all(field);
}

static void
syslog_print(FILE *f, const struct cfg_key *k, const void *field,
    const char *in)
{
	const struct receiver_conf *rc = field;
	char ind[32];

	fprintf(f, "%s%s:%s\n", in, k->name, rc->nsyslog == 0 ? " []" : "");
	snprintf(ind, sizeof(ind), "%s    ", in);
	for (size_t i = 0; i < rc->nsyslog; i++) {
		char first[32];

		snprintf(first, sizeof(first), "%s  - ", in);
		key_print(f, &listen_keys[0], &rc->syslog[i], first);
		keys_print(f, listen_keys + 1, NELEM(listen_keys) - 1,
		    &rc->syslog[i], ind, 0);
	}
}

static const struct cfg_custom syslog_type = {
	.type_doc = "list of {address, transport, cert, key, client_ca}",
	.apply = syslog_apply,
	.free = syslog_free,
	.print = syslog_print,
};

/* ---- the section --------------------------------------------------- */

#define C(f)	offsetof(struct config, receiver.f)
static const struct cfg_key receiver_keys[] = {
	{ .name = "syslog", .type = KT_CUSTOM, .off = offsetof(struct config,
	  receiver), .custom = &syslog_type,
	  .doc = "Listeners: {address, transport (udp, tcp or tls), cert, key, "
	  "client_ca}; empty: collector mode off" },
	{ .name = "allow", .type = KT_LIST, .off = C(allow), .check = check_cidr,
	  .doc = "Source networks accepted (CIDR); empty: any" },
	{ .name = "hostname", .type = KT_ENUM, .off = C(hostname),
	  .choices = hostname_choices, .def = "header",
	  .doc = "A host's name: header (the message's HOSTNAME) or peer (the "
	  "sender's address)" },
	{ .name = "silent_after", .type = KT_INT, .off = C(silent_after),
	  .min = 0, .max = 7 * 86400, .def = "900",
	  .doc = "s; a host that sent and then stays silent this long: one alert (0: off)" },
	{ .name = "forward", .type = KT_FORWARD, .off = C(forward),
	  .choices = forward_choices, .def = "matches",
	  .doc = "matches: only received lines a rule matched; all: every message" },
	{ .name = "max_connections", .type = KT_INT, .off = C(max_connections),
	  .min = 1, .max = 65536, .def = "1024",
	  .doc = "TCP and TLS connections open at once; more are refused (counted)" },
};
#undef C

/* Off while there is no listener: its collector does not even run
 * (--status lists the collectors that run). */
static void
receiver_resolve(struct config *cfg)
{
	for (size_t i = 0; i < cfg->ncollectors; i++)
		if (strcmp(cfg->collectors[i].name, "receiver") == 0 &&
		    cfg->receiver.nsyslog == 0)
			cfg->collectors[i].enabled = false;
}

const struct cfg_section receiver_section = {
	.name = "receiver",
	.after = "host",
	.resolve = receiver_resolve,
	.keys = receiver_keys,
	.nkeys = NELEM(receiver_keys),
};
