/*
 * report_html: the --analyze report (CONTRACT §5 JSON) as one HTML file.
 *
 * Self-contained: inline CSS and SVG, no script, no external resource, a
 * Content-Security-Policy that forbids loading anything.  Every string from
 * the report is HTML-escaped and its invalid UTF-8 replaced (log lines are
 * hostile).  Memory is bounded by one event: the report text is walked
 * (json_walk) and parsed one event at a time, once per section.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../collectors/logwatch/logline.h"
#include "../lib/buf.h"
#include "../lib/json.h"
#include "../lib/utf8.h"
#include "report_html.h"
#include "report_html_int.h"

const char *const rh_sev_name[RH_SEV_N] = {
	"critical", "error", "warning", "info", "other"
};

/* ---- writing ------------------------------------------------------------- */

void
rh_put(struct rh *r, const char *s)
{
	fputs(s, r->out);
}

void
rh_printf(struct rh *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(r->out, fmt, ap);
	va_end(ap);
}

/*
 * s[0..n) as HTML text (also safe inside a quoted attribute): & < > " '
 * escaped, control characters but tab and newline as U+FFFD, every byte
 * that does not start a valid UTF-8 sequence as U+FFFD.
 */
void
rh_esc(struct rh *r, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run;
	size_t	 k;

	while (p < end) {
		for (run = p; p < end && *p >= 0x20 && *p < 0x7f && *p != '&' &&
		    *p != '<' && *p != '>' && *p != '"' && *p != '\''; p++)
			;
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), r->out);
		if (p >= end)
			break;
		switch (*p) {
		case '&':	rh_put(r, "&amp;"); break;
		case '<':	rh_put(r, "&lt;"); break;
		case '>':	rh_put(r, "&gt;"); break;
		case '"':	rh_put(r, "&quot;"); break;
		case '\'':	rh_put(r, "&#39;"); break;
		case '\t':	rh_put(r, "\t"); break;
		case '\n':	rh_put(r, "\n"); break;
		default:
			k = *p >= 0x80 ? utf8_seq(p, (size_t)(end - p)) : 0;
			if (k > 0) {
				fwrite(p, 1, k, r->out);
				p += k;
				continue;
			}
			rh_put(r, "\xef\xbf\xbd");
			break;
		}
		p++;
	}
}

void
rh_escs(struct rh *r, const char *s)
{
	rh_esc(r, s, strlen(s));
}

/* The value of a node as text: a string unescaped, any other value as
 * written; NULL when absent.  Cut to max bytes (0 = whole) at a
 * sequence boundary, "…" added. */
const char *
rh_text(struct rh *r, const struct json_doc *d, int node, size_t max)
{
	size_t	 n;

	if (node < 0)
		return NULL;
	buf_reset(&r->tmp);
	if (d->n[node].type == JSON_STR) {
		if (!json_str_buf(d, node, &r->tmp))
			buf_puts(&r->tmp, "(too long)");
	} else if (buf_append(&r->tmp, d->n[node].s, d->n[node].len) == -1)
		buf_puts(&r->tmp, "(too long)");
	if (r->tmp.data == NULL)
		buf_puts(&r->tmp, "");
	if (max > 0 && r->tmp.len > max) {
		n = utf8_cut(r->tmp.data, r->tmp.len, max);
		r->tmp.len = n;
		r->tmp.data[n] = '\0';
		buf_puts(&r->tmp, "\xe2\x80\xa6");
	}
	return r->tmp.data;
}

/* Write a node's text escaped (nothing when absent). */
void
rh_esc_node(struct rh *r, const struct json_doc *d, int node, size_t max)
{
	const char *t = rh_text(r, d, node, max);

	if (t != NULL)
		rh_esc(r, t, r->tmp.len);
}

/* ms since the epoch as "YYYY-MM-DD HH:MM:SS.mmm" UTC (fmt: a strftime
 * format; with_ms adds the milliseconds). */
void
rh_time(char *out, size_t outlen, int64_t ms, const char *fmt, bool with_ms)
{
	time_t	 t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	struct tm tm;
	size_t	 n;

	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(out, outlen, "?");
		return;
	}
	n = strftime(out, outlen, fmt, &tm);
	if (with_ms && n < outlen)
		snprintf(out + n, outlen - n, ".%03d", (int)(((ms % 1000) + 1000) % 1000));
}

