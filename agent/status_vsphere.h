/*
 * status_vsphere: the vsphere.NAME entries in the status picture
 * (--status, --status --json, /metrics; CONTRACT §5): their figures as the
 * pollers publish them (collectors/vspoll.h), kept by main on a board
 * across reloads, written to and read from the status file.
 */
#ifndef ESXWATCH_STATUS_VSPHERE_H
#define ESXWATCH_STATUS_VSPHERE_H

#include <stdint.h>
#include <stdio.h>

#include "lib/buf.h"

#define STATUS_MAX_VSPHERE	16

struct status_vsphere {
	char		name[64];
	char		state[16];	/* starting | ok | error */
	uint64_t	hosts, polls, errors, requests, events, event_gaps;
	int64_t		last_poll_ms;	/* 0 = never */
	char		last_error[512];
};

struct vsphere_figures;
struct vsphere_board;
struct vsphere_board *vsphere_board_new(void);
void	vsphere_board_free(struct vsphere_board *);
void	vsphere_board_put(struct vsphere_board *, const struct vsphere_figures *);
/* A copy of every entry's figures (at most max): their number. */
size_t	vsphere_board_get(struct vsphere_board *, struct status_vsphere *,
	    size_t max);

/* The status file's "vsphere: NAME" blocks. */
void	status_vsphere_put(struct buf *, const struct status_vsphere *, size_t n);
int	status_vsphere_key(struct status_vsphere *, const char *k, const char *v);
/* --status lines; --status --json's "vsphere" member (",\"vsphere\":[...]",
 * only when there are entries). */
void	status_vsphere_print(FILE *, const struct status_vsphere *, size_t n,
	    int64_t now_ms);
void	status_vsphere_json(struct buf *, const struct status_vsphere *, size_t n);
/* /metrics rows. */
int	status_vsphere_metrics(struct buf *, const struct status_vsphere *,
	    size_t n);

#endif
