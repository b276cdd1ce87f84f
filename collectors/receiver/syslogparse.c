/*
 * syslogparse: one received syslog message, as ESXi hosts and the relays
 * in front of them write it (formats in syslogwire.h, sources in
 * docs/collector.md and tests/fixtures/syslog/SOURCES.md).
 *
 * Every field is a span of the caller's buffer: no allocation, no copy, no
 * regex; one pass over the header, the message proper is not scanned.
 * Every index is checked against len (the buffer comes straight from a
 * socket: no NUL terminator, maybe NULs inside, maybe garbage).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../logwatch/logline.h"
#include "syslogwire.h"

#define TAG_MAX		64	/* longest TAG taken as one (5424 APP-NAME: 48) */
#define PID_MAX		32	/* longest "[pid]" content */
#define HOST_MAX	255	/* longest HOSTNAME (5424: 255) */
#define SDID_MAX	64	/* longest "Originator@6876"-like SD-ID */

static bool
dig(char c)
{
	return c >= '0' && c <= '9';
}

static void
span(struct syslog_span *s, const char *p, size_t n)
{
	s->p = n > 0 ? p : NULL;
	s->len = n;
}

/* "<PRI>": bytes consumed, 0 when there is none. */
static size_t
pri_of(const char *b, size_t len, int *pri)
{
	size_t i = 1;
	int v = 0;

	if (len < 3 || b[0] != '<')
		return 0;
	while (i < len && i <= 3 && dig(b[i])) {
		v = v * 10 + (b[i] - '0');
		i++;
	}
	if (i == 1 || i >= len || b[i] != '>' || v > 191)
		return 0;
	*pri = v;
	return i + 1;
}

static int
days_in(long y, long m)
{
	static const int dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

static long
num2(const char *s)
{
	if (!dig(s[0]) || !dig(s[1]))
		return -1;
	return (s[0] - '0') * 10 + (s[1] - '0');
}

static int64_t
civil(long y, long mo, long d, long h, long mi, long s, long ms)
{
	return ((logline_days_from_civil(y, (unsigned)mo, (unsigned)d) * 24 +
	    h) * 60 + mi) * 60000 + (int64_t)s * 1000 + ms;
}

/*
 * RFC 3164 "Mmm dd hh:mm:ss" ("Mmm  d" for days below 10), an optional
 * ".fff" (rsyslog's high-precision variant).  No year on the wire: the
 * year of now, or the one before when that would put the time more than a
 * day ahead (a December line read in January).  No zone either: taken as
 * UTC (relays in local time are noted in docs/collector.md).
 */
static size_t
classic_stamp(const char *s, size_t len, int64_t now, int64_t *out)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	long mo = -1, d, h, mi, sec, y, ms = 0;
	size_t i, nd = 0;
	time_t t;
	struct tm tm;

	if (len < 14 || s[3] != ' ')
		return 0;
	for (i = 0; i < 12 && mo < 0; i++)
		if (memcmp(s, months + i * 3, 3) == 0)
			mo = (long)i + 1;
	/* "Dec 17", "Dec  7", and the "Dec 7" some relays write */
	i = s[4] == ' ' ? 5 : 4;
	if (!dig(s[i]))
		return 0;
	d = s[i] - '0';
	if (dig(s[i + 1]))
		d = d * 10 + (s[++i] - '0');
	i++;
	if (len < i + 9 || s[i] != ' ' || s[i + 3] != ':' || s[i + 6] != ':')
		return 0;
	h = num2(s + i + 1);
	mi = num2(s + i + 4);
	sec = num2(s + i + 7);
	if (mo < 0 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
	    sec < 0 || sec > 60)
		return 0;
	i += 9;
	if (i + 1 < len && s[i] == '.' && dig(s[i + 1])) {
		for (i++; i < len && dig(s[i]); i++, nd++)
			if (nd < 3)
				ms = ms * 10 + (s[i] - '0');
		for (; nd < 3; nd++)
			ms *= 10;
	}
	t = (time_t)(now / 1000);
	if (gmtime_r(&t, &tm) == NULL)
		return 0;
	y = tm.tm_year + 1900;
	if (d > days_in(y, mo) && d > days_in(y - 1, mo))
		return 0;
	if (d > days_in(y, mo) ||
	    civil(y, mo, d, h, mi, sec, ms) > now + 86400000LL)
		y--;
	*out = civil(y, mo, d, h, mi, sec, ms);
	return i;
}

/* A header time (RFC 3339 or RFC 3164) followed by SP or the end. */
static size_t
stamp(const char *s, size_t len, int64_t now, int64_t *out)
{
	size_t n;

	n = logline_iso8601(s, len, out);
	if (n == 0)
		n = classic_stamp(s, len, now, out);
	if (n == 0 || (n < len && s[n] != ' '))
		return 0;
	return n;
}

static size_t
token(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] != ' ')
		n++;
	return n;
}

static size_t
spaces(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] == ' ')
		n++;
	return n;
}

