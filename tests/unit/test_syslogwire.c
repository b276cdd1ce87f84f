/*
 * The syslog wire (collectors/receiver/): the parse of one message against
 * the fixtures of tests/fixtures/syslog/ (SOURCES.md cites each line), the
 * framing of a TCP stream byte for byte and split at every boundary, and
 * the folding of hostd's "-->" continuation lines.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../collectors/logwatch/logline.h"
#include "../../collectors/receiver/syslogwire.h"

#define FIX "tests/fixtures/syslog/"
/* 2026-12-07T06:00:00Z: the year of the classic RFC 3164 times. */
#define NOW 1796623200000LL

static char *lines[16];
static size_t lens[16];
static char *file_buf;

/* Split a fixture into lines (kept until the next call). */
static int
load(const char *name)
{
	char path[256];
	size_t len, n = 0;
	char *p, *e;

	free(file_buf);
	snprintf(path, sizeof(path), FIX "%s", name);
	file_buf = t_slurp(path, &len);
	p = file_buf;
	while (p < file_buf + len && n < 16) {
		e = memchr(p, '\n', (size_t)(file_buf + len - p));
		if (e == NULL)
			e = file_buf + len;
		lines[n] = p;
		lens[n] = (size_t)(e - p);
		n++;
		p = e + 1;
	}
	return (int)n;
}

static bool
span_is(struct syslog_span s, const char *want)
{
	if (want == NULL)
		return s.len == 0;
	return s.len == strlen(want) && memcmp(s.p, want, s.len) == 0;
}

static bool
span_starts(struct syslog_span s, const char *want)
{
	return s.len >= strlen(want) && memcmp(s.p, want, strlen(want)) == 0;
}

static int64_t
iso(const char *s)
{
	int64_t ms = -1;

	if (logline_iso8601(s, strlen(s), &ms) != strlen(s))
		return -2;
	return ms;
}

#define SPAN_IS(s, w) do {						\
	if (!span_is((s), (w)))						\
		T_FAILF("%s == \"%.*s\", want \"%s\"", #s, (int)(s).len, \
		    (s).p ? (s).p : "", (w) ? (w) : "(absent)");	\
} while (0)
#define SPAN_STARTS(s, w) do {						\
	if (!span_starts((s), (w)))					\
		T_FAILF("%s == \"%.60s\", want it to start \"%s\"", #s,	\
		    (s).p ? (s).p : "", (w));				\
} while (0)

struct want {
	int		 line, rc, fmt, pri;
	const char	*ts;		/* ISO, or NULL for -1 */
	const char	*host, *app, *procid, *sd, *msg, *text, *relay;
};

static void
check(const struct want *w)
{
	struct syslog_msg m;
	int rc, failed = t_failed_checks;

	rc = syslog_parse(lines[w->line], lens[w->line], NOW, &m);
	CHECK_INT(rc, w->rc);
	CHECK_INT(m.format, w->fmt);
	CHECK_INT(m.pri, w->pri);
	CHECK_INT(m.ts_ms, w->ts ? iso(w->ts) : -1);
	SPAN_IS(m.host, w->host);
	SPAN_IS(m.app, w->app);
	SPAN_IS(m.procid, w->procid);
	if (w->sd)
		SPAN_STARTS(m.sd, w->sd);
	else
		SPAN_IS(m.sd, NULL);
	SPAN_STARTS(m.msg, w->msg);
	SPAN_STARTS(m.text, w->text);
	SPAN_IS(m.relay, w->relay);
	/* the spans lie inside the line, msg and text run to its end */
	CHECK(m.text.p + m.text.len == lines[w->line] + lens[w->line]);
	CHECK(m.msg.len == 0 ||
	    m.msg.p + m.msg.len == lines[w->line] + lens[w->line]);
	if (t_failed_checks != failed)
		printf("  (the checks above: fixture line %d)\n", w->line + 1);
}

