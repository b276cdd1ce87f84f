/*
 * Fuzz what this round's new code reads from outside:
 *  - the status file (status_parse: another process wrote it, a disk may
 *    have damaged it), then the Prometheus and /health bodies built from
 *    whatever it parsed (monitor_metrics, monitor_health);
 *  - a monitor request (monitor_route) and a monitor.listen value
 *    (monitor_parse_listen);
 *  - liagent's destination filter (dfilter_parse, dfilter_compile,
 *    dfilter_keeps over a fixed event);
 *  - a URL to redact (redact_url): the answer is NUL-terminated and never
 *    longer than its buffer, and a credential before the host never shows.
 * The input is split at the first two NUL bytes: status/request text,
 * filter, URL.
 */
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/buf.h"
#include "../../agent/config/dfilter.h"
#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../agent/monitor.h"
#include "../../agent/lib/redact.h"
#include "../../agent/status.h"

static struct status_snap snap;
static struct event *ev;

static void
status_and_monitor(const char *p, size_t n)
{
	struct buf b = BUF_INIT, body = BUF_INIT, out = BUF_INIT;
	struct sockaddr_storage sa;
	socklen_t salen;
	char why[256], *s;

	if (status_parse(p, n, &snap) == 0) {
		if (snap.ndests > STATUS_MAX_DESTS)
			abort();
		(void)monitor_metrics(&snap, &b);
		buf_reset(&b);
		(void)monitor_health(&snap, &b);
		(void)monitor_answer(MR_METRICS, &snap, &body, &out);
	}
	(void)monitor_route(p, n);
	s = strndup(p, n < 200 ? n : 200);
	if (s != NULL)
		(void)monitor_parse_listen(s, &sa, &salen, why, sizeof(why));
	free(s);
	buf_free(&b);
	buf_free(&body);
	buf_free(&out);
}

static void
filter(const char *s)
{
	struct dest_filters f;
	struct dfilter *df;
	size_t *offs = NULL, off = 0, bad;
	char err[256];
	int part;

	memset(&f, 0, sizeof(f));
	if (dfilter_parse(s, &f, &offs, err, sizeof(err), &off) == 0) {
		df = dfilter_compile(&f, err, sizeof(err), &bad, &part, &off);
		if (df != NULL)
			(void)dfilter_keeps(df, ev);
		dfilter_free(df);
	} else if (off > strlen(s))
		abort();	/* the error points inside the text */
	free(offs);
	dfilter_clear(&f);
}

static void
redact(const char *url)
{
	char out[64], big[4096];
	const char *sch = strstr(url, "://");
	const char *at = sch != NULL ? strchr(sch, '@') : NULL;

	(void)redact_url(url, "***", out, sizeof(out));
	if (memchr(out, '\0', sizeof(out)) == NULL)
		abort();
	(void)redact_url(url, "***", big, sizeof(big));
	/* "scheme://user:SECRET@host/": SECRET never shows */
	if (sch != NULL && at != NULL && at > sch + 3 &&
	    strlen(url) < sizeof(big) / 2) {
		const char *colon = memchr(sch + 3, ':', (size_t)(at - sch - 3));
		const char *end = sch + 3 + strcspn(sch + 3, "/?#");

		if (colon != NULL && at < end && at - colon > 8 &&
		    memchr(colon + 1, '@', (size_t)(at - colon - 1)) == NULL) {
			char secret[2048];
			size_t l = (size_t)(at - colon - 1);

			char rest[4096];
			size_t pre = (size_t)(colon + 1 - url);

			memcpy(secret, colon + 1, l);
			secret[l] = '\0';
			/* the URL without the secret: if it is not there either,
			 * the answer shows it only by leaking it */
			memcpy(rest, url, pre);
			snprintf(rest + pre, sizeof(rest) - pre, "\n%s", at);
			if (strstr(big, secret) != NULL && strstr(rest, secret) == NULL)
				abort();
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *z1, *z2;
	char *f = NULL, *u = NULL;

	if (ev == NULL) {
		log_init(0, "/dev/null");
		ev = event_new(1, "a line");
		event_set(ev, "esxwatch_collector", "logwatch");
		event_set(ev, "esxwatch_filelog", "vmkernel");
		event_set(ev, "severity", "warning");
	}
	z1 = memchr(p, '\0', size);
	z2 = z1 != NULL ? memchr(z1 + 1, '\0', size - (size_t)(z1 + 1 - p)) : NULL;
	status_and_monitor(p, z1 != NULL ? (size_t)(z1 - p) : size);
	if (z1 != NULL) {
		size_t fl = z2 != NULL ? (size_t)(z2 - z1 - 1) : size - (size_t)(z1 + 1 - p);

		f = strndup(z1 + 1, fl);
		if (f != NULL)
			filter(f);
	}
	if (z2 != NULL) {
		u = strndup(z2 + 1, size - (size_t)(z2 + 1 - p));
		if (u != NULL)
			redact(u);
	}
	free(f);
	free(u);
	return 0;
}
