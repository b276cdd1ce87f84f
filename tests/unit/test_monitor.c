/*
 * monitor: the listen address rule (loopback only), what a request asks
 * for, the /health rule, the /metrics text (exact samples, label escaping)
 * and the whole answer on the wire.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <poll.h>
#include <unistd.h>

#include "t.h"

#include "../../agent/lib/clock.h"
#include "../../agent/lib/log.h"
#include "../../agent/monitor.h"

TEST(listen_accepts_loopback_only)
{
	static const char *const good[] = {
		"127.0.0.1:2020", "127.9.8.7:1", "localhost:65535", "LOCALHOST:80",
		"[::1]:2020",
	};
	static const char *const bad[] = {
		"0.0.0.0:2020", "10.0.0.1:2020", ":2020", "[::]:2020", "[fe80::1]:2020",
		"::1:2020", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:20x", "127.1:2020", "esx01:2020", "128.0.0.1:2020",
	};
	struct sockaddr_storage sa;
	socklen_t len;
	char why[160];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (monitor_parse_listen(good[i], &sa, &len, why, sizeof(why)) != 0)
			T_FAILF("%s refused: %s", good[i], why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (monitor_parse_listen(bad[i], &sa, &len, why, sizeof(why)) == 0)
			T_FAILF("%s accepted", bad[i]);
	CHECK_INT(monitor_parse_listen("localhost:2020", &sa, &len, why, sizeof(why)), 0);
	CHECK_INT(sa.ss_family, AF_INET);
	CHECK_INT(ntohs(((struct sockaddr_in *)&sa)->sin_port), 2020);
	CHECK_INT(ntohl(((struct sockaddr_in *)&sa)->sin_addr.s_addr), 0x7f000001);
	CHECK_INT(monitor_parse_listen("[::1]:9", &sa, &len, why, sizeof(why)), 0);
	CHECK_INT(sa.ss_family, AF_INET6);
	CHECK_INT(len, sizeof(struct sockaddr_in6));
	CHECK_INT(monitor_parse_listen("0.0.0.0:2020", &sa, &len, why, sizeof(why)), -1);
	CHECK(strstr(why, "not a loopback address") != NULL);
}

#define ROUTE(s)	monitor_route(s, strlen(s))

TEST(routes)
{
	CHECK_INT(ROUTE("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"), MR_HEALTH);
	CHECK_INT(ROUTE("GET /api/v1/health HTTP/1.0\r\n\r\n"), MR_HEALTH);
	CHECK_INT(ROUTE("GET /metrics?x=1 HTTP/1.1\r\n\r\n"), MR_METRICS);
	CHECK_INT(ROUTE("GET /api/v1/metrics/prometheus HTTP/1.1\r\n\r\n"), MR_METRICS);
	CHECK_INT(ROUTE("GET /metricsx HTTP/1.1\r\n\r\n"), MR_NOT_FOUND);
	CHECK_INT(ROUTE("GET / HTTP/1.1\r\n\r\n"), MR_NOT_FOUND);
	CHECK_INT(ROUTE("GET /health/ HTTP/1.1\r\n\r\n"), MR_NOT_FOUND);
	CHECK_INT(ROUTE("POST /metrics HTTP/1.1\r\n\r\n"), MR_BAD_METHOD);
	CHECK_INT(ROUTE("HEAD /health HTTP/1.1\r\n\r\n"), MR_BAD_METHOD);
	CHECK_INT(ROUTE("GETS /health HTTP/1.1\r\n\r\n"), MR_BAD_METHOD);
	CHECK_INT(ROUTE("get /health HTTP/1.1\r\n\r\n"), MR_BAD_REQUEST);
	CHECK_INT(ROUTE("GET\r\n\r\n"), MR_BAD_REQUEST);
	CHECK_INT(ROUTE("GET health HTTP/1.1\r\n\r\n"), MR_BAD_REQUEST);
	CHECK_INT(ROUTE(""), MR_BAD_REQUEST);
	CHECK_INT(monitor_route("GET /health", 8), MR_NOT_FOUND);	/* "GET /hea" */
}

static struct status_snap *
snap(void)
{
	struct status_snap *s = calloc(1, sizeof(*s));

	s->pid = 7;
	s->started_ms = 1796000000250;
	s->pushed_events = 12;
	s->queued_events = 3;
	s->dropped_budget = 4;
	s->dropped_corrupt = 5;
	s->rss_kb = 2;
	s->cpu_ms = 1500;
	s->ndests = 2;
	snprintf(s->dests[0].name, sizeof(s->dests[0].name), "server");
	s->dests[0].state = DEST_DELIVERING;
	s->dests[0].sent_events = 9;
	s->dests[0].failed_sends = 2;
	s->dests[0].dropped_budget = 4;
	s->dests[0].dropped_poison = 1;
	s->dests[0].not_ingested = 6;
	s->dests[0].last_success_ms = 1796000001005;
	snprintf(s->dests[1].name, sizeof(s->dests[1].name), "a\"b\\c\nd");
	s->dests[1].state = DEST_IDLE;
	s->ncollectors = 1;
	snprintf(s->collectors[0].name, sizeof(s->collectors[0].name), "nic");
	s->collectors[0].runs = 10;
	s->collectors[0].errors = 1;
	s->collectors[0].last_duration_ms = 42;
	return s;
}

