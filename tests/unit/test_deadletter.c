/*
 * The dead_letter file (agent/deadletter.c) and what the shipper puts in
 * it: the poison event isolated by splitting, and the items a per_item
 * sink (sink.h) answers as refused; the per_item answer's retry of only
 * the events not delivered (agent/shipper_poison.c).
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/deadletter.h"
#include "../../agent/lib/json.h"
#include "../../agent/lib/log.h"
#include "fakesink.h"

/* The lines of a file, parsed one by one: count, and line i's doc. */
static int
dl_lines(const char *path, char lines[][2048], int max)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	if (f == NULL)
		return 0;
	while (n < max && fgets(lines[n], 2048, f) != NULL)
		n++;
	fclose(f);
	return n;
}

static bool
field_is(const char *line, const char *path, const char *want)
{
	struct json_doc doc;
	char err[128], got[512];
	bool ok = false;
	int node;

	if (json_parse(line, strlen(line), &doc, err, sizeof(err)) == -1)
		return false;
	node = json_get(&doc, 0, path);
	if (node >= 0 && json_str(&doc, node, got, sizeof(got)))
		ok = strcmp(got, want) == 0;
	json_free(&doc);
	return ok;
}

TEST(a_line_per_event_0600_and_bounded)
{
	char path[128], err[128], lines[4][2048];
	struct event *ev = event_new(1733000000123, "refused \"quoted\" line");
	struct stat st;

	snprintf(path, sizeof(path), "%s/dl1.jsonl", fake_dir);
	CHECK_INT(event_set(ev, "hostname", "esx01"), 0);
	CHECK_INT(deadletter_append(path, 4096, "es", "elasticsearch",
	    "HTTP 400 mapper_parsing_exception", ev, 1733000001456, err,
	    sizeof(err)), DL_WRITTEN);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK_INT(dl_lines(path, lines, 4), 1);
	CHECK(field_is(lines[0], "time", "2024-11-30T20:53:21.456Z"));
	CHECK(field_is(lines[0], "destination", "es"));
	CHECK(field_is(lines[0], "proto", "elasticsearch"));
	CHECK(field_is(lines[0], "reason", "HTTP 400 mapper_parsing_exception"));
	CHECK(field_is(lines[0], "event.text", "refused \"quoted\" line"));
	CHECK(field_is(lines[0], "event.hostname", "esx01"));
	CHECK(strstr(lines[0], "\"timestamp\":1733000000123") != NULL);
	/* a file others could read is made 0600 */
	CHECK_INT(chmod(path, 0644), 0);
	/* past the bound: not written, said so */
	CHECK_INT(deadletter_append(path, (int64_t)st.st_size + 10, "es",
	    "elasticsearch", "x", ev, 0, err, sizeof(err)), DL_FULL);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK_INT(dl_lines(path, lines, 4), 1);
	CHECK_INT(deadletter_append(path, 1 << 20, "es", "elasticsearch", "y",
	    ev, 0, err, sizeof(err)), DL_WRITTEN);
	CHECK_INT(dl_lines(path, lines, 4), 2);
	CHECK(field_is(lines[1], "reason", "y"));
	/* a directory, not a file: an error, not a crash */
	CHECK_INT(deadletter_append(fake_dir, 1 << 20, "es", "e", "z", ev, 0,
	    err, sizeof(err)), DL_ERROR);
	event_free(ev);
}

TEST(the_isolated_poison_goes_to_the_dead_letter_file)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct shipper_dest_stats ss;
	struct queue_dest_stats qs;
	char path[128], lines[4][2048];

	snprintf(path, sizeof(path), "%s/dl2.jsonl", fake_dir);
	free(cfg->server.dead_letter);
	cfg->server.dead_letter = strdup(path);
	cfg->server.dead_letter_max_kb = 1024;
	fake_reset(0, "POISON");
	push(q, 0, 8, 5);
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_seen(7, 5000));
	CHECK(wait_backlog_empty(q, 5000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK(!shipper_stop(sh, 1000, NULL));
	CHECK_INT(ss.dead_lettered, 1);
	CHECK_INT(ss.dead_letter_dropped, 0);
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.dropped_poison, 1);	/* still counted as dropped */
	CHECK_INT(dl_lines(path, lines, 4), 1);
	CHECK(field_is(lines[0], "event.text", "line 5 POISON"));
	CHECK(field_is(lines[0], "reason", "fake: rejected"));
	CHECK(field_is(lines[0], "destination", "server"));
	queue_close(q);
	config_free(cfg);
}

TEST(a_full_dead_letter_file_is_counted)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct shipper_dest_stats ss;
	struct queue_dest_stats qs;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/dl3.jsonl", fake_dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_INT(ftruncate(fd, 1024), 0);	/* full already */
	close(fd);
	free(cfg->server.dead_letter);
	cfg->server.dead_letter = strdup(path);
	cfg->server.dead_letter_max_kb = 1;
	fake_reset(0, "POISON");
	push(q, 0, 4, 2);
	sh = shipper_start(cfg, q, &fake_deps);
	CHECK(wait_backlog_empty(q, 5000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK(!shipper_stop(sh, 1000, NULL));
	CHECK_INT(ss.dead_lettered, 0);
	CHECK_INT(ss.dead_letter_dropped, 1);
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.dropped_poison, 1);
	queue_close(q);
	config_free(cfg);
}

