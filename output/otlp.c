/*
 * otlp: OpenTelemetry logs over OTLP/HTTP, JSON encoding.
 *
 * Sources: the OTLP specification, "OTLP/HTTP" and "JSON Protobuf
 * Encoding" (https://opentelemetry.io/docs/specs/otlp/#otlphttp):
 * POST an ExportLogsServiceRequest to the logs endpoint (default path
 * /v1/logs, which `url` names whole, as OTEL_EXPORTER_OTLP_LOGS_ENDPOINT
 * does), Content-Type application/json, field names in lowerCamelCase,
 * enum values as integers, 64-bit integers (fixed64 timeUnixNano, int64
 * intValue) as decimal strings (the proto3 JSON mapping); the message
 * layout from opentelemetry-proto's logs/v1/logs.proto (ResourceLogs >
 * ScopeLogs > LogRecord) and common/v1/common.proto (AnyValue, KeyValue).
 * Answers ("Failures", "Retryable Response Codes"): 200 with an optional
 * partialSuccess {rejectedLogRecords, errorMessage} that must not be
 * retried; 429, 502, 503 and 504 retryable, honouring Retry-After;
 * 400 Bad Request not retryable.
 *
 * Mapping (docs/outputs.md "otlp"): one ResourceLogs per host
 * (resource attributes host.name = the event's hostname, service.name =
 * esxwatch), one ScopeLogs (scope esxwatch, the agent's version); per
 * event timeUnixNano = observedTimeUnixNano = its timestamp (esxwatch
 * keeps no other observation time), severityNumber / severityText from
 * esxwatch_severity (otlp_severity_number()), body = the text, the other
 * fields as attributes: an integer written canonically (no sign but '-',
 * no leading zero, fits int64) as intValue, anything else stringValue.
 *
 * Status policy: 2xx delivered; 400 and 413 refuse the batch (the
 * shipper splits it until the poison event is alone); 429/502/503/504
 * and every other answer are retried (transport_http_policy(): 401, 403,
 * 404 describe the destination, not the events).  partialSuccess cannot
 * say which records were refused: their number is added to the
 * destination's not_ingested count and the server's message logged,
 * and the request is not resent (as the spec requires).
 *
 * encoding: protobuf needs a protobuf library this build does not link:
 * --check refuses it (otlp_finish()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "gzip.h"
#include "otlp.h"
#include "transport.h"

#ifndef ESXWATCH_VERSION
#define ESXWATCH_VERSION "dev"
#endif

struct otlp_sink {
	struct hconn		 h;
	struct trust		 trust;
	struct gzip		*gz;
	struct curl_slist	*hdrs;
	struct buf		 body;
	struct buf		 zbody;
	const struct batch	*cur;
};

/* esxwatch_severity -> OTLP SeverityNumber (logs data model, "Field:
 * SeverityNumber": 5 DEBUG, 9 INFO, 10 INFO2, 13 WARN, 17 ERROR, 21
 * FATAL); 0 (UNSPECIFIED) for an event without one. */
int
otlp_severity_number(const char *sev)
{
	static const struct { const char *name; int n; } map[] = {
		{ "debug", 5 }, { "info", 9 }, { "notice", 10 },
		{ "warning", 13 }, { "error", 17 }, { "critical", 21 },
	};

	if (sev == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(sev, map[i].name) == 0)
			return map[i].n;
	return 9;	/* an unknown word: INFO, its text kept in severityText */
}

/* A decimal integer written as int64 would print it back: intValue. */
bool
otlp_is_int(const char *s)
{
	const char *p = s;
	size_t n;

	if (*p == '-')
		p++;
	n = strlen(p);
	if (n == 0 || n > 19 || (p[0] == '0' && n > 1) ||
	    (p[0] == '0' && p != s))
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	if (n == 19 && strcmp(p, p == s ? "9223372036854775807" :
	    "9223372036854775808") > 0)
		return false;
	return true;
}

