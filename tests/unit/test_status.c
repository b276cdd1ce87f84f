/*
 * status: the figures gathered from the real queue and a shipper over the
 * fake sink, the status file's exact content, the writer thread, and
 * --status --json against the text --status.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include "t.h"
#include "fakesink.h"

#include "../../agent/lib/log.h"
#include "../../agent/shipper.h"
#include "../../agent/status.h"

static char *
slurp(const char *path, size_t *len)
{
	char *buf = calloc(1, 65536);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, 65535) : -1;

	if (fd >= 0)
		close(fd);
	*len = n > 0 ? (size_t)n : 0;
	return buf;
}

static bool
wait_file(const char *path, int ms)
{
	int64_t end = mono_ms() + ms;

	while (access(path, R_OK) != 0 && mono_ms() < end)
		poll(NULL, 0, 20);
	return access(path, R_OK) == 0;
}

TEST(figures_from_the_queue_and_the_shipper_poison_once)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct status_snap *s = calloc(1, sizeof(*s));
	struct status_source src = { .q = q, .started_ms = 1000 };

	fake_reset(1, "POISON");
	push(q, 0, 8, 3);
	src.sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(7, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	status_collect(&src, s);
	CHECK(s->have_spool);
	CHECK(!s->memory_only);
	CHECK_INT(s->started_ms, 1000);
	CHECK_INT(s->pid, getpid());
	CHECK_INT(s->pushed_events, 8);
	CHECK_INT(s->queued_events, 0);
	CHECK_INT(s->ndests, 1);
	CHECK_STR(s->dests[0].name, "server");
	CHECK_STR(s->dests[0].proto, "file");	/* no server: the stdout sink */
	CHECK_INT(s->dests[0].state, DEST_DELIVERING);
	CHECK_INT(s->dests[0].sent_events, 7);
	CHECK_INT(s->dests[0].failed_sends, 1);
	/* the rejected event is counted once, by the queue */
	CHECK_INT(s->dests[0].dropped_poison, 1);
	CHECK_INT(s->dropped_poison, 1);
	CHECK_INT(s->sent_events, 7);
	CHECK_INT(s->failed_sends, 1);
	CHECK(s->dests[0].last_success_ms > 0);
	(void)shipper_stop(src.sh, 1000, NULL);
	/* without a shipper: the queue's word alone */
	src.sh = NULL;
	status_collect(&src, s);
	CHECK_INT(s->dests[0].sent_events, 7);
	CHECK_INT(s->dropped_poison, 1);
	CHECK_STR(s->dests[0].proto, "");
	queue_close(q);
	/* nothing at all */
	src.q = NULL;
	status_collect(&src, s);
	CHECK(!s->have_spool);
	CHECK_INT(s->ndests, 0);
	free(s);
	config_free(cfg);
}

