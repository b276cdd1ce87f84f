/*
 * status: the status file the running agent keeps in its storage
 * directory, and `esxwatch --status`, which reads it.
 *
 * The file is the only channel between the daemon and the --status command
 * (no socket to secure, nothing listening); it says who wrote it (pid), when,
 * and per destination what an admin asks first: is it delivering, how much
 * is waiting, when did it last succeed and what was the last error.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "event.h"
#include "log.h"
#include "platform.h"
#include "shipper.h"
#include "spool.h"
#include "status.h"

/*
 * The shipper that is running, if the core provides the accessor: a weak
 * reference, so this file links whether or not it exists yet.
 */
extern struct shipper *shipper_current(void) __attribute__((weak));

static pthread_mutex_t	 st_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 st_cv = PTHREAD_COND_INITIALIZER;
static pthread_t	 st_thread;
static bool		 st_running, st_stopping;
static char		 st_path[PATH_MAX];
static int64_t		 st_started_ms;

uint64_t
status_rss_kb(void)
{
	char line[256];
	FILE *f;
	uint64_t kb = 0;

	/* Linux and most of ESXi's /proc; then statm; then the peak. */
	if ((f = fopen("/proc/self/status", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "VmRSS:", 6) == 0) {
				kb = strtoull(line + 6, NULL, 10);
				break;
			}
		fclose(f);
		if (kb > 0)
			return kb;
	}
	if ((f = fopen("/proc/self/statm", "r")) != NULL) {
		unsigned long long size, res;

		if (fscanf(f, "%llu %llu", &size, &res) == 2)
			kb = res * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
		fclose(f);
		if (kb > 0)
			return kb;
	}
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > 0)
			kb = (uint64_t)ru.ru_maxrss;
	}
	return kb;
}

uint64_t
status_cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000 + (uint64_t)ru.ru_utime.tv_usec / 1000 +
	    (uint64_t)ru.ru_stime.tv_sec * 1000 + (uint64_t)ru.ru_stime.tv_usec / 1000;
}

static void
copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	/* one line per value in the file */
	for (size_t i = 0; i < n; i++)
		if (dst[i] == '\n' || dst[i] == '\r')
			dst[i] = ' ';
}

/*
 * Without the shipper's own view, a destination that has events waiting
 * and has delivered nothing for a while is failing: the spool sees that
 * much.  The shipper's state and error text replace this when available.
 */
static void
stalled(struct status_dest *d, int64_t now)
{
	const char *e = getenv("ESXWATCH_STALL_S");
	int64_t limit = e != NULL && atoi(e) > 0 ? (int64_t)atoi(e) * 1000 : STATUS_STALL_MS;
	int64_t since = d->last_success_ms > 0 ? d->last_success_ms : st_started_ms;

	if (d->backlog_events == 0 || since <= 0 || now - since < limit)
		return;
	d->state = DEST_FAILING;
	d->last_error_ms = now;
	snprintf(d->last_error, sizeof(d->last_error), "nothing delivered for %" PRId64
	    " s, %" PRIu64 " events waiting", (now - since) / 1000, d->backlog_events);
}

