/*
 * A sink, a collector and a kind of host that exist only in this test
 * binary: each is one file's worth of table (here, this file) plus one
 * registration, with no edit in agent/ — their keys are validated,
 * defaulted and printed by the configuration like the built-in ones'
 * (agent/config/config_schema.h), and the built-in collectors read the
 * host through collectors/host/host.h alone.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/config/config.h"
#include "../../agent/config/config_int.h"
#include "../../agent/lib/platform.h"
#include "../../agent/lib/exec.h"
#include "../../agent/lib/kvstore.h"
#include "../../collectors/collector.h"
#include "../../collectors/host/esxcli.h"
#include "../../collectors/host/host.h"
#include "../../collectors/host/nicinfo.h"
#include "../../output/sink.h"

/* ---- the test sink: output/NAME.c would hold this ---- */

struct testsink_opts {
	int	 level;
	char	*label;
	char	*token;
};

static const char *const mode_choices[] = { "fast", "safe", NULL };

#define O(f)	offsetof(struct testsink_opts, f)
static const struct cfg_key testsink_keys[] = {
	{ .name = "level", .type = KT_INT, .off = O(level), .min = 1, .max = 9,
	  .def = "3", .doc = "test: a level" },
	{ .name = "label", .type = KT_ENUM, .off = O(label),
	  .choices = mode_choices, .def = "safe", .doc = "test: a mode" },
	{ .name = "token", .type = KT_STR, .off = O(token), .flags = KF_SECRET,
	  .doc = "test: a secret" },
};
#undef O

static bool finish_called;

/* A rule across keys: level 9 wants the safe mode. */
static void
testsink_finish(const struct cfg_finish *f)
{
	const struct sink *self = sink_find_name("testsink");
	const struct testsink_opts *o = sink_opts(f->d, self);
	const struct kpos *lp = cfg_finish_pos(f, "level");

	finish_called = true;
	if (o != NULL && o->level == 9 && strcmp(o->label, "safe") != 0)
		cfg_error(f->c, lp->line, lp->col, "'level': 9 needs label: "
		    "safe");
}

static int
ts_open(struct sink_ctx *ctx)
{
	(void)ctx;
	return 0;
}

static enum send_result
ts_send(struct sink_ctx *ctx, const struct batch *b, int *ra)
{
	(void)ctx;
	(void)b;
	(void)ra;
	return SEND_OK;
}

static void
ts_close(struct sink_ctx *ctx)
{
	(void)ctx;
}

static const struct sink sink_testsink = {
	.name = "testsink",
	.proto = (enum dest_proto)90,	/* any number the built-ins do not use */
	.open = ts_open,
	.send = ts_send,
	.close = ts_close,
	.port = 7000,
	.tls_port = 7001,
	.keys = testsink_keys,
	.nkeys = sizeof(testsink_keys) / sizeof(testsink_keys[0]),
	.opts_size = sizeof(struct testsink_opts),
	.finish = testsink_finish,
};

/* ---- the test collector: collectors/NAME.c would hold this ---- */

/* A nested value, the shape of rules[].storm: `off` or {max: N, window: S}. */
struct limit {
	bool	 on;
	int	 max;
	int	 window;
};

static const struct cfg_key limit_keys[] = {
	{ .name = "max", .type = KT_INT, .off = offsetof(struct limit, max),
	  .min = 1, .max = 1000, .def = "10", .doc = "events" },
	{ .name = "window", .type = KT_INT,
	  .off = offsetof(struct limit, window), .min = 1, .max = 3600,
	  .def = "60", .doc = "seconds" },
};

static void
limit_init(const struct cfg_key *k, void *field)
{
	struct limit *l = field;

	(void)k;
	keys_init(limit_keys, 2, l);
	l->on = true;
}

static int
limit_apply(struct lctx *c, const struct cfg_key *k, void *field,
    const struct ynode *v)
{
	struct limit *l = field;

	if (v->type == YN_SCALAR && !v->null && strcmp(v->s, "off") == 0) {
		l->on = false;
		return 0;
	}
	if (!want_map(c, v, k->name))
		return -1;
	l->on = true;
	apply_map(c, limit_keys, 2, l, v, k->name, NULL);
	return 0;
}

