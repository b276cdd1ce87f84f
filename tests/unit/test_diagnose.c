/*
 * The diagnosis rules against recorded event sequences (agent/diagnosis/diagrules.c):
 * each case is the events the collectors emitted, in order, with their
 * times; the answers the host gave; and what the stage must conclude.
 */
#include <pthread.h>

#include "t.h"

#include "../../collectors/host/diaghost.h"
#include "../../agent/diagnosis/diagnose.h"
#include "../../agent/diagnosis/diagrules.h"

#define T0	1764600000000LL
#define MAXSTEPS 24

struct step {
	int		 t;		/* seconds after T0 */
	const char	*col, *kind;
	const char	*fields;	/* "name=value|name=value" */
	const char	*text;
};

struct dcase {
	const char	*name;
	struct step	 steps[MAXSTEPS];
	int		 eval_at;	/* seconds after T0 */
	int		 ans_ok;	/* -1: no answer given; 0/1 */
	const char	*ans_a, *ans_b;
	size_t		 want_alerts;
	const char	*want_rule, *want_text, *want_nic, *want_ds, *want_evidence;
};

static struct event *
mk(const struct step *s)
{
	struct event *ev = event_new(T0 + (int64_t)s->t * 1000, s->text ? s->text : "x");
	char buf[1024], *p, *next;

	event_set(ev, "esxwatch_collector", s->col);
	event_set(ev, "esxwatch_kind", s->kind);
	snprintf(buf, sizeof(buf), "%s", s->fields ? s->fields : "");
	for (p = buf; p != NULL && *p; p = next) {
		char *eq;

		next = strchr(p, '|');
		if (next != NULL)
			*next++ = '\0';
		eq = strchr(p, '=');
		if (eq == NULL)
			continue;
		*eq = '\0';
		event_set(ev, p, eq + 1);
	}
	return ev;
}

#define NIC_CRC(t, nic, d) { t, "nic", "sample", \
	"esxwatch_nic=" nic "|esxwatch_rx_crc_errors=" d "|esxwatch_rx_crc_errors_delta=" d \
	"|esxwatch_interval_s=60", nic ": link up" }
#define APD(t, dev) { t, "logwatch", "alert", \
	"esxwatch_rule=apd_start|esxwatch_device=" dev, \
	"2026-12-01T14:00:00.000Z cpu1:1)StorageApdHandler: [esx.problem.storage.apd.start] " \
	"Device or filesystem with identifier [" dev "] has entered the All Paths Down state." }
#define NFS_DS(t, st) { t, "datastore", "change", \
	"esxwatch_entity=datastore|esxwatch_datastore=isos|esxwatch_device=|esxwatch_nfs_host=10.1.0.7" \
	"|esxwatch_fs_type=NFS41|esxwatch_state=" st, "datastore isos (NFS41 10.1.0.7): " st }
#define NFS_SAMPLE(t) { t, "datastore", "sample", \
	"esxwatch_entity=datastore|esxwatch_datastore=isos|esxwatch_device=|esxwatch_nfs_host=10.1.0.7" \
	"|esxwatch_fs_type=NFS41|esxwatch_state=ok", "datastore isos: ok" }
#define LINK(t, nic, rule) { t, "logwatch", "alert", "esxwatch_rule=" rule "|esxwatch_nic=" nic, \
	"[esx.problem.net.vmnic.linkstate] " nic " " rule }
#define SCSI(t, dev, sense) { t, "logwatch", "alert", "esxwatch_rule=scsi_cmd_failed|esxwatch_device=" \
	dev "|esxwatch_scsi_sense=" sense, "ScsiDeviceIO: Cmd 0x28 to dev \"" dev "\" failed H:0x0 D:0x2 P:0x0 Valid sense data: " sense }
#define SMART(t, dev, pend) { t, "smart", "sample", "esxwatch_device=" dev "|esxwatch_pending_sectors=" pend \
	"|esxwatch_health=ok", "drive " dev ": health ok" }

