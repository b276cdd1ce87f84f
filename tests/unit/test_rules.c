/*
 * rules: literal derivation, capture names, the literal prefilter
 * (against a brute-force oracle), rule order, overrides, storm
 * suppression, and the built-in catalogue on real captured ESXi lines.
 */
#include <unistd.h>

#include "t.h"

#include "../../agent/config/config.h"
#include "../../collectors/logwatch/logwatch.h"
#include "../../collectors/logwatch/rules.h"
#include "../../collectors/logwatch/rules_catalogue.h"
#include "../../collectors/logwatch/scsi.h"
#include "../../collectors/logwatch/storm.h"


static struct rule_conf
rc(const char *name, const char *match, const char *regex, const char *sev)
{
	struct rule_conf c;

	memset(&c, 0, sizeof(c));
	c.name = (char *)name;
	c.match = (char *)match;
	c.regex = (char *)regex;
	c.severity = (char *)sev;
	c.hint = (char *)"do something";
	c.enabled = 1;
	return c;
}

static char err[512];

static struct rules *
build(const struct rule_conf *v, size_t n)
{
	struct rules *r = rules_new();
	size_t i;

	for (i = 0; i < n; i++)
		if (rules_add(r, &v[i], err, sizeof(err)) != 0)
			printf("  rules_add %s: %s\n", v[i].name, err);
	if (rules_compile(r, err, sizeof(err)) != 0)
		printf("  rules_compile: %s\n", err);
	return r;
}

static const char *
cap(const struct rules_match *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->ncaps; i++)
		if (strcmp(m->caps[i].name, name) == 0)
			return m->caps[i].value;
	return NULL;
}

TEST(literal_derivation)
{
	char lit[256];

	CHECK(rules_regex_literal("has entered the All Paths Down state", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, "has entered the All Paths Down state");
	CHECK(rules_regex_literal("\\[esx\\.problem\\.storage\\.apd\\.start\\] .*identifier \\[([^] ]+)\\]", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, "[esx.problem.storage.apd.start] ");
	CHECK(rules_regex_literal("(vob|esx)\\.net\\.vmnic\\.linkstate\\.down\\] x", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, ".net.vmnic.linkstate.down] x");
	CHECK_INT(rules_regex_literal("abcdef|ghijkl", lit, sizeof(lit)), -1);
	CHECK(rules_regex_literal("abcd?efgh", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, "efgh");
	CHECK(rules_regex_literal("xx{2,30}yz1", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, "yz1");
	CHECK(rules_regex_literal("ab+cdef", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, "cdef");
	CHECK(rules_regex_literal("[abc]defg[^]x]hij*", lit, sizeof(lit)) > 0);
	CHECK_STR(lit, "defg");
	CHECK_INT(rules_regex_literal(".*", lit, sizeof(lit)), -1);
}

/* PCRE2 names its groups natively; a name must be a field name. */
TEST(capture_names)
{
	struct rules *r = rules_new();
	struct rule_conf c;
	struct rules_match m;
	char e[256];
	const char *line = "ab (dev0) (x)";

	c = rc("names", NULL, "a(b) \\((?<device>[^(]+)\\) \\((?<nic>x)", "error");
	c.literal = (char *)"dev";
	CHECK_INT(rules_add(r, &c, e, sizeof(e)), 0);
	CHECK_INT(rules_compile(r, e, sizeof(e)), 0);
	CHECK_INT(rules_at(r, 0)->ncaps, 2);
	CHECK_INT(rules_at(r, 0)->cap_group[0], 2);
	CHECK_INT(rules_at(r, 0)->cap_group[1], 3);
	CHECK_INT(rules_at(r, 0)->ngroups, 3);
	CHECK_INT(rules_match(r, NULL, line, strlen(line), &m), 1);
	CHECK_INT(m.ncaps, 2);
	CHECK_STR(m.caps[0].name, "device");
	CHECK_STR(m.caps[0].value, "dev0");
	CHECK_STR(m.caps[1].name, "nic");
	CHECK_STR(m.caps[1].value, "x");
	c = rc("bad1", NULL, "abcd(?<Bad>x)", "error");
	CHECK_INT(rules_add(r, &c, e, sizeof(e)), -1);
	CHECK(strstr(e, "bad capture name 'Bad'") != NULL);
	c = rc("bad2", NULL, "abcd(?<>x)", "error");
	CHECK_INT(rules_add(r, &c, e, sizeof(e)), -1);
	c = rc("bad3", NULL, "abcd(?<abc", "error");
	CHECK_INT(rules_add(r, &c, e, sizeof(e)), -1);
	rules_free(r);
}

TEST(bad_rules_are_reported)
{
	struct rules *r = rules_new();
	struct rule_conf c;

	c = rc("r1", NULL, "a(b", "error");
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), -1);
	CHECK(strstr(err, "r1") != NULL && strstr(err, "regex") != NULL);
	c = rc("r2", NULL, "(a|b)+", "error");
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), -1);
	CHECK(strstr(err, "literal") != NULL);
	c = rc("r3", "ab", NULL, "error");
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), -1);
	c = rc("r4", "abcd", NULL, "fatal");
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), -1);
	CHECK(strstr(err, "severity") != NULL);
	c = rc("r5", "abcd", "abcd", "error");
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), -1);
	/*
	 * Patterns that exploded glibc's regcomp: PCRE2 either refuses them
	 * with a message naming the rule, or compiles them and its match
	 * limits end a catastrophic match (rules_match returns; no hang).
	 */
	{
		static const char *bad[] = {
			"abcx++++++++++++++++++++++++++++",
			"abc((((((((((((((((x+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)",
			"abc(x{200}){200}", ")))lys-+++&?+++++++++++++",
			"abc(x+x+)+y",
		};
		struct rules *r2 = rules_new();
		struct rules_match m;
		char line[4096];
		size_t i;

		memset(line, 'x', sizeof(line));
		memcpy(line, "abc", 3);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			c = rc("rbad", NULL, bad[i], "error");
			if (rules_add(r2, &c, err, sizeof(err)) < 0)
				CHECK(strstr(err, "rbad") != NULL && strstr(err, "regex") != NULL);
		}
		CHECK_INT(rules_compile(r2, err, sizeof(err)), 0);
		CHECK_INT(rules_match(r2, NULL, line, sizeof(line), &m), 0);
		rules_free(r2);
	}
	c = rc("r11", NULL, "abc[0-9]+x?", "error");
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), 0);
	CHECK_INT(rules_total(r), 1);
	/* (a|b)+ with an explicit literal is fine. */
	c = rc("r6", NULL, "(a|b)+xyz", "error");
	c.literal = (char *)"xyz";
	CHECK_INT(rules_add(r, &c, err, sizeof(err)), 0);
	CHECK_INT(rules_total(r), 2);
	rules_free(r);
}

