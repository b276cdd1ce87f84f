/*
 * logline: header parsing of every ESXi line style, on the real captured
 * lines of tests/fixtures/logs.
 */
#include "t.h"

#include "../../collectors/logwatch/logline.h"

/* 2026-11-30T12:00:00Z, the read time the syslog-style stamps get their year from. */
#define NOW 1796040000000LL

/* Line n (1-based) of a fixture, without its newline (static buffer). */
static const char *
fixture_line(const char *path, int n)
{
	static char line[20000];
	char *all = t_slurp(path, NULL), *p = all, *e;
	int i;

	for (i = 1; i < n && p != NULL; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	line[0] = '\0';
	if (p != NULL) {
		e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
	}
	free(all);
	return line;
}

static struct logline L;

static void
parse(const char *s)
{
	logline_parse(s, strlen(s), NOW, &L);
}

static char msgbuf[20000];
static const char *
msg(void)
{
	size_t n = L.msglen < sizeof(msgbuf) - 1 ? L.msglen : sizeof(msgbuf) - 1;

	memcpy(msgbuf, L.msg, n);
	msgbuf[n] = '\0';
	return msgbuf;
}

TEST(iso8601_values)
{
	int64_t ms = -1;

	CHECK_INT(logline_iso8601("1970-01-01T00:00:00Z", 20, &ms), 20);
	CHECK_INT(ms, 0);
	CHECK_INT(logline_iso8601("2023-05-08T07:45:35.567Z cpu", 28, &ms), 24);
	CHECK_INT(ms, 1683531935567LL);
	CHECK_INT(logline_iso8601("2024-02-29T23:59:59.5+01:00", 27, &ms), 27);
	CHECK_INT(ms, 1709251199500LL - 3600000);
	CHECK_INT(logline_iso8601("2023-02-29T00:00:00Z", 20, &ms), 0);
	CHECK_INT(logline_iso8601("YYYY-MM-DDTHH:MM:SS", 19, &ms), 0);
	CHECK_INT(logline_iso8601("2023-05-08T07:45", 16, &ms), 0);
	CHECK_INT(logline_days_from_civil(2000, 3, 1), 11017);
}

TEST(esxi7_vmkernel)
{
	parse(fixture_line("tests/fixtures/logs/vmkernel-log/esxi50-pdl.log", 4));
	CHECK_INT(L.ts_ms, 1312886606857LL);	/* 2011-08-09T10:43:26.857Z */
	CHECK_STR(L.appname, "");
	CHECK(strncmp(msg(), "cpu2:853571)WARNING: ScsiDevice: 1223: Device :naa.", strlen("cpu2:853571)WARNING: ScsiDevice: 1223: Device :naa.")) == 0);
	CHECK(!L.continuation);
}

TEST(esxi8_vmkernel)
{
	parse(fixture_line("tests/fixtures/logs/vmkernel-log/esxi90-header-format.log", 3));
	CHECK_INT(L.ts_ms, 1765471321171LL);	/* 2025-12-11T16:42:01.171Z */
	CHECK_STR(L.appname, "vmkernel");
	CHECK_STR(L.severity, "In");
	CHECK_STR(msg(), "cpu0:170428)Uplink: 537: vmnic0: Driver claims supporting 0 RX queues, and 0 queues are accepted.");
}

TEST(esxi7_and_8_vobd)
{
	const char *f = "tests/fixtures/logs/vobd-log/esxi6-link-down-up.log";

	parse(fixture_line(f, 2));
	CHECK_INT(L.ts_ms, 1588231558464LL);	/* 2020-04-30T07:25:58.464Z */
	CHECK_STR(L.appname, "");
	CHECK_STR(msg(), "[netCorrelator] 842494494us: [vob.net.vmnic.linkstate.down] vmnic vmnic6 linkstate down");

	/* The 8.0 line of KB 421608 has a redacted date: no timestamp, but
	 * a synthetic one built from it with a real date parses, with its two
	 * spaces after "vobd[tid]:" skipped. */
	parse("2025-03-04T05:06:07.737Z In(14) vobd[2097521]:  [UserLevelCorrelator] 1012726884193us: [vob.user.ssh.session.closed] SSH session was closed");
	CHECK_STR(L.appname, "vobd");
	CHECK_INT(L.ts_ms, 1741064767737LL);
	CHECK(strncmp(msg(), "[UserLevelCorrelator] 1012726884193us:", strlen("[UserLevelCorrelator] 1012726884193us:")) == 0);

	parse(fixture_line("tests/fixtures/logs/vobd-log/esxi7-vs-esxi8-format-kb421608.log", 2));
	CHECK_INT(L.ts_ms, 0);
	CHECK_STR(L.appname, "");
}

TEST(hostd_forms)
{
	const char *f = "tests/fixtures/logs/hostd-log/esxi90-header-format.log";

	parse(fixture_line(f, 3));
	CHECK_STR(L.appname, "Hostd");
	CHECK_STR(L.severity, "Er");
	CHECK_INT(L.ts_ms, 1765471405003LL);
	CHECK(strncmp(msg(), "[Originator@6876 sub=VMkernelStatsProvider", strlen("[Originator@6876 sub=VMkernelStatsProvider")) == 0);
	CHECK(!L.continuation);

	parse(fixture_line(f, 2));
	CHECK_STR(L.appname, "Hostd");
	CHECK(L.continuation);		/* "--> [context]..." */

	parse("2025-12-11T16:43:23.314Z In(166)+ Hostd[169797]: more text");
	CHECK(L.continuation);
	CHECK_STR(L.appname, "Hostd");
	CHECK_STR(msg(), "more text");

	/* 7.0 style */
	parse("2020-01-02T03:04:05.006Z warning hostd[2099376] [Originator@6876 sub=IoTracker] In thread 2099376, fopen took over 1236 sec.");
	CHECK_STR(L.appname, "hostd");
	CHECK_STR(L.severity, "wa");
	CHECK_INT(L.ts_ms, 1577934245006LL);
	CHECK(strncmp(msg(), "[Originator@6876 sub=IoTracker]", strlen("[Originator@6876 sub=IoTracker]")) == 0);
}

TEST(syslog_5x)
{
	const char *f = "tests/fixtures/logs/vobd-log/esxi50-syslog-lost-connectivity.log";

	parse(fixture_line(f, 1));
	CHECK_STR(L.appname, "vobd");
	/* Aug 15 06:07:13 of the read time's year (2026). */
	CHECK_INT(L.ts_ms, 1786774033000LL);
	CHECK(strncmp(msg(), "Aug 15 06:07:13.285: 171974745962us:", strlen("Aug 15 06:07:13.285: 171974745962us:")) == 0);

	parse(fixture_line(f, 3));
	CHECK_STR(L.appname, "vmkernel");
	CHECK(strncmp(msg(), "1:23:46:11.079 cpu23:4257)", strlen("1:23:46:11.079 cpu23:4257)")) == 0);

	/* A December stamp read on Nov 30 is from last year. */
	parse("Dec 31 23:59:59 vobd: x");
	CHECK_INT(L.ts_ms, 1767225599000LL);	/* 2025-12-31T23:59:59Z */
}

/*
 * A syslog relay's "MMM dd hh:mm:ss HOST" before the host's own stamp: the
 * host's time wins.  The KB 318898 line is verbatim (relay 5 h behind);
 * the 7.0 and 8.0 lines are the captured vobd lines above with a relay
 * prefix as rsyslog's default file template writes it.
 */
TEST(relayed_lines_keep_host_time)
{
	const char *f7 = "tests/fixtures/logs/vobd-log/esxi6-link-down-up.log";
	char line[2048];

	parse(fixture_line("tests/fixtures/logs/vobd-log/relayed-kb318898.log", 1));
	CHECK_STR(L.appname, "vobd");
	CHECK_INT(L.ts_ms, 1795922719000LL);	/* Nov 29 03:25:19, not Nov 28 22:25:19 */
	CHECK(strncmp(msg(), "Nov 29 03:25:19.927: 8596737035540us:", 37) == 0);

	snprintf(line, sizeof(line), "Apr 30 02:25:58 esx01.example.com %s",
	    fixture_line(f7, 2));
	parse(line);
	CHECK_INT(L.ts_ms, 1588231558464LL);	/* 2020-04-30T07:25:58.464Z */
	CHECK_STR(msg(), "[netCorrelator] 842494494us: [vob.net.vmnic.linkstate.down] vmnic vmnic6 linkstate down");

	parse("Mar  4 00:06:07 10.0.0.5 vobd: 2025-03-04T05:06:07.737Z In(14) vobd[2097521]:  [UserLevelCorrelator] 1012726884193us: [vob.user.ssh.session.closed] SSH session was closed");
	CHECK_INT(L.ts_ms, 1741064767737LL);
	CHECK_STR(L.appname, "vobd");
	CHECK(strncmp(msg(), "[UserLevelCorrelator]", 21) == 0);

	/* 5.x without a relay is unchanged: the first stamp is the host's. */
	parse("Aug 15 06:07:13 vobd: Aug 15 06:07:13.285: 171974745962us: x");
	CHECK_INT(L.ts_ms, 1786774033000LL);
	CHECK_STR(L.appname, "vobd");
}

TEST(vmksummary)
{
	parse(fixture_line("tests/fixtures/logs/vmksummary-log/esxi5-heartbeat-kb2004566.log", 1));
	CHECK_STR(L.appname, "heartbeat");
	CHECK_INT(L.ts_ms, 1314676801000LL);	/* 2011-08-30T04:00:01Z */
	CHECK(strncmp(msg(), "up 0d17h24m17s, 0 VMs;", strlen("up 0d17h24m17s, 0 VMs;")) == 0);

	parse(fixture_line("tests/fixtures/logs/vmksummary-log/esxi7-8-bootstop-kb376568-redacted.log", 1));
	CHECK_INT(L.ts_ms, 0);
	CHECK_STR(L.appname, "");
}

/* More header forms: 6.x hostd with a hex thread id, a stamp without
 * fraction or zone, the other 8.0 severities, a one-digit syslog day, and
 * a vmksummary bootstop line with a real date. */
TEST(header_variants)
{
	parse("2017-01-02T03:04:05.123Z info hostd[76C40B70] [Originator@6876 sub=Default] y");
	CHECK_STR(L.appname, "hostd");
	CHECK_STR(L.severity, "in");
	CHECK_INT(L.ts_ms, 1483326245123LL);
	CHECK_STR(msg(), "[Originator@6876 sub=Default] y");

	parse("2020-01-02T03:04:05 warning hostd[2099376] [Originator@6876 sub=IoTracker] x");
	CHECK_INT(L.ts_ms, 1577934245000LL);
	CHECK_STR(L.appname, "hostd");

	parse("2025-12-11T16:43:23.314Z Db(167) Hostd[169797]: z");
	CHECK_STR(L.severity, "Db");
	CHECK_STR(msg(), "z");
	parse("2025-12-11T16:43:23.314Z Em(8) vmkernel: cpu0:1)x");
	CHECK_STR(L.severity, "Em");
	CHECK_STR(msg(), "cpu0:1)x");

	parse("Aug  5 06:07:13 vobd: Aug  5 06:07:13.285: 1us: t");
	CHECK_STR(L.appname, "vobd");
	CHECK_INT(L.ts_ms, 1785910033000LL);	/* 2026-08-05T06:07:13Z */

	parse("2024-03-01T10:00:00.123Z bootstop[2104778]: Host has booted");
	CHECK_STR(L.appname, "bootstop");
	CHECK_STR(msg(), "Host has booted");
	parse("2024-03-01T10:00:00.123Z In(14) bootstop[2104778]: Host is rebooting");
	CHECK_STR(L.appname, "bootstop");
	CHECK_STR(msg(), "Host is rebooting");
}

TEST(vob_ids)
{
	char id[128];

	CHECK_INT(logline_vob_id(fixture_line("tests/fixtures/logs/vobd-log/esxi6-7-apd-sdcard-redacted.log", 3),
	    strlen(fixture_line("tests/fixtures/logs/vobd-log/esxi6-7-apd-sdcard-redacted.log", 3)), id, sizeof(id)),
	    strlen("esx.problem.storage.apd.start"));
	CHECK_STR(id, "esx.problem.storage.apd.start");
	/* "[APDCorrelator]" and "[mpx.vmhba32...]" are not ids. */
	CHECK_INT(logline_vob_id("[APDCorrelator] [mpx.vmhba32:C0:T0:L0]", 38, id, sizeof(id)), 0);
	CHECK_STR(id, "");
	CHECK_INT(logline_vob_id("[esx.", 5, id, sizeof(id)), 0);
	CHECK_INT(logline_vob_id("x [vob.a.b] y", 13, id, 4), 0);
}

TEST(garbage_is_harmless)
{
	static const char *const bad[] = { "", "2", "2023-", "Aug", "Aug 15 06:07:1",
	    "2023-05-08T07:45:35.Z x", "2023-05-08T07:45:35.567Z In(", "2023-05-08T07:45:35.567Z In(18",
	    "2023-05-08T07:45:35.567Z In(182) vobd[", "2023-05-08T07:45:35.567Z warning hostd[",
	    "Aug 15 06:07:13 ", NULL };
	int i;

	for (i = 0; bad[i] != NULL; i++) {
		parse(bad[i]);
		CHECK(L.msg >= bad[i] && L.msg + L.msglen == bad[i] + strlen(bad[i]));
	}
	/* Not NUL-terminated, NUL inside. */
	{
		char b[40] = "2023-05-08T07:45:35.567Z In(14) v\0bd: x";
		logline_parse(b, 36, NOW, &L);
		CHECK(L.msg + L.msglen == b + 36);
	}
}

int
main(void)
{
	T_PROG("test_logline");
	RUN(iso8601_values);
	RUN(esxi7_vmkernel);
	RUN(esxi8_vmkernel);
	RUN(esxi7_and_8_vobd);
	RUN(hostd_forms);
	RUN(syslog_5x);
	RUN(relayed_lines_keep_host_time);
	RUN(vmksummary);
	RUN(header_variants);
	RUN(vob_ids);
	RUN(garbage_is_harmless);
	return t_done();
}
