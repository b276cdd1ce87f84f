/*
 * config: agent.yaml (libyaml) or liagent.ini into a struct config
 * (docs/configuration.md).
 *
 * The YAML side runs libyaml's event parser and builds a small tree of its
 * own, so every node keeps the line and column it came from: errors name
 * the exact place, and duplicate keys (which libyaml's loader would accept
 * silently) are caught while the tree is built.  The tree is then walked
 * with tables of key specifications (name, type, offset, range), the same
 * tables the liagent.ini reader uses, so a key means exactly the same thing
 * whichever syntax it arrives in.
 *
 * Every problem is reported as FILE:LINE:COL: message and the walk goes on,
 * so a user sees all the mistakes of a file at once; the load fails at the
 * end if there was any error.  liagent.ini is more forgiving: keys and
 * sections we do not know are warnings, as liagent itself ignores them.
 *
 * config_ini.c would have been the natural split; the two readers share
 * the key tables and the value parsers, so they live in one file with one
 * section each rather than growing an internal header.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <yaml.h>

#include "config.h"
#include "regexcheck.h"

/* A configuration file bigger than this is a mistake (or an attack). */
#define CONFIG_MAX_BYTES	(4 * 1024 * 1024)
/* The schema is four levels deep; anything far deeper is garbage. */
#define YAML_MAX_DEPTH		64
/* Bounds the tree's memory whatever the input looks like. */
#define YAML_MAX_NODES		200000
/* Longest regex we hand to regcomp, and the repetition budget (below). */
#define REGEX_MAX_LEN		4096
#define REGEX_MAX_REPEAT	1000
#define REGEX_MAX_REPEAT_PRODUCT 100000L

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Memory and small string helpers                                     */
/* ------------------------------------------------------------------ */

/*
 * Out of memory while reading the configuration leaves nothing sensible to
 * do: the agent cannot run without one.  Abort loudly rather than thread
 * ENOMEM through every setter.
 */
static void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		fputs("esxwatch: config: out of memory\n", stderr);
		abort();
	}
	return p;
}

static void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL) {
		fputs("esxwatch: config: out of memory\n", stderr);
		abort();
	}
	return q;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

static void
set_str(char **dst, const char *s)
{
	char *n = s ? xstrdup(s) : NULL;

	free(*dst);
	*dst = n;
}

static void
strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void
strlist_addn(struct strlist *l, const char *s, size_t n)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrndup(s, n);
}

static void
strlist_add(struct strlist *l, const char *s)
{
	strlist_addn(l, s, strlen(s));
}

static void
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
static void
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

const char *
dest_proto_name(enum dest_proto p)
{
	switch (p) {
	case PROTO_CFAPI:	return "cfapi";
	case PROTO_SYSLOG:	return "syslog";
	case PROTO_HTTP:	return "http";
	case PROTO_FILE:	return "file";
	}
	return "unknown";
}

int
dest_port(const struct dest_conf *d)
{
	if (d->port != 0)
		return d->port;
	switch (d->proto) {
	case PROTO_CFAPI:	return d->ssl ? 9543 : 9000;
	case PROTO_SYSLOG:	return d->ssl ? 6514 : 514;
	case PROTO_HTTP:	return d->ssl ? 443 : 80;
	case PROTO_FILE:	return 0;
	}
	return 0;
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

/* ------------------------------------------------------------------ */
/* Defaults and freeing                                                */
/* ------------------------------------------------------------------ */

static const struct {
	const char	*name;
	int		 interval;
} collector_defaults[] = {
	{ "nic",	60 },
	{ "datastore",	30 },
	{ "vsan",	300 },
	{ "smart",	3600 },
	{ "agent",	300 },
	{ "logwatch",	1 },
	{ "diagnosis",	10 },
};

static const char *const filelog_defaults[] = { "vmkernel", "vobd", "hostd" };

static void
dest_init(struct dest_conf *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->name = xstrdup(name);
	d->hostname = xstrdup("");
	d->proto = PROTO_CFAPI;
	d->port = 0;
	d->ssl = true;
	d->ssl_ca_path = xstrdup("");
	d->ssl_accept_any = false;
	d->ssl_cn = xstrdup("");
	d->reconnect = 30;
	d->agent_id = xstrdup("");
	d->transport = xstrdup("tcp");
	d->format = xstrdup("rfc5424");
	d->framing = xstrdup("octet-counting");
	d->url = xstrdup("");
	d->compress = xstrdup("gzip");
	d->path = xstrdup("");
	d->facility = xstrdup("local4");
	d->sd_id = xstrdup("esxwatch@32473");
	d->max_message_size = 2048;
	d->timeout = 30;
}

static void
dest_free(struct dest_conf *d)
{
	free(d->name);
	free(d->hostname);
	free(d->ssl_ca_path);
	free(d->ssl_cn);
	free(d->agent_id);
	free(d->transport);
	free(d->format);
	free(d->framing);
	free(d->url);
	kvlist_free(&d->headers);
	free(d->compress);
	free(d->path);
	free(d->facility);
	free(d->sd_id);
	memset(d, 0, sizeof(*d));
}

/* directory NULL = "not given": config_finish() fills host.log_dir in. */
static void
filelog_init(struct filelog_conf *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->directory = NULL;
	f->event_marker = NULL;
	f->forward = FORWARD_MATCHES;
	f->read_from_head = false;
	f->enabled = true;
}

static void
filelog_free(struct filelog_conf *f)
{
	free(f->name);
	free(f->directory);
	strlist_free(&f->include);
	strlist_free(&f->exclude);
	free(f->event_marker);
	kvlist_free(&f->tags);
	memset(f, 0, sizeof(*f));
}

static void
filelogs_clear(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nfilelogs; i++)
		filelog_free(&cfg->filelogs[i]);
	free(cfg->filelogs);
	cfg->filelogs = NULL;
	cfg->nfilelogs = 0;
}

static struct filelog_conf *
filelog_add(struct config *cfg, const char *name)
{
	cfg->filelogs = xrealloc(cfg->filelogs,
	    (cfg->nfilelogs + 1) * sizeof(*cfg->filelogs));
	filelog_init(&cfg->filelogs[cfg->nfilelogs], name);
	return &cfg->filelogs[cfg->nfilelogs++];
}

static struct dest_conf *
server_add(struct config *cfg, const char *name)
{
	cfg->servers = xrealloc(cfg->servers,
	    (cfg->nservers + 1) * sizeof(*cfg->servers));
	dest_init(&cfg->servers[cfg->nservers], name);
	return &cfg->servers[cfg->nservers++];
}

static void
rule_init(struct rule_conf *r)
{
	memset(r, 0, sizeof(*r));
	r->severity = xstrdup("warning");
	r->enabled = 1;
}

static void
rule_free(struct rule_conf *r)
{
	free(r->name);
	free(r->match);
	free(r->regex);
	free(r->severity);
	strlist_free(&r->files);
	free(r->hint);
	free(r->vob_id);
	free(r->literal);
	free(r->src_file);
	memset(r, 0, sizeof(*r));
}

void
rule_conf_free_array(struct rule_conf *rules, size_t n)
{
	if (rules == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		rule_free(&rules[i]);
	free(rules);
}

/* Defaults; the default filelogs' directories stay unresolved (NULL). */
static struct config *
config_new(void)
{
	struct config *cfg = xmalloc(sizeof(*cfg));

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup("");
	dest_init(&cfg->server, "server");
	cfg->storage_directory = xstrdup("");
	cfg->max_disk_buffer = 200;
	cfg->debug_level = 0;
	cfg->log_file = xstrdup("");
	cfg->batch_max_events = 500;
	cfg->batch_max_bytes = 1048576;
	cfg->batch_flush_interval = 1;
	cfg->platform = xstrdup("auto");
	cfg->tools_dir = xstrdup("");
	cfg->log_dir = xstrdup("");
	cfg->hostname = xstrdup("");
	cfg->ncollectors = NELEM(collector_defaults);
	cfg->collectors = xmalloc(cfg->ncollectors * sizeof(*cfg->collectors));
	memset(cfg->collectors, 0, cfg->ncollectors * sizeof(*cfg->collectors));
	for (size_t i = 0; i < cfg->ncollectors; i++) {
		struct collector_conf *c = &cfg->collectors[i];

		c->name = xstrdup(collector_defaults[i].name);
		c->enabled = true;
		c->interval = collector_defaults[i].interval;
		c->timeout = 30;
		c->diag_window = 300;
		c->diag_flap_count = 5;
		c->diag_flap_window = 300;
		c->diag_drive_window = 86400;
		c->diag_silent_after = 300;
	}
	for (size_t i = 0; i < NELEM(filelog_defaults); i++) {
		struct filelog_conf *f = filelog_add(cfg, filelog_defaults[i]);
		char inc[64];

		snprintf(inc, sizeof(inc), "%s.log", filelog_defaults[i]);
		strlist_add(&f->include, inc);
	}
	cfg->rules_file = xstrdup("");
	return cfg;
}

/* What is left to resolve once the whole file is read. */
static void
config_resolve(struct config *cfg)
{
	const char *dir = cfg->log_dir[0] != '\0' ? cfg->log_dir : "/var/log";

	for (size_t i = 0; i < cfg->nfilelogs; i++)
		if (cfg->filelogs[i].directory == NULL)
			cfg->filelogs[i].directory = xstrdup(dir);
}

struct config *
config_default(void)
{
	struct config *cfg = config_new();

	config_resolve(cfg);
	return cfg;
}

void
config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	dest_free(&cfg->server);
	for (size_t i = 0; i < cfg->nservers; i++)
		dest_free(&cfg->servers[i]);
	free(cfg->servers);
	free(cfg->storage_directory);
	free(cfg->log_file);
	free(cfg->platform);
	free(cfg->tools_dir);
	free(cfg->log_dir);
	free(cfg->hostname);
	kvlist_free(&cfg->tags);
	for (size_t i = 0; i < cfg->ncollectors; i++) {
		free(cfg->collectors[i].name);
		strlist_free(&cfg->collectors[i].include);
		strlist_free(&cfg->collectors[i].exclude);
	}
	free(cfg->collectors);
	filelogs_clear(cfg);
	rule_conf_free_array(cfg->rules, cfg->nrules);
	free(cfg->rules_file);
	free(cfg);
}

/* ------------------------------------------------------------------ */
/* Reporting                                                           */
/* ------------------------------------------------------------------ */

