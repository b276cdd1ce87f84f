/* Unit tests for collectors/storage_ds.c: the storage picture built from
 * the esxcli fixtures and every device/datastore state derived from it. */
#include "t.h"

#include "../../collectors/host/esxcli.h"
#include "../../collectors/storage_ds.h"

#define FX "tests/fixtures/esxi/"

static void
parse_file(const char *path, struct esx_out *o)
{
	size_t	 n;
	char	*s = t_slurp(path, &n), err[200];

	if (esxcli_parse(s, n, o, err, sizeof(err)) != 0)
		printf("  %s: %s\n", path, err);
	free(s);
}

static void
parse_str(const char *s, struct esx_out *o)
{
	char	 err[200];

	if (esxcli_parse(s, strlen(s), o, err, sizeof(err)) != 0)
		printf("  parse: %s\n", err);
}

/* The 9.0 capture: one local disk backing OSDATA; its path made up from
 * the 8.0.3 capture's shape. */
static const char *local_path =
    "vmhba0-path:\n"
    "   UID: vmhba0-path\n"
    "   Runtime Name: vmhba0:C0:T0:L0\n"
    "   Device: mpx.vmhba0:C0:T0:L0\n"
    "   Adapter: vmhba0\n"
    "   Plugin: HPP\n"
    "   State: %s\n"
    "   Transport: parallel\n";

static struct esx_out devs, exts, fs, nfs, nfs41a, nfs41i;

static void
load_fixtures(void)
{
	parse_file(FX "esxcli-storage-core-device-list/esxi90-virtual-disk-hpp.txt", &devs);
	parse_file(FX "esxcli-storage-vmfs-extent-list/esxi90.txt", &exts);
	parse_file(FX "esxcli-storage-filesystem-list/esxi90.txt", &fs);
	parse_file(FX "esxcli-storage-nfs-list/esxi80b-synology-nfsv3.txt", &nfs);
	parse_file(FX "esxcli-storage-nfs41-list/freenas-accessible.txt", &nfs41a);
	parse_file(FX "esxcli-storage-nfs41-list/inaccessible-hwaccel-unknown.txt", &nfs41i);
}

static int
build(struct ds_snap *s, const char *path_state, const struct esx_out *n41,
    char *err, size_t errlen)
{
	char	 text[1024];
	struct esx_out paths;
	int	 rc;

	snprintf(text, sizeof(text), local_path, path_state);
	parse_str(text, &paths);
	rc = ds_snap_build(s, &devs, &paths, &exts, &fs, &nfs, n41, err, errlen);
	esx_out_free(&paths);
	return rc;
}

static struct ds_vol *
vol(struct ds_snap *s, const char *name)
{
	size_t	 i;

	for (i = 0; i < s->nvol; i++)
		if (strcmp(s->vols[i].name, name) == 0)
			return &s->vols[i];
	return NULL;
}

TEST(picture_from_fixtures)
{
	struct ds_snap s;
	struct ds_dev *d;
	struct ds_vol *v;
	enum ds_state st[4];
	char	 err[200];

	CHECK_INT(build(&s, "active", &nfs41a, err, sizeof(err)), 0);
	CHECK_INT(s.ndev, 1);
	d = ds_find_dev(&s, "mpx.vmhba0:C0:T0:L0");
	CHECK(d != NULL);
	if (d == NULL)
		return;
	CHECK_STR(d->status, "on");
	CHECK_INT(d->active, 1);
	CHECK_INT(d->total, 1);
	CHECK_STR(d->datastores, "OSDATA-693975f2-9139b258-8620-005056b3b989");
	CHECK_STR(d->fs_type, "VMFSOS");
	CHECK(!d->offline);
	st[0] = ds_dev_state(d, 0);
	CHECK_INT(st[0], DS_OK);

	v = vol(&s, "OSDATA-693975f2-9139b258-8620-005056b3b989");
	CHECK(v != NULL);
	if (v != NULL) {
		CHECK_STR(v->devices, "mpx.vmhba0:C0:T0:L0");
		CHECK_INT(v->mounted, 1);
		CHECK_INT(ds_vol_state(&s, v, st), DS_OK);
	}
	v = vol(&s, "BOOTBANK1");
	CHECK(v != NULL && strcmp(v->fs_type, "vfat") == 0);
	v = vol(&s, "nfsbackup");
	CHECK(v != NULL);
	if (v != NULL) {
		CHECK(v->nfs);
		CHECK_STR(v->fs_type, "NFS");
		CHECK_STR(v->host, "192.168.1.22");
		CHECK_STR(v->share, "/volume1/vmnfsbackup");
		CHECK_INT(v->accessible, 1);
		CHECK_INT(ds_vol_state(&s, v, st), DS_OK);
	}
	v = vol(&s, "freenas01-backups");
	CHECK(v != NULL);
	if (v != NULL) {
		CHECK_STR(v->fs_type, "NFS41");
		CHECK_STR(v->host, "freenas01");
		CHECK_INT(ds_vol_state(&s, v, st), DS_OK);
	}
	ds_snap_free(&s);
}

