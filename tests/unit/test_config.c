/*
 * config: agent.yaml and liagent.ini loading, every key (set and default),
 * every error path with its FILE:LINE:COL, the print/reload round trip.
 */
#include <sys/stat.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/config/config.h"
#include "../../collectors/logwatch/rules_conf.h"
#include "../../output/cfapi.h"
#include "../../output/file.h"
#include "../../output/http.h"
#include "../../output/sink.h"
#include "../../output/syslog.h"
#include "../../agent/lib/redact.h"
#include "../../agent/reload.h"

#define FIX "tests/fixtures/config/"

static char tmpdir[256];
static char cfgpath[300];

/* Every message the loader reported, one per line. */
struct msgs {
	char	text[32768];
	int	nerr, nwarn;
};
static struct msgs M;

static void
collect(void *arg, bool is_error, const char *msg)
{
	struct msgs *m = arg;
	size_t o = strlen(m->text);

	if (is_error)
		m->nerr++;
	else
		m->nwarn++;
	snprintf(m->text + o, sizeof(m->text) - o, "%s\n", msg);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		printf("FAIL: setup: cannot write %s\n", path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* Load text as FILE (tmpdir/name); messages land in M. */
static struct config *
load_named(const char *name, const char *text)
{
	snprintf(cfgpath, sizeof(cfgpath), "%s/%s", tmpdir, name);
	write_file(cfgpath, text);
	memset(&M, 0, sizeof(M));
	return config_load(cfgpath, collect, &M);
}

static struct config *
load(const char *text)
{
	return load_named("agent.yaml", text);
}

/*
 * M has a line "<cfgpath>:<rest>" (rest = "LINE:COL: message..."), or,
 * when rest does not start with a line number, a line of cfgpath's that
 * contains rest.
 */
static bool
has_msg(const char *rest)
{
	char want[1024];
	const char *p = M.text;

	snprintf(want, sizeof(want), "%s:%s", cfgpath, rest);
	if (rest[0] >= '0' && rest[0] <= '9')
		return strstr(M.text, want) != NULL;
	while (*p != '\0') {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[2048];

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strncmp(line, cfgpath, strlen(cfgpath)) == 0 &&
		    strstr(line, rest) != NULL)
			return true;
		p += n + (e != NULL);
	}
	return false;
}

#define CHECK_MSG(rest) do {						\
	if (!has_msg(rest))						\
		T_FAILF("no message \"%s\" in:\n%s", rest, M.text);	\
} while (0)

/* Load text that must fail with exactly one error, at rest. */
#define CHECK_ONE_ERROR(text, rest) do {				\
	struct config *t_c = load(text);				\
	CHECK(t_c == NULL);						\
	CHECK_INT(M.nerr, 1);						\
	CHECK_MSG(rest);						\
	config_free(t_c);						\
} while (0)

static const struct filelog_conf *
filelog(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nfilelogs; i++)
		if (strcmp(c->filelogs[i].name, name) == 0)
			return &c->filelogs[i];
	return NULL;
}

static const struct dest_conf *
server(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nservers; i++)
		if (strcmp(c->servers[i].name, name) == 0)
			return &c->servers[i];
	return NULL;
}

static char *
print_to_string(const struct config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	if (config_print(c, f) != 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/* ------------------------------------------------------------------ */

static void
check_defaults(const struct config *c)
{
	const struct dest_conf *d = &c->server;
	static const struct { const char *n; int iv; } col[] = {
		{ "nic", 60 }, { "datastore", 30 }, { "vsan", 300 },
		{ "smart", 3600 }, { "agent", 300 }, { "logwatch", 1 },
		{ "diagnosis", 10 },
	};
	const struct collector_conf *rc = config_collector(c, "receiver");
	static const char *const fl[] = { "vmkernel", "vobd", "hostd" };

	CHECK_STR(d->name, "server");
	CHECK_STR(d->hostname, "");
	CHECK_INT(d->proto, PROTO_CFAPI);
	CHECK_INT(d->port, 0);
	CHECK(d->ssl);
	CHECK_STR(d->ssl_ca_path, "");
	CHECK(!d->ssl_accept_any);
	CHECK_STR(d->ssl_cn, "");
	CHECK_INT(d->reconnect, 30);
	CHECK_STR(d->agent_id, "");
	CHECK_STR(syslog_opts(d)->transport, "tcp");
	CHECK_STR(syslog_opts(d)->format, "rfc5424");
	CHECK_STR(syslog_opts(d)->framing, "octet-counting");
	CHECK_STR(http_opts(d)->url, "");
	CHECK_INT(cfapi_opts(d)->headers.n, 0);
	CHECK_STR(cfapi_opts(d)->compress, "gzip");
	CHECK_STR(file_opts(d)->path, "");
	CHECK_STR(syslog_opts(d)->facility, "local4");
	CHECK_STR(syslog_opts(d)->sd_id, "esxwatch@32473");
	CHECK_INT(syslog_opts(d)->max_message_size, 2048);
	CHECK_INT(d->timeout, 30);
	CHECK_INT(c->nservers, 0);
	CHECK_STR(c->storage_directory, "");
	CHECK_INT(c->max_disk_buffer, 200);
	CHECK_INT(c->max_disk_buffer_kb, 0);
	CHECK_INT(c->segment_kb, 0);
	CHECK_INT(c->debug_level, 0);
	CHECK_STR(c->log_file, "");
	CHECK_INT(c->batch_max_events, 500);
	CHECK_INT(c->batch_max_bytes, 1048576);
	CHECK_INT(c->batch_flush_interval, 1);
	CHECK_STR(c->platform, "auto");
	CHECK_STR(c->tools_dir, "");
	CHECK_STR(c->log_dir, "");
	CHECK_STR(c->hostname, "");
	CHECK_INT(c->tags.n, 0);
	/* and receiver, off while receiver.syslog is empty */
	CHECK_INT(c->ncollectors, 8);
	CHECK(rc != NULL && !rc->enabled);
	for (size_t i = 0; i < 7; i++) {
		const struct collector_conf *cc = config_collector(c, col[i].n);

		CHECK(cc != NULL);
		if (cc == NULL)
			continue;
		CHECK(cc->enabled);
		CHECK_INT(cc->interval, col[i].iv);
		CHECK_INT(cc->include.n, 0);
		CHECK_INT(cc->exclude.n, 0);
		CHECK_INT(cc->timeout, 30);
	}
	{
		const struct collector_conf *dg = config_collector(c, "diagnosis");

		/* its own keys' block (collectors/diagnosis.c: five ints) */
		CHECK(dg != NULL && dg->opts != NULL);
		if (dg != NULL && dg->opts != NULL) {
			const int *o = dg->opts;

			CHECK_INT(o[0], 300);		/* window */
			CHECK_INT(o[1], 5);		/* flap_count */
			CHECK_INT(o[2], 300);		/* flap_window */
			CHECK_INT(o[3], 86400);		/* drive_window */
			CHECK_INT(o[4], 300);		/* silent_after */
		}
	}
	CHECK(config_collector(c, "nosuch") == NULL);
	CHECK_INT(c->nfilelogs, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct filelog_conf *f = filelog(c, fl[i]);
		char inc[64];

		CHECK(f != NULL);
		if (f == NULL)
			continue;
		snprintf(inc, sizeof(inc), "%s.log", fl[i]);
		CHECK_STR(f->directory, "/var/log");
		CHECK_INT(f->include.n, 1);
		if (f->include.n == 1)
			CHECK_STR(f->include.v[0], inc);
		CHECK_INT(f->exclude.n, 0);
		CHECK(f->event_marker == NULL);
		CHECK_INT(f->tags.n, 0);
		CHECK_INT(f->forward, FORWARD_MATCHES);
		CHECK(!f->read_from_head);
		CHECK(f->enabled);
	}
	CHECK_INT(c->nrules, 0);
	CHECK_STR(c->rules_file, "");
}

TEST(defaults_from_config_default)
{
	struct config *c = config_default();

	CHECK(c != NULL);
	check_defaults(c);
	CHECK(!c->is_ini);
	config_free(c);
}

TEST(defaults_from_empty_and_comment_only_files)
{
	struct config *c = load("");

	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	if (c)
		check_defaults(c);
	config_free(c);
	c = load("# nothing but a comment\n---\n");
	CHECK(c != NULL);
	if (c)
		check_defaults(c);
	config_free(c);
	/* empty sections are all defaults too */
	c = load("server:\nstorage:\ncollectors:\n  nic:\n");
	CHECK(c != NULL);
	if (c)
		check_defaults(c);
	config_free(c);
}

/* The repository's agent.yaml writes out the defaults, every value as documented. */
TEST(repo_agent_yaml_is_the_defaults)
{
	struct config *c;

	memset(&M, 0, sizeof(M));
	snprintf(cfgpath, sizeof(cfgpath), "agent.yaml");
	c = config_load("agent.yaml", collect, &M);
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	CHECK_INT(M.nwarn, 0);
	if (c == NULL)
		return;
	CHECK_STR(c->server.hostname, "");	/* make run: stdout */
	/* The example keeps the built-in catalogue as it is: its rule
	 * override is a commented example. */
	CHECK_INT(c->nrules, 0);
	/* everything else as config_default() */
	rule_conf_free_array(c->rules, c->nrules);
	c->rules = NULL;
	c->nrules = 0;
	check_defaults(c);
	config_free(c);
}

TEST(every_key_set)
{
	struct config *c;
	const struct dest_conf *d, *w, *a, *l;
	const struct collector_conf *cc;
	const struct filelog_conf *f;

	memset(&M, 0, sizeof(M));
	c = config_load(FIX "full.yaml", collect, &M);
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	if (c == NULL) {
		printf("%s", M.text);
		return;
	}
	d = &c->server;
	CHECK_STR(c->path, FIX "full.yaml");
	CHECK_STR(d->hostname, "li.example.com");
	CHECK_INT(d->proto, PROTO_SYSLOG);
	CHECK_INT(d->port, 1514);
	CHECK(!d->ssl);
	CHECK_STR(d->ssl_ca_path, "/etc/ssl/li-ca.pem");
	CHECK(d->ssl_accept_any);
	CHECK_STR(d->ssl_cn, "loginsight.example.com");
	CHECK_INT(d->reconnect, 15);
	CHECK_STR(d->agent_id, "4f1c2d3e-0000-4a4a-8b8b-123456789abc");
	CHECK_STR(syslog_opts(d)->transport, "tcp");
	CHECK_STR(syslog_opts(d)->format, "rfc3164");
	CHECK_STR(syslog_opts(d)->framing, "newline");
	CHECK_STR(http_opts(d)->url, "http://ignored.example.com/x");
	CHECK_STR(kvlist_get(&cfapi_opts(d)->headers, "X-Test"), "1");
	CHECK_STR(cfapi_opts(d)->compress, "none");
	CHECK_STR(file_opts(d)->path, "/tmp/esxwatch-events.json");
	CHECK_STR(syslog_opts(d)->facility, "local7");
	CHECK_STR(syslog_opts(d)->sd_id, "test@12345");
	CHECK_INT(syslog_opts(d)->max_message_size, 4096);
	CHECK_INT(d->timeout, 10);

	CHECK_INT(c->nservers, 3);
	w = server(c, "web");
	a = server(c, "archive");
	l = server(c, "local");
	CHECK(w != NULL && a != NULL && l != NULL);
	if (w && a && l) {
		CHECK_INT(w->proto, PROTO_HTTP);
		CHECK_STR(http_opts(w)->url, "https://collector.example.com:8443/ingest");
		CHECK_STR(kvlist_get(&http_opts(w)->headers, "Authorization"),
		    "Bearer abc==");
		CHECK_STR(kvlist_get(&http_opts(w)->headers, "X-Scope"), "esx");
		CHECK_INT(http_opts(w)->headers.n, 2);
		CHECK_STR(http_opts(w)->format, "json_array");
		CHECK_INT(dest_port(w), 443);
		/* servers do not inherit from server: */
		CHECK_INT(w->reconnect, 30);
		CHECK_STR(a->hostname, "10.0.0.5");
		CHECK_INT(a->proto, PROTO_SYSLOG);
		CHECK_STR(syslog_opts(a)->transport, "udp");
		CHECK(!a->ssl);		/* UDP: TLS off unless asked */
		CHECK_INT(dest_port(a), 514);
		CHECK_INT(l->proto, PROTO_FILE);
		CHECK_STR(file_opts(l)->path, "-");
		CHECK_INT(dest_port(l), 0);
	}
	CHECK_STR(c->storage_directory, "/scratch/esxwatch-test");
	CHECK_INT(c->max_disk_buffer, 1000);
	CHECK_INT(c->debug_level, 2);
	CHECK_STR(c->log_file, "/var/log/esxwatch.log");
	CHECK_INT(c->batch_max_events, 100);
	CHECK_INT(c->batch_max_bytes, 65536);
	CHECK_INT(c->batch_flush_interval, 5);
	CHECK_STR(c->platform, "esxi");
	CHECK_STR(c->tools_dir, "/opt/tools");
	CHECK_STR(c->log_dir, "/var/run/log");
	CHECK_STR(c->hostname, "esx01.example.com");
	CHECK_INT(c->tags.n, 2);
	CHECK_STR(kvlist_get(&c->tags, "vmw_datacenter"), "dc1");
	CHECK_STR(kvlist_get(&c->tags, "env"), "prod");

	cc = config_collector(c, "nic");
	CHECK(cc && !cc->enabled && cc->interval == 10 && cc->timeout == 5);
	if (cc && cc->include.n == 2 && cc->exclude.n == 1) {
		CHECK_STR(cc->include.v[0], "vmnic0");
		CHECK_STR(cc->include.v[1], "vmnic1*");
		CHECK_STR(cc->exclude.v[0], "vmnic9");
	} else
		T_FAILF("nic include/exclude");
	cc = config_collector(c, "datastore");
	CHECK(cc && cc->enabled && cc->interval == 20 && cc->timeout == 40);
	if (cc && cc->include.n == 2) {	/* ;-separated string */
		CHECK_STR(cc->include.v[0], "naa.*");
		CHECK_STR(cc->include.v[1], "t10.*");
	} else
		T_FAILF("datastore include");
	cc = config_collector(c, "vsan");
	CHECK(cc && !cc->enabled && cc->interval == 600);
	cc = config_collector(c, "smart");
	CHECK(cc && cc->enabled && cc->interval == 7200 && cc->exclude.n == 1);
	cc = config_collector(c, "agent");
	CHECK(cc && cc->interval == 60);
	cc = config_collector(c, "logwatch");
	CHECK(cc && !cc->enabled && cc->interval == 2);

	/* filelog: replaces the defaults: vmkernel and vobd, no hostd */
	CHECK_INT(c->nfilelogs, 2);
	CHECK(filelog(c, "hostd") == NULL);
	f = filelog(c, "vmkernel");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->directory, "/var/run/log");  /* host.log_dir */
		CHECK_INT(f->include.n, 2);
		if (f->include.n == 2)
			CHECK_STR(f->include.v[1], "vmkwarning.log");
		CHECK_INT(f->exclude.n, 1);
		CHECK_INT(f->forward, FORWARD_ALL);
		CHECK(f->read_from_head);
		CHECK(f->enabled);
		CHECK_STR(kvlist_get(&f->tags, "esx_log"), "vmkernel");
		CHECK(f->event_marker == NULL);
	}
	f = filelog(c, "vobd");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->directory, "/var/log");
		CHECK_STR(f->event_marker, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T");
		CHECK(!f->enabled);
		CHECK_INT(f->forward, FORWARD_MATCHES);
	}

	CHECK_INT(c->nrules, 2);
	if (c->nrules == 2) {
		const struct rule_conf *r = &c->rules[0];

		CHECK_STR(r->name, "apd_start");
		CHECK_STR(r->match, "has entered the All Paths Down state");
		CHECK(r->regex == NULL);
		CHECK_STR(r->severity, "critical");
		CHECK_INT(r->files.n, 2);
		CHECK_STR(r->hint, "All paths down: check the array, fabric "
		    "and CRC counters.");
		CHECK_INT(r->enabled, 1);
		CHECK_STR(r->vob_id, "esx.problem.storage.apd.start");
		CHECK_STR(r->literal, "All Paths Down");
		CHECK_STR(r->src_file, FIX "full.yaml");
		CHECK_INT(r->src_line, 79);
		r = &c->rules[1];
		CHECK_STR(r->name, "nic_down");
		CHECK(r->match == NULL);
		CHECK_STR(r->regex, "vmnic([0-9]+).*link (down|up)");
		CHECK_STR(r->severity, "warning");	/* default */
		CHECK_INT(r->files.n, 1);
		CHECK(r->hint == NULL && r->vob_id == NULL &&
		    r->literal == NULL);
		CHECK_INT(r->enabled, 0);
		CHECK_INT(r->src_line, 86);
	}
	CHECK_STR(c->rules_file, "/opt/esxwatch/rules/custom.yaml");
	config_free(c);
}

