/*
 * rules internals shared by rules.c and rules_scan.c: the literal scanner
 * (which rules' literals occur in a line, and where first) and the regex
 * analysis that says how far before its literal a match can start.
 */
#ifndef ESXWATCH_RULES_INT_H
#define ESXWATCH_RULES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RSCAN_BITS	16			/* hash bits of the gram filters */
#define RSCAN_HEADS	1024			/* chains of grams */
#define RSCAN_STEP_MAX	4			/* windows skipped + 1 */

struct rscan_ent {
	uint32_t	 gram;		/* the 3 or 4 bytes, as loaded */
	uint16_t	 next;		/* index + 1 in the same chain, 0 = end */
	uint16_t	 rule;
	uint16_t	 off;		/* of the gram in the literal */
};

/*
 * step grams in a row (the rarest 4-byte windows; one 3-byte gram for a
 * 3-byte literal) of each enabled rule's literal: a bit per gram hash
 * says "maybe here", a chain of entries gives the rules to verify.
 */
struct rscan {
	uint64_t	 bm4[(1u << RSCAN_BITS) / 64];
	uint64_t	 bm3[(1u << RSCAN_BITS) / 64];
	uint16_t	 head4[RSCAN_HEADS];
	uint16_t	 head3[RSCAN_HEADS];
	struct rscan_ent *ent;
	size_t		 nent;
	size_t		 n3;		/* grams of 3 bytes */
	const char	**lit;		/* per rule (NULL = not scanned) */
	uint32_t	*litlen;
	uint32_t	*last4;		/* a literal's last 4 bytes (0 for 3) */
	size_t		 nrules;
	size_t		 minlen;
	size_t		 step;		/* windows looked at: every step-th */
};

/* Build from the rules' literals (lit[i] NULL: rule i is not scanned). */
int	 rscan_build(struct rscan *, const char *const *lit, size_t n);
void	 rscan_free(struct rscan *);
/*
 * Set in cand (zeroed here, nwords words) the rules whose literal occurs
 * in p[0..len), and first[i] = where rule i's first occurrence starts.
 * Returns whether any does.
 */
bool	 rscan_find(const struct rscan *, const char *p, size_t len,
	    uint64_t *cand, size_t nwords, uint32_t *first);

/*
 * How many bytes before the first occurrence of lit a match of the PCRE2
 * pattern re can start at most, when every match contains lit at a fixed
 * place after a bounded prefix; -1 when that cannot be shown (an
 * unbounded or unknown prefix, inline options, a top-level |, ...).
 */
long	 rules_regex_prefix(const char *re, const char *lit);
/*
 * For a pattern whose prefix is not bounded: the part after its last
 * unbounded top-level item (re + *split), which every match contains,
 * with the longest fixed run in it (anchor, NUL-terminated, alen bytes
 * of room) at most *pre bytes after that part's start.  That part not
 * matching near the anchor's first occurrence proves the whole cannot
 * match.  *lit_only: that part is the anchor alone (finding it is the
 * test).  -1 when there is no such part (or the pattern is not
 * understood).
 */
int	 rules_regex_tail(const char *re, size_t *split, char *anchor,
	    size_t alen, long *pre, bool *lit_only);

#endif