TEST(nfs41_inaccessible)
{
	struct ds_snap s;
	struct ds_vol *v;
	enum ds_state st[4] = { DS_OK };
	char	 err[200];

	CHECK_INT(build(&s, "active", &nfs41i, err, sizeof(err)), 0);
	v = vol(&s, "isos");
	CHECK(v != NULL);
	if (v != NULL) {
		CHECK_INT(v->accessible, 0);
		CHECK_INT(v->mounted, 0);
		CHECK_INT(ds_vol_state(&s, v, st), DS_INACCESSIBLE);
		CHECK_STR(ds_state_name(ds_vol_state(&s, v, st)), "inaccessible");
	}
	ds_snap_free(&s);
}

TEST(path_states)
{
	struct ds_snap s;
	struct ds_dev *d;
	struct ds_vol *v;
	enum ds_state st[4];
	char	 err[200];

	/* The only path dead: APD, and the datastore with it. */
	CHECK_INT(build(&s, "dead", &nfs41a, err, sizeof(err)), 0);
	d = ds_find_dev(&s, "mpx.vmhba0:C0:T0:L0");
	CHECK(d != NULL);
	if (d != NULL) {
		CHECK_INT(d->dead, 1);
		CHECK(ds_dev_suspect(d));
		st[0] = ds_dev_state(d, 1);
		CHECK_INT(st[0], DS_APD);
		v = vol(&s, "OSDATA-693975f2-9139b258-8620-005056b3b989");
		CHECK(v != NULL && ds_vol_state(&s, v, st) == DS_APD);
		/* vdq says IsPDL: PDL wins. */
		d->pdl_evidence = true;
		CHECK_INT(ds_dev_state(d, 1), DS_PDL);
	}
	ds_snap_free(&s);
	/* Standby only: live, not degraded against a baseline of 1. */
	CHECK_INT(build(&s, "standby", &nfs41a, err, sizeof(err)), 0);
	d = ds_find_dev(&s, "mpx.vmhba0:C0:T0:L0");
	if (d != NULL)
		CHECK_INT(ds_dev_state(d, 1), DS_OK);
	ds_snap_free(&s);
	/* Disabled: fewer live paths than the baseline. */
	CHECK_INT(build(&s, "disabled", &nfs41a, err, sizeof(err)), 0);
	d = ds_find_dev(&s, "mpx.vmhba0:C0:T0:L0");
	if (d != NULL) {
		CHECK_INT(ds_dev_state(d, 1), DS_DEGRADED);
		CHECK_INT(ds_dev_state(d, 0), DS_OK);	/* no baseline yet */
	}
	ds_snap_free(&s);
}

TEST(device_status_values)
{
	struct ds_dev d;

	memset(&d, 0, sizeof(d));
	snprintf(d.id, sizeof(d.id), "naa.1");
	d.active = 2;
	d.total = 2;
	snprintf(d.status, sizeof(d.status), "on");
	CHECK_INT(ds_dev_state(&d, 2), DS_OK);
	CHECK_INT(ds_dev_state(&d, 4), DS_DEGRADED);
	snprintf(d.status, sizeof(d.status), "degraded");
	CHECK_INT(ds_dev_state(&d, 2), DS_DEGRADED);
	snprintf(d.status, sizeof(d.status), "off");
	CHECK_INT(ds_dev_state(&d, 2), DS_OFF);
	snprintf(d.status, sizeof(d.status), "not connected");
	CHECK_INT(ds_dev_state(&d, 2), DS_PDL);
	snprintf(d.status, sizeof(d.status), "dead");
	CHECK_INT(ds_dev_state(&d, 2), DS_APD);
	snprintf(d.status, sizeof(d.status), "on");
	d.offline = true;
	CHECK_INT(ds_dev_state(&d, 2), DS_OFF);
	d.offline = false;
	d.active = 1;
	d.dead = 1;
	CHECK_INT(ds_dev_state(&d, 0), DS_DEGRADED);
	CHECK_STR(ds_state_severity(DS_APD), "critical");
	CHECK_STR(ds_state_severity(DS_PDL), "critical");
	CHECK_STR(ds_state_severity(DS_INACCESSIBLE), "error");
	CHECK_STR(ds_state_severity(DS_OK), "info");
	CHECK_STR(ds_state_name(DS_UNMOUNTED), "unmounted");
	CHECK_STR(ds_state_name(DS_PDL), "pdl");
}

