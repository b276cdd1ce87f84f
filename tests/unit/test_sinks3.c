/*
 * Round three's sinks: the HEC envelope (splunk_hec_encode) and the _bulk
 * document (es_encode_doc) read back by the one JSON reader, the 0600
 * secret files, and the configuration's checks of both sinks.
 */
#include <sys/stat.h>

#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/config/config.h"
#include "../../agent/lib/json.h"
#include "../../agent/lib/log.h"
#include "../../output/elasticsearch.h"
#include "../../output/secretfile.h"
#include "../../output/splunk_hec.h"

static char dir[64];
static char msgs[8192];

static void
collect(void *arg, bool is_error, const char *msg)
{
	size_t o = strlen(msgs);

	(void)arg;
	(void)is_error;
	snprintf(msgs + o, sizeof(msgs) - o, "%s\n", msg);
}

static struct event *
sample(void)
{
	struct event *ev = event_new(1733000000007, "vobd: \"quoted\" \\ line");

	event_set(ev, "hostname", "esx01");
	event_set(ev, "filepath", "/var/log/vobd.log");
	event_set(ev, "esxwatch_severity", "error");
	event_set(ev, "message", "a tag");
	return ev;
}

/* The string at path of the JSON text, or "" (a missing one). */
static const char *
str_at(const char *text, const char *path)
{
	static char out[256];
	struct json_doc doc;
	char err[64];
	int n;

	out[0] = '\0';
	if (json_parse(text, strlen(text), &doc, err, sizeof(err)) == -1)
		return "(not JSON)";
	n = json_get(&doc, 0, path);
	if (n >= 0 && !json_str(&doc, n, out, sizeof(out)))
		snprintf(out, sizeof(out), "(not a string)");
	if (n < 0)
		snprintf(out, sizeof(out), "(absent)");
	json_free(&doc);
	return out;
}

TEST(hec_envelope_time_host_source_fields)
{
	struct event *ev = sample();
	struct buf b = BUF_INIT;

	buf_init(&b, 1 << 20);
	CHECK_INT(splunk_hec_encode(ev, "esx", "esxwatch", &b), 0);
	/* seconds with the milliseconds kept, as a number */
	CHECK(strncmp(b.data, "{\"time\":1733000000.007,", 23) == 0);
	CHECK_STR(str_at(b.data, "host"), "esx01");
	CHECK_STR(str_at(b.data, "source"), "/var/log/vobd.log");
	CHECK_STR(str_at(b.data, "sourcetype"), "esxwatch");
	CHECK_STR(str_at(b.data, "index"), "esx");
	CHECK_STR(str_at(b.data, "event"), "vobd: \"quoted\" \\ line");
	CHECK_STR(str_at(b.data, "fields.esxwatch_severity"), "error");
	CHECK_STR(str_at(b.data, "fields.message"), "a tag");
	CHECK_STR(str_at(b.data, "fields.hostname"), "(absent)");
	/* no index: the token's default; no filepath: "esxwatch" */
	buf_reset(&b);
	event_unset(ev, "filepath");
	CHECK_INT(splunk_hec_encode(ev, "", "st", &b), 0);
	CHECK_STR(str_at(b.data, "index"), "(absent)");
	CHECK_STR(str_at(b.data, "source"), "esxwatch");
	CHECK_STR(str_at(b.data, "sourcetype"), "st");
	buf_free(&b);
	event_free(ev);
}

TEST(es_document_ecs_names_and_labels)
{
	struct event *ev = sample();
	struct buf b = BUF_INIT;

	buf_init(&b, 1 << 20);
	CHECK_INT(es_encode_doc(ev, &b), 0);
	CHECK_STR(str_at(b.data, "@timestamp"), "2024-11-30T20:53:20.007Z");
	CHECK_STR(str_at(b.data, "message"), "vobd: \"quoted\" \\ line");
	CHECK_STR(str_at(b.data, "host.name"), "esx01");
	CHECK_STR(str_at(b.data, "esxwatch_severity"), "error");
	CHECK_STR(str_at(b.data, "filepath"), "/var/log/vobd.log");
	/* a field named like an ECS field cannot clash with it */
	CHECK_STR(str_at(b.data, "labels.message"), "a tag");
	CHECK_STR(str_at(b.data, "hostname"), "(absent)");
	buf_free(&b);
	event_free(ev);
}