TEST(booleans_every_spelling)
{
	static const struct { const char *s; bool v; } b[] = {
		{ "yes", true }, { "Yes", true }, { "YES", true },
		{ "true", true }, { "True", true }, { "on", true },
		{ "ON", true }, { "no", false }, { "No", false },
		{ "false", false }, { "FALSE", false }, { "off", false },
		{ "Off", false }, { "\"yes\"", true },
	};
	char text[128];

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		struct config *c;

		snprintf(text, sizeof(text), "server:\n  ssl_accept_any: %s\n",
		    b[i].s);
		c = load(text);
		CHECK(c != NULL);
		if (c && c->server.ssl_accept_any != b[i].v)
			T_FAILF("bool '%s'", b[i].s);
		config_free(c);
	}
	CHECK_ONE_ERROR("server:\n  ssl: maybe\n", "2:8: 'ssl': expected a "
	    "boolean (yes/no/true/false/on/off), got 'maybe'");
	CHECK_ONE_ERROR("server:\n  ssl: 1\n", "2:8: 'ssl': expected a "
	    "boolean");
}

TEST(numbers_and_ranges)
{
	struct config *c;

	CHECK_ONE_ERROR("server:\n  port: abc\n",
	    "2:9: 'port': expected a number, got 'abc'");
	CHECK_ONE_ERROR("server:\n  port: 70000\n",
	    "2:9: 'port': 70000 is out of range 0..65535");
	CHECK_ONE_ERROR("server:\n  port: -1\n",
	    "2:9: 'port': -1 is out of range 0..65535");
	CHECK_ONE_ERROR("server:\n  port: 0x10\n",
	    "2:9: 'port': expected a number, got '0x10'");
	CHECK_ONE_ERROR("server:\n  port: 99999999999999999999999\n",
	    "2:9: 'port': 99999999999999999999999 is out of range");
	CHECK_ONE_ERROR("server:\n  port:\n",
	    "'port': expected a number, got an empty value");
	CHECK_ONE_ERROR("server:\n  reconnect: -5\n",
	    "2:14: 'reconnect': -5 is out of range 0..");
	CHECK_ONE_ERROR("batch:\n  max_events: 501\n",
	    "2:15: 'max_events': 501 is out of range 1..500");
	CHECK_ONE_ERROR("batch:\n  max_events: 0\n",
	    "2:15: 'max_events': 0 is out of range 1..500");
	CHECK_ONE_ERROR("batch:\n  max_bytes: 1023\n",
	    "2:14: 'max_bytes': 1023 is out of range 1024..4194304");
	CHECK_ONE_ERROR("batch:\n  max_bytes: 4194305\n",
	    "2:14: 'max_bytes': 4194305 is out of range 1024..4194304");
	CHECK_ONE_ERROR("batch:\n  flush_interval: 0\n",
	    "2:19: 'flush_interval': 0 is out of range 1..");
	CHECK_ONE_ERROR("logging:\n  debug_level: 3\n",
	    "2:16: 'debug_level': 3 is out of range 0..2");
	CHECK_ONE_ERROR("storage:\n  max_disk_buffer: 0\n",
	    "2:20: 'max_disk_buffer': 0 is out of range 1..");
	CHECK_ONE_ERROR("storage:\n  segment_kb: 65537\n",
	    "2:15: 'segment_kb': 65537 is out of range 0..65536");
	CHECK_ONE_ERROR("storage:\n  max_disk_buffer_kb: -1\n",
	    "2:23: 'max_disk_buffer_kb': -1 is out of range 0..");
	CHECK_ONE_ERROR("collectors:\n  nic: { interval: 0 }\n",
	    "2:20: 'interval': 0 is out of range 1..");
	CHECK_ONE_ERROR("collectors:\n  smart: { timeout: 0 }\n",
	    "2:21: 'timeout': 0 is out of range 1..3600");
	/* edges are fine; a quoted number is a number */
	c = load("server:\n  port: 65535\n  reconnect: 0\nbatch:\n"
	    "  max_events: 1\n  max_bytes: \"4194304\"\n");
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->server.port, 65535);
		CHECK_INT(c->server.reconnect, 0);
		CHECK_INT(c->batch_max_events, 1);
		CHECK_INT(c->batch_max_bytes, 4194304);
	}
	config_free(c);
}

