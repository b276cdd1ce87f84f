/*
 * esxcli text parser: every captured esxcli text fixture of every shape
 * parses, with concrete values checked, plus hand-made edge cases.
 * Run from the repository's top directory (tests/run-all.sh does).
 */
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "../../agent/config/config.h"
#include "../../collectors/host/esxcli.h"

#define FIX "tests/fixtures/esxi/"

static struct esx_out out;
static char err[256];

static int
parse_file(const char *rel)
{
	char path[512];
	size_t len;
	char *text;
	int rc;

	snprintf(path, sizeof(path), FIX "%s", rel);
	text = t_slurp(path, &len);
	rc = esxcli_parse(text, len, &out, err, sizeof(err));
	free(text);
	return rc;
}

static int
parse_str(const char *s)
{
	return esxcli_parse(s, strlen(s), &out, err, sizeof(err));
}

/* The record whose key has value, or NULL. */
static const struct esx_rec *
find(const char *key, const char *val)
{
	size_t i;
	const char *v;

	for (i = 0; i < out.n; i++) {
		v = esx_get(&out.recs[i], key);
		if (v != NULL && strcmp(v, val) == 0)
			return &out.recs[i];
	}
	return NULL;
}

TEST(every_text_fixture_parses)
{
	DIR *top, *sub;
	struct dirent *d, *f;
	char rel[512];
	int files = 0;

	top = opendir(FIX);
	CHECK(top != NULL);
	if (top == NULL)
		return;
	while ((d = readdir(top)) != NULL) {
		if (strncmp(d->d_name, "esxcli-", 7) != 0)
			continue;
		snprintf(rel, sizeof(rel), FIX "%s", d->d_name);
		if ((sub = opendir(rel)) == NULL)
			continue;
		while ((f = readdir(sub)) != NULL) {
			size_t n = strlen(f->d_name);

			if (n < 5 || strcmp(f->d_name + n - 4, ".txt") != 0)
				continue;
			snprintf(rel, sizeof(rel), "%s/%s", d->d_name, f->d_name);
			files++;
			if (parse_file(rel) != 0 || out.n == 0) {
				T_FAILF("%s: rc != 0 or no records (%s)", rel, err);
			} else {
				size_t i, keys = 0;

				for (i = 0; i < out.n; i++)
					keys += out.recs[i].n;
				if (keys == 0)
					T_FAILF("%s: no keys", rel);
			}
			esx_out_free(&out);
		}
		closedir(sub);
	}
	closedir(top);
	CHECK(files >= 26);
}

TEST(nic_list_90)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-network-nic-list/esxi90-vmxnet3.txt"), 0);
	CHECK_INT(out.shape, ESX_TABLE);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_STR(esx_get(r, "Name"), "vmnic0");
	CHECK_STR(esx_get(r, "PCI Device"), "0000:02:01.0");
	CHECK_STR(esx_get(r, "Driver"), "nvmxnet3");
	CHECK_STR(esx_get(r, "Admin Status"), "Up");
	CHECK_STR(esx_get(r, "Link Status"), "Up");
	CHECK_STR(esx_get(r, "Speed"), "10000");
	CHECK_STR(esx_get(r, "Duplex"), "Full");
	CHECK_STR(esx_get(r, "MAC Address"), "00:50:56:b3:b9:89");
	CHECK_STR(esx_get(r, "MTU"), "1500");
	/* the last column is wider than its dashes */
	CHECK_STR(esx_get(r, "Description"),
	    "VMware Inc. vmxnet3 Virtual Ethernet Controller");
	CHECK(esx_get(r, "Link") == NULL);
	esx_out_free(&out);
}