TEST(esxi67_rfc3164)
{
	static const struct want w[] = {
	    { 0, 0, SYSLOG_3164, 166, "2019-05-21T19:27:32.479Z",
		"esxi.example", "Hostd", NULL, NULL,
		"info hostd[FFE61B70] [Originator@6876 sub=Vimsvc.ha-eventmgr] "
		"Event 6361 : /usr/lib/vmware/vpxa/bin/vpxa crashed",
		"2019-05-21T19:27:32.479Z esxi.example Hostd: info", NULL },
	    { 1, 0, SYSLOG_3164, 14, "2019-05-21T19:27:33.102Z",
		"esxi.example", "vobd", NULL, NULL,
		"[UserWorldCorrelator] 11239800115513us: "
		"[esx.problem.vpxa.core.dumped]",
		"2019-05-21T19:27:33.102Z esxi.example vobd:  [User", NULL },
	    { 2, 0, SYSLOG_3164, 166, "2023-01-02T12:34:56.789Z",
		"esxihostname", "Hostd", NULL, NULL, "info hostd[A1B2C3] [Orig",
		"2023-01-02T12:34:56.789Z esxihostname Hostd:", NULL },
	    { 3, 0, SYSLOG_3164, 166, "2022-04-26T02:48:45.930Z", "ESX01",
		"Hostd", NULL, NULL, "info hostd[2100820]", "2022-04-26T02", NULL },
	    { 4, 0, SYSLOG_3164, 166, "2022-04-26T02:48:45.931Z", "ESX01",
		"Hostd", NULL, NULL, "--> Host is shutting down", "2022", NULL },
	    { 5, 0, SYSLOG_3164, 164, "2020-05-08T07:45:35.567Z",
		"localhost.localdomain", "vmkernel", NULL, NULL,
		"cpu12:2097682)WARNING: ScsiDeviceIO: 1513:", "2020-05-08T07",
		NULL },
	    { 6, 0, SYSLOG_3164, 166, "2020-05-08T07:45:36.001Z", NULL,
		"Hostd", NULL, NULL, "warning hostd[2099376] [Originator@6876 "
		"sub=IoTracker] In thread", "2020-05-08T07:45:36.001Z Hostd:",
		NULL },
	};
	size_t i;

	CHECK_INT(load("esxi67-rfc3164.log"), 7);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
}

TEST(esxi8_rfc3164)
{
	static const struct want w[] = {
	    { 0, 0, SYSLOG_3164, 166, "2025-12-11T16:43:23.314Z",
		"esx90.lab.local", "Hostd", "169827",
		"[Originator@6876 sub=Vimsvc.HTTPService.HttpConnection]",
		"HTTP Connection has timed out", "2025-12-11T16:43:23.314Z "
		"esx90.lab.local Hostd[169827]: [Originator@6876", NULL },
	    { 1, 0, SYSLOG_3164, 166, "2025-12-11T16:43:23.314Z",
		"esx90.lab.local", "Hostd", "169797", NULL,
		"--> [context]zKq7", "2025-12-11T16:43:23.314Z", NULL },
	    { 2, 0, SYSLOG_3164, 163, "2025-12-11T16:43:25.003Z",
		"esx90.lab.local", "Hostd", "169828",
		"[Originator@6876 sub=VMkernelStatsProvider(000000a67b5238a0)]",
		"GetKernelStatValues: Detected error", "2025", NULL },
	    { 3, 0, SYSLOG_3164, 164, "2025-12-11T16:43:28.795Z",
		"esx90.lab.local", "Hostd", "169823", "[Originator@6876 sub=dev",
		"FillVirtualDeviceStats:", "2025", NULL },
	    { 4, 0, SYSLOG_3164, 14, "2025-12-11T16:44:02.737Z",
		"esx90.lab.local", "vobd", "2097521", NULL,
		"[UserLevelCorrelator] 1012726884193us: "
		"[vob.user.ssh.session.closed]", "2025", NULL },
	    { 5, 0, SYSLOG_3164, 182, "2025-12-11T16:44:03.079Z",
		"esx90.lab.local", "vmkernel", NULL, NULL,
		"cpu0:170428)ScsiDeviceIO: 4176:", "2025", NULL },
	};
	struct syslog_msg m;
	size_t i;

	CHECK_INT(load("esxi8-rfc3164.log"), 6);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
	/* the whole Originator block, up to its own ']' */
	syslog_parse(lines[2], lens[2], NOW, &m);
	SPAN_IS(m.sd, "[Originator@6876 sub=VMkernelStatsProvider("
	    "000000a67b5238a0)]");
}

TEST(esxi8_rfc5424)
{
	static const struct want w[] = {
	    { 0, 0, SYSLOG_5424, 166, "2025-12-11T16:43:23.314Z",
		"esx90.lab.local", "Hostd", "169827",
		"[Originator@6876 sub=\"Vimsvc.ha-eventmgr\" opID=",
		"Event 2393 : Host is shutting down.",
		"1 2025-12-11T16:43:23.314Z esx90.lab.local Hostd 169827 - "
		"[Originator@6876", NULL },
	    { 1, 0, SYSLOG_5424, 166, "2025-12-11T16:43:23.315Z",
		"esx90.lab.local", "Hostd", "169797", NULL, "--> [context]",
		"1 2025", NULL },
	    { 2, 0, SYSLOG_5424, 14, "2025-12-11T16:44:02.737Z",
		"esx90.lab.local", "vobd", "2097521", NULL,
		"[UserLevelCorrelator] 1012726884193us:", "1 2025", NULL },
	    { 3, 0, SYSLOG_5424, 166, "2025-12-11T16:44:05.100Z", NULL,
		"Hostd", "169828", "[Originator@6876 sub=\"Default\" opID=\""
		"esxui-d48c-26a4\"][msgModified@6876 msgModified=",
		"[module:pam_lsass]pam_do_authenticate: error [login:root]",
		"1 2025", NULL },
	    { 4, 0, SYSLOG_5424, 13, "2026-12-07T05:40:01.123+00:00",
		"linuxhost", "user", NULL, "[timeQuality tzKnown=\"1\"",
		"hello from logger", "1 2026-12-07T05:40:01.123456+00:00", NULL },
	    { 5, 0, SYSLOG_5424, 34, "2003-10-11T22:14:15.003Z",
		"mymachine.example.com", "su", NULL, NULL,
		"su root failed for lonvick", "1 2003-10-11T22:14:15.003Z "
		"mymachine.example.com su - ID47 - \xEF\xBB\xBFsu root", NULL },
	};
	struct syslog_msg m;
	size_t i;

	CHECK_INT(load("esxi8-rfc5424.log"), 6);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
	syslog_parse(lines[0], lens[0], NOW, &m);
	SPAN_IS(m.sd, "[Originator@6876 sub=\"Vimsvc.ha-eventmgr\" "
	    "opID=\"esxui-13c6-6b16\" sid=\"5214bde6\" user=\"root\"]");
	SPAN_IS(m.msgid, NULL);
	syslog_parse(lines[5], lens[5], NOW, &m);
	SPAN_IS(m.msgid, "ID47");
	SPAN_IS(m.sd, NULL);
}

