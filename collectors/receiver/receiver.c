/*
 * receiver: the collector of collector mode (receiver.h).
 *
 * Each collect() is a round of about a second of turns of the network
 * (receiver_net.c).  A message is parsed (syslogwire.h), its host found or
 * made (receiver_hosts.c), its "-->" continuation lines folded into the
 * record they continue, and the record handed to the logwatch engine as a
 * line of its program's log, on the stream of that (host, program): the
 * rules, storm control per host, the liagent parser and filters of the
 * filelog of that log, then the emitter — the spool — before the next
 * bytes are read.  A TCP message is read only when the spool has room: at
 * 90 % of its budget the connections are not read any more (TCP's window
 * holds the senders back) until it is under 80 %.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/config/config_host.h"
#include "../../agent/lib/bell.h"
#include "../../agent/lib/clock.h"
#include "../../agent/lib/log.h"
#include "../collector.h"
#include "receiver_hosts.h"

/* The turns of one collect() call (then the scheduler's bookkeeping). */
#define RCV_ROUND_MS	900
#define RCV_WAIT_MS	50
/* The spool's room is asked every RCV_ROOM_MS, and at most every
 * RCV_ROOM_MIN_MS when the estimate of what was queued since says it is
 * near; a record costs about RCV_EST_MUL times its text and RCV_EST_ADD
 * bytes in the spool (its fields). */
#define RCV_ROOM_MS	500
#define RCV_ROOM_MIN_MS	50
#define RCV_EST_MUL	2
#define RCV_EST_ADD	512
/* The host table is saved (kvstore) at most this often. */
#define RCV_SAVE_MS	60000

/* Kept across a reload: the listeners, connections and the hosts. */
static struct rnet *parked_net;
static struct rhosts *parked_hosts;

struct rcv {
	const struct config	*cfg;
	struct lwe		*eng;
	struct rlog		*logs[RCV_MAX_LOGS];
	size_t			 nlogs;
	struct rhosts		*hosts;
	struct rnet		*net;
	struct fold		*fold;
	struct emitter		*em;
	struct kvstore		*state;
	const struct agent_figures *figs;
	struct agent_snap	*snap;
	struct receiver_pic	*pic;
	int64_t			 now, room_at, saved_at;
	uint64_t		 budget;	/* the spool's, bytes */
	uint64_t		 q_last, est;	/* its bytes at the last look;
						 * estimated since */
	bool			 paused;
	uint64_t		 pauses;
	uint64_t		 told;	/* what the last publish() added up to */
};

/* ---- logs: a program's filelog ------------------------------------ */

/* CONTRACT §5: the log whose rules a program's lines meet. */
static const char *
log_of(const char *program)
{
	if (strcasecmp(program, "vmkernel") == 0 ||
	    strcasecmp(program, "vmkwarning") == 0)
		return "vmkernel";
	if (strcasecmp(program, "vobd") == 0)
		return "vobd";
	if (strcasecmp(program, "hostd") == 0)
		return "hostd";
	return program;
}

/*
 * The log of name: the filelog of that name when the configuration has one
 * (its parser, filters, tags, event_marker, exclude_fields: liagent's
 * [filelog] semantics for received lines), else one of that name with
 * none of those; receiver.forward: all makes every line an event.
 */
static struct rlog *
log_get(struct rcv *r, const char *name)
{
	const struct config *cfg = r->cfg;
	struct rlog *lg;
	size_t i;

	for (i = 0; i < r->nlogs; i++)
		if (strcmp(r->logs[i]->name, name) == 0)
			return r->logs[i];
	if (r->nlogs == RCV_MAX_LOGS)
		return strcmp(name, "other") == 0 ? r->logs[0] :
		    log_get(r, "other");
	lg = calloc(1, sizeof(*lg));
	if (lg == NULL)
		return NULL;
	snprintf(lg->name, sizeof(lg->name), "%s", name);
	lg->fc.name = lg->name;
	lg->fc.forward = FORWARD_MATCHES;
	for (i = 0; i < cfg->nfilelogs; i++)
		if (strcmp(cfg->filelogs[i].name, name) == 0 &&
		    cfg->filelogs[i].broken == NULL) {
			lg->fc = cfg->filelogs[i];
			lg->fc.name = lg->name;
			break;
		}
	if (cfg->receiver.forward == FORWARD_ALL)
		lg->fc.forward = FORWARD_ALL;
	lwe_log_init(r->eng, &lg->e, &lg->fc);
	r->logs[r->nlogs++] = lg;
	return lg;
}

/* ---- events about hosts ------------------------------------------- */

