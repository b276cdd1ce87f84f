/*
 * scheduler: the collecting side without the real collectors or the queue.
 * This file defines the registry (collectors_all, collector_find) and the
 * queue's collecting side (queue_push, queue_push_many, queue_sync), so
 * the linker takes
 * these instead of registry.o and the spool: the scheduler runs fake
 * collectors whose calls are counted, and every emitted event lands here.
 */
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"

#include "../../agent/lib/clock.h"
#include "../../agent/config/config.h"
#include "../../agent/event.h"
#include "../../agent/lib/kvstore.h"
#include "../../agent/spool/queue.h"
#include "../../agent/scheduler.h"
#include "../../collectors/collector.h"

/* ---- the fake queue ---------------------------------------------------- */

#define MAXEV 4096
static pthread_mutex_t	 qmu = PTHREAD_MUTEX_INITIALIZER;
static struct event	*got[MAXEV];
static int		 ngot;
static atomic_int	 push_fail;

int
queue_push(struct queue *q, const struct event *ev)
{
	(void)q;
	if (atomic_load(&push_fail) || strstr(ev->text, "refuse me") != NULL)
		return -1;
	pthread_mutex_lock(&qmu);
	if (ngot < MAXEV)
		got[ngot++] = event_dup(ev);
	pthread_mutex_unlock(&qmu);
	return 0;
}

/* As the spool: in order, stopping at the first it refuses. */
size_t
queue_push_many(struct queue *q, const struct event *const *evs, size_t n)
{
	return queue_push_each(q, evs, n);
}

int
queue_sync(struct queue *q)
{
	(void)q;
	return 0;
}

static void
got_clear(void)
{
	pthread_mutex_lock(&qmu);
	for (int i = 0; i < ngot; i++)
		event_free(got[i]);
	ngot = 0;
	pthread_mutex_unlock(&qmu);
}

/* The first queued event whose esxwatch_collector is name. */
static const struct event *
got_from(const char *name)
{
	const struct event *r = NULL;

	pthread_mutex_lock(&qmu);
	for (int i = 0; i < ngot && r == NULL; i++) {
		const char *c = event_get(got[i], "esxwatch_collector");

		if (c != NULL && strcmp(c, name) == 0)
			r = got[i];
	}
	pthread_mutex_unlock(&qmu);
	return r;
}

/* ---- fake collectors ---------------------------------------------------- */

/* Per collector: calls of init, collect, fini. */
struct counts {
	atomic_int	init, collect, fini;
};

static struct counts	 c_quick, c_again, c_broken, c_slow, c_off;
static atomic_int	 last_emit_rc;
static atomic_int	 slow_hold;	/* the slow collector blocks while set */
static atomic_int	 slow_inside;	/* ... and says it is blocked */
static atomic_int	 quick_fail;	/* the quick collector fails while set */
static atomic_int	 quick_many;	/* ... emits a run with emit_many() */
static atomic_int	 last_many_rc;

static int
quick_init(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_quick.init, 1);
	return 0;
}

/* Emits one event about another host, trying to set what the agent owns. */
static int
quick_collect(struct collector_ctx *ctx, struct emitter *em)
{
	int n = atomic_fetch_add(&c_quick.collect, 1) + 1;
	struct event *ev = event_new(0, "quick says hi");
	char runs[16];

	snprintf(runs, sizeof(runs), "%d", n);
	kv_set(ctx->state, "runs", runs);
	if (ev != NULL) {
		event_set(ev, "hostname", "esx07.example.com");
		event_set(ev, "esxwatch_collector", "someone-else");
		event_set(ev, "appname", "vobd");
	}
	atomic_store(&last_emit_rc, emit(em, ev));
	if (atomic_load(&quick_many)) {
		/* 70 events: more than one queue run; the third is refused */
		struct event *run[70];

		for (int i = 0; i < 70; i++)
			run[i] = event_newf(0, "many %d%s", i, i == 2 ? " refuse me" : "");
		atomic_store(&last_many_rc, (int)emit_many(em, run, 70));
	}
	return atomic_load(&quick_fail) ? -1 : 0;
}

static void
quick_fini(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_quick.fini, 1);
}

static int
again_init(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_again.init, 1);
	return 0;
}

/* "More work" three times, then done: four calls per interval. */
static int
again_collect(struct collector_ctx *ctx, struct emitter *em)
{
	int n = atomic_fetch_add(&c_again.collect, 1) + 1;

	(void)ctx;
	emit(em, ev_new("alert", "warning", "again %d", n));
	return n % 4 == 0 ? 0 : 1;
}

