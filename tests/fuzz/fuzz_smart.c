/* libFuzzer target for collectors/smartparse.c: the same bytes go through
 * the smartctl JSON reader, the --scan parser and (via esxcli_parse) the
 * SMART table and NVMe log interpreters.  None may crash, leak or read out
 * of bounds; the results must be in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/esxcli.h"
#include "../../collectors/smartparse.h"

static void
check(const struct smart_info *si)
{
	if (memchr(si->health_text, '\0', sizeof(si->health_text)) == NULL ||
	    (int)si->health < SMART_UNKNOWN || si->health > SMART_FAILED)
		abort();
	if (si->temperature_c < SMART_NONE || si->power_on_hours < SMART_NONE)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct smart_info si;
	struct smart_scan_dev devs[4];
	struct esx_out o;
	char	 err[256];
	int	 st = size > 0 ? data[0] : 0;

	if (smart_from_smartctl(s, size, st, &si, err, sizeof(err)) == 0)
		check(&si);
	if (smart_from_smartctl(s, size, -1, &si, err, sizeof(err)) == 0)
		check(&si);
	if (smart_scan_parse(s, size, devs, 4) > 4)
		abort();
	if (esxcli_parse(s, size, &o, err, sizeof(err)) == 0) {
		if (smart_from_table(&o, size & 1, &si, err, sizeof(err)) == 0)
			check(&si);
		if (smart_from_nvme_log(&o, &si, err, sizeof(err)) == 0)
			check(&si);
		esx_out_free(&o);
	}
	return 0;
}
