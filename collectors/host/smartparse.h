/*
 * smartparse: turn what ESXi and smartmontools say about a drive into one
 * plain struct smart_info.
 *
 *   esxcli storage core device smart get -d DEV   a table of 4 columns
 *	(Parameter Value Threshold Worst, ESXi 5.x/6.x) or 5 (+ Raw, 7.0+);
 *	parsed by esxcli_parse(), interpreted here by parameter name.
 *   esxcli nvme device log smart get -A vmhbaN     a block: booleans for
 *	the critical-warning bits, temperatures in Kelvin, counters in hex.
 *   smartctl --json -a DEV                          JSON, read with the small
 *	bounded tolerant JSON reader below (no JSON library dependency).
 *   smartctl --scan                                 "/dev/sda -d sat # ..."
 *
 * Which number is which (docs/events.md, "smart"):
 *   - a numeric Raw column is the real value; Drive Temperature's Raw is a
 *     packed attribute on 8.x (38654705694 = 30 (0 9 0 0 0)): its low byte
 *     is the temperature.  ESXi 7.0.x prints only the low byte of every Raw
 *     value (raw_lowbyte): then the temperature is still right, counters are
 *     reported modulo 256 (a growth is still seen) and the power-on hours,
 *     which are almost always above 255, are not reported at all.
 *   - without Raw (4 columns, or Raw N/A), a row with a Worst is an ATA
 *     attribute and its Value the drive's *normalised* score (1..253,
 *     vendor-defined direction and scale; a Crucial SSD at 34 C shows 66,
 *     a WD disk 116).  It is never reported as a temperature, hours or a
 *     count: it goes to norm[] (esxwatch_<parameter>_normalized) and the
 *     unit-carrying fields stay absent.  A row without a Worst (NVMe) has
 *     real values in Value: those are reported as such.
 */
#ifndef ESXWATCH_SMARTPARSE_H
#define ESXWATCH_SMARTPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../agent/lib/json.h"

struct esx_out;

enum smart_health {
	SMART_UNKNOWN = 0,
	SMART_OK,
	SMART_WARNING,
	SMART_IMPENDING,
	SMART_FAILED
};

/* NVMe critical-warning bits (NVMe base spec, SMART log byte 0). */
#define NVME_CW_SPARE		0x01
#define NVME_CW_TEMPERATURE	0x02
#define NVME_CW_RELIABILITY	0x04
#define NVME_CW_READ_ONLY	0x08
#define NVME_CW_VOLATILE	0x10

#define SMART_NONE	(-1LL)	/* a value the drive did not report */
#define SMART_MAX_NORM	24	/* normalised values kept per drive */

/* A normalised score where no raw value exists ("drive_temperature", 66). */
struct smart_norm {
	char		name[48];	/* parameter as a field-name part */
	long long	value;
};

struct smart_info {
	enum smart_health health;
	char		health_text[96];	/* as the tool said it ("OK", "IMPENDING FAILURE") */
	long long	temperature_c;
	long long	max_temperature_c;	/* the drive's rated maximum */
	long long	power_on_hours;
	long long	reallocated_sectors;
	long long	pending_sectors;
	long long	uncorrectable_errors;
	long long	uncorrectable_sectors;	/* extension: offline uncorrectable */
	long long	media_wearout;		/* normalised life left, 100 = new */
	long long	percentage_used;	/* NVMe */
	long long	available_spare;	/* NVMe, % */
	long long	critical_warning;	/* NVMe bit mask */
	/* the vSAN health service only (VsanSmartParameterType
	 * smartreaderrorcount, smartwriteerrorcount) */
	long long	read_errors;
	long long	write_errors;
	long long	power_cycles;	/* Power Cycle Count's real count */
	int		layout;			/* esxcli table: 4 or 5 columns; 0 otherwise */
	bool		raw_lowbyte;
	struct smart_norm norm[SMART_MAX_NORM];
	size_t		nnorm;
	char		model[96];		/* smartctl: model_name */
	char		serial[64];
};

/* One drive of a host that answers every drive's SMART at once
 * (host_smart(), host/host.h): its values, or why it has none. */
struct host_smart {
	char			disk[192];	/* the device name (naa., t10., ...) */
	char			error[256];	/* "" or the host's reason */
	const char		*source;	/* esxwatch_smart_source ("vsan-health") */
	struct smart_info	si;
};

void		 smart_info_init(struct smart_info *);
/* "OK" -> ok, "WARNING" -> warning, "IMPENDING FAILURE" -> impending,
 * "FAILED"/"FAILURE"/"FAILING" -> failed, case-insensitive; "", "N/A",
 * "Unknown" -> unknown; any other text -> warning. */
enum smart_health smart_health_of(const char *text);
/* ok, warning, impending_failure, failed, unknown (esxwatch_health). */
const char	*smart_health_name(enum smart_health);

/*
 * `smart get` table, already parsed by esxcli_parse.  Returns 0, or -1 with
 * a reason (not a SMART table: no Parameter/Value columns, no rows).
 */
int		 smart_from_table(const struct esx_out *, bool raw_lowbyte,
		    struct smart_info *, char *err, size_t errlen);
/* `nvme device log smart get -A vmhbaN`, parsed by esxcli_parse. */
int		 smart_from_nvme_log(const struct esx_out *, struct smart_info *,
		    char *err, size_t errlen);
/*
 * smartctl --json -a output and smartctl's exit status (a bit mask,
 * smartctl(8) "RETURN VALUES").  Returns -1 with a reason when smartctl
 * could not read the device at all (bits 0-1, or no usable JSON).
 */
int		 smart_from_smartctl(const char *json, size_t len, int exit_status,
		    struct smart_info *, char *err, size_t errlen);

/* One device from `smartctl --scan`. */
struct smart_scan_dev {
	char	path[256];
	char	type[64];	/* the -d argument, "" if none */
};
/* Returns the number of devices (at most max), -1 on output that is not a
 * scan (no line starts with '/'; empty output = 0). */
int		 smart_scan_parse(const char *text, size_t len,
		    struct smart_scan_dev *devs, int max);


#endif
