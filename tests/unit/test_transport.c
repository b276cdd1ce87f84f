/*
 * transport: URL building and redaction, the HTTP status policy, the TLS
 * option setup (ssl_cn through CONNECT_TO), error naming, and the
 * keep-alive connection against a local plain-socket HTTP server (a thread
 * of this test: no receiver process, no certificates).  TLS verification
 * against real certificates is in test_cfapi and the end-to-end tests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"

#include "../../agent/lib/buf.h"
#include "../../agent/config/config.h"
#include "../../output/gzip.h"
#include "../../output/transport.h"

static void
set_str(char **field, const char *v)
{
	free(*field);
	*field = strdup(v);
}

static struct dest_conf *
dest(struct config *cfg, const char *host, int port, bool ssl)
{
	struct dest_conf *d = &cfg->server;

	set_str(&d->hostname, host);
	d->port = port;
	d->ssl = ssl;
	d->ssl_accept_any = false;
	set_str(&d->ssl_cn, "");
	set_str(&d->ssl_ca_path, "");
	d->timeout = 5;
	d->reconnect = 0;
	return d;
}

/* ---- pure helpers ------------------------------------------------------ */

TEST(redact_url)
{
	char out[256];

	transport_redact_url("https://admin:s3cret@li.example:9543/api", out, sizeof(out));
	CHECK_STR(out, "https://***@li.example:9543/api");
	CHECK(strstr(out, "s3cret") == NULL);
	transport_redact_url("http://token@h/x", out, sizeof(out));
	CHECK_STR(out, "http://***@h/x");
	/* an @ in the path is not a user part */
	transport_redact_url("http://h:80/a@b", out, sizeof(out));
	CHECK_STR(out, "http://h:80/a@b");
	/* without a scheme, user:pw@host is still a credential */
	transport_redact_url("user:pw@h/x", out, sizeof(out));
	CHECK_STR(out, "***@h/x");
	/* secret query values go too (agent/lib/redact.c) */
	transport_redact_url("http://h/x?q=1&token=t0k", out, sizeof(out));
	CHECK_STR(out, "http://h/x?q=1&token=***");
	/* cut to the buffer, still NUL-terminated */
	transport_redact_url("https://u:p@averylonghostname.example/x", out, 12);
	CHECK_INT(strlen(out), 11);
}

TEST(base_url_and_timeout)
{
	struct config *cfg = config_default();
	struct dest_conf *d = dest(cfg, "li.example", 9543, true);
	struct buf b;

	buf_init(&b, 0);
	CHECK_INT(transport_base_url(d, "/api/v1", &b), 0);
	CHECK_STR(b.data, "https://li.example:9543/api/v1");
	buf_reset(&b);
	d = dest(cfg, "fd00::5", 9000, false);
	CHECK_INT(transport_base_url(d, "", &b), 0);
	CHECK_STR(b.data, "http://[fd00::5]:9000");
	buf_reset(&b);
	d = dest(cfg, "[fd00::5]", 9000, false);	/* already bracketed */
	CHECK_INT(transport_base_url(d, "", &b), 0);
	CHECK_STR(b.data, "http://[fd00::5]:9000");
	buf_free(&b);
	d->timeout = 0;
	CHECK_INT(transport_timeout(d), TRANSPORT_DEFAULT_TIMEOUT);
	d->timeout = 7;
	CHECK_INT(transport_timeout(d), 7);
	config_free(cfg);
}

/* The URL a sink posts to: its url key, else made of hostname and port. */
TEST(target_url)
{
	struct config *cfg = config_default();
	struct dest_conf *d = dest(cfg, "loki.example", 3100, false);
	struct buf b;

	buf_init(&b, 0);
	CHECK_INT(transport_target_url(d, NULL, "/loki/api/v1/push", &b), 0);
	CHECK_STR(b.data, "http://loki.example:3100/loki/api/v1/push");
	buf_reset(&b);
	CHECK_INT(transport_target_url(d, "", "/v1/logs", &b), 0);
	CHECK_STR(b.data, "http://loki.example:3100/v1/logs");
	buf_reset(&b);
	CHECK_INT(transport_target_url(d, "https://otel:4318/v1/logs", "/x", &b), 0);
	CHECK_STR(b.data, "https://otel:4318/v1/logs");
	buf_free(&b);
	config_free(cfg);
}

