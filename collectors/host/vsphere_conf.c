/*
 * vsphere_conf: the `vsphere:` section (CONTRACT §5, docs/vsphere.md), a
 * registry row (agent/config/config_section.h): vsphere.NAME.{url,
 * username, password_file, trust, ca, hosts, interval, events, timeout}.
 * A url that is not https://, a missing username or password_file is an
 * error at its line; the password file's mode is checked where it is read
 * (vsphere_soap.c), as for `server`.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/config/config_int.h"
#include "../../agent/lib/mem.h"
#include "vsphere_conf.h"

static int
check_vs_url(struct lctx *c, const char *key, const char *v, int line, int col)
{
	if (*v == '\0' || strncasecmp(v, "https://", 8) == 0)
		return 0;
	cfg_error(c, line, col, "'%s' must be an https:// URL (the vSphere API "
	    "is not spoken in clear text)", key);
	return -1;
}

static const char *const vs_trust_choices[] = { "verify", "first_use", "any",
	NULL };

#define V(f)	offsetof(struct vsphere_conf, f)
static const struct cfg_key vsphere_keys[] = {
	{ .name = "url", .type = KT_STR, .off = V(url), .check = check_vs_url,
	  .doc = "https://VCENTER/sdk, or a host's own https://ESXI/sdk" },
	{ .name = "username", .type = KT_STR, .off = V(username),
	  .doc = "The account (a read-only role suffices, docs/vsphere.md)" },
	{ .name = "password_file", .type = KT_STR, .off = V(password_file),
	  .doc = "A file of mode 0600 holding the password" },
	{ .name = "trust", .type = KT_ENUM, .off = V(trust),
	  .choices = vs_trust_choices, .def = "verify",
	  .doc = "TLS trust as server.trust: verify | first_use | any" },
	{ .name = "ca", .type = KT_STR, .off = V(ca),
	  .doc = "CA bundle (PEM) for verify; empty: the system's" },
	{ .name = "hosts", .type = KT_LIST, .off = V(hosts),
	  .doc = "HostSystem names or globs; empty: every host the account sees" },
	{ .name = "interval", .type = KT_INT, .off = V(interval), .min = 5,
	  .max = 86400, .def = "60", .doc = "Seconds between polls" },
	{ .name = "events", .type = KT_BOOL, .off = V(events), .def = "yes",
	  .doc = "Follow the event stream (esxwatch_collector: vcevents)" },
	{ .name = "timeout", .type = KT_INT, .off = V(timeout), .min = 1,
	  .max = 600, .def = "60", .doc = "Seconds per request (extension)" },
};
#undef V

static void
vsphere_conf_clear(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nvsphere; i++) {
		keys_free(vsphere_keys, NELEM(vsphere_keys), &cfg->vsphere[i]);
		free(cfg->vsphere[i].name);
	}
	free(cfg->vsphere);
	cfg->vsphere = NULL;
	cfg->nvsphere = 0;
}

static struct vsphere_conf *
entry_add(struct config *cfg, const char *name, int line, int col)
{
	struct vsphere_conf *v;

	for (size_t i = 0; i < cfg->nvsphere; i++)
		if (strcmp(cfg->vsphere[i].name, name) == 0)
			return &cfg->vsphere[i];
	cfg->vsphere = xrealloc(cfg->vsphere,
	    (cfg->nvsphere + 1) * sizeof(*cfg->vsphere));
	v = &cfg->vsphere[cfg->nvsphere++];
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->src_line = line;
	v->src_col = col;
	keys_init(vsphere_keys, NELEM(vsphere_keys), v);
	return v;
}

static void
yaml_vsphere(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96];

	if (v->type == YN_SCALAR && v->null)
		return;		/* `vsphere:` alone: off */
	if (!want_map(c, v, "vsphere"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct vsphere_conf *e;

		if (key->type != YN_SCALAR)
			continue;
		if (!name_valid(key->s)) {
			rep(c, true, key->line, key->col, "vsphere: '%s' is not "
			    "a valid name (1 to 64 of A-Z a-z 0-9 - _ .)",
			    show(key->s, b, sizeof(b)));
			continue;
		}
		e = entry_add(cfg, key->s, key->line, key->col);
		snprintf(sect, sizeof(sect), "vsphere.%s", key->s);
		if (want_map(c, val, sect))
			apply_map(c, vsphere_keys, NELEM(vsphere_keys), e, val,
			    sect, NULL);
	}
}

static void
check_vsphere(struct lctx *c, struct config *cfg)
{
	for (size_t i = 0; i < cfg->nvsphere; i++) {
		const struct vsphere_conf *e = &cfg->vsphere[i];
		const char *miss = e->url[0] == '\0' ? "url" :
		    e->username[0] == '\0' ? "username" :
		    e->password_file[0] == '\0' ? "password_file" : NULL;

		if (miss != NULL)
			rep(c, true, e->src_line, e->src_col, "vsphere.%s: '%s' "
			    "is required", e->name, miss);
	}
}

static void
print_vsphere(FILE *f, const struct config *cfg)
{
	fputs("vsphere:", f);
	if (cfg->nvsphere == 0)
		fputs(" {}", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nvsphere; i++) {
		fputs("  ", f);
		print_str(f, cfg->vsphere[i].name);
		fputs(":\n", f);
		keys_print(f, vsphere_keys, NELEM(vsphere_keys), &cfg->vsphere[i],
		    "    ", 0);
	}
}

const struct cfg_section vsphere_section = {
	.name = "vsphere",
	.after = "collectors",
	.doc_title = "vsphere.NAME",
	.keys = vsphere_keys,
	.nkeys = NELEM(vsphere_keys),
	.clear = vsphere_conf_clear,
	.apply = yaml_vsphere,
	.check = check_vsphere,
	.print = print_vsphere,
};
