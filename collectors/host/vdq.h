/*
 * vdq: a tolerant parser for ESXi's `vdq -q` (and `vdq -qH`) output, the
 * vSAN disk-eligibility query.
 *
 * `vdq -q` prints something that looks like JSON but is not: irregular
 * indentation, a trailing comma after the last field and after the last
 * record (ESXi 6.5/7), extra keys on 8.x, sometimes no closing ']'.  So
 * this is a scanner for "key" : "value" pairs where '{' and '}' delimit
 * records and everything else (commas, brackets, blank lines) is ignored,
 * never a strict JSON parser.  The human form `vdq -qH` ("DiskResult[N]:"
 * then right-aligned "Key:  value" lines, booleans spelled "IsSSD?") is
 * accepted as well, so either can be fed in.
 *
 * Bounded: at most VDQ_MAX_DISKS records and VDQ_MAX_INPUT bytes; values are
 * cut to VDQ_VAL_MAX bytes.
 */
#ifndef ESXWATCH_VDQ_H
#define ESXWATCH_VDQ_H

#include <stddef.h>

#define VDQ_MAX_DISKS	4096
#define VDQ_MAX_INPUT	(8u * 1024 * 1024)
#define VDQ_VAL_MAX	256

enum vdq_state { VDQ_UNKNOWN, VDQ_ELIGIBLE, VDQ_INELIGIBLE, VDQ_IN_USE };

struct vdq_disk {
	char	name[VDQ_VAL_MAX];		/* device id; never empty */
	char	vsan_uuid[VDQ_VAL_MAX];
	char	state[VDQ_VAL_MAX];		/* as printed: "Ineligible for use by VSAN" */
	char	reason[VDQ_VAL_MAX];		/* "None", "Has partitions", ... */
	char	is_ssd[8];			/* "0"/"1", "" when absent */
	char	is_capacity_flash[8];
	char	is_pdl[8];
	char	size_mb[32];			/* digits only, "" when absent */
	char	format_type[32];
	char	storage_pool_state[VDQ_VAL_MAX];	/* 8.x */
	char	storage_pool_reason[VDQ_VAL_MAX];
	char	is_vsan_direct[8];
};

struct vdq_result {
	struct vdq_disk	*disks;
	size_t		 n;
	size_t		 skipped;	/* records without a usable Name */
};

/*
 * Parse text[0..len).  Returns 0 with res filled (possibly 0 disks for
 * "[ ]" or empty output), -1 with a one-line reason in err for output that
 * is not vdq's (an error message, garbage) or exceeds a bound.
 */
int		 vdq_parse(const char *text, size_t len, struct vdq_result *res,
		    char *err, size_t errlen);
void		 vdq_result_free(struct vdq_result *);

/* Map vdq's State text to a vdq_state; case-insensitive, unknown text =
 * VDQ_UNKNOWN.  "Ineligible ..." is tested before "Eligible ...". */
enum vdq_state	 vdq_state_of(const char *state_text);
/* "eligible", "ineligible", "in_use", "unknown" (the esxwatch_vsan_state values). */
const char	*vdq_state_name(enum vdq_state);

#endif
