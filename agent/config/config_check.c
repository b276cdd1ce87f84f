/*
 * config_check: value checks that rows name in their check/vcheck field
 * (agent/config/config_schema.h).  Each reports FILE:LINE:COL: message itself.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "../event.h"
#include "../lib/lfilter.h"
#include "../lib/redact.h"
#include "../lib/rx.h"

/* Longest regex we hand to PCRE2 (agent/lib/rx.h RX_PATTERN_MAX). */
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

/*
 * A destination's hostname is a host name or an IP address, nothing more:
 * "li:9000", "https://li" or "li/api" would pass as a name and fail at
 * every send.  Say which key holds the part instead.  IPv6 literals stay
 * accepted, bare (fe80::1) or bracketed ([fe80::1]); a port after the
 * brackets ([fe80::1]:9000) is a port.
 */
static const char *
port_part(const char *v)
{
	const char *colon;

	if (v[0] == '[') {
		colon = strchr(v, ']');
		return colon != NULL && colon[1] == ':' ? colon + 2 : NULL;
	}
	colon = strchr(v, ':');
	if (colon == NULL || strchr(colon + 1, ':') != NULL)
		return NULL;	/* no colon, or an IPv6 literal */
	return colon + 1;
}

int
check_dest_hostname(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	const char *scheme = strstr(v, "://"), *port;
	char b[96];

	if (scheme != NULL) {
		rep(c, true, line, col, "'%s': '%s' holds a scheme: give the "
		    "host name alone; the protocol goes in proto: and ssl: (an "
		    "http destination's full URL in url:)", key,
		    show(v, b, sizeof(b)));
		return -1;
	}
	if (!has_ctl_or_space(v) && strchr(v, '/') != NULL) {
		rep(c, true, line, col, "'%s': '%s' holds a path: give the host "
		    "name alone (an http destination's path goes in url:)", key,
		    show(v, b, sizeof(b)));
		return -1;
	}
	port = port_part(v);
	if (port != NULL && !has_ctl_or_space(v)) {
		if (port[0] != '\0' && strspn(port, "0123456789") == strlen(port) &&
		    strlen(port) <= 5)
			rep(c, true, line, col, "'%s': '%s' holds a port: use "
			    "port: %s", key, show(v, b, sizeof(b)), port);
		else
			rep(c, true, line, col, "'%s': '%s' holds a port: give "
			    "the host name alone and the port in port:", key,
			    show(v, b, sizeof(b)));
		return -1;
	}
	return check_hostname(c, key, v, line, col);
}

/*
 * filelog include/exclude: globs of file names inside directory, as
 * liagent's.  A path there matches no file name and the filelog would
 * follow nothing without a word: say where its directory goes.
 */
int
check_file_glob(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	const char *slash = strrchr(v, '/');
	char b[96], d[96], dd[96], f[96];

	if (slash == NULL)
		return 0;
	if (slash[1] == '\0' || slash == v) {
		rep(c, true, line, col, "'%s': '%s' is not a file name: %s holds "
		    "globs of file names; put the directory in directory:", key,
		    show(v, b, sizeof(b)), key);
		return -1;
	}
	snprintf(d, sizeof(d), "%.*s", (int)(slash - v), v);
	rep(c, true, line, col, "'%s': '%s' holds a directory: %s holds globs "
	    "of file names inside directory; use directory: %s and %s: %s",
	    key, show(v, b, sizeof(b)), key, show(d, dd, sizeof(dd)), key,
	    show(slash + 1, f, sizeof(f)));
	return -1;
}

int
check_url(struct lctx *c, const char *key, const char *v, int line, int col)
{
	char b[96], r[1024];

	if (*v == '\0')
		return 0;
	if ((strncasecmp(v, "http://", 7) != 0 &&
	    strncasecmp(v, "https://", 8) != 0) || has_ctl_or_space(v)) {
		/* echo it without its secrets (user:password@, ?token=),
		 * taken out before it is cut to fit */
		(void)redact_url(v, "***", r, sizeof(r));
		show(r, b, sizeof(b));
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
 * Every regex is PCRE2's (agent/lib/rx.h): compile it as the engine will, so
 * --check-config refuses exactly what would not run, at its line.  Cost
 * is bounded by PCRE2's match limits at match time, not guessed here.
 * Returns v compiled, or NULL after reporting why.
 */
static struct rx *
regex_compiled(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	char err[200];
	size_t off = 0;
	struct rx *re;

	if (strlen(v) > REGEX_MAX_LEN) {
		rep_compile(c, line, col, "'%s': the regex is longer than %d "
		    "characters", key, REGEX_MAX_LEN);
		return NULL;
	}
	re = rx_compile(v, 0, err, sizeof(err), &off);
	if (re == NULL)
		rep_compile(c, line, col, "'%s': invalid regular expression: %s "
		    "(at offset %zu: '%.12s')%s", key, err, off, v + off,
		    c->where != NULL ? c->where : "");
	return re;
}

int
check_regex(struct lctx *c, const char *key, const char *v, int line, int col)
{
	struct rx *re = regex_compiled(c, key, v, line, col);

	if (re == NULL)
		return -1;
	rx_free(re);
	return 0;
}

/*
 * A rule's regex names its groups, "(?<device>...)", and each named group
 * becomes the field esxwatch_<name>: names must be field names.
 */
int
check_rule_regex(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	struct rx *re = regex_compiled(c, key, v, line, col);
	size_t i, g;
	const char *n;

	if (re == NULL)
		return -1;
	for (i = 0; i < rx_names(re); i++) {
		n = rx_name_at(re, i, &g);
		if (n == NULL || !field_name_valid(n) || strlen(n) > 31) {
			rep(c, true, line, col, "'%s': a group name "
			    "(?<name>...) must match [a-z_][a-z0-9_]* "
			    "(at most 31 characters), not '%s'", key,
			    n != NULL ? n : "");
			rx_free(re);
			return -1;
		}
	}
	rx_free(re);
	return 0;
}

/* whitelist, blacklist, filter: liagent's expressions (agent/lib/lfilter.h). */
int
check_lfilter(struct lctx *c, const char *key, const char *v, int line, int col)
{
	char err[160];
	size_t off = 0;
	struct lfilter *f = lfilter_compile(v, err, sizeof(err), &off);

	if (f == NULL) {
		rep_compile(c, line, col + (int)off, "'%s': %s", key, err);
		return -1;
	}
	lfilter_free(f);
	return 0;
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