/* A message waiting to be reported: they go out sorted by position. */
struct lmsg {
	int	 line, col;
	size_t	 seq;
	bool	 is_err;
	char	*text;
};

struct lctx {
	const char		*file;
	config_report_fn	 report;
	void			*arg;
	int			 nerr;
	bool			 ini;		/* liagent.ini: softer rules */
	size_t			 nnodes;
	const char		*rule;		/* " (rule 'x' at line N)" or "" */
	struct lmsg		*msgs;
	size_t			 nmsgs;
};

static void
rep(struct lctx *c, bool is_err, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
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
static void
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
static const char *
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
static const char *
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

/* ------------------------------------------------------------------ */
/* Value checks shared by both readers                                 */
/* ------------------------------------------------------------------ */

/*
 * A check returns 0 (fine), -1 (error reported) or 1 (warning reported,
 * skip the value: only liagent.ini uses that).
 */
typedef int (*check_fn)(struct lctx *, const char *key, const char *val,
    int line, int col);

static bool
has_ctl_or_space(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int
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

static int
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
static int
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
static int
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

/* Names of servers, filelogs and rules: they end up in logs and paths. */
static bool
name_valid(const char *v)
{
	size_t n = strlen(v);

	return n >= 1 && n <= 64 && strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

static int
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
static int
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
static int
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

static int
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
 * glibc's regcomp expands bounded repetitions into copies of the atom, so
 * "(a{1000}){1000}" costs a million nodes (and nesting more, far more).
 * Refuse counts whose product could explode before calling it.
 */
static const char *
regex_too_costly(const char *re)
{
	long product = 1;
	int bracket = 0;

	if (strlen(re) > REGEX_MAX_LEN)
		return "the regex is longer than 4096 characters";
	for (const char *p = re; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0') {
			p++;
			continue;
		}
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
		if (*p == '{' && isdigit((unsigned char)p[1])) {
			long m = 0;
			const char *q = p + 1;

			for (; isdigit((unsigned char)*q) && m <= 100000; q++)
				m = m * 10 + (*q - '0');
			if (*q == ',') {
				long n = 0;

				for (q++; isdigit((unsigned char)*q) &&
				    n <= 100000; q++)
					n = n * 10 + (*q - '0');
				if (n > m)
					m = n;
			}
			if (m > REGEX_MAX_REPEAT)
				return "a repetition count is above 1000";
			product *= m > 1 ? m : 1;
			if (product > REGEX_MAX_REPEAT_PRODUCT)
				return "the repetition counts multiply to "
				    "more than 100000";
		}
	}
	return NULL;
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
static char *
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

static int
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
	why = regex_too_costly(v);
	if (why != NULL) {
		rep(c, true, line, col, "'%s': %s", key, why);
		return -1;
	}
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
static int
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

static int
check_nonempty(struct lctx *c, const char *key, const char *v, int line,
    int col)
{
	if (*v == '\0') {
		rep(c, true, line, col, "'%s' must not be empty", key);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Key tables                                                          */
/* ------------------------------------------------------------------ */

enum ktype {
	KT_STR,		/* char *, "" when empty */
	KT_OSTR,	/* char *, NULL when absent or empty */
	KT_INT,		/* int with range */
	KT_LONG,	/* long with range */
	KT_BOOL,	/* bool */
	KT_IBOOL,	/* int 1/0 */
	KT_ENUM,	/* char *, one of choices */
	KT_PROTO,	/* enum dest_proto */
	KT_FORWARD,	/* enum forward_mode */
	KT_LIST,	/* struct strlist: sequence or ;-separated string */
	KT_KV,		/* struct kvlist: mapping of scalars */
};

struct kspec {
	const char		*name;
	enum ktype		 type;
	size_t			 off;
	long			 min, max;
	const char *const	*choices;
	check_fn		 check;		/* the value (KV: the key) */
	check_fn		 vcheck;	/* KV: the value */
};

static const char *const proto_choices[] = {
	"cfapi", "syslog", "http", "file", NULL
};
static const char *const transport_choices[] = { "udp", "tcp", NULL };
static const char *const format_choices[] = {
	"rfc5424", "rfc3164", "json_lines", "json_array", NULL
};
static const char *const framing_choices[] = {
	"octet-counting", "newline", NULL
};
static const char *const compress_choices[] = { "gzip", "none", NULL };
static const char *const facility_choices[] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "local0", "local1", "local2",
	"local3", "local4", "local5", "local6", "local7", NULL
};
static const char *const platform_choices[] = {
	"auto", "esxi", "linux", NULL
};
static const char *const forward_choices[] = { "matches", "all", NULL };
static const char *const severity_choices[] = {
	"info", "warning", "error", "critical", NULL
};

#define D(f)	offsetof(struct dest_conf, f)
static const struct kspec dest_keys[] = {
	{ "hostname", KT_STR, D(hostname), 0, 0, NULL, check_hostname, NULL },
	{ "proto", KT_PROTO, D(proto), 0, 0, proto_choices, NULL, NULL },
	{ "port", KT_INT, D(port), 0, 65535, NULL, NULL, NULL },
	{ "ssl", KT_BOOL, D(ssl), 0, 0, NULL, NULL, NULL },
	{ "ssl_ca_path", KT_STR, D(ssl_ca_path), 0, 0, NULL, NULL, NULL },
	{ "ssl_accept_any", KT_BOOL, D(ssl_accept_any), 0, 0, NULL, NULL, NULL },
	{ "ssl_cn", KT_STR, D(ssl_cn), 0, 0, NULL, check_hostname, NULL },
	{ "reconnect", KT_INT, D(reconnect), 0, 525600, NULL, NULL, NULL },
	{ "agent_id", KT_STR, D(agent_id), 0, 0, NULL, check_agent_id, NULL },
	{ "transport", KT_ENUM, D(transport), 0, 0, transport_choices, NULL, NULL },
	{ "format", KT_ENUM, D(format), 0, 0, format_choices, NULL, NULL },
	{ "framing", KT_ENUM, D(framing), 0, 0, framing_choices, NULL, NULL },
	{ "url", KT_STR, D(url), 0, 0, NULL, check_url, NULL },
	{ "headers", KT_KV, D(headers), 0, 0, NULL, check_header_name,
	    check_header_value },
	{ "compress", KT_ENUM, D(compress), 0, 0, compress_choices, NULL, NULL },
	{ "path", KT_STR, D(path), 0, 0, NULL, NULL, NULL },
	{ "facility", KT_ENUM, D(facility), 0, 0, facility_choices, NULL, NULL },
	{ "sd_id", KT_STR, D(sd_id), 0, 0, NULL, check_sd_id, NULL },
	{ "max_message_size", KT_INT, D(max_message_size), 480, 65507, NULL,
	    NULL, NULL },
	{ "timeout", KT_INT, D(timeout), 1, 3600, NULL, NULL, NULL },
};
#undef D

#define C(f)	offsetof(struct config, f)
static const struct kspec storage_keys[] = {
	{ "directory", KT_STR, C(storage_directory), 0, 0, NULL, NULL, NULL },
	{ "max_disk_buffer", KT_LONG, C(max_disk_buffer), 1, 1048576, NULL,
	    NULL, NULL },
	{ "max_disk_buffer_kb", KT_LONG, C(max_disk_buffer_kb), 0, 1073741824,
	    NULL, NULL, NULL },
	{ "segment_kb", KT_LONG, C(segment_kb), 0, 65536, NULL, NULL, NULL },
};
static const struct kspec logging_keys[] = {
	{ "debug_level", KT_INT, C(debug_level), 0, 2, NULL, NULL, NULL },
	{ "file", KT_STR, C(log_file), 0, 0, NULL, NULL, NULL },
};
static const struct kspec batch_keys[] = {
	{ "max_events", KT_INT, C(batch_max_events), 1, 500, NULL, NULL, NULL },
	{ "max_bytes", KT_LONG, C(batch_max_bytes), 1024, 4194304, NULL, NULL,
	    NULL },
	{ "flush_interval", KT_INT, C(batch_flush_interval), 1, 3600, NULL,
	    NULL, NULL },
};
static const struct kspec host_keys[] = {
	{ "platform", KT_ENUM, C(platform), 0, 0, platform_choices, NULL, NULL },
	{ "tools_dir", KT_STR, C(tools_dir), 0, 0, NULL, NULL, NULL },
	{ "log_dir", KT_STR, C(log_dir), 0, 0, NULL, NULL, NULL },
	{ "hostname", KT_STR, C(hostname), 0, 0, NULL, check_hostname, NULL },
};
static const struct kspec tags_key =
	{ "tags", KT_KV, C(tags), 0, 0, NULL, check_tag_name, NULL };
static const struct kspec rules_file_key =
	{ "rules_file", KT_STR, C(rules_file), 0, 0, NULL, NULL, NULL };
#undef C

#define K(f)	offsetof(struct collector_conf, f)
static const struct kspec collector_keys[] = {
	{ "enabled", KT_BOOL, K(enabled), 0, 0, NULL, NULL, NULL },
	{ "interval", KT_INT, K(interval), 1, 604800, NULL, NULL, NULL },
	{ "include", KT_LIST, K(include), 0, 0, NULL, NULL, NULL },
	{ "exclude", KT_LIST, K(exclude), 0, 0, NULL, NULL, NULL },
	{ "timeout", KT_INT, K(timeout), 1, 3600, NULL, NULL, NULL },
};
/* collectors.diagnosis: the common keys and the rules' thresholds. */
static const struct kspec diagnosis_keys[] = {
	{ "enabled", KT_BOOL, K(enabled), 0, 0, NULL, NULL, NULL },
	{ "interval", KT_INT, K(interval), 1, 604800, NULL, NULL, NULL },
	{ "include", KT_LIST, K(include), 0, 0, NULL, NULL, NULL },
	{ "exclude", KT_LIST, K(exclude), 0, 0, NULL, NULL, NULL },
	{ "timeout", KT_INT, K(timeout), 1, 3600, NULL, NULL, NULL },
	{ "window", KT_INT, K(diag_window), 10, 3600, NULL, NULL, NULL },
	{ "flap_count", KT_INT, K(diag_flap_count), 1, 15, NULL, NULL, NULL },
	{ "flap_window", KT_INT, K(diag_flap_window), 10, 86400, NULL, NULL, NULL },
	{ "drive_window", KT_INT, K(diag_drive_window), 60, 2592000, NULL, NULL, NULL },
	{ "silent_after", KT_INT, K(diag_silent_after), 10, 86400, NULL, NULL, NULL },
};
#undef K

#define F(f)	offsetof(struct filelog_conf, f)
static const struct kspec filelog_keys[] = {
	{ "directory", KT_STR, F(directory), 0, 0, NULL, NULL, NULL },
	{ "include", KT_LIST, F(include), 0, 0, NULL, NULL, NULL },
	{ "exclude", KT_LIST, F(exclude), 0, 0, NULL, NULL, NULL },
	{ "event_marker", KT_OSTR, F(event_marker), 0, 0, NULL, check_regex,
	    NULL },
	{ "tags", KT_KV, F(tags), 0, 0, NULL, check_tag_name, NULL },
	{ "forward", KT_FORWARD, F(forward), 0, 0, forward_choices, NULL, NULL },
	{ "read_from_head", KT_BOOL, F(read_from_head), 0, 0, NULL, NULL, NULL },
	{ "enabled", KT_BOOL, F(enabled), 0, 0, NULL, NULL, NULL },
};
#undef F

#define R(f)	offsetof(struct rule_conf, f)
static const struct kspec rule_keys[] = {
	{ "name", KT_OSTR, R(name), 0, 0, NULL, check_name, NULL },
	{ "match", KT_OSTR, R(match), 0, 0, NULL, check_nonempty, NULL },
	{ "regex", KT_OSTR, R(regex), 0, 0, NULL, check_rule_regex, NULL },
	{ "severity", KT_ENUM, R(severity), 0, 0, severity_choices, NULL, NULL },
	{ "files", KT_LIST, R(files), 0, 0, NULL, NULL, NULL },
	{ "hint", KT_OSTR, R(hint), 0, 0, NULL, NULL, NULL },
	{ "enabled", KT_IBOOL, R(enabled), 0, 0, NULL, NULL, NULL },
	{ "vob_id", KT_OSTR, R(vob_id), 0, 0, NULL, NULL, NULL },
	{ "literal", KT_OSTR, R(literal), 0, 0, NULL, NULL, NULL },
};
#undef R

/* Where each key of a table was set (line 0 = not set), per section. */
struct kpos {
	int	line, col;
	bool	ok;		/* the value was valid and stored */
};
#define KPOS_MAX	24

static int
kspec_index(const struct kspec *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Was the key present with a value that was refused (and reported)? */
static bool
kspec_refused(const struct kspec *tab, size_t n, const struct kpos *pos,
    const char *name)
{
	int i = kspec_index(tab, n, name);

	return i >= 0 && pos[i].line > 0 && !pos[i].ok;
}

static const char *
unknown_hint(const char *key, const struct kspec *tab, size_t n, char *buf,
    size_t len)
{
	const char *names[KPOS_MAX];

	for (size_t i = 0; i < n && i < KPOS_MAX; i++)
		names[i] = tab[i].name;
	return suggest(key, names, n < KPOS_MAX ? n : KPOS_MAX, buf, len);
}

/* ------------------------------------------------------------------ */
/* Scalar parsing                                                      */
/* ------------------------------------------------------------------ */

static int
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on" };
	static const char *const no[] = { "no", "false", "off" };

	for (size_t i = 0; i < NELEM(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* Plain decimal only: "0x10", "1e3", " 5", "5 " and "" are not numbers. */
static int
parse_long(const char *s, long *out, bool *overflow)
{
	const char *p = s;
	long v;
	char *end;

	*overflow = false;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE)
		*overflow = true;
	*out = v;
	return 0;
}

static const char *
choices_text(const char *const *ch, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; ch[i] != NULL && o < len; i++) {
		int n = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", ch[i]);

		if (n < 0)
			break;
		o += (size_t)n;
	}
	return buf;
}

static int
choice_index(const char *const *ch, const char *s)
{
	for (int i = 0; ch[i] != NULL; i++)
		if (strcmp(ch[i], s) == 0)
			return i;
	return -1;
}

static const char *
ktype_what(enum ktype t)
{
	switch (t) {
	case KT_INT:
	case KT_LONG:	return "a number";
	case KT_BOOL:
	case KT_IBOOL:	return "a boolean (yes/no)";
	case KT_LIST:	return "a list";
	case KT_KV:	return "a mapping";
	default:	return "a string";
	}
}

/*
 * Apply one scalar value.  isnull: the YAML value was empty/~/null (INI:
 * an empty value).  Returns 0 when the value was stored.
 */
static int
apply_scalar(struct lctx *c, const struct kspec *k, void *base, const char *s,
    bool isnull, int line, int col)
{
	char *field = (char *)base + k->off;
	char b[96], chb[256];
	bool bv, ovf;
	long lv;
	int ci;

	switch (k->type) {
	case KT_STR:
		if (isnull)
			s = "";
		if (k->check != NULL && k->check(c, k->name, s, line, col) != 0)
			return -1;
		set_str((char **)(void *)field, s);
		return 0;
	case KT_OSTR:
		/* absent = NULL; "" too, unless the check refuses it */
		if (isnull) {
			set_str((char **)(void *)field, NULL);
			return 0;
		}
		if (k->check != NULL && k->check(c, k->name, s, line, col) != 0)
			return -1;
		set_str((char **)(void *)field, *s != '\0' ? s : NULL);
		return 0;
	case KT_INT:
	case KT_LONG:
		if (isnull) {
			rep(c, true, line, col, "'%s': expected a number, got "
			    "an empty value", k->name);
			return -1;
		}
		if (parse_long(s, &lv, &ovf) < 0) {
			rep(c, true, line, col, "'%s': expected a number, got "
			    "'%s'", k->name, show(s, b, sizeof(b)));
			return -1;
		}
		if (ovf || lv < k->min || lv > k->max) {
			rep(c, true, line, col, "'%s': %s is out of range "
			    "%ld..%ld", k->name, show(s, b, sizeof(b)),
			    k->min, k->max);
			return -1;
		}
		if (k->type == KT_INT)
			*(int *)(void *)field = (int)lv;
		else
			*(long *)(void *)field = lv;
		return 0;
	case KT_BOOL:
	case KT_IBOOL:
		if (isnull || parse_bool(s, &bv) < 0) {
			rep(c, true, line, col, "'%s': expected a boolean "
			    "(yes/no/true/false/on/off), got '%s'", k->name,
			    isnull ? "" : show(s, b, sizeof(b)));
			return -1;
		}
		if (k->type == KT_BOOL)
			*(bool *)(void *)field = bv;
		else
			*(int *)(void *)field = bv ? 1 : 0;
		return 0;
	case KT_ENUM:
	case KT_PROTO:
	case KT_FORWARD:
		ci = isnull ? -1 : choice_index(k->choices, s);
		if (ci < 0) {
			rep(c, true, line, col, "'%s': expected one of %s; got "
			    "'%s'", k->name, choices_text(k->choices, chb,
			    sizeof(chb)), isnull ? "" : show(s, b, sizeof(b)));
			return -1;
		}
		if (k->type == KT_ENUM)
			set_str((char **)(void *)field, s);
		else if (k->type == KT_PROTO)
			*(enum dest_proto *)(void *)field = (enum dest_proto)ci;
		else
			*(enum forward_mode *)(void *)field =
			    (enum forward_mode)ci;
		return 0;
	case KT_LIST:
	case KT_KV:
		break;
	}
	return -1;
}

/* "a;b; c" -> [a, b, c]: liagent's list syntax, also accepted in YAML. */
static void
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
/* YAML: the tree                                                      */
/* ------------------------------------------------------------------ */

enum ytype { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ytype	  type;
	int		  line, col;	/* 1-based */
	char		 *s;		/* scalar */
	bool		  null;		/* plain "", ~, null */
	struct ynode	**v;		/* seq items; map: key, value, ... */
	size_t		  n, cap;
};

static void
ynode_free(struct ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++)
		ynode_free(n->v[i]);
	free(n->v);
	free(n->s);
	free(n);
}

static void
ynode_add(struct ynode *n, struct ynode *kid)
{
	if (n->n == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 8;
		n->v = xrealloc(n->v, n->cap * sizeof(*n->v));
	}
	n->v[n->n++] = kid;
}

static const char *
ynode_what(const struct ynode *n)
{
	switch (n->type) {
	case YN_SEQ:	return "a list";
	case YN_MAP:	return "a mapping";
	default:	return n->null ? "an empty value" : "a scalar";
	}
}

static struct ynode *
ynode_new(struct lctx *c, enum ytype t, const yaml_mark_t *m)
{
	struct ynode *n = xmalloc(sizeof(*n));

	memset(n, 0, sizeof(*n));
	n->type = t;
	n->line = (int)(m->line + 1 > INT_MAX ? INT_MAX : m->line + 1);
	n->col = (int)(m->column + 1 > INT_MAX ? INT_MAX : m->column + 1);
	c->nnodes++;
	return n;
}

/* 1-based line and column of a byte offset (libyaml's reader errors). */
static void
offset_pos(const char *buf, size_t len, size_t off, int *line, int *col)
{
	int l = 1, cl = 1;

	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			l++;
			cl = 1;
		} else
			cl++;
	}
	*line = l;
	*col = cl;
}

static void
yaml_syntax_error(struct lctx *c, yaml_parser_t *p, const char *buf,
    size_t len)
{
	const char *prob = p->problem ? p->problem : "unknown problem";
	int line, col;

	if (p->error == YAML_MEMORY_ERROR) {
		rep(c, true, 0, 0, "YAML parser out of memory");
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		offset_pos(buf, len, p->problem_offset, &line, &col);
		rep(c, true, line, col, "YAML error: %s", prob);
		return;
	}
	line = (int)p->problem_mark.line + 1;
	col = (int)p->problem_mark.column + 1;
	if (p->context != NULL)
		rep(c, true, line, col, "YAML syntax error: %s (%s started at "
		    "line %d)", prob, p->context, (int)p->context_mark.line + 1);
	else
		rep(c, true, line, col, "YAML syntax error: %s", prob);
}

struct yreader {
	struct lctx	*c;
	yaml_parser_t	 p;
	const char	*buf;
	size_t		 len;
};

static int
ynext(struct yreader *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->p, ev)) {
		yaml_syntax_error(y->c, &y->p, y->buf, y->len);
		return -1;
	}
	return 0;
}

