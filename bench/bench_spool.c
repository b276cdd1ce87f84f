/*
 * bench_spool: the spool's append and read-back rates with its real fsync
 * batching (an fsync every 256 KB of records, and one at the end), events
 * shaped like the agent's own (a log line and the usual fields).
 * bench_spool.py runs it next to dd writing the same number of bytes with
 * the same fsync cadence.
 *
 * Usage: bench_spool DIR [N]
 * Last line: "bytes=B append_s=T read_s=T events=N" (for the driver).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/lib/log.h"
#include "../agent/spool/spool.h"
#include "../output/sink.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct event *
mkev(long i)
{
	struct event *ev = event_newf(1700000000000 + i, "2026-11-30T12:00:00.%03ldZ "
	    "cpu%ld:2097682)ScsiDeviceIO: 4124: Cmd(0x45b8c1a3e2c0) 0x2a, CmdSN 0x%lx "
	    "from world 2099 to dev \"naa.600508b1001c\" failed H:0x0 D:0x2 P:0x0",
	    i % 1000, i % 64, i);

	event_set(ev, "hostname", "esx01.example.com");
	event_set(ev, "appname", "vmkernel");
	event_set(ev, "esxwatch_collector", "logwatch");
	event_set(ev, "esxwatch_kind", "alert");
	event_set(ev, "esxwatch_severity", "warning");
	event_set(ev, "esxwatch_version", "0.1.0");
	event_set(ev, "esxwatch_file", "/var/log/vmkernel.log");
	event_set(ev, "esxwatch_rule", "scsi_cmd_failed");
	event_set(ev, "esxwatch_device", "naa.600508b1001c");
	return ev;
}

int
main(int argc, char **argv)
{
	static const char *const dests[] = { "server" };
	struct spool_opts o;
	struct spool_stats st;
	struct spool *sp;
	long n = argc > 2 ? atol(argv[2]) : 200000, got = 0;
	struct event **evs;
	double t0, t1, t2, t3;
	uint64_t bytes;

	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: bench_spool DIR [N]\n");
		return 2;
	}
	log_init(0, NULL);
	if ((evs = calloc((size_t)n, sizeof(*evs))) == NULL)
		return 1;
	for (long i = 0; i < n; i++)
		evs[i] = mkev(i);
	memset(&o, 0, sizeof(o));
	o.budget = 4ull << 30;
	o.segment_size = 4 << 20;
	o.sync_bytes = 256 * 1024;
	o.sync_ms = 1000;
	o.retry_ms = 5000;
	if ((sp = spool_open_dir(argv[1], &o, dests, 1)) == NULL)
		return 1;
	t0 = now_s();
	for (long i = 0; i < n; i++)
		if (spool_push(sp, evs[i]) != 0)
			return 1;
	spool_sync(sp);
	t1 = now_s();
	spool_stats(sp, &st);
	bytes = st.disk_bytes;
	t2 = now_s();
	for (;;) {
		struct batch b;
		int k = spool_peek(sp, 0, 500, 1 << 20, 0, &b);

		spool_batch_free(&b);
		if (k <= 0)
			break;
		spool_ack(sp, 0, (size_t)k);
		got += k;
	}
	t3 = now_s();
	spool_close(sp);
	for (long i = 0; i < n; i++)
		event_free(evs[i]);
	free(evs);
	if (got != n) {
		fprintf(stderr, "read back %ld of %ld events\n", got, n);
		return 1;
	}
	printf("spool append:    %ld events, %.1f MB in %.3f s: %.0f events/s, %.1f MB/s "
	    "(fsync every 256 KB)\n", n, (double)bytes / 1e6, t1 - t0,
	    (double)n / (t1 - t0), (double)bytes / 1e6 / (t1 - t0));
	printf("spool read-back: %ld events (peek 500 + ack) in %.3f s: %.0f events/s, %.1f MB/s\n",
	    got, t3 - t2, (double)got / (t3 - t2), (double)bytes / 1e6 / (t3 - t2));
	printf("bytes=%llu append_s=%.6f read_s=%.6f events=%ld\n",
	    (unsigned long long)bytes, t1 - t0, t3 - t2, n);
	return 0;
}
