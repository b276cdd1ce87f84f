/* WaitForUpdatesEx answers (collectors/host/vsphere_wait.c): the UpdateSet
 * parser and the patching of the kept snapshot.
 *
 * Recorded: tests/fuzz/seeds/vsphere_xml/wait-for-updates-{enter,null,
 * modify}.xml, the simulator's answers (see SOURCES there).
 * Hand-written per the vSphere Web Services API reference (data objects
 * UpdateSet {version, filterSet[], truncated}, PropertyFilterUpdate
 * {filter, objectSet[], missingSet[] MissingObject}, ObjectUpdate {kind
 * (ObjectUpdateKind: enter | modify | leave), obj, changeSet[],
 * missingSet[] MissingProperty {path, fault}}, PropertyChange {name, op
 * (PropertyChangeOp: add | remove | assign | indirectRemove), val};
 * https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/UpdateSet
 * and the SOAP reference pages of the same names, e.g.
 * https://vijava.sourceforge.net/vSphereAPIDoc/ver5/ReferenceGuide/vmodl.query.PropertyCollector.UpdateSet.html). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
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

/* parse xml and apply it to s: the parse's, then the apply's result */
static int
patch(struct vs_snap *s, const char *xml, size_t len, struct vs_update *up,
    char *err, size_t errlen)
{
	int r = vs_update_parse(up, xml, len, err, errlen);

	if (r == 0 && up->have_ret)
		r = vs_update_apply(s, up, err, errlen) == 0 ? 0 : -2;
	return r;
}

static int
patch_file(struct vs_snap *s, const char *file, struct vs_update *up)
{
	char err[256], *x;
	size_t len;
	int r;

	x = slurp(file, &len);
	if (x == NULL)
		return -3;
	r = patch(s, x, len, up, err, sizeof(err));
	free(x);
	return r;
}

static const struct vs_pnic *
pnic(const struct vs_hostsnap *h, const char *dev)
{
	size_t i;

	for (i = 0; i < h->npnics; i++)
		if (strcmp(h->pnics[i].device, dev) == 0)
			return &h->pnics[i];
	return NULL;
}

TEST(recorded_enter_null_modify)
{
	struct vs_snap s;
	struct vs_update up;
	size_t nluns, npaths;

	memset(&s, 0, sizeof(s));
	CHECK_INT(patch_file(&s, SEEDS "wait-for-updates-enter.xml", &up), 0);
	CHECK(up.have_ret);
	CHECK(!up.truncated);
	CHECK_STR(up.version, "-");
	CHECK_INT((int)up.nobjs, 2);
	vs_update_free(&up);
	CHECK_INT((int)s.nhosts, 1);
	CHECK_INT((int)s.nds, 1);
	CHECK_STR(s.hosts[0].moid, "host-17");
	CHECK_STR(s.hosts[0].name, "DC0_C0_H0");
	CHECK_STR(s.hosts[0].conn, "connected");
	CHECK_INT(s.hosts[0].maint, 0);
	CHECK_INT((int)s.hosts[0].npnics, 2);
	CHECK(pnic(&s.hosts[0], "vmnic1") != NULL &&
	    pnic(&s.hosts[0], "vmnic1")->speed_mb == 10000);
	CHECK(s.hosts[0].nluns >= 3);
	CHECK(s.hosts[0].npaths >= 2);
	CHECK_STR(s.hosts[0].vsan_system, "vsanSystem-host-17");
	CHECK_STR(s.ds[0].name, "LocalDS_0");
	CHECK_STR(s.ds[0].type, "VMFS");
	CHECK_STR(s.ds[0].extent, "naa.6000c29e5a1d00000000000000000001");
	CHECK_INT((int)s.ds[0].nmounts, 1);
	CHECK_INT(s.ds[0].mounts[0].accessible, 1);
	nluns = s.hosts[0].nluns;
	npaths = s.hosts[0].npaths;

	/* nothing changed: no returnval, the snapshot as it was */
	CHECK_INT(patch_file(&s, SEEDS "wait-for-updates-null.xml", &up), 0);
	CHECK(!up.have_ret);
	vs_update_free(&up);
	CHECK_INT((int)s.nhosts, 1);

	/* vmnic1's link down, the datastore PDL on that host: only those
	 * properties replaced */
	CHECK_INT(patch_file(&s, SEEDS "wait-for-updates-modify.xml", &up), 0);
	CHECK_INT((int)up.nobjs, 2);
	vs_update_free(&up);
	CHECK_INT((int)s.nhosts, 1);
	CHECK_STR(s.hosts[0].name, "DC0_C0_H0");
	CHECK_INT((int)s.hosts[0].npnics, 2);
	CHECK(pnic(&s.hosts[0], "vmnic1")->speed_mb == -1);
	CHECK(pnic(&s.hosts[0], "vmnic0")->speed_mb == 10000);
	CHECK_INT((int)s.hosts[0].nluns, (int)nluns);
	CHECK_INT((int)s.hosts[0].npaths, (int)npaths);
	CHECK_STR(s.ds[0].extent, "naa.6000c29e5a1d00000000000000000001");
	CHECK_INT((int)s.ds[0].nmounts, 1);
	CHECK_INT(s.ds[0].mounts[0].accessible, 0);
	CHECK_STR(s.ds[0].mounts[0].reason, "PermanentDeviceLoss");
	vs_snap_free(&s);
}

