/*
 * dropcounts: the spool's per-reason counts across restarts (see
 * dropcounts.h).  The file, spool/counts:
 *
 *	esxwatch-counts 1
 *	since_ms 1764650000123
 *	corrupt 3
 *	torn 0
 *	gone_budget 0
 *	gone_poison 0
 *	range 120 123			(gaps counted, zero or more)
 *	dest server 10 2 0		(budget poison filtered, zero or more)
 *	crc 1a2b3c4d			(zlib crc32 of every line above)
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../lib/buf.h"
#include "../lib/clock.h"
#include "dropcounts.h"
#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"

#define DC_MAGIC	"esxwatch-counts 1\n"

static bool
plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

static int
put_name(struct buf *b, const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (plain(*p) ? buf_putc(b, (char)*p) < 0 : buf_printf(b, "%%%02X", *p) < 0)
			return -1;
	return 0;
}

/* A name up to the next blank, unescaped into out; *p moves past it. */
static int
get_name(const char **p, char *out, size_t len)
{
	size_t n = 0;

	while (**p != ' ' && **p != '\0') {
		unsigned int v;

		if (n + 1 >= len)
			return -1;
		if (**p == '%') {
			if (!isxdigit((unsigned char)(*p)[1]) || !isxdigit((unsigned char)(*p)[2]) ||
			    sscanf(*p + 1, "%2x", &v) != 1 || v == 0)
				return -1;
			out[n++] = (char)v;
			*p += 3;
		} else if (plain((unsigned char)**p))
			out[n++] = *(*p)++;
		else
			return -1;
	}
	out[n] = '\0';
	return n > 0 ? 0 : -1;
}

/* Blank-separated decimal numbers at *p, the last followed by '\n'. */
static int
get_nums(const char **p, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *end;

		if (**p != ' ' || (*p)[1] < '0' || (*p)[1] > '9')
			return -1;
		errno = 0;
		v[i] = strtoull(*p + 1, &end, 10);
		if (errno != 0 || *end != (i + 1 == n ? '\n' : ' '))
			return -1;
		*p = end;
	}
	(*p)++;
	return 0;
}

/* A "key N\n" line into *v. */
static int
get_kv(const char **p, const char *key, uint64_t *v)
{
	size_t l = strlen(key);

	if (strncmp(*p, key, l) != 0)
		return -1;
	*p += l;
	return get_nums(p, v, 1);
}

static int
parse_lines(struct dropcounts *dc, const char *p)
{
	struct dc_snap *s = &dc->loaded;
	uint64_t since;

	if (strncmp(p, DC_MAGIC, strlen(DC_MAGIC)) != 0)
		return -1;
	p += strlen(DC_MAGIC);
	if (get_kv(&p, "since_ms", &since) < 0 || since > INT64_MAX ||
	    get_kv(&p, "corrupt", &s->corrupt) < 0 || get_kv(&p, "torn", &s->torn) < 0 ||
	    get_kv(&p, "gone_budget", &s->gone_budget) < 0 ||
	    get_kv(&p, "gone_poison", &s->gone_poison) < 0)
		return -1;
	dc->since_ms = (int64_t)since;
	while (strncmp(p, "range ", 6) == 0) {
		if (dc->nranges == DC_RANGES_MAX)
			return -1;
		p += 5;
		if (get_nums(&p, dc->ranges[dc->nranges], 2) < 0 ||
		    dc->ranges[dc->nranges][1] <= dc->ranges[dc->nranges][0])
			return -1;
		dc->nranges++;
	}
	while (strncmp(p, "dest ", 5) == 0) {
		struct dc_dest *d = &s->d[s->n];
		uint64_t v[3];

		if (s->n == DC_DESTS_MAX)
			return -1;
		p += 5;
		if (get_name(&p, d->name, sizeof(d->name)) < 0 || get_nums(&p, v, 3) < 0)
			return -1;
		d->budget = v[0];
		d->poison = v[1];
		d->filtered = v[2];
		s->n++;
	}
	return *p == '\0' ? 0 : -1;
}

/* Check the closing CRC line of text (len bytes, NUL-terminated) and cut it. */
static int
check_crc(char *text, size_t len)
{
	char *last;
	unsigned int want;

	if (len < 2 || text[len - 1] != '\n')
		return -1;
	text[len - 1] = '\0';
	last = strrchr(text, '\n');
	if (last == NULL || strncmp(last + 1, "crc ", 4) != 0 ||
	    strlen(last + 5) != 8 || sscanf(last + 5, "%8x", &want) != 1)
		return -1;
	last[1] = '\0';
	if ((unsigned int)crc32(0L, (const Bytef *)text, (uInt)(last + 1 - text)) != want)
		return -1;
	return 0;
}

