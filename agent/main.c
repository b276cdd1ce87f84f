/*
 * esxwatch: command line, signals and wiring (docs/operations.md).
 *
 *   collectors --emit--> queue --> shipper threads --> sinks
 *                          \           /
 *                           status writer --> storage.directory/status
 *                           monitor (monitor.listen) --> GET /health, /metrics
 *
 * main starts and stops everything itself, in order: the queue, the
 * shipper, the status writer (it reads the queue and the shipper, and
 * puts its picture up on the status board), the monitor (it answers from
 * the board), the collectors (the agent collector reads the same figures
 * through its ctx); and the reverse on a reload or a stop.  No module
 * finds another through a global.  The board and the monitor's socket
 * outlive a reload (a scrape meanwhile gets the last picture, it is not
 * refused); the socket is moved only when monitor.listen changes.
 *
 * The daemon never forks itself; it runs in the foreground under
 * watchdog.sh (ESXi) or systemd (Linux).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "config/config_host.h"
#include "../collectors/collector.h"
#include "../collectors/host/esxcli.h"
#include "../collectors/logwatch/rules_catalogue.h"
#include "status_receiver.h"
#include "lib/agentid.h"
#include "lib/bell.h"
#include "lib/clock.h"
#include "config/config.h"
#include "config_plugins.h"
#include "lib/exec.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/platform.h"
#include "lib/rx.h"
#include "spool/queue.h"
#include "reload.h"
#include "scheduler.h"
#include "shipper.h"
#include "diagnosis/diagnose.h"
#include "diagnosis/liexport.h"
#include "monitor.h"
#include "status.h"
#include "../output/trust.h"
#include "../collectors/host/vsphere_soap.h"
#include "vsphere_tls.h"
#include "../collectors/vspoll.h"

#define SHUTDOWN_DRAIN_MS	5000
#define ONCE_DRAIN_MS		30000

static volatile sig_atomic_t got_stop, got_reload;
static int wake_pipe[2] = { -1, -1 };	/* the handlers wake the main loop */

static void
on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGHUP)
		got_reload = 1;
	else {
		got_stop = 1;
		/* A lock-free atomic store: a tool --once (or a collector)
		 * waits on is cancelled at once. */
		exec_abort_all();
	}
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "", 1);	/* full: awake anyway */
	errno = saved;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: esxwatch [-c FILE] [--once] [--check-config] [--print-config [--show-secrets]]\n"
	    "                [--status [--json]] [--trust-reset NAME]\n"
	    "                [--export-loginsight alerts|content-pack [-o FILE]]\n"
	    "                [--analyze BUNDLE [--format text|json|html] [-o FILE]] [-v]... [-V] [-h]\n"
	    "\n"
	    "  -c, --config FILE   configuration file (agent.yaml or liagent.ini)\n"
	    "      --once          run every collector once, deliver, exit (0 = all delivered)\n"
	    "      --check-config  validate the configuration and exit (0 valid, 2 invalid)\n"
	    "      --print-config  print the effective configuration as YAML and exit\n"
	    "                      (passwords, URL credentials and tokens as <redacted>)\n"
	    "      --show-secrets  with --print-config: print the secrets as they are\n"
	    "      --status        show the running agent's delivery state and exit\n"
	    "                      (0 running, 3 not running)\n"
	    "      --json          with --status: the same facts as one JSON object\n"
	    "      --trust-reset NAME  forget the pinned certificate of destination NAME\n"
	    "                      (server for the primary) and exit\n"
	    "      --export-loginsight alerts|content-pack [-o FILE]\n"
	    "                      print Log Insight alert definitions or a content pack\n"
	    "      --analyze BUNDLE [--format text|json|html] [-o FILE]\n"
	    "                      explain a vm-support bundle (.tgz or its directory):\n"
	    "                      exit 0 no error finding, 1 at least one, 2 not a bundle\n"
	    "  -v                  more logging (repeatable; overrides logging.debug_level)\n"
	    "  -V, --version       print the version and exit\n"
	    "  -h, --help          this help\n");
}

