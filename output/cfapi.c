/*
 * cfapi: Log Insight's ingestion API, POST /api/v1/events/ingest/{agentId}
 * with {"events":[{"text":..,"timestamp":..,"fields":[{"name":..,
 * "content":..}]}]} (loginsight-api.md §1.3), gzip by default.
 *
 * One keep-alive connection per destination (transport.c's hconn).  The
 * shipper builds batches within batch.max_events / batch.max_bytes; a batch
 * that is still over Log Insight's limits (500 events, 4 MB of JSON before
 * compression) is sent in several requests.  If one of them fails the
 * whole batch is retried: delivery is at-least-once.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agent/config/config_host.h"
#include "../agent/lib/agentid.h"
#include "../agent/lib/clock.h"
#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "../agent/lib/utf8.h"
#include "cfapi.h"
#include "gzip.h"
#include "lisession.h"
#include "transport.h"

#define CFAPI_MAX_EVENTS	500
#define CFAPI_MAX_BYTES		(4L * 1024 * 1024)
#define CFAPI_PATH		"/api/v1/events/ingest/"

/*
 * Field names are valid by construction (event_set() refuses others), so
 * they are written without escaping.  Checked in debug builds (the
 * sanitizer build, or -DESXWATCH_DEBUG) only: the check costs more than
 * writing the name, on the hottest path of shipping.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(ESXWATCH_DEBUG)
#define ASSERT_NAME(n)	assert(field_name_valid(n))
#else
#define ASSERT_NAME(n)	((void)0)
#endif

struct cfapi {
	struct hconn		 h;
	struct trust		 trust;
	struct lisession	 sess;
	struct gzip		*gz;
	bool			 compress;
	bool			 gzip_off;	/* refused on this connection */
	bool			 gzip_never;	/* 5xx to gzip, fine plain */
	bool			 gzip_5xx_logged;
	int			 gzip_5xx;	/* 5xx to gzip bodies in a row */
	struct curl_slist	*hdr_plain;
	struct curl_slist	*hdr_gzip;
	struct buf		 body;
	struct buf		 zbody;
	size_t			 max_events;
	size_t			 max_bytes;
	uint64_t		 not_ingested;
	/* the batch being sent, for a plain body after a shared gzip one */
	const struct batch	*cur;
	bool			 body_stale;	/* body is not cur's JSON */
};

enum fallback { FB_REFUSED, FB_5XX };

/*
 * One encoding per batch for the cfapi destinations of one configuration
 * (sink.group_new: made by the shipper when there are two or more): the
 * last batches encoded (gzip bodies that hold the whole batch in one
 * request), by the queue's record numbers (batch.src, seq0, n).  A
 * destination that finds its batch here sends those bytes instead of
 * encoding and compressing the same events again; one that finds it being
 * encoded waits for it (CPU work, no I/O: a short wait, bounded anyway).
 * The shipper cuts the full batches of several destinations alike
 * (agent/shipper_dest.c align_batch), so that they meet the same batches.
 * Bounded: SHARED_MAX bodies of SHARED_BODY_MAX, enough for a batch each
 * of 16 destinations a batch or so apart, and SHARED_BYTES_MAX in all (a
 * body that would pass it is not kept, its room given back).
 */
#define SHARED_MAX	32
#define SHARED_BODY_MAX	(512u * 1024)
#define SHARED_BYTES_MAX (4u * 1024 * 1024)
#define SHARED_WAIT_MS	2000

enum shared_state { SHARED_EMPTY, SHARED_BUSY, SHARED_READY };

struct shared_body {
	enum shared_state state;
	uint64_t	src, seq0;
	size_t		n;
	struct buf	z;
	uint64_t	used;		/* the clock of the last use */
};

struct cfapi_group {
	pthread_mutex_t	   mu;
	pthread_cond_t	   cv;		/* CLOCK_MONOTONIC: a body is ready */
	struct shared_body body[SHARED_MAX];
	uint64_t	   clock;
};

