/*
 * storage_util: what the datastore, vsan and smart collectors share —
 * remembering the previous state of an entity (in ctx->state, persisted by
 * the agent), reporting a failed host command once as an event, running a
 * tool other than esxcli with a timeout.
 */
#ifndef ESXWATCH_STORAGE_UTIL_H
#define ESXWATCH_STORAGE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"

struct exec_result;

enum storage_seen { STORAGE_FIRST, STORAGE_SAME, STORAGE_CHANGED };

/*
 * Compare cur with what kv holds under key, then store cur.  FIRST: never
 * seen (no change may be reported); CHANGED: prev holds the old value.
 */
enum storage_seen storage_transition(struct kvstore *, const char *key,
		    const char *cur, char *prev, size_t prevlen);

/*
 * A host command failed (already logged, rate-limited).  Emits one event
 * (kind status, severity error) the first time for this cmdkey; nothing
 * more until storage_cmd_ok() saw it work again.  The "failing" mark is
 * kept in ctx->state, so a restart does not repeat the event either.
 */
void		 storage_cmd_failed(struct collector_ctx *, struct emitter *,
		    const char *cmdkey, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
void		 storage_cmd_ok(struct collector_ctx *, const char *cmdkey);

/* Set name to v unless v < 0 (not reported). */
int		 storage_set_num(struct event *, const char *name, long long v);
/* collectors.NAME.timeout, at least 1 second. */
int		 storage_timeout_s(const struct collector_ctx *);

/*
 * Run tool (found with config_find_tool) with args (NULL-terminated,
 * without the program), timeout_s, output capped.  Returns 0 when it ran
 * to an exit status (look at res->status), -1 when it was not found
 * (*missing set), could not start, timed out or was killed (logged,
 * rate-limited, with what).  res is always initialised; free it.
 */
int		 storage_run(const struct collector_ctx *, const char *tool,
		    const char *const args[], int timeout_s, struct exec_result *res,
		    int *missing, char *what, size_t whatlen);

#endif
