/*
 * Fuzz the spool's readers with garbage: the segment scanner, a whole
 * spool opened over a garbage segment (start-up scan, torn-tail cut,
 * resynchronisation, reading every record back), a garbage cursor file,
 * and the status file parser.  The first byte picks the mode.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../agent/log.h"
#include "../../agent/spool.h"
#include "../../agent/status.h"
#include "../../output/sink.h"

static char dir[64];

static int
count(void *arg, uint64_t seq, const void *p, size_t len)
{
	(void)seq;
	(void)p;
	(void)len;
	(*(size_t *)arg)++;
	return 0;
}

static void
put(const char *name, const uint8_t *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	if (len > 0 && write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

static void
clean(void)
{
	static const char *const names[] = {
		"0000000000000001.seg", "0000000000000002.seg", "cursor.server", "lock", NULL
	};
	char path[128];

	for (int i = 0; names[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
}

static void
open_and_drain(void)
{
	static const char *const dests[] = { "server" };
	struct spool_opts o;
	struct spool *sp;

	memset(&o, 0, sizeof(o));
	o.budget = 1 << 20;
	o.segment_size = 64 * 1024;
	sp = spool_open_dir(dir, &o, dests, 1);
	if (sp == NULL)
		return;
	for (int i = 0; i < 1000; i++) {
		struct batch b;
		int n = spool_peek(sp, 0, 100, 1 << 20, 0, &b);

		spool_batch_free(&b);
		if (n <= 0)
			break;
		spool_ack(sp, 0, (size_t)n);
	}
	spool_close(sp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t n = 0;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_spool.%ld", (long)getpid());
		mkdir(dir, 0700);
		log_init(0, "/dev/null");
	}
	if (len == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		(void)spool_scan_image(data + 1, len - 1, count, &n, NULL, NULL);
		break;
	case 1:
		/* a garbage segment, read back through a cursor at its start */
		clean();
		put("0000000000000001.seg", data + 1, len - 1);
		put("cursor.server", (const uint8_t *)"seg 1\noff 0\nseq 0\n", 18);
		open_and_drain();
		break;
	case 2:
		/* a garbage cursor over a small valid spool */
		clean();
		put("cursor.server", data + 1, len - 1);
		open_and_drain();
		break;
	case 3: {
		struct status_snap *s = malloc(sizeof(*s));

		if (s != NULL)
			(void)status_parse((const char *)data + 1, len - 1, s);
		free(s);
		break;
	}
	}
	return 0;
}