static void *
cfapi_group_new(const struct config *cfg)
{
	struct cfapi_group *g = calloc(1, sizeof(*g));

	(void)cfg;	/* one configuration: the same batch limits for all */
	if (g == NULL)
		return NULL;
	pthread_mutex_init(&g->mu, NULL);
	if (cond_init_mono(&g->cv) != 0) {
		pthread_mutex_destroy(&g->mu);
		free(g);
		return NULL;
	}
	return g;
}

static void
cfapi_group_free(void *arg)
{
	struct cfapi_group *g = arg;

	if (g == NULL)
		return;
	for (size_t i = 0; i < SHARED_MAX; i++)
		buf_free(&g->body[i].z);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* The entry for b's records, or NULL (under g->mu). */
static struct shared_body *
shared_find(struct cfapi_group *g, const struct batch *b)
{
	for (size_t i = 0; i < SHARED_MAX; i++) {
		struct shared_body *e = &g->body[i];

		if (e->state != SHARED_EMPTY && e->src == b->src &&
		    e->seq0 == b->seq0 && e->n == b->n)
			return e;
	}
	return NULL;
}

/* The least recently used entry nobody is encoding into (NULL: none). */
static struct shared_body *
shared_victim(struct cfapi_group *g)
{
	struct shared_body *v = NULL;

	for (size_t i = 0; i < SHARED_MAX; i++)
		if (g->body[i].state != SHARED_BUSY &&
		    (v == NULL || g->body[i].used < v->used))
			v = &g->body[i];
	return v;
}

/*
 * The shared gzip body of b into c->zbody: 1 there was one; 0 this
 * destination encodes it and hands it over with shared_put() (*claim,
 * NULL when there is no room to share it).
 */
static int
shared_take(struct cfapi_group *g, struct cfapi *c, const struct batch *b,
    struct shared_body **claim)
{
	struct timespec until;
	struct shared_body *e;
	int hit = 0;

	*claim = NULL;
	abstime_in_ms(&until, SHARED_WAIT_MS);
	pthread_mutex_lock(&g->mu);
	e = shared_find(g, b);
	while (e != NULL && e->state == SHARED_BUSY) {
		if (pthread_cond_timedwait(&g->cv, &g->mu, &until) != 0)
			break;
		e = shared_find(g, b);
	}
	if (e != NULL && e->state == SHARED_READY) {
		buf_reset(&c->zbody);
		hit = buf_append(&c->zbody, e->z.data, e->z.len) == 0;
		e->used = ++g->clock;
	} else if (e == NULL) {
		e = shared_victim(g);
	} else
		e = NULL;	/* still being encoded: this one does it too */
	if (!hit && e != NULL) {
		e->state = SHARED_BUSY;
		e->src = b->src;
		e->seq0 = b->seq0;
		e->n = b->n;
		e->used = ++g->clock;
		*claim = e;
	}
	pthread_mutex_unlock(&g->mu);
	return hit;
}

/* The memory the kept bodies hold (under g->mu). */
static size_t
shared_room(const struct cfapi_group *g)
{
	size_t n = 0;

	for (size_t i = 0; i < SHARED_MAX; i++)
		n += g->body[i].z.cap;
	return n;
}

/* The claimed entry gets c->zbody (ok) or is given up; waiters wake. */
static void
shared_put(struct cfapi_group *g, struct shared_body *e, const struct cfapi *c,
    bool ok)
{
	pthread_mutex_lock(&g->mu);
	buf_reset(&e->z);
	e->state = SHARED_EMPTY;
	if (ok && c->zbody.len <= SHARED_BODY_MAX &&
	    buf_append(&e->z, c->zbody.data, c->zbody.len) == 0)
		e->state = SHARED_READY;
	if (shared_room(g) > SHARED_BYTES_MAX) {
		buf_free(&e->z);
		e->state = SHARED_EMPTY;
	}
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

static char *
put_lit(char *o, const char *lit, size_t n)
{
	memcpy(o, lit, n);
	return o + n;
}
#define PUT_LIT(o, lit)	put_lit((o), (lit), sizeof(lit) - 1)

static char *
put_i64(char *o, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*o++ = '-';
	while (n > 0)
		*o++ = tmp[--n];
	return o;
}

/*
 * One event.  This is the hot path of shipping (see bench/bench_ship.c):
 * the worst-case size is computed first and reserved once, then
 * everything is written through a pointer without further checks.
 */
int
cfapi_encode_event(const struct event *ev, struct buf *b)
{
	static const char mark[] = EVENT_TRUNC_MARKER;
	const char *text = ev->text != NULL ? ev->text : "";
	size_t tlen = strlen(text), cut = tlen, need, i;
	size_t *vlen, vlen_small[128];	/* value, name length per field */
	int64_t ts = ev->timestamp_ms > 0 ? ev->timestamp_ms : now_ms();
	const struct field *f;
	char *o;

	/* event_new() already cuts text to 16 KB; check again, since Log
	 * Insight refuses the whole batch over one long text. */
	if (tlen > EVENT_TEXT_MAX)
		cut = utf8_cut(text, tlen, EVENT_TEXT_MAX - (sizeof(mark) - 1));
	vlen = ev->nfields <= 64 ? vlen_small :
	    malloc(ev->nfields * 2 * sizeof(*vlen));
	if (vlen == NULL)
		return -1;
	need = 64 + 6 * (cut + sizeof(mark));
	for (i = 0; i < ev->nfields; i++) {
		f = &ev->fields[i];
		vlen[2 * i] = f->value != NULL ? strlen(f->value) : 0;
		vlen[2 * i + 1] = strlen(f->name);
		need += 32 + vlen[2 * i + 1] + 6 * vlen[2 * i];
	}
	if (buf_reserve(b, need) == -1) {
		if (vlen != vlen_small)
			free(vlen);
		return -1;
	}
	o = b->data + b->len;
	o = PUT_LIT(o, "{\"text\":\"");
	o = json_esc(o, text, cut);
	if (cut < tlen)
		o = put_lit(o, mark, sizeof(mark) - 1);
	o = PUT_LIT(o, "\",\"timestamp\":");
	o = put_i64(o, ts);
	for (i = 0; i < ev->nfields; i++) {
		f = &ev->fields[i];
		ASSERT_NAME(f->name);
		o = i == 0 ? PUT_LIT(o, ",\"fields\":[{\"name\":\"") :
		    PUT_LIT(o, ",{\"name\":\"");
		o = put_lit(o, f->name, vlen[2 * i + 1]);
		o = PUT_LIT(o, "\",\"content\":\"");
		if (vlen[2 * i] > 0)
			o = json_esc(o, f->value, vlen[2 * i]);
		o = PUT_LIT(o, "\"}");
	}
	if (ev->nfields > 0)
		*o++ = ']';
	*o++ = '}';
	b->len = (size_t)(o - b->data);
	b->data[b->len] = '\0';
	if (vlen != vlen_small)
		free(vlen);
	return 0;
}

int
cfapi_parse_response(const char *body, size_t len, long long *ingested)
{
	struct json_doc d;
	char err[64];
	long long v;
	int n, ok = -1;

	*ingested = -1;
	if (json_parse(body, len, &d, err, sizeof(err)) == -1)
		return -1;
	if (json_str_is(&d, json_get(&d, 0, "status"), "ok"))
		ok = 0;
	n = json_get(&d, 0, "ingested");
	if (n >= 0 && d.n[n].type == JSON_NUM && json_num(&d, n, &v) && v >= 0)
		*ingested = v;
	json_free(&d);
	return ok;
}

/* ---- the sink ---- */

static void
cfapi_free(struct cfapi *c)
{
	if (c == NULL)
		return;
	hconn_close(&c->h);
	lisession_free(&c->sess);
	gzip_free(c->gz);
	curl_slist_free_all(c->hdr_plain);
	curl_slist_free_all(c->hdr_gzip);
	buf_free(&c->body);
	buf_free(&c->zbody);
	free(c);
}

/* d's headers: none for a destination the loader did not make. */
static const struct kvlist *
conf_headers(const struct dest_conf *d)
{
	static const struct kvlist none;
	const struct cfapi_opts *o = cfapi_opts(d);

	return o != NULL ? &o->headers : &none;
}

static struct curl_slist *
make_headers(const struct dest_conf *d, bool gz, const char *auth)
{
	const struct kvlist *hl = conf_headers(d);
	struct curl_slist *l = NULL, *n;
	struct buf h = BUF_INIT;
	size_t i;

	/* "Expect:" turns off curl's 100-continue round trip on big bodies. */
	l = curl_slist_append(NULL, "Content-Type: application/json");
	if (l == NULL)
		return NULL;
	n = curl_slist_append(l, "Expect:");
	if (n == NULL)
		goto err;
	if (gz) {
		n = curl_slist_append(l, "Content-Encoding: gzip");
		if (n == NULL)
			goto err;
	}
	/* the session (lisession.c): never logged */
	if (auth != NULL) {
		n = curl_slist_append(l, auth);
		if (n == NULL)
			goto err;
	}
	/* Optional headers (e.g. Authorization: Bearer <session>). */
	for (i = 0; i < hl->n; i++) {
		buf_reset(&h);
		if (buf_printf(&h, "%s: %s", hl->v[i].key,
		    hl->v[i].value) == -1)
			goto err;
		n = curl_slist_append(l, h.data);
		if (n == NULL)
			goto err;
	}
	buf_free(&h);
	return l;
err:
	buf_free(&h);
	curl_slist_free_all(l);
	return NULL;
}

static int
cfapi_open(struct sink_ctx *ctx)
{
	const struct dest_conf *d = ctx->conf;
	const struct cfapi_opts *o = cfapi_opts(d);
	struct cfapi *c;
	struct buf url = BUF_INIT;
	char id[256], redacted[1024];
	char *esc = NULL;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	buf_init(&c->body, 64u * 1024 * 1024);
	buf_init(&c->zbody, 64u * 1024 * 1024);
	c->max_events = CFAPI_MAX_EVENTS;
	c->max_bytes = CFAPI_MAX_BYTES;
	if (ctx->cfg != NULL) {
		if (ctx->cfg->batch_max_events > 0 &&
		    (size_t)ctx->cfg->batch_max_events < c->max_events)
			c->max_events = (size_t)ctx->cfg->batch_max_events;
		if (ctx->cfg->batch_max_bytes > 0 &&
		    (size_t)ctx->cfg->batch_max_bytes < c->max_bytes)
			c->max_bytes = (size_t)ctx->cfg->batch_max_bytes;
	}
	c->compress = o == NULL || o->compress == NULL ||
	    strcmp(o->compress, "none") != 0;
	if (config_dest_agent_id(ctx->agentid, ctx->cfg, d, id, sizeof(id)) == -1) {
		snprintf(ctx->error, sizeof(ctx->error),
		    "no agent id (set agent_id, or make storage.directory writable)");
		goto err;
	}
	esc = curl_easy_escape(NULL, id, 0);
	if (esc == NULL ||
	    transport_base_url(d, CFAPI_PATH, &url) == -1 ||
	    buf_puts(&url, esc) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		goto err;
	}
	if (trust_init(&c->trust, ctx->cfg, d, ctx->name, d->ssl, ctx->error,
	    sizeof(ctx->error)) == -1 ||
	    hconn_open_trust(&c->h, d, &c->trust, url.data, ctx->error,
	    sizeof(ctx->error)) == -1)
		goto err;
	if (lisession_init(&c->sess, d, &c->trust, ctx->name, ctx->error,
	    sizeof(ctx->error)) == -1)
		goto err;
	c->hdr_plain = make_headers(d, false, NULL);
	c->hdr_gzip = make_headers(d, true, NULL);
	if (c->compress)
		c->gz = gzip_new(GZIP_LEVEL_DEFAULT);
	if (c->hdr_plain == NULL || c->hdr_gzip == NULL ||
	    (c->compress && c->gz == NULL)) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		goto err;
	}
	transport_redact_url(url.data, redacted, sizeof(redacted));
	log_info("%s: cfapi to %s%s%s", ctx->name, redacted,
	    c->compress ? " (gzip)" : "", c->sess.wanted && !c->sess.fallback ?
	    " (authenticated)" : "");
	curl_free(esc);
	buf_free(&url);
	ctx->priv = c;
	return 0;
err:
	curl_free(esc);
	buf_free(&url);
	cfapi_free(c);
	return -1;
}

/* A printable excerpt of a response body for an error message. */
static void
excerpt(const struct buf *b, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < b->len && o + 1 < outlen && o < 200; i++) {
		unsigned char ch = (unsigned char)b->data[i];
		out[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
	}
	out[o] = '\0';
}

/* The session's header changed: rebuild both header lists. */
static int
headers_refresh(struct cfapi *c, const struct dest_conf *d)
{
	struct curl_slist *p, *g;

	p = make_headers(d, false, lisession_header(&c->sess));
	g = make_headers(d, true, lisession_header(&c->sess));
	if (p == NULL || g == NULL) {
		curl_slist_free_all(p);
		curl_slist_free_all(g);
		return -1;
	}
	curl_slist_free_all(c->hdr_plain);
	curl_slist_free_all(c->hdr_gzip);
	c->hdr_plain = p;
	c->hdr_gzip = g;
	return 0;
}

/* Log in (or renew) when needed.  0 ok, -1 (ctx->error) retry later. */
static int
session_ready(struct sink_ctx *ctx, struct cfapi *c)
{
	int r = lisession_ensure(&c->sess, ctx->error, sizeof(ctx->error));

	if (r == 1 && headers_refresh(c, ctx->conf) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	return r == -1 ? -1 : 0;
}

/*
 * POST the batch (gz: compressed) with the session, if any.  A 401 or 440
 * to a session means it ended before its ttl: log in again and send the
 * same request once more (nothing was ingested, so nothing doubles).
 * 0 when an HTTP answer came back, -1 to retry.
 */
static int
post_body(struct sink_ctx *ctx, struct cfapi *c, bool gz)
{
	const void *payload = gz ? c->zbody.data : c->body.data;
	size_t plen = gz ? c->zbody.len : c->body.len;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		if (session_ready(ctx, c) == -1)
			return -1;
		if (hconn_post(&c->h, gz ? c->hdr_gzip : c->hdr_plain, payload,
		    plen, ctx->error, sizeof(ctx->error)) == -1)
			return -1;
		if (c->h.status != 401 && c->h.status != 440)
			return 0;
		if (!lisession_expired(&c->sess))
			return 0;
		log_info("%s: Log Insight ended the session (HTTP %ld); "
		    "logging in again", ctx->name, c->h.status);
	}
	return 0;
}

/* events[i..] of the batch into c->body, as many as one request takes:
 * *count of them.  0, -1 out of memory, -2 one event over the limit. */
static int
encode_part(struct sink_ctx *ctx, struct cfapi *c, const struct batch *b,
    size_t i, size_t *count)
{
	static const char head[] = "{\"events\":[";
	size_t mark;

	buf_reset(&c->body);
	if (buf_append(&c->body, head, sizeof(head) - 1) == -1)
		return -1;
	for (*count = 0; i < b->n && *count < c->max_events; (*count)++, i++) {
		mark = c->body.len;
		if ((*count > 0 && buf_putc(&c->body, ',') == -1) ||
		    cfapi_encode_event(b->events[i], &c->body) == -1)
			return -1;
		/* +2 for the closing "]}" */
		if (c->body.len + 2 <= c->max_bytes)
			continue;
		if (*count == 0) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "one event is %zu bytes of JSON, over the "
			    "%zu-byte request limit", c->body.len -
			    mark, c->max_bytes);
			return -2;
		}
		c->body.len = mark;
		c->body.data[mark] = '\0';
		break;
	}
	return buf_append(&c->body, "]}", 2);
}