static const struct dcase cases[] = {
	{ "apd_with_crc_unknown_path", { NIC_CRC(0, "vmnic1", "120"), APD(60, "naa.600a") },
	  120, -1, NULL, NULL, 1, "path_loss_physical", "on this host", "vmnic1", NULL,
	  "rx_crc_errors grew by 120" },
	{ "crc_before_apd_in_window", { NIC_CRC(0, "vmnic1", "5"), APD(280, "naa.600a") },
	  300, -1, NULL, NULL, 1, "path_loss_physical", "vmnic1", "vmnic1", NULL, NULL },
	{ "crc_an_hour_before_apd_is_no_cause", { NIC_CRC(0, "vmnic1", "120"), APD(3600, "naa.600a") },
	  3700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "crc_an_hour_after_apd_is_no_cause", { APD(0, "naa.600a"), NIC_CRC(3600, "vmnic1", "9") },
	  3700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "crc_over_a_long_interval_is_not_placed", { { 0, "nic", "sample",
	  "esxwatch_nic=vmnic1|esxwatch_rx_crc_errors_delta=50|esxwatch_interval_s=7200", "n" },
	  APD(30, "naa.600a") }, 60, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "apd_without_nic_errors", { APD(0, "naa.600a"), { 10, "nic", "sample",
	  "esxwatch_nic=vmnic1|esxwatch_rx_crc_errors_delta=0|esxwatch_interval_s=60", "n" } },
	  400, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "nfs_mapped_uplink_named", { NFS_SAMPLE(0), NIC_CRC(10, "vmnic1", "77"),
	  NIC_CRC(10, "vmnic0", "3"), NFS_DS(30, "inaccessible"),
	  { 31, "logwatch", "alert", "esxwatch_rule=nfs_server_disconnect|esxwatch_datastore=isos",
	    "[esx.problem.vmfs.nfs.server.disconnect] 10.1.0.7 /backups/isos a1b2c3d4 (isos)" } },
	  60, 1, "vmnic1,vmnic2", "vmk1, port group NFS on vSwitch1", 1, "path_loss_physical",
	  "vmk1, port group NFS on vSwitch1", "vmnic1", "isos", "nfs.server.disconnect" },
	{ "nfs_mapped_errors_on_another_nic", { NFS_SAMPLE(0), NIC_CRC(10, "vmnic0", "3"),
	  NFS_DS(30, "inaccessible") },
	  60, 1, "vmnic1,vmnic2", "vmk1, port group NFS on vSwitch1", 0, NULL, NULL, NULL, NULL, NULL },
	{ "nfs_mapping_unknown", { NFS_SAMPLE(0), NIC_CRC(10, "vmnic0", "3"), NFS_DS(30, "apd") },
	  60, 0, "", "no vmkernel interface on the subnet of 10.1.0.7", 1, "path_loss_physical",
	  "on this host", "vmnic0", "isos", NULL },
	{ "flapping_one_alert_per_window", { LINK(0, "vmnic3", "nic_link_down"),
	  LINK(10, "vmnic3", "nic_link_up"), LINK(20, "vmnic3", "nic_link_down"),
	  LINK(30, "vmnic3", "nic_link_up"), LINK(40, "vmnic3", "nic_link_down"),
	  LINK(50, "vmnic3", "nic_link_up"), LINK(60, "vmnic3", "nic_link_down"),
	  LINK(70, "vmnic3", "nic_link_up"), LINK(80, "vmnic3", "nic_link_down"),
	  LINK(90, "vmnic3", "nic_link_up"),
	  LINK(1000, "vmnic3", "nic_link_down"), LINK(1010, "vmnic3", "nic_link_up"),
	  LINK(1020, "vmnic3", "nic_link_down"), LINK(1030, "vmnic3", "nic_link_up"),
	  LINK(1040, "vmnic3", "nic_link_down"), LINK(1050, "vmnic3", "nic_link_up") },
	  1100, -1, NULL, NULL, 2, "link_flapping", "link flapping: 6 link changes", "vmnic3", NULL,
	  "nic_link_down" },
	{ "few_link_changes_are_not_flapping", { LINK(0, "vmnic3", "nic_link_down"),
	  LINK(10, "vmnic3", "nic_link_up"), LINK(20, "vmnic3", "nic_link_down"),
	  LINK(30, "vmnic3", "nic_link_up"), LINK(600, "vmnic3", "nic_link_down"),
	  LINK(610, "vmnic3", "nic_link_up") },
	  700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "vobd_and_driver_lines_are_one_change", { LINK(0, "vmnic3", "nic_link_down"),
	  LINK(0, "vmnic3", "nic_driver_link_down"), LINK(10, "vmnic3", "nic_link_up"),
	  LINK(11, "vmnic3", "nic_driver_link_up"), LINK(20, "vmnic3", "nic_link_down"),
	  LINK(20, "vmnic3", "nic_driver_link_down"), LINK(30, "vmnic3", "nic_link_up"),
	  LINK(30, "vmnic3", "nic_driver_link_up") },
	  100, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "failing_drive_combined", { SMART(0, "naa.5000c5", "0"), SCSI(100, "naa.5000c5", "0x3 0x11 0x0"),
	  SMART(3600, "naa.5000c5", "8") },
	  3700, -1, NULL, NULL, 1, "failing_drive", "naa.5000c5 is failing", NULL, NULL,
	  "pending_sectors grew from 0 to 8" },
	{ "failing_drive_from_smart_alert", { SCSI(100, "naa.5000c5", "0x4 0x44 0x0"),
	  { 200, "smart", "alert", "esxwatch_device=naa.5000c5|esxwatch_counter=realloc"
	    "|esxwatch_reallocated_sectors=24", "drive naa.5000c5: reallocated sectors grew from 16 to 24" } },
	  300, -1, NULL, NULL, 1, "failing_drive", "naa.5000c5", NULL, NULL, "SCSI hardware error, sense 0x4 0x44 0x0" },
	{ "scsi_errors_alone", { SMART(0, "naa.5000c5", "0"), SCSI(100, "naa.5000c5", "0x3 0x11 0x0"),
	  SCSI(200, "naa.5000c5", "0x3 0x11 0x0"), SMART(3600, "naa.5000c5", "0") },
	  3700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "smart_growth_alone", { SMART(0, "naa.5000c5", "0"), SMART(3600, "naa.5000c5", "8") },
	  3700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "other_sense_key_is_no_drive_failure", { SMART(0, "naa.5000c5", "0"),
	  SCSI(100, "naa.5000c5", "0x5 0x25 0x0"), SMART(3600, "naa.5000c5", "8") },
	  3700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "invalid_sense_is_ignored", { SMART(0, "naa.5000c5", "0"),
	  { 100, "logwatch", "alert", "esxwatch_device=naa.5000c5|esxwatch_scsi_sense=0x3 0x11 0x0"
	    "|esxwatch_scsi_sense_invalid=0x3 0x11 0x0", "Invalid sense data" },
	  SMART(3600, "naa.5000c5", "8") },
	  3700, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "drive_errors_a_week_apart", { SMART(0, "naa.5000c5", "0"), SMART(3600, "naa.5000c5", "8"),
	  SCSI(8 * 86400, "naa.5000c5", "0x3 0x11 0x0") },
	  8 * 86400 + 10, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL },
	{ "vsan_partitions_with_table", { { 0, "vsan", "sample", "esxwatch_device=naa.5000a|"
	  "esxwatch_vsan_state=ineligible|esxwatch_reason=Has partitions", "vSAN disk naa.5000a" } },
	  10, 1, "gpt table, 3 partitions: #1 unknown 8.0 GiB", "gpt / 486401 255 63 7814037168", 1,
	  "vsan_disk_partitions", "#1 unknown 8.0 GiB", NULL, NULL, "partedUtil getptbl: gpt" },
	{ "vsan_ineligible_for_another_reason", { { 0, "vsan", "sample", "esxwatch_device=naa.5000a|"
	  "esxwatch_vsan_state=ineligible|esxwatch_reason=Disk in use by disk group", "x" } },
	  10, 1, "x", "y", 0, NULL, NULL, NULL, NULL, NULL },
};