TEST(real_path_list_counts)
{
	struct esx_out paths, jdevs;
	struct ds_snap s;
	char	 err[200];
	const char *two =
	    "t10.ATA_____ST20000NM007D2D3DJ103________________________________ZVTBXN1D\n"
	    "   Display Name: Local ATA Disk\n   Status: on\n   Is Offline: false\n\n"
	    "mpx.vmhba32:C0:T0:L0\n   Display Name: Local USB CD-ROM\n   Status: on\n";

	parse_file(FX "esxcli-storage-core-path-list/esxi803-local-sata-nvme-usb.txt", &paths);
	parse_str(two, &jdevs);
	CHECK_INT(ds_snap_build(&s, &jdevs, &paths, NULL, NULL, NULL, NULL, err,
	    sizeof(err)), 0);
	CHECK_INT(s.ndev, 2);
	CHECK_INT(s.devs[0].active, 1);
	CHECK_INT(s.devs[0].total, 1);
	CHECK_INT(s.devs[1].active, 1);
	CHECK_STR(s.devs[0].datastores, "");	/* extents unknown: not guessed */
	CHECK_INT(s.nvol, 0);
	ds_snap_free(&s);
	esx_out_free(&jdevs);
	esx_out_free(&paths);
}

/* The Compellent capture: a keyed record whose header ends in ':'. */
TEST(colon_header_path_list)
{
	struct esx_out paths, d1;
	struct ds_snap s;
	char	 err[200];
	const char *dev = "naa.6000d31000771000000000000000000d\n"
	    "   Display Name: COMPELNT iSCSI Disk\n   Status: degraded\n";

	parse_file(FX "esxcli-storage-core-path-list/compellent-iscsi-colon-header.txt",
	    &paths);
	parse_str(dev, &d1);
	CHECK_INT(ds_snap_build(&s, &d1, &paths, NULL, NULL, NULL, NULL, err,
	    sizeof(err)), 0);
	CHECK_INT(s.ndev, 1);
	if (s.ndev == 1) {
		CHECK_INT(s.devs[0].active, 1);
		CHECK_INT(s.devs[0].total, 1);
		CHECK_INT(ds_dev_state(&s.devs[0], 1), DS_DEGRADED);	/* Status */
	}
	ds_snap_free(&s);
	esx_out_free(&d1);
	esx_out_free(&paths);
}

/* Path records whose keys are indented (not at column 0): the dead path
 * stays dead, never merged into the live one. */
TEST(indented_path_records_stay_apart)
{
	struct esx_out paths, d1;
	struct ds_snap s;
	char	 err[200];
	const char *dev = "naa.6000d31000771000000000000000000d\n"
	    "   Display Name: COMPELNT iSCSI Disk\n   Status: on\n";

	parse_file("tests/fixtures/esxi-layout/path-list-compellent-indented-keys-dead.txt",
	    &paths);
	parse_str(dev, &d1);
	CHECK_INT(ds_snap_build(&s, &d1, &paths, NULL, NULL, NULL, NULL, err,
	    sizeof(err)), 0);
	CHECK_INT(s.ndev, 1);
	if (s.ndev == 1) {
		CHECK_INT(s.devs[0].active, 1);
		CHECK_INT(s.devs[0].dead, 1);
		CHECK_INT(s.devs[0].total, 2);
		CHECK_INT(ds_dev_state(&s.devs[0], 2), DS_DEGRADED);
	}
	ds_snap_free(&s);
	esx_out_free(&d1);
	esx_out_free(&paths);
}

