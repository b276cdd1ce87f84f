/*
 * The bundle host (host/bundle.h): a vm-support bundle's commands/ files
 * answer the collectors' questions.  Where the files' names come from:
 * tests/fixtures/bundle/SOURCES.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/exec.h"
#include "../../agent/lib/log.h"
#include "bundle.h"
#include "esxcli.h"
#include "host.h"
#include "nicinfo.h"

struct bundle_host {
	struct host		h;	/* first */
	struct bundle_cmds	cmds;
};

#define B(h)	(&((struct bundle_host *)(h))->cmds)

int
bundle_cmd_name(const char *prog, const char *const args[], char *out,
    size_t len)
{
	size_t o;
	int n = snprintf(out, len, "%s_", prog);

	if (n < 0 || (size_t)n >= len)
		return -1;
	o = (size_t)n;
	for (size_t i = 0; args[i] != NULL; i++) {
		n = snprintf(out + o, len - o, "%s%s", i ? "-" : "", args[i]);
		if (n < 0 || (size_t)n >= len - o)
			return -1;
		o += (size_t)n;
	}
	n = snprintf(out + o, len - o, ".txt");
	return n < 0 || (size_t)n >= len - o ? -1 : 0;
}

static void
gap(struct host *h, const char *fmt, const char *a, const char *b)
{
	char line[1200];

	snprintf(line, sizeof(line), fmt, a, b);
	if (B(h)->gap)
		B(h)->gap(B(h)->arg, line);
}

static bool
is_args(const char *const args[], const char *a0, const char *a1,
    const char *a2, const char *a3)
{
	const char *w[] = { a0, a1, a2, a3 };

	for (int i = 0; i < 4; i++) {
		if (w[i] == NULL)
			return args[i] == NULL;
		if (args[i] == NULL || strcmp(args[i], w[i]) != 0)
			return false;
	}
	return true;
}

/* The line at or after p that starts with prefix (NULL: none). */
static const char *
find_line(const char *p, const char *end, const char *needle, bool anywhere)
{
	size_t nl = strlen(needle);

	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		const char *le = e ? e : end;
		const char *s = p;

		while (!anywhere && s < le && (*s == ' ' || *s == '\t'))
			s++;
		if (anywhere) {
			for (; s + nl <= le; s++)
				if (memcmp(s, needle, nl) == 0)
					return p;
		} else if ((size_t)(le - s) >= nl && memcmp(s, needle, nl) == 0)
			return p;
		p = e ? e + 1 : end;
	}
	return NULL;
}

/*
 * From p to the first blank line (or end) after at least one non-blank;
 * indented: also to the first line at column 0 after the first (a block's
 * "   Key: value" lines end where the script's next echo starts).
 */
static size_t
block_len(const char *p, const char *end, bool indented)
{
	const char *q = p;
	bool seen = false;

	while (q < end) {
		const char *e = memchr(q, '\n', (size_t)(end - q));
		const char *le = e ? e : end;
		bool blank = true;

		for (const char *s = q; s < le; s++)
			if (*s != ' ' && *s != '\t' && *s != '\r')
				blank = false;
		if (seen && (blank || (indented && *q != ' ' && *q != '\t')))
			return (size_t)(q - p);
		seen |= !blank;
		q = e ? e + 1 : end;
	}
	return (size_t)(end - p);
}

/* The part of nicinfo.sh.txt / smartinfo.txt that answers args, or NULL. */
static const char *
section(const char *const args[], const char *text, size_t len, size_t *slen)
{
	const char *end = text + len, *p = NULL;
	char want[160];
	bool indented = false;

	if (is_args(args, "network", "nic", "list", NULL)) {
		/* the table: its header starts with Name, dashes follow */
		for (p = find_line(text, end, "Name", false); p != NULL;
		    p = find_line(p + 1, end, "Name", false)) {
			const char *nx = memchr(p, '\n', (size_t)(end - p));

			if (nx != NULL && nx + 1 < end && nx[1] == '-')
				break;
		}
	} else if (is_args(args, "network", "nic", "stats", "get") &&
	    args[4] && args[5] && strcmp(args[4], "-n") == 0) {
		snprintf(want, sizeof(want), "NIC statistics for %s", args[5]);
		indented = true;
		p = find_line(text, end, want, false);
		/* "... for vmnic1" must not match vmnic10 */
		while (p != NULL) {
			const char *s = strstr(p, want) + strlen(want);

			if (s >= end || *s == ':' || *s == '\n' || *s == ' ' || *s == '\r')
				break;
			p = find_line(s, end, want, false);
		}
	} else if (args[0] && args[1] && args[2] && args[3] && args[4] &&
	    args[5] && args[6] && strcmp(args[3], "smart") == 0 &&
	    strcmp(args[5], "-d") == 0) {
		p = find_line(text, end, args[6], true);
		if (p != NULL) {	/* the table after the device's line */
			p = memchr(p, '\n', (size_t)(end - p));
			p = p ? p + 1 : NULL;
		}
	}
	if (p == NULL)
		return NULL;
	*slen = block_len(p, end, indented);
	return *slen > 0 ? p : NULL;
}

