/*
 * elasticsearch: Elasticsearch's and OpenSearch's _bulk API (docs/
 * outputs.md "Elasticsearch / OpenSearch").  POST {url}/_bulk with NDJSON
 * `create` actions (Elastic, "Bulk API"; a data stream takes only
 * create), one document per event:
 *
 *   {"create":{"_index":"esxwatch","_id":"<run>-<src>-<seq>"}}
 *   {"@timestamp":"2026-12-07T05:00:01.037Z","message":"<text>",
 *    "host":{"name":"esx01"},"esxwatch_severity":"error",...}
 *
 * @timestamp, message and host.name are ECS's; every other field keeps its
 * esxwatch name as a keyword (a tag named host or message goes to
 * labels.NAME, ECS's place for custom keywords, so it cannot clash).
 * Authentication: "Authorization: ApiKey <encoded>" from api_key_file (the
 * `encoded` value of the create-API-key answer), or Basic with username
 * and password / password_file.  `pipeline` is the ingest pipeline
 * (?pipeline=), `index` the index or data stream (default esxwatch).
 *
 * The answer is read per item (sink.h, per_item): with
 * filter_path=errors,items.*.status,items.*.error.type,items.*.error.reason
 * it stays small.  201 created: delivered; 409 on create: the document
 * exists already (below), delivered; 429 and 5xx: that item again
 * (SINK_ITEM_RETRY), never the ones delivered; 400 (mapper_parsing_
 * exception, document_parsing_exception...): refused for good, that item
 * only (dead_letter, dropped_poison); another 4xx (403 security, 404 no
 * such index with auto-creation off): the destination's state, retried.
 *
 * _id: an event of a run of the queue's records (batch.src) gets
 * "<run>-<src>-<seq>", run a random number drawn when the sink opens, so a
 * resend in this process of a batch the cluster already took (its answer
 * lost in a timeout) finds the documents there (409) instead of indexing
 * them twice; an answer that cannot be read is then answered by resending
 * the whole batch, safely.  Events of a filtered batch (no record
 * numbers) and of an earlier run get automatic ids: at least once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../agent/lib/fs.h"
#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "elasticsearch.h"
#include "secretfile.h"
#include "transport.h"

#define ES_FILTER	"filter_path=errors,items.*.status,items.*.error.type," \
			"items.*.error.reason"
#define ES_SECRET_MAX	1024

struct es {
	struct hconn		 h;
	struct trust		 trust;
	struct curl_slist	*hdrs;
	struct buf		 body;
	const char		*index;
	unsigned long long	 run;		/* this open's part of _id */
	size_t			*sent;		/* batch index of each action */
	size_t			 sent_cap;
};

static const struct es_opts *
conf_opts(const struct dest_conf *d)
{
	static const struct es_opts none;
	const struct es_opts *o = es_opts(d);

	return o != NULL ? o : &none;
}

static void
es_free(struct es *s)
{
	if (s == NULL)
		return;
	hconn_close(&s->h);
	curl_slist_free_all(s->hdrs);
	buf_free(&s->body);
	free(s->sent);
	free(s);
}

