/*
 * bench_ship: how fast the cfapi sink ships, gzip on, one core.
 *
 * Builds N events shaped like the agent's own (a sample line and ~20
 * fields), then drives the cfapi sink's send() in batches of 500 to a
 * minimal local receiver (a child process that only reads HTTP requests,
 * counts bytes and answers 200 {"status":"ok"}), timing the sender's wall
 * and CPU time.  In the same run it measures the reference: zlib alone
 * (deflate level 1, what `gzip -1` does) compressing the very same JSON
 * bodies.  Prints both rates and their ratio; bench_ship.sh adds `gzip -1`
 * itself on the same bytes.
 *
 * Usage: bench_ship [N] [dump-file]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../agent/config_plugins.h"
#include "../agent/lib/buf.h"
#include "../agent/config/config.h"
#include "../agent/event.h"
#include "../agent/lib/log.h"
#include "../output/sink.h"
#include "../output/cfapi.h"
#include "../output/transport.h"

#define BATCH	500

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process (the sender; the receiver is another one):
 * on a shared, loaded machine wall time measures the neighbours too. */
static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The receiver: one connection at a time, keep-alive, count and answer. */
static void
receiver(int lfd)
{
	static char buf[1 << 20];
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 15\r\n\r\n{\"status\":\"ok\"}";
	size_t have = 0, need;
	long long total = 0;
	char *hdr_end, *cl;
	ssize_t n;
	int c;

	for (;;) {
		if ((c = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		have = 0;
		for (;;) {
			n = read(c, buf + have, sizeof(buf) - 1 - have);
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			while ((hdr_end = strstr(buf, "\r\n\r\n")) != NULL) {
				cl = strcasestr(buf, "Content-Length:");
				need = (size_t)(hdr_end + 4 - buf) +
				    (cl && cl < hdr_end ? strtoul(cl + 15, NULL, 10) : 0);
				/* read the rest of the body, discarding */
				while (have < need) {
					size_t keep = (size_t)(hdr_end + 4 - buf);
					if (have > keep) {
						need -= have - keep;
						have = keep;
					}
					n = read(c, buf + have, sizeof(buf) - 1 - have);
					if (n <= 0)
						goto closed;
					have += (size_t)n;
					total += n;
				}
				memmove(buf, buf + need, have - need);
				have -= need;
				buf[have] = '\0';
				if (write(c, resp, sizeof(resp) - 1) < 0)
					goto closed;
			}
		}
closed:
		close(c);
	}
}

static struct event *
make_event(int i)
{
	struct event *ev = event_newf(0, "NIC vmnic%d: link up, 10000 Mb/s full duplex, "
	    "rx_crc_errors %d (+%d), rx_dropped %d", i % 32, i * 7 % 1000, i % 3, i % 97);
	event_set(ev, "hostname", "esx01.lab.example.com");
	event_set(ev, "appname", "esxwatch");
	event_set(ev, "esxwatch_collector", "nic");
	event_set(ev, "esxwatch_kind", "sample");
	event_set(ev, "esxwatch_severity", "info");
	event_set(ev, "esxwatch_version", "0.1.0");
	event_setf(ev, "esxwatch_nic", "vmnic%d", i % 32);
	event_set(ev, "esxwatch_link", "up");
	event_set(ev, "esxwatch_admin", "up");
	event_set(ev, "esxwatch_speed_mbps", "10000");
	event_set(ev, "esxwatch_duplex", "full");
	event_set(ev, "esxwatch_driver", "ixgben");
	event_set_i64(ev, "esxwatch_rx_crc_errors", i * 7 % 1000);
	event_set_i64(ev, "esxwatch_rx_crc_errors_delta", i % 3);
	event_set_i64(ev, "esxwatch_rx_errors", i % 13);
	event_set_i64(ev, "esxwatch_rx_errors_delta", 0);
	event_set_i64(ev, "esxwatch_tx_errors", 0);
	event_set_i64(ev, "esxwatch_tx_errors_delta", 0);
	event_set_i64(ev, "esxwatch_rx_dropped", i % 97);
	event_set_i64(ev, "esxwatch_rx_dropped_delta", i % 2);
	event_set(ev, "site", "dc1");
	return ev;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	const char *dump = argc > 2 ? argv[2] : NULL;
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	struct event **evs;
	struct config *cfg;
	struct sink_ctx ctx;
	const struct sink *sk;
	struct buf body = BUF_INIT, z = BUF_INIT;
	double t0, c0, wall, cpu, zt, zwall, et, rate, zrate;
	size_t json_bytes = 0, zbytes = 0;
	cpu_set_t set;
	pid_t pid;
	int lfd, i, ra, one = 1;
	z_stream zs;
	FILE *df = NULL;

	log_init(0, NULL);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) == -1 || listen(lfd, 4) == -1)
		return 1;
	getsockname(lfd, (struct sockaddr *)&a, &al);
	if ((pid = fork()) == 0) {
		/* the receiver on the other core, out of the sender's way */
		CPU_ZERO(&set);
		CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0, &set);
		sched_setaffinity(0, sizeof(set), &set);
		receiver(lfd);
	}
	close(lfd);
	/* The shipper is one thread: keep the sender on one core. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);

	evs = calloc((size_t)n, sizeof(*evs));
	for (i = 0; i < n; i++)
		evs[i] = make_event(i);

	config_plugins_builtin();
	cfg = config_default();
	free(cfg->server.hostname);
	cfg->server.hostname = strdup("127.0.0.1");
	cfg->server.port = ntohs(a.sin_port);
	cfg->server.ssl = false;
	free(cfg->server.agent_id);
	cfg->server.agent_id = strdup("bench");
	memset(&ctx, 0, sizeof(ctx));
	ctx.name = "bench";
	ctx.conf = &cfg->server;
	ctx.cfg = cfg;
	sk = sink_find(PROTO_CFAPI);
	if (sk->open(&ctx) == -1) {
		fprintf(stderr, "open: %s\n", ctx.error);
		return 1;
	}
	/* warm-up: connection, allocations */
	{
		struct batch b = { .events = evs, .n = BATCH < n ? BATCH : (size_t)n };
		sk->send(&ctx, &b, &ra);
	}
	t0 = now_s();
	c0 = cpu_s();
	for (i = 0; i < n; i += BATCH) {
		struct batch b = { .events = evs + i,
		    .n = (size_t)(n - i < BATCH ? n - i : BATCH) };
		if (sk->send(&ctx, &b, &ra) != SEND_OK) {
			fprintf(stderr, "send: %s\n", ctx.error);
			return 1;
		}
	}
	wall = now_s() - t0;
	cpu = cpu_s() - c0;
	sk->close(&ctx);

	/* The reference: zlib level 1 on the same JSON bodies. */
	if (dump != NULL)
		df = fopen(dump, "wb");
	memset(&zs, 0, sizeof(zs));
	deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	zt = zwall = et = 0;
	for (i = 0; i < n; i += BATCH) {
		int k, m = n - i < BATCH ? n - i : BATCH;
		double s;
		uLong bound;

		et -= cpu_s();
		buf_reset(&body);
		buf_puts(&body, "{\"events\":[");
		for (k = 0; k < m; k++) {
			if (k)
				buf_putc(&body, ',');
			cfapi_encode_event(evs[i + k], &body);
		}
		buf_puts(&body, "]}");
		et += cpu_s();
		json_bytes += body.len;
		if (df)
			fwrite(body.data, 1, body.len, df);
		bound = deflateBound(&zs, body.len);
		buf_reset(&z);
		buf_reserve(&z, bound);
		s = cpu_s();
		zwall -= now_s();
		deflateReset(&zs);
		zs.next_in = (Bytef *)body.data;
		zs.avail_in = (uInt)body.len;
		zs.next_out = (Bytef *)z.data;
		zs.avail_out = (uInt)bound;
		deflate(&zs, Z_FINISH);
		zt += cpu_s() - s;
		zwall += now_s();
		zbytes += bound - zs.avail_out;
	}
	deflateEnd(&zs);
	if (df)
		fclose(df);

	/* Rates per CPU-second of the one shipping core (robust on a busy
	 * machine); wall-clock rates next to them. */
	rate = n / cpu;
	zrate = n / zt;
	printf("events:                     %d (%.0f bytes of JSON each, gzip -1 to %.1f%%)\n",
	    n, (double)json_bytes / n, 100.0 * zbytes / json_bytes);
	printf("cfapi ship, gzip, one core: %.0f events/CPU-s (wall: %.0f events/s)\n",
	    rate, n / wall);
	printf("zlib level 1 alone:         %.0f events/CPU-s, %.1f MB/s of JSON (wall: %.0f events/s)\n",
	    zrate, json_bytes / zt / 1e6, n / zwall);
	printf("JSON encoding alone:        %.0f events/CPU-s\n", n / et);
	printf("ship / zlib:                %.0f%% (target >= 50%%); > 100000 events/s: %s\n",
	    100.0 * rate / zrate, rate > 100000 ? "met" : "NOT met");
	printf("RESULT ship_eps=%.0f ship_wall_eps=%.0f zlib_eps=%.0f ratio=%.2f\n",
	    rate, n / wall, zrate, rate / zrate);

	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	for (i = 0; i < n; i++)
		event_free(evs[i]);
	free(evs);
	buf_free(&body);
	buf_free(&z);
	config_free(cfg);
	curl_global_cleanup();
	return 0;
}
