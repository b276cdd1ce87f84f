/*
 * rx: the agent's one regex engine, PCRE2 (Perl-compatible, as liagent's
 * regexes are).  Rules, event_marker, parser regexes and include filters
 * all compile through here, so the limits and the JIT policy are in one
 * place (docs/configuration.md, "Regular expressions").
 *
 * Cost is bounded by PCRE2 itself, per pattern: a match limit (calls of the
 * internal match function, RX_MATCH_LIMIT), a depth limit (backtracking
 * depth, RX_DEPTH_LIMIT) and a heap limit (RX_HEAP_LIMIT_KB).  A match that
 * hits a limit is "no match" for the caller and returns RX_LIMIT, so the
 * caller can say so once; it never hangs the collecting thread.
 *
 * JIT: every pattern is JIT-compiled when the platform lets us map
 * executable memory; where it does not (ESXi's userworld, systemd's
 * MemoryDenyWriteExecute=yes, SELinux execmem) pcre2_jit_compile() fails
 * and the pattern runs in the interpreter: same results, lower speed.
 * ESXWATCH_NO_JIT=1 in the environment forces the interpreter (benchmarks
 * and tests measure both).  The static ESXi build uses the interpreter
 * unless ESXWATCH_JIT=1 (agent/lib/rx.c, rx_init).
 *
 * Thread safety: a compiled struct rx is read-only after rx_compile(); the
 * match data is per thread.
 */
#ifndef ESXWATCH_RX_H
#define ESXWATCH_RX_H

#include <stdbool.h>
#include <stddef.h>

#define RX_MATCH_LIMIT		1000000u
#define RX_DEPTH_LIMIT		10000u
#define RX_HEAP_LIMIT_KB	4096u
#define RX_MAX_GROUPS		31	/* capture groups a pattern may have */
#define RX_PATTERN_MAX		4096	/* bytes */

/* rx_compile() flags */
#define RX_CASELESS	0x1u
#define RX_ANCHORED	0x2u

/* rx_match() results besides the number of groups set (>= 1) */
#define RX_NOMATCH	0
#define RX_LIMIT	(-1)	/* a match/depth/heap limit was hit */
#define RX_ERROR	(-2)	/* any other matching error */

struct rx;

struct rx_span {
	long	start;	/* -1 when the group did not take part */
	long	end;
};

/*
 * Compile pattern (NUL-terminated, UTF-8 not required: bytes).  NULL on
 * error with a message in err and the byte offset of the problem in
 * *erroff (when erroff is not NULL).
 */
struct rx	*rx_compile(const char *pattern, unsigned flags, char *err,
		    size_t errlen, size_t *erroff);
void		 rx_free(struct rx *);

/*
 * Match subject[0..len) from byte start.  spans (may be NULL) receives up to
 * nspans groups, group 0 = the whole match.  Returns the number of groups
 * filled (>= 1), RX_NOMATCH, RX_LIMIT or RX_ERROR.
 */
int		 rx_match(const struct rx *, const char *subject, size_t len,
		    size_t start, struct rx_span *spans, size_t nspans);
/* The same, true on a match (a limit or error is no match). */
bool		 rx_test(const struct rx *, const char *subject, size_t len);

size_t		 rx_groups(const struct rx *);	/* capture groups, without 0 */
/* Named groups: count, and the i-th (name, group number). */
size_t		 rx_names(const struct rx *);
const char	*rx_name_at(const struct rx *, size_t i, size_t *group);
/* Group number of name, or -1. */
int		 rx_group_of(const struct rx *, const char *name);
bool		 rx_jitted(const struct rx *);
const char	*rx_pattern(const struct rx *);

/* The engine's version, e.g. "PCRE2 10.42 (JIT)" for logs and --version. */
const char	*rx_engine(void);

#endif
