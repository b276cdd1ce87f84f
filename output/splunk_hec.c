/*
 * splunk_hec: Splunk's HTTP Event Collector (docs/outputs.md "Splunk
 * HEC").  POST {url}/services/collector/event with "Authorization: Splunk
 * <token>" (the first line of token_file, 0600) and a body of
 * concatenated JSON events, one per esxwatch event (Splunk, "Format events
 * for HTTP Event Collector"):
 *
 *   {"time":1733000000.123,"host":"esx01","source":"/var/log/vobd.log",
 *    "sourcetype":"esxwatch","index":"esx","event":"<text>",
 *    "fields":{"appname":"vobd","esxwatch_severity":"error",...}}
 *
 * time is seconds with the milliseconds kept; host the event's hostname;
 * source its filepath field (logwatch) or "esxwatch"; fields every other
 * field, flat string values (HEC's indexed fields take no nested objects).
 *
 * ack: yes (Splunk, "About HTTP Event Collector Indexer Acknowledgment"):
 * every request names the destination's channel (X-Splunk-Request-Channel,
 * a UUID kept in storage.directory so that a restart keeps it); the answer
 * carries an ackId; the send polls POST /services/collector/ack with
 * {"acks":[ids]} until every id is true, and only then answers SEND_OK:
 * the spool cursor moves past a batch once the indexers have it.  The
 * wait is inside send(): the shipper's model (a send says delivered or
 * not) is unchanged, and one batch is in flight per destination.  An
 * acknowledgement that has not come after ack_timeout seconds (60) means
 * the batch is sent again (SEND_RETRY): at least once, its events counted
 * as resent (sink_ctx.resent; the indexer may have them twice).
 *
 * Answers (Splunk, "Troubleshoot HTTP Event Collector", HEC status codes):
 * the JSON answer's code decides, the HTTP status when there is none.
 * Refused for good (SEND_REJECT, the shipper isolates the event): 400 with
 * code 5 no data, 6 invalid data format, 12 event field required, 13
 * event field blank, 15 error in handling indexed fields; 413 too large.
 * Everything else is the destination's state, not the events': 401/403
 * codes 1-4 (token disabled, required, invalid authorization, invalid
 * token), 400 code 7 (incorrect index), 10/11 (data channel missing or
 * invalid), 14 (ack disabled), 503 code 9 (server busy), 5xx: SEND_RETRY,
 * the destination failing with the answer's text in its status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../agent/lib/agentid.h"
#include "../agent/lib/clock.h"
#include "../agent/lib/fs.h"
#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "secretfile.h"
#include "splunk_hec.h"
#include "transport.h"

#define HEC_EVENT_PATH	"/services/collector/event"
#define HEC_ACK_PATH	"/services/collector/ack"
/* HEC's max_content_length was 1 MB by default (limits.conf
 * [http_input]); a batch's request stays under it. */
#define HEC_MAX_BYTES	1000000
#define HEC_MAX_ACKS	64	/* requests of one batch */
#define HEC_TOKEN_MAX	256

struct hec {
	struct hconn		 ev;		/* /services/collector/event */
	struct hconn		 ak;		/* /services/collector/ack */
	struct trust		 trust;
	struct curl_slist	*hdrs;
	struct buf		 body;
	const char		*index;
	const char		*sourcetype;
	bool			 ack;
	int			 ack_timeout_s;
	bool			 no_ackid_told;
	long long		 ackids[HEC_MAX_ACKS];
	bool			 acked[HEC_MAX_ACKS];
	size_t			 nacks;
};

static const struct splunk_hec_opts *
conf_opts(const struct dest_conf *d)
{
	static const struct splunk_hec_opts none = { .ack_timeout = 60 };
	const struct splunk_hec_opts *o = splunk_hec_opts(d);

	return o != NULL ? o : &none;
}

static void
hec_free(struct hec *s)
{
	if (s == NULL)
		return;
	hconn_close(&s->ev);
	hconn_close(&s->ak);
	curl_slist_free_all(s->hdrs);
	buf_free(&s->body);
	free(s);
}

/*
 * The destination's channel: storage.directory/hec-channel.NAME, made
 * (0600) with a new UUID the first time.  A destination without storage
 * gets one for the process.
 */
