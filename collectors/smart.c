/*
 * smart: drive health.
 *
 * ESXi: `esxcli storage core device smart get -d DEV` for every local
 * SATA/SAS disk of the device list (not USB, not virtual, not NVMe), and
 * `esxcli nvme device log smart get -A vmhbaN` for every NVMe adapter of
 * `esxcli nvme device list` (named after its device through the path list).
 * Linux: `smartctl --json -a [-d TYPE] DEV` for every disk `smartctl --scan`
 * finds (smartmontools >= 7); no smartctl = said once, then quiet.
 * A host that answers every drive at once (host_smart(): a host polled
 * through vCenter, from the vSAN health service): those drives, in one
 * call, the same fields, changes and alerts (esxwatch_smart_source:
 * vsan-health).
 *
 * SMART queries take seconds per device on ESXi, so collect() does ONE
 * query per call and returns 1 while work remains: the scheduler runs the
 * other due collectors in between, and each query has the collector's
 * timeout.  A round starts with listing (one command per call as well).
 *
 * Events (docs/events.md): a sample per drive; a change when the health
 * differs from the one kept in ctx->state; alerts when the health is not
 * ok (critical for impending failure / failed), when a reallocated,
 * pending or uncorrectable count grows, when an NVMe critical warning is
 * set, and when the temperature is above the drive's rated maximum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>

#include "../agent/lib/buf.h"
#include "../agent/lib/clock.h"
#include "../agent/lib/exec.h"
#include "../agent/lib/log.h"
#include "host/esxcli.h"
#include "host/host.h"
#include "host/smartparse.h"
#include "storage_util.h"

#define SMART_MAX_ITEMS	512

enum item_kind { IT_SCSI, IT_NVME, IT_SMARTCTL, IT_HOST };

struct smart_item {
	enum item_kind	 kind;
	char		 dev[256];	/* device id or path; the entity name */
	char		 arg[256];	/* -d DEV, -A vmhbaN, or the smartctl path */
	char		 type[64];	/* smartctl -d TYPE; IT_HOST: the source */
};

enum phase { PH_START, PH_NVME_LIST, PH_PATHS, PH_ITEMS };

struct smart_priv {
	enum phase	 phase;
	struct smart_item *items;
	size_t		 n, next;
	char		 nvme[32][32];	/* NVMe adapters waiting for names */
	size_t		 nnvme;
	bool		 noted_missing;
};

static int
smart_init(struct collector_ctx *ctx)
{
	ctx->priv = calloc(1, sizeof(struct smart_priv));
	return ctx->priv ? 0 : -1;
}

static void
round_reset(struct smart_priv *p)
{
	free(p->items);
	p->items = NULL;
	p->n = p->next = p->nnvme = 0;
	p->phase = PH_START;
}

static void
smart_fini(struct collector_ctx *ctx)
{
	struct smart_priv *p = ctx->priv;

	if (p != NULL)
		round_reset(p);
	free(p);
	ctx->priv = NULL;
}

static struct smart_item *
add_item(struct smart_priv *p, enum item_kind k, const char *dev, const char *arg,
    const char *type)
{
	struct smart_item *it;

	if (p->n >= SMART_MAX_ITEMS)
		return NULL;
	it = realloc(p->items, (p->n + 1) * sizeof(*it));
	if (it == NULL)
		return NULL;
	p->items = it;
	it = &p->items[p->n++];
	memset(it, 0, sizeof(*it));
	it->kind = k;
	snprintf(it->dev, sizeof(it->dev), "%s", dev);
	snprintf(it->arg, sizeof(it->arg), "%s", arg);
	snprintf(it->type, sizeof(it->type), "%s", type ? type : "");
	return it;
}

/* ESXi 7.0.x prints only the low byte of SMART raw values.
 * ESXWATCH_ESXI_RELEASE overrides uname's release (a test hook). */
static bool
raw_lowbyte(void)
{
	const char *rel = getenv("ESXWATCH_ESXI_RELEASE");
	struct utsname u;

	if (rel == NULL || *rel == '\0') {
		if (uname(&u) == -1 || strcmp(u.sysname, "VMkernel") != 0)
			return false;
		rel = u.release;
	}
	return strncmp(rel, "7.0", 3) == 0;
}

/* ---- emitting ------------------------------------------------------------- */