TEST(nic_list_55_padded_old_columns)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-network-nic-list/esxi55-e1000e-old-columns-padded.txt"), 0);
	CHECK_INT(out.shape, ESX_TABLE);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_INT(r->n, 9);
	CHECK_STR(esx_get(r, "Name"), "vmnic0");
	CHECK_STR(esx_get(r, "PCI Device"), "0000:001:00.0");
	CHECK_STR(esx_get(r, "Link"), "Up");
	CHECK_STR(esx_get(r, "Speed"), "1000");
	CHECK_STR(esx_get(r, "Description"),
	    "Intel Corporation 82572EI Gigabit Ethernet Controller");
	CHECK(esx_get(r, "Admin Status") == NULL);
	esx_out_free(&out);
}

TEST(nic_list_keyvalue_formatter)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-network-nic-list/esxi8-keyvalue-fixture.txt"), 0);
	CHECK_INT(out.shape, ESX_KEYVALUE);
	CHECK_INT(out.n, 8);
	r = find("Name", "vmnic2");
	CHECK(r != NULL);
	CHECK_STR(esx_get(r, "LinkStatus"), "Down");
	CHECK_STR(esx_get(r, "Speed"), "0");
	CHECK_STR(esx_get(r, "Driver"), "igbn");
	CHECK_STR(esx_get(r, "Description"), "Intel(R) I350 Gigabit Network Connection");
	r = find("Name", "vmnic4");
	CHECK_STR(esx_get(r, "Speed"), "40000");
	esx_out_free(&out);

	/* a top-level structure, an empty list, and a stray line */
	CHECK_INT(parse_str("NICInfo.Name.string=vmnic0\n"
	    "NICInfo.AdvertisedLinkModes.string[] = \nnot a path line\n"
	    "NICInfo.DriverInfo.Driver.string=ixgben\n"), 0);
	CHECK_INT(out.shape, ESX_KEYVALUE);
	CHECK_INT(out.n, 1);
	CHECK_STR(esx_get(&out.recs[0], "Name"), "vmnic0");
	CHECK_STR(esx_get(&out.recs[0], "AdvertisedLinkModes"), "");
	CHECK_STR(esx_get(&out.recs[0], "DriverInfo.Driver"), "ixgben");
	esx_out_free(&out);
}

TEST(nic_get_nested_driver_info)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-network-nic-get/esxi90-vmxnet3.txt"), 0);
	CHECK_INT(out.shape, ESX_BLOCK);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_STR(r->title, "");
	CHECK_STR(esx_get(r, "Name"), "vmnic0");
	CHECK_STR(esx_get(r, "Driver Info.Driver"), "nvmxnet3");
	CHECK_STR(esx_get(r, "Driver Info.Bus Info"), "0000:02:01:0");
	CHECK_STR(esx_get(r, "Driver Info.Firmware Version"), "7");
	CHECK_STR(esx_get(r, "Driver Info.Version"), "2.0.0.31");
	/* after the nested block, keys are top level again */
	CHECK_STR(esx_get(r, "Link Detected"), "true");
	CHECK(esx_get(r, "Driver Info.Link Detected") == NULL);
	CHECK_STR(esx_get(r, "Link Status"), "Up");	/* "Up " trimmed */
	CHECK_STR(esx_get(r, "Cable Type"), "");	/* "Key: " = empty */
	CHECK_STR(esx_get(r, "Virtual Address"), "00:50:56:5f:1b:e1");
	CHECK_STR(esx_get(r, "Wakeon"), "None");
	esx_out_free(&out);
}

TEST(nic_stats_kb341594)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt"), 0);
	CHECK_INT(out.shape, ESX_BLOCK);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_STR(r->title, "NIC statistics for vmnic2");
	CHECK_INT(r->n, 23);
	CHECK_STR(esx_get(r, "Packets received"), "701280499176");
	CHECK_STR(esx_get(r, "Bytes received"), "664124780523852");
	CHECK_STR(esx_get(r, "Receive packets dropped"), "2452783244");
	CHECK_STR(esx_get(r, "Multicast packets received"), "976222150");
	CHECK_STR(esx_get(r, "Receive CRC errors"), "0");
	CHECK_STR(esx_get(r, "Transmit window errors"), "0");
	esx_out_free(&out);
}

