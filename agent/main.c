/*
 * esxwatch: command line, signals and wiring (docs/operations.md).
 *
 *   collectors --emit--> queue --> shipper threads --> sinks
 *
 * The daemon never forks itself; it runs in the foreground under
 * watchdog.sh (ESXi) or systemd (Linux).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "exec.h"
#include "log.h"
#include "platform.h"
#include "queue.h"
#include "scheduler.h"
#include "shipper.h"
#include "liexport.h"
#include "status.h"

#define SHUTDOWN_DRAIN_MS	5000
#define ONCE_DRAIN_MS		30000

static volatile sig_atomic_t got_stop, got_reload;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		got_reload = 1;
	else {
		got_stop = 1;
		/* A lock-free atomic store: a tool --once (or a collector)
		 * waits on is cancelled at once. */
		exec_abort_all();
	}
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: esxwatch [-c FILE] [--once] [--check-config] [--print-config] [--status]\n"
	    "                [-v]... [-V] [-h]\n"
	    "\n"
	    "  -c, --config FILE   configuration file (agent.yaml or liagent.ini)\n"
	    "      --once          run every collector once, deliver, exit (0 = all delivered)\n"
	    "      --check-config  validate the configuration and exit (0 valid, 2 invalid)\n"
	    "      --print-config  print the effective configuration as YAML and exit\n"
	    "      --status        show the running agent's delivery state and exit\n"
	    "                      (0 running, 3 not running)\n"
	    "      --export-loginsight alerts|content-pack [-o FILE]\n"
	    "                      print Log Insight alert definitions or a content pack\n"
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
	const char *const *p = platform_get(NULL) == PLATFORM_ESXI ? esxi : linux_;

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
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r->sh = shipper_start(r->cfg, r->q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r->sh ? 0 : -1;
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

	if ((names = dest_names(r->cfg, &n)) == NULL)
		return -1;
	r->q = queue_open(r->cfg, names, n);
	free(names);
	return r->q ? 0 : -1;
}

/*
 * A configuration a shipping thread left behind in a hung send still
 * reads: kept until the process ends (reachable from here).
 */
static struct config	**kept_cfgs;
static size_t		  nkept_cfgs;

static void
retire_config(struct config *cfg, unsigned abandoned_before)
{
	struct config **n;

	if (shipper_abandoned() == abandoned_before) {
		config_free(cfg);
		return;
	}
	n = realloc(kept_cfgs, (nkept_cfgs + 1) * sizeof(*n));
	if (n == NULL)
		return;		/* leaked: still never freed under the thread */
	kept_cfgs = n;
	kept_cfgs[nkept_cfgs++] = cfg;
}

