/*
 * utf8: the one UTF-8 validator (RFC 3629: no overlong forms, no UTF-16
 * surrogates, nothing past U+10FFFF) and what is built on it.
 */
#ifndef ESXWATCH_UTF8_H
#define ESXWATCH_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/* Length (2..4) of the valid multi-byte sequence at p[0..n), or 0 if it is
 * not one (an ASCII byte included: test p[0] < 0x80 first). */
size_t	 utf8_seq(const unsigned char *p, size_t n);
/* utf8_seq(), and the code point of the sequence in *cp (an ASCII byte
 * is a sequence of 1 here). */
size_t	 utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);
/* Length of the longest valid UTF-8 prefix of s[0..n) (n when it is all
 * valid).  NUL bytes count as valid. */
size_t	 utf8_valid_len(const char *s, size_t n);
/* Is s[0..n) all valid UTF-8?  Skips ASCII eight bytes at a time: the
 * event path asks it of every value. */
bool	 utf8_valid(const char *s, size_t n);
/* Length of the longest prefix of s[0..n) that is at most max bytes and does
 * not end in the middle of a UTF-8 sequence. */
size_t	 utf8_cut(const char *s, size_t n, size_t max);
/*
 * Append s[0..n) to the buffer as valid UTF-8: every byte that does not
 * start a valid sequence is replaced by U+FFFD (EF BF BD), NUL bytes as
 * well.  -1 (buffer unchanged in length) past the buffer's limit.
 */
int	 utf8_repair(struct buf *, const char *s, size_t n);

#endif
