/*
 * Unit tests of the core: buffers and JSON strings, events (validation,
 * JSON encoding checked by a real JSON parser, binary round-trip), safe
 * command execution, the state store.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/lib/buf.h"
#include "../../agent/lib/clock.h"
#include "../../agent/event.h"
#include "../../agent/lib/exec.h"
#include "../../agent/lib/fs.h"
#include "../../agent/lib/json.h"
#include "../../agent/lib/kvstore.h"
#include "../../agent/lib/platform.h"
#include "../../agent/spool/segstore.h"
#include "../../agent/lib/utf8.h"
#include "../../output/file.h"
#include "../../output/sink.h"

static char tmpdir[] = "/tmp/esxwatch-test-core-XXXXXX";

TEST(buf_bounded)
{
	struct buf b;

	buf_init(&b, 8);
	CHECK_INT(buf_puts(&b, "12345678"), 0);
	CHECK_INT(buf_putc(&b, '9'), -1);	/* over the limit */
	CHECK_INT(b.len, 8);
	CHECK_STR(b.data, "12345678");
	buf_free(&b);
}

TEST(json_escapes_and_fixes_utf8)
{
	struct buf b;
	const char in[] = "a\"b\\c\n\t\x01\xff\xc3\xa9\xe2\x82";

	buf_init(&b, 0);
	CHECK_INT(json_put_str(&b, in, sizeof(in) - 1), 0);
	/* é kept, 0xff and the truncated 3-byte sequence replaced */
	CHECK_STR(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\"");
	buf_free(&b);
}

TEST(utf8_overlong_and_surrogates_replaced)
{
	struct buf b;

	buf_init(&b, 0);
	/* overlong '/', a UTF-16 surrogate, a code point past U+10FFFF */
	static const char in[] = "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80";

	utf8_repair(&b, in, sizeof(in) - 1);
	CHECK(strstr(b.data, "\xc0") == NULL);
	CHECK(strstr(b.data, "\xed\xa0") == NULL);
	CHECK(strstr(b.data, "\xf4\x90") == NULL);
	buf_free(&b);
}

TEST(utf8_cut_never_splits)
{
	const char s[] = "ab\xc3\xa9";	/* a b é */

	CHECK_INT(utf8_cut(s, 4, 3), 2);
	CHECK_INT(utf8_cut(s, 4, 4), 4);
}

/* A buffer too small for the worst case (6 bytes per input byte) but big
 * enough for the result: escaped in pieces, byte for byte the same, also
 * where a piece boundary falls inside a UTF-8 sequence. */
TEST(json_put_str_in_pieces_near_the_limit)
{
	static const char *const parts[] = { "plain text ", "\xc3\xa9",
	    "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x80", "\"q\"\\", "\n\x01",
	    "\xe2\x82" };
	char in[5000];
	struct buf whole, near, tight;

	/* shift: the piece boundaries (every 512 input bytes) fall on each
	 * byte of the multi-byte sequences in turn */
	for (size_t shift = 0; shift < 4; shift++) {
		size_t n = shift, k = 0;

		memset(in, 'x', shift);
		while (n + 16 < sizeof(in)) {
			const char *p = parts[k++ % (sizeof(parts) / sizeof(parts[0]))];

			memcpy(in + n, p, strlen(p));
			n += strlen(p);
		}
		buf_init(&whole, 0);
		CHECK_INT(json_put_str(&whole, in, n), 0);
		CHECK(whole.len < 6 * n);
		buf_init(&near, whole.len);
		CHECK_INT(json_put_str(&near, in, n), 0);
		CHECK_INT(near.len, whole.len);
		CHECK(near.data != NULL && memcmp(near.data, whole.data, whole.len) == 0);
		/* one byte short: refused, the buffer as it was */
		buf_init(&tight, whole.len + 1);
		CHECK_INT(buf_puts(&tight, "ab"), 0);
		CHECK_INT(json_put_str(&tight, in, n), -1);
		CHECK_INT(tight.len, 2);
		CHECK_STR(tight.data, "ab");
		buf_free(&tight);
		buf_free(&near);
		buf_free(&whole);
	}
}

TEST(utf8_valid_len_stops_at_the_first_bad_byte)
{
	CHECK_INT(utf8_valid_len("ab\xc3\xa9", 4), 4);
	CHECK_INT(utf8_valid_len("ab\xc0\xaf" "c", 5), 2);	/* overlong */
	CHECK_INT(utf8_valid_len("a\xed\xa0\x80", 4), 1);	/* surrogate */
	CHECK_INT(utf8_valid_len("a\xe2\x82", 3), 1);		/* cut short */
}