static void
run_case(const struct dcase *c)
{
	struct diag *d = diag_new(NULL);
	struct diag_alert *out = calloc(32, sizeof(*out));
	struct diag_want w[8];
	size_t n, nw, i;

	for (i = 0; i < MAXSTEPS && c->steps[i].col != NULL; i++) {
		struct event *ev = mk(&c->steps[i]);

		diag_observe(d, ev);
		event_free(ev);
	}
	n = diag_evaluate(d, T0 + (int64_t)c->eval_at * 1000, out, 32);
	nw = diag_wants(d, w, 8);
	if (c->ans_ok >= 0)
		for (i = 0; i < nw; i++)
			diag_answer(d, &w[i], c->ans_ok == 1, c->ans_a, c->ans_b);
	n += diag_evaluate(d, T0 + (int64_t)c->eval_at * 1000, out + n, 32 - n);
	/* Evaluating again concludes nothing new. */
	n += diag_evaluate(d, T0 + (int64_t)c->eval_at * 1000 + 5000, out + n, 32 - n);
	if (n != c->want_alerts)
		printf("  case %s: %zu alerts, want %zu\n", c->name, n, c->want_alerts);
	CHECK_INT(n, c->want_alerts);
	for (i = 0; i < n && i < c->want_alerts; i++) {
		if (c->want_rule)
			CHECK_STR(out[i].rule, c->want_rule);
		if (c->want_text && strstr(out[i].text, c->want_text) == NULL)
			T_FAILF("case %s: text \"%s\" lacks \"%s\"", c->name, out[i].text, c->want_text);
		if (strstr(out[i].text, "Next:") == NULL)
			T_FAILF("case %s: text names no next step: %s", c->name, out[i].text);
		if (c->want_nic)
			CHECK_STR(out[i].nic, c->want_nic);
		if (c->want_ds)
			CHECK_STR(out[i].datastore, c->want_ds);
		if (c->want_evidence && strstr(out[i].evidence, c->want_evidence) == NULL)
			T_FAILF("case %s: evidence \"%s\" lacks \"%s\"", c->name, out[i].evidence,
			    c->want_evidence);
	}
	free(out);
	diag_free(d);
}

