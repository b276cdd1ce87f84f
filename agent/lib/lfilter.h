/*
 * lfilter: liagent's filter expressions (filelog whitelist/blacklist and
 * the [server] filter; docs/parsers.md "Filters").
 *
 *   expr    := or
 *   or      := and { ("or" | "||") and }
 *   and     := not { ("and" | "&&") not }
 *   not     := ("not" | "!") not | cmp
 *   cmp     := value [ ("==" | "!=" | "<" | "<=" | ">" | ">=") value ]
 *   value   := FIELD | "string" | number | "(" expr ")"
 *
 * A comparison is numeric when both sides read as numbers (so
 * 123.0 == "000123"), else a case-sensitive comparison of the strings, as
 * liagent documents.  A lone value is true when it is a non-zero number
 * or a non-empty string.  A field the event does not have makes the
 * expression "not evaluable" (lfilter_eval returns -1): a whitelist then
 * drops the event and a blacklist keeps it, as liagent does.
 */
#ifndef ESXWATCH_LFILTER_H
#define ESXWATCH_LFILTER_H

#include <stddef.h>

struct lfilter;

/* Value of field name, or NULL when the event has none. */
typedef const char *(*lfilter_get_fn)(void *arg, const char *name);

/* NULL and a message with the byte offset on a syntax error. */
struct lfilter	*lfilter_compile(const char *expr, char *err, size_t errlen,
		    size_t *erroff);
void		 lfilter_free(struct lfilter *);
/* 1 true, 0 false, -1 not evaluable (a field is missing). */
int		 lfilter_eval(const struct lfilter *, lfilter_get_fn, void *arg);

#endif
