/*
 * config_check: value checks that rows name in their check/vcheck field
 * (agent/config_schema.h).  Each reports FILE:LINE:COL: message itself.
 */
#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "regexcheck.h"

/* Longest regex we hand to regcomp. */
#define REGEX_MAX_LEN	4096


static bool
has_ctl_or_space(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return true;
	return false;
}

int
check_hostname(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	char b[96];

	if (has_ctl_or_space(v) || strchr(v, '/') != NULL) {
		rep(c, true, line, col, "'%s': '%s' is not a host name", key,
		    show(v, b, sizeof(b)));
		return -1;
	}
	return 0;
}

int
check_url(struct lctx *c, const char *key, const char *v, int line, int col)
{
	char b[96], r[96];
	const char *host, *at, *slash;

	if (*v == '\0')
		return 0;
	if ((strncasecmp(v, "http://", 7) != 0 &&
	    strncasecmp(v, "https://", 8) != 0) || has_ctl_or_space(v)) {
		/* echo it without a user:password@ part */
		show(v, b, sizeof(b));
		host = strstr(b, "://");
		host = host != NULL ? host + 3 : b;
		at = strchr(host, '@');
		slash = strchr(host, '/');
		if (at != NULL && (slash == NULL || at < slash)) {
			snprintf(r, sizeof(r), "%.*s***%s", (int)(host - b), b, at);
			memcpy(b, r, sizeof(b));
		}
		rep(c, true, line, col, "'%s': '%s' is not an http:// or "
		    "https:// URL", key, b);
		return -1;
	}
	return 0;
}

/* It goes into the cfapi URL path: keep it to a UUID's alphabet. */
int
check_agent_id(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	char b[96];

	if (strlen(v) > 64 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(v)) {
		rep(c, true, line, col, "'%s': '%s' must be at most 64 of "
		    "A-Z a-z 0-9 - _ .", key, show(v, b, sizeof(b)));
		return -1;
	}
	return 0;
}

/* RFC 5424 SD-NAME: 1..32 printable US-ASCII except = SP ] " */
int
check_sd_id(struct lctx *c, const char *key, const char *v, int line, int col)
{
	char b[96];
	size_t n = strlen(v);
	bool ok = n >= 1 && n <= 32;

	for (size_t i = 0; ok && i < n; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (ch < 33 || ch > 126 || ch == '=' || ch == ']' || ch == '"')
			ok = false;
	}
	if (!ok) {
		rep(c, true, line, col, "'%s': '%s' is not an RFC 5424 SD-ID "
		    "(1 to 32 printable ASCII characters, no = ] \" or space)",
		    key, show(v, b, sizeof(b)));
		return -1;
	}
	return 0;
}



int
check_name(struct lctx *c, const char *key, const char *v, int line, int col)
{
	char b[96];

	if (!name_valid(v)) {
		rep(c, true, line, col, "'%s': '%s' must be 1 to 64 of "
		    "A-Z a-z 0-9 - _ .", key, show(v, b, sizeof(b)));
		return -1;
	}
	return 0;
}

/* Tags become event fields (docs/events.md): same rules as field names. */
int
check_tag_name(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	static const char *const reserved[] = {
		"text", "timestamp", "source", "event_type"
	};
	char b[96];
	size_t n = strlen(v);
	bool ok = n >= 1 && n <= 64 && (islower((unsigned char)v[0]) ||
	    v[0] == '_') && strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789_") == n;

	for (size_t i = 0; ok && i < NELEM(reserved); i++)
		if (strcmp(v, reserved[i]) == 0) {
			rep(c, !c->ini, line, col, "'%s': '%s' is reserved by "
			    "Log Insight and cannot be a tag name%s", key, v,
			    c->ini ? "; skipped" : "");
			return c->ini ? 1 : -1;
		}
	if (!ok) {
		rep(c, !c->ini, line, col, "'%s': tag name '%s' is not a valid "
		    "field name (^[a-z_][a-z0-9_]*$, at most 64)%s", key,
		    show(v, b, sizeof(b)), c->ini ? "; skipped" : "");
		return c->ini ? 1 : -1;
	}
	return 0;
}

/* An HTTP header: a token name, a value without line breaks. */
int
check_header_name(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	char b[96];
	size_t n = strlen(v);

	if (n == 0 || n > 128 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~") != n) {
		rep(c, true, line, col, "'%s': '%s' is not a valid HTTP header "
		    "name", key, show(v, b, sizeof(b)));
		return -1;
	}
	return 0;
}

int
check_header_value(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	for (const char *p = v; *p != '\0'; p++)
		if (*p == '\r' || *p == '\n') {
			rep(c, true, line, col, "'%s': a header value must not "
			    "contain a line break", key);
			return -1;
		}
	return 0;
}