TEST(smart_get_4_and_5_columns)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-storage-core-device-smart-get/esxi5-6-4col.txt"), 0);
	CHECK_INT(out.n, 13);
	CHECK_INT(out.recs[0].n, 4);
	r = find("Parameter", "Drive Temperature");
	CHECK_STR(esx_get(r, "Value"), "116");
	CHECK_STR(esx_get(r, "Worst"), "106");
	CHECK(esx_get(r, "Raw") == NULL);
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-core-device-smart-get/esxi55-4col-padded.txt"), 0);
	CHECK_INT(out.n, 13);
	r = find("Parameter", "Power-on Hours");
	CHECK_STR(esx_get(r, "Worst"), "99");	/* padding trimmed */
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-core-device-smart-get/esxi803-sata-hdd-exos.txt"), 0);
	CHECK_INT(out.n, 12);
	CHECK_INT(out.recs[0].n, 5);
	r = find("Parameter", "Drive Temperature");
	CHECK_STR(esx_get(r, "Value"), "30");
	CHECK_STR(esx_get(r, "Raw"), "38654705694");
	r = find("Parameter", "Pending Sector Reallocation Count");
	CHECK_STR(esx_get(r, "Threshold"), "0");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-core-device-smart-get/esxi80b-nvme-lexar.txt"), 0);
	r = find("Parameter", "Write Sectors TOT Count");
	CHECK_STR(esx_get(r, "Value"), "139000");
	CHECK_STR(esx_get(r, "Raw"), "N/A");
	esx_out_free(&out);
}

TEST(path_list_keyed_and_colon_header)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-storage-core-path-list/esxi803-local-sata-nvme-usb.txt"), 0);
	CHECK_INT(out.shape, ESX_KEYED);
	CHECK_INT(out.n, 8);
	CHECK_STR(out.recs[1].title, "usb.vmhba32-usb.0:0-mpx.vmhba32:C0:T0:L0");
	CHECK_STR(esx_get(&out.recs[1], "Runtime Name"), "vmhba32:C0:T0:L0");
	CHECK_STR(esx_get(&out.recs[1], "Transport"), "usb");
	r = find("Device", "t10.ATA_____ST20000NM007D2D3DJ103________________________________ZVTBWXYS");
	CHECK_STR(esx_get(r, "State"), "active");
	CHECK_STR(esx_get(r, "Maximum IO Size"), "33554432");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-core-path-list/compellent-iscsi-colon-header.txt"), 0);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	/* the trailing ':' of the header is not part of the UID */
	CHECK_STR(r->title, "iqn.1998-01.com.vmware:ESXI-1-113d8999-00023d000001,"
	    "iqn.2002-03.com.compellent:5000d3100077102b,t,0-"
	    "naa.6000d31000771000000000000000000d");
	CHECK_STR(esx_get(r, "Device"), "naa.6000d31000771000000000000000000d");
	CHECK_STR(esx_get(r, "Transport"), "iscsi");
	CHECK_STR(esx_get(r, "Target Transport Details"),
	    "IQN=iqn.2002-03.com.compellent:5000d3100077102b Alias= "
	    "Session=00023d000001 PortalTag=0");
	esx_out_free(&out);
}

TEST(device_list_padding_trimmed)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-storage-core-device-list/esxi90-virtual-disk-hpp.txt"), 0);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_STR(r->title, "mpx.vmhba0:C0:T0:L0");
	CHECK_STR(esx_get(r, "Vendor"), "VMware");
	CHECK_STR(esx_get(r, "Model"), "Virtual disk");
	CHECK_STR(esx_get(r, "Status"), "on");
	CHECK_STR(esx_get(r, "Attached Filters"), "");
	CHECK_STR(esx_get(r, "Multipath Plugin"), "HPP");
	esx_out_free(&out);
}

