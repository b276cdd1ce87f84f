/*
 * receiver_int: what the receiver's pieces share (collector mode,
 * docs/collector.md).
 *
 *	receiver.c	the collector: a turn of the network, the engine per
 *			host, silent hosts, the figures
 *	receiver_net.c	listeners (UDP, TCP, TLS), connections, fair reading,
 *			allow, limits; kept across a reload
 *	receiver_conf.c	the receiver: section
 *	receiver_hosts.c the host table
 */
#ifndef ESXWATCH_RECEIVER_INT_H
#define ESXWATCH_RECEIVER_INT_H

#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../agent/config/config.h"
#include "../logwatch/engine.h"
#include "receiver.h"
#include "receiver_conf.h"
#include "syslogwire.h"

/* Bytes read from one connection per turn: one host's storm cannot
 * starve the others (the rest waits in the socket, TCP's window). */
#define RCV_TURN_BYTES		16384
/* UDP datagrams read from one socket per turn. */
#define RCV_TURN_DGRAMS		64
/* A TLS handshake must finish in this long. */
#define RCV_HANDSHAKE_MS	10000
/* A connection that never sent a byte is closed after this long;
 * one that did, after RCV_IDLE_MS without a byte. */
#define RCV_FIRST_BYTE_MS	60000
#define RCV_IDLE_MS		(3600 * 1000)
/* Programs (streams) per host; more share the stream "other". */
#define RCV_MAX_PROGRAMS	64
/* The distinct logs (program names mapped): more share "other". */
#define RCV_MAX_LOGS		256
/* Peers refused that are remembered (logged once each). */
#define RCV_MAX_REFUSED_PEERS	256
/* Records being folded at once, and the fold's deadline. */
#define RCV_FOLD_KEYS		4096
#define RCV_FOLD_MS		200

enum rcv_transport { RT_UDP, RT_TCP, RT_TLS };

struct rcv_msg_sink;
/* One whole message received, to the collector. */
typedef void (*rcv_msg_fn)(void *arg, const struct sockaddr_storage *peer,
    const char *peer_s, enum rcv_transport t, const char *msg, size_t len,
    bool truncated);

struct rnet;

/* The network: listeners and connections; parked across a reload. */
struct rnet	*rnet_open(const struct config *cfg, struct rnet *parked);
void		 rnet_close(struct rnet *);
/*
 * One turn, at most wait_ms waiting: every ready connection read once
 * (RCV_TURN_BYTES), messages to fn.  paused: TCP/TLS connections are not
 * read (back-pressure); UDP still is (its drops are counted).
 */
void		 rnet_turn(struct rnet *, int wait_ms, bool paused, int64_t now_ms,
		    rcv_msg_fn fn, void *arg);
/* The figures: listeners and drops into pic. */
void		 rnet_figures(struct rnet *, struct receiver_pic *pic);
const char	*rcv_transport_name(enum rcv_transport);
/* k more of d (a message that does not parse: the collector's). */
void		 rnet_count(struct rnet *, enum receiver_drop d, uint64_t k);

#endif
