/*
 * file sink: events as JSON lines (docs/events.md) appended to a file, or to
 * stdout when the path is empty or "-".  The embedded default when no
 * server is configured.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../agent/lib/fs.h"
#include "../agent/lib/log.h"
#include "file.h"
#include "sink.h"

struct file_priv {
	int		 fd;
	bool		 is_stdout;
	const char	*path;		/* the configured one, to reopen */
};

static int
open_path(struct sink_ctx *ctx, const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	if (fd == -1)
		snprintf(ctx->error, sizeof(ctx->error), "cannot open %s: %s",
		    path, log_errstr(errno));
	return fd;
}

static int
file_open(struct sink_ctx *ctx)
{
	struct file_priv *p = calloc(1, sizeof(*p));
	const struct file_opts *o = file_opts(ctx->conf);
	/* a primary with nowhere to send (config_resolve) writes to stdout */
	const char *path = ctx->conf->to_stdout || o == NULL ? "-" : o->path;

	if (p == NULL)
		return -1;
	p->path = path;
	if (path == NULL || *path == '\0' || strcmp(path, "-") == 0) {
		p->fd = 1;
		p->is_stdout = true;
	} else {
		p->fd = open_path(ctx, path);
		if (p->fd == -1) {
			free(p);
			return -1;
		}
	}
	ctx->priv = p;
	return 0;
}

/*
 * The file was removed or renamed away (rotated by hand or by logrotate):
 * write to a new one at the configured path, not into a file nobody sees.
 */
static int
reopen_if_moved(struct sink_ctx *ctx, struct file_priv *p)
{
	struct stat a, b;
	int fd;

	if (p->is_stdout)
		return 0;
	if (fstat(p->fd, &a) == 0 && stat(p->path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 0;
	fd = open_path(ctx, p->path);
	if (fd == -1)
		return -1;
	close(p->fd);
	p->fd = fd;
	return 0;
}

static enum send_result
file_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after_s)
{
	struct file_priv *p = ctx->priv;
	struct buf out;
	size_t i;

	(void)retry_after_s;
	buf_init(&out, 0);
	for (i = 0; i < b->n; i++)
		if (event_to_json(b->events[i], &out) == -1 || buf_putc(&out, '\n') == -1) {
			buf_free(&out);
			snprintf(ctx->error, sizeof(ctx->error), "event too large to encode");
			return SEND_REJECT;
		}
	if (reopen_if_moved(ctx, p) == -1) {
		buf_free(&out);
		return SEND_RETRY;
	}
	/* One write per batch: the lines of a batch arrive whole. */
	{
		struct stat st;
		bool regular = !p->is_stdout && fstat(p->fd, &st) == 0 &&
		    S_ISREG(st.st_mode);

		if (fs_write_all(p->fd, out.data, out.len, -1) == -1) {
			int e = errno;

			/* The batch is sent again: take a partly written one
			 * back (a disk that filled up) rather than leave a torn
			 * line and duplicates. */
			if (regular && ftruncate(p->fd, st.st_size) == -1) {
				/* nothing more to do: the retry appends */
			}
			snprintf(ctx->error, sizeof(ctx->error), "write to %s failed: %s",
			    p->is_stdout ? "stdout" : p->path, log_errstr(e));
			buf_free(&out);
			return SEND_RETRY;
		}
	}
	buf_free(&out);
	return SEND_OK;
}

static void
file_close(struct sink_ctx *ctx)
{
	struct file_priv *p = ctx->priv;

	if (p == NULL)
		return;
	if (!p->is_stdout)
		close(p->fd);
	free(p);
	ctx->priv = NULL;
}

/* Configuration: where the JSON lines go. */
static const struct cfg_key file_keys[] = {
	{ .name = "path", .type = KT_STR, .off = offsetof(struct file_opts, path),
	  .doc = "file: output file; empty or - : stdout" },
};

/* Always somewhere: the path, or stdout. */
static bool
file_has_target(const struct dest_conf *d)
{
	(void)d;
	return true;
}

const struct sink sink_file = {
	.name = "file",
	.proto = PROTO_FILE,
	.open = file_open,
	.send = file_send,
	.close = file_close,
	.keys = file_keys,
	.nkeys = sizeof(file_keys) / sizeof(file_keys[0]),
	.opts_size = sizeof(struct file_opts),
	.has_target = file_has_target,
};

struct file_opts *
file_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_file);
}
