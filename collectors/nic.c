/*
 * nic: link state and error counters per network interface.
 *
 * Every interval, one `sample` per NIC with the link, speed, duplex,
 * driver and every counter with its change since the previous sample; a
 * `change` when the link goes up or down; an `alert` per error or drop
 * counter that grew (CRC errors are the classic sign of a bad fibre or
 * SFP and get severity error).  The previous observation lives in the
 * collector's state store, which the agent persists, so a restart neither
 * replays nor hides a change.
 *
 * State keys per NIC: NAME.link (up/down), NAME.ts (ms of the previous
 * sample), NAME.FIELD (counter total).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "host/esxcli.h"
#include "nic.h"
#include "../agent/lib/log.h"
#include "../agent/lib/str.h"

const struct nic_counter_def nic_counters[NIC_NCOUNTERS] = {
	{ "rx_packets",		"Packets received",		"rx_packets",		NULL },
	{ "tx_packets",		"Packets sent",			"tx_packets",		NULL },
	{ "rx_bytes",		"Bytes received",		"rx_bytes",		NULL },
	{ "tx_bytes",		"Bytes sent",			"tx_bytes",		NULL },
	{ "rx_dropped",		"Receive packets dropped",	"rx_dropped",		"warning" },
	{ "tx_dropped",		"Transmit packets dropped",	"tx_dropped",		"warning" },
	{ "rx_multicast",	"Multicast packets received",	"multicast",		NULL },
	{ "rx_broadcast",	"Broadcast packets received",	NULL,			NULL },
	{ "tx_multicast",	"Multicast packets sent",	NULL,			NULL },
	{ "tx_broadcast",	"Broadcast packets sent",	NULL,			NULL },
	{ "rx_errors",		"Total receive errors",		"rx_errors",		"warning" },
	{ "rx_length_errors",	"Receive length errors",	"rx_length_errors",	"warning" },
	{ "rx_over_errors",	"Receive over errors",		"rx_over_errors",	"warning" },
	{ "rx_crc_errors",	"Receive CRC errors",		"rx_crc_errors",	"error" },
	{ "rx_frame_errors",	"Receive frame errors",		"rx_frame_errors",	"warning" },
	{ "rx_fifo_errors",	"Receive FIFO errors",		"rx_fifo_errors",	"warning" },
	{ "rx_missed_errors",	"Receive missed errors",	"rx_missed_errors",	"warning" },
	{ "tx_errors",		"Total transmit errors",	"tx_errors",		"warning" },
	{ "tx_aborted_errors",	"Transmit aborted errors",	"tx_aborted_errors",	"warning" },
	{ "tx_carrier_errors",	"Transmit carrier errors",	"tx_carrier_errors",	"warning" },
	{ "tx_fifo_errors",	"Transmit FIFO errors",		"tx_fifo_errors",	"warning" },
	{ "tx_heartbeat_errors", "Transmit heartbeat errors",	"tx_heartbeat_errors",	"warning" },
	{ "tx_window_errors",	"Transmit window errors",	"tx_window_errors",	"warning" },
};

/* The counters the one-line sample text shows. */
static const char *const text_counters[] = { "rx_crc_errors", "rx_errors",
    "tx_errors", "rx_dropped", "tx_dropped", NULL };

static const char *
state_name(int s)
{
	return s == NIC_UP ? "up" : s == NIC_DOWN ? "down" : "unknown";
}

static int
parse_state(const char *s)
{
	if (s == NULL)
		return NIC_UNKNOWN;
	if (strcasecmp(s, "up") == 0)
		return NIC_UP;
	if (strcasecmp(s, "down") == 0)
		return NIC_DOWN;
	return NIC_UNKNOWN;
}

static long long
parse_ll(const char *s)
{
	uint64_t v;

	if (!str_u64_trimmed(s, &v) || v > (uint64_t)LLONG_MAX)
		return -1;
	return (long long)v;
}

