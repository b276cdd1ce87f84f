/*
 * monitor: GET /health and GET /metrics on a loopback address, for
 * Prometheus, Telegraf or a load balancer's probe on the same host
 * (agent/monitor.h).
 *
 * Small on purpose: one thread, one connection at a time, HTTP/1.0 style
 * (one request, one answer, close).  The request is read into a fixed
 * buffer with a deadline, so a slow or silent client delays the next one
 * by MONITOR_IO_MS at most and cannot make the agent allocate; the answer
 * is built in two buffers kept from one request to the next.  The
 * address must be loopback (the configuration refuses anything else):
 * nothing here is meant for the network, and on ESXi no firewall rule
 * opens it.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/json.h"
#include "lib/log.h"
#include "monitor.h"
#include "status_receiver.h"
#include "lib/platform.h"

/* ---- what a request asks for -------------------------------------------- */

enum monitor_route
monitor_route(const char *req, size_t len)
{
	static const struct {
		const char		*path;
		enum monitor_route	 r;
	} paths[] = {
		{ "/health", MR_HEALTH }, { "/api/v1/health", MR_HEALTH },
		{ "/metrics", MR_METRICS }, { "/api/v1/metrics/prometheus", MR_METRICS },
	};
	const char *end = req + len, *p = req, *path;
	size_t mlen, plen;

	while (p < end && *p >= 'A' && *p <= 'Z')
		p++;
	mlen = (size_t)(p - req);
	if (mlen == 0 || p >= end || *p != ' ')
		return MR_BAD_REQUEST;
	path = ++p;
	while (p < end && *p != ' ' && *p != '?' && *p != '\r' && *p != '\n')
		p++;
	plen = (size_t)(p - path);
	if (plen == 0 || *path != '/')
		return MR_BAD_REQUEST;
	if (mlen != 3 || memcmp(req, "GET", 3) != 0)
		return MR_BAD_METHOD;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (strlen(paths[i].path) == plen && memcmp(paths[i].path, path, plen) == 0)
			return paths[i].r;
	return MR_NOT_FOUND;
}

/* ---- /health ------------------------------------------------------------- */

/*
 * A destination is unhealthy when the status says failing — its last send
 * attempt failed, or events have waited STATUS_STALL_MS with nothing
 * delivered (a send that hangs) — or when it has never delivered, has
 * events waiting and an attempt failed.  Idle (nothing to send) is healthy.
 */
bool
monitor_dest_healthy(const struct status_dest *d)
{
	if (d->state == DEST_FAILING)
		return false;
	return !(d->last_success_ms == 0 && d->backlog_events > 0 && d->failed_sends > 0);
}

bool
monitor_healthy(const struct status_snap *s)
{
	for (size_t i = 0; i < s->ndests; i++)
		if (!monitor_dest_healthy(&s->dests[i]))
			return false;
	return true;
}

static const char *
dest_state(enum status_state st)
{
	return st == DEST_FAILING ? "failing" : st == DEST_DELIVERING ?
	    "delivering" : "idle";
}

int
monitor_health(const struct status_snap *s, struct buf *b)
{
	int r;

	r = buf_printf(b, "{\"status\":\"%s\",\"destinations\":[",
	    monitor_healthy(s) ? "ok" : "failing");
	for (size_t i = 0; r == 0 && i < s->ndests; i++) {
		const struct status_dest *d = &s->dests[i];

		r = buf_printf(b, "%s{\"name\":", i == 0 ? "" : ",");
		if (r == 0)
			r = json_put_str(b, d->name, strlen(d->name));
		if (r == 0)
			r = buf_printf(b, ",\"state\":\"%s\",\"healthy\":%s,"
			    "\"backlog_events\":%" PRIu64 ",\"last_success_ms\":%" PRId64 "}",
			    dest_state(d->state), monitor_dest_healthy(d) ? "true" : "false",
			    d->backlog_events, d->last_success_ms);
	}
	return r == 0 ? buf_puts(b, "]}\n") : -1;
}

/* ---- /metrics ------------------------------------------------------------ */