static struct event *
host_event(struct rhost *h, const char *kind, const char *sev, const char *text)
{
	struct event *ev = ev_new(kind, sev, "%s", text);

	if (ev == NULL)
		return NULL;
	event_set_builtin(ev, "hostname", h->name);
	event_set(ev, "esxwatch_input", "syslog");
	if (h->peer[0] != '\0')
		event_set(ev, "esxwatch_peer", h->peer);
	return ev;
}

/* A silent host sends again: a change. */
static void
host_back(void *arg, struct rhost *h, int64_t silent_ms)
{
	struct rcv *r = arg;
	char text[512];
	struct event *ev;

	snprintf(text, sizeof(text), "host %s sends its syslog again after %lld s "
	    "of silence", h->name, (long long)(silent_ms / 1000));
	ev = host_event(h, "change", "info", text);
	if (ev == NULL)
		return;
	event_set(ev, "esxwatch_state", "sending");
	event_set(ev, "esxwatch_previous_state", "silent");
	log_info("receiver: %s", text);
	lwe_emit(r->eng);	/* in the order they happened */
	emit(r->em, ev);
	rhosts_save_one(r->hosts, r->state, h);
}

/* Hosts silent for receiver.silent_after: one alert each. */
static void
silent_check(struct rcv *r)
{
	int s = r->cfg->receiver.silent_after;
	struct rhost *h;
	char text[512];

	if (s <= 0)
		return;
	for (h = rhosts_first(r->hosts); h != NULL; h = h->next_all) {
		struct event *ev;

		if (h->silent || h->last_seen_ms == 0 ||
		    r->now - h->last_seen_ms < (int64_t)s * 1000)
			continue;
		h->silent = true;
		snprintf(text, sizeof(text), "host %s has sent no syslog for %d s "
		    "(receiver.silent_after): its logging stopped or cannot "
		    "reach this collector", h->name, s);
		log_warn("receiver: %s", text);
		ev = host_event(h, "alert", "warning", text);
		if (ev == NULL)
			continue;
		event_setf(ev, "esxwatch_silent_s", "%lld",
		    (long long)((r->now - h->last_seen_ms) / 1000));
		event_set(ev, "esxwatch_state", "silent");
		lwe_emit(r->eng);
		emit(r->em, ev);
		rhosts_save_one(r->hosts, r->state, h);
	}
}

/* ---- messages ----------------------------------------------------- */

/* A whole record (a message and its continuations) of (host, program). */
static void
on_record(void *arg, const char *host, const char *program, const char *text,
    size_t len, int64_t first_ms, bool truncated)
{
	struct rcv *r = arg;
	struct rhost *h = rhosts_find(r->hosts, host);
	struct rprog *p;
	uint64_t before;

	(void)first_ms;
	if (h == NULL)	/* forgotten meanwhile (evicted): made again */
		h = rhosts_get(r->hosts, host, "", "", r->now, NULL, NULL);
	if (h == NULL)
		return;
	p = rhost_prog(h, program, log_get(r, log_of(program)));
	if (p == NULL)
		return;
	r->est += len * RCV_EST_MUL + RCV_EST_ADD;
	before = lwe_counts(r->eng)->alerts;
	lwe_line(r->eng, &p->s, text, len, truncated);
	/* a multi-line event (event_marker) of a received program waits for
	 * its next line only within this turn: a record is whole already */
	lwe_flush(r->eng, &p->s);
	h->alerts += lwe_counts(r->eng)->alerts - before;
}

static void
span_copy(char *out, size_t cap, const struct syslog_span *s)
{
	size_t n = s->len < cap - 1 ? s->len : cap - 1;

	if (n > 0)	/* an absent span may have no pointer */
		memcpy(out, s->p, n);
	out[n] = '\0';
}

/*
 * The name a message's host is known by (receiver.hostname): with
 * "header", syslog_host_name() — the inner HOSTNAME, else the name a
 * relay's header gives, else the peer's address.  fell_back: a name the
 * inner header said (localhost*) is not the one used (warned once).
 */
static const char *
host_name(struct rcv *r, const struct syslog_msg *m, const char *peer_s,
    char *name, size_t cap, bool *fell_back)
{
	const struct syslog_span *h;

	*fell_back = false;
	if (strcmp(r->cfg->receiver.hostname, "peer") == 0)
		return peer_s;
	h = syslog_host_name(m);
	*fell_back = h != &m->host && m->host.len > 0;
	if (h == NULL)
		return peer_s;
	span_copy(name, cap, h);
	return name;
}

static void
on_msg(void *arg, const struct sockaddr_storage *peer, const char *peer_s,
    enum rcv_transport t, const char *msg, size_t len, bool truncated)
{
	struct rcv *r = arg;
	struct syslog_msg m;
	char name[256], prog[64], header[256];
	const char *hn;
	struct rhost *h;
	bool fb, cont;