static int
ycmp_keys(const void *a, const void *b)
{
	const struct ynode *x = *(const struct ynode *const *)a;
	const struct ynode *z = *(const struct ynode *const *)b;
	int r = strcmp(x->s, z->s);

	if (r != 0)
		return r;
	if (x->line != z->line)
		return x->line < z->line ? -1 : 1;
	return x->col < z->col ? -1 : x->col > z->col;
}

/*
 * Duplicate keys are errors (YAML says so; libyaml does not check).  Sort
 * the keys so a hostile file with many keys stays O(n log n).
 */
static void
ymap_check(struct lctx *c, const struct ynode *m)
{
	const struct ynode **keys;
	size_t nk = 0;

	if (m->n < 4)
		return;
	keys = xmalloc(m->n / 2 * sizeof(*keys));
	for (size_t i = 0; i + 1 < m->n; i += 2)
		if (m->v[i]->type == YN_SCALAR)
			keys[nk++] = m->v[i];
	qsort(keys, nk, sizeof(*keys), ycmp_keys);
	for (size_t i = 1; i < nk; i++) {
		char b[96];

		if (strcmp(keys[i]->s, keys[i - 1]->s) != 0)
			continue;
		rep(c, true, keys[i]->line, keys[i]->col, "duplicate key '%s' "
		    "(first defined at line %d, column %d)",
		    show(keys[i]->s, b, sizeof(b)), keys[i - 1]->line,
		    keys[i - 1]->col);
	}
	free(keys);
}