/* ---- reading ------------------------------------------------------------- */

int
rh_sev_of(const struct json_doc *d)
{
	int	 node = json_get(d, 0, "esxwatch_severity"), i;

	for (i = 0; i < RH_SEV_OTHER; i++)
		if (json_str_is(d, node, rh_sev_name[i]))
			return i;
	return RH_SEV_OTHER;
}

bool
rh_is_diag_event(const struct json_doc *d)
{
	return json_str_is(d, json_get(d, 0, "esxwatch_collector"), "diagnosis");
}

/* A measurement (sample) or the agent about itself, not a finding (the
 * findings are the alerts and changes, and any event of another kind:
 * none is hidden). */
bool
rh_is_sample(const struct json_doc *d)
{
	int	 k = json_get(d, 0, "esxwatch_kind");

	return json_str_is(d, k, "sample") || json_str_is(d, k, "status");
}

/* An event's timestamp; false when absent or not a number. */
bool
rh_ts(const struct json_doc *d, int64_t *ts)
{
	long long v;

	if (!json_num(d, json_get(d, 0, "timestamp"), &v))
		return false;
	*ts = (int64_t)v;
	return true;
}

/* A node for the JSON string at v[0..n) (quotes included, n >= 2: a
 * string alone, which json_parse does not take). */
void
rh_str_node(struct json_node *one, const char *v, size_t n)
{
	memset(one, 0, sizeof(*one));
	one->type = JSON_STR;
	one->s = v + 1;
	one->len = n - 2;
	one->child = -1;
	one->next = -1;
}

/*
 * Call fn on every element of the array at span (NULL: none), each parsed
 * alone: -1 (errno EINVAL) when the span is not an array or an element is
 * not JSON of the kind wanted (JSON_OBJ, JSON_STR), fn's -1 as is.
 */
int
rh_each(struct rh *r, const struct rh_span *span, enum json_type want,
    int (*fn)(struct rh *, const struct json_doc *, long long idx))
{
	struct json_walk w;
	struct json_doc doc;
	const char *k, *v;
	size_t	 kn, vn;
	long long idx = 0;
	char	 err[128];
	int	 rc, res = 0;

	if (span->p == NULL)
		return 0;
	if (json_walk_init(&w, span->p, span->len) == -1 || w.obj)
		goto bad;
	for (;;) {
		rc = json_walk_next(&w, &k, &kn, &v, &vn);
		if (rc != 1)
			break;
		if (want == JSON_STR) {
			struct json_node one;
			struct json_doc sd = { &one, 1 };

			if (v[0] != '"')
				goto bad;
			rh_str_node(&one, v, vn);
			res = fn(r, &sd, idx++);
		} else {
			if (json_parse(v, vn, &doc, err, sizeof(err)) == -1)
				goto bad;
			if (doc.count < 1 || doc.n[0].type != want) {
				json_free(&doc);
				goto bad;
			}
			res = fn(r, &doc, idx++);
			json_free(&doc);
		}
		if (res == -1)
			return -1;
	}
	if (rc == 0)
		return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* The members of the top object: their spans; -1 if not a report. */
static int
rh_split(struct rh *r)
{
	static const struct { const char *name; size_t off; char open; } m[] = {
		{ "bundle", offsetof(struct rh, bundle), '"' },
		{ "host", offsetof(struct rh, host), '{' },
		{ "events", offsetof(struct rh, events), '[' },
		{ "diagnoses", offsetof(struct rh, diagnoses), '[' },
		{ "logs", offsetof(struct rh, logs), '[' },
		{ "gaps", offsetof(struct rh, gaps), '[' },
	};
	struct json_walk w;
	const char *k, *v;
	size_t	 kn, vn, i;
	int	 rc;

	if (json_walk_init(&w, r->json, r->len) == -1 || !w.obj)
		return -1;
	for (;;) {
		rc = json_walk_next(&w, &k, &kn, &v, &vn);
		if (rc != 1)
			break;
		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			struct rh_span *s = (struct rh_span *)((char *)r + m[i].off);

			if (strlen(m[i].name) != kn || memcmp(m[i].name, k, kn) != 0)
				continue;
			if (v[0] != m[i].open)
				return -1;
			s->p = v;
			s->len = vn;
		}
	}
	if (rc == -1 || r->host.p == NULL || r->events.p == NULL)
		return -1;
	if (json_parse(r->host.p, r->host.len, &r->hostdoc, r->err,
	    sizeof(r->err)) == -1)
		return -1;
	return 0;
}