static int
put_kv_str(struct buf *b, const char *k, const char *v)
{
	if (buf_puts(b, "{\"key\":") == -1 ||
	    json_put_str(b, k, strlen(k)) == -1)
		return -1;
	if (otlp_is_int(v))
		return buf_printf(b, ",\"value\":{\"intValue\":\"%s\"}}", v);
	if (buf_puts(b, ",\"value\":{\"stringValue\":") == -1 ||
	    json_put_str(b, v, strlen(v)) == -1)
		return -1;
	return buf_puts(b, "}}");
}

/* One LogRecord. */
static int
put_record(struct buf *b, const struct event *ev)
{
	const char *sev = event_get(ev, "esxwatch_severity");
	int64_t ms = ev->timestamp_ms;
	bool first = true;

	/* a time before 1970 cannot be a fixed64: unknown (0 = absent),
	 * observed now (the logs data model's rule for a missing time) */
	if (ms < 0 && buf_printf(b, "{\"observedTimeUnixNano\":\"%lld000000\"",
	    (long long)now_ms()) == -1)
		return -1;
	if (ms >= 0 && buf_printf(b, "{\"timeUnixNano\":\"%lld000000\","
	    "\"observedTimeUnixNano\":\"%lld000000\"", (long long)ms,
	    (long long)ms) == -1)
		return -1;
	if (sev != NULL && (buf_printf(b, ",\"severityNumber\":%d,"
	    "\"severityText\":", otlp_severity_number(sev)) == -1 ||
	    json_put_str(b, sev, strlen(sev)) == -1))
		return -1;
	if (buf_puts(b, ",\"body\":{\"stringValue\":") == -1 ||
	    json_put_str(b, ev->text, strlen(ev->text)) == -1 ||
	    buf_puts(b, "},\"attributes\":[") == -1)
		return -1;
	for (size_t i = 0; i < ev->nfields; i++) {
		const struct field *f = &ev->fields[i];

		if (strcmp(f->name, "hostname") == 0 ||
		    strcmp(f->name, "esxwatch_severity") == 0)
			continue;
		if ((!first && buf_putc(b, ',') == -1) ||
		    put_kv_str(b, f->name, f->value) == -1)
			return -1;
		first = false;
	}
	return buf_puts(b, "]}");
}

static const char *
host_of(const struct event *ev)
{
	const char *h = event_get(ev, "hostname");

	return h != NULL ? h : "";
}

/* A batch's event with its host looked up once, for sorting. */
struct hkey {
	const char	*host;
	size_t		 i;
};

static int
by_host(const void *a, const void *b)
{
	const struct hkey *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c != 0)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int
put_resource(struct buf *b, const char *host)
{
	if (buf_puts(b, "{\"resource\":{\"attributes\":[") == -1)
		return -1;
	if (host[0] != '\0' && (put_kv_str(b, "host.name", host) == -1 ||
	    buf_putc(b, ',') == -1))
		return -1;
	return buf_puts(b, "{\"key\":\"service.name\",\"value\":"
	    "{\"stringValue\":\"esxwatch\"}}]},\"scopeLogs\":[{\"scope\":"
	    "{\"name\":\"esxwatch\",\"version\":\"" ESXWATCH_VERSION "\"},"
	    "\"logRecords\":[");
}

/* The ExportLogsServiceRequest of b: one ResourceLogs per host, records
 * in batch order within it. */
int
otlp_encode(const struct batch *bt, struct buf *b)
{
	struct hkey *keys = bt->n ? calloc(bt->n, sizeof(*keys)) : NULL;
	const char *host = NULL;
	int rc = -1;

	if (bt->n > 0 && keys == NULL)
		return -1;
	for (size_t i = 0; i < bt->n; i++) {
		keys[i].host = host_of(bt->events[i]);
		keys[i].i = i;
	}
	qsort(keys, bt->n, sizeof(keys[0]), by_host);
	if (buf_puts(b, "{\"resourceLogs\":[") == -1)
		goto out;
	for (size_t k = 0; k < bt->n; k++) {
		const char *h = keys[k].host;
		bool same = host != NULL && strcmp(h, host) == 0;

		if (host != NULL && (buf_puts(b, same ? "," : "]}]},") == -1))
			goto out;
		if (!same && put_resource(b, h) == -1)
			goto out;
		host = h;
		if (put_record(b, bt->events[keys[k].i]) == -1)
			goto out;
	}
	if (host != NULL && buf_puts(b, "]}]}") == -1)
		goto out;
	rc = buf_puts(b, "]}");
out:
	free(keys);
	return rc;
}

