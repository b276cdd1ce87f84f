/* Unit tests for collectors/host/smartparse.c: esxcli SMART tables (4 and 5
 * columns), the NVMe health log, smartctl JSON and --scan, the JSON reader. */
#include "t.h"

#include "../../collectors/host/esxcli.h"
#include "../../collectors/host/smartparse.h"

#define FX "tests/fixtures/esxi/"

static int
table_from(const char *text, size_t len, bool lowbyte, struct smart_info *si,
    char *err, size_t errlen)
{
	struct esx_out o;
	int	 rc;

	if (esxcli_parse(text, len, &o, err, errlen) == -1)
		return -2;
	rc = smart_from_table(&o, lowbyte, si, err, errlen);
	esx_out_free(&o);
	return rc;
}

static int
table_file(const char *path, bool lowbyte, struct smart_info *si)
{
	size_t	 n;
	char	*s = t_slurp(path, &n), err[200];
	int	 rc = table_from(s, n, lowbyte, si, err, sizeof(err));

	if (rc != 0)
		printf("  %s: %s\n", path, err);
	free(s);
	return rc;
}

/* The normalised value of a parameter slug, SMART_NONE if not kept. */
static long long
norm(const struct smart_info *si, const char *name)
{
	for (size_t i = 0; i < si->nnorm; i++)
		if (strcmp(si->norm[i].name, name) == 0)
			return si->norm[i].value;
	return SMART_NONE;
}

TEST(table_4col)
{
	struct smart_info si;

	CHECK_INT(table_file(FX "esxcli-storage-core-device-smart-get/esxi5-6-4col.txt",
	    false, &si), 0);
	CHECK_INT(si.layout, 4);
	CHECK_INT(si.health, SMART_OK);
	CHECK_STR(si.health_text, "OK");
	/* No Raw column: Value is the drive's normalised score (116 for a
	 * disk at about 34 C), never a temperature or hours. */
	CHECK_INT(si.temperature_c, SMART_NONE);
	CHECK_INT(si.power_on_hours, SMART_NONE);
	CHECK_INT(norm(&si, "drive_temperature"), 116);
	CHECK_INT(norm(&si, "power_on_hours"), 70);
	CHECK_INT(norm(&si, "reallocated_sector_count"), 200);
	CHECK_INT(norm(&si, "driver_rated_max_temperature"), SMART_NONE);	/* N/A */
	/* Counters only as normalised scores (they have a Worst): not counts. */
	CHECK_INT(si.reallocated_sectors, SMART_NONE);
	CHECK_INT(si.power_cycles, SMART_NONE);
	CHECK_INT(norm(&si, "power_cycle_count"), 100);
	CHECK_INT(si.max_temperature_c, SMART_NONE);	/* N/A */
	CHECK_INT(si.media_wearout, SMART_NONE);	/* N/A */

	CHECK_INT(table_file(FX "esxcli-storage-core-device-smart-get/esxi55-4col-padded.txt",
	    false, &si), 0);
	CHECK_INT(si.layout, 4);
	CHECK_INT(si.health, SMART_OK);
	CHECK_INT(si.temperature_c, SMART_NONE);
	CHECK_INT(si.power_on_hours, SMART_NONE);
	CHECK_INT(norm(&si, "drive_temperature"), 60);
	CHECK_INT(norm(&si, "power_on_hours"), 99);
	CHECK_INT(norm(&si, "read_sectors_tot_count"), SMART_NONE);	/* N/A */
}

TEST(table_5col_full_raw)
{
	struct smart_info si;

	CHECK_INT(table_file(FX "esxcli-storage-core-device-smart-get/esxi803-sata-hdd-exos.txt",
	    false, &si), 0);
	CHECK_INT(si.layout, 5);
	CHECK_INT(si.health, SMART_OK);
	/* Raw 38654705694 = 0x90000001E: the low byte is 30 C. */
	CHECK_INT(si.temperature_c, 30);
	CHECK_INT(si.power_on_hours, 23065);
	CHECK_INT(si.reallocated_sectors, 0);
	CHECK_INT(si.pending_sectors, 0);
	CHECK_INT(si.uncorrectable_errors, 0);
	CHECK_INT(si.uncorrectable_sectors, 0);
	CHECK_INT(si.power_cycles, 16);
	CHECK_INT(si.nnorm, 0);		/* every row has its Raw */
}

