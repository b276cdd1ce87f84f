/*
 * str: see str.h.
 */
#include <ctype.h>
#include <string.h>

#include "str.h"

char *
str_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	return s;
}

void
str_trim_span(const char **p, size_t *n)
{
	while (*n > 0 && isspace((unsigned char)**p)) {
		(*p)++;
		(*n)--;
	}
	while (*n > 0 && isspace((unsigned char)(*p)[*n - 1]))
		(*n)--;
}

const char *
str_skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

bool
str_u64n(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)((unsigned char)s[i] - '0');

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

bool
str_u64(const char *s, uint64_t *v)
{
	return s != NULL && str_u64n(s, strlen(s), v);
}

bool
str_u64_trimmed(const char *s, uint64_t *v)
{
	size_t n;

	if (s == NULL)
		return false;
	n = strlen(s);
	str_trim_span(&s, &n);
	return str_u64n(s, n, v);
}

void
str_copy(char *dst, size_t len, const char *src)
{
	size_t n = src != NULL ? strlen(src) : 0;

	if (len == 0)
		return;
	if (n >= len)
		n = len - 1;
	if (n > 0)
		memcpy(dst, src, n);
	dst[n] = '\0';
}
