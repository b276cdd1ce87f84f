/*
 * buf: growable, bounded byte buffers and the JSON/UTF-8 helpers every
 * encoder shares.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void
buf_init(struct buf *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->limit = limit;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int
buf_reserve(struct buf *b, size_t extra)
{
	size_t limit = b->limit ? b->limit : BUF_DEFAULT_LIMIT;
	size_t need, ncap;
	char *p;

	if (extra > limit || b->len > limit - extra) {
		errno = ENOBUFS;
		return -1;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap *= 2;
	if (ncap > limit + 1)
		ncap = limit + 1;
	p = realloc(b->data, ncap);
	if (p == NULL)
		return -1;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) == -1)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_putc(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

int
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || buf_reserve(b, (size_t)n) == -1)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

char *
buf_steal(struct buf *b)
{
	char *p = b->data;

	if (p == NULL)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

/*
 * Length of the valid UTF-8 sequence at s[0..n), or 0 if it is invalid
 * (overlong forms, surrogates and code points past U+10FFFF included).
 */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	unsigned int cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

#define REPLACEMENT "\xef\xbf\xbd"

int
buf_utf8_valid(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, l;

	while (i < n) {
		l = p[i] ? utf8_seq(p + i, n - i) : 0;
		if (l) {
			i += l;
			continue;
		}
		if (buf_append(b, s + start, i - start) == -1 ||
		    buf_append(b, REPLACEMENT, 3) == -1)
			return -1;
		i++;
		start = i;
	}
	return buf_append(b, s + start, i - start);
}

size_t
utf8_cut(const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i;

	if (n <= max)
		return n;
	i = max;
	/* Back up over continuation bytes to a sequence start. */
	while (i > 0 && (p[i] & 0xc0) == 0x80)
		i--;
	return i;
}

int
buf_json_str(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, l;
	char esc[7];

	if (buf_reserve(b, n + 2) == -1 || buf_putc(b, '"') == -1)
		return -1;
	while (i < n) {
		unsigned char c = p[i];
		const char *rep = NULL;
		size_t replen = 0;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			l = utf8_seq(p + i, n - i);
			if (l) {
				i += l;
				continue;
			}
			rep = REPLACEMENT;
			replen = 3;
		} else if (c == '"') {
			rep = "\\\"";
			replen = 2;
		} else if (c == '\\') {
			rep = "\\\\";
			replen = 2;
		} else if (c == '\n') {
			rep = "\\n";
			replen = 2;
		} else if (c == '\r') {
			rep = "\\r";
			replen = 2;
		} else if (c == '\t') {
			rep = "\\t";
			replen = 2;
		} else {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			rep = esc;
			replen = 6;
		}
		if (buf_append(b, s + start, i - start) == -1 ||
		    buf_append(b, rep, replen) == -1)
			return -1;
		i++;
		start = i;
	}
	if (buf_append(b, s + start, i - start) == -1)
		return -1;
	return buf_putc(b, '"');
}
