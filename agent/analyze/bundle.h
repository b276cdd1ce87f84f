/*
 * bundle: a vm-support bundle read once (docs/analyze.md).
 *
 * A .tgz / .tar.gz is streamed (tarstream.h): never unpacked to disk,
 * members read in archive order.  An unpacked directory is walked without
 * following a symbolic link anywhere.  Either way:
 *
 *   - the top folder esx-<host>-<date>... is taken off every path;
 *   - commands/ files the host kind reads (host/bundle.h) are kept in
 *     memory (at most BUNDLE_CMD_MAX each, BUNDLE_CMDS_MAX in all), their
 *     .FRAG-NNNNN pieces joined in order (frag.h);
 *   - logs under var/run/log/ (6.5+) and var/log/ (6.0): NAME.log,
 *     rotated NAME.N and NAME.N.gz (inflated on the fly), pieces joined,
 *     are handed on line by line (cut at BUNDLE_LINE_MAX), never loaded
 *     whole; in a directory a log's rotations go oldest first;
 *   - what cannot be used is a gap line (refused members, a broken piece
 *     set, a damaged .gz log), never a silent hole.
 */
#ifndef ESXWATCH_BUNDLE_H
#define ESXWATCH_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frag.h"

#define BUNDLE_CMD_MAX		(32u * 1024 * 1024)
#define BUNDLE_CMDS_MAX		(256u * 1024 * 1024)
#define BUNDLE_MEMBER_MAX	(8ull * 1024 * 1024 * 1024)
#define BUNDLE_LINE_MAX		(16 * 1024)

struct bundle_log_cb {
	/* A log file starts: path in the bundle ("var/run/log/vmkernel.0.gz"),
	 * program ("vmkernel"), rotation (-1: the current NAME.log). */
	void	(*open)(void *arg, const char *path, const char *program, int rot);
	void	(*line)(void *arg, const char *p, size_t n, bool truncated);
	void	(*close)(void *arg);
	void	(*gap)(void *arg, const char *line);
	/* progress: bytes of the bundle read so far */
	void	(*progress)(void *arg, uint64_t bytes);
	void	 *arg;
};

struct bundle {
	char			 top[256];	/* the top folder, "" if none */
	struct frag_file	*cmds;		/* commands/ files kept, by name */
	size_t			 ncmds;
	int64_t			 time_s;	/* the newest commands/ file's mtime */
	uint64_t		 logs_seen;
	bool			 incident_key;	/* vm-support-incident-key present */
	char			 err[512];	/* why it is not (wholly) readable */
	char			 hostile[400];	/* the first hostile member */
};

/*
 * Read path (a file or a directory).  Returns 0 (every part read), 1 (read
 * in part: b->err says why, what was read is there, gaps said), -1 (not a
 * bundle or not readable at all: b->err).
 */
int		 bundle_read(const char *path, const struct bundle_log_cb *,
		    struct bundle *b);
void		 bundle_free(struct bundle *);
/* A kept commands/ file ("uname_-a.txt"), or NULL. */
const char	*bundle_cmd(const struct bundle *, const char *name, size_t *len);
/* Whether commands/NAME is one the analysis reads. */
bool		 bundle_cmd_wanted(const char *name);
/* "var/run/log/vmkernel.0.gz" -> program "vmkernel", rotation 0, gz. */
int		 bundle_log_name(const char *rel, char *program, size_t len,
		    int *rot, bool *gz);

#endif
