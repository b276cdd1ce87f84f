/*
 * config: agent.yaml (libyaml) or liagent.ini into a struct config
 * (docs/configuration.md).  This file is the lifecycle — defaults, load,
 * resolve, free — and the sections that are truly shared: the server
 * connection basics, storage, logging, batch, host and tags.  Every other
 * key is declared where it is used and reaches the loader through the
 * registry (config_section.h): sinks' and collectors' keys, and sections
 * of their own (filelog, rules, parsers, monitor); the pieces of the
 * loader are listed in config_int.h.
 *
 * Every problem is reported as FILE:LINE:COL: message and the walk goes on,
 * so a user sees all the mistakes of a file at once; the load fails at the
 * end if there was any error.  liagent.ini is more forgiving: keys and
 * sections we do not know are warnings, as liagent itself ignores them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* ------------------------------------------------------------------ */
/* The core's rows                                                     */
/* ------------------------------------------------------------------ */

static const char *const trust_choices[] = {
	"verify", "first_use", "any", NULL
};
static const char *const provider_choices[] = {
	"Local", "ActiveDirectory", "vIDM", NULL
};
static const char *const platform_choices[] = {
	"auto", "esxi", "linux", NULL
};

/*
 * server: and servers.NAME: what every sink shares.  A key of one or two
 * sinks (format, headers, compress...) is the sinks' row (struct sink
 * .keys), on their options blocks.
 */
#define D(f)	offsetof(struct dest_conf, f)
const struct cfg_key dest_keys[] = {
	{ .name = "hostname", .type = KT_STR, .off = D(hostname),
	  .check = check_dest_hostname,
	  .doc = "Log Insight server or VIP; empty in server: no destination (operations.md §4)" },
	{ .name = "proto", .type = KT_PROTO, .off = D(proto), .def = "cfapi",
	  .doc = "The sink: one of the sinks below" },
	{ .name = "port", .type = KT_INT, .off = D(port), .max = 65535,
	  .doc = "0 = the protocol's default (cfapi 9000/9543, syslog "
	  "514/6514, http 80/443)" },
	{ .name = "ssl", .type = KT_BOOL, .off = D(ssl), .def = "yes",
	  .doc = "TLS, verified against the CA bundle" },
	{ .name = "ssl_ca_path", .type = KT_STR, .off = D(ssl_ca_path),
	  .doc = "CA bundle (PEM); empty: the system's" },
	{ .name = "ssl_accept_any", .type = KT_BOOL, .off = D(ssl_accept_any),
	  .def = "no", .doc = "Accept any server certificate (insecure; logged at start)" },
	{ .name = "ssl_cn", .type = KT_STR, .off = D(ssl_cn),
	  .check = check_hostname,
	  .doc = "Name the certificate must carry, when not hostname" },
	{ .name = "reconnect", .type = KT_INT, .off = D(reconnect), .max = 525600,
	  .def = "30", .doc = "Minutes; drop and re-open the connection; 0 = never" },
	{ .name = "agent_id", .type = KT_STR, .off = D(agent_id),
	  .check = check_agent_id,
	  .doc = "cfapi agent id (in the URL); empty: a stable UUID in storage" },
	{ .name = "timeout", .type = KT_INT, .off = D(timeout), .min = 1,
	  .max = 3600, .def = "30", .doc = "Seconds per connect/request" },
	{ .name = "reject_limit", .type = KT_INT, .off = D(reject_limit),
	  .max = 1000000, .def = "10",
	  .doc = "Events rejected one by one in a row (HTTP 400/413/422...) "
	  "after which the destination counts as failing: its events are "
	  "kept and retried, not dropped; 0 = drop every rejected event" },
	{ .name = "dead_letter", .type = KT_STR, .off = D(dead_letter),
	  .doc = "A file: what the destination refuses for good is appended "
	  "there as JSON lines (0600), still counted as dropped (poison); "
	  "empty: not kept (docs/outputs.md \"Dead letter\")" },
	{ .name = "dead_letter_max_kb", .type = KT_LONG,
	  .off = D(dead_letter_max_kb), .min = 1, .max = 1073741824,
	  .def = "10240", .doc = "KB the dead_letter file may grow to; past "
	  "it refused events are counted (dead_letter_dropped), not written" },
	/* TLS trust and authenticated ingestion (output/trust.c,
	 * output/lisession.c; docs/outputs.md "Connecting to Log Insight") */
	{ .name = "trust", .type = KT_ENUM, .off = D(trust),
	  .choices = trust_choices, .def = "verify",
	  .doc = "TLS trust: verify (CA bundle and name), first_use (pin the "
	  "first certificate seen; a liagent.ini's default), any "
	  "(= ssl_accept_any)" },
	{ .name = "username", .type = KT_STR, .off = D(username),
	  .doc = "cfapi: authenticated ingestion (POST /api/v1/sessions; "
	  "needs ssl)" },
	{ .name = "password", .type = KT_STR, .off = D(password),
	  .flags = KF_SECRET, .doc = "The login's password" },
	{ .name = "password_file", .type = KT_STR, .off = D(password_file),
	  .doc = "A file (mode 0600) holding the password" },
	{ .name = "provider", .type = KT_ENUM, .off = D(provider),
	  .choices = provider_choices, .def = "Local",
	  .doc = "The login's provider: Local, ActiveDirectory or vIDM" },
	{ .name = "filter", .type = KT_CUSTOM, .off = D(filter),
	  .custom = &dest_filter_type,
	  .doc = "Which events this destination gets (liagent's [server] "
	  "filter, docs/outputs.md); none: every event" },
};
const size_t ndest_keys = NELEM(dest_keys);
#undef D