/* The file's content into dc->loaded; 1 none, 0 read, -1 damaged. */
static int
read_file(struct dropcounts *dc)
{
	char *text = malloc(DC_FILE_MAX + 1);
	ssize_t n;
	int fd, rc = -1;

	if (text == NULL)
		return -1;
	fd = fs_open_read(dc->path);
	if (fd < 0) {
		free(text);
		return errno == ENOENT ? 1 : -1;
	}
	n = fs_read_upto(fd, text, DC_FILE_MAX + 1);
	close(fd);
	if (n > 0 && n <= DC_FILE_MAX) {
		text[n] = '\0';
		if (strlen(text) == (size_t)n && check_crc(text, (size_t)n) == 0)
			rc = parse_lines(dc, text);
	}
	free(text);
	return rc;
}

/* Temp files of a write a crash cut short (fs_write_atomic's names). */
static void
remove_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return;
	for (de = readdir(d); de != NULL; de = readdir(d)) {
		char path[PATH_MAX];

		if (strncmp(de->d_name, "counts.tmp.", 11) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		(void)unlink(path);
	}
	closedir(d);
}

void
dropcounts_load(struct dropcounts *dc, const char *dir, bool nodisk)
{
	int r;

	memset(dc, 0, sizeof(*dc));
	dc->since_ms = now_ms();
	if (nodisk)
		return;
	remove_temps(dir);
	snprintf(dc->path, sizeof(dc->path), "%s/counts", dir);
	r = read_file(dc);
	if (r == 0)
		return;
	if (r < 0)
		log_warn("spool: %s is damaged or unreadable; the drop counts "
		    "start again from zero", dc->path);
	/* nothing taken from a damaged file: zero, never a wrong number */
	memset(&dc->loaded, 0, sizeof(dc->loaded));
	dc->nranges = 0;
	dc->since_ms = now_ms();
}

/* Sort the ranges and merge those that touch; a full table merges its
 * two closest neighbours. */
static void
ranges_tidy(struct dropcounts *dc)
{
	size_t n = dc->nranges;

	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && dc->ranges[j][0] < dc->ranges[j - 1][0]; j--) {
			uint64_t t0 = dc->ranges[j][0], t1 = dc->ranges[j][1];

			dc->ranges[j][0] = dc->ranges[j - 1][0];
			dc->ranges[j][1] = dc->ranges[j - 1][1];
			dc->ranges[j - 1][0] = t0;
			dc->ranges[j - 1][1] = t1;
		}
	for (size_t i = 0; i + 1 < n;) {
		if (dc->ranges[i + 1][0] <= dc->ranges[i][1]) {
			if (dc->ranges[i + 1][1] > dc->ranges[i][1])
				dc->ranges[i][1] = dc->ranges[i + 1][1];
			memmove(dc->ranges[i + 1], dc->ranges[i + 2],
			    (n - i - 2) * sizeof(dc->ranges[0]));
			n--;
		} else
			i++;
	}
	dc->nranges = n;
}

static void
range_add(struct dropcounts *dc, uint64_t a, uint64_t b)
{
	if (dc->nranges == DC_RANGES_MAX) {
		size_t best = 0;

		/* the records between the closest two are intact and were
		 * scanned: damage to them later would go uncounted (bounded) */
		for (size_t i = 1; i + 1 < dc->nranges; i++)
			if (dc->ranges[i + 1][0] - dc->ranges[i][1] <
			    dc->ranges[best + 1][0] - dc->ranges[best][1])
				best = i;
		dc->ranges[best][1] = dc->ranges[best + 1][1];
		memmove(dc->ranges[best + 1], dc->ranges[best + 2],
		    (dc->nranges - best - 2) * sizeof(dc->ranges[0]));
		dc->nranges--;
	}
	dc->ranges[dc->nranges][0] = a;
	dc->ranges[dc->nranges][1] = b;
	dc->nranges++;
	ranges_tidy(dc);
}

uint64_t
dropcounts_gap(void *arg, uint64_t a, uint64_t b)
{
	struct dropcounts *dc = arg;
	uint64_t known = 0;

	if (b <= a)
		return 0;
	for (size_t i = 0; i < dc->nranges; i++)
		known += spoolrec_overlap(dc->ranges[i][0], dc->ranges[i][1], a, b);
	range_add(dc, a, b);
	return b - a - known;
}

/* Take [a, b) out of the ranges. */
static void
range_cut(struct dropcounts *dc, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < dc->nranges; i++) {
		uint64_t *r = dc->ranges[i];

		if (b <= r[0] || a >= r[1])
			continue;
		if (a > r[0] && b < r[1] && dc->nranges < DC_RANGES_MAX) {
			/* a hole in the middle: two ranges */
			dc->ranges[dc->nranges][0] = b;
			dc->ranges[dc->nranges][1] = r[1];
			dc->nranges++;
			r[1] = a;
		} else if (a <= r[0])
			r[0] = b < r[1] ? b : r[1];
		else
			r[1] = a;
	}
	for (size_t i = 0; i < dc->nranges;)
		if (dc->ranges[i][1] <= dc->ranges[i][0]) {
			memmove(dc->ranges[i], dc->ranges[i + 1],
			    (dc->nranges - i - 1) * sizeof(dc->ranges[0]));
			dc->nranges--;
		} else
			i++;
	ranges_tidy(dc);
}