TEST(recorded_sequences)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

TEST(nfs_mapping_asked_once_per_server)
{
	const struct dcase *c = &cases[6];
	struct diag *d = diag_new(NULL);
	struct diag_alert out[4];
	struct diag_want w[8];

	for (size_t i = 0; c->steps[i].col != NULL; i++) {
		struct event *ev = mk(&c->steps[i]);

		diag_observe(d, ev);
		event_free(ev);
	}
	CHECK_INT(diag_evaluate(d, T0 + 60000, out, 4), 0);	/* waits for the answer */
	CHECK_INT(diag_wants(d, w, 8), 1);
	CHECK_INT(w[0].kind, DIAG_WANT_UPLINKS);
	CHECK_STR(w[0].key, "10.1.0.7");
	diag_free(d);
}

TEST(silent_host)
{
	struct diag *d = diag_new(NULL);
	struct diag_alert out[4];
	struct diag_dest x = { .name = "server", .failing = true,
	    .last_success_ms = T0 - 1000, .backlog = 10, .dropped = 2 };
	size_t n;

	CHECK_INT(diag_delivery(d, T0, &x, 1, out, 4), 0);
	x.backlog = 900;
	x.dropped = 7;
	CHECK_INT(diag_delivery(d, T0 + 400000, &x, 1, out, 4), 0);	/* logs once */
	x.failing = false;
	x.backlog = 0;
	x.last_success_ms = T0 + 500000;
	n = diag_delivery(d, T0 + 500000, &x, 1, out, 4);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(out[0].rule, "silent_host");
		CHECK(strstr(out[0].text, "interrupted for 501 s") != NULL);
		CHECK(strstr(out[0].text, "900 events were queued and 5 dropped") != NULL);
	}
	/* A short outage is not news. */
	x.failing = true;
	x.backlog = 3;
	CHECK_INT(diag_delivery(d, T0 + 510000, &x, 1, out, 4), 0);
	x.failing = false;
	x.last_success_ms = T0 + 560000;
	CHECK_INT(diag_delivery(d, T0 + 560000, &x, 1, out, 4), 0);
	diag_free(d);
}

