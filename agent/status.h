/*
 * status: what the running agent says about itself, for the admin on the
 * ESXi shell (`esxwatch --status`, `--status --json`), for machines (the
 * monitor's /health and /metrics) and for the agent collector.
 *
 * One picture serves the file, --status, /health and /metrics (the agent
 * collector takes its own when it runs).  While the agent runs, a writer
 * (started by main after the shipper, stopped before it) takes a picture
 * of the figures (status_collect()), writes it to storage.directory/status (temp
 * file + rename: a reader never sees half a file) and then puts that same
 * picture up on the status board, which the monitor answers from; the
 * monitor never gathers figures of its own.  What "fresh" means:
 *
 *   - a picture is taken when something changed (status_source.changed
 *     rings: an event queued, a send's outcome), at most every
 *     STATUS_PERIOD_MS, and at least every STATUS_HEARTBEAT_MS: figures
 *     that move without ringing (collector runs, memory, CPU) can be up
 *     to STATUS_HEARTBEAT_MS old in the file and in --status, unless the
 *     monitor asked for a newer picture meanwhile;
 *   - /health and /metrics are never older than STATUS_PERIOD_MS: a
 *     request finding an older picture asks the writer for a new one and
 *     waits for it (the file is rewritten with it before it is served);
 *   - the file and the board hold the same picture, the board's put up
 *     just after the file's rename: once /metrics has shown a picture,
 *     --status shows that one or a newer one (unless the file cannot be
 *     written: that is logged).
 *
 * The format is plain "key: value" lines, one "filelog: NAME" line opening
 * each filelog's block (its " file: PATH" lines each open a block of that
 * file's figures, indented once more), one "dest: NAME" line each
 * destination's, one "collector: NAME" line each collector's
 * (docs/operations.md).
 *
 * Adding a figure: a field in struct status_snap (or status_dest), filled
 * in status_collect() from the module's own stats function, and one row in
 * the key tables of status.c (written, parsed and printed as JSON from
 * there).
 */
#ifndef ESXWATCH_STATUS_H
#define ESXWATCH_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "../collectors/logwatch/logstats.h"
#include "../collectors/receiver/receiver.h"
#include "status_vsphere.h"
#include "scheduler.h"

struct bell;
struct queue;
struct recv_board;
struct shipper;

#define STATUS_PERIOD_MS	2000	/* at most this often */
#define STATUS_HEARTBEAT_MS	60000	/* at least this often */
#define STATUS_STALL_MS		60000	/* backlog and no delivery: failing */
#define STATUS_MAX_DESTS	64
#define STATUS_FILE		"status"
#define STATUS_MAX_BROKEN	16	/* broken filelogs listed */

enum status_state { DEST_IDLE, DEST_DELIVERING, DEST_FAILING };

struct status_dest {
	char		 name[128];
	char		 proto[16];
	enum status_state state;
	uint64_t	 backlog_events, backlog_bytes;
	uint64_t	 sent_events, failed_sends;
	uint64_t	 dropped_budget, dropped_poison;
	uint64_t	 not_ingested;	/* accepted by the server, not ingested */
	uint64_t	 dead_lettered, dead_letter_dropped;	/* its dead_letter file */
	uint64_t	 resent_events;	/* unacknowledged, sent again */
	uint64_t	 filtered;	/* its filter kept them out (not sent) */
	int64_t		 last_success_ms, last_error_ms;	/* 0 = never */
	char		 last_error[512];
	/* a host with no destination: where its events go ("stdout",
	 * "host_syslog"); "" when one is configured */
	char		 no_destination[16];
};

/* A filelog that does not run: its regex or filter does not compile. */
struct status_broken {
	char		 name[80];
	char		 error[512];
};

/*
 * Everything the status writer shows, as one plain struct: status_collect()
 * fills it, the status file, --status, --status --json, the agent
 * collector and the monitor's /health and /metrics read it.  Counters are cumulative
 * since the agent started; logs: per filelog its state, followed files,
 * offsets, lines read and matched (collectors/logwatch/logstats.h).
 */
