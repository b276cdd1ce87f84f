/*
 * logwatch: follow the host's logs (filelog: in agent.yaml, liagent's
 * [filelog|NAME]) and turn the lines the rule catalogue knows into alert
 * events; with forward: all, every line becomes an event.
 *
 * Pieces: follow.c (files, rotation, bookmarks), logline.c (line headers),
 * rules.c (matching), storm.c (storm suppression), rules/esxi.yaml (the catalogue,
 * built into the binary; rules_catalogue.h says which one is used).
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

#endif
