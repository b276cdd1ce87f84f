/*
 * The --analyze HTML report (agent/analyze/report_html.c): every finding
 * shown, every string escaped, nothing fetched, bad input refused, a big
 * report bounded; and the JSON reader's walk and full unescape under it.
 *
 * With an argument it is also the hidden test hook of
 * tests/e2e/test_report_html.py: `test_report_html REPORT.json OUT.html`
 * writes the HTML report of a JSON file (exit 2 when it is refused).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../agent/analyze/report_html.h"
#include "../../agent/lib/buf.h"
#include "../../agent/lib/json.h"
#include "../../agent/lib/utf8.h"

#define FIXTURE "tests/fixtures/analyze/report.json"

/* The HTML of a report, NUL-terminated (NULL and *rc -1 when refused). */
static char *
render(const char *json, size_t len, int *rcp, size_t *outlen)
{
	char	*p = NULL;
	size_t	 n = 0;
	FILE	*f = open_memstream(&p, &n);
	int	 rc;

	if (f == NULL)
		abort();
	errno = 0;
	rc = report_html_write(f, json, len);
	if (rcp)
		*rcp = rc;
	fclose(f);
	if (outlen)
		*outlen = n;
	if (rc == -1) {
		if (n != 0)
			printf("  refused report wrote %zu bytes\n", n);
		free(p);
		return NULL;
	}
	return p;
}

static char *
render_s(const char *json)
{
	int	 rc;
	char	*h = render(json, strlen(json), &rc, NULL);

	if (h == NULL)
		printf("  report refused: errno %d\n", errno);
	return h;
}

/* Occurrences of needle (a plain loop: a sanitizer's strstr measures the
 * whole haystack at every call). */
static size_t
count(const char *hay, const char *needle)
{
	size_t	 n = 0, k = strlen(needle);
	const char *p;

	for (p = hay; *p != '\0'; p++)
		if (*p == needle[0] && strncmp(p, needle, k) == 0) {
			n++;
			p += k - 1;
		}
	return n;
}

/*
 * Every tag in the HTML is one the report writes, with no event handler
 * attribute and no link but to the page itself: escaped text can never
 * add one.
 */
static int
tags_ok(const char *h)
{
	static const char *const ok[] = { "!DOCTYPE", "html", "head", "meta", "title",
	    "style", "body", "header", "h1", "h2", "div", "table", "tr", "th", "td",
	    "section", "a", "span", "p", "time", "svg", "line", "text", "rect",
	    "article", "b", "i", "pre", "ul", "li", "footer" };
	const char *p = h, *e, *q;
	size_t	 i, n;

	while ((p = strchr(p, '<')) != NULL) {
		e = strchr(p, '>');
		if (e == NULL)
			return 0;
		q = p + 1 + (p[1] == '/');
		n = strcspn(q, " >/\n");
		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			if (strlen(ok[i]) == n && strncmp(q, ok[i], n) == 0)
				break;
		if (i == sizeof(ok) / sizeof(ok[0])) {
			printf("  unexpected tag: %.*s\n", (int)(e - p + 1), p);
			return 0;
		}
		for (q = p; q < e; q++)
			if ((q[0] == ' ' && q[1] == 'o' && q[2] == 'n') ||
			    strncmp(q, "src=", 4) == 0 ||
			    (strncmp(q, "href=", 5) == 0 && q[6] != '#')) {
				printf("  unexpected attribute: %.*s\n", (int)(e - p + 1), p);
				return 0;
			}
		p = e + 1;
	}
	return 1;
}

/* The hidden hook: the HTML report of a JSON file. */
static int
hook(const char *in, const char *outpath)
{
	size_t	 len;
	char	*json = t_slurp(in, &len);
	FILE	*out = fopen(outpath, "w");

	if (out == NULL) {
		perror(outpath);
		return 2;
	}
	if (report_html_write(out, json, len) == -1) {
		fprintf(stderr, "%s: not a report (%s)\n", in, strerror(errno));
		fclose(out);
		return 2;
	}
	free(json);
	return fclose(out) == 0 ? 0 : 2;
}