static void
otlp_free(struct otlp_sink *s)
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

static const struct otlp_opts *
conf_opts(const struct dest_conf *d)
{
	static const struct otlp_opts none;
	const struct otlp_opts *o = otlp_opts(d);

	return o != NULL ? o : &none;
}

static int
otlp_open(struct sink_ctx *ctx)
{
	const struct otlp_opts *o = conf_opts(ctx->conf);
	struct otlp_sink *s;
	struct buf url = BUF_INIT;
	char redacted[1024];

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	buf_init(&s->body, 64u * 1024 * 1024);
	buf_init(&s->zbody, 64u * 1024 * 1024);
	if (o->encoding != NULL && strcmp(o->encoding, "json") != 0) {
		snprintf(ctx->error, sizeof(ctx->error), "otlp: encoding %s "
		    "is not built in: this build speaks json", o->encoding);
		goto err;
	}
	if (transport_target_url(ctx->conf, o->url, "/v1/logs", &url) == -1)
		goto nomem;
	if (hconn_open_sink(&s->h, &s->trust, ctx, url.data) == -1)
		goto err;
	s->hdrs = transport_body_headers("application/json", o->compress,
	    &o->headers, &s->gz);
	if (s->hdrs == NULL)
		goto nomem;
	transport_redact_url(url.data, redacted, sizeof(redacted));
	log_info("%s: otlp logs (json%s) to %s", ctx->name,
	    s->gz ? ", gzip" : "", redacted);
	buf_free(&url);
	ctx->priv = s;
	return 0;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
err:
	buf_free(&url);
	otlp_free(s);
	return -1;
}

/* 200: partialSuccess.rejectedLogRecords counted as not ingested. */
static void
read_partial(struct sink_ctx *ctx, struct otlp_sink *s)
{
	struct json_doc doc;
	char err[64], msg[256] = "";
	long long n = 0;
	int at;

	if (s->h.resp.len == 0 || json_parse(s->h.resp.data, s->h.resp.len,
	    &doc, err, sizeof(err)) == -1)
		return;
	at = json_get(&doc, 0, "partialSuccess.rejectedLogRecords");
	if (at >= 0 && json_num(&doc, at, &n) && n > 0) {
		if ((size_t)n > s->cur->n)
			n = (long long)s->cur->n;
		at = json_get(&doc, 0, "partialSuccess.errorMessage");
		if (at >= 0)
			(void)json_str(&doc, at, msg, sizeof(msg));
		__atomic_add_fetch(&ctx->not_ingested, (uint64_t)n,
		    __ATOMIC_RELAXED);
		log_limited(LOG_WARN, "otlp:partial", 60, "%s: the collector "
		    "rejected %lld of %zu log records (partialSuccess%s%s); "
		    "counted as not ingested, not resent", ctx->name, n,
		    s->cur->n, msg[0] ? ": " : "", msg);
	}
	json_free(&doc);
}

static enum send_result
otlp_policy(long status)
{
	if (status == 400 || status == 413)
		return SEND_REJECT;
	return transport_http_policy(status);
}

