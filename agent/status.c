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

#include "config/config_host.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "event.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/str.h"
#include "lib/platform.h"
#include "spool/queue.h"
#include "shipper.h"
#include "status_receiver.h"
#include "status.h"
#include "lib/json.h"


uint64_t
status_rss_kb(void)
{
	char line[256];
	FILE *f;
	uint64_t kb = 0;

	/* Linux and most of ESXi's /proc; then statm; then the peak. */
	f = fopen("/proc/self/status", "r");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "VmRSS:", 6) == 0) {
				kb = strtoull(line + 6, NULL, 10);
				break;
			}
		fclose(f);
		if (kb > 0)
			return kb;
	}
	f = fopen("/proc/self/statm", "r");
	if (f != NULL) {
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
copy_linen(char *dst, size_t len, const char *src, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	/* one line per value in the file */
	for (size_t i = 0; i < n; i++)
		if (dst[i] == '\n' || dst[i] == '\r')
			dst[i] = ' ';
}

static void
copy_line(char *dst, size_t len, const char *src)
{
	copy_linen(dst, len, src, strlen(src));
}

/*
 * Without the shipper's own view, a destination that has events waiting
 * and has delivered nothing for a while is failing: the spool sees that
 * much.  The shipper's state and error text replace this when available.
 */
static void
stalled(struct status_dest *d, int64_t now, int64_t started_ms, int64_t settled_ms)
{
	const char *e = getenv("ESXWATCH_STALL_S");
	int64_t limit = e != NULL && atoi(e) > 0 ? (int64_t)atoi(e) * 1000 : STATUS_STALL_MS;
	int64_t since = d->last_success_ms > 0 ? d->last_success_ms : started_ms;

	/* events its filter keeps out are progress too, not a stall */
	if (settled_ms > since)
		since = settled_ms;
	if (d->backlog_events == 0 || since <= 0 || now - since < limit)
		return;
	d->state = DEST_FAILING;
	d->last_error_ms = now;
	snprintf(d->last_error, sizeof(d->last_error), "nothing delivered for %" PRId64
	    " s, %" PRIu64 " events waiting", (now - since) / 1000, d->backlog_events);
}

/* The queue's view: backlog, acknowledgements, drops. */
static void
collect_queue(struct queue *q, struct status_snap *s, int64_t started_ms)
{
	struct queue_stats st;

	queue_stats(q, &st);
	s->have_spool = true;
	s->memory_only = st.memory_only;
	s->queued_events = st.queued_events;
	s->queued_bytes = st.queued_bytes;
	s->pushed_events = st.pushed_events;
	s->dropped_budget = st.dropped_events;
	/* the queue's total: destinations a reload removed included */
	s->dropped_poison = st.dropped_poison;
	s->dropped_corrupt = st.dropped_corrupt;
	s->torn_tails = st.torn_tails;
	s->counts_since_ms = st.counts_since_ms;
	for (size_t i = 0; i < st.ndests && s->ndests < STATUS_MAX_DESTS; i++) {
		struct queue_dest_stats ds;
		struct status_dest *d = &s->dests[s->ndests];

		if (queue_dest_stats(q, i, &ds) < 0)
			break;
		copy_line(d->name, sizeof(d->name), ds.name);
		d->backlog_events = ds.backlog_events;
		d->backlog_bytes = ds.backlog_bytes;
		d->sent_events = ds.acked_events;
		d->dropped_budget = ds.dropped_budget;
		d->dropped_poison = ds.dropped_poison;
		d->filtered = ds.filtered;
		d->last_success_ms = ds.last_ack_ms;
		d->state = ds.last_ack_ms > 0 ? DEST_DELIVERING : DEST_IDLE;
		stalled(d, s->updated_ms, started_ms, ds.last_settle_ms);
		s->ndests++;
	}
}

/* The shipper's view: attempts, errors, what the server did not ingest.
 * Poison drops are the queue's figure alone (counted once, there). */
static void
collect_shipper(struct shipper *sh, struct status_snap *s)
{
	for (size_t i = 0; i < shipper_ndests(sh); i++) {
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
			copy_line(d->name, sizeof(d->name), ss.name);
			d->backlog_events = ss.backlog;
		}
		copy_line(d->proto, sizeof(d->proto), ss.proto);
		copy_line(d->no_destination, sizeof(d->no_destination),
		    ss.no_destination);
		d->sent_events = ss.sent_events;
		d->failed_sends = ss.failed_sends;
		d->not_ingested = ss.not_ingested;
		d->dead_lettered = ss.dead_lettered;
		d->dead_letter_dropped = ss.dead_letter_dropped;
		d->resent_events = ss.resent_events;
		d->last_success_ms = ss.last_success_ms;
		if (ss.failing || d->state != DEST_FAILING) {
			/* the shipper's word, unless only the queue sees the
			 * stall (a send that hangs is not a failed attempt yet) */
			d->last_error_ms = ss.last_error_ms;
			copy_line(d->last_error, sizeof(d->last_error), ss.last_error);
			d->state = ss.failing ? DEST_FAILING :
			    ss.last_success_ms > 0 ? DEST_DELIVERING : DEST_IDLE;
		}
	}
}

