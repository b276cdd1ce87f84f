/*
 * deadletter: one JSON line per refused event, appended to a bounded
 * 0600 file (deadletter.h).  One write(2) per line on an O_APPEND
 * descriptor: two destinations sharing a file never interleave their
 * lines, and a line is either whole or, on a full disk, cut at its end
 * (never the middle of another).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deadletter.h"
#include "lib/buf.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/log.h"

#define DL_LINE_MAX	(4u * 1024 * 1024)

static int
put_iso_ms(struct buf *b, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char s[40];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return -1;
	return buf_printf(b, "\"%s.%03dZ\"", s, (int)(ms % 1000));
}

static int
put_kv(struct buf *b, const char *k, const char *v)
{
	if (buf_printf(b, ",\"%s\":", k) == -1)
		return -1;
	return json_put_str(b, v != NULL ? v : "", strlen(v != NULL ? v : ""));
}

/* The line, with its newline. */
static int
make_line(struct buf *b, const char *dest, const char *proto,
    const char *reason, const struct event *ev, int64_t now)
{
	if (buf_puts(b, "{\"time\":") == -1 || put_iso_ms(b, now) == -1 ||
	    put_kv(b, "destination", dest) == -1 ||
	    put_kv(b, "proto", proto) == -1 ||
	    put_kv(b, "reason", reason) == -1 ||
	    buf_puts(b, ",\"event\":") == -1 || event_to_json(ev, b) == -1 ||
	    buf_puts(b, "}\n") == -1)
		return -1;
	return 0;
}

enum dl_result
deadletter_append(const char *path, int64_t max_bytes, const char *dest,
    const char *proto, const char *reason, const struct event *ev,
    int64_t now, char *err, size_t errlen)
{
	struct buf line = BUF_INIT;
	struct stat st;
	enum dl_result r = DL_ERROR;
	int fd;

	buf_init(&line, DL_LINE_MAX);
	if (make_line(&line, dest, proto, reason, ev, now) == -1) {
		snprintf(err, errlen, "out of memory");
		buf_free(&line);
		return DL_ERROR;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		snprintf(err, errlen, "%s: %s", path, log_errstr(errno));
		buf_free(&line);
		return DL_ERROR;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	/* refused events may hold what an admin keeps private */
	if ((st.st_mode & 077) != 0 && fchmod(fd, 0600) == -1) {
		snprintf(err, errlen, "%s: chmod 0600: %s", path, log_errstr(errno));
		goto out;
	}
	if (max_bytes > 0 && (int64_t)st.st_size + (int64_t)line.len > max_bytes) {
		r = DL_FULL;
		goto out;
	}
	if (fs_write_all(fd, line.data, line.len, -1) == -1) {
		snprintf(err, errlen, "%s: %s", path, log_errstr(errno));
		goto out;
	}
	r = DL_WRITTEN;
out:
	close(fd);
	buf_free(&line);
	return r;
}
