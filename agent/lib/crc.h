/*
 * crc: zlib's CRC-32 (the same values as crc32() of zlib, chained the
 * same way: crc_update(crc_update(0, a, n), b, m) is the CRC of a then b),
 * computed by folding 16 bytes at a time with carry-less multiplication
 * (PCLMULQDQ) on an x86-64 CPU that has it, by zlib otherwise.  The spool
 * records' CRCs and the gzip trailers of the bodies shipped use it: on a
 * host that ships every line it was an eighth of the agent's CPU.
 */
#ifndef ESXWATCH_CRC_H
#define ESXWATCH_CRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Below this many bytes zlib's tables are as fast. */
#define CRC_FOLD_MIN	64

uint32_t	crc_update(uint32_t crc, const void *buf, size_t len);
/* zlib alone, whatever the CPU (the tests compare the two) */
uint32_t	crc_update_zlib(uint32_t crc, const void *buf, size_t len);
/* Does crc_update() fold on this CPU? */
bool		crc_folds(void);

#endif
