/*
 * nicinfo: what a NIC looks like to the collectors (host/nicinfo.h), read
 * from esxcli's records (through any host's esxcli answers) or from
 * Linux's /sys/class/net.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../agent/config/config.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/str.h"
#include "esxcli.h"
#include "host.h"
#include "nicinfo.h"

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

int
nic_parse_state(const char *s)
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
	ni->link = nic_parse_state(get_any(row, "Link Status", "LinkStatus", "Link"));
	ni->admin = nic_parse_state(get_any(row, "Admin Status", "AdminStatus", NULL));
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

int
nic_read_esxcli(struct host *h, const struct collector_conf *conf, int timeout,
    struct nic_info **out)
{
	static const char *const list_args[] = { "network", "nic", "list", NULL };
	struct esx_out list, stats;
	struct nic_info *v = NULL;
	size_t i, n = 0;

	if (host_esxcli(h, timeout, list_args, &list) == -1)
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

		if (!valid_name(name) || !wanted(conf, name))
			continue;
		/* Without counters the NIC still gets its link sample. */
		if (host_esxcli(h, timeout, args, &stats) == 0 &&
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
