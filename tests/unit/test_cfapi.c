/*
 * cfapi sink: the JSON encoder, the response parser, the agent id, and
 * send() against the strict receiver (tests/lib/receivers.py) over HTTP and
 * HTTPS: gzip, splitting, the status policy, Retry-After, the gzip
 * fall-back, keep-alive, and the TLS failure messages.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "sinktest.h"

#include "../../agent/lib/agentid.h"
#include "../../agent/lib/buf.h"
#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../output/cfapi.h"
#include "../../output/transport.h"

static char certdir[] = "/tmp/esxwatch-certs-XXXXXX";

static struct event *
mkev(const char *text, int nf)
{
	struct event *ev = event_new(1733000000123LL, text);
	char name[32], val[32];
	int i;

	event_set(ev, "hostname", "esx01");
	for (i = 0; i < nf; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		snprintf(val, sizeof(val), "v%d", i);
		event_set(ev, name, val);
	}
	return ev;
}

TEST(encodes_event_exactly)
{
	struct event *ev = event_new(1733000000123LL, "a \"q\" \\ b\nc\t\x01 \xc3\xa9");
	struct buf b = BUF_INIT;

	event_set(ev, "hostname", "esx01");
	event_set(ev, "esxwatch_note", "x\"y");
	CHECK_INT(cfapi_encode_event(ev, &b), 0);
	CHECK_STR(b.data, "{\"text\":\"a \\\"q\\\" \\\\ b\\nc\\t\\u0001 \xc3\xa9\","
	    "\"timestamp\":1733000000123,\"fields\":[{\"name\":\"hostname\","
	    "\"content\":\"esx01\"},{\"name\":\"esxwatch_note\",\"content\":\"x\\\"y\"}]}");
	buf_free(&b);
	event_free(ev);
}

TEST(encoder_repairs_invalid_utf8_and_cuts_long_text)
{
	/* Built by hand, past event_new()'s own repairs, to prove the encoder
	 * stands on its own. */
	struct event ev;
	struct buf b = BUF_INIT;
	char *big = malloc(20001);
	const char *p, *q;

	memset(&ev, 0, sizeof(ev));
	ev.timestamp_ms = 1733000000123LL;
	ev.text = (char *)"x\xff\xc3y\xed\xa0\x80z\xf0\x9f\x98\x80";
	CHECK_INT(cfapi_encode_event(&ev, &b), 0);
	CHECK_STR(b.data, "{\"text\":\"x\xef\xbf\xbd\xef\xbf\xbdy\xef\xbf\xbd"
	    "\xef\xbf\xbd\xef\xbf\xbdz\xf0\x9f\x98\x80\",\"timestamp\":1733000000123}");
	memset(big, 'a', 20000);
	big[20000] = '\0';
	ev.text = big;
	buf_reset(&b);
	CHECK_INT(cfapi_encode_event(&ev, &b), 0);
	p = strstr(b.data, "\"text\":\"") + 8;
	q = strstr(p, "\",\"timestamp\"");
	CHECK(q != NULL);
	CHECK_INT(q - p, EVENT_TEXT_MAX);
	CHECK(strncmp(q - strlen(EVENT_TRUNC_MARKER), EVENT_TRUNC_MARKER,
	    strlen(EVENT_TRUNC_MARKER)) == 0);
	free(big);
	buf_free(&b);
}

TEST(parses_responses)
{
	long long n;
	const char *ok = "{\"ingested\": 7, \"message\": \"events ingested\", \"status\": \"ok\"}";
	const char *bad = "{\"errorMessage\": \"Missing events\"}";
	const char *weird = "{\"message\":\"status\",\"status\":\"error\",\"ingested\":1}";

	CHECK_INT(cfapi_parse_response(ok, strlen(ok), &n), 0);
	CHECK_INT(n, 7);
	CHECK_INT(cfapi_parse_response(bad, strlen(bad), &n), -1);
	CHECK_INT(n, -1);
	CHECK_INT(cfapi_parse_response(weird, strlen(weird), &n), -1);
	CHECK_INT(cfapi_parse_response("", 0, &n), -1);
	CHECK_INT(cfapi_parse_response("{\"status\":\"ok\"}", 15, &n), 0);
	CHECK_INT(n, -1);
}