TEST(enums)
{
	CHECK_ONE_ERROR("server:\n  proto: tcp\n", "2:10: 'proto': expected "
	    "one of cfapi, syslog, http, file, splunk_hec, elasticsearch, otlp, loki, gelf; got 'tcp'");
	CHECK_ONE_ERROR("server:\n  transport: sctp\n",
	    "2:14: 'transport': expected one of udp, tcp; got 'sctp'");
	CHECK_ONE_ERROR("server:\n  framing: lf\n",
	    "2:12: 'framing': expected one of octet-counting, newline");
	CHECK_ONE_ERROR("server:\n  compress: zstd\n",
	    "2:13: 'compress': expected one of gzip, none; got 'zstd'");
	CHECK_ONE_ERROR("server:\n  facility: local9\n",
	    "2:13: 'facility': expected one of kern,");
	CHECK_ONE_ERROR("host:\n  platform: windows\n",
	    "2:13: 'platform': expected one of auto, esxi, linux");
	CHECK_ONE_ERROR("filelog:\n  x: { forward: some }\n",
	    "2:17: 'forward': expected one of matches, all; got 'some'");
	CHECK_ONE_ERROR("rules:\n  - name: r\n    match: m\n    severity: "
	    "fatal\n", "4:15: 'severity': expected one of info, warning, "
	    "error, critical; got 'fatal'");
}

TEST(format_depends_on_proto)
{
	struct config *c;

	CHECK_ONE_ERROR("server:\n  proto: syslog\n  format: json_lines\n",
	    "3:11: 'format': 'json_lines' does not apply to proto syslog");
	CHECK_ONE_ERROR("server:\n  proto: http\n  format: rfc3164\n",
	    "3:11: 'format': 'rfc3164' does not apply to proto http");
	CHECK_ONE_ERROR("server:\n  format: xml\n", "2:11: 'format': "
	    "expected one of rfc5424, rfc3164, json_lines, json_array");
	c = load("server:\n  proto: http\n");
	CHECK(c != NULL);
	if (c)
		CHECK_STR(http_opts(&c->server)->format, "json_lines");
	config_free(c);
	c = load("server:\n  proto: syslog\n  format: rfc3164\n");
	CHECK(c != NULL);
	if (c)
		CHECK_STR(syslog_opts(&c->server)->format, "rfc3164");
	config_free(c);
}

/* How many times line occurs in text. */
static int
count_lines(const char *text, const char *line)
{
	int n = 0;

	for (const char *p = strstr(text, line); p != NULL;
	    p = strstr(p + 1, line))
		n++;
	return n;
}

/* A key two sinks declare (format: syslog and http; headers, compress:
 * cfapi and http) is one key: it reaches the sink in use wherever proto
 * is written, is checked once and printed once. */
TEST(a_key_two_sinks_declare)
{
	struct config *c = load("server:\n  format: json_array\n"
	    "  compress: none\n  headers: { X-A: b }\n  proto: http\n"
	    "  url: http://x.example.com/\n");
	char *p;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_STR(http_opts(&c->server)->format, "json_array");
	CHECK_STR(http_opts(&c->server)->compress, "none");
	CHECK_STR(kvlist_get(&http_opts(&c->server)->headers, "X-A"), "b");
	CHECK_STR(cfapi_opts(&c->server)->compress, "none");
	p = print_to_string(c);
	CHECK(p != NULL);
	if (p != NULL) {
		CHECK_INT(count_lines(p, "  format: json_array\n"), 1);
		CHECK_INT(count_lines(p, "  compress: none\n"), 1);
		CHECK_INT(count_lines(p, "    \"X-A\": \"b\"\n"), 1);
	}
	free(p);
	config_free(c);
	CHECK_ONE_ERROR("server:\n  headers: { \"a b\": x, Y: z }\n  proto: "
	    "http\n", "2:14: 'headers': 'a b' is not a valid HTTP header name");
}

TEST(syslog_udp_and_tls)
{
	struct config *c = load("server:\n  proto: syslog\n  transport: udp\n");

	CHECK(c != NULL);
	if (c) {
		CHECK(!c->server.ssl);
		CHECK_INT(dest_port(&c->server), 514);
	}
	config_free(c);
	CHECK_ONE_ERROR("server:\n  proto: syslog\n  transport: udp\n  ssl: "
	    "yes\n", "4:8: 'ssl': syslog over UDP cannot use TLS");
}

TEST(required_values)
{
	CHECK_ONE_ERROR("servers:\n  two: { proto: syslog }\n",
	    "2:3: servers.two: 'hostname' is required for proto syslog");
	CHECK_ONE_ERROR("servers:\n  two: { port: 9000 }\n",
	    "2:3: servers.two: 'hostname' is required for proto cfapi");
	CHECK_ONE_ERROR("servers:\n  two: { proto: http }\n",
	    "2:3: servers.two: 'url' or 'hostname' is required for proto http");
	CHECK_ONE_ERROR("rules:\n  - match: x\n",
	    "2:5: rules: item 1 has no 'name'");
	CHECK_ONE_ERROR("rules:\n  - name: r\n    severity: info\n",
	    "2:5: rule 'r': exactly one of 'match' or 'regex' is required");
	CHECK_ONE_ERROR("rules:\n  - name: r\n    match: a\n    regex: b\n",
	    "2:5: rule 'r': exactly one of 'match' or 'regex' is required");
	CHECK_ONE_ERROR("rules:\n  - name: r\n    match: \"\"\n",
	    "3:12: 'match' must not be empty");
	/* empty values count as absent (found by fuzz_config) */
	CHECK_ONE_ERROR("rules:\n  - name: r\n    match:\n",
	    "2:5: rule 'r': exactly one of 'match' or 'regex' is required");
	CHECK_ONE_ERROR("rules:\n  - name:\n    match: m\n",
	    "2:5: rules: item 1 has no 'name'");
	CHECK_ONE_ERROR("rules:\n  - name: ''\n    match: m\n",
	    "2:11: 'name': '' must be 1 to 64 of");
}

TEST(unknown_keys_with_position)
{
	CHECK_ONE_ERROR("server:\n  hostnme: x\n", "2:3: unknown key "
	    "'hostnme' in section 'server' (did you mean 'hostname'?)");
	CHECK_ONE_ERROR("# c\nsever:\n  hostname: x\n", "2:1: unknown key "
	    "'sever' at the top level (did you mean 'server'?)");
	CHECK_ONE_ERROR("servers:\n  b:\n    hostname: h\n    prot: syslog\n",
	    "4:5: unknown key 'prot' in section 'servers.b'");
	CHECK_ONE_ERROR("collectors:\n  nic: { intervall: 5 }\n",
	    "2:10: unknown key 'intervall' in section 'collectors.nic'");
	CHECK_ONE_ERROR("collectors:\n  nics: {}\n",
	    "2:3: unknown collector 'nics' in section 'collectors'");
	CHECK_ONE_ERROR("filelog:\n  f:\n    dir: /x\n",
	    "3:5: unknown key 'dir' in section 'filelog.f'");
	CHECK_ONE_ERROR("rules:\n  - name: r\n    match: m\n    sev: info\n",
	    "4:5: unknown key 'sev' in section 'rules[1]'");
	CHECK_ONE_ERROR("storage:\n  dir: /x\n",
	    "2:3: unknown key 'dir' in section 'storage'");
}

TEST(wrong_node_types)
{
	CHECK_ONE_ERROR("server: [a, b]\n",
	    "1:9: 'server': expected a mapping, got a list");
	CHECK_ONE_ERROR("server:\n  port: { a: 1 }\n",
	    "2:9: 'port': expected a number, got a mapping");
	CHECK_ONE_ERROR("server:\n  proto: [cfapi]\n", "2:10: 'proto': "
	    "expected one of cfapi, syslog, http, file, splunk_hec, elasticsearch, otlp, loki, gelf; got a list");
	CHECK_ONE_ERROR("server:\n  hostname: [a]\n",
	    "2:13: 'hostname': expected a string, got a list");
	CHECK_ONE_ERROR("tags: [a]\n",
	    "1:7: 'tags': expected a mapping, got a list");
	CHECK_ONE_ERROR("tags:\n  a: { b: c }\n",
	    "2:6: 'tags': the value of 'a' must be a string, got a mapping");
	CHECK_ONE_ERROR("collectors:\n  nic: { include: { a: b } }\n",
	    "2:19: 'include': expected a list or a ;-separated string, "
	    "got a mapping");
	CHECK_ONE_ERROR("collectors:\n  nic: { include: [a, [b]] }\n",
	    "2:23: 'include': a list item must be a non-empty string");
	CHECK_ONE_ERROR("rules: { name: x }\n",
	    "1:8: 'rules': expected a list of rules, got a mapping");
	CHECK_ONE_ERROR("rules:\n  - just a string\n",
	    "2:5: rules: item 1 must be a mapping");
	CHECK_ONE_ERROR("- a\n- b\n", "1:1: the top level must be a mapping");
	CHECK_ONE_ERROR("? [a]\n: b\n",
	    "1:3: a mapping key must be a plain value, not a list");
}