/* The filelogs the configuration left out (CONFIG_KEEP_BROKEN_FILELOGS). */
static void
collect_broken(const struct config *cfg, struct status_snap *s)
{
	for (size_t i = 0; i < cfg->nfilelogs && s->nbroken < STATUS_MAX_BROKEN; i++) {
		const struct filelog_conf *f = &cfg->filelogs[i];
		struct status_broken *b = &s->broken[s->nbroken];

		if (f->broken == NULL || !f->enabled)
			continue;
		copy_line(b->name, sizeof(b->name), f->name);
		copy_line(b->error, sizeof(b->error), f->broken);
		s->nbroken++;
	}
}

void
status_collect(const struct status_source *src, struct status_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->pid = (long)getpid();
	s->updated_ms = now_ms();
	s->started_ms = src->started_ms;
	s->rss_kb = status_rss_kb();
	s->cpu_ms = status_cpu_ms();
	if (src->q != NULL)
		collect_queue(src->q, s, src->started_ms);
	if (src->sh != NULL)
		collect_shipper(src->sh, s);
	if (src->cfg != NULL)
		collect_broken(src->cfg, s);
	logstats_read(src->logs, &s->logs);
	recv_board_read(src->recv, &s->receiver);
	s->ncollectors = sched_totals_get(src->ct, s->collectors, SCHED_MAX_COLLECTORS);
	s->nvsphere = vsphere_board_get(src->vs, s->vsphere, STATUS_MAX_VSPHERE);
	for (size_t k = 0; k < s->ndests; k++) {
		s->sent_events += s->dests[k].sent_events;
		s->failed_sends += s->dests[k].failed_sends;
		s->not_ingested += s->dests[k].not_ingested;
	}
}

static int
parse_i64(const char *v, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 10);
	return errno != 0 || *end != '\0' || end == v ? -1 : 0;
}

/*
 * The figures of the file, in its order: one row each drives the writer,
 * the parser and --status --json (a new figure is a field and a row).
 */
struct status_key {
	const char	*key;
	size_t		 off;
	bool		 is_signed;	/* int64_t, else uint64_t */
};

#define TOP(k)	{ #k, offsetof(struct status_snap, k), false }
static const struct status_key top_keys[] = {
	TOP(queued_events), TOP(queued_bytes), TOP(pushed_events), TOP(sent_events),
	TOP(failed_sends), TOP(dropped_budget), TOP(dropped_poison),
	TOP(dropped_corrupt), TOP(torn_tails), TOP(rss_kb), TOP(cpu_ms),
	TOP(not_ingested),
	{ "counts_since_ms", offsetof(struct status_snap, counts_since_ms), true },
};
#undef TOP

#define DST(k, sg)	{ #k, offsetof(struct status_dest, k), sg }
static const struct status_key dest_keys[] = {
	DST(backlog_events, false), DST(backlog_bytes, false), DST(sent_events, false),
	DST(failed_sends, false), DST(dropped_budget, false), DST(dropped_poison, false),
	DST(last_success_ms, true), DST(last_error_ms, true), DST(not_ingested, false),
	DST(filtered, false), DST(dead_lettered, false),
	DST(dead_letter_dropped, false), DST(resent_events, false),
};
#undef DST

#define FLG(k)	{ #k, offsetof(struct logstats_filelog, k), false }
static const struct status_key filelog_keys[] = {
	FLG(lines_read), FLG(lines_matched),
};
#undef FLG