/* The headers of a JSON body, in order; gzip only when asked. */
TEST(body_headers)
{
	char k1[] = "X-Api", v1[] = "k1", k2[] = "X-Two", v2[] = "v 2";
	struct kvpair kv[2] = { { k1, v1 }, { k2, v2 } };
	struct kvlist extra = { .v = kv, .n = 2 };
	struct curl_slist *l, *p;
	struct gzip *gz = (struct gzip *)&extra;	/* must be reset */
	const char *want[] = { "Content-Type: application/x-ndjson", "Expect:",
	    "Content-Encoding: gzip", "X-Api: k1", "X-Two: v 2" };
	size_t i = 0;

	l = transport_body_headers("application/x-ndjson", NULL, &extra, &gz);
	CHECK(l != NULL && gz != NULL);
	for (p = l; p != NULL; p = p->next, i++)
		if (i < 5)
			CHECK_STR(p->data, want[i]);
	CHECK_INT((int)i, 5);
	curl_slist_free_all(l);
	gzip_free(gz);
	l = transport_body_headers("application/json", "none", NULL, &gz);
	CHECK(l != NULL && gz == NULL);
	CHECK_STR(l->data, "Content-Type: application/json");
	CHECK(l->next != NULL && strcmp(l->next->data, "Expect:") == 0 &&
	    l->next->next == NULL);
	curl_slist_free_all(l);
}

TEST(http_policy)
{
	static const long ok[] = { 200, 201, 204, 299 };
	static const long reject[] = { 400, 413, 422 };
	static const long retry[] = { 401, 403, 404, 408, 429, 500, 502, 503, 100, 302 };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK_INT(transport_http_policy(ok[i]), SEND_OK);
	for (size_t i = 0; i < sizeof(reject) / sizeof(reject[0]); i++)
		CHECK_INT(transport_http_policy(reject[i]), SEND_REJECT);
	for (size_t i = 0; i < sizeof(retry) / sizeof(retry[0]); i++)
		CHECK_INT(transport_http_policy(retry[i]), SEND_RETRY);
}

/* ---- TLS option setup -------------------------------------------------- */

static bool
list_has(const struct curl_slist *l, const char *s)
{
	for (; l != NULL; l = l->next)
		if (strcmp(l->data, s) == 0)
			return true;
	return false;
}

/* ssl_cn: the connection goes to the real host through CONNECT_TO, the
 * name checked is ssl_cn; not with ssl_accept_any (nothing is checked),
 * not for plain http; an ssl_cn that is no host name is refused. */
TEST(setup_ssl_cn_connect_to)
{
	struct config *cfg = config_default();
	struct dest_conf *d = dest(cfg, "10.0.0.1", 9543, true);
	struct curl_slist *ct = NULL;
	char errbuf[CURL_ERROR_SIZE], err[256];
	CURL *c;

	CHECK_INT(transport_global_init(), 0);
	c = curl_easy_init();
	CHECK(c != NULL);
	if (c == NULL)
		return;
	set_str(&d->ssl_cn, "li.example");
	err[0] = '\0';
	CHECK_INT(transport_setup(c, d, "https://10.0.0.1:9543/api", &ct, errbuf,
	    err, sizeof(err)), 0);
	CHECK(list_has(ct, "li.example:9543:10.0.0.1:9543"));
	curl_slist_free_all(ct);
	ct = NULL;

	d->ssl_accept_any = true;
	CHECK_INT(transport_setup(c, d, "https://10.0.0.1:9543/api", &ct, errbuf,
	    err, sizeof(err)), 0);
	CHECK(ct == NULL);
	d->ssl_accept_any = false;

	CHECK_INT(transport_setup(c, d, "http://10.0.0.1:9000/api", &ct, errbuf,
	    err, sizeof(err)), 0);
	CHECK(ct == NULL);

	set_str(&d->ssl_cn, "not a host/name");
	CHECK_INT(transport_setup(c, d, "https://10.0.0.1:9543/api", &ct, errbuf,
	    err, sizeof(err)), -1);
	CHECK(strstr(err, "ssl_cn") != NULL);
	curl_slist_free_all(ct);
	curl_easy_cleanup(c);
	config_free(cfg);
}

/* The sentences for certificate problems, from libcurl's codes and texts
 * (OpenSSL's wording). */