#define C(f)	offsetof(struct config, f)
/* a number macro as the string the key table's defaults are */
#define NUM_STR_(n)	#n
#define NUM_STR(n)	NUM_STR_(n)
const struct cfg_key storage_keys[] = {
	{ .name = "directory", .type = KT_STR, .off = C(storage_directory),
	  .doc = "Spool and state directory; empty: the platform's" },
	{ .name = "max_disk_buffer", .type = KT_LONG, .off = C(max_disk_buffer),
	  .min = 1, .max = 1048576, .def = NUM_STR(CONFIG_MAX_DISK_BUFFER_MB),
	  .doc = "Spool budget in MB" },
	{ .name = "max_disk_buffer_kb", .type = KT_LONG,
	  .off = C(max_disk_buffer_kb), .max = 1073741824,
	  .doc = "Spool budget in KB; 0 = max_disk_buffer" },
	{ .name = "segment_kb", .type = KT_LONG, .off = C(segment_kb),
	  .max = 65536, .doc = "Spool segment size in KB; 0 = automatic" },
};
const size_t nstorage_keys = NELEM(storage_keys);

const struct cfg_key logging_keys[] = {
	{ .name = "debug_level", .type = KT_INT, .off = C(debug_level),
	  .max = 2, .doc = "0 info, 1 adds debug lines, 2 trace (-v, -vv override)" },
	{ .name = "file", .type = KT_STR, .off = C(log_file),
	  .doc = "The agent's own log; empty: stderr" },
};
const size_t nlogging_keys = NELEM(logging_keys);

const struct cfg_key batch_keys[] = {
	{ .name = "max_events", .type = KT_INT, .off = C(batch_max_events),
	  .min = 1, .max = 500, .def = "500", .doc = "Events per batch" },
	{ .name = "max_bytes", .type = KT_LONG, .off = C(batch_max_bytes),
	  .min = 1024, .max = 4194304, .def = "1048576",
	  .doc = "Bytes per batch (as flat JSON)" },
	{ .name = "flush_interval", .type = KT_INT,
	  .off = C(batch_flush_interval), .min = 1, .max = 3600, .def = "1",
	  .doc = "Seconds a partial batch waits" },
};
const size_t nbatch_keys = NELEM(batch_keys);