static void
copy_lower(char *dst, size_t len, const char *src)
{
	size_t i;

	if (src == NULL)
		src = "";
	for (i = 0; i + 1 < len && src[i] != '\0'; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = '\0';
}

static void
info_init(struct nic_info *ni)
{
	memset(ni, 0, sizeof(*ni));
	ni->link = ni->admin = NIC_UNKNOWN;
	ni->speed_mbps = ni->mtu = -1;
}

/* ---- ESXi ------------------------------------------------------------ */

static const char *
get_any(const struct esx_rec *r, const char *a, const char *b, const char *c)
{
	const char *v = esx_get(r, a);

	if (v == NULL && b != NULL)
		v = esx_get(r, b);
	if (v == NULL && c != NULL)
		v = esx_get(r, c);
	return v;
}

int
nic_from_esxcli(const struct esx_rec *row, const struct esx_rec *stats,
    struct nic_info *ni)
{
	const char *name, *v;
	size_t i;

	info_init(ni);
	name = esx_get(row, "Name");
	if (name == NULL || *name == '\0' || strlen(name) >= sizeof(ni->name))
		return -1;
	str_copy(ni->name, sizeof(ni->name), name);
	/* 7.0+ "Link Status"; 5.5 "Link"; keyvalue/xml "LinkStatus" */
	ni->link = parse_state(get_any(row, "Link Status", "LinkStatus", "Link"));
	ni->admin = parse_state(get_any(row, "Admin Status", "AdminStatus", NULL));
	ni->speed_mbps = parse_ll(esx_get(row, "Speed"));
	copy_lower(ni->duplex, sizeof(ni->duplex), esx_get(row, "Duplex"));
	if (strcmp(ni->duplex, "full") != 0 && strcmp(ni->duplex, "half") != 0)
		ni->duplex[0] = '\0';
	v = esx_get(row, "Driver");
	str_copy(ni->driver, sizeof(ni->driver), v ? v : "");
	v = get_any(row, "MAC Address", "MACAddress", NULL);
	str_copy(ni->mac, sizeof(ni->mac), v ? v : "");
	ni->mtu = parse_ll(esx_get(row, "MTU"));
	if (get_any(row, "Link Status", "LinkStatus", "Link") == NULL)
		esx_gap("network nic list", ni->name, "Link Status", "is missing");
	for (i = 0; stats != NULL && i < NIC_NCOUNTERS; i++) {
		v = esx_want(stats, "network nic stats get", ni->name,
		    nic_counters[i].label);
		ni->have[i] = str_u64_trimmed(v, &ni->ctr[i]);
		if (v != NULL && !ni->have[i])
			esx_gap("network nic stats get", ni->name,
			    nic_counters[i].label, "has no number");
	}
	return 0;
}

static bool
wanted(const struct collector_conf *conf, const char *name)
{
	if (conf == NULL)
		return true;
	return strlist_match(&conf->include, &conf->exclude, name);
}

/*
 * A NIC name goes back on a command line: accept what ESXi names look like
 * (vmnic0, vusb0, vmnic_dpu1) and nothing that could read as an option.
 */
static bool
valid_name(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || s[0] == '-' || strlen(s) >= NIC_NAME_MAX)
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("_.:-", s[i]) == NULL)
			return false;
	return true;
}