#define FIL(k)	{ #k, offsetof(struct logstats_file, k), false }
static const struct status_key file_keys[] = {
	FIL(offset), FIL(lines_read), FIL(lines_matched),
};
#undef FIL
#define COL(k, sg)	{ #k, offsetof(struct sched_collector_stats, k), sg }
static const struct status_key coll_keys[] = {
	COL(runs, false), COL(errors, false), COL(last_duration_ms, false),
	COL(last_run_ms, true),
};
#undef COL

#define NKEYS(t)	(sizeof(t) / sizeof((t)[0]))

static void
put_key(struct buf *b, const char *indent, const void *base, const struct status_key *k)
{
	const char *p = (const char *)base + k->off;

	if (k->is_signed)
		buf_printf(b, "%s%s: %" PRId64 "\n", indent, k->key, *(const int64_t *)(const void *)p);
	else
		buf_printf(b, "%s%s: %" PRIu64 "\n", indent, k->key, *(const uint64_t *)(const void *)p);
}

static int
parse_key(void *base, const struct status_key *keys, size_t n, const char *k,
    const char *v, bool *found)
{
	*found = false;
	for (size_t i = 0; i < n; i++) {
		char *p = (char *)base + keys[i].off;

		if (strcmp(k, keys[i].key) != 0)
			continue;
		*found = true;
		return keys[i].is_signed ? parse_i64(v, (int64_t *)(void *)p) :
		    (str_u64(v, (uint64_t *)(void *)p) ? 0 : -1);
	}
	return 0;
}

static const char *
state_name(enum status_state st)
{
	return st == DEST_FAILING ? "failing" : st == DEST_DELIVERING ?
	    "delivering" : "idle";
}

/*
 * A destination's state as the admin reads it: one that has never
 * delivered says so, with the reason (the state stays "failing" for
 * machines: the fleet tools and the agent collector know three states).
 */
static bool
never_delivered(const struct status_dest *d)
{
	return d->state == DEST_FAILING && d->last_success_ms <= 0;
}

static void
dest_summary(const struct status_dest *d, char *out, size_t len)
{
	if (never_delivered(d))
		snprintf(out, len, "never delivered (%s)", d->last_error[0] ?
		    d->last_error : "no reason recorded");
	else
		snprintf(out, len, "%s", state_name(d->state));
}

/* The line of a host with no destination, NULL when it has one. */
static const char *
no_destination_line(const struct status_snap *s)
{
	const char *w = s->ndests > 0 ? s->dests[0].no_destination : "";

	if (strcmp(w, "host_syslog") == 0)
		return "no destination configured: events go to the host's syslog";
	if (w[0] != '\0')
		return "no destination configured: events are written to "
		    "standard output";
	return NULL;
}

static const char *
spool_name(const struct status_snap *s)
{
	return !s->have_spool ? "none" : s->memory_only ? "memory" : "disk";
}

/* What the writer writes at most (status_read reads up to twice that). */
#define STATUS_WRITE_MAX	(1024u * 1024)

/* The filelog blocks: before the destinations, so that a reader that
 * does not know them drops their indented lines (no dest open yet). */
static void
put_filelogs(struct buf *b, const struct logstats_snap *l)
{
	char name[LOGSTATS_NAME_MAX], dir[LOGSTATS_PATH_MAX];

	for (size_t i = 0; i < l->nfilelogs; i++) {
		const struct logstats_filelog *f = &l->filelogs[i];

		copy_line(name, sizeof(name), f->name);
		copy_line(dir, sizeof(dir), f->directory);
		buf_printf(b, "filelog: %s\n state: %s\n directory: %s\n files: %zu\n",
		    name, logstats_state_name(f->state), dir, f->nfiles);
		for (size_t k = 0; k < NKEYS(filelog_keys); k++)
			put_key(b, " ", f, &filelog_keys[k]);
		for (size_t j = 0; j < l->nfiles; j++) {
			const struct logstats_file *fi = &l->files[j];

			if (fi->filelog != i)
				continue;
			copy_line(dir, sizeof(dir), fi->path);
			buf_printf(b, " file: %s\n", dir);
			for (size_t k = 0; k < NKEYS(file_keys); k++)
				put_key(b, "  ", fi, &file_keys[k]);
		}
	}
}