/*
 * One SD-ELEMENT "[ID k=v ...]" at s: bytes up to and including its ']',
 * 0 when it is not one.  Values may be quoted (5424, with \" \\ \]
 * escapes) or not (ESXi 8.0's RFC 3164 block: "sub=Vimsvc.ha-eventmgr");
 * in RFC 3164 the ID must hold an '@' (an enterprise ID: "Originator@6876")
 * so that a message starting "[netCorrelator]" stays message; RFC 5424
 * also has IANA's IDs without one ("timeQuality").
 */
static size_t
sd_element(const char *s, size_t len, bool need_at)
{
	size_t i = 1;
	bool at = false, quoted = false;

	if (len < 4 || s[0] != '[')
		return 0;
	while (i < len && i <= SDID_MAX && s[i] != ' ' && s[i] != ']' &&
	    s[i] != '=' && s[i] != '"') {
		at = at || s[i] == '@';
		i++;
	}
	if ((need_at && !at) || i == 1 || i >= len || (s[i] != ' ' && s[i] != ']'))
		return 0;
	for (; i < len; i++) {
		if (quoted && s[i] == '\\')
			i++;
		else if (s[i] == '"')
			quoted = !quoted;
		else if (!quoted && s[i] == ']')
			return i + 1;
	}
	return 0;
}

/* Consecutive SD-ELEMENTs at s: their total length, 0 for none. */
static size_t
sd_block(const char *s, size_t len, bool need_at)
{
	size_t n = 0, e;

	while (n < len) {
		e = sd_element(s + n, len - n, need_at);
		if (e == 0)
			break;
		n += e;
	}
	return n;
}

/*
 * The RFC 3164 TAG at s: "Tag:", "Tag[pid]:" then SP or the end.  Sets
 * app and procid; returns the bytes consumed, 0 when s holds no tag (the
 * ':' rule keeps vmkernel's "cpu12:2097682)" from looking like one).
 */
static size_t
tag(const char *s, size_t len, struct syslog_msg *out)
{
	size_t i = 0, p0 = 0, pn = 0;

	while (i < len && i <= TAG_MAX && s[i] != '[' && s[i] != ':' &&
	    s[i] != ' ')
		i++;
	if (i == 0 || i > TAG_MAX || i >= len)
		return 0;
	if (s[i] == '[') {
		p0 = i + 1;
		while (p0 + pn < len && pn <= PID_MAX && s[p0 + pn] != ']' &&
		    s[p0 + pn] != ' ')
			pn++;
		if (p0 + pn >= len || s[p0 + pn] != ']' || pn > PID_MAX)
			return 0;
		if (p0 + pn + 1 >= len || s[p0 + pn + 1] != ':' ||
		    (p0 + pn + 2 < len && s[p0 + pn + 2] != ' '))
			return 0;
		span(&out->procid, s + p0, pn);
		span(&out->app, s, i);
		i = p0 + pn + 2;
	} else if (s[i] == ':' && (i + 1 == len || s[i + 1] == ' ')) {
		span(&out->app, s, i);
		i++;
	} else
		return 0;
	if (i < len && s[i] == ' ')
		i++;
	return i;
}

/* A HOSTNAME rather than a TAG: no ':' at its end, no '['. */
static bool
hostish(const char *s, size_t n)
{
	return n > 0 && n <= HOST_MAX && s[n - 1] != ':' &&
	    memchr(s, '[', n) == NULL;
}

/* After the tag: a leading SD block (8.0's "[Originator@6876 ...]"). */
static void
body3164(const char *b, size_t len, size_t i, struct syslog_msg *out)
{
	size_t n;

	n = tag(b + i, len - i, out);
	i += n;
	if (n > 0)		/* vobd writes two spaces after "vobd:" */
		i += spaces(b + i, len - i);
	n = sd_block(b + i, len - i, true);
	if (n > 0) {
		span(&out->sd, b + i, n);
		i += n;
		if (i < len && b[i] == ' ')
			i++;
	}
	span(&out->msg, b + i, len - i);
}

/*
 * RFC 3164 from b[i] (after <PRI>): TIMESTAMP SP [HOSTNAME SP] TAG MSG,
 * and a relay's "Mmm dd hh:mm:ss RELAY " in front of another header.
 * Returns -1 when there is no header time and had_pri is false.
 */
static int
parse3164(const char *b, size_t len, size_t i, int64_t now, bool had_pri,
    bool inner, struct syslog_msg *out)
{
	int64_t ts;
	size_t n, t;
	int pri;

	n = stamp(b + i, len - i, now, &ts);
	if (n == 0) {
		if (!had_pri)
			return -1;
		body3164(b, len, i, out);	/* RFC 3164 4.3.3: no header */
		return 0;
	}
	out->ts_ms = ts;
	i += n;
	i += spaces(b + i, len - i);
	t = token(b + i, len - i);
	if (hostish(b + i, t)) {
		span(&out->host, b + i, t);
		i += t;
		i += spaces(b + i, len - i);
		n = inner ? 0 : pri_of(b + i, len - i, &pri);
		if (!inner && stamp(b + i + n, len - i - n, now, &ts) > 0) {
			/* A relay's header: the sender's own one follows. */
			out->relay = out->host;
			span(&out->host, NULL, 0);
			if (n > 0)
				out->pri = pri;
			return parse3164(b, len, i + n, now, true, true, out);
		}
	}
	body3164(b, len, i, out);
	return 0;
}