TEST(agent_id_from_esxcli)
{
	char id[64];
	char *txt = t_slurp("tests/fixtures/esxi/esxcli-hardware-platform-get/poweredge.txt", NULL);

	CHECK_INT(agentid_parse_esxcli(txt, id, sizeof(id)), 0);
	CHECK_STR(id, "4c4c4544-004a-1038-804e-b3c04f524b32");
	CHECK_INT(agentid_parse_esxcli("   UUID: 4C4C4544004A1038804EB3C04F524B32\n", id, sizeof(id)), 0);
	CHECK_STR(id, "4c4c4544-004a-1038-804e-b3c04f524b32");
	CHECK_INT(agentid_parse_esxcli("UUID: 4c4c4544-004a-1038-804e-b3c04f524b32", id, sizeof(id)), 0);
	CHECK_STR(id, "4c4c4544-004a-1038-804e-b3c04f524b32");
	CHECK_INT(agentid_parse_esxcli("UUID: 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n", id, sizeof(id)), -1);
	CHECK_INT(agentid_parse_esxcli("UUID: 0x4c 0x4c\n", id, sizeof(id)), -1);
	CHECK_INT(agentid_parse_esxcli("UUID: 0x4c 0xzz 0x45 0x44 0x0 0x4a 0x10 0x38 0x80 0x4e 0xb3 0xc0 0x4f 0x52 0x4b 0x32\n", id, sizeof(id)), -1);
	CHECK_INT(agentid_parse_esxcli("Product Name: x\n", id, sizeof(id)), -1);
	free(txt);
}

/* fsync() as agentid sees it: directory syncs are counted. */
static int	 fsync_dirs;

int
fsync(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		__atomic_add_fetch(&fsync_dirs, 1, __ATOMIC_SEQ_CST);
	return (int)syscall(SYS_fsync, fd);
}

TEST(agent_id_stored_once_0600)
{
	char dir[] = "/tmp/esxwatch-aid-XXXXXX", sub[128], path[160];
	char a[64], b[64];
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/storage", dir);
	snprintf(path, sizeof(path), "%s/agent-id", sub);
	fsync_dirs = 0;
	CHECK_INT(agentid_stored(sub, a, sizeof(a)), 0);
	CHECK(fsync_dirs > 0);	/* the rename is made durable */
	CHECK(agentid_valid(a));
	CHECK(a[14] == '4');	/* UUID version 4 */
	CHECK(strchr("89ab", a[19]) != NULL);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK_INT(agentid_stored(sub, b, sizeof(b)), 0);
	CHECK_STR(b, a);
	/* garbage is replaced by a new id */
	f = fopen(path, "w");
	fputs("not-a-uuid\n", f);
	fclose(f);
	CHECK_INT(agentid_stored(sub, b, sizeof(b)), 0);
	CHECK(agentid_valid(b));
	CHECK(strcmp(a, b) != 0);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

/* ---- send() against the receiver ---- */

struct fixture {
	struct config	*cfg;
	struct sink_ctx	 ctx;
	const struct sink *sink;
	struct recv	 r;
	bool		 owns_group;	/* ctx.group is this one's to free */
};

static int
fx_open(struct fixture *fx, const char *script, const char *cert)
{
	memset(fx, 0, sizeof(*fx));
	if (recv_start(&fx->r, "cfapi", script, cert, certdir) == -1) {
		T_FAILF("cannot start the receiver");
		return -1;
	}
	fx->cfg = config_default();
	set_str(&fx->cfg->server.hostname, "127.0.0.1");
	fx->cfg->server.port = fx->r.port;
	fx->cfg->server.ssl = cert != NULL;
	set_str(&fx->cfg->server.ssl_ca_path, "");
	set_str(&fx->cfg->server.agent_id, "test-agent-1");
	fx->cfg->server.timeout = 5;
	fx->ctx.name = "server";
	fx->ctx.conf = &fx->cfg->server;
	fx->ctx.cfg = fx->cfg;
	fx->sink = sink_find(PROTO_CFAPI);
	return 0;
}

static void
fx_close(struct fixture *fx)
{
	if (fx->ctx.priv != NULL)
		fx->sink->close(&fx->ctx);
	if (fx->owns_group)
		fx->sink->group_free(fx->ctx.group);
	recv_stop(&fx->r);
	config_free(fx->cfg);
}

static enum send_result
send_n(struct fixture *fx, int n, int nf, int *ra)
{
	struct event *evs[600];
	struct batch b = { .events = evs, .n = (size_t)n };
	enum send_result r;
	char text[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "event number %d", i);
		evs[i] = mkev(text, nf);
	}
	r = fx->sink->send(&fx->ctx, &b, ra);
	for (i = 0; i < n; i++)
		event_free(evs[i]);
	return r;
}