TEST(match_captures_and_order)
{
	struct rule_conf v[4];
	struct rules *r;
	struct rules_match m;
	const char *pdl = "2011-08-09T10:43:26.858Z cpu2:2127)ScsiDeviceIO: 2316: Cmd(0x4124403c1fc0) 0x25, CmdSN 0xecab to dev \"naa.60a98000572d54724a34642d71325763\" failed H:0x1 D:0x0 P:0x0 Possible sense data: 0x5 0x25 0x0.";
	const char *other = "2011-08-09T10:43:26.857Z cpu3:2132)ScsiDeviceIO: 2288: Cmd(0x4124403c1fc0) 0x9e, CmdSN 0xec86 to dev \"naa.60a98000572d54724a34642d71325763\" failed H:0x8 D:0x0 P:0x0";

	v[0] = rc("pdl", NULL, "(dev \"(?<device>[^\"]+)\".*)?H:0x(?<scsi_host_status>[0-9a-f]+) D:0x[0-9a-f]+ P:0x[0-9a-f]+ (Valid|Possible) sense data: (?<scsi_sense>0x5 0x25 0x0)", "critical");
	v[0].literal = (char *)"sense data: 0x5 0x25 0x0";
	v[1] = rc("scsi", NULL, "to dev \"(?<device>[^\"]+)\" failed H:0x(?<scsi_host_status>[0-9a-f]+)", "warning");
	v[2] = rc("vmk_only", "CmdSN", NULL, "info");
	v[2].files.v = (char *[]){ (char *)"vmkernel" };
	v[2].files.n = 1;
	v[3] = rc("never", "no such text anywhere", NULL, "info");
	r = build(v, 4);
	CHECK_INT(rules_count(r), 4);

	CHECK_INT(rules_match(r, "vmkernel", pdl, strlen(pdl), &m), 1);
	CHECK_STR(m.rule->name, "pdl");
	CHECK_STR(cap(&m, "device"), "naa.60a98000572d54724a34642d71325763");
	CHECK_STR(cap(&m, "scsi_host_status"), "1");
	CHECK_STR(cap(&m, "scsi_sense"), "0x5 0x25 0x0");

	CHECK_INT(rules_match(r, "vmkernel", other, strlen(other), &m), 1);
	CHECK_STR(m.rule->name, "scsi");
	CHECK_STR(cap(&m, "scsi_host_status"), "8");
	CHECK_INT(m.ncaps, 2);

	/* files: vmk_only does not apply to vobd, the line has no other rule. */
	CHECK_INT(rules_match(r, "vobd", "x CmdSN y", 9, &m), 0);
	CHECK_INT(rules_match(r, "vmkernel", "x CmdSN y", 9, &m), 1);
	CHECK_STR(m.rule->name, "vmk_only");
	/* Literal found but the regex does not match. */
	CHECK_INT(rules_match(r, NULL, "to dev \"x\" failed H:0xZZ", 24, &m), 0);
	/* Not NUL-terminated and with a NUL inside. */
	{
		char b[16] = "a\0b CmdSN zzzz";
		CHECK_INT(rules_match(r, NULL, b, 9, &m), 1);
	}
	rules_free(r);
}

TEST(override_and_disable)
{
	struct rule_conf v[2], o;
	struct rules *r;
	struct rules_match m;

	v[0] = rc("a", "first literal", NULL, "info");
	v[1] = rc("b", "second literal", NULL, "info");
	r = build(v, 2);
	o = rc("a", "other text", NULL, "critical");
	CHECK_INT(rules_add(r, &o, err, sizeof(err)), 0);
	o = rc("b", NULL, NULL, NULL);
	o.enabled = 0;
	CHECK_INT(rules_add(r, &o, err, sizeof(err)), 0);
	CHECK_INT(rules_compile(r, err, sizeof(err)), 0);
	CHECK_INT(rules_total(r), 2);
	CHECK_INT(rules_count(r), 1);
	CHECK_STR(rules_at(r, 0)->name, "a");		/* kept its place */
	CHECK_STR(rules_at(r, 0)->severity, "critical");
	CHECK_INT(rules_match(r, NULL, "the first literal", 17, &m), 0);
	CHECK_INT(rules_match(r, NULL, "some other text", 15, &m), 1);
	CHECK_INT(rules_match(r, NULL, "second literal", 14, &m), 0);
	rules_free(r);
}

/* The prefilter finds exactly what strstr finds, on overlapping literals. */
TEST(prefilter_oracle)
{
	enum { NR = 150, NL = 3000 };
	static char lits[NR][12];
	struct rule_conf v[NR];
	char name[NR][16], line[200];
	struct rules *r;
	struct rules_match m;
	unsigned seed = 12345;
	int i, j, bad = 0;

#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	for (i = 0; i < NR; i++) {
		int len = 3 + (int)(RND() % 6);

		for (j = 0; j < len; j++)
			lits[i][j] = "abcd"[RND() % 4];
		lits[i][len] = '\0';
		snprintf(name[i], sizeof(name[i]), "r%d", i);
		v[i] = rc(name[i], lits[i], NULL, "info");
	}
	r = build(v, NR);
	for (i = 0; i < NL; i++) {
		int len = (int)(RND() % 60), want = -1;

		for (j = 0; j < len; j++)
			line[j] = "abcdx\n"[RND() % 6];
		line[len] = '\0';
		/* Duplicate names were replaced: the oracle uses the set's rules. */
		for (j = 0; j < (int)rules_total(r); j++)
			if (strstr(line, rules_at(r, (size_t)j)->literal) != NULL) {
				want = j;
				break;
			}
		if (rules_match(r, NULL, line, (size_t)len, &m) != (want >= 0) ||
		    (want >= 0 && m.rule != rules_at(r, (size_t)want)))
			bad++;
	}
	CHECK_INT(bad, 0);
	rules_free(r);
#undef RND
}

struct storm_log {
	int calls;
	uint64_t suppressed;
	char rule[32], entity[64], last[64];
};

static void
storm_cb(void *arg, const char *rule, const char *entity, uint64_t n,
    int64_t window, const char *last)
{
	struct storm_log *l = arg;

	(void)window;
	l->calls++;
	l->suppressed += n;
	snprintf(l->rule, sizeof(l->rule), "%s", rule);
	snprintf(l->entity, sizeof(l->entity), "%s", entity);
	snprintf(l->last, sizeof(l->last), "%s", last);
}

struct storm_saved {
	int n;
	char rule[32], entity[64], state[256];
};

static void
storm_save_cb(void *arg, const char *rule, const char *entity, const char *state)
{
	struct storm_saved *sv = arg;

	sv->n++;
	snprintf(sv->rule, sizeof(sv->rule), "%s", rule);
	snprintf(sv->entity, sizeof(sv->entity), "%s", entity);
	snprintf(sv->state, sizeof(sv->state), "%s", state);
}

/* Per-rule limits, and a checkpoint that carries the counts over a restart. */
TEST(storm_per_rule_and_checkpoint)
{
	struct storm *s = storm_new(10, 60000, 100), *s2;
	struct storm_log l;
	struct storm_saved sv;
	int i, emitted = 0;

	memset(&l, 0, sizeof(l));
	memset(&sv, 0, sizeof(sv));
	for (i = 0; i < 50; i++)
		emitted += storm_hit_at(s, "audit", "dev\tnaa.1", 3, 5000, 1000 + i,
		    "line", 4, storm_cb, &l);
	CHECK_INT(emitted, 3);
	/* limit <= 0 (storm: off): every match. */
	for (i = 0, emitted = 0; i < 50; i++)
		emitted += storm_hit_at(s, "all", "", 0, 5000, 1000 + i, "x", 1,
		    storm_cb, &l);
	CHECK_INT(emitted, 50);
	CHECK(storm_dirty(s));
	storm_foreach(s, storm_save_cb, &sv);
	storm_clean(s);
	CHECK(!storm_dirty(s));
	CHECK_INT(sv.n, 1);		/* only the window that limits anything */
	CHECK_STR(sv.rule, "audit");
	CHECK_STR(sv.entity, "dev\tnaa.1");
	CHECK_STR(sv.state, "1000 5000 3 50 47 line");
	storm_free(s);

	/* After a crash: restored, the window goes on and its count is reported. */
	s2 = storm_new(10, 60000, 100);
	CHECK_INT(storm_restore(s2, sv.rule, sv.entity, sv.state), 0);
	CHECK_INT(storm_hit_at(s2, "audit", "dev\tnaa.1", 3, 5000, 2000, "more", 4,
	    storm_cb, &l), 0);
	CHECK_INT(storm_due(s2, 6001, false, storm_cb, &l), 1);
	CHECK_INT(l.suppressed, 48);
	CHECK_STR(l.last, "more");
	CHECK_INT(storm_restore(s2, "r", "e", "garbage"), -1);
	CHECK_INT(storm_restore(s2, "r", "e", "1 0 3 5 1 x"), -1);	/* window 0 */
	CHECK_INT(storm_restore(s2, "r", "e", "1 10 3 5 9 x"), -1);	/* more than counted */
	storm_free(s2);
}