TEST(memory_is_bounded)
{
	struct diag *d = diag_new(NULL);
	size_t before = diag_memory_bytes(d);
	char f[256];

	for (int i = 0; i < 2000; i++) {
		struct step s = { i, "nic", "sample", f, "n" };
		struct event *ev;

		snprintf(f, sizeof(f), "esxwatch_nic=vmnic%d|esxwatch_rx_crc_errors_delta=1|"
		    "esxwatch_interval_s=60", i);
		ev = mk(&s);
		diag_observe(d, ev);
		event_free(ev);
		snprintf(f, sizeof(f), "esxwatch_device=naa.%d|esxwatch_scsi_sense=0x3 0x0 0x0", i);
		s.col = "logwatch";
		ev = mk(&s);
		diag_observe(d, ev);
		event_free(ev);
	}
	CHECK_INT(diag_memory_bytes(d), before);
	CHECK(before < 512 * 1024);
	CHECK(d->forgotten >= 2000 - DIAG_MAX_NICS);
	diag_free(d);
}

/* Collector mode: another host's events (esxwatch_input) go to a memory
 * of that host's: a NIC error on one host never explains another host's
 * APD; the same on one host does, and the alert names it; nothing is
 * asked of the local host for it. */
TEST(other_hosts_have_their_own_memory)
{
	struct diag *d = diag_new(NULL);
	struct diag_alert *out = calloc(8, sizeof(*out));
	const struct step a_crc = NIC_CRC(0, "vmnic1", "120");
	const struct step b_apd = APD(60, "naa.600a");
	const struct step b_crc = NIC_CRC(50, "vmnic1", "9");
	struct diag_want w[8];
	struct event *ev;
	size_t n;

	ev = mk(&a_crc);
	event_set(ev, "hostname", "esx-a");
	event_set(ev, "esxwatch_input", "syslog");
	diag_observe(d, ev);
	event_free(ev);
	ev = mk(&b_apd);
	event_set(ev, "hostname", "esx-b");
	event_set(ev, "esxwatch_input", "syslog");
	diag_observe(d, ev);
	event_free(ev);
	n = diag_evaluate(d, T0 + 120 * 1000, out, 8);
	CHECK_INT(n, 0);
	CHECK_INT(d->nothers, 2);
	/* the local host's NIC errors do not explain esx-b's APD either */
	ev = mk(&a_crc);
	diag_observe(d, ev);
	event_free(ev);
	CHECK_INT(diag_evaluate(d, T0 + 130 * 1000, out, 8), 0);
	ev = mk(&b_crc);
	event_set(ev, "hostname", "esx-b");
	event_set(ev, "esxwatch_input", "syslog");
	diag_observe(d, ev);
	event_free(ev);
	n = diag_evaluate(d, T0 + 140 * 1000, out, 8);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(out[0].rule, "path_loss_physical");
		CHECK_STR(out[0].host, "esx-b");
		CHECK_STR(out[0].input, "syslog");
		CHECK_STR(out[0].nic, "vmnic1");
		/* the text names the host it is about, never "this host"
		 * (which, read at the collector, would be the collector) */
		CHECK(strstr(out[0].text, "Likely physical layer on vmnic1 on "
		    "esx-b: ") == out[0].text);
		CHECK(strstr(out[0].text, "this host") == NULL);
	}
	CHECK_INT(diag_wants(d, w, 8), 0);
	CHECK_INT(diag_memory_bytes(d), 3 * sizeof(struct diag) + sizeof(pthread_mutex_t));
	free(out);
	diag_free(d);
}

/* At most DIAG_MAX_HOSTS other hosts: the one observed the longest ago
 * is forgotten first. */
TEST(other_hosts_are_bounded)
{
	struct diag *d = diag_new(NULL);
	char f[128], host[32];

	for (int i = 0; i < DIAG_MAX_HOSTS + 5; i++) {
		struct step s = { i, "nic", "sample", f, "n" };
		struct event *ev;

		snprintf(f, sizeof(f), "esxwatch_nic=vmnic0|esxwatch_rx_crc_errors_delta=1|"
		    "esxwatch_interval_s=60");
		ev = mk(&s);
		snprintf(host, sizeof(host), "esx%d", i);
		event_set(ev, "hostname", host);
		event_set(ev, "esxwatch_input", "vsphere");
		diag_observe(d, ev);
		event_free(ev);
	}
	CHECK_INT(d->nothers, DIAG_MAX_HOSTS);
	CHECK_INT(d->hosts_forgotten, 5);
	for (size_t i = 0; i < d->nothers; i++)
		if (strcmp(d->others[i]->host, "esx0") == 0)
			T_FAILF("esx0 (the oldest) is still remembered");
	diag_free(d);
}

