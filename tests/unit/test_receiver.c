/*
 * Collector mode's own pieces without a socket: the listener address and
 * allow CIDR readers (collectors/receiver/receiver_conf.c) and the host
 * table (receiver_hosts.c): keyed by name, a silent host heard again,
 * bounded with the host silent the longest forgotten first, the state
 * kept across a restart.
 */
#include <netinet/in.h>
#include <arpa/inet.h>

#include <unistd.h>

#include "t.h"

#include "../../agent/lib/kvstore.h"
#include "../../collectors/receiver/receiver_hosts.h"

static struct sockaddr_storage
peer4(const char *a)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	s4->sin_family = AF_INET;
	inet_pton(AF_INET, a, &s4->sin_addr);
	return ss;
}

static struct sockaddr_storage
peer6(const char *a)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	s6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, a, &s6->sin6_addr);
	return ss;
}

TEST(addresses)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char why[200];

	CHECK_INT(receiver_parse_address("0.0.0.0:514", &sa, &len, why, sizeof(why)), 0);
	CHECK_INT(sa.ss_family, AF_INET);
	CHECK_INT(ntohs(((struct sockaddr_in *)&sa)->sin_port), 514);
	CHECK_INT(receiver_parse_address("[::]:1514", &sa, &len, why, sizeof(why)), 0);
	CHECK_INT(sa.ss_family, AF_INET6);
	CHECK_INT(receiver_parse_address("*:6514", &sa, &len, why, sizeof(why)), 0);
	CHECK_INT(sa.ss_family, AF_INET6);
	CHECK_INT(receiver_parse_address("[fe80::1]:9", &sa, &len, why, sizeof(why)), 0);
	CHECK_INT(receiver_parse_address("collector:514", &sa, &len, why, sizeof(why)), -1);
	CHECK(strstr(why, "not an IP address") != NULL);
	CHECK_INT(receiver_parse_address("0.0.0.0:0", &sa, &len, why, sizeof(why)), -1);
	CHECK_INT(receiver_parse_address("0.0.0.0:65536", &sa, &len, why, sizeof(why)), -1);
	CHECK_INT(receiver_parse_address(":514", &sa, &len, why, sizeof(why)), -1);
	CHECK_INT(receiver_parse_address("::1:514", &sa, &len, why, sizeof(why)), -1);
	CHECK_INT(receiver_parse_address("10.0.0.1", &sa, &len, why, sizeof(why)), -1);
}

TEST(allow_networks)
{
	struct receiver_cidr c;
	struct sockaddr_storage p;

	CHECK_INT(receiver_parse_cidr("10.20.0.0/16", &c), 0);
	p = peer4("10.20.3.4");
	CHECK(receiver_cidr_match(&c, &p));
	p = peer4("10.21.0.1");
	CHECK(!receiver_cidr_match(&c, &p));
	p = peer6("::ffff:10.20.9.9");		/* a dual-stack listener's peer */
	CHECK(receiver_cidr_match(&c, &p));
	p = peer6("fd00::1");
	CHECK(!receiver_cidr_match(&c, &p));
	CHECK_INT(receiver_parse_cidr("127.0.0.0/30", &c), 0);
	p = peer4("127.0.0.3");
	CHECK(receiver_cidr_match(&c, &p));
	p = peer4("127.0.0.4");
	CHECK(!receiver_cidr_match(&c, &p));
	CHECK_INT(receiver_parse_cidr("fd00:20::/33", &c), 0);
	p = peer6("fd00:20:7fff::1");
	CHECK(receiver_cidr_match(&c, &p));
	p = peer6("fd00:20:8000::1");
	CHECK(!receiver_cidr_match(&c, &p));
	CHECK_INT(receiver_parse_cidr("192.0.2.7", &c), 0);	/* one address */
	CHECK_INT(c.bits, 32);
	CHECK_INT(receiver_parse_cidr("0.0.0.0/0", &c), 0);
	p = peer4("198.51.100.1");
	CHECK(receiver_cidr_match(&c, &p));
	CHECK_INT(receiver_parse_cidr("10.0.0.0/33", &c), -1);
	CHECK_INT(receiver_parse_cidr("10.0.0.0/", &c), -1);
	CHECK_INT(receiver_parse_cidr("10.0.0.0/8x", &c), -1);
	CHECK_INT(receiver_parse_cidr("/8", &c), -1);
	CHECK_INT(receiver_parse_cidr("net", &c), -1);
}