/*
 * Perl's \d and \D outside a bracket expression: glibc's regcomp takes
 * them for a plain 'd'/'D' without a word, so a rule would silently never
 * match.  (\s \S \w \W \b are glibc extensions that do work.)
 * Returns a pointer to the backslash, or NULL.
 */
static const char *
regex_perlism(const char *re)
{
	int bracket = 0;

	for (const char *p = re; *p != '\0'; p++) {
		if (bracket) {
			if (*p == ']' && bracket > 1)
				bracket = 0;
			else
				bracket++;
			continue;
		}
		if (*p == '[') {
			bracket = 1;
			if (p[1] == '^')
				p++;
			continue;
		}
		if (*p == '\\' && p[1] != '\0') {
			if (p[1] == 'd' || p[1] == 'D')
				return p;
			p++;
		}
	}
	return NULL;
}

/* liagent's event_marker is a Perl-style regex: \d -> [0-9], \D -> [^0-9]. */
char *
regex_from_perl(const char *re)
{
	size_t n = strlen(re), o = 0;
	char *out = xmalloc(n * 3 + 1);
	const char *p;

	while ((p = regex_perlism(re)) != NULL) {
		memcpy(out + o, re, (size_t)(p - re));
		o += (size_t)(p - re);
		memcpy(out + o, p[1] == 'd' ? "[0-9]" : "[^0-9]",
		    p[1] == 'd' ? 5 : 6);
		o += p[1] == 'd' ? 5 : 6;
		re = p + 2;
	}
	memcpy(out + o, re, strlen(re) + 1);
	return out;
}

int
check_regex(struct lctx *c, const char *key, const char *v, int line, int col)
{
	const char *why;
	size_t at;
	regex_t re;
	char err[256];
	int rc;

	why = regex_perlism(v);
	if (why != NULL) {
		rep(c, true, line, col, "'%s': '\\%c' is not POSIX extended "
		    "regex syntax (it would match a plain '%c'); use %s", key,
		    why[1], why[1], why[1] == 'd' ? "[0-9]" : "[^0-9]");
		return -1;
	}
	if (strlen(v) > REGEX_MAX_LEN) {
		rep(c, true, line, col, "'%s': the regex is longer than %d "
		    "characters", key, REGEX_MAX_LEN);
		return -1;
	}
	/* the one cost check, shared with the rules engine */
	why = regex_cost_refused(v, &at);
	if (why != NULL) {
		size_t from = at > 8 ? at - 8 : 0;

		rep(c, true, line, col, "'%s': near '%.*s': %s", key,
		    (int)(at + 1 - from), v + from, why);
		return -1;
	}
	rc = regcomp(&re, v, REG_EXTENDED);
	if (rc != 0) {
		regerror(rc, &re, err, sizeof(err));
		rep(c, true, line, col, "'%s': invalid regular expression: %s%s",
		    key, err, c->rule != NULL ? c->rule : "");
		return -1;
	}
	regfree(&re);
	return 0;
}

/*
 * A rule's regex may name its groups, "(?<device>...)": the logwatch engine
 * strips the names before regcomp (collectors/rules.c) and reports each
 * named group as a field.  Strip them the same way here so the check sees
 * what regcomp will see, and refuse names that cannot be field names.
 */
int
check_rule_regex(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	size_t n = strlen(v), o = 0;
	char *out = xmalloc(n + 1);
	int bracket = 0, rc;

	for (size_t i = 0; i < n;) {
		if (bracket) {
			if (v[i] == ']' && bracket > 1)
				bracket = 0;
			else
				bracket++;
			out[o++] = v[i++];
			continue;
		}
		if (v[i] == '\\' && i + 1 < n) {
			out[o++] = v[i++];
			out[o++] = v[i++];
			continue;
		}
		if (v[i] == '[') {
			bracket = 1;
			out[o++] = v[i++];
			if (v[i] == '^')
				out[o++] = v[i++];
			continue;
		}
		if (v[i] == '(' && v[i + 1] == '?' && v[i + 2] == '<') {
			size_t j = i + 3;

			while (j < n && j - (i + 3) < 32 && (islower(
			    (unsigned char)v[j]) || v[j] == '_' || (j > i + 3 &&
			    isdigit((unsigned char)v[j]))))
				j++;
			if (j == i + 3 || j >= n || v[j] != '>' ||
			    j - (i + 3) > 31) {
				rep(c, true, line, col, "'%s': a group name "
				    "(?<name>...) must match [a-z_][a-z0-9_]* "
				    "(at most 31 characters)", key);
				free(out);
				return -1;
			}
			out[o++] = '(';
			i = j + 1;
			continue;
		}
		out[o++] = v[i++];
	}
	out[o] = '\0';
	rc = check_regex(c, key, out, line, col);
	free(out);
	return rc;
}

int
check_nonempty(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	if (*v == '\0') {
		rep(c, true, line, col, "'%s' must not be empty", key);
		return -1;
	}
	return 0;
}
