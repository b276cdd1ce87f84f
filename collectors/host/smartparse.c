/*
 * smartparse: SMART from esxcli tables, the NVMe health log and smartctl's
 * JSON (see smartparse.h for which number is taken from where, and why).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "esxcli.h"
#include "smartparse.h"

void
smart_info_init(struct smart_info *si)
{
	memset(si, 0, sizeof(*si));
	si->health = SMART_UNKNOWN;
	si->temperature_c = SMART_NONE;
	si->max_temperature_c = SMART_NONE;
	si->power_on_hours = SMART_NONE;
	si->reallocated_sectors = SMART_NONE;
	si->pending_sectors = SMART_NONE;
	si->uncorrectable_errors = SMART_NONE;
	si->uncorrectable_sectors = SMART_NONE;
	si->media_wearout = SMART_NONE;
	si->percentage_used = SMART_NONE;
	si->available_spare = SMART_NONE;
	si->critical_warning = SMART_NONE;
	si->read_errors = SMART_NONE;
	si->write_errors = SMART_NONE;
	si->power_cycles = SMART_NONE;
}

static void
copy_trim(char *dst, size_t dstlen, const char *s)
{
	size_t	 n, i, o = 0;

	if (dstlen == 0)
		return;
	dst[0] = '\0';
	if (s == NULL)
		return;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	for (i = 0; i < n && o + 1 < dstlen; i++)
		if ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f)
			dst[o++] = s[i];
	dst[o] = '\0';
}

enum smart_health
smart_health_of(const char *text)
{
	char	 t[96];

	copy_trim(t, sizeof(t), text);
	if (t[0] == '\0')
		return SMART_UNKNOWN;
	if (strcasecmp(t, "OK") == 0 || strcasecmp(t, "PASSED") == 0 ||
	    strcasecmp(t, "GOOD") == 0)
		return SMART_OK;
	if (strcasestr(t, "IMPENDING") != NULL)
		return SMART_IMPENDING;
	if (strcasestr(t, "FAIL") != NULL)
		return SMART_FAILED;
	if (strcasestr(t, "WARN") != NULL)
		return SMART_WARNING;
	/*
	 * ESXi's spellings of a bad health are not all known: any other
	 * word than OK / N/A / Unknown is taken as a warning, not ignored.
	 */
	if (strcasecmp(t, "N/A") == 0 || strcasecmp(t, "UNKNOWN") == 0 ||
	    strcmp(t, "-") == 0)
		return SMART_UNKNOWN;
	return SMART_WARNING;
}

const char *
smart_health_name(enum smart_health h)
{
	switch (h) {
	case SMART_OK:		return "ok";
	case SMART_WARNING:	return "warning";
	case SMART_IMPENDING:	return "impending_failure";
	case SMART_FAILED:	return "failed";
	default:		return "unknown";
	}
}

/*
 * The leading unsigned number of s: decimal, or hex with 0x.  Trailing
 * units ("312 K", "100 %", "0 Mins") are allowed; "N/A", "", "-3" are not
 * numbers.  Values above 2^62 are refused rather than wrapped.
 */
static bool
lead_num(const char *s, long long *out)
{
	unsigned long long v = 0;
	int	 base = 10, digits = 0;

	if (s == NULL)
		return false;
	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		int d;

		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			break;
		if (v > (1ULL << 62) / (unsigned)base)
			return false;
		v = v * (unsigned)base + (unsigned)d;
		digits++;
	}
	if (digits == 0)
		return false;
	while (isspace((unsigned char)*s))
		s++;
	/* A number followed by more digits-with-punctuation ("1.5", "12/3")
	 * is not the plain count we want. */
	if (*s == '.' || *s == '/' || *s == ',')
		return false;
	*out = (long long)v;
	return true;
}

/* A cell that is entirely a number (no unit). */
static bool
cell_num(const char *s, long long *out)
{
	const char *p;

	if (s == NULL)
		return false;
	for (p = s; isspace((unsigned char)*p); p++)
		;
	for (; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p) && !isspace((unsigned char)*p))
			return false;
	return lead_num(s, out);
}

