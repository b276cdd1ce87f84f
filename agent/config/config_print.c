/*
 * config_print: --print-config (the effective configuration as YAML that
 * config_load reads back to the same values) and the key table of
 * docs/configuration.md, both walked from the schema rows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "../lib/redact.h"
#include "../lib/utf8.h"


/*
 * A YAML double-quoted string that libyaml reads back byte for byte:
 * escape what YAML would fold or refuse (controls, C1, the Unicode line
 * and paragraph separators, the BOM, U+FFFE/FFFF), keep the rest as UTF-8.
 */
void
print_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char ch = p[i];
		size_t clen;
		uint32_t cp;

		if (ch == '"' || ch == '\\') {
			fputc('\\', f);
			fputc(ch, f);
			i++;
			continue;
		}
		if (ch < 0x80) {
			if (ch < 0x20 || ch == 0x7f)
				fprintf(f, "\\x%02x", ch);
			else
				fputc(ch, f);
			i++;
			continue;
		}
		clen = utf8_decode(p + i, n - i, &cp);
		if (clen == 0) {	/* cannot happen: inputs are checked */
			fputs("\\uFFFD", f);
			i++;
			continue;
		}
		if (cp < 0xa0)
			fprintf(f, "\\x%02x", (unsigned)cp);
		else if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
		    cp == 0xfffe || cp == 0xffff)
			fprintf(f, "\\u%04X", (unsigned)cp);
		else
			fwrite(p + i, 1, clen, f);
		i += clen;
	}
	fputc('"', f);
}

void
print_list(FILE *f, const struct strlist *l)
{
	fputc('[', f);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			fputs(", ", f);
		print_str(f, l->v[i]);
	}
	fputc(']', f);
}

#define REDACTED	"<redacted>"

/* show: --print-config --show-secrets, secrets printed as they are;
 * otherwise as REDACTED. */
static void
print_kv(FILE *f, const struct kvlist *l, const char *indent, bool secret,
    bool show)
{
	if (l->n == 0) {
		fputs(" {}\n", f);
		return;
	}
	fputc('\n', f);
	for (size_t i = 0; i < l->n; i++) {
		const char *k = l->v[i].key, *v = l->v[i].value;

		fputs(indent, f);
		print_str(f, k);
		fputs(": ", f);
		print_str(f, secret && !show && k != NULL && v != NULL &&
		    *v != '\0' && redact_secret_name(k, strlen(k)) ? REDACTED : v);
		fputc('\n', f);
	}
}

/* A string row's value, its secrets (whole or in a URL) redacted. */
static void
print_secret_str(FILE *f, const struct cfg_key *k, const char *s, bool show)
{
	char *r;
	size_t n;

	if (s == NULL || *s == '\0' || show ||
	    !(k->flags & (KF_SECRET | KF_SECRET_URL))) {
		print_str(f, s != NULL ? s : "");
		return;
	}
	if (k->flags & KF_SECRET) {
		print_str(f, REDACTED);
		return;
	}
	/* every redacted part is at least one byte of s: this is room for
	 * a marker in place of each */
	n = strlen(s) * sizeof(REDACTED) + 1;
	r = malloc(n);
	if (r == NULL) {
		print_str(f, REDACTED);
		return;
	}
	(void)redact_url(s, REDACTED, r, n);
	print_str(f, r);
	free(r);
}

#define YN(b)	((b) ? "yes" : "no")

/* One row as "INDENTname: value\n" (a mapping value on the lines below);
 * how: KP_SECRETS or not (keys_print()). */