void
status_collect(struct status_snap *s)
{
	struct spool *sp = spool_current();
	struct shipper *sh = shipper_current ? shipper_current() : NULL;

	memset(s, 0, sizeof(*s));
	s->pid = (long)getpid();
	s->updated_ms = now_ms();
	s->started_ms = st_started_ms;
	s->rss_kb = status_rss_kb();
	s->cpu_ms = status_cpu_ms();
	if (sp != NULL) {
		struct spool_stats st;

		spool_stats(sp, &st);
		s->have_spool = true;
		s->memory_only = st.memory_only;
		s->queued_events = st.queued_events;
		s->queued_bytes = st.queued_bytes;
		s->pushed_events = st.pushed_events;
		s->dropped_budget = st.dropped_budget;
		s->dropped_corrupt = st.dropped_corrupt;
		s->torn_tails = st.torn_tails;
		for (size_t i = 0; i < st.ndests && s->ndests < STATUS_MAX_DESTS; i++) {
			struct spool_dest_stats ds;
			struct status_dest *d = &s->dests[s->ndests];

			if (spool_dest_stats(sp, i, &ds) < 0)
				break;
			copy_str(d->name, sizeof(d->name), ds.name);
			d->backlog_events = ds.backlog_events;
			d->backlog_bytes = ds.backlog_bytes;
			d->sent_events = ds.acked_events;
			d->dropped_budget = ds.dropped_budget;
			d->dropped_poison = ds.dropped_poison;
			d->last_success_ms = ds.last_ack_ms;
			d->state = ds.last_ack_ms > 0 ? DEST_DELIVERING : DEST_IDLE;
			stalled(d, s->updated_ms);
			s->ndests++;
		}
	}
	for (size_t i = 0; sh != NULL && i < shipper_ndests(sh); i++) {
		struct shipper_dest_stats ss;
		struct status_dest *d = NULL;

		if (shipper_stats(sh, i, &ss) < 0)
			continue;
		for (size_t k = 0; k < s->ndests; k++)
			if (strcmp(s->dests[k].name, ss.name) == 0)
				d = &s->dests[k];
		if (d == NULL) {
			if (s->ndests == STATUS_MAX_DESTS)
				continue;
			d = &s->dests[s->ndests++];
			copy_str(d->name, sizeof(d->name), ss.name);
			d->backlog_events = ss.backlog;
		}
		copy_str(d->proto, sizeof(d->proto), ss.proto);
		d->sent_events = ss.sent_events;
		d->failed_sends = ss.failed_sends;
		d->dropped_poison += ss.dropped_poison;
		d->not_ingested = ss.not_ingested;
		d->last_success_ms = ss.last_success_ms;
		if (ss.failing || d->state != DEST_FAILING) {
			/* the shipper's word, unless only the spool sees the
			 * stall (a send that hangs is not a failed attempt yet) */
			d->last_error_ms = ss.last_error_ms;
			copy_str(d->last_error, sizeof(d->last_error), ss.last_error);
			d->state = ss.failing ? DEST_FAILING :
			    ss.last_success_ms > 0 ? DEST_DELIVERING : DEST_IDLE;
		}
	}
	for (size_t k = 0; k < s->ndests; k++) {
		s->sent_events += s->dests[k].sent_events;
		s->failed_sends += s->dests[k].failed_sends;
		s->dropped_poison += s->dests[k].dropped_poison;
		s->not_ingested += s->dests[k].not_ingested;
	}
}

static const char *
state_name(enum status_state st)
{
	return st == DEST_FAILING ? "failing" : st == DEST_DELIVERING ?
	    "delivering" : "idle";
}