static void report(void *, bool, const char *);

/* The storm key of a rule: off, {max, window}, and a key left out. */
TEST(storm_key_parsed)
{
	static const char yaml[] = "rules:\n"
	    "  - name: audit\n    match: 'sshd accepted'\n    storm: off\n"
	    "  - name: tight\n    match: 'foo bar'\n    storm: {max: 3, window: 10}\n"
	    "  - name: wide\n    match: 'foo baz'\n    storm: {window: 600}\n"
	    "  - name: plain\n    match: 'foo qux'\n";
	char path[] = "/tmp/esxwatch-test-storm-XXXXXX";
	struct rule_conf *v = NULL;
	size_t n = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(write(fd, yaml, sizeof(yaml) - 1), (long long)(sizeof(yaml) - 1));
	close(fd);
	CHECK_INT(config_load_rules_file(path, &v, &n, report, NULL), 0);
	CHECK_INT(n, 4);
	if (n == 4) {
		CHECK_INT(v[0].storm_max, -1);
		CHECK_INT(v[1].storm_max, 3);
		CHECK_INT(v[1].storm_window, 10);
		CHECK_INT(v[2].storm_max, 0);
		CHECK_INT(v[2].storm_window, 600);
		CHECK_INT(v[3].storm_max, 0);
		CHECK_INT(v[3].storm_window, 0);
	}
	rule_conf_free_array(v, n);
	unlink(path);
}

TEST(storm_suppression)
{
	struct storm *s = storm_new(10, 60000, 100);
	struct storm_log l;
	int i, emitted = 0;
	char line[32];

	memset(&l, 0, sizeof(l));
	for (i = 0; i < 5000; i++) {
		snprintf(line, sizeof(line), "line %d", i);
		emitted += storm_hit(s, "scsi", "naa.1", 1000 + i, line, strlen(line), storm_cb, &l);
	}
	/* Another entity is not suppressed by the first one's storm. */
	emitted += storm_hit(s, "scsi", "naa.2", 2000, "x", 1, storm_cb, &l);
	CHECK_INT(emitted, 11);
	storm_due(s, 30000, false, storm_cb, &l);
	CHECK_INT(l.calls, 0);				/* window not over */
	storm_due(s, 61000, false, storm_cb, &l);
	CHECK_INT(l.calls, 1);
	CHECK_INT(l.suppressed, 4990);
	CHECK_STR(l.rule, "scsi");
	CHECK_STR(l.entity, "naa.1");
	CHECK_STR(l.last, "line 4999");
	/* A new window emits again. */
	CHECK_INT(storm_hit(s, "scsi", "naa.1", 62000, "y", 1, storm_cb, &l), 1);
	/* Flush everything (end of --once): nothing suppressed, no call. */
	storm_due(s, 62001, true, storm_cb, &l);
	CHECK_INT(l.calls, 1);
	for (i = 0; i < 20; i++)
		storm_hit(s, "scsi", "naa.1", 62002, "z", 1, storm_cb, &l);
	storm_due(s, 62003, true, storm_cb, &l);
	CHECK_INT(l.calls, 2);
	CHECK_INT(l.suppressed, 4990 + 11);
	/* A hit after the window reports the old window first. */
	for (i = 0; i < 15; i++)
		storm_hit(s, "scsi", "naa.1", 62004, "w", 1, storm_cb, &l);
	CHECK_INT(storm_hit(s, "scsi", "naa.1", 200000, "v", 1, storm_cb, &l), 1);
	CHECK_INT(l.calls, 3);
	storm_free(s);
}

TEST(scsi_codes)
{
	CHECK(strstr(scsi_sense_text(0x5, 0x25, 0x0), "LOGICAL UNIT NOT SUPPORTED") != NULL);
	CHECK(scsi_sense_text(0x9, 0x99, 0x9) == NULL);
	CHECK_STR(scsi_host_status_text(0x8), "RESET");
	CHECK(scsi_host_status_text(0x99) == NULL);
	CHECK_STR(scsi_device_status_text(0x2), "CHECK CONDITION");
}

/* ---- the built-in catalogue on real lines ---------------------------- */

struct want {
	const char *file;	/* fixture under tests/fixtures/logs */
	int line;		/* 1-based */
	const char *filelog;
	const char *rule;	/* NULL = no rule may match */
	const char *cap1, *val1, *cap2, *val2;
};