enum mval { V_U64, V_U64_MS, V_I64_MS, V_KB };

/*
 * One sample row: a family (rows of one family follow each other and
 * share HELP and TYPE) and where its value is.  Names follow Fluent
 * Bit's (fluentbit_output_proc_records_total and friends) where one fits.
 */
struct mrow {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;
	enum mval	 kind;
	const char	*reason;	/* a reason="..." label, or NULL */
};

#define S(f)	offsetof(struct status_snap, f)
static const struct mrow top_rows[] = {
	{ "esxwatch_input_events_total", "counter", "Events the collectors "
	  "queued, since start (fluentbit_input_records_total)",
	  S(pushed_events), V_U64, NULL },
	{ "esxwatch_spool_queued_events", "gauge", "Events not yet delivered "
	  "to every destination", S(queued_events), V_U64, NULL },
	{ "esxwatch_spool_queued_bytes", "gauge", "Bytes of them",
	  S(queued_bytes), V_U64, NULL },
	{ "esxwatch_spool_dropped_events_total", "counter", "Events the spool "
	  "dropped: over storage.max_disk_buffer, or damaged records skipped",
	  S(dropped_budget), V_U64, "max_disk_buffer" },
	{ "esxwatch_spool_dropped_events_total", NULL, NULL,
	  S(dropped_corrupt), V_U64, "damaged" },
	{ "esxwatch_spool_torn_tails_total", "counter", "Torn records cut off "
	  "the spool at a start", S(torn_tails), V_U64, NULL },
	{ "esxwatch_process_resident_memory_bytes", "gauge", "Resident memory",
	  S(rss_kb), V_KB, NULL },
	{ "esxwatch_process_cpu_seconds_total", "counter", "User and system "
	  "CPU time", S(cpu_ms), V_U64_MS, NULL },
	{ "esxwatch_process_start_time_seconds", "gauge", "When the agent "
	  "started, Unix time", S(started_ms), V_I64_MS, NULL },
	{ "esxwatch_counts_since_timestamp_seconds", "gauge", "Since when the "
	  "dropped and filtered counts are counted (they survive restarts), Unix "
	  "time", S(counts_since_ms), V_I64_MS, NULL },
};
#undef S

#define D(f)	offsetof(struct status_dest, f)
static const struct mrow dest_rows[] = {
	{ "esxwatch_output_sent_events_total", "counter", "Events the "
	  "destination acknowledged, since start "
	  "(fluentbit_output_proc_records_total)", D(sent_events), V_U64, NULL },
	{ "esxwatch_output_failed_sends_total", "counter", "Send attempts that "
	  "did not deliver; each is retried (fluentbit_output_retries_total)",
	  D(failed_sends), V_U64, NULL },
	{ "esxwatch_output_dropped_events_total", "counter", "Events dropped "
	  "for the destination: over storage.max_disk_buffer, or rejected alone "
	  "by the server (fluentbit_output_dropped_records_total)",
	  D(dropped_budget), V_U64, "max_disk_buffer" },
	{ "esxwatch_output_dropped_events_total", NULL, NULL,
	  D(dropped_poison), V_U64, "rejected" },
	{ "esxwatch_output_not_ingested_events_total", "counter", "Events the "
	  "server accepted but did not ingest", D(not_ingested), V_U64, NULL },
	{ "esxwatch_output_dead_letter_events_total", "counter", "Events the "
	  "destination refused for good: written to its dead_letter file, or "
	  "not (the file full or unwritable)", D(dead_lettered), V_U64,
	  "written" },
	{ "esxwatch_output_dead_letter_events_total", NULL, NULL,
	  D(dead_letter_dropped), V_U64, "dropped" },
	{ "esxwatch_output_resent_events_total", "counter", "Events sent "
	  "again because their acknowledgement never came (maybe delivered "
	  "twice)", D(resent_events), V_U64, NULL },
	{ "esxwatch_output_filtered_events_total", "counter", "Events the "
	  "destination's filter kept out (settled, not sent), since start",
	  D(filtered), V_U64, NULL },
	{ "esxwatch_output_backlog_events", "gauge", "Events queued for the "
	  "destination", D(backlog_events), V_U64, NULL },
	{ "esxwatch_output_backlog_bytes", "gauge", "Bytes of them",
	  D(backlog_bytes), V_U64, NULL },
	{ "esxwatch_output_last_success_timestamp_seconds", "gauge", "The last "
	  "delivery, Unix time; 0 = never", D(last_success_ms), V_I64_MS, NULL },
	{ "esxwatch_output_last_error_timestamp_seconds", "gauge", "The last "
	  "failed attempt, Unix time; 0 = never", D(last_error_ms), V_I64_MS, NULL },
};
#undef D