TEST(table_5col_lowbyte)
{
	struct smart_info si;

	CHECK_INT(table_file(FX "esxcli-storage-core-device-smart-get/esxi703-sata-ssd-raw-lowbyte.txt",
	    true, &si), 0);
	CHECK_INT(si.layout, 5);
	CHECK_INT(si.temperature_c, 38);
	/* 233 is the low byte of ~30k hours: not reported; nor the cycles. */
	CHECK_INT(si.power_on_hours, SMART_NONE);
	CHECK_INT(si.power_cycles, SMART_NONE);
	CHECK_INT(si.reallocated_sectors, 0);
	CHECK_INT(si.uncorrectable_errors, 0);
	CHECK_INT(si.media_wearout, 99);
	CHECK(si.raw_lowbyte);
	/* Without the 7.0 hint the raw value is taken as it is. */
	CHECK_INT(table_file(FX "esxcli-storage-core-device-smart-get/esxi703-sata-ssd-raw-lowbyte.txt",
	    false, &si), 0);
	CHECK_INT(si.power_on_hours, 233);
}

TEST(table_nvme_raw_na)
{
	struct smart_info si;

	CHECK_INT(table_file(FX "esxcli-storage-core-device-smart-get/esxi80b-nvme-lexar.txt",
	    false, &si), 0);
	CHECK_INT(si.temperature_c, 36);
	CHECK_INT(si.power_on_hours, 0);
	/* Raw N/A and Worst N/A: Value is the real count. */
	CHECK_INT(si.reallocated_sectors, 0);
	CHECK_INT(si.power_cycles, 2);
	CHECK_INT(si.nnorm, 0);
}

TEST(table_health_values)
{
	const char *tpl =
	    "Parameter                     Value              Threshold  Worst  Raw\n"
	    "----------------------------  -----------------  ---------  -----  ---\n"
	    "Health Status                 %s  N/A        N/A    N/A\n"
	    "Reallocated Sector Count      100                10         100    17\n"
	    "Drive Temperature             41                 0          60     41\n"
	    "Driver Rated Max Temperature  70                 0          70     70\n";
	static const struct { const char *text; enum smart_health h; } cases[] = {
		{ "IMPENDING FAILURE", SMART_IMPENDING },
		{ "impending failure", SMART_IMPENDING },
		{ "WARNING          ", SMART_WARNING },
		{ "FAILED           ", SMART_FAILED },
		{ "OK               ", SMART_OK },
		{ "N/A              ", SMART_UNKNOWN },
		{ "Unknown          ", SMART_UNKNOWN },
		{ "Degraded         ", SMART_WARNING },
	};
	char	 text[1024], err[200];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct smart_info si;
		int	 n = snprintf(text, sizeof(text), tpl, cases[i].text);

		CHECK_INT(table_from(text, (size_t)n, false, &si, err, sizeof(err)), 0);
		CHECK_INT(si.health, cases[i].h);
		CHECK_INT(si.reallocated_sectors, 17);
		CHECK_INT(si.max_temperature_c, 70);
		CHECK_INT(si.temperature_c, 41);
	}
	CHECK_STR(smart_health_name(SMART_IMPENDING), "impending_failure");
	CHECK_STR(smart_health_name(SMART_UNKNOWN), "unknown");
	/* a spelling not known is not ok: a warning, never ignored */
	CHECK_INT(smart_health_of("Degraded-ish"), SMART_WARNING);
	CHECK_INT(smart_health_of("BAD"), SMART_WARNING);
	CHECK_INT(smart_health_of(" n/a "), SMART_UNKNOWN);
	CHECK_INT(smart_health_of(""), SMART_UNKNOWN);
}