static void
again_fini(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_again.fini, 1);
}

static int
broken_init(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_broken.init, 1);
	return -1;
}

static int
broken_collect(struct collector_ctx *ctx, struct emitter *em)
{
	(void)ctx;
	(void)em;
	atomic_fetch_add(&c_broken.collect, 1);
	return 0;
}

static void
broken_fini(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_broken.fini, 1);
}

static int
slow_init(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_slow.init, 1);
	return 0;
}

/* A hung host tool: blocks while slow_hold is set. */
static int
slow_collect(struct collector_ctx *ctx, struct emitter *em)
{
	(void)ctx;
	(void)em;
	atomic_fetch_add(&c_slow.collect, 1);
	while (atomic_load(&slow_hold)) {
		atomic_store(&slow_inside, 1);
		usleep(10000);
	}
	atomic_store(&slow_inside, 0);
	return 0;
}

static void
slow_fini(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_slow.fini, 1);
}

static int
off_init(struct collector_ctx *ctx)
{
	(void)ctx;
	atomic_fetch_add(&c_off.init, 1);
	return 0;
}

static int
off_collect(struct collector_ctx *ctx, struct emitter *em)
{
	(void)ctx;
	(void)em;
	atomic_fetch_add(&c_off.collect, 1);
	return 0;
}

/* Named as built-in collectors, so the configuration accepts them. */
static const struct collector f_quick = { .name = "nic", .default_interval = 60,
	.init = quick_init, .collect = quick_collect, .fini = quick_fini };
static const struct collector f_again = { .name = "datastore", .default_interval = 60,
	.init = again_init, .collect = again_collect, .fini = again_fini };
static const struct collector f_broken = { .name = "vsan", .default_interval = 60,
	.init = broken_init, .collect = broken_collect, .fini = broken_fini };
static const struct collector f_slow = { .name = "smart", .default_interval = 60,
	.init = slow_init, .collect = slow_collect, .fini = slow_fini };
static const struct collector f_off = { .name = "agent", .default_interval = 60,
	.init = off_init, .collect = off_collect, .fini = NULL };

/* This test's own registry (collectors/registry.c explains why it may). */
const struct collector *const collectors_all[] = {
	&f_quick, &f_again, &f_broken, &f_slow, &f_off, NULL
};

size_t
collector_count(void)
{
	return sizeof(collectors_all) / sizeof(collectors_all[0]) - 1;
}

const struct collector *
collector_at(size_t i)
{
	return i < collector_count() ? collectors_all[i] : NULL;
}

const struct collector *
collector_find(const char *name)
{
	for (size_t i = 0; collectors_all[i] != NULL; i++)
		if (strcmp(collectors_all[i]->name, name) == 0)
			return collectors_all[i];
	return NULL;
}

int
collector_register(const struct collector *col)
{
	(void)col;
	return -1;
}

/* ---- setup ------------------------------------------------------------- */

static char	 tmpdir[] = "/tmp/esxwatch-test-sched-XXXXXX";

static void
counts_reset(void)
{
	struct counts *all[] = { &c_quick, &c_again, &c_broken, &c_slow, &c_off };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		atomic_store(&all[i]->init, 0);
		atomic_store(&all[i]->collect, 0);
		atomic_store(&all[i]->fini, 0);
	}
	got_clear();
}

static struct config *
load(void)
{
	char path[256];
	struct config *cfg;
	FILE *f;

	snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fprintf(f,
	    "storage:\n  directory: %s/storage\n"
	    "host:\n  hostname: testhost\n  platform: linux\n"
	    "tags:\n  site: lab\n"
	    "collectors:\n"
	    "  nic:       { enabled: yes, interval: 1 }\n"
	    "  datastore: { enabled: yes, interval: 1 }\n"
	    "  vsan:      { enabled: yes, interval: 1 }\n"
	    "  smart:     { enabled: yes, interval: 1 }\n"
	    "  agent:     { enabled: no, interval: 1 }\n"
	    "filelog: {}\n", tmpdir);
	fclose(f);
	cfg = config_load(path, NULL, NULL);
	if (cfg == NULL)
		T_FAILF("config %s does not load", path);
	return cfg;
}

static int	 fake_queue;	/* only its address is used */

/* ---- tests ------------------------------------------------------------- */

/* --once: each enabled, built-in collector that initialised runs once to
 * completion ("again" is honoured); a failed init disables it, a disabled
 * or unknown one is never touched; sched_stop() fini()s the initialised
 * ones only. */
