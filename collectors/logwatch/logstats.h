/*
 * logstats: what log watching has done per filelog, as one plain table
 * that readers copy (docs/operations.md, "Log watching").
 *
 * The logwatch collector publishes its picture (a struct logstats_snap,
 * under the name LOGSTATS_FIGURES: collector.h's agent_figures.publish)
 * after every collect();
 * the status writer (status_collect(), into struct status_snap) and the
 * monitor's /metrics read a copy with logstats_read().  main owns the
 * table for the life of the process, so a reload (logwatch stopped and
 * started again) continues the counters: they are cumulative since the
 * agent started.  One mutex; nobody holds it while doing anything else.
 */
#ifndef ESXWATCH_LOGSTATS_H
#define ESXWATCH_LOGSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct filelog_conf;

#define LOGSTATS_FIGURES	"filelogs"	/* its name in agent_figures.publish */
#define LOGSTATS_MAX_FILELOGS	64
#define LOGSTATS_MAX_FILES	256	/* followed files listed, all filelogs */
#define LOGSTATS_NAME_MAX	65	/* a filelog name: 64 + NUL */
#define LOGSTATS_PATH_MAX	256	/* longer paths are cut ("..." at the end) */

/* What a filelog's last look at its directory found. */
enum logstats_state {
	LOGSTATS_OK,		/* listed; at least one file matches */
	LOGSTATS_NO_DIR,	/* directory missing (or not a directory) */
	LOGSTATS_UNREADABLE,	/* directory there, cannot be listed */
	LOGSTATS_NO_MATCH,	/* listed; no file matches include/exclude */
};

/* One followed file. */
struct logstats_file {
	char		 path[LOGSTATS_PATH_MAX];
	size_t		 filelog;	/* index in logstats_snap.filelogs */
	uint64_t	 offset;	/* bytes of the file read so far */
	uint64_t	 lines_read;	/* lines read from it, since start */
	uint64_t	 lines_matched;	/* of those, lines a rule matched */
};

/* One filelog (filelog.NAME). */
struct logstats_filelog {
	char		 name[LOGSTATS_NAME_MAX];
	char		 directory[LOGSTATS_PATH_MAX];
	enum logstats_state state;
	uint64_t	 lines_read;	/* every line of its files, since start */
	/* lines a rule matched: alerts sent, and those storm control or
	 * the twin check held back */
	uint64_t	 lines_matched;
	size_t		 nfiles;	/* followed (more than listed if full) */
};

/*
 * The table: filelogs, then their files (each names its filelog).  In a
 * logstats_publish() picture, lines_read and lines_matched are what was
 * read since the previous publish; in what logstats_read() returns, the
 * totals since start.
 */
struct logstats_snap {
	size_t			 nfilelogs, nfiles;
	struct logstats_filelog	 filelogs[LOGSTATS_MAX_FILELOGS];
	struct logstats_file	 files[LOGSTATS_MAX_FILES];
};

struct logstats;

struct logstats	*logstats_new(void);
void		 logstats_free(struct logstats *);
/* Replace the table by pic, its line counts added to the totals of the
 * filelogs and files of the same name and path (others are gone). */
void		 logstats_publish(struct logstats *, const struct logstats_snap *pic);
/* Ring b (agent/lib/bell.h: the status writer's) when a publish changes the
 * table: lines read, a filelog's state or files.  Before logwatch starts. */
struct bell;
void		 logstats_set_bell(struct logstats *, struct bell *);
/* A copy of the table (the rows in use: out's others are left as they are). */
void		 logstats_read(struct logstats *, struct logstats_snap *out);

/* src into a LOGSTATS_PATH_MAX field; a longer one is cut, ending "...". */
void		 logstats_copy_path(char *dst, const char *src);

/*
 * Log what a filelog's look at its directory found, for logwatch to call
 * once per change: a directory missing, unreadable or without a matching
 * file is a warning (at start too; off ESXi, info for ESXi's own logs in
 * /var/log),
 * files found an info line ("now following N files" when again).  err:
 * the errno of the failed stat() or opendir().
 */
void		 logstats_tell(const struct filelog_conf *, enum logstats_state,
		    bool again, size_t nfiles, int err, bool esxi);

/* "ok", "directory_missing", "unreadable", "no_match" (status file, JSON),
 * and the words --status prints. */
const char	*logstats_state_name(enum logstats_state);
const char	*logstats_state_text(enum logstats_state);
/* The state of a name; -1 if none. */
int		 logstats_state_parse(const char *, enum logstats_state *);

#endif