TEST(nfs_and_nfs41_lists)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-storage-nfs-list/esxi80b-synology-nfsv3.txt"), 0);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_STR(esx_get(r, "Volume Name"), "nfsbackup");
	CHECK_STR(esx_get(r, "Share"), "/volume1/vmnfsbackup");
	CHECK_STR(esx_get(r, "Accessible"), "true");	/* right-aligned */
	CHECK_STR(esx_get(r, "Read-Only"), "false");
	CHECK_STR(esx_get(r, "isPE"), "false");
	CHECK_STR(esx_get(r, "Hardware Acceleration"), "Not Supported");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-nfs41-list/inaccessible-hwaccel-unknown.txt"), 0);
	r = &out.recs[0];
	CHECK_STR(esx_get(r, "Host(s)"), "10.1.0.7");
	CHECK_STR(esx_get(r, "Accessible"), "false");
	CHECK_STR(esx_get(r, "Mounted"), "false");
	CHECK_STR(esx_get(r, "Security"), "AUTH_SYS");
	CHECK_STR(esx_get(r, "Hardware Acceleration"), "Unknown");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-nfs41-list/freenas-accessible.txt"), 0);
	CHECK_STR(esx_get(&out.recs[0], "Volume Name"), "freenas01-backups");
	CHECK_STR(esx_get(&out.recs[0], "Accessible"), "true");
	esx_out_free(&out);
}

TEST(filesystem_and_extent_lists)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-storage-filesystem-list/esxi90.txt"), 0);
	CHECK_INT(out.n, 3);
	r = find("Volume Name", "BOOTBANK2");
	CHECK(r != NULL);
	CHECK_STR(esx_get(r, "Mounted"), "true");
	CHECK_STR(esx_get(r, "Type"), "vfat");
	CHECK_STR(esx_get(r, "Size"), "4293591040");
	CHECK_STR(esx_get(r, "Free"), "4293525504");
	CHECK_STR(esx_get(&out.recs[0], "Type"), "VMFSOS");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-vmfs-extent-list/esxi90.txt"), 0);
	CHECK_INT(out.n, 1);
	r = &out.recs[0];
	CHECK_STR(esx_get(r, "Volume Name"), "OSDATA-693975f2-9139b258-8620-005056b3b989");
	CHECK_STR(esx_get(r, "Extent Number"), "0");
	CHECK_STR(esx_get(r, "Device Name"), "mpx.vmhba0:C0:T0:L0");
	CHECK_STR(esx_get(r, "Partition"), "7");
	esx_out_free(&out);
}