#define K(f)	offsetof(struct sched_collector_stats, f)
static const struct mrow coll_rows[] = {
	{ "esxwatch_collector_runs_total", "counter", "Collector runs (rounds) "
	  "completed, since start", K(runs), V_U64, NULL },
	{ "esxwatch_collector_errors_total", "counter", "Collector calls that "
	  "failed, since start", K(errors), V_U64, NULL },
	{ "esxwatch_collector_last_duration_seconds", "gauge", "How long the "
	  "last run took", K(last_duration_ms), V_U64_MS, NULL },
	{ "esxwatch_collector_last_run_timestamp_seconds", "gauge", "When the "
	  "last run ended, Unix time; 0 = never", K(last_run_ms), V_I64_MS, NULL },
};
#undef K

/* name is a filelog's first member: put_rows() labels by it */
#define F(f)	offsetof(struct logstats_filelog, f)
static const struct mrow filelog_rows[] = {
	{ "esxwatch_filelog_lines_read_total", "counter", "Lines read from the "
	  "filelog's files, since start", F(lines_read), V_U64, NULL },
	{ "esxwatch_filelog_lines_matched_total", "counter", "Lines a rule "
	  "matched (alerts, and those storm control held back), since start",
	  F(lines_matched), V_U64, NULL },
};
#undef F

/* A label value: \, " and newline escaped (exposition format 0.0.4). */
static int
put_label(struct buf *b, const char *v)
{
	int r = 0;

	for (; r == 0 && *v != '\0'; v++)
		r = *v == '\\' ? buf_puts(b, "\\\\") : *v == '"' ? buf_puts(b, "\\\"") :
		    *v == '\n' ? buf_puts(b, "\\n") : buf_putc(b, *v);
	return r;
}

static int
put_value(struct buf *b, const void *base, const struct mrow *m)
{
	const char *p = (const char *)base + m->off;
	uint64_t u = 0;
	int64_t i = 0;

	if (m->kind == V_I64_MS)
		memcpy(&i, p, sizeof(i));
	else
		memcpy(&u, p, sizeof(u));
	switch (m->kind) {
	case V_KB:
		return buf_printf(b, " %" PRIu64 "\n", u * 1024);
	case V_U64_MS:
		return buf_printf(b, " %" PRIu64 ".%03u\n", u / 1000, (unsigned)(u % 1000));
	case V_I64_MS:
		if (i < 0)
			i = 0;
		return buf_printf(b, " %" PRId64 ".%03u\n", i / 1000, (unsigned)(i % 1000));
	case V_U64:
		break;
	}
	return buf_printf(b, " %" PRIu64 "\n", u);
}

/*
 * The rows of a table: per family HELP and TYPE, then one sample per
 * entity (n of them, stride bytes apart, each starting with its name:
 * a name="..." label), or one unlabelled when named is false.
 */
