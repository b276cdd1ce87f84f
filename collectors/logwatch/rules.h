/*
 * rules: the engine that matches log lines against the catalogue of known
 * ESXi error strings (docs/rules.md).
 *
 * Every rule has a required literal: its `literal:`, else its `match:`
 * substring, else the longest fixed run of its `regex:` that every match
 * must contain.  One scan of a line finds every rule's literal (rules_scan.c)
 * whatever the number of rules; only the rules whose literal occurs run
 * their regex, from a bounded distance before the literal when the regex
 * allows it (rules_int.h).  Rules are tried in catalogue order and
 * the first one that matches wins: one line, at most one alert.
 *
 * Regexes are Perl-compatible (PCRE2, agent/lib/rx.h).  A rule names its
 * captures with "(?<name>...)" and the group's value becomes the field
 * esxwatch_<name> (device, nic,
 * datastore, scsi_host_status, scsi_device_status, scsi_sense, ...).
 * Plain "(...)" groups are not reported.
 *
 * Storm suppression (struct storm) is separate: per rule and entity (the
 * first capture), after `limit` matches in `window_ms` (the rule's own
 * storm: {max, window}, else the defaults) further matches are only
 * counted and reported in one summary when the window ends.
 */
#ifndef ESXWATCH_RULES_H
#define ESXWATCH_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../agent/config/config.h"
#include "rules_conf.h"

struct rx;

#define RULES_MAX		1024	/* rules in one set */
#define RULES_MAX_CAPS		8	/* named captures per rule */
#define RULES_CAP_VALUE_MAX	256	/* longer captured values are cut */
#define RULES_LITERAL_MIN	3	/* shortest acceptable literal */

struct rule {
	char		*name;
	char		*severity;	/* info | warning | error | critical */
	char		*hint;
	char		*vob_id;	/* informational (docs) */
	char		*match;		/* fixed substring, or NULL */
	char		*regex;		/* the ERE as written (with names) */
	char		*literal;	/* what the prefilter looks for */
	char		**files;	/* filelog names; none = all */
	size_t		 nfiles;
	bool		 enabled;
	int		 storm_max;	/* 0 = default, -1 = off (rule_conf) */
	int		 storm_window;	/* s, 0 = default */
	bool		 has_re;
	struct rx	*re;		/* PCRE2, agent/lib/rx.h */
	size_t		 ncaps;
	char		*cap_name[RULES_MAX_CAPS];	/* without esxwatch_ */
	size_t		 cap_group[RULES_MAX_CAPS];	/* group number */
	size_t		 ngroups;			/* all groups */
	long		 lit_pre;	/* a match starts at most this many bytes
					 * before the literal; -1 = unknown */
	bool		 match_is_literal;	/* match: is the literal */
	struct rx	*tail;		/* the part after an unbounded prefix,
					 * NULL when it is the anchor alone */
	char		*tail_anchor;	/* a fixed run in it ... */
	long		 tail_pre;	/* ... at most this far from its start */
};

struct rules;

struct rules_cap {
	const char	*name;			/* "device" */
	char		 value[RULES_CAP_VALUE_MAX];
};

struct rules_match {
	const struct rule	*rule;
	size_t			 ncaps;
	struct rules_cap	 caps[RULES_MAX_CAPS];
	/* rules_find(): where the captures not copied yet are. */
	const char		*subj;
	size_t			 next;		/* of rule->cap_name */
	long			 start[RULES_MAX_CAPS], end[RULES_MAX_CAPS];
};

struct rules	*rules_new(void);
void		 rules_free(struct rules *);
/*
 * Add a rule, or replace the rule of the same name (keeping its position;
 * enabled: no disables it).  On error returns -1 and a message in err
 * (bad regex, no usable literal, unknown severity, too many captures).
 */
int		 rules_add(struct rules *, const struct rule_conf *,
		    char *err, size_t errlen);
/* Build the prefilter.  Must be called after the last rules_add(). */
int		 rules_compile(struct rules *, char *err, size_t errlen);
size_t		 rules_count(const struct rules *);	/* enabled rules */
const struct rule *rules_at(const struct rules *, size_t i);	/* all, in order */
size_t		 rules_total(const struct rules *);
/*
 * Match line[0..len) (need not be NUL-terminated; may contain NULs) for
 * the filelog named filelog (NULL = ignore `files:`).  Returns 1 and fills
 * m on a match, 0 if no rule matches.  Not thread-safe (scratch space).
 */
int		 rules_match(struct rules *, const char *filelog,
		    const char *line, size_t len, struct rules_match *m);
/*
 * The same, but m gets only the first capture (the storm entity); the
 * others are copied by rules_caps(), which must be called before the next
 * rules_find()/rules_match() on the set and while line is still there (a
 * storm-suppressed match never needs them).
 */
int		 rules_find(struct rules *, const char *filelog,
		    const char *line, size_t len, struct rules_match *m);
void		 rules_caps(struct rules_match *m);
/* The literal a regex guarantees (longest fixed run), or -1. */
int		 rules_regex_literal(const char *re, char *out, size_t outlen);

#endif