TEST(status_file_content)
{
	static const char want[] =
	    "esxwatch-status: 1\n"
	    "version: " ESXWATCH_VERSION "\n"
	    "pid: 42\n"
	    "updated_ms: 2000\n"
	    "started_ms: 1000\n"
	    "spool: memory\n"
	    "queued_events: 3\n"
	    "queued_bytes: 300\n"
	    "pushed_events: 10\n"
	    "sent_events: 7\n"
	    "failed_sends: 2\n"
	    "dropped_budget: 0\n"
	    "dropped_poison: 1\n"
	    "dropped_corrupt: 4\n"
	    "torn_tails: 5\n"
	    "rss_kb: 6\n"
	    "cpu_ms: 8\n"
	    "not_ingested: 9\n"
	    "counts_since_ms: 900\n"
	    "dest: server\n"
	    " proto: cfapi\n"
	    " state: failing\n"
	    " backlog_events: 3\n"
	    " backlog_bytes: 300\n"
	    " sent_events: 7\n"
	    " failed_sends: 2\n"
	    " dropped_budget: 0\n"
	    " dropped_poison: 1\n"
	    " last_success_ms: 1500\n"
	    " last_error_ms: 1900\n"
	    " not_ingested: 9\n"
	    " filtered: 11\n"
	    " dead_lettered: 12\n"
	    " dead_letter_dropped: 13\n"
	    " resent_events: 14\n"
	    " last_error: HTTP 503 two lines\n"
	    "collector: nic\n"
	    " runs: 11\n"
	    " errors: 2\n"
	    " last_duration_ms: 35\n"
	    " last_run_ms: 1800\n";
	struct status_snap *s = calloc(1, sizeof(*s)), *b = calloc(1, sizeof(*b));
	char path[128];
	struct stat st;
	size_t len;
	char *text;

	s->pid = 42;
	s->updated_ms = 2000;
	s->started_ms = 1000;
	s->have_spool = s->memory_only = true;
	s->queued_events = 3;
	s->queued_bytes = 300;
	s->pushed_events = 10;
	s->sent_events = 7;
	s->failed_sends = 2;
	s->dropped_poison = 1;
	s->dropped_corrupt = 4;
	s->torn_tails = 5;
	s->rss_kb = 6;
	s->cpu_ms = 8;
	s->not_ingested = 9;
	s->counts_since_ms = 900;
	s->ndests = 1;
	snprintf(s->dests[0].name, sizeof(s->dests[0].name), "server");
	snprintf(s->dests[0].proto, sizeof(s->dests[0].proto), "cfapi");
	s->dests[0].state = DEST_FAILING;
	s->dests[0].backlog_events = 3;
	s->dests[0].backlog_bytes = 300;
	s->dests[0].sent_events = 7;
	s->dests[0].failed_sends = 2;
	s->dests[0].dropped_poison = 1;
	s->dests[0].last_success_ms = 1500;
	s->dests[0].last_error_ms = 1900;
	s->dests[0].not_ingested = 9;
	s->dests[0].filtered = 11;
	s->dests[0].dead_lettered = 12;
	s->dests[0].dead_letter_dropped = 13;
	s->dests[0].resent_events = 14;
	snprintf(s->dests[0].last_error, sizeof(s->dests[0].last_error),
	    "HTTP 503\ntwo lines");
	s->ncollectors = 1;
	snprintf(s->collectors[0].name, sizeof(s->collectors[0].name), "nic");
	s->collectors[0].runs = 11;
	s->collectors[0].errors = 2;
	s->collectors[0].last_duration_ms = 35;
	s->collectors[0].last_run_ms = 1800;
	snprintf(path, sizeof(path), "%s/content", fake_dir);
	CHECK_INT(status_write(s, path), 0);
	text = slurp(path, &len);
	CHECK_STR(text, want);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	/* and it reads back */
	CHECK_INT(status_parse(text, len, b), 0);
	CHECK_INT(b->not_ingested, 9);
	CHECK_INT(b->dests[0].filtered, 11);
	CHECK_INT(b->dests[0].dead_lettered, 12);
	CHECK_INT(b->dests[0].resent_events, 14);
	CHECK_INT(b->dests[0].last_error_ms, 1900);
	CHECK_STR(b->dests[0].last_error, "HTTP 503 two lines");
	/* a collector's keys do not land in the destination before it */
	CHECK_INT(b->ndests, 1);
	CHECK_INT(b->dests[0].sent_events, 7);
	CHECK_INT(b->ncollectors, 1);
	CHECK_STR(b->collectors[0].name, "nic");
	CHECK_INT(b->collectors[0].runs, 11);
	CHECK_INT(b->collectors[0].errors, 2);
	CHECK_INT(b->collectors[0].last_duration_ms, 35);
	CHECK_INT(b->collectors[0].last_run_ms, 1800);
	free(text);
	free(s);
	free(b);
}

static void
set_filelog(struct logstats_snap *p, const char *name, enum logstats_state st,
    uint64_t lines, uint64_t matched, size_t nfiles)
{
	struct logstats_filelog *f = &p->filelogs[p->nfilelogs++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->directory, sizeof(f->directory), "/var/log/%s", name);
	f->state = st;
	f->lines_read = lines;
	f->lines_matched = matched;
	f->nfiles = nfiles;
}