static bool
is_na(const char *s)
{
	char	 t[16];

	copy_trim(t, sizeof(t), s);
	return s == NULL || t[0] == '\0' || strcasecmp(t, "N/A") == 0;
}

/* ---- esxcli storage core device smart get ---------------------------- */

struct smart_row {
	const char	*value, *threshold, *worst, *raw;
	bool		 has_raw_col;
};

/* The real count of a counter row: Raw when numeric, else Value when the
 * row has no Worst (NVMe-style real values), else nothing. */
static bool
row_count(const struct smart_row *r, long long *out)
{
	if (cell_num(r->raw, out))
		return true;
	if (is_na(r->worst) && cell_num(r->value, out))
		return true;
	return false;
}

/*
 * "Power-on Hours" -> "power_on_hours": lower case, runs of anything else
 * than [a-z0-9] as one '_'.  False when nothing is left.
 */
static bool
param_slug(const char *param, char *out, size_t outlen)
{
	size_t o = 0;
	bool sep = false;

	for (; *param != '\0' && o + 2 < outlen; param++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*param);

		if (isalnum(c) && c < 0x80) {
			if (sep && o > 0)
				out[o++] = '_';
			out[o++] = (char)c;
			sep = false;
		} else
			sep = true;
	}
	out[o] = '\0';
	return o > 0 && !isdigit((unsigned char)out[0]);
}

/*
 * Value is the drive's normalised score: the row has a Worst (an ATA
 * attribute) and no numeric Raw.  It is kept as such, never as a unit.
 */
static bool
row_normalised(struct smart_info *si, const char *param, const struct smart_row *r)
{
	long long v;

	if (cell_num(r->raw, &v) || is_na(r->worst))
		return false;
	if (cell_num(r->value, &v) && si->nnorm < SMART_MAX_NORM &&
	    param_slug(param, si->norm[si->nnorm].name,
	    sizeof(si->norm[si->nnorm].name))) {
		si->norm[si->nnorm].value = v;
		si->nnorm++;
	}
	return true;
}

static void
table_row(struct smart_info *si, const char *param, const struct smart_row *r)
{
	long long v;

#define P(s)	(strcasecmp(param, (s)) == 0)
	if (!P("Health Status") && !P("Media Wearout Indicator") &&
	    row_normalised(si, param, r))
		return;
	if (P("Health Status")) {
		copy_trim(si->health_text, sizeof(si->health_text), r->value);
		si->health = is_na(r->value) ? SMART_UNKNOWN :
		    smart_health_of(r->value);
	} else if (P("Drive Temperature")) {
		/* 8.x packs the whole attribute into Raw: the low byte is
		 * the current temperature (also right under 7.0.3). */
		if (cell_num(r->raw, &v))
			si->temperature_c = v & 0xff;
		else if (cell_num(r->value, &v))
			si->temperature_c = v;
	} else if (P("Driver Rated Max Temperature") ||
	    P("Drive Rated Max Temperature")) {
		if (cell_num(r->raw, &v))
			si->max_temperature_c = v & 0xff;
		else if (cell_num(r->value, &v))
			si->max_temperature_c = v;
	} else if (P("Power-on Hours")) {
		if (cell_num(r->raw, &v)) {
			if (!si->raw_lowbyte)
				si->power_on_hours = v;
		} else if (cell_num(r->value, &v))
			si->power_on_hours = v;
	} else if (P("Power Cycle Count")) {
		/* like the hours: a low byte is no count of cycles */
		if (row_count(r, &v) && !(si->raw_lowbyte && cell_num(r->raw, &v)))
			si->power_cycles = v;
	} else if (P("Reallocated Sector Count")) {
		if (row_count(r, &v))
			si->reallocated_sectors = v;
	} else if (P("Pending Sector Reallocation Count") ||
	    P("Current Pending Sector Count")) {
		if (row_count(r, &v))
			si->pending_sectors = v;
	} else if (P("Uncorrectable Error Count")) {
		if (row_count(r, &v))
			si->uncorrectable_errors = v;
	} else if (P("Uncorrectable Sector Count")) {
		if (row_count(r, &v))
			si->uncorrectable_sectors = v;
	} else if (P("Media Wearout Indicator")) {
		/* The normalised value is the life left; Raw is vendor junk. */
		if (cell_num(r->value, &v))
			si->media_wearout = v;
	}
#undef P
}

