/*
 * crc: zlib's CRC-32, folded with carry-less multiplication where the CPU
 * has it (see crc.h).
 *
 * The method is Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ Instruction" (Gopal et al., 2009), in its bit-reflected
 * form: four 128-bit lanes fold 64 bytes at a time (x^512 and x^576 mod
 * P), the lanes fold into one (x^128, x^192), the rest folds 16 bytes at
 * a time, then 128 bits reduce to 64 (x^96), to 32 (x^64) and a Barrett
 * reduction gives the remainder.  The constants below are those powers
 * of x modulo the CRC-32 polynomial 0x104C11DB7, bit-reflected and
 * shifted by one, with P' and the Barrett quotient mu' = x^64 div P.
 */
#include <stdint.h>
#include <zlib.h>

#include "crc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_FOLD 1
#include <cpuid.h>
#include <immintrin.h>

#define TARGET __attribute__((target("pclmul,sse4.1")))

/* x^(4*128+32) and x^(4*128-32): one 64-byte stride of four lanes */
static const uint64_t K_LANES[2] = { 0x154442bd4ULL, 0x1c6e41596ULL };
/* x^(128+32) and x^(128-32): one 16-byte stride */
static const uint64_t K_ONE[2] = { 0x1751997d0ULL, 0x0ccaa009eULL };
/* x^64: 64 bits to 32 */
static const uint64_t K_64 = 0x163cd6124ULL;
/* P' and mu' for the Barrett reduction */
static const uint64_t K_BARRETT[2] = { 0x1db710641ULL, 0x1f7011641ULL };

/* a * the constants' low (lo) and high half, folded onto next */
TARGET static inline __m128i
fold(__m128i a, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(a, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(a, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo), next);
}

TARGET static inline __m128i
load(const unsigned char *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/*
 * The CRC register (not inverted) over p[0..n), n a multiple of 16 and
 * at least 64.
 */
TARGET static uint32_t
crc_fold(uint32_t reg, const unsigned char *p, size_t n)
{
	__m128i k = _mm_loadu_si128((const __m128i *)(const void *)K_LANES);
	__m128i mask32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m128i x[4], t;

	for (int i = 0; i < 4; i++)
		x[i] = load(p + 16 * i);
	x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)reg));
	p += 64;
	n -= 64;
	for (; n >= 64; p += 64, n -= 64)
		for (int i = 0; i < 4; i++)
			x[i] = fold(x[i], k, load(p + 16 * i));

	k = _mm_loadu_si128((const __m128i *)(const void *)K_ONE);
	t = x[0];
	for (int i = 1; i < 4; i++)
		t = fold(t, k, x[i]);
	for (; n >= 16; p += 16, n -= 16)
		t = fold(t, k, load(p));

	/* 128 bits to 64: the low half times x^96 onto the high half */
	t = _mm_xor_si128(_mm_srli_si128(t, 8), _mm_clmulepi64_si128(t, k, 0x10));
	/* 64 to 32: the low 32 bits times x^64 onto the rest */
	k = _mm_cvtsi64_si128((long long)K_64);
	t = _mm_xor_si128(_mm_srli_si128(t, 4),
	    _mm_clmulepi64_si128(_mm_and_si128(t, mask32), k, 0x00));
	/* Barrett: q = (t mod x^32) * mu', then t ^ (q mod x^32) * P' */
	k = _mm_loadu_si128((const __m128i *)(const void *)K_BARRETT);
	{
		__m128i q = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), k, 0x10);

		q = _mm_clmulepi64_si128(_mm_and_si128(q, mask32), k, 0x00);
		t = _mm_xor_si128(t, q);
	}
	return (uint32_t)_mm_extract_epi32(t, 1);
}

static int
cpu_folds(void)
{
	static int have = -1;	/* racy but idempotent: every thread finds the same */
	unsigned a, b, c, d;
	int h;

	h = __atomic_load_n(&have, __ATOMIC_RELAXED);
	if (h >= 0)
		return h;
	h = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) && (c & bit_SSE4_1);
	__atomic_store_n(&have, h, __ATOMIC_RELAXED);
	return h;
}
#endif

/* zlib's crc32 over any length (its lengths are uInt) */
static uint32_t
crc_zlib(uint32_t crc, const unsigned char *p, size_t n)
{
	uLong c = crc;

	while (n > 0) {
		uInt part = n > 1u << 30 ? 1u << 30 : (uInt)n;

		c = crc32(c, p, part);
		p += part;
		n -= part;
	}
	return (uint32_t)c;
}

uint32_t
crc_update_zlib(uint32_t crc, const void *buf, size_t len)
{
	return crc_zlib(crc, buf, len);
}

uint32_t
crc_update(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

#ifdef CRC_FOLD
	if (len >= CRC_FOLD_MIN && cpu_folds()) {
		size_t whole = len & ~(size_t)15;

		crc = ~crc_fold(~crc, p, whole);
		p += whole;
		len -= whole;
	}
#endif
	return len > 0 ? crc_zlib(crc, p, len) : crc;
}

bool
crc_folds(void)
{
#ifdef CRC_FOLD
	return cpu_folds() != 0;
#else
	return false;
#endif
}
