/*
 * event: construction, validation, JSON and the queue's binary form.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/utf8.h"

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

/*
 * The arena: chunks of string bytes, newest first.  The first chunk and
 * the first EV_INLINE_FIELDS fields share the event's own allocation.
 */
struct event_chunk {
	struct event_chunk	*next;
	size_t			 len, cap;
	bool			 inline_;	/* part of the event's block */
	char			 data[];
};

#define EV_INLINE_FIELDS	16
#define EV_CHUNK0		1024
#define EV_CHUNK_MAX		(64 * 1024)

/* An event block with room for nf fields and a first chunk of cap bytes. */
static struct event *
event_block(size_t nf, size_t cap)
{
	size_t fo = sizeof(struct event), co = fo + nf * sizeof(struct field);
	struct event *ev;
	struct event_chunk *c;

	co = (co + _Alignof(struct event_chunk) - 1) &
	    ~(size_t)(_Alignof(struct event_chunk) - 1);
	ev = malloc(co + sizeof(*c) + cap);
	if (ev == NULL)
		return NULL;
	memset(ev, 0, sizeof(*ev));
	ev->fields = (struct field *)(void *)((char *)ev + fo);
	ev->cap = nf;
	ev->fields_inline = true;
	c = (struct event_chunk *)(void *)((char *)ev + co);
	c->next = NULL;
	c->len = 0;
	c->cap = cap;
	c->inline_ = true;
	ev->arena = c;
	return ev;
}

static char *
arena_alloc(struct event *ev, size_t n)
{
	struct event_chunk *c = ev->arena;
	char *p;

	if (c == NULL || c->cap - c->len < n) {
		size_t cap = c != NULL && c->cap < EV_CHUNK_MAX ? c->cap * 2 : EV_CHUNK0;

		if (cap < n)
			cap = n;
		c = malloc(sizeof(*c) + cap);
		if (c == NULL)
			return NULL;
		c->len = 0;
		c->cap = cap;
		c->inline_ = false;
		c->next = ev->arena;
		ev->arena = c;
	}
	p = c->data + c->len;
	c->len += n;
	return p;
}