const struct cfg_key host_keys[] = {
	{ .name = "platform", .type = KT_ENUM, .off = C(platform),
	  .choices = platform_choices, .def = "auto",
	  .doc = "esxi, linux or auto (detected)" },
	{ .name = "tools_dir", .type = KT_STR, .off = C(tools_dir),
	  .doc = "Where esxcli and friends are; empty: the platform's" },
	{ .name = "log_dir", .type = KT_STR, .off = C(log_dir),
	  .doc = "Default filelog directory; empty: /var/log" },
	{ .name = "hostname", .type = KT_STR, .off = C(hostname),
	  .check = check_hostname,
	  .doc = "The hostname field of events; empty: the host's name" },
};
const size_t nhost_keys = NELEM(host_keys);

const struct cfg_key tags_key = {
	.name = "tags", .type = KT_KV, .off = C(tags), .check = check_tag_name,
	.doc = "Fields added to every event"
};
const struct cfg_key rules_file_key = {
	.name = "rules_file", .type = KT_STR, .off = C(rules_file),
	.doc = "Rule catalogue file; empty: the installed one, else the built-in one"
};
#undef C

/* ------------------------------------------------------------------ */
/* Destinations                                                        */
/* ------------------------------------------------------------------ */

static void
dest_init(struct dest_conf *d, const char *name)
{
	size_t n = cfg_nsinks();
	struct cfg_plugin sk;

	memset(d, 0, sizeof(*d));
	d->name = xstrdup(name);
	keys_init(dest_keys, ndest_keys, d);
	d->opts = xmalloc((n ? n : 1) * sizeof(*d->opts));
	d->nopts = n;
	for (size_t i = 0; i < n; i++) {
		d->opts[i] = NULL;
		if (!cfg_sink_at(i, &sk) || sk.opts_size == 0)
			continue;
		d->opts[i] = xmalloc(sk.opts_size);
		memset(d->opts[i], 0, sk.opts_size);
		keys_init(sk.keys, sk.nkeys, d->opts[i]);
	}
}

static void
dest_free(struct dest_conf *d)
{
	struct cfg_plugin sk;

	for (size_t i = 0; i < d->nopts && cfg_sink_at(i, &sk); i++) {
		if (d->opts[i] != NULL)
			keys_free(sk.keys, sk.nkeys, d->opts[i]);
		free(d->opts[i]);
	}
	free(d->opts);
	keys_free(dest_keys, ndest_keys, d);
	free(d->name);
	memset(d, 0, sizeof(*d));
}

struct dest_conf *
server_add(struct config *cfg, const char *name)
{
	cfg->servers = xrealloc(cfg->servers,
	    (cfg->nservers + 1) * sizeof(*cfg->servers));
	dest_init(&cfg->servers[cfg->nservers], name);
	return &cfg->servers[cfg->nservers++];
}

size_t
dest_nkeys(void)
{
	size_t n = ndest_keys;
	struct cfg_plugin sk;

	for (size_t i = 0; cfg_sink_at(i, &sk); i++)
		n += sk.nkeys;
	return n;
}

/*
 * A destination key by name: the shared rows, then each sink's.  Every
 * sink's keys are accepted on every destination (and printed), as they
 * always were; the sink the destination uses is the one that reads them.
 * Returns the key's index over all of them (struct kpos arrays), or -1.
 */
int
dest_key_find(const struct dest_conf *d, const char *name, struct dkey *out)
{
	return dest_key_next(d, name, -1, out);
}

/*
 * The next row named `name` after index `after` (-1: the first).  A key
 * two sinks declare (format: syslog and http) is one key to the user:
 * the first row reads and reports, and the loader gives the value to the
 * others too (dest_key_share()), so whichever sink the destination uses
 * finds it in its own block, whatever the order of proto and the key.
 */
int
dest_key_next(const struct dest_conf *d, const char *name, int after,
    struct dkey *out)
{
	/* the loader's own: written through out->base only while loading */
	void *dw = (void *)(uintptr_t)d;
	int ki = kspec_index(dest_keys, ndest_keys, name);
	size_t base = ndest_keys;
	struct cfg_plugin sk;