TEST(table_edge_cases)
{
	struct smart_info si;
	char	 err[200];
	const char *hdr = "Parameter  Value  Threshold  Worst\n"
	    "---------  -----  ---------  -----\n";
	const char *other = "Name    Driver\n------  ------\nvmnic0  ixgben\n";

	/* Header only: no rows. */
	CHECK(table_from(hdr, strlen(hdr), false, &si, err, sizeof(err)) != 0);
	/* Empty output. */
	CHECK(table_from("", 0, false, &si, err, sizeof(err)) != 0);
	/* Another command's table. */
	CHECK_INT(table_from(other, strlen(other), false, &si, err, sizeof(err)), -1);
	CHECK(strstr(err, "Parameter") != NULL);
	/* An esxcli error line. */
	CHECK(table_from("Error: Unable to get SMART data\n", 32, false, &si, err,
	    sizeof(err)) != 0);
	CHECK(smart_from_table(NULL, false, &si, err, sizeof(err)) == -1);
	/* Cut short before the Health Status row. */
	{
		const char *cut = "Parameter  Value  Threshold  Worst  Raw\n"
		    "---------  -----  ---------  -----  ---\n"
		    "Drive Tem  30     0          47     38654705694\n";

		CHECK_INT(table_from(cut, strlen(cut), false, &si, err, sizeof(err)), -1);
		CHECK(strstr(err, "Health Status") != NULL);
	}
}

TEST(nvme_log)
{
	struct esx_out o;
	struct smart_info si;
	size_t	 n;
	char	*s = t_slurp(FX "esxcli-nvme-device-log-smart-get/esxi803-wd-sn850x.txt", &n);
	char	 err[200];

	CHECK_INT(esxcli_parse(s, n, &o, err, sizeof(err)), 0);
	CHECK_INT(smart_from_nvme_log(&o, &si, err, sizeof(err)), 0);
	CHECK_INT(si.temperature_c, 39);	/* 312 K */
	CHECK_INT(si.available_spare, 100);
	CHECK_INT(si.percentage_used, 0);
	CHECK_INT(si.power_on_hours, 0x63c6);
	CHECK_INT(si.uncorrectable_errors, 0);
	CHECK_INT(si.critical_warning, 0);
	CHECK_INT(si.health, SMART_OK);
	esx_out_free(&o);

	/* Critical warning bits set. */
	{
		struct buf_like { char t[4096]; } b;
		char	*p;
		int	 len;

		len = snprintf(b.t, sizeof(b.t), "%s", s);
		p = strstr(b.t, "Read Only Mode: false");
		if (p != NULL)
			memcpy(p, "Read Only Mode: true ", 21);
		p = strstr(b.t, "Temperature Warning: false");
		if (p != NULL)
			memcpy(p, "Temperature Warning: true ", 26);
		CHECK_INT(esxcli_parse(b.t, (size_t)len, &o, err, sizeof(err)), 0);
		CHECK_INT(smart_from_nvme_log(&o, &si, err, sizeof(err)), 0);
		CHECK_INT(si.critical_warning, NVME_CW_READ_ONLY | NVME_CW_TEMPERATURE);
		CHECK_INT(si.health, SMART_FAILED);
		CHECK(strstr(si.health_text, "Read Only Mode") != NULL);
		CHECK(strstr(si.health_text, "Temperature Warning") != NULL);
		esx_out_free(&o);
	}
	free(s);
	/* Cut short after two of the five warning booleans. */
	{
		const char *cut = "SMART And Health Info:\n"
		    "   Available Spare Space Below Threshold: false\n"
		    "   Temperature Warning: false\n";

		CHECK_INT(esxcli_parse(cut, strlen(cut), &o, err, sizeof(err)), 0);
		CHECK_INT(smart_from_nvme_log(&o, &si, err, sizeof(err)), -1);
		CHECK(strstr(err, "incomplete") != NULL);
		esx_out_free(&o);
	}
	/* Not a log. */
	CHECK_INT(esxcli_parse("HBA Name  Status\n--------  ------\nvmhba0    Online\n",
	    51, &o, err, sizeof(err)), 0);
	CHECK_INT(smart_from_nvme_log(&o, &si, err, sizeof(err)), -1);
	esx_out_free(&o);
}