/* POST the batch uncompressed (its JSON made now if the gzip body was
 * another destination's). */
static int
post_plain(struct sink_ctx *ctx, struct cfapi *c)
{
	size_t count;

	if (c->body_stale) {
		if (encode_part(ctx, c, c->cur, 0, &count) != 0 ||
		    count != c->cur->n) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "out of memory encoding a batch");
			return -1;
		}
		c->body_stale = false;
	}
	return post_body(ctx, c, false);
}

/* The answer to the plain body of a fallback: what it says of gzip. */
static void
fallback_done(struct sink_ctx *ctx, struct cfapi *c, enum fallback why,
    long gzip_status)
{
	bool ok = c->h.status >= 200 && c->h.status < 300;

	if (why == FB_REFUSED) {
		/* refused plain too: the batch was the problem (a poison
		 * event), not gzip; keep compressing */
		if (!ok)
			c->gzip_off = false;
		return;
	}
	if (!ok)
		return;
	c->gzip_never = true;
	if (!c->gzip_5xx_logged)
		log_warn("%s: the server answered HTTP %ld twice in a row "
		    "to gzip bodies and accepted the same batch "
		    "uncompressed: sending uncompressed from now on",
		    ctx->name, gzip_status);
	c->gzip_5xx_logged = true;
}

