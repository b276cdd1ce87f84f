/*
 * json: the one JSON string escaper (every encoder: events, cfapi) and the
 * one reader (smartctl --json, Log Insight's responses: make lint keeps
 * json_* readers out of other files).
 */
#ifndef ESXWATCH_JSON_H
#define ESXWATCH_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

/* ---- writing ---- */

/* The most json_esc() writes for n input bytes. */
#define JSON_ESC_MAX(n)	(6 * (n))
/*
 * Write s[0..n) escaped as the inside of a JSON string (no quotes) at o,
 * which has room for JSON_ESC_MAX(n) bytes; returns the new end.  Valid
 * UTF-8 passes as is, every other byte >= 0x80 becomes U+FFFD, control
 * characters are escaped: the output is valid JSON whatever the input.
 * Runs of plain bytes are found eight at a time and copied in one memcpy.
 */
char		*json_esc(char *o, const char *s, size_t n);
/* Append s[0..n) as a JSON string (quotes included), escaped as above.
 * -1 (buffer unchanged) past the buffer's limit. */
int		 json_put_str(struct buf *, const char *s, size_t n);

/* ---- reading ---- */

/*
 * The reader: a small tolerant JSON parser (smartctl --json output, the
 * cfapi and session responses).
 * Tolerant (trailing commas, missing commas) but bounded: JSON_MAX_NODES
 * values, JSON_MAX_DEPTH nesting, JSON_MAX_INPUT bytes.
 */
#define JSON_MAX_NODES	65536
#define JSON_MAX_DEPTH	64
#define JSON_MAX_INPUT	(4u * 1024 * 1024)

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json_node {
	enum json_type	 type;
	const char	*key;		/* member name in the source text, or NULL */
	size_t		 keylen;
	const char	*s;		/* the token (string without quotes) */
	size_t		 len;
	int		 child;		/* first child, -1 */
	int		 next;		/* next sibling, -1 */
};

struct json_doc {
	struct json_node *n;
	int		 count;
};

int		 json_parse(const char *text, size_t len, struct json_doc *,
		    char *err, size_t errlen);
void		 json_free(struct json_doc *);
/* Dotted path of member names below node at ("smartctl.exit_status"). */
int		 json_get(const struct json_doc *, int at, const char *path);
/* Value as a number (JSON number or numeric string); false if not one. */
bool		 json_num(const struct json_doc *, int node, long long *);
/* Value as a string, unescaped (basic escapes; \u as '?'), cut to outlen. */
bool		 json_str(const struct json_doc *, int node, char *out, size_t outlen);
bool		 json_bool(const struct json_doc *, int node, bool *);
/* Is the value the string s, as written (no escapes undone)? */
bool		 json_str_is(const struct json_doc *, int node, const char *s);
/* Value as a string, every escape undone (\uXXXX and surrogate pairs as
 * UTF-8, a lone surrogate as U+FFFD), appended to the buffer (not cut):
 * false if not a string or past the buffer's limit. */
bool		 json_str_buf(const struct json_doc *, int node, struct buf *);

/*
 * Walking a document too big for json_parse (a report of 100,000 events)
 * one value at a time: the members of the object (or the elements of the
 * array) at the start of text[0..len), each as its name (as written, NULL
 * in an array) and the source span of its value, for json_parse or for
 * another walk.  Tolerant as the reader; no node is built, nesting is
 * bounded by JSON_MAX_DEPTH.
 */
struct json_walk {
	const char	*p, *end;
	bool		 obj, done;
};

/* 0, or -1 when the text is not an object or an array. */
int		 json_walk_init(struct json_walk *, const char *text, size_t len);
/* 1: one member, 0: the end of the container, -1: malformed JSON. */
int		 json_walk_next(struct json_walk *, const char **key, size_t *keylen,
		    const char **val, size_t *vallen);

#endif
