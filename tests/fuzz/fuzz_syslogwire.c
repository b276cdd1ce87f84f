/*
 * libFuzzer target: the syslog message parser (collectors/receiver/
 * syslogparse.c) on arbitrary bytes — no NUL terminator, NULs inside, any
 * length.  Checks that every span lies inside the message, that msg and
 * text run to its end, that a failed parse keeps the whole line as text,
 * and that a relay's "<PRI>Mmm dd hh:mm:ss RELAY " in front of a header
 * changes nothing but the relay.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/receiver/syslogwire.h"

#define NOW 1796623200000LL	/* 2026-12-07T06:00:00Z */

static void
inside(const struct syslog_span *s, const char *b, size_t len)
{
	if (s->len == 0)
		return;
	if (s->p < b || s->p + s->len > b + len)
		abort();
}

static void
check(const struct syslog_msg *m, const char *b, size_t len)
{
	const struct syslog_span *all[] = { &m->host, &m->app, &m->procid,
	    &m->msgid, &m->sd, &m->msg, &m->text, &m->relay };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		inside(all[i], b, len);
	if (m->pri < -1 || m->pri > 191)
		abort();
	if (m->text.len > 0 && m->msg.len > 0 &&
	    m->msg.p + m->msg.len != m->text.p + m->text.len)
		abort();
	if (m->app.len > 64 || m->procid.len > 128 || m->host.len > 255 ||
	    m->msgid.len > 32)
		abort();
	(void)syslog_is_continuation(m->msg.p ? m->msg.p : "", m->msg.len);
}

/* The same span content (both absent, or equal bytes). */
static int
same(const struct syslog_span *a, const struct syslog_span *b)
{
	return a->len == b->len && (a->len == 0 ||
	    memcmp(a->p, b->p, a->len) == 0);
}

static void
relay_check(const struct syslog_msg *m)
{
	static const char pfx[] = "<13>Jan  2 13:34:56 relay01 ";
	struct syslog_msg r;
	char *b;

	if (m->format != SYSLOG_3164 || m->relay.len > 0 || m->ts_ms < 0 ||
	    m->text.len == 0 || m->text.len > 70000)
		return;
	b = malloc(sizeof(pfx) - 1 + m->text.len);
	if (b == NULL)
		return;
	memcpy(b, pfx, sizeof(pfx) - 1);
	memcpy(b + sizeof(pfx) - 1, m->text.p, m->text.len);
	if (syslog_parse(b, sizeof(pfx) - 1 + m->text.len, NOW, &r) != 0 ||
	    r.ts_ms != m->ts_ms || r.relay.len != 7 ||
	    memcmp(r.relay.p, "relay01", 7) != 0 || !same(&r.host, &m->host) ||
	    !same(&r.app, &m->app) || !same(&r.procid, &m->procid) ||
	    !same(&r.sd, &m->sd) || !same(&r.msg, &m->msg))
		abort();
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syslog_msg m, m2;
	char *b;
	int rc;

	/* An exact-size copy so ASan sees any read past the end. */
	b = malloc(size ? size : 1);
	if (b == NULL)
		return 0;
	memcpy(b, data, size);
	rc = syslog_parse(b, size, NOW, &m);
	check(&m, b, size);
	if (rc < 0 && (m.text.p != (m.text.len ? b : NULL) ||
	    m.format != SYSLOG_UNKNOWN))
		abort();
	if (syslog_parse(b, size, NOW, &m2) != rc ||
	    memcmp(&m, &m2, sizeof(m)) != 0)
		abort();
	if (rc == 0 && m.pri >= 0)
		relay_check(&m);
	free(b);
	return 0;
}
