/*
 * gelf: GELF 1.1 messages to Graylog over TCP (TLS with ssl: yes) or UDP.
 *
 * Source: Graylog documentation, "GELF" (GELF Payload Specification 1.1,
 * GELF via UDP, GELF via TCP;
 * https://go2docs.graylog.org/current/getting_in_log_data/gelf.html).
 * A message is a JSON object: version "1.1", host, short_message,
 * timestamp (seconds since the epoch, decimals for milliseconds), level
 * (the syslog severity number), and additional fields prefixed with an
 * underscore (names ^[\w.-]*$; _id is not allowed).  Over TCP each
 * message ends with a null byte and is not compressed.  Over UDP a message
 * longer than the datagram is cut in chunks: 0x1e 0x0f, an 8-byte message
 * id, the sequence number and the sequence count (at most 128 chunks);
 * a datagram may be GZIP- or ZLIB-compressed.
 *
 * Mapping (docs/outputs.md "gelf"): host = the event's hostname (else the
 * agent's), short_message = the text (whole: no full_message), timestamp
 * = its milliseconds, level = syslog_severity_code(esxwatch_severity),
 * every other field as _name (a field named id goes as _esxwatch_field_id).
 *
 * GELF has no acknowledgement.  Over TCP, a connection the receiver
 * closed is noticed before the next write (netconn_alive()) and the batch
 * goes on a new one; a batch is delivered once the receiver's TCP has
 * acknowledged all of it (netconn_drain()): a receiver that goes away
 * before makes the whole batch go again (its first messages may arrive
 * twice).  What the receiver's kernel acknowledged but the input had not
 * processed when it crashed is lost: at most its socket receive buffer
 * of the last batch (docs/outputs.md).
 * Over UDP nothing says a datagram arrived.  An event whose chunks would
 * exceed 128 is refused alone (the shipper drops and counts it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../agent/config/config_host.h"
#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "gelf.h"
#include "gzip.h"
#include "netconn.h"
#include "syslog.h"
#include "transport.h"

#define GELF_CHUNK_HDR		12
#define GELF_MAX_CHUNKS		128
#define GELF_DEFAULT_DGRAM	2048

struct gelf_sink {
	struct netconn	 nc;
	bool		 udp;
	struct gzip	*gz;		/* UDP with compress: gzip */
	size_t		 dgram;		/* the longest datagram */
	char		 hostname[256];
	uint64_t	 msgid;
	struct buf	 msg;
	struct buf	 zmsg;
	struct buf	 out;
};

int
gelf_format(const struct event *ev, const char *fallback_host, struct buf *b)
{
	const char *host = event_get(ev, "hostname");
	int64_t ms = ev->timestamp_ms;

	if (host == NULL || host[0] == '\0')
		host = fallback_host != NULL && fallback_host[0] ? fallback_host : "-";
	if (buf_puts(b, "{\"version\":\"1.1\",\"host\":") == -1 ||
	    json_put_str(b, host, strlen(host)) == -1 ||
	    buf_puts(b, ",\"short_message\":") == -1 ||
	    json_put_str(b, ev->text[0] ? ev->text : "-",
	    ev->text[0] ? strlen(ev->text) : 1) == -1)
		return -1;
	/* a time before 1970 is left out: the input stamps it on arrival */
	if (ms >= 0 && buf_printf(b, ",\"timestamp\":%lld.%03d",
	    (long long)(ms / 1000), (int)(ms % 1000)) == -1)
		return -1;
	if (buf_printf(b, ",\"level\":%d",
	    syslog_severity_code(event_get(ev, "esxwatch_severity"))) == -1)
		return -1;
	for (size_t i = 0; i < ev->nfields; i++) {
		const struct field *f = &ev->fields[i];

		if (strcmp(f->name, "hostname") == 0)
			continue;
		if (buf_puts(b, strcmp(f->name, "id") == 0 ?
		    ",\"_esxwatch_field_id\":" : ",\"_") == -1 ||
		    (strcmp(f->name, "id") != 0 &&
		    (buf_puts(b, f->name) == -1 || buf_puts(b, "\":") == -1)) ||
		    json_put_str(b, f->value, strlen(f->value)) == -1)
			return -1;
	}
	return buf_putc(b, '}');
}

static void
gelf_free(struct gelf_sink *s)
{
	if (s == NULL)
		return;
	netconn_free(&s->nc);
	gzip_free(s->gz);
	buf_free(&s->msg);
	buf_free(&s->zmsg);
	buf_free(&s->out);
	free(s);
}