TEST(sends_gzip_batch_keepalive)
{
	struct fixture fx;
	char *log;
	int ra = -1;

	if (fx_open(&fx, "", NULL) == -1)
		return;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 3, 2, &ra), SEND_OK);
	CHECK_INT(ra, 0);
	CHECK_INT(send_n(&fx, 2, 0, &ra), SEND_OK);
	log = recv_log(&fx.r);
	CHECK_INT(count_str(log, "\"path\": \"/api/v1/events/ingest/test-agent-1\""), 2);
	CHECK_INT(count_str(log, "\"encoding\": \"gzip\""), 2);
	CHECK_INT(count_str(log, "\"violations\": []"), 2);
	CHECK_INT(count_str(log, "\"n\": 3"), 1);
	CHECK_INT(count_str(log, "\"text\": \"event number 2\""), 1);
	CHECK_INT(count_str(log, "\"f1\": \"v1\""), 3);
	/* one connection for both requests: keep-alive */
	CHECK_INT(count_str(log, "\"conn\": 1,"), 2);
	free(log);
	fx_close(&fx);
}

TEST(splits_oversized_batches)
{
	struct fixture fx;
	char *log;
	int ra;

	if (fx_open(&fx, "", NULL) == -1)
		return;
	set_str(&cfapi_opts(&fx.cfg->server)->compress, "none");
	fx.cfg->batch_max_events = 200;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 450, 1, &ra), SEND_OK);
	log = recv_log(&fx.r);
	CHECK_INT(count_str(log, "\"n\": 200"), 2);
	CHECK_INT(count_str(log, "\"n\": 50"), 1);
	CHECK_INT(count_str(log, "\"encoding\": null"), 3);
	free(log);
	fx.sink->close(&fx.ctx);
	fx.ctx.priv = NULL;
	/* by bytes: each event is ~120 bytes of JSON */
	fx.cfg->batch_max_events = 500;
	fx.cfg->batch_max_bytes = 1200;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 30, 1, &ra), SEND_OK);
	log = recv_log(&fx.r);
	CHECK(count_str(log, "\"path\"") >= 3 + 3);
	CHECK_INT(count_str(log, "\"violations\": []"), count_str(log, "\"path\""));
	free(log);
	fx_close(&fx);
}

TEST(status_policy_and_retry_after)
{
	struct fixture fx;
	int ra;

	if (fx_open(&fx, "503:ra=3,503:date=5,500,400,413,404,429:ra=7", NULL) == -1)
		return;
	set_str(&cfapi_opts(&fx.cfg->server)->compress, "none");
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_RETRY);
	CHECK_INT(ra, 3);
	CHECK(strstr(fx.ctx.error, "HTTP 503") != NULL);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_RETRY);
	CHECK(ra >= 3 && ra <= 6);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_RETRY);
	CHECK_INT(ra, 0);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_REJECT);
	CHECK(strstr(fx.ctx.error, "HTTP 400") != NULL);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_REJECT);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_RETRY);	/* 404 */
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_RETRY);
	CHECK_INT(ra, 7);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_OK);
	fx_close(&fx);
}

