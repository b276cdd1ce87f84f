/*
 * diagstate: the diagnosis stage's memory (agent/diagnosis/diagnose.h):
 * its fixed-size tables of recent observations per entity, the types the
 * stage's interface and its rules share, and the helpers the rules
 * (agent/diagnosis/diagrules.c) use on the tables.  Below both the stage
 * and its rules: it includes neither.
 */
#ifndef ESXWATCH_DIAGSTATE_H
#define ESXWATCH_DIAGSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../event.h"

struct diag_conf {
	int	window_s;	/* path loss vs NIC errors: +- this, default 300 */
	int	flap_count;	/* more link changes than this ... default 5 */
	int	flap_window_s;	/* ... of one NIC within this is flapping, default 300 */
	int	drive_window_s;	/* SCSI errors and SMART growth within this, default 86400 */
	int	silent_after_s;	/* no delivery for this long is an outage, default 300 */
};

#define DIAG_TEXT_MAX		1024
#define DIAG_EVIDENCE_MAX	2048
#define DIAG_NAME_MAX		128
#define DIAG_EXTRA_MAX		4

/* A host name, for the memory of another host's (collector mode). */
#define DIAG_HOST_MAX		256

/* One conclusion of a rule: becomes one event (esxwatch_kind alert). */
struct diag_alert {
	/* the host it is about and how its events came (esxwatch_input);
	 * "": the agent's own */
	char	host[DIAG_HOST_MAX];
	char	input[16];
	char	rule[32];		/* esxwatch_diagnosis */
	char	severity[16];
	char	text[DIAG_TEXT_MAX];	/* cause and next step */
	char	evidence[DIAG_EVIDENCE_MAX];	/* esxwatch_evidence */
	char	nic[DIAG_NAME_MAX];
	char	device[DIAG_NAME_MAX];
	char	datastore[DIAG_NAME_MAX];
	size_t	nextra;
	char	extra_name[DIAG_EXTRA_MAX][40];
	char	extra_value[DIAG_EXTRA_MAX][512];
};

/* A question a rule asks the host (answered by collectors/diagnosis.c). */
enum diag_want_kind { DIAG_WANT_UPLINKS, DIAG_WANT_PTABLE };
struct diag_want {
	enum diag_want_kind kind;
	char	key[DIAG_NAME_MAX];	/* NFS server address(es) or device id */
};

/* Delivery state of one destination (from the shipper's status). */
struct diag_dest {
	char		name[64];
	bool		failing;
	int64_t		last_success_ms;	/* 0 = never */
	uint64_t	backlog;
	uint64_t	dropped;		/* events dropped for it so far */
};

#define DIAG_OBS_TEXT		160
#define DIAG_MAX_NICS		32
#define DIAG_NIC_ERRS		8
#define DIAG_NIC_LINKS		16
#define DIAG_MAX_STORES		64
#define DIAG_MAX_LOSSES		16
#define DIAG_LOSS_EVID		4
#define DIAG_MAX_DEVS		64
#define DIAG_DEV_SCSI		4
#define DIAG_DEV_GROWTH		4
#define DIAG_MAX_ANSWERS	16
#define DIAG_MAX_DESTS		8
#define DIAG_MAX_PENDING	8

struct diag_obs {
	int64_t	ts;			/* ms; 0 = empty slot */
	int64_t	from;			/* growth: earliest time it may have happened */
	char	what[32];		/* counter name, link direction, sense */
	char	text[DIAG_OBS_TEXT];
};

struct diag_nic {
	char		name[32];
	int64_t		seen;
	struct diag_obs	err[DIAG_NIC_ERRS];	/* error counter growth */
	struct diag_obs	link[DIAG_NIC_LINKS];	/* link changes */
	int64_t		flap_next;		/* no flap alert before this */
};

struct diag_store {		/* what a datastore is made of */
	char		datastore[DIAG_NAME_MAX];
	char		devices[DIAG_NAME_MAX];
	char		nfs_host[DIAG_NAME_MAX];
	int64_t		seen;
};

struct diag_loss {		/* one path-loss incident */
	int64_t		first, last;
	char		datastore[DIAG_NAME_MAX];
	char		device[DIAG_NAME_MAX];
	struct diag_obs	ev[DIAG_LOSS_EVID];
	bool		done;		/* alerted: later events join silently */
};