	if (ki >= 0 && ki > after) {
		out->k = &dest_keys[ki];
		out->base = dw;
		return ki;
	}
	for (size_t i = 0; cfg_sink_at(i, &sk); i++) {
		ki = kspec_index(sk.keys, sk.nkeys, name);
		/* a sink registered after d was made has no block in it */
		if (ki >= 0 && (int)(base + (size_t)ki) > after &&
		    i < d->nopts && d->opts[i] != NULL) {
			out->k = &sk.keys[ki];
			out->base = d->opts[i];
			return (int)(base + (size_t)ki);
		}
		base += sk.nkeys;
	}
	return -1;
}

/*
 * The row of `name` whose value d shows (--print-config): its own sink's
 * when that declares the key, else the first; -1 when none.
 */
int
dest_key_shown(const struct dest_conf *d, const char *name, struct dkey *out)
{
	struct cfg_plugin own;
	struct dkey dk;
	int first = dest_key_find(d, name, out), ki, oi;

	if (first < 0 || cfg_sink_find((int)d->proto, &own) < 0)
		return first;
	oi = kspec_index(own.keys, own.nkeys, name);
	if (oi < 0)
		return first;
	dk = *out;
	ki = first;
	while (ki >= 0 && dk.k != &own.keys[oi])
		ki = dest_key_next(d, name, ki, &dk);
	if (ki < 0)
		return first;
	*out = dk;
	return ki;
}

/*
 * Once the first row of a key took a value, the other sinks' rows of that
 * name get a copy (key_copy(): nothing is checked or reported twice).
 */
void
dest_key_share(struct dest_conf *d, const char *name, int ki)
{
	struct dkey first, dk;
	int kj;

	if (dest_key_find(d, name, &first) != ki)
		return;
	kj = dest_key_next(d, name, ki, &dk);
	while (kj >= 0) {
		(void)key_copy(dk.k, dk.base, first.k, first.base);
		kj = dest_key_next(d, name, kj, &dk);
	}
}