/* Where vm-support keeps this question's answer, and the text. */
static const char *
lookup(struct host *h, const char *const args[], char *file, size_t flen,
    size_t *len)
{
	static const char *const progs[] = { "localcli", "esxcli", NULL };
	const char *t;
	char name[512];

	for (int i = 0; progs[i] != NULL; i++) {
		if (bundle_cmd_name(progs[i], args, name, sizeof(name)) == -1)
			continue;
		t = B(h)->get(B(h)->arg, name, len);
		if (t != NULL) {
			snprintf(file, flen, "commands/%s", name);
			return t;
		}
	}
	/* `storage filesystem list` is saved with -i */
	if (is_args(args, "storage", "filesystem", "list", NULL)) {
		t = B(h)->get(B(h)->arg, "localcli_storage-filesystem-list--i.txt", len);
		if (t != NULL) {
			snprintf(file, flen, "commands/localcli_storage-filesystem-list--i.txt");
			return t;
		}
	}
	{
		const char *agg = args[0] && strcmp(args[0], "network") == 0 ?
		    "nicinfo.sh.txt" : "smartinfo.txt";
		size_t alen;
		const char *a = B(h)->get(B(h)->arg, agg, &alen);

		t = a != NULL ? section(args, a, alen, len) : NULL;
		if (t != NULL) {
			snprintf(file, flen, "commands/%s", agg);
			return t;
		}
	}
	return NULL;
}

static int
bundle_esxcli(struct host *h, int timeout_s, const char *const args[],
    struct esx_out *out)
{
	char file[560], err[256], cmd[300] = "";
	const char *t;
	size_t len, o = 0;

	(void)timeout_s;
	for (size_t i = 0; args[i] != NULL && o < sizeof(cmd) - 1; i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "%s%s", i ? " " : "", args[i]);
	t = lookup(h, args, file, sizeof(file), &len);
	if (t == NULL) {
		gap(h, "esxcli %s: not in the bundle (no commands/ file holds "
		    "it): absent", cmd, "");
		host_set_err(HOST_EABSENT);
		return -1;
	}
	if (esxcli_parse(t, len, out, err, sizeof(err)) == -1) {
		gap(h, "%s: not understood: %s", file, err);
		host_set_err(HOST_EFAILED);
		return -1;
	}
	return 0;
}

static int
bundle_run(struct host *h, const char *tool, const char *const args[],
    int timeout_s, struct exec_result *res)
{
	static const char *const vdq_h[] = { "-q", "-H", NULL };
	char name[512];
	const char *t = NULL;
	size_t len = 0;

	(void)timeout_s;
	if (bundle_cmd_name(tool, args, name, sizeof(name)) == 0)
		t = B(h)->get(B(h)->arg, name, &len);
	if (t == NULL && strcmp(tool, "vdq") == 0 &&
	    bundle_cmd_name(tool, vdq_h, name, sizeof(name)) == 0)
		t = B(h)->get(B(h)->arg, name, &len);
	if (t == NULL) {
		gap(h, "%s: not in the bundle (commands/%s): absent", tool,
		    name);
		host_set_err(HOST_EMISSING);
		return -1;
	}
	res->out = malloc(len + 1);
	res->err = calloc(1, 1);
	if (res->out == NULL || res->err == NULL) {
		exec_result_free(res);
		host_set_err(HOST_EFAILED);
		return -1;
	}
	memcpy(res->out, t, len);
	res->out[len] = '\0';
	res->out_len = len;
	res->status = 0;
	return 0;
}

static int
bundle_nics(struct host *h, const struct collector_conf *conf, int timeout_s,
    struct nic_info **out)
{
	int n = nic_read_esxcli(h, conf, timeout_s, out);

	if (n < 0 && host_err() == 0)
		host_set_err(HOST_EFAILED);
	return n;
}

static void
bundle_close(struct host *h)
{
	free(h);
}

static const struct host_ops bundle_ops = {
	.nics = bundle_nics,
	.esxcli = bundle_esxcli,
	.run = bundle_run,
	.close = bundle_close,
};

struct host *
bundle_host_new(const struct bundle_cmds *cmds)
{
	struct bundle_host *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	b->h.ops = &bundle_ops;
	b->h.kind = "bundle";
	b->h.platform = PLATFORM_ESXI;
	b->cmds = *cmds;
	return &b->h;
}

/* From the configuration alone there is no bundle: --analyze makes one
 * with bundle_host_new(). */
static struct host *
bundle_open(const struct config *cfg)
{
	(void)cfg;
	log_error("host: a bundle host is opened by --analyze BUNDLE");
	return NULL;
}

const struct host_kind host_kind_bundle = {
	.name = "bundle",
	.open = bundle_open,
};
