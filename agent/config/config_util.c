/*
 * config_util: memory, strings, lists and messages for the configuration
 * loader (agent/config/config_int.h).
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"
#include "../lib/log.h"

/* ------------------------------------------------------------------ */
/* Memory and small string helpers                                     */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */

void
set_str(char **dst, const char *s)
{
	char *n = s ? xstrdup(s) : NULL;

	free(*dst);
	*dst = n;
}

void
strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void
strlist_addn(struct strlist *l, const char *s, size_t n)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrndup(s, n);
}

void
strlist_add(struct strlist *l, const char *s)
{
	strlist_addn(l, s, strlen(s));
}

void
kvlist_free(struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Add or replace: the last value of a key wins (liagent merges this way). */
void
kvlist_set(struct kvlist *l, const char *key, const char *value)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].key, key) == 0) {
			set_str(&l->v[i].value, value);
			return;
		}
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].key = xstrdup(key);
	l->v[l->n].value = xstrdup(value);
	l->n++;
}

/* ------------------------------------------------------------------ */
/* Public helpers                                                      */
/* ------------------------------------------------------------------ */

const char *
kvlist_get(const struct kvlist *l, const char *key)
{
	if (l == NULL || key == NULL)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, key) == 0)
			return l->v[i].value;
	return NULL;
}

bool
strlist_match(const struct strlist *include, const struct strlist *exclude,
    const char *name)
{
	bool in;

	if (name == NULL)
		return false;
	in = include == NULL || include->n == 0;
	for (size_t i = 0; !in && i < include->n; i++)
		if (fnmatch(include->v[i], name, 0) == 0)
			in = true;
	if (!in)
		return false;
	for (size_t i = 0; exclude != NULL && i < exclude->n; i++)
		if (fnmatch(exclude->v[i], name, 0) == 0)
			return false;
	return true;
}


void
cfg_set_str(char **dst, const char *s)
{
	set_str(dst, s);
}

const struct collector_conf *
config_collector(const struct config *cfg, const char *name)
{
	if (cfg == NULL || name == NULL)
		return NULL;
	for (size_t i = 0; i < cfg->ncollectors; i++)
		if (strcmp(cfg->collectors[i].name, name) == 0)
			return &cfg->collectors[i];
	return NULL;
}

/* "a;b; c" -> [a, b, c]: liagent's list syntax, also accepted in YAML. */
void
split_list(struct strlist *l, const char *s)
{
	while (*s != '\0') {
		const char *e = strchr(s, ';');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *a = s, *z = s + n;

		while (a < z && isspace((unsigned char)*a))
			a++;
		while (z > a && isspace((unsigned char)z[-1]))
			z--;
		if (z > a)
			strlist_addn(l, a, (size_t)(z - a));
		s += n;
		if (*s == ';')
			s++;
	}
}

/* ------------------------------------------------------------------ */