struct diag_dev {
	char		name[DIAG_NAME_MAX];
	int64_t		seen;
	struct diag_obs	scsi[DIAG_DEV_SCSI];	/* medium/hardware errors */
	struct diag_obs	growth[DIAG_DEV_GROWTH];	/* SMART count growth */
	long long	last[3];	/* pending, reallocated, uncorrectable; -1 */
	int64_t		drive_next;	/* no failing-drive alert before this */
	bool		partitions;	/* vSAN: ineligible, "Has partitions" */
	bool		part_done;
	char		part_reason[DIAG_OBS_TEXT];
};

struct diag_ans {
	enum diag_want_kind kind;
	char		key[DIAG_NAME_MAX];
	bool		asked, done, ok;
	int64_t		at;
	char		a[256];
	char		b[512];
};

struct diag_dstate {
	char		name[64];
	bool		outage, logged;
	int64_t		since;
	uint64_t	peak, dropped0;
};

/*
 * The stage's memory of one host.  The stage (diag_new()) is the agent's
 * own host's; the events about other hosts (esxwatch_input set: received,
 * polled) each get one of their own, made when a host's first event comes
 * (others[], at most DIAG_MAX_HOSTS; the one observed the longest ago is
 * forgotten first, counted in hosts_forgotten): one host's NIC errors never
 * explain another host's path loss.  What only the local host can answer
 * (diag_wants) is never asked for another host: its rules go on without.
 */
#define DIAG_MAX_HOSTS		64
struct diag {
	struct diag_conf	conf;
	void			*mtx;		/* pthread_mutex_t, kept opaque;
						 * other hosts' share the stage's */
	char			host[DIAG_HOST_MAX];	/* "": the agent's own */
	char			input[16];
	int64_t			used;		/* last observed (ms, its events') */
	struct diag		*others[DIAG_MAX_HOSTS];	/* the stage's only */
	size_t			nothers;
	uint64_t		hosts_forgotten;
	int64_t			now;		/* newest event time seen */
	struct diag_nic		nics[DIAG_MAX_NICS];
	struct diag_store	stores[DIAG_MAX_STORES];
	struct diag_loss	losses[DIAG_MAX_LOSSES];
	struct diag_dev		devs[DIAG_MAX_DEVS];
	struct diag_ans		ans[DIAG_MAX_ANSWERS];
	struct diag_dstate	dests[DIAG_MAX_DESTS];
	struct diag_alert	pending[DIAG_MAX_PENDING];	/* found while observing */
	size_t			npending;
	uint64_t		forgotten;	/* entities evicted from full tables */
};

/*
 * Are host names a and b one host?  DIAG_HOST_SAME: the same name but for
 * case (DNS names are case-insensitive, RFC 4343); DIAG_HOST_SHORT: one is
 * a short name (no dot) and the other a DNS name whose first label it is
 * ("esx01" and "ESX01.example.com"): the same host if no other name known
 * has that short name (the caller decides); DIAG_HOST_OTHER: not the same.
 * An IPv4 or IPv6 literal is never a DNS name.
 */
enum diag_host_match { DIAG_HOST_OTHER, DIAG_HOST_SHORT, DIAG_HOST_SAME };
enum diag_host_match diag_host_match(const char *a, const char *b);

/* Helpers the rules share. */
void	diag_copy(char *dst, size_t len, const char *src);
void	diag_obs_push(struct diag_obs *ring, size_t n, const struct diag_obs *);
void	diag_obs_fmt(struct diag_obs *, int64_t ts, const char *what,
	    const struct event *);
void	diag_evidence_add(struct diag_alert *, const struct diag_obs *);
struct diag_nic	*diag_nic_get(struct diag *, const char *name);
struct diag_dev	*diag_dev_get(struct diag *, const char *name);
struct diag_alert *diag_pending_new(struct diag *, const char *rule,
	    const char *severity);
void	diag_extra(struct diag_alert *, const char *name, const char *value);
const struct diag_ans *diag_ans_find(struct diag *, enum diag_want_kind,
	    const char *key);

#endif