static const char *ata_json =
    "{\n  \"json_format_version\": [1, 0],\n"
    "  \"smartctl\": {\"version\": [7, 3], \"exit_status\": 0},\n"
    "  \"device\": {\"name\": \"/dev/sda\", \"type\": \"sat\"},\n"
    "  \"model_name\": \"Samsung SSD 860 EVO 500GB\",\n"
    "  \"serial_number\": \"S3Z\\\"X\",\n"
    "  \"smart_status\": {\"passed\": true},\n"
    "  \"ata_smart_attributes\": {\"revision\": 1, \"table\": [\n"
    "    {\"id\": 5, \"name\": \"Reallocated_Sector_Ct\", \"value\": 100, \"thresh\": 10, \"raw\": {\"value\": 3, \"string\": \"3\"}},\n"
    "    {\"id\": 9, \"name\": \"Power_On_Hours\", \"value\": 95, \"raw\": {\"value\": 21000, \"string\": \"21000\"}},\n"
    "    {\"id\": 177, \"name\": \"Wear_Leveling_Count\", \"value\": 97, \"raw\": {\"value\": 30}},\n"
    "    {\"id\": 194, \"name\": \"Temperature_Celsius\", \"value\": 67, \"raw\": {\"value\": 171801935905}},\n"
    "    {\"id\": 197, \"name\": \"Current_Pending_Sector\", \"value\": 100, \"raw\": {\"value\": 1}},\n"
    "    {\"id\": 187, \"name\": \"Reported_Uncorrect\", \"value\": 100, \"raw\": {\"value\": 2}},\n"
    "  ]},\n"
    "  \"power_on_time\": {\"hours\": 21000},\n"
    "  \"temperature\": {\"current\": 33},\n"
    "}\n";

TEST(smartctl_ata)
{
	struct smart_info si;
	char	 err[200];

	CHECK_INT(smart_from_smartctl(ata_json, strlen(ata_json), 0, &si, err,
	    sizeof(err)), 0);
	CHECK_INT(si.health, SMART_OK);
	CHECK_STR(si.health_text, "PASSED");
	CHECK_INT(si.temperature_c, 33);
	CHECK_INT(si.power_on_hours, 21000);
	CHECK_INT(si.reallocated_sectors, 3);
	CHECK_INT(si.pending_sectors, 1);
	CHECK_INT(si.uncorrectable_errors, 2);
	CHECK_INT(si.media_wearout, 97);
	CHECK_STR(si.model, "Samsung SSD 860 EVO 500GB");
	CHECK_STR(si.serial, "S3Z\"X");
	/* Exit-status bits decide the health. */
	CHECK_INT(smart_from_smartctl(ata_json, strlen(ata_json), 0x08, &si, err,
	    sizeof(err)), 0);
	CHECK_INT(si.health, SMART_FAILED);
	CHECK_INT(smart_from_smartctl(ata_json, strlen(ata_json), 0x10, &si, err,
	    sizeof(err)), 0);
	CHECK_INT(si.health, SMART_IMPENDING);
	CHECK_INT(smart_from_smartctl(ata_json, strlen(ata_json), 0x40, &si, err,
	    sizeof(err)), 0);
	CHECK_INT(si.health, SMART_WARNING);
	CHECK_INT(smart_from_smartctl(ata_json, strlen(ata_json), 0x04, &si, err,
	    sizeof(err)), 0);
	CHECK_INT(si.health, SMART_OK);
	CHECK_INT(smart_from_smartctl(ata_json, strlen(ata_json), 0x02, &si, err,
	    sizeof(err)), -1);
}

TEST(smartctl_nvme_and_fixture)
{
	const char *nvme =
	    "{\"smartctl\": {\"exit_status\": 0}, \"smart_status\": {\"passed\": false},"
	    " \"nvme_composite_temperature_threshold\": {\"warning\": 84, \"critical\": 85},"
	    " \"nvme_smart_health_information_log\": {\"critical_warning\": 4,"
	    " \"temperature\": 45, \"available_spare\": 9, \"percentage_used\": 120,"
	    " \"power_on_hours\": 1234, \"media_errors\": 7}}";
	struct smart_info si;
	size_t	 n;
	char	*s, err[300];

	CHECK_INT(smart_from_smartctl(nvme, strlen(nvme), 0, &si, err, sizeof(err)), 0);
	CHECK_INT(si.health, SMART_FAILED);
	CHECK_INT(si.critical_warning, 4);
	CHECK_INT(si.temperature_c, 45);
	CHECK_INT(si.max_temperature_c, 85);
	CHECK_INT(si.available_spare, 9);
	CHECK_INT(si.percentage_used, 120);
	CHECK_INT(si.power_on_hours, 1234);
	CHECK_INT(si.uncorrectable_errors, 7);

	/* The real capture: smartctl could not even detect the device type. */
	s = t_slurp(FX "smartctl-json/esxi803-nvme-unable-to-detect.json", &n);
	CHECK_INT(smart_from_smartctl(s, n, 1, &si, err, sizeof(err)), -1);
	CHECK(strstr(err, "Unable to detect device type") != NULL);
	/* Exit status taken from the JSON when the caller has none. */
	CHECK_INT(smart_from_smartctl(s, n, -1, &si, err, sizeof(err)), -1);
	free(s);
	/* Garbage, empty, truncated. */
	CHECK_INT(smart_from_smartctl("", 0, 0, &si, err, sizeof(err)), -1);
	CHECK_INT(smart_from_smartctl("smartctl: command not found", 27, 0, &si, err,
	    sizeof(err)), -1);
	CHECK_INT(smart_from_smartctl("{\"smart_status\": {\"passed\": tr", 30, 0, &si,
	    err, sizeof(err)), -1);
	CHECK_INT(smart_from_smartctl("[1,2]", 5, 0, &si, err, sizeof(err)), -1);
}

