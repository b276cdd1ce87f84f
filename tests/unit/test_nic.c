/*
 * nic collector logic: readers fed with the captured esxcli fixtures and a
 * fake sysfs tree, then deltas, counter resets, link changes and first
 * sight through nic_observe() with a real state store.
 * Run from the repository's top directory (tests/run-all.sh does).
 */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config/config.h"
#include "../../agent/event.h"
#include "../../agent/lib/kvstore.h"
#include "../../collectors/nic.h"

#define FIX "tests/fixtures/esxi/"

static int
ctr(const char *field)
{
	int i;

	for (i = 0; i < NIC_NCOUNTERS; i++)
		if (strcmp(nic_counters[i].field, field) == 0)
			return i;
	printf("no counter %s\n", field);
	exit(1);
}

static void
parse_fix(const char *rel, struct esx_out *out)
{
	char path[512], err[256];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), FIX "%s", rel);
	text = t_slurp(path, &len);
	if (esxcli_parse(text, len, out, err, sizeof(err)) != 0) {
		printf("FAIL: parse %s: %s\n", rel, err);
		exit(1);
	}
	free(text);
}

/* vmnic2 as the KB 341594 host shows it: link from the 9.0 nic list row
 * (renamed), counters from the stats fixture. */
static void
vmnic2(struct nic_info *ni)
{
	struct esx_out list, stats;

	parse_fix("esxcli-network-nic-list/esxi90-vmxnet3.txt", &list);
	parse_fix("esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt", &stats);
	if (nic_from_esxcli(&list.recs[0], &stats.recs[0], ni) != 0) {
		printf("FAIL: nic_from_esxcli\n");
		exit(1);
	}
	snprintf(ni->name, sizeof(ni->name), "vmnic2");
	esx_out_free(&list);
	esx_out_free(&stats);
}

static struct event *
find_kind(struct nic_events *evs, const char *kind, const char *counter)
{
	size_t i;

	for (i = 0; i < evs->n; i++) {
		const char *k = event_get(evs->v[i], "esxwatch_kind");

		if (k == NULL || strcmp(k, kind) != 0)
			continue;
		if (counter != NULL && (event_get(evs->v[i], "esxwatch_counter") == NULL ||
		    strcmp(event_get(evs->v[i], "esxwatch_counter"), counter) != 0))
			continue;
		return evs->v[i];
	}
	return NULL;
}

static size_t
count_kind(struct nic_events *evs, const char *kind)
{
	size_t i, n = 0;

	for (i = 0; i < evs->n; i++)
		if (strcmp(event_get(evs->v[i], "esxwatch_kind"), kind) == 0)
			n++;
	return n;
}

TEST(reads_esxcli_90_and_stats)
{
	struct nic_info ni;

	vmnic2(&ni);
	CHECK_INT(ni.link, NIC_UP);
	CHECK_INT(ni.admin, NIC_UP);
	CHECK_INT(ni.speed_mbps, 10000);
	CHECK_STR(ni.duplex, "full");
	CHECK_STR(ni.driver, "nvmxnet3");
	CHECK_STR(ni.mac, "00:50:56:b3:b9:89");
	CHECK_INT(ni.mtu, 1500);
	CHECK(ni.have[ctr("rx_crc_errors")]);
	CHECK_INT(ni.ctr[ctr("rx_dropped")], 2452783244LL);
	CHECK_INT(ni.ctr[ctr("rx_bytes")], 664124780523852LL);
	CHECK_INT(ni.ctr[ctr("rx_packets")], 701280499176LL);
	CHECK_INT(ni.ctr[ctr("rx_multicast")], 976222150);
	CHECK_INT(ni.ctr[ctr("tx_window_errors")], 0);
	{
		int i, all = 1;

		for (i = 0; i < NIC_NCOUNTERS; i++)
			all &= ni.have[i];
		CHECK(all);	/* all 23 counters of the fixture */
	}
}