static const struct want wants[] = {
	{ "vobd-log/esxi6-7-apd-sdcard-redacted.log", 3, "vobd", "apd_start", "device", "mpx.vmhba32:C0:T0:L0", NULL, NULL },
	{ "vobd-log/esxi6-7-apd-sdcard-redacted.log", 1, "vobd", NULL, NULL, NULL, NULL, NULL },	/* the vob.* twin */
	{ "vobd-log/esxi6-7-apd-sdcard-redacted.log", 2, "vobd", "path_dead", "path", "vmhba32:C0:T0:L0", NULL, NULL },
	{ "vobd-log/esxi6-7-apd-sdcard-redacted.log", 4, "vobd", "storage_connectivity_lost", "device", "mpx.vmhba32:C0:T0:L0", "path", "vmhba32:C0:T0:L0" },
	{ "vobd-log/esxi6-7-apd-sdcard-redacted.log", 5, "vobd", "nic_link_up", "nic", "vusb0", NULL, NULL },
	{ "vobd-log/esxi6-7-apd-sdcard-redacted.log", 7, "vobd", "apd_timeout", "device", "mpx.vmhba32:C0:T0:L0", NULL, NULL },
	{ "vobd-log/esxi6-link-down-up.log", 1, "vobd", "uplink_down", "nic", "vmnic6", NULL, NULL },
	{ "vobd-log/esxi6-link-down-up.log", 2, "vobd", "nic_link_down", "nic", "vmnic6", NULL, NULL },
	{ "vobd-log/esxi6-link-down-up.log", 3, "vobd", "uplink_redundancy_lost", "nic", "vmnic6", "vswitch", "vSwitch0" },
	{ "vobd-log/esxi6-link-down-up.log", 6, "vobd", "net_connectivity_restored", "nic", "vmnic6", "vswitch", "vSwitch0" },
	{ "vobd-log/esxi6-link-down-up.log", 9, "vobd", NULL, NULL, NULL, NULL, NULL },
	{ "vobd-log/esxi50-syslog-lost-connectivity.log", 1, "vobd", "storage_connectivity_lost", "device", "naa.60060xxx", "datastore", "VMFS_Volume01" },
	{ "vobd-log/esxi50-syslog-lost-connectivity.log", 3, "vmkernel", "path_failover", "path", "vmhba39:C0:T0:L1", "new_path", "vmhba39:C0:T4:L1" },
	{ "vobd-log/esxi50-syslog-lost-connectivity.log", 5, "vobd", "storage_redundancy_lost", "device", "naa.6006xxx", "path", "vmhba39:C0:T0:L1" },
	{ "vobd-log/esxi50-syslog-lost-connectivity.log", 8, "vmkernel", "device_blocked", "device", "naa.6006016xxxx", NULL, NULL },
	{ "vmkernel-log/esxi50-pdl.log", 1, "vmkernel", "pdl_sense", "path", "vmhba3:C0:T0:L0", "scsi_sense", "0x5 0x25 0x0" },
	{ "vmkernel-log/esxi50-pdl.log", 3, "vmkernel", "no_path_to_activate", "device", "naa.60a98000572d54724a34642d71325763", NULL, NULL },
	{ "vmkernel-log/esxi50-pdl.log", 4, "vmkernel", "pdl_device_lost", "device", "naa.60a98000572d54724a34642d71325763", NULL, NULL },
	{ "vmkernel-log/esxi50-pdl.log", 5, "vmkernel", "scsi_cmd_failed", "scsi_host_status", "8", "scsi_device_status", "0" },
	{ "vmkernel-log/esxi50-pdl.log", 7, "vmkernel", "pdl_sense", "device", "naa.60a98000572d54724a34642d71325763", "scsi_host_status", "1" },
	{ "vmkernel-log/esxi51-scsi-errors-heartbeat.log", 1, "vmkernel", "nmp_cmd_failed", "path", "vmhba2:C0:T0:L6", "scsi_host_status", "b" },
	{ "vmkernel-log/esxi51-scsi-errors-heartbeat.log", 2, "vmkernel", "scsi_cmd_failed", "device", "naa.xxx", "scsi_sense", "0x0 0x0 0x0" },
	{ "vmkernel-log/esxi51-scsi-errors-heartbeat.log", 7, "vmkernel", "vmfs_hb_wait_timed_out", "datastore", "Datastore", NULL, NULL },
	{ "vmkernel-log/esxi51-scsi-errors-heartbeat.log", 9, "vmkernel", "vmfs_hb_reclaim_failed", "datastore", "Datastore", NULL, NULL },
	{ "vmkernel-log/esxi51-scsi-errors-heartbeat.log", 10, "vmkernel", "vmfs_long_reservation", "datastore", "Datastore", "held_ms", "6441" },
	{ "vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log", 1, "vmkernel", "netdev_watchdog", "nic", "vmnic0", NULL, NULL },
	{ "vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log", 9, "vmkernel", "nic_adapter_reset", "nic", "vmnic0", NULL, NULL },
	{ "vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log", 10, "vmkernel", "nic_driver_link_up", "nic", "vmnic0", NULL, NULL },
	{ "vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log", 15, "vmkernel", "nic_hardware_hang_tso", "nic", "vmnic0", NULL, NULL },
	{ "vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log", 16, "vmkernel", "nic_hardware_hang", "nic", "vmnic0", NULL, NULL },
	{ "vmkernel-log/esxi65-e1000e-watchdog-hang-linkup.log", 12, "vmkernel", NULL, NULL, NULL, NULL, NULL },
	{ "vmkernel-log/esxi65-ne1000-link-up.log", 3, "vmkernel", "nic_driver_link_up", "nic", "vmnic0", NULL, NULL },
	{ "vmkernel-log/esxi65-ne1000-link-up.log", 3, "vobd", NULL, NULL, NULL, NULL, NULL },	/* files: [vmkernel] */
	{ "vmkernel-log/esxi7-8-kb373203-misc-with-hostd-line-redacted.log", 1, "vmkernel", "hostd_nonresponsive", NULL, NULL, NULL, NULL },
	{ "vmkernel-log/esxi7-8-kb373203-misc-with-hostd-line-redacted.log", 2, "vmkernel", "io_latency_deteriorated", "latency_avg_us", "1234", "latency_us", "123456" },
	{ "vmkernel-log/esxi7-8-kb373203-misc-with-hostd-line-redacted.log", 3, "vmkernel", "ats_miscompare", "scsi_sense", "0xe 0x1d 0x0", "scsi_device_status", "2" },
	{ "vmkernel-log/esxi7-8-kb373203-misc-with-hostd-line-redacted.log", 4, "hostd", "io_tracker_stall", "seconds", "1236", NULL, NULL },
	{ "vmkernel-log/esxi90-header-format.log", 3, "vmkernel", NULL, NULL, NULL, NULL, NULL },
	{ "hostd-log/esxi90-header-format.log", 1, "hostd", NULL, NULL, NULL, NULL, NULL },
	{ "vmksummary-log/esxi5-heartbeat-kb2004566.log", 1, "vmksummary", NULL, NULL, NULL, NULL, NULL },
};

static char *
nth_line(const char *path, int n, size_t *len)
{
	char *all = t_slurp(path, NULL), *p = all, *e, *out;
	int i;

	for (i = 1; i < n && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (p == NULL) {
		free(all);
		return NULL;
	}
	e = strchr(p, '\n');
	*len = e ? (size_t)(e - p) : strlen(p);
	out = malloc(*len + 1);
	memcpy(out, p, *len);
	out[*len] = '\0';
	free(all);
	return out;
}

static void
report(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	printf("  catalogue %s: %s\n", is_error ? "error" : "warning", msg);
}

TEST(catalogue)
{
	struct rule_conf *v = NULL;
	size_t n = 0, i, j;
	struct rules *r;
	struct rules_match m;
	char path[512];

	CHECK_INT(config_load_rules_file("collectors/logwatch/rules/esxi.yaml", &v, &n, report, NULL), 0);
	CHECK(n >= 40);
	r = rules_new();
	for (i = 0; i < n; i++) {
		if (rules_add(r, &v[i], err, sizeof(err)) != 0)
			T_FAILF("rule %s: %s", v[i].name, err);
		CHECK(v[i].hint != NULL && strlen(v[i].hint) > 20);
		for (j = 0; j < i; j++)
			if (strcmp(v[i].name, v[j].name) == 0)
				T_FAILF("duplicate rule %s", v[i].name);
	}
	CHECK_INT(rules_compile(r, err, sizeof(err)), 0);
	CHECK_INT(rules_count(r), n);
	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		size_t len;
		char *line;
		int got;

		snprintf(path, sizeof(path), "tests/fixtures/logs/%s", w->file);
		line = nth_line(path, w->line, &len);
		if (line == NULL) {
			T_FAILF("%s:%d: no such line", w->file, w->line);
			continue;
		}
		got = rules_match(r, w->filelog, line, len, &m);
		if (w->rule == NULL) {
			if (got)
				T_FAILF("%s:%d: matched %s, want none", w->file, w->line, m.rule->name);
		} else if (!got) {
			T_FAILF("%s:%d: no match, want %s", w->file, w->line, w->rule);
		} else {
			if (strcmp(m.rule->name, w->rule) != 0)
				T_FAILF("%s:%d: matched %s, want %s", w->file, w->line, m.rule->name, w->rule);
			if (w->cap1 && (cap(&m, w->cap1) == NULL || strcmp(cap(&m, w->cap1), w->val1) != 0))
				T_FAILF("%s:%d: %s = %s, want %s", w->file, w->line, w->cap1,
				    cap(&m, w->cap1) ? cap(&m, w->cap1) : "(none)", w->val1);
			if (w->cap2 && (cap(&m, w->cap2) == NULL || strcmp(cap(&m, w->cap2), w->val2) != 0))
				T_FAILF("%s:%d: %s = %s, want %s", w->file, w->line, w->cap2,
				    cap(&m, w->cap2) ? cap(&m, w->cap2) : "(none)", w->val2);
		}
		free(line);
	}
	rules_free(r);
	rule_conf_free_array(v, n);
}

