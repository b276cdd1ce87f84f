/*
 * rules: literal prefilter (rules_scan.c) + PCRE2 (agent/lib/rx.h).  See
 * rules.h.  What happens to a match next is not here: storm control is
 * storm.c, the SCSI codes a match captured are decoded by scsi.c.
 *
 * A line is scanned once for every rule's literal (rscan_find: the rules
 * whose literal occurs, and where first).  Only those rules run their
 * regex, in catalogue order, and a regex whose matches can start at most
 * lit_pre bytes before its literal starts there instead of at the line's
 * start: every match holds the literal that far from its own start, so no
 * match begins earlier and PCRE2 finds the same leftmost match (a
 * lookbehind or \b still sees the bytes before).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/mem.h"
#include "../../agent/lib/rx.h"
#include "../../agent/lib/utf8.h"
#include "rules.h"
#include "rules_int.h"

#define RULES_LINE_MAX	(1024 * 1024)	/* a longer line matches nothing */

struct rules {
	struct rule	*v;
	size_t		 n;
	size_t		 nenabled;

	/* The prefilter. */
	struct rscan	 scan;
	size_t		 nwords;
	bool		 compiled;

	/* Scratch. */
	uint64_t	*cand;		/* nwords */
	uint32_t	*first;		/* n: where each candidate's literal is */
	struct buf	 line;
};

struct rules *
rules_new(void)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (r != NULL)
		buf_init(&r->line, 1024 * 1024);
	return r;
}

static void
rule_clear(struct rule *ru)
{
	size_t i;

	free(ru->name);
	free(ru->severity);
	free(ru->hint);
	free(ru->vob_id);
	free(ru->match);
	free(ru->regex);
	free(ru->literal);
	for (i = 0; i < ru->nfiles; i++)
		free(ru->files[i]);
	free(ru->files);
	for (i = 0; i < ru->ncaps; i++)
		free(ru->cap_name[i]);
	rx_free(ru->re);
	rx_free(ru->tail);
	free(ru->tail_anchor);
	memset(ru, 0, sizeof(*ru));
}

static void
automaton_free(struct rules *r)
{
	rscan_free(&r->scan);
	free(r->cand);
	free(r->first);
	r->cand = NULL;
	r->first = NULL;
	r->compiled = false;
}

void
rules_free(struct rules *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		rule_clear(&r->v[i]);
	free(r->v);
	automaton_free(r);
	buf_free(&r->line);
	free(r);
}

/*
 * The longest run of literal characters every match of the ERE contains:
 * only top-level characters count (a group or bracket may be optional or
 * an alternation), a top-level "|" means there is no such run, a
 * character followed by ?, * or { is optional.
 */
int
rules_regex_literal(const char *re, char *out, size_t outlen)
{
	char run[512], best[512];
	size_t rl = 0, bl = 0, i = 0, brs = 0;
	int depth = 0;
	bool inbr = false;

#define END_RUN() do {						\
	if (rl > bl) { memcpy(best, run, rl); bl = rl; }	\
	rl = 0;							\
} while (0)
	while (re[i] != '\0') {
		char c = re[i], lit = 0, q;
		bool islit = false;
		size_t adv = 1;

		if (inbr) {
			if (c == ']' && i != brs + 1 &&
			    !(i == brs + 2 && re[brs + 1] == '^'))
				inbr = false;
			i++;
			continue;
		}
		if (c == '\\' && re[i + 1] != '\0') {
			adv = 2;
			/* Escaped punctuation is itself; \w, \s... are not. */
			if (depth == 0 && strchr(".[]()*+?{}|^$\\/-\"'<>=:", re[i + 1]) != NULL) {
				lit = re[i + 1];
				islit = true;
			}
		} else if (c == '[') {
			inbr = true;
			brs = i;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth > 0)
				depth--;
		} else if (c == '|' && depth == 0) {
			return -1;
		} else if (c == '{') {
			/* A bound: skip to its end. */
			while (re[i + adv] != '\0' && re[i + adv - 1] != '}')
				adv++;
		} else if (depth == 0 && strchr(".*+?}^$", c) == NULL) {
			lit = c;
			islit = true;
		}
		if (!islit) {
			END_RUN();
			i += adv;
			continue;
		}
		q = re[i + adv];
		if (q == '?' || q == '*' || q == '{') {
			END_RUN();
		} else {
			if (rl < sizeof(run))
				run[rl++] = lit;
			if (q == '+')
				END_RUN();
		}
		i += adv;
	}
	END_RUN();
#undef END_RUN
	if (bl == 0 || bl + 1 > outlen)
		return -1;
	memcpy(out, best, bl);
	out[bl] = '\0';
	return (int)bl;
}


