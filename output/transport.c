/*
 * transport: libcurl setup shared by the cfapi, http and syslog (TCP/TLS)
 * sinks, so that certificate handling is configured in one place and every
 * sink reports TLS problems in the same words.
 */
#include <sys/socket.h>

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../agent/lib/log.h"
#include "../agent/lib/redact.h"
#include "gzip.h"
#include "transport.h"

static pthread_once_t	 global_once = PTHREAD_ONCE_INIT;
static int		 global_rc;

static void
global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

int
transport_global_init(void)
{
	pthread_once(&global_once, global_init);
	return global_rc;
}

/*
 * The CA bundle when ssl_ca_path is empty: the first readable of the
 * usual places — ESXi's trust store first (vCenter's VMCA and what the
 * admin added with `esxcli security cert`), then the Linux distributions'
 * bundles (liagent reads the same two first ones) — so one binary works on
 * both; NULL leaves libcurl's compiled-in default.
 */
static const char *const ca_bundles[] = {
	"/etc/vmware/ssl/castore.pem",
	"/etc/ssl/certs/ca-certificates.crt",	/* Debian, Ubuntu */
	"/etc/pki/tls/certs/ca-bundle.crt",	/* RHEL, Photon */
	"/etc/ssl/ca-bundle.pem",		/* SUSE */
	"/etc/ssl/cert.pem",			/* Alpine, BSD */
	NULL
};
static pthread_once_t	 ca_once = PTHREAD_ONCE_INIT;
static const char	*ca_default;

static void
ca_probe(void)
{
	size_t i;

	for (i = 0; ca_bundles[i] != NULL; i++)
		if (access(ca_bundles[i], R_OK) == 0) {
			ca_default = ca_bundles[i];
			return;
		}
}

const char *
transport_default_ca(void)
{
	pthread_once(&ca_once, ca_probe);
	return ca_default;
}

int
transport_timeout(const struct dest_conf *d)
{
	return d->timeout > 0 ? d->timeout : TRANSPORT_DEFAULT_TIMEOUT;
}

int
transport_base_url(const struct dest_conf *d, const char *path, struct buf *out)
{
	const char *h = d->hostname != NULL ? d->hostname : "";
	bool v6 = strchr(h, ':') != NULL && h[0] != '[';

	return buf_printf(out, "%s://%s%s%s:%d%s", d->ssl ? "https" : "http",
	    v6 ? "[" : "", h, v6 ? "]" : "", dest_port(d), path);
}

int
transport_target_url(const struct dest_conf *d, const char *url,
    const char *path, struct buf *out)
{
	if (url != NULL && url[0] != '\0')
		return buf_puts(out, url);
	return transport_base_url(d, path, out);
}

struct curl_slist *
transport_body_headers(const char *content_type, const char *compress,
    const struct kvlist *extra, struct gzip **gz)
{
	struct curl_slist *l = NULL;
	struct buf h = BUF_INIT;
	bool ok;

	*gz = NULL;
	ok = buf_printf(&h, "Content-Type: %s", content_type) == 0 &&
	    (l = curl_slist_append(NULL, h.data)) != NULL &&
	    curl_slist_append(l, "Expect:") != NULL;
	if (ok && (compress == NULL || strcmp(compress, "none") != 0))
		ok = (*gz = gzip_new(GZIP_LEVEL_DEFAULT)) != NULL &&
		    curl_slist_append(l, "Content-Encoding: gzip") != NULL;
	for (size_t i = 0; ok && extra != NULL && i < extra->n; i++) {
		buf_reset(&h);
		ok = buf_printf(&h, "%s: %s", extra->v[i].key,
		    extra->v[i].value) == 0 &&
		    curl_slist_append(l, h.data) != NULL;
	}
	if (h.data != NULL)	/* a header value may be a secret */
		explicit_bzero(h.data, h.len);
	buf_free(&h);
	if (ok)
		return l;
	curl_slist_free_all(l);
	gzip_free(*gz);
	*gz = NULL;
	return NULL;
}

void
transport_redact_url(const char *url, char *out, size_t outlen)
{
	(void)redact_url(url, "***", out, outlen);
}

