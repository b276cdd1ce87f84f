/*
 * vspoll: the vsphere.NAME pollers (vspoll.c) and their event stream
 * (vcevents.c); docs/vsphere.md.
 */
#ifndef ESXWATCH_VSPOLL_H
#define ESXWATCH_VSPOLL_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"

struct vs_conn;

/* The scheduler adds one of these per vsphere.NAME entry (its
 * collector_conf's opts: the struct vsphere_conf). */
extern const struct collector vsphere_poller;

/* An emitter that names the polled host (hostname, esxwatch_input:
 * vsphere, esxwatch_vsphere, esxwatch_collector) and hands on to up. */
struct vem_slot {
	struct emitter	*em;
	void		*opaque[8];
};
void	vp_emitter(struct vem_slot *, struct emitter *up, const char *host,
	    const char *entry, const char *coll);

/* An entry's figures (--status, /metrics), published under
 * VSPHERE_FIGURES through ctx->figures->publish. */
#define VSPHERE_FIGURES	"vsphere"
struct vsphere_figures {
	char		name[64];
	char		state[16];	/* starting | ok | error */
	size_t		hosts;
	uint64_t	polls, errors;
	uint64_t	last_requests;	/* requests of the last poll */
	int64_t		last_poll_ms;	/* 0 = never */
	uint64_t	events, event_gaps;
	char		last_error[512];
};
void	vsphere_publish(struct collector_ctx *, const struct vsphere_figures *);

/* The event stream: one round of ReadNextEvents (vcevents.c).  *evp is
 * its state, made on first use (vcev_free()).  0, or -1 with err. */
struct vcev;
int	vcev_poll(struct collector_ctx *, struct emitter *, struct vs_conn *,
	    struct vcev **evp, uint64_t *emitted, uint64_t *gaps, char *err,
	    size_t errlen);
void	vcev_free(struct vcev *);

#endif
