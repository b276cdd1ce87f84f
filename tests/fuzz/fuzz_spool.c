/*
 * Fuzz the spool's readers with garbage: the segment scanner, a whole
 * spool opened over a garbage segment (start-up scan, torn-tail cut,
 * resynchronisation, reading every record back), a valid spool with one
 * segment damaged or torn, a garbage cursor file over a valid spool, and
 * the status file parser.  The first byte picks the mode.
 *
 * The valid spool is written once through the spool itself (three
 * segments of known events) and copied in for every input.  Beyond "never
 * crash": the scanner stays inside the image, and when only the first
 * segment is damaged every event of the later segments is still read back;
 * the records' CRC (crc_update, folded where the CPU can) is zlib's for
 * every input, whole and cut at its second byte's value.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/crc.h"
#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../agent/spool/spool.h"
#include "../../agent/status.h"
#include "../../output/sink.h"

#define NSEG	3
#define SEGSZ	4096

static char dir[64], tmpl[64];
static struct segimg {		/* the valid spool's segments */
	char		 name[64];
	unsigned char	*data;
	size_t		 len;
	size_t		 nrec;
} seg[NSEG];
static size_t nseg;

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
put_in(const char *d, const char *name, const void *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	if (len > 0 && write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

static void
put(const char *name, const void *data, size_t len)
{
	put_in(dir, name, data, len);
}

/* Empty a directory this target made (flat: files only). */
static void
clean_dir(const char *d)
{
	char path[512];
	struct dirent *e;
	DIR *dp;

	if ((dp = opendir(d)) == NULL)
		return;
	while ((e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, e->d_name);
		unlink(path);
	}
	closedir(dp);
}

static void
clean(void)
{
	clean_dir(dir);
}

static void
cleanup(void)
{
	clean_dir(dir);
	rmdir(dir);
	clean_dir(tmpl);
	rmdir(tmpl);
}

static struct spool *
open_spool(const char *d)
{
	static const char *const dests[] = { "server" };
	struct spool_opts o;

	memset(&o, 0, sizeof(o));
	o.budget = 1 << 20;
	o.segment_size = SEGSZ;
	o.sync_bytes = 1 << 30;
	o.sync_ms = 1 << 30;
	return spool_open_dir(d, &o, dests, 1);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct segimg *)a)->name,
	    ((const struct segimg *)b)->name);
}

/* Write the valid spool once and keep its segment files in memory. */
static void
make_template(void)
{
	struct spool *sp;
	struct dirent *e;
	struct stat st;
	char path[512];
	DIR *dp;
	int i, fd;

	snprintf(tmpl, sizeof(tmpl), "/tmp/fuzz_spool_tmpl.%ld", (long)getpid());
	mkdir(tmpl, 0700);
	if ((sp = open_spool(tmpl)) == NULL)
		abort();
	for (i = 0; i < 60; i++) {
		struct event *ev = event_newf(1733000000000LL + i,
		    "event %d: %.*s", i, 80 + i, "abcdefghijklmnopqrstuvwxyz"
		    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
		    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
		    "abcdefghijklmnopqrstuvwxyz");

		if (ev == NULL || event_set(ev, "esxwatch_rule", "r") == -1 ||
		    spool_push(sp, ev) == -1)
			abort();
		event_free(ev);
	}
	spool_close(sp);
	if ((dp = opendir(tmpl)) == NULL)
		abort();
	while ((e = readdir(dp)) != NULL) {
		size_t nl = strlen(e->d_name);

		if (nl < 5 || strcmp(e->d_name + nl - 4, ".seg") != 0 ||
		    nseg == NSEG)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpl, e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0 || fstat(fd, &st) < 0)
			abort();
		snprintf(seg[nseg].name, sizeof(seg[nseg].name), "%s", e->d_name);
		seg[nseg].len = (size_t)st.st_size;
		if ((seg[nseg].data = malloc(seg[nseg].len + 1)) == NULL ||
		    read(fd, seg[nseg].data, seg[nseg].len) != (ssize_t)seg[nseg].len)
			abort();
		close(fd);
		nseg++;
	}
	closedir(dp);
	if (nseg < 2)
		abort();
	qsort(seg, nseg, sizeof(seg[0]), by_name);
	for (i = 0; i < (int)nseg; i++)
		(void)spoolrec_scan_image(seg[i].data, seg[i].len, count,
		    &seg[i].nrec, NULL, NULL);
}