TEST(gzip_refused_falls_back_to_plain)
{
	struct fixture fx;
	char *log;
	int ra;

	/* 415 to gzip: the same batch again, plain, and plain afterwards on
	 * that connection; a new connection (after the 503) tries gzip again */
	if (fx_open(&fx, "415,200,200,503", NULL) == -1)
		return;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 2, 1, &ra), SEND_OK);
	CHECK_INT(send_n(&fx, 2, 1, &ra), SEND_OK);
	CHECK_INT(send_n(&fx, 2, 1, &ra), SEND_RETRY);
	CHECK_INT(send_n(&fx, 2, 1, &ra), SEND_OK);
	log = recv_log(&fx.r);
	CHECK_INT(count_str(log, "\"encoding\": \"gzip\""), 2);
	CHECK_INT(count_str(log, "\"encoding\": null"), 3);
	CHECK_INT(count_str(log, "\"n\": 2"), 3);
	/* the last request is gzip again */
	{
		char *last = log + strlen(log) - 1;
		while (last > log && last[-1] != '\n')
			last--;
		CHECK(strstr(last, "\"encoding\": \"gzip\"") != NULL);
	}
	free(log);
	fx_close(&fx);
}

/* n events "<prefix> i" through fx as the queue's records src, 1000.. */
static enum send_result
send_src(struct fixture *fx, const char *prefix, uint64_t src, int n)
{
	struct event *evs[8];
	struct batch b = { evs, (size_t)n, src, 1000 };
	enum send_result r;
	char text[64];
	int i, ra;

	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%s %d", prefix, i);
		evs[i] = mkev(text, 1);
	}
	r = fx->sink->send(&fx->ctx, &b, &ra);
	for (i = 0; i < n; i++)
		event_free(evs[i]);
	return r;
}

/* Beside the open destination a, b of the same options and group, open,
 * its receiver answering by script; -1 (a closed) when it cannot start. */
static int
open_other(struct fixture *a, struct fixture *b, const char *script)
{
	if (fx_open(b, script, NULL) == -1) {
		fx_close(a);
		return -1;
	}
	b->ctx.group = a->ctx.group;
	CHECK_INT(b->sink->open(&b->ctx), 0);
	return 0;
}

/* Two cfapi destinations of one configuration (grouped: with_group, as
 * the shipper does for two or more), open. */
static int
open_two(struct fixture *a, struct fixture *b, bool with_group)
{
	if (fx_open(a, "", NULL) == -1)
		return -1;
	if (with_group) {
		a->ctx.group = a->sink->group_new(a->cfg);
		a->owns_group = true;
		CHECK(a->ctx.group != NULL);
	}
	CHECK_INT(a->sink->open(&a->ctx), 0);
	return open_other(a, b, "");
}

static int
open_pair(struct fixture *a, struct fixture *b)
{
	return open_two(a, b, true);
}

/*
 * Two destinations of the same options sending the same records (same
 * queue, first record and count) share one gzip body: the second sends
 * the first one's bytes (here told, falsely, that its own events are the
 * same records, so that the sharing shows).  Without a queue id nothing
 * is shared; a plain resend after a 415 is made from its own events.
 */
TEST(same_records_share_one_gzip_body)
{
	struct fixture a, b;
	char *log;

	if (open_pair(&a, &b) == -1)
		return;
	CHECK_INT(send_src(&a, "from a", 9001, 3), SEND_OK);
	CHECK_INT(send_src(&b, "from b", 9001, 3), SEND_OK);
	CHECK_INT(send_src(&b, "unshared b", 0, 3), SEND_OK);
	/* another count is other records */
	CHECK_INT(send_src(&b, "two of b", 9001, 2), SEND_OK);
	log = recv_log(&b.r);
	CHECK_INT(count_str(log, "\"text\": \"from a 2\""), 1);
	CHECK_INT(count_str(log, "\"text\": \"from b"), 0);
	CHECK_INT(count_str(log, "\"text\": \"unshared b 2\""), 1);
	CHECK_INT(count_str(log, "\"text\": \"two of b 1\""), 1);
	CHECK_INT(count_str(log, "\"encoding\": \"gzip\""), 3);
	free(log);
	fx_close(&b);
	/* a shared body refused as gzip: the plain one is b's own */
	if (open_other(&a, &b, "415,200") == -1)
		return;
	CHECK_INT(send_src(&a, "again a", 9002, 2), SEND_OK);
	CHECK_INT(send_src(&b, "again b", 9002, 2), SEND_OK);
	log = recv_log(&b.r);
	CHECK_INT(count_str(log, "\"encoding\": \"gzip\""), 1);
	CHECK_INT(count_str(log, "\"encoding\": null"), 1);
	CHECK_INT(count_str(log, "\"text\": \"again b 1\""), 1);
	free(log);
	fx_close(&b);
	fx_close(&a);
}

