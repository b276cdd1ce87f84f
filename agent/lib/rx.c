/*
 * rx: PCRE2 behind a small interface (see rx.h).
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rx.h"

struct rx {
	pcre2_code	*code;
	char		*pattern;
	size_t		 ngroups;
	size_t		 nnames;
	size_t		 name_entry;	/* bytes per name table entry */
	PCRE2_SPTR	 name_table;
	bool		 jit;
	char		**longname;	/* names over PCRE2's 32: "_rxlN" -> name */
	size_t		 nlong;
};

#define RX_PCRE2_NAME_MAX	32

static pthread_once_t		 rx_once = PTHREAD_ONCE_INIT;
static pthread_key_t		 rx_md_key;
static pcre2_match_context	*rx_mctx;	/* read-only after init */
static bool			 rx_jit_allowed;
static char			 rx_engine_text[64];

static void
rx_md_free(void *p)
{
	pcre2_match_data_free(p);
}

/*
 * Whether this process may JIT: a trial compile, since a platform that
 * refuses executable memory only says so when the JIT maps its first page.
 */
static bool
rx_jit_works(void)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)"a", 1, 0, &code, &off, NULL);
	bool ok;

	if (c == NULL)
		return false;
	ok = pcre2_jit_compile(c, PCRE2_JIT_COMPLETE) == 0;
	pcre2_code_free(c);
	return ok;
}

static void
rx_init(void)
{
	const char *nj = getenv("ESXWATCH_NO_JIT");
	uint32_t have_jit = 0;
	char v[32];

	(void)pthread_key_create(&rx_md_key, rx_md_free);
	rx_mctx = pcre2_match_context_create(NULL);
	if (rx_mctx != NULL) {
		pcre2_set_match_limit(rx_mctx, RX_MATCH_LIMIT);
		pcre2_set_depth_limit(rx_mctx, RX_DEPTH_LIMIT);
		pcre2_set_heap_limit(rx_mctx, RX_HEAP_LIMIT_KB);
	}
	if (pcre2_config(PCRE2_CONFIG_JIT, &have_jit) < 0)
		have_jit = 0;
	rx_jit_allowed = have_jit != 0 && !(nj != NULL && *nj != '\0' &&
	    strcmp(nj, "0") != 0);
#ifdef ESXWATCH_STATIC_BUILD
	/*
	 * The ESXi build runs the interpreter unless ESXWATCH_JIT=1: ESXi's
	 * userworld commonly refuses executable memory anyway, the JIT's code
	 * pages cost some 200 KB of resident memory (7 % of the build's
	 * budget), and behind the literal prefilter the interpreter matches
	 * within a few per cent of the JIT (docs/performance.md).
	 */
	{
		const char *j = getenv("ESXWATCH_JIT");

		if (j == NULL || strcmp(j, "1") != 0)
			rx_jit_allowed = false;
	}
#endif
	if (rx_jit_allowed)
		rx_jit_allowed = rx_jit_works();
	if (pcre2_config(PCRE2_CONFIG_VERSION, v) < 0)
		snprintf(v, sizeof(v), "?");
	snprintf(rx_engine_text, sizeof(rx_engine_text), "PCRE2 %.24s (%s)", v,
	    rx_jit_allowed ? "JIT" : "interpreter");
}

/* This thread's match data, created on first use. */
static pcre2_match_data *
rx_md(void)
{
	pcre2_match_data *md = pthread_getspecific(rx_md_key);

	if (md != NULL)
		return md;
	md = pcre2_match_data_create(RX_MAX_GROUPS + 1, NULL);
	if (md == NULL)
		return NULL;
	if (pthread_setspecific(rx_md_key, md) != 0) {
		pcre2_match_data_free(md);
		return NULL;
	}
	return md;
}

static void
rx_errmsg(int code, char *err, size_t errlen)
{
	PCRE2_UCHAR buf[160];

	if (err == NULL || errlen == 0)
		return;
	if (pcre2_get_error_message(code, buf, sizeof(buf)) < 0)
		snprintf(err, errlen, "PCRE2 error %d", code);
	else
		snprintf(err, errlen, "%s", (const char *)buf);
}

