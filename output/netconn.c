/*
 * netconn: UDP sockets and CONNECT_ONLY libcurl streams for the sinks
 * that speak their own protocol over TCP/TLS/UDP (syslog.c, gelf.c).
 * Moved from syslog.c so both use one implementation.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../agent/lib/log.h"
#include "netconn.h"
#include "transport.h"

/* The bytes a TCP socket has not had acknowledged (linux/sockios.h). */
#ifndef SIOCOUTQ
#define SIOCOUTQ	TIOCOUTQ
#endif

void
netconn_init(struct netconn *c)
{
	c->fd = -1;
	c->sock = CURL_SOCKET_BAD;
}

void
netconn_close(struct netconn *c)
{
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	curl_slist_free_all(c->connect_to);
	c->connect_to = NULL;
	c->sock = CURL_SOCKET_BAD;
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

void
netconn_free(struct netconn *c)
{
	netconn_close(c);
	free(c->url);
	c->url = NULL;
}

int
netconn_udp_open(struct netconn *c, const struct dest_conf *d, char *err,
    size_t errlen)
{
	struct addrinfo hints, *res = NULL, *ai;
	char port[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_DGRAM;
	snprintf(port, sizeof(port), "%d", dest_port(d));
	rc = getaddrinfo(d->hostname, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", d->hostname,
		    gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (c->fd == -1)
			continue;
		memcpy(&c->addr, ai->ai_addr, ai->ai_addrlen);
		c->addrlen = ai->ai_addrlen;
		break;
	}
	freeaddrinfo(res);
	if (c->fd == -1) {
		snprintf(err, errlen, "cannot open a UDP socket to %s:%s: %s",
		    d->hostname, port, log_errstr(errno));
		return -1;
	}
	c->opened = time(NULL);
	return 0;
}

int
netconn_wait_writable(int fd, int timeout_ms, short *rev)
{
	struct pollfd pfd;
	int prc;

	pfd.fd = fd;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	prc = poll(&pfd, 1, timeout_ms);
	*rev = pfd.revents;
	return prc;
}

int
netconn_stream_open(struct netconn *c, const struct dest_conf *d, char *err,
    size_t errlen)
{
	CURLcode rc;

	c->curl = curl_easy_init();
	if (c->curl == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->pin_applied = c->trust.pin[0] != '\0';
	if (transport_setup_trust(c->curl, d, &c->trust, c->url,
	    &c->connect_to, c->errbuf, err, errlen) == -1)
		goto fail;
	curl_easy_setopt(c->curl, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(c->curl, CURLOPT_PROXY, "");
	rc = curl_easy_perform(c->curl);
	if (rc != CURLE_OK) {
		transport_describe_trust(rc, c->errbuf, d, &c->trust, c->url,
		    err, errlen);
		goto fail;
	}
	if (trust_connected(&c->trust, c->curl, &c->pin_applied, err,
	    errlen) == -1)
		goto fail;
	if (curl_easy_getinfo(c->curl, CURLINFO_ACTIVESOCKET, &c->sock) !=
	    CURLE_OK || c->sock == CURL_SOCKET_BAD) {
		snprintf(err, errlen, "no socket after connect");
		goto fail;
	}
	c->opened = time(NULL);
	return 0;
fail:
	netconn_close(c);
	return -1;
}

/*
 * A peer that closed shows up as readable with recv() returning 0;
 * anything it sent (syslog and GELF servers send nothing, TLS may send
 * session tickets) is read and dropped.
 */
bool
netconn_alive(struct netconn *c)
{
	struct pollfd pfd;
	char junk[4096];
	size_t n;
	CURLcode rc;
	int i;

	for (i = 0; i < 16; i++) {
		pfd.fd = c->sock;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 0)
			return true;
		if (pfd.revents & (POLLERR | POLLNVAL))
			return false;
		n = 0;
		rc = curl_easy_recv(c->curl, junk, sizeof(junk), &n);
		if (rc == CURLE_AGAIN)
			return true;
		if (rc != CURLE_OK || n == 0)
			return false;
	}
	return true;
}

int
netconn_send(struct netconn *c, const struct dest_conf *d, const char *p,
    size_t len, char *err, size_t errlen)
{
	int timeout_ms = transport_timeout(d) * 1000;
	size_t n;
	CURLcode rc;
	short rev;
	int prc;

	while (len > 0) {
		n = 0;
		rc = curl_easy_send(c->curl, p, len, &n);
		if (rc == CURLE_OK) {
			p += n;
			len -= n;
			continue;
		}
		if (rc != CURLE_AGAIN) {
			snprintf(err, errlen, "sending to %s:%d failed: %s",
			    d->hostname, dest_port(d), c->errbuf[0] ?
			    c->errbuf : curl_easy_strerror(rc));
			return -1;
		}
		prc = netconn_wait_writable(c->sock, timeout_ms, &rev);
		if (prc == -1 && errno == EINTR)
			continue;
		if (prc <= 0) {
			snprintf(err, errlen, "sending to %s:%d: %s",
			    d->hostname, dest_port(d), prc == 0 ?
			    "timed out waiting for the receiver" :
			    log_errstr(errno));
			return -1;
		}
		if (rev & (POLLERR | POLLHUP | POLLNVAL)) {
			snprintf(err, errlen, "connection to %s:%d closed by "
			    "the receiver", d->hostname, dest_port(d));
			return -1;
		}
	}
	return 0;
}

int
netconn_drain(struct netconn *c, const struct dest_conf *d, char *err,
    size_t errlen)
{
	int timeout_ms = transport_timeout(d) * 1000, waited = 0, q = 0;
	struct pollfd pfd;

	for (;;) {
		if (ioctl(c->sock, SIOCOUTQ, &q) == -1)
			return 0;	/* cannot tell here: no wait */
		if (q == 0)
			return 0;
		if (!netconn_alive(c)) {
			snprintf(err, errlen, "connection to %s:%d closed by "
			    "the receiver with %d bytes of the batch not "
			    "acknowledged", d->hostname, dest_port(d), q);
			return -1;
		}
		if (waited >= timeout_ms) {
			snprintf(err, errlen, "sending to %s:%d: timed out "
			    "waiting for the receiver to take %d bytes",
			    d->hostname, dest_port(d), q);
			return -1;
		}
		pfd.fd = c->sock;
		pfd.events = POLLIN;
		pfd.revents = 0;
		(void)poll(&pfd, 1, 5);
		waited += 5;
	}
}
