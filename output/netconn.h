/*
 * netconn: the sinks' own sockets (syslog, gelf) — UDP datagrams, and TCP
 * or TLS streams through a libcurl CONNECT_ONLY handle, so the certificate
 * checks and trust pinning are the very ones the HTTP sinks use
 * (transport.c).
 */
#ifndef ESXWATCH_NETCONN_H
#define ESXWATCH_NETCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>

#include "../agent/config/config.h"
#include "trust.h"

struct netconn {
	/* UDP, or a socket the caller opens itself (fd) */
	int			 fd;
	struct sockaddr_storage	 addr;
	socklen_t		 addrlen;
	/* TCP / TLS */
	struct trust		 trust;
	bool			 pin_applied;	/* this handle checks the pin */
	CURL			*curl;
	struct curl_slist	*connect_to;
	curl_socket_t		 sock;
	char			*url;		/* "http(s)://host:port" of the stream */
	char			 errbuf[CURL_ERROR_SIZE];
	time_t			 opened;
};

/* No connection yet (fd -1, no handle). */
void	 netconn_init(struct netconn *);
/* Close what is open (the URL and trust stay for the next open). */
void	 netconn_close(struct netconn *);
/* netconn_close and free the URL. */
void	 netconn_free(struct netconn *);
/* A UDP socket to the destination's hostname:port.  0, or -1 with err. */
int	 netconn_udp_open(struct netconn *, const struct dest_conf *,
	    char *err, size_t errlen);
/* Connect the stream to nc->url (TLS when it is https://).  0 or -1. */
int	 netconn_stream_open(struct netconn *, const struct dest_conf *,
	    char *err, size_t errlen);
/* Is the stream still usable (the peer did not close it)?  What the peer
 * sent is read and dropped. */
bool	 netconn_alive(struct netconn *);
/* Write all of p, waiting at most the destination's timeout.  0 or -1. */
int	 netconn_send(struct netconn *, const struct dest_conf *, const char *p,
	    size_t len, char *err, size_t errlen);
/*
 * Wait until the peer's TCP has acknowledged every byte written (the
 * kernel's send queue is empty, SIOCOUTQ), at most the destination's
 * timeout, watching for the peer closing or resetting the connection
 * meanwhile.  0: drained (or the system cannot tell: no wait); -1 with
 * err: the connection broke or the peer took nothing for the timeout.
 * For protocols without an application acknowledgement (GELF over TCP):
 * a receiver that goes away in the middle of a batch is noticed and the
 * batch sent again, instead of the unread rest being lost.
 */
int	 netconn_drain(struct netconn *, const struct dest_conf *, char *err,
	    size_t errlen);
/* poll() for POLLOUT: poll's answer, its revents in *rev. */
int	 netconn_wait_writable(int fd, int timeout_ms, short *rev);

#endif