/* Delivering and idle are healthy; failing, or never delivered with a
 * failed attempt and events waiting, is not. */
TEST(health_rule)
{
	struct status_snap *s = snap();
	struct status_dest *d = &s->dests[1];

	CHECK(monitor_healthy(s));
	d->backlog_events = 5;
	CHECK(monitor_healthy(s));	/* nothing tried yet */
	d->failed_sends = 1;
	CHECK(!monitor_dest_healthy(d));
	CHECK(!monitor_healthy(s));
	d->failed_sends = 0;
	d->state = DEST_FAILING;
	CHECK(!monitor_healthy(s));
	d->state = DEST_DELIVERING;
	d->last_success_ms = 1;
	d->failed_sends = 3;	/* failed before, delivering now */
	CHECK(monitor_healthy(s));
	free(s);
}

TEST(metrics_text)
{
	struct status_snap *s = snap();
	struct buf b;

	buf_init(&b, MONITOR_BODY_MAX);
	CHECK_INT(monitor_metrics(s, &b), 0);
	CHECK(b.data != NULL);
	if (b.data == NULL)
		goto out;
	CHECK(strstr(b.data, "# TYPE esxwatch_output_sent_events_total counter\n"
	    "esxwatch_output_sent_events_total{name=\"server\"} 9\n"
	    "esxwatch_output_sent_events_total{name=\"a\\\"b\\\\c\\nd\"} 0\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_output_failed_sends_total{name=\"server\"} 2\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_output_dropped_events_total{name=\"server\","
	    "reason=\"max_disk_buffer\"} 4\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_output_dropped_events_total{name=\"server\","
	    "reason=\"rejected\"} 1\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_output_not_ingested_events_total{name=\"server\"} 6\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_output_last_success_timestamp_seconds"
	    "{name=\"server\"} 1796000001.005\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_output_healthy{name=\"server\"} 1\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_spool_dropped_events_total{reason=\"damaged\"} 5\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_input_events_total 12\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_process_resident_memory_bytes 2048\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_process_cpu_seconds_total 1.500\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_process_start_time_seconds 1796000000.250\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_collector_runs_total{name=\"nic\"} 10\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_collector_errors_total{name=\"nic\"} 1\n") != NULL);
	CHECK(strstr(b.data, "esxwatch_collector_last_duration_seconds{name=\"nic\"} 0.042\n") != NULL);
	/* one HELP and one TYPE per family, even with two reasons */
	{
		const char *p = b.data;
		int n = 0;

		while ((p = strstr(p, "# TYPE esxwatch_output_dropped_events_total ")) != NULL) {
			n++;
			p++;
		}
		CHECK_INT(n, 1);
	}
	CHECK(b.data[b.len - 1] == '\n');
out:
	buf_free(&b);
	free(s);
}