static struct ynode *yparse_node(struct yreader *, yaml_event_t *, int);

/* Children until the closing event; ismap: pairs, keys must be scalars. */
static int
yparse_children(struct yreader *y, struct ynode *n, int depth, bool ismap)
{
	yaml_event_type_t end = ismap ? YAML_MAPPING_END_EVENT :
	    YAML_SEQUENCE_END_EVENT;

	for (;;) {
		yaml_event_t ev;
		struct ynode *kid;

		if (ynext(y, &ev) < 0)
			return -1;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		kid = yparse_node(y, &ev, depth + 1);
		if (kid == NULL)
			return -1;
		ynode_add(n, kid);
		if (ismap && (n->n % 2) == 1 && kid->type != YN_SCALAR)
			rep(y->c, true, kid->line, kid->col, "a mapping key "
			    "must be a plain value, not %s", ynode_what(kid));
	}
}

/* Consumes ev.  NULL = a fatal problem (already reported). */
static struct ynode *
yparse_node(struct yreader *y, yaml_event_t *ev, int depth)
{
	struct lctx *c = y->c;
	struct ynode *n = NULL;
	const char *s;
	size_t len;

	if (depth > YAML_MAX_DEPTH) {
		rep(c, true, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "nesting deeper than %d "
		    "levels", YAML_MAX_DEPTH);
		goto err;
	}
	if (c->nnodes >= YAML_MAX_NODES) {
		rep(c, true, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "more than %d values in "
		    "one file", YAML_MAX_NODES);
		goto err;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = ynode_new(c, YN_SCALAR, &ev->start_mark);
		s = (const char *)ev->data.scalar.value;
		len = ev->data.scalar.length;
		n->s = xstrndup(s, len);
		if (memchr(s, '\0', len) != NULL)
			rep(c, true, n->line, n->col, "a value must not "
			    "contain a NUL character");
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    (len == 0 || strcmp(n->s, "~") == 0 ||
		    strcmp(n->s, "null") == 0 || strcmp(n->s, "Null") == 0 ||
		    strcmp(n->s, "NULL") == 0))
			n->null = true;
		break;
	case YAML_ALIAS_EVENT:
		n = ynode_new(c, YN_SCALAR, &ev->start_mark);
		n->s = xstrdup("");
		n->null = true;
		rep(c, true, n->line, n->col, "YAML aliases (*%s) are not "
		    "supported", ev->data.alias.anchor ?
		    (const char *)ev->data.alias.anchor : "");
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		n = ynode_new(c, ev->type == YAML_MAPPING_START_EVENT ?
		    YN_MAP : YN_SEQ, &ev->start_mark);
		yaml_event_delete(ev);
		if (yparse_children(y, n, depth, n->type == YN_MAP) < 0)
			goto err;
		if (n->type == YN_MAP)
			ymap_check(c, n);
		return n;
	default:
		rep(c, true, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "unexpected YAML event");
		goto err;
	}
	yaml_event_delete(ev);
	return n;
err:
	yaml_event_delete(ev);
	ynode_free(n);
	return NULL;
}

/*
 * The one document of buf.  *ok false on a fatal problem; NULL with *ok
 * true = an empty file.
 */
static struct ynode *
yaml_tree(struct lctx *c, const char *buf, size_t len, bool *ok)
{
	struct yreader y;
	yaml_event_t ev;
	struct ynode *root = NULL;

	*ok = false;
	memset(&y, 0, sizeof(y));
	y.c = c;
	y.buf = buf;
	y.len = len;
	if (!yaml_parser_initialize(&y.p)) {
		rep(c, true, 0, 0, "cannot initialise the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&y.p, (const unsigned char *)buf, len);
	if (ynext(&y, &ev) < 0)
		goto out;
	yaml_event_delete(&ev);			/* STREAM-START */
	if (ynext(&y, &ev) < 0)
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		*ok = true;
		goto out;
	}
	yaml_event_delete(&ev);			/* DOCUMENT-START */
	if (ynext(&y, &ev) < 0)
		goto out;
	root = yparse_node(&y, &ev, 0);
	if (root == NULL)
		goto out;
	if (ynext(&y, &ev) < 0)			/* DOCUMENT-END */
		goto fail;
	yaml_event_delete(&ev);
	if (ynext(&y, &ev) < 0)
		goto fail;
	if (ev.type != YAML_STREAM_END_EVENT) {
		rep(c, true, (int)ev.start_mark.line + 1,
		    (int)ev.start_mark.column + 1, "only one YAML document "
		    "is allowed in a configuration file");
		yaml_event_delete(&ev);
		goto fail;
	}
	yaml_event_delete(&ev);
	*ok = true;
	goto out;
fail:
	ynode_free(root);
	root = NULL;
out:
	yaml_parser_delete(&y.p);
	return root;
}

/* ------------------------------------------------------------------ */
/* YAML: applying the tree                                             */
/* ------------------------------------------------------------------ */

static void
apply_list_node(struct lctx *c, const struct kspec *k, struct strlist *l,
    const struct ynode *v)
{
	struct strlist nl = { NULL, 0 };

	if (v->type == YN_SCALAR) {
		if (!v->null)
			split_list(&nl, v->s);
	} else if (v->type == YN_SEQ) {
		for (size_t i = 0; i < v->n; i++) {
			const struct ynode *e = v->v[i];

			if (e->type != YN_SCALAR || e->null || *e->s == '\0') {
				rep(c, true, e->line, e->col, "'%s': a list "
				    "item must be a non-empty string, got %s",
				    k->name, e->type == YN_SCALAR && !e->null ?
				    "''" : ynode_what(e));
				continue;
			}
			strlist_add(&nl, e->s);
		}
	} else {
		rep(c, true, v->line, v->col, "'%s': expected a list or a "
		    ";-separated string, got %s", k->name, ynode_what(v));
		return;
	}
	strlist_free(l);
	*l = nl;
}

static void
apply_kv_node(struct lctx *c, const struct kspec *k, struct kvlist *l,
    const struct ynode *v)
{
	struct kvlist nl = { NULL, 0 };
	char b[96];

	if (v->type == YN_SCALAR && v->null) {
		kvlist_free(l);
		return;
	}
	if (v->type != YN_MAP) {
		rep(c, true, v->line, v->col, "'%s': expected a mapping, got "
		    "%s", k->name, ynode_what(v));
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		const char *vs;

		if (key->type != YN_SCALAR)
			continue;
		if (val->type != YN_SCALAR) {
			rep(c, true, val->line, val->col, "'%s': the value of "
			    "'%s' must be a string, got %s", k->name,
			    show(key->s, b, sizeof(b)), ynode_what(val));
			continue;
		}
		vs = val->null ? "" : val->s;
		if (k->check != NULL && k->check(c, k->name, key->s, key->line,
		    key->col) != 0)
			continue;
		if (k->vcheck != NULL && k->vcheck(c, k->name, vs, val->line,
		    val->col) != 0)
			continue;
		kvlist_set(&nl, key->s, vs);
	}
	kvlist_free(l);
	*l = nl;
}

static int
apply_node(struct lctx *c, const struct kspec *k, void *base,
    const struct ynode *v)
{
	char *field = (char *)base + k->off;

	if (k->type == KT_LIST) {
		apply_list_node(c, k, (struct strlist *)(void *)field, v);
		return 0;
	}
	if (k->type == KT_KV) {
		apply_kv_node(c, k, (struct kvlist *)(void *)field, v);
		return 0;
	}
	if (v->type != YN_SCALAR) {
		char chb[256];

		if (k->choices != NULL)
			rep(c, true, v->line, v->col, "'%s': expected one of "
			    "%s; got %s", k->name, choices_text(k->choices, chb,
			    sizeof(chb)), ynode_what(v));
		else
			rep(c, true, v->line, v->col, "'%s': expected %s, got "
			    "%s", k->name, ktype_what(k->type), ynode_what(v));
		return -1;
	}
	return apply_scalar(c, k, base, v->s, v->null, v->line, v->col);
}

/*
 * A mapping of known keys onto base.  pos (KPOS_MAX entries) records where
 * each key was set.  section names the mapping in messages.
 */
static void
apply_map(struct lctx *c, const struct kspec *tab, size_t ntab, void *base,
    const struct ynode *m, const char *section, struct kpos *pos)
{
	char b[96], h[96];

	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct ynode *key = m->v[i], *val = m->v[i + 1];
		bool ok;
		int ki;

		if (key->type != YN_SCALAR)
			continue;
		ki = kspec_index(tab, ntab, key->s);
		if (ki < 0) {
			rep(c, true, key->line, key->col, "unknown key '%s' in "
			    "section '%s'%s", show(key->s, b, sizeof(b)),
			    section, unknown_hint(key->s, tab, ntab, h,
			    sizeof(h)));
			continue;
		}
		/* the position of a key that was there, valid or not */
		ok = apply_node(c, &tab[ki], base, val) == 0;
		if (pos != NULL) {
			pos[ki].line = val->line;
			pos[ki].col = val->col;
			pos[ki].ok = ok;
		}
	}
}

/* A section's value: a mapping, or empty (= all defaults). */
static bool
want_map(struct lctx *c, const struct ynode *v, const char *what)
{
	if (v->type == YN_MAP)
		return true;
	if (v->type == YN_SCALAR && v->null)
		return false;
	rep(c, true, v->line, v->col, "'%s': expected a mapping, got %s", what,
	    ynode_what(v));
	return false;
}

