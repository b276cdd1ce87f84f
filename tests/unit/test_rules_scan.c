/*
 * rules: the literal scanner and the match start near the literal give
 * exactly what a plain PCRE2 match from the line's start gives (the
 * oracle): the same lines match, with the same captures; near-misses stay
 * no-match.  Regexes with text before the literal, alternations,
 * case-insensitive ones, lookbehinds, and lines with NUL bytes.
 */
#include "t.h"

#include "../../agent/config/config.h"
#include "../../agent/lib/rx.h"
#include "../../agent/lib/utf8.h"
#include "../../collectors/logwatch/rules.h"
#include "../../collectors/logwatch/rules_int.h"

static char err_buf[512];

static struct rule_conf
rc(const char *name, const char *match, const char *regex)
{
	struct rule_conf c;

	memset(&c, 0, sizeof(c));
	c.name = (char *)name;
	c.match = (char *)match;
	c.regex = (char *)regex;
	c.severity = (char *)"error";
	c.hint = (char *)"h";
	c.enabled = 1;
	return c;
}

/* The oracle: the rule's regex from byte 0 of the NUL-less copy. */
static int
oracle(const struct rule *ru, const char *line, size_t len,
    struct rules_match *m)
{
	struct rx_span sp[RX_MAX_GROUPS + 1];
	char s[512];
	size_t i, ng = ru->ngroups + 1;

