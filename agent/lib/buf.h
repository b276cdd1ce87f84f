/*
 * buf: a growable byte buffer with an upper bound.
 *
 * Every buffer the agent fills from untrusted input is a struct buf with a
 * limit, so a runaway command or a huge log line can never make the agent
 * allocate without bound.  Appends past the limit fail with -1 and leave the
 * buffer as it was (callers decide whether to truncate or to give up).
 */
#ifndef ESXWATCH_BUF_H
#define ESXWATCH_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define BUF_DEFAULT_LIMIT (64u * 1024 * 1024)

struct buf {
	char	*data;		/* always NUL-terminated when non-NULL */
	size_t	 len;
	size_t	 cap;
	size_t	 limit;		/* 0 = BUF_DEFAULT_LIMIT */
};

#define BUF_INIT { NULL, 0, 0, 0 }

void	 buf_init(struct buf *, size_t limit);
void	 buf_free(struct buf *);
void	 buf_reset(struct buf *);
int	 buf_reserve(struct buf *, size_t extra);
int	 buf_append(struct buf *, const void *, size_t);
int	 buf_puts(struct buf *, const char *);
int	 buf_putc(struct buf *, char);
int	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 buf_vprintf(struct buf *, const char *, va_list);
/* Detach the data (caller frees); the buffer is left empty. */
char	*buf_steal(struct buf *);

#endif