int
status_write(const struct status_snap *s, const char *path)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, STATUS_WRITE_MAX);
	buf_printf(&b, "esxwatch-status: 1\nversion: %s\npid: %ld\nupdated_ms: %" PRId64
	    "\nstarted_ms: %" PRId64 "\nspool: %s\n", ESXWATCH_VERSION, s->pid,
	    s->updated_ms, s->started_ms, spool_name(s));
	for (size_t k = 0; k < NKEYS(top_keys); k++)
		put_key(&b, "", s, &top_keys[k]);
	for (size_t i = 0; i < s->nbroken; i++) {
		char name[sizeof(s->broken[i].name)], err[sizeof(s->broken[i].error)];

		copy_line(name, sizeof(name), s->broken[i].name);
		copy_line(err, sizeof(err), s->broken[i].error);
		buf_printf(&b, "filelog_disabled: %s %s\n", name, err);
	}
	put_filelogs(&b, &s->logs);
	for (size_t i = 0; i < s->ndests; i++) {
		const struct status_dest *d = &s->dests[i];
		char name[sizeof(d->name)], proto[sizeof(d->proto)], err[sizeof(d->last_error)];

		/* one line per value, whatever a server put in its error */
		copy_line(name, sizeof(name), d->name);
		copy_line(proto, sizeof(proto), d->proto[0] ? d->proto : "-");
		copy_line(err, sizeof(err), d->last_error);
		buf_printf(&b, "dest: %s\n proto: %s\n state: %s\n", name, proto,
		    state_name(d->state));
		for (size_t k = 0; k < NKEYS(dest_keys); k++)
			put_key(&b, " ", d, &dest_keys[k]);
		buf_printf(&b, " last_error: %s\n", err);
		if (d->no_destination[0] != '\0')
			buf_printf(&b, " no_destination: %s\n", d->no_destination);
	}
	for (size_t i = 0; i < s->ncollectors; i++) {
		const struct sched_collector_stats *c = &s->collectors[i];
		char name[sizeof(c->name)];

		copy_line(name, sizeof(name), c->name);
		buf_printf(&b, "collector: %s\n", name);
		for (size_t k = 0; k < NKEYS(coll_keys); k++)
			put_key(&b, " ", c, &coll_keys[k]);
	}
	status_receiver_put(&b, &s->receiver);
	status_vsphere_put(&b, s->vsphere, s->nvsphere);
	/* No fsync: the file is rewritten whenever something changes and a
	 * crash loses nothing the next run does not say again.  The fixed
	 * temp name: one writer, and a crash leaves one stray file at most. */
	if (b.data != NULL && fs_replace(path, b.data, b.len, 0600, FS_TMP_FIXED) == 0)
		rc = 0;
	else
		log_limited(LOG_WARN, "status:write", 300, "cannot write %s: %s", path,
		    log_errstr(errno));
	buf_free(&b);
	return rc;
}

/* ---- parsing ----------------------------------------------------------- */

static int
parse_dest_key(struct status_dest *d, const char *k, const char *v)
{
	bool found;

	if (strcmp(k, "proto") == 0) {
		copy_line(d->proto, sizeof(d->proto), v);
		return 0;
	}
	if (strcmp(k, "last_error") == 0) {
		copy_line(d->last_error, sizeof(d->last_error), v);
		return 0;
	}
	if (strcmp(k, "no_destination") == 0) {
		copy_line(d->no_destination, sizeof(d->no_destination), v);
		return 0;
	}
	if (strcmp(k, "state") == 0) {
		d->state = strcmp(v, "failing") == 0 ? DEST_FAILING :
		    strcmp(v, "delivering") == 0 ? DEST_DELIVERING : DEST_IDLE;
		return 0;
	}
	/* a newer agent's key: ignored */
	return parse_key(d, dest_keys, NKEYS(dest_keys), k, v, &found);
}

static int
parse_filelog_key(struct logstats_filelog *f, const char *k, const char *v)
{
	uint64_t n;
	bool found;

	if (strcmp(k, "state") == 0) {
		(void)logstats_state_parse(v, &f->state);	/* a newer state: ok */
		return 0;
	}
	if (strcmp(k, "directory") == 0) {
		copy_line(f->directory, sizeof(f->directory), v);
		return 0;
	}
	if (strcmp(k, "files") == 0) {
		if (!str_u64(v, &n))
			return -1;
		f->nfiles = (size_t)n;
		return 0;
	}
	return parse_key(f, filelog_keys, NKEYS(filelog_keys), k, v, &found);
}

/*
 * Where the indented lines of a block go: the destination, the filelog
 * or its file (indented twice) opened last.
 */