static bool
name_in(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* "did you mean": a key two sinks declare is named once */
const char *
dest_unknown_hint(const char *key, char *buf, size_t len)
{
	const char *names[64];
	size_t n = 0;
	struct cfg_plugin sk;

	for (size_t i = 0; i < ndest_keys && n < NELEM(names); i++)
		names[n++] = dest_keys[i].name;
	for (size_t i = 0; cfg_sink_at(i, &sk); i++)
		for (size_t j = 0; j < sk.nkeys && n < NELEM(names); j++)
			if (!name_in(sk.keys[j].name, names, n))
				names[n++] = sk.keys[j].name;
	return suggest(key, names, n, buf, len);
}

const struct kpos *
cfg_finish_pos(const struct cfg_finish *fin, const char *key)
{
	static const struct kpos none;
	struct dkey dk;
	int ki = dest_key_find(fin->d, key, &dk);

	if (ki < 0 || ki >= KPOS_MAX || fin->c->fpos == NULL)
		return &none;
	return &fin->c->fpos[ki];
}

/*
 * trust and its older spellings: ssl_accept_any is trust: any; a
 * liagent.ini without a CA bundle or ssl_accept_any trusts on first use,
 * as liagent does.  Authenticated ingestion needs exactly one password.
 */
static void
dest_trust_auth(struct lctx *c, struct dest_conf *d, const struct kpos *pos)
{
	int ti = kspec_index(dest_keys, ndest_keys, "trust");
	int ai = kspec_index(dest_keys, ndest_keys, "ssl_accept_any");
	int ui = kspec_index(dest_keys, ndest_keys, "username");

	if (pos[ti].line == 0) {
		if (d->ssl_accept_any)
			set_str(&d->trust, "any");
		else if (c->ini && d->ssl_ca_path[0] == '\0')
			set_str(&d->trust, "first_use");
	} else if (strcmp(d->trust, "any") == 0)
		d->ssl_accept_any = true;
	else if (d->ssl_accept_any && pos[ai].line != 0)
		rep(c, true, pos[ti].line, pos[ti].col, "'trust': '%s' "
		    "contradicts 'ssl_accept_any: yes' (which is trust: any)",
		    d->trust);
	if (d->username[0] == '\0')
		return;
	if (d->password[0] == '\0' && d->password_file[0] == '\0')
		rep(c, true, pos[ui].line, pos[ui].col, "'username': set "
		    "'password' or 'password_file' too");
	else if (d->password[0] != '\0' && d->password_file[0] != '\0')
		rep(c, true, pos[ui].line, pos[ui].col, "'password' and "
		    "'password_file': set only one of them");
}

/*
 * What can only be checked once a destination is complete is the sink's:
 * its finish hook (the format that fits the protocol, TLS over UDP,
 * required host names).
 */
void
dest_finish(struct lctx *c, struct dest_conf *d, const struct kpos *pos,
    bool primary, int line, int col)
{
	struct cfg_plugin sk;
	struct cfg_finish fin = { c, d, primary, line, col };

	dest_trust_auth(c, d, pos);
	if (cfg_sink_find((int)d->proto, &sk) < 0 || sk.finish == NULL)
		return;
	c->fpos = pos;
	sk.finish(&fin);
	c->fpos = NULL;
}

void
yaml_dest(struct lctx *c, struct dest_conf *d, const struct ynode *v,
    const char *section, bool primary, int line, int col)
{
	struct kpos pos[KPOS_MAX];
	char b[96], h[96];

	memset(pos, 0, sizeof(pos));
	if (!want_map(c, v, section)) {
		dest_finish(c, d, pos, primary, line, col);
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct dkey dk;
		bool ok;
		int ki;

		if (key->type != YN_SCALAR)
			continue;
		ki = dest_key_find(d, key->s, &dk);
		if (ki < 0) {
			rep(c, true, key->line, key->col, "unknown key '%s' in "
			    "section '%s'%s", show(key->s, b, sizeof(b)),
			    section, dest_unknown_hint(key->s, h, sizeof(h)));
			continue;
		}
		ok = apply_node(c, dk.k, dk.base, val) == 0;
		if (ok)
			dest_key_share(d, key->s, ki);
		if (ki < KPOS_MAX) {
			pos[ki].line = val->line;
			pos[ki].col = val->col;
			pos[ki].ok = ok;
		}
	}
	dest_finish(c, d, pos, primary, line, col);
}

void
yaml_servers(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96];

	if (!want_map(c, v, "servers"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		struct dest_conf *d;

		if (!entry_named(c, key, "servers"))
			continue;
		if (cfg->nservers + 1 >= CONFIG_MAX_DESTS) {
			rep(c, true, key->line, key->col, "servers: '%s' would "
			    "be destination %zu; at most %d (server and servers "
			    "together)", show(key->s, b, sizeof(b)),
			    cfg->nservers + 2, CONFIG_MAX_DESTS);
			continue;
		}
		d = server_add(cfg, key->s);
		snprintf(sect, sizeof(sect), "servers.%s", key->s);
		yaml_dest(c, d, val, sect, false, key->line, key->col);
	}
}

/* ------------------------------------------------------------------ */
/* Collectors: one section per row of the collector registry           */
/* ------------------------------------------------------------------ */

static void
collector_conf_init(struct collector_conf *cc, const struct cfg_plugin *col)
{
	size_t nck;
	const struct cfg_key *ck = cfg_collector_keys(&nck);

	memset(cc, 0, sizeof(*cc));
	cc->name = xstrdup(col->name);
	keys_init(ck, nck, cc);
	cc->interval = col->default_interval;
	if (col->opts_size > 0) {
		cc->opts = xmalloc(col->opts_size);
		memset(cc->opts, 0, col->opts_size);
		keys_init(col->keys, col->nkeys, cc->opts);
	}
}

static void
collector_conf_free(struct collector_conf *cc)
{
	struct cfg_plugin col;
	size_t nck;
	const struct cfg_key *ck = cfg_collector_keys(&nck);

	if (cfg_collector_named(cc->name, &col) && cc->opts != NULL)
		keys_free(col.keys, col.nkeys, cc->opts);
	free(cc->opts);
	keys_free(ck, nck, cc);
	free(cc->name);
}

static void
yaml_collector(struct lctx *c, struct collector_conf *cc,
    const struct ynode *v, const char *sect)
{
	struct cfg_plugin col;
	bool known = cfg_collector_named(cc->name, &col);
	size_t nck;
	const struct cfg_key *ck = cfg_collector_keys(&nck);
	char b[96], h[96];

	if (!want_map(c, v, sect))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];
		int ki;

		if (key->type != YN_SCALAR)
			continue;
		ki = kspec_index(ck, nck, key->s);
		if (ki >= 0) {
			apply_node(c, &ck[ki], cc, val);
			continue;
		}
		ki = known && cc->opts != NULL ? kspec_index(col.keys,
		    col.nkeys, key->s) : -1;
		if (ki >= 0) {
			apply_node(c, &col.keys[ki], cc->opts, val);
			continue;
		}
		rep(c, true, key->line, key->col, "unknown key '%s' in section "
		    "'%s'%s", show(key->s, b, sizeof(b)), sect,
		    unknown_hint(key->s, ck, nck, h, sizeof(h)));
	}
}