static int
put_rows(struct buf *b, const struct mrow *rows, size_t nrows, const void *base,
    size_t stride, size_t n, bool named)
{
	int r = 0;

	for (size_t k = 0; r == 0 && k < nrows; k++) {
		const struct mrow *m = &rows[k];

		if (m->help != NULL)
			r = buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", m->name,
			    m->help, m->name, m->type);
		for (size_t i = 0; r == 0 && i < n; i++) {
			const char *e = (const char *)base + i * stride;
			const char *sep = "{";

			r = buf_puts(b, m->name);
			if (r == 0 && named) {
				r = buf_puts(b, "{name=\"");
				if (r == 0)
					r = put_label(b, e);
				if (r == 0)
					r = buf_putc(b, '"');
				sep = ",";
			}
			if (r == 0 && m->reason != NULL)
				r = buf_printf(b, "%sreason=\"%s\"", sep, m->reason);
			if (r == 0 && (named || m->reason != NULL))
				r = buf_putc(b, '}');
			if (r == 0)
				r = put_value(b, e, m);
		}
	}
	return r;
}

int
monitor_metrics(const struct status_snap *s, struct buf *b)
{
	int r;

	r = buf_printf(b, "# HELP esxwatch_build_info The agent's version\n"
	    "# TYPE esxwatch_build_info gauge\n"
	    "esxwatch_build_info{version=\"%s\"} 1\n", ESXWATCH_VERSION);
	if (r == 0)
		r = put_rows(b, top_rows, NELEM(top_rows), s, 0, 1, false);
	if (r == 0)
		r = buf_printf(b, "# HELP esxwatch_spool_memory_only 1 while the "
		    "disk refuses writes (a restart loses the queue)\n"
		    "# TYPE esxwatch_spool_memory_only gauge\n"
		    "esxwatch_spool_memory_only %d\n", s->memory_only ? 1 : 0);
	if (r == 0)
		r = put_rows(b, dest_rows, NELEM(dest_rows), s->dests,
		    sizeof(s->dests[0]), s->ndests, true);
	if (r == 0)
		r = buf_puts(b, "# HELP esxwatch_output_healthy 1 while the "
		    "destination passes /health's rule, 0 when failing\n"
		    "# TYPE esxwatch_output_healthy gauge\n");
	for (size_t i = 0; r == 0 && i < s->ndests; i++) {
		r = buf_puts(b, "esxwatch_output_healthy{name=\"");
		if (r == 0)
			r = put_label(b, s->dests[i].name);
		if (r == 0)
			r = buf_printf(b, "\"} %d\n", monitor_dest_healthy(&s->dests[i]));
	}
	if (r == 0)
		r = put_rows(b, coll_rows, NELEM(coll_rows), s->collectors,
		    sizeof(s->collectors[0]), s->ncollectors, true);
	if (r == 0)
		r = status_vsphere_metrics(b, s->vsphere, s->nvsphere);
	if (r == 0)
		r = put_rows(b, filelog_rows, NELEM(filelog_rows), s->logs.filelogs,
		    sizeof(s->logs.filelogs[0]), s->logs.nfilelogs, true);
	if (r == 0 && s->nbroken > 0)
		r = buf_puts(b, "# HELP esxwatch_filelog_disabled 1: the filelog "
		    "is not read (a regex or filter of its does not compile)\n"
		    "# TYPE esxwatch_filelog_disabled gauge\n");
	for (size_t i = 0; r == 0 && i < s->nbroken; i++) {
		r = buf_puts(b, "esxwatch_filelog_disabled{name=\"");
		if (r == 0)
			r = put_label(b, s->broken[i].name);
		if (r == 0)
			r = buf_puts(b, "\"} 1\n");
	}
	if (r == 0)
		r = status_receiver_metrics(b, &s->receiver);
	return r;
}

/* ---- the answer ---------------------------------------------------------- */

int
monitor_answer(enum monitor_route r, const struct status_snap *s,
    struct buf *body, struct buf *out)
{
	const char *type = "text/plain; charset=utf-8", *reason, *extra = "";
	int code = 200, rc;