static int
channel_get(const struct sink_ctx *ctx, char *out, size_t outlen)
{
	const char *dir = ctx->cfg != NULL ? ctx->cfg->storage_directory : NULL;
	char path[1024], name[128];
	size_t i;
	ssize_t n;
	int fd;

	if (dir == NULL || dir[0] == '\0')
		return agentid_generate(out, outlen);
	for (i = 0; ctx->name[i] != '\0' && i < sizeof(name) - 1; i++)
		name[i] = strchr("/\\.", ctx->name[i]) ? '_' : ctx->name[i];
	name[i] = '\0';
	snprintf(path, sizeof(path), "%s/hec-channel.%s", dir, name);
	fd = fs_open_read(path);
	if (fd != -1) {
		n = fs_read_upto(fd, out, outlen - 1);
		close(fd);
		if (n > 0) {
			out[n] = '\0';
			out[strcspn(out, "\r\n")] = '\0';
			if (agentid_valid(out))
				return 0;
		}
		log_warn("%s: %s holds no channel UUID: making a new one",
		    ctx->name, path);
	}
	if (agentid_generate(out, outlen) == -1)
		return -1;
	if (fs_mkdir_p(dir, 0700) == -1 ||
	    fs_write_atomic(path, out, strlen(out), 0600) == -1)
		log_warn("%s: cannot keep the HEC channel in %s (%s): a "
		    "restart will use another", ctx->name, path,
		    log_errstr(errno));
	return 0;
}

static int
make_headers(struct sink_ctx *ctx, struct hec *s, const char *token)
{
	char line[HEC_TOKEN_MAX + 64], ch[64];
	struct curl_slist *n;

	snprintf(line, sizeof(line), "Authorization: Splunk %s", token);
	s->hdrs = curl_slist_append(NULL, line);
	explicit_bzero(line, sizeof(line));
	if (s->hdrs == NULL ||
	    curl_slist_append(s->hdrs, "Content-Type: application/json") == NULL ||
	    curl_slist_append(s->hdrs, "Expect:") == NULL)
		return -1;
	if (!s->ack)
		return 0;
	if (channel_get(ctx, ch, sizeof(ch)) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "cannot make a HEC "
		    "channel id (/dev/urandom)");
		return -1;
	}
	snprintf(line, sizeof(line), "X-Splunk-Request-Channel: %s", ch);
	n = curl_slist_append(s->hdrs, line);
	if (n == NULL)
		return -1;
	log_info("%s: HEC indexer acknowledgement on channel %s", ctx->name, ch);
	return 0;
}

static int
hec_open(struct sink_ctx *ctx)
{
	const struct splunk_hec_opts *o = conf_opts(ctx->conf);
	const struct dest_conf *d = ctx->conf;
	struct buf url = BUF_INIT, aurl = BUF_INIT;
	char token[HEC_TOKEN_MAX], redacted[1024];
	struct hec *s = calloc(1, sizeof(*s));
	bool tls;

	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	buf_init(&s->body, 2u * HEC_MAX_BYTES + EVENT_TEXT_MAX * 8);
	s->index = o->index != NULL ? o->index : "";
	s->sourcetype = o->sourcetype != NULL && o->sourcetype[0] ?
	    o->sourcetype : "esxwatch";
	s->ack = o->ack;
	s->ack_timeout_s = o->ack_timeout > 0 ? o->ack_timeout : 60;
	if (o->url == NULL || o->url[0] == '\0') {
		snprintf(ctx->error, sizeof(ctx->error), "url is not set");
		goto err;
	}
	if (buf_puts(&url, o->url) == -1 || buf_puts(&aurl, o->url) == -1)
		goto nomem;
	while (url.len > 0 && url.data[url.len - 1] == '/')
		url.data[--url.len] = '\0';
	while (aurl.len > 0 && aurl.data[aurl.len - 1] == '/')
		aurl.data[--aurl.len] = '\0';
	if (buf_puts(&url, HEC_EVENT_PATH) == -1 ||
	    buf_puts(&aurl, HEC_ACK_PATH) == -1)
		goto nomem;
	if (secret_file_read("token_file", o->token_file, token, sizeof(token),
	    ctx->error, sizeof(ctx->error)) == -1)
		goto err;
	if (make_headers(ctx, s, token) == -1) {
		explicit_bzero(token, sizeof(token));
		if (ctx->error[0] == '\0')
			goto nomem;
		goto err;
	}
	explicit_bzero(token, sizeof(token));
	tls = strncasecmp(url.data, "https:", 6) == 0;
	if (trust_init(&s->trust, ctx->cfg, d, ctx->name, tls, ctx->error,
	    sizeof(ctx->error)) == -1 ||
	    hconn_open_trust(&s->ev, d, &s->trust, url.data, ctx->error,
	    sizeof(ctx->error)) == -1 ||
	    (s->ack && hconn_open_trust(&s->ak, d, &s->trust, aurl.data,
	    ctx->error, sizeof(ctx->error)) == -1))
		goto err;
	transport_redact_url(url.data, redacted, sizeof(redacted));
	log_info("%s: splunk_hec to %s (sourcetype %s%s%s, ack %s)", ctx->name,
	    redacted, s->sourcetype, s->index[0] ? ", index " : "", s->index,
	    s->ack ? "yes" : "no");
	buf_free(&url);
	buf_free(&aurl);
	ctx->priv = s;
	return 0;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
err:
	buf_free(&url);
	buf_free(&aurl);
	hec_free(s);
	return -1;
}

