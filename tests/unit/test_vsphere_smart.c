/* SMART through vCenter's vSAN health service (collectors/host/
 * vsphere_smart.c): VsanQueryVcClusterSmartStatsSummary answers into the
 * smart collector's struct smart_info, per host of the snapshot.
 *
 * Fixtures (tests/fuzz/seeds/vsphere_xml/SOURCES): vsan-smart-stats-
 * summary.xml, the simulator's answer (tests/vcsim/vsan.go); vsan-smart-
 * wsdl.xml, written by hand after the vSAN Management API reference
 * (https://developer.broadcom.com/xapis/vsan-management-api/latest/:
 * VsanSmartStatsHostSummary, VsanSmartDiskStats, VsanSmartParameter — value
 * "unset if the value is not available", smarthealthstatus 0 OK, 1 Warning,
 * 2 Impending Failure, 3 Unknown, "other values ... are invalid";
 * VsanSmartParameterType), with xsi:type on every data object as vCenter
 * sends them, a MethodFault error with faultMessage and an invalid,
 * a negative and a non-numeric value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../collectors/host/vsphere.h"

#define SEEDS	"tests/fuzz/seeds/vsphere_xml/"

static int
parse(struct vs_smart *o, const char *file)
{
	char err[256], *x;
	size_t len;
	FILE *f = fopen(file, "rb");
	int r;

	if (f == NULL)
		return -2;
	x = malloc(1 << 20);
	len = fread(x, 1, (1 << 20) - 1, f);
	fclose(f);
	r = vs_smart_parse(o, x, len, err, sizeof(err));
	free(x);
	return r;
}

static const struct vs_sdisk *
disk(const struct vs_smart *o, const char *host, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->d[i].host, host) == 0 &&
		    strcmp(o->d[i].disk, name) == 0)
			return &o->d[i];
	return NULL;
}

TEST(simulator_answer)
{
	struct vs_smart o;
	const struct vs_sdisk *d;

	CHECK_INT(parse(&o, SEEDS "vsan-smart-stats-summary.xml"), 0);
	CHECK_INT((int)o.nhosts, 2);
	CHECK_STR(o.hosts[0], "DC0_C0_H0");
	CHECK_STR(o.hosts[1], "DC0_C0_H1");
	CHECK_INT((int)o.n, 4);
	d = disk(&o, "DC0_C0_H0", "naa.5000c500b1c2000000");
	CHECK(d != NULL);
	if (d == NULL)
		return;
	CHECK_STR(d->error, "");
	CHECK_INT(d->si.health, SMART_OK);
	CHECK_STR(d->si.health_text, "OK");
	CHECK_INT((int)d->si.reallocated_sectors, 5);
	CHECK_INT((int)d->si.temperature_c, 34);
	CHECK_INT((int)d->si.power_on_hours, 8760);
	CHECK_INT((int)d->si.power_cycles, 12);
	CHECK_INT((int)d->si.media_wearout, 100);
	CHECK_INT((int)d->si.read_errors, 0);
	CHECK_INT((int)d->si.write_errors, 0);
	/* what the API has no parameter for stays absent */
	CHECK_INT((int)d->si.pending_sectors, -1);
	CHECK_INT((int)d->si.max_temperature_c, -1);
	CHECK_INT((int)d->si.critical_warning, -1);
	d = disk(&o, "DC0_C0_H1", "naa.55cd2e414d6f000001");
	CHECK(d != NULL && strcmp(d->error, "SystemError: CANNOT open device") == 0);
	CHECK(d != NULL && d->si.health == SMART_UNKNOWN && d->si.temperature_c == -1);
	vs_smart_free(&o);
}

TEST(wsdl_answer)
{
	struct vs_smart o;
	const struct vs_sdisk *d;

	CHECK_INT(parse(&o, SEEDS "vsan-smart-wsdl.xml"), 0);
	CHECK_INT((int)o.nhosts, 2);
	CHECK_INT((int)o.n, 3);
	d = disk(&o, "esx01.Example.com", "naa.5000cca0aa111111");
	CHECK(d != NULL);
	if (d == NULL)
		return;
	CHECK_INT(d->si.health, SMART_IMPENDING);
	CHECK_STR(d->si.health_text, "IMPENDING FAILURE");
	CHECK_INT((int)d->si.temperature_c, 51);
	CHECK_INT((int)d->si.max_temperature_c, 50);
	CHECK_INT((int)d->si.reallocated_sectors, 140);
	CHECK_INT((int)d->si.power_on_hours, -1);	/* value unset */
	CHECK_INT((int)d->si.read_errors, -1);		/* -4: not a count */
	CHECK_INT((int)d->si.write_errors, -1);		/* "12x": not an int */
	CHECK_INT((int)d->si.media_wearout, -1);
	d = disk(&o, "esx01.Example.com", "naa.5000cca0aa222222");
	CHECK(d != NULL && d->si.health == SMART_UNKNOWN &&
	    strcmp(d->si.health_text, "invalid smarthealthstatus 7") == 0);
	d = disk(&o, "esx01.Example.com", "mpx.vmhba1:C0:T2:L0");
	CHECK(d != NULL && strcmp(d->error,
	    "SystemError: GET SMART parameters error") == 0);
	vs_smart_free(&o);
}

