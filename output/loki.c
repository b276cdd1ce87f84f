/*
 * loki: Grafana Loki's push API, JSON body.
 *
 * Source: Loki HTTP API, "Ingest logs" (POST /loki/api/v1/push,
 * https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs):
 * Content-Type application/json, optionally Content-Encoding gzip, a body
 * {"streams":[{"stream":{LABELS},"values":[["<unix ns as a string>",
 * "<line>", {STRUCTURED METADATA}]]}]}, 204 No Content on success; the
 * third element of a value is structured metadata (Loki 2.9 and later,
 * "Structured metadata", https://grafana.com/docs/loki/latest/get-started/labels/structured-metadata/;
 * refused unless the tenant's limits_config has allow_structured_metadata,
 * the default from Loki 3.0).  X-Scope-OrgID names the tenant when Loki
 * runs with auth_enabled (multi-tenancy); `url` is the full endpoint as
 * promtail's clients.url takes it.
 *
 * Streams are labelled by hostname, appname, esxwatch_collector and
 * esxwatch_severity only (those the event has): Loki's label best
 * practices keep labels few and bounded, so the streams are at most hosts
 * x programs x collectors x severities.  The line is the text; every other
 * field is structured metadata (or, with structured_metadata: no, the line
 * is the event's flat JSON, docs/events.md, for LogQL's `| json`).  The
 * entries of a stream are in time order within a push.
 *
 * Answers: 2xx delivered; 429 and 5xx retried (Retry-After honoured);
 * 400 refuses the push: Loki's "entry out of order" / "entry too far
 * behind" (older than the newest entry of the stream minus max_chunk_age/2,
 * "Accept out-of-order writes") are explained in the log, and the push is
 * refused to the shipper, which splits it until the refused entries are
 * alone and drops those (counted as dropped_poison).  Loki stores the
 * other entries of a push it answers 400 and drops an entry it already
 * has with the same timestamp and line, so the halves resent do not
 * duplicate what it took.  401/403/404 describe the destination: retried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "gzip.h"
#include "lisession.h"
#include "loki.h"
#include "transport.h"

/* The labels, in this order (docs/outputs.md "loki"). */
static const char *const label_names[] = {
	"hostname", "appname", "esxwatch_collector", "esxwatch_severity"
};
#define NLABELS	(sizeof(label_names) / sizeof(label_names[0]))

struct loki_sink {
	struct hconn		 h;
	struct trust		 trust;
	struct gzip		*gz;
	struct curl_slist	*hdrs;
	struct buf		 body;
	struct buf		 zbody;
	bool			 metadata;	/* structured metadata, else JSON lines */
};

bool
loki_is_label(const char *name)
{
	for (size_t i = 0; i < NLABELS; i++)
		if (strcmp(name, label_names[i]) == 0)
			return true;
	return false;
}

/* A batch's event with its labels looked up once, for sorting. */
struct lkey {
	const char	*lab[NLABELS];
	int64_t		 ts;
	size_t		 i;
	unsigned	 ns_off;	/* below the millisecond, put_value() */
};

/* By label set, then time, then position: streams with ordered entries. */
static int
by_stream(const void *a, const void *b)
{
	const struct lkey *x = a, *y = b;
	int c;

	for (size_t k = 0; k < NLABELS; k++) {
		c = strcmp(x->lab[k], y->lab[k]);
		if (c != 0)
			return c;
	}
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ns_off != y->ns_off)
		return x->ns_off < y->ns_off ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static bool
same_stream(const struct lkey *x, const struct lkey *y)
{
	for (size_t k = 0; k < NLABELS; k++)
		if (strcmp(x->lab[k], y->lab[k]) != 0)
			return false;
	return true;
}