static void
rh_span_add(struct rh *r, int64_t ts)
{
	if (!r->have_span || ts < r->t0)
		r->t0 = ts;
	if (!r->have_span || ts > r->t1)
		r->t1 = ts;
	r->have_span = true;
}

static int
scan_event(struct rh *r, const struct json_doc *d, long long idx)
{
	int64_t	 ts;

	(void)idx;
	r->nevents++;
	if (r->diagnoses.p != NULL && rh_is_diag_event(d))
		return 0;	/* shown with the diagnoses */
	if (rh_is_sample(d)) {
		r->nsamples++;
		return 0;
	}
	r->nsev[rh_sev_of(d)]++;
	r->nfindings++;
	if (rh_ts(d, &ts))
		rh_span_add(r, ts);
	else
		r->untimed++;
	return 0;
}

static int
scan_diag(struct rh *r, const struct json_doc *d, long long idx)
{
	int64_t	 ts;

	(void)idx;
	r->ndiag++;
	if (rh_ts(d, &ts))
		rh_span_add(r, ts);
	else
		r->untimed++;
	return 0;
}

static int
scan_log(struct rh *r, const struct json_doc *d, long long idx)
{
	static const char *const keys[2] = { "first", "last" };
	int64_t	 ts;
	int	 i, node;

	(void)idx;
	r->nlogs++;
	for (i = 0; i < 2; i++) {
		node = json_get(d, 0, keys[i]);
		if (node >= 0 && d->n[node].type == JSON_STR &&
		    logline_iso8601(d->n[node].s, d->n[node].len, &ts) > 0)
			rh_span_add(r, ts);
	}
	return 0;
}

static int
scan_gap(struct rh *r, const struct json_doc *d, long long idx)
{
	(void)d;
	(void)idx;
	r->ngaps++;
	return 0;
}

/* Every section read once before a byte is written: a bad report writes
 * nothing. */
static int
rh_scan(struct rh *r)
{
	if (rh_each(r, &r->events, JSON_OBJ, scan_event) == -1 ||
	    rh_each(r, &r->diagnoses, JSON_OBJ, scan_diag) == -1 ||
	    rh_each(r, &r->logs, JSON_OBJ, scan_log) == -1 ||
	    rh_each(r, &r->gaps, JSON_STR, scan_gap) == -1)
		return -1;
	if (r->have_span && r->t1 - r->t0 < 60000) {
		/* one instant (or nearly): a minute around it */
		int64_t mid = r->t0 / 2 + r->t1 / 2;

		r->t0 = mid - 30000;
		r->t1 = mid + 30000;
	}
	return 0;
}

/* ---- the file ------------------------------------------------------------ */

int
report_html_write(FILE *out, const char *json, size_t len)
{
	struct rh *r;
	int	 rc = -1, saved;

	if (out == NULL || json == NULL) {
		errno = EINVAL;
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -1;
	r->out = out;
	r->json = json;
	r->len = len;
	buf_init(&r->tmp, 0);
	errno = 0;
	if (rh_split(r) == -1 || rh_scan(r) == -1) {
		errno = EINVAL;
		goto done;
	}
	if (rh_write_all(r) == -1) {
		if (errno == 0)
			errno = EINVAL;
		goto done;
	}
	if (fflush(out) == EOF || ferror(out)) {
		if (errno == 0)
			errno = EIO;
		goto done;
	}
	rc = 0;
done:
	saved = errno;
	json_free(&r->hostdoc);
	buf_free(&r->tmp);
	free(r);
	errno = saved;
	return rc;
}
