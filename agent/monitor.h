/*
 * monitor: the optional health endpoint for machines (docs/operations.md
 * "Health for machines").  monitor.listen (off by default) names a
 * loopback address; one thread answers, one connection at a time:
 *
 *   GET /health, /api/v1/health                 200 or 503 (delivery), JSON
 *   GET /metrics, /api/v1/metrics/prometheus    Prometheus text format 0.0.4
 *
 * The figures are the status writer's picture, the one in the status
 * file, taken from the status board and never older than STATUS_PERIOD_MS
 * (status.h): /metrics says what --status --json says.  The monitor never
 * gathers figures itself, so it never reads the queue or the shipper and
 * a reload need not hold it off them.
 * Anything else is 404, a method other than GET 405.  A request is read
 * into a fixed 4 KB buffer within MONITOR_IO_MS; nothing of it is logged.
 */
#ifndef ESXWATCH_MONITOR_H
#define ESXWATCH_MONITOR_H

#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "config/config.h"
#include "config/config_schema.h"
#include "config/config_section.h"
#include "status.h"

#define MONITOR_REQ_MAX		4096	/* bytes of request line and headers */
#define MONITOR_IO_MS		2000	/* to read a request, and to send the answer */
#define MONITOR_BODY_MAX	(1024 * 1024)
/* to wait for the status writer's new picture (it takes milliseconds) */
#define MONITOR_FRESH_MS	1000

/* The monitor: section, a registry row (config/config_section.h) whose
 * keys are rows onto struct config. */
extern const struct cfg_section monitor_section;

/*
 * "HOST:PORT" where HOST is loopback: an IPv4 address in 127.0.0.0/8,
 * [::1] or localhost (127.0.0.1; not looked up).  0 and *sa, *salen
 * filled; -1 with the reason in why.
 */
int	monitor_parse_listen(const char *s, struct sockaddr_storage *sa,
	    socklen_t *salen, char *why, size_t whylen);

/* Start answering on cfg's monitor.listen from board (kept by the
 * caller).  NULL when it is off, or after logging why it cannot listen
 * (the agent goes on without it). */
struct monitor;
struct monitor	*monitor_start(const struct config *, struct status_board *board);
/* Stop at once (an unfinished request is dropped) and close the socket. */
void	 monitor_stop(struct monitor *);
/* After a reload: m itself when monitor.listen is unchanged, else m
 * stopped and a monitor on the new address (NULL when off or failed). */
struct monitor	*monitor_reload(struct monitor *m, const struct config *,
		    struct status_board *board);

/* ---- the pieces, for the tests ------------------------------------------ */
enum monitor_route {
	MR_HEALTH, MR_METRICS, MR_NOT_FOUND, MR_BAD_METHOD, MR_BAD_REQUEST,
	MR_NO_FIGURES	/* not a route: no picture on the board yet (503) */
};
/* What a request (its line and headers, len bytes) asks for. */
enum monitor_route monitor_route(const char *req, size_t len);
/* The /health rule for one destination and for the agent (docs). */
bool	 monitor_dest_healthy(const struct status_dest *);
bool	 monitor_healthy(const struct status_snap *);
/* The /metrics and /health bodies; -1 when out of room. */
int	 monitor_metrics(const struct status_snap *, struct buf *);
int	 monitor_health(const struct status_snap *, struct buf *);
/* The whole answer to r (status line, headers, body) into out, body a
 * scratch buffer; s is read for MR_HEALTH and MR_METRICS.  Returns the
 * HTTP status code. */
int	 monitor_answer(enum monitor_route r, const struct status_snap *s,
	    struct buf *body, struct buf *out);

#endif