/* Regexes are PCRE2's: refused exactly when PCRE2 refuses them, at the key. */
TEST(regex_errors)
{
	struct config *c;

	CHECK_ONE_ERROR("rules:\n  - name: r\n    regex: \"a(b\"\n",
	    "3:12: 'regex': invalid regular expression: missing closing "
	    "parenthesis (at offset 3");
	CHECK(strstr(M.text, "(rule 'r' at line 2)") != NULL);
	CHECK_ONE_ERROR("filelog:\n  f:\n    event_marker: \"[a-\"\n",
	    "3:19: 'event_marker': invalid regular expression: missing "
	    "terminating ] for character class");
	CHECK_ONE_ERROR("rules:\n  - name: r\n    regex: '(?<Dev>x)'\n",
	    "3:12: 'regex': a group name (?<name>...) must match");
	/* Perl's classes work inside and outside brackets (liagent's markers) */
	c = load("rules:\n  - name: r\n    regex: '^\\d+ [\\s]x (?:a|b)'\n"
	    "filelog:\n  f:\n    event_marker: '^\\d{4}-\\d{2}-\\d{2}[\\s]\\d{2}:'\n");
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	config_free(c);
}

/* A refused URL is echoed without its password. */
TEST(bad_url_error_hides_credentials)
{
	CHECK_ONE_ERROR("server:\n  url: 'ftp://u:s3cret@h/x'\n",
	    "2:8: 'url': 'ftp://***@h/x' is not an http:// or https:// URL");
	CHECK(strstr(M.text, "s3cret") == NULL);
	CHECK_ONE_ERROR("server:\n  url: 'https://h/a b'\n",
	    "2:8: 'url': 'https://h/a b' is not an http:// or https:// URL");
}

/* A URL's user information and secret-named query values are hidden,
 * nothing else; the result is always terminated. */
TEST(redact_url_hides_credentials_and_secret_parameters)
{
	char out[256], small[12], url[400];

	CHECK(redact_url("https://u:p@h:1/x?a=1&token=abc#f", "***", out,
	    sizeof(out)));
	CHECK_STR(out, "https://***@h:1/x?a=1&token=***#f");
	CHECK(redact_url("http://h/x?API_KEY=k&sig=&pwd=p;Password=q", "<r>",
	    out, sizeof(out)));
	CHECK_STR(out, "http://h/x?API_KEY=<r>&sig=&pwd=<r>;Password=<r>");
	CHECK(!redact_url("http://h/p@th?x=1&monkey", "***", out, sizeof(out)));
	CHECK_STR(out, "http://h/p@th?x=1&monkey");
	CHECK(redact_url("http://a@b@h?secret=1", "***", out, sizeof(out)));
	CHECK_STR(out, "http://***@h?secret=***");
	/* a fragment is read like a query: OAuth's #access_token=... */
	CHECK(redact_url("http://h/#?token=x", "***", out, sizeof(out)));
	CHECK_STR(out, "http://h/#?token=***");
	CHECK(redact_url("https://h/cb?state=1#access_token=abc&x=2", "***", out,
	    sizeof(out)));
	CHECK_STR(out, "https://h/cb?state=1#access_token=***&x=2");
	CHECK(!redact_url("http://h/x#section", "***", out, sizeof(out)));
	CHECK_STR(out, "http://h/x#section");
	(void)redact_url("http://u:p@host/", "***", small, sizeof(small));
	CHECK_STR(small, "http://***@");
	/* an error cut to fit never shows what the cut would have hidden */
	snprintf(url, sizeof(url), "server:\n  url: 'ftp://user:%0200d@h/x'\n", 7);
	CHECK(load(url) == NULL);
	CHECK(strstr(M.text, "user:") == NULL);
	CHECK(strstr(M.text, "ftp://***@h/x") != NULL);
}

/* At most 64 destinations: server and 63 servers load, the 64th of
 * servers is an error at its name, in YAML and in liagent.ini. */
TEST(at_most_64_destinations)
{
	char text[8192], ini[8192], want[128];
	size_t o = 0, io = 0;
	struct config *cfg;

	o += (size_t)snprintf(text + o, sizeof(text) - o, "servers:\n");
	for (int i = 0; i < 63; i++) {
		o += (size_t)snprintf(text + o, sizeof(text) - o,
		    "  d%d: {proto: file, path: /tmp/x}\n", i);
		io += (size_t)snprintf(ini + io, sizeof(ini) - io,
		    "[server|d%d]\nproto=syslog\nhostname=h\n", i);
	}
	cfg = load(text);
	CHECK(cfg != NULL);
	if (cfg != NULL)
		CHECK_INT(cfg->nservers, 63);
	config_free(cfg);
	snprintf(text + o, sizeof(text) - o, "  extra: {proto: file, path: /tmp/x}\n");
	snprintf(want, sizeof(want), "65:3: servers: 'extra' would be destination "
	    "65; at most 64");
	CHECK_ONE_ERROR(text, want);

	cfg = load_named("liagent.ini", ini);
	CHECK(cfg != NULL);
	config_free(cfg);
	snprintf(ini + io, sizeof(ini) - io, "[server|extra]\nhostname=h\n");
	cfg = load_named("liagent.ini", ini);
	CHECK(cfg == NULL);
	CHECK_INT(M.nerr, 1);
	CHECK_MSG("190:1: [server|extra] would be destination 65; at most 64");
	config_free(cfg);
}

/*
 * What made glibc's regcomp take gigabytes compiles in PCRE2 or is refused
 * by it with a reason; a catastrophic match is stopped by PCRE2's limits
 * at match time (test_rules, test_rx).
 */
TEST(regex_explosive_repetitions)
{
	struct config *c;

	CHECK_ONE_ERROR("rules:\n  - name: r\n    regex: 'a?+++++'\n",
	    "3:12: 'regex': invalid regular expression: quantifier does not "
	    "follow a repeatable item");
	CHECK_ONE_ERROR("filelog:\n  f:\n    event_marker: '^x**'\n",
	    "3:19: 'event_marker': invalid regular expression: quantifier "
	    "does not follow a repeatable item");
	c = load("rules:\n  - name: r\n    regex: 'x{2}+ ((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+) "
	    "(a{1000}){1000}'\n");
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	config_free(c);
	/* ordinary repetitions, bounds and brackets stay fine */
	c = load("rules:\n  - name: r\n    regex: '^[[:alpha:]+*]+ (a|b)?"
	    "[0-9]{1,3}(\\.[0-9]{1,3}){3} x\\++ (?<dev>[^] ]+)*$'\n");
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	config_free(c);
}

TEST(named_groups_and_disabling_rules)
{
	struct config *c = load("rules:\n"
	    "  - name: apd\n"
	    "    regex: 'identifier \\[(?<device>[^] ]+)\\]'\n"
	    "  - name: builtin_off\n"
	    "    enabled: no\n");

	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	if (c && c->nrules == 2) {
		CHECK_STR(c->rules[0].regex,
		    "identifier \\[(?<device>[^] ]+)\\]");
		CHECK_STR(c->rules[1].name, "builtin_off");
		CHECK(c->rules[1].match == NULL && c->rules[1].regex == NULL);
		CHECK_INT(c->rules[1].enabled, 0);
	} else
		T_FAILF("rules not loaded:\n%s", M.text);
	config_free(c);
	CHECK_ONE_ERROR("rules:\n  - name: a\n    match: x\n  - name: a\n"
	    "    match: y\n", "4:5: rule 'a' is defined twice (first at "
	    "line 2)");
}

TEST(duplicate_keys)
{
	CHECK_ONE_ERROR("server:\n  port: 1\n  ssl: no\n  port: 2\n",
	    "4:3: duplicate key 'port' (first defined at line 2, column 3)");
	CHECK_ONE_ERROR("server: {}\nstorage: {}\nserver: {}\n",
	    "3:1: duplicate key 'server' (first defined at line 1, column 1)");
	CHECK_ONE_ERROR("tags: { a: 1, b: 2, a: 3 }\n",
	    "1:21: duplicate key 'a'");
}

TEST(yaml_syntax_errors)
{
	CHECK_ONE_ERROR("server:\n  hostname: x\n port: 3\n",
	    "3:2: YAML syntax error: ");
	CHECK_ONE_ERROR("tags: { a: 1\n", "2:1: YAML syntax error: ");
	CHECK_ONE_ERROR("server:\n\thostname: x\n", "2:1: YAML syntax error: ");
	CHECK_ONE_ERROR("a: \"unterminated\n", "YAML syntax error: ");
	CHECK_ONE_ERROR("server: {}\n---\nserver: {}\n",
	    "2:1: only one YAML document is allowed");
	CHECK_ONE_ERROR("tags: &t { a: b }\nserver:\n  headers: *t\n",
	    "3:12: YAML aliases (*t) are not supported");
	CHECK_ONE_ERROR("tags: { a: \"x\\0y\" }\n",
	    "1:12: a value must not contain a NUL character");
	CHECK_ONE_ERROR("tags: { a: \"\xff\" }\n", "YAML error: ");
}

TEST(missing_file_and_directory)
{
	struct config *c;

	memset(&M, 0, sizeof(M));
	c = config_load("/nonexistent/esxwatch.yaml", collect, &M);
	CHECK(c == NULL);
	CHECK_INT(M.nerr, 1);
	CHECK_STR(M.text, "/nonexistent/esxwatch.yaml: cannot open: No such "
	    "file or directory\n");
	memset(&M, 0, sizeof(M));
	c = config_load(tmpdir, collect, &M);
	CHECK(c == NULL);
	CHECK(strstr(M.text, ": cannot read: Is a directory") != NULL);
}

/* Every error of a file, in file order, then the load fails. */
TEST(all_errors_reported_in_order)
{
	struct config *c = load(
	    "server:\n"
	    "  hostnme: x\n"		/* 2:3 */
	    "  port: abc\n"		/* 3:9 */
	    "  proto: tcp\n"		/* 4:10 */
	    "batch:\n"
	    "  max_events: 600\n"	/* 6:15 */
	    "  max_events: 5\n"		/* 7:3 duplicate */
	    "tags: { Bad-Name: 1 }\n"	/* 8:9 */
	    "colectors: {}\n");		/* 9:1 */
	const char *p;

	CHECK(c == NULL);
	CHECK_INT(M.nerr, 7);
	CHECK_MSG("2:3: unknown key 'hostnme'");
	CHECK_MSG("3:9: 'port': expected a number, got 'abc'");
	CHECK_MSG("4:10: 'proto'");
	CHECK_MSG("6:15: 'max_events': 600 is out of range 1..500");
	CHECK_MSG("7:3: duplicate key 'max_events'");
	CHECK_MSG("8:9: 'tags': tag name 'Bad-Name' is not a valid field");
	CHECK_MSG("9:1: unknown key 'colectors' at the top level (did you "
	    "mean 'collectors'?)");
	/* in file order although found in another */
	p = strstr(M.text, ":6:15:");
	CHECK(p != NULL && strstr(M.text, ":7:3:") > p);
	config_free(c);
}