static void
set_file(struct logstats_snap *p, size_t fl, const char *path, uint64_t off,
    uint64_t lines, uint64_t matched)
{
	struct logstats_file *f = &p->files[p->nfiles++];

	snprintf(f->path, sizeof(f->path), "%s", path);
	f->filelog = fl;
	f->offset = off;
	f->lines_read = lines;
	f->lines_matched = matched;
}

/*
 * Two publishes (the second as a reloaded logwatch would: counts since
 * its start) add up; the status file carries filelogs and files and reads
 * back, a destination after them included.
 */
TEST(filelogs_cumulative_in_the_file)
{
	static const char want[] =
	    "filelog: vmk\n"
	    " state: ok\n"
	    " directory: /var/log/vmk\n"
	    " files: 1\n"
	    " lines_read: 5\n"
	    " lines_matched: 2\n"
	    " file: /var/log/vmk/vmkernel.log\n"
	    "  offset: 150\n"
	    "  lines_read: 5\n"
	    "  lines_matched: 2\n"
	    "filelog: gone\n"
	    " state: directory_missing\n"
	    " directory: /var/log/gone\n"
	    " files: 0\n"
	    " lines_read: 0\n"
	    " lines_matched: 0\n"
	    "dest: server\n";
	struct logstats_snap *p = calloc(1, sizeof(*p));
	struct status_snap *s = calloc(1, sizeof(*s)), *b = calloc(1, sizeof(*b));
	struct logstats *ls = logstats_new();
	struct status_source src = { .started_ms = 1000, .logs = ls };
	char path[128], *text;
	size_t len;

	set_filelog(p, "vmk", LOGSTATS_OK, 3, 1, 1);
	set_file(p, 0, "/var/log/vmk/vmkernel.log", 100, 3, 1);
	logstats_publish(ls, p);
	memset(p, 0, sizeof(*p));
	set_filelog(p, "vmk", LOGSTATS_OK, 2, 1, 1);
	set_file(p, 0, "/var/log/vmk/vmkernel.log", 150, 2, 1);
	set_filelog(p, "gone", LOGSTATS_NO_DIR, 0, 0, 0);
	logstats_publish(ls, p);
	status_collect(&src, s);
	CHECK_INT(s->logs.nfilelogs, 2);
	CHECK_INT(s->logs.filelogs[0].lines_read, 5);
	CHECK_INT(s->logs.filelogs[0].lines_matched, 2);
	CHECK_INT(s->logs.files[0].lines_read, 5);
	CHECK_INT(s->logs.files[0].offset, 150);
	s->ndests = 1;
	snprintf(s->dests[0].name, sizeof(s->dests[0].name), "server");
	snprintf(path, sizeof(path), "%s/filelogs", fake_dir);
	CHECK_INT(status_write(s, path), 0);
	text = slurp(path, &len);
	CHECK(strstr(text, want) != NULL);
	CHECK_INT(status_parse(text, len, b), 0);
	CHECK_INT(b->logs.nfilelogs, 2);
	CHECK_STR(b->logs.filelogs[0].name, "vmk");
	CHECK_INT(b->logs.filelogs[0].nfiles, 1);
	CHECK_INT(b->logs.filelogs[0].lines_matched, 2);
	CHECK_INT(b->logs.filelogs[1].state, LOGSTATS_NO_DIR);
	CHECK_STR(b->logs.filelogs[1].directory, "/var/log/gone");
	CHECK_INT(b->logs.nfiles, 1);
	CHECK_STR(b->logs.files[0].path, "/var/log/vmk/vmkernel.log");
	CHECK_INT(b->logs.files[0].filelog, 0);
	CHECK_INT(b->logs.files[0].offset, 150);
	CHECK_INT(b->logs.files[0].lines_read, 5);
	CHECK_INT(b->ndests, 1);
	CHECK_STR(b->dests[0].name, "server");
	/* a path too long for the table is cut visibly, never silently */
	memset(text, 'a', 300);
	text[0] = '/';
	text[300] = '\0';
	logstats_copy_path(p->files[0].path, text);
	CHECK_INT(strlen(p->files[0].path), LOGSTATS_PATH_MAX - 1);
	CHECK_STR(p->files[0].path + LOGSTATS_PATH_MAX - 4, "...");
	free(text);
	logstats_free(ls);
	free(p);
	free(s);
	free(b);
}