static enum send_result
otlp_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct otlp_sink *s = ctx->priv;
	const void *payload;
	size_t plen, i, o;
	enum send_result r;
	char ex[200];

	*retry_after = 0;
	ctx->error[0] = '\0';
	if (b->n == 0)
		return SEND_OK;
	buf_reset(&s->body);
	if (otlp_encode(b, &s->body) == -1)
		goto nomem;
	payload = s->body.data;
	plen = s->body.len;
	if (s->gz != NULL) {
		if (gzip_compress(s->gz, s->body.data, s->body.len,
		    &s->zbody) == -1)
			goto nomem;
		payload = s->zbody.data;
		plen = s->zbody.len;
	}
	if (hconn_post(&s->h, s->hdrs, payload, plen, ctx->error,
	    sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	s->cur = b;
	r = otlp_policy(s->h.status);
	if (r == SEND_OK) {
		read_partial(ctx, s);
		return SEND_OK;
	}
	for (i = o = 0; i < s->h.resp.len && o < sizeof(ex) - 1; i++) {
		unsigned char ch = (unsigned char)s->h.resp.data[i];
		ex[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
	}
	ex[o] = '\0';
	if (r == SEND_RETRY)
		*retry_after = s->h.retry_after;
	snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld%s%s%s",
	    s->h.status, r == SEND_REJECT ? " (records refused)" : "",
	    o ? ": " : "", ex);
	return r;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory encoding a batch");
	return SEND_RETRY;
}

static void
otlp_close(struct sink_ctx *ctx)
{
	otlp_free(ctx->priv);
	ctx->priv = NULL;
}

static const char *const encoding_choices[] = { "json", "protobuf", NULL };

/* url, headers and compress: one key each with http's rows. */
#define O(f)	offsetof(struct otlp_opts, f)
static const struct cfg_key otlp_keys[] = {
	{ .name = "url", .type = KT_STR, .off = O(url),
	  .check = check_url, .flags = KF_SECRET_URL,
	  .doc = "otlp: the full logs endpoint (http://otel:4318/v1/logs)" },
	{ .name = "encoding", .type = KT_ENUM, .off = O(encoding),
	  .choices = encoding_choices, .def = "json",
	  .doc = "otlp: json (protobuf is refused: not built in)" },
	{ .name = "headers", .type = KT_KV, .off = O(headers),
	  .check = check_header_name, .vcheck = check_header_value,
	  .flags = KF_SECRET_KV, .doc = "otlp: extra request headers" },
	{ .name = "compress", .type = KT_ENUM, .off = O(compress),
	  .choices = sink_compress_choices, .def = "gzip",
	  .doc = "otlp: request body compression" },
};
#undef O

static bool
otlp_has_target(const struct dest_conf *d)
{
	const struct otlp_opts *o = otlp_opts(d);

	return (d->hostname != NULL && d->hostname[0] != '\0') ||
	    (o != NULL && o->url != NULL && o->url[0] != '\0');
}

/* protobuf refused with the reason; a target to send to. */
static void
otlp_finish(const struct cfg_finish *f)
{
	const struct kpos *ep = cfg_finish_pos(f, "encoding");
	const struct otlp_opts *o = otlp_opts(f->d);

	if (o != NULL && o->encoding != NULL &&
	    strcmp(o->encoding, "protobuf") == 0)
		cfg_error(f->c, ep->ok ? ep->line : f->line,
		    ep->ok ? ep->col : f->col, "'encoding': protobuf needs a "
		    "protobuf library this build does not have; json is what "
		    "this build speaks (every OTLP/HTTP receiver takes it)");
	if (!f->primary && !otlp_has_target(f->d))
		cfg_error(f->c, f->line, f->col, "servers.%s: 'url' is "
		    "required for proto otlp (http://otel:4318/v1/logs)",
		    f->d->name);
}

const struct sink sink_otlp = {
	.name = "otlp",
	.proto = PROTO_OTLP,
	.open = otlp_open,
	.send = otlp_send,
	.close = otlp_close,
	.port = 4318,
	.tls_port = 4318,
	.encoded_pct = 200,
	.keys = otlp_keys,
	.nkeys = sizeof(otlp_keys) / sizeof(otlp_keys[0]),
	.opts_size = sizeof(struct otlp_opts),
	.finish = otlp_finish,
	.has_target = otlp_has_target,
};

struct otlp_opts *
otlp_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_otlp);
}
