/*
 * tarstream: a tar archive read as a stream (docs/analyze.md), pushed in
 * as bytes, never unpacked to disk.
 *
 * The tar layer (struct tar) takes the archive's bytes in any pieces:
 * ustar and GNU headers (checksum checked; sizes in octal or GNU base-256),
 * GNU long names ('L'), pax extended headers ('x': path, size; 'g'
 * ignored).  Only regular files are handed on; a directory is silent; a
 * symlink, hard link, device or FIFO, a path that is absolute or has a ".."
 * component, and a member larger than the cap are refused through
 * refused() (its data skipped), never followed or written anywhere.
 *
 * The gzip layer (struct tgz) inflates a .tgz / .tar.gz (several gzip
 * members in a row too) into a tar; input that does not start with the
 * gzip magic is taken as a plain tar.  Both are bounded: a header, a long
 * name or a pax record is at most TAR_META_MAX bytes; memory does not
 * grow with the archive.
 */
#ifndef ESXWATCH_TARSTREAM_H
#define ESXWATCH_TARSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TAR_META_MAX	(64u * 1024)	/* long name / pax header */
#define TAR_PATH_MAX	4096

struct tar_entry {
	const char	*path;		/* as in the archive, "./" removed */
	uint64_t	 size;
	int64_t		 mtime;		/* seconds since the epoch */
};

/* What a reader is told.  Returning -1 from any of them stops the read
 * (tar_feed() returns -1 with the callback's own error unset). */
struct tar_cb {
	/* A regular file: 1 = its data please, 0 = skip it. */
	int	(*member)(void *arg, const struct tar_entry *);
	int	(*data)(void *arg, const char *p, size_t n);
	/* The member's data is complete. */
	int	(*end)(void *arg);
	/* A member not handed on, and why (one line); hostile: what no
	 * honest archive holds (a path or link out of it, a device, a FIFO,
	 * a member over the cap). */
	void	(*refused)(void *arg, const char *path, const char *why,
		    bool hostile);
	void	 *arg;
};

struct tar;

struct tar	*tar_new(const struct tar_cb *, uint64_t max_member);
void		 tar_free(struct tar *);
/* 0, or -1: not a tar / a broken header (tar_error()) or a callback's stop. */
int		 tar_feed(struct tar *, const char *p, size_t n);
/* At the end of input: 0 when the archive ended where a member could
 * end, -1 (tar_error()) when it was cut inside a header or a member. */
int		 tar_finish(struct tar *);
const char	*tar_error(const struct tar *);
/* Members seen (handed on or refused). */
uint64_t	 tar_members(const struct tar *);

struct tgz;

struct tgz	*tgz_new(struct tar *);
void		 tgz_free(struct tgz *);
/* Compressed (or plain tar) bytes in: 0, or -1 (tgz_error()). */
int		 tgz_feed(struct tgz *, const void *p, size_t n);
/* End of input: 0 when both the gzip and the tar ended cleanly. */
int		 tgz_finish(struct tgz *);
const char	*tgz_error(const struct tgz *);

/* "a/./b/" -> "a/b"; -1 when the path is absolute, empty, has a ".."
 * component or a NUL/control byte (what a bundle never holds). */
int		 tar_path_clean(const char *in, char *out, size_t outlen);

/* Whether a link member NAME (clean) to TARGET stays inside the archive:
 * never when absolute; a symlink resolved from NAME's folder, a hard link
 * from the top, ".." never climbing out. */
bool		 tar_link_inside(const char *name, const char *target, bool hard);

#endif