static const char SMALL[] =
	"{\"bundle\": \"/tmp/esx-esx01.lab-2026-12-06--05.01-12345.tgz\","
	" \"host\": {\"hostname\": \"esx01.lab\", \"version\": \"8.0.3\","
	" \"build\": \"24022510\", \"uptime_s\": \"864000\"},"
	" \"events\": ["
	"  {\"timestamp\": 1765000000000, \"text\": \"2025-12-06T05:46:40.000Z cpu3:2098)WARNING: NMP: nmp_DeviceRequestFastDeviceProbe:237: NMP device \\\"naa.600a\\\" state in doubt; requested fast path state update...\","
	"   \"hostname\": \"esx01.lab\", \"esxwatch_collector\": \"logwatch\", \"esxwatch_kind\": \"alert\","
	"   \"esxwatch_severity\": \"warning\", \"esxwatch_rule\": \"nmp_state_in_doubt\", \"esxwatch_device\": \"naa.600a\","
	"   \"esxwatch_file\": \"var/run/log/vmkernel.log\"},"
	"  {\"timestamp\": 1765000060000, \"text\": \"vmnic1: 4711 receive CRC errors since boot\","
	"   \"esxwatch_collector\": \"nic\", \"esxwatch_kind\": \"alert\", \"esxwatch_severity\": \"error\","
	"   \"esxwatch_nic\": \"vmnic1\", \"esxwatch_rx_crc_errors\": \"4711\"},"
	"  {\"timestamp\": 1765000120000, \"text\": \"[esx.problem.storage.apd.start] Device or filesystem with identifier [naa.600a] has entered the All Paths Down state.\","
	"   \"esxwatch_collector\": \"logwatch\", \"esxwatch_kind\": \"alert\", \"esxwatch_severity\": \"critical\","
	"   \"esxwatch_rule\": \"apd_start\", \"esxwatch_device\": \"naa.600a\", \"esxwatch_file\": \"var/run/log/vobd.log\"},"
	"  {\"timestamp\": 1765000125000, \"text\": \"APD on naa.600a after CRC errors on vmnic1\","
	"   \"esxwatch_collector\": \"diagnosis\", \"esxwatch_kind\": \"alert\", \"esxwatch_severity\": \"critical\","
	"   \"esxwatch_diagnosis\": \"apd_after_nic_errors\", \"esxwatch_evidence\": \"apd_start naa.600a; nic vmnic1 crc\"},"
	"  {\"timestamp\": 1765001000000, \"text\": \"vmnic1 link up 10000 Mbps\", \"esxwatch_collector\": \"nic\","
	"   \"esxwatch_kind\": \"sample\", \"esxwatch_severity\": \"info\", \"esxwatch_nic\": \"vmnic1\"}"
	" ],"
	" \"diagnoses\": ["
	"  {\"timestamp\": 1765000125000, \"text\": \"APD on naa.600a after CRC errors on vmnic1\","
	"   \"esxwatch_collector\": \"diagnosis\", \"esxwatch_kind\": \"alert\", \"esxwatch_severity\": \"critical\","
	"   \"esxwatch_diagnosis\": \"apd_after_nic_errors\", \"esxwatch_evidence\": \"apd_start naa.600a; nic vmnic1 crc\"}"
	" ],"
	" \"logs\": [{\"file\": \"var/run/log/vmkernel.log\", \"lines\": 120034, \"matched\": 17,"
	"   \"first\": \"2025-12-06T04:00:00.000Z\", \"last\": \"2025-12-06T06:00:00.000Z\"}],"
	" \"gaps\": [\"commands/smartinfo.txt: missing\"]}";