static bool
severity_ok(const char *s)
{
	return s != NULL && (strcmp(s, "info") == 0 || strcmp(s, "warning") == 0 ||
	    strcmp(s, "error") == 0 || strcmp(s, "critical") == 0);
}

/* The config loader uses "" for an unset optional string. */
static const char *
opt(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* A capture name is a field name: esxwatch_<name>. */
static bool
cap_name_ok(const char *n)
{
	size_t i;

	if (n == NULL || !((n[0] >= 'a' && n[0] <= 'z') || n[0] == '_'))
		return false;
	for (i = 1; n[i] != '\0'; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || n[i] == '_' ||
		    (n[i] >= '0' && n[i] <= '9')))
			return false;
	return i < 32;
}

/*
 * Compile the rule's regex (PCRE2: named groups "(?<device>...)" are
 * native) and take its named groups as the captures it reports.
 */
static int
rule_regex(struct rule *ru, const char *re, char *err, size_t errlen)
{
	char m[200];
	size_t i, off = 0, g;
	const char *n;

	ru->re = rx_compile(re, 0, m, sizeof(m), &off);
	if (ru->re == NULL) {
		snprintf(err, errlen, "rule '%s': regex: %s (at offset %zu)",
		    ru->name, m, off);
		return -1;
	}
	ru->has_re = true;
	ru->ngroups = rx_groups(ru->re);
	if (rx_names(ru->re) > RULES_MAX_CAPS) {
		snprintf(err, errlen, "rule '%s': more than %d named captures",
		    ru->name, RULES_MAX_CAPS);
		return -1;
	}
	for (i = 0; i < rx_names(ru->re); i++) {
		n = rx_name_at(ru->re, i, &g);
		if (!cap_name_ok(n)) {
			snprintf(err, errlen, "rule '%s': bad capture name '%s' "
			    "(use (?<name>...) with [a-z_][a-z0-9_]*)",
			    ru->name, n != NULL ? n : "");
			return -1;
		}
		ru->cap_name[ru->ncaps] = xstrdup(n);
		if (ru->cap_name[ru->ncaps] == NULL)
			return -1;
		ru->cap_group[ru->ncaps++] = g;
	}
	return 0;
}

/*
 * A regex with an unbounded prefix: first test the part after it near its
 * anchor (cheap, and what a near-miss line usually fails).  Optional: a
 * part PCRE2 will not compile alone is simply not used.
 */
static void
rule_tail(struct rule *ru, const char *re)
{
	char anchor[512], m[200];
	size_t split, off;
	long pre;
	bool lit_only;

	if (rules_regex_tail(re, &split, anchor, sizeof(anchor), &pre,
	    &lit_only) < 0)
		return;
	ru->tail = lit_only ? NULL : rx_compile(re + split, 0, m, sizeof(m), &off);
	ru->tail_anchor = xstrdup(anchor);
	ru->tail_pre = pre;
	if ((ru->tail == NULL && !lit_only) || ru->tail_anchor == NULL) {
		rx_free(ru->tail);
		free(ru->tail_anchor);
		ru->tail = NULL;
		ru->tail_anchor = NULL;
	}
}

static int
rule_build(struct rule *ru, const struct rule_conf *rc, char *err, size_t errlen)
{
	char lit[512];
	const char *literal = opt(rc->literal);
	size_t i;

	memset(ru, 0, sizeof(*ru));
	ru->name = xstrdup(rc->name);
	ru->severity = xstrdup(opt(rc->severity) ? rc->severity : "warning");
	ru->hint = xstrdup(rc->hint ? rc->hint : "");
	ru->vob_id = xstrdup(opt(rc->vob_id));
	ru->match = xstrdup(rc->match);
	ru->regex = xstrdup(rc->regex);
	ru->enabled = rc->enabled != 0;
	ru->storm_max = rc->storm_max;
	ru->storm_window = rc->storm_window;
	if (ru->name == NULL || ru->severity == NULL || ru->hint == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!severity_ok(ru->severity)) {
		snprintf(err, errlen, "rule '%s': unknown severity '%s'",
		    ru->name, ru->severity);
		return -1;
	}
	if ((rc->match == NULL) == (rc->regex == NULL)) {
		snprintf(err, errlen, "rule '%s': needs exactly one of match or regex",
		    ru->name);
		return -1;
	}
	if (rc->files.n > 0) {
		ru->files = calloc(rc->files.n, sizeof(char *));
		if (ru->files == NULL)
			return -1;
		for (i = 0; i < rc->files.n; i++) {
			ru->files[i] = xstrdup(rc->files.v[i]);
			if (ru->files[i] == NULL)
				return -1;
			ru->nfiles++;
		}
	}
	if (rc->regex != NULL && rule_regex(ru, rc->regex, err, errlen) < 0)
		return -1;
	if (rc->regex != NULL && literal == NULL &&
	    rules_regex_literal(rc->regex, lit, sizeof(lit)) < 0)
		lit[0] = '\0';
	if (literal != NULL)
		snprintf(lit, sizeof(lit), "%s", literal);
	else if (rc->match != NULL)
		snprintf(lit, sizeof(lit), "%s", rc->match);
	if (strlen(lit) < RULES_LITERAL_MIN || strchr(lit, '\n') != NULL) {
		snprintf(err, errlen, "rule '%s': no literal of at least %d "
		    "characters every match must contain; add 'literal:'",
		    ru->name, RULES_LITERAL_MIN);
		return -1;
	}
	ru->literal = xstrdup(lit);
	if (ru->literal == NULL)
		return -1;
	ru->lit_pre = rc->regex != NULL ?
	    rules_regex_prefix(rc->regex, ru->literal) : -1;
	ru->match_is_literal = rc->match != NULL &&
	    strcmp(rc->match, ru->literal) == 0;
	if (rc->regex != NULL && ru->lit_pre < 0)
		rule_tail(ru, rc->regex);
	return 0;
}

