/*
 * spoolrec: the spool's record format and the scan of a segment image.
 * Pure functions: no I/O, no state (the fuzz target drives them).
 *
 * Every record is
 *
 *	magic "ESPL" | length u32 | sequence u64 | crc32 u32 | payload
 *
 * (little endian; the CRC, zlib's crc32, covers length, sequence and
 * payload; the payload is event_serialize()'s form).  The magic lets a
 * reader resynchronise after a damaged record; the sequence number, one per
 * event and never reused, lets the spool count exactly how many records a
 * damaged region or a dropped segment held.
 */
#ifndef ESXWATCH_SPOOLREC_H
#define ESXWATCH_SPOOLREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_REC_MAGIC		0x4c505345u	/* "ESPL" read as little endian */
#define SPOOL_REC_HDR		20
#define SPOOL_REC_MAX		(8u * 1024 * 1024)	/* payload bound */

uint32_t	 spoolrec_get32(const unsigned char *);
/* How many sequences of [a, b) lie in [lo, hi). */
uint64_t	 spoolrec_overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi);
/* Fill the header at hdr for the payload that follows it (hdr + SPOOL_REC_HDR). */
void		 spoolrec_seal(unsigned char *hdr, size_t plen, uint64_t seq);
/*
 * Is there a valid record at data[0..avail)?  Returns its payload length
 * (>= 0) or -1.  A length that runs past avail is not valid: a record is
 * whole or it is not there.
 */
long		 spoolrec_valid(const unsigned char *data, size_t avail, uint64_t *seq);

/* The state of a scan over consecutive segment images. */
struct spoolrec_scan {
	uint64_t	expected;	/* next sequence expected, 0 = unknown */
	uint64_t	corrupt;
	uint64_t	regions;
	uint64_t	first, last;	/* sequences seen */
	/*
	 * Records of this image.  A sequence gap is counted wherever it is,
	 * also right at a segment boundary: the budget drops the oldest
	 * segment and moves its cursors on, so consecutive segments on disk
	 * hold consecutive records, and a gap between two is a segment cut
	 * at a record boundary or deleted.
	 */
	uint64_t	nrec;
	/* optional: a gap [a, b) seen; returns how many of it to count (the
	 * rest an earlier run counted already: dropcounts.h) */
	uint64_t	(*gap)(void *arg, uint64_t a, uint64_t b);
	void		*gap_arg;
};

typedef int (*spool_rec_fn)(void *arg, uint64_t seq, const void *payload, size_t len);

/* Walk one image with the scan state sc; returns the offset just past the
 * last valid record (or past the record at which cb returned non-zero). */
size_t		 spoolrec_scan(const unsigned char *data, size_t len, spool_rec_fn cb,
		    void *arg, struct spoolrec_scan *sc);

/*
 * Walk the records of one segment image (a file's bytes).  cb gets each
 * valid record (sequence, payload); damaged regions are skipped by
 * resynchronising on the next valid header.  Returns the offset just past
 * the last valid record; *corrupt_records (if not NULL) gets the number of
 * records the damaged regions held (from the sequence gaps) and
 * *bad_regions the number of damaged regions.  Used at start and by the
 * fuzz target.
 */
size_t		 spoolrec_scan_image(const unsigned char *data, size_t len,
		    spool_rec_fn cb, void *arg, uint64_t *corrupt_records,
		    uint64_t *bad_regions);

#endif