/* `network nic list`, then `network nic stats get -n NIC` per wanted NIC. */
static int
read_esxi(struct collector_ctx *ctx, struct nic_info **out)
{
	static const char *const list_args[] = { "network", "nic", "list", NULL };
	int timeout = ctx->conf != NULL ? ctx->conf->timeout : 30;
	struct esx_out list, stats;
	struct nic_info *v = NULL;
	size_t i, n = 0;

	if (esxcli_query(ctx->cfg, timeout, list_args, &list) == -1)
		return -1;
	if (list.n > 0) {
		v = calloc(list.n, sizeof(*v));
		if (v == NULL) {
			esx_out_free(&list);
			log_error("nic: out of memory");
			return -1;
		}
	}
	for (i = 0; i < list.n && n < NIC_MAX; i++) {
		const char *name = esx_get(&list.recs[i], "Name");
		const char *args[] = { "network", "nic", "stats", "get", "-n",
		    name, NULL };
		const struct esx_rec *st = NULL;

		if (!valid_name(name) || !wanted(ctx->conf, name))
			continue;
		/* Without counters the NIC still gets its link sample. */
		if (esxcli_query(ctx->cfg, timeout, args, &stats) == 0 &&
		    stats.n > 0)
			st = &stats.recs[0];
		if (nic_from_esxcli(&list.recs[i], st, &v[n]) == 0)
			n++;
		esx_out_free(&stats);
	}
	esx_out_free(&list);
	*out = v;
	return (int)n;
}

/* ---- Linux ----------------------------------------------------------- */

/* First line of a small sysfs file, trimmed.  Returns -1 if unreadable. */
static int
read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t r;
	size_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	n = strcspn(buf, "\n");
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return 0;
}

static bool
include_names(const struct collector_conf *conf, const char *name)
{
	return conf != NULL && conf->include.n > 0 && wanted(conf, name);
}

static void
read_one_sysfs(const char *dir, const char *name, struct nic_info *ni)
{
	char buf[256], path[PATH_MAX], link[PATH_MAX];
	unsigned long flags;
	const char *base;
	ssize_t r;
	size_t i;

	info_init(ni);
	str_copy(ni->name, sizeof(ni->name), name);
	/* carrier is the PHY; reading it fails while the interface is down */
	if (read_attr(dir, "carrier", buf, sizeof(buf)) == 0)
		ni->link = strcmp(buf, "1") == 0 ? NIC_UP : NIC_DOWN;
	else if (read_attr(dir, "operstate", buf, sizeof(buf)) == 0)
		ni->link = strcmp(buf, "up") == 0 ? NIC_UP : NIC_DOWN;
	else
		ni->link = NIC_DOWN;
	if (read_attr(dir, "flags", buf, sizeof(buf)) == 0) {
		flags = strtoul(buf, NULL, 16);
		ni->admin = (flags & 0x1) ? NIC_UP : NIC_DOWN;	/* IFF_UP */
	}
	if (read_attr(dir, "speed", buf, sizeof(buf)) == 0)
		ni->speed_mbps = parse_ll(buf);		/* -1 when down */
	if (read_attr(dir, "duplex", buf, sizeof(buf)) == 0 &&
	    (strcmp(buf, "full") == 0 || strcmp(buf, "half") == 0))
		str_copy(ni->duplex, sizeof(ni->duplex), buf);
	if (read_attr(dir, "address", buf, sizeof(buf)) == 0)
		str_copy(ni->mac, sizeof(ni->mac), buf);
	if (read_attr(dir, "mtu", buf, sizeof(buf)) == 0)
		ni->mtu = parse_ll(buf);
	if (snprintf(path, sizeof(path), "%s/device/driver", dir) <
	    (int)sizeof(path)) {
		r = readlink(path, link, sizeof(link) - 1);
		if (r > 0) {
			link[r] = '\0';
			base = strrchr(link, '/');
			str_copy(ni->driver, sizeof(ni->driver),
			    base ? base + 1 : link);
		}
	}
	if (snprintf(path, sizeof(path), "%s/statistics", dir) >= (int)sizeof(path))
		return;
	for (i = 0; i < NIC_NCOUNTERS; i++) {
		if (nic_counters[i].sysfs == NULL)
			continue;
		if (read_attr(path, nic_counters[i].sysfs, buf, sizeof(buf)) == 0)
			ni->have[i] = str_u64_trimmed(buf, &ni->ctr[i]);
	}
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct nic_info *)a)->name,
	    ((const struct nic_info *)b)->name);
}