static int
rx_info(struct rx *r, char *err, size_t errlen)
{
	uint32_t caps = 0, names = 0, esz = 0;
	PCRE2_SPTR table = NULL;

	if (pcre2_pattern_info(r->code, PCRE2_INFO_CAPTURECOUNT, &caps) < 0 ||
	    pcre2_pattern_info(r->code, PCRE2_INFO_NAMECOUNT, &names) < 0 ||
	    pcre2_pattern_info(r->code, PCRE2_INFO_NAMEENTRYSIZE, &esz) < 0 ||
	    pcre2_pattern_info(r->code, PCRE2_INFO_NAMETABLE, &table) < 0) {
		snprintf(err, errlen, "cannot read the compiled pattern");
		return -1;
	}
	if (caps > RX_MAX_GROUPS) {
		snprintf(err, errlen, "%u capture groups: at most %d are allowed",
		    (unsigned)caps, RX_MAX_GROUPS);
		return -1;
	}
	r->ngroups = caps;
	r->nnames = names;
	r->name_entry = esz;
	r->name_table = table;
	return 0;
}

/* A group name starting at p (after "(?<" or "(?P<"): its length, or 0. */
static size_t
name_len(const char *p)
{
	size_t n = 0;

	if (!((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z') ||
	    p[0] == '_'))
		return 0;
	while ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= 'a' && p[n] <= 'z') ||
	    (p[n] >= '0' && p[n] <= '9') || p[n] == '_')
		n++;
	return p[n] == '>' ? n : 0;
}

/*
 * PCRE2 limits a group name to 32 bytes; liagent's engine does not, and
 * VMware's content packs use longer ones.  Give each such group a short
 * name "_rxlN" and remember the real one.  Returns the pattern to compile
 * (pattern itself when nothing changed) or NULL when out of memory.
 */
static char *
long_names(struct rx *r, const char *pattern)
{
	size_t len = strlen(pattern), i, o = 0, n;
	char *out = NULL, **nv;
	bool inclass = false;

	for (i = 0; i < len; i++) {
		const char *q = pattern + i;

		if (*q == '\\' && q[1] != '\0') {
			i++;
			continue;
		}
		if (inclass) {
			if (*q == ']')
				inclass = false;
			continue;
		}
		if (*q == '[') {
			inclass = true;
			if (q[1] == '^')
				i++;
			if (pattern[i + 1] == ']')
				i++;
			continue;
		}
		if (strncmp(q, "(?<", 3) == 0)
			n = name_len(q + 3), q += 3;
		else if (strncmp(q, "(?P<", 4) == 0)
			n = name_len(q + 4), q += 4;
		else
			continue;
		if (n <= RX_PCRE2_NAME_MAX)
			continue;
		if (out == NULL) {
			out = malloc(len + 1);
			if (out == NULL)
				return NULL;
			memcpy(out, pattern, len + 1);
			o = 0;
		}
		nv = realloc(r->longname, (r->nlong + 1) * sizeof(*nv));
		if (nv == NULL)
			goto nomem;
		r->longname = nv;
		r->longname[r->nlong] = strndup(q, n);
		if (r->longname[r->nlong] == NULL)
			goto nomem;
		{
			/* the name's place is at q..q+n in pattern: rewrite out */
			size_t at = (size_t)(q - pattern) - o, keep;
			char shortn[16];
			int sl = snprintf(shortn, sizeof(shortn), "_rxl%zu", r->nlong);

			keep = strlen(out + at + n);
			memcpy(out + at, shortn, (size_t)sl);
			memmove(out + at + sl, out + at + n, keep + 1);
			o += n - (size_t)sl;
		}
		r->nlong++;
		i = (size_t)(q - pattern) + n;
	}
	return out != NULL ? out : (char *)pattern;
nomem:
	free(out);
	return NULL;
}