static void
limit_print(FILE *f, const struct cfg_key *k, const void *field,
    const char *in)
{
	const struct limit *l = field;

	if (!l->on)
		fprintf(f, "%s%s: off\n", in, k->name);
	else
		fprintf(f, "%s%s: { max: %d, window: %d }\n", in, k->name,
		    l->max, l->window);
}

static const struct cfg_custom limit_type = {
	.type_doc = "`off` or {max, window}",
	.apply = limit_apply,
	.init = limit_init,
	.print = limit_print,
};

struct testcoll_opts {
	int		 depth;
	struct limit	 limit;
};

static const struct cfg_key testcoll_keys[] = {
	{ .name = "depth", .type = KT_INT,
	  .off = offsetof(struct testcoll_opts, depth), .min = 1, .max = 5,
	  .def = "2", .doc = "test: a depth" },
	{ .name = "limit", .type = KT_CUSTOM,
	  .off = offsetof(struct testcoll_opts, limit), .custom = &limit_type,
	  .doc = "test: a nested value" },
};

static int
tc_collect(struct collector_ctx *ctx, struct emitter *em)
{
	(void)ctx;
	(void)em;
	return 0;
}

static const struct collector collector_testcoll = {
	.name = "testcoll",
	.default_interval = 42,
	.collect = tc_collect,
	.keys = testcoll_keys,
	.nkeys = 2,
	.opts_size = sizeof(struct testcoll_opts),
};


/* ---- the test host: collectors/host/NAME.c would hold this ----
 * A kind of host that knows its NICs (from, say, an API) and nothing
 * else: no esxcli, no tools.  Its CRC counter grows by 7 a poll; vmnic1
 * has no CRC counter at all (absent, as the vSphere API's NICs are). */

static int polls;

static int
th_nics(struct host *h, const struct collector_conf *conf, int timeout_s,
    struct nic_info **out)
{
	struct nic_info *v = calloc(2, sizeof(*v));
	size_t crc = 0;

	(void)h;
	(void)conf;
	(void)timeout_s;
	if (v == NULL)
		return -1;
	for (size_t i = 0; i < NIC_NCOUNTERS; i++)
		if (strcmp(nic_counters[i].field, "rx_crc_errors") == 0)
			crc = i;
	snprintf(v[0].name, sizeof(v[0].name), "vmnic0");
	v[0].link = NIC_UP;
	v[0].admin = NIC_UNKNOWN;
	v[0].speed_mbps = 10000;
	v[0].mtu = -1;
	v[0].have[crc] = true;
	v[0].ctr[crc] = 100 + 7 * (uint64_t)polls;
	snprintf(v[1].name, sizeof(v[1].name), "vmnic1");
	v[1].link = NIC_DOWN;
	v[1].admin = NIC_UNKNOWN;
	v[1].speed_mbps = v[1].mtu = -1;
	polls++;
	*out = v;
	return 2;
}

static void
th_close(struct host *h)
{
	free(h);
}

static const struct host_ops testhost_ops = {
	.nics = th_nics,
	.close = th_close,
};

static struct host *
th_open(const struct config *cfg)
{
	struct host *h = calloc(1, sizeof(*h));

	(void)cfg;
	if (h == NULL)
		return NULL;
	h->ops = &testhost_ops;
	h->kind = "testhost";
	h->platform = PLATFORM_ESXI;
	return h;
}

static const struct host_kind host_kind_testhost = {
	.name = "testhost",
	.open = th_open,
};

/* What a collector emits, kept for the checks. */
#define TH_MAXEV	16
struct th_got {
	struct event	*ev[TH_MAXEV];
	size_t		 n;
};

static int
th_emit(struct emitter *em, struct event *ev)
{
	struct th_got *g = em->arg;

	if (ev == NULL || g->n == TH_MAXEV) {
		event_free(ev);
		return -1;
	}
	g->ev[g->n++] = ev;
	return 0;
}

static size_t
th_emit_many(struct emitter *em, struct event **evs, size_t n)
{
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += th_emit(em, evs[i]) != 0;
	return failed;
}

static int
th_sync(struct emitter *em)
{
	(void)em;
	return 0;
}

static const struct emitter_ops th_ops = {
	.emit = th_emit, .emit_many = th_emit_many, .sync = th_sync,
};