TEST(other_shapes)
{
	const struct esx_rec *r;

	CHECK_INT(parse_file("esxcli-nvme-device-log-smart-get/esxi803-wd-sn850x.txt"), 0);
	CHECK_STR(out.recs[0].title, "SMART And Health Info");
	CHECK_STR(esx_get(&out.recs[0], "Composite Temperature"), "312 K");
	CHECK_STR(esx_get(&out.recs[0], "Power On Hours"), "0x63c6");
	esx_out_free(&out);

	/* indentation lost in the source: Key: value at column 0 */
	CHECK_INT(parse_file("esxcli-system-syslog-config-get/esxi65-indent-lost.txt"), 0);
	CHECK_INT(out.n, 1);
	CHECK_STR(esx_get(&out.recs[0], "Local Log Output Is Persistent"), "true");
	CHECK_STR(esx_get(&out.recs[0], "Remote Host"), "udp://192.168.1.106:514");
	esx_out_free(&out);
	CHECK_INT(parse_file("esxcli-system-syslog-config-get/esxi5-indent-lost.txt"), 0);
	CHECK_STR(esx_get(&out.recs[0], "Remote Host"), "");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-vsan-debug-disk-list/vmware-doc-example.txt"), 0);
	r = &out.recs[0];
	CHECK_STR(esx_get(r, "UUID"), "52e1d1fa-af0e-0c6c-f219-e5e1d224b469");
	CHECK_STR(esx_get(r, "Space Health.Capacity"), "107365793792 bytes");
	CHECK_STR(esx_get(r, "Congestion Health.State"), "green");
	CHECK_STR(esx_get(r, "In Cmmds"), "true");
	esx_out_free(&out);

	/* a table indented by 4 */
	CHECK_INT(parse_file("esxcli-vsan-debug-object-health-summary-get/vmware-doc-example.txt"), 0);
	CHECK_INT(out.n, 8);
	r = find("Health Status", "healthy");
	CHECK_STR(esx_get(r, "Number Of Objects"), "1");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-vsan-storage-list/vcf-esx11-osa-anonymized.txt"), 0);
	CHECK_INT(out.shape, ESX_KEYED);
	CHECK_STR(out.recs[1].title, "naa.55cd2e414d7a89c7");
	CHECK_STR(esx_get(&out.recs[1], "Is Capacity Tier"), "true");
	CHECK_STR(esx_get(&out.recs[1], "Creation Time"), "Tue Mar 12 10:11:12 2024");
	esx_out_free(&out);

	CHECK_INT(parse_file("esxcli-storage-core-device-capacity-list/esxi803.txt"), 0);
	CHECK_INT(out.n, 8);
	r = find("Device", "mpx.vmhba32:C0:T0:L0");
	CHECK_STR(esx_get(r, "Size"), "0 MiB");
	CHECK_STR(esx_get(r, "Format Type"), "512n");
	CHECK_STR(esx_get(&out.recs[0], "Size"), "19074048 MiB");
	esx_out_free(&out);
}

TEST(empty_and_header_only)
{
	CHECK_INT(parse_str(""), 0);
	CHECK_INT(out.n, 0);
	CHECK_INT(out.shape, ESX_NONE);
	CHECK_INT(parse_str("\n  \n\n"), 0);
	CHECK_INT(out.n, 0);
	CHECK_INT(esxcli_parse(NULL, 0, &out, err, sizeof(err)), 0);

	CHECK_INT(parse_str("Name    Driver\n------  ------\n"), 0);
	CHECK_INT(out.shape, ESX_TABLE);
	CHECK_INT(out.n, 0);
	esx_out_free(&out);
}

TEST(truncated_and_odd_rows)
{
	const struct esx_rec *r;

	/* a row cut short: missing cells are empty, not garbage */
	CHECK_INT(parse_str("Name    Speed  Duplex\n------  -----  ------\n"
	    "vmnic0  1000   Full\nvmnic1  10"), 0);
	CHECK_INT(out.n, 2);
	r = &out.recs[1];
	CHECK_STR(esx_get(r, "Name"), "vmnic1");
	CHECK_STR(esx_get(r, "Speed"), "10");
	CHECK_STR(esx_get(r, "Duplex"), "");
	esx_out_free(&out);

	/* a right-aligned value wider than its dashes starts a column early;
	 * a row longer than the last column keeps the rest */
	CHECK_INT(parse_str("Name  Size  Type\n----  ----  ----\n"
	    "a    123456  vfat extra words\r\n"), 0);
	r = &out.recs[0];
	CHECK_STR(esx_get(r, "Name"), "a");
	CHECK_STR(esx_get(r, "Size"), "123456");
	CHECK_STR(esx_get(r, "Type"), "vfat extra words");
	esx_out_free(&out);

	/* a block cut in the middle of a nested structure */
	CHECK_INT(parse_str("   Name: vmnic0\n   Driver Info: \n         Driver: ixgben\n"
	    "         Vers"), 0);
	CHECK_STR(esx_get(&out.recs[0], "Driver Info.Driver"), "ixgben");
	CHECK_INT(out.recs[0].n, 3);
	esx_out_free(&out);

	/* a keyed record without fields next to one with */
	CHECK_INT(parse_str("naa.1\n\nnaa.2\n   Status: on\n"), 0);
	CHECK_INT(out.shape, ESX_KEYED);
	CHECK_INT(out.n, 2);
	CHECK_INT(out.recs[0].n, 0);
	CHECK_STR(esx_get(&out.recs[1], "Status"), "on");
	esx_out_free(&out);
}