TEST(describe_certificate_errors)
{
	struct config *cfg = config_default();
	struct dest_conf *d = dest(cfg, "li.example", 9543, true);
	char out[512];

	transport_describe(CURLE_PEER_FAILED_VERIFICATION,
	    "SSL certificate problem: certificate has expired", d,
	    "https://li.example:9543/x", out, sizeof(out));
	CHECK(strncmp(out, "certificate expired (li.example:9543)", 37) == 0);
	transport_describe(CURLE_PEER_FAILED_VERIFICATION,
	    "SSL certificate problem: self-signed certificate in certificate chain",
	    d, "https://li.example:9543/x", out, sizeof(out));
	CHECK(strstr(out, "certificate signed by an unknown CA (li.example:9543; "
	    "set ssl_ca_path to its CA, or trust: first_use)") == out);
	transport_describe(CURLE_PEER_FAILED_VERIFICATION,
	    "SSL certificate problem: certificate is not yet valid", d,
	    "https://li.example:9543/x", out, sizeof(out));
	CHECK(strncmp(out, "certificate not yet valid", 25) == 0);
	set_str(&d->ssl_ca_path, "/nonexistent/ca.pem");
	transport_describe(CURLE_SSL_CACERT_BADFILE, "error setting certificate file",
	    d, "https://li.example:9543/x", out, sizeof(out));
	CHECK(strncmp(out, "cannot use the CA bundle /nonexistent/ca.pem: ", 46) == 0);
	/* the URL's host (http url:) rather than hostname */
	transport_describe(CURLE_COULDNT_RESOLVE_HOST, "", d,
	    "http://other.example:8080/in", out, sizeof(out));
	CHECK(strncmp(out, "cannot resolve other.example:8080: ", 35) == 0);
	config_free(cfg);
}

/* ---- a local HTTP server on a plain socket ----------------------------- */

enum srv_mode { SRV_OK, SRV_503, SRV_SILENT, SRV_CLOSE, SRV_GARBAGE };

struct srv {
	int		 lfd;
	int		 port;
	enum srv_mode	 mode;
	atomic_int	 conns;		/* connections accepted */
	atomic_int	 reqs;		/* requests read */
	atomic_int	 quit;
	pthread_t	 th;
	pthread_t	 cth[16];	/* one thread per connection */
	int		 cfd[16];
	int		 nc;
};

/* Read one request (headers + Content-Length body); 0 at EOF/error. */
static int
read_request(int fd)
{
	char buf[65536];
	size_t len = 0;
	char *end, *cl;
	long body = 0;

	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			return 0;
		len += (size_t)n;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end == NULL) {
			if (len >= sizeof(buf) - 1)
				return 0;
			continue;
		}
		cl = strcasestr(buf, "\r\nContent-Length:");
		body = cl != NULL && cl < end ? strtol(cl + 17, NULL, 10) : 0;
		if ((long)(len - (size_t)(end + 4 - buf)) >= body)
			return 1;
	}
}

static void
write_str(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void
serve(struct srv *s, int fd)
{
	char junk[4096];

	if (s->mode == SRV_GARBAGE) {
		/* a TLS client hello answered in plain text */
		if (read(fd, junk, sizeof(junk)) > 0)
			write_str(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
		return;
	}
	while (!atomic_load(&s->quit) && read_request(fd)) {
		atomic_fetch_add(&s->reqs, 1);
		switch (s->mode) {
		case SRV_OK:
			write_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
			    "Retry-After: 7\r\n\r\nok");
			break;
		case SRV_503:
			write_str(fd, "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy");
			break;
		case SRV_SILENT:
			while (!atomic_load(&s->quit))
				usleep(20000);
			return;
		default:	/* SRV_CLOSE: read the request, answer nothing */
			return;
		}
	}
}

struct conn_arg {
	struct srv	*s;
	int		 fd;
};

static void *
conn_thread(void *arg)
{
	struct conn_arg *c = arg;

	serve(c->s, c->fd);
	shutdown(c->fd, SHUT_RDWR);
	free(c);
	return NULL;
}

static void *
srv_thread(void *arg)
{
	struct srv *s = arg;

	while (!atomic_load(&s->quit) && s->nc < 16) {
		int fd = accept(s->lfd, NULL, NULL);
		struct conn_arg *c;

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		atomic_fetch_add(&s->conns, 1);
		c = malloc(sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		s->cfd[s->nc] = fd;
		if (pthread_create(&s->cth[s->nc], NULL, conn_thread, c) != 0) {
			free(c);
			close(fd);
			continue;
		}
		s->nc++;
	}
	return NULL;
}

static int
srv_start(struct srv *s, enum srv_mode mode)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->lfd, 8) < 0 ||
	    getsockname(s->lfd, (struct sockaddr *)&a, &alen) < 0) {
		T_FAILF("cannot listen: %s", strerror(errno));
		return -1;
	}
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->th, NULL, srv_thread, s);
}

static void
srv_stop(struct srv *s)
{
	atomic_store(&s->quit, 1);
	shutdown(s->lfd, SHUT_RDWR);	/* wakes accept() */
	pthread_join(s->th, NULL);
	for (int i = 0; i < s->nc; i++) {
		shutdown(s->cfd[i], SHUT_RDWR);	/* wakes a read() */
		pthread_join(s->cth[i], NULL);
		close(s->cfd[i]);
	}
	close(s->lfd);
}