TEST(field_names)
{
	CHECK(field_name_valid("esxwatch_nic"));
	CHECK(field_name_valid("_x9"));
	CHECK(!field_name_valid("9x"));
	CHECK(!field_name_valid("Esx"));
	CHECK(!field_name_valid("a-b"));
	CHECK(!field_name_valid(""));
	CHECK(!field_name_valid("text"));
	CHECK(!field_name_valid("timestamp"));
	CHECK(!field_name_valid("source"));
	CHECK(!field_name_valid("event_type"));
}

TEST(event_fields_unique_and_replaced)
{
	struct event *ev = event_new(1733000000123LL, "hello");

	CHECK_INT(event_set(ev, "a", "1"), 0);
	CHECK_INT(event_set(ev, "a", "2"), 0);
	CHECK_INT(event_set_default(ev, "a", "3"), 0);
	CHECK_INT(event_set(ev, "text", "x"), -1);
	CHECK_INT(ev->nfields, 1);
	CHECK_STR(event_get(ev, "a"), "2");
	event_free(ev);
}

TEST(event_text_truncated_with_marker)
{
	char *big = malloc(EVENT_TEXT_MAX * 2 + 1);
	struct event *ev;

	memset(big, 'x', EVENT_TEXT_MAX * 2);
	big[EVENT_TEXT_MAX * 2] = '\0';
	ev = event_new(0, big);
	CHECK_INT(strlen(ev->text), EVENT_TEXT_MAX);
	CHECK(strcmp(ev->text + EVENT_TEXT_MAX - strlen(EVENT_TRUNC_MARKER),
	    EVENT_TRUNC_MARKER) == 0);
	CHECK(ev->timestamp_ms > 1600000000000LL);
	event_free(ev);
	free(big);
}