/*
 * A parameter printed both as a normalised score and as a reading (a
 * table with the row twice, one with a Worst): the reading cannot be
 * trusted either, and is left out.
 */
static void
distrust_normalised(struct smart_info *si)
{
	for (size_t i = 0; i < si->nnorm; i++) {
		const char *n = si->norm[i].name;

		if (strcmp(n, "drive_temperature") == 0)
			si->temperature_c = SMART_NONE;
		else if (strcmp(n, "driver_rated_max_temperature") == 0 ||
		    strcmp(n, "drive_rated_max_temperature") == 0)
			si->max_temperature_c = SMART_NONE;
		else if (strcmp(n, "power_on_hours") == 0)
			si->power_on_hours = SMART_NONE;
	}
}

int
smart_from_table(const struct esx_out *o, bool raw_lowbyte, struct smart_info *si,
    char *err, size_t errlen)
{
	size_t	 i, rows = 0;

	smart_info_init(si);
	si->raw_lowbyte = raw_lowbyte;
	if (o == NULL || o->shape != ESX_TABLE || o->n == 0) {
		snprintf(err, errlen, "not a SMART table (no rows)");
		return -1;
	}
	si->layout = esx_get(&o->recs[0], "Raw") != NULL ? 5 : 4;
	for (i = 0; i < o->n; i++) {
		const struct esx_rec *rec = &o->recs[i];
		const char *param = esx_get(rec, "Parameter");
		struct smart_row r;

		if (param == NULL || esx_get(rec, "Value") == NULL) {
			snprintf(err, errlen,
			    "not a SMART table (no Parameter/Value columns)");
			return -1;
		}
		r.value = esx_get(rec, "Value");
		r.threshold = esx_get(rec, "Threshold");
		r.worst = esx_get(rec, "Worst");
		r.raw = esx_get(rec, "Raw");
		r.has_raw_col = r.raw != NULL;
		table_row(si, param, &r);
		rows++;
	}
	if (rows == 0) {
		snprintf(err, errlen, "not a SMART table (no rows)");
		return -1;
	}
	distrust_normalised(si);
	/* Every table esxcli prints starts with Health Status; without it
	 * the output was cut short, and no health may be claimed. */
	if (si->health_text[0] == '\0') {
		snprintf(err, errlen, "no Health Status row (truncated output?)");
		return -1;
	}
	return 0;
}

/* ---- esxcli nvme device log smart get ---------------------------------- */

static bool
is_true(const char *s)
{
	char	 t[16];

	copy_trim(t, sizeof(t), s);
	return strcasecmp(t, "true") == 0 || strcmp(t, "1") == 0;
}

/* The NVMe log's numeric fields into si; returns how many were there. */
static int
nvme_counters(const struct esx_rec *r, struct smart_info *si)
{
	long long n;
	int	 seen = 0;

	/* Kelvin on the wire; 0 K means "no sensor", and anything below
	 * freezing is not a reading either. */
	if (lead_num(esx_get(r, "Composite Temperature"), &n) && n >= 273) {
		si->temperature_c = n - 273;
		seen++;
	}
	if (lead_num(esx_get(r, "Available Spare"), &n)) {
		si->available_spare = n;
		seen++;
	}
	if (lead_num(esx_get(r, "Percentage Used"), &n)) {
		si->percentage_used = n;
		seen++;
	}
	if (lead_num(esx_get(r, "Power On Hours"), &n)) {
		si->power_on_hours = n;
		seen++;
	}
	if (lead_num(esx_get(r, "Media Errors"), &n)) {
		si->uncorrectable_errors = n;
		seen++;
	}
	return seen;
}

