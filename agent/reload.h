/*
 * reload: is a configuration read again on SIGHUP one the admin can have
 * meant?  A file caught while an editor or a config tool rewrites it is
 * empty; a half-written one may parse and still have lost the
 * destinations the queued events wait for.  Either would silently send the
 * backlog elsewhere (all defaults: stdout), so such a file is refused and
 * the running configuration stays (docs/reliability.md).
 */
#ifndef ESXWATCH_RELOAD_H
#define ESXWATCH_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct queue;

/*
 * May ncfg (just loaded from path) replace cur, whose destinations read
 * queue q?  True, or false with the reason in why ("FILE is empty": what
 * the load read held only blanks and comments, ncfg->file_empty).
 */
bool	reload_acceptable(const char *path, const struct config *cur,
	    const struct config *ncfg, struct queue *q, char *why, size_t len);

#endif