TEST(errors_and_garbage)
{
	CHECK_INT(parse_str("Error: Unknown command or namespace network nic foo\n"), -1);
	CHECK_STR(err, "Error: Unknown command or namespace network nic foo");
	CHECK_INT(out.n, 0);
	CHECK(out.recs == NULL);

	CHECK_INT(parse_str("Unable to find requested formatter: json\n"), -1);
	CHECK(strstr(err, "Unable to find requested formatter") != NULL);

	CHECK_INT(parse_str("something went wrong: badly"), -1);
	CHECK(strstr(err, "something went wrong") != NULL);

	CHECK_INT(parse_str("lorem\nipsum dolor\nsit amet\n"), -1);
	CHECK(strstr(err, "lorem") != NULL);
	CHECK_INT(parse_str("\x01\x02\xff\xfe\n\x80garbage"), -1);

	/* the machine formatters are not the text format */
	CHECK_INT(parse_file("esxcli-storage-core-device-list/esxi803-json.json"), -1);
	CHECK_INT(parse_file("esxcli-network-nic-list/esxi8-xml-fixture.xml"), -1);

	/* NUL bytes inside the text are bounded by len, not by strlen */
	CHECK_INT(esxcli_parse("   A: 1\0   B: 2\n", 16, &out, err, sizeof(err)), 0);
	CHECK_INT(out.n, 1);
	esx_out_free(&out);

	/* a tiny err buffer is still NUL-terminated */
	{
		char small[8];

		CHECK_INT(esxcli_parse("Error: a long message", 21, &out,
		    small, sizeof(small)), -1);
		CHECK_INT((int)strlen(small), 7);
	}
	CHECK(esx_get(NULL, "x") == NULL);
	esx_out_free(&out);
	esx_out_free(NULL);
}

/* A header of many long names over many short rows would make the parsed
 * form quadratic in the input: refused, not allocated. */
TEST(hostile_table_is_bounded)
{
	char *text, *p;
	size_t cap = 64 * 1024, i, c;

	text = malloc(cap);
	CHECK(text != NULL);
	if (text == NULL)
		return;
	p = text;
	for (c = 0; c < 200; c++) {
		memset(p, 'h', 100);
		p[100] = ' ';
		p[101] = ' ';
		p += 102;
	}
	*p++ = '\n';
	for (c = 0; c < 200; c++) {
		memset(p, '-', 100);
		p[100] = ' ';
		p[101] = ' ';
		p += 102;
	}
	*p++ = '\n';
	for (i = 0; i < 500; i++) {
		*p++ = 'x';
		*p++ = '\n';
	}
	CHECK_INT(esxcli_parse(text, (size_t)(p - text), &out, err, sizeof(err)), -1);
	CHECK(strstr(err, "too large") != NULL);
	CHECK_INT(out.n, 0);

	/* the same table with a handful of rows is fine */
	CHECK_INT(esxcli_parse(text, (size_t)(p - text) - 990, &out, err, sizeof(err)), 0);
	CHECK_INT(out.n, 5);
	CHECK_INT(out.recs[0].n, 200);
	esx_out_free(&out);
	free(text);
}

static void
script(const char *dir, const char *name, const char *body)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		exit(1);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(path, 0755);
}

/* The runner: localcli first, exit status, timeout, unparsable output. */
/*
 * Layouts that are not esxcli's own (tests/fixtures/esxi-layout/README.md):
 * uneven indentation and "Key:value" without a space still give every
 * counter, in one record.
 */