/*
 * gzip answered with 415/400 (refused on this connection) or, twice in a
 * row, with a 5xx other than Log Insight's documented overload answer
 * (503 with Retry-After): send the same batch plain.  0, or -1 (retry).
 */
static int
gzip_fallback(struct sink_ctx *ctx, struct cfapi *c)
{
	long st = c->h.status;
	bool is5xx = st >= 500 && !(st == 503 && c->h.retry_after > 0);
	enum fallback why;

	c->gzip_5xx = is5xx ? c->gzip_5xx + 1 : 0;
	if (st == 415 || st == 400) {
		log_warn("%s: the server answered HTTP %ld to a gzip body; "
		    "sending uncompressed on this connection", ctx->name, st);
		c->gzip_off = true;
		why = FB_REFUSED;
	} else if (c->gzip_5xx >= 2) {
		c->gzip_5xx = 0;
		why = FB_5XX;
	} else
		return 0;
	if (post_plain(ctx, c) == -1)
		return -1;
	fallback_done(ctx, c, why, st);
	return 0;
}

/* Will the next request be gzip? */
static bool
gzip_now(struct cfapi *c)
{
	/* gzip again on a new connection: it may be a different node. */
	if (c->gzip_off && hconn_will_reconnect(&c->h))
		c->gzip_off = false;
	return c->compress && !c->gzip_off && !c->gzip_never;
}