/*
 * Destinations without a group (the shipper makes none for a lone one)
 * share nothing: each sends its own encoding of the same records.
 */
TEST(no_group_shares_nothing)
{
	struct fixture a, b;
	char *log;

	if (open_two(&a, &b, false) == -1)
		return;
	CHECK_INT(send_src(&a, "from a", 9501, 3), SEND_OK);
	CHECK_INT(send_src(&b, "from b", 9501, 3), SEND_OK);
	log = recv_log(&b.r);
	CHECK_INT(count_str(log, "\"text\": \"from b 2\""), 1);
	CHECK_INT(count_str(log, "\"text\": \"from a"), 0);
	free(log);
	fx_close(&b);
	fx_close(&a);
}

/* A 400 that plain text gets too is about the batch, not gzip. */
TEST(batch_refused_either_way_keeps_gzip)
{
	struct fixture fx;
	char *log, *last;
	int ra;

	if (fx_open(&fx, "400,400,200", NULL) == -1)
		return;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 2, 1, &ra), SEND_REJECT);
	CHECK_INT(send_n(&fx, 2, 1, &ra), SEND_OK);
	log = recv_log(&fx.r);
	CHECK_INT(count_str(log, "\"encoding\": \"gzip\""), 2);
	CHECK_INT(count_str(log, "\"encoding\": null"), 1);
	last = log + strlen(log) - 1;
	while (last > log && last[-1] != '\n')
		last--;
	CHECK(strstr(last, "\"encoding\": \"gzip\"") != NULL);
	free(log);
	fx_close(&fx);
}

TEST(counts_events_not_ingested)
{
	struct fixture fx;
	uint64_t before;
	int ra;

	if (fx_open(&fx, "200:ingested=1", NULL) == -1)
		return;
	before = fx.ctx.not_ingested;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 3, 1, &ra), SEND_OK);
	/* through the send's ctx, to the shipper's per-destination figure */
	CHECK_INT(fx.ctx.not_ingested - before, 2);
	fx_close(&fx);
}

TEST(connection_refused_is_retry)
{
	struct fixture fx;
	int ra;

	if (fx_open(&fx, "", NULL) == -1)
		return;
	recv_stop(&fx.r);
	fx.r.pid = 0;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 1, 0, &ra), SEND_RETRY);
	CHECK(strstr(fx.ctx.error, "cannot connect to 127.0.0.1:") != NULL);
	fx_close(&fx);
}

/* The connection is kept, dropped after a 5xx and after `reconnect`
 * minutes: hconn directly, with its clock moved back. */
TEST(keepalive_reconnect_policy)
{
	struct fixture fx;
	struct hconn h;
	struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
	const char *body = "{\"events\":[{\"text\":\"x\"}]}";
	char url[128], err[256], *log;

	if (fx_open(&fx, "200,503,200,200,200", NULL) == -1)
		return;
	fx.cfg->server.reconnect = 30;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/events/ingest/k", fx.r.port);
	CHECK_INT(hconn_open(&h, &fx.cfg->server, url, err, sizeof(err)), 0);
	CHECK_INT(hconn_post(&h, hd, body, strlen(body), err, sizeof(err)), 0);	/* conn 1 */
	CHECK_INT(hconn_post(&h, hd, body, strlen(body), err, sizeof(err)), 0);	/* 503 on conn 1 */
	CHECK_INT(h.status, 503);
	CHECK_INT(hconn_post(&h, hd, body, strlen(body), err, sizeof(err)), 0);	/* conn 2 */
	CHECK_INT(hconn_post(&h, hd, body, strlen(body), err, sizeof(err)), 0);	/* conn 2 */
	h.opened -= 30 * 60;
	CHECK_INT(hconn_post(&h, hd, body, strlen(body), err, sizeof(err)), 0);	/* conn 3 */
	CHECK_INT(h.status, 200);
	log = recv_log(&fx.r);
	CHECK_INT(count_str(log, "\"conn\": 1,"), 2);
	CHECK_INT(count_str(log, "\"conn\": 2,"), 2);
	CHECK_INT(count_str(log, "\"conn\": 3,"), 1);
	free(log);
	hconn_close(&h);
	curl_slist_free_all(hd);
	fx_close(&fx);
}