/*
 * What can only be checked once a destination is complete: the format
 * that fits the protocol, TLS over UDP, required host names.
 */
static void
dest_finish(struct lctx *c, struct dest_conf *d, const struct kpos *pos,
    bool primary, int line, int col)
{
	int fi = kspec_index(dest_keys, NELEM(dest_keys), "format");
	int si = kspec_index(dest_keys, NELEM(dest_keys), "ssl");
	bool fmt_ok;

	if (pos[fi].ok) {
		if (d->proto == PROTO_SYSLOG)
			fmt_ok = strncmp(d->format, "rfc", 3) == 0;
		else if (d->proto == PROTO_HTTP)
			fmt_ok = strncmp(d->format, "json", 4) == 0;
		else
			fmt_ok = true;
		if (!fmt_ok)
			rep(c, true, pos[fi].line, pos[fi].col, "'format': "
			    "'%s' does not apply to proto %s (%s)", d->format,
			    dest_proto_name(d->proto), d->proto == PROTO_SYSLOG ?
			    "rfc5424 or rfc3164" : "json_lines or json_array");
	} else if (pos[fi].line == 0)
		set_str(&d->format, d->proto == PROTO_HTTP ? "json_lines" :
		    "rfc5424");
	if (d->proto == PROTO_SYSLOG && strcmp(d->transport, "udp") == 0 &&
	    d->ssl) {
		if (pos[si].ok)
			rep(c, true, pos[si].line, pos[si].col, "'ssl': syslog "
			    "over UDP cannot use TLS; use transport: tcp or "
			    "ssl: no");
		d->ssl = false;
	}
	if (primary)
		return;
	if ((d->proto == PROTO_CFAPI || d->proto == PROTO_SYSLOG) &&
	    d->hostname[0] == '\0')
		rep(c, true, line, col, "servers.%s: 'hostname' is required "
		    "for proto %s", d->name, dest_proto_name(d->proto));
	if (d->proto == PROTO_HTTP && d->hostname[0] == '\0' &&
	    d->url[0] == '\0')
		rep(c, true, line, col, "servers.%s: 'url' or 'hostname' is "
		    "required for proto http", d->name);
}

static void
yaml_dest(struct lctx *c, struct dest_conf *d, const struct ynode *v,
    const char *section, bool primary, int line, int col)
{
	struct kpos pos[KPOS_MAX];

	memset(pos, 0, sizeof(pos));
	if (want_map(c, v, section))
		apply_map(c, dest_keys, NELEM(dest_keys), d, v, section, pos);
	dest_finish(c, d, pos, primary, line, col);
}

static void
yaml_servers(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96];

	if (!want_map(c, v, "servers"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct dest_conf *d;

		if (key->type != YN_SCALAR)
			continue;
		if (!name_valid(key->s)) {
			rep(c, true, key->line, key->col, "servers: '%s' is "
			    "not a valid name (1 to 64 of A-Z a-z 0-9 - _ .)",
			    show(key->s, b, sizeof(b)));
			continue;
		}
		d = server_add(cfg, key->s);
		snprintf(sect, sizeof(sect), "servers.%s", key->s);
		yaml_dest(c, d, val, sect, false, key->line, key->col);
	}
}

static void
yaml_collectors(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96], known[128];
	struct collector_conf *cc;
	bool diag;

	if (!want_map(c, v, "collectors"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];

		if (key->type != YN_SCALAR)
			continue;
		cc = (struct collector_conf *)config_collector(cfg, key->s);
		if (cc == NULL) {
			size_t o = 0;

			known[0] = '\0';
			for (size_t j = 0; j < NELEM(collector_defaults); j++)
				o += (size_t)snprintf(known + o,
				    sizeof(known) - o, "%s%s", j ? ", " : "",
				    collector_defaults[j].name);
			rep(c, true, key->line, key->col, "unknown collector "
			    "'%s' in section 'collectors' (known: %s)",
			    show(key->s, b, sizeof(b)), known);
			continue;
		}
		snprintf(sect, sizeof(sect), "collectors.%s", key->s);
		diag = strcmp(cc->name, "diagnosis") == 0;
		if (want_map(c, val, sect))
			apply_map(c, diag ? diagnosis_keys : collector_keys,
			    diag ? NELEM(diagnosis_keys) : NELEM(collector_keys),
			    cc, val, sect, NULL);
	}
}

/* filelog: replaces the default map (a user lists what they want). */
static void
yaml_filelogs(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96];

	filelogs_clear(cfg);
	if (!want_map(c, v, "filelog"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct filelog_conf *f;

		if (key->type != YN_SCALAR)
			continue;
		if (!name_valid(key->s)) {
			rep(c, true, key->line, key->col, "filelog: '%s' is "
			    "not a valid name (1 to 64 of A-Z a-z 0-9 - _ .)",
			    show(key->s, b, sizeof(b)));
			continue;
		}
		f = filelog_add(cfg, key->s);
		snprintf(sect, sizeof(sect), "filelog.%s", key->s);
		if (want_map(c, val, sect))
			apply_map(c, filelog_keys, NELEM(filelog_keys), f, val,
			    sect, NULL);
		/* an explicit directory: "" means host.log_dir too */
		if (f->directory != NULL && f->directory[0] == '\0') {
			free(f->directory);
			f->directory = NULL;
		}
	}
}

/*
 * rules: a list of mappings.  Used for agent.yaml and for rule catalogue
 * files alike, so the two can never drift apart.
 */
static void
yaml_rules(struct lctx *c, const struct ynode *v, struct rule_conf **rulesp,
    size_t *np)
{
	struct rule_conf *rules = NULL;
	size_t n = 0;

	if (v->type == YN_SCALAR && v->null)
		goto out;
	if (v->type != YN_SEQ) {
		rep(c, true, v->line, v->col, "'rules': expected a list of "
		    "rules, got %s", ynode_what(v));
		goto out;
	}
	rules = xmalloc((v->n ? v->n : 1) * sizeof(*rules));
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *it = v->v[i];
		struct rule_conf *r = &rules[n];
		struct kpos pos[KPOS_MAX];
		char sect[96], where[160], b[96];
		bool hm, hr;

		if (it->type != YN_MAP) {
			rep(c, true, it->line, it->col, "rules: item %zu must "
			    "be a mapping (name, match or regex, ...), got %s",
			    i + 1, ynode_what(it));
			continue;
		}
		rule_init(r);
		r->src_file = xstrdup(c->file);
		r->src_line = it->line;
		snprintf(sect, sizeof(sect), "rules[%zu]", i + 1);
		memset(pos, 0, sizeof(pos));
		/* a bad regex also names its rule, wherever the name is */
		snprintf(where, sizeof(where), " (rule at line %d)", it->line);
		for (size_t j = 0; j + 1 < it->n; j += 2)
			if (it->v[j]->type == YN_SCALAR &&
			    strcmp(it->v[j]->s, "name") == 0 &&
			    it->v[j + 1]->type == YN_SCALAR)
				snprintf(where, sizeof(where), " (rule '%s' at "
				    "line %d)", show(it->v[j + 1]->s, b,
				    sizeof(b)), it->line);
		c->rule = where;
		apply_map(c, rule_keys, NELEM(rule_keys), r, it, sect, pos);
		c->rule = NULL;
		n++;
		if (r->name == NULL) {
			if (kspec_refused(rule_keys, NELEM(rule_keys), pos,
			    "name"))
				continue;	/* reported already */
			rep(c, true, it->line, it->col, "rules: item %zu has no "
			    "'name'", i + 1);
			continue;
		}
		/*
		 * Exactly one of match/regex (present but invalid counts:
		 * the value was reported already), except for a name with
		 * enabled: no, which switches a built-in rule off.
		 */
		hm = r->match != NULL || kspec_refused(rule_keys,
		    NELEM(rule_keys), pos, "match");
		hr = r->regex != NULL || kspec_refused(rule_keys,
		    NELEM(rule_keys), pos, "regex");
		if (hm == hr && !(!hm && r->enabled == 0))
			rep(c, true, it->line, it->col, "rule '%s': exactly one "
			    "of 'match' or 'regex' is required", r->name);
		for (size_t j = 0; j + 1 < n; j++)
			if (rules[j].name != NULL &&
			    strcmp(rules[j].name, r->name) == 0) {
				rep(c, true, it->line, it->col, "rule '%s' is "
				    "defined twice (first at line %d)",
				    r->name, rules[j].src_line);
				break;
			}
	}
out:
	rule_conf_free_array(*rulesp, *np);
	*rulesp = rules;
	*np = n;
}

static const char *const top_keys[] = {
	"server", "servers", "storage", "logging", "batch", "host", "tags",
	"collectors", "filelog", "rules", "rules_file"
};

static void
yaml_apply(struct lctx *c, struct config *cfg, const struct ynode *root)
{
	char b[96], h[96];

	if (root->type == YN_SCALAR && root->null)
		return;
	if (root->type != YN_MAP) {
		rep(c, true, root->line, root->col, "the top level must be a "
		    "mapping of sections (server:, collectors:, ...), got %s",
		    ynode_what(root));
		return;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct ynode *key = root->v[i], *v = root->v[i + 1];
		const char *k = key->s;

		if (key->type != YN_SCALAR)
			continue;
		if (strcmp(k, "server") == 0)
			yaml_dest(c, &cfg->server, v, "server", true,
			    key->line, key->col);
		else if (strcmp(k, "servers") == 0)
			yaml_servers(c, cfg, v);
		else if (strcmp(k, "storage") == 0) {
			if (want_map(c, v, k))
				apply_map(c, storage_keys, NELEM(storage_keys),
				    cfg, v, k, NULL);
		} else if (strcmp(k, "logging") == 0) {
			if (want_map(c, v, k))
				apply_map(c, logging_keys, NELEM(logging_keys),
				    cfg, v, k, NULL);
		} else if (strcmp(k, "batch") == 0) {
			if (want_map(c, v, k))
				apply_map(c, batch_keys, NELEM(batch_keys),
				    cfg, v, k, NULL);
		} else if (strcmp(k, "host") == 0) {
			if (want_map(c, v, k))
				apply_map(c, host_keys, NELEM(host_keys), cfg,
				    v, k, NULL);
		} else if (strcmp(k, "tags") == 0)
			apply_node(c, &tags_key, cfg, v);
		else if (strcmp(k, "rules_file") == 0)
			apply_node(c, &rules_file_key, cfg, v);
		else if (strcmp(k, "collectors") == 0)
			yaml_collectors(c, cfg, v);
		else if (strcmp(k, "filelog") == 0)
			yaml_filelogs(c, cfg, v);
		else if (strcmp(k, "rules") == 0)
			yaml_rules(c, v, &cfg->rules, &cfg->nrules);
		else
			rep(c, true, key->line, key->col, "unknown key '%s' at "
			    "the top level%s", show(k, b, sizeof(b)),
			    suggest(k, top_keys, NELEM(top_keys), h,
			    sizeof(h)));
	}
}