/* The valid spool, segment k replaced by data (NULL: kept). */
static void
put_spool(size_t k, const void *data, size_t len)
{
	size_t i;

	for (i = 0; i < nseg; i++)
		if (i == k && data != NULL)
			put(seg[i].name, data, len);
		else
			put(seg[i].name, seg[i].data, seg[i].len);
}

static void
put_cursor_at_start(void)
{
	char text[128];
	unsigned long long first = strtoull(seg[0].name, NULL, 10);
	int n = snprintf(text, sizeof(text), "seg %llu\noff 0\nseq 0\n", first);

	put("cursor.server", text, (size_t)n);
}

/* Read everything back (acknowledging, sometimes dropping); the count. */
static size_t
open_and_drain(unsigned how)
{
	struct spool_stats ss;
	struct spool *sp;
	size_t got = 0;

	if ((sp = open_spool(dir)) == NULL)
		return 0;
	spool_stats(sp, &ss);
	for (int i = 0; i < 1000; i++) {
		struct batch b;
		int n = spool_peek(sp, 0, 1 + how % 40, 1 << 20, 0, &b);

		spool_batch_free(&b);
		if (n <= 0)
			break;
		got += (size_t)n;
		if ((how >> 6) & 1 && i == 1)
			spool_drop(sp, 0, (size_t)n);
		else
			spool_ack(sp, 0, (size_t)n);
	}
	(void)spool_backlog(sp, 0);
	spool_stats(sp, &ss);
	spool_close(sp);
	return got;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t n = 0, off, i, later;
	uint64_t corrupt, bad;
	unsigned char *img;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_spool.%ld", (long)getpid());
		mkdir(dir, 0700);
		log_init(0, "/dev/null");
		atexit(cleanup);
		make_template();
	}
	if (len == 0)
		return 0;
	if (crc_update(0, data, len) != (uint32_t)crc32(0L, data, (uInt)len))
		abort();
	if (len > 1) {
		size_t cut = data[1] % len;

		if (crc_update(crc_update(7, data, cut), data + cut, len - cut) !=
		    (uint32_t)crc32(crc32(7L, data, (uInt)cut), data + cut, (uInt)(len - cut)))
			abort();
	}
	switch (data[0] % 6) {
	case 0:
		off = spoolrec_scan_image(data + 1, len - 1, count, &n, &corrupt, &bad);
		if (off > len - 1 || n * SPOOL_REC_HDR > len - 1)
			abort();
		break;
	case 1:
		/* a garbage segment, read back through a cursor at its start */
		clean();
		put("0000000000000001.seg", data + 1, len - 1);
		put("cursor.server", "seg 1\noff 0\nseq 0\n", 18);
		open_and_drain(len);
		break;
	case 2:
		/* a garbage cursor over a valid spool */
		clean();
		put_spool(0, NULL, 0);
		put("cursor.server", data + 1, len - 1);
		open_and_drain(len);
		break;
	case 3: {
		struct status_snap *s = malloc(sizeof(*s));

		if (s != NULL)
			(void)status_parse((const char *)data + 1, len - 1, s);
		free(s);
		break;
	}
	case 4:
	case 5:
		/*
		 * The first segment of a valid spool damaged: data[1..2] is
		 * where, the rest overwrites the bytes there (4) or replaces
		 * the segment from there on (5: a torn or garbage tail).
		 * The later segments are whole, so all their events arrive.
		 */
		if (len < 3)
			break;
		off = ((size_t)data[1] << 8 | data[2]) % (seg[0].len + 1);
		img = malloc(seg[0].len + len);
		if (img == NULL)
			abort();
		memcpy(img, seg[0].data, seg[0].len);
		memcpy(img + off, data + 3, len - 3);
		i = data[0] % 6 == 4 && off + len - 3 < seg[0].len ?
		    seg[0].len : off + len - 3;
		clean();
		put_spool(0, img, i);
		free(img);
		put_cursor_at_start();
		for (later = 0, i = 1; i < nseg; i++)
			later += seg[i].nrec;
		if (open_and_drain((unsigned)len & 63) < later)
			abort();
		break;
	}
	return 0;
}