struct rx *
rx_compile(const char *pattern, unsigned flags, char *err, size_t errlen,
    size_t *erroff)
{
	struct rx *r;
	uint32_t opts = 0;
	int code = 0;
	PCRE2_SIZE off = 0;
	size_t len;

	(void)pthread_once(&rx_once, rx_init);
	if (erroff != NULL)
		*erroff = 0;
	len = strlen(pattern);
	if (len > RX_PATTERN_MAX) {
		snprintf(err, errlen, "pattern of %zu bytes: at most %d", len,
		    RX_PATTERN_MAX);
		return NULL;
	}
	if (flags & RX_CASELESS)
		opts |= PCRE2_CASELESS;
	if (flags & RX_ANCHORED)
		opts |= PCRE2_ANCHORED;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		goto nomem;
	r->pattern = strdup(pattern);
	if (r->pattern == NULL)
		goto nomem;
	{
		char *use = long_names(r, pattern);

		if (use == NULL)
			goto nomem;
		r->code = pcre2_compile((PCRE2_SPTR)use, strlen(use), opts, &code,
		    &off, NULL);
		if (use != pattern)
			free(use);
	}
	if (r->code == NULL) {
		rx_errmsg(code, err, errlen);
		if (erroff != NULL)
			*erroff = off;
		rx_free(r);
		return NULL;
	}
	if (rx_info(r, err, errlen) < 0) {
		rx_free(r);
		return NULL;
	}
	/* A refused JIT (no executable memory) leaves the interpreter. */
	if (rx_jit_allowed)
		r->jit = pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE) == 0;
	return r;
nomem:
	snprintf(err, errlen, "out of memory");
	rx_free(r);
	return NULL;
}

void
rx_free(struct rx *r)
{
	if (r == NULL)
		return;
	pcre2_code_free(r->code);
	for (size_t i = 0; i < r->nlong; i++)
		free(r->longname[i]);
	free(r->longname);
	free(r->pattern);
	free(r);
}

static int
rx_run(const struct rx *r, const char *s, size_t len, size_t start,
    pcre2_match_data *md, uint32_t opts)
{
	return pcre2_match(r->code, (PCRE2_SPTR)s, len, start, opts, md,
	    rx_mctx);
}

int
rx_match(const struct rx *r, const char *s, size_t len, size_t start,
    struct rx_span *spans, size_t nspans)
{
	pcre2_match_data *md;
	PCRE2_SIZE *ov;
	int rc;
	size_t i;

	if (r == NULL || start > len)
		return RX_ERROR;
	md = rx_md();
	if (md == NULL)
		return RX_ERROR;
	rc = rx_run(r, s, len, start, md, 0);
	/* The JIT's own stack is small; the interpreter's limits are ours. */
	if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
		rc = rx_run(r, s, len, start, md, PCRE2_NO_JIT);
	if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL)
		return RX_NOMATCH;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT)
		return RX_LIMIT;
	if (rc < 0)
		return RX_ERROR;
	if (rc == 0)	/* cannot happen: the match data fits every group */
		rc = RX_MAX_GROUPS + 1;
	ov = pcre2_get_ovector_pointer(md);
	for (i = 0; spans != NULL && i < nspans; i++) {
		if (i < (size_t)rc && ov[2 * i] != PCRE2_UNSET) {
			spans[i].start = (long)ov[2 * i];
			spans[i].end = (long)ov[2 * i + 1];
		} else {
			spans[i].start = -1;
			spans[i].end = -1;
		}
	}
	return rc;
}

bool
rx_test(const struct rx *r, const char *s, size_t len)
{
	return rx_match(r, s, len, 0, NULL, 0) > 0;
}

size_t
rx_groups(const struct rx *r)
{
	return r->ngroups;
}

size_t
rx_names(const struct rx *r)
{
	return r->nnames;
}

const char *
rx_name_at(const struct rx *r, size_t i, size_t *group)
{
	PCRE2_SPTR e;

	if (i >= r->nnames)
		return NULL;
	e = r->name_table + i * r->name_entry;
	if (group != NULL)
		*group = ((size_t)e[0] << 8) | e[1];
	if (r->nlong > 0 && strncmp((const char *)e + 2, "_rxl", 4) == 0) {
		size_t k = (size_t)strtoul((const char *)e + 6, NULL, 10);

		if (k < r->nlong)
			return r->longname[k];
	}
	return (const char *)(e + 2);
}

int
rx_group_of(const struct rx *r, const char *name)
{
	size_t i, g;
	const char *n;

	for (i = 0; i < r->nnames; i++) {
		n = rx_name_at(r, i, &g);
		if (n != NULL && strcmp(n, name) == 0)
			return (int)g;
	}
	return -1;
}

bool
rx_jitted(const struct rx *r)
{
	return r->jit;
}

const char *
rx_pattern(const struct rx *r)
{
	return r->pattern;
}

const char *
rx_engine(void)
{
	(void)pthread_once(&rx_once, rx_init);
	return rx_engine_text;
}