	(void)peer;
	if (syslog_parse(msg, len, r->now, &m) < 0) {
		/* not syslog: counted, and still a line of the peer's */
		rnet_count(r->net, RDROP_MALFORMED, 1);
		memset(&m, 0, sizeof(m));
		m.text.p = msg;
		m.text.len = len;
	}
	hn = host_name(r, &m, peer_s, name, sizeof(name), &fb);
	span_copy(header, sizeof(header), &m.host);
	h = rhosts_get(r->hosts, hn, peer_s, rcv_transport_name(t), r->now,
	    host_back, r);
	if (h == NULL)
		return;
	if (fb && !h->fallback_told) {
		h->fallback_told = true;
		log_warn("receiver: a host at %s names itself '%s': known as "
		    "%s (%s; set a host name on it: esxcli system hostname "
		    "set)", peer_s, header, hn, strcmp(hn, peer_s) == 0 ?
		    "its address" : "the name its relay gives");
	}
	span_copy(prog, sizeof(prog), &m.app);
	if (prog[0] == '\0')
		snprintf(prog, sizeof(prog), "unknown");
	cont = m.msg.len > 0 && syslog_is_continuation(m.msg.p, m.msg.len);
	if (cont)
		fold_add(r->fold, h->name, prog, m.msg.p, m.msg.len, true, r->now,
		    on_record, r);
	else
		fold_add(r->fold, h->name, prog, m.text.p, m.text.len, false,
		    r->now, on_record, r);
	/* cut at 64 KiB (counted by the listener): the record is marked as
	 * a cut file line is (esxwatch_truncated, EVENT_TRUNC_MARKER) */
	if (truncated)
		fold_cut(r->fold, h->name, prog);
}

/* ---- back-pressure ------------------------------------------------- */

/*
 * Is the spool near its budget?  Its figures are asked every RCV_ROOM_MS;
 * between two looks, what was queued since is estimated (RCV_EST_*) so
 * that a burst cannot carry the spool past its budget (where it would
 * drop its oldest events) before the next look.
 */
static bool
spool_full(struct rcv *r)
{
	uint64_t q, stop = r->budget / 4 * 3, go = r->budget / 5 * 3;

	if (r->figs == NULL || r->figs->collect == NULL || r->snap == NULL ||
	    r->budget == 0)
		return false;
	if (r->now - r->room_at < RCV_ROOM_MS &&
	    (r->paused || r->q_last + r->est < stop))
		return r->paused;
	if (r->now - r->room_at < RCV_ROOM_MIN_MS)
		return true;	/* by the estimate, until the next look */
	r->room_at = r->now;
	r->est = 0;
	if (r->figs->collect(r->figs->arg, r->snap) < 0 || !r->snap->have_spool)
		return r->paused;
	q = r->q_last = r->snap->queued_bytes;
	if (q >= stop)
		return true;
	return r->paused && q >= go;
}

/* Paused or resumed: said, and counted. */
static void
set_paused(struct rcv *r, bool paused)
{
	if (paused && !r->paused) {
		r->pauses++;
		log_warn("receiver: the spool holds about %llu bytes of its %llu: "
		    "TCP and TLS senders are not read until the destinations "
		    "catch up (back-pressure; nothing is dropped)",
		    (unsigned long long)(r->q_last + r->est),
		    (unsigned long long)r->budget);
	} else if (!paused && r->paused)
		log_info("receiver: the spool has room again: reading the "
		    "senders");
	r->paused = paused;
}

/* ---- figures ------------------------------------------------------- */

static void
publish(struct rcv *r)
{
	struct receiver_pic *p = r->pic;
	uint64_t sum;

	if (p == NULL || r->figs == NULL || r->figs->publish == NULL)
		return;
	p->on = true;
	rnet_figures(r->net, p);
	p->paused = r->paused;
	p->pauses = r->pauses;
	rhosts_figures(r->hosts, p);
	(void)r->figs->publish(r->figs->arg, RECEIVER_FIGURES, p);
	/* the status file follows what moved (the writer keeps its pace) */
	sum = p->messages + p->pauses + p->nhosts + p->nlisteners;
	for (int i = 0; i < RDROP_N; i++)
		sum += p->dropped[i];
	for (size_t i = 0; i < p->nhosts; i++)
		sum += p->hosts[i].silent ? 1 : 0;
	if (sum != r->told)
		bell_ring(r->figs->changed);
	r->told = sum;
}

/* ---- the collector ------------------------------------------------- */

static void rcv_free(struct rcv *r, bool park);

static uint64_t
spool_budget(const struct config *cfg)
{
	if (cfg->max_disk_buffer_kb > 0)
		return (uint64_t)cfg->max_disk_buffer_kb * 1024;
	return (uint64_t)(cfg->max_disk_buffer > 0 ? cfg->max_disk_buffer :
	    CONFIG_MAX_DISK_BUFFER_MB) * 1024 * 1024;
}