/*
 * With ssl_cn, the URL names ssl_cn (so curl sends it as SNI and checks the
 * certificate against it) and CONNECT_TO sends the connection to the real
 * host.  This keeps curl's own, well-tested name check instead of a custom
 * verify callback.
 */
static int
apply_ssl_cn(CURL *c, const struct dest_conf *d, const char *url,
    struct curl_slist **connect_to, char *err, size_t errlen)
{
	CURLU *u = NULL;
	char *host = NULL, *port = NULL, *newurl = NULL;
	char entry[1024];
	int rc = -1;

	u = curl_url();
	if (u == NULL)
		goto err;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		snprintf(err, errlen, "invalid URL");
		goto err;
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		snprintf(err, errlen, "invalid URL (no host)");
		goto err;
	}
	if (curl_url_set(u, CURLUPART_HOST, d->ssl_cn, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &newurl, 0) != CURLUE_OK) {
		snprintf(err, errlen, "ssl_cn \"%s\" is not a valid host name",
		    d->ssl_cn);
		goto err;
	}
	if ((size_t)snprintf(entry, sizeof(entry), "%s:%s:%s:%s", d->ssl_cn,
	    port, host, port) >= sizeof(entry)) {
		snprintf(err, errlen, "ssl_cn too long");
		goto err;
	}
	*connect_to = curl_slist_append(*connect_to, entry);
	if (*connect_to == NULL)
		goto err;
	curl_easy_setopt(c, CURLOPT_URL, newurl);
	curl_easy_setopt(c, CURLOPT_CONNECT_TO, *connect_to);
	rc = 0;
err:
	curl_free(host);
	curl_free(port);
	curl_free(newurl);
	curl_url_cleanup(u);
	return rc;
}

/*
 * libcurl opens its sockets without close-on-exec, and the agent runs
 * tools (fork + exec) from other threads while connections are open: open
 * them with SOCK_CLOEXEC so no tool inherits a connection.
 */
static curl_socket_t
open_socket_cloexec(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)arg;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

int
transport_setup(CURL *c, const struct dest_conf *d, const char *url,
    struct curl_slist **connect_to, char *errbuf, char *err, size_t errlen)
{
	return transport_setup_trust(c, d, NULL, url, connect_to, errbuf, err,
	    errlen);
}

int
transport_setup_trust(CURL *c, const struct dest_conf *d,
    const struct trust *tr, const char *url, struct curl_slist **connect_to,
    char *errbuf, char *err, size_t errlen)
{
	long t = transport_timeout(d);

	*connect_to = NULL;
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	errbuf[0] = '\0';
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket_cloexec);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, NULL);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, t < 10 ? t : 10L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, t);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
	/* Never follow redirects, never read ~/.netrc, no proxy surprises
	 * beyond the environment's own. */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	/* ssl_cn is a name check: verify only (first_use and any check no
	 * name) */
	if (trust_apply(tr, d, c) == TRUST_VERIFY && d->ssl_cn != NULL &&
	    d->ssl_cn[0] != '\0' && strncasecmp(url, "https://", 8) == 0)
		return apply_ssl_cn(c, d, url, connect_to, err, errlen);
	curl_easy_setopt(c, CURLOPT_URL, url);
	return 0;
}

/* "CN = a, O = b" or "CN=a,O=b" -> "a" */
static void
subject_cn(const char *subj, char *out, size_t outlen)
{
	const char *p = subj;
	size_t n;

	out[0] = '\0';
	for (;;) {
		p = strstr(p, "CN");
		if (p == NULL)
			break;
		if (p == subj || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/') {
			p += 2;
			while (*p == ' ')
				p++;
			if (*p == '=') {
				p++;
				while (*p == ' ')
					p++;
				n = strcspn(p, ",/");
				snprintf(out, outlen, "%.*s", (int)n, p);
				return;
			}
		} else
			p += 2;
	}
}

/*
 * An unverified handshake that only reads the peer's certificate, to say
 * which names it has.  Only ever run after a verified handshake failed.
 */