TEST(renders_host_summary_and_every_finding)
{
	char	*h = render_s(SMALL);

	CHECK(h != NULL);
	if (h == NULL)
		return;
	CHECK(strstr(h, "<title>esxwatch analysis: esx01.lab</title>") != NULL);
	CHECK(strstr(h, "<h1 id=\"host\">esx01.lab</h1>") != NULL);
	CHECK(strstr(h, "ESXi 8.0.3, build 24022510") != NULL);
	CHECK(strstr(h, "<th>uptime_s</th><td>864000</td>") != NULL);
	CHECK(strstr(h, "esx-esx01.lab-2026-12-06--05.01-12345.tgz") != NULL);
	/* each finding once, by its index in events; the diagnosis event
	 * shown once, in the diagnoses */
	CHECK_INT(count(h, "id=\"f0\""), 1);
	CHECK_INT(count(h, "id=\"f1\""), 1);
	CHECK_INT(count(h, "id=\"f2\""), 1);
	CHECK_INT(count(h, "id=\"f3\""), 0);
	/* a sample is a measurement, not a finding */
	CHECK_INT(count(h, "id=\"f4\""), 0);
	CHECK_INT(count(h, "<article"), 4);
	CHECK(strstr(h, "<tr id=\"s4\"><td>2025-12-06 06:03:20</td><td>nic</td><td>vmnic1</td>"
	    "<td>vmnic1 link up 10000 Mbps</td></tr>") != NULL);
	CHECK(strstr(h, "measurements: 1</a>") != NULL);
	CHECK(strstr(h, "<span class=\"b\">info</span> 0</a>") != NULL);
	CHECK_INT(count(h, "id=\"d0\""), 1);
	CHECK_INT(count(h, "<pre class=\"text\">APD on naa.600a after CRC errors on vmnic1</pre>"), 1);
	CHECK(strstr(h, "NMP device &quot;naa.600a&quot; state in doubt") != NULL);
	CHECK(strstr(h, "<b class=\"rule\">apd_after_nic_errors</b>") != NULL);
	CHECK(strstr(h, "<p class=\"note\"><i>evidence</i> apd_start naa.600a; nic vmnic1 crc</p>") != NULL);
	CHECK(strstr(h, "<span><i>rx_crc_errors</i> 4711</span>") != NULL);
	/* what a finding is about comes first */
	CHECK(strstr(h, "<div class=\"kv\">\n<span><i>device</i> naa.600a</span>\n"
	    "<span><i>file</i> var/run/log/vobd.log</span>\n<span><i>collector</i> logwatch</span>") != NULL);
	/* grouped by severity: critical before error before warning */
	CHECK(strstr(h, "id=\"f2\"") < strstr(h, "id=\"f1\""));
	CHECK(strstr(h, "id=\"f1\"") < strstr(h, "id=\"f0\""));
	CHECK(strstr(h, "id=\"d0\"") < strstr(h, "id=\"f2\""));
	/* times in UTC from the events' own timestamps */
	CHECK(strstr(h, "<time>2025-12-06 05:48:40.000 UTC</time>") != NULL);
	/* summary, timeline with one mark per finding, logs, gaps */
	CHECK(strstr(h, "<span class=\"b\">critical</span> 1</a>") != NULL);
	CHECK(strstr(h, "<span class=\"b\">diagnoses</span> 1</a>") != NULL);
	CHECK(strstr(h, "<time>2025-12-06 04:00:00</time> to <time>2025-12-06 06:00:00</time> UTC") != NULL);
	CHECK_INT(count(h, "<rect class=\"m "), 4);
	CHECK(strstr(h, "<a href=\"#d0\"><rect class=\"m s-diagnosis\"") != NULL);
	CHECK(strstr(h, "4 findings and diagnoses with a time, drawn as 4 marks.") != NULL);
	CHECK(strstr(h, "<td>var/run/log/vmkernel.log</td><td class=\"num\">120034</td>"
	    "<td class=\"num\">17</td><td>2025-12-06T04:00:00.000Z</td>") != NULL);
	CHECK(strstr(h, "<li>commands/smartinfo.txt: missing</li>") != NULL);
	CHECK(utf8_valid(h, strlen(h)));
	free(h);
}

