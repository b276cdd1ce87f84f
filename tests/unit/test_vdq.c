/* Unit tests for the tolerant vdq -q / -qH parser (collectors/host/vdq.c). */
#include "t.h"

#include "../../collectors/host/vdq.h"

#define FX "tests/fixtures/esxi/"

static int
parse_file(const char *path, struct vdq_result *r, char *err, size_t errlen)
{
	size_t	 n;
	char	*s = t_slurp(path, &n);
	int	 rc = vdq_parse(s, n, r, err, errlen);

	free(s);
	return rc;
}

static int
parse_str(const char *s, struct vdq_result *r, char *err, size_t errlen)
{
	return vdq_parse(s, strlen(s), r, err, errlen);
}

/* ESXi 8: no trailing commas, 8.x keys at column 0. */
TEST(esxi8_form)
{
	struct vdq_result r;
	char	 err[128];

	CHECK_INT(parse_file(FX "vdq-q/esxi8.txt", &r, err, sizeof(err)), 0);
	CHECK_INT(r.n, 3);
	CHECK_INT(r.skipped, 0);
	if (r.n == 3) {
		CHECK_STR(r.disks[0].name,
		    "t10.NVMe____SKHynix_HFS001TEJ9XXXXX_________________C20C523500xxxxx");
		CHECK_STR(r.disks[0].state, "Ineligible for use by VSAN");
		CHECK_INT(vdq_state_of(r.disks[0].state), VDQ_INELIGIBLE);
		CHECK_STR(r.disks[0].reason, "Has partitions");
		CHECK_STR(r.disks[0].storage_pool_state, "Ineligible for use by Storage Pool");
		CHECK_STR(r.disks[0].storage_pool_reason, "Has partitions");
		CHECK_STR(r.disks[0].is_ssd, "1");
		CHECK_STR(r.disks[0].is_capacity_flash, "0");
		CHECK_STR(r.disks[0].is_pdl, "0");
		CHECK_STR(r.disks[0].size_mb, "976762");
		CHECK_STR(r.disks[0].format_type, "512e");
		CHECK_STR(r.disks[0].is_vsan_direct, "0");
		CHECK_STR(r.disks[0].vsan_uuid, "");
		CHECK_STR(r.disks[1].name, "mpx.vmhba32:C0:T0:L0");
		CHECK_STR(r.disks[1].size_mb, "60000");
		CHECK_STR(r.disks[2].name, "mpx.vmhba34:C0:T0:L0");
		CHECK_STR(r.disks[2].size_mb, "942480");
		CHECK_STR(r.disks[2].format_type, "512n");
	}
	vdq_result_free(&r);
}

/* ESXi 6.5/7: trailing commas after the last field and record, no ']'. */
TEST(trailing_comma_form)
{
	struct vdq_result r;
	char	 err[128];

	CHECK_INT(parse_file(FX "vdq-q/esxi65-trailing-commas-truncated.txt", &r,
	    err, sizeof(err)), 0);
	CHECK_INT(r.n, 3);
	if (r.n == 3) {
		CHECK_STR(r.disks[0].name,
		    "t10.SanDisk00Ultra_Fit000000000000004C530001151112120280");
		CHECK_INT(vdq_state_of(r.disks[0].state), VDQ_INELIGIBLE);
		CHECK_STR(r.disks[0].reason, "Has partitions");
		CHECK_STR(r.disks[0].is_ssd, "0");
		CHECK_STR(r.disks[0].size_mb, "");	/* 6.5 has no Size(MB) */
		CHECK_INT(vdq_state_of(r.disks[1].state), VDQ_ELIGIBLE);
		CHECK_STR(r.disks[1].reason, "None");
		CHECK_STR(r.disks[1].is_capacity_flash, "1");
		CHECK_STR(r.disks[2].name,
		    "t10.NVMe____Samsung_SSD_950_PRO_512GB_______________4C8AB06158382500");
	}
	vdq_result_free(&r);
}

/* ESXi 7 with a trailing comma after the last field of every record and
 * after the last record (hand-made from the 8.x keys). */
TEST(esxi7_trailing_commas_everywhere)
{
	const char *s =
	    "[\n   {\n      \"Name\"     : \"naa.600\",\n"
	    "      \"State\"    : \"Ineligible for use by VSAN\",\n"
	    "      \"Reason\"   : \"Has partitions\",\n"
	    "      \"IsPDL\"    : \"1\",\n"
	    "      \"Size(MB)\" : \"61440\",\n   },\n\n"
	    "   {\n\"Name\": \"naa.601\",\n\"State\" : \"In-use for VSAN\",\n},\n]\n";
	struct vdq_result r;
	char	 err[128];

	CHECK_INT(parse_str(s, &r, err, sizeof(err)), 0);
	CHECK_INT(r.n, 2);
	if (r.n == 2) {
		CHECK_STR(r.disks[0].is_pdl, "1");
		CHECK_STR(r.disks[0].size_mb, "61440");
		CHECK_INT(vdq_state_of(r.disks[1].state), VDQ_IN_USE);
		CHECK_STR(vdq_state_name(vdq_state_of(r.disks[1].state)), "in_use");
	}
	vdq_result_free(&r);
}