static void
peer_cert_names(const struct dest_conf *d, const char *url, char *out,
    size_t outlen)
{
	struct dest_conf dd = *d;
	struct curl_slist *ct = NULL;
	struct curl_certinfo *ci = NULL;
	struct curl_slist *s;
	char eb[CURL_ERROR_SIZE], e[128], cn[256];
	const char *san = NULL;
	CURL *c;

	snprintf(out, outlen, "(unknown)");
	c = curl_easy_init();
	if (c == NULL)
		return;
	dd.ssl_accept_any = true;
	dd.timeout = transport_timeout(d) < 5 ? transport_timeout(d) : 5;
	if (transport_setup(c, &dd, url, &ct, eb, e, sizeof(e)) == -1)
		goto out;
	curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
	if (curl_easy_perform(c) != CURLE_OK)
		goto out;
	if (curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) != CURLE_OK ||
	    ci == NULL || ci->num_of_certs < 1)
		goto out;
	cn[0] = '\0';
	for (s = ci->certinfo[0]; s != NULL; s = s->next) {
		if (strncmp(s->data, "Subject:", 8) == 0)
			subject_cn(s->data + 8, cn, sizeof(cn));
		else if (strncmp(s->data, "X509v3 Subject Alternative Name:", 32) == 0)
			san = s->data + 32;
	}
	if (san != NULL)
		while (*san == ' ')
			san++;
	if (cn[0] != '\0' && san != NULL)
		snprintf(out, outlen, "CN=%s, %s", cn, san);
	else if (cn[0] != '\0')
		snprintf(out, outlen, "CN=%s", cn);
	else if (san != NULL)
		snprintf(out, outlen, "%s", san);
out:
	curl_easy_cleanup(c);
	curl_slist_free_all(ct);
}

static bool
has(const char *s, const char *needle)
{
	return strcasestr(s, needle) != NULL;
}

/*
 * After a failed TLS handshake: does the port answer plain HTTP?  (ssl:
 * yes against Log Insight's port 9000 gives only OpenSSL's "wrong version
 * number".)  A HEAD over http:// to the same host and port, 3 s at most.
 */
static bool
answers_plain_http(const struct dest_conf *d, const char *url)
{
	CURLU *u;
	CURL *c;
	char *plain = NULL, eb[CURL_ERROR_SIZE];
	long code = 0;

	if (url == NULL || strncasecmp(url, "https://", 8) != 0)
		return false;
	u = curl_url();
	if (u == NULL)
		return false;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_SCHEME, "http", 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &plain, CURLU_DEFAULT_PORT) !=
	    CURLUE_OK || curl_url_set(u, CURLUPART_PORT, plain, 0) !=
	    CURLUE_OK) {
		curl_free(plain);
		curl_url_cleanup(u);
		return false;
	}
	curl_free(plain);
	plain = NULL;
	if (curl_url_get(u, CURLUPART_URL, &plain, 0) == CURLUE_OK) {
		c = curl_easy_init();
		if (c != NULL) {
			curl_easy_setopt(c, CURLOPT_URL, plain);
			curl_easy_setopt(c, CURLOPT_ERRORBUFFER, eb);
			curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
			curl_easy_setopt(c, CURLOPT_PROXY, "");
			curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
			curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION,
			    open_socket_cloexec);
			curl_easy_setopt(c, CURLOPT_TIMEOUT,
			    transport_timeout(d) < 3 ? (long)transport_timeout(d) : 3L);
			(void)curl_easy_perform(c);
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
			curl_easy_cleanup(c);
		}
	}
	curl_free(plain);
	curl_url_cleanup(u);
	return code >= 100 && code < 600;
}

/* A failed handshake; "wrong version number" is usually a plain port. */
static void
describe_handshake(const struct dest_conf *d, const char *url,
    const char *host, const char *eb, char *out, size_t outlen)
{
	if (answers_plain_http(d, url))
		snprintf(out, outlen, "TLS handshake with %s failed: the server "
		    "answered plain HTTP: port 9000 is Log Insight's plain port, "
		    "9543 its TLS port (use the TLS port, or ssl: no)", host);
	else
		snprintf(out, outlen, "TLS handshake with %s failed: %s", host,
		    eb);
}