/* Uneven indentation and "Key:value": every counter, none silently lost. */
TEST(uneven_spaceless_stats_give_every_counter)
{
	struct esx_out list, stats;
	struct nic_info ni;
	uint64_t gaps = esxcli_parse_gaps();
	const char *odd = " NIC statistics for vmnic0\n   Packets received: 12\n"
	    "   Receive CRC errors: lots\n";
	int i, all = 1;

	parse_fix("esxcli-network-nic-list/esxi90-vmxnet3.txt", &list);
	parse_fix("../esxi-layout/nic-stats-kb341594-uneven-spaceless.txt", &stats);
	CHECK_INT(nic_from_esxcli(&list.recs[0], &stats.recs[0], &ni), 0);
	for (i = 0; i < NIC_NCOUNTERS; i++)
		all &= ni.have[i];
	CHECK(all);
	CHECK_INT(ni.ctr[ctr("rx_errors")], 0);
	CHECK_INT(ni.ctr[ctr("rx_dropped")], 2452783244LL);
	CHECK_INT(esxcli_parse_gaps(), gaps);
	esx_out_free(&stats);
	/* A counter missing or not a number: absent, and counted. */
	CHECK_INT(esxcli_parse(odd, strlen(odd), &stats, NULL, 0), 0);
	CHECK_INT(nic_from_esxcli(&list.recs[0], &stats.recs[0], &ni), 0);
	CHECK(ni.have[ctr("rx_packets")]);
	CHECK(!ni.have[ctr("rx_crc_errors")]);
	CHECK_INT(esxcli_parse_gaps(), gaps + NIC_NCOUNTERS - 1);
	esx_out_free(&stats);
	esx_out_free(&list);
}

TEST(reads_esxcli_55_and_keyvalue)
{
	struct esx_out list;
	struct nic_info ni;

	parse_fix("esxcli-network-nic-list/esxi55-e1000e-old-columns-padded.txt", &list);
	CHECK_INT(nic_from_esxcli(&list.recs[0], NULL, &ni), 0);
	CHECK_STR(ni.name, "vmnic0");
	CHECK_INT(ni.link, NIC_UP);		/* "Link" column */
	CHECK_INT(ni.admin, NIC_UNKNOWN);	/* 5.5 has no Admin Status */
	CHECK_INT(ni.speed_mbps, 1000);
	CHECK_STR(ni.driver, "e1000e");
	CHECK(!ni.have[ctr("rx_crc_errors")]);
	esx_out_free(&list);

	parse_fix("esxcli-network-nic-list/esxi8-keyvalue-fixture.txt", &list);
	CHECK_INT(nic_from_esxcli(&list.recs[2], NULL, &ni), 0);
	CHECK_STR(ni.name, "vmnic2");
	CHECK_INT(ni.link, NIC_DOWN);
	CHECK_INT(ni.speed_mbps, 0);
	CHECK_STR(ni.duplex, "half");
	CHECK_STR(ni.mac, "78:ac:44:07:b2:c6");
	esx_out_free(&list);
}

TEST(first_sight_has_no_delta_and_no_change)
{
	struct kvstore *st = kv_open(NULL);
	struct nic_events evs = { .n = 0 };
	struct nic_info ni;
	struct event *s;

	vmnic2(&ni);
	CHECK_INT(nic_observe(st, &ni, 1733000000000LL, &evs), 0);
	CHECK_INT(evs.n, 1);
	s = find_kind(&evs, "sample", NULL);
	CHECK(s != NULL);
	CHECK_STR(event_get(s, "esxwatch_severity"), "info");
	CHECK_STR(event_get(s, "esxwatch_nic"), "vmnic2");
	CHECK_STR(event_get(s, "esxwatch_link"), "up");
	CHECK_STR(event_get(s, "esxwatch_admin"), "up");
	CHECK_STR(event_get(s, "esxwatch_speed_mbps"), "10000");
	CHECK_STR(event_get(s, "esxwatch_duplex"), "full");
	CHECK_STR(event_get(s, "esxwatch_driver"), "nvmxnet3");
	CHECK_STR(event_get(s, "esxwatch_mtu"), "1500");
	CHECK_STR(event_get(s, "esxwatch_rx_dropped"), "2452783244");
	CHECK_STR(event_get(s, "esxwatch_rx_crc_errors"), "0");
	CHECK_STR(event_get(s, "esxwatch_rx_missed_errors"), "0");
	CHECK(event_get(s, "esxwatch_rx_crc_errors_delta") == NULL);
	CHECK(event_get(s, "esxwatch_rx_dropped_delta") == NULL);
	CHECK(event_get(s, "esxwatch_interval_s") == NULL);
	CHECK(strncmp(s->text, "vmnic2 link up 10000 Mbps full, rx_crc_errors 0", 47) == 0);
	CHECK_STR(kv_get(st, "vmnic2.link"), "up");
	CHECK_STR(kv_get(st, "vmnic2.rx_dropped"), "2452783244");
	CHECK_STR(kv_get(st, "vmnic2.ts"), "1733000000000");
	nic_events_free(&evs);
	kv_close(st);
}