static int
put_stream(struct buf *b, const struct event *ev)
{
	bool first = true;

	if (buf_puts(b, "{\"stream\":{") == -1)
		return -1;
	for (size_t k = 0; k < NLABELS; k++) {
		const char *v = event_get(ev, label_names[k]);

		if (v == NULL || v[0] == '\0')
			continue;
		if (buf_printf(b, "%s\"%s\":", first ? "" : ",",
		    label_names[k]) == -1 || json_put_str(b, v, strlen(v)) == -1)
			return -1;
		first = false;
	}
	if (first && buf_puts(b, "\"appname\":\"esxwatch\"") == -1)
		return -1;	/* Loki refuses a stream without labels */
	return buf_puts(b, "},\"values\":[");
}

/*
 * One value: [ "ns", "line", {metadata} ].  ns is the millisecond and,
 * below it, the event's queue record number modulo 10^6 (ns_off): Loki
 * keeps one entry per stream, timestamp and line, so two equal lines of
 * one millisecond need distinct nanoseconds, and a resent event the same
 * ones (its record number does not change) to be dropped as the duplicate
 * it is.
 */
static int
put_value(struct buf *b, const struct event *ev, unsigned ns_off,
    bool metadata)
{
	bool first = true;

	/* a time before 1970 goes as 0: Loki refuses it (too old), and the
	 * shipper drops and counts it */
	if (buf_printf(b, "[\"%lld%06u\",", ev->timestamp_ms < 0 ? 0LL :
	    (long long)ev->timestamp_ms, ns_off) == -1)
		return -1;
	if (!metadata) {
		struct buf j = BUF_INIT;
		int rc = event_to_json(ev, &j) == -1 ? -1 :
		    json_put_str(b, j.data, j.len);

		buf_free(&j);
		return rc == -1 ? -1 : buf_putc(b, ']');
	}
	if (json_put_str(b, ev->text, strlen(ev->text)) == -1 ||
	    buf_puts(b, ",{") == -1)
		return -1;
	for (size_t i = 0; i < ev->nfields; i++) {
		const struct field *f = &ev->fields[i];

		if (loki_is_label(f->name))
			continue;
		if ((!first && buf_putc(b, ',') == -1) ||
		    json_put_str(b, f->name, strlen(f->name)) == -1 ||
		    buf_putc(b, ':') == -1 ||
		    json_put_str(b, f->value, strlen(f->value)) == -1)
			return -1;
		first = false;
	}
	return buf_puts(b, "}]");
}

int
loki_encode(const struct batch *bt, bool metadata, struct buf *b)
{
	struct lkey *keys = bt->n ? calloc(bt->n, sizeof(*keys)) : NULL;
	const struct lkey *prev = NULL;
	int rc = -1;

	if (bt->n > 0 && keys == NULL)
		return -1;
	for (size_t i = 0; i < bt->n; i++) {
		for (size_t k = 0; k < NLABELS; k++) {
			const char *v = event_get(bt->events[i], label_names[k]);

			keys[i].lab[k] = v != NULL ? v : "";
		}
		keys[i].ts = bt->events[i]->timestamp_ms;
		/* 0 when the queue cannot say which records these are */
		keys[i].ns_off = bt->src != 0 ?
		    (unsigned)((bt->seq0 + i) % 1000000) : 0;
		keys[i].i = i;
	}
	qsort(keys, bt->n, sizeof(keys[0]), by_stream);
	if (buf_puts(b, "{\"streams\":[") == -1)
		goto out;
	for (size_t k = 0; k < bt->n; k++) {
		const struct event *ev = bt->events[keys[k].i];
		bool same = prev != NULL && same_stream(prev, &keys[k]);

		if (prev != NULL && buf_puts(b, same ? "," : "]},") == -1)
			goto out;
		if (!same && put_stream(b, ev) == -1)
			goto out;
		if (put_value(b, ev, keys[k].ns_off, metadata) == -1)
			goto out;
		prev = &keys[k];
	}
	if (prev != NULL && buf_puts(b, "]}") == -1)
		goto out;
	rc = buf_puts(b, "]}");
out:
	free(keys);
	return rc;
}

