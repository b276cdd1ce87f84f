/*
 * follow: read a growing log file line by line across rotations, and say
 * where we are in a form that survives a restart (a bookmark).
 *
 * Identity of a file = inode + CRC32 of its first bytes (up to 256, once
 * that many exist), so a file replaced by another one that got the same
 * inode is not mistaken for the old one.
 *
 * Rotation, as ESXi and logrotate do it:
 *   - rename (+ gzip to NAME.0.gz) and a new file: the old file is still
 *     open here, so it is read to its end, then every rotated copy newer
 *     than it (more rotations may have come before the next poll), before
 *     the new one is started;
 *   - copytruncate: the file shrinks below our offset (or its first bytes
 *     change); the lines between our offset and the truncation are read
 *     from the rotated copy (NAME.0.gz, NAME.log.1, ...), found by its
 *     fingerprint, then the file is read from its start;
 *   - while the agent was down: the bookmark's file is looked for among
 *     the rotated copies (gzip or plain) by fingerprint, read from the
 *     bookmark's offset, then every newer copy, then the current file.
 * No line is lost, none is read twice (as long as a rotated copy is still
 * there: ESXi keeps 8 by default).
 *
 * Lines longer than FOLLOW_LINE_MAX are cut there (the callback is told)
 * and the rest up to the newline is skipped, never split into pieces.
 */
#ifndef ESXWATCH_FOLLOW_H
#define ESXWATCH_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FOLLOW_LINE_MAX		(16 * 1024)
#define FOLLOW_FP_LEN		256
#define FOLLOW_POS_MAX		128	/* bookmark string size */

enum follow_start {
	FOLLOW_HEAD,		/* read the file from its start */
	FOLLOW_TAIL,		/* only what is written from now on */
};

/* Called for every line (no newline).  truncated: the line was longer than
 * FOLLOW_LINE_MAX and this is its start. */
typedef void	(*follow_line_fn)(void *arg, const char *line, size_t len,
		    bool truncated);

struct follow;

struct follow	*follow_new(const char *path);
void		 follow_free(struct follow *);
/*
 * Where to begin: a bookmark string from follow_pos() (resumed if it still
 * names this file, else recovered from the rotated copies), or when bm is
 * NULL or unparsable, `start`.
 */
void		 follow_start(struct follow *, const char *bm, enum follow_start start);
/*
 * Read what is new, at most max_bytes / max_lines from the live file (0 =
 * no bound; rotated copies are always read to their end).  Returns 1 when
 * more is pending, 0 when everything was read, -1 on an error (logged).
 */
int		 follow_read(struct follow *, size_t max_bytes, size_t max_lines,
		    follow_line_fn cb, void *arg);
/* The bookmark for where the next read will begin; "" before the file was
 * ever opened. */
void		 follow_pos(const struct follow *, char *out, size_t outlen);

/* Bytes of the file read so far (where the next read begins); 0 before
 * the file was ever opened. */
uint64_t	 follow_offset(const struct follow *);

/*
 * The rotated copies of path, newest first: for dir/NAME.log,
 * NAME.0.gz ... NAME.9.gz (ESXi), NAME.log.0 ... and NAME.log.1[.gz] ...
 * (logrotate).  Fills out with at most max names (caller frees), returns
 * how many exist.
 */
size_t		 follow_rotated(const char *path, char **out, size_t max);

#endif