TEST(relays_and_classic)
{
	static const struct want w[] = {
	    /* the relay's local-time header: the host's own one wins */
	    { 0, 0, SYSLOG_3164, 13, "2023-01-02T12:34:56.789Z",
		"esxihostname", "Hostd", NULL, NULL, "info hostd[A1B2C3]",
		"Jan  2 13:34:56 10.100.101.102 2023-01-02T12:34:56.789Z",
		"10.100.101.102" },
	    { 1, 0, SYSLOG_3164, -1, "2023-01-02T12:34:56.789Z",
		"esxihostname", "Hostd", NULL, NULL, "info hostd[A1B2C3]",
		"Jan 2 13:34:56 10.100.101.102", "10.100.101.102" },
	    /* ESXi 5.x vobd behind a relay: the inner header has no host */
	    { 2, 0, SYSLOG_3164, 14, "2026-11-29T03:25:19Z", NULL, "vobd",
		NULL, NULL, "Nov 29 03:25:19.927: 8596737035540us: "
		"[vob.net.dvport.uplink.transition.down]", "Nov 28 22:25:19 "
		"10.2.0.103 Nov 29", "10.2.0.103" },
	    { 3, 0, SYSLOG_3164, 13, "2026-12-07T05:40:01Z", "linuxhost",
		"user", NULL, NULL, "hello from logger", "Dec  7 05:40:01 "
		"linuxhost user: hello from logger", NULL },
	    { 4, 0, SYSLOG_3164, 34, "2026-10-11T22:14:15Z", "mymachine",
		"su", NULL, NULL, "'su root' failed", "Oct 11 22:14:15", NULL },
	};
	size_t i;

	CHECK_INT(load("relay-and-classic.log"), 5);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
}

/* Which name keys the host (docs/collector.md, "Event text, hostname and
 * appname"): the inner HOSTNAME; absent, empty or localhost* behind a
 * relay's header, the name the relay gives; else none (the peer's
 * address, the caller's). */
static const char *
host_of_n(const char *line, size_t len, char *out, size_t cap)
{
	struct syslog_msg m;
	const struct syslog_span *h;

	CHECK_INT(syslog_parse(line, len, NOW, &m), 0);
	h = syslog_host_name(&m);
	if (h == NULL)
		return NULL;
	CHECK(h == &m.host || h == &m.relay);
	snprintf(out, cap, "%.*s", (int)h->len, h->p);
	return out;
}
#define host_of(line, out, cap)	host_of_n(line, strlen(line), out, cap)

TEST(host_name_rule)
{
	char b[256];
	const char *h;

	/* the inner header names the host, relay or not */
	h = host_of("<13>Dec  7 05:40:01 relay01 2026-12-07T05:40:01.123Z "
	    "esx07.example.com Hostd: x", b, sizeof(b));
	CHECK_STR(h ? h : "(null)", "esx07.example.com");
	h = host_of("<13>2026-12-07T05:40:01.123Z esx07 Hostd: x", b, sizeof(b));
	CHECK_STR(h ? h : "(null)", "esx07");
	/* no inner HOSTNAME behind a relay: the relay's name */
	h = host_of("<13>Dec  7 05:40:01 relay01 Dec  7 05:40:01 vobd: x",
	    b, sizeof(b));
	CHECK_STR(h ? h : "(null)", "relay01");
	/* an inner localhost* is like none: the relay's name, the same rule */
	h = host_of("<13>Dec  7 05:40:01 relay01 2026-12-07T05:40:01.123Z "
	    "localhost.localdomain Hostd: x", b, sizeof(b));
	CHECK_STR(h ? h : "(null)", "relay01");
	/* the relay names none usable either, or there is no relay: none */
	CHECK(host_of("<13>Dec  7 05:40:01 LOCALHOST 2026-12-07T05:40:01.123Z "
	    "localhost Hostd: x", b, sizeof(b)) == NULL);
	CHECK(host_of("<13>2026-12-07T05:40:01.123Z localhost Hostd: x", b,
	    sizeof(b)) == NULL);
	CHECK(host_of("<13>Dec  7 05:40:01 vobd: x", b, sizeof(b)) == NULL);
	/* the relay-and-classic capture: ESXi 5.x vobd behind a relay */
	CHECK_INT(load("relay-and-classic.log"), 5);
	h = host_of_n(lines[2], lens[2], b, sizeof(b));
	CHECK_STR(h ? h : "(null)", "10.2.0.103");
	h = host_of_n(lines[0], lens[0], b, sizeof(b));
	CHECK_STR(h ? h : "(null)", "esxihostname");
}