/* Names of servers, filelogs and rules: they end up in logs and paths. */
bool
name_valid(const char *v)
{
	size_t n = strlen(v);

	return n >= 1 && n <= 64 && strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

/* Nothing but blanks and comments (# or ;) in buf[0..len), after a
 * UTF-8 byte order mark? */
bool
text_empty(const char *buf, size_t len)
{
	bool comment = false, bol = true;
	size_t i = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;

	for (; i < len; i++) {
		char c = buf[i];

		if (c == '\n') {
			bol = true;
			comment = false;
		} else if (comment || (bol && (c == ' ' || c == '\t' || c == '\r')))
			continue;
		else if (bol && (c == '#' || c == ';'))
			comment = true;
		else
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Reporting                                                           */
/* ------------------------------------------------------------------ */

void
rep(struct lctx *c, bool is_err, int line, int col, const char *fmt, ...)
{
	char msg[1024], out[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(out, sizeof(out), "%s:%d:%d: %s%s", c->file, line,
		    col > 0 ? col : 1, is_err ? "" : "warning: ", msg);
	else
		snprintf(out, sizeof(out), "%s: %s%s", c->file,
		    is_err ? "" : "warning: ", msg);
	if (is_err)
		c->nerr++;
	/* a hostile file cannot make us hoard messages */
	if (c->nmsgs >= 1000)
		return;
	if (c->nmsgs == 999) {
		snprintf(out, sizeof(out), "%s: too many problems; the rest "
		    "are not shown", c->file);
		line = INT_MAX;
	}
	c->msgs = xrealloc(c->msgs, (c->nmsgs + 1) * sizeof(*c->msgs));
	c->msgs[c->nmsgs].line = line;
	c->msgs[c->nmsgs].col = col;
	c->msgs[c->nmsgs].seq = c->nmsgs;
	c->msgs[c->nmsgs].is_err = is_err || line == INT_MAX;
	c->msgs[c->nmsgs].text = xstrdup(out);
	c->nmsgs++;
}

void
rep_compile(struct lctx *c, int line, int col, const char *fmt, ...)
{
	char msg[1024], out[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rep(c, true, line, col, "%s", msg);
	if (!c->keep_broken || c->broken == NULL)
		return;
	c->nerr--;	/* that entry stops, not the whole load */
	if (*c->broken != NULL)
		return;
	snprintf(out, sizeof(out), "%s:%d:%d: %s", c->file, line > 0 ? line : 1,
	    col > 0 ? col : 1, msg);
	*c->broken = xstrdup(out);
}

static int
lmsg_cmp(const void *a, const void *b)
{
	const struct lmsg *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Hand the messages over in file order: the tree builder finds duplicate
 * keys before the walk finds bad values, but a user reads top to bottom.
 */
void
lctx_flush(struct lctx *c)
{
	if (c->nmsgs == 0)
		return;
	qsort(c->msgs, c->nmsgs, sizeof(*c->msgs), lmsg_cmp);
	for (size_t i = 0; i < c->nmsgs; i++) {
		if (c->report != NULL)
			c->report(c->arg, c->msgs[i].is_err, c->msgs[i].text);
		else
			fprintf(stderr, "%s\n", c->msgs[i].text);
		free(c->msgs[i].text);
	}
	free(c->msgs);
	c->msgs = NULL;
	c->nmsgs = 0;
}

/*
 * A value quoted back in a message: one line, printable, short.  Users'
 * typos are echoed, so they must not be able to forge more lines.
 */
const char *
show(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s != '\0' && o + 8 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if (o >= 60 && (ch & 0xc0) != 0x80) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (ch < 0x20 || ch == 0x7f) {
			snprintf(buf + o, len - o, "\\x%02x", ch);
			o += 4;
		} else
			buf[o++] = (char)ch;
	}
	buf[o] = '\0';
	return buf;
}

/* Levenshtein distance of two short keys, for "did you mean". */
static int
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[65];

	if (la > 64 || lb > 64)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int prev = row[0], cur;

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			cur = row[j];
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

/* " (did you mean 'x'?)" or "" */
const char *
suggest(const char *key, const char *const *names, size_t n, char *buf,
    size_t len)
{
	const char *best = NULL;
	int bestd = 3;

	for (size_t i = 0; i < n; i++) {
		int d = edit_distance(key, names[i]);

		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	if (best == NULL || strlen(key) < 3)
		return "";
	snprintf(buf, len, " (did you mean '%s'?)", best);
	return buf;
}

/* errno's text, thread-safe (a reload reads the file beside running threads). */
static const char *
errtext(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", log_errstr(e));
	return buf;
}

/* The whole file, NUL-terminated, at most CONFIG_MAX_BYTES. */
char *
read_whole_file(struct lctx *c, const char *path, size_t *lenp)
{
	char eb[128];
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rep(c, true, 0, 0, "cannot open: %s", errtext(errno,
		    eb, sizeof(eb)));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		rep(c, true, 0, 0, "cannot read: %s", errtext(EISDIR,
		    eb, sizeof(eb)));
		goto err;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rep(c, true, 0, 0, "cannot read: %s",
			    errtext(errno, eb, sizeof(eb)));
			goto err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_MAX_BYTES) {
			rep(c, true, 0, 0, "file is larger than %d bytes",
			    CONFIG_MAX_BYTES);
			goto err;
		}
	}
	close(fd);
	if (buf == NULL)
		buf = xmalloc(1);
	buf[len] = '\0';
	*lenp = len;
	return buf;
err:
	close(fd);
	free(buf);
	return NULL;
}

void
cfg_error(struct lctx *c, int line, int col, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rep(c, true, line, col, "%s", msg);
}