void
yaml_collectors(struct lctx *c, struct config *cfg, const struct ynode *v)
{
	char sect[96], b[96], known[256];
	struct collector_conf *cc;

	if (!want_map(c, v, "collectors"))
		return;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->v[i], *val = v->v[i + 1];

		if (key->type != YN_SCALAR)
			continue;
		cc = (struct collector_conf *)config_collector(cfg, key->s);
		if (cc == NULL) {
			size_t o = 0;

			known[0] = '\0';
			for (size_t j = 0; j < cfg->ncollectors &&
			    o < sizeof(known); j++)
				o += (size_t)snprintf(known + o,
				    sizeof(known) - o, "%s%s", j ? ", " : "",
				    cfg->collectors[j].name);
			rep(c, true, key->line, key->col, "unknown collector "
			    "'%s' in section 'collectors' (known: %s)",
			    show(key->s, b, sizeof(b)), known);
			continue;
		}
		snprintf(sect, sizeof(sect), "collectors.%s", key->s);
		yaml_collector(c, cc, val, sect);
	}
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

/* Defaults; what hangs on other values (a section's resolve hook: the
 * default filelogs' directories) waits for config_resolve(). */
static struct config *
config_new(void)
{
	struct config *cfg = xmalloc(sizeof(*cfg));
	size_t n = cfg_ncollectors();
	struct cfg_plugin col;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup("");
	dest_init(&cfg->server, "server");
	keys_init(storage_keys, nstorage_keys, cfg);
	keys_init(logging_keys, nlogging_keys, cfg);
	keys_init(batch_keys, nbatch_keys, cfg);
	keys_init(host_keys, nhost_keys, cfg);
	keys_init(&rules_file_key, 1, cfg);
	cfg->collectors = xmalloc((n ? n : 1) * sizeof(*cfg->collectors));
	for (size_t i = 0; i < n; i++)
		if (cfg_collector_at(i, &col))
			collector_conf_init(&cfg->collectors[
			    cfg->ncollectors++], &col);
	for (size_t i = 0; i < cfg_nsections(); i++) {
		const struct cfg_section *s = cfg_section_at(i);

		if (s->apply == NULL)
			keys_init(s->keys, s->nkeys, cfg);
		else if (s->init != NULL)
			s->init(cfg);
	}
	return cfg;
}

/* Somewhere to send, as its sink sees it: by default a host name. */
static bool
dest_has_target(const struct dest_conf *d)
{
	struct cfg_plugin sk;

	if (cfg_sink_find((int)d->proto, &sk) >= 0 && sk.has_target != NULL)
		return sk.has_target(d);
	return d->hostname != NULL && *d->hostname != '\0';
}

