/*
 * vsphere_smart: drive SMART through vCenter's vSAN health service
 * (vsphere.h).
 *
 * vSAN Management API (https://developer.broadcom.com/xapis/
 * vsan-management-api/latest/): managed object VsanVcClusterHealthSystem
 * ("vsan-cluster-health-system", endpoint /vsanHealth, namespace
 * urn:vsan), method VsanQueryVcClusterSmartStatsSummary(cluster) ->
 * VsanSmartStatsHostSummary[] {hostname, smartStats: VsanSmartDiskStats[]
 * {disk, stats: VsanSmartParameter[] {parameter, value, threshold, worst},
 * error: MethodFault}}.  VsanSmartParameter.value is "the raw value
 * reported by the disk"; for smarthealthstatus 0 = OK, 1 = Warning,
 * 2 = Impending Failure, 3 = Unknown, "other values ... are invalid".
 * VsanSmartParameterType (enum): smarthealthstatus,
 * smartmediawearoutindicator, smartwriteerrorcount, smartreaderrorcount,
 * smartpoweronhours, smartpowercyclecount, smartreallocatedsectorct,
 * smartrawreaderrorrate, smartdrivetemperature,
 * smartdriveratedmaxtemperature, smartwritesectorstotct,
 * smartreadsectorstotct, smartinitialbadblockcount.
 *
 * Each parameter goes to the smart collector's own field (smartparse.h),
 * so events carry the names the local source gives; a parameter the disk
 * did not report (value unset) stays absent.  smartrawreaderrorrate,
 * smartinitialbadblockcount and the sector totals have no field: not
 * reported.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/lib/mem.h"
#include "vsphere.h"

#define VS_SMART_MAX_DISKS	4096	/* a cluster: 64 hosts of at most ~40 */
#define VS_SMART_MAX_HOSTS	1024

/* The reading of one answer. */
struct sr {
	struct vs_smart	*out;
	char		 host[VS_NAME_MAX];
	struct vs_sdisk	*cur;		/* the smartStats being read */
	char		 param[64];
	long long	 value;
	bool		 have_value;
	bool		 in_error;
};

static void
cpy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src);
}

/* An xsd:int: true with *v, false when it is not one. */
static bool
xsd_int(const char *t, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(t, &end, 10);
	return end != t && *end == '\0' && errno == 0 && *v >= -2147483648LL &&
	    *v <= 2147483647LL;
}

static void
health(struct smart_info *si, long long v)
{
	static const char *const text[] = { "OK", "WARNING",
	    "IMPENDING FAILURE" };

	if (v >= 0 && v <= 2) {
		cpy(si->health_text, sizeof(si->health_text), text[v]);
		si->health = smart_health_of(text[v]);
	} else if (v == 3) {
		cpy(si->health_text, sizeof(si->health_text), "Unknown");
		si->health = SMART_UNKNOWN;
	} else {
		snprintf(si->health_text, sizeof(si->health_text),
		    "invalid smarthealthstatus %lld", v);
		si->health = SMART_UNKNOWN;
	}
}

/* One VsanSmartParameter onto the collector's fields. */
static void
apply(struct smart_info *si, const char *p, long long v)
{
	static const struct {
		const char	*param;
		size_t		 off;
	} map[] = {
		{ "smartmediawearoutindicator",
		    offsetof(struct smart_info, media_wearout) },
		{ "smartreallocatedsectorct",
		    offsetof(struct smart_info, reallocated_sectors) },
		{ "smartdrivetemperature",
		    offsetof(struct smart_info, temperature_c) },
		{ "smartdriveratedmaxtemperature",
		    offsetof(struct smart_info, max_temperature_c) },
		{ "smartpoweronhours",
		    offsetof(struct smart_info, power_on_hours) },
		{ "smartpowercyclecount",
		    offsetof(struct smart_info, power_cycles) },
		{ "smartreaderrorcount",
		    offsetof(struct smart_info, read_errors) },
		{ "smartwriteerrorcount",
		    offsetof(struct smart_info, write_errors) },
	};
	size_t i;

	if (strcmp(p, "smarthealthstatus") == 0) {
		health(si, v);
		return;
	}
	if (v < 0)		/* no count, hour or degree below zero here */
		return;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(p, map[i].param) == 0)
			*(long long *)(void *)((char *)si + map[i].off) = v;
}

/* Envelope/Body/Response/returnval/smartStats/stats/parameter: the
 * depths below are those of a whole answer. */
static int
sr_start(void *arg, struct vx *x, int depth, const char *name)
{
	struct sr *r = arg;
	struct vs_smart *o = r->out;

	if (depth == 4 && strcmp(name, "returnval") == 0)
		r->host[0] = '\0';
	else if (depth == 5 && strcmp(name, "smartStats") == 0 &&
	    strcmp(vx_name_at(x, 4), "returnval") == 0) {
		if (o->n >= VS_SMART_MAX_DISKS) {
			o->overflow = true;
			r->cur = NULL;
			return 0;
		}
		o->d = xrealloc(o->d, (o->n + 1) * sizeof(*o->d));
		r->cur = &o->d[o->n++];
		memset(r->cur, 0, sizeof(*r->cur));
		smart_info_init(&r->cur->si);
		cpy(r->cur->host, sizeof(r->cur->host), r->host);
	} else if (depth == 6 && r->cur != NULL && strcmp(name, "stats") == 0) {
		r->param[0] = '\0';
		r->have_value = false;
	} else if (depth == 6 && r->cur != NULL && strcmp(name, "error") == 0) {
		r->in_error = true;
		snprintf(r->cur->error, sizeof(r->cur->error), "%s",
		    *vx_type_at(x, 6) ? vx_type_at(x, 6) : "error");
	}
	return 0;
}