static int
rcv_init(struct collector_ctx *ctx)
{
	const struct config *cfg = ctx->cfg;
	struct rcv *r;

	ctx->priv = NULL;
	if (cfg->receiver.nsyslog == 0) {
		/* off; a reload that removed every listener closes them */
		rnet_close(parked_net);
		parked_net = NULL;
		rhosts_free(parked_hosts);
		parked_hosts = NULL;
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -1;
	r->cfg = cfg;
	r->state = ctx->state;
	r->budget = spool_budget(cfg);
	r->eng = lwe_new(cfg);
	r->fold = fold_new(RCV_FOLD_KEYS, RCV_FOLD_MS);
	r->hosts = parked_hosts != NULL ? parked_hosts : rhosts_new(ctx->state);
	parked_hosts = NULL;
	r->net = rnet_open(cfg, parked_net);
	parked_net = NULL;
	if (ctx->figures != NULL) {
		r->figs = ctx->figures;
		r->snap = calloc(1, sizeof(*r->snap));
		r->pic = calloc(1, sizeof(*r->pic));
	}
	if (r->eng == NULL || r->fold == NULL || r->hosts == NULL ||
	    r->net == NULL) {
		rcv_free(r, false);
		return -1;
	}
	if (r->state != NULL)
		lwe_storm_load(r->eng, r->state);
	ctx->priv = r;
	log_debug("receiver: %zu listeners, %zu rules", cfg->receiver.nsyslog,
	    lwe_rules(r->eng));
	return 0;
}

static int
rcv_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct rcv *r = ctx->priv;
	int64_t end;

	if (r == NULL)
		return 0;
	r->em = em;
	r->now = now_ms();
	/* reading never pauses for the interval: a round lasts until the next
	 * one is due (collectors.receiver.interval only paces the bookkeeping) */
	end = mono_ms() + (ctx->conf != NULL && ctx->conf->interval > 1 ?
	    (int64_t)ctx->conf->interval * 1000 - 100 : RCV_ROUND_MS);
	lwe_begin(r->eng, em, r->now);
	lwe_storm_due(r->eng, false);
	do {
		set_paused(r, spool_full(r));
		rnet_turn(r->net, RCV_WAIT_MS, r->paused, r->now, on_msg, r);
		r->now = now_ms();
		lwe_begin(r->eng, em, r->now);
		fold_due(r->fold, r->now, false, on_record, r);
		lwe_emit(r->eng);
	} while (mono_ms() < end);
	silent_check(r);
	/* storm counts not yet reported survive a crash (state file) */
	if (r->state != NULL && lwe_storm_dirty(r->eng))
		lwe_storm_save(r->eng, r->state);
	if (r->now - r->saved_at >= RCV_SAVE_MS) {
		rhosts_save(r->hosts, r->state);
		r->saved_at = r->now;
	}
	publish(r);
	return 0;
}

/* The engine's held events and storm windows: out before it goes. */
static void
rcv_drain(struct rcv *r)
{
	if (r->em == NULL)
		return;
	r->now = now_ms();
	lwe_begin(r->eng, r->em, r->now);
	fold_due(r->fold, r->now, true, on_record, r);
	lwe_storm_due(r->eng, true);
	lwe_emit(r->eng);
	if (r->state != NULL)
		lwe_storm_save(r->eng, r->state);
	rhosts_save(r->hosts, r->state);
}

static void
rcv_free(struct rcv *r, bool park)
{
	if (r == NULL)
		return;
	if (park) {
		parked_net = r->net;
		rhosts_unbind(r->hosts);	/* streams go with the engine */
		parked_hosts = r->hosts;
	} else {
		rnet_close(r->net);
		rhosts_free(r->hosts);
	}
	fold_free(r->fold);
	for (size_t i = 0; i < r->nlogs; i++) {
		lwe_log_fini(&r->logs[i]->e);
		free(r->logs[i]);
	}
	lwe_free(r->eng);
	free(r->snap);
	free(r->pic);
	free(r);
}

/*
 * Shutdown or reload: what the engine holds is emitted; the listeners,
 * connections and hosts are parked for the next init() (a reload keeps
 * them; at the end of the process they go with it).
 */
static void
rcv_fini(struct collector_ctx *ctx)
{
	struct rcv *r = ctx->priv;

	if (r == NULL)
		return;
	rcv_drain(r);
	rcv_free(r, true);
	ctx->priv = NULL;
}

const struct collector collector_receiver = {
	.name = "receiver",
	.default_interval = 1,
	.init = rcv_init,
	.collect = rcv_collect,
	.fini = rcv_fini,
	.names_collector = true,
};