int
smart_from_nvme_log(const struct esx_out *o, struct smart_info *si, char *err,
    size_t errlen)
{
	static const struct { const char *key; long long bit; } cw[] = {
		{ "Available Spare Space Below Threshold", NVME_CW_SPARE },
		{ "Temperature Warning", NVME_CW_TEMPERATURE },
		{ "NVM Subsystem Reliability Degradation", NVME_CW_RELIABILITY },
		{ "Read Only Mode", NVME_CW_READ_ONLY },
		{ "Volatile Memory Backup Device Failure", NVME_CW_VOLATILE },
	};
	const struct esx_rec *r;
	const char *v;
	size_t	 i;
	int	 seen = 0;

	smart_info_init(si);
	if (o == NULL || o->n == 0 || (o->shape != ESX_BLOCK && o->shape != ESX_KEYED)) {
		snprintf(err, errlen, "not an NVMe SMART log (no fields)");
		return -1;
	}
	r = &o->recs[0];
	si->critical_warning = 0;
	for (i = 0; i < sizeof(cw) / sizeof(cw[0]); i++) {
		v = esx_get(r, cw[i].key);
		if (v == NULL)
			continue;
		seen++;
		if (is_true(v))
			si->critical_warning |= cw[i].bit;
	}
	seen += nvme_counters(r, si);
	if (seen == 0) {
		snprintf(err, errlen, "not an NVMe SMART log (no known fields)");
		return -1;
	}
	/* The five warning booleans come first: a log without all of them
	 * was cut short, and no health may be claimed from it. */
	for (i = 0; i < sizeof(cw) / sizeof(cw[0]); i++)
		if (esx_get(r, cw[i].key) == NULL) {
			snprintf(err, errlen, "incomplete NVMe SMART log (no \"%s\")",
			    cw[i].key);
			return -1;
		}
	/* What the critical-warning bits mean for the drive's health. */
	if (si->critical_warning & (NVME_CW_READ_ONLY | NVME_CW_VOLATILE))
		si->health = SMART_FAILED;
	else if (si->critical_warning & (NVME_CW_RELIABILITY | NVME_CW_SPARE))
		si->health = SMART_IMPENDING;
	else if (si->critical_warning & NVME_CW_TEMPERATURE)
		si->health = SMART_WARNING;
	else
		si->health = SMART_OK;
	if (si->critical_warning == 0)
		snprintf(si->health_text, sizeof(si->health_text), "OK");
	else {
		size_t	 off = 0;

		for (i = 0; i < sizeof(cw) / sizeof(cw[0]); i++) {
			int w;

			if (!(si->critical_warning & cw[i].bit))
				continue;
			w = snprintf(si->health_text + off,
			    sizeof(si->health_text) - off, "%s%s",
			    off ? "; " : "", cw[i].key);
			if (w < 0 || (size_t)w >= sizeof(si->health_text) - off)
				break;
			off += (size_t)w;
		}
	}
	return 0;
}

/* ---- smartctl --json -a ----------------------------------------------------- */

/* A count or reading from smartctl: a non-negative number, else absent. */
static bool
json_count(const struct json_doc *d, int node, long long *out)
{
	long long v;

	if (!json_num(d, node, &v) || v < 0)
		return false;
	*out = v;
	return true;
}