/* SIGHUP: a bad new configuration is rejected and the old one stays. */
static void
reload(struct running *r, const char *path, int verbose)
{
	const char **names;
	struct config *ncfg;
	unsigned abandoned;
	size_t n;

	log_info("reloading configuration from %s", path);
	ncfg = config_load(path, report_log, NULL);
	if (ncfg == NULL) {
		log_error("new configuration rejected; the old one stays in force");
		return;
	}
	sched_stop(r->sched);
	abandoned = shipper_abandoned();
	shipper_stop(r->sh, 0);
	retire_config(r->cfg, abandoned);
	r->cfg = ncfg;
	setup_logging(r->cfg, verbose);
	names = dest_names(r->cfg, &n);
	if (names == NULL || queue_set_dests(r->q, names, n) == -1)
		fatal("reload: cannot update the destinations");
	free(names);
	if (start_shipper(r) == -1)
		fatal("cannot start the shipping threads");
	r->sched = sched_start(r->cfg, r->q);
	if (r->sched == NULL)
		fatal("cannot start the collectors");
	log_info("configuration reloaded");
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
	return shipper_stop(r->sh, ms > 0 ? ms : 0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'O' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "print-config", no_argument, NULL, 'P' },
		{ "status", no_argument, NULL, 'S' },
		{ "export-loginsight", required_argument, NULL, 'E' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct running r = { NULL, NULL, NULL, NULL };
	const char *path = NULL, *export = NULL, *out = NULL;
	bool once = false, check = false, print = false, status = false, delivered;
	int verbose = -1, ch;
	struct sigaction sa;

	while ((ch = getopt_long(argc, argv, "c:o:vVh", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'O':
			once = true;
			break;
		case 'E':
			export = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'C':
			check = true;
			break;
		case 'P':
			print = true;
			break;
		case 'S':
			status = true;
			break;
		case 'v':
			verbose = verbose < 0 ? 1 : verbose + 1;
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
	if (export != NULL)	/* Log Insight content: no configuration needed */
		return liexport_main(export, out);
	if (out != NULL) {
		fprintf(stderr, "esxwatch: -o goes with --export-loginsight\n");
		return 2;
	}
	if (optind < argc) {
		/* `esxwatch --check-config agent.yaml` names the file too. */
		if (path == NULL && optind == argc - 1 && (check || print || status))
			path = argv[optind];
		else {
			fprintf(stderr, "esxwatch: unexpected argument '%s'\n", argv[optind]);
			usage(stderr);
			return 2;
		}
	}
	/* Before anything slow: a SIGHUP or SIGTERM during start-up must not
	 * kill the agent with the default action. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	if (path == NULL)
		path = default_config_path();
	if (path != NULL)
		r.cfg = config_load(path, report_stderr, NULL);
	else {
		if (check) {
			fprintf(stderr, "esxwatch: no configuration file found\n");
			return 2;
		}
		r.cfg = config_default();
	}
	if (r.cfg == NULL)
		return 2;
	if (check) {
		config_free(r.cfg);
		return 0;
	}
	if (print) {
		config_print(r.cfg, stdout);
		config_free(r.cfg);
		return 0;
	}
	if (status) {
		int rc = status_print(r.cfg, stdout);

		config_free(r.cfg);
		return rc;
	}
	setup_logging(r.cfg, verbose);
	if (path == NULL)
		log_info("no configuration file found; running with the defaults");
	if (r.cfg->server.ssl_accept_any)
		log_warn("server: ssl_accept_any is on: the server's certificate is not checked");

	if (mkdir_p(platform_storage_dir(r.cfg), 0700) == -1)
		log_warn("cannot create the storage directory %s: %s",
		    platform_storage_dir(r.cfg), strerror(errno));
	if (open_queue(&r) == -1)
		fatal("cannot open the queue");
	if (start_shipper(&r) == -1)
		fatal("cannot start the shipping threads");
	r.sched = sched_start(r.cfg, r.q);
	if (r.sched == NULL)
		fatal("cannot start the collectors");
	log_info("esxwatch %s started on %s (%s)", ESXWATCH_VERSION,
	    platform_hostname(r.cfg), platform_name(platform_get(r.cfg)));

	if (once) {
		struct queue_stats before, after;

		/* Exit 0 only if every event was delivered: none left queued,
		 * none rejected, none dropped over the disk budget. */
		queue_stats(r.q, &before);
		sched_run_once(r.sched, &got_stop);
		sched_stop(r.sched);
		queue_sync(r.q);
		delivered = once_drain(&r, ONCE_DRAIN_MS);
		if (got_stop)
			delivered = false;	/* stopped before finishing */
		queue_stats(r.q, &after);
		if (after.dropped_events > before.dropped_events)
			delivered = false;
		if (!delivered)
			log_error("--once: not every event was delivered");
	} else {
		for (;;) {
			sched_loop(r.sched, &got_stop, &got_reload);
			if (got_stop)
				break;
			got_reload = 0;
			reload(&r, path ? path : "./agent.yaml", verbose);
		}
		log_info("stopping: delivering what is queued (at most %d s)",
		    SHUTDOWN_DRAIN_MS / 1000);
		sched_stop(r.sched);
		queue_sync(r.q);
		delivered = shipper_stop(r.sh, SHUTDOWN_DRAIN_MS);
		if (!delivered)
			log_warn("undelivered events stay queued for the next start");
		delivered = true;	/* a daemon stop is a success */
	}
	queue_close(r.q);
	retire_config(r.cfg, 0);
	log_close();
	if (shipper_abandoned() > 0) {
		/* A thread is still inside a sink (curl, TLS): no exit-time
		 * library clean-up under its feet. */
		fflush(NULL);
		_exit(delivered ? 0 : 1);
	}
	return delivered ? 0 : 1;
}