static int backs;
static int64_t back_ms;

static void
on_back(void *arg, struct rhost *h, int64_t silent_ms)
{
	(void)arg;
	(void)h;
	backs++;
	back_ms = silent_ms;
}

TEST(hosts_by_name)
{
	struct rhosts *t = rhosts_new(NULL);
	struct rhost *a, *b;

	a = rhosts_get(t, "esx01", "10.0.0.1", "udp", 1000, on_back, NULL);
	b = rhosts_get(t, "esx02", "10.0.0.2", "tcp", 1000, on_back, NULL);
	CHECK(a != NULL && b != NULL && a != b);
	CHECK(rhosts_get(t, "esx01", "10.0.0.9", "tls", 2000, on_back, NULL) == a);
	CHECK_INT(a->messages, 2);
	CHECK_STR(a->peer, "10.0.0.9");		/* where it last sent from */
	CHECK_STR(a->transport, "tls");
	CHECK_INT(a->last_seen_ms, 2000);
	CHECK(rhosts_find(t, "esx03") == NULL);
	a->silent = true;
	backs = 0;
	rhosts_get(t, "esx01", "10.0.0.9", "tls", 9000, on_back, NULL);
	CHECK_INT(backs, 1);
	CHECK_INT(back_ms, 7000);
	CHECK(!a->silent);
	rhosts_get(t, "esx01", "10.0.0.9", "tls", 9500, on_back, NULL);
	CHECK_INT(backs, 1);
	rhosts_free(t);
}

TEST(hosts_are_bounded)
{
	struct rhosts *t = rhosts_new(NULL);
	struct receiver_pic *p = calloc(1, sizeof(*p));
	char name[32];
	int i;

	for (i = 0; i < RECEIVER_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "esx%d", i);
		rhosts_get(t, name, "10.0.0.1", "udp", 1000 + i, NULL, NULL);
	}
	/* esx5 is silent: it goes first, though esx0 was seen before it */
	rhosts_find(t, "esx5")->silent = true;
	rhosts_get(t, "new1", "10.0.0.1", "udp", 99999, NULL, NULL);
	CHECK(rhosts_find(t, "esx5") == NULL);
	CHECK(rhosts_find(t, "esx0") != NULL);
	rhosts_get(t, "new2", "10.0.0.1", "udp", 99999, NULL, NULL);
	CHECK(rhosts_find(t, "esx0") == NULL);	/* then the one seen the longest ago */
	CHECK(rhosts_find(t, "new1") != NULL && rhosts_find(t, "new2") != NULL);
	rhosts_figures(t, p);
	CHECK_INT(p->nhosts, RECEIVER_MAX_HOSTS);
	CHECK_INT(p->hosts_evicted, 2);
	free(p);
	rhosts_free(t);
}

TEST(state_survives_a_restart)
{
	char dir[] = "/tmp/test_receiver.XXXXXX", path[64];
	struct kvstore *kv;
	struct rhosts *t;
	struct rhost *h;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/receiver.kv", dir);
	kv = kv_open(path);
	t = rhosts_new(kv);
	h = rhosts_get(t, "esx01", "10.0.0.1", "tcp", 5000, NULL, NULL);
	h->silent = true;
	rhosts_get(t, "esx02", "10.0.0.2", "udp", 6000, NULL, NULL);
	rhosts_save(t, kv);
	CHECK_INT(kv_save(kv), 0);
	kv_close(kv);
	rhosts_free(t);

	kv = kv_open(path);
	t = rhosts_new(kv);
	h = rhosts_find(t, "esx01");
	CHECK(h != NULL);
	if (h != NULL) {
		CHECK(h->silent);			/* no second alert after a restart */
		CHECK_INT(h->last_seen_ms, 5000);
		CHECK_STR(h->peer, "10.0.0.1");
		CHECK_STR(h->transport, "tcp");
		CHECK_INT(h->messages, 0);
	}
	CHECK(rhosts_find(t, "esx02") != NULL && !rhosts_find(t, "esx02")->silent);
	kv_close(kv);
	rhosts_free(t);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	t_prog = "test_receiver";
	RUN(addresses);
	RUN(allow_networks);
	RUN(hosts_by_name);
	RUN(hosts_are_bounded);
	RUN(state_survives_a_restart);
	return t_done();
}
