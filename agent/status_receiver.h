/*
 * status_receiver: collector mode's part of the status picture
 * (agent/status.h): the receiver's figures (collectors/receiver/receiver.h)
 * kept between the collector's publications, written to and read from the
 * status file, printed by --status and --status --json, and served by
 * /metrics — one picture for all of them.
 */
#ifndef ESXWATCH_STATUS_RECEIVER_H
#define ESXWATCH_STATUS_RECEIVER_H

#include <stdio.h>

#include "lib/buf.h"
#include "../collectors/receiver/receiver.h"

/* The collector's last picture, across reloads (main keeps it). */
struct recv_board;
struct recv_board *recv_board_new(void);
void	 recv_board_free(struct recv_board *);
void	 recv_board_put(struct recv_board *, const struct receiver_pic *);
/* The last picture into out (out->on false when none). */
void	 recv_board_read(struct recv_board *, struct receiver_pic *out);

/* The status file's receiver blocks. */
void	 status_receiver_put(struct buf *, const struct receiver_pic *);
/* Where a block's indented lines go. */
struct recv_at {
	int	 kind;		/* 0 none, 1 receiver, 2 listener, 3 host */
	size_t	 i;
};
/* A top-level key k: 1 when it opens one of the receiver's blocks. */
int	 status_receiver_block(struct receiver_pic *, struct recv_at *,
	    const char *k, const char *v);
/* An indented line of the block at opened. */
void	 status_receiver_key(struct receiver_pic *, const struct recv_at *,
	    const char *k, const char *v);
void	 status_receiver_print(FILE *, const struct receiver_pic *, int64_t now);
void	 status_receiver_json(struct buf *, const struct receiver_pic *);
int	 status_receiver_metrics(struct buf *, const struct receiver_pic *);

#endif