static const struct event *
th_find(const struct th_got *g, const char *kind, const char *nic)
{
	for (size_t i = 0; i < g->n; i++) {
		const char *k = event_get(g->ev[i], "esxwatch_kind");
		const char *n = event_get(g->ev[i], "esxwatch_nic");

		if (k != NULL && n != NULL && strcmp(k, kind) == 0 &&
		    strcmp(n, nic) == 0)
			return g->ev[i];
	}
	return NULL;
}

static void
th_free(struct th_got *g)
{
	for (size_t i = 0; i < g->n; i++)
		event_free(g->ev[i]);
	g->n = 0;
}

/* ---- the tests ---- */

static char tmpdir[256], cfgpath[300], msgs[8192];
static int nerr;

static void
collect(void *arg, bool is_error, const char *msg)
{
	size_t o = strlen(msgs);

	(void)arg;
	nerr += is_error;
	snprintf(msgs + o, sizeof(msgs) - o, "%s\n", msg);
}

static struct config *
load(const char *text)
{
	FILE *f;

	msgs[0] = '\0';
	nerr = 0;
	snprintf(cfgpath, sizeof(cfgpath), "%s/agent.yaml", tmpdir);
	f = fopen(cfgpath, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return config_load(cfgpath, collect, NULL);
}

static char *
print_to_string(const struct config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	config_print(c, f);
	fclose(f);
	return buf;
}

static const struct dest_conf *
server(const struct config *c, const char *name)
{
	for (size_t i = 0; c != NULL && i < c->nservers; i++)
		if (strcmp(c->servers[i].name, name) == 0)
			return &c->servers[i];
	return NULL;
}

TEST(registration)
{
	CHECK_INT(sink_register(&sink_testsink), 0);
	CHECK_INT(collector_register(&collector_testcoll), 0);
	/* a name or protocol number is taken once */
	CHECK_INT(sink_register(&sink_testsink), -1);
	CHECK_INT(collector_register(&collector_testcoll), -1);
	CHECK(sink_find_name("testsink") == &sink_testsink);
	CHECK(sink_find((enum dest_proto)90) == &sink_testsink);
	CHECK(collector_find("testcoll") == &collector_testcoll);
	CHECK_STR(dest_proto_name((enum dest_proto)90), "testsink");
}

TEST(defaults_from_the_tables)
{
	struct config *c = config_default();
	const struct testsink_opts *o = sink_opts(&c->server, &sink_testsink);
	const struct collector_conf *cc = config_collector(c, "testcoll");
	char *p;

	CHECK(o != NULL);
	if (o != NULL) {
		CHECK_INT(o->level, 3);
		CHECK_STR(o->label, "safe");
		CHECK_STR(o->token, "");
	}
	CHECK(cc != NULL);
	if (cc != NULL) {
		CHECK(cc->enabled);
		CHECK_INT(cc->interval, 42);
		CHECK(cc->opts != NULL);
		if (cc->opts != NULL)
			CHECK_INT(((struct testcoll_opts *)cc->opts)->depth, 2);
	}
	p = print_to_string(c);
	CHECK(p != NULL && strstr(p, "\n  level: 3\n  label: safe\n"
	    "  token: \"\"\n") != NULL);
	CHECK(p != NULL && strstr(p, "\n  testcoll:\n    enabled: yes\n"
	    "    interval: 42\n") != NULL);
	CHECK(p != NULL && strstr(p, "    depth: 2\n    limit: { max: 10, "
	    "window: 60 }\n") != NULL);
	free(p);
	config_free(c);
}

TEST(values_are_applied_and_printed)
{
	struct config *c = load("servers:\n  t:\n    proto: testsink\n"
	    "    level: 7\n    label: fast\n    token: s3cret\n"
	    "collectors:\n  testcoll:\n    depth: 4\n    interval: 5\n"
	    "    limit: off\n");
	const struct dest_conf *d = server(c, "t");
	const struct testsink_opts *o = d ? sink_opts(d, &sink_testsink) : NULL;
	char *p;

	CHECK(c != NULL);
	CHECK_INT(nerr, 0);
	CHECK(finish_called);
	CHECK(o != NULL);
	if (o != NULL) {
		CHECK_INT(o->level, 7);
		CHECK_STR(o->label, "fast");
		CHECK_STR(o->token, "s3cret");
	}
	CHECK(d != NULL && dest_port(d) == 7001);
	p = c ? print_to_string(c) : NULL;
	CHECK(p != NULL && strstr(p, "    proto: testsink\n") != NULL);
	CHECK(p != NULL && strstr(p, "    level: 7\n    label: fast\n"
	    "    token: \"<redacted>\"\n") != NULL);
	/* a secret is never printed */
	CHECK(p != NULL && strstr(p, "s3cret") == NULL);
	CHECK(p != NULL && strstr(p, "  testcoll:\n    enabled: yes\n"
	    "    interval: 5\n") != NULL);
	CHECK(p != NULL && strstr(p, "    depth: 4\n    limit: off\n") != NULL);
	free(p);
	config_free(c);
	/* the nested mapping, and what it prints loads again */
	c = load("collectors:\n  testcoll:\n    limit: { window: 5 }\n");
	CHECK(c != NULL);
	CHECK_INT(nerr, 0);
	p = c ? print_to_string(c) : NULL;
	CHECK(p != NULL && strstr(p, "    limit: { max: 10, window: 5 }\n") !=
	    NULL);
	config_free(c);
	c = p ? load(p) : NULL;
	CHECK(c != NULL);
	config_free(c);
	free(p);
}

TEST(values_are_validated)
{
	struct config *c;

	c = load("servers:\n  t:\n    proto: testsink\n    level: 10\n");
	CHECK(c == NULL);
	CHECK_INT(nerr, 1);
	CHECK(strstr(msgs, "agent.yaml:4:12: 'level': 10 is out of range "
	    "1..9") != NULL);
	c = load("server:\n  levle: 2\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "2:3: unknown key 'levle' in section 'server' "
	    "(did you mean 'level'?)") != NULL);
	c = load("server:\n  proto: testsink\n  label: slow\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "3:10: 'label': expected one of fast, safe; got "
	    "'slow'") != NULL);
	/* the sink's finish hook */
	c = load("server:\n  proto: testsink\n  label: fast\n  level: 9\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "4:10: 'level': 9 needs label: safe") != NULL);
	/* the protocol list is the registry's */
	c = load("server:\n  proto: nope\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "'proto': expected one of cfapi, syslog, http, "
	    "file, splunk_hec, elasticsearch, otlp, loki, gelf, testsink; got 'nope'") != NULL);
	c = load("collectors:\n  testcoll:\n    depth: 0\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "3:12: 'depth': 0 is out of range 1..5") != NULL);
	c = load("collectors:\n  testcoll:\n    limit: { max: 0 }\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "3:19: 'max': 0 is out of range 1..1000") != NULL);
	c = load("collectors:\n  testcol:\n    depth: 1\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "unknown collector 'testcol'") != NULL &&
	    strstr(msgs, "testcoll)") != NULL);
}

/* config_resolve picks the sink of a primary with nowhere to send. */
TEST(primary_without_a_server_goes_to_stdout)
{
	struct config *c = config_default();

	CHECK_INT(c->server.proto, PROTO_CFAPI);
	CHECK_INT(c->server.sink_proto, PROTO_FILE);
	CHECK(c->server.to_stdout);
	CHECK(c->server.nodest);		/* nowhere at all */
	config_free(c);
	/* an empty primary beside named servers: not "no destination" */
	c = load("servers:\n  s:\n    proto: syslog\n    hostname: h\n");
	CHECK(c != NULL && c->server.to_stdout && !c->server.nodest &&
	    !c->servers[0].nodest);
	config_free(c);
	c = load("server:\n  proto: http\n  url: http://x/\n"
	    "servers:\n  s:\n    proto: syslog\n    hostname: h\n");
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_INT(c->server.sink_proto, PROTO_HTTP);
		CHECK(!c->server.to_stdout);
		CHECK_INT(c->servers[0].sink_proto, PROTO_SYSLOG);
	}
	config_free(c);
	c = load("server:\n  proto: syslog\n");
	CHECK(c != NULL && c->server.sink_proto == PROTO_FILE &&
	    c->server.to_stdout);
	config_free(c);
}