/* Configuration errors go to stderr as FILE:LINE:COL: message. */
static void
report_stderr(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	(void)is_error;
	fprintf(stderr, "%s\n", msg);
}

/* After start-up, problems with a reloaded file go to the agent's log. */
static void
report_log(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		log_error("%s", msg);
	else
		log_warn("%s", msg);
}

static const char *
default_config_path(void)
{
	static const char *const esxi[] = {
		"/scratch/esxwatch/agent.yaml", "/opt/esxwatch/etc/agent.yaml",
		"./agent.yaml", NULL
	};
	static const char *const linux_[] = {
		"/etc/esxwatch/agent.yaml", "./agent.yaml", NULL
	};
	const char *const *p = platform_detect(NULL) == PLATFORM_ESXI ? esxi : linux_;

	for (; *p; p++)
		if (access(*p, R_OK) == 0)
			return *p;
	return NULL;
}

struct running {
	struct config		*cfg;
	struct queue		*q;
	struct shipper		*sh;
	struct scheduler	*sched;
	struct shipper_deps	 deps;		/* counters since start, agent id */
	struct status_source	 src;		/* what the status shows */
	struct status_writer	*status;
	struct status_board	*board;		/* its picture, for the monitor */
	struct monitor		*mon;		/* NULL: monitor.listen is off */
	struct agent_figures	 figures;	/* the agent collector's ctx */
	struct diag		*diag;		/* the diagnosis stage; NULL: off */
	struct emit_filter	 filter;	/* the scheduler's: the stage */
	struct logstats		*logstats;	/* logwatch's, since start */
	struct recv_board	*recv;		/* the receiver's, since start */
	struct vsphere_board	*vsboard;	/* the vsphere entries', since start */
	uint64_t		 drained_not_ingested;	/* --once: at the drain's end */
	bool			 once;		/* a command, not a daemon */
	/* cfg was handed to a shipper left behind in a hung send (its last
	 * thread frees it): not main's to free */
	bool			 cfg_orphaned;
};

static void
setup_logging(const struct config *cfg, int verbose)
{
	log_init(verbose >= 0 ? verbose : cfg->debug_level, cfg->log_file);
}

static int
start_shipper(struct running *r)
{
	sigset_t block, old;

	/* The shipping threads never take the daemon's signals. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	/* where events go if the configuration has no destination */
	r->deps.nodest = platform_nodest(config_platform(r->cfg), r->once,
	    isatty(STDOUT_FILENO) == 1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r->sh = shipper_start(r->cfg, r->q, &r->deps);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r->sh == NULL)
		return -1;
	/* the status writer reads the shipper: started after it */
	r->src.sh = r->sh;
	r->src.cfg = r->cfg;
	r->status = status_start(r->cfg, &r->src, r->board);
	return 0;
}

static enum agent_dest_state
agent_dest_state(enum status_state st)
{
	return st == DEST_FAILING ? AGENT_DEST_FAILING :
	    st == DEST_DELIVERING ? AGENT_DEST_DELIVERING : AGENT_DEST_IDLE;
}

/* The figures of the collectors' ctx (struct agent_snap): the status
 * writer's (status_collect()), with the host layer's and the stage's. */
static int
collect_figures(void *arg, struct agent_snap *out)
{
	struct running *r = arg;
	struct status_snap *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -1;
	status_collect(&r->src, s);
	memset(out, 0, sizeof(*out));
	out->have_spool = s->have_spool;
	out->memory_only = s->memory_only;
	out->queued_events = s->queued_events;
	out->queued_bytes = s->queued_bytes;
	out->sent_events = s->sent_events;
	out->failed_sends = s->failed_sends;
	out->dropped_budget = s->dropped_budget;
	out->dropped_poison = s->dropped_poison;
	out->dropped_corrupt = s->dropped_corrupt;
	out->counts_since_ms = s->counts_since_ms;
	out->not_ingested = s->not_ingested;
	out->rss_kb = s->rss_kb;
	out->cpu_ms = s->cpu_ms;
	for (size_t i = 0; i < s->ndests && i < AGENT_MAX_DESTS; i++) {
		const struct status_dest *x = &s->dests[i];
		struct agent_dest *d = &out->dests[out->ndests++];

		snprintf(d->name, sizeof(d->name), "%s", x->name);
		snprintf(d->proto, sizeof(d->proto), "%s", x->proto);
		snprintf(d->last_error, sizeof(d->last_error), "%s", x->last_error);
		d->state = agent_dest_state(x->state);
		d->backlog_events = x->backlog_events;
		d->dropped_budget = x->dropped_budget;
		d->dropped_poison = x->dropped_poison;
		d->last_success_ms = x->last_success_ms;
	}
	free(s);
	/* a counter the host layer keeps for the process */
	out->parse_gaps = esxcli_parse_gaps();
	out->diag_memory_bytes = diag_memory_bytes(r->diag);
	return 0;
}

