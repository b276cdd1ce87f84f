/*
 * http sink: json_lines and json_array bodies as the flat objects of docs/events.md, gzip,
 * configured headers on the wire but never in an error, the status policy,
 * and URL redaction.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <fcntl.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "sinktest.h"

#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../output/http.h"
#include "../../output/transport.h"

struct hfx {
	struct config	*cfg;
	struct sink_ctx	 ctx;
	const struct sink *sink;
	struct recv	 r;
};

static int
hfx_open(struct hfx *f, const char *script, const char *format, const char *compress)
{
	struct http_opts *o;
	char url[128];

	memset(f, 0, sizeof(*f));
	if (recv_start(&f->r, "http", script, NULL, NULL) == -1) {
		T_FAILF("cannot start the receiver");
		return -1;
	}
	f->cfg = config_default();
	f->cfg->server.proto = PROTO_HTTP;
	f->cfg->server.ssl = false;
	f->cfg->server.timeout = 5;
	snprintf(url, sizeof(url), "http://user:pw@127.0.0.1:%d/ingest?x=1", f->r.port);
	o = http_opts(&f->cfg->server);
	set_str(&o->url, url);
	set_str(&o->format, format);
	set_str(&o->compress, compress);
	o->headers.v = calloc(2, sizeof(struct kvpair));
	o->headers.v[0].key = strdup("Authorization");
	o->headers.v[0].value = strdup("Bearer s3cret-token");
	o->headers.v[1].key = strdup("X-Tenant");
	o->headers.v[1].value = strdup("blue");
	o->headers.n = 2;
	f->ctx.name = "server";
	f->ctx.conf = &f->cfg->server;
	f->ctx.cfg = f->cfg;
	f->sink = sink_find(PROTO_HTTP);
	return 0;
}

static void
hfx_close(struct hfx *f)
{
	if (f->ctx.priv != NULL)
		f->sink->close(&f->ctx);
	recv_stop(&f->r);
	config_free(f->cfg);
}

static enum send_result
send3(struct hfx *f, int *ra)
{
	struct event *evs[3];
	struct batch b = { .events = evs, .n = 3 };
	enum send_result r;
	int i;

	for (i = 0; i < 3; i++) {
		evs[i] = event_newf(1733000000123LL, "line %d \"q\"\n", i);
		event_set(evs[i], "hostname", "esx01");
		event_set_i64(evs[i], "esxwatch_n", i);
	}
	r = f->sink->send(&f->ctx, &b, ra);
	for (i = 0; i < 3; i++)
		event_free(evs[i]);
	return r;
}

static void
formats(const char *format, const char *compress, const char *enc)
{
	struct hfx f;
	char *log, want[64];
	int ra;

	if (hfx_open(&f, "", format, compress) == -1)
		return;
	CHECK_INT(f.sink->open(&f.ctx), 0);
	CHECK_INT(send3(&f, &ra), SEND_OK);
	log = recv_log(&f.r);
	CHECK_INT(count_str(log, "\"path\": \"/ingest?x=1\""), 1);
	snprintf(want, sizeof(want), "\"format\": \"%s\"", format);
	CHECK_INT(count_str(log, want), 1);
	snprintf(want, sizeof(want), "\"encoding\": %s", enc);
	CHECK_INT(count_str(log, want), 1);
	CHECK_INT(count_str(log, "\"violations\": []"), 1);
	CHECK_INT(count_str(log, "\"n\": 3"), 1);
	CHECK_INT(count_str(log, "\"authorization\": \"Bearer s3cret-token\""), 1);
	CHECK_INT(count_str(log, "\"x-tenant\": \"blue\""), 1);
	CHECK_INT(count_str(log, "\"authorization\": \"Basic dXNlcjpwdw==\""), 0);
	CHECK_INT(count_str(log, "{\"timestamp\": 1733000000123, \"text\": \"line 1 \\\"q\\\"\\n\", "
	    "\"hostname\": \"esx01\""), 1);
	CHECK_INT(count_str(log, "\"esxwatch_n\": \"2\""), 1);
	free(log);
	hfx_close(&f);
}

TEST(json_lines_gzip)	{ formats("json_lines", "gzip", "\"gzip\""); }
TEST(json_array_plain)	{ formats("json_array", "none", "null"); }

TEST(status_policy_and_no_secret_in_errors)
{
	struct hfx f;
	int ra;

	if (hfx_open(&f, "503:ra=2,401,400", "json_lines", "gzip") == -1)
		return;
	CHECK_INT(f.sink->open(&f.ctx), 0);
	CHECK_INT(send3(&f, &ra), SEND_RETRY);
	CHECK_INT(ra, 2);
	CHECK(strstr(f.ctx.error, "s3cret") == NULL);
	CHECK_INT(send3(&f, &ra), SEND_RETRY);
	CHECK(strstr(f.ctx.error, "HTTP 401") != NULL);
	CHECK_INT(send3(&f, &ra), SEND_REJECT);
	CHECK(strstr(f.ctx.error, "s3cret") == NULL);
	CHECK_INT(send3(&f, &ra), SEND_OK);
	hfx_close(&f);
}

TEST(bad_header_refused_without_its_value)
{
	struct hfx f;

	if (hfx_open(&f, "", "json_lines", "gzip") == -1)
		return;
	set_str(&http_opts(&f.cfg->server)->headers.v[1].value,
	    "x\r\nInjected: s3cret");
	CHECK_INT(f.sink->open(&f.ctx), -1);
	CHECK(strstr(f.ctx.error, "X-Tenant") != NULL);
	CHECK(strstr(f.ctx.error, "s3cret") == NULL);
	hfx_close(&f);
}

TEST(redacts_urls)
{
	char out[256];

	transport_redact_url("https://u:p@h:1/x?a=b", out, sizeof(out));
	CHECK_STR(out, "https://***@h:1/x?a=b");
	transport_redact_url("http://h/x@y", out, sizeof(out));
	CHECK_STR(out, "http://h/x@y");
	transport_redact_url("h:1", out, sizeof(out));
	CHECK_STR(out, "h:1");
}

/* A tool run by the agent must not inherit a connection. */
TEST(connections_are_close_on_exec)
{
	struct config *cfg = config_default();
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct curl_slist *ct = NULL;
	char eb[CURL_ERROR_SIZE], err[256], url[64];
	curl_socket_t sock = CURL_SOCKET_BAD;
	int ls;
	CURL *c;

	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    listen(ls, 1) == 0 && getsockname(ls, (struct sockaddr *)&sin, &sl) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ntohs(sin.sin_port));
	cfg->server.ssl = false;
	cfg->server.timeout = 5;
	CHECK_INT(transport_global_init(), 0);
	c = curl_easy_init();
	CHECK_INT(transport_setup(c, &cfg->server, url, &ct, eb, err, sizeof(err)), 0);
	curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
	CHECK_INT(curl_easy_perform(c), CURLE_OK);
	CHECK_INT(curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &sock), CURLE_OK);
	CHECK(sock != CURL_SOCKET_BAD);
	if (sock != CURL_SOCKET_BAD)
		CHECK(fcntl(sock, F_GETFD) & FD_CLOEXEC);
	curl_easy_cleanup(c);
	curl_slist_free_all(ct);
	close(ls);
	config_free(cfg);
}

TEST(default_ca_bundle_probe)
{
	const char *ca = transport_default_ca();

	/* the first readable of the usual places */
	if (access("/etc/vmware/ssl/castore.pem", R_OK) == 0)
		CHECK_STR(ca, "/etc/vmware/ssl/castore.pem");
	else if (access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0)
		CHECK_STR(ca, "/etc/ssl/certs/ca-certificates.crt");
	else
		CHECK(ca == NULL || access(ca, R_OK) == 0);
}

int
main(void)
{
	T_PROG("test_http");
	config_plugins_builtin();
	log_init(0, NULL);
	RUN(json_lines_gzip);
	RUN(json_array_plain);
	RUN(status_policy_and_no_secret_in_errors);
	RUN(bad_header_refused_without_its_value);
	RUN(redacts_urls);
	RUN(connections_are_close_on_exec);
	RUN(default_ca_bundle_probe);
	curl_global_cleanup();
	return t_done();
}
