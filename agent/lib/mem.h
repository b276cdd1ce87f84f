/*
 * mem: allocation that does not fail, written once.  Every x* function
 * ends the agent (a line on stderr, then abort()) when memory runs out,
 * so its callers never test for NULL: for code where nothing sensible is
 * left to do without the memory (the configuration, the rule catalogue).
 * Code that must survive a failed allocation (the parsers of the host's
 * output, the event path) calls malloc()/strndup() and tests.
 */
#ifndef ESXWATCH_MEM_H
#define ESXWATCH_MEM_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xrealloc(void *, size_t);
/* A copy of s; NULL for NULL (an optional value stays absent). */
char	*xstrdup(const char *s);
/* A copy of s[0..n), NUL-terminated. */
char	*xstrndup(const char *s, size_t n);

#endif