static void
info_fields(struct event *ev, const struct smart_item *it, const struct smart_info *si)
{
	(void)event_set(ev, "esxwatch_device", it->dev);
	(void)event_set(ev, "esxwatch_health", smart_health_name(si->health));
	(void)event_set(ev, "esxwatch_health_text", si->health_text);
	(void)storage_set_num(ev, "esxwatch_temperature_c", si->temperature_c);
	(void)storage_set_num(ev, "esxwatch_max_temperature_c", si->max_temperature_c);
	(void)storage_set_num(ev, "esxwatch_power_on_hours", si->power_on_hours);
	(void)storage_set_num(ev, "esxwatch_reallocated_sectors", si->reallocated_sectors);
	(void)storage_set_num(ev, "esxwatch_pending_sectors", si->pending_sectors);
	(void)storage_set_num(ev, "esxwatch_uncorrectable_errors", si->uncorrectable_errors);
	(void)storage_set_num(ev, "esxwatch_uncorrectable_sectors", si->uncorrectable_sectors);
	(void)storage_set_num(ev, "esxwatch_media_wearout", si->media_wearout);
	(void)storage_set_num(ev, "esxwatch_percentage_used", si->percentage_used);
	(void)storage_set_num(ev, "esxwatch_available_spare", si->available_spare);
	(void)storage_set_num(ev, "esxwatch_critical_warning", si->critical_warning);
	(void)storage_set_num(ev, "esxwatch_read_errors", si->read_errors);
	(void)storage_set_num(ev, "esxwatch_write_errors", si->write_errors);
	(void)storage_set_num(ev, "esxwatch_power_cycles", si->power_cycles);
	if (it->kind == IT_NVME)
		(void)event_set(ev, "esxwatch_adapter", it->arg);
	if (si->model[0] != '\0')
		(void)event_set(ev, "esxwatch_model", si->model);
	if (si->serial[0] != '\0')
		(void)event_set(ev, "esxwatch_serial", si->serial);
	if (si->raw_lowbyte)
		(void)event_set(ev, "esxwatch_raw_lowbyte", "true");
	for (size_t i = 0; i < si->nnorm; i++) {
		char name[80];

		if (snprintf(name, sizeof(name), "esxwatch_%s_normalized",
		    si->norm[i].name) < (int)sizeof(name))
			(void)storage_set_num(ev, name, si->norm[i].value);
	}
	(void)event_set(ev, "esxwatch_smart_source", it->kind == IT_SCSI ?
	    "esxcli" : it->kind == IT_NVME ? "esxcli-nvme" : it->kind == IT_HOST ?
	    it->type : "smartctl");
}

static void
emit_with(struct emitter *em, struct event *ev, const struct smart_item *it,
    const struct smart_info *si)
{
	if (ev == NULL)
		return;
	info_fields(ev, it, si);
	(void)emit(em, ev);
}

static const char *
health_severity(enum smart_health h)
{
	switch (h) {
	case SMART_OK:		return "info";
	case SMART_IMPENDING:
	case SMART_FAILED:	return "critical";
	default:		return "warning";
	}
}

/* Alert once per growth of a count that only grows on a failing drive. */
static void
check_growth(struct collector_ctx *ctx, struct emitter *em,
    const struct smart_item *it, const struct smart_info *si, const char *what,
    const char *label, long long cur)
{
	char	 key[320], v[32];
	const char *old;
	long long prev;

	if (cur < 0)
		return;
	snprintf(key, sizeof(key), "cnt:%s:%s", what, it->dev);
	old = kv_get(ctx->state, key);
	prev = old ? atoll(old) : -1;
	if (old != NULL && cur > prev) {
		struct event *ev = ev_new("alert", "warning", "drive %s: %s grew "
		    "from %lld to %lld", it->dev, label, prev, cur);

		/* Which count grew (the diagnosis stage reads it). */
		if (ev != NULL)
			(void)event_set(ev, "esxwatch_counter", what);
		emit_with(em, ev, it, si);
	}
	/* Backwards (a reset, a low-byte wrap): a new baseline. */
	snprintf(v, sizeof(v), "%lld", cur);
	(void)kv_set(ctx->state, key, v);
}