/* A collector's figures by name (agent_figures.publish) into the table
 * main keeps for them: logwatch's filelogs, read by the status writer. */
static int
publish_figures(void *arg, const char *name, const void *pic)
{
	struct running *r = arg;

	if (strcmp(name, RECEIVER_FIGURES) == 0 && r->recv != NULL) {
		recv_board_put(r->recv, pic);
		return 0;
	}
	if (strcmp(name, VSPHERE_FIGURES) == 0 && r->vsboard != NULL) {
		vsphere_board_put(r->vsboard, pic);
		return 0;
	}
	if (strcmp(name, LOGSTATS_FIGURES) != 0 || r->logstats == NULL)
		return -1;
	logstats_publish(r->logstats, pic);
	return 0;
}

/*
 * The diagnosis stage, when collectors.diagnosis is on: made here from its
 * section (the options block is a struct diag_conf), shown every event by
 * the scheduler (its emit filter), driven by the diagnosis collector
 * through its ctx.  A new one with every scheduler, freed after it: a
 * reload starts from an empty memory with the new settings.
 */
static void
diagnosis_start(struct running *r)
{
	const struct collector_conf *cc = config_collector(r->cfg, "diagnosis");

	r->diag = NULL;
	if (cc != NULL && cc->enabled && collector_find("diagnosis") != NULL)
		r->diag = diag_new(cc->opts);	/* NULL: the collector is disabled */
	r->figures.diag = r->diag;
	r->filter.on_event = diag_on_event;
	r->filter.arg = r->diag;
}

/* The collectors with the stage before them (the scheduler's emit filter). */
static struct scheduler *
collectors_start(struct running *r)
{
	diagnosis_start(r);
	return sched_start_with(r->cfg, r->q, &r->figures, r->src.ct,
	    r->diag != NULL ? &r->filter : NULL);
}

/* After sched_stop(): nothing feeds or drives the stage any more. */
static void
diagnosis_stop(struct running *r)
{
	diag_free(r->diag);
	r->diag = r->figures.diag = NULL;
	r->filter.arg = NULL;
}

/* What an orphaned shipper hands back: the configuration it read. */
static void
release_config(void *cfg)
{
	config_free(cfg);
}

/*
 * Stop the status writer (it reads the shipper), then the shipper; the
 * monitor reads the board only, which keeps the writer's last picture.
 * Returns shipper_stop()'s answer; *kept: the shipper was left behind.
 */
static bool
stop_shipper(struct running *r, int drain_ms, bool *kept)
{
	struct shipper *left;
	bool all;

	status_stop(r->status);
	r->status = NULL;
	all = shipper_stop(r->sh, drain_ms, &left);
	r->sh = r->src.sh = NULL;
	r->src.cfg = NULL;
	*kept = left != NULL;
	if (left != NULL) {
		/* its thread frees it and r->cfg when the send ends */
		shipper_orphan(left, release_config, r->cfg);
		r->cfg_orphaned = true;
	}
	return all;
}

/* The destination names of cfg, every one of them (free the array). */
static const char **
dest_names(const struct config *cfg, size_t *n)
{
	const char **names = calloc(cfg->nservers + 1, sizeof(*names));

	*n = 0;
	if (names != NULL)
		*n = shipper_dest_names(cfg, names, cfg->nservers + 1);
	return names;
}

