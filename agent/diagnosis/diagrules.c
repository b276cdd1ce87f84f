/*
 * diagrules: the diagnosis rules (docs/loginsight.md "Diagnosis alerts").
 *
 *  path_loss_physical   a storage path loss (APD, PDL, lost connectivity,
 *                       path dead, NFS server lost, datastore
 *                       inaccessible) while NIC error counters (CRC,
 *                       frame, length, missed) grow within +-window_s
 *  link_flapping        more than flap_count link changes of one NIC
 *                       within flap_window_s: one alert per window
 *  vsan_disk_partitions a disk vSAN finds ineligible because it "Has
 *                       partitions", with its partition table
 *  failing_drive        SCSI medium/hardware errors (sense key 0x3/0x4)
 *                       of a device and growth of its SMART pending,
 *                       reallocated or uncorrectable counts within
 *                       drive_window_s: one alert per window
 *  silent_host          the agent's events have not reached a destination
 *                       for silent_after_s while collectors run
 *
 * Times are the events' own timestamps: a log line read late keeps the
 * time it was written, so "an hour apart" stays an hour apart.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagrules.h"
#include "../lib/log.h"

/* ---- small helpers ---------------------------------------------------- */

static bool
is(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

/* A log line's alert: logwatch's (the host's own log, or its syslog), or
 * vcevents' (the same condition reported by vCenter, matched as vobd's
 * line: the same rule names and captures, docs/vsphere.md). */
static bool
is_log(const char *col)
{
	return is(col, "logwatch") || is(col, "vcevents");
}

static bool
nonempty(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* A decimal count; -1 when absent or not a plain number. */
static long long
num(const struct event *ev, const char *name)
{
	const char *v = event_get(ev, name);
	char *end;
	long long n;

	if (v == NULL || !isdigit((unsigned char)v[0]))
		return -1;
	n = strtoll(v, &end, 10);
	return *end == '\0' && n >= 0 ? n : -1;
}

/* Is word one of the comma/space separated items of list? */
static bool
in_list(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	if (wl == 0)
		return false;
	while (p != NULL && *p != '\0') {
		while (*p == ',' || *p == ' ')
			p++;
		if (strncmp(p, word, wl) == 0 && (p[wl] == '\0' || p[wl] == ',' || p[wl] == ' '))
			return true;
		p = strpbrk(p, ", ");
	}
	return false;
}

/* snprintf into a fixed field: a long value is cut, never overflows. */
static void sfmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
sfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* ---- storage path loss + NIC errors ------------------------------------- */

static const char *const nic_err_counters[] = {
	"rx_crc_errors", "rx_frame_errors", "rx_length_errors", "rx_missed_errors"
};

static const char *const loss_rules[] = {
	"apd_start", "apd_timeout", "pdl_sense", "pdl_device_lost",
	"storage_connectivity_lost", "path_dead", "nfs_server_disconnect",
	"vmfs_lost_access"
};

static void
observe_nic_errors(struct diag *d, const struct event *ev, const char *nicname)
{
	long long interval = num(ev, "esxwatch_interval_s");
	int64_t w2 = 2 * (int64_t)d->conf.window_s * 1000;
	struct diag_nic *nic = NULL;

	for (size_t i = 0; i < sizeof(nic_err_counters) / sizeof(nic_err_counters[0]); i++) {
		char name[64];
		long long delta, total;
		struct diag_obs o;
		bool dup = false;

		sfmt(name, sizeof(name), "esxwatch_%s_delta", nic_err_counters[i]);
		delta = num(ev, name);
		if (delta <= 0)
			continue;
		/* Growth over a long interval cannot be placed in time. */
		if (interval >= 0 && interval * 1000 > w2) {
			log_debug("diagnosis: %s %s grew over %lld s: too long to correlate",
			    nicname, nic_err_counters[i], interval);
			continue;
		}
		if (nic == NULL)
			nic = diag_nic_get(d, nicname);
		if (nic == NULL)
			return;
		for (size_t k = 0; k < DIAG_NIC_ERRS; k++)
			if (nic->err[k].ts != 0 && is(nic->err[k].what, nic_err_counters[i]) &&
			    llabs((long long)(nic->err[k].ts - ev->timestamp_ms)) < 5000)
				dup = true;
		if (dup)
			continue;
		name[strlen(name) - 6] = '\0';	/* the total */
		total = num(ev, name);
		diag_obs_fmt(&o, ev->timestamp_ms, nic_err_counters[i], NULL);
		sfmt(o.text + strlen(o.text), sizeof(o.text) - strlen(o.text),
		    "%s: %s grew by %lld (to %lld)", nicname, nic_err_counters[i],
		    delta, total);
		if (interval >= 0)
			o.from = ev->timestamp_ms - interval * 1000;
		diag_obs_push(nic->err, DIAG_NIC_ERRS, &o);
	}
}

static struct diag_store *
store_get(struct diag *d, const char *ds, bool create)
{
	struct diag_store *lru = &d->stores[0];

	for (size_t i = 0; i < DIAG_MAX_STORES; i++) {
		struct diag_store *s = &d->stores[i];

		if (strcmp(s->datastore, ds) == 0)
			return s;
		if (s->datastore[0] == '\0' || (lru->datastore[0] != '\0' && s->seen < lru->seen))
			lru = s;
	}
	if (!create)
		return NULL;
	if (lru->datastore[0] != '\0')
		d->forgotten++;
	memset(lru, 0, sizeof(*lru));
	diag_copy(lru->datastore, sizeof(lru->datastore), ds);
	return lru;
}

static const struct diag_store *
store_of_device(struct diag *d, const char *dev)
{
	for (size_t i = 0; i < DIAG_MAX_STORES; i++)
		if (d->stores[i].datastore[0] != '\0' && in_list(d->stores[i].devices, dev))
			return &d->stores[i];
	return NULL;
}

static void
observe_store(struct diag *d, const struct event *ev)
{
	const char *ds = event_get(ev, "esxwatch_datastore");
	struct diag_store *s;

	if (!is(event_get(ev, "esxwatch_entity"), "datastore") || !nonempty(ds) ||
	    strlen(ds) >= DIAG_NAME_MAX)
		return;
	s = store_get(d, ds, true);
	s->seen = d->now;
	diag_copy(s->devices, sizeof(s->devices), event_get(ev, "esxwatch_device"));
	diag_copy(s->nfs_host, sizeof(s->nfs_host), event_get(ev, "esxwatch_nfs_host"));
}

/* What kind of path loss the event reports, or NULL. */
static const char *
loss_kind(const struct event *ev, const char *col, const char *kind)
{
	const char *st = event_get(ev, "esxwatch_state");
	const char *rule = event_get(ev, "esxwatch_rule");

	if (is(col, "datastore") && (is(kind, "change") || is(kind, "alert")) &&
	    (is(st, "apd") || is(st, "pdl") || is(st, "inaccessible")))
		return st;
	if (is_log(col) && rule != NULL)
		for (size_t i = 0; i < sizeof(loss_rules) / sizeof(loss_rules[0]); i++)
			if (strcmp(rule, loss_rules[i]) == 0)
				return rule;
	return NULL;
}

static struct diag_loss *
loss_find(struct diag *d, const char *ds, const char *dev, int64_t ts)
{
	int64_t w = (int64_t)d->conf.window_s * 1000;
	struct diag_loss *oldest = &d->losses[0];

	for (size_t i = 0; i < DIAG_MAX_LOSSES; i++) {
		struct diag_loss *l = &d->losses[i];
		bool same;

		if (l->first == 0) {
			oldest = l;
			continue;
		}
		same = (ds[0] != '\0' && strcmp(l->datastore, ds) == 0) ||
		    (dev[0] != '\0' && strcmp(l->device, dev) == 0) ||
		    (ds[0] == '\0' && dev[0] == '\0');
		if (same && ts >= l->first - w && ts <= l->last + w)
			return l;
		if (oldest->first != 0 && l->last < oldest->last)
			oldest = l;
	}
	if (oldest->first != 0)
		d->forgotten++;
	memset(oldest, 0, sizeof(*oldest));
	oldest->first = oldest->last = ts;
	return oldest;
}

static void
observe_loss(struct diag *d, const struct event *ev, const char *what)
{
	char ds[DIAG_NAME_MAX], dev[DIAG_NAME_MAX];
	struct diag_loss *l;
	struct diag_obs o;

	diag_copy(ds, sizeof(ds), event_get(ev, "esxwatch_datastore"));
	diag_copy(dev, sizeof(dev), event_get(ev, "esxwatch_device"));
	if (ds[0] == '\0' && dev[0] != '\0') {
		const struct diag_store *s = store_of_device(d, dev);

		if (s != NULL)
			diag_copy(ds, sizeof(ds), s->datastore);
	}
	l = loss_find(d, ds, dev, ev->timestamp_ms);
	if (ev->timestamp_ms < l->first)
		l->first = ev->timestamp_ms;
	if (ev->timestamp_ms > l->last)
		l->last = ev->timestamp_ms;
	if (l->datastore[0] == '\0')
		diag_copy(l->datastore, sizeof(l->datastore), ds);
	if (l->device[0] == '\0')
		diag_copy(l->device, sizeof(l->device), dev);
	diag_obs_fmt(&o, ev->timestamp_ms, what, ev);
	diag_obs_push(l->ev, DIAG_LOSS_EVID, &o);
}

static void
pathloss_observe(struct diag *d, const struct event *ev, const char *col,
    const char *kind)
{
	const char *what;

	if (is(col, "nic") && (is(kind, "sample") || is(kind, "alert")) &&
	    nonempty(event_get(ev, "esxwatch_nic")))
		observe_nic_errors(d, ev, event_get(ev, "esxwatch_nic"));
	if (is(col, "datastore"))
		observe_store(d, ev);
	what = loss_kind(ev, col, kind);
	if (what != NULL)
		observe_loss(d, ev, what);
}

/* NICs whose errors grew around the incident; names appended to nics. */
static size_t
loss_candidates(struct diag *d, const struct diag_loss *l, const char *only,
    char *nics, size_t len, struct diag_alert *a)
{
	int64_t w = (int64_t)d->conf.window_s * 1000;
	size_t n = 0;

	nics[0] = '\0';
	for (size_t i = 0; i < DIAG_MAX_NICS; i++) {
		const struct diag_nic *nic = &d->nics[i];
		bool hit = false;

		if (nic->name[0] == '\0' || (only != NULL && !in_list(only, nic->name)))
			continue;
		for (size_t k = 0; k < DIAG_NIC_ERRS; k++) {
			const struct diag_obs *o = &nic->err[k];

			if (o->ts == 0 || o->ts < l->first - w || o->from > l->last + w)
				continue;
			hit = true;
			if (a != NULL)
				diag_evidence_add(a, o);
		}
		if (hit) {
			size_t used = strlen(nics);

			sfmt(nics + used, len - used, "%s%s", n ? "," : "", nic->name);
			n++;
		}
	}
	return n;
}

static void
pathloss_alert(struct diag *d, const struct diag_loss *l, const char *only,
    const struct diag_ans *map, struct diag_alert *a)
{
	char nics[DIAG_NAME_MAX], what[64];
	const char *ds = l->datastore[0] ? l->datastore : l->device[0] ? l->device : "a datastore";
	int mins = (d->conf.window_s + 59) / 60;
	size_t k;

	memset(a, 0, sizeof(*a));
	diag_copy(a->rule, sizeof(a->rule), "path_loss_physical");
	diag_copy(a->severity, sizeof(a->severity), "critical");
	for (k = 0; k < DIAG_LOSS_EVID; k++)
		diag_evidence_add(a, &l->ev[k]);
	loss_candidates(d, l, only, nics, sizeof(nics), a);
	diag_copy(what, sizeof(what), l->ev[0].what);
	for (k = 0; k < DIAG_LOSS_EVID; k++)
		if (l->ev[k].ts != 0)
			diag_copy(what, sizeof(what), l->ev[k].what);
	if (map != NULL)
		sfmt(a->text, sizeof(a->text), "Likely physical layer on %s: %s lost "
		    "its storage path (%s) while NIC error counters grew on %s within "
		    "%d min; %s carries its traffic (%s). Next: check the cable, SFP and "
		    "switch port of %s (esxcli network nic stats get -n %s, the switch "
		    "port's error counters), then replace the part or move the traffic "
		    "to a healthy uplink.", nics, ds, what, nics, mins, nics, map->b,
		    nics, nics);
	else
		sfmt(a->text, sizeof(a->text), "Likely physical layer on %s on %s: "
		    "%s lost its storage path (%s) while NIC error counters grew "
		    "on %s within %d min; which uplinks carry the datastore's traffic is "
		    "not known. Next: check the cable, SFP and switch port of %s "
		    "(esxcli network nic stats get -n %s) and the storage network's "
		    "uplinks.", nics, d->host[0] ? d->host : "this host", ds, what,
		    nics, mins, nics, nics);
	diag_copy(a->nic, sizeof(a->nic), nics);
	diag_copy(a->datastore, sizeof(a->datastore), l->datastore);
	diag_copy(a->device, sizeof(a->device), l->device);
	if (map != NULL) {
		diag_extra(a, "esxwatch_uplinks", map->a);
		diag_extra(a, "esxwatch_network_path", map->b);
	}
}

static size_t
pathloss_evaluate(struct diag *d, int64_t now, struct diag_alert *out, size_t max)
{
	int64_t w = (int64_t)d->conf.window_s * 1000;
	size_t n = 0;

	for (size_t i = 0; i < DIAG_MAX_LOSSES && n < max; i++) {
		struct diag_loss *l = &d->losses[i];
		const struct diag_store *s;
		const struct diag_ans *map = NULL;
		char nics[DIAG_NAME_MAX];
		bool expired = now > l->last + w;

		if (l->first == 0)
			continue;
		if (l->done || loss_candidates(d, l, NULL, nics, sizeof(nics), NULL) == 0) {
			if (expired)
				memset(l, 0, sizeof(*l));
			continue;
		}
		s = l->datastore[0] ? store_get(d, l->datastore, false) : NULL;
		if (s != NULL && s->nfs_host[0] != '\0') {
			map = diag_ans_find(d, DIAG_WANT_UPLINKS, s->nfs_host);
			if (map == NULL)
				continue;	/* asked; wait for the answer */
			if (!map->ok)
				map = NULL;
		}
		if (map != NULL && loss_candidates(d, l, map->a, nics, sizeof(nics), NULL) == 0) {
			/* The NICs with errors do not carry this datastore. */
			if (expired)
				memset(l, 0, sizeof(*l));
			continue;
		}
		pathloss_alert(d, l, map ? map->a : NULL, map, &out[n++]);
		l->done = true;
	}
	return n;
}

/* ---- link flapping ------------------------------------------------------- */

static const char *
link_dir(const struct event *ev, const char *col, const char *kind)
{
	const char *rule = event_get(ev, "esxwatch_rule");
	const char *link = event_get(ev, "esxwatch_link");

	if (is(col, "nic") && is(kind, "change") && (is(link, "up") || is(link, "down")))
		return link;
	if (!is_log(col) || rule == NULL)
		return NULL;
	if (is(rule, "nic_link_down") || is(rule, "nic_driver_link_down"))
		return "down";
	if (is(rule, "nic_link_up") || is(rule, "nic_driver_link_up"))
		return "up";
	return NULL;
}

static void
flap_alert(struct diag *d, struct diag_nic *nic, size_t count, int64_t fw)
{
	struct diag_alert *a = diag_pending_new(d, "link_flapping", "error");

	sfmt(a->text, sizeof(a->text), "%s: link flapping: %zu link changes "
	    "within %lld s. Next: check the cable, SFP and switch port of %s (errors, "
	    "err-disable, speed/duplex negotiation; esxcli network nic get -n %s); "
	    "until it is fixed, make %s standby or unused in its teaming so traffic "
	    "stops failing over.", nic->name, count, (long long)(fw / 1000),
	    nic->name, nic->name, nic->name);
	diag_copy(a->nic, sizeof(a->nic), nic->name);
	for (size_t k = 0; k < DIAG_NIC_LINKS; k++)
		if (nic->link[k].ts != 0 && nic->link[k].ts > nic->flap_next - 2 * fw &&
		    nic->link[k].ts <= nic->flap_next - fw)
			diag_evidence_add(a, &nic->link[k]);
	{
		char c[24];

		sfmt(c, sizeof(c), "%zu", count);
		diag_extra(a, "esxwatch_link_changes", c);
	}
}

static void
flap_observe(struct diag *d, const struct event *ev, const char *col,
    const char *kind)
{
	const char *dir = link_dir(ev, col, kind);
	int64_t fw = (int64_t)d->conf.flap_window_s * 1000, ts = ev->timestamp_ms;
	struct diag_nic *nic;
	struct diag_obs o;
	size_t count = 0;

	if (dir == NULL)
		return;
	nic = diag_nic_get(d, event_get(ev, "esxwatch_nic"));
	if (nic == NULL)
		return;
	/* vobd and the driver log the same transition: one change. */
	for (size_t k = 0; k < DIAG_NIC_LINKS; k++)
		if (nic->link[k].ts != 0 && is(nic->link[k].what, dir) &&
		    llabs((long long)(nic->link[k].ts - ts)) < 2000)
			return;
	diag_obs_fmt(&o, ts, dir, ev);
	diag_obs_push(nic->link, DIAG_NIC_LINKS, &o);
	for (size_t k = 0; k < DIAG_NIC_LINKS; k++)
		if (nic->link[k].ts != 0 && nic->link[k].ts > ts - fw && nic->link[k].ts <= ts)
			count++;
	if (count > (size_t)d->conf.flap_count && ts >= nic->flap_next) {
		nic->flap_next = ts + fw;
		flap_alert(d, nic, count, fw);
	}
}

/* ---- vSAN: ineligible because of partitions ------------------------------ */

static bool
has_partitions(const char *reason)
{
	return reason != NULL && strcasestr(reason, "partition") != NULL;
}

static void
vsan_observe(struct diag *d, const struct event *ev, const char *col,
    const char *kind)
{
	const char *st = event_get(ev, "esxwatch_vsan_state");
	const char *reason = event_get(ev, "esxwatch_reason");
	struct diag_dev *dev;

	(void)kind;
	if (!is(col, "vsan") || st == NULL)
		return;
	dev = diag_dev_get(d, event_get(ev, "esxwatch_device"));
	if (dev == NULL)
		return;
	if (is(st, "ineligible") && has_partitions(reason)) {
		dev->partitions = true;
		diag_copy(dev->part_reason, sizeof(dev->part_reason), reason);
	} else {
		dev->partitions = false;
		dev->part_done = false;	/* a new ineligibility is news again */
	}
}

static size_t
vsan_evaluate(struct diag *d, int64_t now, struct diag_alert *out, size_t max)
{
	size_t n = 0;

	(void)now;
	for (size_t i = 0; i < DIAG_MAX_DEVS && n < max; i++) {
		struct diag_dev *dev = &d->devs[i];
		const struct diag_ans *pt;
		struct diag_alert *a;

		if (dev->name[0] == '\0' || !dev->partitions || dev->part_done)
			continue;
		pt = diag_ans_find(d, DIAG_WANT_PTABLE, dev->name);
		if (pt == NULL)
			continue;
		a = &out[n++];
		memset(a, 0, sizeof(*a));
		diag_copy(a->rule, sizeof(a->rule), "vsan_disk_partitions");
		diag_copy(a->severity, sizeof(a->severity), "warning");
		sfmt(a->text, sizeof(a->text), "vSAN cannot claim %s: %s. On the "
		    "disk: %s. Next: if nothing on it is needed (compare with the "
		    "datastores and the boot disk), erase it (Host Client: Storage, "
		    "Devices, Clear partition table; or partedUtil mklabel "
		    "/vmfs/devices/disks/%s gpt), then claim it for vSAN.", dev->name,
		    dev->part_reason, pt->ok ? pt->a : pt->b, dev->name);
		diag_copy(a->device, sizeof(a->device), dev->name);
		sfmt(a->evidence, sizeof(a->evidence), "vdq: %s: %s | partedUtil "
		    "getptbl: %s", dev->name, dev->part_reason, pt->b);
		diag_extra(a, "esxwatch_partition_table", pt->ok ? pt->b : "");
		diag_extra(a, "esxwatch_partitions", pt->ok ? pt->a : "");
		dev->part_done = true;
	}
	return n;
}

/* ---- failing drive --------------------------------------------------------- */

static const char *const smart_counts[3][2] = {
	{ "esxwatch_pending_sectors", "pending" },
	{ "esxwatch_reallocated_sectors", "realloc" },
	{ "esxwatch_uncorrectable_errors", "uncorr" },
};

static void
drive_check(struct diag *d, struct diag_dev *dev)
{
	int64_t dw = (int64_t)d->conf.drive_window_s * 1000, latest = 0;
	struct diag_alert *a;
	bool pair = false;

	for (size_t i = 0; i < DIAG_DEV_SCSI; i++)
		for (size_t k = 0; k < DIAG_DEV_GROWTH; k++) {
			const struct diag_obs *s = &dev->scsi[i], *g = &dev->growth[k];

			if (s->ts == 0 || g->ts == 0 || llabs((long long)(s->ts - g->ts)) > dw)
				continue;
			pair = true;
			latest = s->ts > latest ? s->ts : latest;
			latest = g->ts > latest ? g->ts : latest;
		}
	if (!pair || latest < dev->drive_next)
		return;
	dev->drive_next = latest + dw;
	a = diag_pending_new(d, "failing_drive", "critical");
	sfmt(a->text, sizeof(a->text), "Drive %s is failing: SCSI medium or "
	    "hardware errors and growing SMART defect counts. Next: check "
	    "esxcli storage core device smart get -d %s and the controller's log, "
	    "move the VMs and data off the drive (Storage vMotion, vSAN evacuation) "
	    "and replace it.", dev->name, dev->name);
	diag_copy(a->device, sizeof(a->device), dev->name);
	for (size_t i = 0; i < DIAG_DEV_SCSI; i++)
		diag_evidence_add(a, &dev->scsi[i]);
	for (size_t k = 0; k < DIAG_DEV_GROWTH; k++)
		diag_evidence_add(a, &dev->growth[k]);
}

static void
drive_growth(struct diag *d, struct diag_dev *dev, const struct event *ev,
    size_t k, long long from, long long to)
{
	struct diag_obs o;

	for (size_t i = 0; i < DIAG_DEV_GROWTH; i++)
		if (dev->growth[i].ts != 0 && is(dev->growth[i].what, smart_counts[k][1]) &&
		    strstr(dev->growth[i].text, "to ") != NULL) {
			char t[32];

			sfmt(t, sizeof(t), "to %lld", to);
			if (strstr(dev->growth[i].text, t) != NULL)
				return;	/* the same growth, reported twice */
		}
	diag_obs_fmt(&o, ev->timestamp_ms, smart_counts[k][1], NULL);
	if (from >= 0)
		sfmt(o.text + strlen(o.text), sizeof(o.text) - strlen(o.text),
		    "%s: SMART %s grew from %lld to %lld", dev->name,
		    smart_counts[k][0] + 9, from, to);
	else
		sfmt(o.text + strlen(o.text), sizeof(o.text) - strlen(o.text),
		    "%s: SMART %s grew (to %lld)", dev->name, smart_counts[k][0] + 9, to);
	diag_obs_push(dev->growth, DIAG_DEV_GROWTH, &o);
	drive_check(d, dev);
}

static void
drive_smart(struct diag *d, const struct event *ev, const char *kind)
{
	struct diag_dev *dev = diag_dev_get(d, event_get(ev, "esxwatch_device"));
	const char *counter = event_get(ev, "esxwatch_counter");

	if (dev == NULL)
		return;
	for (size_t k = 0; k < 3; k++) {
		long long cur = num(ev, smart_counts[k][0]);

		if (cur < 0)
			continue;
		if (dev->last[k] >= 0 && cur > dev->last[k])
			drive_growth(d, dev, ev, k, dev->last[k], cur);
		else if (is(kind, "alert") && is(counter, smart_counts[k][1]))
			drive_growth(d, dev, ev, k, -1, cur);
		dev->last[k] = cur;
	}
}

static void
drive_scsi(struct diag *d, const struct event *ev)
{
	const char *sense = event_get(ev, "esxwatch_scsi_sense");
	struct diag_dev *dev;
	struct diag_obs o;
	char *end;
	long key;

	if (!nonempty(sense) || nonempty(event_get(ev, "esxwatch_scsi_sense_invalid")))
		return;
	key = strtol(sense, &end, 16);
	if (end == sense || ((key & 0xf) != 0x3 && (key & 0xf) != 0x4))
		return;
	dev = diag_dev_get(d, event_get(ev, "esxwatch_device"));
	if (dev == NULL)
		return;
	diag_obs_fmt(&o, ev->timestamp_ms, (key & 0xf) == 0x3 ? "medium" : "hardware", NULL);
	sfmt(o.text + strlen(o.text), sizeof(o.text) - strlen(o.text),
	    "%s: SCSI %s error, sense %s (%s)", dev->name, o.what, sense,
	    nonempty(event_get(ev, "esxwatch_rule")) ? event_get(ev, "esxwatch_rule") : "log");
	diag_obs_push(dev->scsi, DIAG_DEV_SCSI, &o);
	drive_check(d, dev);
}

static void
drive_observe(struct diag *d, const struct event *ev, const char *col,
    const char *kind)
{
	if (is(col, "smart"))
		drive_smart(d, ev, kind);
	else if (is_log(col))
		drive_scsi(d, ev);
}

/* ---- silent host ------------------------------------------------------------ */

static struct diag_dstate *
dstate_get(struct diag *d, const char *name)
{
	for (size_t i = 0; i < DIAG_MAX_DESTS; i++)
		if (strcmp(d->dests[i].name, name) == 0)
			return &d->dests[i];
	for (size_t i = 0; i < DIAG_MAX_DESTS; i++)
		if (d->dests[i].name[0] == '\0') {
			diag_copy(d->dests[i].name, sizeof(d->dests[i].name), name);
			return &d->dests[i];
		}
	return NULL;
}

static void
silent_resume(struct diag_dstate *s, const struct diag_dest *x, int64_t now,
    struct diag_alert *a)
{
	long long secs = (long long)((x->last_success_ms - s->since) / 1000);
	char v[32];

	memset(a, 0, sizeof(*a));
	diag_copy(a->rule, sizeof(a->rule), "silent_host");
	diag_copy(a->severity, sizeof(a->severity), "warning");
	sfmt(a->text, sizeof(a->text), "Delivery to %s was interrupted for %lld s "
	    "and has resumed: up to %" PRIu64 " events were queued and %" PRIu64
	    " dropped meanwhile. Next: look at the agent's log for the errors of that "
	    "time and at the destination's availability; dropped events are lost, "
	    "raise storage.max_disk_buffer if the outage was expected to be covered.",
	    x->name, secs, s->peak, x->dropped - s->dropped0);
	sfmt(a->evidence, sizeof(a->evidence), "destination %s: no delivery from "
	    "%lld to %lld (ms since the epoch), checked at %lld", x->name,
	    (long long)s->since, (long long)x->last_success_ms, (long long)now);
	diag_extra(a, "esxwatch_destination", x->name);
	sfmt(v, sizeof(v), "%lld", secs);
	diag_extra(a, "esxwatch_outage_s", v);
	sfmt(v, sizeof(v), "%" PRIu64, s->peak);
	diag_extra(a, "esxwatch_queued_events", v);
	sfmt(v, sizeof(v), "%" PRIu64, x->dropped - s->dropped0);
	diag_extra(a, "esxwatch_dropped_events", v);
}

size_t
diagrule_silent(struct diag *d, int64_t now, const struct diag_dest *dests,
    size_t nd, struct diag_alert *out, size_t max)
{
	int64_t after = (int64_t)d->conf.silent_after_s * 1000;
	size_t n = 0;

	for (size_t i = 0; i < nd; i++) {
		const struct diag_dest *x = &dests[i];
		struct diag_dstate *s = dstate_get(d, x->name);

		if (s == NULL)
			continue;
		if (!s->outage && x->failing && x->backlog > 0) {
			s->outage = true;
			s->logged = false;
			s->since = x->last_success_ms ? x->last_success_ms : now;
			s->peak = x->backlog;
			s->dropped0 = x->dropped;
		}
		if (!s->outage)
			continue;
		if (x->backlog > s->peak)
			s->peak = x->backlog;
		if (x->failing && !s->logged && now - s->since > after) {
			log_error("diagnosis: no event has reached destination %s for %lld s "
			    "while collectors run (%" PRIu64 " queued)", x->name,
			    (long long)((now - s->since) / 1000), x->backlog);
			s->logged = true;
		}
		if (!x->failing && x->last_success_ms > s->since) {
			if (x->last_success_ms - s->since > after && n < max)
				silent_resume(s, x, now, &out[n++]);
			s->outage = false;
		}
	}
	return n;
}

/* ---- the table ------------------------------------------------------------------ */

const struct diag_rule diag_rules[] = {
	{ "path_loss_physical", "esxwatch diagnosis: storage path loss with NIC errors",
	  "critical",
	  "A datastore or device lost its storage path while error counters grew on "
	  "the NIC(s) carrying it: the physical layer (cable, SFP, switch port) of "
	  "that NIC is the likely cause.",
	  "Check the named vmnic's cable, SFP and switch port and its error counters; "
	  "replace the part or move the storage traffic to a healthy uplink.",
	  pathloss_observe, pathloss_evaluate },
	{ "link_flapping", "esxwatch diagnosis: NIC link flapping", "error",
	  "One NIC's link went up and down more often than the flap threshold "
	  "within the flap window.",
	  "Check the cable, SFP and switch port (err-disable, negotiation); make "
	  "the NIC standby/unused until it is fixed.",
	  flap_observe, NULL },
	{ "vsan_disk_partitions", "esxwatch diagnosis: vSAN disk blocked by partitions",
	  "warning",
	  "vSAN will not claim a disk because it has partitions; the alert lists "
	  "the partition table.",
	  "If nothing on the disk is needed, clear its partition table, then claim "
	  "it for vSAN.",
	  vsan_observe, vsan_evaluate },
	{ "failing_drive", "esxwatch diagnosis: failing drive", "critical",
	  "A drive reports SCSI medium or hardware errors and its SMART pending, "
	  "reallocated or uncorrectable counts grow.",
	  "Evacuate the drive (Storage vMotion, vSAN evacuation) and replace it.",
	  drive_observe, NULL },
	{ "silent_host", "esxwatch diagnosis: delivery interrupted", "warning",
	  "The agent's events did not reach a destination for longer than the "
	  "silent threshold; the alert comes when delivery resumes, with how long "
	  "and how much was queued or dropped.",
	  "Look at the agent's log and the destination's availability; raise "
	  "storage.max_disk_buffer if events were dropped.",
	  NULL, NULL },
};
const size_t diag_nrules = sizeof(diag_rules) / sizeof(diag_rules[0]);