/* zready: c->zbody already holds the gzip of the request. */
static enum send_result
post_one(struct sink_ctx *ctx, struct cfapi *c, size_t count, bool zready,
    int *retry_after)
{
	bool gz;
	long long ingested;
	enum send_result r;
	char ex[256];

	gz = gzip_now(c);
	if (gz && !zready && gzip_compress(c->gz, c->body.data, c->body.len,
	    &c->zbody) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "gzip failed");
		return SEND_RETRY;
	}
	if (post_body(ctx, c, gz) == -1)
		return SEND_RETRY;
	if (gz && gzip_fallback(ctx, c) == -1)
		return SEND_RETRY;
	r = transport_http_policy(c->h.status);
	excerpt(&c->h.resp, ex, sizeof(ex));
	switch (r) {
	case SEND_OK:
		if (cfapi_parse_response(c->h.resp.data ? c->h.resp.data : "",
		    c->h.resp.len, &ingested) == -1) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "HTTP %ld without \"status\":\"ok\": %s",
			    c->h.status, ex);
			c->h.fresh = true;
			return SEND_RETRY;
		}
		if (ingested >= 0 && (size_t)ingested < count) {
			c->not_ingested += count - (size_t)ingested;
			__atomic_add_fetch(&ctx->not_ingested,
			    count - (uint64_t)ingested, __ATOMIC_RELAXED);
			log_limited(LOG_WARN, "cfapi:not-ingested", 60,
			    "%s: Log Insight ingested %lld of %zu events",
			    ctx->name, ingested, count);
		}
		return SEND_OK;
	case SEND_RETRY:
		*retry_after = c->h.retry_after;
		snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld%s%s",
		    c->h.status, ex[0] ? ": " : "", ex);
		return SEND_RETRY;
	default:
		snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld (batch of "
		    "%zu events refused)%s%s", c->h.status, count,
		    ex[0] ? ": " : "", ex);
		return SEND_REJECT;
	}
}