TEST(tag_and_header_checks)
{
	CHECK_ONE_ERROR("tags: { timestamp: x }\n", "1:9: 'tags': 'timestamp' "
	    "is reserved by Log Insight");
	CHECK_ONE_ERROR("tags: { 1abc: x }\n", "1:9: 'tags': tag name '1abc'");
	CHECK_ONE_ERROR("server:\n  headers: { \"Bad Header\": x }\n",
	    "2:14: 'headers': 'Bad Header' is not a valid HTTP header name");
	CHECK_ONE_ERROR("server:\n  headers: { X-A: \"a\\r\\nX-B: b\" }\n",
	    "2:19: 'headers': a header value must not contain a line break");
	CHECK_ONE_ERROR("server:\n  url: ftp://x\n",
	    "2:8: 'url': 'ftp://x' is not an http:// or https:// URL");
	CHECK_ONE_ERROR("server:\n  hostname: \"a b\"\n",
	    "2:13: 'hostname': 'a b' is not a host name");
	CHECK_ONE_ERROR("server:\n  hostname: li:9000\n",
	    "2:13: 'hostname': 'li:9000' holds a port: use port: 9000");
	CHECK_ONE_ERROR("servers:\n  b: { hostname: \"li.example.com:9543\" }\n",
	    "2:18: 'hostname': 'li.example.com:9543' holds a port: use port: 9543");
	CHECK_ONE_ERROR("servers:\n  b: { hostname: \"[fe80::1]:9000\" }\n",
	    "2:18: 'hostname': '[fe80::1]:9000' holds a port: use port: 9000");
	CHECK_ONE_ERROR("server:\n  hostname: li:x\n",
	    "2:13: 'hostname': 'li:x' holds a port: give the host name alone");
	CHECK_ONE_ERROR("server:\n  hostname: https://li.example.com\n",
	    "2:13: 'hostname': 'https://li.example.com' holds a scheme: give the "
	    "host name alone; the protocol goes in proto: and ssl:");
	CHECK_ONE_ERROR("servers:\n  b: { proto: syslog, hostname: li/path }\n",
	    "2:33: 'hostname': 'li/path' holds a path: give the host name alone");
	CHECK_ONE_ERROR("filelog:\n  v: { include: /var/log/vmkernel.log }\n",
	    "2:17: 'include': '/var/log/vmkernel.log' holds a directory: include "
	    "holds globs of file names inside directory; use directory: "
	    "/var/log and include: vmkernel.log");
	CHECK_ONE_ERROR("filelog:\n  v:\n    include: [a.log, logs/b.log]\n",
	    "3:22: 'include': 'logs/b.log' holds a directory");
	CHECK_ONE_ERROR("filelog:\n  v: { exclude: \"x.log;/tmp/\" }\n",
	    "2:17: 'exclude': '/tmp/' is not a file name");
	CHECK_ONE_ERROR("server:\n  agent_id: \"../x\"\n",
	    "2:13: 'agent_id': '../x' must be at most 64 of");
	CHECK_ONE_ERROR("server:\n  sd_id: \"a b\"\n",
	    "2:10: 'sd_id': 'a b' is not an RFC 5424 SD-ID");
	CHECK_ONE_ERROR("filelog:\n  \"a/b\": {}\n",
	    "2:3: filelog: 'a/b' is not a valid name");
	CHECK_ONE_ERROR("servers:\n  \"\": { hostname: h }\n",
	    "2:3: servers: '' is not a valid name");
}

/* IPv6 literals are host names, bare or in brackets (not a port). */
TEST(ipv6_hostname_accepted)
{
	struct config *c = load("server:\n  hostname: \"fe80::1\"\n"
	    "servers:\n  b: { hostname: \"[2001:db8::5]\", proto: syslog }\n");

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_STR(c->server.hostname, "fe80::1");
	CHECK_INT(c->nservers, 1);
	CHECK_STR(c->servers[0].hostname, "[2001:db8::5]");
	CHECK_INT(M.nerr, 0);
	config_free(c);
}

TEST(filelog_replaces_defaults)
{
	struct config *c = load("filelog: {}\n");

	CHECK(c != NULL);
	if (c)
		CHECK_INT(c->nfilelogs, 0);
	config_free(c);
	c = load("filelog:\n");		/* empty = none as well */
	CHECK(c != NULL);
	if (c)
		CHECK_INT(c->nfilelogs, 0);
	config_free(c);
	c = load("host: { log_dir: /tmp/fake/log }\n"
	    "filelog:\n  mine: { include: x.log }\n");
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->nfilelogs, 1);
		CHECK_STR(c->filelogs[0].name, "mine");
		CHECK_STR(c->filelogs[0].directory, "/tmp/fake/log");
	}
	config_free(c);
	/* without filelog:, the defaults follow host.log_dir */
	c = load("host:\n  log_dir: /tmp/fake/log\n");
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->nfilelogs, 3);
		for (size_t i = 0; i < c->nfilelogs; i++)
			CHECK_STR(c->filelogs[i].directory, "/tmp/fake/log");
	}
	config_free(c);
	/* a rule naming a filelog that does not exist: a warning */
	c = load("filelog: { a: {} }\nrules:\n  - name: r\n    match: m\n"
	    "    files: [a, b]\n");
	CHECK(c != NULL);
	CHECK_INT(M.nwarn, 1);
	CHECK_MSG("3:1: warning: rule 'r': 'b' is not a filelog name");
	config_free(c);
}

TEST(strings_and_nulls)
{
	struct config *c = load("server:\n  hostname:\n  ssl_cn: ~\n"
	    "host:\n  hostname: 12345\n"
	    "tags:\n  empty:\n  quoted: \"a \\\"b\\\" \\\\ c\"\n"
	    "  unicode: \"caf\xc3\xa9 \\u2028\"\n");

	CHECK(c != NULL);
	if (c == NULL) {
		printf("%s", M.text);
		return;
	}
	CHECK_STR(c->server.hostname, "");
	CHECK_STR(c->server.ssl_cn, "");
	CHECK_STR(c->hostname, "12345");
	CHECK_STR(kvlist_get(&c->tags, "empty"), "");
	CHECK_STR(kvlist_get(&c->tags, "quoted"), "a \"b\" \\ c");
	CHECK_STR(kvlist_get(&c->tags, "unicode"), "caf\xc3\xa9 \xe2\x80\xa8");
	config_free(c);
}

/* ------------------------------------------------------------------ */

TEST(liagent_ini_mapping)
{
	struct config *c;
	const struct dest_conf *a;
	const struct filelog_conf *f;

	memset(&M, 0, sizeof(M));
	snprintf(cfgpath, sizeof(cfgpath), FIX "liagent.ini");
	c = config_load(FIX "liagent.ini", collect, &M);
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	if (c == NULL) {
		printf("%s", M.text);
		return;
	}
	CHECK(c->is_ini);
	CHECK_STR(c->server.hostname, "li-vip.corp.example");
	CHECK_INT(c->server.proto, PROTO_CFAPI);
	CHECK_INT(c->server.port, 9543);
	CHECK(c->server.ssl);
	CHECK_STR(c->server.ssl_ca_path, "/etc/pki/tls/certs/ca.pem");
	CHECK(!c->server.ssl_accept_any);
	CHECK_INT(c->server.reconnect, 20);
	CHECK_INT(c->nservers, 1);
	a = server(c, "archive");
	CHECK(a != NULL);
	if (a) {
		CHECK_STR(a->hostname, "syslog-archive.corp.example");
		CHECK_INT(a->proto, PROTO_SYSLOG);
		CHECK_INT(a->port, 514);
		CHECK(!a->ssl);
	}
	CHECK_INT(c->debug_level, 1);
	CHECK_INT(c->max_disk_buffer, 500);
	CHECK_INT(c->tags.n, 2);
	CHECK_STR(kvlist_get(&c->tags, "vmw_datacenter"), "dc1");
	CHECK_STR(kvlist_get(&c->tags, "env"), "prod");
	/* [filelog|...] sections replace the default filelogs */
	CHECK_INT(c->nfilelogs, 3);
	f = filelog(c, "syslog");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->directory, "/var/log");
		CHECK_INT(f->include.n, 3);
		if (f->include.n == 3) {
			CHECK_STR(f->include.v[0], "messages");
			CHECK_STR(f->include.v[1], "messages.?");
			CHECK_STR(f->include.v[2], "syslog");
		}
		CHECK_INT(f->exclude.n, 1);
		CHECK_STR(kvlist_get(&f->tags, "vmw_product"), "linux");
		CHECK_INT(f->forward, FORWARD_ALL);	/* liagent ships all */
	}
	f = filelog(c, "lighttpd");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->directory, "/opt/vmware/var/log/lighttpd");
		/* liagent's Perl regex, byte for byte: PCRE2 runs it as it is */
		CHECK_STR(f->event_marker, "^\\d{4}-\\d{2}-\\d{2}\\s"
		    "\\d{2}:\\d{2}:\\d{2}");
		CHECK_STR(kvlist_get(&f->tags, "vmw_product"), "vcf");
		CHECK_STR(kvlist_get(&f->tags, "vcf_component"), "lighttpd");
	}
	f = filelog(c, "vpxd");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->directory, "/var/log/vmware/vpxd");  /* unquoted */
		CHECK_INT(f->include.n, 1);
	}
	/* the rest: as agent.yaml's defaults */
	CHECK_INT(c->batch_max_events, 500);
	CHECK_INT(config_collector(c, "nic")->interval, 60);
	/* warnings, not errors, for what esxwatch does not do */
	CHECK_INT(M.nwarn, 2);
	CHECK_MSG("25:1: warning: 'ssl_accept_any_trusted' in [server]");
	CHECK_MSG("51:1: warning: [update]: not supported");
	/* parsers are taken (docs/parsers.md) */
	if (f)
		CHECK_STR(f->parser, "auto");
	CHECK_INT(c->nparsers, 1);
	if (c->nparsers == 1) {
		CHECK_STR(c->parsers[0].name, "syslog_parser");
		CHECK_STR(c->parsers[0].base_parser, "clf");
		CHECK_STR(c->parsers[0].format, "%t %i %{appname}i: %M");
	}
	config_free(c);
}

