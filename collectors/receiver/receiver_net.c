/*
 * receiver_net: the listeners and connections of collector mode
 * (receiver_int.h).  One thread (the collector's) and poll(): ESXi's
 * VMkernel has no epoll and one code path serves both; a few thousand
 * descriptors cost poll() little next to reading them.  A turn reads
 * every ready connection at most RCV_TURN_BYTES (a storm waits in its own
 * socket, TCP's window slows its sender, the other hosts are read), every
 * UDP socket at most
 * RCV_TURN_DGRAMS datagrams.  Bounded: max_connections, the framer's
 * 64 KiB per connection, handshake, first-byte and idle timeouts.  A
 * reload parks the whole set and the next rnet_open() adopts the
 * listeners it still has and the connections on them.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "../../agent/lib/log.h"
#include "receiver_int.h"

struct rlisten {
	struct receiver_listen_key {
		char		 address[64];
		enum rcv_transport t;
		char		 cert[256], key[256], ca[256];
	} k;
	int		 fd;
	SSL_CTX		*ctx;
	uint32_t	 ovfl;		/* SO_RXQ_OVFL: the kernel's count */
	struct receiver_listener_pic pic;
	bool		 keep;		/* still configured (reload) */
	char		 buf[SYSLOG_MSG_MAX + 1];	/* UDP */
};

struct rconn {
	int		 fd;
	struct rlisten	*l;
	SSL		*ssl;
	bool		 handshaken;
	struct sockaddr_storage peer;
	char		 peer_s[48];
	struct framer	*fr;
	int64_t		 opened_ms, last_ms;
	bool		 any;		/* sent a byte */
	struct rconn	*next;
};

struct refused {
	char		 peer[48];
};

struct rnet {
	struct pollfd	*pfd;		/* this turn's: listeners, connections */
	void		**who;		/* what each pfd entry is */
	size_t		 cap;
	int		 spare;		/* an fd given up to refuse at EMFILE */
	struct rlisten	*l[RECEIVER_MAX_LISTENERS];
	size_t		 nl;
	struct rconn	*conns;
	size_t		 nconns;
	int		 max_conns;
	struct receiver_cidr *allow;
	size_t		 nallow;
	uint64_t	 dropped[RDROP_N];
	struct refused	 refused[RCV_MAX_REFUSED_PEERS];
	size_t		 nrefused;
	bool		 paused;
	/* the message callback of this turn (framer's) */
	rcv_msg_fn	 fn;
	void		*arg;
	struct rconn	*cur;
	char		 rbuf[RCV_TURN_BYTES];
};

const char *const receiver_drop_names[RDROP_N] = {
	"udp_overflow", "malformed", "truncated", "refused_allow",
	"refused_tls", "refused_connections",
};

const char *
rcv_transport_name(enum rcv_transport t)
{
	return t == RT_UDP ? "udp" : t == RT_TCP ? "tcp" : "tls";
}

static void
peer_text(const struct sockaddr_storage *sa, char *out, size_t len)
{
	const struct sockaddr_in *a4 = (const void *)sa;
	const struct sockaddr_in6 *a6 = (const void *)sa;

	out[0] = '\0';
	if (sa->ss_family == AF_INET)
		inet_ntop(AF_INET, &a4->sin_addr, out, (socklen_t)len);
	else if (sa->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
			inet_ntop(AF_INET, a6->sin6_addr.s6_addr + 12, out,
			    (socklen_t)len);
		else
			inet_ntop(AF_INET6, &a6->sin6_addr, out, (socklen_t)len);
	}
}

/* A sender outside allow: counted, logged once per peer. */
static bool
allowed(struct rnet *n, const struct sockaddr_storage *peer, const char *ps)
{
	size_t i;

	if (n->nallow == 0)
		return true;
	for (i = 0; i < n->nallow; i++)
		if (receiver_cidr_match(&n->allow[i], peer))
			return true;
	n->dropped[RDROP_REFUSED_ALLOW]++;
	for (i = 0; i < n->nrefused; i++)
		if (strcmp(n->refused[i].peer, ps) == 0)
			return false;
	if (n->nrefused < RCV_MAX_REFUSED_PEERS) {
		snprintf(n->refused[n->nrefused++].peer, sizeof(n->refused[0].peer),
		    "%s", ps);
		log_warn("receiver: %s is not in receiver.allow: its messages "
		    "are refused (counted; said once per sender)", ps);
	}
	return false;
}

