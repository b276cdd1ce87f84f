/*
 * segstore_int: what the rooms of the segment store share and the queue
 * does not see: segstore.c (the table), segwrite.c, segread.c and
 * segdir.c.  Not for other modules.
 */
#ifndef ESXWATCH_SEGSTORE_INT_H
#define ESXWATCH_SEGSTORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "segstore.h"

/* segstore.c: segment id's file name (in out, returned); a new segment
 * at the end of the table (NULL: out of memory). */
char		*segstore_path(const struct segstore *, uint64_t id, char *out, size_t len);
struct seg	*segstore_add(struct segstore *, uint64_t id);

/* segread.c: file segment s's descriptor, opened if closed (-1, errno). */
int		 segstore_open_fd(struct segstore *, struct seg *s);

/* segwrite.c: read file segment s into memory (it becomes a memory
 * segment). */
int		 segstore_to_mem(struct segstore *, struct seg *s);

#endif