TEST(malformed)
{
	struct syslog_msg m;

	CHECK_INT(load("malformed.log"), 4);
	/* <505> is no PRI: not syslog, the whole line kept as text */
	CHECK_INT(syslog_parse(lines[0], lens[0], NOW, &m), -1);
	CHECK_INT(m.format, SYSLOG_UNKNOWN);
	CHECK_INT(m.pri, -1);
	CHECK(m.text.p == lines[0] && m.text.len == lens[0]);
	CHECK_INT(syslog_parse(lines[1], lens[1], NOW, &m), -1);
	SPAN_IS(m.text, "hello world");
	CHECK_INT(syslog_parse(lines[2], lens[2], NOW, &m), -1);
	SPAN_IS(m.text, "<13");
	/* a PRI and nothing else: a message with an empty body */
	CHECK_INT(syslog_parse(lines[3], lens[3], NOW, &m), 0);
	CHECK_INT(m.pri, 166);
	CHECK_INT(m.text.len, 0);
	CHECK_INT(syslog_parse("", 0, NOW, &m), -1);
	CHECK_INT(syslog_parse("\r\n", 2, NOW, &m), -1);
}

TEST(edge_cases)
{
	struct syslog_msg m;
	const char *s;

	/* trailing CR LF and NUL are not text */
	s = "<13>Dec  7 05:40:01 h app: x\r\n";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	SPAN_IS(m.msg, "x");
	SPAN_IS(m.text, "Dec  7 05:40:01 h app: x");
	/* a December line read on New Year's day is last year's */
	s = "<13>Dec 31 23:59:59 h app: x";
	CHECK_INT(syslog_parse(s, strlen(s), iso("2027-01-01T00:10:00Z"), &m),
	    0);
	CHECK_INT(m.ts_ms, iso("2026-12-31T23:59:59Z"));
	/* Feb 29 only in a leap year (2028) */
	s = "<13>Feb 29 10:00:00 h app: x";
	CHECK_INT(syslog_parse(s, strlen(s), iso("2028-03-01T00:00:00Z"), &m),
	    0);
	CHECK_INT(m.ts_ms, iso("2028-02-29T10:00:00Z"));
	/* a PRI but no time (RFC 3164 4.3.3): all of it is message */
	s = "<13>app[12]: no time";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	CHECK_INT(m.ts_ms, -1);
	SPAN_IS(m.app, "app");
	SPAN_IS(m.procid, "12");
	SPAN_IS(m.msg, "no time");
	/* a time, a host and nothing else */
	s = "<13>2024-01-01T00:00:00Z esx01";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	SPAN_IS(m.host, "esx01");
	SPAN_IS(m.app, NULL);
	CHECK_INT(m.msg.len, 0);
	/* an unclosed SD block stays message */
	s = "<13>2024-01-01T00:00:00Z esx01 Hostd[1]: [Originator@6876 sub=x";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	SPAN_IS(m.sd, NULL);
	SPAN_IS(m.msg, "[Originator@6876 sub=x");
	/* 5424 with an escaped ']' inside a quoted value, no message */
	s = "<13>1 - - - - - [a@1 k=\"x\\]y\"]";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	CHECK_INT(m.ts_ms, -1);
	SPAN_IS(m.host, NULL);
	SPAN_IS(m.sd, "[a@1 k=\"x\\]y\"]");
	CHECK_INT(m.msg.len, 0);
	/* a 5424 name longer than the RFC allows is absent, not cut */
	s = "<13>1 - h aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1 - - m";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	SPAN_IS(m.app, NULL);
	SPAN_IS(m.procid, "1");
	SPAN_IS(m.msg, "m");
	/* a ':' inside a word is no tag: vmkernel's "cpu12:2097682)" */
	s = "<13>2024-01-01T00:00:00Z cpu12:2097682)WARNING: x";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	SPAN_IS(m.host, NULL);
	SPAN_IS(m.app, NULL);
	SPAN_IS(m.msg, "cpu12:2097682)WARNING: x");
	s = "<13>2024-01-01T00:00:00Z esx01 app[1]:x";
	CHECK_INT(syslog_parse(s, strlen(s), NOW, &m), 0);
	SPAN_IS(m.app, NULL);
	SPAN_IS(m.msg, "app[1]:x");
	/* NULs inside a message are bytes like any other */
	CHECK_INT(syslog_parse("<13>Dec  7 05:40:01 h a: x\0y", 28, NOW, &m),
	    0);
	CHECK_INT(m.msg.len, 3);
}