static char *
url_of(const struct srv *s, const char *scheme, char *out, size_t len)
{
	snprintf(out, len, "%s://127.0.0.1:%d/api/v1/events", scheme, s->port);
	return out;
}

/* One connection kept alive across posts; a 5xx makes the next post open a
 * new one; the status, body and Retry-After are read. */
TEST(hconn_keepalive_and_fresh_after_5xx)
{
	struct config *cfg = config_default();
	struct dest_conf *d;
	struct hconn h;
	struct srv s;
	char url[128], err[512];

	if (srv_start(&s, SRV_OK) != 0)
		return;
	d = dest(cfg, "127.0.0.1", s.port, false);
	CHECK_INT(hconn_open(&h, d, url_of(&s, "http", url, sizeof(url)), err,
	    sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), 0);
		CHECK_INT(h.status, 200);
		CHECK_STR(h.resp.data, "ok");
		CHECK_INT(h.retry_after, 7);
	}
	CHECK_INT(atomic_load(&s.reqs), 3);
	CHECK_INT(atomic_load(&s.conns), 1);
	CHECK(!hconn_will_reconnect(&h));
	s.mode = SRV_503;
	CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), 0);
	CHECK_INT(h.status, 503);
	CHECK_INT(transport_http_policy(h.status), SEND_RETRY);
	CHECK(hconn_will_reconnect(&h));
	s.mode = SRV_OK;
	CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), 0);
	CHECK_INT(h.status, 200);
	CHECK_INT(atomic_load(&s.conns), 2);
	hconn_close(&h);
	srv_stop(&s);
	config_free(cfg);
}

/* What a failed post says, per cause. */
TEST(hconn_errors_are_named)
{
	struct config *cfg = config_default();
	struct dest_conf *d;
	struct hconn h;
	struct srv s;
	char url[128], err[512], want[128];
	int port;

	/* nothing listens on the port */
	if (srv_start(&s, SRV_OK) != 0)
		return;
	port = s.port;
	url_of(&s, "http", url, sizeof(url));
	srv_stop(&s);
	d = dest(cfg, "127.0.0.1", port, false);
	CHECK_INT(hconn_open(&h, d, url, err, sizeof(err)), 0);
	CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot connect to 127.0.0.1:%d: ", port);
	CHECK(strncmp(err, want, strlen(want)) == 0);
	CHECK(hconn_will_reconnect(&h));
	hconn_close(&h);

	/* the server reads the request and closes */
	if (srv_start(&s, SRV_CLOSE) != 0)
		return;
	d = dest(cfg, "127.0.0.1", s.port, false);
	CHECK_INT(hconn_open(&h, d, url_of(&s, "http", url, sizeof(url)), err,
	    sizeof(err)), 0);
	CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "connection to 127.0.0.1:%d broken: ", s.port);
	CHECK(strncmp(err, want, strlen(want)) == 0);
	hconn_close(&h);
	srv_stop(&s);

	/* the server never answers: timeout (1 s) */
	if (srv_start(&s, SRV_SILENT) != 0)
		return;
	d = dest(cfg, "127.0.0.1", s.port, false);
	d->timeout = 1;
	CHECK_INT(hconn_open(&h, d, url_of(&s, "http", url, sizeof(url)), err,
	    sizeof(err)), 0);
	CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "timed out talking to 127.0.0.1:%d: ", s.port);
	CHECK(strncmp(err, want, strlen(want)) == 0);
	hconn_close(&h);
	srv_stop(&s);

	/* https to a plain-text server: the handshake fails, named so */
	if (srv_start(&s, SRV_GARBAGE) != 0)
		return;
	d = dest(cfg, "127.0.0.1", s.port, true);
	CHECK_INT(hconn_open(&h, d, url_of(&s, "https", url, sizeof(url)), err,
	    sizeof(err)), 0);
	CHECK_INT(hconn_post(&h, NULL, "{}", 2, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "TLS handshake with 127.0.0.1:%d failed: ", s.port);
	if (strncmp(err, want, strlen(want)) != 0)
		T_FAILF("got \"%s\", want \"%s...\"", err, want);
	hconn_close(&h);
	srv_stop(&s);
	config_free(cfg);
}

int
main(void)
{
	T_PROG("test_transport");
	config_plugins_builtin();
	RUN(redact_url);
	RUN(base_url_and_timeout);
	RUN(target_url);
	RUN(body_headers);
	RUN(http_policy);
	RUN(setup_ssl_cn_connect_to);
	RUN(describe_certificate_errors);
	RUN(hconn_keepalive_and_fresh_after_5xx);
	RUN(hconn_errors_are_named);
	curl_global_cleanup();
	return t_done();
}