#define ENV(body) "<?xml version=\"1.0\"?><soapenv:Envelope xmlns:soapenv=" \
	"\"http://schemas.xmlsoap.org/soap/envelope/\" xmlns:xsi=" \
	"\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>" \
	"<WaitForUpdatesExResponse xmlns=\"urn:vim25\"><returnval>" body \
	"</returnval></WaitForUpdatesExResponse></soapenv:Body></soapenv:Envelope>"
#define FS(objs) "<filterSet><filter type=\"PropertyFilter\">f-1</filter>" \
	objs "</filterSet>"
#define HOST(kind, moid, changes) "<objectSet><kind>" kind "</kind><obj " \
	"type=\"HostSystem\">" moid "</obj>" changes "</objectSet>"
#define CH(name, op, val) "<changeSet><name>" name "</name><op>" op \
	"</op>" val "</changeSet>"

/* a first answer cut by maxObjectUpdates, then its rest; a new host
 * entering, one leaving, a property removed, one missing */
static const char first[] = ENV("<version>1-t</version>" FS(
	HOST("enter", "host-1", CH("name", "assign", "<val xsi:type=\"xsd:string\">esx1</val>")
	    CH("runtime.inMaintenanceMode", "assign", "<val xsi:type=\"xsd:boolean\">true</val>")
	    CH("runtime.connectionState", "assign",
	    "<val xsi:type=\"HostSystemConnectionState\">connected</val>")))
	"<truncated>true</truncated>");
static const char rest[] = ENV("<version>2</version>" FS(
	HOST("enter", "host-2", CH("name", "assign", "<val xsi:type=\"xsd:string\">esx2</val>")
	    CH("config.network.pnic", "assign", "<val xsi:type=\"ArrayOfPhysicalNic\">"
	    "<PhysicalNic><key>k0</key><device>vmnic0</device><driver>ixgben</driver>"
	    "<linkSpeed><speedMb>25000</speedMb><duplex>true</duplex></linkSpeed>"
	    "</PhysicalNic></val>")))
	"<truncated>false</truncated>");
static const char later[] = ENV("<version>3</version>" FS(
	HOST("modify", "host-1", CH("runtime.inMaintenanceMode", "remove", "")
	    CH("parent", "assign", "<val type=\"ClusterComputeResource\" "
	    "xsi:type=\"ManagedObjectReference\">domain-c7</val>")
	    "<missingSet><path>runtime.connectionState</path><fault><fault "
	    "xsi:type=\"NoPermission\"></fault></fault></missingSet>")
	HOST("leave", "host-2", "")
	"<missingSet><obj type=\"HostSystem\">host-77</obj><fault><fault "
	"xsi:type=\"ManagedObjectNotFound\"></fault></fault></missingSet>"));

