/*
 * segcursor: the small files beside the segments that say where each
 * destination is (see segstore.h, "Cursor files"): cursor.NAME, one per
 * destination (its name escaped), written atomically and durably, and
 * the destinations file listing the names cursors are kept for.  A room
 * of its own: these files are the destinations' state, the segments the
 * events'; neither needs the other's code.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/fs.h"
#include "../lib/log.h"
#include "segstore.h"

static int
cursor_path(const struct segstore *st, const char *name, char *out, size_t len)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, PATH_MAX);
	if (buf_printf(&b, "%s/cursor.", st->dir) < 0)
		goto out;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-') {
			if (buf_putc(&b, (char)*p) < 0)
				goto out;
		} else if (buf_printf(&b, "%%%02X", *p) < 0)
			goto out;
	}
	if (b.len + 1 > len)
		goto out;
	memcpy(out, b.data, b.len + 1);
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

int
segstore_unescape(const char *s, char *out, size_t len)
{
	size_t n = 0;

	while (*s) {
		unsigned int c;

		if (*s == '%') {
			char hex[3] = { 0, 0, 0 };
			char *end;

			if (s[1] == '\0' || s[2] == '\0')
				return -1;
			hex[0] = s[1];
			hex[1] = s[2];
			c = (unsigned int)strtoul(hex, &end, 16);
			if (*end != '\0' || c == 0)
				return -1;
			s += 3;
		} else
			c = (unsigned char)*s++;
		if (n + 1 >= len)
			return -1;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

int
segstore_cursor_write(const struct segstore *st, const char *name, const struct seg_pos *p)
{
	char path[PATH_MAX], text[128];
	int n;

	if (cursor_path(st, name, path, sizeof(path)) < 0)
		return -1;
	n = snprintf(text, sizeof(text), "seg %" PRIu64 "\noff %" PRIu64 "\nseq %"
	    PRIu64 "\n", p->seg, p->off, p->seq);
	/*
	 * The directory fsync makes the rename durable: without it a power
	 * cut can leave no cursor file at all next to synced segments, and a
	 * destination without a cursor starts at the end -- every queued
	 * event would be skipped.  The fixed temp name: the directory scan
	 * knows cursor.*.tmp as a crashed write's leftover.
	 */
	if (fs_replace(path, text, (size_t)n, 0600, FS_DURABLE | FS_TMP_FIXED) < 0) {
		log_limited(LOG_ERROR, "spool:cursor", 60, "spool: cannot save cursor %s: %s",
		    path, log_errstr(errno));
		return -1;
	}
	return 0;
}

int
segstore_cursor_read(const char *path, struct seg_pos *p)
{
	char text[256];
	unsigned long long v[3] = { 0, 0, 0 };
	bool have[3] = { false, false, false };
	static const char *const keys[3] = { "seg ", "off ", "seq " };
	ssize_t n;
	char *line;
	int fd;

	fd = fs_open_read(path);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	for (line = text; *line != '\0';) {
		char *nl = strchr(line, '\n'), *end;
		unsigned long long x;
		int k;

		if (nl == NULL)
			return -1;	/* every line ends: a cut file is not a cursor */
		*nl = '\0';
		for (k = 0; k < 3; k++)
			if (strncmp(line, keys[k], 4) == 0)
				break;
		if (k == 3 || !(line[4] >= '0' && line[4] <= '9'))
			return -1;
		errno = 0;
		x = strtoull(line + 4, &end, 10);
		if (errno != 0 || *end != '\0')
			return -1;
		v[k] = x;
		have[k] = true;
		line = nl + 1;
	}
	if (!have[0] || !have[1] || !have[2])
		return -1;
	p->seg = v[0];
	p->off = v[1];
	p->seq = v[2];
	return 0;
}

void
segstore_cursor_remove(const struct segstore *st, const char *name)
{
	char path[PATH_MAX];

	if (cursor_path(st, name, path, sizeof(path)) == 0)
		(void)unlink(path);
}

/*
 * The destinations file (spool/destinations): the escaped names of the
 * destinations the spool keeps cursors for, one a line.  At start it tells
 * a destination whose cursor file was lost (listed) from one just added to
 * the configuration (not listed).
 */
int
segstore_dests_write(const struct segstore *st, const char *const *names, size_t n)
{
	char path[PATH_MAX], cur[PATH_MAX];
	size_t plen = strlen(st->dir) + strlen("/cursor.");
	struct buf b;
	int rc = -1;

	buf_init(&b, 64 * 1024);
	snprintf(path, sizeof(path), "%s/destinations", st->dir);
	for (size_t i = 0; i < n; i++)
		if (cursor_path(st, names[i], cur, sizeof(cur)) < 0 ||
		    buf_printf(&b, "%s\n", cur + plen) < 0)
			goto out;
	if (fs_write_atomic(path, b.data != NULL ? b.data : "", b.len, 0600) < 0) {
		log_limited(LOG_ERROR, "spool:dests", 60, "spool: cannot save %s: %s",
		    path, log_errstr(errno));
		goto out;
	}
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

/* Is name listed?  1 yes, 0 no, -1 no (readable) file. */
int
segstore_dests_listed(const struct segstore *st, const char *name)
{
	char esc[PATH_MAX], path[PATH_MAX], text[64 * 1024];
	size_t skip = strlen(st->dir) + strlen("/cursor."), l;
	ssize_t n;
	int fd;

	if (cursor_path(st, name, esc, sizeof(esc)) < 0)
		return -1;
	l = strlen(esc + skip);
	snprintf(path, sizeof(path), "%s/destinations", st->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = fs_read_upto(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -1;
	text[n] = '\0';
	for (const char *line = text; *line != '\0';) {
		const char *nl = strchr(line, '\n');

		if (nl == NULL)
			return -1;	/* cut: not to be trusted */
		if ((size_t)(nl - line) == l && memcmp(line, esc + skip, l) == 0)
			return 1;
		line = nl + 1;
	}
	return 0;
}