int
nic_read_sysfs(const char *root, const struct collector_conf *conf,
    struct nic_info **out)
{
	char netdir[PATH_MAX], dir[PATH_MAX], dev[PATH_MAX];
	struct nic_info *v = NULL, *nv;
	struct dirent *d;
	struct stat sb;
	size_t n = 0, cap = 0;
	DIR *dp;

	*out = NULL;
	if (root == NULL || *root == '\0')
		root = "/sys";
	if (snprintf(netdir, sizeof(netdir), "%s/class/net", root) >= (int)sizeof(netdir))
		return -1;
	dp = opendir(netdir);
	if (dp == NULL) {
		log_limited(LOG_ERROR, "nic:sysfs", 3600, "nic: cannot read %s: %s",
		    netdir, log_errstr(errno));
		return -1;
	}
	for (;;) {
		d = readdir(dp);
		if (d == NULL || n >= NIC_MAX)
			break;
		if (d->d_name[0] == '.' || strlen(d->d_name) >= NIC_NAME_MAX)
			continue;
		if (snprintf(dir, sizeof(dir), "%s/%s", netdir, d->d_name) >= (int)sizeof(dir) ||
		    snprintf(dev, sizeof(dev), "%s/device", dir) >= (int)sizeof(dev))
			continue;
		/* No device link: loopback or a virtual interface. */
		if (stat(dev, &sb) == -1 && !include_names(conf, d->d_name))
			continue;
		if (!wanted(conf, d->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = reallocarray(v, cap, sizeof(*v));
			if (nv == NULL) {
				free(v);
				closedir(dp);
				log_error("nic: out of memory");
				return -1;
			}
			v = nv;
		}
		read_one_sysfs(dir, d->d_name, &v[n++]);
	}
	closedir(dp);
	if (n > 1)
		qsort(v, n, sizeof(*v), by_name);
	*out = v;
	return (int)n;
}

/* ---- the platform-neutral part --------------------------------------- */

static const char *
state_get(struct kvstore *st, const char *nic, const char *what)
{
	char key[NIC_NAME_MAX + 64];

	snprintf(key, sizeof(key), "%s.%s", nic, what);
	return kv_get(st, key);
}

static void
state_set(struct kvstore *st, const char *nic, const char *what, const char *val)
{
	char key[NIC_NAME_MAX + 64];

	snprintf(key, sizeof(key), "%s.%s", nic, what);
	if (kv_set(st, key, val) == -1)
		log_limited(LOG_WARN, "nic:state", 3600, "nic: cannot keep %s", key);
}

/* The fields every nic event carries, so each one stands alone in a search. */
static int
set_common(struct event *ev, const struct nic_info *ni)
{
	int r = 0;

	r |= event_set(ev, "esxwatch_nic", ni->name);
	r |= event_set(ev, "esxwatch_link", state_name(ni->link));
	if (ni->admin != NIC_UNKNOWN)
		r |= event_set(ev, "esxwatch_admin", state_name(ni->admin));
	if (ni->speed_mbps >= 0)
		r |= event_set_i64(ev, "esxwatch_speed_mbps", ni->speed_mbps);
	if (ni->duplex[0] != '\0')
		r |= event_set(ev, "esxwatch_duplex", ni->duplex);
	if (ni->driver[0] != '\0')
		r |= event_set(ev, "esxwatch_driver", ni->driver);
	if (ni->mac[0] != '\0')
		r |= event_set(ev, "esxwatch_mac", ni->mac);
	if (ni->mtu >= 0)
		r |= event_set_i64(ev, "esxwatch_mtu", ni->mtu);
	return r ? -1 : 0;
}

static void
push(struct nic_events *evs, struct event *ev)
{
	if (ev == NULL)
		return;
	if (evs->n < sizeof(evs->v) / sizeof(evs->v[0]))
		evs->v[evs->n++] = ev;
	else
		event_free(ev);
}

static int
field_index(const char *field)
{
	int i;

	for (i = 0; i < NIC_NCOUNTERS; i++)
		if (strcmp(nic_counters[i].field, field) == 0)
			return i;
	return -1;
}

static struct event *
make_sample(const struct nic_info *ni, const bool *has_delta,
    const uint64_t *delta, long long interval_s, const char *resets)
{
	struct buf t = BUF_INIT;
	struct event *ev = NULL;
	char name[96];
	size_t i;
	int k;

	buf_init(&t, 4096);
	buf_printf(&t, "%s link %s", ni->name, state_name(ni->link));
	if (ni->speed_mbps >= 0 && ni->link == NIC_UP)
		buf_printf(&t, " %lld Mbps", ni->speed_mbps);
	if (ni->duplex[0] != '\0' && ni->link == NIC_UP)
		buf_printf(&t, " %s", ni->duplex);
	if (ni->admin == NIC_DOWN)
		buf_puts(&t, ", admin down");
	for (i = 0; text_counters[i] != NULL; i++) {
		k = field_index(text_counters[i]);
		if (k < 0 || !ni->have[k])
			continue;
		buf_printf(&t, ", %s %" PRIu64, nic_counters[k].field, ni->ctr[k]);
		if (has_delta[k] && delta[k] > 0)
			buf_printf(&t, " (+%" PRIu64 ")", delta[k]);
	}
	ev = ev_new("sample", "info", "%s", t.data ? t.data : ni->name);
	buf_free(&t);
	if (ev == NULL || set_common(ev, ni) == -1)
		goto err;
	for (i = 0; i < NIC_NCOUNTERS; i++) {
		if (!ni->have[i])
			continue;
		snprintf(name, sizeof(name), "esxwatch_%s", nic_counters[i].field);
		if (event_setf(ev, name, "%" PRIu64, ni->ctr[i]) == -1)
			goto err;
		if (!has_delta[i])
			continue;
		snprintf(name, sizeof(name), "esxwatch_%s_delta", nic_counters[i].field);
		if (event_setf(ev, name, "%" PRIu64, delta[i]) == -1)
			goto err;
	}
	if (interval_s >= 0 && event_set_i64(ev, "esxwatch_interval_s", interval_s) == -1)
		goto err;
	if (resets[0] != '\0' && event_set(ev, "esxwatch_counters_reset", resets) == -1)
		goto err;
	return ev;
err:
	event_free(ev);
	return NULL;
}

static struct event *
make_alert(const struct nic_info *ni, int k, uint64_t delta, long long interval_s)
{
	const struct nic_counter_def *c = &nic_counters[k];
	struct event *ev;
	char name[96], when[64] = "";

	if (interval_s >= 0)
		snprintf(when, sizeof(when), " in the last %lld s", interval_s);
	ev = ev_new("alert", c->alert, "%s: %s increased by %" PRIu64
	    " (to %" PRIu64 ")%s", ni->name, c->label, delta, ni->ctr[k], when);
	if (ev == NULL || set_common(ev, ni) == -1)
		goto err;
	snprintf(name, sizeof(name), "esxwatch_%s", c->field);
	if (event_setf(ev, name, "%" PRIu64, ni->ctr[k]) == -1)
		goto err;
	snprintf(name, sizeof(name), "esxwatch_%s_delta", c->field);
	if (event_setf(ev, name, "%" PRIu64, delta) == -1 ||
	    event_set(ev, "esxwatch_counter", c->field) == -1)
		goto err;
	if (interval_s >= 0 && event_set_i64(ev, "esxwatch_interval_s", interval_s) == -1)
		goto err;
	return ev;
err:
	event_free(ev);
	return NULL;
}

int
nic_observe(struct kvstore *st, const struct nic_info *ni, int64_t now,
    struct nic_events *evs)
{
	bool has_delta[NIC_NCOUNTERS] = { false };
	uint64_t delta[NIC_NCOUNTERS] = { 0 }, prev, prev_ts;
	char num[32], resets[512] = "";
	const char *v;
	long long interval_s = -1;
	size_t i, rlen = 0;
	struct event *ev;