static void
key_print_how(FILE *f, const struct cfg_key *k, const void *base,
    const char *in, unsigned how)
{
	bool show = (how & KP_SECRETS) != 0;
	const char *field = (const char *)base + k->off;
	const char *s = NULL;
	char in2[32];

	if (k->flags & KF_NOPRINT)
		return;
	if (k->type == KT_CUSTOM) {
		k->custom->print(f, k, field, in);
		return;
	}
	if (k->type == KT_STR || k->type == KT_OSTR || k->type == KT_ENUM)
		s = *(char *const *)(const void *)field;
	if (k->type == KT_OSTR && s == NULL && (k->flags & KF_OMIT_NULL))
		return;
	fprintf(f, "%s%s:", in, k->name);
	switch (k->type) {
	case KT_STR:
	case KT_OSTR:
		fputc(' ', f);
		print_secret_str(f, k, s, show);
		break;
	case KT_ENUM:
		fprintf(f, " %s", s != NULL ? s : "");
		break;
	case KT_INT:
		fprintf(f, " %d", *(const int *)(const void *)field);
		break;
	case KT_LONG:
		fprintf(f, " %ld", *(const long *)(const void *)field);
		break;
	case KT_BOOL:
		fprintf(f, " %s", YN(*(const bool *)(const void *)field));
		break;
	case KT_IBOOL:
		fprintf(f, " %s", YN(*(const int *)(const void *)field));
		break;
	case KT_PROTO:
		fprintf(f, " %s", cfg_proto_name((int)
		    *(const enum dest_proto *)(const void *)field));
		break;
	case KT_FORWARD:
		fprintf(f, " %s", k->choices[
		    *(const enum forward_mode *)(const void *)field]);
		break;
	case KT_LIST:
		fputc(' ', f);
		print_list(f, (const struct strlist *)(const void *)field);
		break;
	case KT_KV:
		snprintf(in2, sizeof(in2), "%s  ", strncmp(in, "  - ", 4) == 0 ?
		    "    " : in);
		print_kv(f, (const struct kvlist *)(const void *)field, in2,
		    (k->flags & KF_SECRET_KV) != 0, show);
		return;
	case KT_CUSTOM:
		break;
	}
	fputc('\n', f);
}

/* The row, secrets redacted. */
void
key_print(FILE *f, const struct cfg_key *k, const void *base, const char *in)
{
	key_print_how(f, k, base, in, 0);
}

void
keys_print(FILE *f, const struct cfg_key *tab, size_t n, const void *base,
    const char *indent, unsigned how)
{
	for (size_t i = 0; i < n; i++)
		key_print_how(f, &tab[i], base, indent, how & KP_SECRETS);
}

/*
 * The shared basics, then each sink's rows.  A key two sinks declare is
 * printed once, where the first declares it, with the value of the
 * destination's own sink when that is one of them (http's format).
 * secrets: KP_SECRETS or 0.
 */
void
print_dest(FILE *f, const struct dest_conf *d, const char *in, unsigned secrets)
{
	struct cfg_plugin sk;
	struct dkey dk;

	keys_print(f, dest_keys, ndest_keys, d, in, secrets);
	for (size_t i = 0; cfg_sink_at(i, &sk); i++) {
		if (i >= d->nopts || d->opts[i] == NULL)
			continue;
		for (size_t j = 0; j < sk.nkeys; j++) {
			if (dest_key_find(d, sk.keys[j].name, &dk) < 0 ||
			    dk.k != &sk.keys[j])
				continue;
			(void)dest_key_shown(d, sk.keys[j].name, &dk);
			key_print_how(f, dk.k, dk.base, in, secrets);
		}
	}
}

/*
 * The loader's own sections: a registry row names one of them as the
 * section it follows (cfg_section.after); one that names none of them
 * goes at the end.
 */
static const char *const core_order[] = {
	"server", "servers", "storage", "logging", "batch", "host", "tags",
	"collectors", "rules_file"
};

/* Whether s goes right after the core's section `after` (NULL: the end). */
static bool
section_follows(const struct cfg_section *s, const char *after)
{
	bool placed = false;

	if (s->after != NULL)
		for (size_t i = 0; i < NELEM(core_order); i++)
			if (strcmp(s->after, core_order[i]) == 0)
				placed = true;
	if (!placed)
		return after == NULL;
	return after != NULL && strcmp(s->after, after) == 0;
}

static void
print_section(FILE *f, const char *name, const struct cfg_key *tab, size_t n,
    const void *base, unsigned secrets)
{
	fprintf(f, "%s:\n", name);
	keys_print(f, tab, n, base, "  ", secrets);
}

static void
print_collectors(FILE *f, const struct config *cfg, unsigned secrets)
{
	struct cfg_plugin col;
	size_t nck;
	const struct cfg_key *ck = cfg_collector_keys(&nck);

	fputs("collectors:\n", f);
	for (size_t i = 0; i < cfg->ncollectors; i++) {
		const struct collector_conf *cc = &cfg->collectors[i];

		fprintf(f, "  %s:\n", cc->name);
		keys_print(f, ck, nck, cc, "    ", secrets);
		if (cfg_collector_named(cc->name, &col) && cc->opts != NULL)
			keys_print(f, col.keys, col.nkeys, cc->opts, "    ",
			    secrets);
	}
}

