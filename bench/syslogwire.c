/*
 * The syslog wire's own cost: framing + parsing ESXi lines, per CPU-second
 * (docs/collector.md quotes it).  The fixtures' ESXi 6.x/7.0/8.0 lines
 * (RFC 3164 and 5424) are repeated to 1 MiB and fed to one framer in
 * 16 KiB reads, 200 times; every message is parsed.
 *
 *   make all && cc -O2 -std=c11 -D_GNU_SOURCE -I. -o build/bench-syslogwire \
 *       bench/syslogwire.c build/libesxwatch.a && build/bench-syslogwire
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/receiver/syslogwire.h"

#define STREAM	(1 << 20)
#define ROUNDS	200

static size_t nmsg, nbad;

static void
on_msg(void *arg, const char *msg, size_t len, bool truncated)
{
	struct syslog_msg m;

	(void)arg;
	(void)truncated;
	if (syslog_parse(msg, len, 1796623200000LL, &m) != 0)
		nbad++;
	nmsg++;
}

int
main(void)
{
	static const char *files[] = {
	    "tests/fixtures/syslog/esxi67-rfc3164.log",
	    "tests/fixtures/syslog/esxi8-rfc3164.log",
	    "tests/fixtures/syslog/esxi8-rfc5424.log" };
	char *s = malloc(STREAM);
	size_t len = 0, one, i, k;
	struct framer *f = framer_new();
	clock_t c0;
	double secs;
	int r;

	if (s == NULL || f == NULL)
		return 1;
	for (k = 0; k < 3; k++) {
		FILE *fp = fopen(files[k], "rb");

		if (fp == NULL) {
			perror(files[k]);
			return 1;
		}
		len += fread(s + len, 1, STREAM - len, fp);
		fclose(fp);
	}
	for (one = len; len + one <= STREAM; len += one)
		memcpy(s + len, s, one);
	c0 = clock();
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < len; i += k) {
			k = len - i < 16384 ? len - i : 16384;
			framer_feed(f, s + i, k, on_msg, NULL);
		}
	secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
	printf("%zu messages (%zu not syslog), %.0f MB in %.2f CPU-s: "
	    "%.0f messages per CPU-second, %.0f bytes each\n", nmsg, nbad,
	    (double)len * ROUNDS / 1e6, secs, nmsg / secs,
	    (double)len * ROUNDS / nmsg);
	framer_free(f);
	free(s);
	return 0;
}
