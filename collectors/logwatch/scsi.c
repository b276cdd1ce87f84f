/*
 * scsi: SCSI sense keys (key/ASC/ASCQ), host and device statuses as text
 * (see scsi.h).
 */
#include <stddef.h>

#include "scsi.h"

const char *
scsi_sense_text(unsigned key, unsigned asc, unsigned ascq)
{
	static const struct {
		unsigned k, a, q;
		const char *t;
	} tab[] = {
		{ 0x5, 0x25, 0x0, "ILLEGAL REQUEST: LOGICAL UNIT NOT SUPPORTED (PDL)" },
		{ 0x5, 0x24, 0x0, "ILLEGAL REQUEST: INVALID FIELD IN CDB" },
		{ 0x5, 0x20, 0x0, "ILLEGAL REQUEST: INVALID COMMAND OPERATION CODE" },
		{ 0x6, 0x29, 0x0, "UNIT ATTENTION: POWER ON, RESET, OR BUS DEVICE RESET OCCURRED" },
		{ 0x6, 0x28, 0x0, "UNIT ATTENTION: NOT READY TO READY CHANGE" },
		{ 0x6, 0x2a, 0x9, "UNIT ATTENTION: CAPACITY DATA HAS CHANGED" },
		{ 0x6, 0x3f, 0xe, "UNIT ATTENTION: REPORTED LUNS DATA HAS CHANGED" },
		{ 0x2, 0x4, 0x3, "NOT READY: LOGICAL UNIT NOT READY, MANUAL INTERVENTION REQUIRED" },
		{ 0x2, 0x4, 0xa, "NOT READY: ASYMMETRIC ACCESS STATE TRANSITION" },
		{ 0x2, 0x3a, 0x0, "NOT READY: MEDIUM NOT PRESENT" },
		{ 0x3, 0x11, 0x0, "MEDIUM ERROR: UNRECOVERED READ ERROR" },
		{ 0x3, 0x0, 0x0, "MEDIUM ERROR" },
		{ 0x4, 0x44, 0x0, "HARDWARE ERROR: INTERNAL TARGET FAILURE" },
		{ 0x4, 0x4c, 0x0, "HARDWARE ERROR: LOGICAL UNIT FAILED SELF-CONFIGURATION (PDL)" },
		{ 0x4, 0x3e, 0x3, "HARDWARE ERROR: LOGICAL UNIT FAILED SELF-TEST (PDL)" },
		{ 0x4, 0x3e, 0x1, "HARDWARE ERROR: LOGICAL UNIT FAILURE (PDL)" },
		{ 0xb, 0x0, 0x0, "ABORTED COMMAND" },
		{ 0xb, 0x47, 0x0, "ABORTED COMMAND: SCSI PARITY ERROR" },
		{ 0xe, 0x1d, 0x0, "MISCOMPARE DURING VERIFY (ATS heartbeat miscompare)" },
		{ 0x7, 0x27, 0x0, "DATA PROTECT: WRITE PROTECTED" },
		{ 0x0, 0x0, 0x0, "NO SENSE" },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].k == key && tab[i].a == asc && tab[i].q == ascq)
			return tab[i].t;
	return NULL;
}

const char *
scsi_host_status_text(unsigned h)
{
	static const char *const tab[] = {
		"OK", "NO_CONNECT", "BUS_BUSY", "TIME_OUT", "BAD_TARGET",
		"ABORT", "PARITY", "ERROR", "RESET", "BAD_INTR",
		"PASSTHROUGH", "SOFT_ERROR (requeue)", "IMM_RETRY", "REQUEUE",
		"TRANSPORT_DISRUPTED", "TRANSPORT_FAILFAST",
	};

	return h < sizeof(tab) / sizeof(tab[0]) ? tab[h] : NULL;
}

const char *
scsi_device_status_text(unsigned d)
{
	switch (d) {
	case 0x0:	return "GOOD";
	case 0x2:	return "CHECK CONDITION";
	case 0x8:	return "BUSY";
	case 0x18:	return "RESERVATION CONFLICT";
	case 0x28:	return "TASK SET FULL";
	case 0x30:	return "ACA ACTIVE";
	case 0x40:	return "TASK ABORTED";
	}
	return NULL;
}
