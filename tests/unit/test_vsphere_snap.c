/* The vSphere poll's snapshot (collectors/host/vsphere_snap.c) from
 * RetrievePropertiesEx answers the simulator gave (tests/fuzz/seeds/
 * vsphere_xml/SOURCES), and the vsphere host's answers from it
 * (collectors/host/vsphere_host.c): the nic_info and esxcli records the
 * built-in collectors read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../collectors/host/esxcli.h"
#include "../../collectors/host/host.h"
#include "../../collectors/host/nicinfo.h"
#include "../../collectors/host/vsphere.h"

#define SEEDS	"tests/fuzz/seeds/vsphere_xml/"

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;

	if (f == NULL)
		return NULL;
	b = malloc(1 << 20);
	*len = fread(b, 1, (1 << 20) - 1, f);
	b[*len] = '\0';
	fclose(f);
	return b;
}

static int
parse(struct vs_snap *s, const char *file)
{
	char tok[256], err[256], *x;
	size_t len;
	int r;

	x = slurp(file, &len);
	if (x == NULL)
		return -2;
	r = vs_snap_parse(s, x, len, tok, sizeof(tok), err, sizeof(err));
	free(x);
	return r;
}

TEST(hosts_pnics_luns_paths)
{
	struct vs_snap s;

	memset(&s, 0, sizeof(s));
	CHECK_INT(parse(&s, SEEDS "retrieve-properties-hosts.xml"), 0);
	CHECK_INT((int)s.nhosts, 2);
	CHECK_STR(s.hosts[0].moid, "host-21");
	CHECK_STR(s.hosts[0].name, "DC0_H0");
	CHECK_STR(s.hosts[0].conn, "connected");
	CHECK_INT(s.hosts[0].maint, 0);
	CHECK_INT((int)s.hosts[0].npnics, 2);
	CHECK_STR(s.hosts[0].pnics[1].device, "vmnic1");
	CHECK_STR(s.hosts[0].pnics[1].driver, "nvmxnet3");
	CHECK(s.hosts[0].pnics[1].speed_mb == 10000);
	CHECK_INT(s.hosts[0].pnics[1].duplex, 1);
	CHECK(s.hosts[0].nluns >= 2);
	CHECK_STR(s.hosts[0].luns[0].canonical, "mpx.vmhba1:C0:T0:L0");
	CHECK_STR(s.hosts[0].luns[0].state, "ok");
	CHECK(s.hosts[0].npaths >= 2);
	CHECK_STR(s.hosts[0].paths[0].state, "active");
	CHECK_STR(s.hosts[0].paths[0].lun, s.hosts[0].luns[0].key);
	vs_snap_free(&s);
}

TEST(datastores_and_host_answers)
{
	const char *const devs[] = { "storage", "core", "device", "list", NULL };
	const char *const fs[] = { "storage", "filesystem", "list", NULL };
	const char *const other[] = { "vsan", "storage", "list", NULL };
	struct vs_snap s;
	struct nic_info *ni;
	struct esx_out o;
	struct host *h;
	int n;

	memset(&s, 0, sizeof(s));
	CHECK_INT(parse(&s, SEEDS "retrieve-properties-hosts.xml"), 0);
	CHECK_INT(parse(&s, SEEDS "retrieve-properties-datastores.xml"), 0);
	CHECK_INT((int)s.nds, 1);
	CHECK_STR(s.ds[0].name, "LocalDS_0");
	CHECK_INT((int)s.ds[0].nmounts, 1);
	CHECK_STR(s.ds[0].mounts[0].host, "host-32");
	CHECK_INT(s.ds[0].mounts[0].accessible, 1);
	/* a link taken down: linkSpeed unset */
	s.hosts[1].pnics[0].speed_mb = -1;
	strcpy(s.ds[0].mounts[0].reason, "PermanentDeviceLoss");
	strcpy(s.ds[0].extent, s.hosts[1].luns[1].canonical);
	h = vs_host_open(&s, 1);
	n = host_nics(h, NULL, 5, &ni);
	CHECK_INT(n, 2);
	CHECK_INT(ni[0].link, NIC_DOWN);
	CHECK_INT(ni[1].link, NIC_UP);
	CHECK(!ni[0].have[0] && !ni[0].sums_only);
	free(ni);
	CHECK_INT(host_esxcli(h, 5, devs, &o), 0);
	CHECK(o.n >= 2);
	CHECK_STR(esx_get(&o.recs[1], "Status"), "not connected");
	CHECK_STR(esx_get(&o.recs[0], "Status"), "on");
	esx_out_free(&o);
	CHECK_INT(host_esxcli(h, 5, fs, &o), 0);
	CHECK_INT((int)o.n, 1);
	CHECK_STR(esx_get(&o.recs[0], "Volume Name"), "LocalDS_0");
	CHECK_STR(esx_get(&o.recs[0], "Mounted"), "true");
	esx_out_free(&o);
	CHECK_INT(host_esxcli(h, 5, other, &o), -1);
	CHECK_INT(host_err(), HOST_EABSENT);
	host_close(h);
	vs_snap_free(&s);
}

TEST(faults_and_garbage_are_errors)
{
	struct vs_snap s;
	char tok[64], err[256];
	static const char bad[] = "<a><b>unclosed";

	memset(&s, 0, sizeof(s));
	CHECK_INT(vs_snap_parse(&s, bad, sizeof(bad) - 1, tok, sizeof(tok), err,
	    sizeof(err)), -1);
	CHECK(strstr(err, "not well-formed") != NULL);
	CHECK_INT(parse(&s, SEEDS "fault-not-authenticated.xml"), 0);
	CHECK_INT((int)s.nhosts, 0);
	vs_snap_free(&s);
}

int
main(void)
{
	RUN(hosts_pnics_luns_paths);
	RUN(datastores_and_host_answers);
	RUN(faults_and_garbage_are_errors);
	return t_done();
}