TEST(run_once_and_stop)
{
	volatile sig_atomic_t stop = 0;
	struct config *cfg = load();
	struct scheduler *s;

	counts_reset();
	if (cfg == NULL)
		return;
	s = sched_start(cfg, (struct queue *)&fake_queue);
	CHECK(s != NULL);
	if (s == NULL) {
		config_free(cfg);
		return;
	}
	CHECK_INT(atomic_load(&c_broken.init), 1);
	CHECK_INT(atomic_load(&c_off.init), 0);
	sched_run_once(s, &stop);
	CHECK_INT(atomic_load(&c_quick.collect), 1);
	CHECK_INT(atomic_load(&c_again.collect), 4);
	CHECK_INT(atomic_load(&c_slow.collect), 1);
	CHECK_INT(atomic_load(&c_broken.collect), 0);
	CHECK_INT(atomic_load(&c_off.collect), 0);
	CHECK_INT(ngot, 5);	/* 1 from nic, 4 from datastore */
	sched_stop(s);
	CHECK_INT(atomic_load(&c_quick.fini), 1);
	CHECK_INT(atomic_load(&c_again.fini), 1);
	CHECK_INT(atomic_load(&c_slow.fini), 1);
	CHECK_INT(atomic_load(&c_broken.fini), 0);
	config_free(cfg);
}

/* The fields docs/events.md puts on every event: the agent's own win over
 * the collector's (esxwatch_collector, esxwatch_version); hostname is the
 * host the event is about, the collector's when it names one (a received
 * or polled host; the "many" events below name none and get the agent's);
 * the collector's win over the defaults (appname, kind, severity); tags
 * are added. */
TEST(emit_enriches_events)
{
	volatile sig_atomic_t stop = 0;
	struct config *cfg = load();
	struct scheduler *s;
	const struct event *ev;

	counts_reset();
	if (cfg == NULL)
		return;
	s = sched_start(cfg, (struct queue *)&fake_queue);
	sched_run_once(s, &stop);
	ev = got_from("nic");
	CHECK(ev != NULL);
	if (ev != NULL) {
		CHECK_STR(ev->text, "quick says hi");
		CHECK_STR(event_get(ev, "hostname"), "esx07.example.com");
		CHECK_STR(event_get(ev, "appname"), "vobd");
		CHECK_STR(event_get(ev, "esxwatch_kind"), "sample");
		CHECK_STR(event_get(ev, "esxwatch_severity"), "info");
		CHECK_STR(event_get(ev, "esxwatch_version"), ESXWATCH_VERSION);
		CHECK_STR(event_get(ev, "site"), "lab");
	}
	CHECK(got_from("someone-else") == NULL);
	ev = got_from("datastore");
	CHECK(ev != NULL);
	if (ev != NULL) {
		CHECK_STR(event_get(ev, "appname"), "esxwatch");
		CHECK_STR(event_get(ev, "esxwatch_kind"), "alert");
		CHECK_STR(event_get(ev, "esxwatch_severity"), "warning");
	}
	CHECK_INT(atomic_load(&last_emit_rc), 0);
	sched_stop(s);
	config_free(cfg);
}

/* What a collector records in its state is saved after collect(), in
 * storage.directory/state/NAME.kv, mode 0600. */
TEST(state_saved_after_collect)
{
	volatile sig_atomic_t stop = 0;
	struct config *cfg = load();
	struct scheduler *s;
	char path[512], text[256];
	struct stat st;
	ssize_t n;
	int fd;

	counts_reset();
	if (cfg == NULL)
		return;
	snprintf(path, sizeof(path), "%s/storage/state/nic.kv", tmpdir);
	unlink(path);
	s = sched_start(cfg, (struct queue *)&fake_queue);
	sched_run_once(s, &stop);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		text[n > 0 ? n : 0] = '\0';
		CHECK(strstr(text, "runs\t1\n") != NULL);
		CHECK_INT(stat(path, &st), 0);
		CHECK_INT(st.st_mode & 0777, 0600);
	}
	sched_stop(s);
	config_free(cfg);
}

/* A queue that refuses: emit() says so (the event is freed: ASan). */
TEST(emit_reports_a_refused_push)
{
	volatile sig_atomic_t stop = 0;
	struct config *cfg = load();
	struct scheduler *s;

	counts_reset();
	if (cfg == NULL)
		return;
	s = sched_start(cfg, (struct queue *)&fake_queue);
	atomic_store(&push_fail, 1);
	sched_run_once(s, &stop);
	atomic_store(&push_fail, 0);
	CHECK_INT(atomic_load(&last_emit_rc), -1);
	CHECK_INT(ngot, 0);
	sched_stop(s);
	config_free(cfg);
}