TEST(no_external_resource_and_strict_csp)
{
	char	*h = render_s(SMALL);

	if (h == NULL) {
		CHECK(h != NULL);
		return;
	}
	CHECK(strstr(h, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline';") != NULL);
	CHECK(strstr(h, "http://") == NULL);
	CHECK(strstr(h, "https://") == NULL);
	CHECK(strstr(h, "src=") == NULL);
	CHECK(strstr(h, "<script") == NULL);
	CHECK(strstr(h, "<link") == NULL);
	CHECK(strstr(h, "url(") == NULL);
	CHECK(strstr(h, "@import") == NULL);
	CHECK(strstr(h, "//") == NULL);
	free(h);
}

/* A log line is hostile: markup, quotes, URLs, escapes, invalid UTF-8. */
TEST(escapes_hostile_strings)
{
	static const char J[] =
		"{\"bundle\": \"/tmp/a\\\"<b>.tgz\", \"host\": {\"hostname\": \"<img src=x onerror=alert(1)>\", \"version\": \"8\\\"'\"},"
		" \"events\": [{\"timestamp\": 1765000000000,"
		"  \"text\": \"</pre><script>alert('x')</script> & https://evil.example/x.js \xff\xfe end\","
		"  \"esxwatch_severity\": \"error\", \"esxwatch_rule\": \"<b>r</b>\","
		"  \"esxwatch_x\\\"><svg onload=1>\": \"\\u003cscript\\u003e \\ud83d\\ude00 \\ud800 \\u0007 \\/\"}],"
		" \"logs\": [{\"file\": \"<iframe>\", \"lines\": \"1<2\"}],"
		" \"gaps\": [\"<style>body{display:none}</style>\"]}";
	char	*h = render_s(J);

	if (h == NULL) {
		CHECK(h != NULL);
		return;
	}
	CHECK(tags_ok(h));
	CHECK(strstr(h, "<title>esxwatch analysis: &lt;img src=x onerror=alert(1)&gt;</title>") != NULL);
	CHECK(strstr(h, "<h1 id=\"host\">&lt;img src=x onerror=alert(1)&gt;</h1>") != NULL);
	CHECK(strstr(h, "ESXi 8&quot;&#39;, build <i>unknown</i>") != NULL);
	CHECK(strstr(h, "<tr><th>bundle</th><td>/tmp/a&quot;&lt;b&gt;.tgz</td></tr>") != NULL);
	CHECK(strstr(h, "<pre class=\"text\">&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#39;)"
	    "&lt;/script&gt; &amp; https://evil.example/x.js \xef\xbf\xbd\xef\xbf\xbd end</pre>") != NULL);
	CHECK(strstr(h, "<b class=\"rule\">&lt;b&gt;r&lt;/b&gt;</b>") != NULL);
	CHECK(strstr(h, "<span><i>x\\&quot;&gt;&lt;svg onload=1&gt;</i> &lt;script&gt; "
	    "\xf0\x9f\x98\x80 \xef\xbf\xbd \xef\xbf\xbd /</span>") != NULL);
	CHECK(strstr(h, "<td>&lt;iframe&gt;</td><td class=\"num\">1&lt;2</td>") != NULL);
	CHECK(strstr(h, "<li>&lt;style&gt;body{display:none}&lt;/style&gt;</li>") != NULL);
	CHECK(utf8_valid(h, strlen(h)));
	free(h);
}

/* Refused, with EINVAL and not a byte written: whatever is not a §5 report. */
TEST(refuses_what_is_not_a_report)
{
	static const char *const bad[] = {
		"", "   ", "[]", "{}", "null", "\"x\"",
		"{\"host\": {}}",					/* no events */
		"{\"events\": []}",					/* no host */
		"{\"host\": \"esx01\", \"events\": []}",		/* host not an object */
		"{\"host\": {}, \"events\": {}}",			/* events not an array */
		"{\"host\": {}, \"events\": [1]}",			/* an event not an object */
		"{\"host\": {}, \"events\": [[]]}",
		"{\"host\": {}, \"events\": [{\"text\": \"x\"}], \"gaps\": [1]}",
		"{\"host\": {}, \"events\": [{\"text\": \"x\"}], \"logs\": [\"x\"]}",
		"{\"host\": {}, \"events\": [{\"text\": \"x\"}], \"diagnoses\": {}}",
		"{\"host\": {}, \"events\": [{\"text\": \"x",		/* truncated */
		"{\"host\": {}, \"events\": [{\"text\": \"x\"}",
		"{\"host\": {}, \"events\": [{\"text\": \"x\"}]",
		"{\"host\": {\"hostname\": \"a\"}, \"events\": [{\"text\": \"x\" \"y\"}]}",
	};
	size_t	 i;
	int	 rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(render(bad[i], strlen(bad[i]), &rc, NULL) == NULL);
		if (rc != -1 || errno != EINVAL)
			T_FAILF("bad[%zu] (%s): rc %d errno %d", i, bad[i], rc, errno);
	}
	/* nested past the reader's depth bound */
	{
		struct buf b = BUF_INIT;

		buf_puts(&b, "{\"host\": {}, \"events\": [{\"x\": ");
		for (i = 0; i < 200; i++)
			buf_putc(&b, '[');
		for (i = 0; i < 200; i++)
			buf_putc(&b, ']');
		buf_puts(&b, "}]}");
		CHECK(render(b.data, b.len, &rc, NULL) == NULL);
		CHECK_INT(errno, EINVAL);
		buf_free(&b);
	}
	CHECK_INT(report_html_write(NULL, "{}", 2), -1);
	CHECK_INT(errno, EINVAL);
}

/* Writing fails: -1 with the writer's errno. */
TEST(write_error_reported)
{
	FILE	*f = fopen("/dev/full", "w");

	if (f == NULL) {
		printf("  (no /dev/full: skipped)\n");
		return;
	}
	errno = 0;
	CHECK_INT(report_html_write(f, SMALL, strlen(SMALL)), -1);
	CHECK_INT(errno, ENOSPC);
	fclose(f);
}

/* An empty report (a healthy host) still says what it read. */
TEST(healthy_report)
{
	char	*h = render_s("{\"host\": {\"hostname\": \"esx02\"}, \"events\": [],"
	    " \"diagnoses\": [], \"logs\": [], \"gaps\": []}");

	if (h == NULL) {
		CHECK(h != NULL);
		return;
	}
	CHECK(tags_ok(h));
	CHECK(strstr(h, "ESXi <i>unknown</i>, build <i>unknown</i>") != NULL);
	CHECK(strstr(h, "No timeline: no log line and no finding has a time.") != NULL);
	CHECK(strstr(h, "No critical finding.") != NULL);
	CHECK(strstr(h, "No diagnosis") != NULL);
	CHECK(strstr(h, "None: every part of the bundle was read.") != NULL);
	CHECK_INT(count(h, "<article"), 0);
	free(h);
}

/*
 * 100,000 events (17 MB of JSON: past json_parse's whole-document bound)
 * render, each once, and the timeline draws at most RH_SLOTS marks a lane
 * and says that marks are shared.
 */
TEST(hundred_thousand_events)
{
	static const char *const sev[] = { "critical", "error", "warning", "info" };
	struct buf j;
	char	*h, id[32];
	size_t	 outlen, i;
	int	 rc;

	buf_init(&j, 64u << 20);
	buf_puts(&j, "{\"host\": {\"hostname\": \"big\"}, \"events\": [\n");
	for (i = 0; i < 100000; i++)
		buf_printf(&j, "{\"timestamp\": %llu, \"text\": \"line %zu <x>\", "
		    "\"esxwatch_severity\": \"%s\", \"esxwatch_rule\": \"r%zu\"},\n",
		    1765000000000ULL + (unsigned long long)i * 36, i, sev[i % 4], i % 7);
	buf_puts(&j, "], \"logs\": [], \"gaps\": []}");
	CHECK(j.len > JSON_MAX_INPUT);
	h = render(j.data, j.len, &rc, &outlen);
	CHECK_INT(rc, 0);
	if (h != NULL) {
		CHECK_INT(count(h, "<article"), 100000);
		CHECK_INT(count(h, "<rect class=\"m "), 4 * 400);
		CHECK(strstr(h, "100000 findings and diagnoses with a time, drawn as 1600 "
		    "marks (at most 400 a lane") != NULL);
		CHECK(strstr(h, "<pre class=\"text\">line 99999 &lt;x&gt;</pre>") != NULL);
		for (i = 0; i < 100000; i += 9973) {
			snprintf(id, sizeof(id), "id=\"f%zu\"", i);
			CHECK_INT(count(h, id), 1);
		}
		CHECK(strstr(h, "<span class=\"b\">info</span> 25000</a>") != NULL);
	}
	free(h);
	buf_free(&j);
}

/* The reader's walk: members one at a time, tolerant, bounded. */
TEST(json_walk_members)
{
	static const char J[] = " { \"a\": [1, {\"x\": \"]}\"}], \"b\\\"c\" : \"s\\\"}\" ,"
	    "\"n\": -1.5e3, \"t\": true,, \"o\": {\"p\": [[]]} } trailing";
	struct json_walk w, w2;
	const char *k, *v;
	size_t	 kn, vn;

	CHECK_INT(json_walk_init(&w, J, strlen(J)), 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 1);
	CHECK(kn == 1 && k[0] == 'a' && vn == 16 && memcmp(v, "[1, {\"x\": \"]}\"}]", vn) == 0);
	CHECK_INT(json_walk_init(&w2, v, vn), 0);
	CHECK(!w2.obj);
	CHECK_INT(json_walk_next(&w2, &k, &kn, &v, &vn), 1);
	CHECK(k == NULL && vn == 1 && v[0] == '1');
	CHECK_INT(json_walk_next(&w2, &k, &kn, &v, &vn), 1);
	CHECK(vn == 11 && v[0] == '{');
	CHECK_INT(json_walk_next(&w2, &k, &kn, &v, &vn), 0);
	CHECK_INT(json_walk_next(&w2, &k, &kn, &v, &vn), 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 1);
	CHECK(kn == 4 && memcmp(k, "b\\\"c", 4) == 0 && vn == 6);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 1);
	CHECK(vn == 6 && memcmp(v, "-1.5e3", 6) == 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 1);
	CHECK(vn == 4 && memcmp(v, "true", 4) == 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 1);
	CHECK(kn == 1 && k[0] == 'o' && vn == 11);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 0);
	/* malformed */
	CHECK_INT(json_walk_init(&w, "\"s\"", 3), -1);
	CHECK_INT(json_walk_init(&w, "{\"a\" 1}", 7), 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), -1);
	CHECK_INT(json_walk_init(&w, "{\"a\": [1, 2}", 12), 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), -1);
	CHECK_INT(json_walk_init(&w, "[\"abc", 5), 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), -1);
	CHECK_INT(json_walk_init(&w, "[1", 2), 0);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), 1);
	CHECK_INT(json_walk_next(&w, &k, &kn, &v, &vn), -1);
}

