/*
 * regexcheck: the cost bound every rule regex must meet before regcomp()
 * sees it (glibc's regcomp copies the operand of every repetition, so
 * stacked or nested repetitions can take gigabytes).  Used by the
 * configuration check and by the logwatch rules engine alike.
 */
#ifndef ESXWATCH_REGEXCHECK_H
#define ESXWATCH_REGEXCHECK_H

#include <stddef.h>

/* NULL if re is affordable; else why not, with *at the offset it concerns. */
const char	*regex_cost_refused(const char *re, size_t *at);

#endif
