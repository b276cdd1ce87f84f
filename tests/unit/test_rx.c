/*
 * rx: Perl semantics where POSIX ERE differed (bracket classes with \s and
 * \d, (?:...), lazy quantifiers, named groups), limits instead of hangs,
 * and the same answers with and without the JIT.
 */
#include <stdlib.h>
#include <unistd.h>

#include "t.h"

#include "../../agent/lib/rx.h"

static struct rx *
must(const char *pat)
{
	char err[160];
	struct rx *r = rx_compile(pat, 0, err, sizeof(err), NULL);

	if (r == NULL)
		T_FAILF("compile %s: %s", pat, err);
	return r;
}

static int
m(const char *pat, const char *s)
{
	struct rx *r = must(pat);
	int rc;

	if (r == NULL)
		return -9;
	rc = rx_test(r, s, strlen(s));
	rx_free(r);
	return rc;
}

TEST(perl_classes_inside_brackets)
{
	/* vROps markers: \d{2}[\s]\d{2}: */
	CHECK_INT(m("^\\d{4}-\\d{2}-\\d{2}[\\s]\\d{2}:\\d{2}", "2024-01-02 10:11:12,345 INFO x"), 1);
	CHECK_INT(m("^\\d{4}-\\d{2}-\\d{2}[\\s]\\d{2}:\\d{2}", "\tat com.vmware.Foo(Foo.java:12)"), 0);
	/* ^[^\s] must not match an indented continuation line */
	CHECK_INT(m("^[^\\s]", "  --> continued"), 0);
	CHECK_INT(m("^[^\\s]", "2024 first line"), 1);
	CHECK_INT(m("^(?:\\d{4}-\\d{2}-\\d{2}|\\d{2}:\\d{2}:\\d{2}\\.\\d{3})", "12:00:01.123 x"), 1);
	CHECK_INT(m("a.*?b", "axxbyyb"), 1);
}

TEST(named_groups_and_spans)
{
	struct rx *r = must("NMP: nmp_ThrottleLogForDevice:\\d+: Cmd \\S+ to dev \"(?<device>[^\"]+)\"");
	const char *s = "2024-05-01T10:00:00.000Z cpu1:2097)NMP: nmp_ThrottleLogForDevice:3893: Cmd 0x28 to dev \"naa.600508b1001c\" on path";
	struct rx_span sp[4];
	size_t g = 0;
	int rc;

	CHECK(r != NULL);
	if (r == NULL)
		return;
	CHECK_INT(rx_groups(r), 1);
	CHECK_INT(rx_names(r), 1);
	CHECK_STR(rx_name_at(r, 0, &g), "device");
	CHECK_INT(g, 1);
	CHECK_INT(rx_group_of(r, "device"), 1);
	CHECK_INT(rx_group_of(r, "nic"), -1);
	rc = rx_match(r, s, strlen(s), 0, sp, 4);
	CHECK_INT(rc, 2);
	CHECK(sp[1].start > 0);
	CHECK_INT(sp[1].end - sp[1].start, (long)strlen("naa.600508b1001c"));
	CHECK(memcmp(s + sp[1].start, "naa.600508b1001c", 16) == 0);
	CHECK_INT(sp[2].start, -1);
	rx_free(r);
}

/* PCRE2 stops at 32-byte names; VMware's MongoDB pack uses longer ones. */
TEST(long_group_names)
{
	struct rx *r = must("UserNotFound: (?<mdb44_login_failed_unknown_username>[a-z]+)@"
	    "(?<short>x)?(?<another_name_that_is_longer_than_32>y)?");
	struct rx_span sp[4];
	size_t g;

	if (r == NULL)
		return;
	CHECK_INT(rx_names(r), 3);
	CHECK_INT(rx_group_of(r, "mdb44_login_failed_unknown_username"), 1);
	CHECK_INT(rx_group_of(r, "short"), 2);
	CHECK_INT(rx_group_of(r, "another_name_that_is_longer_than_32"), 3);
	CHECK_INT(rx_match(r, "UserNotFound: bob@", 18, 0, sp, 4), 2);
	CHECK_INT(sp[1].start, 14);
	CHECK(rx_name_at(r, 0, &g) != NULL);
	CHECK_STR(rx_pattern(r), "UserNotFound: (?<mdb44_login_failed_unknown_username>[a-z]+)@"
	    "(?<short>x)?(?<another_name_that_is_longer_than_32>y)?");
	rx_free(r);
	/* a class or an escape is not a group */
	r = must("[(?<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa>]x\\\\(?<b>y)");
	if (r != NULL) {
		CHECK_INT(rx_names(r), 1);
		rx_free(r);
	}
}

TEST(errors_name_the_offset)
{
	char err[160];
	size_t off = 99;
	struct rx *r = rx_compile("abc(def", 0, err, sizeof(err), &off);

	CHECK(r == NULL);
	CHECK_INT(off, 7);
	CHECK(strstr(err, "parenthes") != NULL);
	r = rx_compile("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)(m)(n)(o)(p)(q)(r)(s)(t)"
	    "(u)(v)(w)(x)(y)(z)(1)(2)(3)(4)(5)(6)", 0, err, sizeof(err), NULL);
	CHECK(r == NULL);
	CHECK(strstr(err, "capture groups") != NULL);
}

/* Catastrophic backtracking ends at the match limit, not in a hang. */
TEST(limits_stop_catastrophic_patterns)
{
	char subj[64];
	struct rx *r = must("^(a+)+$");
	int rc;

	memset(subj, 'a', 40);
	subj[40] = 'b';
	subj[41] = '\0';
	if (r == NULL)
		return;
	rc = rx_match(r, subj, strlen(subj), 0, NULL, 0);
	CHECK(rc == RX_LIMIT || rc == RX_NOMATCH);
	rx_free(r);
}

TEST(bytes_not_utf8)
{
	const char s[] = "dev \xff\xfe naa.1 failed";

	CHECK_INT(m("naa\\.\\d failed", s), 1);
	CHECK(strstr(rx_engine(), "PCRE2 ") == rx_engine());
}

int
main(void)
{
	T_PROG(getenv("ESXWATCH_NO_JIT") ? "rx-interpreter" : "rx");
	RUN(perl_classes_inside_brackets);
	RUN(named_groups_and_spans);
	RUN(long_group_names);
	RUN(errors_name_the_offset);
	RUN(limits_stop_catastrophic_patterns);
	RUN(bytes_not_utf8);
	/* The same answers from the interpreter. */
	if (getenv("ESXWATCH_NO_JIT") == NULL && t_fail == 0) {
		printf("rx: %d passed, 0 failed; again without the JIT\n", t_pass);
		fflush(stdout);
		setenv("ESXWATCH_NO_JIT", "1", 1);
		execv("/proc/self/exe", (char *[]){ "test_rx", NULL });
	}
	return t_done();
}
