/*
 * event: what collectors produce and sinks ship (docs/events.md).
 *
 * An event is a text line, a timestamp (ms since the epoch, UTC) and an
 * ordered list of string fields with unique names matching
 * ^[a-z_][a-z0-9_]*$ that are never text, timestamp, source or event_type.
 * event_set() enforces this, so every sink may rely on it.
 */
#ifndef ESXWATCH_EVENT_H
#define ESXWATCH_EVENT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define EVENT_TEXT_MAX		(16 * 1024)	/* longer text is cut with a marker */
#define EVENT_TRUNC_MARKER	"...[truncated]"

struct field {
	char	*name;
	char	*value;
};

struct event {
	int64_t		 timestamp_ms;
	char		*text;
	struct field	*fields;
	size_t		 nfields;
	size_t		 cap;
};

/* What a sink sends in one go (the shipper builds it from the queue). */
struct batch {
	struct event	**events;
	size_t		  n;
};

int64_t		 now_ms(void);

/* ts_ms 0 = now.  text is copied, made valid UTF-8, cut to EVENT_TEXT_MAX. */
struct event	*event_new(int64_t ts_ms, const char *text);
struct event	*event_newf(int64_t ts_ms, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
struct event	*event_vnewf(int64_t ts_ms, const char *fmt, va_list);
void		 event_free(struct event *);
struct event	*event_dup(const struct event *);

/* Set (add or replace) a field.  The value is made valid UTF-8.  Returns -1
 * on an invalid or reserved name (and logs it: a bug, not input). */
int		 event_set(struct event *, const char *name, const char *value);
int		 event_setf(struct event *, const char *name, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
int		 event_set_i64(struct event *, const char *name, int64_t v);
/* Set only if the event has no such field yet. */
int		 event_set_default(struct event *, const char *name, const char *value);
const char	*event_get(const struct event *, const char *name);
int		 event_set_text(struct event *, const char *text);

bool		 field_name_valid(const char *name);
/* Lower-case, [^a-z0-9_] -> '_', '_' before a leading digit or a reserved
 * name: 0 unchanged, 1 changed, -1 unusable.  out holds FIELD_NAME_MAX+1. */
int		 field_name_normalize(const char *in, char *out, size_t outlen);
void		 event_unset(struct event *, const char *name);

/* The flat JSON object of docs/events.md: {"timestamp":N,"text":"..",f:".."}.
 * Appends to out, no trailing newline. */
int		 event_to_json(const struct event *, struct buf *out);

/* Compact binary form used by the queue/spool (not a wire format). */
int		 event_serialize(const struct event *, struct buf *out);
struct event	*event_deserialize(const void *data, size_t len);

#endif