/*
 * A 5424 header field: "-" is absent, and so is one longer than RFC 5424
 * allows (max: HOSTNAME 255, APP-NAME 48, PROCID 128, MSGID 32), rather
 * than a name cut short.
 */
static size_t
field(const char *b, size_t len, size_t i, size_t max, struct syslog_span *f)
{
	size_t t = token(b + i, len - i);

	if (!(t == 1 && b[i] == '-') && t <= max)
		span(f, b + i, t);
	i += t;
	if (i < len)
		i++;
	return i;
}

/* RFC 5424 from b[i] (after "<PRI>1 "). */
static void
parse5424(const char *b, size_t len, size_t i, struct syslog_msg *out)
{
	struct syslog_span ts = { NULL, 0 };
	int64_t ms;
	size_t n;

	out->format = SYSLOG_5424;
	i = field(b, len, i, 64, &ts);
	if (ts.len > 0 && logline_iso8601(ts.p, ts.len, &ms) == ts.len)
		out->ts_ms = ms;
	i = field(b, len, i, HOST_MAX, &out->host);
	i = field(b, len, i, 48, &out->app);
	i = field(b, len, i, 128, &out->procid);
	i = field(b, len, i, 32, &out->msgid);
	n = sd_block(b + i, len - i, false);
	if (n > 0) {
		span(&out->sd, b + i, n);
		i += n;
	} else if (i < len && b[i] == '-' && (i + 1 == len || b[i + 1] == ' '))
		i++;
	if (i < len && b[i] == ' ')
		i++;
	/* A UTF-8 message starts with a BOM (RFC 5424 6.4): not message. */
	if (len - i >= 3 && memcmp(b + i, "\xEF\xBB\xBF", 3) == 0)
		i += 3;
	span(&out->msg, b + i, len - i);
}

int
syslog_parse(const char *buf, size_t len, int64_t now_ms,
    struct syslog_msg *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->pri = -1;
	out->ts_ms = -1;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
	    buf[len - 1] == '\0'))
		len--;
	span(&out->text, buf, len);
	span(&out->msg, buf, len);
	if (len == 0)
		return -1;
	i = pri_of(buf, len, &out->pri);
	if (i > 0 && len - i >= 2 && buf[i] >= '1' && buf[i] <= '9' &&
	    (buf[i + 1] == ' ' || (len - i >= 3 && dig(buf[i + 1]) &&
	    buf[i + 2] == ' '))) {
		span(&out->text, buf + i, len - i);
		parse5424(buf, len, i + (buf[i + 1] == ' ' ? 2 : 3), out);
		return 0;
	}
	out->format = SYSLOG_3164;
	if (parse3164(buf, len, i, now_ms, i > 0, false, out) < 0) {
		out->format = SYSLOG_UNKNOWN;
		return -1;
	}
	span(&out->text, buf + i, len - i);
	return 0;
}

bool
syslog_host_fallback(const struct syslog_span *host)
{
	static const char lh[] = "localhost";
	size_t i;

	if (host->len == 0)
		return true;
	if (host->len < sizeof(lh) - 1)
		return false;
	for (i = 0; i < sizeof(lh) - 1; i++)
		if ((host->p[i] | 0x20) != lh[i])
			return false;
	return true;
}

const struct syslog_span *
syslog_host_name(const struct syslog_msg *m)
{
	if (!syslog_host_fallback(&m->host))
		return &m->host;
	if (m->relay.len > 0 && !syslog_host_fallback(&m->relay))
		return &m->relay;
	return NULL;
}

/*
 * hostd's continuation lines: the message proper starts "-->" (8.0:
 * "Hostd[123]: --> ..."), or, as 6.x/7.0 repeat level and process in the
 * message, "info hostd[123] --> ...".
 */
bool
syslog_is_continuation(const char *msg, size_t len)
{
	size_t i, w;

	i = spaces(msg, len);
	if (len - i >= 3 && memcmp(msg + i, "-->", 3) == 0)
		return true;
	/* "LEVEL PROC[ID] -->": two words, the second ending in ']'. */
	w = token(msg + i, len - i);
	if (w == 0 || w > 12)
		return false;
	i += w + spaces(msg + i + w, len - i - w);
	w = token(msg + i, len - i);
	if (w < 3 || w > TAG_MAX + PID_MAX || msg[i + w - 1] != ']')
		return false;
	i += w;
	return len - i >= 4 && memcmp(msg + i, " -->", 4) == 0;
}