/*
 * A per_item sink: an event "R429" is answered SINK_ITEM_RETRY the first
 * time it is sent, "R400" SINK_ITEM_REJECT; the rest is delivered.  What
 * it was handed (the pending events only) is recorded.
 */
static struct {
	pthread_mutex_t	 mu;
	char		 sent[MAXSEEN][32];
	size_t		 nsent;
	size_t		 sizes[64];
	size_t		 sends;
	bool		 r429_done[MAXSEEN];
} pk = { .mu = PTHREAD_MUTEX_INITIALIZER };

static enum send_result
items_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	bool partial = false;
	size_t k = 0;

	*retry_after = 0;
	pthread_mutex_lock(&pk.mu);
	for (size_t i = 0; i < b->n; i++) {
		const char *t = b->events[i]->text;
		int num = atoi(t + 5);

		if (ctx->item[i] != SINK_ITEM_PENDING)
			continue;	/* settled before: not sent */
		k++;
		if (pk.nsent < MAXSEEN)
			snprintf(pk.sent[pk.nsent++], sizeof(pk.sent[0]), "%s", t);
		ctx->item[i] = SINK_ITEM_OK;
		if (strstr(t, "R429") && !pk.r429_done[num]) {
			pk.r429_done[num] = true;
			ctx->item[i] = SINK_ITEM_RETRY;
			partial = true;
		}
		if (strstr(t, "R400")) {
			ctx->item[i] = SINK_ITEM_REJECT;
			snprintf(ctx->item_why[i], SINK_ITEM_WHY,
			    "status 400: mapper_parsing_exception");
			partial = true;
		}
	}
	if (pk.sends < 64)
		pk.sizes[pk.sends] = k;
	pk.sends++;
	pthread_mutex_unlock(&pk.mu);
	if (partial)
		*retry_after = 1;
	return partial ? SEND_PARTIAL : SEND_OK;
}

static const struct sink items_sink = {
	.name = "items", .proto = PROTO_FILE, .open = fake_open,
	.send = items_send, .close = fake_close, .per_item = true,
};

static const struct sink *
items_find(enum dest_proto p)
{
	(void)p;
	return &items_sink;
}

static const struct shipper_deps items_deps = { .find = items_find };

static void
push_text(struct queue *q, int i, const char *tag)
{
	struct event *ev;
	char text[32];

	snprintf(text, sizeof(text), "line %d%s", i, tag);
	ev = event_new(now_ms(), text);
	CHECK_INT(queue_push(q, ev), 0);
	event_free(ev);
}

TEST(per_item_answers_retry_only_the_undelivered)
{
	struct config *cfg = new_cfg(100);
	struct queue *q = open_q(cfg);
	struct shipper *sh;
	struct shipper_dest_stats ss;
	struct queue_dest_stats qs;
	char path[128], lines[4][2048];
	size_t count[10] = { 0 };

	snprintf(path, sizeof(path), "%s/dl4.jsonl", fake_dir);
	free(cfg->server.dead_letter);
	cfg->server.dead_letter = strdup(path);
	for (int i = 0; i < 10; i++)
		push_text(q, i, i == 3 || i == 7 ? " R429" : i == 5 ? " R400" : "");
	sh = shipper_start(cfg, q, &items_deps);
	CHECK(wait_backlog_empty(q, 10000));
	CHECK_INT(shipper_stats(sh, 0, &ss), 0);
	CHECK(!shipper_stop(sh, 1000, NULL));
	pthread_mutex_lock(&pk.mu);
	for (size_t i = 0; i < pk.nsent; i++)
		count[atoi(pk.sent[i] + 5)]++;
	/* the first send: all ten; then line 3 alone (the probe), then
	 * line 7 alone: the delivered ones are never sent again */
	CHECK_INT(pk.sizes[0], 10);
	for (int i = 0; i < 10; i++)
		CHECK_INT(count[i], i == 3 || i == 7 ? 2 : 1);
	CHECK_INT(pk.nsent, 12);
	pthread_mutex_unlock(&pk.mu);
	CHECK_INT(queue_dest_stats(q, 0, &qs), 0);
	CHECK_INT(qs.dropped_poison, 1);
	CHECK_INT(qs.acked_events, 9);
	CHECK_INT(ss.sent_events, 9);
	CHECK_INT(ss.dead_lettered, 1);
	CHECK_INT(dl_lines(path, lines, 4), 1);
	CHECK(field_is(lines[0], "event.text", "line 5 R400"));
	CHECK(field_is(lines[0], "reason", "status 400: mapper_parsing_exception"));
	queue_close(q);
	config_free(cfg);
}

int
main(void)
{
	T_PROG("test_deadletter");
	config_plugins_builtin();
	log_init(0, "/dev/null");
	if (fake_root("/tmp/test_deadletter.XXXXXX") < 0)
		return 1;
	RUN(a_line_per_event_0600_and_bounded);
	RUN(the_isolated_poison_goes_to_the_dead_letter_file);
	RUN(a_full_dead_letter_file_is_counted);
	RUN(per_item_answers_retry_only_the_undelivered);
	return t_done();
}