/*
 * Where the primary destination goes when it has nowhere to send: stdout,
 * as JSON lines (server.hostname "Empty: events go to stdout").  Without
 * servers either, the host has no destination at all (nodest): the
 * shipper then chooses between stdout and the host's syslog.
 */
static void
dest_resolve(struct dest_conf *d, bool primary, bool others)
{
	d->sink_proto = d->proto;
	d->to_stdout = false;
	d->nodest = false;
	d->host_syslog = false;
	if (!primary || dest_has_target(d))
		return;
	d->sink_proto = PROTO_FILE;
	d->to_stdout = true;
	d->nodest = !others;
}

/* What is left to resolve once the whole file is read. */
static void
config_resolve(struct config *cfg)
{
	for (size_t i = 0; i < cfg_nsections(); i++)
		if (cfg_section_at(i)->resolve != NULL)
			cfg_section_at(i)->resolve(cfg);
	dest_resolve(&cfg->server, true, cfg->nservers > 0);
	for (size_t i = 0; i < cfg->nservers; i++)
		dest_resolve(&cfg->servers[i], false, true);
}

struct config *
config_default(void)
{
	struct config *cfg = config_new();

	config_resolve(cfg);
	return cfg;
}

void
config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	dest_free(&cfg->server);
	for (size_t i = 0; i < cfg->nservers; i++)
		dest_free(&cfg->servers[i]);
	free(cfg->servers);
	keys_free(storage_keys, nstorage_keys, cfg);
	keys_free(logging_keys, nlogging_keys, cfg);
	keys_free(batch_keys, nbatch_keys, cfg);
	keys_free(host_keys, nhost_keys, cfg);
	keys_free(&tags_key, 1, cfg);
	keys_free(&rules_file_key, 1, cfg);
	for (size_t i = 0; i < cfg->ncollectors; i++)
		collector_conf_free(&cfg->collectors[i]);
	free(cfg->collectors);
	for (size_t i = 0; i < cfg_nsections(); i++) {
		const struct cfg_section *s = cfg_section_at(i);

		if (s->apply == NULL)
			keys_free(s->keys, s->nkeys, cfg);
		else if (s->clear != NULL)
			s->clear(cfg);
	}
	free(cfg);
}

/* A configuration's text: liagent.ini or YAML. */
static void
parse_text(struct lctx *c, struct config *cfg, char *buf, size_t len)
{
	struct ynode *root;
	bool ok;

	if (looks_ini(buf, len)) {
		cfg->is_ini = true;
		c->ini = true;
		ini_load(c, cfg, buf, len);
		return;
	}
	root = yaml_tree(c, buf, len, &ok);
	if (root != NULL)
		yaml_apply(c, cfg, root);
	ynode_free(root);
}

struct config *
config_load(const char *path, config_report_fn report, void *arg)
{
	return config_load_flags(path, 0, report, arg);
}

struct config *
config_load_flags(const char *path, unsigned flags, config_report_fn report,
    void *arg)
{
	struct lctx c;
	struct config *cfg;
	char *buf;
	size_t len;

	memset(&c, 0, sizeof(c));
	c.file = path;
	c.report = report;
	c.arg = arg;
	c.keep_broken = (flags & CONFIG_KEEP_BROKEN_FILELOGS) != 0;
	cfg = config_new();
	set_str(&cfg->path, path);
	buf = read_whole_file(&c, path, &len);
	if (buf == NULL)
		goto err;
	/* blanks and comments only (YAML's # or liagent.ini's ;): every
	 * default, whatever either parser would say of a stray tab */
	cfg->file_empty = text_empty(buf, len);
	if (!cfg->file_empty)
		parse_text(&c, cfg, buf, len);
	free(buf);
	config_resolve(cfg);
	for (size_t i = 0; i < cfg_nsections() && c.nerr == 0; i++)
		if (cfg_section_at(i)->check != NULL)
			cfg_section_at(i)->check(&c, cfg);
	if (c.nerr > 0)
		goto err;
	lctx_flush(&c);
	return cfg;
err:
	lctx_flush(&c);
	config_free(cfg);
	return NULL;
}