/* A full table gives up its least recently seen entry, not the oldest
 * one, and a new device starts with no SMART counts (-1), not zeros. */
TEST(tables_evict_the_least_recently_seen)
{
	struct diag *d = diag_new(NULL);
	char name[32];
	struct diag_nic *n0;
	struct diag_dev *x;

	for (int i = 0; i < DIAG_MAX_NICS; i++) {
		snprintf(name, sizeof(name), "vmnic%d", i);
		d->now = 1000 + i;
		CHECK(diag_nic_get(d, name) != NULL);
	}
	d->now = 2000;
	n0 = diag_nic_get(d, "vmnic0");
	n0->flap_next = 77;
	d->now = 2001;
	CHECK(diag_nic_get(d, "vmnic99") != NULL);
	CHECK_INT(d->forgotten, 1);
	CHECK(diag_nic_get(d, "vmnic0") == n0);
	CHECK_INT(n0->flap_next, 77);
	CHECK_INT(d->forgotten, 1);
	d->now = 2002;
	CHECK(diag_nic_get(d, "vmnic1") != NULL);	/* vmnic1 was evicted */
	CHECK_INT(d->forgotten, 2);
	CHECK(diag_nic_get(d, "") == NULL);
	CHECK(diag_nic_get(d, "a-name-longer-than-the-32-bytes-it-may-have") == NULL);

	x = diag_dev_get(d, "naa.1");
	CHECK(x != NULL && x->last[0] == -1 && x->last[1] == -1 && x->last[2] == -1);
	x->last[0] = 5;
	CHECK(diag_dev_get(d, "naa.1") == x && x->last[0] == 5);
	diag_free(d);
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[65536];
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

TEST(partition_tables)
{
	char sum[512], tab[1024];
	const char *t = slurp("tests/fixtures/esxi/partedUtil-getptbl/foreign-partitions-unknown.txt");

	CHECK(t != NULL);
	CHECK(diaghost_parse_ptable(t, sum, sizeof(sum), tab, sizeof(tab)));
	CHECK_STR(sum, "gpt table, 3 partitions: #1 unknown 8.0 GiB, #2 unknown 2.0 GiB, "
	    "#3 unknown 3.6 TiB");
	CHECK(strncmp(tab, "gpt / 486401 255 63 7814037168 / 1 8192 16785407", 48) == 0);
	t = slurp("tests/fixtures/esxi/partedUtil-getptbl/esxi7-bootdisk.txt");
	CHECK(diaghost_parse_ptable(t, sum, sizeof(sum), tab, sizeof(tab)));
	CHECK(strstr(sum, "5 partitions: #1 systemPartition 100.0 MiB, #5 linuxNative") != NULL);
	CHECK(strstr(sum, "#8 vmfs") != NULL);
	t = slurp("tests/fixtures/esxi/partedUtil-getptbl/empty-gpt.txt");
	CHECK(diaghost_parse_ptable(t, sum, sizeof(sum), tab, sizeof(tab)));
	CHECK_STR(sum, "gpt partition table without partitions");
	CHECK(!diaghost_parse_ptable("Error: Could not stat device", sum, sizeof(sum), tab,
	    sizeof(tab)));
}

/* One host by name: the same name but for case, or a short name and the
 * one DNS name it is the first label of; never an address, never two
 * different domains. */
TEST(host_names_match)
{
	static const struct { const char *a, *b; enum diag_host_match want; } c[] = {
		{ "esx01.example.com", "esx01.example.com", DIAG_HOST_SAME },
		{ "ESX01.Example.COM", "esx01.example.com", DIAG_HOST_SAME },
		{ "DC0_C0_H0", "dc0_c0_h0", DIAG_HOST_SAME },
		{ "esx01", "esx01.example.com", DIAG_HOST_SHORT },
		{ "esx01.example.com", "ESX01", DIAG_HOST_SHORT },
		{ "esx01", "esx011.example.com", DIAG_HOST_OTHER },
		{ "esx0", "esx01.example.com", DIAG_HOST_OTHER },
		{ "esx01.a.com", "esx01.b.com", DIAG_HOST_OTHER },
		{ "esx01.a.com", "esx01.a", DIAG_HOST_OTHER },
		{ "10", "10.0.0.5", DIAG_HOST_OTHER },
		{ "fe80", "fe80::1", DIAG_HOST_OTHER },
		{ ".example.com", "", DIAG_HOST_OTHER },
		{ "", ".example.com", DIAG_HOST_OTHER },
		{ "esx01", "esx02", DIAG_HOST_OTHER },
		{ "esx01", NULL, DIAG_HOST_OTHER },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK_INT(diag_host_match(c[i].a, c[i].b), c[i].want);
}

static void
observe_as(struct diag *d, const struct step *s, const char *host, const char *input)
{
	struct event *ev = mk(s);

	event_set(ev, "hostname", host);
	event_set(ev, "esxwatch_input", input);
	diag_observe(d, ev);
	event_free(ev);
}

/* A host polled through vCenter (inventory name, FQDN) that also sends its
 * syslog (HOSTNAME short and upper case): one memory, one diagnosis, named
 * after the DNS name.  Two hosts of the same short name in two domains:
 * the short name is ambiguous and joins neither. */
TEST(polled_and_syslog_host_is_one_host)
{
	struct diag *d = diag_new(NULL);
	struct diag_alert *out = calloc(8, sizeof(*out));
	const struct step crc = NIC_CRC(0, "vmnic1", "120");
	const struct step ds = { 30, "datastore", "change",
	    "esxwatch_entity=datastore|esxwatch_datastore=ds1|esxwatch_device=naa.600a"
	    "|esxwatch_state=apd", "datastore ds1: apd" };
	const struct step apd = APD(60, "naa.600a");
	size_t n;

	observe_as(d, &apd, "ESX01", "syslog");
	observe_as(d, &ds, "esx01.example.com", "vsphere");
	observe_as(d, &crc, "esx01.example.com", "vsphere");
	CHECK_INT(d->nothers, 1);
	n = diag_evaluate(d, T0 + 120 * 1000, out, 8);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(out[0].rule, "path_loss_physical");
		CHECK_STR(out[0].host, "esx01.example.com");
		CHECK_STR(out[0].datastore, "ds1");
		CHECK(strstr(out[0].evidence, "esx.problem.storage.apd.start") != NULL);
		CHECK(strstr(out[0].evidence, "ds1: apd") != NULL);
	}
	/* esx02 in two domains: "esx02" is neither */
	observe_as(d, &crc, "esx02.a.com", "vsphere");
	observe_as(d, &crc, "esx02.b.com", "vsphere");
	observe_as(d, &apd, "esx02", "syslog");
	CHECK_INT(d->nothers, 4);
	observe_as(d, &apd, "Esx02", "syslog");
	CHECK_INT(d->nothers, 4);
	free(out);
	diag_free(d);
}

TEST(every_rule_documented)
{
	for (size_t i = 0; i < diag_nrules; i++) {
		CHECK(diag_rules[i].name && diag_rules[i].title && diag_rules[i].meaning &&
		    diag_rules[i].next_step && diag_rules[i].severity);
	}
	CHECK_INT(diag_nrules, 5);
}

int
main(void)
{
	t_prog = "test_diagnose";
	RUN(recorded_sequences);
	RUN(nfs_mapping_asked_once_per_server);
	RUN(silent_host);
	RUN(memory_is_bounded);
	RUN(tables_evict_the_least_recently_seen);
	RUN(other_hosts_have_their_own_memory);
	RUN(other_hosts_are_bounded);
	RUN(host_names_match);
	RUN(polled_and_syslog_host_is_one_host);
	RUN(partition_tables);
	RUN(every_rule_documented);
	return t_done();
}
