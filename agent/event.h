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

#include "lib/buf.h"

#define EVENT_TEXT_MAX		(16 * 1024)	/* longer text is cut with a marker */
#define EVENT_TRUNC_MARKER	"...[truncated]"

struct field {
	char	*name;
	char	*value;
};

struct event_chunk;

/*
 * Field names and values live in the event's arena (chunks freed with the
 * event), its first chunk and its first fields in the same allocation as
 * the event: building an event is a few allocations, not two per field.
 * text is the event's own malloc()ed string (event_set_text replaces it)
 * unless text_inline says it is in the arena.  An event built by hand
 * (tests, a copy with another text) has no arena and is never freed with
 * event_free().
 */
struct event {
	int64_t			 timestamp_ms;
	char			*text;
	struct field		*fields;
	size_t			 nfields;
	size_t			 cap;
	struct event_chunk	*arena;		/* newest chunk first */
	bool			 fields_inline;	/* fields in the event's block */
	bool			 text_inline;	/* text in the arena */
};

/* What a sink sends in one go (the shipper builds it from the queue). */
struct batch {
	struct event	**events;
	size_t		  n;
	/*
	 * Where the events come from, when the queue can say (queue_peek):
	 * events[i] is record seq0 + i of the queue src (never 0, never
	 * reused in the process), so two batches with the same src, seq0
	 * and n hold the same events and a sink may encode them once for
	 * all its destinations (output/cfapi.c).  0: unknown (a part of a
	 * batch, a filtered one, a queue without record numbers).
	 */
	uint64_t	  src, seq0;
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
/*
 * The same for a name that is valid by construction: a literal of the
 * agent's own built-in fields (hostname, esxwatch_*...), checked once by
 * the unit tests and in debug builds, not at every call.  A name that
 * comes from configuration or a parser goes through event_set().
 */
int		 event_set_builtin(struct event *, const char *name, const char *value);
int		 event_set_builtin_default(struct event *, const char *name,
		    const char *value);
/*
 * Add a built-in field the event does not have yet (the caller knows: a
 * collector filling a new event): no search for an existing one.  name
 * must have static storage (a literal): the event points at it.
 */
int		 event_add_builtin(struct event *, const char *name, const char *value);
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
/*
 * The same form read back from the spool, whose CRC already vouches that
 * the bytes are what event_serialize() wrote from a valid event: lengths
 * are still checked (a bad length is NULL, never an overrun), names and
 * UTF-8 are not validated again.  One allocation per event.
 */
struct event	*event_decode_spooled(const void *data, size_t len);

#endif