static unsigned long long
random_run(void)
{
	unsigned long long r = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd != -1) {
		if (fs_read_upto(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
			r = 0;
		close(fd);
	}
	if (r == 0)
		r = (unsigned long long)time(NULL) ^
		    ((unsigned long long)getpid() << 32);
	return r;
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
base64(const char *in, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16 |
		    (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = b64[v >> 6 & 63];
		out[o++] = b64[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned char)in[i] << 16 |
		    (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0);
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
}

/* The Authorization header line into line (ApiKey, Basic, or none). */
static int
auth_line(struct sink_ctx *ctx, char *line, size_t len)
{
	const struct es_opts *o = conf_opts(ctx->conf);
	const struct dest_conf *d = ctx->conf;
	char secret[ES_SECRET_MAX], pair[2 * ES_SECRET_MAX + 2];
	char enc[sizeof(pair) / 3 * 4 + 8];

	line[0] = '\0';
	if (o->api_key_file != NULL && o->api_key_file[0] != '\0') {
		if (secret_file_read("api_key_file", o->api_key_file, secret,
		    sizeof(secret), ctx->error, sizeof(ctx->error)) == -1)
			return -1;
		snprintf(line, len, "Authorization: ApiKey %s", secret);
		explicit_bzero(secret, sizeof(secret));
		return 0;
	}
	if (d->username == NULL || d->username[0] == '\0')
		return 0;
	if (d->password != NULL && d->password[0] != '\0')
		snprintf(secret, sizeof(secret), "%s", d->password);
	else if (secret_file_read("password_file", d->password_file, secret,
	    sizeof(secret), ctx->error, sizeof(ctx->error)) == -1)
		return -1;
	snprintf(pair, sizeof(pair), "%s:%s", d->username, secret);
	base64(pair, strlen(pair), enc);
	snprintf(line, len, "Authorization: Basic %s", enc);
	explicit_bzero(secret, sizeof(secret));
	explicit_bzero(pair, sizeof(pair));
	explicit_bzero(enc, sizeof(enc));
	return 0;
}

/* {url}/_bulk?filter_path=...[&pipeline=...] */
static int
bulk_url(const struct es_opts *o, struct buf *url)
{
	if (buf_puts(url, o->url) == -1)
		return -1;
	while (url->len > 0 && url->data[url->len - 1] == '/')
		url->data[--url->len] = '\0';
	if (buf_puts(url, "/_bulk?" ES_FILTER) == -1)
		return -1;
	if (o->pipeline == NULL || o->pipeline[0] == '\0')
		return 0;
	if (buf_puts(url, "&pipeline=") == -1)
		return -1;
	for (const unsigned char *p = (const unsigned char *)o->pipeline; *p; p++)
		if ((strchr("-_.~", *p) || (*p >= '0' && *p <= '9') ||
		    ((*p | 32) >= 'a' && (*p | 32) <= 'z')) ?
		    buf_putc(url, (char)*p) : buf_printf(url, "%%%02X", *p))
			return -1;
	return 0;
}

static int
es_open(struct sink_ctx *ctx)
{
	const struct es_opts *o = conf_opts(ctx->conf);
	struct es *s = calloc(1, sizeof(*s));
	struct buf url = BUF_INIT;
	char line[4 * ES_SECRET_MAX], redacted[1024];
	struct gzip *gz;	/* (none: _bulk bodies go as they are) */

	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	buf_init(&s->body, 64u * 1024 * 1024);
	s->index = o->index != NULL && o->index[0] ? o->index : "esxwatch";
	s->run = random_run();
	if (o->url == NULL || o->url[0] == '\0') {
		snprintf(ctx->error, sizeof(ctx->error), "url is not set");
		goto err;
	}
	if (bulk_url(o, &url) == -1)
		goto nomem;
	if (auth_line(ctx, line, sizeof(line)) == -1)
		goto err;
	s->hdrs = transport_body_headers("application/x-ndjson", "none", NULL,
	    &gz);
	if (s->hdrs == NULL ||
	    (line[0] && curl_slist_append(s->hdrs, line) == NULL)) {
		explicit_bzero(line, sizeof(line));
		goto nomem;
	}
	explicit_bzero(line, sizeof(line));
	if (hconn_open_sink(&s->h, &s->trust, ctx, url.data) == -1)
		goto err;
	transport_redact_url(url.data, redacted, sizeof(redacted));
	log_info("%s: elasticsearch _bulk to %s (index %s%s)", ctx->name,
	    redacted, s->index, o->api_key_file && o->api_key_file[0] ?
	    ", ApiKey" : ctx->conf->username && ctx->conf->username[0] ?
	    ", Basic" : "");
	buf_free(&url);
	ctx->priv = s;
	return 0;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
err:
	buf_free(&url);
	es_free(s);
	return -1;
}

static int
put_iso(struct buf *b, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char s[32];

	if (ms < 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return buf_puts(b, "\"1970-01-01T00:00:00.000Z\"");
	return buf_printf(b, "\"%s.%03dZ\"", s, (int)(ms % 1000));
}

/* ,"name": (a name valid by construction: nothing to escape) */
static int
put_name(struct buf *b, const char *name, bool comma)
{
	size_t n = strlen(name);

	if (buf_reserve(b, n + 4) == -1)
		return -1;
	if (comma)
		b->data[b->len++] = ',';
	b->data[b->len++] = '"';
	memcpy(b->data + b->len, name, n);
	b->len += n;
	b->data[b->len++] = '"';
	b->data[b->len++] = ':';
	b->data[b->len] = '\0';
	return 0;
}

/* One document, appended to b (no newline). */
int
es_encode_doc(const struct event *ev, struct buf *b)
{
	const char *host = event_get(ev, "hostname");
	size_t nlabels = 0;

	if (buf_puts(b, "{\"@timestamp\":") == -1 ||
	    put_iso(b, ev->timestamp_ms) == -1 ||
	    buf_puts(b, ",\"message\":") == -1 ||
	    json_put_str(b, ev->text, strlen(ev->text)) == -1)
		return -1;
	if (host != NULL && (buf_puts(b, ",\"host\":{\"name\":") == -1 ||
	    json_put_str(b, host, strlen(host)) == -1 || buf_putc(b, '}') == -1))
		return -1;
	for (size_t i = 0; i < ev->nfields; i++) {
		const struct field *f = &ev->fields[i];

		if (strcmp(f->name, "hostname") == 0)
			continue;	/* host.name */
		if (strcmp(f->name, "host") == 0 ||
		    strcmp(f->name, "message") == 0 ||
		    strcmp(f->name, "labels") == 0) {
			nlabels++;
			continue;
		}
		if (put_name(b, f->name, true) == -1 ||
		    json_put_str(b, f->value, strlen(f->value)) == -1)
			return -1;
	}
	if (nlabels > 0) {
		bool first = true;

		if (buf_puts(b, ",\"labels\":{") == -1)
			return -1;
		for (size_t i = 0; i < ev->nfields; i++) {
			const struct field *f = &ev->fields[i];

			if (strcmp(f->name, "host") != 0 &&
			    strcmp(f->name, "message") != 0 &&
			    strcmp(f->name, "labels") != 0)
				continue;
			if (buf_printf(b, "%s\"%s\":", first ? "" : ",",
			    f->name) == -1 ||
			    json_put_str(b, f->value, strlen(f->value)) == -1)
				return -1;
			first = false;
		}
		if (buf_putc(b, '}') == -1)
			return -1;
	}
	return buf_putc(b, '}');
}

/* The action line of event i of b. */
static int
put_action(struct es *s, const struct batch *b, size_t i)
{
	if (buf_puts(&s->body, "{\"create\":{\"_index\":") == -1 ||
	    json_put_str(&s->body, s->index, strlen(s->index)) == -1)
		return -1;
	if (b->src != 0 && buf_printf(&s->body, ",\"_id\":\"%016llx-%llx-%llx\"",
	    s->run, (unsigned long long)b->src,
	    (unsigned long long)(b->seq0 + i)) == -1)
		return -1;
	return buf_puts(&s->body, "}}\n");
}

/* The body of b's events not settled yet; their batch indexes in s->sent. */
static int
encode(struct sink_ctx *ctx, struct es *s, const struct batch *b, size_t *n)
{
	*n = 0;
	if (b->n > s->sent_cap) {
		size_t *p = realloc(s->sent, b->n * sizeof(*p));

		if (p == NULL)
			return -1;
		s->sent = p;
		s->sent_cap = b->n;
	}
	buf_reset(&s->body);
	for (size_t i = 0; i < b->n; i++) {
		if (ctx->item != NULL && ctx->item[i] != SINK_ITEM_PENDING)
			continue;
		if (put_action(s, b, i) == -1 ||
		    es_encode_doc(b->events[i], &s->body) == -1 ||
		    buf_putc(&s->body, '\n') == -1)
			return -1;
		s->sent[(*n)++] = i;
	}
	return 0;
}

/* What one item's status means. */
static unsigned char
item_mark(long long status)
{
	if ((status >= 200 && status < 300) || status == 409)
		return SINK_ITEM_OK;
	if (status == 400)
		return SINK_ITEM_REJECT;
	return SINK_ITEM_RETRY;	/* 429, 5xx; 403, 404: the destination's */
}

/* The first item error's text, for the destination's status. */
static void
note_item(struct sink_ctx *ctx, long long status, const char *type,
    const char *reason, size_t *nretry)
{
	if ((*nretry)++ == 0)
		snprintf(ctx->error, sizeof(ctx->error), "item status %lld: %s: %s",
		    status, type, reason);
}

/*
 * Read the per-item answer into ctx->item (the n items sent).  SEND_OK,
 * SEND_PARTIAL, or SEND_RETRY when it cannot be read.
 */
static enum send_result
read_items(struct sink_ctx *ctx, struct es *s, size_t n)
{
	struct json_doc doc;
	char err[64], type[96], reason[256];
	int items, it;
	bool errors = true, partial = false;
	size_t k = 0, nretry = 0;

	if (json_parse(s->h.resp.data, s->h.resp.len, &doc, err,
	    sizeof(err)) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "_bulk answer not "
		    "readable (%s%s): the batch is sent again", err,
		    s->h.resp.len >= TRANSPORT_MAX_RESPONSE ? ", over 64 KB" : "");
		return SEND_RETRY;
	}
	it = json_get(&doc, 0, "errors");
	if (it >= 0)
		(void)json_bool(&doc, it, &errors);
	items = json_get(&doc, 0, "items");
	if (!errors) {
		json_free(&doc);
		return SEND_OK;
	}
	for (it = items >= 0 ? doc.n[items].child : -1; it >= 0 && k < n;
	    it = doc.n[it].next, k++) {
		int op = doc.n[it].child;	/* {"create":{...}} */
		int st = op >= 0 ? json_get(&doc, op, "status") : -1;
		long long status = 0;
		size_t i = s->sent[k];

		if (st < 0 || !json_num(&doc, st, &status))
			status = 0;
		ctx->item[i] = item_mark(status);
		if (ctx->item[i] == SINK_ITEM_OK)
			continue;
		partial = true;
		type[0] = reason[0] = '\0';
		st = json_get(&doc, op, "error.type");
		if (st >= 0)
			(void)json_str(&doc, st, type, sizeof(type));
		st = json_get(&doc, op, "error.reason");
		if (st >= 0)
			(void)json_str(&doc, st, reason, sizeof(reason));
		if (ctx->item[i] == SINK_ITEM_REJECT)
			snprintf(ctx->item_why[i], SINK_ITEM_WHY, "status %lld: "
			    "%.60s: %.120s", status, type, reason);
		else
			note_item(ctx, status, type, reason, &nretry);
	}
	json_free(&doc);
	/* items the answer did not name stay pending: sent again */
	if (k < n)
		partial = true;
	return partial ? SEND_PARTIAL : SEND_OK;
}

static enum send_result
es_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct es *s = ctx->priv;
	enum send_result r;
	size_t n;
	char ex[200];

	*retry_after = 0;
	ctx->error[0] = '\0';
	if (encode(ctx, s, b, &n) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory encoding a batch");
		return SEND_RETRY;
	}
	if (n == 0)
		return SEND_OK;
	if (hconn_post(&s->h, s->hdrs, s->body.data, s->body.len, ctx->error,
	    sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	if (s->h.status >= 200 && s->h.status < 300) {
		if (ctx->item == NULL)	/* a caller that cannot take items */
			return SEND_OK;
		for (size_t k = 0; k < n; k++)
			ctx->item[s->sent[k]] = SINK_ITEM_PENDING;
		r = read_items(ctx, s, n);
		if (r == SEND_PARTIAL)
			*retry_after = s->h.retry_after;
		return r;
	}
	r = transport_http_policy(s->h.status);
	if (r == SEND_RETRY)
		*retry_after = s->h.retry_after;
	{
		size_t i, o;

		for (i = o = 0; i < s->h.resp.len && o < sizeof(ex) - 1; i++) {
			unsigned char ch = (unsigned char)s->h.resp.data[i];
			ex[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
		}
		ex[o] = '\0';
	}
	snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld%s%s%s", s->h.status,
	    r == SEND_REJECT ? " (batch refused)" : "", ex[0] ? ": " : "", ex);
	return r;
}

static void
es_close(struct sink_ctx *ctx)
{
	es_free(ctx->priv);
	ctx->priv = NULL;
}

#define O(f)	offsetof(struct es_opts, f)
static const struct cfg_key es_keys[] = {
	{ .name = "url", .type = KT_STR, .off = O(url),
	  .check = check_url, .flags = KF_SECRET_URL,
	  .doc = "splunk_hec, elasticsearch: the base URL "
	  "(https://splunk:8088, https://es:9200); the sink adds the path" },
	{ .name = "index", .type = KT_STR, .off = O(index),
	  .doc = "splunk_hec: the index (empty: the token's default); "
	  "elasticsearch: the index or data stream (empty: esxwatch)" },
	{ .name = "api_key_file", .type = KT_STR, .off = O(api_key_file),
	  .doc = "elasticsearch: a file (0600) holding the API key's "
	  "`encoded` value (else username + password_file: Basic)" },
	{ .name = "pipeline", .type = KT_STR, .off = O(pipeline),
	  .doc = "elasticsearch: the ingest pipeline; empty: the index's "
	  "default" },
};
#undef O

static bool
es_has_target(const struct dest_conf *d)
{
	const struct es_opts *o = es_opts(d);

	return o != NULL && o->url != NULL && o->url[0] != '\0';
}

static void
es_finish(const struct cfg_finish *f)
{
	const struct es_opts *o = es_opts(f->d);

	if (o == NULL)
		return;
	if (o->url == NULL || o->url[0] == '\0')
		cfg_error(f->c, f->line, f->col, "%s: 'url' is required for "
		    "proto elasticsearch (e.g. https://es:9200)",
		    f->primary ? "server" : f->d->name);
	else if (o->api_key_file != NULL && o->api_key_file[0] != '\0' &&
	    f->d->username != NULL && f->d->username[0] != '\0')
		cfg_error(f->c, f->line, f->col, "%s: 'api_key_file' and "
		    "'username': set only one of them",
		    f->primary ? "server" : f->d->name);
}

const struct sink sink_elasticsearch = {
	.name = "elasticsearch",
	.proto = PROTO_ELASTICSEARCH,
	.open = es_open,
	.send = es_send,
	.close = es_close,
	/* the action line and the ECS names around the flat JSON */
	.encoded_pct = 140,
	.per_item = true,
	.port = 9200,
	.tls_port = 9200,
	.keys = es_keys,
	.nkeys = sizeof(es_keys) / sizeof(es_keys[0]),
	.opts_size = sizeof(struct es_opts),
	.finish = es_finish,
	.has_target = es_has_target,
};

struct es_opts *
es_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_elasticsearch);
}