/* ------------------------------------------------------------------ */
/* liagent.ini                                                         */
/* ------------------------------------------------------------------ */

/*
 * liagent.ini: [section] or [type|name] headers, key=value lines, ; and #
 * comments on their own lines (a ; inside a value is a list separator, as
 * in include=a.log;b.log), values optionally quoted.  What esxwatch does
 * not know is a warning, never fatal: an admin can point esxwatch at the
 * liagent.ini they already have.
 */

enum isect {
	IS_NONE, IS_SERVER, IS_STORAGE, IS_LOGGING, IS_FILELOG, IS_GLOBAL,
	IS_SKIP
};

struct iini {
	struct lctx	*c;
	struct config	*cfg;
	enum isect	 sect;
	size_t		 idx;		/* servers[] / filelogs[] index */
	bool		 primary;
	char		 secname[128];
	/* where each destination's keys were set, for dest_finish() */
	struct kpos	 server_pos[KPOS_MAX];
	int		 server_line;
	struct kpos	(*spos)[KPOS_MAX];
	int		*sline;
	bool		 filelogs_replaced;
};

/* Valid UTF-8 (no overlongs, no surrogates): config_print must round-trip. */
static size_t
utf8_invalid_at(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char ch = s[i];
		size_t need;
		uint32_t cp;

		if (ch < 0x80) {
			i++;
			continue;
		}
		if (ch >= 0xc2 && ch <= 0xdf) {
			need = 1;
			cp = ch & 0x1f;
		} else if (ch >= 0xe0 && ch <= 0xef) {
			need = 2;
			cp = ch & 0x0f;
		} else if (ch >= 0xf0 && ch <= 0xf4) {
			need = 3;
			cp = ch & 0x07;
		} else
			return i;
		for (size_t j = 1; j <= need; j++) {
			if (i + j >= n || (s[i + j] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += need + 1;
	}
	return n;
}

/* A JSON string (or single-quoted, or a bare word) at *pp into out. */
static int
jsonish_string(const char **pp, struct strlist *tmp)
{
	const char *p = *pp;
	char *buf;
	size_t o = 0, cap;
	char q;

	if (*p != '"' && *p != '\'') {
		const char *s = p;

		while (*p != '\0' && (isalnum((unsigned char)*p) ||
		    strchr("_.-+", *p) != NULL))
			p++;
		if (p == s)
			return -1;
		strlist_addn(tmp, s, (size_t)(p - s));
		*pp = p;
		return 0;
	}
	q = *p++;
	cap = strlen(p) + 1;
	buf = xmalloc(cap);
	for (; *p != q; p++) {
		if (*p == '\0')
			goto err;
		if (*p != '\\' || q == '\'') {
			buf[o++] = *p;
			continue;
		}
		p++;
		switch (*p) {
		case '"': case '\\': case '/': case '\'':
			buf[o++] = *p;
			break;
		case 'n': buf[o++] = '\n'; break;
		case 't': buf[o++] = '\t'; break;
		case 'r': buf[o++] = '\r'; break;
		case 'b': buf[o++] = '\b'; break;
		case 'f': buf[o++] = '\f'; break;
		case 'u': {
			unsigned cp = 0;

			for (int i = 1; i <= 4; i++) {
				int d = p[i];

				if (!isxdigit(d))
					goto err;
				cp = cp * 16 + (unsigned)(isdigit(d) ? d - '0' :
				    (tolower(d) - 'a' + 10));
			}
			p += 4;
			/* lone surrogates and NUL cannot be kept */
			if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
				goto err;
			if (cp < 0x80)
				buf[o++] = (char)cp;
			else if (cp < 0x800) {
				buf[o++] = (char)(0xc0 | (cp >> 6));
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			} else {
				buf[o++] = (char)(0xe0 | (cp >> 12));
				buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			}
			break;
		}
		default:
			goto err;
		}
	}
	p++;
	strlist_addn(tmp, buf, o);
	free(buf);
	*pp = p;
	return 0;
err:
	free(buf);
	*pp = p;
	return -1;
}

/*
 * liagent writes tags as a JSON object: tags={"k":"v", "k2":"v2"}.  Be
 * lenient about quoting (single quotes, bare words) but not about
 * structure.  Returns 0, or -1 after reporting where it went wrong.
 */
static int
ini_tags(struct lctx *c, const struct kspec *k, const char *s, int line,
    int col, struct kvlist *out)
{
	struct strlist tmp = { NULL, 0 };
	const char *p = s, *what = "'{'";

#define SKIPWS() while (isspace((unsigned char)*p)) p++
	SKIPWS();
	if (*p != '{')
		goto bad;
	p++;
	SKIPWS();
	while (*p != '}') {
		what = "a quoted key";
		if (jsonish_string(&p, &tmp) < 0)
			goto bad;
		SKIPWS();
		what = "':'";
		if (*p != ':')
			goto bad;
		p++;
		SKIPWS();
		what = "a value";
		if (jsonish_string(&p, &tmp) < 0)
			goto bad;
		SKIPWS();
		what = "',' or '}'";
		if (*p == ',') {
			p++;
			SKIPWS();
			continue;
		}
		if (*p != '}')
			goto bad;
	}
	p++;
	SKIPWS();
	what = "the end of the value";
	if (*p != '\0')
		goto bad;
#undef SKIPWS
	for (size_t i = 0; i + 1 < tmp.n; i += 2) {
		if (k->check != NULL && k->check(c, k->name, tmp.v[i], line,
		    col) != 0)
			continue;
		if (k->vcheck != NULL && k->vcheck(c, k->name, tmp.v[i + 1],
		    line, col) != 0)
			continue;
		kvlist_set(out, tmp.v[i], tmp.v[i + 1]);
	}
	strlist_free(&tmp);
	return 0;
bad:
	rep(c, true, line, col + (int)(p - s), "'%s': expected %s in the "
	    "JSON object (e.g. {\"k\":\"v\", \"k2\":\"v2\"})", k->name, what);
	strlist_free(&tmp);
	return -1;
}

static int
ini_value(struct lctx *c, const struct kspec *k, void *base, const char *val,
    int line, int col)
{
	char *field = (char *)base + k->off;

	if (k->type == KT_LIST) {
		struct strlist *l = (struct strlist *)(void *)field;

		strlist_free(l);
		split_list(l, val);
		return 0;
	}
	if (k->type == KT_KV)
		return ini_tags(c, k, val, line, col,
		    (struct kvlist *)(void *)field);
	return apply_scalar(c, k, base, val, *val == '\0' &&
	    k->type != KT_STR && k->type != KT_OSTR, line, col);
}

static struct kpos *
ini_dest_pos(struct iini *ii)
{
	return ii->primary ? ii->server_pos : ii->spos[ii->idx];
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	return s;
}

/*
 * liagent accepts section names esxwatch does not ("[filelog|my app]"):
 * keep the section under a usable name rather than drop it.  Returns sub,
 * rewritten in place, or NULL when nothing usable is left.
 */
static char *
ini_name(struct lctx *c, char *sub, int line, int col)
{
	char orig[96], b[96];
	size_t n = strlen(sub);

	if (n == 0)
		return NULL;
	if (name_valid(sub))
		return sub;
	snprintf(orig, sizeof(orig), "%s", show(sub, b, sizeof(b)));
	if (n > 64)
		sub[n = 64] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)sub[i]) && strchr("-_.", sub[i]) ==
		    NULL)
			sub[i] = '_';
	rep(c, false, line, col, "section name '%s' is used as '%s' (names "
	    "are 1 to 64 of A-Z a-z 0-9 - _ .)", orig, sub);
	return sub;
}

static void
ini_section(struct iini *ii, char *name, int line, int col)
{
	struct lctx *c = ii->c;
	struct config *cfg = ii->cfg;
	char *bar = strchr(name, '|');
	char *type = name, *sub = bar ? bar + 1 : NULL;
	char b[96];

	if (bar != NULL)
		*bar = '\0';
	type = trim(type);
	if (sub != NULL)
		sub = trim(sub);
	snprintf(ii->secname, sizeof(ii->secname), "%s%s%s", type,
	    sub ? "|" : "", sub ? sub : "");
	ii->sect = IS_SKIP;
	if (strcasecmp(type, "server") == 0 && sub == NULL) {
		ii->sect = IS_SERVER;
		ii->primary = true;
		if (ii->server_line == 0)
			ii->server_line = line;
	} else if (strcasecmp(type, "server") == 0) {
		sub = ini_name(c, sub, line, col);
		if (sub == NULL) {
			rep(c, false, line, col, "[server|]: no destination "
			    "name; section ignored");
			return;
		}
		ii->sect = IS_SERVER;
		ii->primary = false;
		for (ii->idx = 0; ii->idx < cfg->nservers; ii->idx++)
			if (strcmp(cfg->servers[ii->idx].name, sub) == 0)
				return;
		server_add(cfg, sub);
		ii->spos = xrealloc(ii->spos, cfg->nservers *
		    sizeof(*ii->spos));
		memset(ii->spos[ii->idx], 0, sizeof(ii->spos[ii->idx]));
		ii->sline = xrealloc(ii->sline, cfg->nservers *
		    sizeof(*ii->sline));
		ii->sline[ii->idx] = line;
	} else if (strcasecmp(type, "storage") == 0 && sub == NULL)
		ii->sect = IS_STORAGE;
	else if (strcasecmp(type, "logging") == 0 && sub == NULL)
		ii->sect = IS_LOGGING;
	else if (strcasecmp(type, "filelog") == 0 && sub != NULL) {
		sub = ini_name(c, sub, line, col);
		if (sub == NULL) {
			rep(c, false, line, col, "[filelog|]: no name; section "
			    "ignored");
			return;
		}
		if (!ii->filelogs_replaced) {
			filelogs_clear(cfg);
			ii->filelogs_replaced = true;
		}
		ii->sect = IS_FILELOG;
		for (ii->idx = 0; ii->idx < cfg->nfilelogs; ii->idx++)
			if (strcmp(cfg->filelogs[ii->idx].name, sub) == 0)
				return;
		/* liagent forwards every line of a filelog */
		filelog_add(cfg, sub)->forward = FORWARD_ALL;
	} else if (strcasecmp(type, "common") == 0 && sub != NULL &&
	    strcasecmp(sub, "global") == 0)
		ii->sect = IS_GLOBAL;
	else if (strcasecmp(type, "update") == 0 ||
	    strcasecmp(type, "winlog") == 0 ||
	    strcasecmp(type, "parser") == 0 ||
	    strcasecmp(type, "journaldlog") == 0 ||
	    strcasecmp(type, "common") == 0)
		rep(c, false, line, col, "[%s]: not supported by esxwatch; "
		    "section ignored", show(ii->secname, b, sizeof(b)));
	else
		rep(c, false, line, col, "unknown section [%s]; ignored",
		    show(ii->secname, b, sizeof(b)));
}