int
status_write(const struct status_snap *s, const char *path)
{
	char tmp[PATH_MAX + 8];
	struct buf b;
	int fd = -1, rc = -1;

	buf_init(&b, 1024 * 1024);
	buf_printf(&b, "esxwatch-status: 1\nversion: %s\npid: %ld\nupdated_ms: %" PRId64
	    "\nstarted_ms: %" PRId64 "\nspool: %s\nqueued_events: %" PRIu64
	    "\nqueued_bytes: %" PRIu64 "\npushed_events: %" PRIu64 "\nsent_events: %" PRIu64 "\nfailed_sends: %"
	    PRIu64 "\ndropped_budget: %" PRIu64 "\ndropped_poison: %" PRIu64
	    "\ndropped_corrupt: %" PRIu64 "\ntorn_tails: %" PRIu64 "\nrss_kb: %"
	    PRIu64 "\ncpu_ms: %" PRIu64 "\nnot_ingested: %" PRIu64 "\n", ESXWATCH_VERSION,
	    s->pid, s->updated_ms,
	    s->started_ms, !s->have_spool ? "none" : s->memory_only ? "memory" : "disk",
	    s->queued_events, s->queued_bytes, s->pushed_events, s->sent_events,
	    s->failed_sends, s->dropped_budget, s->dropped_poison, s->dropped_corrupt, s->torn_tails,
	    s->rss_kb, s->cpu_ms, s->not_ingested);
	for (size_t i = 0; i < s->ndests; i++) {
		const struct status_dest *d = &s->dests[i];
		char name[sizeof(d->name)], proto[sizeof(d->proto)], err[sizeof(d->last_error)];

		/* one line per value, whatever a server put in its error */
		copy_str(name, sizeof(name), d->name);
		copy_str(proto, sizeof(proto), d->proto[0] ? d->proto : "-");
		copy_str(err, sizeof(err), d->last_error);
		buf_printf(&b, "dest: %s\n proto: %s\n state: %s\n backlog_events: %"
		    PRIu64 "\n backlog_bytes: %" PRIu64 "\n sent_events: %" PRIu64
		    "\n failed_sends: %" PRIu64 "\n dropped_budget: %" PRIu64
		    "\n dropped_poison: %" PRIu64 "\n last_success_ms: %" PRId64
		    "\n last_error_ms: %" PRId64 "\n not_ingested: %" PRIu64
		    "\n last_error: %s\n", name, proto,
		    state_name(d->state), d->backlog_events, d->backlog_bytes,
		    d->sent_events, d->failed_sends, d->dropped_budget, d->dropped_poison,
		    d->last_success_ms, d->last_error_ms, d->not_ingested, err);
	}
	if (b.data == NULL || (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	for (size_t off = 0; off < b.len;) {
		ssize_t w = write(fd, b.data + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto out;
		off += (size_t)w;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		log_limited(LOG_WARN, "status:write", 300, "cannot write %s: %s", path,
		    strerror(errno));
		(void)unlink(tmp);
	}
	buf_free(&b);
	return rc;
}

/* ---- parsing ----------------------------------------------------------- */

static int
parse_u64(const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	if (!(*v >= '0' && *v <= '9'))
		return -1;
	*out = strtoull(v, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

static int
parse_i64(const char *v, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 10);
	return errno != 0 || *end != '\0' || end == v ? -1 : 0;
}

static int
parse_dest_key(struct status_dest *d, const char *k, const char *v)
{
	uint64_t *u = NULL;
	int64_t *i = NULL;

	if (strcmp(k, "proto") == 0) {
		copy_str(d->proto, sizeof(d->proto), v);
		return 0;
	}
	if (strcmp(k, "last_error") == 0) {
		copy_str(d->last_error, sizeof(d->last_error), v);
		return 0;
	}
	if (strcmp(k, "state") == 0) {
		d->state = strcmp(v, "failing") == 0 ? DEST_FAILING :
		    strcmp(v, "delivering") == 0 ? DEST_DELIVERING : DEST_IDLE;
		return 0;
	}
	if (strcmp(k, "backlog_events") == 0)
		u = &d->backlog_events;
	else if (strcmp(k, "backlog_bytes") == 0)
		u = &d->backlog_bytes;
	else if (strcmp(k, "sent_events") == 0)
		u = &d->sent_events;
	else if (strcmp(k, "failed_sends") == 0)
		u = &d->failed_sends;
	else if (strcmp(k, "dropped_budget") == 0)
		u = &d->dropped_budget;
	else if (strcmp(k, "dropped_poison") == 0)
		u = &d->dropped_poison;
	else if (strcmp(k, "not_ingested") == 0)
		u = &d->not_ingested;
	else if (strcmp(k, "last_success_ms") == 0)
		i = &d->last_success_ms;
	else if (strcmp(k, "last_error_ms") == 0)
		i = &d->last_error_ms;
	else
		return 0;	/* a newer agent's key: ignore */
	return u != NULL ? parse_u64(v, u) : parse_i64(v, i);
}

static int
parse_top_key(struct status_snap *s, const char *k, const char *v)
{
	static const struct { const char *k; size_t off; } u64s[] = {
		{ "queued_events", offsetof(struct status_snap, queued_events) },
		{ "queued_bytes", offsetof(struct status_snap, queued_bytes) },
		{ "pushed_events", offsetof(struct status_snap, pushed_events) },
		{ "sent_events", offsetof(struct status_snap, sent_events) },
		{ "failed_sends", offsetof(struct status_snap, failed_sends) },
		{ "dropped_budget", offsetof(struct status_snap, dropped_budget) },
		{ "dropped_poison", offsetof(struct status_snap, dropped_poison) },
		{ "dropped_corrupt", offsetof(struct status_snap, dropped_corrupt) },
		{ "torn_tails", offsetof(struct status_snap, torn_tails) },
		{ "rss_kb", offsetof(struct status_snap, rss_kb) },
		{ "cpu_ms", offsetof(struct status_snap, cpu_ms) },
		{ "not_ingested", offsetof(struct status_snap, not_ingested) },
	};
	int64_t x;

	if (strcmp(k, "pid") == 0) {
		if (parse_i64(v, &x) < 0 || x <= 0 || x > INT_MAX)
			return -1;
		s->pid = (long)x;
		return 0;
	}
	if (strcmp(k, "updated_ms") == 0)
		return parse_i64(v, &s->updated_ms);
	if (strcmp(k, "started_ms") == 0)
		return parse_i64(v, &s->started_ms);
	if (strcmp(k, "spool") == 0) {
		s->have_spool = strcmp(v, "none") != 0;
		s->memory_only = strcmp(v, "memory") == 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
		if (strcmp(k, u64s[i].k) == 0)
			return parse_u64(v, (uint64_t *)(void *)((char *)s + u64s[i].off));
	return 0;
}

int
status_parse(const char *text, size_t len, struct status_snap *s)
{
	const char *p = text, *end = text + len;
	struct status_dest *d = NULL;
	bool magic = false;

	memset(s, 0, sizeof(*s));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[1024], *colon, *v;
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		bool indented;

		if (n >= sizeof(line))
			n = sizeof(line) - 1;	/* long values are cut, not fatal */
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl ? nl + 1 : end;
		if (memchr(line, '\0', n) != NULL && strlen(line) < n)
			return -1;
		indented = line[0] == ' ';
		colon = strchr(line, ':');
		if (colon == NULL || colon[1] != ' ')
			continue;
		*colon = '\0';
		v = colon + 2;
		if (!magic) {
			if (strcmp(line, "esxwatch-status") != 0)
				return -1;
			magic = true;
			continue;
		}
		if (!indented && strcmp(line, "dest") == 0) {
			if (s->ndests == STATUS_MAX_DESTS) {
				d = NULL;
				continue;
			}
			d = &s->dests[s->ndests++];
			copy_str(d->name, sizeof(d->name), v);
			continue;
		}
		if (indented) {
			if (d != NULL && parse_dest_key(d, line + 1, v) < 0)
				return -1;
		} else if (parse_top_key(s, line, v) < 0)
			return -1;
	}
	return magic && s->pid > 0 ? 0 : -1;
}

/* ---- the writer thread --------------------------------------------------- */

static void *
status_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&st_mu);
	while (!st_stopping) {
		struct status_snap *s = malloc(sizeof(*s));
		struct timespec ts;

		pthread_mutex_unlock(&st_mu);
		if (s != NULL) {
			status_collect(s);
			status_write(s, st_path);
			free(s);
		}
		pthread_mutex_lock(&st_mu);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += STATUS_PERIOD_MS / 1000;
		ts.tv_nsec += (long)(STATUS_PERIOD_MS % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!st_stopping)
			(void)pthread_cond_timedwait(&st_cv, &st_mu, &ts);
	}
	pthread_mutex_unlock(&st_mu);
	return NULL;
}

int
status_start(const struct config *cfg)
{
	const char *dir = platform_storage_dir(cfg);
	sigset_t block, old;
	int rc;

	pthread_mutex_lock(&st_mu);
	if (st_running) {
		pthread_mutex_unlock(&st_mu);
		return 0;
	}
	if ((size_t)snprintf(st_path, sizeof(st_path), "%s/%s", dir, STATUS_FILE) >=
	    sizeof(st_path)) {
		pthread_mutex_unlock(&st_mu);
		return -1;
	}
	if (st_started_ms == 0)
		st_started_ms = now_ms();
	st_stopping = false;
	/* the daemon's signals belong to the collecting thread */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(&st_thread, NULL, status_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	st_running = rc == 0;
	pthread_mutex_unlock(&st_mu);
	if (rc != 0)
		log_warn("cannot start the status thread");
	return rc == 0 ? 0 : -1;
}

void
status_stop(void)
{
	pthread_mutex_lock(&st_mu);
	if (!st_running) {
		pthread_mutex_unlock(&st_mu);
		return;
	}
	st_stopping = true;
	pthread_cond_broadcast(&st_cv);
	pthread_mutex_unlock(&st_mu);
	pthread_join(st_thread, NULL);
	pthread_mutex_lock(&st_mu);
	st_running = false;
	pthread_mutex_unlock(&st_mu);
	/* one last picture, so --status shows the final figures */
	{
		struct status_snap *s = malloc(sizeof(*s));

		if (s != NULL) {
			status_collect(s);
			status_write(s, st_path);
			free(s);
		}
	}
}

/* ---- esxwatch --status ----------------------------------------------- */

/* Who holds the spool lock (the running agent), 0 if nobody. */
static long
lock_holder(const char *dir)
{
	char path[PATH_MAX];
	struct flock fl;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/spool/lock", dir) >= sizeof(path))
		return 0;
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type == F_UNLCK) {
		close(fd);
		return 0;
	}
	close(fd);
	return (long)fl.l_pid;
}

static void
fmt_time(int64_t ms, char *out, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL) {
		snprintf(out, len, "never");
		return;
	}
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
fmt_ago(int64_t ms, int64_t now, char *out, size_t len)
{
	int64_t s = (now - ms) / 1000;

	if (ms <= 0)
		snprintf(out, len, "never");
	else if (s < 0)
		snprintf(out, len, "just now");
	else if (s < 120)
		snprintf(out, len, "%" PRId64 " s ago", s);
	else if (s < 7200)
		snprintf(out, len, "%" PRId64 " min ago", s / 60);
	else if (s < 172800)
		snprintf(out, len, "%" PRId64 " h ago", s / 3600);
	else
		snprintf(out, len, "%" PRId64 " days ago", s / 86400);
}

int
status_print(const struct config *cfg, FILE *out)
{
	const char *dir = platform_storage_dir(cfg);
	char path[PATH_MAX], when[64], ago[64];
	struct status_snap *s = NULL;
	char *text = NULL;
	long holder;
	int fd = -1, rc = 3;
	ssize_t n;
	bool alive = false;
	int64_t now = now_ms();

	holder = lock_holder(dir);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, STATUS_FILE) >= sizeof(path))
		goto out;
	if ((s = calloc(1, sizeof(*s))) == NULL || (text = malloc(256 * 1024)) == NULL)
		goto out;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, text, 256 * 1024 - 1) : -1;
	if (n < 0 || status_parse(text, (size_t)n, s) < 0) {
		if (holder > 0) {
			fprintf(out, "esxwatch: running (pid %ld); no status yet in %s "
			    "(is the agent collector disabled?)\n", holder, path);
			rc = 0;
		} else
			fprintf(out, "esxwatch: not running (no status in %s)\n", path);
		goto out;
	}
	/* the pid of the file, alive; or the holder of the spool lock */
	if (s->pid > 0 && (kill((pid_t)s->pid, 0) == 0 || errno == EPERM))
		alive = holder == 0 || holder == s->pid;
	if (holder > 0)
		alive = true;
	fmt_ago(s->updated_ms, now, ago, sizeof(ago));
	if (alive) {
		fprintf(out, "esxwatch: running (pid %ld), status updated %s\n",
		    holder > 0 ? holder : s->pid, ago);
		rc = 0;
	} else
		fprintf(out, "esxwatch: NOT running (last seen: pid %ld, %s)\n", s->pid, ago);
	fmt_ago(s->started_ms, now, ago, sizeof(ago));
	fprintf(out, "started: %s; memory: %" PRIu64 " kB; cpu: %" PRIu64 " ms\n",
	    ago, s->rss_kb, s->cpu_ms);
	fprintf(out, "spool: %s, %" PRIu64 " events (%" PRIu64 " bytes) queued\n",
	    !s->have_spool ? "none" : s->memory_only ?
	    "IN MEMORY ONLY (the disk refuses writes: see the log)" : "on disk",
	    s->queued_events, s->queued_bytes);
	fprintf(out, "dropped: %" PRIu64 " over storage.max_disk_buffer, %" PRIu64
	    " rejected (poison), %" PRIu64 " damaged in the spool\n", s->dropped_budget,
	    s->dropped_poison, s->dropped_corrupt);
	for (size_t i = 0; i < s->ndests; i++) {
		const struct status_dest *d = &s->dests[i];

		fprintf(out, "\ndestination %s (%s): %s\n", d->name, d->proto,
		    state_name(d->state));
		fprintf(out, "  backlog:      %" PRIu64 " events (%" PRIu64 " bytes)\n",
		    d->backlog_events, d->backlog_bytes);
		fprintf(out, "  sent:         %" PRIu64 " events; %" PRIu64
		    " failed sends; %" PRIu64 " dropped\n", d->sent_events, d->failed_sends,
		    d->dropped_budget + d->dropped_poison);
		if (d->not_ingested > 0)
			fprintf(out, "  not ingested: %" PRIu64 " events the server accepted "
			    "but did not ingest\n", d->not_ingested);
		fmt_time(d->last_success_ms, when, sizeof(when));
		fmt_ago(d->last_success_ms, now, ago, sizeof(ago));
		if (d->last_success_ms > 0)
			fprintf(out, "  last success: %s (%s)\n", when, ago);
		else
			fprintf(out, "  last success: never\n");
		fmt_time(d->last_error_ms, when, sizeof(when));
		fprintf(out, "  last error:   %s%s%s\n", d->last_error_ms > 0 ? when : "none",
		    d->last_error[0] ? ": " : "", d->last_error);
	}
out:
	if (fd >= 0)
		close(fd);
	free(text);
	free(s);
	return rc;
}