	/* Link transitions; unknown is neither a transition nor a baseline. */
	v = state_get(st, ni->name, "link");
	if (ni->link != NIC_UNKNOWN) {
		int was = parse_state(v);

		if (was != NIC_UNKNOWN && was != ni->link) {
			ev = ev_new("change", ni->link == NIC_DOWN ? "warning" : "info",
			    "%s: link %s (was %s)", ni->name, state_name(ni->link),
			    state_name(was));
			if (ev != NULL && (set_common(ev, ni) == -1 ||
			    event_set(ev, "esxwatch_previous_state", state_name(was)) == -1)) {
				event_free(ev);
				ev = NULL;
			}
			push(evs, ev);
		}
		state_set(st, ni->name, "link", state_name(ni->link));
	}

	v = state_get(st, ni->name, "ts");
	if (v != NULL && str_u64_trimmed(v, &prev_ts) && now >= 0 &&
	    prev_ts <= (uint64_t)now)
		interval_s = (long long)(((uint64_t)now - prev_ts + 500) / 1000);

	for (i = 0; i < NIC_NCOUNTERS; i++) {
		if (!ni->have[i])
			continue;
		v = state_get(st, ni->name, nic_counters[i].field);
		if (v != NULL && str_u64_trimmed(v, &prev)) {
			if (ni->ctr[i] >= prev) {
				has_delta[i] = true;
				delta[i] = ni->ctr[i] - prev;
			} else if (rlen < sizeof(resets) - 32) {
				/* driver reload or reboot: a new baseline */
				rlen += (size_t)snprintf(resets + rlen,
				    sizeof(resets) - rlen, "%s%s",
				    rlen ? "," : "", nic_counters[i].field);
			}
		}
		snprintf(num, sizeof(num), "%" PRIu64, ni->ctr[i]);
		state_set(st, ni->name, nic_counters[i].field, num);
		if (has_delta[i] && delta[i] > 0 && nic_counters[i].alert != NULL)
			push(evs, make_alert(ni, (int)i, delta[i], interval_s));
	}
	snprintf(num, sizeof(num), "%" PRId64, now);
	state_set(st, ni->name, "ts", num);