int
rules_add(struct rules *r, const struct rule_conf *rc, char *err, size_t errlen)
{
	struct rule nr;
	size_t i;

	if (rc->name == NULL || rc->name[0] == '\0') {
		snprintf(err, errlen, "rule without a name");
		return -1;
	}
	/* A disabled override only needs its name. */
	for (i = 0; i < r->n; i++) {
		if (strcmp(r->v[i].name, rc->name) != 0)
			continue;
		if (!rc->enabled && rc->match == NULL && rc->regex == NULL) {
			r->v[i].enabled = false;
			r->compiled = false;
			return 0;
		}
		break;
	}
	if (rule_build(&nr, rc, err, errlen) < 0) {
		rule_clear(&nr);
		return -1;
	}
	if (i < r->n) {
		rule_clear(&r->v[i]);
		r->v[i] = nr;
	} else {
		struct rule *nv;

		if (r->n >= RULES_MAX) {
			snprintf(err, errlen, "more than %d rules", RULES_MAX);
			rule_clear(&nr);
			return -1;
		}
		nv = realloc(r->v, (r->n + 1) * sizeof(*nv));
		if (nv == NULL) {
			rule_clear(&nr);
			return -1;
		}
		r->v = nv;
		r->v[r->n++] = nr;
	}
	r->compiled = false;
	return 0;
}

size_t
rules_total(const struct rules *r)
{
	return r->n;
}

const struct rule *
rules_at(const struct rules *r, size_t i)
{
	return i < r->n ? &r->v[i] : NULL;
}

size_t
rules_count(const struct rules *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->n; i++)
		n += r->v[i].enabled;
	return n;
}