/* Encode, then let Python's json module (a real parser) read it back. */
TEST(event_json_parsed_by_real_parser)
{
	struct event *ev = event_new(1733000000123LL, "line\nwith \"quotes\" \\ \x02 and \xff bad");
	struct buf b;
	char path[256];
	int fd;
	struct exec_result res;
	const char *py = "/usr/bin/python3";
	const char *argv[] = { py, "-c",
		"import json,sys\n"
		"d=json.load(open(sys.argv[1],encoding='utf-8'))\n"
		"assert d['timestamp']==1733000000123, d\n"
		"assert d['text']=='line\\nwith \"quotes\" \\\\ \\x02 and \\ufffd bad', repr(d['text'])\n"
		"assert d['esxwatch_nic']=='vmnic0'\n"
		"assert d['v']=='tab\\there \\u00e9 \\u2603'\n"
		"assert list(d)==['timestamp','text','esxwatch_nic','v'], list(d)\n"
		"print('ok')\n", path, NULL };

	if (access(py, X_OK) != 0)
		argv[0] = py = "/usr/local/bin/python3";
	event_set(ev, "esxwatch_nic", "vmnic0");
	event_set(ev, "v", "tab\there \xc3\xa9 \xe2\x98\x83");
	buf_init(&b, 0);
	CHECK_INT(event_to_json(ev, &b), 0);
	snprintf(path, sizeof(path), "%s/ev.json", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(write(fd, b.data, b.len) == (ssize_t)b.len);
	close(fd);
	CHECK_INT(exec_run(argv, 20000, 0, &res), 0);
	CHECK_INT(res.status, 0);
	CHECK_STR(res.out, "ok\n");
	if (res.status != 0)
		printf("python said: %s\n", res.err);
	exec_result_free(&res);
	buf_free(&b);
	event_free(ev);
}

TEST(event_binary_roundtrip)
{
	struct event *ev = event_new(42, "t\xc3\xa9xt"), *back;
	struct buf b;
	size_t i;

	event_set(ev, "a", "1");
	event_set(ev, "b", "");
	buf_init(&b, 0);
	CHECK_INT(event_serialize(ev, &b), 0);
	back = event_deserialize(b.data, b.len);
	CHECK(back != NULL);
	if (back) {
		CHECK_INT(back->timestamp_ms, 42);
		CHECK_STR(back->text, "t\xc3\xa9xt");
		CHECK_INT(back->nfields, 2);
		CHECK_STR(event_get(back, "b"), "");
		event_free(back);
	}
	/* Every truncation and a corrupted byte are refused, never a crash. */
	for (i = 0; i < b.len; i++) {
		back = event_deserialize(b.data, i);
		CHECK(back == NULL);
		event_free(back);
	}
	b.data[0] = 7;
	CHECK(event_deserialize(b.data, b.len) == NULL);
	buf_free(&b);
	event_free(ev);
}

/* The spool's fast decode gives back exactly what was serialized; a bad
 * length is refused, never read past. */
TEST(event_spooled_decode_roundtrip)
{
	struct event *ev = event_new(1733000000123LL, "t\xc3\xa9xt \"q\"\n"), *back;
	char name[16];
	struct buf b, j1, j2;
	size_t i;

	for (i = 0; i < 40; i++) {	/* past the inline fields and chunk */
		snprintf(name, sizeof(name), "f%zu", i);
		CHECK_INT(event_set(ev, name, i % 3 ? "v\tal\\ue" : ""), 0);
	}
	buf_init(&b, 0);
	buf_init(&j1, 0);
	buf_init(&j2, 0);
	CHECK_INT(event_serialize(ev, &b), 0);
	back = event_decode_spooled(b.data, b.len);
	CHECK(back != NULL);
	if (back != NULL) {
		CHECK_INT(back->timestamp_ms, 1733000000123LL);
		CHECK_INT(back->nfields, 40);
		CHECK_INT(event_to_json(ev, &j1), 0);
		CHECK_INT(event_to_json(back, &j2), 0);
		CHECK_STR(j2.data, j1.data);
		/* it takes new fields and a new text like any other */
		CHECK_INT(event_set(back, "f3", "a longer value than before"), 0);
		CHECK_INT(event_set(back, "extra", "x"), 0);
		CHECK_INT(event_set_text(back, "new"), 0);
		CHECK_STR(event_get(back, "f3"), "a longer value than before");
		CHECK_STR(back->text, "new");
		event_free(back);
	}
	for (i = 0; i < b.len; i++)
		CHECK(event_decode_spooled(b.data, i) == NULL);
	/* a text length past the end, a field count past what is left */
	b.data[9] = (char)0xff;
	CHECK(event_decode_spooled(b.data, b.len) == NULL);
	buf_free(&b);
	buf_free(&j1);
	buf_free(&j2);
	event_free(ev);
}

/* Built-in names go through event_set_builtin(): each must be a name
 * event_set() would take. */
TEST(event_builtin_names_valid)
{
	static const char *const names[] = { "hostname", "appname",
	    "esxwatch_collector", "esxwatch_kind", "esxwatch_severity",
	    "esxwatch_version", "esxwatch_event_time" };
	struct event *ev = event_new(1, "x");
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK(field_name_valid(names[i]));
		CHECK_INT(event_set_builtin(ev, names[i], "v"), 0);
		CHECK_INT(event_set_builtin_default(ev, names[i], "w"), 0);
		CHECK_STR(event_get(ev, names[i]), "v");
	}
	/* the same short value again, then a repaired one, in place */
	CHECK_INT(event_set(ev, "hostname", "\xff"), 0);
	CHECK_STR(event_get(ev, "hostname"), "\xef\xbf\xbd");
	CHECK_INT(event_set(ev, "hostname", "h"), 0);
	CHECK_STR(event_get(ev, "hostname"), "h");
	CHECK_INT(ev->nfields, 7);
	event_free(ev);
}

TEST(exec_captures_output_and_status)
{
	const char *argv[] = { "/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct exec_result res;

	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_INT(res.status, 3);
	CHECK_STR(res.out, "out\n");
	CHECK_STR(res.err, "err\n");
	CHECK(!res.timed_out);
	exec_result_free(&res);
}

TEST(exec_no_shell_interpretation)
{
	const char *argv[] = { "/bin/echo", "$(id)", ";", "rm", "-rf", "/", NULL };
	struct exec_result res;

	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_STR(res.out, "$(id) ; rm -rf /\n");
	exec_result_free(&res);
}

TEST(exec_timeout_kills_the_group)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 100 & sleep 100; echo never", NULL };
	struct exec_result res;
	time_t t0 = time(NULL);

	CHECK_INT(exec_run(argv, 500, 0, &res), 0);
	CHECK(res.timed_out);
	CHECK(time(NULL) - t0 < 5);
	CHECK_STR(res.out, "");
	exec_result_free(&res);
}