/* Where a host with no destination sends (agent/lib/platform.h). */
TEST(no_destination_goes_where_someone_reads)
{
	CHECK_INT(platform_nodest(PLATFORM_ESXI, false, false), NODEST_HOST_SYSLOG);
	CHECK_INT(platform_nodest(PLATFORM_LINUX, false, false), NODEST_STDOUT);
	/* a terminal, or --once: stdout, on either */
	CHECK_INT(platform_nodest(PLATFORM_ESXI, false, true), NODEST_TTY);
	CHECK_INT(platform_nodest(PLATFORM_ESXI, true, false), NODEST_TTY);
	CHECK_INT(platform_nodest(PLATFORM_LINUX, true, false), NODEST_TTY);
	CHECK_STR(platform_nodest_name(NODEST_HOST_SYSLOG), "host_syslog");
	CHECK_STR(platform_nodest_name(NODEST_STDOUT), "stdout");
	CHECK_STR(platform_nodest_name(NODEST_TTY), "stdout");
}

/*
 * A kind of host added as one table row: the built-in nic collector, which
 * knows nothing of it, reads its NICs through it.  A counter the host
 * lacks is absent from the events, and a question it has no answer for
 * says so (HOST_EABSENT), never an empty answer.
 */
TEST(a_host_kind_feeds_the_collectors)
{
	struct config *c = config_default();
	const struct collector *nic = collector_find("nic");
	struct collector_ctx ctx;
	struct th_got g = { .n = 0 };
	struct emitter em = { .ops = &th_ops, .arg = &g };
	static const char *const args[] = { "storage", "core", "device",
	    "list", NULL };
	struct esx_out out;
	struct exec_result res;
	const struct event *s0, *s1, *a;
	struct host *h;

	CHECK_INT(host_kind_register(&host_kind_testhost), 0);
	CHECK_INT(host_kind_register(&host_kind_testhost), -1);
	CHECK(host_kind_find("local") != NULL);
	h = host_open("testhost", c);
	CHECK(h != NULL && nic != NULL);
	if (h == NULL || nic == NULL) {
		config_free(c);
		return;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.name = nic->name;
	ctx.cfg = c;
	ctx.conf = config_collector(c, "nic");
	ctx.host = h;
	ctx.platform = h->platform;
	ctx.state = kv_open(NULL);
	CHECK_INT(nic->collect(&ctx, &em), 0);
	s0 = th_find(&g, "sample", "vmnic0");
	s1 = th_find(&g, "sample", "vmnic1");
	CHECK(s0 != NULL && s1 != NULL);
	if (s0 != NULL)
		CHECK_STR(event_get(s0, "esxwatch_rx_crc_errors"), "100");
	if (s1 != NULL) {
		CHECK_STR(event_get(s1, "esxwatch_link"), "down");
		CHECK(event_get(s1, "esxwatch_rx_crc_errors") == NULL);
	}
	th_free(&g);
	CHECK_INT(nic->collect(&ctx, &em), 0);
	a = th_find(&g, "alert", "vmnic0");
	CHECK(a != NULL);
	if (a != NULL)
		CHECK_STR(event_get(a, "esxwatch_rx_crc_errors_delta"), "7");
	CHECK(th_find(&g, "alert", "vmnic1") == NULL);
	th_free(&g);
	/* what it cannot answer is absent, not empty */
	CHECK_INT(host_esxcli(h, 5, args, &out), -1);
	CHECK_INT(host_err(), HOST_EABSENT);
	CHECK_INT(host_run(h, "vdq", args, 5, &res), -1);
	CHECK_INT(host_err(), HOST_EABSENT);
	exec_result_free(&res);
	kv_close(ctx.state);
	host_close(h);
	config_free(c);
}

int
main(void)
{
	T_PROG("test_plugin");
	config_plugins_builtin();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/esxwatch-test-plugin-XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		printf("FAIL: test_plugin/setup: mkdtemp\n");
		return 1;
	}
	RUN(registration);
	RUN(defaults_from_the_tables);
	RUN(values_are_applied_and_printed);
	RUN(values_are_validated);
	RUN(primary_without_a_server_goes_to_stdout);
	RUN(no_destination_goes_where_someone_reads);
	RUN(a_host_kind_feeds_the_collectors);
	unlink(cfgpath);
	rmdir(tmpdir);
	return t_done();
}