/* Send b through the shared gzip body (another destination's, or this
 * one's, made now): 1 done (*r), 0 not so (several requests, no room). */
static int
send_shared(struct sink_ctx *ctx, struct cfapi *c, const struct batch *b,
    int *retry_after, enum send_result *r)
{
	struct cfapi_group *g = ctx->group;
	struct shared_body *claim;
	size_t count;

	if (g == NULL || b->src == 0 || !gzip_now(c))
		return 0;
	if (shared_take(g, c, b, &claim)) {
		c->body_stale = true;	/* plain, if it comes to it: made then */
		*r = post_one(ctx, c, b->n, true, retry_after);
		c->body_stale = false;
		return 1;
	}
	if (claim == NULL)
		return 0;
	if (encode_part(ctx, c, b, 0, &count) != 0 || count != b->n ||
	    gzip_compress(c->gz, c->body.data, c->body.len, &c->zbody) == -1) {
		shared_put(g, claim, c, false);
		return 0;	/* the usual way says what went wrong */
	}
	shared_put(g, claim, c, true);
	*r = post_one(ctx, c, count, true, retry_after);
	return 1;
}

static enum send_result
cfapi_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct cfapi *c = ctx->priv;
	size_t i = 0, count;
	enum send_result r;
	int e;

	*retry_after = 0;
	ctx->error[0] = '\0';
	c->body_stale = false;
	if (b->n == 0)
		return SEND_OK;
	c->cur = b;
	if (send_shared(ctx, c, b, retry_after, &r) == 1)
		return r;
	while (i < b->n) {
		e = encode_part(ctx, c, b, i, &count);
		if (e == -2)
			return SEND_REJECT;
		if (e != 0)
			goto nomem;
		r = post_one(ctx, c, count, false, retry_after);
		if (r != SEND_OK)
			return r;
		i += count;
	}
	return SEND_OK;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory encoding a batch");
	return SEND_RETRY;
}