TEST(crc_growth_gives_delta_and_alerts)
{
	struct kvstore *st = kv_open(NULL);
	struct nic_events evs = { .n = 0 };
	struct nic_info ni;
	struct event *s, *a;

	vmnic2(&ni);
	nic_observe(st, &ni, 1733000000000LL, &evs);
	nic_events_free(&evs);

	ni.ctr[ctr("rx_crc_errors")] += 75414;
	ni.ctr[ctr("rx_errors")] += 75414;
	ni.ctr[ctr("rx_packets")] += 1000;
	CHECK_INT(nic_observe(st, &ni, 1733000060000LL, &evs), 0);
	s = find_kind(&evs, "sample", NULL);
	CHECK_STR(event_get(s, "esxwatch_rx_crc_errors"), "75414");
	CHECK_STR(event_get(s, "esxwatch_rx_crc_errors_delta"), "75414");
	CHECK_STR(event_get(s, "esxwatch_rx_errors_delta"), "75414");
	CHECK_STR(event_get(s, "esxwatch_rx_packets_delta"), "1000");
	CHECK_STR(event_get(s, "esxwatch_rx_dropped_delta"), "0");
	CHECK_STR(event_get(s, "esxwatch_tx_errors_delta"), "0");
	CHECK_STR(event_get(s, "esxwatch_interval_s"), "60");
	CHECK(strstr(s->text, "rx_crc_errors 75414 (+75414)") != NULL);
	/* one alert per grown error counter, none for packets */
	CHECK_INT(count_kind(&evs, "alert"), 2);
	a = find_kind(&evs, "alert", "rx_crc_errors");
	CHECK(a != NULL);
	if (a != NULL) {
		CHECK_STR(a->text, "vmnic2: Receive CRC errors increased by 75414 "
		    "(to 75414) in the last 60 s");
		CHECK_STR(event_get(a, "esxwatch_severity"), "error");
		CHECK_STR(event_get(a, "esxwatch_rx_crc_errors_delta"), "75414");
		CHECK_STR(event_get(a, "esxwatch_nic"), "vmnic2");
	}
	a = find_kind(&evs, "alert", "rx_errors");
	CHECK(a != NULL);
	if (a != NULL)
		CHECK_STR(event_get(a, "esxwatch_severity"), "warning");
	CHECK_INT(count_kind(&evs, "change"), 0);
	nic_events_free(&evs);

	/* no growth: no alert, deltas "0" */
	CHECK_INT(nic_observe(st, &ni, 1733000120000LL, &evs), 0);
	CHECK_INT(evs.n, 1);
	CHECK_STR(event_get(evs.v[0], "esxwatch_rx_crc_errors_delta"), "0");
	nic_events_free(&evs);
	kv_close(st);
}