static void
ini_unknown(struct iini *ii, const char *key, int line, int col,
    const char *why)
{
	char b[96];

	rep(ii->c, false, line, col, "'%s' in [%s] %s; ignored",
	    show(key, b, sizeof(b)), ii->secname, why);
}

static void
ini_keyval(struct iini *ii, const char *key, const char *val, int line,
    int kcol, int vcol)
{
	struct lctx *c = ii->c;
	struct config *cfg = ii->cfg;
	char b[96];
	int ki;

	switch (ii->sect) {
	case IS_NONE:
		rep(c, false, line, kcol, "'%s' outside any [section]; "
		    "ignored", show(key, b, sizeof(b)));
		return;
	case IS_SKIP:
		return;
	case IS_SERVER:
		ki = kspec_index(dest_keys, NELEM(dest_keys), key);
		if (ki >= 0) {
			struct dest_conf *d = ii->primary ? &cfg->server :
			    &cfg->servers[ii->idx];

			if (ini_value(c, &dest_keys[ki], d, val, line,
			    vcol) == 0) {
				ini_dest_pos(ii)[ki].line = line;
				ini_dest_pos(ii)[ki].col = vcol;
				ini_dest_pos(ii)[ki].ok = true;
			}
		} else if (strcmp(key, "max_disk_buffer") == 0 && ii->primary)
			ini_value(c, &storage_keys[1], cfg, val, line, vcol);
		else if (strcmp(key, "ssl_accept_any_trusted") == 0)
			ini_unknown(ii, key, line, kcol, "has no effect: "
			    "esxwatch does not pin certificates, any "
			    "certificate the CA bundle trusts is accepted");
		else if (strcmp(key, "central_config") == 0 ||
		    strcmp(key, "filter") == 0)
			ini_unknown(ii, key, line, kcol, "is not supported by "
			    "esxwatch");
		else
			ini_unknown(ii, key, line, kcol, "is not a known key");
		return;
	case IS_STORAGE:
		ki = kspec_index(storage_keys, NELEM(storage_keys), key);
		if (ki >= 0)
			ini_value(c, &storage_keys[ki], cfg, val, line, vcol);
		else
			ini_unknown(ii, key, line, kcol, "is not a known key");
		return;
	case IS_LOGGING:
		if (strcmp(key, "debug_level") == 0)
			ini_value(c, &logging_keys[0], cfg, val, line, vcol);
		else if (strcmp(key, "file") == 0)
			ini_unknown(ii, key, line, kcol, "is not a liagent key "
			    "(use logging.file in agent.yaml)");
		else
			ini_unknown(ii, key, line, kcol, "is not supported by "
			    "esxwatch");
		return;
	case IS_FILELOG:
		ki = kspec_index(filelog_keys, NELEM(filelog_keys), key);
		if (ki >= 0) {
			struct filelog_conf *f = &cfg->filelogs[ii->idx];

			if (strcmp(key, "event_marker") == 0) {
				char *posix = regex_from_perl(val);

				ini_value(c, &filelog_keys[ki], f, posix, line,
				    vcol);
				free(posix);
			} else
				ini_value(c, &filelog_keys[ki], f, val, line,
				    vcol);
			if (f->directory != NULL && f->directory[0] == '\0') {
				free(f->directory);
				f->directory = NULL;
			}
		} else if (strcmp(key, "parser") == 0 ||
		    strcmp(key, "charset") == 0 ||
		    strcmp(key, "exclude_fields") == 0 ||
		    strcmp(key, "whitelist") == 0 ||
		    strcmp(key, "blacklist") == 0)
			ini_unknown(ii, key, line, kcol, "is not supported by "
			    "esxwatch (lines are shipped as they are)");
		else
			ini_unknown(ii, key, line, kcol, "is not a known key");
		return;
	case IS_GLOBAL:
		if (strcmp(key, "tags") == 0)
			ini_value(c, &tags_key, cfg, val, line, vcol);
		else
			ini_unknown(ii, key, line, kcol, "is not supported by "
			    "esxwatch");
		return;
	}
}