TEST(uneven_and_spaceless_block)
{
	static const struct { const char *k, *v; } want[] = {
		{ "Packets received", "701280499176" },
		{ "Packets sent", "687061948450" },
		{ "Bytes received", "664124780523852" },
		{ "Bytes sent", "676938646792793" },
		{ "Receive packets dropped", "2452783244" },
		{ "Transmit packets dropped", "0" },
		{ "Multicast packets received", "976222150" },
		{ "Broadcast packets received", "0" },
		{ "Total receive errors", "0" },
		{ "Receive CRC errors", "0" },
		{ "Receive frame errors", "0" },
		{ "Receive FIFO errors", "0" },
		{ "Receive missed errors", "0" },
		{ "Transmit window errors", "0" },
	};
	size_t i;

	CHECK_INT(parse_file("../esxi-layout/nic-stats-kb341594-uneven-spaceless.txt"), 0);
	CHECK_INT(out.n, 1);
	if (out.n == 1) {
		CHECK_STR(out.recs[0].title, "NIC statistics for vmnic2");
		CHECK_INT(out.recs[0].n, 23);
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			CHECK_STR(esx_get(&out.recs[0], want[i].k), want[i].v);
	}
	esx_out_free(&out);
	/* A value indented under a "Key: value" is a sibling, not a child. */
	CHECK_INT(parse_str("   A: 1\n      B: 2\n   C:\n      D: 4\n   E:5\n"), 0);
	CHECK_STR(esx_get(&out.recs[0], "B"), "2");
	CHECK_STR(esx_get(&out.recs[0], "C.D"), "4");
	CHECK_STR(esx_get(&out.recs[0], "E"), "5");
	esx_out_free(&out);
	/* Colons in a spaceless value stay in it. */
	CHECK_INT(parse_str("   Remote Host:udp://10.0.0.1:514\n   Bus Info:0000:02:01:0\n"), 0);
	CHECK_STR(esx_get(&out.recs[0], "Remote Host"), "udp://10.0.0.1:514");
	CHECK_STR(esx_get(&out.recs[0], "Bus Info"), "0000:02:01:0");
	esx_out_free(&out);
}

/* Record keys not at column 0 never merge two records. */
TEST(indented_record_keys)
{
	CHECK_INT(parse_file("../esxi-layout/path-list-compellent-indented-keys-dead.txt"), 0);
	CHECK_INT(out.n, 2);
	CHECK_INT(out.shape, ESX_KEYED);
	if (out.n == 2) {
		CHECK_STR(esx_get(&out.recs[0], "State"), "active");
		CHECK_STR(esx_get(&out.recs[1], "State"), "dead");
		CHECK_STR(esx_get(&out.recs[1], "Runtime Name"), "vmhba38:C0:T0:L1");
	}
	esx_out_free(&out);
	/* KB 308204 as the page shows it: the keys lost their indent. */
	CHECK_INT(parse_file("../esxi-layout/vm-process-list-kb308204-indent-lost.txt"), 0);
	CHECK_INT(out.n, 1);
	if (out.n == 1) {
		CHECK_STR(out.recs[0].title, "RH4U5-101VM");
		CHECK_STR(esx_get(&out.recs[0], "World ID"), "8339");
		CHECK_STR(esx_get(&out.recs[0], "VMX Cartel ID"), "vm_cartel_ID");
	}
	esx_out_free(&out);
	/* The first key coming round again: a record whose header was lost. */
	CHECK_INT(parse_str("   UID: p1\n   State: active\n\n   UID: p2\n   State: dead\n"), 0);
	CHECK_INT(out.n, 2);
	if (out.n == 2)
		CHECK_STR(esx_get(&out.recs[1], "State"), "dead");
	esx_out_free(&out);
	/* Indented "UUID: ..." headers with children. */
	CHECK_INT(parse_str("  UUID: 52e1\n     Name: a\n     Space Health:\n"
	    "        State: green\n  UUID: 52e2\n     Name: b\n"), 0);
	CHECK_INT(out.n, 2);
	if (out.n == 2) {
		CHECK_STR(esx_get(&out.recs[0], "Space Health.State"), "green");
		CHECK_STR(esx_get(&out.recs[1], "Name"), "b");
	}
	esx_out_free(&out);
}