TEST(liagent_ini_warnings_and_errors)
{
	struct config *c;

	/* a typo in [server]: warned about, and the host has no destination
	 * (the shipper then says where its events go) */
	c = load_named("liagent.ini", "[server]\nhostnme=li.example\n");
	CHECK(c != NULL && c->server.nodest && c->server.hostname[0] == '\0');
	CHECK_MSG("2:1: warning: 'hostnme' in [server] is not a known key");
	config_free(c);

	c = load_named("liagent.ini", "; comment\n# another\n\n[server]\n"
	    "hostname = \"li.example\"\r\nbogus=1\ncentral_config=no\n"
	    "[logging]\nfile=/tmp/x.log\nstats_period=15\n"
	    "[winlog|app]\nchannel=Application\n[weird]\nk=v\n"
	    "[common|global]\ntags={'a': 'b', c: 5}\ninclude=x\n"
	    "[server|dr]\nhostname=dr.example\nproto=syslog\n"
	    "no equals sign here\n");
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	if (c) {
		CHECK_STR(c->server.hostname, "li.example");
		CHECK_STR(c->log_file, "");	/* liagent has no file= */
		CHECK_STR(kvlist_get(&c->tags, "a"), "b");
		CHECK_STR(kvlist_get(&c->tags, "c"), "5");
		CHECK_INT(c->nservers, 1);
		CHECK_INT(c->nfilelogs, 3);	/* no [filelog|]: defaults */
	}
	CHECK_MSG("6:1: warning: 'bogus' in [server] is not a known key");
	CHECK_MSG("7:1: warning: 'central_config' in [server] is not supported");
	CHECK_MSG("9:1: warning: 'file' in [logging] is not a liagent key");
	CHECK_MSG("10:1: warning: 'stats_period' in [logging]");
	CHECK_MSG("11:1: warning: [winlog|app]: not supported");
	CHECK_MSG("13:1: warning: unknown section [weird]");
	CHECK_MSG("21:1: warning: expected 'key = value'");
	CHECK_INT(M.nwarn, 7);
	/* [common|global] include= reaches every filelog, as liagent's */
	if (c && c->nfilelogs > 0)
		CHECK_STR(c->filelogs[0].include.v[c->filelogs[0].include.n - 1], "x");
	config_free(c);

	/* bad values are errors, with the value's column */
	c = load_named("liagent.ini", "[server]\nport=abc\nssl=maybe\n"
	    "proto = tcp\n[filelog|x]\ntags={\"a\" \"b\"}\n"
	    "event_marker=(\n[storage]\nmax_disk_buffer=0\n"
	    "[server|dr]\nproto=syslog\nhostname=https://dr.example\n"
	    "[filelog|v]\ninclude=a.log;/var/log/b.log\n");
	CHECK(c == NULL);
	CHECK_INT(M.nerr, 8);
	/* hostname with a scheme, include with a directory: errors at their
	 * place, naming the key that takes the part */
	CHECK_MSG("12:10: 'hostname': 'https://dr.example' holds a scheme");
	CHECK_MSG("14:9: 'include': '/var/log/b.log' holds a directory: include "
	    "holds globs of file names inside directory; use directory: "
	    "/var/log and include: b.log");
	CHECK_MSG("2:6: 'port': expected a number, got 'abc'");
	CHECK_MSG("3:5: 'ssl': expected a boolean");
	CHECK_MSG("4:9: 'proto': expected one of");
	CHECK_MSG("6:11: 'tags': expected ':' in the JSON object");
	CHECK_MSG("7:14: 'event_marker': invalid regular expression");
	CHECK_MSG("9:17: 'max_disk_buffer': 0 is out of range");
	config_free(c);

	/* a tag name liagent takes but Log Insight folds: folded, one warning */
	c = load_named("liagent.ini", "[common|global]\n"
	    "tags={\"Bad Name\":\"x\", \"ok\":\"y\", \"PRODUCT\":\"z\"}\n");
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->tags.n, 3);
		CHECK_STR(kvlist_get(&c->tags, "ok"), "y");
		CHECK_STR(kvlist_get(&c->tags, "bad_name"), "x");
		CHECK_STR(kvlist_get(&c->tags, "product"), "z");
	}
	CHECK_INT(M.nwarn, 2);
	CHECK_MSG("2:6: warning: 'tags': tag 'PRODUCT' is sent as 'product'");
	config_free(c);
	/* two names that fold to one field: an error naming both */
	c = load_named("liagent.ini", "[common|global]\n"
	    "tags={\"Product\":\"x\", \"PRODUCT\":\"y\"}\n");
	CHECK(c == NULL);
	CHECK_MSG("'Product' and 'PRODUCT' are the same field 'product'");
	config_free(c);
	/* a section line with text after ']' is an error at that text */
	c = load_named("liagent.ini", "[filelog|log_file] /n directory= /var/log/\n");
	CHECK(c == NULL);
	CHECK_MSG("1:20: text after ']' on a section line");
	config_free(c);

	/* liagent-only section names are kept under a usable name */
	c = load_named("liagent.ini", "[ server ]\nport=1\n"
	    "[filelog|my app logs]\ninclude=a.log\n"
	    "[server | backup]\nhostname=b\n");
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->server.port, 1);
		CHECK_INT(c->nfilelogs, 1);
		CHECK_STR(c->filelogs[0].name, "my_app_logs");
		CHECK_INT(c->nservers, 1);
		CHECK_STR(c->servers[0].name, "backup");
	}
	CHECK_MSG("3:1: warning: section name 'my app logs' is used as "
	    "'my_app_logs'");
	CHECK_INT(M.nwarn, 1);
	config_free(c);

	/* the JSON-ish form cannot smuggle a line break into a header */
	c = load_named("liagent.ini", "[server]\nproto=http\n"
	    "headers={\"X-A\": \"a\\r\\nX-B: b\"}\n");
	CHECK(c == NULL);
	CHECK_MSG("3:9: 'headers': a header value must not contain a line "
	    "break");
	config_free(c);

	/* invalid UTF-8 cannot be printed back: an error */
	c = load_named("liagent.ini", "[server]\nhostname=li\xff\n");
	CHECK(c == NULL);
	CHECK_MSG("2:12: invalid UTF-8");
	config_free(c);
}

TEST(format_chosen_by_content)
{
	/* .ini name but YAML inside, .yaml name but INI inside */
	struct config *c = load_named("x.ini", "# yaml\nserver:\n  port: 1\n");

	CHECK(c != NULL);
	if (c) {
		CHECK(!c->is_ini);
		CHECK_INT(c->server.port, 1);
	}
	config_free(c);
	c = load_named("x.yaml", "\xef\xbb\xbf; liagent\n\n  [server]\n"
	    "port=2\n");
	CHECK(c != NULL);
	if (c) {
		CHECK(c->is_ini);
		CHECK_INT(c->server.port, 2);
	}
	config_free(c);
	/* a YAML flow list on the first line is not a section header */
	c = load_named("x.yaml", "[a, b]\n");
	CHECK(c == NULL);
	CHECK_MSG("1:1: the top level must be a mapping");
	config_free(c);
}

/* ------------------------------------------------------------------ */

/* print -> load -> print gives the same text and the same values. */
static void
roundtrip(const char *path)
{
	struct config *a, *b;
	char *pa, *pb, out[320];

	memset(&M, 0, sizeof(M));
	a = config_load(path, collect, &M);
	CHECK(a != NULL);
	if (a == NULL) {
		printf("%s", M.text);
		return;
	}
	pa = print_to_string(a);
	CHECK(pa != NULL);
	snprintf(out, sizeof(out), "%s/printed.yaml", tmpdir);
	write_file(out, pa ? pa : "");
	memset(&M, 0, sizeof(M));
	b = config_load(out, collect, &M);
	CHECK(b != NULL);
	CHECK_INT(M.nerr, 0);
	if (b == NULL) {
		printf("%s", M.text);
		goto out;
	}
	CHECK(!b->is_ini);
	pb = print_to_string(b);
	CHECK(pb != NULL && pa != NULL && strcmp(pa, pb) == 0);
	/* spot checks on the reloaded values */
	CHECK_STR(b->server.hostname, a->server.hostname);
	CHECK_INT(b->server.proto, a->server.proto);
	CHECK_INT(b->server.port, a->server.port);
	CHECK_INT(b->nservers, a->nservers);
	CHECK_INT(b->nfilelogs, a->nfilelogs);
	CHECK_INT(b->nrules, a->nrules);
	CHECK_INT(b->tags.n, a->tags.n);
	for (size_t i = 0; i < a->nfilelogs && i < b->nfilelogs; i++) {
		CHECK_STR(b->filelogs[i].directory, a->filelogs[i].directory);
		CHECK_INT(b->filelogs[i].forward, a->filelogs[i].forward);
		CHECK(b->filelogs[i].event_marker == NULL ?
		    a->filelogs[i].event_marker == NULL :
		    strcmp(b->filelogs[i].event_marker,
		    a->filelogs[i].event_marker) == 0);
	}
	for (size_t i = 0; i < a->nrules && i < b->nrules; i++) {
		CHECK(b->rules[i].literal == NULL ? a->rules[i].literal == NULL :
		    strcmp(b->rules[i].literal, a->rules[i].literal) == 0);
		CHECK_INT(b->rules[i].enabled, a->rules[i].enabled);
	}
	free(pb);
out:
	free(pa);
	config_free(a);
	config_free(b);
}

/*
 * filter on every destination: liagent's "{type; name; expression}"
 * string (liagent.ini, agent.yaml) or a YAML list; checked part by part
 * with the part's column; printed as the list and read back the same.
 */
