/*
 * http: POST events to any HTTP endpoint as the flat JSON objects of
 * docs/events.md (event_to_json), one per line (json_lines, the default) or
 * as one JSON array (json_array); gzip when compress: gzip; extra headers
 * such as Authorization, whose values never appear in a log line or an
 * error.  Any 2xx is delivered; the rest follows transport_http_policy().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../agent/lib/log.h"
#include "gzip.h"
#include "http.h"
#include "transport.h"

#define HTTP_MAX_BYTES	(16L * 1024 * 1024)

struct http_sink {
	struct hconn		 h;
	struct trust		 trust;
	struct gzip		*gz;
	bool			 array;
	struct curl_slist	*hdrs;
	struct buf		 body;
	struct buf		 zbody;
	size_t			 max_bytes;
	size_t			 max_events;
};

static void
http_free(struct http_sink *s)
{
	if (s == NULL)
		return;
	hconn_close(&s->h);
	gzip_free(s->gz);
	curl_slist_free_all(s->hdrs);
	buf_free(&s->body);
	buf_free(&s->zbody);
	free(s);
}

/* A header name must be a token and the value must not break the line:
 * anything else would let a configuration inject headers. */
static bool
header_ok(const char *k, const char *v)
{
	const unsigned char *p;

	if (k == NULL || k[0] == '\0' || v == NULL)
		return false;
	for (p = (const unsigned char *)k; *p; p++)
		if (*p <= 32 || *p >= 127 || strchr("()<>@,;:\\\"/[]?={}", *p))
			return false;
	for (p = (const unsigned char *)v; *p; p++)
		if (*p == '\r' || *p == '\n' || *p == '\0')
			return false;
	return true;
}

/* d's keys; for a destination the loader did not make, the defaults. */
static const struct http_opts *
conf_opts(const struct dest_conf *d)
{
	static const struct http_opts none;
	const struct http_opts *o = http_opts(d);

	return o != NULL ? o : &none;
}

static int
http_open(struct sink_ctx *ctx)
{
	const struct http_opts *o = conf_opts(ctx->conf);
	const struct dest_conf *d = ctx->conf;
	struct http_sink *s;
	struct buf url = BUF_INIT;
	char redacted[1024];
	size_t i;

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	buf_init(&s->body, 64u * 1024 * 1024);
	buf_init(&s->zbody, 64u * 1024 * 1024);
	s->array = o->format != NULL && strcmp(o->format, "json_array") == 0;
	s->max_bytes = HTTP_MAX_BYTES;
	s->max_events = 0;
	if (ctx->cfg != NULL && ctx->cfg->batch_max_bytes > 0)
		s->max_bytes = (size_t)ctx->cfg->batch_max_bytes;
	if (ctx->cfg != NULL && ctx->cfg->batch_max_events > 0)
		s->max_events = (size_t)ctx->cfg->batch_max_events;
	if (transport_target_url(d, o->url, "/", &url) == -1)
		goto nomem;
	if (hconn_open_sink(&s->h, &s->trust, ctx, url.data) == -1)
		goto err;
	for (i = 0; i < o->headers.n; i++) {
		if (!header_ok(o->headers.v[i].key, o->headers.v[i].value)) {
			/* name only: the value may be a secret */
			snprintf(ctx->error, sizeof(ctx->error), "headers: "
			    "invalid header \"%.64s\"", o->headers.v[i].key ?
			    o->headers.v[i].key : "");
			goto err;
		}
	}
	s->hdrs = transport_body_headers(s->array ? "application/json" :
	    "application/x-ndjson", o->compress, &o->headers, &s->gz);
	if (s->hdrs == NULL)
		goto nomem;
	transport_redact_url(url.data, redacted, sizeof(redacted));
	log_info("%s: http %s to %s%s%s", ctx->name, s->array ? "json_array" :
	    "json_lines", redacted, s->gz ? " (gzip)" : "",
	    o->headers.n ? " with configured headers" : "");
	buf_free(&url);
	ctx->priv = s;
	return 0;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
err:
	buf_free(&url);
	http_free(s);
	return -1;
}