/*
 * Lines of the forms ESXi documents but that no captured log holds: the
 * KB texts of the events, the 8.0 header, hostd's event manager, and the
 * variants of the heartbeat and NMP messages (with and without the source
 * line number after the function name).
 */
static const struct {
	const char *line, *filelog, *rule, *cap1, *val1;
} quoted[] = {
	{ "2025-12-11T16:42:01.171Z In(14) vobd[2097521]:  [netCorrelator] 1012726884193us: [esx.problem.net.vmnic.linkstate.flapping] Taking down physical NIC vmnic5 because the link is flapping.", "vobd", "nic_link_flapping", "nic", "vmnic5" },
	{ "2025-12-11T16:42:01.171Z Wa(164) Hostd[169828]: [Originator@6876 sub=Vimsvc.ha-eventmgr] Event 132032 : Taking down physical NIC vmnic5 because the link is unstable.", "hostd", "nic_link_flapping", "nic", "vmnic5" },
	{ "2020-04-30T07:25:58.464Z: [netCorrelator] 842494443us: [esx.problem.net.connectivity.lost] Lost network connectivity on virtual switch \"vSwitch0\". Physical NIC vmnic1 is down. Affected portgroups: \"VM Network\".", "vobd", "net_connectivity_lost", "nic", "vmnic1" },
	{ "2020-04-30T07:25:58.464Z: [netCorrelator] 842494443us: [esx.problem.net.vmnic.linkstate.down] Physical NIC vmnic4 linkstate is down.", "vobd", "nic_link_down", "nic", "vmnic4" },
	{ "2020-04-30T07:25:58.464Z: [netCorrelator] 842494443us: [vob.net.dvport.uplink.transition.down] Uplink: vmnic2 is down. Affected dvPort: 132/5d 0d ... 1 uplinks up. Failed criteria: 130.", "vobd", "uplink_down", "nic", "vmnic2" },
	{ "2020-04-30T07:25:58.464Z: [netCorrelator] 849587112us: [vob.net.pg.uplink.transition.up] Uplink:vmnic6 is up. Affected portgroup: Management Network. 1 uplinks up", "vobd", NULL, NULL, NULL },
	{ "2017-02-25T17:34:15.505Z cpu0:65560)NMP: nmp_ThrottleLogForDevice:3546: last error status from device t10.ATA_____Crucial_CT1050MX300SSD4_________________________163713E82C00 repeated 10 times", "vmkernel", "nmp_error_repeated", "repeat_count", "10" },
	{ "2017-02-25T17:34:15.505Z cpu0:65560)ScsiDeviceIO: 2927: Cmd(0x439500a7f200) 0x2a, CmdSN 0xaa9 from world 65693 to dev \"t10.ATA_____Crucial_CT1050MX300SSD4_________________________163713E82C00\" failed H:0x2 D:0x0 P:0x0 Invalid sense data: 0x75 0x70 0x64.", "vmkernel", "scsi_cmd_failed", "scsi_sense", "0x75 0x70 0x64" },
	{ "2017-02-25T17:34:15.505Z cpu0:65560)WARNING: NMP: nmp_DeviceRequestFastDeviceProbe:237: NMP device \"t10.ATA_____Crucial_CT1050MX300SSD4_________________________163713E82C00\" state in doubt; requested fast path state update...", "vmkernel", "device_state_in_doubt", "device", "t10.ATA_____Crucial_CT1050MX300SSD4_________________________163713E82C00" },
	/* the 5.x syslog form prints NMP function names without the line number */
	{ "Aug 15 06:07:13 vmkernel: 1:23:46:11.079 cpu23:4257)NMP: nmp_ThrottleLogForDevice: Cmd 0x28 (0x41244109c100, 12535) to dev \"naa.600\" on path \"vmhba2:C0:T0:L6\" Failed: H:0xb D:0x0 P:0x0 Possible sense data: 0x0 0x0 0x0. Act:NONE", "vmkernel", "nmp_cmd_failed", "path", "vmhba2:C0:T0:L6" },
	{ "2017-10-06T01:35:46.892Z cpu1:65954)ntg3:vmnic3:Ntg3PhyStateGet:426:link state changed (auxSTS: 0x871f)", "vmkernel", "nic_driver_link_state_changed", "nic", "vmnic3" },
	{ "2012-11-01T04:12:01.299Z cpu2:12086)HBX: 2956: 'ssd': HB at offset 3735552 - Waiting for timed out HB:", "vmkernel", "vmfs_hb_offset_timed_out", "datastore", "ssd" },
	{ "2012-11-01T04:12:01.299Z cpu2:12086)WARNING: FS3J: 3034: Aborting txn callerID: 0xc1d00006 to slot 211:  File system timeout (Ok to retry)", "vmkernel", "vmfs_journal_timeout", NULL, NULL },
	{ "2020-04-30T07:25:58.464Z cpu3:2132)MCA: 207: CE Poll G0 Bd2 ChMsk ffff Memory Controller Read Error on Channel 1", "vmkernel", "mca_memory_error", "channel", "1" },
	{ "2025-12-11T16:43:23.314Z In(14) vmsyslogd[2097100]: Dropping messages due to log stress (qsize = 25000)", "syslog", "syslog_dropping", NULL, NULL },
	{ "2020-04-30T07:25:58.464Z info hostd[2099376] [Originator@6876 sub=Vimsvc.ha-eventmgr] eventTypeId = \"esx.audit.host.poweroff.reason.unavailable\"", "hostd", "host_poweroff_unexplained", NULL, NULL },
	{ "2020-04-30T07:25:58.464Z info hostd[2099376] [Originator@6876 sub=Vimsvc.ha-eventmgr] Host had been powered off. The power off was not the result of a kernel error, deliberate reboot, or shut down.", "hostd", "host_poweroff_unexplained_text", NULL, NULL },
	{ "2020-04-30T07:25:58.464Z: [vmfsCorrelator] 1us: [esx.problem.vmfs.heartbeat.timedout] Lost access to volume 58689a7f-1d2e3f40-abcd-0025b5000a1e (Datastore1) due to connectivity issues. Recovery attempt is in progress and outcome will be reported shortly.", "vobd", "vmfs_lost_access", "datastore", "Datastore1" },
	{ "2020-04-30T07:25:58.464Z: [vmfsCorrelator] 1us: [esx.problem.vmfs.heartbeat.recovered] Successfully restored access to volume 58689a7f-1d2e3f40-abcd-0025b5000a1e (Datastore1) following connectivity issues.", "vobd", "vmfs_access_restored", "volume_uuid", "58689a7f-1d2e3f40-abcd-0025b5000a1e" },
	{ "2020-04-30T07:25:58.464Z: [scsiCorrelator] 1us: [esx.problem.storage.redundancy.degraded] Path redundancy to storage device naa.6006 degraded. Path vmhba2:C0:T1:L0 is down.", "vobd", "storage_redundancy_degraded", "device", "naa.6006" },
	/* the recoveries are keyed on their event id, not on a message text */
	{ "2020-04-30T07:25:58.464Z: [scsiCorrelator] 1us: [esx.clear.storage.connectivity.restored] Connectivity to storage device naa.6006 (Datastores: \"DS1\") restored. Path vmhba2:C0:T1:L0 is active again.", "vobd", "storage_connectivity_restored", "device", "naa.6006" },
	{ "2020-04-30T07:25:58.464Z: [scsiCorrelator] 1us: [esx.clear.storage.redundancy.restored] Path redundancy to storage device mpx.vmhba32:C0:T0:L0 (Datastores: \"DS1\") restored. Path vmhba32:C0:T0:L0 is active again.", "vobd", "storage_redundancy_restored", "device", "mpx.vmhba32:C0:T0:L0" },
	{ "2020-04-30T07:25:58.464Z: [APDCorrelator] 1us: [esx.clear.storage.apd.exit] Device or filesystem with identifier [naa.6006] has exited the All Paths Down state.", "vobd", "apd_exit", "device", "naa.6006" },
	{ "2011-08-09T10:43:26.857Z cpu2:853571)WARNING: ScsiDevice: 1223: Device :naa.60a98000572d54724a34642d71325763 has been removed or is permanently inaccessible.", "vmkernel", "pdl_device_lost", "device", "naa.60a98000572d54724a34642d71325763" },
};