TEST(destination_filters)
{
	struct config *c;

	c = load_named("liagent.ini", "[server]\nhostname=li\n"
	    "filter={filelog; nsx-syslog; pri_severity <= 6 and msgid == \"A;}\"}\n"
	    "[server|two]\nhostname=b\nfilter= {agent;;}, {*; vm.*; x > 1}\n");
	CHECK(c != NULL);
	CHECK_INT(M.nerr, 0);
	if (c != NULL) {
		CHECK_INT(c->server.filter.n, 1);
		CHECK_STR(c->server.filter.v[0].type, "filelog");
		CHECK_STR(c->server.filter.v[0].name, "nsx-syslog");
		CHECK_STR(c->server.filter.v[0].expr,
		    "pri_severity <= 6 and msgid == \"A;}\"");
		CHECK_INT(c->nservers, 1);
		if (c->nservers == 1) {
			CHECK_INT(c->servers[0].filter.n, 2);
			CHECK_STR(c->servers[0].filter.v[1].name, "vm.*");
			CHECK_STR(c->servers[0].filter.v[1].expr, "x > 1");
		}
	}
	config_free(c);
	roundtrip(cfgpath);

	c = load("server:\n  filter:\n    - {type: filelog, name: \"vmk.*\", "
	    "expression: 'esxwatch_severity == \"error\"'}\n    - {type: nic}\n"
	    "servers:\n  b:\n    hostname: h\n    filter: \"{smart; ; }\"\n");
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_INT(c->server.filter.n, 2);
		CHECK_STR(c->server.filter.v[0].expr, "esxwatch_severity == \"error\"");
		CHECK_STR(c->server.filter.v[1].type, "nic");
		CHECK_STR(c->server.filter.v[1].name, "");
		CHECK_INT(c->servers[0].filter.n, 1);
		CHECK_STR(c->servers[0].filter.v[0].type, "smart");
	}
	config_free(c);
	roundtrip(cfgpath);

	/* errors: FILE:LINE:COL of the part at fault */
	c = load_named("liagent.ini", "[server]\nhostname=li\n"
	    "filter={filelog; nsx-syslog; pri_severity <= }\n"
	    "[server|a]\nhostname=x\nfilter={filelgo; ; }\n"
	    "[server|b]\nhostname=x\nfilter={; ([; }\n"
	    "[server|c]\nhostname=x\nfilter={filelog; x }\n");
	CHECK(c == NULL);
	CHECK_INT(M.nerr, 4);
	CHECK_MSG("3:45: 'filter': the expression ends too early");
	CHECK_MSG("6:9: 'filter': the type 'filelgo' is neither filelog");
	CHECK_MSG("9:13: 'filter': invalid name regex");
	CHECK_MSG("12:18: 'filter': a filter is {type; name regex; expression}");
	config_free(c);
	CHECK_ONE_ERROR("server:\n  filter:\n    - {type: filelog, name: \"a(\"}\n",
	    "3:31: 'name': invalid name regex");
	CHECK_ONE_ERROR("server:\n  filter:\n    - {type: filelog, nme: x}\n",
	    "3:23: unknown key 'nme' in section 'filter' (did you mean 'name'?)");
	CHECK_ONE_ERROR("server:\n  filter: {type: nic}\n",
	    "2:11: 'filter': expected a list of {type, name, expression}");
}

TEST(print_roundtrip_full)
{
	roundtrip(FIX "full.yaml");
}

TEST(print_roundtrip_ini)
{
	roundtrip(FIX "liagent.ini");
}

TEST(print_roundtrip_defaults_and_awkward_strings)
{
	struct config *c = config_default();
	char *p = print_to_string(c);

	/* every default is written out */
	CHECK(p != NULL && strstr(p, "  max_disk_buffer: 200\n"
	    "  max_disk_buffer_kb: 0\n  segment_kb: 0\n") != NULL);
	CHECK(p != NULL && strstr(p, "  logwatch:\n    enabled: yes\n"
	    "    interval: 1\n") != NULL);
	CHECK(p != NULL && strstr(p, "  \"hostd\":\n    directory: "
	    "\"/var/log\"\n    include: [\"hostd.log\"]\n") != NULL);
	CHECK(p != NULL && strstr(p, "rules_file: \"\"\n") != NULL);
	free(p);
	config_free(c);
	snprintf(cfgpath, sizeof(cfgpath), "%s/awkward.yaml", tmpdir);
	write_file(cfgpath, "tags:\n"
	    "  q: \"a \\\"quoted\\\" \\\\ back\\tslash\\nnew line\"\n"
	    "  c: \"\\x01\\x7f\\u0085\\u2028\\u2029\\uFEFF \xe2\x82\xac\"\n"
	    "  y: \"yes\"\n  n: \"123\"\n  colon: \"a: b # c\"\n"
	    "  hash: \"#x\"\n  e: \"\"\n"
	    "rules:\n  - name: r\n    match: \"- [x]: {y}\"\n"
	    "    hint: \"it's 'quoted'\"\n");
	roundtrip(cfgpath);
	c = config_load(cfgpath, NULL, NULL);
	CHECK(c != NULL);
	if (c) {
		CHECK_STR(kvlist_get(&c->tags, "c"), "\x01\x7f\xc2\x85"
		    "\xe2\x80\xa8\xe2\x80\xa9\xef\xbb\xbf \xe2\x82\xac");
		CHECK_STR(kvlist_get(&c->tags, "y"), "yes");
	}
	config_free(c);
}

/* ------------------------------------------------------------------ */

TEST(rules_catalogue_file)
{
	struct rule_conf *r = NULL;
	size_t n = 99;
	int rc;

	snprintf(cfgpath, sizeof(cfgpath), "%s/rules.yaml", tmpdir);
	write_file(cfgpath, "# catalogue\nrules:\n"
	    "  - name: one\n    match: \"xyz failed\"\n    severity: error\n"
	    "  - name: two\n    regex: 'dev \"(?<device>[^\"]+)\"'\n"
	    "    vob_id: esx.problem.x\n    files: vobd;vmkernel\n");
	memset(&M, 0, sizeof(M));
	rc = config_load_rules_file(cfgpath, &r, &n, collect, &M);
	CHECK_INT(rc, 0);
	CHECK_INT(n, 2);
	CHECK_INT(M.nerr + M.nwarn, 0);
	if (rc == 0 && n == 2) {
		CHECK_STR(r[0].name, "one");
		CHECK_STR(r[0].match, "xyz failed");
		CHECK_STR(r[0].severity, "error");
		CHECK_STR(r[0].src_file, cfgpath);
		CHECK_INT(r[0].src_line, 3);
		CHECK_STR(r[1].regex, "dev \"(?<device>[^\"]+)\"");
		CHECK_STR(r[1].vob_id, "esx.problem.x");
		CHECK_INT(r[1].files.n, 2);
		CHECK_INT(r[1].src_line, 6);
		CHECK(r[1].hint == NULL);
	}
	rule_conf_free_array(r, n);

	/* the same checks as agent.yaml's rules, every error reported */
	write_file(cfgpath, "rules:\n  - name: a\n    regex: '(x'\n"
	    "  - name: b\n    severity: loud\n    match: m\nversion: 2\n");
	memset(&M, 0, sizeof(M));
	rc = config_load_rules_file(cfgpath, &r, &n, collect, &M);
	CHECK_INT(rc, -1);
	CHECK(r == NULL);
	CHECK_INT(n, 0);
	CHECK_INT(M.nerr, 3);
	CHECK_MSG("3:12: 'regex': invalid regular expression");
	CHECK_MSG("5:15: 'severity': expected one of");
	CHECK_MSG("7:1: unknown key 'version' at the top level of a rules "
	    "file");

	/* empty file: no rules, fine; missing file: an error */
	write_file(cfgpath, "");
	rc = config_load_rules_file(cfgpath, &r, &n, collect, &M);
	CHECK_INT(rc, 0);
	CHECK_INT(n, 0);
	memset(&M, 0, sizeof(M));
	rc = config_load_rules_file("/nonexistent/rules.yaml", &r, &n,
	    collect, &M);
	CHECK_INT(rc, -1);
	CHECK(strstr(M.text, "/nonexistent/rules.yaml: cannot open: No such "
	    "file or directory") != NULL);
	rule_conf_free_array(NULL, 0);
}

/* The shipped catalogue goes through the very same code. */
TEST(builtin_catalogue_loads)
{
	struct rule_conf *r = NULL;
	size_t n = 0;
	int rc;

	/* a missing catalogue is a failure, not a skip */
	CHECK_INT(access("collectors/logwatch/rules/esxi.yaml", R_OK), 0);
	memset(&M, 0, sizeof(M));
	rc = config_load_rules_file("collectors/logwatch/rules/esxi.yaml", &r, &n,
	    collect, &M);
	CHECK_INT(rc, 0);
	CHECK(n > 0);
	if (rc != 0)
		printf("%s", M.text);
	rule_conf_free_array(r, n);
}

/* ------------------------------------------------------------------ */

TEST(helpers)
{
	struct dest_conf d;
	struct strlist inc = { NULL, 0 }, exc = { NULL, 0 };
	char *iv[] = { "vmnic*", "eth0" }, *ev[] = { "vmnic9" };
	struct kvpair kp[] = { { "a", "1" }, { "b", "2" } };
	struct kvlist kv = { kp, 2 };
	static const struct { enum dest_proto p; bool ssl; int port; } ports[] = {
		{ PROTO_CFAPI, false, 9000 }, { PROTO_CFAPI, true, 9543 },
		{ PROTO_SYSLOG, false, 514 }, { PROTO_SYSLOG, true, 6514 },
		{ PROTO_HTTP, false, 80 }, { PROTO_HTTP, true, 443 },
		{ PROTO_FILE, false, 0 }, { PROTO_FILE, true, 0 },
	};

	memset(&d, 0, sizeof(d));
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		d.proto = ports[i].p;
		d.ssl = ports[i].ssl;
		d.port = 0;
		CHECK_INT(dest_port(&d), ports[i].port);
		d.port = 1234;
		CHECK_INT(dest_port(&d), 1234);
	}
	CHECK_STR(dest_proto_name(PROTO_CFAPI), "cfapi");
	CHECK_STR(dest_proto_name(PROTO_SYSLOG), "syslog");
	CHECK_STR(dest_proto_name(PROTO_HTTP), "http");
	CHECK_STR(dest_proto_name(PROTO_FILE), "file");

	/* empty include = everything */
	CHECK(strlist_match(&inc, &exc, "anything"));
	CHECK(strlist_match(NULL, NULL, "anything"));
	inc.v = iv;
	inc.n = 2;
	exc.v = ev;
	exc.n = 1;
	CHECK(strlist_match(&inc, &exc, "vmnic0"));
	CHECK(strlist_match(&inc, &exc, "eth0"));
	CHECK(!strlist_match(&inc, &exc, "vmnic9"));
	CHECK(!strlist_match(&inc, &exc, "eth1"));
	CHECK(!strlist_match(&inc, NULL, "vmhba0"));

	CHECK_STR(kvlist_get(&kv, "a"), "1");
	CHECK_STR(kvlist_get(&kv, "b"), "2");
	CHECK(kvlist_get(&kv, "c") == NULL);
	CHECK(kvlist_get(NULL, "a") == NULL);
	config_free(NULL);
}