static void
emit_result(struct collector_ctx *ctx, struct emitter *em,
    const struct smart_item *it, const struct smart_info *si)
{
	const char *hn = smart_health_name(si->health);
	char	 key[320], prev[32], v[32];
	const char *was;
	struct buf t = BUF_INIT;

	buf_printf(&t, "drive %s: health %s", it->dev, hn);
	if (si->health_text[0] != '\0')
		buf_printf(&t, " (%s)", si->health_text);
	if (si->temperature_c >= 0)
		buf_printf(&t, ", %lld C", si->temperature_c);
	if (si->power_on_hours >= 0)
		buf_printf(&t, ", %lld power-on hours", si->power_on_hours);
	emit_with(em, ev_new("sample", "info", "%s", t.data ? t.data : it->dev),
	    it, si);
	buf_free(&t);

	snprintf(key, sizeof(key), "health:%s", it->dev);
	if (storage_transition(ctx->state, key, hn, prev, sizeof(prev)) ==
	    STORAGE_CHANGED) {
		struct event *ev = ev_new("change", health_severity(si->health),
		    "drive %s: SMART health changed from %s to %s (%s)", it->dev,
		    prev, hn, si->health_text);

		if (ev != NULL)
			(void)event_set(ev, "esxwatch_previous_state", prev);
		emit_with(em, ev, it, si);
	}

	/* Health not ok: an alert per episode (kept across restarts). */
	snprintf(key, sizeof(key), "alerted:%s", it->dev);
	was = kv_get(ctx->state, key);
	if (si->health == SMART_WARNING || si->health == SMART_IMPENDING ||
	    si->health == SMART_FAILED) {
		if (was == NULL || strcmp(was, hn) != 0) {
			emit_with(em, ev_new("alert", health_severity(si->health),
			    "drive %s: SMART health %s (%s)", it->dev, hn,
			    si->health_text), it, si);
			(void)kv_set(ctx->state, key, hn);
		}
	} else if (si->health == SMART_OK)
		(void)kv_del(ctx->state, key);

	check_growth(ctx, em, it, si, "realloc", "reallocated sectors",
	    si->reallocated_sectors);
	check_growth(ctx, em, it, si, "pending", "pending sectors",
	    si->pending_sectors);
	check_growth(ctx, em, it, si, "uncorr", "uncorrectable errors",
	    si->uncorrectable_errors);
	check_growth(ctx, em, it, si, "uncorrsect", "uncorrectable sectors",
	    si->uncorrectable_sectors);

	snprintf(key, sizeof(key), "cw:%s", it->dev);
	if (si->critical_warning > 0) {
		snprintf(v, sizeof(v), "%lld", si->critical_warning);
		was = kv_get(ctx->state, key);
		if (was == NULL || strcmp(was, v) != 0)
			emit_with(em, ev_new("alert", si->critical_warning ==
			    NVME_CW_TEMPERATURE ? "warning" : "critical",
			    "drive %s: NVMe critical warning 0x%llx (%s)", it->dev,
			    si->critical_warning, si->health_text), it, si);
		(void)kv_set(ctx->state, key, v);
	} else if (si->critical_warning == 0)
		(void)kv_del(ctx->state, key);

	snprintf(key, sizeof(key), "hot:%s", it->dev);
	if (si->temperature_c >= 0 && si->max_temperature_c > 0 &&
	    si->temperature_c > si->max_temperature_c) {
		if (kv_get(ctx->state, key) == NULL)
			emit_with(em, ev_new("alert", "warning", "drive %s: "
			    "temperature %lld C above its rated maximum %lld C",
			    it->dev, si->temperature_c, si->max_temperature_c),
			    it, si);
		(void)kv_set(ctx->state, key, "1");
	} else if (si->temperature_c >= 0)
		(void)kv_del(ctx->state, key);
}

/* ---- ESXi ----------------------------------------------------------------- */

static bool
yes(const struct esx_rec *r, const char *k)
{
	const char *v = esx_get(r, k);

	return v != NULL && strcasecmp(v, "true") == 0;
}