static void
ini_line(struct iini *ii, char *s, size_t len, int line)
{
	struct lctx *c = ii->c;
	char *p = s, *e, *eq, *key, *val;
	size_t bad;

	if (memchr(s, '\0', len) != NULL) {
		rep(c, true, line, (int)strlen(s) + 1, "NUL character in the "
		    "file");
		return;
	}
	bad = utf8_invalid_at((const unsigned char *)s, len);
	if (bad < len) {
		rep(c, true, line, (int)bad + 1, "invalid UTF-8");
		return;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == ';' || *p == '#')
		return;
	if (*p == '[') {
		e = strchr(p, ']');
		if (e == NULL || e == p + 1) {
			rep(c, false, line, (int)(p - s) + 1, "malformed "
			    "section header; ignored");
			ii->sect = IS_SKIP;
			return;
		}
		*e = '\0';
		ini_section(ii, p + 1, line, (int)(p - s) + 1);
		return;
	}
	eq = strchr(p, '=');
	if (eq == NULL) {
		rep(c, false, line, (int)(p - s) + 1, "expected 'key = "
		    "value'; line ignored");
		return;
	}
	key = p;
	e = eq;
	while (e > key && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	val = eq + 1;
	while (isspace((unsigned char)*val))
		val++;
	e = val + strlen(val);
	while (e > val && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	if (e - val >= 2 && (*val == '"' || *val == '\'') && e[-1] == *val) {
		e[-1] = '\0';
		val++;
	}
	if (*key == '\0') {
		rep(c, false, line, (int)(p - s) + 1, "empty key; line "
		    "ignored");
		return;
	}
	ini_keyval(ii, key, val, line, (int)(key - s) + 1,
	    (int)(val - s) + 1);
}

static void
ini_load(struct lctx *c, struct config *cfg, char *buf, size_t len)
{
	struct iini ii;
	size_t off = 0;
	int line = 0;

	memset(&ii, 0, sizeof(ii));
	ii.c = c;
	ii.cfg = cfg;
	ii.sect = IS_NONE;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		off = 3;			/* Windows editors' BOM */
	while (off < len) {
		char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
		char *s = buf + off;

		line++;
		s[n] = '\0';			/* the \n or the final NUL */
		if (n > 0 && s[n - 1] == '\r')
			s[--n] = '\0';
		ini_line(&ii, s, n, line);
		off = nl ? (size_t)(nl - buf) + 1 : len;
	}
	dest_finish(c, &cfg->server, ii.server_pos, true, ii.server_line, 1);
	for (size_t i = 0; i < cfg->nservers; i++)
		dest_finish(c, &cfg->servers[i], ii.spos[i], false,
		    ii.sline[i], 1);
	free(ii.spos);
	free(ii.sline);
}

/* INI when the first meaningful line is a [section] header. */
static bool
looks_ini(const char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len) {
		size_t s = i, e;

		while (i < len && buf[i] != '\n')
			i++;
		e = i++;
		while (s < e && isspace((unsigned char)buf[s]))
			s++;
		while (e > s && isspace((unsigned char)buf[e - 1]))
			e--;
		if (s == e || buf[s] == ';' || buf[s] == '#')
			continue;
		if (buf[s] != '[' || buf[e - 1] != ']' || e - s < 3)
			return false;
		for (size_t j = s + 1; j < e - 1; j++)
			if (strchr(",[]{}\"'", buf[j]) != NULL)
				return false;
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* The whole file, NUL-terminated, at most CONFIG_MAX_BYTES. */
static char *
read_file(struct lctx *c, const char *path, size_t *lenp)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rep(c, true, 0, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		rep(c, true, 0, 0, "cannot read: %s", strerror(EISDIR));
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
			rep(c, true, 0, 0, "cannot read: %s", strerror(errno));
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

/* Cross-section checks, once everything is known. */
static void
config_check(struct lctx *c, struct config *cfg)
{
	char b[96];

	for (size_t i = 0; i < cfg->nrules; i++) {
		struct rule_conf *r = &cfg->rules[i];

		for (size_t j = 0; j < r->files.n; j++) {
			size_t k;

			for (k = 0; k < cfg->nfilelogs; k++)
				if (strcmp(cfg->filelogs[k].name,
				    r->files.v[j]) == 0)
					break;
			if (k == cfg->nfilelogs)
				rep(c, false, r->src_line, 1, "rule '%s': "
				    "'%s' is not a filelog name",
				    r->name ? r->name : "?",
				    show(r->files.v[j], b, sizeof(b)));
		}
	}
}

struct config *
config_load(const char *path, config_report_fn report, void *arg)
{
	struct lctx c;
	struct config *cfg;
	struct ynode *root;
	char *buf;
	size_t len;
	bool ok;

	memset(&c, 0, sizeof(c));
	c.file = path;
	c.report = report;
	c.arg = arg;
	cfg = config_new();
	set_str(&cfg->path, path);
	buf = read_file(&c, path, &len);
	if (buf == NULL)
		goto err;
	if (looks_ini(buf, len)) {
		cfg->is_ini = true;
		c.ini = true;
		ini_load(&c, cfg, buf, len);
	} else {
		root = yaml_tree(&c, buf, len, &ok);
		if (root != NULL)
			yaml_apply(&c, cfg, root);
		ynode_free(root);
	}
	free(buf);
	config_resolve(cfg);
	if (c.nerr == 0)
		config_check(&c, cfg);
	if (c.nerr > 0)
		goto err;
	lctx_flush(&c);
	return cfg;
err:
	lctx_flush(&c);
	config_free(cfg);
	return NULL;
}

int
config_load_rules_file(const char *path, struct rule_conf **rules, size_t *n,
    config_report_fn report, void *arg)
{
	struct lctx c;
	struct ynode *root = NULL;
	char *buf, b[96];
	size_t len;
	bool ok;

	*rules = NULL;
	*n = 0;
	memset(&c, 0, sizeof(c));
	c.file = path;
	c.report = report;
	c.arg = arg;
	buf = read_file(&c, path, &len);
	if (buf == NULL) {
		lctx_flush(&c);
		return -1;
	}
	root = yaml_tree(&c, buf, len, &ok);
	free(buf);
	if (root == NULL)
		goto out;
	if (root->type == YN_SCALAR && root->null)
		goto out;
	if (root->type != YN_MAP) {
		rep(&c, true, root->line, root->col, "a rules file must be a "
		    "mapping with one key, 'rules:', got %s", ynode_what(root));
		goto out;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct ynode *key = root->v[i];

		if (key->type != YN_SCALAR)
			continue;
		if (strcmp(key->s, "rules") == 0)
			yaml_rules(&c, root->v[i + 1], rules, n);
		else
			rep(&c, true, key->line, key->col, "unknown key '%s' "
			    "at the top level of a rules file (only 'rules')",
			    show(key->s, b, sizeof(b)));
	}
out:
	ynode_free(root);
	lctx_flush(&c);
	if (c.nerr > 0) {
		rule_conf_free_array(*rules, *n);
		*rules = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Printing                                                            */
/* ------------------------------------------------------------------ */

/*
 * A YAML double-quoted string that libyaml reads back byte for byte:
 * escape what YAML would fold or refuse (controls, C1, the Unicode line
 * and paragraph separators, the BOM, U+FFFE/FFFF), keep the rest as UTF-8.
 */
static void
print_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char ch = p[i];
		size_t bad, clen;
		uint32_t cp;

		if (ch == '"' || ch == '\\') {
			fputc('\\', f);
			fputc(ch, f);
			i++;
			continue;
		}
		if (ch < 0x80) {
			if (ch < 0x20 || ch == 0x7f)
				fprintf(f, "\\x%02x", ch);
			else
				fputc(ch, f);
			i++;
			continue;
		}
		bad = utf8_invalid_at(p + i, n - i < 4 ? n - i : 4);
		if (bad == 0) {		/* cannot happen: inputs are checked */
			fputs("\\uFFFD", f);
			i++;
			continue;
		}
		clen = ch < 0xe0 ? 2 : ch < 0xf0 ? 3 : 4;
		cp = clen == 2 ? (uint32_t)(ch & 0x1f) : clen == 3 ?
		    (uint32_t)(ch & 0x0f) : (uint32_t)(ch & 0x07);
		for (size_t j = 1; j < clen; j++)
			cp = (cp << 6) | (p[i + j] & 0x3f);
		if (cp < 0xa0)
			fprintf(f, "\\x%02x", (unsigned)cp);
		else if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
		    cp == 0xfffe || cp == 0xffff)
			fprintf(f, "\\u%04X", (unsigned)cp);
		else
			fwrite(p + i, 1, clen, f);
		i += clen;
	}
	fputc('"', f);
}

static void
print_list(FILE *f, const struct strlist *l)
{
	fputc('[', f);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			fputs(", ", f);
		print_str(f, l->v[i]);
	}
	fputc(']', f);
}

static void
print_kv(FILE *f, const struct kvlist *l, const char *indent)
{
	if (l->n == 0) {
		fputs(" {}\n", f);
		return;
	}
	fputc('\n', f);
	for (size_t i = 0; i < l->n; i++) {
		fputs(indent, f);
		print_str(f, l->v[i].key);
		fputs(": ", f);
		print_str(f, l->v[i].value);
		fputc('\n', f);
	}
}

#define YN(b)	((b) ? "yes" : "no")

static void
print_dest(FILE *f, const struct dest_conf *d, const char *in)
{
	char in2[16];

	snprintf(in2, sizeof(in2), "%s  ", in);
	fprintf(f, "%shostname: ", in);
	print_str(f, d->hostname);
	fprintf(f, "\n%sproto: %s\n", in, dest_proto_name(d->proto));
	fprintf(f, "%sport: %d\n", in, d->port);
	fprintf(f, "%sssl: %s\n", in, YN(d->ssl));
	fprintf(f, "%sssl_ca_path: ", in);
	print_str(f, d->ssl_ca_path);
	fprintf(f, "\n%sssl_accept_any: %s\n", in, YN(d->ssl_accept_any));
	fprintf(f, "%sssl_cn: ", in);
	print_str(f, d->ssl_cn);
	fprintf(f, "\n%sreconnect: %d\n", in, d->reconnect);
	fprintf(f, "%sagent_id: ", in);
	print_str(f, d->agent_id);
	fprintf(f, "\n%stransport: %s\n", in, d->transport);
	fprintf(f, "%sformat: %s\n", in, d->format);
	fprintf(f, "%sframing: %s\n", in, d->framing);
	fprintf(f, "%surl: ", in);
	print_str(f, d->url);
	fprintf(f, "\n%sheaders:", in);
	print_kv(f, &d->headers, in2);
	fprintf(f, "%scompress: %s\n", in, d->compress);
	fprintf(f, "%spath: ", in);
	print_str(f, d->path);
	fprintf(f, "\n%sfacility: %s\n", in, d->facility);
	fprintf(f, "%ssd_id: ", in);
	print_str(f, d->sd_id);
	fprintf(f, "\n%smax_message_size: %d\n", in, d->max_message_size);
	fprintf(f, "%stimeout: %d\n", in, d->timeout);
}

static void
print_rule(FILE *f, const struct rule_conf *r)
{
	fputs("  - name: ", f);
	print_str(f, r->name);
	fputc('\n', f);
	if (r->match != NULL) {
		fputs("    match: ", f);
		print_str(f, r->match);
		fputc('\n', f);
	}
	if (r->regex != NULL) {
		fputs("    regex: ", f);
		print_str(f, r->regex);
		fputc('\n', f);
	}
	fprintf(f, "    severity: %s\n    files: ", r->severity);
	print_list(f, &r->files);
	fprintf(f, "\n    enabled: %s\n", YN(r->enabled));
	/* absent stays absent: "" would be a different value to logwatch */
	if (r->hint != NULL) {
		fputs("    hint: ", f);
		print_str(f, r->hint);
		fputc('\n', f);
	}
	if (r->vob_id != NULL) {
		fputs("    vob_id: ", f);
		print_str(f, r->vob_id);
		fputc('\n', f);
	}
	if (r->literal != NULL) {
		fputs("    literal: ", f);
		print_str(f, r->literal);
		fputc('\n', f);
	}
}

int
config_print(const struct config *cfg, FILE *f)
{
	fputs("# esxwatch: the effective configuration (every default filled "
	    "in)\n", f);
	fputs("server:\n", f);
	print_dest(f, &cfg->server, "  ");
	fputs("servers:", f);
	if (cfg->nservers == 0)
		fputs(" {}", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nservers; i++) {
		fputs("  ", f);
		print_str(f, cfg->servers[i].name);
		fputs(":\n", f);
		print_dest(f, &cfg->servers[i], "    ");
	}
	fputs("storage:\n  directory: ", f);
	print_str(f, cfg->storage_directory);
	fprintf(f, "\n  max_disk_buffer: %ld\n  max_disk_buffer_kb: %ld\n"
	    "  segment_kb: %ld\n", cfg->max_disk_buffer,
	    cfg->max_disk_buffer_kb, cfg->segment_kb);
	fprintf(f, "logging:\n  debug_level: %d\n  file: ", cfg->debug_level);
	print_str(f, cfg->log_file);
	fprintf(f, "\nbatch:\n  max_events: %d\n  max_bytes: %ld\n"
	    "  flush_interval: %d\n", cfg->batch_max_events,
	    cfg->batch_max_bytes, cfg->batch_flush_interval);
	fprintf(f, "host:\n  platform: %s\n  tools_dir: ", cfg->platform);
	print_str(f, cfg->tools_dir);
	fputs("\n  log_dir: ", f);
	print_str(f, cfg->log_dir);
	fputs("\n  hostname: ", f);
	print_str(f, cfg->hostname);
	fputs("\ntags:", f);
	print_kv(f, &cfg->tags, "  ");
	fputs("collectors:\n", f);
	for (size_t i = 0; i < cfg->ncollectors; i++) {
		const struct collector_conf *cc = &cfg->collectors[i];

		fprintf(f, "  %s:\n    enabled: %s\n    interval: %d\n"
		    "    include: ", cc->name, YN(cc->enabled), cc->interval);
		print_list(f, &cc->include);
		fputs("\n    exclude: ", f);
		print_list(f, &cc->exclude);
		fprintf(f, "\n    timeout: %d\n", cc->timeout);
		if (strcmp(cc->name, "diagnosis") == 0)
			fprintf(f, "    window: %d\n    flap_count: %d\n"
			    "    flap_window: %d\n    drive_window: %d\n"
			    "    silent_after: %d\n", cc->diag_window,
			    cc->diag_flap_count, cc->diag_flap_window,
			    cc->diag_drive_window, cc->diag_silent_after);
	}
	fputs("filelog:", f);
	if (cfg->nfilelogs == 0)
		fputs(" {}", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nfilelogs; i++) {
		const struct filelog_conf *fl = &cfg->filelogs[i];

		fputs("  ", f);
		print_str(f, fl->name);
		fputs(":\n    directory: ", f);
		print_str(f, fl->directory);
		fputs("\n    include: ", f);
		print_list(f, &fl->include);
		fputs("\n    exclude: ", f);
		print_list(f, &fl->exclude);
		fputs("\n    event_marker: ", f);
		print_str(f, fl->event_marker ? fl->event_marker : "");
		fputs("\n    tags:", f);
		print_kv(f, &fl->tags, "      ");
		fprintf(f, "    forward: %s\n    read_from_head: %s\n"
		    "    enabled: %s\n", fl->forward == FORWARD_ALL ? "all" :
		    "matches", YN(fl->read_from_head), YN(fl->enabled));
	}
	fputs("rules:", f);
	if (cfg->nrules == 0)
		fputs(" []", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nrules; i++)
		print_rule(f, &cfg->rules[i]);
	fputs("rules_file: ", f);
	print_str(f, cfg->rules_file);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}
