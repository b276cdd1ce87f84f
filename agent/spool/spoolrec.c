/*
 * spoolrec: record codec and image scan (see spoolrec.h).
 */
#include <string.h>

#include "../lib/crc.h"
#include "spoolrec.h"

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = (v >> 16) & 0xff;
	p[3] = (v >> 24) & 0xff;
}

uint64_t
spoolrec_overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
	if (a < lo)
		a = lo;
	if (b > hi)
		b = hi;
	return b > a ? b - a : 0;
}

uint32_t
spoolrec_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)spoolrec_get32(p) | (uint64_t)spoolrec_get32(p + 4) << 32;
}

static uint32_t
rec_crc(const unsigned char *hdr, const unsigned char *payload, size_t len)
{
	/* zlib's crc32 of length, sequence and payload (crc.h) */
	return crc_update(crc_update(0, hdr + 4, 12), payload, len);
}

long
spoolrec_valid(const unsigned char *data, size_t avail, uint64_t *seq)
{
	uint32_t len;

	if (avail < SPOOL_REC_HDR || spoolrec_get32(data) != SPOOL_REC_MAGIC)
		return -1;
	len = spoolrec_get32(data + 4);
	if (len > SPOOL_REC_MAX || len > avail - SPOOL_REC_HDR)
		return -1;
	if (rec_crc(data, data + SPOOL_REC_HDR, len) != spoolrec_get32(data + 16))
		return -1;
	if (seq != NULL)
		*seq = get64(data + 8);
	return (long)len;
}
size_t
spoolrec_scan(const unsigned char *data, size_t len, spool_rec_fn cb, void *arg,
    struct spoolrec_scan *sc)
{
	size_t off = 0, end = 0;
	bool bad = false;

	while (off + SPOOL_REC_HDR <= len) {
		uint64_t seq;
		long plen = spoolrec_valid(data + off, len - off, &seq);

		if (plen < 0) {
			bad = true;
			off++;
			continue;
		}
		if (bad) {
			sc->regions++;
			if (sc->expected == 0)
				sc->corrupt++;
		}
		if (sc->expected != 0 && seq > sc->expected)
			sc->corrupt += sc->gap != NULL ? sc->gap(sc->gap_arg,
			    sc->expected, seq) : seq - sc->expected;
		if (sc->expected == 0 || seq + 1 > sc->expected)
			sc->expected = seq + 1;
		if (sc->nrec == 0)
			sc->first = seq;
		sc->last = seq;
		sc->nrec++;
		bad = false;
		if (cb != NULL && cb(arg, seq, data + off + SPOOL_REC_HDR, (size_t)plen) != 0)
			return off + SPOOL_REC_HDR + (size_t)plen;
		off += SPOOL_REC_HDR + (size_t)plen;
		end = off;
	}
	return end;
}

size_t
spoolrec_scan_image(const unsigned char *data, size_t len, spool_rec_fn cb,
    void *arg, uint64_t *corrupt_records, uint64_t *bad_regions)
{
	struct spoolrec_scan sc;
	size_t end;

	memset(&sc, 0, sizeof(sc));
	end = spoolrec_scan(data, len, cb, arg, &sc);
	if (end < len)
		sc.regions++;	/* trailing garbage */
	if (corrupt_records != NULL)
		*corrupt_records = sc.corrupt;
	if (bad_regions != NULL)
		*bad_regions = sc.regions;
	return end;
}

/* ---- segments ---------------------------------------------------------- */

void
spoolrec_seal(unsigned char *h, size_t plen, uint64_t seq)
{
	put32(h, SPOOL_REC_MAGIC);
	put32(h + 4, (uint32_t)plen);
	put64(h + 8, seq);
	put32(h + 16, rec_crc(h, h + SPOOL_REC_HDR, plen));
}
