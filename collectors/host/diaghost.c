/*
 * diaghost: host lookups for the diagnosis rules (see diaghost.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/config/config_host.h"
#include "../../agent/lib/exec.h"
#include "../../agent/lib/log.h"
#include "../../agent/lib/platform.h"
#include "diaghost.h"
#include "esxcli.h"

static bool
ipv4(const char *s, uint32_t *out)
{
	struct in_addr a;

	if (s == NULL || inet_pton(AF_INET, s, &a) != 1)
		return false;
	*out = ntohl(a.s_addr);
	return true;
}

/* The first dotted IPv4 address of a comma-separated server list. */
static bool
server_addr(const char *server, uint32_t *out)
{
	char one[64];
	const char *p = server;

	while (p != NULL && *p != '\0') {
		size_t n = strcspn(p, ", ");

		if (n > 0 && n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			if (ipv4(one, out))
				return true;
		}
		p += n;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return false;
}

/* The vmknic whose subnet holds addr (the longest mask wins). */
static bool
find_vmknic(const struct config *cfg, int t, uint32_t addr, char *vmk, size_t len)
{
	static const char *const args[] = { "network", "ip", "interface", "ipv4", "get", NULL };
	struct esx_out o;
	uint32_t best = 0;
	bool found = false;

	if (esxcli_query(cfg, t, args, &o) == -1)
		return false;
	for (size_t i = 0; i < o.n; i++) {
		uint32_t ip, mask;
		const char *name = esx_get(&o.recs[i], "Name");

		if (name == NULL || !ipv4(esx_get(&o.recs[i], "IPv4 Address"), &ip) ||
		    !ipv4(esx_get(&o.recs[i], "IPv4 Netmask"), &mask) || mask == 0)
			continue;
		if ((ip & mask) == (addr & mask) && (!found || mask > best)) {
			snprintf(vmk, len, "%s", name);
			best = mask;
			found = true;
		}
	}
	esx_out_free(&o);
	return found;
}

/* Port group and dvSwitch ("" when on a standard switch) of a vmknic. */
static bool
vmknic_port(const struct config *cfg, int t, const char *vmk, char *pg, size_t pglen,
    char *vds, size_t vdslen)
{
	static const char *const args[] = { "network", "ip", "interface", "list", NULL };
	struct esx_out o;
	bool found = false;

	if (esxcli_query(cfg, t, args, &o) == -1)
		return false;
	for (size_t i = 0; i < o.n && !found; i++) {
		const struct esx_rec *r = &o.recs[i];
		const char *name = esx_get(r, "Name");
		const char *v = esx_get(r, "VDS Name");

		if (name == NULL || strcmp(name, vmk) != 0)
			continue;
		snprintf(pg, pglen, "%s", esx_get(r, "Portgroup") ? esx_get(r, "Portgroup") : "");
		snprintf(vds, vdslen, "%s", v && strcmp(v, "N/A") != 0 ? v : "");
		found = pg[0] != '\0' || vds[0] != '\0';
	}
	esx_out_free(&o);
	return found;
}

/* Append a ", "-separated adapter list to out as "a,b". */
static void
add_list(char *out, size_t len, const char *list)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t n = strcspn(p, ", "), used = strlen(out);

		if (n > 0 && used + n + 2 < len) {
			snprintf(out + used, len - used, "%s%.*s", used ? "," : "", (int)n, p);
		}
		p += n;
		while (*p == ',' || *p == ' ')
			p++;
	}
}

/* Whether port group pg is one of the comma-separated list pgs. */
static bool
pg_listed(const char *pgs, const char *pg)
{
	size_t l = strlen(pg);
	const char *p = pgs;

	while (p != NULL) {
		p = strstr(p, pg);
		if (p == NULL)
			break;
		if ((p == pgs || p[-1] == ' ' || p[-1] == ',') &&
		    (p[l] == '\0' || p[l] == ','))
			return true;
		p += l;
	}
	return false;
}