/* A local SATA/SAS disk that answers SMART: not USB, virtual, NVMe, CD-ROM. */
static bool
smart_candidate(const struct esx_rec *r, const char *id)
{
	const char *type = esx_get(r, "Device Type");
	const char *vendor = esx_get(r, "Vendor");
	const char *model = esx_get(r, "Model");
	const char *disp = esx_get(r, "Display Name");
	const char *status = esx_get(r, "Status");

	if (!yes(r, "Is Local") || yes(r, "Is USB") || yes(r, "Is Pseudo") ||
	    yes(r, "Is Offline"))
		return false;
	if (type == NULL || strncasecmp(type, "Direct-Access", 13) != 0)
		return false;
	if (status != NULL && strcasecmp(status, "on") != 0 &&
	    strcasecmp(status, "degraded") != 0)
		return false;
	if ((vendor != NULL && strcasecmp(vendor, "VMware") == 0) ||
	    (model != NULL && strcasestr(model, "Virtual") != NULL))
		return false;
	if (strncmp(id, "t10.NVMe", 8) == 0 || strncmp(id, "eui.", 4) == 0 ||
	    (vendor != NULL && strcasecmp(vendor, "NVMe") == 0) ||
	    (disp != NULL && strstr(disp, "NVMe") != NULL))
		return false;
	return true;
}

static int
list_devices(struct collector_ctx *ctx, struct emitter *em, struct smart_priv *p)
{
	static const char *const args[] = { "storage", "core", "device", "list", NULL };
	const char *cmd = "esxcli storage core device list";
	struct esx_out o;
	size_t	 i;

	if (host_esxcli(ctx->host, storage_timeout_s(ctx), args, &o) == -1) {
		storage_cmd_failed(ctx, em, cmd, "smart: `%s` failed or timed out: "
		    "no drive list", cmd);
		return -1;
	}
	storage_cmd_ok(ctx, cmd);
	for (i = 0; i < o.n; i++) {
		const char *id = o.recs[i].title;

		if (id == NULL || *id == '\0' || !smart_candidate(&o.recs[i], id))
			continue;
		if (!strlist_match(&ctx->conf->include, &ctx->conf->exclude, id))
			continue;
		(void)add_item(p, IT_SCSI, id, id, NULL);
	}
	esx_out_free(&o);
	return 0;
}

static void
list_nvme(struct collector_ctx *ctx, struct smart_priv *p)
{
	static const char *const args[] = { "nvme", "device", "list", NULL };
	struct esx_out o;
	size_t	 i;

	/* No nvme namespace (old releases) or no NVMe: nothing to add;
	 * esxcli_query has logged why, rate-limited. */
	if (host_esxcli(ctx->host, storage_timeout_s(ctx), args, &o) == -1)
		return;
	for (i = 0; i < o.n && p->nnvme < sizeof(p->nvme) / sizeof(p->nvme[0]); i++) {
		const char *hba = esx_get(&o.recs[i], "HBA Name");
		const char *st = esx_get(&o.recs[i], "Status");

		if (hba == NULL || *hba == '\0' || strlen(hba) >= sizeof(p->nvme[0]))
			continue;
		if (st != NULL && strcasecmp(st, "Online") != 0)
			continue;
		snprintf(p->nvme[p->nnvme++], sizeof(p->nvme[0]), "%s", hba);
	}
	esx_out_free(&o);
}

/* Name each NVMe adapter after the device behind it (path list). */
static void
name_nvme(struct collector_ctx *ctx, struct smart_priv *p)
{
	static const char *const args[] = { "storage", "core", "path", "list", NULL };
	struct esx_out o;
	bool	 have = host_esxcli(ctx->host, storage_timeout_s(ctx), args, &o) == 0;
	size_t	 i, j;

	for (i = 0; i < p->nnvme; i++) {
		const char *dev = p->nvme[i];

		for (j = 0; have && j < o.n; j++) {
			const char *a = esx_get(&o.recs[j], "Adapter");
			const char *d = esx_get(&o.recs[j], "Device");

			if (a != NULL && d != NULL && *d != '\0' &&
			    strcmp(a, p->nvme[i]) == 0) {
				dev = d;
				break;
			}
		}
		if (strlist_match(&ctx->conf->include, &ctx->conf->exclude, dev))
			(void)add_item(p, IT_NVME, dev, p->nvme[i], NULL);
	}
	if (have)
		esx_out_free(&o);
}