struct parse_at {
	struct status_dest	*d;
	struct logstats_filelog	*fl;
	struct logstats_file	*fi;
	struct sched_collector_stats *c;
	struct recv_at		 r;	/* a receiver block */
	struct status_vsphere	*vs;
};

static int
parse_indented(struct status_snap *s, struct parse_at *at, const char *line,
    const char *v)
{
	struct logstats_snap *l = &s->logs;
	bool found;

	if (line[1] == ' ' && at->fi != NULL)
		return parse_key(at->fi, file_keys, NKEYS(file_keys), line + 2, v,
		    &found);
	if (at->fl != NULL && strcmp(line + 1, "file") == 0) {
		at->fi = NULL;
		if (l->nfiles == LOGSTATS_MAX_FILES)
			return 0;
		at->fi = &l->files[l->nfiles++];
		copy_line(at->fi->path, sizeof(at->fi->path), v);
		at->fi->filelog = (size_t)(at->fl - l->filelogs);
		return 0;
	}
	if (at->fl != NULL)
		return line[1] == ' ' ? 0 : parse_filelog_key(at->fl, line + 1, v);
	if (at->r.kind != 0) {
		status_receiver_key(&s->receiver, &at->r, line + 1, v);
		return 0;
	}
	if (at->d != NULL)
		return parse_dest_key(at->d, line + 1, v);
	if (at->c != NULL)
		return parse_key(at->c, coll_keys, NKEYS(coll_keys), line + 1, v,
		    &found);
	if (at->vs != NULL)
		return status_vsphere_key(at->vs, line + 1, v);
	return 0;
}

/* A "dest: NAME", "filelog: NAME" or "collector: NAME" line: 1, its block
 * opened (or skipped when full); 0 if the line is none of them. */
static int
parse_block(struct status_snap *s, struct parse_at *at, const char *k,
    const char *v)
{
	struct logstats_snap *l = &s->logs;

	if (strcmp(k, "dest") == 0) {
		memset(at, 0, sizeof(*at));
		if (s->ndests == STATUS_MAX_DESTS)
			return 1;
		at->d = &s->dests[s->ndests++];
		copy_line(at->d->name, sizeof(at->d->name), v);
		return 1;
	}
	if (strcmp(k, "filelog") == 0) {
		memset(at, 0, sizeof(*at));
		if (l->nfilelogs == LOGSTATS_MAX_FILELOGS)
			return 1;
		at->fl = &l->filelogs[l->nfilelogs++];
		copy_line(at->fl->name, sizeof(at->fl->name), v);
		return 1;
	}
	memset(&at->r, 0, sizeof(at->r));
	if (status_receiver_block(&s->receiver, &at->r, k, v)) {
		at->d = NULL;
		at->fl = NULL;
		at->fi = NULL;
		at->c = NULL;
		at->vs = NULL;
		return 1;
	}
	if (strcmp(k, "collector") == 0) {
		memset(at, 0, sizeof(*at));
		if (s->ncollectors == SCHED_MAX_COLLECTORS)
			return 1;
		at->c = &s->collectors[s->ncollectors++];
		copy_line(at->c->name, sizeof(at->c->name), v);
		return 1;
	}
	if (strcmp(k, "vsphere") == 0) {
		memset(at, 0, sizeof(*at));
		if (s->nvsphere == STATUS_MAX_VSPHERE)
			return 1;
		at->vs = &s->vsphere[s->nvsphere++];
		memset(at->vs, 0, sizeof(*at->vs));
		copy_line(at->vs->name, sizeof(at->vs->name), v);
		return 1;
	}
	return 0;
}

static int
parse_top_key(struct status_snap *s, const char *k, const char *v)
{
	int64_t x;
	bool found;

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
	if (strcmp(k, "filelog_disabled") == 0) {
		const char *sp = strchr(v, ' ');
		struct status_broken *b = &s->broken[s->nbroken];

		if (sp == NULL || s->nbroken == STATUS_MAX_BROKEN)
			return 0;
		copy_linen(b->name, sizeof(b->name), v, (size_t)(sp - v));
		copy_line(b->error, sizeof(b->error), sp + 1);
		s->nbroken++;
		return 0;
	}
	return parse_key(s, top_keys, NKEYS(top_keys), k, v, &found);
}

