/*
 * mem: see mem.h.  abort(), not exit(): out of memory is no orderly end,
 * and a core file says where it happened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

static void
out_of_memory(void)
{
	fputs("esxwatch: out of memory\n", stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		out_of_memory();
	return q;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xstrdup(const char *s)
{
	return s == NULL ? NULL : xstrndup(s, strlen(s));
}