void
transport_describe(CURLcode rc, const char *errbuf, const struct dest_conf *d,
    const char *url, char *out, size_t outlen)
{
	const char *eb = errbuf != NULL && errbuf[0] != '\0' ? errbuf :
	    curl_easy_strerror(rc);
	char names[512], host[300], urlhost[256] = "";
	const char *expect;
	CURLU *u;
	char *h = NULL, *p = NULL;

	/* The host the URL names (http's url: may differ from hostname). */
	snprintf(host, sizeof(host), "%s:%d", d->hostname ? d->hostname : "",
	    dest_port(d));
	u = url != NULL ? curl_url() : NULL;
	if (u != NULL) {
		if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		    curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK &&
		    curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) ==
		    CURLUE_OK) {
			snprintf(host, sizeof(host), "%s:%s", h, p);
			snprintf(urlhost, sizeof(urlhost), "%s", h);
		}
		curl_free(h);
		curl_free(p);
		curl_url_cleanup(u);
	}
	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		if (rc == CURLE_SSL_CACERT_BADFILE) {
			snprintf(out, outlen, "cannot use the CA bundle %s: %s",
			    d->ssl_ca_path && d->ssl_ca_path[0] ? d->ssl_ca_path :
			    transport_default_ca() ? transport_default_ca() :
			    "(libcurl's default)", eb);
			return;
		}
		if (has(eb, "subject name") || has(eb, "does not match") ||
		    has(eb, "no alternative certificate")) {
			expect = d->ssl_cn && d->ssl_cn[0] ? d->ssl_cn :
			    urlhost[0] ? urlhost : d->hostname;
			peer_cert_names(d, url, names, sizeof(names));
			snprintf(out, outlen, "name mismatch: expected %s, "
			    "certificate has %s (%s)", expect ? expect : "",
			    names, host);
		} else if (has(eb, "expired"))
			snprintf(out, outlen, "certificate expired (%s): %s",
			    host, eb);
		else if (has(eb, "not yet valid"))
			snprintf(out, outlen, "certificate not yet valid (%s): %s",
			    host, eb);
		else if (has(eb, "issuer") || has(eb, "self-signed") ||
		    has(eb, "self signed") || has(eb, "unknown ca") ||
		    has(eb, "verify the first certificate"))
			snprintf(out, outlen, "certificate signed by an unknown "
			    "CA (%s; set ssl_ca_path to its CA, or trust: "
			    "first_use): %s", host, eb);
		else
			snprintf(out, outlen, "certificate verification failed "
			    "(%s): %s", host, eb);
		return;
	case CURLE_SSL_CONNECT_ERROR:
		describe_handshake(d, url, host, eb, out, outlen);
		return;
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(out, outlen, "cannot resolve %s: %s", host, eb);
		return;
	case CURLE_COULDNT_CONNECT:
		snprintf(out, outlen, SINK_ERR_CONNECT "%s: %s", host, eb);
		return;
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(out, outlen, "timed out talking to %s: %s", host, eb);
		return;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		snprintf(out, outlen, "connection to %s broken: %s", host, eb);
		return;
	default:
		snprintf(out, outlen, "%s: %s", host, eb);
		return;
	}
}

void
transport_describe_trust(CURLcode rc, const char *errbuf,
    const struct dest_conf *d, const struct trust *t, const char *url,
    char *out, size_t outlen)
{
	char host[300];

	if (rc != CURLE_SSL_PINNEDPUBKEYNOTMATCH) {
		transport_describe(rc, errbuf, d, url, out, outlen);
		return;
	}
	snprintf(host, sizeof(host), "%s:%d", d->hostname ? d->hostname : "",
	    dest_port(d));
	trust_describe_mismatch(t, d, url, host, out, outlen);
}

enum send_result
transport_http_policy(long status)
{
	if (status >= 200 && status < 300)
		return SEND_OK;
	if (status == 400 || status == 413 || status == 422)
		return SEND_REJECT;
	return SEND_RETRY;
}

/* ---- the persistent HTTP connection ---- */

static size_t
resp_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct hconn *h = arg;
	size_t n = size * nmemb, room;

	/* Keep the first 64 KB; the rest is drained, not stored. */
	room = h->resp.len < TRANSPORT_MAX_RESPONSE ?
	    TRANSPORT_MAX_RESPONSE - h->resp.len : 0;
	if (room > 0 && buf_append(&h->resp, ptr, n < room ? n : room) == -1)
		return 0;
	return n;
}