int
rules_compile(struct rules *r, char *err, size_t errlen)
{
	const char **lit;
	size_t i;
	int rc;

	automaton_free(r);
	r->nwords = (r->n + 63) / 64;
	if (r->nwords == 0)
		r->nwords = 1;
	lit = calloc(r->n ? r->n : 1, sizeof(*lit));
	r->cand = calloc(r->nwords, sizeof(uint64_t));
	r->first = calloc(r->n ? r->n : 1, sizeof(uint32_t));
	if (lit == NULL || r->cand == NULL || r->first == NULL) {
		free(lit);
		automaton_free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < r->n; i++)
		lit[i] = r->v[i].enabled ? r->v[i].literal : NULL;
	rc = rscan_build(&r->scan, lit, r->n);
	free(lit);
	if (rc < 0) {
		automaton_free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->nenabled = rules_count(r);
	r->compiled = true;
	return 0;
}

static bool
rule_applies(const struct rule *ru, const char *filelog)
{
	size_t i;

	if (filelog == NULL || ru->nfiles == 0)
		return true;
	for (i = 0; i < ru->nfiles; i++)
		if (strcmp(ru->files[i], filelog) == 0)
			return true;
	return false;
}

/* Copy the next capture of m's rule that took part and is not empty. */
static void
rules_caps_one(struct rules_match *m)
{
	size_t i = m->next++, len;
	struct rules_cap *c = &m->caps[m->ncaps];

	if (m->start[i] < 0 || m->end[i] <= m->start[i])
		return;
	len = (size_t)(m->end[i] - m->start[i]);
	len = utf8_cut(m->subj + m->start[i], len, sizeof(c->value) - 1);
	memcpy(c->value, m->subj + m->start[i], len);
	c->value[len] = '\0';
	c->name = m->rule->cap_name[i];
	m->ncaps++;
}

void
rules_caps(struct rules_match *m)
{
	while (m->rule != NULL && m->next < m->rule->ncaps)
		rules_caps_one(m);
}

/*
 * Keep the spans of ru's captures (in s) in m and copy the first that
 * took part; rules_caps() copies the rest.
 */
static void
rule_caps(const struct rule *ru, const char *s, const struct rx_span *sp,
    size_t ng, struct rules_match *m)
{
	size_t i;

	m->subj = s;
	m->next = 0;
	for (i = 0; i < ru->ncaps; i++) {
		size_t g = ru->cap_group[i];

		m->start[i] = g < ng ? sp[g].start : -1;
		m->end[i] = g < ng ? sp[g].end : -1;
	}
	while (m->ncaps == 0 && m->next < ru->ncaps)
		rules_caps_one(m);
}

/*
 * Every match of ru's regex holds a match of its tail, which holds the
 * anchor at most tail_pre bytes after its start: false when there is
 * none (a limit or an error says "maybe": the whole regex decides).
 */
static bool
tail_may_match(const struct rule *ru, const char *s, size_t len)
{
	const char *a = memmem(s, len, ru->tail_anchor, strlen(ru->tail_anchor));
	size_t at;

	if (a == NULL)
		return false;
	if (ru->tail == NULL)
		return true;	/* the tail is the anchor alone */
	at = (size_t)(a - s);
	at = (uint64_t)ru->tail_pre < at ? at - (size_t)ru->tail_pre : 0;
	return rx_match(ru->tail, s, len, at, NULL, 0) != RX_NOMATCH;
}

/*
 * Run rule ru on s[0..len) (NULs already spaces), from byte start; fill m
 * on a match.
 */
static int
rule_run(const struct rule *ru, const char *s, size_t len, size_t start,
    struct rules_match *m)
{
	struct rx_span sp[RX_MAX_GROUPS + 1];
	size_t ng;
	int rc;

	m->rule = ru;
	m->ncaps = 0;
	m->next = 0;
	if (!ru->has_re)
		return ru->match_is_literal ||
		    memmem(s, len, ru->match, strlen(ru->match)) != NULL;
	if (ru->tail_anchor != NULL && !tail_may_match(ru, s, len))
		return 0;
	ng = ru->ngroups + 1;
	rc = rx_match(ru->re, s, len, start, sp, ng);
	if (rc == RX_LIMIT)
		log_limited(LOG_WARN, ru->name, 3600, "rule '%s': the regex hit "
		    "PCRE2's match limit on a line; taken as no match", ru->name);
	if (rc <= 0)
		return 0;
	rule_caps(ru, s, sp, ng, m);
	return 1;
}

/*
 * Where rule i's regex may start on a line whose literal is first at
 * first: lit_pre bytes before it, when that is known.
 */
static size_t
rule_start(const struct rule *ru, uint32_t first)
{
	if (ru->lit_pre < 0 || (uint64_t)ru->lit_pre > first)
		return 0;
	return first - (size_t)ru->lit_pre;
}

int
rules_match(struct rules *r, const char *filelog, const char *line,
    size_t len, struct rules_match *m)
{
	int rc = rules_find(r, filelog, line, len, m);

	if (rc)
		rules_caps(m);
	return rc;
}

int
rules_find(struct rules *r, const char *filelog, const char *line,
    size_t len, struct rules_match *m)
{
	const char *s = line;
	size_t w, nw = r->nwords;
	bool nul;

	if (!r->compiled || r->nenabled == 0 || len > RULES_LINE_MAX ||
	    !rscan_find(&r->scan, line, len, r->cand, nw, r->first))
		return 0;
	/*
	 * The regexes see NULs as spaces: a copy, only for a line that has
	 * one.  A NUL-made space may form another occurrence of a literal
	 * before the one found, so such a line is matched from its start.
	 */
	nul = memchr(line, '\0', len) != NULL;
	if (nul) {
		buf_reset(&r->line);
		if (buf_append(&r->line, line, len) < 0)
			return 0;
		for (w = 0; w < len; w++)
			if (r->line.data[w] == '\0')
				r->line.data[w] = ' ';
		s = r->line.data;
	}
	for (w = 0; w < nw; w++) {
		uint64_t bits = r->cand[w];

		while (bits != 0) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
			const struct rule *ru = &r->v[i];

			bits &= bits - 1;
			if (!ru->enabled || !rule_applies(ru, filelog))
				continue;
			if (rule_run(ru, s, len, nul ? 0 :
			    rule_start(ru, r->first[i]), m))
				return 1;
		}
	}
	return 0;
}