struct status_snap {
	long		 pid;
	int64_t		 updated_ms, started_ms;
	bool		 have_spool;
	bool		 memory_only;
	uint64_t	 queued_events, queued_bytes, pushed_events;
	uint64_t	 sent_events, failed_sends;
	uint64_t	 dropped_budget, dropped_poison, dropped_corrupt, torn_tails;
	int64_t		 counts_since_ms;	/* the dropped and filtered counts: since */
	uint64_t	 not_ingested;
	uint64_t	 rss_kb, cpu_ms;
	size_t		 ndests;
	struct status_dest dests[STATUS_MAX_DESTS];
	size_t		 nbroken;
	struct status_broken broken[STATUS_MAX_BROKEN];
	struct logstats_snap logs;
	size_t		 ncollectors;
	struct sched_collector_stats collectors[SCHED_MAX_COLLECTORS];
	struct receiver_pic receiver;	/* collector mode; .on false: off */
	size_t		 nvsphere;
	struct status_vsphere vsphere[STATUS_MAX_VSPHERE];
};

/*
 * Where the figures come from: handed in by main (no globals).  q, sh or
 * ct may be NULL (no queue; between a shipper's stop and the next start;
 * no collector figures).
 */
struct status_source {
	struct queue		*q;
	struct shipper		*sh;
	int64_t			 started_ms;	/* wall clock, the process' start */
	const struct config	*cfg;		/* its broken filelogs; may be NULL */
	struct logstats		*logs;		/* the filelogs' figures; NULL: none */
	struct sched_totals	*ct;		/* the collectors' runs */
	struct recv_board	*recv;		/* collector mode's; NULL: none */
	struct vsphere_board	*vs;		/* the vsphere entries; NULL: none */
	/* rung when the figures change (NULL: the writer has its own and
	 * writes every heartbeat) */
	struct bell		*changed;
};

/* Gather the running agent's figures (queue, shipper, process). */
void	status_collect(const struct status_source *, struct status_snap *);
/* Write snap to path atomically (path.tmp + rename, mode 0600). */
int	status_write(const struct status_snap *, const char *path);
/* Parse a status file's text; -1 if it is not one. */
int	status_parse(const char *text, size_t len, struct status_snap *);

/*
 * The status board: the writer's last picture, for readers in the process
 * (the monitor).  It outlives the writers (main keeps it across reloads:
 * between a writer's stop and the next start it holds the stopped one's
 * last picture).
 */
struct status_board;
struct status_board *status_board_new(void);
void	status_board_free(struct status_board *);
/* Put a copy of snap up (a test).  NULL board: nothing. */
void	status_board_put(struct status_board *, const struct status_snap *);
/* Put *snap itself up (malloc'd; the board owns it) and hand back the one
 * it held, or NULL, in *snap (the writer: no copy, no second buffer). */
void	status_board_take(struct status_board *, struct status_snap **snap);
/*
 * A copy of the picture on the board into out.  One put up more than
 * max_age_ms ago: the running writer is asked for a new one, waited for
 * at most wait_ms (with no writer, or past that, the older one is given).
 * Returns 0, or -1 when no picture was ever put up.
 */
int	status_board_get(struct status_board *, int64_t max_age_ms, int wait_ms,
	    struct status_snap *out);

/* The writer thread: reads src (kept by the caller) until stopped, puts
 * each picture up on board (NULL: the file only); the stop writes one
 * last picture. */
struct status_writer;
struct status_writer *status_start(const struct config *,
	    const struct status_source *src, struct status_board *board);
void	status_stop(struct status_writer *);

/*
 * esxwatch --status: print the running agent's state from the status file
 * in the storage directory.  Returns 0 if the agent is running, 3 if not.
 * status_print_json: the same facts as one JSON object.
 */
int	status_print(const struct config *, FILE *);
int	status_print_json(const struct config *, FILE *);

/* The process' resident size (kB) and CPU time (ms). */
uint64_t status_rss_kb(void);
uint64_t status_cpu_ms(void);

#endif
