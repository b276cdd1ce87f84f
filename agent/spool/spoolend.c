/*
 * spoolend: the clean-stop mark, spool/end.  A clean stop writes the
 * sequence the next event would get; the next start takes it (reads and
 * removes it, so a crash later never finds a stale one).  Records below
 * it that no segment holds any more -- the newest segment cut at a record
 * boundary, or deleted -- are then counted as damaged: the scan of what
 * is there cannot see a cut at the very end.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"

static void
end_path(const struct segstore *st, char *path, size_t len)
{
	snprintf(path, len, "%s/end", st->dir);
}

void
segstore_gap_note(struct segstore *st, uint64_t first, uint64_t end)
{
	size_t i = st->ngaps;

	if (end <= first)
		return;
	if (i > 0 && st->gaps[i - 1][1] == first) {
		st->gaps[i - 1][1] = end;	/* the next one dropped too */
		return;
	}
	if (i == SEG_GAPS_MAX) {
		/* full: the last row grows over what lies between (records
		 * there are on disk: no gap in them is ever seen) */
		st->gaps[i - 1][1] = end;
		return;
	}
	st->gaps[i][0] = first;
	st->gaps[i][1] = end;
	st->ngaps++;
}

int
segstore_end_write(const struct segstore *st, uint64_t next_seq)
{
	char path[PATH_MAX], text[64 + SEG_GAPS_MAX * 48];
	int n;

	end_path(st, path, sizeof(path));
	n = snprintf(text, sizeof(text), "next_seq %" PRIu64 "\n", next_seq);
	for (size_t i = 0; i < st->ngaps; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "gap %" PRIu64
		    " %" PRIu64 "\n", st->gaps[i][0], st->gaps[i][1]);
	if (fs_write_atomic(path, text, (size_t)n, 0600) < 0) {
		log_warn("spool: cannot save %s: %s", path, log_errstr(errno));
		return -1;
	}
	return 0;
}

/* A number at *p, then c; *p moves past c.  -1 if there is none. */
static int
num(char **p, char c, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno != 0 || *end != c)
		return -1;
	*p = end + 1;
	return 0;
}

/* The mark, removed: its next_seq and gaps; -1 if there is none whole. */
static int
end_take(const struct segstore *st, uint64_t *seq, uint64_t gaps[][2],
    size_t *ngaps)
{
	char path[PATH_MAX], text[64 + SEG_GAPS_MAX * 48], *p = text;
	ssize_t n;
	int fd;

	*ngaps = 0;
	end_path(st, path, sizeof(path));
	fd = fs_open_read(path);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	(void)unlink(path);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	if (strncmp(p, "next_seq ", 9) != 0)
		return -1;
	p += 9;
	if (num(&p, '\n', seq) < 0)
		return -1;
	while (*p != '\0' && *ngaps < SEG_GAPS_MAX) {
		if (strncmp(p, "gap ", 4) != 0)
			return -1;
		p += 4;
		if (num(&p, ' ', &gaps[*ngaps][0]) < 0 ||
		    num(&p, '\n', &gaps[*ngaps][1]) < 0)
			return -1;
		(*ngaps)++;
	}
	return 0;
}

/*
 * After a clean stop, the records up to its mark must be there: those past
 * the newest record found (and past the oldest cursor: the others were
 * delivered) went with a cut or deleted newest segment.
 */
void
segstore_end_check(struct segstore *st, uint64_t minseq)
{
	uint64_t mark, gaps[SEG_GAPS_MAX][2], have = st->nsegs > 0 ?
	    st->segs[st->nsegs - 1].end_seq : 0;
	size_t ngaps;

	if (end_take(st, &mark, gaps, &ngaps) < 0)
		return;
	/* the budget's gaps between segments were counted when dropped: the
	 * scan counted them again as damage */
	for (size_t i = 0; i < ngaps; i++) {
		uint64_t o = spoolrec_overlap(gaps[i][0], gaps[i][1], minseq, have);

		st->corrupt -= o < st->corrupt ? o : st->corrupt;
		segstore_gap_note(st, gaps[i][0], gaps[i][1]);
	}
	if (have < minseq)
		have = minseq;
	if (mark <= have)
		return;
	log_warn("spool: %s: the newest %" PRIu64 " records written before the "
	    "last clean stop are gone (a segment cut or deleted); counted as "
	    "damaged", st->dir, mark - have);
	st->corrupt += mark - have;
	/* next_seq stays where the records end: a cursor waiting for the
	 * first lost one reads the next event pushed, with no gap to count
	 * again (no record with a lost sequence exists anywhere) */
}