/*
 * The registry's sections that follow the core's section `after` (NULL:
 * those that go at the end), in registry order.
 */
static void
print_after(FILE *f, const struct config *cfg, const char *after,
    unsigned secrets)
{
	for (size_t i = 0; i < cfg_nsections(); i++) {
		const struct cfg_section *s = cfg_section_at(i);

		if (!section_follows(s, after))
			continue;
		if (s->apply == NULL)
			print_section(f, s->name, s->keys, s->nkeys, cfg,
			    secrets);
		else if (s->print != NULL)
			s->print(f, cfg);
	}
}

static int	print_all(const struct config *, FILE *, unsigned secrets);

int
config_print(const struct config *cfg, FILE *f)
{
	return print_all(cfg, f, 0);
}

int
config_print_with(const struct config *cfg, FILE *f, bool secrets)
{
	return print_all(cfg, f, secrets ? KP_SECRETS : 0);
}

/* secrets: KP_SECRETS (--show-secrets) or 0, handed down to every row. */
static int
print_all(const struct config *cfg, FILE *f, unsigned secrets)
{
	fputs(secrets ? "# esxwatch: the effective configuration (every "
	    "default filled in; secrets shown)\n" : "# esxwatch: the effective "
	    "configuration (every default filled in; secrets <redacted>: "
	    "--show-secrets prints them)\n", f);
	fputs("server:\n", f);
	print_dest(f, &cfg->server, "  ", secrets);
	print_after(f, cfg, "server", secrets);
	fputs("servers:", f);
	if (cfg->nservers == 0)
		fputs(" {}", f);
	fputc('\n', f);
	for (size_t i = 0; i < cfg->nservers; i++) {
		fputs("  ", f);
		print_str(f, cfg->servers[i].name);
		fputs(":\n", f);
		print_dest(f, &cfg->servers[i], "    ", secrets);
	}
	print_after(f, cfg, "servers", secrets);
	print_section(f, "storage", storage_keys, nstorage_keys, cfg, secrets);
	print_after(f, cfg, "storage", secrets);
	print_section(f, "logging", logging_keys, nlogging_keys, cfg, secrets);
	print_after(f, cfg, "logging", secrets);
	print_section(f, "batch", batch_keys, nbatch_keys, cfg, secrets);
	print_after(f, cfg, "batch", secrets);
	print_section(f, "host", host_keys, nhost_keys, cfg, secrets);
	print_after(f, cfg, "host", secrets);
	key_print_how(f, &tags_key, cfg, "", secrets);
	print_after(f, cfg, "tags", secrets);
	print_collectors(f, cfg, secrets);
	print_after(f, cfg, "collectors", secrets);
	key_print_how(f, &rules_file_key, cfg, "", secrets);
	print_after(f, cfg, "rules_file", secrets);
	print_after(f, cfg, NULL, secrets);
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The key table of docs/configuration.md                              */
/* ------------------------------------------------------------------ */

static const char *
md_type(const struct cfg_key *k)
{
	switch (k->type) {
	case KT_STR:	return "string";
	case KT_OSTR:	return "string (optional)";
	case KT_INT:
	case KT_LONG:	return "integer";
	case KT_BOOL:
	case KT_IBOOL:	return "boolean";
	case KT_ENUM:
	case KT_FORWARD: return "choice";
	case KT_PROTO:	return "sink name";
	case KT_LIST:	return "list";
	case KT_KV:	return "mapping";
	case KT_CUSTOM:	return k->custom->type_doc;
	}
	return "?";
}

/* "a, b, c" or "MIN..MAX" or "" */
static void
md_values(FILE *f, const struct cfg_key *k)
{
	const char *const *ch = k->type == KT_PROTO ? proto_choices() :
	    k->choices;

	if (k->type == KT_INT || k->type == KT_LONG) {
		fprintf(f, "%ld..%ld", k->min, k->max);
		return;
	}
	for (size_t i = 0; ch != NULL && ch[i] != NULL; i++)
		fprintf(f, "%s`%s`", i ? ", " : "", ch[i]);
}

static void
md_default(FILE *f, const struct cfg_key *k)
{
	switch (k->type) {
	case KT_STR:
		fprintf(f, "`\"%s\"`", k->def != NULL ? k->def : "");
		break;
	case KT_OSTR:
		fputs(k->def != NULL ? k->def : "absent", f);
		break;
	case KT_INT:
	case KT_LONG:
		fprintf(f, "`%s`", k->def != NULL ? k->def : "0");
		break;
	case KT_BOOL:
	case KT_IBOOL:
		fprintf(f, "`%s`", k->def != NULL ? k->def : "no");
		break;
	case KT_LIST:
		fputs(k->def != NULL ? k->def : "`[]`", f);
		break;
	case KT_KV:
		fputs("`{}`", f);
		break;
	default:
		fprintf(f, "`%s`", k->def != NULL ? k->def : "");
		break;
	}
}

static void
md_row(FILE *f, const struct cfg_key *k)
{
	fprintf(f, "| `%s` | %s | ", k->name, md_type(k));
	md_default(f, k);
	fputs(" | ", f);
	md_values(f, k);
	fprintf(f, " | %s%s |\n", k->doc != NULL ? k->doc : "",
	    (k->flags & KF_SECRET) ? " (secret: printed as `<redacted>`)" :
	    (k->flags & KF_SECRET_URL) ? " (its user:password@ and secret query "
	    "values are printed as `<redacted>`)" : (k->flags & KF_SECRET_KV) ?
	    " (the values of secret-named keys are printed as `<redacted>`)" :
	    "");
}

static void
md_table(FILE *f, const char *title, const struct cfg_key *tab, size_t n)
{
	fprintf(f, "\n#### %s\n\n| Key | Type | Default | Values | "
	    "Description |\n|---|---|---|---|---|\n", title);
	for (size_t i = 0; i < n; i++)
		md_row(f, &tab[i]);
}

static void
md_collectors(FILE *f)
{
	char title[128];
	struct cfg_plugin col;
	size_t nck;
	const struct cfg_key *ck = cfg_collector_keys(&nck);

	md_table(f, "collectors.NAME (every collector)", ck, nck);
	fputs("\nDefault `interval` per collector:", f);
	for (size_t i = 0; cfg_collector_at(i, &col); i++)
		fprintf(f, "%s `%s` %d s", i ? "," : "", col.name,
		    col.default_interval);
	fputs(".\n", f);
	for (size_t i = 0; cfg_collector_at(i, &col); i++) {
		if (col.nkeys == 0)
			continue;
		snprintf(title, sizeof(title), "collectors.%s", col.name);
		md_table(f, title, col.keys, col.nkeys);
	}
}

/* The registry's sections' tables, placed as in print_after(). */
static void
md_after(FILE *f, const char *after)
{
	for (size_t i = 0; i < cfg_nsections(); i++) {
		const struct cfg_section *s = cfg_section_at(i);

		if (section_follows(s, after) && s->keys != NULL)
			md_table(f, s->doc_title != NULL ? s->doc_title :
			    s->name, s->keys, s->nkeys);
	}
}

/*
 * The generated block of docs/configuration.md: one table per section,
 * straight from the rows (tests/unit/test_configdoc.c keeps the file in
 * step).
 */
int
config_keys_markdown(FILE *f)
{
	char title[128];
	struct cfg_plugin sk;

	md_table(f, "server, servers.NAME (every sink)", dest_keys, ndest_keys);
	for (size_t i = 0; cfg_sink_at(i, &sk); i++) {
		if (sk.nkeys == 0)
			continue;
		snprintf(title, sizeof(title), "server, servers.NAME: proto %s",
		    sk.name);
		md_table(f, title, sk.keys, sk.nkeys);
	}
	md_after(f, "server");
	md_after(f, "servers");
	md_table(f, "storage", storage_keys, nstorage_keys);
	md_after(f, "storage");
	md_table(f, "logging", logging_keys, nlogging_keys);
	md_after(f, "logging");
	md_table(f, "batch", batch_keys, nbatch_keys);
	md_after(f, "batch");
	md_table(f, "host", host_keys, nhost_keys);
	md_after(f, "host");
	md_table(f, "top level", &tags_key, 1);
	md_row(f, &rules_file_key);
	md_after(f, "tags");
	md_after(f, "rules_file");
	md_collectors(f);
	md_after(f, "collectors");
	md_after(f, NULL);
	return ferror(f) ? -1 : 0;
}