TEST(take_by_host_name)
{
	struct vs_smart o;
	struct vs_hostsnap a, b, c;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	snprintf(a.name, sizeof(a.name), "ESX01.example.com");
	snprintf(b.name, sizeof(b.name), "esx02.example.com");
	snprintf(c.name, sizeof(c.name), "esx03.example.com");
	CHECK_INT(parse(&o, SEEDS "vsan-smart-wsdl.xml"), 0);
	vs_smart_take(&a, &o);
	vs_smart_take(&b, &o);
	vs_smart_take(&c, &o);
	CHECK(a.smart_fresh && a.nsdisks == 3);
	CHECK(b.smart_fresh && b.nsdisks == 0);	/* answered, no vSAN disk */
	CHECK(!c.smart_fresh && c.nsdisks == 0);	/* not in the answer */
	free(a.sdisks);
	vs_smart_free(&o);
}

TEST(garbage_is_an_error)
{
	struct vs_smart o;
	char err[256];
	static const char bad[] = "<a><returnval><smartStats>";

	CHECK_INT(vs_smart_parse(&o, bad, sizeof(bad) - 1, err, sizeof(err)), -1);
	CHECK(err[0] != '\0');
	vs_smart_free(&o);
}

/* HostSystem.parent: the cluster from the moref's own type attribute,
 * whichever order it and xsi:type come in. */
TEST(parent_cluster_in_the_snapshot)
{
	static const char xml[] =
	    "<?xml version=\"1.0\"?><soapenv:Envelope xmlns:soapenv=\"http://"
	    "schemas.xmlsoap.org/soap/envelope/\" xmlns:xsi=\"http://www.w3.org/"
	    "2001/XMLSchema-instance\"><soapenv:Body><RetrievePropertiesExResponse"
	    " xmlns=\"urn:vim25\"><returnval><objects><obj type=\"HostSystem\">"
	    "host-1</obj><propSet><name>name</name><val xsi:type=\"xsd:string\">"
	    "h1</val></propSet><propSet><name>parent</name><val type=\""
	    "ClusterComputeResource\" xsi:type=\"ManagedObjectReference\">"
	    "domain-c7</val></propSet></objects><objects><obj type=\"HostSystem\">"
	    "host-2</obj><propSet><name>parent</name><val xsi:type=\""
	    "ManagedObjectReference\" type=\"ClusterComputeResource\">domain-c8"
	    "</val></propSet></objects><objects><obj type=\"HostSystem\">host-3"
	    "</obj><propSet><name>parent</name><val xsi:type=\""
	    "ManagedObjectReference\" type=\"ComputeResource\">domain-s9</val>"
	    "</propSet></objects></returnval></RetrievePropertiesExResponse>"
	    "</soapenv:Body></soapenv:Envelope>";
	struct vs_snap s;
	char tok[64], err[256];

	memset(&s, 0, sizeof(s));
	CHECK_INT(vs_snap_parse(&s, xml, sizeof(xml) - 1, tok, sizeof(tok), err,
	    sizeof(err)), 0);
	CHECK_INT((int)s.nhosts, 3);
	if (s.nhosts == 3) {
		CHECK_STR(s.hosts[0].cluster, "domain-c7");
		CHECK_STR(s.hosts[1].cluster, "domain-c8");
		CHECK_STR(s.hosts[2].cluster, "");	/* a standalone host */
	}
	vs_snap_free(&s);
}

int
main(void)
{
	RUN(simulator_answer);
	RUN(wsdl_answer);
	RUN(take_by_host_name);
	RUN(garbage_is_an_error);
	RUN(parent_cluster_in_the_snapshot);
	return t_done();
}