/*
 * The rules added from the KB sweep: each fires on its real line (the
 * message as its source printed it, see the comment above the rule in
 * collectors/logwatch/rules/esxi.yaml), under the ESXi 7 and the ESXi 8 header, and
 * on nothing else: every line of the table must match exactly its own rule
 * (first match wins, so a rule that fired on a neighbour's line fails it).
 * Neighbours from the same sources match no rule.
 */
static const struct {
	const char *filelog, *body, *rule, *cap1, *val1;
} swept[] = {
	/* KB 323075: USB/SD boot device */
	{ "vmkernel", "WARNING: ScsiPath: 6506: Path vmhba32:C0:T0:L0 is being removed", "scsipath_being_removed", "path", "vmhba32:C0:T0:L0" },
	{ "vmkernel", "WARNING: ScsiPath: 6820: Failed to issue command 0x0 (cmdSN 0x0) on path vmhba32:C0:T0:L0: No connection", "scsipath_cmd_no_connection", "path", "vmhba32:C0:T0:L0" },
	{ "vmkernel", "WARNING: NMP: nmpUnclaimPath:1561: NMP device \"mpx.vmhba32:C0:T0:L0\" quiesce state change failed: Busy", "nmp_unclaim_busy", "device", "mpx.vmhba32:C0:T0:L0" },
	/* KB 318611 / 83376 */
	{ "vmkernel", "ALERT: Bootbank cannot be found at path '/bootbank'", "bootbank_not_found", "path", "/bootbank" },
	{ "vmkernel", "WARNING: FS3: 633: VMFS volume LOCKER-5fecb7ff-8662d6b5-7732-24b6fde3ff81/5fecb7ff-8662d6b5-7732-24b6fde3ff81 on mpx.vmhba32:C0:T0:L0:7 has been detected corrupted", "vmfs_volume_corrupted", "datastore", "LOCKER-5fecb7ff-8662d6b5-7732-24b6fde3ff81" },
	{ "vmkernel", "WARNING: Res3: 7148: Volume 5fecb7ff-8662d6b5-7732-24b6fde3ff81 (\"LOCKER-5fecb7ff-8662d6b5-7732-24b6fde3ff81\") might be damaged on the disk. Resource cluster metadata corruption has been detected.", "vmfs_metadata_damaged", "volume_uuid", "5fecb7ff-8662d6b5-7732-24b6fde3ff81" },
	{ "vmkernel", "WARNING: [type 6] Invalid clusterNum 2251799813685250.", "vmfs_invalid_cluster", "cluster", "2251799813685250" },
	{ "vmkernel", "ScsiDeviceIO: 4062: Cmd(0x45ba92263280) 0x1a, CmdSN 0x1fea2a8 from world 0 to dev \"mpx.vmhba32:C0:T0:L0\" failed H:0x7 D:0x0 P:0x0 Invalid sense data: 0xc7 0xf 0x43.", "scsi_cmd_failed", "device", "mpx.vmhba32:C0:T0:L0" },
	/* boot device lost (vCenter event text, running-system.com) */
	{ "hostd", "Event 121 : Lost connectivity to the device mpx.vmhba32:C0:T0:L0 backing the boot filesystem /vmfs/devices/disks/mpx.vmhba32:C0:T0:L0. As a result, host configuration changes will not be saved to persistent storage.", "boot_device_lost", "device", "mpx.vmhba32:C0:T0:L0" },
	/* KB 326859, KB 338435 */
	{ "vmkernel", "ScsiDeviceIO: 4325: Cmd(0x45be74dae040) 0x28, CmdSN 0xd65263a8 from world 0 to dev \"naa.#####\" failed H:0x0 D:0x2 P:0x0 Valid sense data: 0x3 0x11 0x0", "medium_error", "scsi_sense", "0x3 0x11 0x0" },
	{ "vmkernel", "NMP: nmp_CompleteCommandForPath: Command 0x28 (0x41000b10f000) to NMP device \"naa.600601601f70190016361881f3b4de11\" failed on physical path \"vmhba3:C0:T2:L10\" H:0x0 D:0x2 P:0x0 Valid sense data: 0x2 0x4 0x3.", "nmp_path_cmd_failed", "path", "vmhba3:C0:T2:L10" },
	/* KB 2062592, KB 436435: FC */
	{ "vmkernel", "<3> rport-13:0-3: blocked FC remote port time out: saving binding", "fc_rport_blocked", "rport", "rport-13:0-3" },
	{ "vmkernel", "<3>lpfc820 0000:05:00.1: 1:(0):0203 Devloss timeout on WWPN <WWPN> NPort x270024 Data: x0 x7 x0", "fc_devloss_timeout", "wwpn", "<WWPN>" },
	{ "vmkernel", "WARNING: lpfc : vmhba2 lpfc_validate_fcp_abort:7541: 3111 Outstanding FCP I/O Abort Request still pending on io_buf 0x45d9a3566430, xri x373", "fc_abort_pending", "adapter", "vmhba2" },
	{ "vmkernel", "VSCSI: 3772: handle 9356242661154838(GID:8214)(vscsi0:1):processing reset for handle ... state 1381192706", "vscsi_reset", "vscsi", "vscsi0:1" },
	/* KB 410618: iSCSI */
	{ "vmkernel", "WARNING: iscsi_vmk: iscsivmk_ConnReceiveAtomic: vmhba34:CH:0 T:6 CN:0: Failed to receive data: Connection closed by peer", "iscsi_receive_failed", "target", "6" },
	{ "vmkernel", "iscsi_vmk: iscsivmk_ConnRxNotifyFailure: vmhba34:CH:0 T:6 CN:0: Connection rx notifying failure: Failed to Receive. State=Online", "iscsi_rx_failure", "adapter", "vmhba34" },
	{ "vmkernel", "WARNING: iscsi_vmk: iscsivmk_StopConnection: vmhba34:CH:0 T:6 CN:0: iSCSI connection is being marked \"OFFLINE\"", "iscsi_connection_offline", "adapter", "vmhba34" },
	{ "vmkernel", "WARNING: iscsi_vmk: iscsivmk_StartConnection: vmhba34:CH:0 T:6 CN:0: iSCSI connection is being marked \"ONLINE\"", "iscsi_connection_online", "target", "6" },
	/* KB 399074: NIC error stats (hostd) */
	{ "hostd", "Error stats for pnic: vmnic1", "pnic_error_stats", "nic", "vmnic1" },
	/* vSAN: cormachogan.com, virtuallysensei.com, KB 430990, 438445, 400669 */
	{ "vmkernel", "WARNING: LSOM: LSOMEventNotify:6440: Virtual SAN device 52db4996-ffdd-9957-485c-e2dcf1057f66 is under permanent error.", "vsan_lsom_permanent_error", "vsan_uuid", "52db4996-ffdd-9957-485c-e2dcf1057f66" },
	{ "vmkernel", "Disk Event permanent error for MD 52827e2f-7a2c-8931-e978-1e57a2ff9078 (naa.51402ec0104cc514:2)", "vsan_disk_event_permanent_error", "device", "naa.51402ec0104cc514" },
	{ "vmkernel", "WARNING: LSOM: LSOMScrubReadComplete:2983: Throttled: Checksum error on comp <UUID>, offset XXX (computed CRC 0x9bf89627 != saved CRC 0x5bf554a1 (NF)) 4096", "vsan_checksum_error", "component", "<UUID>" },
	{ "vmkernel", "LSOM: LSOMThrowAsyncCongestionVOB:550: LSOM MemCong in ##### Congestion State: Exceeded. Congestion Threshold: 200 Current Congestion: 204.", "vsan_congestion_exceeded", "congestion", "MemCong" },
	{ "vmkernel", "LSOM: LSOMGetSSDCongestion:1242: Throttled: Stuck elevator detection triggered, 5273ca46-03c2-895c-382d-a2ab09df063e plogLog 17179869184 plogLogThresh 17179869184 ssdCong 0 ssdCongThresh 200", "vsan_stuck_elevator", "vsan_uuid", "5273ca46-03c2-895c-382d-a2ab09df063e" },
	/* KB 435833, 311064, 367534, ugg.li: machine checks and panics */
	{ "vmkernel", "MCA: 191: UC Excp G5 B6 Sbb80000000000e0b A0 M10100000 P0/0 I/O error reported by PCI 0000:10:02.0.", "mca_uncorrected_error", "pci", "0000:10:02.0" },
	{ "vmkernel", "System has encountered a Hardware Error - Please contact the hardware vendor", "hardware_error_vendor", NULL, NULL },
	{ "vmkernel", "@BlueScreen: Machine Check Exception on PCPU5 in world 2097171:netCoalesce2", "psod_machine_check", "cpu", "5" },
	{ "vmkernel", "@BlueScreen: #PF Exception 14 in world 63406:vmast.63405 IP 0x41801cd9c266 addr 0x0", "psod_page_fault", "world", "vmast.63405" },
	{ "vmkernel", "#PF Exception 14 in world 1001599386:fdsAIO IP 0x420017c7c1d2 addr 0xe8", "psod_page_fault", "world", "fdsAIO" },
	{ "vmkernel", "@BlueScreen: ASSERT bora/vmkernel/main/pframe_int.h:527", "psod_bluescreen", "panic", "ASSERT bora/vmkernel/main/pframe_int.h:527" },
	{ "vmkernel", "Backtrace for current CPU #36, worldID=1001599386, fp=0x430874608c80", "kernel_backtrace", "cpu", "36" },
	{ "vmkernel", "Backtrace for Current CPU - 5:", "kernel_backtrace", "cpu", "5" },
	{ "vmkernel", "World: ResetToVMKOnPanic:3185: PRDA 0x420049000000 ss 0x0 ds 0xf50 es 0xf50 fs 0x0 gs 0x0", "panic_reset", NULL, NULL },
	/* neighbours in the same sources: no rule */
	{ "vmkernel", "J6: CommitOnDiskTxn:3620: 'VMFS6-UNITY': world: 1001393546 done with onDiskTxn: 0x43132528dbb0 for file (<FD c6 r199>) numMemTxns: 1 with status Success.", NULL, NULL, NULL },
	{ "vmkernel", "Fil3: FS3_WaitOrCancelExistingScanner:3179: Cancel requested, disabling the scanner. file Data 0x43132566c4b0", NULL, NULL, NULL },
	{ "vmkernel", "lpfc : vmhba2 lpfc_issue_gidft:2188: fc4 type 1", NULL, NULL, NULL },
	{ "vmkernel", "lpfc: lpfc_cmpl_els_prli:2050: vmhba2 0103 PRLI completes to NPort x140200 Data: x0 xf0160 x14 x0 x1", NULL, NULL, NULL },
	{ "vmkernel", "VMB: 65: Reserved * MPNs starting @ ****", NULL, NULL, NULL },
	{ "vmkernel", "0x4538da49afd0:[0x42001810f88c]CpuSched_StartWorld@vmkernel#nover+0xf9 stack: 0x0, 0x0, 0x0, 0x420017d0bb9c, 0x0", NULL, NULL, NULL },
	{ "hostd", "--> droppedRx: 4640800", NULL, NULL, NULL },
};