static int
open_queue(struct running *r)
{
	const char **names;
	size_t n;

	names = dest_names(r->cfg, &n);
	if (names == NULL)
		return -1;
	r->q = queue_open(r->cfg, names, n);
	free(names);
	return r->q ? 0 : -1;
}

/* SIGHUP: a bad new configuration is rejected and the old one stays. */
static void
reload(struct running *r, const char *path, int verbose)
{
	const char **names;
	struct config *ncfg;
	char why[PATH_MAX + 200];
	bool kept;
	size_t n;

	log_info("reloading configuration from %s", path);
	ncfg = config_load_flags(path, CONFIG_KEEP_BROKEN_FILELOGS, report_log,
	    NULL);
	if (ncfg == NULL) {
		log_error("new configuration rejected; the old one stays in force");
		return;
	}
	if (!reload_acceptable(path, r->cfg, ncfg, r->q, why, sizeof(why))) {
		log_error("reload rejected: %s; keeping the running configuration", why);
		config_free(ncfg);
		return;
	}
	sched_stop(r->sched);
	diagnosis_stop(r);
	(void)stop_shipper(r, 0, &kept);
	if (!kept)
		config_free(r->cfg);	/* else a left-behind thread frees it */
	r->cfg = ncfg;
	r->cfg_orphaned = false;
	setup_logging(r->cfg, verbose);
	names = dest_names(r->cfg, &n);
	if (names == NULL || queue_set_dests(r->q, names, n) == -1)
		fatal("reload: cannot update the destinations");
	free(names);
	if (start_shipper(r) == -1)
		fatal("cannot start the shipping threads");
	r->mon = monitor_reload(r->mon, r->cfg, r->board);
	r->sched = collectors_start(r);
	if (r->sched == NULL)
		fatal("cannot start the collectors");
	log_info("configuration reloaded");
}

/* Events the destinations' servers accepted but did not ingest, so far. */
static uint64_t
not_ingested(struct running *r)
{
	struct shipper_dest_stats st;
	uint64_t n = 0;
	size_t i;

	for (i = 0; r->sh != NULL && i < shipper_ndests(r->sh); i++)
		if (shipper_stats(r->sh, i, &st) == 0)
			n += st.not_ingested;
	return n;
}

/*
 * --once: wait until every destination's backlog is delivered, ms passed
 * or a SIGTERM/SIGINT came; then stop the shipper (5 s more at most after
 * a signal).  True if everything was delivered.
 */
static bool
once_drain(struct running *r, int ms)
{
	int64_t end = mono_ms() + ms;
	bool kept;

	shipper_drain(r->sh, ms);
	while (!got_stop && mono_ms() < end) {
		uint64_t left = 0;

		for (size_t i = 0; i < shipper_ndests(r->sh); i++)
			left += queue_backlog(r->q, i);
		if (left == 0)
			break;
		poll(NULL, 0, 50);
	}
	ms = (int)(end - mono_ms());
	if (got_stop && ms > SHUTDOWN_DRAIN_MS)
		ms = SHUTDOWN_DRAIN_MS;
	/* every send settled once the backlog is empty: its count is in */
	r->drained_not_ingested = not_ingested(r);
	monitor_stop(r->mon);
	r->mon = NULL;
	return stop_shipper(r, ms > 0 ? ms : 0, &kept);
}

struct args {
	const char	*path;
	const char	*trust_name;	/* --trust-reset NAME */
	const char	*export;	/* --export-loginsight WHAT */
	const char	*out;		/* -o FILE */
	const char	*analyze;	/* --analyze BUNDLE */
	const char	*format;	/* --format text|json|html */
	bool		 once, check, print, status, json, secrets;
	int		 verbose;
};