/* emit_many(): every event enriched as emit() does it, queued in order;
 * one the queue refuses is counted and the rest still go. */
TEST(emit_many_queues_in_order_and_counts_a_refusal)
{
	volatile sig_atomic_t stop = 0;
	struct config *cfg = load();
	struct scheduler *s;
	int k = 0;

	counts_reset();
	if (cfg == NULL)
		return;
	s = sched_start(cfg, (struct queue *)&fake_queue);
	atomic_store(&quick_many, 1);
	sched_run_once(s, &stop);
	atomic_store(&quick_many, 0);
	CHECK_INT(atomic_load(&last_many_rc), 1);
	pthread_mutex_lock(&qmu);
	for (int i = 0; i < ngot; i++) {
		char want[32];

		if (strncmp(got[i]->text, "many ", 5) != 0)
			continue;
		if (k == 2)
			k++;	/* the refused one */
		snprintf(want, sizeof(want), "many %d", k++);
		CHECK_STR(got[i]->text, want);
		CHECK_STR(event_get(got[i], "hostname"), "testhost");
		CHECK_STR(event_get(got[i], "esxwatch_collector"), "nic");
		CHECK_STR(event_get(got[i], "site"), "lab");
	}
	pthread_mutex_unlock(&qmu);
	CHECK_INT(k, 70);
	sched_stop(s);
	config_free(cfg);
}

struct loop_arg {
	struct scheduler	*s;
	volatile sig_atomic_t	 stop, reload;
	atomic_int		 done;
};

static void *
loop_thread(void *arg)
{
	struct loop_arg *a = arg;

	sched_loop(a->s, &a->stop, &a->reload, -1);
	atomic_store(&a->done, 1);
	return NULL;
}

static bool
wait_until(atomic_int *v, int at_least, int64_t ms)
{
	int64_t end = mono_ms() + ms;

	while (atomic_load(v) < at_least && mono_ms() < end)
		usleep(10000);
	return atomic_load(v) >= at_least;
}

/*
 * The daemon's loop: every collector on its own thread at its interval.
 * A collector stuck in a hung tool delays only itself: nic keeps its 1 s
 * interval (3 runs take at least 2 s: no burst) while smart is blocked.  A
 * reload returns from the loop with the collectors still initialised; the
 * next loop resumes them; stop ends it.
 */