static void
host_end(struct sr *r, const char *t)
{
	struct vs_smart *o = r->out;

	cpy(r->host, sizeof(r->host), t);
	if (o->nhosts >= VS_SMART_MAX_HOSTS) {
		o->overflow = true;
		return;
	}
	o->hosts = xrealloc(o->hosts, (o->nhosts + 1) * sizeof(*o->hosts));
	cpy(o->hosts[o->nhosts++], sizeof(o->hosts[0]), t);
}

/* The fault's reason (SystemError.reason) or its message after its type:
 * "SystemError: CANNOT open device". */
static void
error_text(struct vs_sdisk *d, const char *t)
{
	size_t n = strlen(d->error);

	if (*t == '\0' || strchr(d->error, ':') != NULL)
		return;
	snprintf(d->error + n, sizeof(d->error) - n, ": %s", t);
}

static int
sr_end(void *arg, struct vx *x, int depth, const char *name, const char *t,
    size_t len)
{
	struct sr *r = arg;

	(void)len;
	if (depth == 5 && strcmp(name, "hostname") == 0 &&
	    strcmp(vx_name_at(x, 4), "returnval") == 0) {
		host_end(r, t);
		/* the smartStats that came before it (not the WSDL's order) */
		for (size_t i = r->out->n; i > 0 &&
		    r->out->d[i - 1].host[0] == '\0'; i--)
			cpy(r->out->d[i - 1].host, sizeof(r->out->d[0].host), t);
	} else if (depth == 5 && strcmp(name, "smartStats") == 0)
		r->cur = NULL;
	else if (r->cur == NULL || depth < 6)
		return 0;
	else if (depth == 6 && strcmp(name, "disk") == 0)
		cpy(r->cur->disk, sizeof(r->cur->disk), t);
	else if (depth == 7 && strcmp(name, "parameter") == 0)
		cpy(r->param, sizeof(r->param), t);
	else if (depth == 7 && strcmp(name, "value") == 0)
		r->have_value = xsd_int(t, &r->value);
	else if (depth == 6 && strcmp(name, "stats") == 0 && r->have_value &&
	    r->cur->error[0] == '\0')
		apply(&r->cur->si, r->param, r->value);
	else if (depth == 6 && strcmp(name, "error") == 0)
		r->in_error = false;
	else if (r->in_error && (strcmp(name, "reason") == 0 ||
	    strcmp(name, "message") == 0 || strcmp(name, "msg") == 0))
		error_text(r->cur, t);
	return 0;
}

static void
finish(struct vs_smart *o)
{
	/* a disk with an error has no values, whatever came before it */
	for (size_t i = 0; i < o->n; i++)
		if (o->d[i].error[0] != '\0')
			smart_info_init(&o->d[i].si);
}

int
vs_smart_parse(struct vs_smart *o, const char *xml, size_t len, char *err,
    size_t errlen)
{
	struct sr r = { .out = o };
	struct vx_handler h = { sr_start, sr_end, &r };
	int rc;

	memset(o, 0, sizeof(*o));
	rc = vx_parse(&h, xml, len, err, errlen);
	finish(o);
	return rc;
}

int
vs_smart_query(struct vs_conn *v, const char *cluster, struct vs_smart *o,
    char *err, size_t errlen)
{
	struct sr r = { .out = o };
	struct vx_handler h = { sr_start, sr_end, &r };
	char body[1024], c[256];
	int rc;

	memset(o, 0, sizeof(*o));
	if (vx_escape(cluster, c, sizeof(c)) == -1) {
		snprintf(err, errlen, "cluster id too long");
		return -1;
	}
	snprintf(body, sizeof(body), "<VsanQueryVcClusterSmartStatsSummary "
	    "xmlns=\"urn:vsan\"><_this type=\"VsanVcClusterHealthSystem\">"
	    "vsan-cluster-health-system</_this><cluster type=\""
	    "ClusterComputeResource\">%s</cluster>"
	    "</VsanQueryVcClusterSmartStatsSummary>", c);
	rc = vs_call_at(v, "/vsanHealth", "urn:vsan", body, &h, err, errlen);
	finish(o);
	if (rc == -1)
		vs_smart_free(o);
	return rc;
}

void
vs_smart_take(struct vs_hostsnap *x, const struct vs_smart *o)
{
	size_t i, n = 0;

	for (i = 0; i < o->nhosts; i++)
		if (strcasecmp(o->hosts[i], x->name) == 0)
			x->smart_fresh = true;
	if (!x->smart_fresh)
		return;
	for (i = 0; i < o->n; i++)
		n += strcasecmp(o->d[i].host, x->name) == 0;
	free(x->sdisks);
	x->sdisks = n > 0 ? xmalloc(n * sizeof(*x->sdisks)) : NULL;
	x->nsdisks = 0;
	for (i = 0; i < o->n; i++)
		if (strcasecmp(o->d[i].host, x->name) == 0)
			x->sdisks[x->nsdisks++] = o->d[i];
}

void
vs_smart_free(struct vs_smart *o)
{
	free(o->d);
	free(o->hosts);
	memset(o, 0, sizeof(*o));
}
