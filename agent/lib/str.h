/*
 * str: the small string helpers every parser wants, written once.
 * "White space" is isspace()'s; "blanks" are spaces and tabs.
 */
#ifndef ESXWATCH_STR_H
#define ESXWATCH_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* White space cut off both ends of s, in place; the new start. */
char		*str_trim(char *s);
/* The same on the span *p, *n (moves *p, shortens *n). */
void		 str_trim_span(const char **p, size_t *n);
/* s past its leading blanks. */
const char	*str_skip_blanks(const char *s);
/* A decimal count: s[0..n) is one or more digits and fits 64 bits. */
bool		 str_u64n(const char *s, size_t n, uint64_t *v);
/* str_u64n() of the whole string; NULL is no count. */
bool		 str_u64(const char *s, uint64_t *v);
/* str_u64() with white space around the digits allowed (sysfs and esxcli
 * values: "1234\n"); "N/A", "" and "-1" are no count. */
bool		 str_u64_trimmed(const char *s, uint64_t *v);
/* Copy src (NULL as "") into dst[len], cut to fit; always terminated. */
void		 str_copy(char *dst, size_t len, const char *src);

#endif