/* "name": (a name valid by construction: nothing to escape) */
static int
put_name(struct buf *b, const char *name)
{
	size_t n = strlen(name);

	if (buf_reserve(b, n + 3) == -1)
		return -1;
	b->data[b->len++] = '"';
	memcpy(b->data + b->len, name, n);
	b->len += n;
	b->data[b->len++] = '"';
	b->data[b->len++] = ':';
	b->data[b->len] = '\0';
	return 0;
}

static int
put_str_kv(struct buf *b, const char *k, const char *v)
{
	if (buf_putc(b, ',') == -1 || put_name(b, k) == -1)
		return -1;
	return json_put_str(b, v, strlen(v));
}

/* One event's JSON (HEC's envelope) appended to b. */
int
splunk_hec_encode(const struct event *ev, const char *index,
    const char *sourcetype, struct buf *b)
{
	const char *host = event_get(ev, "hostname");
	const char *src = event_get(ev, "filepath");
	int64_t ms = ev->timestamp_ms;
	bool first = true;

	if (ms < 0)
		ms = 0;
	if (buf_printf(b, "{\"time\":%lld.%03d", (long long)(ms / 1000),
	    (int)(ms % 1000)) == -1 ||
	    (host != NULL && put_str_kv(b, "host", host) == -1) ||
	    put_str_kv(b, "source", src != NULL ? src : "esxwatch") == -1 ||
	    put_str_kv(b, "sourcetype", sourcetype) == -1 ||
	    (index[0] != '\0' && put_str_kv(b, "index", index) == -1) ||
	    put_str_kv(b, "event", ev->text) == -1 ||
	    buf_puts(b, ",\"fields\":{") == -1)
		return -1;
	for (size_t i = 0; i < ev->nfields; i++) {
		const struct field *f = &ev->fields[i];

		if (strcmp(f->name, "hostname") == 0)
			continue;	/* it is "host" */
		/* names are valid by construction (event_set()) */
		if ((!first && buf_putc(b, ',') == -1) || put_name(b, f->name) == -1 ||
		    json_put_str(b, f->value, strlen(f->value)) == -1)
			return -1;
		first = false;
	}
	return buf_puts(b, "}}");
}

/* HEC's answer: its code (-1 none) and text. */
static long long
answer_code(const struct hconn *h, char *text, size_t textlen,
    long long *ackid)
{
	struct json_doc doc;
	long long code = -1;
	char err[64];
	int n;

	text[0] = '\0';
	*ackid = -1;
	if (h->resp.len == 0 || json_parse(h->resp.data, h->resp.len, &doc, err,
	    sizeof(err)) == -1)
		return -1;
	n = json_get(&doc, 0, "code");
	if (n < 0 || !json_num(&doc, n, &code))
		code = -1;
	n = json_get(&doc, 0, "text");
	if (n >= 0)
		(void)json_str(&doc, n, text, textlen);
	n = json_get(&doc, 0, "ackId");
	if (n >= 0 && !json_num(&doc, n, ackid))
		*ackid = -1;
	json_free(&doc);
	return code;
}

/* What an answer (not 2xx) means for the batch. */
static enum send_result
hec_policy(long status, long long code)
{
	switch (code) {
	case 5: case 6: case 12: case 13: case 15:
		return SEND_REJECT;	/* the events' fault */
	case 1: case 2: case 3: case 4: case 7: case 8: case 9: case 10:
	case 11: case 14:
		return SEND_RETRY;	/* the destination's state */
	default:
		break;
	}
	if (status == 400 || status == 413)
		return SEND_REJECT;
	return SEND_RETRY;
}