static void
query_esxi(struct collector_ctx *ctx, struct emitter *em, const struct smart_item *it)
{
	const char *scsi[] = { "storage", "core", "device", "smart", "get", "-d",
	    it->arg, NULL };
	const char *nvme[] = { "nvme", "device", "log", "smart", "get", "-A",
	    it->arg, NULL };
	struct esx_out o;
	struct smart_info si;
	char	 cmd[400], err[200];
	int64_t	 t0 = mono_ms();
	int	 t = storage_timeout_s(ctx), rc;

	snprintf(cmd, sizeof(cmd), "esxcli %s %s", it->kind == IT_SCSI ?
	    "storage core device smart get -d" : "nvme device log smart get -A",
	    it->arg);
	if (host_esxcli(ctx->host, t, it->kind == IT_SCSI ? scsi : nvme, &o) == -1) {
		bool to = mono_ms() - t0 >= (int64_t)t * 1000 - 50;

		storage_cmd_failed(ctx, em, cmd, "smart: `%s` %s", cmd, to ?
		    "timed out" : "failed (see the agent log)");
		return;
	}
	rc = it->kind == IT_SCSI ?
	    smart_from_table(&o, raw_lowbyte(), &si, err, sizeof(err)) :
	    smart_from_nvme_log(&o, &si, err, sizeof(err));
	esx_out_free(&o);
	if (rc == -1) {
		log_limited(LOG_ERROR, cmd, 300, "smart: %s: %s", cmd, err);
		storage_cmd_failed(ctx, em, cmd, "smart: `%s`: %s", cmd, err);
		return;
	}
	storage_cmd_ok(ctx, cmd);
	emit_result(ctx, em, it, &si);
}

/* ---- Linux: smartctl --------------------------------------------------------- */

static int
list_smartctl(struct collector_ctx *ctx, struct emitter *em, struct smart_priv *p)
{
	static const char *const args[] = { "--scan", NULL };
	struct smart_scan_dev *devs;
	struct exec_result res;
	char	 what[300];
	int	 missing, n, i, rc = -1;

	if (storage_run(ctx, "smartctl", args, storage_timeout_s(ctx), &res,
	    &missing, what, sizeof(what)) == -1) {
		if (missing) {
			if (!p->noted_missing)
				log_info("smart: smartctl (smartmontools >= 7) not "
				    "found: drive health is not monitored on this host");
			p->noted_missing = true;
			exec_result_free(&res);
			return 0;
		}
		storage_cmd_failed(ctx, em, "smartctl --scan", "smart: %s", what);
		exec_result_free(&res);
		return -1;
	}
	p->noted_missing = false;
	devs = calloc(SMART_MAX_ITEMS, sizeof(*devs));
	n = devs ? smart_scan_parse(res.out, res.out_len, devs, SMART_MAX_ITEMS) : -1;
	if (n < 0) {
		log_limited(LOG_ERROR, "smart:scan", 300, "smart: smartctl --scan: "
		    "unexpected output (exit status %d)", res.status);
		storage_cmd_failed(ctx, em, "smartctl --scan", "smart: `smartctl "
		    "--scan` gave no device list (exit status %d)", res.status);
		goto out;
	}
	storage_cmd_ok(ctx, "smartctl --scan");
	for (i = 0; i < n; i++)
		if (strlist_match(&ctx->conf->include, &ctx->conf->exclude,
		    devs[i].path))
			(void)add_item(p, IT_SMARTCTL, devs[i].path, devs[i].path,
			    devs[i].type);
	rc = 0;
out:
	free(devs);
	exec_result_free(&res);
	return rc;
}

static void
query_smartctl(struct collector_ctx *ctx, struct emitter *em,
    const struct smart_item *it)
{
	const char *args[8];
	struct exec_result res;
	struct smart_info si;
	char	 what[400], err[300], cmd[400];
	int	 missing, n = 0;

	args[n++] = "--json";
	args[n++] = "-a";
	if (it->type[0] != '\0') {
		args[n++] = "-d";
		args[n++] = it->type;
	}
	args[n++] = it->arg;
	args[n] = NULL;
	snprintf(cmd, sizeof(cmd), "smartctl --json -a %s", it->arg);
	if (storage_run(ctx, "smartctl", args, storage_timeout_s(ctx), &res,
	    &missing, what, sizeof(what)) == -1) {
		storage_cmd_failed(ctx, em, cmd, "smart: %s", what);
		exec_result_free(&res);
		return;
	}
	if (smart_from_smartctl(res.out, res.out_len, res.status, &si, err,
	    sizeof(err)) == -1) {
		log_limited(LOG_ERROR, cmd, 300, "smart: %s: %s", cmd, err);
		storage_cmd_failed(ctx, em, cmd, "smart: `%s`: %s", cmd, err);
		exec_result_free(&res);
		return;
	}
	exec_result_free(&res);
	storage_cmd_ok(ctx, cmd);
	emit_result(ctx, em, it, &si);
}

