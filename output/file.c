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
#include <unistd.h>

#include "../agent/log.h"
#include "sink.h"

struct file_priv {
	int	fd;
	bool	is_stdout;
};

static int
file_open(struct sink_ctx *ctx)
{
	struct file_priv *p = calloc(1, sizeof(*p));
	const char *path = ctx->conf->path;

	if (p == NULL)
		return -1;
	if (path == NULL || *path == '\0' || strcmp(path, "-") == 0) {
		p->fd = 1;
		p->is_stdout = true;
	} else {
		p->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (p->fd == -1) {
			snprintf(ctx->error, sizeof(ctx->error), "cannot open %s: %s",
			    path, strerror(errno));
			free(p);
			return -1;
		}
	}
	ctx->priv = p;
	return 0;
}

static int
write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
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
	/* One write per batch: the lines of a batch arrive whole. */
	if (write_all(p->fd, out.data, out.len) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "write to %s failed: %s",
		    p->is_stdout ? "stdout" : ctx->conf->path, strerror(errno));
		buf_free(&out);
		return SEND_RETRY;
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

const struct sink sink_file = {
	.name = "file",
	.proto = PROTO_FILE,
	.open = file_open,
	.send = file_send,
	.close = file_close,
};