static int
gelf_open(struct sink_ctx *ctx)
{
	static const struct gelf_opts none;
	const struct gelf_opts *o = gelf_opts(ctx->conf);
	const struct dest_conf *d = ctx->conf;
	struct gelf_sink *s;
	struct buf url = BUF_INIT;
	const char *h;

	if (o == NULL)
		o = &none;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	netconn_init(&s->nc);
	buf_init(&s->msg, 1024 * 1024);
	buf_init(&s->zmsg, 1024 * 1024);
	buf_init(&s->out, 256u * 1024 * 1024);
	s->udp = o->transport != NULL && strcmp(o->transport, "udp") == 0;
	s->dgram = o->max_message_size > 0 ? (size_t)o->max_message_size :
	    GELF_DEFAULT_DGRAM;
	s->msgid = ((uint64_t)time(NULL) << 32) ^ ((uint64_t)getpid() << 16);
	h = ctx->cfg != NULL ? config_hostname(ctx->cfg) : NULL;
	snprintf(s->hostname, sizeof(s->hostname), "%s", h ? h : "-");
	if (s->udp && d->ssl) {
		snprintf(ctx->error, sizeof(ctx->error), "GELF over UDP cannot "
		    "use TLS: set ssl: no, or transport: tcp");
		goto err;
	}
	if (s->udp && (o->compress == NULL || strcmp(o->compress, "none") != 0)) {
		s->gz = gzip_new(GZIP_LEVEL_DEFAULT);
		if (s->gz == NULL)
			goto nomem;
	}
	if (!s->udp) {
		if (transport_global_init() == -1 ||
		    transport_base_url(d, "", &url) == -1)
			goto nomem;
		s->nc.url = buf_steal(&url);
		if (s->nc.url == NULL)
			goto nomem;
	}
	if (trust_init(&s->nc.trust, ctx->cfg, d, ctx->name, !s->udp && d->ssl,
	    ctx->error, sizeof(ctx->error)) == -1)
		goto err;
	log_info("%s: gelf to %s:%d (%s%s)", ctx->name, d->hostname,
	    dest_port(d), s->udp ? "udp" : d->ssl ? "tls" : "tcp",
	    s->gz ? ", gzip" : "");
	ctx->priv = s;
	return 0;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
err:
	buf_free(&url);
	gelf_free(s);
	return -1;
}

static int
send_dgram(struct sink_ctx *ctx, struct gelf_sink *s, const void *p,
    size_t len)
{
	ssize_t n;

	do
		n = sendto(s->nc.fd, p, len, 0, (struct sockaddr *)&s->nc.addr,
		    s->nc.addrlen);
	while (n == -1 && errno == EINTR);
	if (n == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "sending to %s:%d "
		    "over UDP: %s", ctx->conf->hostname, dest_port(ctx->conf),
		    log_errstr(errno));
		return -1;
	}
	return 0;
}

/* One message as datagrams: whole, or chunked.  -1 error, -2 too big. */
static int
send_chunked(struct sink_ctx *ctx, struct gelf_sink *s, const char *p,
    size_t len)
{
	size_t per = s->dgram - GELF_CHUNK_HDR, count, i;
	unsigned char dg[65536];
	uint64_t id;

	if (len <= s->dgram)
		return send_dgram(ctx, s, p, len);
	count = (len + per - 1) / per;
	if (count > GELF_MAX_CHUNKS)
		return -2;
	id = ++s->msgid;
	for (i = 0; i < count; i++) {
		size_t off = i * per, n = len - off < per ? len - off : per;

		dg[0] = 0x1e;
		dg[1] = 0x0f;
		for (int k = 0; k < 8; k++)
			dg[2 + k] = (unsigned char)(id >> (56 - 8 * k));
		dg[10] = (unsigned char)i;
		dg[11] = (unsigned char)count;
		memcpy(dg + GELF_CHUNK_HDR, p + off, n);
		if (send_dgram(ctx, s, dg, GELF_CHUNK_HDR + n) == -1)
			return -1;
	}
	return 0;
}

