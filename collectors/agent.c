/*
 * The agent collector: esxwatch about itself (docs/events.md, collector
 * "agent").  Every interval one `status` event with the queue, delivery
 * and process figures; a `change` event when a destination goes from
 * delivering to failing (with the error) and when it delivers again.
 *
 * The figures come through ctx->figures, handed in by main (the same ones
 * the status file shows, and the host layer's and the diagnosis stage's);
 * the status file itself is main's business.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/lib/log.h"
#include "collector.h"

static int
set_u64(struct event *ev, const char *name, uint64_t v)
{
	return event_setf(ev, name, "%" PRIu64, v);
}

static struct event *
status_event(const struct agent_snap *s)
{
	uint64_t dropped = s->dropped_budget + s->dropped_poison + s->dropped_corrupt;
	size_t failing = 0;
	struct event *ev;

	for (size_t i = 0; i < s->ndests; i++)
		if (s->dests[i].state == AGENT_DEST_FAILING)
			failing++;
	ev = ev_new("status", s->memory_only || failing > 0 ? "warning" : "info",
	    "esxwatch: %" PRIu64 " events queued (%" PRIu64 " bytes%s), %" PRIu64
	    " sent, %" PRIu64 " dropped, %" PRIu64 " failed sends, %zu of %zu "
	    "destinations failing, RSS %" PRIu64 " kB, CPU %" PRIu64 " ms",
	    s->queued_events, s->queued_bytes, s->memory_only ? ", in memory only" : "",
	    s->sent_events, dropped, s->failed_sends, failing, s->ndests, s->rss_kb,
	    s->cpu_ms);
	if (ev == NULL)
		return NULL;
	if (set_u64(ev, "esxwatch_queued_events", s->queued_events) < 0 ||
	    set_u64(ev, "esxwatch_queued_bytes", s->queued_bytes) < 0 ||
	    set_u64(ev, "esxwatch_sent_events", s->sent_events) < 0 ||
	    set_u64(ev, "esxwatch_dropped_events", dropped) < 0 ||
	    set_u64(ev, "esxwatch_dropped_budget", s->dropped_budget) < 0 ||
	    set_u64(ev, "esxwatch_dropped_poison", s->dropped_poison) < 0 ||
	    set_u64(ev, "esxwatch_dropped_corrupt", s->dropped_corrupt) < 0 ||
	    set_u64(ev, "esxwatch_counts_since_ms", s->counts_since_ms > 0 ?
	    (uint64_t)s->counts_since_ms : 0) < 0 ||
	    set_u64(ev, "esxwatch_failed_sends", s->failed_sends) < 0 ||
	    set_u64(ev, "esxwatch_not_ingested", s->not_ingested) < 0 ||
	    set_u64(ev, "esxwatch_rss_kb", s->rss_kb) < 0 ||
	    set_u64(ev, "esxwatch_cpu_ms", s->cpu_ms) < 0 ||
	    set_u64(ev, "esxwatch_parse_gaps", s->parse_gaps) < 0 ||
	    event_set(ev, "esxwatch_spool", !s->have_spool ? "none" :
	    s->memory_only ? "memory" : "disk") < 0 ||
	    set_u64(ev, "esxwatch_destinations", s->ndests) < 0 ||
	    set_u64(ev, "esxwatch_destinations_failing", failing) < 0 ||
	    set_u64(ev, "esxwatch_diagnosis_memory_bytes",
	    s->diag_memory_bytes) < 0) {
		event_free(ev);
		return NULL;
	}
	return ev;
}

/*
 * A destination's delivering/failing state against the one kept in the
 * state store.  Idle (nothing sent or failed yet) is no state.
 */
static int
dest_change(struct collector_ctx *ctx, struct emitter *em, const struct agent_dest *d)
{
	char key[160];
	const char *now, *was;
	struct event *ev;

	if (d->state == AGENT_DEST_IDLE)
		return 0;
	now = d->state == AGENT_DEST_FAILING ? "failing" : "delivering";
	snprintf(key, sizeof(key), "dest.%s", d->name);
	was = kv_get(ctx->state, key);
	if (was != NULL && strcmp(was, now) != 0) {
		if (d->state == AGENT_DEST_FAILING)
			ev = ev_new("change", "error", "destination %s (%s): failing: %s",
			    d->name, d->proto[0] ? d->proto : "-",
			    d->last_error[0] ? d->last_error : "unknown error");
		else
			ev = ev_new("change", "info", "destination %s (%s): delivering again",
			    d->name, d->proto[0] ? d->proto : "-");
		if (ev != NULL && (event_set(ev, "esxwatch_destination", d->name) < 0 ||
		    event_set(ev, "esxwatch_state", now) < 0 ||
		    event_set(ev, "esxwatch_previous_state", was) < 0 ||
		    (d->last_error[0] && event_set(ev, "esxwatch_error", d->last_error) < 0) ||
		    set_u64(ev, "esxwatch_backlog_events", d->backlog_events) < 0)) {
			event_free(ev);
			ev = NULL;
		}
		if (ev != NULL)
			emit(em, ev);
	}
	if (was == NULL || strcmp(was, now) != 0)
		if (kv_set(ctx->state, key, now) < 0)
			log_limited(LOG_WARN, "agent:state", 3600, "agent: cannot keep %s", key);
	return 0;
}

static int
agent_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct agent_snap *s = malloc(sizeof(*s));
	struct event *ev;

	if (s == NULL)
		return -1;
	if (ctx->figures == NULL || ctx->figures->collect == NULL) {
		free(s);
		log_limited(LOG_WARN, "agent:figures", 3600,
		    "agent: no figures to report (not wired by the agent)");
		return -1;
	}
	memset(s, 0, sizeof(*s));
	if (ctx->figures->collect(ctx->figures->arg, s) != 0) {
		free(s);
		return -1;
	}
	for (size_t i = 0; i < s->ndests; i++)
		dest_change(ctx, em, &s->dests[i]);
	ev = status_event(s);
	free(s);
	if (ev == NULL) {
		log_limited(LOG_WARN, "agent:event", 3600, "agent: cannot build the status event");
		return -1;
	}
	return emit(em, ev);
}

const struct collector collector_agent = {
	.name = "agent",
	.default_interval = 300,
	.collect = agent_collect,
};