	buf_reset(body);
	buf_reset(out);
	switch (r) {
	case MR_HEALTH:
		type = "application/json";
		rc = monitor_health(s, body);
		code = monitor_healthy(s) ? 200 : 503;
		break;
	case MR_METRICS:
		type = "text/plain; version=0.0.4; charset=utf-8";
		rc = monitor_metrics(s, body);
		break;
	case MR_NOT_FOUND:
		code = 404;
		rc = buf_puts(body, "not found: GET /health or /metrics\n");
		break;
	case MR_BAD_METHOD:
		code = 405;
		extra = "Allow: GET\r\n";
		rc = buf_puts(body, "only GET\n");
		break;
	case MR_NO_FIGURES:
		code = 503;
		rc = buf_puts(body, "no figures yet: the agent is starting\n");
		break;
	default:
		code = 400;
		rc = buf_puts(body, "bad request\n");
		break;
	}
	if (rc < 0) {
		buf_reset(body);
		code = 500;
		type = "text/plain; charset=utf-8";
		(void)buf_puts(body, "the answer does not fit\n");
	}
	reason = code == 200 ? "OK" : code == 503 ? "Service Unavailable" :
	    code == 404 ? "Not Found" : code == 405 ? "Method Not Allowed" :
	    code == 400 ? "Bad Request" : "Internal Server Error";
	if (buf_printf(out, "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: "
	    "%zu\r\nCache-Control: no-store\r\nConnection: close\r\n%s\r\n", code,
	    reason, type, body->len, extra) < 0 ||
	    buf_append(out, body->data != NULL ? body->data : "", body->len) < 0)
		return -1;
	return code;
}

/* ---- the server thread --------------------------------------------------- */

struct monitor {
	pthread_t			 thread;
	char				 addr[128];	/* monitor.listen */
	int				 lfd;
	int				 wake[2];	/* monitor_stop() writes a byte */
	struct status_board		*board;		/* the figures */
	struct status_snap		*snap;		/* a copy of its picture */
	struct buf			 body, out;
	char				 req[MONITOR_REQ_MAX];
};

/*
 * Wait until fd is ready for events, until the deadline (monotonic) or a
 * stop: 1 ready, 0 not in time, -1 stopping.
 */
static int
wait_fd(struct monitor *m, int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = { { fd, events, 0 }, { m->wake[0], POLLIN, 0 } };
		int64_t left = deadline - mono_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(p, 2, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[1].revents != 0)
			return -1;
		if (n > 0)
			return 1;
	}
}

/* The request line and headers (up to the blank line) into m->req:
 * its length, or -1 (timeout, stop, the client went away). */