static bool
pg_uplinks(const struct config *cfg, int t, const char *pg, char *out, size_t len,
    char *vsw, size_t vswlen)
{
	const char *fo[] = { "network", "vswitch", "standard", "portgroup", "policy",
	    "failover", "get", "-p", pg, NULL };
	static const char *const list[] = { "network", "vswitch", "standard", "list", NULL };
	struct esx_out o;

	out[0] = vsw[0] = '\0';
	if (esxcli_query(cfg, t, fo, &o) == 0) {
		for (size_t i = 0; i < o.n; i++) {
			add_list(out, len, esx_get(&o.recs[i], "Active Adapters"));
			add_list(out, len, esx_get(&o.recs[i], "Standby Adapters"));
		}
		esx_out_free(&o);
	}
	if (esxcli_query(cfg, t, list, &o) == -1)
		return out[0] != '\0';
	for (size_t i = 0; i < o.n; i++) {
		if (!pg_listed(esx_get(&o.recs[i], "Portgroups"), pg))
			continue;
		snprintf(vsw, vswlen, "%s", esx_get(&o.recs[i], "Name") ?
		    esx_get(&o.recs[i], "Name") : "");
		if (out[0] == '\0')
			add_list(out, len, esx_get(&o.recs[i], "Uplinks"));
		break;
	}
	esx_out_free(&o);
	return out[0] != '\0';
}

static bool
dvs_uplinks(const struct config *cfg, int t, const char *vds, char *out, size_t len)
{
	static const char *const args[] = { "network", "vswitch", "dvs", "vmware", "list", NULL };
	struct esx_out o;

	out[0] = '\0';
	if (esxcli_query(cfg, t, args, &o) == -1)
		return false;
	for (size_t i = 0; i < o.n; i++) {
		const char *name = esx_get(&o.recs[i], "Name");

		if (name != NULL && strcmp(name, vds) == 0)
			add_list(out, len, esx_get(&o.recs[i], "Uplinks"));
	}
	esx_out_free(&o);
	return out[0] != '\0';
}

bool
diaghost_uplinks(const struct config *cfg, int t, const char *server,
    char *uplinks, size_t ulen, char *path, size_t plen)
{
	char vmk[64], pg[128], vds[128], vsw[128];
	uint32_t addr;

	uplinks[0] = '\0';
	if (!server_addr(server, &addr)) {
		snprintf(path, plen, "server %s is not an IPv4 address", server);
		return false;
	}
	if (!find_vmknic(cfg, t, addr, vmk, sizeof(vmk))) {
		snprintf(path, plen, "no vmkernel interface on the subnet of %s", server);
		return false;
	}
	if (!vmknic_port(cfg, t, vmk, pg, sizeof(pg), vds, sizeof(vds))) {
		snprintf(path, plen, "port group of %s unknown", vmk);
		return false;
	}
	if (vds[0] != '\0') {
		if (!dvs_uplinks(cfg, t, vds, uplinks, ulen)) {
			snprintf(path, plen, "uplinks of dvSwitch %s unknown", vds);
			return false;
		}
		snprintf(path, plen, "%s on dvSwitch %s", vmk, vds);
		return true;
	}
	if (!pg_uplinks(cfg, t, pg, uplinks, ulen, vsw, sizeof(vsw))) {
		snprintf(path, plen, "uplinks of port group %s unknown", pg);
		return false;
	}
	snprintf(path, plen, "%s, port group %s%s%s", vmk, pg, vsw[0] ? " on " : "", vsw);
	return true;
}

/* ---- partedUtil ------------------------------------------------------------- */

static const char *
next_line(const char *p, char *line, size_t len)
{
	size_t n = strcspn(p, "\n");

	snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return p[n] == '\n' ? p + n + 1 : p + n;
}

static void
human_size(unsigned long long bytes, char *out, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, "%.1f %s", v, unit[u]);
}