TEST(host_fallback)
{
	static const struct { const char *name; bool fallback; } c[] = {
	    { "", true }, { "localhost", true },
	    { "localhost.localdomain", true }, { "LocalHost.lab", true },
	    { "ESX01", false }, { "esx01.lab.local", false },
	    { "local", false }, { "10.0.0.5", false },
	};
	struct syslog_span sp;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		sp.p = c[i].name;
		sp.len = strlen(c[i].name);
		if (syslog_host_fallback(&sp) != c[i].fallback)
			T_FAILF("\"%s\": want %d", c[i].name, c[i].fallback);
	}
	/* the fixtures: the 7.0 line without HOSTNAME, localhost.localdomain */
	CHECK_INT(load("esxi67-rfc3164.log"), 7);
	{
		struct syslog_msg m;

		syslog_parse(lines[5], lens[5], NOW, &m);
		CHECK(syslog_host_fallback(&m.host));
		syslog_parse(lines[6], lens[6], NOW, &m);
		CHECK(syslog_host_fallback(&m.host));
		syslog_parse(lines[3], lens[3], NOW, &m);
		CHECK(!syslog_host_fallback(&m.host));
	}
}

TEST(continuation)
{
	CHECK(syslog_is_continuation("--> [context]x", 14));
	CHECK(syslog_is_continuation("  --> x", 7));
	CHECK(syslog_is_continuation("info hostd[2099376] --> x", 25));
	CHECK(!syslog_is_continuation("info hostd[2099376] [Originator@6876]",
	    37));
	CHECK(!syslog_is_continuation("->", 2));
	CHECK(!syslog_is_continuation("", 0));
	CHECK(!syslog_is_continuation("a b -->", 7));
}

/* ---- framing ------------------------------------------------------ */

struct out {
	char	*p;
	size_t	 len, cap;
};

