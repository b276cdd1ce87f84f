/*
 * deadletter: what a destination refuses for good (the poison the shipper
 * isolated to the single event, or an item a per-item sink answered as
 * refused) appended to the destination's `dead_letter` file as one JSON
 * line, so an admin can see and replay it (docs/outputs.md "Dead letter"):
 *
 *   {"time":"2026-12-07T05:40:00.123Z","destination":"server",
 *    "proto":"http","reason":"HTTP 400 ...","event":{the flat JSON of the
 *    file sink: timestamp, text, fields}}
 *
 * The file is made 0600 and never grows past max_bytes: a line that would
 * cross the bound is not written, and the caller counts it (the event is
 * still counted as dropped_poison: never a silent loss).
 */
#ifndef ESXWATCH_DEADLETTER_H
#define ESXWATCH_DEADLETTER_H

#include <stdint.h>

#include "event.h"

enum dl_result { DL_WRITTEN, DL_FULL, DL_ERROR };

/* Append ev's line to path (made 0600 if new; a file readable by others is
 * made 0600).  now_ms: the time written.  err gets the reason of DL_ERROR. */
enum dl_result	deadletter_append(const char *path, int64_t max_bytes,
		    const char *dest, const char *proto, const char *reason,
		    const struct event *ev, int64_t now_ms, char *err,
		    size_t errlen);

#endif