static void
smartctl_attr(const struct json_doc *d, int tab, struct smart_info *si)
{
	long long id, raw, val;
	int	 a;

	for (a = d->n[tab].child; a >= 0; a = d->n[a].next) {
		if (!json_count(d, json_get(d, a, "id"), &id))
			continue;
		if (!json_count(d, json_get(d, a, "raw.value"), &raw))
			raw = SMART_NONE;
		if (!json_count(d, json_get(d, a, "value"), &val))
			val = SMART_NONE;
		switch (id) {
		case 5:
			if (raw >= 0)
				si->reallocated_sectors = raw;
			break;
		case 197:
			if (raw >= 0)
				si->pending_sectors = raw;
			break;
		case 187:
			if (raw >= 0)
				si->uncorrectable_errors = raw;
			break;
		case 198:
			if (raw >= 0)
				si->uncorrectable_sectors = raw;
			break;
		case 194:
			if (si->temperature_c == SMART_NONE && raw >= 0)
				si->temperature_c = raw & 0xff;
			break;
		case 9:
			if (si->power_on_hours == SMART_NONE && raw >= 0)
				si->power_on_hours = raw & 0xffffffffLL;
			break;
		case 233:	/* Media_Wearout_Indicator (Intel) */
		case 177:	/* Wear_Leveling_Count (Samsung) */
		case 231:	/* SSD_Life_Left */
			if (si->media_wearout == SMART_NONE && val >= 0)
				si->media_wearout = val;
			break;
		default:
			break;
		}
	}
}

static void
smartctl_nvme(const struct json_doc *d, int log, struct smart_info *si)
{
	long long v;

	if (json_count(d, json_get(d, log, "critical_warning"), &v))
		si->critical_warning = v;
	if (si->temperature_c == SMART_NONE &&
	    json_count(d, json_get(d, log, "temperature"), &v))
		si->temperature_c = v;
	if (json_count(d, json_get(d, log, "available_spare"), &v))
		si->available_spare = v;
	if (json_count(d, json_get(d, log, "percentage_used"), &v))
		si->percentage_used = v;
	if (si->power_on_hours == SMART_NONE &&
	    json_count(d, json_get(d, log, "power_on_hours"), &v))
		si->power_on_hours = v;
	if (json_count(d, json_get(d, log, "media_errors"), &v))
		si->uncorrectable_errors = v;
}

/* The first smartctl message, for an error line. */
static void
smartctl_message(const struct json_doc *d, char *out, size_t outlen)
{
	int	 m = json_get(d, 0, "smartctl.messages");

	out[0] = '\0';
	if (m >= 0 && d->n[m].type == JSON_ARR && d->n[m].child >= 0)
		(void)json_str(d, json_get(d, d->n[m].child, "string"), out, outlen);
}

int
smart_from_smartctl(const char *text, size_t len, int exit_status,
    struct smart_info *si, char *err, size_t errlen)
{
	struct json_doc d;
	char	 jerr[128], msg[160];
	long long v;
	bool	 passed, have_passed;
	int	 n;

	smart_info_init(si);
	if (json_parse(text, len, &d, jerr, sizeof(jerr)) == -1) {
		snprintf(err, errlen, "smartctl output unreadable: %s", jerr);
		return -1;
	}
	if (d.n[0].type != JSON_OBJ) {
		snprintf(err, errlen, "smartctl output is not a JSON object");
		goto err;
	}
	if (exit_status < 0 &&
	    json_num(&d, json_get(&d, 0, "smartctl.exit_status"), &v))
		exit_status = (int)(v & 0xff);
	if (exit_status < 0)
		exit_status = 0;
	/* Bits 0-1: bad command line, or the device could not be opened or
	 * identified; nothing below is about the drive. */
	if (exit_status & 0x03) {
		smartctl_message(&d, msg, sizeof(msg));
		snprintf(err, errlen, "smartctl could not read the device (exit "
		    "status %d)%s%s", exit_status, msg[0] ? ": " : "", msg);
		goto err;
	}
	(void)json_str(&d, json_get(&d, 0, "model_name"), si->model, sizeof(si->model));
	(void)json_str(&d, json_get(&d, 0, "serial_number"), si->serial,
	    sizeof(si->serial));
	if (json_count(&d, json_get(&d, 0, "temperature.current"), &v))
		si->temperature_c = v;
	if (json_count(&d, json_get(&d, 0, "temperature.drive_trip"), &v) && v > 0)
		si->max_temperature_c = v;
	else if (json_count(&d, json_get(&d, 0,
	    "nvme_composite_temperature_threshold.critical"), &v) && v > 0)
		si->max_temperature_c = v;
	if (json_count(&d, json_get(&d, 0, "power_on_time.hours"), &v))
		si->power_on_hours = v;
	n = json_get(&d, 0, "ata_smart_attributes.table");
	if (n >= 0 && d.n[n].type == JSON_ARR)
		smartctl_attr(&d, n, si);
	n = json_get(&d, 0, "nvme_smart_health_information_log");
	if (n >= 0 && d.n[n].type == JSON_OBJ)
		smartctl_nvme(&d, n, si);
	if (json_count(&d, json_get(&d, 0, "scsi_grown_defect_list"), &v))
		si->reallocated_sectors = v;