TEST(answers_on_the_wire)
{
	struct status_snap *s = snap();
	struct buf body, out;
	char want[256];

	buf_init(&body, MONITOR_BODY_MAX);
	buf_init(&out, MONITOR_BODY_MAX + 512);
	CHECK_INT(monitor_answer(MR_HEALTH, s, &body, &out), 200);
	snprintf(want, sizeof(want), "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n", body.len);
	CHECK(strncmp(out.data, want, strlen(want)) == 0);
	CHECK(strstr(out.data, "\r\n\r\n{\"status\":\"ok\",\"destinations\":[{\"name\":"
	    "\"server\",\"state\":\"delivering\",\"healthy\":true,") != NULL);
	s->dests[0].state = DEST_FAILING;
	CHECK_INT(monitor_answer(MR_HEALTH, s, &body, &out), 503);
	CHECK(strncmp(out.data, "HTTP/1.0 503 Service Unavailable\r\n", 34) == 0);
	CHECK(strstr(out.data, "{\"status\":\"failing\",") != NULL);
	CHECK_INT(monitor_answer(MR_METRICS, s, &body, &out), 200);
	CHECK(strstr(out.data, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != NULL);
	CHECK(strstr(out.data, "esxwatch_output_healthy{name=\"server\"} 0\n") != NULL);
	CHECK_INT(monitor_answer(MR_NOT_FOUND, s, &body, &out), 404);
	CHECK(strncmp(out.data, "HTTP/1.0 404 Not Found\r\n", 24) == 0);
	CHECK_INT(monitor_answer(MR_BAD_METHOD, s, &body, &out), 405);
	CHECK(strstr(out.data, "\r\nAllow: GET\r\n") != NULL);
	CHECK_INT(monitor_answer(MR_BAD_REQUEST, s, &body, &out), 400);
	/* no picture on the board yet (the agent is starting) */
	CHECK_INT(monitor_answer(MR_NO_FIGURES, NULL, &body, &out), 503);
	CHECK(strncmp(out.data, "HTTP/1.0 503 Service Unavailable\r\n", 34) == 0);
	/* a body that does not fit is a 500, never a cut answer */
	buf_free(&body);
	buf_init(&body, 64);
	CHECK_INT(monitor_answer(MR_METRICS, s, &body, &out), 500);
	CHECK(strstr(out.data, "Content-Length: 24\r\n") != NULL);
	buf_free(&body);
	buf_free(&out);
	free(s);
}

static int
connect_to(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(0x7f000001);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A free loopback port (bound, then let go). */
static int
free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(0x7f000001);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Send req, read the answer until the server closes (at most 5 s). */
static void
ask(int port, const char *req, size_t len, char *out, size_t outlen)
{
	int fd = connect_to(port);
	size_t got = 0;
	int64_t end = mono_ms() + 5000;

	out[0] = '\0';
	if (fd < 0)
		return;
	if (write(fd, req, len) != (ssize_t)len) {
		close(fd);
		return;
	}
	while (got < outlen - 1 && mono_ms() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, out + got, outlen - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = '\0';
	close(fd);
}

/*
 * The server itself: it answers; a client that sends nothing holds it
 * up MONITOR_IO_MS at most; a request past MONITOR_REQ_MAX is a 400; a
 * stop with a silent client connected is immediate.
 */
TEST(server_bounded_and_stops_at_once)
{
	struct status_source src = { .started_ms = 1000 };
	struct status_board *board = status_board_new();
	struct status_snap *snap = calloc(1, sizeof(*snap));
	struct config cfg;
	struct monitor *m;
	char listen[64], out[8192], *big;
	int port = free_port(), silent;
	int64_t t0;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	cfg.monitor_listen = listen;
	/* the picture a status writer would put up (none runs here) */
	status_collect(&src, snap);
	status_board_put(board, snap);
	m = monitor_start(&cfg, board);
	CHECK(m != NULL);
	if (m == NULL)
		goto out;
	ask(port, "GET /health HTTP/1.0\r\n\r\n", 24, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 200 OK\r\n", 17) == 0);
	CHECK(strstr(out, "{\"status\":\"ok\",\"destinations\":[]}\n") != NULL);

	silent = connect_to(port);
	CHECK(silent >= 0);
	t0 = mono_ms();
	ask(port, "GET /nope HTTP/1.0\r\n\r\n", 22, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 404 Not Found\r\n", 24) == 0);
	if (mono_ms() - t0 > MONITOR_IO_MS + 1500)
		T_FAILF("the silent client held the server %lld ms",
		    (long long)(mono_ms() - t0));

	big = malloc(MONITOR_REQ_MAX + 100);
	memset(big, 'a', MONITOR_REQ_MAX + 100);
	memcpy(big, "GET /health HTTP/1.0\r\nX: ", 25);
	ask(port, big, MONITOR_REQ_MAX + 100, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 400 Bad Request\r\n", 26) == 0);
	free(big);

	close(silent);
	silent = connect_to(port);
	poll(NULL, 0, 100);	/* it is being read from */
	t0 = mono_ms();
	monitor_stop(m);
	if (mono_ms() - t0 > 500)
		T_FAILF("monitor_stop took %lld ms", (long long)(mono_ms() - t0));
	close(silent);
	CHECK(connect_to(port) < 0);	/* the socket is closed */
out:
	status_board_free(board);
	free(snap);
}

/* A port already taken: NULL and the agent goes on. */
TEST(port_taken_is_null)
{
	struct status_board *board = status_board_new();
	struct config cfg;
	struct monitor *a, *b;
	char listen[64];

	memset(&cfg, 0, sizeof(cfg));
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", free_port());
	cfg.monitor_listen = listen;
	a = monitor_start(&cfg, board);
	CHECK(a != NULL);
	b = monitor_start(&cfg, board);
	CHECK(b == NULL);
	/* unchanged on reload: the same monitor */
	CHECK(monitor_reload(a, &cfg, board) == a);
	monitor_stop(a);
	cfg.monitor_listen = NULL;
	CHECK(monitor_start(&cfg, board) == NULL);	/* off */
	status_board_free(board);
}

int
main(void)
{
	T_PROG("test_monitor");
	log_init(0, "/dev/null");
	RUN(listen_accepts_loopback_only);
	RUN(routes);
	RUN(health_rule);
	RUN(metrics_text);
	RUN(answers_on_the_wire);
	RUN(server_bounded_and_stops_at_once);
	RUN(port_taken_is_null);
	return t_done();
}