int
status_parse(const char *text, size_t len, struct status_snap *s)
{
	const char *p = text, *end = text + len;
	struct parse_at at = { 0 };
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
		if (!indented && parse_block(s, &at, line, v))
			continue;
		if (indented) {
			if (parse_indented(s, &at, line, v) < 0)
				return -1;
		} else if (parse_top_key(s, line, v) < 0)
			return -1;
	}
	return magic && s->pid > 0 ? 0 : -1;
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
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
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

/* The status file's largest size: every destination and filelog full. */
#define STATUS_READ_MAX	(2u * 1024 * 1024)

static ssize_t
read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* What --status knows: the status file (if readable) and who holds the
 * spool lock. */
struct status_view {
	char		 path[PATH_MAX];
	long		 holder;	/* the running agent, 0 if none */
	bool		 have_file;
	bool		 alive;
	long		 pid;		/* the running one, or the last seen */
	struct status_snap snap;
};

static int
status_read(const struct config *cfg, struct status_view *v)
{
	const char *dir = config_storage_dir(cfg);
	char *text;
	ssize_t n;
	int fd;

	v->holder = lock_holder(dir);
	if ((size_t)snprintf(v->path, sizeof(v->path), "%s/%s", dir, STATUS_FILE) >=
	    sizeof(v->path))
		return -1;
	text = malloc(STATUS_READ_MAX);
	if (text == NULL)
		return -1;
	fd = fs_open_read(v->path);
	n = fd >= 0 ? read_all(fd, text, STATUS_READ_MAX - 1) : -1;
	if (fd >= 0)
		close(fd);
	v->have_file = n >= 0 && status_parse(text, (size_t)n, &v->snap) == 0;
	free(text);
	if (!v->have_file) {
		v->alive = v->holder > 0;
		v->pid = v->holder;
		return 0;
	}
	/* the pid of the file, alive; or the holder of the spool lock */
	if (v->snap.pid > 0 && (kill((pid_t)v->snap.pid, 0) == 0 || errno == EPERM))
		v->alive = v->holder == 0 || v->holder == v->snap.pid;
	if (v->holder > 0)
		v->alive = true;
	v->pid = v->alive && v->holder > 0 ? v->holder : v->snap.pid;
	return 0;
}