static char *
arena_strndup(struct event *ev, const char *s, size_t n)
{
	char *p = arena_alloc(ev, n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* A value for the arena: valid UTF-8, cut to EVENT_TEXT_MAX. */
static char *
arena_value(struct event *ev, const char *value)
{
	size_t n = strlen(value);
	char *t, *v;

	if (n <= EVENT_TEXT_MAX && utf8_valid(value, n))
		return arena_strndup(ev, value, n);
	t = clean_text(value, n, EVENT_TEXT_MAX);
	if (t == NULL)
		return NULL;
	v = arena_strndup(ev, t, strlen(t));
	free(t);
	return v;
}

/* A malloc()ed copy of text, valid UTF-8, cut to EVENT_TEXT_MAX. */
static char *
own_text(const char *text)
{
	size_t n = strlen(text);
	char *t;

	if (n <= EVENT_TEXT_MAX && utf8_valid(text, n)) {
		t = malloc(n + 1);
		if (t != NULL)
			memcpy(t, text, n + 1);
		return t;
	}
	return clean_text(text, n, EVENT_TEXT_MAX);
}

struct event *
event_new(int64_t ts_ms, const char *text)
{
	struct event *ev = event_block(EV_INLINE_FIELDS, EV_CHUNK0);

	if (ev == NULL)
		return NULL;
	ev->timestamp_ms = ts_ms ? ts_ms : now_ms();
	ev->text = own_text(text != NULL ? text : "");
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
	struct event_chunk *c, *n;

	if (ev == NULL)
		return;
	for (c = ev->arena; c != NULL; c = n) {
		n = c->next;
		if (!c->inline_)
			free(c);
	}
	if (!ev->fields_inline)
		free(ev->fields);
	if (!ev->text_inline)
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
	char *t = own_text(text);

	if (t == NULL)
		return -1;
	if (!ev->text_inline)
		free(ev->text);
	ev->text = t;
	ev->text_inline = false;
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
		if (ev->fields[i].name[0] == name[0] &&
		    strcmp(ev->fields[i].name, name) == 0)
			return &ev->fields[i];
	return NULL;
}

static int
fields_grow(struct event *ev)
{
	size_t ncap = ev->cap ? ev->cap * 2 : EV_INLINE_FIELDS;
	struct field *nf;

	if (ev->fields_inline) {
		nf = malloc(ncap * sizeof(*nf));
		if (nf != NULL && ev->nfields > 0)
			memcpy(nf, ev->fields, ev->nfields * sizeof(*nf));
	} else
		nf = realloc(ev->fields, ncap * sizeof(*nf));
	if (nf == NULL)
		return -1;
	ev->fields = nf;
	ev->cap = ncap;
	ev->fields_inline = false;
	return 0;
}

/* A new last field: name (already where it lives) = a copy of value. */
static int
append_field(struct event *ev, char *name, const char *value)
{
	char *v;

	if (name == NULL || (ev->nfields == ev->cap && fields_grow(ev) == -1))
		return -1;
	v = arena_value(ev, value);
	if (v == NULL)
		return -1;
	ev->fields[ev->nfields].name = name;
	ev->fields[ev->nfields].value = v;
	ev->nfields++;
	return 0;
}

/* event_set() once the name is known to be valid. */
static int
set_valid(struct event *ev, const char *name, const char *value)
{
	struct field *f;
	size_t vl;
	char *v;

	if (value == NULL)
		value = "";
	f = find_field(ev, name);
	if (f != NULL) {
		/* a value no longer than the old one takes its place */
		vl = strlen(value);
		if (vl <= strlen(f->value) && utf8_valid(value, vl)) {
			memmove(f->value, value, vl + 1);
			return 0;
		}
		v = arena_value(ev, value);
		if (v == NULL)
			return -1;
		f->value = v;
		return 0;
	}
	return append_field(ev, arena_strndup(ev, name, strlen(name)), value);
}

int
event_set(struct event *ev, const char *name, const char *value)
{
	if (!field_name_valid(name)) {
		log_error("internal: invalid event field name '%s'", name ? name : "(null)");
		return -1;
	}
	return set_valid(ev, name, value);
}

#if defined(__SANITIZE_ADDRESS__) || defined(ESXWATCH_DEBUG)
#define ASSERT_BUILTIN(n)	assert(field_name_valid(n))
#define ASSERT_ABSENT(ev, n)	assert(find_field(ev, n) == NULL)
#else
#define ASSERT_BUILTIN(n)	((void)0)
#define ASSERT_ABSENT(ev, n)	((void)0)
#endif

int
event_set_builtin(struct event *ev, const char *name, const char *value)
{
	ASSERT_BUILTIN(name);
	return set_valid(ev, name, value);
}

int
event_add_builtin(struct event *ev, const char *name, const char *value)
{
	ASSERT_BUILTIN(name);
	ASSERT_ABSENT(ev, name);
	/* static: never written or freed */
	return append_field(ev, (char *)(uintptr_t)name, value != NULL ? value : "");
}

int
event_set_builtin_default(struct event *ev, const char *name, const char *value)
{
	ASSERT_BUILTIN(name);
	if (find_field(ev, name) != NULL)
		return 0;
	return set_valid(ev, name, value);
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
	/* its bytes stay in the arena until the event is freed */
	i = (size_t)(f - ev->fields);
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
static unsigned char *
put_u(unsigned char *o, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		*o++ = (unsigned char)(v >> (8 * i));
	return o;
}

static unsigned char *
put_bytes(unsigned char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* The size is counted first and reserved once: one growth at most, then
 * plain stores (the spool serializes every event it takes). */
int
event_serialize(const struct event *ev, struct buf *out)
{
	size_t i, tl = strlen(ev->text), need = 1 + 8 + 4 + tl + 4;
	size_t lens_small[2 * 32], *lens = lens_small;
	unsigned char *o;
	int r = -1;

	if (ev->nfields > 32) {
		lens = malloc(2 * ev->nfields * sizeof(*lens));
		if (lens == NULL)
			return -1;
	}
	for (i = 0; i < ev->nfields; i++) {
		lens[2 * i] = strlen(ev->fields[i].name);
		lens[2 * i + 1] = strlen(ev->fields[i].value);
		need += 2 + lens[2 * i] + 4 + lens[2 * i + 1];
	}
	if (buf_reserve(out, need) == -1)
		goto out;
	o = (unsigned char *)out->data + out->len;
	*o++ = 1;
	o = put_u(o, (uint64_t)ev->timestamp_ms, 8);
	o = put_u(o, tl, 4);
	o = put_bytes(o, ev->text, tl);
	o = put_u(o, ev->nfields, 4);
	for (i = 0; i < ev->nfields; i++) {
		o = put_u(o, lens[2 * i], 2);
		o = put_bytes(o, ev->fields[i].name, lens[2 * i]);
		o = put_u(o, lens[2 * i + 1], 4);
		o = put_bytes(o, ev->fields[i].value, lens[2 * i + 1]);
	}
	out->len += need;
	out->data[out->len] = '\0';
	r = 0;
out:
	if (lens != lens_small)
		free(lens);
	return r;
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

/* len bytes of r into s, NUL added (both checked by the caller). */
static void
take_bytes(struct reader *r, char *s, uint64_t len)
{
	memcpy(s, r->p, len);
	s[len] = '\0';
	r->p += len;
	r->left -= len;
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
	take_bytes(r, s, len);
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

/* A string of the spooled form: its bytes copied to o (NUL added). */
static char *
take_str(struct reader *r, int lenbytes, char **o, const char *end)
{
	uint64_t len;
	char *s = *o;

	if (get_u(r, lenbytes, &len) == -1 || len > r->left ||
	    len > EVENT_TEXT_MAX * 4 || (uint64_t)(end - s) < len + 1)
		return NULL;
	take_bytes(r, s, len);
	*o = s + len + 1;
	return s;
}

struct event *
event_decode_spooled(const void *data, size_t len)
{
	struct reader r = { data, len };
	struct event *ev;
	uint64_t v, ts, n, i;
	char *o, *end;

	struct reader t;

	if (get_u(&r, 1, &v) == -1 || v != 1 || get_u(&r, 8, &ts) == -1)
		return NULL;
	/* the field count, after the text: the fields' room comes first */
	t = r;
	if (get_u(&t, 4, &v) == -1 || v > t.left)
		return NULL;
	t.p += v;
	t.left -= (size_t)v;
	if (get_u(&t, 4, &n) == -1 || n > 4096 || n * 6 > t.left)
		return NULL;
	/* every string's bytes and its NUL fit in what its length took */
	ev = event_block((size_t)n, len + 1);
	if (ev == NULL)
		return NULL;
	ev->text_inline = true;
	o = ev->arena->data;
	end = o + ev->arena->cap;
	ev->timestamp_ms = (int64_t)ts;
	ev->text = take_str(&r, 4, &o, end);
	if (ev->text == NULL || get_u(&r, 4, &v) == -1)
		goto err;
	for (i = 0; i < n; i++) {
		struct field *f = &ev->fields[i];

		f->name = take_str(&r, 2, &o, end);
		if (f->name == NULL || f->name[0] == '\0')
			goto err;
		f->value = take_str(&r, 4, &o, end);
		if (f->value == NULL)
			goto err;
		ev->nfields++;
	}
	if (r.left != 0)
		goto err;
	ev->arena->len = (size_t)(o - ev->arena->data);
	return ev;
err:
	event_free(ev);
	return NULL;
}
