/*
 * A tiny unit-test harness.  Each TEST is a function; RUN(fn) runs it and
 * prints "PASS: prog/fn" or "FAIL: prog/fn" (with a "check failed" line per failed check)
 * then a summary; tests/run-all.sh counts those lines.
 *
 *	TEST(parses_table) { CHECK_STR(get(..), "vmnic0"); }
 *	int main(void) { RUN(parses_table); return t_done(); }
 */
#ifndef ESXWATCH_T_H
#define ESXWATCH_T_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed_checks, t_pass, t_fail, t_cur_failed;
static const char *t_prog = "unit";

#define TEST(fn) static void fn(void)

#define T_FAILF(...) do {						\
	t_failed_checks++; t_cur_failed = 1;				\
	printf("  check failed: %s:%d: ", __FILE__, __LINE__);			\
	printf(__VA_ARGS__); printf("\n"); fflush(stdout);		\
} while (0)

#define CHECK(cond) do { if (!(cond)) T_FAILF("%s", #cond); } while (0)

#define CHECK_STR(got, want) do {					\
	const char *t_g = (got), *t_w = (want);				\
	if (t_g == NULL || t_w == NULL ? t_g != t_w : strcmp(t_g, t_w) != 0) \
		T_FAILF("%s == \"%s\", want \"%s\"", #got,		\
		    t_g ? t_g : "(null)", t_w ? t_w : "(null)");	\
} while (0)

#define CHECK_INT(got, want) do {					\
	long long t_g = (long long)(got), t_w = (long long)(want);	\
	if (t_g != t_w)							\
		T_FAILF("%s == %lld, want %lld", #got, t_g, t_w);	\
} while (0)

#define RUN(fn) do {							\
	t_cur_failed = 0;						\
	fn();								\
	if (t_cur_failed) { t_fail++; printf("FAIL: %s/%s\n", t_prog, #fn); } \
	else { t_pass++; printf("PASS: %s/%s\n", t_prog, #fn); }	\
	fflush(stdout);							\
} while (0)

#define T_PROG(name) (t_prog = (name))

static inline int t_done(void)
{
	printf("%s: %d passed, %d failed\n", t_prog, t_pass, t_fail);
	return t_fail ? 1 : 0;
}

/* Read a whole file (fixtures).  Aborts the test program if missing. */
static inline char *t_slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *p;
	long n;

	if (f == NULL) {
		printf("FAIL: fixture/%s: cannot open\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	if (p == NULL || fread(p, 1, (size_t)n, f) != (size_t)n) {
		printf("FAIL: fixture/%s: cannot read\n", path);
		exit(1);
	}
	p[n] = '\0';
	fclose(f);
	if (lenp)
		*lenp = (size_t)n;
	return p;
}

#endif