static void
loki_free(struct loki_sink *s)
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

static const struct loki_opts *
conf_opts(const struct dest_conf *d)
{
	static const struct loki_opts none;
	const struct loki_opts *o = loki_opts(d);

	return o != NULL ? o : &none;
}

/* The JSON headers and, for a multi-tenant Loki, X-Scope-OrgID. */
static int
make_headers(struct loki_sink *s, const struct loki_opts *o)
{
	struct buf h = BUF_INIT;
	int rc = 0;

	s->hdrs = transport_body_headers("application/json", o->compress,
	    &o->headers, &s->gz);
	if (s->hdrs == NULL)
		return -1;
	if (o->tenant != NULL && o->tenant[0] != '\0' &&
	    (buf_printf(&h, "X-Scope-OrgID: %s", o->tenant) == -1 ||
	    curl_slist_append(s->hdrs, h.data) == NULL))
		rc = -1;
	buf_free(&h);
	return rc;
}

/* Basic auth when username is set: the password never leaves libcurl. */
static int
basic_auth(struct sink_ctx *ctx, struct loki_sink *s)
{
	const struct dest_conf *d = ctx->conf;
	char pw[512], why[256];

	if (d->username == NULL || d->username[0] == '\0')
		return 0;
	if (dest_password(d, pw, sizeof(pw), why, sizeof(why)) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "loki basic auth: %s",
		    why);
		return -1;
	}
	curl_easy_setopt(s->h.curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	curl_easy_setopt(s->h.curl, CURLOPT_USERNAME, d->username);
	curl_easy_setopt(s->h.curl, CURLOPT_PASSWORD, pw);
	explicit_bzero(pw, sizeof(pw));
	return 0;
}

static int
loki_open(struct sink_ctx *ctx)
{
	const struct loki_opts *o = conf_opts(ctx->conf);
	struct loki_sink *s;
	struct buf url = BUF_INIT;
	char redacted[1024];

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	buf_init(&s->body, 64u * 1024 * 1024);
	buf_init(&s->zbody, 64u * 1024 * 1024);
	s->metadata = o->structured_metadata || o == conf_opts(NULL);
	if (transport_target_url(ctx->conf, o->url, "/loki/api/v1/push",
	    &url) == -1)
		goto nomem;
	if (hconn_open_sink(&s->h, &s->trust, ctx, url.data) == -1 ||
	    basic_auth(ctx, s) == -1)
		goto err;
	if (make_headers(s, o) == -1)
		goto nomem;
	transport_redact_url(url.data, redacted, sizeof(redacted));
	log_info("%s: loki push to %s%s%s%s", ctx->name, redacted,
	    s->gz ? " (gzip)" : "", s->metadata ? ", fields as structured "
	    "metadata" : ", lines as JSON", o->tenant && o->tenant[0] ?
	    ", tenant set" : "");
	buf_free(&url);
	ctx->priv = s;
	return 0;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
err:
	buf_free(&url);
	loki_free(s);
	return -1;
}

/* Why Loki refused a push, in words an admin can act on. */
static void
explain_400(struct sink_ctx *ctx, struct loki_sink *s, const char *ex)
{
	(void)s;
	if (strstr(ex, "too far behind") != NULL ||
	    strstr(ex, "out of order") != NULL)
		log_limited(LOG_WARN, "loki:order", 60, "%s: Loki refused "
		    "entries older than it accepts for their stream (out of "
		    "order, or older than the newest entry minus "
		    "max_chunk_age/2): the other entries are stored; the "
		    "refused ones are isolated and dropped (dropped_poison). "
		    "A long outage of Loki makes old entries too far behind: "
		    "see docs/outputs.md \"loki\"", ctx->name);
	else if (strstr(ex, "structured metadata") != NULL)
		log_limited(LOG_WARN, "loki:sm", 60, "%s: Loki refuses "
		    "structured metadata: set limits_config."
		    "allow_structured_metadata: true (schema v13), or "
		    "structured_metadata: no here", ctx->name);
}