static enum send_result
post_body(struct sink_ctx *ctx, struct hec *s, int *retry_after)
{
	char text[160];
	long long code, ackid;
	enum send_result r;

	if (hconn_post(&s->ev, s->hdrs, s->body.data, s->body.len, ctx->error,
	    sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	code = answer_code(&s->ev, text, sizeof(text), &ackid);
	if (s->ev.status >= 200 && s->ev.status < 300) {
		if (!s->ack)
			return SEND_OK;
		if (ackid < 0) {
			if (!s->no_ackid_told)
				log_warn("%s: ack: yes but HEC answered without an "
				    "ackId (indexer acknowledgement is off for "
				    "this token): delivered once HEC accepts",
				    ctx->name);
			s->no_ackid_told = true;
			return SEND_OK;
		}
		if (s->nacks < HEC_MAX_ACKS) {
			s->acked[s->nacks] = false;
			s->ackids[s->nacks++] = ackid;
		}
		return SEND_OK;
	}
	r = hec_policy(s->ev.status, code);
	if (r == SEND_RETRY)
		*retry_after = s->ev.retry_after;
	snprintf(ctx->error, sizeof(ctx->error), "HTTP %ld%s%.0lld%s%s%s",
	    s->ev.status, code >= 0 ? " code " : "", code >= 0 ? code : 0,
	    r == SEND_REJECT ? " (refused)" : "", text[0] ? ": " : "", text);
	return r;
}

/* One poll of the acknowledgements not yet true.  0, or -1 (err). */
static int
poll_acks(struct sink_ctx *ctx, struct hec *s)
{
	struct buf q = BUF_INIT;
	struct json_doc doc;
	char err[64], key[32];
	int acks, n;

	buf_init(&q, 64 * 1024);
	if (buf_puts(&q, "{\"acks\":[") == -1)
		goto nomem;
	for (size_t i = 0, k = 0; i < s->nacks; i++)
		if (!s->acked[i] && buf_printf(&q, "%s%lld", k++ ? "," : "",
		    s->ackids[i]) == -1)
			goto nomem;
	if (buf_puts(&q, "]}") == -1)
		goto nomem;
	if (hconn_post(&s->ak, s->hdrs, q.data, q.len, ctx->error,
	    sizeof(ctx->error)) == -1) {
		buf_free(&q);
		return -1;
	}
	buf_free(&q);
	if (s->ak.status != 200) {
		char text[160];
		long long ackid;
		long long code = answer_code(&s->ak, text, sizeof(text), &ackid);

		snprintf(ctx->error, sizeof(ctx->error), "ack: HTTP %ld%s%.0lld%s%s",
		    s->ak.status, code >= 0 ? " code " : "", code >= 0 ? code : 0,
		    text[0] ? ": " : "", text);
		return -1;
	}
	if (json_parse(s->ak.resp.data, s->ak.resp.len, &doc, err,
	    sizeof(err)) == -1) {
		snprintf(ctx->error, sizeof(ctx->error), "ack: not JSON: %s", err);
		return -1;
	}
	acks = json_get(&doc, 0, "acks");
	for (size_t i = 0; acks >= 0 && i < s->nacks; i++) {
		bool v = false;

		if (s->acked[i])
			continue;
		snprintf(key, sizeof(key), "%lld", s->ackids[i]);
		n = json_get(&doc, acks, key);
		if (n >= 0 && json_bool(&doc, n, &v) && v)
			s->acked[i] = true;
	}
	json_free(&doc);
	return 0;
nomem:
	buf_free(&q);
	snprintf(ctx->error, sizeof(ctx->error), "out of memory");
	return -1;
}

static bool
all_acked(const struct hec *s)
{
	for (size_t i = 0; i < s->nacks; i++)
		if (!s->acked[i])
			return false;
	return true;
}

/*
 * Wait for the batch's acknowledgements: poll every 100 ms, doubling to
 * 1 s, until all are true or ack_timeout_s passed.  SEND_OK or SEND_RETRY
 * (the batch is sent again: its n events counted as resent).
 */
static enum send_result
wait_acks(struct sink_ctx *ctx, struct hec *s, size_t n)
{
	int64_t end = mono_ms() + (int64_t)s->ack_timeout_s * 1000;
	long wait = 100;
	char last[256] = "";

	while (!all_acked(s)) {
		struct timespec ts;

		if (mono_ms() >= end) {
			__atomic_add_fetch(&ctx->resent, (uint64_t)n, __ATOMIC_RELAXED);
			snprintf(ctx->error, sizeof(ctx->error), "no indexer "
			    "acknowledgement within %d s: the batch (%zu events) "
			    "is sent again%s%s", s->ack_timeout_s, n,
			    last[0] ? "; last poll: " : "", last);
			return SEND_RETRY;
		}
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = (wait % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		if (wait < 1000)
			wait *= 2;
		if (poll_acks(ctx, s) == -1)
			snprintf(last, sizeof(last), "%.200s", ctx->error);
	}
	ctx->error[0] = '\0';
	return SEND_OK;
}

static enum send_result
hec_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct hec *s = ctx->priv;
	enum send_result r;
	size_t i = 0;

	*retry_after = 0;
	ctx->error[0] = '\0';
	s->nacks = 0;
	while (i < b->n) {
		size_t count = 0;

		buf_reset(&s->body);
		while (i < b->n) {
			size_t mark = s->body.len;

			if (splunk_hec_encode(b->events[i], s->index,
			    s->sourcetype, &s->body) == -1) {
				snprintf(ctx->error, sizeof(ctx->error),
				    "out of memory encoding a batch");
				return SEND_RETRY;
			}
			if (s->body.len > HEC_MAX_BYTES && count > 0) {
				s->body.len = mark;	/* the next request's */
				s->body.data[mark] = '\0';
				break;
			}
			count++;
			i++;
		}
		r = post_body(ctx, s, retry_after);
		if (r != SEND_OK)
			return r;
		if (s->nacks == HEC_MAX_ACKS && i < b->n) {
			r = wait_acks(ctx, s, i);
			if (r != SEND_OK)
				return r;
			s->nacks = 0;
		}
	}
	return s->ack ? wait_acks(ctx, s, b->n) : SEND_OK;
}

static void
hec_close(struct sink_ctx *ctx)
{
	hec_free(ctx->priv);
	ctx->priv = NULL;
}

#define O(f)	offsetof(struct splunk_hec_opts, f)
static const struct cfg_key hec_keys[] = {
	{ .name = "url", .type = KT_STR, .off = O(url),
	  .check = check_url, .flags = KF_SECRET_URL,
	  .doc = "splunk_hec, elasticsearch: the base URL "
	  "(https://splunk:8088, https://es:9200); the sink adds the path" },
	{ .name = "token_file", .type = KT_STR, .off = O(token_file),
	  .doc = "splunk_hec: a file (0600) holding the HEC token" },
	{ .name = "index", .type = KT_STR, .off = O(index),
	  .doc = "splunk_hec: the index (empty: the token's default); "
	  "elasticsearch: the index or data stream (empty: esxwatch)" },
	{ .name = "sourcetype", .type = KT_STR, .off = O(sourcetype),
	  .def = "esxwatch", .doc = "splunk_hec: the events' sourcetype" },
	{ .name = "ack", .type = KT_BOOL, .off = O(ack), .def = "no",
	  .doc = "splunk_hec: yes = delivered only once the indexers "
	  "acknowledge it (the token needs indexer acknowledgement on)" },
	{ .name = "ack_timeout", .type = KT_INT, .off = O(ack_timeout),
	  .min = 1, .max = 3600, .def = "60",
	  .doc = "splunk_hec: seconds to wait for an acknowledgement before "
	  "the batch is sent again (counted as resent)" },
};
#undef O

static bool
hec_has_target(const struct dest_conf *d)
{
	const struct splunk_hec_opts *o = splunk_hec_opts(d);

	return o != NULL && o->url != NULL && o->url[0] != '\0';
}

static void
hec_finish(const struct cfg_finish *f)
{
	const struct splunk_hec_opts *o = splunk_hec_opts(f->d);

	if (o == NULL)
		return;
	if (o->url == NULL || o->url[0] == '\0')
		cfg_error(f->c, f->line, f->col, "%s: 'url' is required for "
		    "proto splunk_hec (e.g. https://splunk:8088)",
		    f->primary ? "server" : f->d->name);
	else if (o->token_file == NULL || o->token_file[0] == '\0')
		cfg_error(f->c, f->line, f->col, "%s: 'token_file' is required "
		    "for proto splunk_hec", f->primary ? "server" : f->d->name);
}

const struct sink sink_splunk_hec = {
	.name = "splunk_hec",
	.proto = PROTO_SPLUNK_HEC,
	.open = hec_open,
	.send = hec_send,
	.close = hec_close,
	/* the envelope and "fields" around the flat JSON's content */
	.encoded_pct = 130,
	.port = 8088,
	.tls_port = 8088,
	.keys = hec_keys,
	.nkeys = sizeof(hec_keys) / sizeof(hec_keys[0]),
	.opts_size = sizeof(struct splunk_hec_opts),
	.finish = hec_finish,
	.has_target = hec_has_target,
};

struct splunk_hec_opts *
splunk_hec_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_splunk_hec);
}