	memcpy(s, line, len);
	for (i = 0; i < len; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	s[len] = '\0';
	m->rule = ru;
	m->ncaps = 0;
	if (rx_match(ru->re, s, len, 0, sp, ng) <= 0)
		return 0;
	for (i = 0; i < ru->ncaps; i++) {
		size_t g = ru->cap_group[i], l;

		if (sp[g].start < 0 || sp[g].end == sp[g].start)
			continue;
		l = utf8_cut(s + sp[g].start, (size_t)(sp[g].end - sp[g].start),
		    RULES_CAP_VALUE_MAX - 1);
		memcpy(m->caps[m->ncaps].value, s + sp[g].start, l);
		m->caps[m->ncaps].value[l] = '\0';
		m->caps[m->ncaps++].name = ru->cap_name[i];
	}
	return 1;
}

static bool
same(const struct rules_match *a, const struct rules_match *b)
{
	size_t i;

	if (a->rule != b->rule || a->ncaps != b->ncaps)
		return false;
	for (i = 0; i < a->ncaps; i++)
		if (strcmp(a->caps[i].name, b->caps[i].name) != 0 ||
		    strcmp(a->caps[i].value, b->caps[i].value) != 0)
			return false;
	return true;
}

TEST(prefix_bounds)
{
	/* Widths before the literal: fixed text, classes, groups, ? and {}. */
	CHECK_INT(rules_regex_prefix("abc: literal here", "literal here"), 5);
	CHECK_INT(rules_regex_prefix("x\\.(ab|abcd)? [0-9]{2,3}-lit", "-lit"), 10);
	CHECK_INT(rules_regex_prefix("(?<n>vm[0-9]{1,2}):? Link is Up", "Link is Up"), 6);
	CHECK_INT(rules_regex_prefix("\\bfoo(?=x)(?<!y)x bar", " bar"), 4);
	CHECK_INT(rules_regex_prefix("ab+cdef", "cdef"), -1);
	CHECK_INT(rules_regex_prefix("ab+cdef", "abcdef"), -1);
	CHECK_INT(rules_regex_prefix("abb+c", "ab"), 0);
	/* Unknown or unbounded before the literal: from the line's start. */
	CHECK_INT(rules_regex_prefix("to dev \"[^\"]+\" failed H:0x", "\" failed H:0x"), -1);
	CHECK_INT(rules_regex_prefix("(?i)error code", "error code"), -1);
	CHECK_INT(rules_regex_prefix("a(?i)bc error code", "error code"), -1);
	CHECK_INT(rules_regex_prefix("abc|error code", "error code"), -1);
	CHECK_INT(rules_regex_prefix("\\Qa.b\\E error", " error"), -1);
	CHECK_INT(rules_regex_prefix("(a)\\1 error", " error"), -1);
	CHECK_INT(rules_regex_prefix("\\G error", " error"), -1);
	CHECK_INT(rules_regex_prefix("x{,3} error", " error"), -1);
	/* A top-level | after the literal: a match may not hold it. */
	CHECK_INT(rules_regex_prefix("abc literal|xyz", "literal"), -1);
	/* The literal inside a group is not at a fixed place. */
	CHECK_INT(rules_regex_prefix("(Valid|Possible) sense data: (0x5 0x25)",
	    " sense data: 0x5"), -1);
}

/* The part after the last unbounded item, and the run to find first. */
TEST(tail_parts)
{
	char a[64];
	size_t split = 0;
	long pre = -1;
	bool lo = true;
	const char *re = "MCA: .*Memory Controller .*Error on Channel (?<c>[0-9]+)";
	const char *pdl = "((dev|Device) \"(?<device>[^\"]+)\".*)?H:0x[0-9a-f]+ "
	    "(Valid|Possible) sense data: (?<s>0x5 0x25 0x0)";

	CHECK_INT(rules_regex_tail(re, &split, a, sizeof(a), &pre, &lo), 0);
	CHECK_STR(re + split, "Error on Channel (?<c>[0-9]+)");
	CHECK_STR(a, "Error on Channel ");
	CHECK_INT(pre, 0);
	CHECK(!lo);
	CHECK_INT(rules_regex_tail(pdl, &split, a, sizeof(a), &pre, &lo), 0);
	CHECK_STR(pdl + split, " (Valid|Possible) sense data: (?<s>0x5 0x25 0x0)");
	CHECK_STR(a, " sense data: ");
	CHECK_INT(pre, 9);
	CHECK_INT(rules_regex_tail("x [^ ]+ is gone", &split, a, sizeof(a), &pre, &lo), 0);
	CHECK_STR(a, " is gone");
	CHECK(lo);
	/* Bounded all along, not understood, or nothing fixed after. */
	CHECK_INT(rules_regex_tail("abc [0-9]{1,3} def", &split, a, sizeof(a), &pre, &lo), -1);
	CHECK_INT(rules_regex_tail("(?i)abc .* def", &split, a, sizeof(a), &pre, &lo), -1);
	CHECK_INT(rules_regex_tail("abc .*|def", &split, a, sizeof(a), &pre, &lo), -1);
	CHECK_INT(rules_regex_tail("abc .*d?e?", &split, a, sizeof(a), &pre, &lo), -1);
}

static const char *const res[] = {
	"dev (?<d>[a-z]{1,3})x? sense data: (?<c>0x[0-9])",
	"(ab|abcd)-(?<t>key|kez)word (?<w>[a-z]*)",
	"(?i)error code (?<n>[0-9]+)",
	"(?<=q)tag(?<v>[0-9]) mark",
	"\\bfoo(?<v>[0-9]) bars",
	"(?<nic>vm[0-9]+):? Link is Up",
	"^(?<h>[a-z]{0,2})start here",
	"(?<p>[ab]{0,4})aaaa(?<s>b?)",
	"MCA: .*Memory (?<a>[a-z]+) .*Error on (?<ch>[0-9]+)",
	"((dev|Device) \"(?<d>[^\"]+)\".*)?H:0x(?<h>[0-9a-f]+) (Valid|Possible) sense: (?<s>0x5)",
	"abc literal|word (?<x>[a-z]+)",
};
static const char *const lits[] = {
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, "aaaa", NULL, " sense: 0x5",
	"word ",
};
static const char *const pieces[] = {
	"dev ", "x", "ab", "abcd", "-", "key", "kez", "word ", " sense data: ",
	"0x7", "0xq", "ERROR CODE ", "error code ", "Error Code ", "12", "q",
	"tag", "5", " mark", "foo", "3", " bars", "vm", "17", ":", " Link is Up",
	"start here", "a", "aaaa", "b", " ", "\0", "zz", "\0Link is Up",
	"MCA: ", "Memory ", "Error on ", "dev \"", "Device \"", "\"", "H:0x",
	"Valid", "Invalid", "Possible", " sense: 0x5", "abc literal", "word ",
	"H:0x1f Valid sense: 0x5", "H:0x0 Invalid sense: 0x5", " Possible sense: 0x5",
	"dev \"naa.6\" x H:0x2 Possible sense: 0x5", "MCA: x Memory ab ",
	"Error on 7", "Memory cd Error on 12", "dev ab sense data: 0x7",
	"abcd-keyword zz", "qtag5 mark", "foo3 bars", "vm17: Link is Up",
};

/* Random lines of pieces: every match and capture as from byte 0. */
TEST(start_near_literal_oracle)
{
	enum { NR = sizeof(res) / sizeof(res[0]), NL = 40000 };
	struct rule_conf v[NR];
	char name[NR][16], line[400];
	struct rules *r = rules_new();
	struct rules_match m, o;
	unsigned seed = 4242;
	int i, bad = 0, known = 0, hits[NR] = { 0 };
	size_t j;

	for (i = 0; i < NR; i++) {
		snprintf(name[i], sizeof(name[i]), "r%d", i);
		v[i] = rc(name[i], NULL, res[i]);
		v[i].literal = (char *)lits[i];
		if (rules_add(r, &v[i], err_buf, sizeof(err_buf)) != 0)
			T_FAILF("rules_add %d: %s", i, err_buf);
	}
	CHECK_INT(rules_compile(r, err_buf, sizeof(err_buf)), 0);
	for (j = 0; j < rules_total(r); j++)
		known += rules_at(r, j)->lit_pre >= 0;
	CHECK(known >= 5);		/* the start is moved for most */
	CHECK_INT(rules_at(r, 2)->lit_pre, -1);	/* (?i) */
	CHECK_INT(rules_at(r, 10)->lit_pre, -1);	/* top-level | */
	CHECK(rules_at(r, 8)->tail != NULL && rules_at(r, 9)->tail != NULL);
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	for (i = 0; i < NL; i++) {
		size_t len = 0, k, np = 1 + RND() % 12;
		int rule = (int)(RND() % NR);
		struct rules *one;

		for (k = 0; k < np; k++) {
			const char *pc = pieces[RND() % (sizeof(pieces) / sizeof(pieces[0]))];
			size_t pl = pc[0] == '\0' ? 1 + strlen(pc + 1) : strlen(pc);

			if (len + pl >= 300)
				break;
			memcpy(line + len, pc, pl);
			len += pl;
		}
		/* One rule at a time: the first rule matching is not the point. */
		one = rules_new();
		if (rules_add(one, &v[rule], err_buf, sizeof(err_buf)) != 0 ||
		    rules_compile(one, err_buf, sizeof(err_buf)) != 0) {
			bad++;
			rules_free(one);
			continue;
		}
		{
			int got = rules_match(one, NULL, line, len, &m);
			const char *lit = rules_at(one, 0)->literal;
			bool has = memmem(line, len, lit, strlen(lit)) != NULL;
			int want = has ? oracle(rules_at(one, 0), line, len, &o) : 0;

			if (got != want || (got && !same(&m, &o))) {
				if (bad++ < 5)
					T_FAILF("rule %d line %.*s: got %d want %d", rule,
					    (int)len, line, got, want);
			}
			hits[rule] += got;
		}
		rules_free(one);
	}
	CHECK_INT(bad, 0);
	for (i = 0; i < NR; i++)	/* the oracle is not just "no match" */
		if (hits[i] < 20)
			T_FAILF("rule %d matched %d lines only", i, hits[i]);
#undef RND
	rules_free(r);
}

/* A near-miss (literal, no match) stays no match; a hit keeps its captures. */
TEST(near_miss_and_captures)
{
	struct rule_conf v[3];
	struct rules *r = rules_new();
	struct rules_match m;
	const char *near = "cpu1:2)ixgben: indrv_UplinkReset: Link is Up, speed 10000";
	const char *hit = "cpu1:2)ixgben: vmnic12: Link is Up, speed 10000";
	const char *twice = "ERROR CODE 7 and then error code 9";
	char nul[] = "ab-key\0word xy";

	v[0] = rc("up", NULL, "(?<nic>vmnic[0-9]+):? (NIC )?Link is Up");
	v[0].literal = (char *)"Link is Up";
	v[1] = rc("ci", NULL, "(?i)error code (?<n>[0-9]+)");
	v[2] = rc("alt", NULL, "(ab|abcd)-(?<t>key)[ ]word (?<w>[a-z]*)");
	v[2].literal = (char *)"word ";
	for (size_t i = 0; i < 3; i++)
		CHECK_INT(rules_add(r, &v[i], err_buf, sizeof(err_buf)), 0);
	CHECK_INT(rules_compile(r, err_buf, sizeof(err_buf)), 0);
	CHECK_INT(rules_match(r, NULL, near, strlen(near), &m), 0);
	CHECK_INT(rules_match(r, NULL, hit, strlen(hit), &m), 1);
	CHECK_STR(m.rule->name, "up");
	CHECK_INT(m.ncaps, 1);
	CHECK_STR(m.caps[0].value, "vmnic12");
	/* Caseless: the earlier upper-case occurrence is the match. */
	CHECK_INT(rules_match(r, NULL, twice, strlen(twice), &m), 1);
	CHECK_STR(m.rule->name, "ci");
	CHECK_STR(m.caps[0].value, "7");
	/* A NUL is a space for the regex, as before. */
	CHECK_INT(rules_match(r, NULL, nul, sizeof(nul) - 1, &m), 1);
	CHECK_STR(m.rule->name, "alt");
	CHECK_STR(m.caps[0].value, "key");
	CHECK_STR(m.caps[1].value, "xy");
	rules_free(r);
}

/* rules_find: the entity's capture only; rules_caps: the rest, as before. */
TEST(captures_after_the_storm)
{
	struct rule_conf c = rc("pp", NULL, "dev \"(?<a>[^\"]*)\" x(?<b>[0-9]*) "
	    "y(?<c>[0-9]+) z(?<d>[a-z]+)");
	struct rules *r = rules_new();
	struct rules_match f, m;
	const char *line = "dev \"\" x y12 zab";

	CHECK_INT(rules_add(r, &c, err_buf, sizeof(err_buf)), 0);
	CHECK_INT(rules_compile(r, err_buf, sizeof(err_buf)), 0);
	CHECK_INT(rules_match(r, NULL, line, strlen(line), &m), 1);
	CHECK_INT(m.ncaps, 2);		/* empty a and b are not reported */
	CHECK_INT(rules_find(r, NULL, line, strlen(line), &f), 1);
	CHECK_INT(f.ncaps, 1);
	CHECK_STR(f.caps[0].name, "c");	/* the first capture that has a value */
	CHECK_STR(f.caps[0].value, "12");
	rules_caps(&f);
	CHECK(same(&f, &m));
	CHECK_STR(f.caps[1].value, "ab");
	rules_caps(&f);			/* twice: nothing more */
	CHECK_INT(f.ncaps, 2);
	rules_free(r);
}

/* Long literals (the scan looks at every 4th window): same as memmem. */
TEST(scan_step_oracle)
{
	enum { NR = 60, NL = 20000 };
	static char lit[NR][16];
	const char *lp[NR];
	uint64_t cand[1];
	uint32_t first[NR];
	struct rscan s;
	char line[256];
	unsigned seed = 99;
	int i, j, bad = 0, found = 0;

#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	memset(&s, 0, sizeof(s));
	for (i = 0; i < NR; i++) {
		int len = 7 + (int)(RND() % 8);

		for (j = 0; j < len; j++)
			lit[i][j] = "aab"[RND() % 3];
		lit[i][len] = '\0';
		lp[i] = lit[i];
	}
	CHECK_INT(rscan_build(&s, lp, NR), 0);
	CHECK_INT(s.step, 4);
	for (i = 0; i < NL; i++) {
		int len = (int)(RND() % 200);

		for (j = 0; j < len; j++)
			line[j] = "aabx"[RND() % 4];
		rscan_find(&s, line, (size_t)len, cand, 1, first);
		for (j = 0; j < NR; j++) {
			const char *at = memmem(line, (size_t)len, lit[j], strlen(lit[j]));
			bool got = (cand[0] >> j) & 1;

			if (got != (at != NULL) ||
			    (got && first[j] != (uint32_t)(at - line)))
				bad++;
			found += got;
		}
	}
	CHECK_INT(bad, 0);
	CHECK(found > 1000);
	rscan_free(&s);
#undef RND
}

int
main(void)
{
	T_PROG("test_rules_scan");
	RUN(prefix_bounds);
	RUN(tail_parts);
	RUN(start_near_literal_oracle);
	RUN(near_miss_and_captures);
	RUN(captures_after_the_storm);
	RUN(scan_step_oracle);
	return t_done();
}
