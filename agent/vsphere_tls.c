/*
 * vsphere_tls: the vSphere client's TLS (collectors/host/vsphere_soap.h,
 * struct vs_tls) over the agent's one transport: output/transport.c sets
 * up the handle as for every destination (CA bundle, TLS 1.2+, no
 * redirects, close-on-exec sockets) and output/trust.c does verify |
 * first_use | any, the first_use pin kept as storage.directory/
 * trust-vsphere.NAME.pin (esxwatch --trust-reset vsphere.NAME forgets it).
 * In the core because the host layer does not include output/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collectors/host/vsphere_soap.h"
#include "../output/transport.h"
#include "../output/trust.h"
#include "vsphere_tls.h"

struct vtls {
	struct dest_conf	 d;
	struct trust		 t;
	bool			 applied;
	char			 name[96];
	char			 host[256];
	struct curl_slist	*connect_to;
	char			 errbuf[CURL_ERROR_SIZE];
};

static int
vt_setup(void *arg, CURL *c, const char *url, char *err, size_t errlen)
{
	struct vtls *v = arg;

	if (transport_global_init() == -1) {
		snprintf(err, errlen, "libcurl initialisation failed");
		return -1;
	}
	return transport_setup_trust(c, &v->d, &v->t, url, &v->connect_to,
	    v->errbuf, err, errlen);
}

static void
vt_before(void *arg, CURL *c)
{
	struct vtls *v = arg;

	if (trust_before(&v->t, c, &v->applied) == 1)
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
	else
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 0L);
}

static int
vt_connected(void *arg, CURL *c, char *err, size_t errlen)
{
	struct vtls *v = arg;

	return trust_connected(&v->t, c, &v->applied, err, errlen);
}

static void
vt_describe(void *arg, CURLcode rc, const char *errbuf, const char *url,
    char *out, size_t outlen)
{
	struct vtls *v = arg;

	transport_describe_trust(rc, errbuf, &v->d, &v->t, url, out, outlen);
}

static void
vt_free(void *arg)
{
	struct vtls *v = arg;

	curl_slist_free_all(v->connect_to);
	free(v);
}

/* https://HOST[:PORT]/... -> HOST, PORT (443): for the messages the
 * transport writes about the endpoint. */
static void
url_host_port(const char *url, char *host, size_t hostlen, int *port)
{
	const char *h = strstr(url, "://"), *e, *c;
	size_t n;

	*port = 443;
	host[0] = '\0';
	if (h == NULL)
		return;
	h += 3;
	e = h + strcspn(h, "/?#");
	if (*h == '[') {		/* [v6]:port */
		c = memchr(h, ']', (size_t)(e - h));
		c = c != NULL && c + 1 < e && c[1] == ':' ? c + 1 : NULL;
	} else
		c = memchr(h, ':', (size_t)(e - h));
	n = (size_t)((c != NULL ? c : e) - h);
	snprintf(host, hostlen, "%.*s", (int)n, h);
	if (c != NULL && atoi(c + 1) > 0)
		*port = atoi(c + 1);
}

int
vsphere_tls_make(const struct vs_endpoint *ep, struct vs_tls *out, char *err,
    size_t errlen)
{
	struct vtls *v = calloc(1, sizeof(*v));

	if (v == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(v->name, sizeof(v->name), "vsphere.%s", ep->name);
	v->d.name = v->name;
	v->d.ssl = true;
	v->d.ssl_ca_path = (char *)(ep->ca != NULL ? ep->ca : "");
	v->d.ssl_cn = (char *)"";
	v->d.trust = (char *)ep->trust;
	v->d.timeout = ep->timeout_s;
	url_host_port(ep->url, v->host, sizeof(v->host), &v->d.port);
	v->d.hostname = v->host;
	if (trust_init(&v->t, ep->cfg, &v->d, v->name, true, err, errlen) == -1) {
		free(v);
		return -1;
	}
	v->applied = v->t.pin[0] != '\0';
	out->setup = vt_setup;
	out->before = vt_before;
	out->connected = vt_connected;
	out->describe = vt_describe;
	out->free = vt_free;
	out->arg = v;
	return 0;
}