TEST(loop_intervals_and_a_hung_collector)
{
	struct config *cfg = load();
	struct loop_arg a;
	pthread_t th;
	int64_t t0;
	int before;

	counts_reset();
	if (cfg == NULL)
		return;
	memset(&a, 0, sizeof(a));
	a.s = sched_start(cfg, (struct queue *)&fake_queue);
	atomic_store(&slow_hold, 1);
	t0 = mono_ms();
	CHECK_INT(pthread_create(&th, NULL, loop_thread, &a), 0);
	CHECK(wait_until(&slow_inside, 1, 20000));
	CHECK(wait_until(&c_quick.collect, 3, 20000));
	CHECK(mono_ms() - t0 >= 1900);
	CHECK(atomic_load(&slow_inside) == 1);
	CHECK_INT(atomic_load(&c_slow.collect), 1);
	/* datastore's "again" runs come in fours */
	CHECK(atomic_load(&c_again.collect) >= 4);
	atomic_store(&slow_hold, 0);
	a.reload = 1;
	pthread_join(th, NULL);
	CHECK_INT(atomic_load(&a.done), 1);
	CHECK_INT(atomic_load(&c_quick.init), 1);
	CHECK_INT(atomic_load(&c_quick.fini), 0);
	/* after the reload: the same collectors run again */
	before = atomic_load(&c_quick.collect);
	a.reload = 0;
	a.done = 0;
	CHECK_INT(pthread_create(&th, NULL, loop_thread, &a), 0);
	CHECK(wait_until(&c_quick.collect, before + 1, 20000));
	a.stop = 1;
	pthread_join(th, NULL);
	CHECK_INT(atomic_load(&a.done), 1);
	CHECK_INT(atomic_load(&c_quick.init), 1);
	CHECK_INT(atomic_load(&c_broken.collect), 0);
	CHECK_INT(atomic_load(&c_off.collect), 0);
	sched_stop(a.s);
	CHECK_INT(atomic_load(&c_quick.fini), 1);
	config_free(cfg);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The totals count rounds, not calls (datastore's four calls are one run),
 * and failed calls; a second scheduler on the same totals (a reload)
 * continues them; a collector that did not initialise has no row. */
TEST(totals_count_runs_and_errors_across_schedulers)
{
	volatile sig_atomic_t stop = 0;
	struct sched_collector_stats st[SCHED_MAX_COLLECTORS];
	struct sched_totals *t = sched_totals_new();
	struct config *cfg = load();
	struct scheduler *s;
	size_t n;

	counts_reset();
	if (cfg == NULL || t == NULL)
		return;
	s = sched_start_with(cfg, (struct queue *)&fake_queue, NULL, t, NULL);
	sched_run_once(s, &stop);
	sched_stop(s);
	n = sched_totals_get(t, st, SCHED_MAX_COLLECTORS);
	CHECK_INT(n, 3);
	CHECK_STR(st[0].name, "nic");
	CHECK_INT(st[0].runs, 1);
	CHECK_INT(st[0].errors, 0);
	CHECK(st[0].last_run_ms > 0);
	CHECK_STR(st[1].name, "datastore");
	CHECK_INT(st[1].runs, 1);
	CHECK_STR(st[2].name, "smart");
	atomic_store(&quick_fail, 1);
	s = sched_start_with(cfg, (struct queue *)&fake_queue, NULL, t, NULL);
	sched_run_once(s, &stop);
	sched_stop(s);
	atomic_store(&quick_fail, 0);
	n = sched_totals_get(t, st, 1);
	CHECK_INT(n, 1);
	CHECK_INT(st[0].runs, 2);
	CHECK_INT(st[0].errors, 1);
	sched_totals_free(t);
	config_free(cfg);
}

/* The emit filter (the diagnosis stage's place): it sees every event
 * emitted, one by one or in a run, already enriched and before the queue
 * has it; events a refused enrichment or a refused push lose are seen as
 * far as they got. */
struct seen {
	atomic_int	n, enriched, queued_before;
};

static void
seen_event(void *arg, const struct event *ev)
{
	struct seen *x = arg;
	const char *c = event_get(ev, "esxwatch_collector");

	atomic_fetch_add(&x->n, 1);
	if (c != NULL && event_get(ev, "hostname") != NULL &&
	    event_get(ev, "site") != NULL)
		atomic_fetch_add(&x->enriched, 1);
	pthread_mutex_lock(&qmu);
	for (int i = 0; i < ngot; i++)
		if (got[i]->text != NULL && ev->text != NULL &&
		    strcmp(got[i]->text, ev->text) == 0)
			atomic_fetch_add(&x->queued_before, 1);
	pthread_mutex_unlock(&qmu);
}

TEST(emit_filter_sees_every_event_before_the_queue)
{
	volatile sig_atomic_t stop = 0;
	struct config *cfg = load();
	struct seen x;
	struct emit_filter f = { .on_event = seen_event, .arg = &x };
	struct scheduler *s;
	int queued;

	counts_reset();
	if (cfg == NULL)
		return;
	atomic_store(&x.n, 0);
	atomic_store(&x.enriched, 0);
	atomic_store(&x.queued_before, 0);
	atomic_store(&quick_many, 1);
	s = sched_start_with(cfg, (struct queue *)&fake_queue, NULL, NULL, &f);
	sched_run_once(s, &stop);
	sched_stop(s);
	atomic_store(&quick_many, 0);
	pthread_mutex_lock(&qmu);
	queued = ngot;
	pthread_mutex_unlock(&qmu);
	CHECK(queued > 70);
	CHECK(atomic_load(&x.n) >= queued);
	CHECK_INT(atomic_load(&x.enriched), atomic_load(&x.n));
	CHECK_INT(atomic_load(&x.queued_before), 0);
	config_free(cfg);
}

int
main(void)
{
	int rc;

	T_PROG("test_scheduler");
	config_plugins_builtin();
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(run_once_and_stop);
	RUN(emit_enriches_events);
	RUN(state_saved_after_collect);
	RUN(emit_reports_a_refused_push);
	RUN(emit_many_queues_in_order_and_counts_a_refusal);
	RUN(loop_intervals_and_a_hung_collector);
	RUN(totals_count_runs_and_errors_across_schedulers);
	RUN(emit_filter_sees_every_event_before_the_queue);
	got_clear();
	rc = t_done();
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