TEST(json_str_buf_unescapes_all)
{
	static const char J[] = "[\"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\u20ac\\ud83d\\ude00"
	    "\\udc00\\ud800x\\uzzzzq\", 5]";
	struct json_doc d;
	struct buf b = BUF_INIT, small;
	char	 err[64];

	CHECK_INT(json_parse(J, strlen(J), &d, err, sizeof(err)), 0);
	CHECK(json_str_buf(&d, d.n[0].child, &b));
	CHECK_STR(b.data, "a\"b\\c/d\n\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
	    "\xef\xbf\xbd\xef\xbf\xbdx\xef\xbf\xbdzzzzq");
	CHECK(!json_str_buf(&d, d.n[d.n[0].child].next, &b));	/* a number */
	buf_init(&small, 4);
	CHECK(!json_str_buf(&d, d.n[0].child, &small));	/* past the limit */
	CHECK_INT(small.len, 0);
	buf_free(&small);
	buf_free(&b);
	json_free(&d);
}

int
main(int argc, char **argv)
{
	T_PROG("test_report_html");
	if (argc == 3)
		return hook(argv[1], argv[2]);
	RUN(renders_host_summary_and_every_finding);
	RUN(no_external_resource_and_strict_csp);
	RUN(escapes_hostile_strings);
	RUN(refuses_what_is_not_a_report);
	RUN(write_error_reported);
	RUN(healthy_report);
	RUN(hundred_thousand_events);
	RUN(json_walk_members);
	RUN(json_str_buf_unescapes_all);
	return t_done();
}
