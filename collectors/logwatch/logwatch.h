/*
 * logwatch: follow the host's logs (filelog: in agent.yaml, liagent's
 * [filelog|NAME]) and turn the lines the rule catalogue knows into alert
 * events; with forward: all, every line becomes an event.
 *
 * Pieces: follow.c (files, rotation, bookmarks), logline.c (line headers),
 * rules.c (matching, storm suppression), rules/esxi.yaml (the catalogue).
 * docs/events.md (logwatch) and docs/rules.md describe what users see.
 */
#ifndef ESXWATCH_LOGWATCH_H
#define ESXWATCH_LOGWATCH_H

#include <stddef.h>

#include "../collector.h"

/* Per collect() call and file: at most this much, then "call me again". */
#define LOGWATCH_MAX_BYTES	(8u * 1024 * 1024)
#define LOGWATCH_MAX_LINES	50000
/* Storm suppression: per rule and entity, LIMIT alerts per WINDOW. */
#define LOGWATCH_STORM_LIMIT	10
#define LOGWATCH_STORM_WINDOW_MS 60000
#define LOGWATCH_MAX_FILES	256	/* followed files per filelog */

extern const struct collector collector_logwatch;

/*
 * The catalogue to load: rules_file if set, else $ESXWATCH_RULES_FILE if
 * set (the source tree's tests and `make run` point it at
 * collectors/logwatch/rules/esxi.yaml), else the first that exists of
 * /opt/esxwatch/share/rules/esxi.yaml, /usr/share/esxwatch/rules/esxi.yaml,
 * <binary's dir>/../share/rules/esxi.yaml,
 * <binary's dir>/../share/esxwatch/rules/esxi.yaml (any install prefix).
 * Returns 0 and the path, or -1 (out names what was looked for) if none
 * exists.
 */
int	logwatch_rules_path(const char *rules_file, char *out, size_t outlen);

#endif