static void
print_dest(FILE *out, const struct status_dest *d, int64_t now)
{
	char when[64], ago[64], state[sizeof(d->last_error) + 32];

	dest_summary(d, state, sizeof(state));
	fprintf(out, "\ndestination %s (%s): %s\n", d->name, d->proto, state);
	fprintf(out, "  backlog:      %" PRIu64 " events (%" PRIu64 " bytes)\n",
	    d->backlog_events, d->backlog_bytes);
	fprintf(out, "  sent:         %" PRIu64 " events; %" PRIu64
	    " failed sends; %" PRIu64 " dropped\n", d->sent_events, d->failed_sends,
	    d->dropped_budget + d->dropped_poison);
	if (d->not_ingested > 0)
		fprintf(out, "  not ingested: %" PRIu64 " events the server accepted "
		    "but did not ingest\n", d->not_ingested);
	if (d->dead_lettered + d->dead_letter_dropped > 0)
		fprintf(out, "  dead letter:  %" PRIu64 " refused events written, "
		    "%" PRIu64 " not (file full or unwritable)\n",
		    d->dead_lettered, d->dead_letter_dropped);
	if (d->resent_events > 0)
		fprintf(out, "  resent:       %" PRIu64 " events sent again, "
		    "unacknowledged (maybe twice)\n", d->resent_events);
	if (d->filtered > 0)
		fprintf(out, "  filtered:     %" PRIu64 " events its filter keeps "
		    "out (not sent, not lost)\n", d->filtered);
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

static void
print_filelogs(FILE *out, const struct logstats_snap *l)
{
	if (l->nfilelogs > 0)
		fprintf(out, "\nlog watching: %zu filelog%s\n", l->nfilelogs,
		    l->nfilelogs == 1 ? "" : "s");
	for (size_t i = 0; i < l->nfilelogs; i++) {
		const struct logstats_filelog *f = &l->filelogs[i];
		size_t listed = 0;

		fprintf(out, "filelog %s: %s, %zu file%s followed in %s; %" PRIu64
		    " lines read, %" PRIu64 " matched\n", f->name,
		    logstats_state_text(f->state), f->nfiles, f->nfiles == 1 ?
		    "" : "s", f->directory, f->lines_read, f->lines_matched);
		for (size_t j = 0; j < l->nfiles; j++) {
			const struct logstats_file *fi = &l->files[j];

			if (fi->filelog != i)
				continue;
			listed++;
			fprintf(out, "  %s: offset %" PRIu64 "; %" PRIu64 " lines "
			    "read, %" PRIu64 " matched\n", fi->path, fi->offset,
			    fi->lines_read, fi->lines_matched);
		}
		if (listed < f->nfiles)
			fprintf(out, "  (%zu more files not listed)\n",
			    f->nfiles - listed);
	}
}

int
status_print(const struct config *cfg, FILE *out)
{
	struct status_view *v = calloc(1, sizeof(*v));
	const struct status_snap *s;
	int64_t now = now_ms();
	char ago[64];
	int rc = 3;

	if (v == NULL || status_read(cfg, v) < 0)
		goto out;
	s = &v->snap;
	if (!v->have_file) {
		if (v->holder > 0) {
			fprintf(out, "esxwatch: running (pid %ld); no status yet in %s "
			    "(the status writer has not written it yet)\n", v->holder, v->path);
			rc = 0;
		} else
			fprintf(out, "esxwatch: not running (no status in %s)\n", v->path);
		goto out;
	}
	fmt_ago(s->updated_ms, now, ago, sizeof(ago));
	if (v->alive) {
		fprintf(out, "esxwatch: running (pid %ld), status updated %s\n", v->pid, ago);
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
	    " rejected (poison), %" PRIu64 " damaged in the spool", s->dropped_budget,
	    s->dropped_poison, s->dropped_corrupt);
	fmt_ago(s->counts_since_ms, now, ago, sizeof(ago));
	fprintf(out, s->counts_since_ms > 0 ? " (counted since %s)\n" : "\n", ago);
	for (size_t i = 0; i < s->nbroken; i++)
		fprintf(out, "filelog %s: disabled: %s\n", s->broken[i].name,
		    s->broken[i].error);
	if (no_destination_line(s) != NULL)
		fprintf(out, "%s\n", no_destination_line(s));
	for (size_t i = 0; i < s->ndests; i++)
		print_dest(out, &s->dests[i], now);
	print_filelogs(out, &s->logs);
	if (s->ncollectors > 0)
		fprintf(out, "\ncollectors:\n");
	for (size_t i = 0; i < s->ncollectors; i++) {
		const struct sched_collector_stats *c = &s->collectors[i];

		fmt_ago(c->last_run_ms, now, ago, sizeof(ago));
		fprintf(out, "  %-10s %" PRIu64 " runs, %" PRIu64 " errors; last run %s"
		    " (%" PRIu64 " ms)\n", c->name, c->runs, c->errors, ago,
		    c->last_duration_ms);
	}
	status_receiver_print(out, &s->receiver, now);
	status_vsphere_print(out, s->vsphere, s->nvsphere, now);
out:
	free(v);
	return rc;
}

/* ---- esxwatch --status --json ------------------------------------------ */

static void
json_key(struct buf *b, const char *key, const void *base, const struct status_key *k)
{
	const char *p = (const char *)base + k->off;

	if (k->is_signed)
		buf_printf(b, ",\"%s\":%" PRId64, key, *(const int64_t *)(const void *)p);
	else
		buf_printf(b, ",\"%s\":%" PRIu64, key, *(const uint64_t *)(const void *)p);
}

static void
status_json_str(struct buf *b, const char *key, const char *v)
{
	buf_printf(b, ",\"%s\":", key);
	json_put_str(b, v, strlen(v));
}

static void
json_dest(struct buf *b, const struct status_dest *d, bool first)
{
	char summary[sizeof(d->last_error) + 32];

	dest_summary(d, summary, sizeof(summary));
	buf_printf(b, "%s{\"name\":", first ? "" : ",");
	json_put_str(b, d->name, strlen(d->name));
	status_json_str(b, "proto", d->proto);
	status_json_str(b, "state", state_name(d->state));
	status_json_str(b, "summary", summary);
	buf_printf(b, ",\"never_delivered\":%s", never_delivered(d) ? "true" :
	    "false");
	status_json_str(b, "no_destination", d->no_destination);
	for (size_t k = 0; k < NKEYS(dest_keys); k++)
		json_key(b, dest_keys[k].key, d, &dest_keys[k]);
	status_json_str(b, "last_error", d->last_error);
	buf_putc(b, '}');
}

static void
json_filelogs(struct buf *b, const struct logstats_snap *l)
{
	buf_printf(b, ",\"filelogs\":[");
	for (size_t i = 0; i < l->nfilelogs; i++) {
		const struct logstats_filelog *f = &l->filelogs[i];
		bool first = true;

		buf_printf(b, "%s{\"name\":", i == 0 ? "" : ",");
		json_put_str(b, f->name, strlen(f->name));
		status_json_str(b, "directory", f->directory);
		status_json_str(b, "state", logstats_state_name(f->state));
		buf_printf(b, ",\"files_followed\":%zu", f->nfiles);
		for (size_t k = 0; k < NKEYS(filelog_keys); k++)
			json_key(b, filelog_keys[k].key, f, &filelog_keys[k]);
		buf_printf(b, ",\"files\":[");
		for (size_t j = 0; j < l->nfiles; j++) {
			const struct logstats_file *fi = &l->files[j];

			if (fi->filelog != i)
				continue;
			buf_printf(b, "%s{\"path\":", first ? "" : ",");
			json_put_str(b, fi->path, strlen(fi->path));
			for (size_t k = 0; k < NKEYS(file_keys); k++)
				json_key(b, file_keys[k].key, fi, &file_keys[k]);
			buf_putc(b, '}');
			first = false;
		}
		buf_printf(b, "]}");
	}
	buf_putc(b, ']');
}

/*
 * The same facts as status_print(), one JSON object: "running", "pid",
 * "status_file", then (when the file is readable) every figure of the
 * file under its own name, "destinations" and "collectors", arrays of
 * objects, and "filelogs" (each with its "files").
 */
int
status_print_json(const struct config *cfg, FILE *out)
{
	struct status_view *v = calloc(1, sizeof(*v));
	const struct status_snap *s;
	struct buf b;
	int rc = 3;

	buf_init(&b, 4 * STATUS_READ_MAX);	/* escapes grow it */
	if (v == NULL || status_read(cfg, v) < 0)
		goto out;
	s = &v->snap;
	rc = v->alive ? 0 : 3;
	buf_printf(&b, "{\"running\":%s,\"pid\":%ld", v->alive ? "true" : "false", v->pid);
	status_json_str(&b, "status_file", v->path);
	buf_printf(&b, ",\"have_status\":%s", v->have_file ? "true" : "false");
	if (v->have_file) {
		buf_printf(&b, ",\"updated_ms\":%" PRId64 ",\"started_ms\":%" PRId64,
		    s->updated_ms, s->started_ms);
		status_json_str(&b, "spool", spool_name(s));
		if (no_destination_line(s) != NULL) {
			status_json_str(&b, "no_destination", s->dests[0].no_destination);
			status_json_str(&b, "no_destination_text", no_destination_line(s));
		} else
			buf_printf(&b, ",\"no_destination\":null");
		for (size_t k = 0; k < NKEYS(top_keys); k++)
			json_key(&b, top_keys[k].key, s, &top_keys[k]);
		status_receiver_json(&b, &s->receiver);
		buf_printf(&b, ",\"destinations\":[");
		for (size_t i = 0; i < s->ndests; i++)
			json_dest(&b, &s->dests[i], i == 0);
		buf_printf(&b, "],\"disabled_filelogs\":[");
		for (size_t i = 0; i < s->nbroken; i++) {
			buf_printf(&b, "%s{\"name\":", i == 0 ? "" : ",");
			json_put_str(&b, s->broken[i].name, strlen(s->broken[i].name));
			status_json_str(&b, "error", s->broken[i].error);
			buf_putc(&b, '}');
		}
		buf_printf(&b, "],\"collectors\":[");
		for (size_t i = 0; i < s->ncollectors; i++) {
			const struct sched_collector_stats *c = &s->collectors[i];

			buf_printf(&b, "%s{\"name\":", i == 0 ? "" : ",");
			json_put_str(&b, c->name, strlen(c->name));
			for (size_t k = 0; k < NKEYS(coll_keys); k++)
				json_key(&b, coll_keys[k].key, c, &coll_keys[k]);
			buf_putc(&b, '}');
		}
		buf_putc(&b, ']');
		json_filelogs(&b, &s->logs);
		status_vsphere_json(&b, s->vsphere, s->nvsphere);
	}
	buf_printf(&b, "}\n");
	if (b.data != NULL)
		fwrite(b.data, 1, b.len, out);
out:
	buf_free(&b);
	free(v);
	return rc;
}
