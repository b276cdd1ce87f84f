/*
 * storage_util: previous states, once-only command-failure events, running
 * a host tool (see storage_util.h).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../agent/config/config_host.h"
#include "../agent/lib/buf.h"
#include "../agent/lib/exec.h"
#include "../agent/lib/log.h"
#include "host/host.h"
#include "storage_util.h"

enum storage_seen
storage_transition(struct kvstore *kv, const char *key, const char *cur,
    char *prev, size_t prevlen)
{
	const char *old = kv ? kv_get(kv, key) : NULL;
	enum storage_seen r;

	if (prevlen > 0)
		prev[0] = '\0';
	if (old == NULL)
		r = STORAGE_FIRST;
	else if (strcmp(old, cur) == 0)
		r = STORAGE_SAME;
	else {
		r = STORAGE_CHANGED;
		snprintf(prev, prevlen, "%s", old);
	}
	if (kv != NULL && r != STORAGE_SAME)
		(void)kv_set(kv, key, cur);
	return r;
}

void
storage_cmd_failed(struct collector_ctx *ctx, struct emitter *em,
    const char *cmdkey, const char *fmt, ...)
{
	char	 key[512], text[1024];
	struct event *ev;
	va_list	 ap;

	/* A query the agent cut short because it is stopping or reloading
	 * did not fail: say nothing (the next round asks again). */
	if (exec_aborting())
		return;
	snprintf(key, sizeof(key), "failing:%s", cmdkey);
	if (ctx->state != NULL && kv_get(ctx->state, key) != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ev = ev_new("status", "error", "%s", text);
	if (ev != NULL) {
		(void)event_set(ev, "esxwatch_command", cmdkey);
		(void)emit(em, ev);
	}
	if (ctx->state != NULL)
		(void)kv_set(ctx->state, key, "1");
}

void
storage_cmd_ok(struct collector_ctx *ctx, const char *cmdkey)
{
	char	 key[512];

	snprintf(key, sizeof(key), "failing:%s", cmdkey);
	if (ctx->state != NULL && kv_get(ctx->state, key) != NULL) {
		(void)kv_del(ctx->state, key);
		log_info("%s: `%s` works again", ctx->name, cmdkey);
	}
}

int
storage_set_num(struct event *ev, const char *name, long long v)
{
	if (v < 0)
		return 0;
	return event_set_i64(ev, name, (int64_t)v);
}

int
storage_timeout_s(const struct collector_ctx *ctx)
{
	int	 t = ctx->conf ? ctx->conf->timeout : 30;

	return t > 0 ? t : 30;
}

/* The first line of s, for a log message. */
static const char *
line1(const char *s, char *out, size_t outlen)
{
	size_t	 n = 0;

	if (s != NULL)
		while (s[n] != '\0' && s[n] != '\n' && n + 1 < outlen)
			n++;
	if (n > 0)
		memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

int
storage_run(const struct collector_ctx *ctx, const char *tool,
    const char *const args[], int timeout_s, struct exec_result *res,
    int *missing, char *what, size_t whatlen)
{
	char	 cmd[512], key[600], how[96], l[200];
	size_t	 n, off;

	memset(res, 0, sizeof(*res));
	res->status = -1;
	*missing = 0;
	off = (size_t)snprintf(cmd, sizeof(cmd), "%s", tool);
	for (n = 0; args[n] != NULL && n < 14; n++)
		if (off < sizeof(cmd))
			off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, " %s",
			    args[n]);
	snprintf(what, whatlen, "%s", cmd);
	snprintf(key, sizeof(key), "%s:%s", ctx->name, cmd);
	if (host_run(ctx->host, tool, args, timeout_s, res) == -1) {
		if (host_err() != HOST_EFAILED) {	/* no such tool here */
			*missing = 1;
			return -1;
		}
		log_limited(LOG_ERROR, key, 300, "%s: cannot run %s: %s", ctx->name,
		    cmd, line1(res->err, l, sizeof(l)));
		snprintf(what, whatlen, "`%s` could not be started", cmd);
		return -1;
	}
	if (res->timed_out || res->signal != 0) {
		exec_describe(res, how, sizeof(how));
		log_limited(LOG_ERROR, key, 300, "%s: %s: %s", ctx->name, cmd, how);
		if (res->timed_out)
			snprintf(what, whatlen, "`%s` timed out after %d s", cmd,
			    timeout_s);
		else
			snprintf(what, whatlen, "`%s` %s", cmd, how);
		return -1;
	}
	return 0;
}