static void
cfapi_close(struct sink_ctx *ctx)
{
	cfapi_free(ctx->priv);
	ctx->priv = NULL;
}

/* Configuration: headers and compress, one key each with http's row
 * (the same choices and checks); a named destination needs a host. */
#define O(f)	offsetof(struct cfapi_opts, f)
static const struct cfg_key cfapi_keys[] = {
	{ .name = "headers", .type = KT_KV, .off = O(headers),
	  .check = check_header_name, .vcheck = check_header_value,
	  .flags = KF_SECRET_KV, .doc = "cfapi: extra request headers" },
	{ .name = "compress", .type = KT_ENUM, .off = O(compress),
	  .choices = sink_compress_choices, .def = "gzip",
	  .doc = "cfapi: request body compression" },
};
#undef O

static void
cfapi_finish(const struct cfg_finish *f)
{
	if (!f->primary && f->d->hostname[0] == '\0')
		cfg_error(f->c, f->line, f->col, "servers.%s: 'hostname' is "
		    "required for proto cfapi", f->d->name);
}

const struct sink sink_cfapi = {
	.name = "cfapi",
	.proto = PROTO_CFAPI,
	.open = cfapi_open,
	.send = cfapi_send,
	.close = cfapi_close,
	/* {"name":"k","content":"v"} per field against "k":"v": about twice
	 * the flat JSON for collector events (measured on nic samples). */
	.encoded_pct = 220,
	.group_new = cfapi_group_new,
	.group_free = cfapi_group_free,
	.port = 9000,
	.tls_port = 9543,
	.keys = cfapi_keys,
	.nkeys = sizeof(cfapi_keys) / sizeof(cfapi_keys[0]),
	.opts_size = sizeof(struct cfapi_opts),
	.finish = cfapi_finish,
};

struct cfapi_opts *
cfapi_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_cfapi);
}
