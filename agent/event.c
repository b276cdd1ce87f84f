/*
 * event: construction, validation, JSON and the queue's binary form.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"
#include "json.h"
#include "log.h"
#include "utf8.h"

#define FIELD_NAME_MAX	128

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A copy of s[0..n) as valid UTF-8, cut to max bytes with the marker. */
static char *
clean_text(const char *s, size_t n, size_t max)
{
	struct buf b;
	size_t keep;

	buf_init(&b, 0);
	if (utf8_repair(&b, s, n) == -1) {
		buf_free(&b);
		return NULL;
	}
	if (b.len > max) {
		keep = utf8_cut(b.data, b.len, max - strlen(EVENT_TRUNC_MARKER));
		b.len = keep;
		if (buf_puts(&b, EVENT_TRUNC_MARKER) == -1) {
			buf_free(&b);
			return NULL;
		}
	}
	return buf_steal(&b);
}

struct event *
event_new(int64_t ts_ms, const char *text)
{
	struct event *ev = calloc(1, sizeof(*ev));

	if (ev == NULL)
		return NULL;
	ev->timestamp_ms = ts_ms ? ts_ms : now_ms();
	if (text == NULL)
		text = "";
	ev->text = clean_text(text, strlen(text), EVENT_TEXT_MAX);
	if (ev->text == NULL) {
		free(ev);
		return NULL;
	}
	return ev;
}

struct event *
event_vnewf(int64_t ts_ms, const char *fmt, va_list ap)
{
	struct buf b;
	struct event *ev;

	buf_init(&b, 0);
	if (buf_vprintf(&b, fmt, ap) == -1) {
		buf_free(&b);
		return NULL;
	}
	ev = event_new(ts_ms, b.data ? b.data : "");
	buf_free(&b);
	return ev;
}

struct event *
event_newf(int64_t ts_ms, const char *fmt, ...)
{
	struct event *ev;
	va_list ap;

	va_start(ap, fmt);
	ev = event_vnewf(ts_ms, fmt, ap);
	va_end(ap);
	return ev;
}

void
event_free(struct event *ev)
{
	size_t i;

	if (ev == NULL)
		return;
	for (i = 0; i < ev->nfields; i++) {
		free(ev->fields[i].name);
		free(ev->fields[i].value);
	}
	free(ev->fields);
	free(ev->text);
	free(ev);
}

struct event *
event_dup(const struct event *ev)
{
	struct event *d = event_new(ev->timestamp_ms, "");
	size_t i;

	if (d == NULL)
		return NULL;
	if (event_set_text(d, ev->text) == -1)
		goto err;
	for (i = 0; i < ev->nfields; i++)
		if (event_set(d, ev->fields[i].name, ev->fields[i].value) == -1)
			goto err;
	return d;
err:
	event_free(d);
	return NULL;
}

int
event_set_text(struct event *ev, const char *text)
{
	char *t = clean_text(text, strlen(text), EVENT_TEXT_MAX);

	if (t == NULL)
		return -1;
	free(ev->text);
	ev->text = t;
	return 0;
}