TEST(counter_going_backwards_is_a_new_baseline)
{
	struct kvstore *st = kv_open(NULL);
	struct nic_events evs = { .n = 0 };
	struct nic_info ni;
	struct event *s;

	vmnic2(&ni);
	ni.ctr[ctr("rx_crc_errors")] = 500;
	nic_observe(st, &ni, 1000000, &evs);
	nic_events_free(&evs);

	/* driver reload: everything starts again near 0 */
	ni.ctr[ctr("rx_crc_errors")] = 3;
	ni.ctr[ctr("rx_dropped")] = 10;
	CHECK_INT(nic_observe(st, &ni, 1060000, &evs), 0);
	CHECK_INT(count_kind(&evs, "alert"), 0);
	s = find_kind(&evs, "sample", NULL);
	CHECK(event_get(s, "esxwatch_rx_crc_errors_delta") == NULL);
	CHECK(event_get(s, "esxwatch_rx_dropped_delta") == NULL);
	CHECK_STR(event_get(s, "esxwatch_rx_crc_errors"), "3");
	CHECK_STR(event_get(s, "esxwatch_tx_errors_delta"), "0");
	CHECK_STR(event_get(s, "esxwatch_counters_reset"), "rx_dropped,rx_crc_errors");
	nic_events_free(&evs);

	/* the next interval counts from the new baseline */
	ni.ctr[ctr("rx_crc_errors")] = 10;
	CHECK_INT(nic_observe(st, &ni, 1120000, &evs), 0);
	s = find_kind(&evs, "sample", NULL);
	CHECK_STR(event_get(s, "esxwatch_rx_crc_errors_delta"), "7");
	CHECK(event_get(s, "esxwatch_counters_reset") == NULL);
	CHECK(find_kind(&evs, "alert", "rx_crc_errors") != NULL);
	nic_events_free(&evs);
	kv_close(st);
}

TEST(link_changes_survive_a_restart)
{
	char dir[] = "/tmp/test_nic.XXXXXX", path[PATH_MAX];
	struct kvstore *st;
	struct nic_events evs = { .n = 0 };
	struct nic_info ni;
	struct event *c;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/nic.kv", dir);
	st = kv_open(path);
	vmnic2(&ni);
	ni.link = NIC_DOWN;		/* first sight down: no change */
	nic_observe(st, &ni, 1000, &evs);
	CHECK_INT(count_kind(&evs, "change"), 0);
	nic_events_free(&evs);
	CHECK_INT(kv_save(st), 0);
	kv_close(st);

	st = kv_open(path);		/* the agent restarted */
	ni.link = NIC_UP;
	nic_observe(st, &ni, 61000, &evs);
	c = find_kind(&evs, "change", NULL);
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_STR(event_get(c, "esxwatch_severity"), "info");
		CHECK_STR(event_get(c, "esxwatch_link"), "up");
		CHECK_STR(event_get(c, "esxwatch_previous_state"), "down");
		CHECK_STR(c->text, "vmnic2: link up (was down)");
	}
	nic_events_free(&evs);

	ni.link = NIC_DOWN;
	nic_observe(st, &ni, 121000, &evs);
	c = find_kind(&evs, "change", NULL);
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_STR(event_get(c, "esxwatch_severity"), "warning");
		CHECK_STR(event_get(c, "esxwatch_previous_state"), "up");
	}
	CHECK_STR(event_get(find_kind(&evs, "sample", NULL), "esxwatch_link"), "down");
	nic_events_free(&evs);

	nic_observe(st, &ni, 181000, &evs);	/* still down: no change */
	CHECK_INT(count_kind(&evs, "change"), 0);
	nic_events_free(&evs);
	kv_close(st);
	unlink(path);
	rmdir(dir);
}

/* ---- fake sysfs ---- */

static char sysroot[64];

static void
put(const char *rel, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	f = fopen(path, "w");
	if (f == NULL) {
		printf("FAIL: cannot write %s\n", path);
		exit(1);
	}
	fputs(content, f);
	fclose(f);
}

static void
mk(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	mkdir(path, 0755);
}

static void
lnk(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	if (symlink(target, path) != 0) {
		printf("FAIL: symlink %s\n", path);
		exit(1);
	}
}

