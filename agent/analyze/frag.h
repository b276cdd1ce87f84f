/*
 * frag: files vm-support split into pieces, joined (docs/analyze.md).
 *
 * vm-support cuts a large file into NAME.FRAG-00000, NAME.FRAG-00001, ...
 * (five digits, from 0, each piece a plain slice of the bytes); joined in
 * the order of their numbers they are the file.  A set of pieces that does
 * not start at 0, skips a number or has one twice is not joined: the
 * file is a gap, said in one line, never a file with a hole.
 *
 * A frag_store keeps the pieces (and whole files) of the small files a
 * reader wants in memory, in whatever order they come, within a byte
 * budget; frag_join() turns them into files sorted by name.
 */
#ifndef ESXWATCH_FRAG_H
#define ESXWATCH_FRAG_H

#include <stddef.h>

#define FRAG_MAX_INDEX	99999

/* "a.txt.FRAG-00003" -> base "a.txt", 3.  -1 when the name has no
 * .FRAG-NNNNN suffix (base is then the name), or base does not fit. */
int	frag_split(const char *name, char *base, size_t baselen, int *idx);

struct frag_piece {
	char	*base;
	int	 idx;		/* -1: a whole file */
	char	*data;
	size_t	 len;
};

struct frag_store {
	struct frag_piece *v;
	size_t	 n, cap;
	size_t	 bytes, max_bytes;
};

struct frag_file {
	char	*name;
	char	*data;		/* NUL-terminated */
	size_t	 len;
};

void	frag_store_init(struct frag_store *, size_t max_bytes);
void	frag_store_free(struct frag_store *);
/* Keep one file or piece (name as in the archive); takes data (malloc'd)
 * in every case.  0, or -1 over the budget / out of memory. */
int	frag_add(struct frag_store *, const char *name, char *data, size_t len);
/*
 * The files, joined, sorted by name, in *out (caller frees with
 * frag_files_free); a set that cannot be joined is told to gap(arg, line)
 * and left out.  The store is emptied.  Returns the number of files, -1
 * out of memory.
 */
long	frag_join(struct frag_store *, struct frag_file **out,
	    void (*gap)(void *, const char *), void *arg);
void	frag_files_free(struct frag_file *, size_t n);

#endif