/* NULL report function: messages go to stderr, the load still fails. */
TEST(null_report_goes_to_stderr)
{
	struct config *c;

	snprintf(cfgpath, sizeof(cfgpath), "%s/quiet.yaml", tmpdir);
	write_file(cfgpath, "server:\n  port: x\n");
	c = config_load(cfgpath, NULL, NULL);
	CHECK(c == NULL);
}

/*
 * CONFIG_KEEP_BROKEN_FILELOGS (a daemon's start or reload): a filelog
 * whose event_marker or whitelist does not compile is left out with its
 * FILE:LINE:COL message; the others and the rest of the file load.
 * Strictly (--check-config) the same file is refused.
 */
TEST(broken_filelog_kept_out_alone)
{
	static const char yaml[] =
	    "filelog:\n"
	    "  good: {directory: /var/log, include: a.log, event_marker: \"^\\\\d\"}\n"
	    "  bad: {directory: /var/log, include: b.log, event_marker: \"^(x\"}\n"
	    "  worse: {directory: /var/log, include: c.log, whitelist: \"a ==\"}\n";
	static const char ini[] =
	    "[filelog|one]\ndirectory=/var/log\ninclude=a.log\n"
	    "[filelog|two]\ndirectory=/var/log\ninclude=b.log\nevent_marker=[a\n";
	struct config *cfg = load(yaml);
	char want[400];

	CHECK(cfg == NULL);
	CHECK(has_msg("3:") && strstr(M.text, "event_marker") != NULL);
	snprintf(cfgpath, sizeof(cfgpath), "%s/agent.yaml", tmpdir);
	memset(&M, 0, sizeof(M));
	cfg = config_load_flags(cfgpath, CONFIG_KEEP_BROKEN_FILELOGS, collect, &M);
	CHECK(cfg != NULL);
	if (cfg == NULL)
		return;
	CHECK_INT(M.nerr, 2);		/* still reported as errors */
	CHECK_INT(cfg->nfilelogs, 3);
	CHECK(cfg->filelogs[0].broken == NULL);
	CHECK_STR(cfg->filelogs[0].event_marker, "^\\d");
	snprintf(want, sizeof(want), "%s:3:", cfgpath);
	CHECK(cfg->filelogs[1].broken != NULL &&
	    strncmp(cfg->filelogs[1].broken, want, strlen(want)) == 0 &&
	    strstr(cfg->filelogs[1].broken, "event_marker") != NULL);
	snprintf(want, sizeof(want), "%s:4:", cfgpath);
	CHECK(cfg->filelogs[2].broken != NULL &&
	    strncmp(cfg->filelogs[2].broken, want, strlen(want)) == 0 &&
	    strstr(cfg->filelogs[2].broken, "whitelist") != NULL);
	config_free(cfg);

	/* an error outside a filelog still fails the load */
	snprintf(cfgpath, sizeof(cfgpath), "%s/agent.yaml", tmpdir);
	write_file(cfgpath, "batch: {max_events: 0}\nfilelog:\n"
	    "  bad: {directory: /var/log, event_marker: \"(\"}\n");
	memset(&M, 0, sizeof(M));
	cfg = config_load_flags(cfgpath, CONFIG_KEEP_BROKEN_FILELOGS, collect, &M);
	CHECK(cfg == NULL);
	config_free(cfg);

	cfg = load_named("liagent.ini", ini);
	CHECK(cfg == NULL);
	memset(&M, 0, sizeof(M));
	cfg = config_load_flags(cfgpath, CONFIG_KEEP_BROKEN_FILELOGS, collect, &M);
	CHECK(cfg != NULL);
	if (cfg == NULL)
		return;
	CHECK_INT(cfg->nfilelogs, 2);
	CHECK(cfg->filelogs[0].broken == NULL);
	snprintf(want, sizeof(want), "%s:7:", cfgpath);
	CHECK(cfg->filelogs[1].broken != NULL &&
	    strncmp(cfg->filelogs[1].broken, want, strlen(want)) == 0);
	config_free(cfg);

	/* a parser that does not compile takes out the filelogs naming it */
	cfg = load_named("liagent.ini", "[parser|bad]\nbase_parser=regex\n"
	    "format=(?<x>[a\n[parser|good]\nbase_parser=regex\n"
	    "format=(?<word>\\w+)\n[filelog|one]\ndirectory=/var/log\n"
	    "include=a.log\nparser=good\n[filelog|two]\ndirectory=/var/log\n"
	    "include=b.log\nparser=bad\n[filelog|three]\ndirectory=/var/log\n"
	    "include=c.log\nparser=bad\n");
	CHECK(cfg == NULL);
	CHECK_MSG("1:1: parser 'bad': format: missing terminating ]");
	memset(&M, 0, sizeof(M));
	cfg = config_load_flags(cfgpath, CONFIG_KEEP_BROKEN_FILELOGS, collect, &M);
	CHECK(cfg != NULL);
	if (cfg == NULL)
		return;
	CHECK_INT(M.nerr, 1);		/* reported once */
	CHECK_INT(cfg->nparsers, 1);
	CHECK_STR(cfg->parsers[0].name, "good");
	CHECK(cfg->filelogs[0].broken == NULL);
	snprintf(want, sizeof(want), "%s:1:1: parser 'bad': format: ", cfgpath);
	for (size_t i = 1; i < 3; i++)
		CHECK(cfg->filelogs[i].broken != NULL &&
		    strncmp(cfg->filelogs[i].broken, want, strlen(want)) == 0);
	config_free(cfg);
}

static void
cleanup(void)
{
	static const char *const files[] = {
		"agent.yaml", "liagent.ini", "x.ini", "x.yaml", "printed.yaml",
		"awkward.yaml", "rules.yaml", "quiet.yaml",
	};
	char p[320];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, files[i]);
		unlink(p);
	}
	rmdir(tmpdir);
}

/* What a reload refuses as "empty": only blanks and comments.  The load
 * that read the file says so: a reload does not read it a second time. */
TEST(reload_empty_file)
{
	static const struct {
		const char	*text;
		bool		 empty;
	} cases[] = {
		{ "", true }, { "\n  \n\t\r\n", true },
		{ "# all commented\n  # out\n", true },
		{ "; liagent.ini comment\n", true },
		{ "\xef\xbb\xbf; a BOM, then comments\n\t# indented\n", true },
		{ "storage: {} # a comment\n", false },
		{ "# c\nserver: {}", false }, { "[server]\n", false },
		{ "  ;[server]\n[storage]\n", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config *c = load(cases[i].text);

		CHECK(c != NULL);
		if (c == NULL)
			continue;
		if (c->file_empty != cases[i].empty)
			fprintf(stderr, "case %zu: %s\n", i, cases[i].text);
		CHECK(c->file_empty == cases[i].empty);
		config_free(c);
	}
}

/* A reload cannot move the spool (nor skip the storage check): a changed
 * storage.directory takes a restart; the same one reloads. */
TEST(reload_refuses_a_new_storage_directory)
{
	struct config *a = load("storage: {directory: /tmp/esxwatch-a}\n");
	struct config *b = load("storage: {directory: /tmp/esxwatch-b}\n");
	struct config *c = load("storage: {directory: /tmp/esxwatch-a}\n"
	    "tags: {site: x}\n");
	char why[512];

	CHECK(a != NULL && b != NULL && c != NULL);
	if (a == NULL || b == NULL || c == NULL)
		return;
	CHECK(!reload_acceptable(cfgpath, a, b, NULL, why, sizeof(why)));
	CHECK(strstr(why, "storage.directory changes (/tmp/esxwatch-a to "
	    "/tmp/esxwatch-b); that takes a restart") != NULL);
	CHECK(reload_acceptable(cfgpath, a, c, NULL, why, sizeof(why)));
	config_free(a);
	config_free(b);
	config_free(c);
}

int
main(void)
{
	T_PROG("test_config");
	config_plugins_builtin();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/esxwatch-test-config-XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		printf("FAIL: test_config/setup: mkdtemp\n");
		return 1;
	}
	RUN(defaults_from_config_default);
	RUN(reload_refuses_a_new_storage_directory);
	RUN(defaults_from_empty_and_comment_only_files);
	RUN(repo_agent_yaml_is_the_defaults);
	RUN(every_key_set);
	RUN(booleans_every_spelling);
	RUN(numbers_and_ranges);
	RUN(enums);
	RUN(format_depends_on_proto);
	RUN(a_key_two_sinks_declare);
	RUN(syslog_udp_and_tls);
	RUN(required_values);
	RUN(unknown_keys_with_position);
	RUN(wrong_node_types);
	RUN(regex_errors);
	RUN(regex_explosive_repetitions);
	RUN(bad_url_error_hides_credentials);
	RUN(at_most_64_destinations);
	RUN(redact_url_hides_credentials_and_secret_parameters);
	RUN(named_groups_and_disabling_rules);
	RUN(duplicate_keys);
	RUN(yaml_syntax_errors);
	RUN(missing_file_and_directory);
	RUN(all_errors_reported_in_order);
	RUN(tag_and_header_checks);
	RUN(ipv6_hostname_accepted);
	RUN(filelog_replaces_defaults);
	RUN(strings_and_nulls);
	RUN(liagent_ini_mapping);
	RUN(broken_filelog_kept_out_alone);
	RUN(destination_filters);
	RUN(liagent_ini_warnings_and_errors);
	RUN(format_chosen_by_content);
	RUN(print_roundtrip_full);
	RUN(print_roundtrip_ini);
	RUN(print_roundtrip_defaults_and_awkward_strings);
	RUN(rules_catalogue_file);
	RUN(builtin_catalogue_loads);
	RUN(helpers);
	RUN(null_report_goes_to_stderr);
	RUN(reload_empty_file);
	cleanup();
	return t_done();
}