static void
fake_sysfs(void)
{
	snprintf(sysroot, sizeof(sysroot), "/tmp/test_nic_sys.XXXXXX");
	if (mkdtemp(sysroot) == NULL)
		exit(1);
	mk("class");
	mk("class/net");
	mk("bus");
	mk("bus/drv");
	mk("bus/drv/ixgbe");
	mk("devices");
	mk("devices/pci0");
	lnk("../../bus/drv/ixgbe", "devices/pci0/driver");
	/* eth0: a real device, link up */
	mk("class/net/eth0");
	lnk("../../../devices/pci0", "class/net/eth0/device");
	put("class/net/eth0/operstate", "up\n");
	put("class/net/eth0/carrier", "1\n");
	put("class/net/eth0/flags", "0x1003\n");
	put("class/net/eth0/speed", "10000\n");
	put("class/net/eth0/duplex", "full\n");
	put("class/net/eth0/address", "3c:fd:fe:00:00:01\n");
	put("class/net/eth0/mtu", "9000\n");
	mk("class/net/eth0/statistics");
	put("class/net/eth0/statistics/rx_crc_errors", "42\n");
	put("class/net/eth0/statistics/rx_errors", "43\n");
	put("class/net/eth0/statistics/rx_packets", "1000\n");
	put("class/net/eth0/statistics/multicast", "7\n");
	/* eth1: real device, admin down (carrier unreadable: no file) */
	mk("class/net/eth1");
	lnk("../../../devices/pci0", "class/net/eth1/device");
	put("class/net/eth1/operstate", "down\n");
	put("class/net/eth1/flags", "0x1002\n");
	put("class/net/eth1/speed", "-1\n");
	put("class/net/eth1/duplex", "unknown\n");
	/* lo and a bridge: no device link */
	mk("class/net/lo");
	put("class/net/lo/operstate", "unknown\n");
	put("class/net/lo/carrier", "1\n");
	put("class/net/lo/flags", "0x9\n");
	mk("class/net/br0");
	put("class/net/br0/carrier", "1\n");
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
rm_fake(void)
{
	if (strncmp(sysroot, "/tmp/test_nic_sys.", 18) == 0)
		nftw(sysroot, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TEST(reads_sysfs_physical_only)
{
	struct collector_conf conf;
	struct nic_info *v = NULL;
	char *inc[] = { "lo" }, *exc[] = { "eth1" };
	int n;

	memset(&conf, 0, sizeof(conf));
	fake_sysfs();
	n = nic_read_sysfs(sysroot, &conf, &v);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0].name, "eth0");
		CHECK_INT(v[0].link, NIC_UP);
		CHECK_INT(v[0].admin, NIC_UP);
		CHECK_INT(v[0].speed_mbps, 10000);
		CHECK_STR(v[0].duplex, "full");
		CHECK_STR(v[0].driver, "ixgbe");
		CHECK_STR(v[0].mac, "3c:fd:fe:00:00:01");
		CHECK_INT(v[0].mtu, 9000);
		CHECK_INT(v[0].ctr[ctr("rx_crc_errors")], 42);
		CHECK_INT(v[0].ctr[ctr("rx_multicast")], 7);
		CHECK(!v[0].have[ctr("tx_errors")]);
		CHECK(!v[0].have[ctr("rx_broadcast")]);
		CHECK_STR(v[1].name, "eth1");
		CHECK_INT(v[1].link, NIC_DOWN);
		CHECK_INT(v[1].admin, NIC_DOWN);
		CHECK_INT(v[1].speed_mbps, -1);
		CHECK_STR(v[1].duplex, "");
	}
	free(v);

	/* lo is named in include: watched; include also limits the rest */
	conf.include.v = inc;
	conf.include.n = 1;
	n = nic_read_sysfs(sysroot, &conf, &v);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(v[0].name, "lo");
		CHECK_INT(v[0].link, NIC_UP);
	}
	free(v);

	conf.include.n = 0;
	conf.exclude.v = exc;
	conf.exclude.n = 1;
	n = nic_read_sysfs(sysroot, &conf, &v);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(v[0].name, "eth0");
	free(v);

	CHECK_INT(nic_read_sysfs("/nonexistent-sysfs", &conf, &v), -1);
	rm_fake();
}

int
main(void)
{
	T_PROG("test_nic");
	RUN(reads_esxcli_90_and_stats);
	RUN(uneven_spaceless_stats_give_every_counter);
	RUN(reads_esxcli_55_and_keyvalue);
	RUN(first_sight_has_no_delta_and_no_change);
	RUN(crc_growth_gives_delta_and_alerts);
	RUN(counter_going_backwards_is_a_new_baseline);
	RUN(link_changes_survive_a_restart);
	RUN(reads_sysfs_physical_only);
	return t_done();
}
