/*
 * scsi: the SCSI codes a rule captured (esxwatch_scsi_sense,
 * esxwatch_scsi_host_status, esxwatch_scsi_device_status), decoded into
 * the text fields beside them (engine.c).  A table, not matching: apart
 * from rules.c, which only captures the codes.
 */
#ifndef ESXWATCH_SCSI_H
#define ESXWATCH_SCSI_H

/* Decoded SCSI codes for the hint fields; NULL when unknown. */
const char	*scsi_sense_text(unsigned key, unsigned asc, unsigned ascq);
const char	*scsi_host_status_text(unsigned h);
const char	*scsi_device_status_text(unsigned d);

#endif