/* An expected key that is missing is counted (and logged), not silent. */
TEST(expected_keys_are_counted)
{
	uint64_t before = esxcli_parse_gaps();

	CHECK_INT(parse_str("   A: 1\n"), 0);
	CHECK_STR(esx_want(&out.recs[0], "test cmd", "dev1", "A"), "1");
	CHECK_INT(esxcli_parse_gaps(), before);
	CHECK(esx_want(&out.recs[0], "test cmd", "dev1", "B") == NULL);
	CHECK_INT(esxcli_parse_gaps(), before + 1);
	esx_gap("test cmd", "dev1", "A", "has no number");
	CHECK_INT(esxcli_parse_gaps(), before + 2);
	esx_out_free(&out);
}

TEST(query_runs_localcli_first)
{
	char dir[] = "/tmp/test_esxcli.XXXXXX", path[PATH_MAX];
	const char *const args[] = { "network", "nic", "list", NULL };
	struct config *cfg = config_default();

	CHECK(cfg != NULL && mkdtemp(dir) != NULL);
	if (cfg == NULL)
		return;
	free(cfg->tools_dir);
	cfg->tools_dir = strdup(dir);
	script(dir, "localcli", "[ \"$*\" = \"network nic list\" ] || exit 3\n"
	    "printf 'Name    Driver\\n------  ------\\nvmnic0  ixgben\\n'");
	script(dir, "esxcli", "echo 'Error: should not run' >&2; exit 1");
	CHECK_INT(esxcli_query(cfg, 5, args, &out), 0);
	CHECK_INT(out.n, 1);
	CHECK_STR(esx_get(&out.recs[0], "Driver"), "ixgben");
	esx_out_free(&out);

	/* without localcli, esxcli answers (here with an error) */
	snprintf(path, sizeof(path), "%s/localcli", dir);
	unlink(path);
	CHECK_INT(esxcli_query(cfg, 5, args, &out), -1);
	CHECK_INT(out.n, 0);

	/* exit 0 but text that is no esxcli output */
	script(dir, "esxcli", "echo 'Error: Unknown command'");
	CHECK_INT(esxcli_query(cfg, 5, args, &out), -1);

	/* a hung tool costs its timeout, not more */
	script(dir, "esxcli", "exec sleep 30");
	{
		time_t t0 = time(NULL);

		CHECK_INT(esxcli_query(cfg, 1, args, &out), -1);
		CHECK(time(NULL) - t0 <= 5);
	}
	snprintf(path, sizeof(path), "%s/esxcli", dir);
	unlink(path);
	rmdir(dir);
	config_free(cfg);
}

int
main(void)
{
	T_PROG("test_esxcli");
	config_plugins_builtin();
	RUN(every_text_fixture_parses);
	RUN(nic_list_90);
	RUN(nic_list_55_padded_old_columns);
	RUN(nic_list_keyvalue_formatter);
	RUN(nic_get_nested_driver_info);
	RUN(nic_stats_kb341594);
	RUN(smart_get_4_and_5_columns);
	RUN(path_list_keyed_and_colon_header);
	RUN(device_list_padding_trimmed);
	RUN(nfs_and_nfs41_lists);
	RUN(filesystem_and_extent_lists);
	RUN(other_shapes);
	RUN(empty_and_header_only);
	RUN(truncated_and_odd_rows);
	RUN(errors_and_garbage);
	RUN(hostile_table_is_bounded);
	RUN(uneven_and_spaceless_block);
	RUN(indented_record_keys);
	RUN(expected_keys_are_counted);
	RUN(query_runs_localcli_first);
	return t_done();
}