/* Read the whole (small) file at path into out; its length or -1. */
static ssize_t
slurp_small(const char *path, char *out, size_t outlen)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, out, outlen - 1);
	close(fd);
	if (n >= 0)
		out[n] = '\0';
	return n;
}

/* True once pid is gone or a zombie (whoever inherited it reaps it). */
static bool
wait_gone(long pid)
{
	for (int i = 0; i < 100; i++) {
		char path[64], st[256];
		const char *close_paren;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		n = slurp_small(path, st, sizeof(st));
		close_paren = n > 0 ? strrchr(st, ')') : NULL;
		if (n < 0 || (close_paren != NULL && close_paren[1] == ' ' &&
		    close_paren[2] == 'Z'))
			return true;
		poll(NULL, 0, 20);
	}
	return false;
}

/* Run a script whose tool exits at once with want_status while a child
 * lingers: the run ends soon, not timed out; the child's pid (the
 * script's first line). */
static long
run_lingering(const char *script, int want_status, struct exec_result *res)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	int64_t t0 = mono_ms();

	CHECK_INT(exec_run(argv, 10000, 0, res), 0);
	CHECK(!res->timed_out);
	CHECK_INT(res->status, want_status);
	CHECK(mono_ms() - t0 < 5000);
	return strtol(res->out, NULL, 10);
}

/* A tool that exits 0 but leaves a child holding its stdout: its answer
 * and status count (not "timed out"), soon after it exited, and the child
 * in its group is killed. */
TEST(exec_lingering_child_does_not_turn_success_into_timeout)
{
	struct exec_result res;
	long pid = run_lingering("sleep 30 & echo $!; echo done; exit 0", 0, &res);

	CHECK(pid > 1);
	CHECK(strstr(res.out, "\ndone\n") != NULL);
	if (pid > 1)
		CHECK(wait_gone(pid));
	exec_result_free(&res);
}

/* A child that left the group (setsid) and holds the pipes: reading stops
 * shortly after the tool exited; the tool's status is reported. */
TEST(exec_setsid_child_does_not_hold_the_run)
{
	struct exec_result res;
	long pid;

	if (access("/usr/bin/setsid", X_OK) != 0 && access("/bin/setsid", X_OK) != 0)
		return;		/* no setsid(1) here */
	pid = run_lingering("setsid sleep 30 & echo $!; exit 4", 4, &res);
	if (pid > 1)
		kill((pid_t)pid, SIGKILL);	/* outside the group: ours to clean */
	exec_result_free(&res);
}

TEST(exec_output_capped)
{
	const char *argv[] = { "/bin/sh", "-c", "yes | head -c 100000", NULL };
	struct exec_result res;

	CHECK_INT(exec_run(argv, 10000, 1000, &res), 0);
	CHECK(res.truncated);
	CHECK_INT(res.out_len, 1000);
	CHECK_INT(res.status, 0);
	exec_result_free(&res);
}

TEST(exec_missing_program)
{
	const char *argv[] = { "/nonexistent/tool", NULL };
	struct exec_result res;

	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_INT(res.status, 127);
	CHECK(strstr(res.err, "cannot execute") != NULL);
	exec_result_free(&res);
}

static int
count_cb(void *arg, const char *k, const char *v)
{
	(void)k;
	(void)v;
	(*(int *)arg)++;
	return 0;
}

TEST(kvstore_persists_atomically)
{
	char path[256];
	struct kvstore *kv;
	struct stat st;
	int n = 0;

	snprintf(path, sizeof(path), "%s/s.kv", tmpdir);
	kv = kv_open(path);
	kv_set(kv, "vmnic0.link", "up");
	kv_set(kv, "vmnic1.link", "down");
	kv_set(kv, "odd\tkey\n", "va\\lue\n");
	CHECK(kv_dirty(kv));
	CHECK_INT(kv_save(kv), 0);
	CHECK(!kv_dirty(kv));
	kv_close(kv);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	kv = kv_open(path);
	CHECK_STR(kv_get(kv, "vmnic0.link"), "up");
	CHECK_STR(kv_get(kv, "odd\tkey\n"), "va\\lue\n");
	kv_foreach(kv, "vmnic", count_cb, &n);
	CHECK_INT(n, 2);
	kv_del(kv, "vmnic1.link");
	CHECK(kv_get(kv, "vmnic1.link") == NULL);
	kv_close(kv);
}