/* ---- listeners ----------------------------------------------------- */

static void
lkey(const struct receiver_listen *c, struct receiver_listen_key *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->address, sizeof(k->address), "%s", c->address);
	k->t = strcmp(c->transport, "udp") == 0 ? RT_UDP :
	    strcmp(c->transport, "tcp") == 0 ? RT_TCP : RT_TLS;
	snprintf(k->cert, sizeof(k->cert), "%s", c->cert ? c->cert : "");
	snprintf(k->key, sizeof(k->key), "%s", c->key ? c->key : "");
	snprintf(k->ca, sizeof(k->ca), "%s", c->client_ca ? c->client_ca : "");
}

static void
ssl_why(char *out, size_t len)
{
	unsigned long e = ERR_get_error();

	if (e == 0)
		snprintf(out, len, "unknown TLS error");
	else
		ERR_error_string_n(e, out, len);
	ERR_clear_error();
}

static int
tls_ctx(struct rlisten *l)
{
	char why[160];

	l->ctx = SSL_CTX_new(TLS_server_method());
	if (l->ctx == NULL)
		goto err;
	SSL_CTX_set_min_proto_version(l->ctx, TLS1_2_VERSION);
	if (SSL_CTX_use_certificate_chain_file(l->ctx, l->k.cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(l->ctx, l->k.key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(l->ctx) != 1)
		goto err;
	if (l->k.ca[0] != '\0') {
		if (SSL_CTX_load_verify_locations(l->ctx, l->k.ca, NULL) != 1)
			goto err;
		SSL_CTX_set_verify(l->ctx, SSL_VERIFY_PEER |
		    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	}
	return 0;
err:
	ssl_why(why, sizeof(why));
	snprintf(l->pic.error, sizeof(l->pic.error), "TLS: %.150s", why);
	SSL_CTX_free(l->ctx);
	l->ctx = NULL;
	return -1;
}

static int
l_socket(struct rlisten *l)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	char why[200];
	int one = 1, zero = 0;

	if (receiver_parse_address(l->k.address, &sa, &salen, why,
	    sizeof(why)) < 0) {
		snprintf(l->pic.error, sizeof(l->pic.error), "%.159s", why);
		return -1;
	}
	l->fd = socket(sa.ss_family, (l->k.t == RT_UDP ? SOCK_DGRAM :
	    SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		goto err;
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa.ss_family == AF_INET6)	/* [::] takes IPv4 too */
		setsockopt(l->fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (l->k.t == RT_UDP)
		setsockopt(l->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (bind(l->fd, (struct sockaddr *)&sa, salen) < 0 ||
	    (l->k.t != RT_UDP && listen(l->fd, 512) < 0))
		goto err;
	return 0;
err:
	snprintf(l->pic.error, sizeof(l->pic.error), "%s%s", log_errstr(errno),
	    errno == EACCES ? " (a port below 1024 needs CAP_NET_BIND_SERVICE)" :
	    "");
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	return -1;
}

static struct rlisten *
l_open(const struct receiver_listen_key *k)
{
	struct rlisten *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->k = *k;
	l->fd = -1;
	snprintf(l->pic.address, sizeof(l->pic.address), "%s", k->address);
	snprintf(l->pic.transport, sizeof(l->pic.transport), "%s",
	    rcv_transport_name(k->t));
	if ((k->t == RT_TLS && tls_ctx(l) < 0) || l_socket(l) < 0) {
		log_error("receiver: cannot listen on %s %s: %s",
		    l->pic.transport, k->address, l->pic.error);
		return l;	/* listed, with its error */
	}
	l->pic.listening = true;
	log_info("receiver: listening on %s %s", l->pic.transport, k->address);
	return l;
}

static void
l_close(struct rlisten *l)
{
	if (l->fd >= 0)
		close(l->fd);
	SSL_CTX_free(l->ctx);
	free(l);
}

/* ---- connections --------------------------------------------------- */

static void
c_close(struct rnet *n, struct rconn *c)
{
	struct rconn **pp;

	for (pp = &n->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	n->nconns--;
	if (c->l->pic.connections > 0)
		c->l->pic.connections--;
	if (c->ssl != NULL) {
		if (c->handshaken)
			SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	close(c->fd);
	/* the framer's malformed frames: counted per connection there */
	n->dropped[RDROP_MALFORMED] += framer_counts(c->fr)->malformed;
	framer_free(c->fr);
	free(c);
}

/* A whole message of the connection being read. */
static void
on_frame(void *arg, const char *msg, size_t len, bool truncated)
{
	struct rnet *n = arg;
	struct rconn *c = n->cur;

	if (truncated)
		n->dropped[RDROP_TRUNCATED]++;
	c->l->pic.messages++;
	n->fn(n->arg, &c->peer, c->peer_s, c->l->k.t, msg, len, truncated);
}

static void
accept_one(struct rnet *n, struct rlisten *l, int64_t now)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	struct rconn *c;
	char ps[48];
	int fd;

	fd = accept(l->fd, (struct sockaddr *)&peer, &plen);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && n->spare >= 0) {
		/* out of descriptors: the one kept for this takes the
		 * connection to close it, or the listener stays ready */
		close(n->spare);
		fd = accept(l->fd, NULL, NULL);
		if (fd >= 0)
			close(fd);
		n->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
		n->dropped[RDROP_REFUSED_CONNECTIONS]++;
		log_limited(LOG_WARN, "receiver-emfile", 60, "receiver: out of "
		    "file descriptors (RLIMIT_NOFILE): a connection refused "
		    "(counted); lower receiver.max_connections");
		return;
	}
	if (fd < 0)
		return;
	/* accept(), not accept4(): the calls VMkernel has */
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		close(fd);
		return;
	}
	peer_text(&peer, ps, sizeof(ps));
	if (!allowed(n, &peer, ps)) {
		close(fd);
		return;
	}
	if (n->nconns >= (size_t)n->max_conns) {
		n->dropped[RDROP_REFUSED_CONNECTIONS]++;
		log_limited(LOG_WARN, "receiver-maxconn", 60, "receiver: "
		    "receiver.max_connections (%d) reached: %s refused "
		    "(counted)", n->max_conns, ps);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c != NULL)
		c->fr = framer_new();
	if (c == NULL || c->fr == NULL) {
		free(c);
		close(fd);
		return;
	}
	c->fd = fd;
	c->l = l;
	c->peer = peer;
	snprintf(c->peer_s, sizeof(c->peer_s), "%s", ps);
	c->opened_ms = c->last_ms = now;
	if (l->k.t == RT_TLS) {
		c->ssl = SSL_new(l->ctx);
		if (c->ssl == NULL || SSL_set_fd(c->ssl, fd) != 1) {
			SSL_free(c->ssl);
			framer_free(c->fr);
			free(c);
			close(fd);
			return;
		}
		SSL_set_accept_state(c->ssl);
	}
	c->next = n->conns;
	n->conns = c;
	n->nconns++;
	l->pic.connections++;
}

/* TLS: the handshake, then reads.  >0 bytes, 0 nothing now, -1 closed. */
static ssize_t
c_read(struct rnet *n, struct rconn *c, char *buf, size_t len)
{
	ssize_t r;
	int e;

	if (c->ssl == NULL) {
		r = recv(c->fd, buf, len, 0);
		if (r > 0)
			return r;
		return r < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
	}
	if (!c->handshaken) {
		r = SSL_do_handshake(c->ssl);
		if (r != 1) {
			e = SSL_get_error(c->ssl, (int)r);
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
				return 0;
			n->dropped[RDROP_REFUSED_TLS]++;
			log_limited(LOG_WARN, c->peer_s, 3600, "receiver: TLS "
			    "handshake with %s failed; refused (counted)",
			    c->peer_s);
			ERR_clear_error();
			return -1;
		}
		c->handshaken = true;
	}
	r = SSL_read(c->ssl, buf, (int)len);
	if (r > 0)
		return r;
	e = SSL_get_error(c->ssl, (int)r);
	ERR_clear_error();
	return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* One turn of a connection: up to RCV_TURN_BYTES. */
static void
c_turn(struct rnet *n, struct rconn *c, int64_t now)
{
	size_t got = 0;
	ssize_t r;

	n->cur = c;
	while (got < RCV_TURN_BYTES) {
		r = c_read(n, c, n->rbuf, RCV_TURN_BYTES - got);
		if (r < 0) {
			framer_end(c->fr, on_frame, n);
			c_close(n, c);
			n->cur = NULL;
			return;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		c->any = true;
		c->last_ms = now;
		framer_feed(c->fr, n->rbuf, (size_t)r, on_frame, n);
		if (c->ssl == NULL || SSL_pending(c->ssl) == 0)
			break;
	}
	n->cur = NULL;
}

/* ---- UDP ----------------------------------------------------------- */

static void
udp_turn(struct rnet *n, struct rlisten *l)
{
	for (int i = 0; i < RCV_TURN_DGRAMS; i++) {
		struct sockaddr_storage peer;
		char cbuf[CMSG_SPACE(sizeof(uint32_t))], ps[48];
		struct iovec iov = { l->buf, SYSLOG_MSG_MAX };
		struct msghdr mh;
		struct cmsghdr *cm;
		ssize_t r;
		size_t len;

		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &peer;
		mh.msg_namelen = sizeof(peer);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		r = recvmsg(l->fd, &mh, MSG_DONTWAIT);
		if (r < 0)
			return;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SO_RXQ_OVFL) {
				uint32_t v;

				memcpy(&v, CMSG_DATA(cm), sizeof(v));
				n->dropped[RDROP_UDP_OVERFLOW] += v - l->ovfl;
				l->ovfl = v;
			}
		peer_text(&peer, ps, sizeof(ps));
		if (!allowed(n, &peer, ps))
			continue;
		len = (size_t)r;
		while (len > 0 && (l->buf[len - 1] == '\n' || l->buf[len - 1] == '\0'))
			len--;
		if (len == 0)
			continue;
		l->pic.messages++;
		if (mh.msg_flags & MSG_TRUNC)
			n->dropped[RDROP_TRUNCATED]++;
		n->fn(n->arg, &peer, ps, RT_UDP, l->buf, len,
		    (mh.msg_flags & MSG_TRUNC) != 0);
	}
}

/* ---- the set ------------------------------------------------------- */

static void
timeouts(struct rnet *n, int64_t now)
{
	struct rconn *c, *next;

	for (c = n->conns; c != NULL; c = next) {
		next = c->next;
		if (c->ssl != NULL && !c->handshaken &&
		    now - c->opened_ms > RCV_HANDSHAKE_MS) {
			n->dropped[RDROP_REFUSED_TLS]++;
			log_limited(LOG_WARN, c->peer_s, 3600, "receiver: %s did "
			    "not finish its TLS handshake in %d s; closed "
			    "(counted)", c->peer_s, RCV_HANDSHAKE_MS / 1000);
			c_close(n, c);
		} else if (!n->paused && now - c->last_ms >
		    (c->any ? RCV_IDLE_MS : RCV_FIRST_BYTE_MS))
			c_close(n, c);
	}
}

/* This turn's poll set: the listeners, then the connections (not while
 * paused: nothing is read, TCP's window fills, the senders wait). */
static size_t
poll_set(struct rnet *n, bool paused)
{
	size_t k = 0, want = n->nl + n->nconns;

	if (want > n->cap) {
		struct pollfd *p = realloc(n->pfd, want * sizeof(*p));
		void **w = p != NULL ? realloc(n->who, want * sizeof(*w)) : NULL;

		if (p != NULL)
			n->pfd = p;
		if (w == NULL)
			return 0;
		n->who = w;
		n->cap = want;
	}
	for (size_t j = 0; j < n->nl; j++) {
		if (n->l[j]->fd < 0)
			continue;
		n->pfd[k] = (struct pollfd){ .fd = n->l[j]->fd, .events = POLLIN };
		n->who[k++] = n->l[j];
	}
	for (struct rconn *c = n->conns; c != NULL && !paused; c = c->next) {
		n->pfd[k] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		n->who[k++] = c;
	}
	return k;
}

void
rnet_turn(struct rnet *n, int wait_ms, bool paused, int64_t now,
    rcv_msg_fn fn, void *arg)
{
	size_t k, nls = 0;
	int r;

	n->fn = fn;
	n->arg = arg;
	n->paused = paused;
	k = poll_set(n, paused);
	for (size_t j = 0; j < n->nl; j++)
		nls += n->l[j]->fd >= 0;
	r = k > 0 ? poll(n->pfd, (nfds_t)k, wait_ms) : poll(NULL, 0, wait_ms);
	for (size_t i = 0; r > 0 && i < k; i++) {
		if (n->pfd[i].revents == 0)
			continue;
		if (i < nls) {
			struct rlisten *l = n->who[i];

			if (l->k.t == RT_UDP)
				udp_turn(n, l);
			else
				accept_one(n, l, now);
			continue;
		}
		/* a connection accepted in this turn is not in the set yet;
		 * one closed is never named again (one entry per fd) */
		c_turn(n, n->who[i], now);
	}
	timeouts(n, now);
}

/* Descriptors for max connections and the rest of the agent: the soft
 * RLIMIT_NOFILE raised as far as the hard one allows. */
static void
room_for(int max)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max + 512;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
	    want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < want)
		log_warn("receiver: RLIMIT_NOFILE %llu is below receiver."
		    "max_connections (%d) and the agent's own files: connections "
		    "past it are refused (counted)", (unsigned long long)rl.rlim_cur,
		    max);
}

struct rnet *
rnet_open(const struct config *cfg, struct rnet *old)
{
	const struct receiver_conf *rc = &cfg->receiver;
	struct rnet *n = old;

	if (n == NULL) {
		n = calloc(1, sizeof(*n));
		if (n == NULL)
			return NULL;
		n->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	room_for(rc->max_connections);
	free(n->allow);
	n->allow = calloc(rc->allow.n ? rc->allow.n : 1, sizeof(*n->allow));
	n->nallow = 0;
	for (size_t i = 0; n->allow != NULL && i < rc->allow.n; i++)
		if (receiver_parse_cidr(rc->allow.v[i], &n->allow[n->nallow]) == 0)
			n->nallow++;
	n->max_conns = rc->max_connections > 0 ? rc->max_connections : 1024;
	for (size_t j = 0; j < n->nl; j++)
		n->l[j]->keep = false;
	for (size_t i = 0; i < rc->nsyslog; i++) {
		struct receiver_listen_key k;
		size_t j;

		lkey(&rc->syslog[i], &k);
		for (j = 0; j < n->nl; j++)
			if (memcmp(&n->l[j]->k, &k, sizeof(k)) == 0 &&
			    n->l[j]->fd >= 0)
				break;
		if (j < n->nl) {
			n->l[j]->keep = true;	/* kept, with its connections */
			continue;
		}
		if (n->nl == RECEIVER_MAX_LISTENERS) {
			log_error("receiver: more than %d listeners; %s is not "
			    "opened", RECEIVER_MAX_LISTENERS, k.address);
			continue;
		}
		n->l[n->nl] = l_open(&k);
		if (n->l[n->nl] != NULL)
			n->l[n->nl++]->keep = true;
	}
	/* listeners no longer configured: closed with their connections */
	for (size_t j = 0; j < n->nl;) {
		struct rlisten *l = n->l[j];

		if (l->keep) {
			j++;
			continue;
		}
		for (struct rconn *c = n->conns, *next; c != NULL; c = next) {
			next = c->next;
			if (c->l == l)
				c_close(n, c);
		}
		l_close(l);
		n->l[j] = n->l[--n->nl];
	}
	return n;
}

void
rnet_close(struct rnet *n)
{
	if (n == NULL)
		return;
	while (n->conns != NULL)
		c_close(n, n->conns);
	for (size_t j = 0; j < n->nl; j++)
		l_close(n->l[j]);
	free(n->pfd);
	free(n->who);
	if (n->spare >= 0)
		close(n->spare);
	free(n->allow);
	free(n);
}

void
rnet_figures(struct rnet *n, struct receiver_pic *p)
{
	p->paused = n->paused;
	p->nlisteners = n->nl;
	for (size_t j = 0; j < n->nl; j++)
		p->listeners[j] = n->l[j]->pic;
	for (int i = 0; i < RDROP_N; i++)
		p->dropped[i] = n->dropped[i];
	for (struct rconn *c = n->conns; c != NULL; c = c->next)
		p->dropped[RDROP_MALFORMED] += framer_counts(c->fr)->malformed;
}

void
rnet_count(struct rnet *n, enum receiver_drop d, uint64_t k)
{
	n->dropped[d] += k;
}
