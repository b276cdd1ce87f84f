/*
 * utf8: see utf8.h.  utf8_seq checks the ranges of the second byte instead
 * of decoding the code point: the same answer, fewer operations.
 */
#include <string.h>

#include "buf.h"
#include "utf8.h"

#define REPLACEMENT "\xef\xbf\xbd"

size_t
utf8_seq(const unsigned char *p, size_t n)
{
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (p[0] == 0xe0 && p[1] < 0xa0)	/* overlong */
			return 0;
		if (p[0] == 0xed && p[1] > 0x9f)	/* surrogate */
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if (p[0] == 0xf0 && p[1] < 0x90)	/* overlong */
			return 0;
		if (p[0] == 0xf4 && p[1] > 0x8f)	/* past U+10FFFF */
			return 0;
		return 4;
	}
	return 0;
}

size_t
utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t l;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	l = utf8_seq(p, n);
	if (l == 0)
		return 0;
	/* the lead byte keeps 7 - l bits, each continuation 6 */
	*cp = (uint32_t)(p[0] & (0x7f >> l));
	for (size_t j = 1; j < l; j++)
		*cp = (*cp << 6) | (uint32_t)(p[j] & 0x3f);
	return l;
}

size_t
utf8_valid_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		l = utf8_seq(p + i, n - i);
		if (l == 0)
			return i;
		i += l;
	}
	return n;
}

bool
utf8_valid(const char *s, size_t n)
{
	size_t i = 0;
	uint64_t w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ULL)
			break;
	}
	return utf8_valid_len(s + i, n - i) == n - i;
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
utf8_repair(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, l, len0 = b->len;

	while (i < n) {
		if (p[i] != 0 && p[i] < 0x80) {
			i++;
			continue;
		}
		l = p[i] ? utf8_seq(p + i, n - i) : 0;
		if (l) {
			i += l;
			continue;
		}
		if (buf_append(b, s + start, i - start) == -1 ||
		    buf_append(b, REPLACEMENT, 3) == -1)
			goto full;
		i++;
		start = i;
	}
	if (buf_append(b, s + start, i - start) == 0)
		return 0;
full:
	b->len = len0;
	if (b->data)
		b->data[len0] = '\0';
	return -1;
}