bool
field_name_valid(const char *name)
{
	size_t i;

	if (name == NULL || name[0] == '\0' || strlen(name) > FIELD_NAME_MAX)
		return false;
	if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
		return false;
	for (i = 1; name[i]; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	/* Log Insight reserves these. */
	return strcmp(name, "text") != 0 && strcmp(name, "timestamp") != 0 &&
	    strcmp(name, "source") != 0 && strcmp(name, "event_type") != 0;
}

/*
 * The name rules VMware's own clients apply to tag and field names:
 * lower case, every character outside [a-z0-9_] becomes '_', a leading
 * digit gets a '_' before it; a name Log Insight reserves (text,
 * timestamp, source, event_type) gets a '_' before it too.  Returns 0
 * when the name was already valid, 1 when it was changed, -1 when nothing
 * usable is left (empty, or longer than FIELD_NAME_MAX).
 */
int
field_name_normalize(const char *in, char *out, size_t outlen)
{
	size_t i, o = 0;
	unsigned char ch;

	if (in == NULL || in[0] == '\0' || outlen < 2)
		return -1;
	if (in[0] >= '0' && in[0] <= '9')
		out[o++] = '_';
	for (i = 0; in[i] != '\0'; i++) {
		if (o + 1 >= outlen || o >= FIELD_NAME_MAX)
			return -1;
		ch = (unsigned char)in[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (unsigned char)(ch - 'A' + 'a');
		else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '_';
		out[o++] = (char)ch;
	}
	out[o] = '\0';
	if (!field_name_valid(out)) {
		if (o + 2 > outlen || o + 1 > FIELD_NAME_MAX)
			return -1;
		memmove(out + 1, out, o + 1);
		out[0] = '_';
	}
	return strcmp(in, out) == 0 ? 0 : 1;
}

static struct field *
find_field(const struct event *ev, const char *name)
{
	size_t i;

	for (i = 0; i < ev->nfields; i++)
		if (strcmp(ev->fields[i].name, name) == 0)
			return &ev->fields[i];
	return NULL;
}

int
event_set(struct event *ev, const char *name, const char *value)
{
	struct field *f;
	char *v;

	if (!field_name_valid(name)) {
		log_error("internal: invalid event field name '%s'", name ? name : "(null)");
		return -1;
	}
	if (value == NULL)
		value = "";
	v = clean_text(value, strlen(value), EVENT_TEXT_MAX);
	if (v == NULL)
		return -1;
	f = find_field(ev, name);
	if (f != NULL) {
		free(f->value);
		f->value = v;
		return 0;
	}
	if (ev->nfields == ev->cap) {
		size_t ncap = ev->cap ? ev->cap * 2 : 16;
		struct field *nf = realloc(ev->fields, ncap * sizeof(*nf));

		if (nf == NULL) {
			free(v);
			return -1;
		}
		ev->fields = nf;
		ev->cap = ncap;
	}
	f = &ev->fields[ev->nfields];
	f->name = strdup(name);
	if (f->name == NULL) {
		free(v);
		return -1;
	}
	f->value = v;
	ev->nfields++;
	return 0;
}

int
event_setf(struct event *ev, const char *name, const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	int r;

	buf_init(&b, 0);
	va_start(ap, fmt);
	r = buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (r == 0)
		r = event_set(ev, name, b.data ? b.data : "");
	buf_free(&b);
	return r;
}

int
event_set_i64(struct event *ev, const char *name, int64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return event_set(ev, name, s);
}

int
event_set_default(struct event *ev, const char *name, const char *value)
{
	if (find_field(ev, name) != NULL)
		return 0;
	return event_set(ev, name, value);
}

void
event_unset(struct event *ev, const char *name)
{
	struct field *f = find_field(ev, name);
	size_t i;

	if (f == NULL)
		return;
	i = (size_t)(f - ev->fields);
	free(f->name);
	free(f->value);
	memmove(&ev->fields[i], &ev->fields[i + 1],
	    (ev->nfields - i - 1) * sizeof(*f));
	ev->nfields--;
}

const char *
event_get(const struct event *ev, const char *name)
{
	struct field *f = find_field(ev, name);

	return f ? f->value : NULL;
}

int
event_to_json(const struct event *ev, struct buf *out)
{
	size_t i;

	if (buf_printf(out, "{\"timestamp\":%" PRId64 ",\"text\":", ev->timestamp_ms) == -1 ||
	    json_put_str(out, ev->text, strlen(ev->text)) == -1)
		return -1;
	for (i = 0; i < ev->nfields; i++) {
		const struct field *f = &ev->fields[i];

		if (buf_putc(out, ',') == -1 ||
		    json_put_str(out, f->name, strlen(f->name)) == -1 ||
		    buf_putc(out, ':') == -1 ||
		    json_put_str(out, f->value, strlen(f->value)) == -1)
			return -1;
	}
	return buf_putc(out, '}');
}

/*
 * Binary form: version byte 1, timestamp (8 bytes LE), text length (4) and
 * bytes, field count (4), then per field name length (2), name, value
 * length (4), value.  Only ever read back by this same code, but it comes
 * from disk, so event_deserialize() checks every length.
 */
static int
put_u(struct buf *b, uint64_t v, int n)
{
	unsigned char s[8];
	int i;

	for (i = 0; i < n; i++)
		s[i] = (unsigned char)(v >> (8 * i));
	return buf_append(b, s, (size_t)n);
}

int
event_serialize(const struct event *ev, struct buf *out)
{
	size_t i, tl = strlen(ev->text);

	if (buf_putc(out, 1) == -1 || put_u(out, (uint64_t)ev->timestamp_ms, 8) == -1 ||
	    put_u(out, tl, 4) == -1 || buf_append(out, ev->text, tl) == -1 ||
	    put_u(out, ev->nfields, 4) == -1)
		return -1;
	for (i = 0; i < ev->nfields; i++) {
		size_t nl = strlen(ev->fields[i].name), vl = strlen(ev->fields[i].value);

		if (put_u(out, nl, 2) == -1 || buf_append(out, ev->fields[i].name, nl) == -1 ||
		    put_u(out, vl, 4) == -1 || buf_append(out, ev->fields[i].value, vl) == -1)
			return -1;
	}
	return 0;
}

struct reader {
	const unsigned char	*p;
	size_t			 left;
};

static int
get_u(struct reader *r, int n, uint64_t *v)
{
	int i;

	if (r->left < (size_t)n)
		return -1;
	*v = 0;
	for (i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	r->left -= (size_t)n;
	return 0;
}

static char *
get_str(struct reader *r, uint64_t len)
{
	char *s;

	if (len > r->left || len > EVENT_TEXT_MAX * 4)
		return NULL;
	s = malloc(len + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, r->p, len);
	s[len] = '\0';
	r->p += len;
	r->left -= len;
	return s;
}

struct event *
event_deserialize(const void *data, size_t len)
{
	struct reader r = { data, len };
	struct event *ev = NULL;
	uint64_t v, ts, n, i;
	char *name = NULL, *value = NULL;

	if (get_u(&r, 1, &v) == -1 || v != 1 || get_u(&r, 8, &ts) == -1 ||
	    get_u(&r, 4, &v) == -1)
		goto err;
	value = get_str(&r, v);
	if (value == NULL)
		goto err;
	ev = event_new((int64_t)ts, value);
	free(value);
	value = NULL;
	if (ev == NULL || get_u(&r, 4, &n) == -1 || n > 4096)
		goto err;
	for (i = 0; i < n; i++) {
		if (get_u(&r, 2, &v) == -1)
			goto err;
		name = get_str(&r, v);
		if (name == NULL || get_u(&r, 4, &v) == -1)
			goto err;
		value = get_str(&r, v);
		if (value == NULL)
			goto err;
		if (!field_name_valid(name) || event_set(ev, name, value) == -1)
			goto err;
		free(name);
		free(value);
		name = value = NULL;
	}
	if (r.left != 0)
		goto err;
	return ev;
err:
	free(name);
	free(value);
	event_free(ev);
	return NULL;
}