TEST(hand_written_truncated_enter_leave_remove)
{
	struct vs_snap s;
	struct vs_update up;
	char err[256];

	memset(&s, 0, sizeof(s));
	CHECK_INT(patch(&s, first, sizeof(first) - 1, &up, err, sizeof(err)), 0);
	CHECK(up.truncated);
	CHECK_STR(up.version, "1-t");
	vs_update_free(&up);
	CHECK_INT(patch(&s, rest, sizeof(rest) - 1, &up, err, sizeof(err)), 0);
	CHECK(!up.truncated);
	CHECK_STR(up.version, "2");
	vs_update_free(&up);
	CHECK_INT((int)s.nhosts, 2);
	CHECK_STR(s.hosts[0].name, "esx1");
	CHECK_INT(s.hosts[0].maint, 1);
	CHECK_STR(s.hosts[1].name, "esx2");
	CHECK_INT((int)s.hosts[1].npnics, 1);
	CHECK_STR(s.hosts[1].pnics[0].driver, "ixgben");
	CHECK(s.hosts[1].pnics[0].speed_mb == 25000);

	CHECK_INT(patch(&s, later, sizeof(later) - 1, &up, err, sizeof(err)), 0);
	vs_update_free(&up);
	/* host-2 left; host-77 of the filter's missingSet made nothing */
	CHECK_INT((int)s.nhosts, 1);
	CHECK_STR(s.hosts[0].moid, "host-1");
	CHECK_STR(s.hosts[0].name, "esx1");
	CHECK_INT(s.hosts[0].maint, -1);	/* removed: unknown */
	CHECK_STR(s.hosts[0].conn, "");		/* missing: absent */
	CHECK_STR(s.hosts[0].cluster, "domain-c7");	/* parent, a cluster */
	vs_snap_free(&s);
}

/* what the patch cannot apply exactly is refused, never half-applied */
TEST(unpatchable_changes_are_errors)
{
	static const char nested[] = ENV("<version>4</version>" FS(
		HOST("modify", "host-1", CH("config.network.pnic[\"k0\"].linkSpeed",
		"assign", ""))));
	static const char add[] = ENV("<version>4</version>" FS(
		HOST("modify", "host-1", CH("config.network.pnic", "add", ""))));
	static const char noop[] = ENV("<version>4</version>" FS(
		HOST("modify", "host-1", CH("name", "", ""))));
	static const char kind[] = ENV("<version>4</version>" FS(
		HOST("appear", "host-1", "")));
	static const char stranger[] = ENV("<version>4</version>" FS(
		HOST("modify", "host-9", CH("name", "assign",
		"<val xsi:type=\"xsd:string\">x</val>"))));
	static const char deep[] = ENV("<version>4</version><a><a><a><a><a><a>"
		"<a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a>"
		"<a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a>"
		"<a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a>");
	struct vs_snap s;
	struct vs_update up;
	char err[256];

	memset(&s, 0, sizeof(s));
	CHECK_INT(patch(&s, nested, sizeof(nested) - 1, &up, err, sizeof(err)), -1);
	CHECK(strstr(err, "a change of \"config.network.pnic[") != NULL);
	vs_update_free(&up);
	CHECK_INT(patch(&s, add, sizeof(add) - 1, &up, err, sizeof(err)), -1);
	CHECK(strstr(err, "op \"add\"") != NULL);
	vs_update_free(&up);
	CHECK_INT(patch(&s, noop, sizeof(noop) - 1, &up, err, sizeof(err)), -1);
	CHECK(strstr(err, "op \"\"") != NULL);
	vs_update_free(&up);
	CHECK_INT(patch(&s, kind, sizeof(kind) - 1, &up, err, sizeof(err)), -1);
	CHECK(strstr(err, "kind \"appear\"") != NULL);
	vs_update_free(&up);
	CHECK_INT(patch(&s, stranger, sizeof(stranger) - 1, &up, err, sizeof(err)), -2);
	CHECK(strstr(err, "host-9") != NULL);
	vs_update_free(&up);
	CHECK_INT(patch(&s, deep, sizeof(deep) - 1, &up, err, sizeof(err)), -1);
	CHECK(strstr(err, "deeper") != NULL);
	vs_update_free(&up);
	CHECK_INT((int)s.nhosts, 0);
	vs_snap_free(&s);
}

int
main(void)
{
	RUN(recorded_enter_null_modify);
	RUN(hand_written_truncated_enter_leave_remove);
	RUN(unpatchable_changes_are_errors);
	return t_done();
}