TEST(catalogue_swept_rules_esxi7_and_8)
{
	static const char *const h7[] = {
		"2024-03-05T06:07:08.123Z cpu4:2098636)",
		"2024-03-05T06:07:08.123Z warning hostd[2100510] [Originator@6876 sub=Statssvc] ",
	};
	static const char *const h8[] = {
		"2024-03-05T06:07:08.123Z In(182) vmkernel: cpu4:2098636)",
		"2024-03-05T06:07:08.123Z Wa(164) Hostd[2100510]: [Originator@6876 sub=Statssvc] ",
	};
	struct rule_conf *v = NULL;
	size_t n = 0, i, k, fired = 0;
	struct rules *r;
	struct rules_match m;
	char line[2048];

	CHECK_INT(config_load_rules_file("collectors/logwatch/rules/esxi.yaml", &v, &n, report, NULL), 0);
	r = build(v, n);
	for (i = 0; i < sizeof(swept) / sizeof(swept[0]); i++) {
		int hi = strcmp(swept[i].filelog, "hostd") == 0;

		for (k = 0; k < 2; k++) {
			int got;

			snprintf(line, sizeof(line), "%s%s", k == 0 ? h7[hi] : h8[hi], swept[i].body);
			got = rules_match(r, swept[i].filelog, line, strlen(line), &m);
			if (swept[i].rule == NULL) {
				if (got)
					T_FAILF("swept %zu (ESXi %s): matched %s, want none", i,
					    k ? "8" : "7", m.rule->name);
				continue;
			}
			if (!got) {
				T_FAILF("swept %zu (ESXi %s): no match, want %s", i, k ? "8" : "7",
				    swept[i].rule);
				continue;
			}
			if (strcmp(m.rule->name, swept[i].rule) != 0) {
				T_FAILF("swept %zu (ESXi %s): matched %s, want %s", i,
				    k ? "8" : "7", m.rule->name, swept[i].rule);
				continue;
			}
			fired++;
			if (swept[i].cap1 && (cap(&m, swept[i].cap1) == NULL ||
			    strcmp(cap(&m, swept[i].cap1), swept[i].val1) != 0))
				T_FAILF("swept %zu: %s = %s, want %s", i, swept[i].cap1,
				    cap(&m, swept[i].cap1) ? cap(&m, swept[i].cap1) : "(none)",
				    swept[i].val1);
		}
	}
	CHECK_INT(fired, 2 * 34);
	rules_free(r);
	rule_conf_free_array(v, n);
}

