/*
 * The `diagnosis` collector: drives the diagnosis stage (agent/diagnosis/diagnose.h).
 *
 * main makes the stage from this collector's section and hands it to the
 * scheduler, which shows it every event the other collectors emit; this
 * collector gets it through its ctx (ctx->figures->diag).  Every interval
 * collect() answers the questions its rules wait for
 * (collectors/host/diaghost.c: the host's tools, outside the stage's lock,
 * so a slow esxcli never holds up emit()), runs the rules, checks the
 * destinations' delivery state and emits what the rules concluded as
 * `esxwatch_kind: alert` events.  With --once it runs after the other
 * collectors (it is last in the table).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/diaghost.h"
#include "../agent/diagnosis/diagnose.h"
#include "../agent/lib/log.h"
#include "../agent/config/config_schema.h"
#include "collector.h"

#define MAX_ALERTS	16
#define MAX_WANTS	8

/* collectors.diagnosis keys of its own (docs/configuration.md): its
 * options block is the stage's struct diag_conf, which main makes the
 * stage from. */
#define O(f)	offsetof(struct diag_conf, f)
static const struct cfg_key diagnosis_keys[] = {
	{ .name = "window", .type = KT_INT, .off = O(window_s), .min = 10,
	  .max = 3600, .def = "300",
	  .doc = "Seconds around a storage path loss in which NIC error growth counts as its cause" },
	{ .name = "flap_count", .type = KT_INT, .off = O(flap_count), .min = 1,
	  .max = 15, .def = "5",
	  .doc = "Link changes of one NIC within flap_window that make one flapping alert" },
	{ .name = "flap_window", .type = KT_INT, .off = O(flap_window_s), .min = 10,
	  .max = 86400, .def = "300", .doc = "Seconds of the link-flapping window" },
	{ .name = "drive_window", .type = KT_INT, .off = O(drive_window_s),
	  .min = 60, .max = 2592000, .def = "86400",
	  .doc = "Seconds within which SCSI medium errors and SMART growth of one drive are joined" },
	{ .name = "silent_after", .type = KT_INT, .off = O(silent_after_s),
	  .min = 10, .max = 86400, .def = "300",
	  .doc = "Seconds without a delivery, while collectors run, before the host counts as silent" },
};
#undef O

/* The stage is main's: none handed in (out of memory, a test's
 * scheduler) leaves the collector disabled. */
static int
diagnosis_init(struct collector_ctx *ctx)
{
	if (ctx->figures == NULL || ctx->figures->diag == NULL)
		return -1;
	ctx->priv = ctx->figures->diag;
	return 0;
}

static void
answer(struct collector_ctx *ctx, struct diag *d)
{
	struct diag_want w[MAX_WANTS];
	char a[256], b[512];
	size_t n = diag_wants(d, w, MAX_WANTS);
	bool ok;

	for (size_t i = 0; i < n; i++) {
		if (w[i].kind == DIAG_WANT_UPLINKS)
			ok = diaghost_uplinks(ctx->cfg, ctx->conf->timeout, w[i].key,
			    a, sizeof(a), b, sizeof(b));
		else
			ok = diaghost_ptable(ctx->cfg, ctx->conf->timeout, w[i].key,
			    a, sizeof(a), b, sizeof(b));
		log_debug("diagnosis: %s %s: %s%s%s", w[i].kind == DIAG_WANT_UPLINKS ?
		    "uplinks to" : "partitions of", w[i].key, ok ? a : "", ok ? " " : "", b);
		diag_answer(d, &w[i], ok, a, b);
	}
}

static struct event *
alert_event(const struct diag_alert *a)
{
	struct event *ev = ev_new("alert", a->severity, "%s", a->text);

	if (ev == NULL)
		return NULL;
	/* another host's (collector mode): named after it */
	if ((a->host[0] != '\0' &&
	    (event_set_builtin(ev, "hostname", a->host) == -1 ||
	    event_set(ev, "esxwatch_input", a->input) == -1)) ||
	    event_set(ev, "esxwatch_diagnosis", a->rule) == -1 ||
	    event_set(ev, "esxwatch_evidence", a->evidence) == -1 ||
	    (a->nic[0] && event_set(ev, "esxwatch_nic", a->nic) == -1) ||
	    (a->device[0] && event_set(ev, "esxwatch_device", a->device) == -1) ||
	    (a->datastore[0] && event_set(ev, "esxwatch_datastore", a->datastore) == -1)) {
		event_free(ev);
		return NULL;
	}
	for (size_t i = 0; i < a->nextra; i++)
		if (event_set(ev, a->extra_name[i], a->extra_value[i]) == -1) {
			event_free(ev);
			return NULL;
		}
	return ev;
}

static size_t
delivery(struct collector_ctx *ctx, struct diag *d, struct diag_alert *out,
    size_t max)
{
	struct agent_snap *s;
	struct diag_dest dd[DIAG_MAX_DESTS];
	size_t n = 0, nd = 0;

	if (ctx->figures == NULL || ctx->figures->collect == NULL)
		return 0;	/* no delivery figures (tests): nothing to judge */
	s = calloc(1, sizeof(*s));
	if (s == NULL || ctx->figures->collect(ctx->figures->arg, s) != 0) {
		free(s);
		return 0;
	}
	for (size_t i = 0; i < s->ndests && nd < DIAG_MAX_DESTS; i++, nd++) {
		const struct agent_dest *x = &s->dests[i];

		memset(&dd[nd], 0, sizeof(dd[nd]));
		snprintf(dd[nd].name, sizeof(dd[nd].name), "%s", x->name);
		dd[nd].failing = x->state == AGENT_DEST_FAILING;
		dd[nd].last_success_ms = x->last_success_ms;
		dd[nd].backlog = x->backlog_events;
		dd[nd].dropped = x->dropped_budget + x->dropped_poison;
	}
	free(s);
	if (nd > 0)
		n = diag_delivery(d, now_ms(), dd, nd, out, max);
	return n;
}

static int
diagnosis_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct diag *d = ctx->priv;
	struct diag_alert *a = calloc(MAX_ALERTS, sizeof(*a));
	size_t n;

	if (a == NULL)
		return -1;
	answer(ctx, d);
	n = diag_evaluate(d, now_ms(), a, MAX_ALERTS);
	/* Rules that waited for an answer asked for it now: answer, go on. */
	answer(ctx, d);
	n += diag_evaluate(d, now_ms(), a + n, MAX_ALERTS - n);
	n += delivery(ctx, d, a + n, MAX_ALERTS - n);
	for (size_t i = 0; i < n; i++) {
		struct event *ev = alert_event(&a[i]);

		if (ev == NULL)
			log_limited(LOG_WARN, "diag:event", 3600,
			    "diagnosis: cannot build the %s alert", a[i].rule);
		else
			emit(em, ev);
	}
	free(a);
	return 0;
}

const struct collector collector_diagnosis = {
	.name = "diagnosis",
	.default_interval = 10,
	.init = diagnosis_init,
	.collect = diagnosis_collect,
	.keys = diagnosis_keys,
	.nkeys = sizeof(diagnosis_keys) / sizeof(diagnosis_keys[0]),
	.opts_size = sizeof(struct diag_conf),
};
