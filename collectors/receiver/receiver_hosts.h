/*
 * receiver_hosts: collector mode's host table (receiver_int.h).  A host is
 * keyed by its name (CONTRACT §5); it has its figures, its state
 * (sending | silent, kept in the collector's state file across restarts)
 * and one engine stream per program it sends.  Bounded: RECEIVER_MAX_HOSTS
 * hosts (then the host silent the longest is forgotten, counted) and
 * RCV_MAX_PROGRAMS programs each (then "other").
 */
#ifndef ESXWATCH_RECEIVER_HOSTS_H
#define ESXWATCH_RECEIVER_HOSTS_H

#include "receiver_int.h"

struct kvstore;

/* A log of received lines: a program's filelog (receiver.c). */
struct rlog {
	char			 name[64];
	struct filelog_conf	 fc;
	struct lwe_log		 e;
};

struct rprog {
	char			 name[64];
	struct lwe_stream	 s;	/* hostname, input, peer, appname set */
	bool			 bound;
};

struct rhost {
	char			 name[256];
	char			 peer[48];
	char			 transport[4];
	uint64_t		 messages, alerts;
	int64_t			 last_seen_ms;	/* 0: not since the start */
	bool			 silent;
	bool			 fallback_told;	/* localhost* named: said */
	struct rprog		**progs;
	size_t			 nprogs;
	struct rhost		*next_all, *prev_all, *next_hash;
};

struct rhosts;
/* The hosts state remembers (last seen, silent) are back. */
struct rhosts	*rhosts_new(struct kvstore *state);
void		 rhosts_free(struct rhosts *);
struct rhost	*rhosts_find(struct rhosts *, const char *name);
/* A silent host heard again: arg's, before the message is counted. */
typedef void (*rhost_back_fn)(void *arg, struct rhost *, int64_t silent_ms);
/* name's host (made when new) with a message from peer now. */
struct rhost	*rhosts_get(struct rhosts *, const char *name, const char *peer,
		    const char *transport, int64_t now, rhost_back_fn, void *arg);
struct rhost	*rhosts_first(struct rhosts *);
/* The stream of h's program on lg (made when new); NULL: out of memory. */
struct rprog	*rhost_prog(struct rhost *h, const char *program, struct rlog *lg);
/* Every stream let go (the engine goes; a reload). */
void		 rhosts_unbind(struct rhosts *);
void		 rhosts_save(struct rhosts *, struct kvstore *);
void		 rhosts_save_one(struct rhosts *, struct kvstore *, const struct rhost *);
void		 rhosts_figures(struct rhosts *, struct receiver_pic *);

#endif
