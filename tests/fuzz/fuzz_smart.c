/* libFuzzer target for collectors/host/smartparse.c: the same bytes go through
 * the smartctl JSON reader, the --scan parser and (via esxcli_parse) the
 * SMART table and NVMe log interpreters.  None may crash, leak or read out
 * of bounds; the results must be in range, and a normalised score (4-column
 * tables) never also appears as a temperature or hours.  Seeds beyond the fixtures:
 * tests/fuzz/seeds/smart/ (an ATA smartctl JSON, a --scan output). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/host/esxcli.h"
#include "../../collectors/host/smartparse.h"

static void
check(const struct smart_info *si)
{
	if (memchr(si->health_text, '\0', sizeof(si->health_text)) == NULL ||
	    memchr(si->model, '\0', sizeof(si->model)) == NULL ||
	    memchr(si->serial, '\0', sizeof(si->serial)) == NULL ||
	    (int)si->health < SMART_UNKNOWN || si->health > SMART_FAILED)
		abort();
	if (si->temperature_c < SMART_NONE || si->power_on_hours < SMART_NONE)
		abort();
	if (smart_health_name(smart_health_of(si->health_text)) == NULL)
		abort();
	/* A normalised score is never also reported with a unit. */
	if (si->nnorm > SMART_MAX_NORM)
		abort();
	for (size_t i = 0; i < si->nnorm; i++) {
		const char *n = si->norm[i].name;

		if (memchr(n, '\0', sizeof(si->norm[i].name)) == NULL ||
		    n[0] < 'a' || n[0] > 'z' || strspn(n,
		    "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(n))
			abort();
		if ((strcmp(n, "drive_temperature") == 0 &&
		    si->temperature_c != SMART_NONE) ||
		    (strcmp(n, "power_on_hours") == 0 &&
		    si->power_on_hours != SMART_NONE))
			abort();
	}
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
	char	*z;

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
	/* the bytes as a health text (esxcli's and smartctl's words) */
	if ((z = malloc(size + 1)) == NULL)
		return 0;
	memcpy(z, data, size);
	z[size] = '\0';
	if (smart_health_name(smart_health_of(z)) == NULL)
		abort();
	free(z);
	return 0;
}