static ssize_t
read_request(struct monitor *m, int fd, bool *too_big)
{
	int64_t deadline = mono_ms() + MONITOR_IO_MS;
	size_t len = 0;

	*too_big = false;
	while (len < sizeof(m->req) - 1) {
		ssize_t n;

		if (wait_fd(m, fd, POLLIN, deadline) != 1)
			return -1;
		n = read(fd, m->req + len, sizeof(m->req) - 1 - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		len += (size_t)n;
		m->req[len] = '\0';
		if (strstr(m->req, "\r\n\r\n") != NULL || strstr(m->req, "\n\n") != NULL)
			return (ssize_t)len;
	}
	*too_big = true;
	return (ssize_t)len;
}

static void
send_all(struct monitor *m, int fd, const char *p, size_t len)
{
	int64_t deadline = mono_ms() + MONITOR_IO_MS;

	while (len > 0) {
		ssize_t n;

		if (wait_fd(m, fd, POLLOUT, deadline) != 1)
			return;
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static void
drain(struct monitor *m, int fd)
{
	int64_t deadline = mono_ms() + 200;
	size_t total = 0;

	while (total < 64 * 1024 && wait_fd(m, fd, POLLIN, deadline) == 1) {
		ssize_t n = read(fd, m->req, sizeof(m->req));

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
	}
}

static void
serve(struct monitor *m, int fd)
{
	enum monitor_route r;
	bool too_big;
	ssize_t n;

	n = read_request(m, fd, &too_big);
	if (n < 0)
		return;
	r = too_big ? MR_BAD_REQUEST : monitor_route(m->req, (size_t)n);
	/* the status writer's picture, the one in the file: never older
	 * than STATUS_PERIOD_MS (status.h) */
	if ((r == MR_HEALTH || r == MR_METRICS) && status_board_get(m->board,
	    STATUS_PERIOD_MS, MONITOR_FRESH_MS, m->snap) < 0)
		r = MR_NO_FIGURES;
	if (monitor_answer(r, m->snap, &m->body, &m->out) < 0)
		return;
	send_all(m, fd, m->out.data, m->out.len);
	(void)shutdown(fd, SHUT_WR);
	/* What the client sent past the request (a body, an oversized
	 * header) is read away for a moment, so the close does not answer
	 * it with a reset that could cost the client our answer. */
	drain(m, fd);
}

static void *
monitor_main(void *arg)
{
	struct monitor *m = arg;

	for (;;) {
		struct pollfd p[2] = { { m->lfd, POLLIN, 0 }, { m->wake[0], POLLIN, 0 } };
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("monitor: poll: %s; no more answers", log_errstr(errno));
			break;
		}
		if (p[1].revents != 0)
			break;
		if ((p[0].revents & POLLIN) == 0)
			continue;
		fd = accept(m->lfd, NULL, NULL);
		if (fd < 0)
			continue;	/* gone before we took it; EMFILE: next time */
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		serve(m, fd);
		close(fd);
	}
	return NULL;
}

static int
set_fd_flags(int fd)
{
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* The listening socket on addr, or -1 with errno set. */
static int
listen_on(const char *addr)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	char why[160];
	int fd, one = 1, e;

	if (monitor_parse_listen(addr, &sa, &salen, why, sizeof(why)) < 0) {
		errno = EINVAL;
		return -1;
	}
	fd = socket(sa.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (set_fd_flags(fd) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, salen) < 0 || listen(fd, 8) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void
monitor_free(struct monitor *m)
{
	if (m->lfd >= 0)
		close(m->lfd);
	if (m->wake[0] >= 0)
		close(m->wake[0]);
	if (m->wake[1] >= 0)
		close(m->wake[1]);
	buf_free(&m->body);
	buf_free(&m->out);
	free(m->snap);
	free(m);
}

struct monitor *
monitor_start(const struct config *cfg, struct status_board *board)
{
	const char *addr = cfg->monitor_listen;
	struct monitor *m;

	if (addr == NULL || *addr == '\0')
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->lfd = m->wake[0] = m->wake[1] = -1;
	m->board = board;
	snprintf(m->addr, sizeof(m->addr), "%s", addr);
	buf_init(&m->body, MONITOR_BODY_MAX);
	buf_init(&m->out, MONITOR_BODY_MAX + 512);
	m->snap = malloc(sizeof(*m->snap));
	if (m->snap == NULL || pipe(m->wake) < 0 || set_fd_flags(m->wake[0]) < 0 ||
	    set_fd_flags(m->wake[1]) < 0) {
		log_error("monitor: cannot start: %s", log_errstr(errno));
		goto err;
	}
	m->lfd = listen_on(addr);
	if (m->lfd < 0) {
		log_error("monitor: cannot listen on %s: %s; the agent goes on "
		    "without /health and /metrics", addr, log_errstr(errno));
		goto err;
	}
	if (platform_thread_start(&m->thread, "esxw-monitor", PLATFORM_STACK_SMALL,
	    monitor_main, m) != 0) {
		log_error("monitor: cannot start its thread");
		goto err;
	}
	log_info("monitor: GET /health and /metrics on %s", addr);
	return m;
err:
	monitor_free(m);
	return NULL;
}

void
monitor_stop(struct monitor *m)
{
	ssize_t n;

	if (m == NULL)
		return;
	do
		n = write(m->wake[1], "x", 1);
	while (n < 0 && errno == EINTR);
	pthread_join(m->thread, NULL);
	monitor_free(m);
}

struct monitor *
monitor_reload(struct monitor *m, const struct config *cfg,
    struct status_board *board)
{
	const char *addr = cfg->monitor_listen != NULL ? cfg->monitor_listen : "";

	if (m != NULL && strcmp(m->addr, addr) == 0 && m->board == board)
		return m;
	monitor_stop(m);
	return monitor_start(cfg, board);
}