	have_passed = json_bool(&d, json_get(&d, 0, "smart_status.passed"), &passed);
	/* smartctl(8) RETURN VALUES: 3 disk failing, 4 prefail attribute at
	 * or below threshold now, 5-7 past threshold / error logs. */
	if ((exit_status & 0x08) || (have_passed && !passed)) {
		si->health = SMART_FAILED;
		snprintf(si->health_text, sizeof(si->health_text), "FAILED");
	} else if (exit_status & 0x10) {
		si->health = SMART_IMPENDING;
		snprintf(si->health_text, sizeof(si->health_text),
		    "PASSED, prefail attribute at or below threshold");
	} else if (exit_status & 0xe0) {
		si->health = SMART_WARNING;
		snprintf(si->health_text, sizeof(si->health_text), "PASSED, %s",
		    (exit_status & 0x20) ? "attribute below threshold in the past" :
		    (exit_status & 0x40) ? "device error log has errors" :
		    "self-test log has errors");
	} else if (have_passed) {
		si->health = SMART_OK;
		snprintf(si->health_text, sizeof(si->health_text), "PASSED");
	} else {
		si->health = SMART_UNKNOWN;
		snprintf(si->health_text, sizeof(si->health_text), "no SMART status");
	}
	json_free(&d);
	return 0;
err:
	json_free(&d);
	return -1;
}

/* ---- smartctl --scan --------------------------------------------------------- */

int
smart_scan_parse(const char *text, size_t len, struct smart_scan_dev *devs, int max)
{
	const char *p = text, *end = text + len;
	int	 n = 0, lines = 0;

	while (p < end) {
		const char *le = memchr(p, '\n', (size_t)(end - p)), *t, *te;
		const char *dash;
		size_t	 tl;

		if (le == NULL)
			le = end;
		t = p;
		p = le < end ? le + 1 : le;
		while (t < le && isspace((unsigned char)*t))
			t++;
		if (t == le || *t == '#')
			continue;
		lines++;
		if (*t != '/')
			continue;
		for (te = t; te < le && !isspace((unsigned char)*te) && *te != '#'; te++)
			;
		tl = (size_t)(te - t);
		if (n >= max || tl >= sizeof(devs[0].path))
			continue;
		memcpy(devs[n].path, t, tl);
		devs[n].path[tl] = '\0';
		devs[n].type[0] = '\0';
		/* "-d TYPE" before the comment. */
		for (dash = te; dash + 3 < le && *dash != '#'; dash++) {
			if (dash[0] == '-' && dash[1] == 'd' && dash[2] == ' ') {
				const char *ts = dash + 3, *tend;

				while (ts < le && *ts == ' ')
					ts++;
				for (tend = ts; tend < le && !isspace((unsigned char)*tend) &&
				    *tend != '#'; tend++)
					;
				tl = (size_t)(tend - ts);
				if (tl < sizeof(devs[n].type)) {
					memcpy(devs[n].type, ts, tl);
					devs[n].type[tl] = '\0';
				}
				break;
			}
		}
		n++;
	}
	if (n == 0 && lines > 0)
		return -1;
	return n;
}