static void
tls_case(const char *cert, const char *ca, const char *cn, bool any,
    enum send_result want, const char *msg)
{
	struct fixture fx;
	char path[400];
	int ra;

	if (fx_open(&fx, "", cert) == -1)
		return;
	if (ca[0] == '/')
		snprintf(path, sizeof(path), "%s", ca);
	else
		snprintf(path, sizeof(path), "%s/%s", certdir, ca);
	set_str(&fx.cfg->server.ssl_ca_path, path);
	set_str(&fx.cfg->server.ssl_cn, cn);
	fx.cfg->server.ssl_accept_any = any;
	CHECK_INT(fx.sink->open(&fx.ctx), 0);
	CHECK_INT(send_n(&fx, 2, 1, &ra), want);
	if (msg != NULL && strstr(fx.ctx.error, msg) == NULL)
		T_FAILF("error \"%s\" lacks \"%s\"", fx.ctx.error, msg);
	fx_close(&fx);
}

TEST(tls_verifies_ca_and_name)
{
	tls_case("server", "ca.crt", "", false, SEND_OK, NULL);
	tls_case("server", "other-ca.crt", "", false, SEND_RETRY,
	    "certificate signed by an unknown CA");
	tls_case("wrong", "ca.crt", "", false, SEND_RETRY,
	    "name mismatch: expected 127.0.0.1, certificate has "
	    "CN=loginsight.example.com, DNS:loginsight.example.com");
	tls_case("wrong", "ca.crt", "loginsight.example.com", false, SEND_OK, NULL);
	tls_case("server", "ca.crt", "other.example.com", false, SEND_RETRY,
	    "name mismatch: expected other.example.com");
	tls_case("wrong", "other-ca.crt", "", true, SEND_OK, NULL);
	tls_case("server", "/nonexistent/ca.pem", "", false, SEND_RETRY,
	    "cannot use the CA bundle /nonexistent/ca.pem");
}

int
main(void)
{
	T_PROG("test_cfapi");
	config_plugins_builtin();
	log_init(0, NULL);
	if (mkdtemp(certdir) == NULL)
		return 1;
	RUN(encodes_event_exactly);
	RUN(encoder_repairs_invalid_utf8_and_cuts_long_text);
	RUN(parses_responses);
	RUN(agent_id_from_esxcli);
	RUN(agent_id_stored_once_0600);
	RUN(sends_gzip_batch_keepalive);
	RUN(splits_oversized_batches);
	RUN(status_policy_and_retry_after);
	RUN(gzip_refused_falls_back_to_plain);
	RUN(same_records_share_one_gzip_body);
	RUN(no_group_shares_nothing);
	RUN(batch_refused_either_way_keeps_gzip);
	RUN(counts_events_not_ingested);
	RUN(connection_refused_is_retry);
	RUN(keepalive_reconnect_policy);
	RUN(tls_verifies_ca_and_name);
	{
		const char *names[] = { "ca.crt", "ca.key", "ca.srl", "server.crt",
		    "server.key", "server.csr", "server.ext", "other-ca.crt",
		    "other-ca.key", "wrong.crt", "wrong.key", "wrong.csr",
		    "wrong.ext", NULL };
		char p[400];
		for (int i = 0; names[i]; i++) {
			snprintf(p, sizeof(p), "%s/%s", certdir, names[i]);
			unlink(p);
		}
		rmdir(certdir);
	}
	curl_global_cleanup();
	return t_done();
}