struct writer_arg {
	const char	*path;
	char		 fill;
	int		 failures;
};

static void *
writer(void *arg)
{
	struct writer_arg *w = arg;
	char data[4096];

	memset(data, w->fill, sizeof(data));
	for (int i = 0; i < 300; i++)
		if (fs_write_atomic(w->path, data, sizeof(data), 0600) != 0)
			w->failures++;
	return NULL;
}

/* Two threads saving the same file: every save succeeds and the file is
 * always one whole version, never a mix. */
TEST(write_file_atomic_concurrent_writers)
{
	char path[256], got[8192];
	struct writer_arg a = { path, 'a', 0 }, b = { path, 'b', 0 };
	pthread_t ta, tb;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/same.kv", tmpdir);
	CHECK_INT(pthread_create(&ta, NULL, writer, &a), 0);
	CHECK_INT(pthread_create(&tb, NULL, writer, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_INT(a.failures, 0);
	CHECK_INT(b.failures, 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, got, sizeof(got));
	close(fd);
	CHECK_INT(n, 4096);
	for (ssize_t i = 1; i < n; i++)
		if (got[i] != got[0]) {
			CHECK(!"a mixed file");
			break;
		}
}

static size_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* The file sink: a file removed or renamed away is created again, and a
 * batch cut short by a full disk is taken back before it is resent (no
 * torn line, no duplicate). */
TEST(file_sink_reopens_and_never_tears_a_line)
{
	const struct sink *sk = sink_find(PROTO_FILE);
	struct dest_conf dc;
	struct file_opts fo;
	void *opts[SINK_MAX] = { NULL };
	struct sink_ctx ctx;
	struct event *evs[2];
	struct batch b = { .events = evs, .n = 2 };
	struct rlimit old, lim;
	char path[256], moved[256];
	size_t before;
	int ra = 0;

	CHECK(sk != NULL);
	if (sk == NULL)
		return;
	snprintf(path, sizeof(path), "%s/out.jsonl", tmpdir);
	snprintf(moved, sizeof(moved), "%s/out.jsonl.1", tmpdir);
	memset(&dc, 0, sizeof(dc));
	memset(&ctx, 0, sizeof(ctx));
	dc.proto = PROTO_FILE;
	/* the file sink's block, where the loader would put it */
	fo.path = path;
	for (size_t i = 0; i < sink_count(); i++)
		if (sink_at(i) == sk)
			opts[i] = &fo;
	dc.opts = opts;
	dc.nopts = sink_count();
	ctx.name = "server";
	ctx.conf = &dc;
	evs[0] = event_new(1000, "first event, long enough to be cut in the middle");
	evs[1] = event_new(2000, "second event, long enough to be cut in the middle");
	CHECK_INT(sk->open(&ctx), 0);
	CHECK_INT(sk->send(&ctx, &b, &ra), SEND_OK);
	before = file_size(path);
	CHECK(before > 0);

	CHECK_INT(rename(path, moved), 0);
	CHECK_INT(sk->send(&ctx, &b, &ra), SEND_OK);
	CHECK_INT(file_size(path), before);
	CHECK_INT(file_size(moved), before);

	/* A file size limit stands in for a full disk: the second line does
	 * not fit. */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = before + before / 4;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
	CHECK_INT(sk->send(&ctx, &b, &ra), SEND_RETRY);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK_INT(file_size(path), before);
	CHECK_INT(sk->send(&ctx, &b, &ra), SEND_OK);
	CHECK_INT(file_size(path), 2 * before);
	sk->close(&ctx);
	event_free(evs[0]);
	event_free(evs[1]);
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n++;
	closedir(d);
	return n;
}

struct exec_arg {
	int	slow;		/* runs out of time */
	int	failures;
};

static void *
exec_worker(void *arg)
{
	struct exec_arg *a = arg;
	const char *quick[] = { "/bin/echo", "hello", NULL };
	const char *slow[] = { "/bin/sleep", "30", NULL };

	for (int i = 0; i < (a->slow ? 1 : 25); i++) {
		struct exec_result res;
		int64_t t0 = now_ms();

		if (exec_run(a->slow ? slow : quick, a->slow ? 4000 : 10000, 0, &res) != 0)
			a->failures++;
		else if (a->slow ? !res.timed_out :
		    (res.status != 0 || strcmp(res.out, "hello\n") != 0 ||
		    now_ms() - t0 > 2000))
			a->failures++;	/* a quick one waited on another's pipe */
		exec_result_free(&res);
	}
	return NULL;
}

/* Many threads running tools at once: every run sees its own output end
 * when its tool exits (no pipe end leaks into another thread's child), a
 * timed-out tool is killed, and no descriptor is left open. */
TEST(exec_concurrent_runs_leak_nothing)
{
	struct exec_arg args[6];
	pthread_t th[6];
	int before = count_fds();

	for (int i = 0; i < 6; i++) {
		args[i].slow = i == 0;
		args[i].failures = 0;
		CHECK_INT(pthread_create(&th[i], NULL, exec_worker, &args[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(args[i].failures, 0);
	}
	CHECK_INT(count_fds(), before);
}

/* exec_abort_all(): a new run does not start and says it was cancelled;
 * exec_aborting() tells a collector so; exec_abort_reset() ends it. */
TEST(exec_abort_cancels_and_resets)
{
	const char *argv[] = { "/bin/echo", "x", NULL };
	struct exec_result res;

	CHECK(!exec_aborting());
	exec_abort_all();
	CHECK(exec_aborting());
	CHECK_INT(exec_run(argv, 10000, 0, &res), -1);
	exec_result_free(&res);
	exec_abort_reset();
	CHECK(!exec_aborting());
	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_INT(res.status, 0);
	exec_result_free(&res);
}

/* A symlink planted where the agent keeps a file is never written
 * through: a save replaces the link itself, a fixed temp name that is a
 * link is removed, not followed, and a read refuses the link. */
TEST(storage_files_never_follow_a_planted_link)
{
	char dir[200], target[256], link[256], tmp[300], got[64];
	struct segstore st;
	struct seg_pos pos = { 3, 40, 7 }, back;
	struct kvstore *kv;
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s/nofollow", tmpdir);
	snprintf(target, sizeof(target), "%s/precious", tmpdir);
	CHECK_INT(mkdir(dir, 0700), 0);
	CHECK_INT(fs_write_atomic(target, "keep\n", 5, 0600), 0);

	snprintf(link, sizeof(link), "%s/bookmarks", dir);
	CHECK_INT(symlink(target, link), 0);
	CHECK(fs_open_read(link) < 0 && errno == ELOOP);
	kv = kv_open(link);	/* the link is not read as the state */
	CHECK(kv != NULL && kv_get(kv, "keep") == NULL);
	kv_set(kv, "a", "b");
	CHECK_INT(kv_save(kv), 0);
	kv_close(kv);
	CHECK_INT(lstat(link, &sb), 0);
	CHECK(S_ISREG(sb.st_mode));

	memset(&st, 0, sizeof(st));
	st.dir = dir;
	snprintf(tmp, sizeof(tmp), "%s/cursor.server.tmp", dir);
	CHECK_INT(symlink(target, tmp), 0);
	CHECK_INT(segstore_cursor_write(&st, "server", &pos), 0);
	snprintf(link, sizeof(link), "%s/cursor.server", dir);
	CHECK_INT(segstore_cursor_read(link, &back), 0);
	CHECK_INT(back.off, 40);
	CHECK_INT(lstat(tmp, &sb), -1);

	CHECK_INT(slurp_small(target, got, sizeof(got)), 5);
	CHECK_STR(got, "keep\n");
}

/* The storage directory: made 0700 when new; refused when another user
 * owns a file in it, when it can be written by others, or holds a link. */
TEST(storage_dir_checked_before_use)
{
	char dir[256], path[300], err[512];
	struct stat sb;
	int fd;

	snprintf(dir, sizeof(dir), "%s/store/sub", tmpdir);
	CHECK_INT(fs_storage_check(dir, err, sizeof(err)), 0);
	CHECK_INT(stat(dir, &sb), 0);
	CHECK_INT(sb.st_mode & 07777, 0700);

	CHECK_INT(chmod(dir, 0777), 0);
	CHECK_INT(fs_storage_check(dir, err, sizeof(err)), -2);
	CHECK(strstr(err, "writable by every user") != NULL);
	CHECK_INT(chmod(dir, 0700), 0);

	snprintf(path, sizeof(path), "%s/state", dir);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/state/nic.kv", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0620);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(chmod(path, 0620), 0);
	CHECK_INT(fs_storage_check(dir, err, sizeof(err)), -2);
	CHECK(strstr(err, "state/nic.kv is writable by its group") != NULL);
	CHECK_INT(chmod(path, 0600), 0);
	CHECK_INT(fs_storage_check(dir, err, sizeof(err)), 0);

	if (geteuid() == 0) {	/* only root can give a file away */
		CHECK_INT(chown(path, 65534, 65534), 0);
		CHECK_INT(fs_storage_check(dir, err, sizeof(err)), -2);
		CHECK(strstr(err, "belongs to uid 65534") != NULL);
		CHECK_INT(chown(path, 0, 0), 0);
	}
	snprintf(path, sizeof(path), "%s/status", dir);
	CHECK_INT(symlink("/etc/passwd", path), 0);
	CHECK_INT(fs_storage_check(dir, err, sizeof(err)), -2);
	CHECK(strstr(err, "/status is a symbolic link") != NULL);
	/* the probe's rule: a VFAT mount shows 0777 or 0755 for a new 0600
	 * file; a umask only takes bits away */
	CHECK(fs_modes_ignored(0600, S_IFREG | 0777));
	CHECK(fs_modes_ignored(0600, S_IFREG | 0755));
	CHECK(!fs_modes_ignored(0600, S_IFREG | 0600));
	CHECK(!fs_modes_ignored(0600, S_IFREG | 0400));
	/* no probe file is left behind */
	CHECK_INT(unlink(path), 0);
	CHECK_INT(fs_storage_check(dir, err, sizeof(err)), 0);
	{
		DIR *d = opendir(dir);
		struct dirent *e;

		CHECK(d != NULL);
		while (d != NULL && (e = readdir(d)) != NULL)
			CHECK(strncmp(e->d_name, ".modes.", 7) != 0);
		if (d != NULL)
			closedir(d);
	}
}

/* A thread of the agent's: the daemon's signals blocked, a fault's not
 * (blocked, a SIGSEGV killed the process without a word: no sanitizer
 * report; a crash at start looked like a hang). */
static void *
mask_of_thread(void *arg)
{
	pthread_sigmask(SIG_BLOCK, NULL, arg);
	return NULL;
}

TEST(thread_blocks_the_daemon_signals_not_the_faults)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	static const int daemon_sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };
	sigset_t m;
	pthread_t t;

	sigemptyset(&m);
	CHECK_INT(platform_thread_start(&t, "esxw-test", PLATFORM_STACK_SMALL,
	    mask_of_thread, &m), 0);
	pthread_join(t, NULL);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		CHECK_INT(sigismember(&m, faults[i]), 0);
	for (size_t i = 0; i < sizeof(daemon_sigs) / sizeof(daemon_sigs[0]); i++)
		CHECK_INT(sigismember(&m, daemon_sigs[i]), 1);
}

int
main(void)
{
	T_PROG("core");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	RUN(thread_blocks_the_daemon_signals_not_the_faults);
	RUN(buf_bounded);
	RUN(json_escapes_and_fixes_utf8);
	RUN(utf8_overlong_and_surrogates_replaced);
	RUN(utf8_cut_never_splits);
	RUN(json_put_str_in_pieces_near_the_limit);
	RUN(utf8_valid_len_stops_at_the_first_bad_byte);
	RUN(field_names);
	RUN(event_fields_unique_and_replaced);
	RUN(event_text_truncated_with_marker);
	RUN(event_json_parsed_by_real_parser);
	RUN(event_binary_roundtrip);
	RUN(event_spooled_decode_roundtrip);
	RUN(event_builtin_names_valid);
	RUN(exec_captures_output_and_status);
	RUN(exec_no_shell_interpretation);
	RUN(exec_timeout_kills_the_group);
	RUN(exec_lingering_child_does_not_turn_success_into_timeout);
	RUN(exec_setsid_child_does_not_hold_the_run);
	RUN(exec_output_capped);
	RUN(exec_missing_program);
	RUN(exec_concurrent_runs_leak_nothing);
	RUN(exec_abort_cancels_and_resets);
	RUN(kvstore_persists_atomically);
	RUN(write_file_atomic_concurrent_writers);
	RUN(storage_files_never_follow_a_planted_link);
	RUN(storage_dir_checked_before_use);
	RUN(file_sink_reopens_and_never_tears_a_line);
	{
		const char *argv[] = { "/bin/rm", "-rf", tmpdir, NULL };
		struct exec_result res;

		exec_run(argv, 10000, 0, &res);
		exec_result_free(&res);
	}
	return t_done();
}
