/*
 * The agent and diagnosis collectors driven as any host of collectors
 * would: a test's own emitter (its operations, collector.h) and the
 * figures main would hand in (ctx->figures), no scheduler, no status
 * module, no global.
 */
#include <stdlib.h>
#include <string.h>

#include "t.h"

#include "../../agent/diagnosis/diagnose.h"
#include "../../collectors/collector.h"

/* ---- the test's emitter ------------------------------------------------- */

#define MAXEV	16
struct got {
	struct event	*ev[MAXEV];
	size_t		 n;
	int		 syncs;
};

static int
t_emit(struct emitter *em, struct event *ev)
{
	struct got *g = em->arg;

	if (ev == NULL)
		return -1;
	if (g->n == MAXEV) {
		event_free(ev);
		return -1;
	}
	g->ev[g->n++] = ev;
	return 0;
}

static size_t
t_emit_many(struct emitter *em, struct event **evs, size_t n)
{
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		if (t_emit(em, evs[i]) != 0)
			failed++;
	return failed;
}

static int
t_sync(struct emitter *em)
{
	((struct got *)em->arg)->syncs++;
	return 0;
}

static const struct emitter_ops t_ops = {
	.emit = t_emit, .emit_many = t_emit_many, .sync = t_sync,
};

static void
got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		event_free(g->ev[i]);
	g->n = 0;
}

/* ---- the figures main would hand in ------------------------------------ */

static int	 dest_failing;

static int
t_collect(void *arg, struct agent_snap *out)
{
	(void)arg;
	memset(out, 0, sizeof(*out));
	out->have_spool = true;
	out->queued_events = 7;
	out->sent_events = 40;
	out->parse_gaps = 3;
	out->diag_memory_bytes = 12345;
	out->ndests = 1;
	snprintf(out->dests[0].name, sizeof(out->dests[0].name), "server");
	snprintf(out->dests[0].proto, sizeof(out->dests[0].proto), "cfapi");
	out->dests[0].state = dest_failing ? AGENT_DEST_FAILING : AGENT_DEST_DELIVERING;
	if (dest_failing)
		snprintf(out->dests[0].last_error, sizeof(out->dests[0].last_error),
		    "connection refused");
	return 0;
}

static const struct event *
find_kind(const struct got *g, const char *kind)
{
	for (size_t i = 0; i < g->n; i++) {
		const char *k = event_get(g->ev[i], "esxwatch_kind");

		if (k != NULL && strcmp(k, kind) == 0)
			return g->ev[i];
	}
	return NULL;
}

/* The status event says what the figures say, the parse gaps and the
 * stage's memory among them; a destination turning failing is a change. */
TEST(agent_collector_reports_the_figures_it_is_handed)
{
	const struct collector *c = collector_find("agent");
	struct agent_figures fig = { .collect = t_collect };
	struct collector_ctx ctx = { .name = "agent", .figures = &fig };
	struct got g = { .n = 0 };
	struct emitter em = { .ops = &t_ops, .arg = &g };
	const struct event *ev;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	ctx.state = kv_open(NULL);
	dest_failing = 0;
	CHECK_INT(c->collect(&ctx, &em), 0);
	ev = find_kind(&g, "status");
	CHECK(ev != NULL);
	if (ev != NULL) {
		CHECK_STR(event_get(ev, "esxwatch_parse_gaps"), "3");
		CHECK_STR(event_get(ev, "esxwatch_diagnosis_memory_bytes"), "12345");
		CHECK_STR(event_get(ev, "esxwatch_queued_events"), "7");
		CHECK_STR(event_get(ev, "esxwatch_destinations_failing"), "0");
	}
	got_free(&g);
	dest_failing = 1;
	CHECK_INT(c->collect(&ctx, &em), 0);
	ev = find_kind(&g, "change");
	CHECK(ev != NULL);
	if (ev != NULL) {
		CHECK_STR(event_get(ev, "esxwatch_state"), "failing");
		CHECK_STR(event_get(ev, "esxwatch_error"), "connection refused");
	}
	got_free(&g);
	kv_close(ctx.state);
}

/* The diagnosis collector drives the stage it is handed and has none of
 * its own: without one it does not start. */
TEST(diagnosis_collector_drives_the_stage_it_is_handed)
{
	const struct collector *c = collector_find("diagnosis");
	struct agent_figures fig = { .collect = NULL };
	struct collector_ctx ctx = { .name = "diagnosis", .figures = &fig };
	struct got g = { .n = 0 };
	struct emitter em = { .ops = &t_ops, .arg = &g };

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(c->init(&ctx), -1);
	fig.diag = diag_new(NULL);
	CHECK(fig.diag != NULL);
	CHECK_INT(c->init(&ctx), 0);
	CHECK(ctx.priv == fig.diag);
	CHECK_INT(c->collect(&ctx, &em), 0);
	CHECK_INT(g.n, 0);	/* nothing observed, nothing concluded */
	if (c->fini != NULL)
		c->fini(&ctx);
	diag_free(fig.diag);	/* the stage is its maker's */
	got_free(&g);
}

int
main(void)
{
	T_PROG("test_agentcol");
	RUN(agent_collector_reports_the_figures_it_is_handed);
	RUN(diagnosis_collector_drives_the_stage_it_is_handed);
	return t_done();
}