/* One partition line: gpt "N start end GUID type attr", msdos "N start end type attr". */
static bool
ptable_line(const char *line, bool gpt, char *out, size_t len)
{
	unsigned long long num, start, end;
	char a[64] = "", b[64] = "", c[64] = "", size[32];
	int n = sscanf(line, "%llu %llu %llu %63s %63s %63s", &num, &start, &end, a, b, c);

	if (n < 4 || end < start)
		return false;
	human_size((end - start + 1) * 512ULL, size, sizeof(size));
	if (gpt && n >= 5)
		snprintf(out, len, "#%llu %s %s", num, b, size);
	else
		snprintf(out, len, "#%llu type %s %s", num, a, size);
	return true;
}

bool
diaghost_parse_ptable(const char *text, char *summary, size_t slen, char *table,
    size_t tlen)
{
	char label[32], line[256], part[160];
	const char *p = text;
	size_t nparts = 0, used;
	bool gpt;

	p = next_line(p, label, sizeof(label));
	if (strcmp(label, "gpt") != 0 && strcmp(label, "msdos") != 0)
		return false;
	gpt = strcmp(label, "gpt") == 0;
	snprintf(table, tlen, "%s", label);
	p = next_line(p, line, sizeof(line));	/* geometry */
	used = strlen(table);
	snprintf(table + used, tlen - used, " / %s", line);
	summary[0] = '\0';
	while (*p != '\0') {
		p = next_line(p, line, sizeof(line));
		if (line[0] == '\0')
			continue;
		used = strlen(table);
		snprintf(table + used, tlen - used, " / %s", line);
		if (!ptable_line(line, gpt, part, sizeof(part)))
			continue;
		used = strlen(summary);
		snprintf(summary + used, slen - used, "%s%s", nparts ? ", " : "", part);
		nparts++;
	}
	if (nparts == 0)
		snprintf(summary, slen, "%s partition table without partitions", label);
	else {
		char head[64];
		size_t hl;

		hl = (size_t)snprintf(head, sizeof(head), "%s table, %zu partition%s: ",
		    label, nparts, nparts == 1 ? "" : "s");
		used = strlen(summary);
		if (used + hl < slen) {
			memmove(summary + hl, summary, used + 1);
			memcpy(summary, head, hl);
		}
	}
	return true;
}

static bool
dev_name_ok(const char *dev)
{
	if (dev[0] == '\0' || dev[0] == '.')
		return false;
	for (const char *p = dev; *p; p++)
		if (!isalnum((unsigned char)*p) && strchr("._:-", *p) == NULL)
			return false;
	return true;
}

bool
diaghost_ptable(const struct config *cfg, int t, const char *dev, char *summary,
    size_t slen, char *table, size_t tlen)
{
	char tool[PATH_MAX], path[PATH_MAX], how[128];
	const char *argv[4];
	struct exec_result res;
	bool ok = false;

	summary[0] = '\0';
	if (!dev_name_ok(dev) || strlen(dev) > 200) {
		snprintf(table, tlen, "partition table unknown: unexpected device name");
		return false;
	}
	if (config_find_tool(cfg, "partedUtil", tool, sizeof(tool)) == -1) {
		snprintf(table, tlen, "partition table unknown: partedUtil not found");
		return false;
	}
	snprintf(path, sizeof(path), "/vmfs/devices/disks/%s", dev);
	argv[0] = tool;
	argv[1] = "getptbl";
	argv[2] = path;
	argv[3] = NULL;
	memset(&res, 0, sizeof(res));
	if (exec_run(argv, (t > 0 ? t : 30) * 1000, 256 * 1024, &res) == -1 ||
	    res.timed_out || res.status != 0) {
		snprintf(table, tlen, "partition table unknown: partedUtil getptbl %s: %s",
		    path, exec_describe(&res, how, sizeof(how)));
		log_limited(LOG_WARN, "diag:partedutil", 3600, "diagnosis: %s", table);
	} else if (!diaghost_parse_ptable(res.out, summary, slen, table, tlen)) {
		snprintf(table, tlen, "partition table unknown: partedUtil printed no table");
		log_limited(LOG_WARN, "diag:partedutil", 3600, "diagnosis: %s for %s", table, dev);
	} else
		ok = true;
	exec_result_free(&res);
	return ok;
}