static enum send_result
post_one(struct sink_ctx *ctx, struct http_sink *s, int *retry_after)
{
	const void *payload = s->body.data;
	size_t plen = s->body.len, i, o;
	enum send_result r;
	char ex[256];

	if (s->gz != NULL) {
		if (gzip_compress(s->gz, s->body.data, s->body.len, &s->zbody) == -1) {
			snprintf(ctx->error, sizeof(ctx->error), "gzip failed");
			return SEND_RETRY;
		}
		payload = s->zbody.data;
		plen = s->zbody.len;
	}
	if (hconn_post(&s->h, s->hdrs, payload, plen, ctx->error,
	    sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	r = transport_http_policy(s->h.status);
	if (r == SEND_OK)
		return r;
	for (i = o = 0; i < s->h.resp.len && o < 200; i++) {
		unsigned char ch = (unsigned char)s->h.resp.data[i];
		ex[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
	}
	ex[o] = '\0';
	if (r == SEND_RETRY)
		*retry_after = s->h.retry_after;
	snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld%s%s%s", s->h.status,
	    r == SEND_REJECT ? " (batch refused)" : "", o ? ": " : "", ex);
	return r;
}

static enum send_result
http_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct http_sink *s = ctx->priv;
	size_t i = 0, count, mark, tail = s->array ? 1 : 0;
	enum send_result r;

	*retry_after = 0;
	ctx->error[0] = '\0';
	if (b->n == 0)
		return SEND_OK;
	while (i < b->n) {
		buf_reset(&s->body);
		if (s->array && buf_putc(&s->body, '[') == -1)
			goto nomem;
		for (count = 0; i < b->n &&
		    (s->max_events == 0 || count < s->max_events); count++, i++) {
			mark = s->body.len;
			if (s->array && count > 0 && buf_putc(&s->body, ',') == -1)
				goto nomem;
			if (event_to_json(b->events[i], &s->body) == -1 ||
			    (!s->array && buf_putc(&s->body, '\n') == -1))
				goto nomem;
			if (s->body.len + tail <= s->max_bytes)
				continue;
			if (count == 0)
				break;	/* alone: send it anyway */
			s->body.len = mark;
			s->body.data[mark] = '\0';
			break;
		}
		if (count == 0) {	/* the oversized event, on its own */
			count = 1;
			i++;
		}
		if (s->array && buf_putc(&s->body, ']') == -1)
			goto nomem;
		r = post_one(ctx, s, retry_after);
		if (r != SEND_OK)
			return r;
	}
	return SEND_OK;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory encoding a batch");
	return SEND_RETRY;
}

static void
http_close(struct sink_ctx *ctx)
{
	http_free(ctx->priv);
	ctx->priv = NULL;
}

/* Configuration: where to, and how.  format, headers and compress are
 * one key each with syslog's or cfapi's row (the same choices and checks). */
#define O(f)	offsetof(struct http_opts, f)
static const struct cfg_key http_keys[] = {
	{ .name = "url", .type = KT_STR, .off = O(url),
	  .check = check_url, .flags = KF_SECRET_URL,
	  .doc = "http: the endpoint; empty: http(s)://hostname:port/" },
	{ .name = "format", .type = KT_ENUM, .off = O(format),
	  .choices = sink_format_choices, .def = "json_lines",
	  .doc = "http: json_lines or json_array (rfc* are syslog's)" },
	{ .name = "headers", .type = KT_KV, .off = O(headers),
	  .check = check_header_name, .vcheck = check_header_value,
	  .flags = KF_SECRET_KV, .doc = "http: extra request headers" },
	{ .name = "compress", .type = KT_ENUM, .off = O(compress),
	  .choices = sink_compress_choices, .def = "gzip",
	  .doc = "http: request body compression" },
};
#undef O

/* Somewhere to send: a URL, or a host name to make one of. */
static bool
http_has_target(const struct dest_conf *d)
{
	const struct http_opts *o = http_opts(d);

	return (d->hostname != NULL && d->hostname[0] != '\0') ||
	    (o != NULL && o->url != NULL && o->url[0] != '\0');
}

/* The format that fits, a target to send to. */
static void
http_finish(const struct cfg_finish *f)
{
	const struct kpos *fp = cfg_finish_pos(f, "format");
	const struct http_opts *o = http_opts(f->d);

	if (o != NULL && fp->ok && strncmp(o->format, "json", 4) != 0)
		cfg_error(f->c, fp->line, fp->col, "'format': '%s' does not "
		    "apply to proto http (json_lines or json_array)",
		    o->format);
	if (!f->primary && !http_has_target(f->d))
		cfg_error(f->c, f->line, f->col, "servers.%s: 'url' or "
		    "'hostname' is required for proto http", f->d->name);
}

const struct sink sink_http = {
	.name = "http",
	.proto = PROTO_HTTP,
	.open = http_open,
	.send = http_send,
	.close = http_close,
	.port = 80,
	.tls_port = 443,
	.keys = http_keys,
	.nkeys = sizeof(http_keys) / sizeof(http_keys[0]),
	.opts_size = sizeof(struct http_opts),
	.finish = http_finish,
	.has_target = http_has_target,
};

struct http_opts *
http_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_http);
}