TEST(human_form)
{
	struct vdq_result r;
	char	 err[128];

	CHECK_INT(parse_file(FX "vdq-qH/esxi7-nested-partial.txt", &r, err,
	    sizeof(err)), 0);
	CHECK_INT(r.n, 2);
	if (r.n == 2) {
		CHECK_STR(r.disks[0].name, "naa.6000c29d86ef6d2069aee03bc79dbefd");
		CHECK_INT(vdq_state_of(r.disks[0].state), VDQ_ELIGIBLE);
		CHECK_STR(r.disks[0].is_ssd, "1");
		CHECK_STR(r.disks[0].is_pdl, "0");
		CHECK_STR(r.disks[0].size_mb, "61440");
		CHECK_STR(r.disks[1].is_capacity_flash, "0");
		CHECK_STR(r.disks[1].size_mb, "4096");
	}
	vdq_result_free(&r);
}

TEST(state_mapping)
{
	CHECK_INT(vdq_state_of("Eligible for use by VSAN"), VDQ_ELIGIBLE);
	CHECK_INT(vdq_state_of("ineligible for use by vsan"), VDQ_INELIGIBLE);
	CHECK_INT(vdq_state_of("In-use for VSAN"), VDQ_IN_USE);
	CHECK_INT(vdq_state_of("Something new"), VDQ_UNKNOWN);
	CHECK_INT(vdq_state_of(""), VDQ_UNKNOWN);
	CHECK_INT(vdq_state_of(NULL), VDQ_UNKNOWN);
	CHECK_STR(vdq_state_name(VDQ_UNKNOWN), "unknown");
	CHECK_STR(vdq_state_name(VDQ_ELIGIBLE), "eligible");
	CHECK_STR(vdq_state_name(VDQ_INELIGIBLE), "ineligible");
}

TEST(edge_cases)
{
	struct vdq_result r;
	char	 err[128];

	/* Empty output: an error, not "no disks". */
	CHECK_INT(parse_str("", &r, err, sizeof(err)), -1);
	CHECK(strstr(err, "empty") != NULL);
	CHECK_INT(parse_str("  \n\n", &r, err, sizeof(err)), -1);
	/* An empty list is a valid answer. */
	CHECK_INT(parse_str("[\n]\n", &r, err, sizeof(err)), 0);
	CHECK_INT(r.n, 0);
	vdq_result_free(&r);
	/* Error text, garbage. */
	CHECK_INT(parse_str("Error: Unable to query disks [timeout]\n", &r, err,
	    sizeof(err)), -1);
	CHECK(strstr(err, "Unable to query") != NULL);
	CHECK_INT(parse_str("\x01\x02garbage\xff", &r, err, sizeof(err)), -1);
	/* A record cut before its '}' is skipped, never half-kept. */
	CHECK_INT(parse_str("[\n {\n \"Name\" : \"naa.1\",\n \"State\" : \"Elig",
	    &r, err, sizeof(err)), 0);
	CHECK_INT(r.n, 0);
	CHECK_INT(r.skipped, 1);
	vdq_result_free(&r);
	/* A record without Name is skipped. */
	CHECK_INT(parse_str("[{\"State\":\"Eligible for use by VSAN\"}]", &r, err,
	    sizeof(err)), 0);
	CHECK_INT(r.n, 0);
	CHECK_INT(r.skipped, 1);
	vdq_result_free(&r);
	/* A record without State is skipped: no state is claimed. */
	CHECK_INT(parse_str("[{\"Name\":\"naa.3\", \"Reason\": \"None\"}]", &r, err,
	    sizeof(err)), 0);
	CHECK_INT(r.n, 0);
	CHECK_INT(r.skipped, 1);
	vdq_result_free(&r);
	/* Unterminated string at end of line, non-digit size, odd flags. */
	CHECK_INT(parse_str("[{\"Name\":\"naa.2\n,\"State\":\"Eligible\",\"Size(MB)\":\"12x\","
	    "\"IsSSD\":\"yes\",\"IsPDL\": 1 }]", &r, err, sizeof(err)), 0);
	CHECK_INT(r.n, 1);
	if (r.n == 1) {
		CHECK_STR(r.disks[0].name, "naa.2");
		CHECK_STR(r.disks[0].size_mb, "");
		CHECK_STR(r.disks[0].is_ssd, "");
		CHECK_STR(r.disks[0].is_pdl, "1");
	}
	vdq_result_free(&r);
	/* Values longer than the field are cut, never overflow. */
	{
		char	 big[2000];
		size_t	 i;

		memcpy(big, "[{\"Name\":\"", 10);
		for (i = 10; i < 1900; i++)
			big[i] = 'a';
		memcpy(big + 1900, "\",\"State\":\"x\"}]", 16);
		CHECK_INT(parse_str(big, &r, err, sizeof(err)), 0);
		CHECK_INT(r.n, 1);
		if (r.n == 1)
			CHECK_INT(strlen(r.disks[0].name), VDQ_VAL_MAX - 1);
		vdq_result_free(&r);
	}
}

int
main(void)
{
	T_PROG("test_vdq");
	RUN(esxi8_form);
	RUN(trailing_comma_form);
	RUN(esxi7_trailing_commas_everywhere);
	RUN(human_form);
	RUN(state_mapping);
	RUN(edge_cases);
	return t_done();
}
