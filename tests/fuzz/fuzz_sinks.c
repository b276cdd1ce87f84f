/*
 * Fuzz what the sinks read from outside: a Log Insight response body
 * (cfapi_parse_response), `esxcli hardware platform get` output
 * (agentid_parse_esxcli), a destination url (transport_redact_url), the
 * spool's binary event form (event_deserialize); and what they write from
 * events: every encoder (cfapi JSON, the flat JSON of the file and http
 * sinks, RFC 5424 and 3164 syslog, json_put_str, gzip) must accept any bytes
 * and stay in bounds (and the gelf, otlp and loki bodies parse as JSON).
 *
 * Beyond "never crash": the JSON is valid UTF-8 without raw control bytes;
 * syslog has no line break unless told to keep them and fits max_msg
 * (only the header may exceed it); a deserialised event serialises to a
 * form that reads back the same; gzip output decompresses to its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/agentid.h"
#include "../../agent/lib/buf.h"
#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../output/gzip.h"
#include "../../agent/lib/json.h"
#include "../../output/cfapi.h"
#include "../../output/gelf.h"
#include "../../output/loki.h"
#include "../../output/otlp.h"
#include "../../output/syslog.h"
#include "../../output/transport.h"

static struct gzip *gz;

/* JSON text as a server reads it: valid UTF-8, no raw control byte. */
static void
check_json(const struct buf *b)
{
	const unsigned char *p = (const unsigned char *)b->data;
	size_t i = 0, k, n;

	while (i < b->len) {
		if (p[i] < 0x20)
			abort();
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : 2;
		if (p[i] < 0xc2 || p[i] > 0xf4 || i + n > b->len)
			abort();
		for (k = 1; k < n; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				abort();
		i += n;
	}
}

/* syslog: no line break unless kept (it would split the message on a
 * newline-framed stream), and MSG cut so the whole fits max_msg. */
static void
check_syslog(const struct syslog_fmt *fmt, const struct event *ev,
    const struct buf *b)
{
	struct event e = *ev;
	struct buf h = BUF_INIT;

	if (!fmt->keep_newlines && (memchr(b->data, '\n', b->len) != NULL ||
	    memchr(b->data, '\r', b->len) != NULL))
		abort();
	if (fmt->max_msg == 0)
		return;
	e.text = (char *)"";
	if (syslog_format(fmt, &e, &h) == -1)
		abort();
	/* the header, then at most a space and a BOM before MSG */
	if (b->len > fmt->max_msg && b->len > h.len + 4)
		abort();
	buf_free(&h);
}

/* Every encoder on ev; fl varies the options. */
static void
encode_all(const struct event *ev, size_t fl)
{
	struct syslog_fmt fmt;
	struct buf b = BUF_INIT;

	if (cfapi_encode_event(ev, &b) == 0)
		check_json(&b);
	buf_reset(&b);
	if (event_to_json(ev, &b) == 0)
		check_json(&b);
	buf_reset(&b);
	{
		/* the round-three encoders: valid JSON, parsed back */
		struct event *one[1] = { (struct event *)ev };
		struct batch bt = { one, 1, 0, 0 };
		struct json_doc d;
		char err[64];

		if (gelf_format(ev, "h", &b) == 0) {
			check_json(&b);
			if (json_parse(b.data, b.len, &d, err, sizeof(err)) == -1)
				abort();
			json_free(&d);
		}
		buf_reset(&b);
		if (otlp_encode(&bt, &b) == 0) {
			check_json(&b);
			if (json_parse(b.data, b.len, &d, err, sizeof(err)) == -1)
				abort();
			json_free(&d);
		}
		buf_reset(&b);
		if (loki_encode(&bt, (fl & 8) == 0, &b) == 0) {
			check_json(&b);
			if (json_parse(b.data, b.len, &d, err, sizeof(err)) == -1)
				abort();
			json_free(&d);
		}
		buf_reset(&b);
	}
	memset(&fmt, 0, sizeof(fmt));
	fmt.facility = (int)(fl % 24);
	fmt.sd_id = "esxwatch@32473";
	fmt.hostname = "h";
	fmt.max_msg = fl % 512;
	fmt.keep_newlines = fl & 1;
	fmt.rfc3164 = (fl & 2) != 0;
	fmt.bom = (fl & 4) != 0;
	if (syslog_format(&fmt, ev, &b) == 0)
		check_syslog(&fmt, ev, &b);
	/* 5424 keeps the header whole; only MSG is cut to max_msg */
	fmt.rfc3164 = !fmt.rfc3164;
	fmt.max_msg = 0;
	buf_reset(&b);
	if (syslog_format(&fmt, ev, &b) == 0)
		check_syslog(&fmt, ev, &b);
	buf_free(&b);
}

/* The spool's binary form: what reads back must serialise stably. */
static void
binary(const uint8_t *data, size_t len)
{
	struct buf b1 = BUF_INIT, b2 = BUF_INIT;
	struct event *ev, *ev2;

	if ((ev = event_deserialize(data, len)) == NULL)
		return;
	encode_all(ev, len);
	if (event_serialize(ev, &b1) == -1)
		abort();
	if ((ev2 = event_deserialize(b1.data, b1.len)) == NULL)
		abort();
	if (event_serialize(ev2, &b2) == -1)
		abort();
	/* the first pass may fix the text (UTF-8, length, a 0 timestamp) */
	event_free(ev);
	if ((ev = event_deserialize(b2.data, b2.len)) == NULL)
		abort();
	buf_reset(&b1);
	if (event_serialize(ev, &b1) == -1 || b1.len != b2.len ||
	    memcmp(b1.data, b2.data, b1.len) != 0)
		abort();
	buf_free(&b1);
	buf_free(&b2);
	event_free(ev);
	event_free(ev2);
}

static void
compress(const uint8_t *data, size_t len)
{
	struct buf z = BUF_INIT, out = BUF_INIT;

	if (gz == NULL && (gz = gzip_new(GZIP_LEVEL_DEFAULT)) == NULL)
		abort();
	if (gzip_compress(gz, data, len, &z) == -1)
		abort();
	if (gzip_decompress(z.data, z.len, &out, len + 1) == -1 ||
	    out.len != len || (len > 0 && memcmp(out.data, data, len) != 0))
		abort();
	/* and the raw bytes as a (corrupt) gzip member */
	buf_reset(&out);
	(void)gzip_decompress(data, len, &out, 1 << 20);
	buf_free(&z);
	buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *s = malloc(len + 1), id[64], red[256];
	struct field f[3];
	struct event ev, *e;
	struct buf b = BUF_INIT;
	long long n;

	if (s == NULL)
		return 0;
	if (gz == NULL)
		log_init(0, "/dev/null");
	memcpy(s, data, len);
	s[len] = '\0';
	cfapi_parse_response(s, len, &n);
	if (agentid_parse_esxcli(s, id, sizeof(id)) == 0 &&
	    !agentid_valid(id))
		abort();
	transport_redact_url(s, red, sizeof(red));
	if (memchr(red, '\0', sizeof(red)) == NULL)
		abort();
	if (json_put_str(&b, (const char *)data, len) == 0)
		check_json(&b);
	buf_free(&b);

	/* the raw bytes as text and as field values (names stay valid),
	 * not made valid UTF-8 first: the encoders must cope alone */
	memset(&ev, 0, sizeof(ev));
	ev.timestamp_ms = 1733000000123LL;
	if (len >= 8 && (data[len - 1] & 0x80))	/* any stamp at all */
		memcpy(&ev.timestamp_ms, data + len - 8, 8);
	ev.text = s;
	f[0].name = (char *)"hostname";
	f[0].value = s + len / 2;
	f[1].name = (char *)"esxwatch_rule";
	f[1].value = s + len / 3;
	f[2].name = (char *)"appname";
	f[2].value = s + len / 4;
	ev.fields = f;
	ev.nfields = len % 4;
	encode_all(&ev, len);

	/* the same through the event API, as the collectors build them */
	if ((e = event_new(1733000000123LL, s)) != NULL) {
		(void)event_set(e, "esxwatch_severity", s + len / 3);
		(void)event_set(e, "esxwatch_collector", s + len / 2);
		encode_all(e, len >> 1);
		event_free(e);
	}
	binary(data, len);
	if (len <= 65536)
		compress(data, len);
	free(s);
	return 0;
}