int
hconn_open(struct hconn *h, const struct dest_conf *d, const char *url,
    char *err, size_t errlen)
{
	return hconn_open_trust(h, d, NULL, url, err, errlen);
}

int
hconn_open_sink(struct hconn *h, struct trust *t, struct sink_ctx *ctx,
    const char *url)
{
	if (trust_init(t, ctx->cfg, ctx->conf, ctx->name,
	    strncasecmp(url, "https:", 6) == 0, ctx->error,
	    sizeof(ctx->error)) == -1)
		return -1;
	return hconn_open_trust(h, ctx->conf, t, url, ctx->error,
	    sizeof(ctx->error));
}

int
hconn_open_trust(struct hconn *h, const struct dest_conf *d, struct trust *t,
    const char *url, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	buf_init(&h->resp, TRANSPORT_MAX_RESPONSE + 1);
	h->conf = d;
	h->trust = t;
	h->pin_applied = t != NULL && t->pin[0] != '\0';
	if (transport_global_init() == -1) {
		snprintf(err, errlen, "libcurl initialisation failed");
		return -1;
	}
	h->url = strdup(url);
	if (h->url == NULL) {
		snprintf(err, errlen, "out of memory");
		goto err;
	}
	h->curl = curl_easy_init();
	if (h->curl == NULL) {
		snprintf(err, errlen, "out of memory");
		goto err;
	}
	if (transport_setup_trust(h->curl, d, t, url, &h->connect_to,
	    h->errbuf, err, errlen) == -1)
		goto err;
	curl_easy_setopt(h->curl, CURLOPT_POST, 1L);
	/* One connection: when a fresh one is made (after an error, or at
	 * `reconnect`) the old one is closed rather than kept for reuse. */
	curl_easy_setopt(h->curl, CURLOPT_MAXCONNECTS, 1L);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, resp_write);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "esxwatch/" ESXWATCH_VERSION);
	h->opened = time(NULL);
	return 0;
err:
	hconn_close(h);
	return -1;
}

bool
hconn_will_reconnect(struct hconn *h)
{
	long reconnect_s = (long)h->conf->reconnect * 60;

	/* reconnect: drop the long-lived connection now and then so a load
	 * balancer in front of a Log Insight cluster can rebalance. */
	if (reconnect_s > 0 && time(NULL) - h->opened >= reconnect_s)
		h->fresh = true;
	return h->fresh;
}

int
hconn_post(struct hconn *h, struct curl_slist *hdrs, const void *body,
    size_t len, char *err, size_t errlen)
{
	time_t now = time(NULL);
	curl_off_t ra = 0;
	CURLcode rc;

	hconn_will_reconnect(h);
	if (trust_before(h->trust, h->curl, &h->pin_applied) == 1)
		h->fresh = true;
	curl_easy_setopt(h->curl, CURLOPT_FRESH_CONNECT, h->fresh ? 1L : 0L);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	buf_reset(&h->resp);
	h->status = 0;
	h->retry_after = 0;
	h->errbuf[0] = '\0';
	if (h->fresh) {
		h->opened = now;
		h->fresh = false;
	}
	rc = curl_easy_perform(h->curl);
	if (rc != CURLE_OK) {
		transport_describe_trust(rc, h->errbuf, h->conf, h->trust, h->url,
		    err, errlen);
		h->fresh = true;
		return -1;
	}
	if (trust_connected(h->trust, h->curl, &h->pin_applied, err,
	    errlen) == -1) {
		h->fresh = true;
		return -1;
	}
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &h->status);
	/* curl parses both forms of Retry-After (seconds, HTTP-date). */
	if (curl_easy_getinfo(h->curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
	    ra > 0)
		h->retry_after = ra > 86400 ? 86400 : (int)ra;
	if (h->status >= 500)
		h->fresh = true;
	return 0;
}

void
hconn_close(struct hconn *h)
{
	if (h->curl != NULL)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->connect_to);
	free(h->url);
	buf_free(&h->resp);
	memset(h, 0, sizeof(*h));
}