/* A datastore whose name is a prefix of another's ("DS1", "DS10") does not
 * lend its filesystem type to the other's device. */
TEST(datastore_names_are_whole_names)
{
	struct esx_out d, paths, ex, fsl;
	struct ds_snap s;
	char	 err[200];

	parse_str("naa.1\n   Status: on\n\nnaa.10\n   Status: on\n", &d);
	parse_str("p1\n   Device: naa.1\n   State: active\n\n"
	    "p10\n   Device: naa.10\n   State: active\n", &paths);
	parse_str("Volume Name  VMFS UUID  Extent Number  Device Name  Partition\n"
	    "-----------  ---------  -------------  -----------  ---------\n"
	    "DS1          u1                     0  naa.1                1\n"
	    "DS10         u10                    0  naa.10               1\n", &ex);
	parse_str("Mount Point        Volume Name  UUID  Mounted  Type    Size  Free\n"
	    "-----------------  -----------  ----  -------  ------  ----  ----\n"
	    "/vmfs/volumes/u1   DS1          u1       true  VMFS-5    10     5\n"
	    "/vmfs/volumes/u10  DS10         u10      true  VMFS-6    10     5\n", &fsl);
	CHECK(ds_in_list("DS1, DS10", "DS10"));
	CHECK(ds_in_list("DS10, DS1", "DS1"));
	CHECK(!ds_in_list("DS10", "DS1"));
	CHECK(!ds_in_list("xDS1", "DS1"));
	CHECK(!ds_in_list("mpx.vmhba0:C0:T0:L10", "mpx.vmhba0:C0:T0:L1"));
	CHECK(!ds_in_list("", "DS1"));
	CHECK(!ds_in_list("DS1", ""));
	CHECK_INT(ds_snap_build(&s, &d, &paths, &ex, &fsl, NULL, NULL, err,
	    sizeof(err)), 0);
	CHECK_INT(s.ndev, 2);
	if (s.ndev == 2) {
		CHECK_STR(s.devs[0].datastores, "DS1");
		CHECK_STR(s.devs[0].fs_type, "VMFS-5");
		CHECK_STR(s.devs[1].datastores, "DS10");
		CHECK_STR(s.devs[1].fs_type, "VMFS-6");
	}
	ds_snap_free(&s);
	esx_out_free(&d);
	esx_out_free(&paths);
	esx_out_free(&ex);
	esx_out_free(&fsl);
}

TEST(bad_inputs)
{
	struct esx_out e, hdr, garbage;
	struct ds_snap s;
	char	 err[200];

	memset(&e, 0, sizeof(e));
	/* Empty device list. */
	CHECK_INT(ds_snap_build(&s, &e, &e, NULL, NULL, NULL, NULL, err, sizeof(err)), -1);
	CHECK(strstr(err, "empty") != NULL);
	/* A device list without Status (another command's output). */
	parse_str("Name    Driver\n------  ------\nvmnic0  ixgben\n", &garbage);
	CHECK_INT(ds_snap_build(&s, &garbage, &e, NULL, NULL, NULL, NULL, err,
	    sizeof(err)), -1);
	/* A path list that is a header only. */
	parse_str("UID  State\n---  -----\n", &hdr);
	CHECK_INT(ds_snap_build(&s, &devs, &hdr, NULL, NULL, NULL, NULL, err,
	    sizeof(err)), -1);
	CHECK(strstr(err, "path") != NULL);
	CHECK_INT(ds_snap_build(&s, &devs, NULL, NULL, NULL, NULL, NULL, err,
	    sizeof(err)), -1);
	esx_out_free(&hdr);
	esx_out_free(&garbage);
}

int
main(void)
{
	T_PROG("test_datastore");
	load_fixtures();
	RUN(picture_from_fixtures);
	RUN(nfs41_inaccessible);
	RUN(path_states);
	RUN(device_status_values);
	RUN(real_path_list_counts);
	RUN(colon_header_path_list);
	RUN(indented_path_records_stay_apart);
	RUN(datastore_names_are_whole_names);
	RUN(bad_inputs);
	esx_out_free(&devs);
	esx_out_free(&exts);
	esx_out_free(&fs);
	esx_out_free(&nfs);
	esx_out_free(&nfs41a);
	esx_out_free(&nfs41i);
	return t_done();
}