	ev = make_sample(ni, has_delta, delta, interval_s, resets);
	if (ev == NULL)
		return -1;
	push(evs, ev);
	return 0;
}

void
nic_events_free(struct nic_events *evs)
{
	size_t i;

	for (i = 0; i < evs->n; i++)
		event_free(evs->v[i]);
	evs->n = 0;
}

/* ---- the collector --------------------------------------------------- */

static int
nic_init(struct collector_ctx *ctx)
{
	(void)ctx;
	return 0;
}

static int
nic_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct nic_info *v = NULL;
	struct nic_events evs;
	const char *root;
	int64_t now = now_ms();
	int n, i;
	size_t k;

	if (ctx->platform == PLATFORM_ESXI)
		n = read_esxi(ctx, &v);
	else {
		/* Test hook: a fake /sys tree (documented in docs/events.md). */
		root = getenv("ESXWATCH_SYSFS_ROOT");
		n = nic_read_sysfs(root, ctx->conf, &v);
		if (n == 0)
			log_limited(LOG_INFO, "nic:none", 3600, "nic: no physical "
			    "network interface under %s/class/net (loopback and "
			    "virtual interfaces are watched only when named in "
			    "include)", root && *root ? root : "/sys");
	}
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		evs.n = 0;
		if (nic_observe(ctx->state, &v[i], now, &evs) == -1)
			log_limited(LOG_ERROR, "nic:event", 300,
			    "nic: cannot build the events of %s", v[i].name);
		for (k = 0; k < evs.n; k++)
			emit(em, evs.v[k]);	/* takes ownership */
	}
	free(v);
	return 0;
}

static void
nic_fini(struct collector_ctx *ctx)
{
	(void)ctx;
}

const struct collector collector_nic = {
	.name = "nic",
	.default_interval = 60,
	.init = nic_init,
	.collect = nic_collect,
	.fini = nic_fini,
};