TEST(secret_files_0600_first_line)
{
	char path[128], out[64], why[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tok", dir);
	f = fopen(path, "w");
	fputs("s3cret-token\nsecond line\n", f);
	fclose(f);
	chmod(path, 0644);
	CHECK_INT(secret_file_read("token_file", path, out, sizeof(out), why,
	    sizeof(why)), -1);
	CHECK(strstr(why, "must be a regular file of mode 0600 (it is 0644)") != NULL);
	CHECK(strstr(why, "s3cret") == NULL);
	chmod(path, 0600);
	CHECK_INT(secret_file_read("token_file", path, out, sizeof(out), why,
	    sizeof(why)), 0);
	CHECK_STR(out, "s3cret-token");
	CHECK_INT(secret_file_read("token_file", "", out, sizeof(out), why,
	    sizeof(why)), -1);
	CHECK_STR(why, "token_file is not set");
	f = fopen(path, "w");
	fclose(f);
	CHECK_INT(secret_file_read("token_file", path, out, sizeof(out), why,
	    sizeof(why)), -1);
	CHECK(strstr(why, "is empty") != NULL);
}

static struct config *
load(const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/agent.yaml", dir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	msgs[0] = '\0';
	return config_load(path, collect, NULL);
}

TEST(configuration_checks)
{
	struct config *c;
	const struct splunk_hec_opts *h;
	const struct es_opts *e;
	char *printed = NULL;
	size_t len = 0;
	FILE *f;

	c = load("server: {proto: splunk_hec, token_file: /x}\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "'url' is required for proto splunk_hec") != NULL);
	c = load("server: {proto: splunk_hec, url: \"https://splunk:8088\"}\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "'token_file' is required") != NULL);
	c = load("server: {proto: elasticsearch, url: \"https://es:9200\", "
	    "api_key_file: /k, username: u, password_file: /p}\n");
	CHECK(c == NULL);
	CHECK(strstr(msgs, "'api_key_file' and 'username': set only one") != NULL);
	c = load("server: {proto: splunk_hec, url: \"https://u:pw@splunk:8088\", "
	    "token_file: /t, ack: yes}\n"
	    "servers:\n  es: {proto: elasticsearch, url: \"https://es:9200\", "
	    "index: logs-esx-default, dead_letter: /var/tmp/dl.jsonl}\n");
	CHECK(c != NULL);
	if (c == NULL)
		return;
	h = splunk_hec_opts(&c->server);
	CHECK(h != NULL && h->ack && h->ack_timeout == 60);
	CHECK(h != NULL && strcmp(h->sourcetype, "esxwatch") == 0);
	e = es_opts(&c->servers[0]);
	CHECK(e != NULL && strcmp(e->index, "logs-esx-default") == 0);
	CHECK_STR(c->servers[0].dead_letter, "/var/tmp/dl.jsonl");
	CHECK_INT(c->servers[0].dead_letter_max_kb, 10240);
	/* a URL's credentials never printed */
	f = open_memstream(&printed, &len);
	config_print(c, f);
	fclose(f);
	CHECK(strstr(printed, "u:pw@") == NULL);
	free(printed);
	config_free(c);
}

int
main(void)
{
	T_PROG("test_sinks3");
	config_plugins_builtin();
	log_init(0, "/dev/null");
	snprintf(dir, sizeof(dir), "/tmp/test_sinks3.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(hec_envelope_time_host_source_fields);
	RUN(es_document_ecs_names_and_labels);
	RUN(secret_files_0600_first_line);
	RUN(configuration_checks);
	return t_done();
}