static enum send_result
send_udp(struct sink_ctx *ctx, struct gelf_sink *s, const struct batch *b)
{
	const char *p;
	size_t len;
	int rc;

	if (s->nc.fd == -1 && netconn_udp_open(&s->nc, ctx->conf, ctx->error,
	    sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	for (size_t i = 0; i < b->n; i++) {
		buf_reset(&s->msg);
		if (gelf_format(b->events[i], s->hostname, &s->msg) == -1)
			goto nomem;
		p = s->msg.data;
		len = s->msg.len;
		if (s->gz != NULL) {
			if (gzip_compress(s->gz, p, len, &s->zmsg) == -1)
				goto nomem;
			p = s->zmsg.data;
			len = s->zmsg.len;
		}
		rc = send_chunked(ctx, s, p, len);
		if (rc == -2) {
			snprintf(ctx->error, sizeof(ctx->error), "the event "
			    "needs more than %d chunks of %zu bytes (GELF's "
			    "limit): raise max_message_size or use tcp",
			    GELF_MAX_CHUNKS, s->dgram);
			return SEND_REJECT;
		}
		if (rc == -1) {
			netconn_close(&s->nc);
			return SEND_RETRY;
		}
	}
	return SEND_OK;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory formatting a batch");
	return SEND_RETRY;
}

static enum send_result
gelf_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct gelf_sink *s = ctx->priv;
	long reconnect_s = (long)ctx->conf->reconnect * 60;

	*retry_after = 0;
	ctx->error[0] = '\0';
	if (b->n == 0)
		return SEND_OK;
	if (reconnect_s > 0 && (s->nc.fd != -1 || s->nc.curl != NULL) &&
	    time(NULL) - s->nc.opened >= reconnect_s)
		netconn_close(&s->nc);
	if (s->udp)
		return send_udp(ctx, s, b);
	buf_reset(&s->out);
	for (size_t i = 0; i < b->n; i++)
		if (gelf_format(b->events[i], s->hostname, &s->out) == -1 ||
		    buf_putc(&s->out, '\0') == -1) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "out of memory formatting a batch");
			return SEND_RETRY;
		}
	if (s->nc.curl != NULL && !netconn_alive(&s->nc)) {
		log_limited(LOG_INFO, "gelf:peer-closed", 60, "%s: the GELF "
		    "input closed the connection; reconnecting", ctx->name);
		netconn_close(&s->nc);
	}
	if (s->nc.curl == NULL && netconn_stream_open(&s->nc, ctx->conf,
	    ctx->error, sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	if (netconn_send(&s->nc, ctx->conf, s->out.data, s->out.len,
	    ctx->error, sizeof(ctx->error)) == -1 ||
	    netconn_drain(&s->nc, ctx->conf, ctx->error,
	    sizeof(ctx->error)) == -1) {
		netconn_close(&s->nc);
		return SEND_RETRY;
	}
	return SEND_OK;
}

static void
gelf_close(struct sink_ctx *ctx)
{
	gelf_free(ctx->priv);
	ctx->priv = NULL;
}

/* transport and max_message_size: one key each with syslog's rows (the
 * same choices and range); compress with http's. */
static const char *const transport_choices[] = { "udp", "tcp", NULL };

#define O(f)	offsetof(struct gelf_opts, f)
static const struct cfg_key gelf_keys[] = {
	{ .name = "transport", .type = KT_ENUM, .off = O(transport),
	  .choices = transport_choices, .def = "tcp",
	  .doc = "gelf: udp or tcp (TLS with ssl)" },
	{ .name = "max_message_size", .type = KT_INT,
	  .off = O(max_message_size), .min = 480, .max = 65507, .def = "2048",
	  .doc = "gelf over UDP: longest datagram (chunked past it)" },
	{ .name = "compress", .type = KT_ENUM, .off = O(compress),
	  .choices = sink_compress_choices, .def = "gzip",
	  .doc = "gelf over UDP: datagram compression (TCP: none)" },
};
#undef O

/* TLS over UDP; a named destination's host. */
static void
gelf_finish(const struct cfg_finish *f)
{
	const struct kpos *sp = cfg_finish_pos(f, "ssl");
	struct dest_conf *d = f->d;
	const struct gelf_opts *o = gelf_opts(d);

	if (o != NULL && strcmp(o->transport, "udp") == 0 && d->ssl) {
		if (sp->ok)
			cfg_error(f->c, sp->line, sp->col, "'ssl': GELF over "
			    "UDP cannot use TLS; use transport: tcp or ssl: no");
		d->ssl = false;
	}
	if (!f->primary && d->hostname[0] == '\0')
		cfg_error(f->c, f->line, f->col, "servers.%s: 'hostname' is "
		    "required for proto gelf", d->name);
}

const struct sink sink_gelf = {
	.name = "gelf",
	.proto = PROTO_GELF,
	.open = gelf_open,
	.send = gelf_send,
	.close = gelf_close,
	.port = 12201,
	.tls_port = 12201,
	.keys = gelf_keys,
	.nkeys = sizeof(gelf_keys) / sizeof(gelf_keys[0]),
	.opts_size = sizeof(struct gelf_opts),
	.finish = gelf_finish,
};

struct gelf_opts *
gelf_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_gelf);
}