static enum send_result
answer(struct sink_ctx *ctx, struct loki_sink *s, int *retry_after)
{
	long st = s->h.status;
	enum send_result r;
	size_t i, o;
	char ex[300];

	r = st == 400 || st == 413 ? SEND_REJECT : transport_http_policy(st);
	if (r == SEND_OK)
		return r;
	for (i = o = 0; i < s->h.resp.len && o < sizeof(ex) - 1; i++) {
		unsigned char ch = (unsigned char)s->h.resp.data[i];
		ex[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
	}
	ex[o] = '\0';
	if (r == SEND_RETRY)
		*retry_after = s->h.retry_after;
	else
		explain_400(ctx, s, ex);
	snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld%s%s%s", st,
	    r == SEND_REJECT ? " (push refused)" : "", o ? ": " : "", ex);
	return r;
}

static enum send_result
loki_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct loki_sink *s = ctx->priv;
	const void *payload;
	size_t plen;

	*retry_after = 0;
	ctx->error[0] = '\0';
	if (b->n == 0)
		return SEND_OK;
	buf_reset(&s->body);
	if (loki_encode(b, s->metadata, &s->body) == -1)
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
	return answer(ctx, s, retry_after);
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory encoding a batch");
	return SEND_RETRY;
}

static void
loki_close(struct sink_ctx *ctx)
{
	loki_free(ctx->priv);
	ctx->priv = NULL;
}

/* url, headers and compress: one key each with http's rows. */
#define O(f)	offsetof(struct loki_opts, f)
static const struct cfg_key loki_keys[] = {
	{ .name = "url", .type = KT_STR, .off = O(url),
	  .check = check_url, .flags = KF_SECRET_URL,
	  .doc = "loki: the full push endpoint (http://loki:3100/loki/api/v1/push)" },
	{ .name = "tenant", .type = KT_STR, .off = O(tenant),
	  .check = check_header_value,
	  .doc = "loki: X-Scope-OrgID (multi-tenant Loki)" },
	{ .name = "structured_metadata", .type = KT_BOOL,
	  .off = O(structured_metadata), .def = "yes",
	  .doc = "loki: fields as structured metadata (no: the line is the "
	  "event's JSON)" },
	{ .name = "headers", .type = KT_KV, .off = O(headers),
	  .check = check_header_name, .vcheck = check_header_value,
	  .flags = KF_SECRET_KV, .doc = "loki: extra request headers" },
	{ .name = "compress", .type = KT_ENUM, .off = O(compress),
	  .choices = sink_compress_choices, .def = "gzip",
	  .doc = "loki: request body compression" },
};
#undef O

static bool
loki_has_target(const struct dest_conf *d)
{
	const struct loki_opts *o = loki_opts(d);

	return (d->hostname != NULL && d->hostname[0] != '\0') ||
	    (o != NULL && o->url != NULL && o->url[0] != '\0');
}

static void
loki_finish(const struct cfg_finish *f)
{
	if (!f->primary && !loki_has_target(f->d))
		cfg_error(f->c, f->line, f->col, "servers.%s: 'url' is "
		    "required for proto loki (http://loki:3100/loki/api/v1/push)",
		    f->d->name);
}

const struct sink sink_loki = {
	.name = "loki",
	.proto = PROTO_LOKI,
	.open = loki_open,
	.send = loki_send,
	.close = loki_close,
	.port = 3100,
	.tls_port = 3100,
	.encoded_pct = 110,
	.keys = loki_keys,
	.nkeys = sizeof(loki_keys) / sizeof(loki_keys[0]),
	.opts_size = sizeof(struct loki_opts),
	.finish = loki_finish,
	.has_target = loki_has_target,
};

struct loki_opts *
loki_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_loki);
}