/* What goes together on the command line: -1 to go on, else the exit code. */
static int
args_check(int argc, char **argv, struct args *a)
{
	if (a->out != NULL && a->export == NULL && a->analyze == NULL) {
		fprintf(stderr, "esxwatch: -o goes with --export-loginsight or --analyze\n");
		return 2;
	}
	if (a->format != NULL && a->analyze == NULL) {
		fprintf(stderr, "esxwatch: --format goes with --analyze\n");
		return 2;
	}
	if (a->secrets && !a->print) {
		fprintf(stderr, "esxwatch: --show-secrets goes with --print-config\n");
		usage(stderr);
		return 2;
	}
	if (a->json && !a->status) {
		fprintf(stderr, "esxwatch: --json goes with --status\n");
		usage(stderr);
		return 2;
	}
	if (optind < argc) {
		/* `esxwatch --check-config agent.yaml` names the file too. */
		if (a->path == NULL && optind == argc - 1 && (a->check || a->print || a->status))
			a->path = argv[optind];
		else {
			fprintf(stderr, "esxwatch: unexpected argument '%s'\n", argv[optind]);
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

/* The command line into *a: -1 to go on, else the exit code. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'O' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "print-config", no_argument, NULL, 'P' },
		{ "status", no_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'J' },
		{ "show-secrets", no_argument, NULL, 'K' },
		{ "trust-reset", required_argument, NULL, 'T' },
		{ "export-loginsight", required_argument, NULL, 'E' },
		{ "analyze", required_argument, NULL, 'A' },
		{ "format", required_argument, NULL, 'F' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	memset(a, 0, sizeof(*a));
	a->verbose = -1;
	for (;;) {
		ch = getopt_long(argc, argv, "c:o:vVh", opts, NULL);
		if (ch == -1)
			break;
		switch (ch) {
		case 'c':
			a->path = optarg;
			break;
		case 'O':
			a->once = true;
			break;
		case 'E':
			a->export = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'A':
			a->analyze = optarg;
			break;
		case 'F':
			a->format = optarg;
			break;
		case 'C':
			a->check = true;
			break;
		case 'P':
			a->print = true;
			break;
		case 'S':
			a->status = true;
			break;
		case 'J':
			a->json = true;
			break;
		case 'K':
			a->secrets = true;
			break;
		case 'T':
			a->trust_name = optarg;
			break;
		case 'v':
			a->verbose = a->verbose < 0 ? 1 : a->verbose + 1;
			break;
		case 'V':
			printf("esxwatch %s\n", ESXWATCH_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return args_check(argc, argv, a);
}

/* Before anything slow: a SIGHUP or SIGTERM during start-up must not
 * kill the agent with the default action. */
static void
install_signals(void)
{
	struct sigaction sa;

	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		wake_pipe[0] = wake_pipe[1] = -1;	/* polling then */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/*
 * The storage directory is where root writes: one that another user owns
 * or can write to could hold a link planted to make root overwrite any
 * file.  Refused before anything is written there.  One that cannot be
 * created at all leaves the agent running from memory (the spool says so).
 */
static bool
storage_unsafe(const struct config *cfg)
{
	const char *dir = config_storage_dir(cfg);
	char err[PATH_MAX + 200];

	switch (fs_storage_check(dir, err, sizeof(err))) {
	case -1:
		log_warn("cannot create the storage directory %s: %s", dir,
		    log_errstr(errno));
		return false;
	case -2:
		log_error("storage.directory %s is not safe: %s; fix it (chown, "
		    "chmod 0700, remove what another user put there) or choose "
		    "another directory", dir, err);
		return true;
	case 1:
		log_warn("storage.directory %s is on a file system without "
		    "permissions (VFAT?): who may write there is not checked, "
		    "only owners and links", dir);
		break;
	}
	return false;
}

/* Everything, in order: queue, shipper (then the status writer), collectors. */
static void
start_all(struct running *r)
{
	r->src.started_ms = now_ms();
	r->deps.totals = shipper_totals_new();
	r->deps.agentid = agentid_new();
	r->src.ct = sched_totals_new();
	/* rung by the collectors and the shipper, heard by the status writer */
	r->src.changed = bell_new();
	r->deps.changed = r->figures.changed = r->src.changed;
	r->board = status_board_new();
	if (r->deps.totals == NULL || r->deps.agentid == NULL || r->src.ct == NULL ||
	    r->src.changed == NULL || r->board == NULL)
		fatal("out of memory");
	if (open_queue(r) == -1)
		fatal("cannot open the queue");
	r->src.q = r->q;
	r->figures.collect = collect_figures;
	r->figures.arg = r;
	/* logwatch writes, the status writer reads; kept across reloads */
	r->logstats = logstats_new();
	if (r->logstats == NULL)
		fatal("out of memory");
	r->src.logs = r->logstats;
	r->recv = recv_board_new();
	if (r->recv == NULL)
		fatal("out of memory");
	r->src.recv = r->recv;
	r->vsboard = vsphere_board_new();
	if (r->vsboard == NULL)
		fatal("out of memory");
	r->src.vs = r->vsboard;
	r->figures.publish = publish_figures;
	logstats_set_bell(r->logstats, r->src.changed);
	if (start_shipper(r) == -1)
		fatal("cannot start the shipping threads");
	r->mon = monitor_start(r->cfg, r->board);
	r->sched = collectors_start(r);
	if (r->sched == NULL)
		fatal("cannot start the collectors");
	log_info("esxwatch %s started on %s (%s; regexes: %s)",
	    ESXWATCH_VERSION, config_hostname(r->cfg),
	    platform_name(config_platform(r->cfg)), rx_engine());
}

/* How long --once waits for delivery; ESXWATCH_ONCE_DRAIN_MS is a test
 * hook (a shorter wait for a destination that never answers). */
static int
once_drain_ms(void)
{
	const char *e = getenv("ESXWATCH_ONCE_DRAIN_MS");

	if (e != NULL && atoi(e) > 0 && atoi(e) < ONCE_DRAIN_MS)
		return atoi(e);
	return ONCE_DRAIN_MS;
}

/* --once: true if every event was delivered. */
static bool
run_once(struct running *r)
{
	struct queue_stats before, after;
	uint64_t skipped = not_ingested(r);
	bool delivered;

	/* Exit 0 only if every event was delivered: none left queued,
	 * none rejected, none dropped over the disk budget. */
	queue_stats(r->q, &before);
	sched_run_once(r->sched, &got_stop);
	sched_stop(r->sched);
	diagnosis_stop(r);
	queue_sync(r->q);
	delivered = once_drain(r, once_drain_ms());
	if (got_stop)
		delivered = false;	/* stopped before finishing */
	queue_stats(r->q, &after);
	if (after.dropped_events > before.dropped_events)
		delivered = false;
	/* accepted by Log Insight but not ingested: not delivered */
	if (r->drained_not_ingested > skipped)
		delivered = false;
	if (!delivered)
		log_error("--once: not every event was delivered");
	return delivered;
}

/* The daemon: until SIGTERM, reloading on SIGHUP. */
static void
run_daemon(struct running *r, const char *path, int verbose)
{
	bool kept;

	for (;;) {
		sched_loop(r->sched, &got_stop, &got_reload, wake_pipe[0]);
		if (got_stop)
			break;
		got_reload = 0;
		reload(r, path ? path : "./agent.yaml", verbose);
	}
	log_info("stopping: delivering what is queued (at most %d s)",
	    SHUTDOWN_DRAIN_MS / 1000);
	sched_stop(r->sched);
	diagnosis_stop(r);
	queue_sync(r->q);
	monitor_stop(r->mon);
	r->mon = NULL;
	if (!stop_shipper(r, SHUTDOWN_DRAIN_MS, &kept))
		log_warn("undelivered events stay queued for the next start");
}

/* The reverse of start_all() (the shipper and collectors are stopped).
 * Returns exit code rc, or does not return when a thread was left behind. */
static int
stop_all(struct running *r, int rc)
{
	queue_close(r->q);
	r->src.q = NULL;
	/* its writer (logwatch) and readers (the status writer) are stopped */
	logstats_free(r->logstats);
	r->logstats = r->src.logs = NULL;
	recv_board_free(r->recv);
	r->recv = r->src.recv = NULL;
	vsphere_board_free(r->vsboard);
	r->vsboard = r->src.vs = NULL;
	r->figures.publish = NULL;
	if (!r->cfg_orphaned)
		config_free(r->cfg);
	shipper_totals_free(r->deps.totals);
	sched_totals_free(r->src.ct);
	r->src.ct = NULL;
	/* its writer and the monitor are stopped */
	status_board_free(r->board);
	r->board = NULL;
	log_close();
	if (shipper_abandoned_threads() == 0) {
		/* a thread left in a send may still ring it */
		bell_free(r->src.changed);
		r->src.changed = r->deps.changed = r->figures.changed = NULL;
	}
	if (shipper_abandoned_threads() > 0) {
		/* A thread is still inside a sink (curl, TLS): no exit-time
		 * library clean-up under its feet (it may still use the
		 * agent id too: not freed). */
		fflush(NULL);
		_exit(rc);
	}
	agentid_free(r->deps.agentid);
	return rc;
}

/* --analyze BUNDLE: the agent's own log only with -v (the report is the
 * output); nothing is started, nothing written but the report. */
static int
run_analyze(struct config *cfg, const struct args *a)
{
	int rc;

	log_init(a->verbose > 0 ? a->verbose : 0, a->verbose > 0 ? NULL : "/dev/null");
	rc = analyze_main(cfg, a->analyze, a->format, a->out);
	config_free(cfg);
	return rc;
}

int
main(int argc, char **argv)
{
	struct running r;
	struct args a;
	int rc;

	memset(&r, 0, sizeof(r));
	config_plugins_builtin();	/* before any configuration is read */
	vs_set_tls(vsphere_tls_make);	/* the vSphere client's TLS: output's */
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (a.export != NULL)	/* Log Insight content: no configuration needed */
		return liexport_main(a.export, a.out);
	platform_heap_init();
	install_signals();
	if (a.path == NULL)
		a.path = default_config_path();
	/* A running agent keeps every filelog it can (a broken one is
	 * reported and left out); --check-config and --print-config do not. */
	if (a.path != NULL)
		r.cfg = config_load_flags(a.path, a.check || a.print ? 0 :
		    CONFIG_KEEP_BROKEN_FILELOGS, report_stderr, NULL);
	else {
		if (a.check) {
			fprintf(stderr, "esxwatch: no configuration file found\n");
			return 2;
		}
		r.cfg = config_default();
	}
	if (r.cfg == NULL)
		return 2;
	if (a.analyze != NULL)
		return run_analyze(r.cfg, &a);
	if (a.trust_name != NULL) {
		char msg[1200];

		rc = trust_reset(r.cfg, a.trust_name, msg, sizeof(msg));
		fprintf(rc < 0 ? stderr : stdout, "esxwatch: %s\n", msg);
		config_free(r.cfg);
		return rc == -2 ? 2 : rc == -1 ? 1 : 0;
	}
	if (a.check || a.print || a.status) {
		rc = 0;
		if (a.check && r.cfg->file_empty) {
			/* valid as all defaults, but never what anyone meant */
			fprintf(stderr, "%s:1:1: the file is empty (no setting at all): "
			    "every default, no destination; a reload "
			    "refuses it\n", a.path);
			rc = 2;
		} else if (a.check)
			;	/* valid: loaded */
		else if (a.print) {
			config_print_with(r.cfg, stdout, a.secrets);
			rules_catalogue_print(r.cfg->rules_file, stdout);
		}
		else if (a.status)
			rc = a.json ? status_print_json(r.cfg, stdout) :
			    status_print(r.cfg, stdout);
		config_free(r.cfg);
		return rc;
	}
	setup_logging(r.cfg, a.verbose);
	if (a.path == NULL)
		log_info("no configuration file found; running with the defaults");
	else if (r.cfg->file_empty)
		log_warn("%s is empty: running with every default (no "
		    "destination); a reload will refuse an empty file", a.path);
	r.once = a.once;
	if (storage_unsafe(r.cfg)) {
		config_free(r.cfg);
		return 2;
	}
	start_all(&r);
	if (a.once)
		return stop_all(&r, run_once(&r) ? 0 : 1);
	run_daemon(&r, a.path, a.verbose);
	return stop_all(&r, 0);	/* a daemon stop is a success */
}