static void
out_add(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->p = realloc(o->p, o->cap);
		if (o->p == NULL)
			abort();
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

/* Each message as "[len]bytes|", "[len!]bytes|" when cut. */
static void
on_msg(void *arg, const char *msg, size_t len, bool truncated)
{
	char hdr[32];

	snprintf(hdr, sizeof(hdr), "[%zu%s]", len, truncated ? "!" : "");
	out_add(arg, hdr, strlen(hdr));
	out_add(arg, msg, len);
	out_add(arg, "|", 1);
}

/*
 * Feed in[0..n) cut into pieces of `step` bytes (0: one piece, or at the
 * single point `at` when step is (size_t)-1), then end the stream.
 */
static struct out
frame(const char *in, size_t n, size_t step, size_t at,
    struct framer_counts *counts)
{
	struct framer *f = framer_new();
	struct out o = { NULL, 0, 0 };
	size_t i, k;

	out_add(&o, "", 0);
	if (step == (size_t)-1) {
		framer_feed(f, in, at, on_msg, &o);
		framer_feed(f, in + at, n - at, on_msg, &o);
	} else {
		for (i = 0; i < n; i += k) {
			k = step == 0 || n - i < step ? n - i : step;
			framer_feed(f, in + i, k, on_msg, &o);
			if (framer_held(f) > SYSLOG_MSG_MAX + 1)
				abort();
		}
	}
	framer_end(f, on_msg, &o);
	if (counts)
		*counts = *framer_counts(f);
	framer_free(f);
	return o;
}

/* The expected output, whole and split at every byte boundary. */
static void
check_frames(const char *in, size_t n, const char *want, uint64_t msgs,
    uint64_t cut, uint64_t bad)
{
	struct framer_counts c;
	struct out o;
	size_t at;

	o = frame(in, n, 0, 0, &c);
	CHECK_STR(o.p, want);
	CHECK_INT(c.messages, msgs);
	CHECK_INT(c.truncated, cut);
	CHECK_INT(c.malformed, bad);
	free(o.p);
	o = frame(in, n, 1, 0, &c);
	CHECK_STR(o.p, want);
	CHECK_INT(c.malformed, bad);
	free(o.p);
	for (at = 0; at <= n; at++) {
		o = frame(in, n, (size_t)-1, at, &c);
		if (strcmp(o.p, want) != 0 || c.messages != msgs ||
		    c.truncated != cut || c.malformed != bad)
			T_FAILF("split at %zu: \"%s\"", at, o.p);
		free(o.p);
		if (t_cur_failed)
			break;
	}
}

#define FRAMES(in, want, m, t, b) \
	check_frames((in), sizeof(in) - 1, (want), (m), (t), (b))

TEST(framing_lf)
{
	FRAMES("<13>a\n<13>b\r\n\n\r\n<13>c", "[5]<13>a|[5]<13>b|[5]<13>c|",
	    3, 0, 0);
	/* NUL ends a frame too; a CR not before the LF is message */
	FRAMES("<13>a\0<13>b\0<13>c\rd\n", "[5]<13>a|[5]<13>b|[7]<13>c\rd|",
	    3, 0, 0);
	FRAMES("\n\n\r\n", "", 0, 0, 0);
}

TEST(framing_octets)
{
	/* an LF inside an octet-counted message is message */
	FRAMES("5 <13>a7 <13>b\nc", "[5]<13>a|[7]<13>b\nc|", 2, 0, 0);
	/* framing detected per frame; LF after an octet frame skipped */
	FRAMES("5 <13>a\n<13>b\n3 xyz", "[5]<13>a|[5]<13>b|[3]xyz|", 3, 0, 0);
	/* the stream ends inside a frame: kept, cut */
	FRAMES("10 abc", "[3!]abc|", 1, 1, 0);
	FRAMES("12", "", 0, 0, 1);
	FRAMES("12 ", "", 0, 0, 1);
}

TEST(framing_malformed)
{
	/* not "LEN SP": counted, the framing resyncs after the next LF */
	FRAMES("12x <13>a\n<13>b\n", "[5]<13>b|", 1, 0, 1);
	FRAMES("123456789 x\n<13>c\n", "[5]<13>c|", 1, 0, 1);
	FRAMES("2024-01-01T00:00:00Z h a: x\n5 <13>d", "[5]<13>d|", 1, 0, 1);
}

/* A big input: c repeated n times between pre and post. */
static char *
big(const char *pre, char c, size_t n, const char *post, size_t *len)
{
	size_t a = strlen(pre), b = strlen(post);
	char *p = malloc(a + n + b + 1);

	if (p == NULL)
		abort();
	memcpy(p, pre, a);
	memset(p + a, c, n);
	memcpy(p + a + n, post, b + 1);
	*len = a + n + b;
	return p;
}

static void
check_big(const char *pre, char c, size_t n, const char *post,
    size_t want_len, bool want_cut, const char *tail)
{
	struct framer_counts fc;
	struct out o, o1;
	size_t len, steps[] = { 0, 1, 4096, 65535, 65536, 65537 }, k;
	char *in = big(pre, c, n, post, &len), hdr[32];

	snprintf(hdr, sizeof(hdr), "[%zu%s]", want_len, want_cut ? "!" : "");
	o = frame(in, len, 0, 0, &fc);
	CHECK(strncmp(o.p, hdr, strlen(hdr)) == 0);
	CHECK(o.len == strlen(hdr) + want_len + strlen(tail));
	CHECK(o.p[strlen(hdr)] == c && o.p[strlen(hdr) + want_len - 1] == c);
	CHECK_STR(o.p + strlen(hdr) + want_len, tail);
	CHECK_INT(fc.truncated, want_cut ? 1 : 0);
	for (k = 1; k < sizeof(steps) / sizeof(steps[0]); k++) {
		o1 = frame(in, len, steps[k], 0, NULL);
		if (o1.len != o.len || memcmp(o1.p, o.p, o.len) != 0)
			T_FAILF("pieces of %zu bytes: a different result",
			    steps[k]);
		free(o1.p);
	}
	free(o.p);
	free(in);
}

TEST(framing_cut)
{
	/* exactly the cap, with CR LF: whole */
	check_big("", 'C', SYSLOG_MSG_MAX, "\r\n<13>z\n", SYSLOG_MSG_MAX,
	    false, "|[5]<13>z|");
	/* one byte over: the head, cut; the next message intact */
	check_big("", 'C', SYSLOG_MSG_MAX + 1, "\n<13>z\n", SYSLOG_MSG_MAX,
	    true, "|[5]<13>z|");
	check_big("", 'A', 70000, "\n<13>z\n", SYSLOG_MSG_MAX, true,
	    "|[5]<13>z|");
	/* octet counting: the count says 70000, 65536 kept */
	check_big("70000 ", 'B', 70000, "5 <13>y", SYSLOG_MSG_MAX, true,
	    "|[5]<13>y|");
	check_big("65536 ", 'B', 65536, "5 <13>y", SYSLOG_MSG_MAX, false,
	    "|[5]<13>y|");
}

/* A 2 MB line without LF: delivered cut once, memory stays bounded. */
TEST(framing_2mb_line)
{
	struct framer *f = framer_new();
	struct out o = { NULL, 0, 0 };
	char chunk[4096];
	size_t i, maxheld = 0;

	memset(chunk, 'x', sizeof(chunk));
	out_add(&o, "", 0);
	for (i = 0; i < 512; i++) {
		framer_feed(f, chunk, sizeof(chunk), on_msg, &o);
		if (framer_held(f) > maxheld)
			maxheld = framer_held(f);
	}
	CHECK(maxheld <= SYSLOG_MSG_MAX + 1);
	CHECK_INT(framer_counts(f)->messages, 1);
	CHECK_INT(framer_counts(f)->truncated, 1);
	CHECK(strncmp(o.p, "[65536!]xxx", 11) == 0);
	/* after it, the buffer is given back and framing goes on */
	CHECK(framer_held(f) <= 16384);
	framer_feed(f, "\n<13>ok\n", 8, on_msg, &o);
	CHECK_STR(o.p + o.len - 10, "[6]<13>ok|");
	framer_end(f, on_msg, &o);
	framer_free(f);
	free(o.p);
}

/* ---- folding ------------------------------------------------------ */

/* Each record as "host/program@first_ms[len(!)]text|". */
static void
on_rec(void *arg, const char *host, const char *program, const char *text,
    size_t len, int64_t first_ms, bool truncated)
{
	char hdr[512];

	snprintf(hdr, sizeof(hdr), "%s/%s@%lld[%zu%s]", host, program,
	    (long long)first_ms, len, truncated ? "!" : "");
	out_add(arg, hdr, strlen(hdr));
	out_add(arg, text, len < 1000 ? len : 1000);
	out_add(arg, "|", 1);
}

/* One wire line through parse and fold, as the receiver does it. */
static void
fold_line(struct fold *fo, const char *line, size_t len, int64_t now,
    struct out *o)
{
	struct syslog_msg m;
	char host[256], app[64];
	bool cont;

	CHECK_INT(syslog_parse(line, len, NOW, &m), 0);
	snprintf(host, sizeof(host), "%.*s", (int)m.host.len,
	    m.host.p ? m.host.p : "");
	snprintf(app, sizeof(app), "%.*s", (int)m.app.len,
	    m.app.p ? m.app.p : "");
	cont = syslog_is_continuation(m.msg.p, m.msg.len);
	/* a continuation adds its message proper ("--> ..."), as hostd.log
	 * shows it; a record starts with the whole text */
	if (cont)
		fold_add(fo, host, app, m.msg.p, m.msg.len, true, now, on_rec, o);
	else
		fold_add(fo, host, app, m.text.p, m.text.len, false, now,
		    on_rec, o);
}

/* hostd's record and its "-->" line, another host's line in between. */
TEST(fold_hostd_record)
{
	static const char other[] = "<166>2025-12-11T16:43:23.320Z esx91 "
	    "Hostd[5]: [Originator@6876 sub=Libs] SOCKET connect failed";
	struct fold *fo = fold_new(64, 1000);
	struct out o = { NULL, 0, 0 };
	int n, k;

	out_add(&o, "", 0);
	n = load("esxi8-rfc3164.log");
	fold_line(fo, lines[0], lens[0], 10, &o);
	fold_line(fo, other, sizeof(other) - 1, 11, &o);
	for (k = 1; k < n; k++)
		fold_line(fo, lines[k], lens[k], 20 + k, &o);
	/* line 3 (a new Hostd record) released the folded one */
	CHECK(strncmp(o.p, "esx90.lab.local/Hostd@10[", 25) == 0);
	CHECK(strstr(o.p, "(hh:mm:ss.us))\n--> [context]zKq7AVICAgAAAB28eQ")
	    != NULL);
	CHECK(strstr(o.p, "[/context]|esx90.lab.local/Hostd@22[") != NULL);
	CHECK_INT(fold_counts(fo)->continuations, 1);
	CHECK_INT(fold_open(fo), 4);	/* esx91 Hostd, Hostd, vobd, vmkernel */
	fold_due(fo, 1020, false, on_rec, &o);	/* esx91's is 1009 ms old */
	CHECK(strstr(o.p, "esx91/Hostd@11[") != NULL);
	CHECK_INT(fold_open(fo), 3);
	fold_due(fo, 0, true, on_rec, &o);
	CHECK_INT(fold_open(fo), 0);
	CHECK(strstr(o.p, "esx90.lab.local/vobd@24[") != NULL);
	CHECK(strstr(o.p, "esx90.lab.local/vmkernel@25[") != NULL);
	CHECK_INT(fold_counts(fo)->records, 6);
	fold_free(fo);
	free(o.p);
}

TEST(fold_deadline)
{
	struct fold *fo = fold_new(8, 500);
	struct out o = { NULL, 0, 0 };

	out_add(&o, "", 0);
	fold_add(fo, "h", "Hostd", "a", 1, false, 0, on_rec, &o);
	fold_due(fo, 499, false, on_rec, &o);
	CHECK_STR(o.p, "");
	/* a continuation moves the deadline: 500 ms after the last line */
	fold_add(fo, "h", "Hostd", "--> b", 5, true, 400, on_rec, &o);
	fold_due(fo, 899, false, on_rec, &o);
	CHECK_STR(o.p, "");
	fold_due(fo, 900, false, on_rec, &o);
	CHECK_STR(o.p, "h/Hostd@0[7]a\n--> b|");
	/* a continuation with no record open starts one */
	fold_add(fo, "h", "Hostd", "--> c", 5, true, 1000, on_rec, &o);
	fold_due(fo, 0, true, on_rec, &o);
	CHECK_STR(o.p, "h/Hostd@0[7]a\n--> b|h/Hostd@1000[5]--> c|");
	fold_free(fo);
	free(o.p);
}

TEST(fold_bounds)
{
	struct fold *fo = fold_new(2, 500);
	struct out o = { NULL, 0, 0 };
	char *line = malloc(40000);
	int k;

	out_add(&o, "", 0);
	/* three keys, room for two: the oldest goes first */
	fold_add(fo, "h1", "Hostd", "1", 1, false, 0, on_rec, &o);
	fold_add(fo, "h2", "Hostd", "2", 1, false, 5, on_rec, &o);
	fold_add(fo, "h1", "Hostd", "--> 1b", 6, true, 10, on_rec, &o);
	fold_add(fo, "h3", "Hostd", "3", 1, false, 20, on_rec, &o);
	CHECK_STR(o.p, "h2/Hostd@5[1]2|");
	CHECK_INT(fold_counts(fo)->evicted, 1);
	CHECK_INT(fold_open(fo), 2);
	/* a record stops growing at SYSLOG_MSG_MAX: cut, counted */
	memset(line, 'x', 40000);
	memcpy(line, "--> ", 4);
	for (k = 0; k < 3; k++)
		fold_add(fo, "h3", "Hostd", line, 40000, true, 30, on_rec, &o);
	fold_due(fo, 0, true, on_rec, &o);
	CHECK(strstr(o.p, "h3/Hostd@20[65536!]3\n--> xxx") != NULL);
	CHECK_INT(fold_counts(fo)->truncated, 1);
	/* names longer than a slot are cut, and still one key */
	memset(line, 'n', 1000);
	line[1000] = '\0';
	fold_add(fo, line, "Hostd", "a", 1, false, 40, on_rec, &o);
	fold_add(fo, line, "Hostd", "--> b", 5, true, 41, on_rec, &o);
	CHECK_INT(fold_open(fo), 1);
	CHECK_INT(fold_counts(fo)->continuations, 5);
	fold_free(fo);	/* open records are dropped with it */
	free(line);
	free(o.p);
}

/* A message cut before the fold (the framer's 64 KiB, a cut datagram):
 * fold_cut() marks the record it went to, and that record only. */
TEST(fold_cut_at_source)
{
	struct fold *fo = fold_new(8, 500);
	struct out o = { NULL, 0, 0 };

	out_add(&o, "", 0);
	fold_add(fo, "h", "Hostd", "a", 1, false, 0, on_rec, &o);
	fold_cut(fo, "h", "Hostd");
	fold_add(fo, "h", "vobd", "v", 1, false, 1, on_rec, &o);
	/* the next message of the key ends the cut record, and is whole */
	fold_add(fo, "h", "Hostd", "b", 1, false, 2, on_rec, &o);
	CHECK_STR(o.p, "h/Hostd@0[1!]a|");
	/* a cut continuation marks the record it is appended to */
	fold_add(fo, "h", "Hostd", "--> c", 5, true, 3, on_rec, &o);
	fold_cut(fo, "h", "Hostd");
	fold_cut(fo, "h", "nothing-open");	/* no record: nothing */
	fold_due(fo, 0, true, on_rec, &o);
	CHECK(strstr(o.p, "h/vobd@1[1]v|") != NULL);
	CHECK(strstr(o.p, "h/Hostd@2[7!]b\n--> c|") != NULL);
	CHECK_INT(fold_counts(fo)->truncated, 2);
	CHECK_INT(fold_counts(fo)->records, 3);
	fold_free(fo);
	free(o.p);
}

int
main(void)
{
	T_PROG("test_syslogwire");
	RUN(esxi67_rfc3164);
	RUN(esxi8_rfc3164);
	RUN(esxi8_rfc5424);
	RUN(relays_and_classic);
	RUN(host_name_rule);
	RUN(malformed);
	RUN(edge_cases);
	RUN(host_fallback);
	RUN(continuation);
	RUN(framing_lf);
	RUN(framing_octets);
	RUN(framing_malformed);
	RUN(framing_cut);
	RUN(framing_2mb_line);
	RUN(fold_hostd_record);
	RUN(fold_deadline);
	RUN(fold_bounds);
	RUN(fold_cut_at_source);
	free(file_buf);
	return t_done();
}