void
dropcounts_after_scan(struct dropcounts *dc, const struct segstore *st, uint64_t minseq)
{
	/* below the oldest cursor on disk: never scanned again (a cursor in
	 * memory may be further on, but its file may not be yet) */
	range_cut(dc, 0, minseq);
	for (size_t i = 0; i < st->ngaps; i++)
		range_cut(dc, st->gaps[i][0], st->gaps[i][1]);
	range_cut(dc, st->next_seq, UINT64_MAX);
}

void
dropcounts_claim(struct dropcounts *dc, const char *name, uint64_t *budget,
    uint64_t *poison, uint64_t *filtered)
{
	for (size_t i = 0; i < dc->loaded.n; i++) {
		const struct dc_dest *d = &dc->loaded.d[i];

		if (dc->claimed[i] || strcmp(d->name, name) != 0)
			continue;
		dc->claimed[i] = true;
		*budget += d->budget;
		*poison += d->poison;
		*filtered += d->filtered;
		return;
	}
}

void
dropcounts_rest(struct dropcounts *dc, uint64_t *gone_budget, uint64_t *gone_poison,
    struct segstore *st)
{
	st->corrupt += dc->loaded.corrupt;
	st->torn += dc->loaded.torn;
	*gone_budget += dc->loaded.gone_budget;
	*gone_poison += dc->loaded.gone_poison;
	for (size_t i = 0; i < dc->loaded.n; i++)
		if (!dc->claimed[i]) {
			dc->claimed[i] = true;
			*gone_budget += dc->loaded.d[i].budget;
			*gone_poison += dc->loaded.d[i].poison;
		}
}

void
dropcounts_snap_dest(struct dc_snap *s, const char *name, uint64_t budget,
    uint64_t poison, uint64_t filtered)
{
	struct dc_dest *d;

	if (s->n == DC_DESTS_MAX) {
		s->gone_budget += budget;
		s->gone_poison += poison;
		return;
	}
	d = &s->d[s->n++];
	memset(d->name, 0, sizeof(d->name));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->budget = budget;
	d->poison = poison;
	d->filtered = filtered;
}

bool
dropcounts_pending(const struct dropcounts *dc)
{
	if (dc->path[0] == '\0')
		return false;
	return !dc->have_saved || memcmp(&dc->cur, &dc->saved, sizeof(dc->cur)) != 0;
}

bool
dropcounts_due(const struct dropcounts *dc, int64_t now_mono)
{
	return now_mono >= dc->next_ms && dropcounts_pending(dc);
}

void
dropcounts_force(struct dropcounts *dc)
{
	dc->have_saved = false;
	dc->next_ms = 0;
}

static int
render(struct dropcounts *dc, struct buf *b)
{
	const struct dc_snap *s = &dc->cur;
	int r;

	r = buf_printf(b, DC_MAGIC "since_ms %" PRId64 "\ncorrupt %" PRIu64 "\ntorn %"
	    PRIu64 "\ngone_budget %" PRIu64 "\ngone_poison %" PRIu64 "\n",
	    dc->since_ms, s->corrupt, s->torn, s->gone_budget, s->gone_poison);
	for (size_t i = 0; r == 0 && i < dc->nranges; i++)
		r = buf_printf(b, "range %" PRIu64 " %" PRIu64 "\n", dc->ranges[i][0],
		    dc->ranges[i][1]);
	for (size_t i = 0; r == 0 && i < s->n; i++) {
		r = buf_puts(b, "dest ");
		if (r == 0)
			r = put_name(b, s->d[i].name);
		if (r == 0)
			r = buf_printf(b, " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			    s->d[i].budget, s->d[i].poison, s->d[i].filtered);
	}
	if (r == 0)
		r = buf_printf(b, "crc %08x\n", (unsigned int)crc32(0L,
		    (const Bytef *)b->data, (uInt)b->len));
	return r;
}

int
dropcounts_save(struct dropcounts *dc, int64_t now_mono, int interval_ms)
{
	struct buf b;
	int rc = -1;

	if (dc->path[0] == '\0')
		return 0;
	dc->next_ms = now_mono + interval_ms;
	buf_init(&b, DC_FILE_MAX);
	if (render(dc, &b) < 0)
		log_limited(LOG_ERROR, "spool:counts", 60, "spool: the drop counts "
		    "do not fit in %s (%d bytes)", dc->path, DC_FILE_MAX);
	else if (fs_write_atomic(dc->path, b.data, b.len, 0600) < 0)
		log_limited(LOG_WARN, "spool:counts", 60, "spool: cannot save %s: %s",
		    dc->path, log_errstr(errno));
	else {
		dc->saved = dc->cur;
		dc->have_saved = true;
		rc = 0;
	}
	buf_free(&b);
	return rc;
}