TEST(catalogue_quoted_forms)
{
	struct rule_conf *v = NULL;
	size_t n = 0, i;
	struct rules *r;
	struct rules_match m;

	CHECK_INT(config_load_rules_file("collectors/logwatch/rules/esxi.yaml", &v, &n, report, NULL), 0);
	r = build(v, n);
	for (i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++) {
		const char *line = quoted[i].line, *want = quoted[i].rule;
		int got = rules_match(r, quoted[i].filelog, line, strlen(line), &m);

		if (want == NULL) {
			if (got)
				T_FAILF("quoted %zu: matched %s, want none", i, m.rule->name);
			continue;
		}
		if (!got) {
			T_FAILF("quoted %zu: no match, want %s", i, want);
			continue;
		}
		if (strcmp(m.rule->name, want) != 0)
			T_FAILF("quoted %zu: matched %s, want %s", i, m.rule->name, want);
		if (quoted[i].cap1 && (cap(&m, quoted[i].cap1) == NULL ||
		    strcmp(cap(&m, quoted[i].cap1), quoted[i].val1) != 0))
			T_FAILF("quoted %zu: %s = %s, want %s", i, quoted[i].cap1,
			    cap(&m, quoted[i].cap1) ? cap(&m, quoted[i].cap1) : "(none)",
			    quoted[i].val1);
	}
	rules_free(r);
	rule_conf_free_array(v, n);
}

TEST(catalogue_search_order)
{
	char p[4096];

	/* rules_file: that path and nothing else. */
	CHECK_INT(rules_catalogue_path("/nonexistent/esxi.yaml", p, sizeof(p)), -1);
	CHECK_INT(rules_catalogue_path("collectors/logwatch/rules/esxi.yaml", p, sizeof(p)), 0);
	CHECK_STR(p, "collectors/logwatch/rules/esxi.yaml");
	/* ESXWATCH_RULES_FILE: that path and nothing else; rules_file wins. */
	setenv("ESXWATCH_RULES_FILE", "collectors/logwatch/rules/esxi.yaml", 1);
	CHECK_INT(rules_catalogue_path("", p, sizeof(p)), 0);
	CHECK_STR(p, "collectors/logwatch/rules/esxi.yaml");
	CHECK_INT(rules_catalogue_path("/nonexistent/esxi.yaml", p, sizeof(p)), -1);
	setenv("ESXWATCH_RULES_FILE", "/nonexistent/esxi.yaml", 1);
	CHECK_INT(rules_catalogue_path("", p, sizeof(p)), -1);
	/* Neither, and nothing installed: not found, even when the working
	 * directory is the source tree (no development fallback). */
	unsetenv("ESXWATCH_RULES_FILE");
	if (access("/opt/esxwatch/share/rules/esxi.yaml", R_OK) != 0 &&
	    access("/usr/share/esxwatch/rules/esxi.yaml", R_OK) != 0)
		CHECK_INT(rules_catalogue_path("", p, sizeof(p)), -1);
}

/*
 * The binary's own catalogue: the text of collectors/logwatch/rules/esxi.yaml
 * byte for byte, loaded when no file applies; an explicit path that cannot
 * be read is not replaced by it.
 */
TEST(catalogue_built_in)
{
	enum rules_catalogue_from from;
	struct rule_conf *v = NULL, *f = NULL;
	size_t n = 0, nf = 0, len = 0;
	char what[4096], *text;
	FILE *fp = fopen("collectors/logwatch/rules/esxi.yaml", "rb");

	CHECK(fp != NULL);
	if (fp == NULL)
		return;
	text = calloc(1, 1 << 20);
	len = fread(text, 1, (1 << 20) - 1, fp);
	fclose(fp);
	CHECK_INT(rules_catalogue_builtin_len, len);
	CHECK(memcmp(rules_catalogue_builtin, text, len) == 0);
	CHECK_INT(rules_catalogue_builtin[rules_catalogue_builtin_len], 0);
	free(text);
	unsetenv("ESXWATCH_RULES_FILE");
	if (access("/opt/esxwatch/share/rules/esxi.yaml", R_OK) == 0 ||
	    access("/usr/share/esxwatch/rules/esxi.yaml", R_OK) == 0)
		return;		/* an installed file comes first */
	CHECK_INT(rules_catalogue_load("", &from, what, sizeof(what), &v, &n,
	    report, NULL), 0);
	CHECK_INT(from, RC_BUILTIN);
	CHECK_STR(what, RULES_CATALOGUE_BUILTIN);
	CHECK_INT(config_load_rules_file("collectors/logwatch/rules/esxi.yaml", &f,
	    &nf, report, NULL), 0);
	CHECK_INT(n, nf);
	for (size_t i = 0; i < n && i < nf; i++)
		CHECK_STR(v[i].name, f[i].name);
	rule_conf_free_array(v, n);
	rule_conf_free_array(f, nf);
	CHECK_INT(rules_catalogue_load("/nonexistent/esxi.yaml", &from, what,
	    sizeof(what), &v, &n, report, NULL), -1);
	CHECK_INT(from, RC_MISSING);
	CHECK_STR(what, "/nonexistent/esxi.yaml");
	CHECK(v == NULL);
}

static void
count_cb(void *arg, const char *rule, const char *entity, uint64_t n,
    int64_t window, const char *last)
{
	(void)rule;
	(void)entity;
	(void)window;
	(void)last;
	*(uint64_t *)arg += n;
}

/* Many entities: each counted on its own, idle ones reused, then no room. */
TEST(storm_many_entities)
{
	struct storm *s = storm_new(2, 1000, 500);
	uint64_t summed = 0;
	char ent[32];
	int i, k, emitted = 0;

	for (i = 0; i < 400; i++)
		for (k = 0; k < 3; k++) {
			snprintf(ent, sizeof(ent), "device\tnaa.%d", i);
			emitted += storm_hit(s, "r", ent, 10, "l", 1, count_cb, &summed);
		}
	CHECK_INT(emitted, 800);
	CHECK_INT(storm_due(s, 2000, false, count_cb, &summed), 400);
	CHECK_INT(summed, 400);
	/* 400 idle entries reused, 100 new up to the 500 keys, 100 without
	 * room: those are always emitted, never dropped. */
	emitted = 0;
	for (i = 0; i < 600; i++)
		for (k = 0; k < 3; k++) {
			snprintf(ent, sizeof(ent), "device\tnaa.x%d", i);
			emitted += storm_hit(s, "r", ent, 3000, "l", 1, count_cb, &summed);
		}
	CHECK_INT(emitted, 500 * 2 + 100 * 3);
	/* An old entity is found again among the new ones. */
	CHECK_INT(storm_hit(s, "r", "device\tnaa.x7", 3001, "l", 1, count_cb, &summed), 0);
	storm_free(s);
}

int
main(void)
{
	T_PROG("test_rules");
	RUN(literal_derivation);
	RUN(capture_names);
	RUN(bad_rules_are_reported);
	RUN(match_captures_and_order);
	RUN(override_and_disable);
	RUN(prefilter_oracle);
	RUN(storm_suppression);
	RUN(storm_key_parsed);
	RUN(catalogue_swept_rules_esxi7_and_8);
	RUN(storm_per_rule_and_checkpoint);
	RUN(storm_many_entities);
	RUN(scsi_codes);
	RUN(catalogue);
	RUN(catalogue_quoted_forms);
	RUN(catalogue_search_order);
	RUN(catalogue_built_in);
	return t_done();
}