TEST(json_reader)
{
	struct json_doc d;
	char	 err[100], s[16];
	long long v;
	bool	 b;
	char	 deep[200];
	int	 i;

	const char *doc = "{\"a\": {\"b\": [1, 2,], \"c\": \"x\\u00e9y\", \"d\": -5e2,"
	    " \"e\": false, \"f\": null,},}";

	CHECK_INT(json_parse(doc, strlen(doc), &d, err, sizeof(err)), 0);
	CHECK(json_get(&d, 0, "a.b") >= 0);
	CHECK(json_num(&d, json_get(&d, 0, "a.d"), &v));
	CHECK_INT(v, -500);
	CHECK(json_str(&d, json_get(&d, 0, "a.c"), s, sizeof(s)));
	CHECK_STR(s, "x?y");
	CHECK(json_bool(&d, json_get(&d, 0, "a.e"), &b));
	CHECK(!b);
	CHECK_INT(json_get(&d, 0, "a.zz"), -1);
	CHECK_INT(json_get(&d, 0, "a.b.c"), -1);
	CHECK(!json_num(&d, json_get(&d, 0, "a.f"), &v));
	json_free(&d);
	/* Depth bound. */
	for (i = 0; i < 150; i++)
		deep[i] = '[';
	deep[150] = '\0';
	CHECK_INT(json_parse(deep, 150, &d, err, sizeof(err)), -1);
	CHECK(strstr(err, "deeper") != NULL);
	CHECK_INT(json_parse("{\"a\" 1}", 7, &d, err, sizeof(err)), -1);
	CHECK_INT(json_parse("{\"a\": @}", 8, &d, err, sizeof(err)), -1);
	CHECK_INT(json_parse("   ", 3, &d, err, sizeof(err)), -1);
}

TEST(scan)
{
	struct smart_scan_dev devs[8];
	const char *out =
	    "/dev/sda -d sat # /dev/sda [SAT], ATA device\n"
	    "/dev/nvme0 -d nvme # /dev/nvme0, NVMe device\n"
	    "/dev/bus/0 -d megaraid,4 # /dev/bus/0 [megaraid_disk_04], SCSI device\n";
	int	 n;

	n = smart_scan_parse(out, strlen(out), devs, 8);
	CHECK_INT(n, 3);
	CHECK_STR(devs[0].path, "/dev/sda");
	CHECK_STR(devs[0].type, "sat");
	CHECK_STR(devs[1].path, "/dev/nvme0");
	CHECK_STR(devs[1].type, "nvme");
	CHECK_STR(devs[2].type, "megaraid,4");
	CHECK_INT(smart_scan_parse("", 0, devs, 8), 0);
	CHECK_INT(smart_scan_parse("garbage here\n", 13, devs, 8), -1);
	CHECK_INT(smart_scan_parse(out, strlen(out), devs, 2), 2);
	CHECK_INT(smart_scan_parse("/dev/sdb\n", 9, devs, 8), 1);
	CHECK_STR(devs[0].type, "");
}

int
main(void)
{
	T_PROG("test_smart");
	RUN(table_4col);
	RUN(table_5col_full_raw);
	RUN(table_5col_lowbyte);
	RUN(table_nvme_raw_na);
	RUN(table_health_values);
	RUN(table_edge_cases);
	RUN(nvme_log);
	RUN(smartctl_ata);
	RUN(smartctl_nvme_and_fixture);
	RUN(json_reader);
	RUN(scan);
	return t_done();
}