/* ---- a host that answers every drive at once ------------------------------ */

/*
 * The drives host_smart() gave (a host polled through vCenter: the vSAN
 * health service's answer).  A drive the host could not read (its error)
 * has no SMART: absent, said once per reason (kept in ctx->state).
 */
static void
drives_round(struct collector_ctx *ctx, struct emitter *em,
    const struct host_smart *v, size_t n)
{
	const char *host = ctx->host != NULL && ctx->host->name != NULL ?
	    ctx->host->name : "this host";
	struct smart_item it;
	char key[320];
	const char *was;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct host_smart *d = &v[i];

		if (d->disk[0] == '\0' || !strlist_match(&ctx->conf->include,
		    &ctx->conf->exclude, d->disk))
			continue;
		snprintf(key, sizeof(key), "vsanerr:%s", d->disk);	/* (the name kept) */
		was = kv_get(ctx->state, key);
		if (d->error[0] != '\0') {
			if (was == NULL || strcmp(was, d->error) != 0)
				log_warn("smart: host %s: drive %s: no SMART from "
				    "%s (%s): its SMART is absent", host, d->disk,
				    d->source, d->error);
			(void)kv_set(ctx->state, key, d->error);
			continue;
		}
		if (was != NULL) {
			log_info("smart: host %s: drive %s: SMART from %s again",
			    host, d->disk, d->source);
			(void)kv_del(ctx->state, key);
		}
		memset(&it, 0, sizeof(it));
		it.kind = IT_HOST;
		snprintf(it.type, sizeof(it.type), "%s", d->source);
		snprintf(it.dev, sizeof(it.dev), "%s", d->disk);
		snprintf(it.arg, sizeof(it.arg), "%s", d->disk);
		emit_result(ctx, em, &it, &d->si);
	}
}

/* ---- the round ------------------------------------------------------------- */

static int
smart_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct smart_priv *p = ctx->priv;
	bool	 esxi = ctx->platform == PLATFORM_ESXI;
	const struct smart_item *it;
	struct host_smart *drives;
	int n;

	if (p == NULL)
		return -1;
	switch (p->phase) {
	case PH_START:
		round_reset(p);
		/* a host that answers every drive at once, or drive by drive */
		n = host_smart(ctx->host, &drives);
		if (n >= 0 || host_err() != HOST_EABSENT) {
			if (n >= 0)
				drives_round(ctx, em, drives, (size_t)n);
			free(drives);
			return n >= 0 ? 0 : -1;
		}
		if ((esxi ? list_devices(ctx, em, p) : list_smartctl(ctx, em, p)) == -1) {
			round_reset(p);
			return -1;
		}
		if (!esxi && p->n == 0) {
			round_reset(p);		/* no smartctl, or no disk */
			return 0;
		}
		p->phase = esxi ? PH_NVME_LIST : PH_ITEMS;
		return 1;
	case PH_NVME_LIST:
		list_nvme(ctx, p);
		p->phase = p->nnvme > 0 ? PH_PATHS : PH_ITEMS;
		return 1;
	case PH_PATHS:
		name_nvme(ctx, p);
		p->phase = PH_ITEMS;
		return 1;
	case PH_ITEMS:
		break;
	}
	if (p->next >= p->n) {
		round_reset(p);
		return 0;
	}
	it = &p->items[p->next++];
	if (it->kind == IT_SMARTCTL)
		query_smartctl(ctx, em, it);
	else
		query_esxi(ctx, em, it);
	if (p->next < p->n)
		return 1;
	round_reset(p);
	return 0;
}

const struct collector collector_smart = {
	.name = "smart",
	.default_interval = 3600,
	.init = smart_init,
	.collect = smart_collect,
	.fini = smart_fini,
};