TEST(writer_started_and_stopped_by_its_owner)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct status_source src = { .q = q, .started_ms = now_ms() };
	struct status_writer *w;
	struct status_snap *s = calloc(1, sizeof(*s));
	char path[256];
	size_t len;
	char *text;

	fake_reset(0, NULL);
	snprintf(path, sizeof(path), "%s/status", cfg->storage_directory);
	src.sh = shipper_start(cfg, q, &fake_deps);
	w = status_start(cfg, &src, NULL);
	CHECK(w != NULL);
	CHECK(wait_file(path, 3000));
	push(q, 0, 3, -1);
	CHECK(wait_seen(3, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	/* the stop writes the last figures at once */
	status_stop(w);
	text = slurp(path, &len);
	CHECK_INT(status_parse(text, len, s), 0);
	CHECK_INT(s->pid, getpid());
	CHECK_INT(s->sent_events, 3);
	CHECK_INT(s->pushed_events, 3);
	CHECK_STR(s->dests[0].name, "server");
	free(text);
	(void)shipper_stop(src.sh, 1000, NULL);
	queue_close(q);
	free(s);
	config_free(cfg);
}

/* The value of "key": in a flat JSON text (numbers), or -1. */
static long long
json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p != NULL ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* Write s to path, then what --status and --status --json print. */
static void
render(const struct config *cfg, const struct status_snap *s, const char *path,
    char *text, char *json, size_t len)
{
	FILE *f;

	CHECK_INT(status_write(s, path), 0);
	f = fmemopen(text, len, "w");
	CHECK_INT(status_print(cfg, f), 0);
	fclose(f);
	f = fmemopen(json, len, "w");
	CHECK_INT(status_print_json(cfg, f), 0);
	fclose(f);
}

TEST(json_says_what_the_text_says)
{
	struct config *cfg = new_cfg(100);
	struct status_snap *s = calloc(1, sizeof(*s));
	char path[256], text[4096], json[4096];
	FILE *f;

	s->pid = (long)getpid();
	s->updated_ms = now_ms();
	s->started_ms = s->updated_ms - 5000;
	s->have_spool = true;
	s->queued_events = 12;
	s->queued_bytes = 3400;
	s->dropped_budget = 2;
	s->dropped_poison = 1;
	s->dropped_corrupt = 3;
	s->sent_events = 77;
	s->ndests = 2;
	snprintf(s->dests[0].name, sizeof(s->dests[0].name), "server");
	snprintf(s->dests[0].proto, sizeof(s->dests[0].proto), "cfapi");
	s->dests[0].state = DEST_DELIVERING;
	s->dests[0].sent_events = 70;
	s->dests[0].backlog_events = 12;
	snprintf(s->dests[1].name, sizeof(s->dests[1].name), "b\"ack");
	snprintf(s->dests[1].proto, sizeof(s->dests[1].proto), "syslog");
	s->dests[1].state = DEST_FAILING;
	s->dests[1].sent_events = 7;
	snprintf(s->dests[1].last_error, sizeof(s->dests[1].last_error), "refused");
	s->nbroken = 1;
	snprintf(s->broken[0].name, sizeof(s->broken[0].name), "bad");
	snprintf(s->broken[0].error, sizeof(s->broken[0].error),
	    "/etc/agent.yaml:3:5: 'event_marker': invalid regular expression");
	set_filelog(&s->logs, "vmk", LOGSTATS_NO_MATCH, 4, 1, 1);
	set_file(&s->logs, 0, "/var/log/vmk/a \"b\".log", 77, 4, 1);
	s->ncollectors = 1;
	snprintf(s->collectors[0].name, sizeof(s->collectors[0].name), "vsan");
	s->collectors[0].runs = 4;
	s->collectors[0].errors = 1;
	s->collectors[0].last_duration_ms = 9;
	snprintf(path, sizeof(path), "%s/status", cfg->storage_directory);
	render(cfg, s, path, text, json, sizeof(text));
	CHECK(strstr(text, "esxwatch: running") != NULL);
	CHECK(strncmp(json, "{\"running\":true,", 16) == 0);
	CHECK_INT(json_num(json, "pid"), getpid());
	CHECK(strstr(text, "12 events (3400 bytes) queued") != NULL);
	CHECK_INT(json_num(json, "queued_events"), 12);
	CHECK_INT(json_num(json, "queued_bytes"), 3400);
	CHECK(strstr(text, "dropped: 2 over storage.max_disk_buffer, 1 rejected "
	    "(poison), 3 damaged") != NULL);
	CHECK_INT(json_num(json, "dropped_budget"), 2);
	CHECK_INT(json_num(json, "dropped_poison"), 1);
	CHECK_INT(json_num(json, "dropped_corrupt"), 3);
	CHECK(strstr(json, "\"spool\":\"disk\"") != NULL);
	CHECK(strstr(text, "destination server (cfapi): delivering") != NULL);
	CHECK(strstr(json, "\"destinations\":[{\"name\":\"server\",\"proto\":\"cfapi\","
	    "\"state\":\"delivering\",\"summary\":\"delivering\","
	    "\"never_delivered\":false,\"no_destination\":\"\",\"backlog_events\":12,") != NULL);
	/* failing, never delivered: said so with the reason, in both */
	CHECK(strstr(text, "destination b\"ack (syslog): never delivered (refused)\n") != NULL);
	CHECK(strstr(json, "{\"name\":\"b\\\"ack\",\"proto\":\"syslog\","
	    "\"state\":\"failing\",\"summary\":\"never delivered (refused)\","
	    "\"never_delivered\":true,") != NULL);
	CHECK(strstr(text, "no destination configured") == NULL);
	CHECK(strstr(json, "\"no_destination\":null,") != NULL);
	CHECK(strstr(json, "\"last_error\":\"refused\"}],\"disabled_filelogs\":[") != NULL);
	/* a filelog left out: the file carries it, both outputs say it */
	CHECK(strstr(text, "\nfilelog bad: disabled: /etc/agent.yaml:3:5: "
	    "'event_marker': invalid regular expression\n") != NULL);
	CHECK(strstr(json, ",\"disabled_filelogs\":[{\"name\":\"bad\",\"error\":"
	    "\"/etc/agent.yaml:3:5: 'event_marker': invalid regular expression\"}],\"collectors\":[")
	    != NULL);

	/* failing after a success: failing; no destination: said where
	 * the events go, in both */
	s->dests[1].last_success_ms = now_ms() - 60000;
	snprintf(s->dests[0].no_destination, sizeof(s->dests[0].no_destination),
	    "host_syslog");
	render(cfg, s, path, text, json, sizeof(text));
	CHECK(strstr(text, "destination b\"ack (syslog): failing\n") != NULL);
	CHECK(strstr(text, "\nno destination configured: events go to the host's "
	    "syslog\n") != NULL);
	CHECK(strstr(json, "\"no_destination\":\"host_syslog\",\"no_destination_text\":"
	    "\"no destination configured: events go to the host's syslog\"") != NULL);
	snprintf(s->dests[0].no_destination, sizeof(s->dests[0].no_destination),
	    "stdout");
	render(cfg, s, path, text, json, sizeof(text));
	CHECK(strstr(text, "\nno destination configured: events are written to "
	    "standard output\n") != NULL);
	CHECK(strstr(text, "filelog vmk: no file matches, 1 file followed in "
	    "/var/log/vmk; 4 lines read, 1 matched\n  /var/log/vmk/a \"b\".log: "
	    "offset 77; 4 lines read, 1 matched\n") != NULL);
	CHECK(strstr(json, "\"filelogs\":[{\"name\":\"vmk\",\"directory\":"
	    "\"/var/log/vmk\",\"state\":\"no_match\",\"files_followed\":1,"
	    "\"lines_read\":4,\"lines_matched\":1,\"files\":[{\"path\":"
	    "\"/var/log/vmk/a \\\"b\\\".log\",\"offset\":77,\"lines_read\":4,"
	    "\"lines_matched\":1}]}]}\n") != NULL);
	CHECK(strstr(json, "\"collectors\":[{\"name\":"
	    "\"vsan\",\"runs\":4,\"errors\":1,\"last_duration_ms\":9,"
	    "\"last_run_ms\":0}],\"filelogs\":[") != NULL);
	CHECK(strstr(text, "  vsan       4 runs, 1 errors; last run never (9 ms)\n") != NULL);

	/* no status file, nobody running */
	unlink(path);
	f = fmemopen(json, sizeof(json), "w");
	CHECK_INT(status_print_json(cfg, f), 3);
	fclose(f);
	CHECK(strncmp(json, "{\"running\":false,\"pid\":0,", 25) == 0);
	CHECK(strstr(json, "\"have_status\":false}") != NULL);
	free(s);
	config_free(cfg);
}

/*
 * One picture for the file and the board: what the board gives is what
 * the file says; a picture older than asked for is retaken by the writer
 * (and written) before it is given; with no writer the last one stays.
 */
TEST(board_holds_the_file_picture)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct status_source src = { .q = q, .started_ms = now_ms() };
	struct status_board *board = status_board_new();
	struct status_snap *a = calloc(1, sizeof(*a)), *f = calloc(1, sizeof(*f));
	struct status_writer *w;
	char path[256];
	int64_t t0;
	size_t len;
	char *text;

	fake_reset(0, NULL);
	snprintf(path, sizeof(path), "%s/status", cfg->storage_directory);
	CHECK_INT(status_board_get(board, 0, 100, a), -1);	/* nothing yet */
	src.sh = shipper_start(cfg, q, &fake_deps);
	w = status_start(cfg, &src, board);
	CHECK(w != NULL);
	CHECK(wait_file(path, 3000));
	CHECK_INT(status_board_get(board, 60000, 0, a), 0);
	text = slurp(path, &len);
	CHECK_INT(status_parse(text, len, f), 0);
	free(text);
	CHECK_INT(f->updated_ms, a->updated_ms);
	/* an idle agent: no news, the writer sleeps; asking for a picture
	 * at most 50 ms old wakes it */
	poll(NULL, 0, STATUS_PERIOD_MS + 100);
	t0 = mono_ms();
	CHECK_INT(status_board_get(board, 50, 2000, a), 0);
	if (mono_ms() - t0 > 1000)
		T_FAILF("a new picture took %lld ms", (long long)(mono_ms() - t0));
	CHECK(a->updated_ms >= f->updated_ms + STATUS_PERIOD_MS);
	text = slurp(path, &len);
	CHECK_INT(status_parse(text, len, f), 0);
	free(text);
	CHECK_INT(f->updated_ms, a->updated_ms);
	status_stop(w);
	/* no writer: the stop's last picture, at once */
	t0 = mono_ms();
	CHECK_INT(status_board_get(board, 0, 2000, a), 0);
	CHECK(mono_ms() - t0 < 500);
	text = slurp(path, &len);
	CHECK_INT(status_parse(text, len, f), 0);
	free(text);
	CHECK_INT(f->updated_ms, a->updated_ms);
	(void)shipper_stop(src.sh, 1000, NULL);
	status_board_free(board);
	queue_close(q);
	free(a);
	free(f);
	config_free(cfg);
}

int
main(void)
{
	T_PROG("test_status");
	log_init(0, "/dev/null");
	if (fake_root("/tmp/test_status.XXXXXX") < 0)
		return 1;
	RUN(figures_from_the_queue_and_the_shipper_poison_once);
	RUN(status_file_content);
	RUN(filelogs_cumulative_in_the_file);
	RUN(writer_started_and_stopped_by_its_owner);
	RUN(board_holds_the_file_picture);
	RUN(json_says_what_the_text_says);
	return t_done();
}
