/*
 * kvstore: a small persistent string map, one file, saved atomically
 * (temp file + fsync + rename, mode 0600).  Collectors keep their previous
 * observations here (link states, counters) so a restart neither replays
 * nor hides a change.  Format: one "key\tvalue\n" per entry, with \t, \n
 * and \\ escaped as \\t, \\n, \\\\.
 */
#ifndef ESXWATCH_KVSTORE_H
#define ESXWATCH_KVSTORE_H

#include <stdbool.h>
#include <stddef.h>

struct kvstore;

/* Open (load if it exists) path.  path NULL = memory only. */
struct kvstore	*kv_open(const char *path);
void		 kv_close(struct kvstore *);
const char	*kv_get(const struct kvstore *, const char *key);
int		 kv_set(struct kvstore *, const char *key, const char *value);
int		 kv_del(struct kvstore *, const char *key);
/* Keys starting with prefix, in sorted order; callback returns non-0 to stop. */
int		 kv_foreach(const struct kvstore *, const char *prefix,
		    int (*cb)(void *arg, const char *key, const char *value), void *arg);
bool		 kv_dirty(const struct kvstore *);
/* Write if dirty. */
int		 kv_save(struct kvstore *);

#endif
