/*
 * tarstream: tar and gzip read as a stream (tarstream.h).
 *
 * The tar format: POSIX.1-1988 ustar headers of 512 bytes (name 100,
 * mode, uid, gid, size 12 octal, mtime 12, checksum 8, typeflag, linkname
 * 100, "ustar", ..., prefix 155), GNU's long-name member 'L' and base-256
 * sizes, POSIX.1-2001 pax 'x' records "LEN key=value\n" (GNU tar manual,
 * "Basic Tar Format"; POSIX pax(1), "pax Extended Header").
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tarstream.h"

enum tar_state { T_HEADER, T_DATA, T_META, T_PAD, T_END, T_FAILED };
enum meta_kind { M_NONE, M_LONGNAME, M_PAX };

struct tar {
	struct tar_cb	 cb;
	uint64_t	 max_member;
	enum tar_state	 st;
	char		 hdr[512];
	size_t		 hlen;
	uint64_t	 left;		/* data bytes of the current member */
	size_t		 pad;		/* padding bytes to skip after it */
	bool		 want;		/* hand the data on */
	enum meta_kind	 meta;
	char		*mbuf;		/* a long name or pax record */
	size_t		 mlen;
	char		 longname[TAR_PATH_MAX];	/* for the next header */
	bool		 have_long;
	uint64_t	 pax_size;
	bool		 have_pax_size;
	int		 zero_blocks;
	uint64_t	 members;
	char		 err[256];
};

struct tar *
tar_new(const struct tar_cb *cb, uint64_t max_member)
{
	struct tar *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->cb = *cb;
	t->max_member = max_member;
	t->mbuf = malloc(TAR_META_MAX + 1);
	if (t->mbuf == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void
tar_free(struct tar *t)
{
	if (t == NULL)
		return;
	free(t->mbuf);
	free(t);
}

const char *
tar_error(const struct tar *t)
{
	return t->err;
}

uint64_t
tar_members(const struct tar *t)
{
	return t->members;
}

static int
fail(struct tar *t, const char *why)
{
	if (t->err[0] == '\0')
		snprintf(t->err, sizeof(t->err), "%s", why);
	t->st = T_FAILED;
	return -1;
}

int
tar_path_clean(const char *in, char *out, size_t outlen)
{
	size_t o = 0;
	const char *p = in, *e;

	if (in[0] == '/' || in[0] == '\0' || outlen == 0)
		return -1;
	for (const char *q = in; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return -1;
	while (*p) {
		e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > outlen)
				return -1;
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	if (o == 0)
		return -1;
	out[o] = '\0';
	return 0;
}

bool
tar_link_inside(const char *name, const char *target, bool hard)
{
	char joined[2 * TAR_PATH_MAX + 2];
	const char *slash = strrchr(name, '/');
	int depth = 0;

	if (target[0] == '/' || target[0] == '\0')
		return false;
	/* a hard link names a member (from the top), a symlink a path from
	 * its own folder */
	if (hard || slash == NULL)
		snprintf(joined, sizeof(joined), "%s", target);
	else
		snprintf(joined, sizeof(joined), "%.*s/%s", (int)(slash - name),
		    name, target);
	for (const char *p = joined; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (n > 0 && !(n == 1 && p[0] == '.'))
			depth++;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/* A numeric field: octal digits (space/NUL padded) or GNU base-256. */
static int
num_field(const char *f, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if ((unsigned char)f[0] & 0x80) {
		if ((unsigned char)f[0] != 0x80)
			return -1;	/* negative, or more than 64 bits */
		for (i = 1; i < len; i++) {
			if (v >> 56)
				return -1;
			v = (v << 8) | (unsigned char)f[i];
		}
		*out = v;
		return 0;
	}
	while (i < len && (f[i] == ' ' || f[i] == '\0'))
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v * 8 + (uint64_t)(f[i] - '0');
	}
	for (; i < len; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	*out = v;
	return 0;
}

static bool
checksum_ok(const char *h)
{
	uint64_t want;
	unsigned long sum = 0;
	long ssum = 0;

	if (num_field(h + 148, 8, &want) == -1)
		return false;
	for (int i = 0; i < 512; i++) {
		unsigned char c = (i >= 148 && i < 156) ? ' ' : (unsigned char)h[i];

		sum += c;
		ssum += (signed char)((i >= 148 && i < 156) ? ' ' : h[i]);
	}
	return want == sum || (long)want == ssum;
}

static void
field_str(const char *f, size_t len, char *out)
{
	size_t n = strnlen(f, len);

	memcpy(out, f, n);
	out[n] = '\0';
}

/* The member's name: a long name or pax path first, else prefix/name. */
static void
member_name(struct tar *t, char *name, size_t len)
{
	char n[101], pfx[156];

	if (t->have_long) {
		snprintf(name, len, "%s", t->longname);
		return;
	}
	field_str(t->hdr, 100, n);
	field_str(t->hdr + 345, 155, pfx);
	if (memcmp(t->hdr + 257, "ustar", 5) == 0 && pfx[0] != '\0')
		snprintf(name, len, "%s/%s", pfx, n);
	else
		snprintf(name, len, "%s", n);
}

static void
start_skip(struct tar *t, uint64_t size)
{
	t->left = size;
	t->pad = (size_t)((512 - size % 512) % 512);
	t->st = size > 0 ? T_DATA : T_PAD;
	t->want = false;
	if (size == 0 && t->pad == 0)
		t->st = T_HEADER;
}

static const char *
type_refusal(char type)
{
	switch (type) {
	case '1': return "a hard link (not followed)";
	case '2': return "a symbolic link (not followed)";
	case '3': case '4': return "a device node";
	case '6': return "a FIFO";
	default: return "a member of an unknown type";
	}
}

/* A regular file's header: hand it on, or refuse it. */
static int
regular(struct tar *t, const char *raw, uint64_t size, int64_t mtime)
{
	char clean[TAR_PATH_MAX];
	struct tar_entry e;
	int r;

	start_skip(t, size);
	if (tar_path_clean(raw, clean, sizeof(clean)) == -1) {
		if (t->cb.refused)
			t->cb.refused(t->cb.arg, raw, "a path outside the archive "
			    "(absolute or with ..): refused", true);
		return 0;
	}
	if (size > t->max_member) {
		char why[128];

		snprintf(why, sizeof(why), "%llu bytes, over the cap of %llu: "
		    "skipped", (unsigned long long)size,
		    (unsigned long long)t->max_member);
		if (t->cb.refused)
			t->cb.refused(t->cb.arg, clean, why, true);
		return 0;
	}
	e.path = clean;
	e.size = size;
	e.mtime = mtime;
	r = t->cb.member ? t->cb.member(t->cb.arg, &e) : 0;
	if (r < 0)
		return fail(t, "stopped by the reader");
	t->want = r == 1;
	if (t->want && size == 0 && t->cb.end && t->cb.end(t->cb.arg) < 0)
		return fail(t, "stopped by the reader");
	return 0;
}

static bool
all_zero(const char *b)
{
	for (int i = 0; i < 512; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* A complete 512-byte header in t->hdr. */
static int
header(struct tar *t)
{
	char name[TAR_PATH_MAX + 160], type = t->hdr[156];
	uint64_t size, mtime = 0;

	if (all_zero(t->hdr)) {
		if (++t->zero_blocks >= 2)
			t->st = T_END;
		return 0;
	}
	t->zero_blocks = 0;
	if (!checksum_ok(t->hdr))
		return fail(t, t->members == 0 ? "not a tar archive (no valid "
		    "header at the start)" : "a damaged tar header (checksum)");
	if (num_field(t->hdr + 124, 12, &size) == -1)
		return fail(t, "a damaged tar header (size)");
	(void)num_field(t->hdr + 136, 12, &mtime);
	if (t->have_pax_size)
		size = t->pax_size;
	member_name(t, name, sizeof(name));
	if (type == 'L' || type == 'x' || type == 'K' || type == 'g') {
		if (size > TAR_META_MAX)
			return fail(t, "a tar long name or pax header too large");
		t->meta = type == 'L' ? M_LONGNAME : type == 'x' ? M_PAX : M_NONE;
		t->mlen = 0;
		t->left = size;
		t->pad = (size_t)((512 - size % 512) % 512);
		t->st = size > 0 ? T_META : (t->pad ? T_PAD : T_HEADER);
		t->have_pax_size = false;
		if (type == 'L' || type == 'x')
			t->have_long = false;
		return 0;
	}
	t->members++;
	t->have_long = false;
	t->have_pax_size = false;
	if (type == '0' || type == '\0' || type == '7')
		return regular(t, name, size, (int64_t)mtime);
	if (type == '5') {
		start_skip(t, 0);
		return 0;
	}
	if (t->cb.refused) {
		char target[101], clean[TAR_PATH_MAX];
		/* a link inside the archive is only left out; one that points
		 * out of it, a device or a FIFO is hostile */
		bool inside = (type == '1' || type == '2') &&
		    tar_path_clean(name, clean, sizeof(clean)) == 0 &&
		    (field_str(t->hdr + 157, 100, target),
		    tar_link_inside(clean, target, type == '1'));

		t->cb.refused(t->cb.arg, name, type_refusal(type), !inside);
	}
	/* links and devices carry no data; skip what the size says */
	start_skip(t, type == '1' || type == '2' ? 0 : size);
	return 0;
}

/* "LEN key=value\n" records: path and size are used. */
static int
pax_parse(struct tar *t)
{
	size_t i = 0;

	while (i < t->mlen) {
		char *sp, *eq;
		unsigned long len = strtoul(t->mbuf + i, &sp, 10);

		if (sp == t->mbuf + i || *sp != ' ' || len == 0 || len > t->mlen - i)
			return fail(t, "a damaged pax header");
		eq = memchr(sp, '=', len - (size_t)(sp - (t->mbuf + i)));
		if (eq != NULL && t->mbuf[i + len - 1] == '\n') {
			size_t klen = (size_t)(eq - sp - 1), vlen = (size_t)(t->mbuf + i + len - 1 - eq - 1);

			if (klen == 4 && memcmp(sp + 1, "path", 4) == 0 && vlen < TAR_PATH_MAX) {
				memcpy(t->longname, eq + 1, vlen);
				t->longname[vlen] = '\0';
				t->have_long = strlen(t->longname) == vlen;
			} else if (klen == 4 && memcmp(sp + 1, "size", 4) == 0) {
				char num[32];

				if (vlen == 0 || vlen >= sizeof(num))
					return fail(t, "a damaged pax size");
				memcpy(num, eq + 1, vlen);
				num[vlen] = '\0';
				for (size_t k = 0; k < vlen; k++)
					if (!isdigit((unsigned char)num[k]))
						return fail(t, "a damaged pax size");
				t->pax_size = strtoull(num, NULL, 10);
				t->have_pax_size = true;
			}
		}
		i += len;
	}
	return 0;
}

static int
meta_done(struct tar *t)
{
	t->mbuf[t->mlen] = '\0';
	if (t->meta == M_LONGNAME) {
		size_t n = strnlen(t->mbuf, t->mlen);

		if (n >= TAR_PATH_MAX)
			return fail(t, "a tar long name too long");
		memcpy(t->longname, t->mbuf, n);
		t->longname[n] = '\0';
		t->have_long = true;
	} else if (t->meta == M_PAX && pax_parse(t) == -1)
		return -1;
	t->st = t->pad ? T_PAD : T_HEADER;
	return 0;
}

static size_t
take_data(struct tar *t, const char *p, size_t n)
{
	size_t k = n < t->left ? n : (size_t)t->left;

	if (t->st == T_META) {
		memcpy(t->mbuf + t->mlen, p, k);
		t->mlen += k;
	} else if (t->want && k > 0 && t->cb.data(t->cb.arg, p, k) < 0) {
		fail(t, "stopped by the reader");
		return 0;
	}
	t->left -= k;
	return k;
}

static int
data_end(struct tar *t)
{
	if (t->st == T_META)
		return meta_done(t);
	if (t->want && t->cb.end && t->cb.end(t->cb.arg) < 0)
		return fail(t, "stopped by the reader");
	t->want = false;
	t->st = t->pad ? T_PAD : T_HEADER;
	return 0;
}

int
tar_feed(struct tar *t, const char *p, size_t n)
{
	while (n > 0) {
		size_t k;

		switch (t->st) {
		case T_FAILED:
			return -1;
		case T_END:
			return 0;	/* what follows the end blocks is ignored */
		case T_HEADER:
			k = 512 - t->hlen < n ? 512 - t->hlen : n;
			memcpy(t->hdr + t->hlen, p, k);
			t->hlen += k;
			if (t->hlen == 512) {
				t->hlen = 0;
				if (header(t) == -1)
					return -1;
			}
			break;
		case T_DATA:
		case T_META:
			k = take_data(t, p, n);
			if (t->st == T_FAILED)
				return -1;
			if (t->left == 0 && data_end(t) == -1)
				return -1;
			break;
		case T_PAD:
			k = t->pad < n ? t->pad : n;
			t->pad -= k;
			if (t->pad == 0)
				t->st = T_HEADER;
			break;
		default:
			return -1;
		}
		p += k;
		n -= k;
	}
	return 0;
}

int
tar_finish(struct tar *t)
{
	if (t->st == T_FAILED)
		return -1;
	if (t->st == T_END || (t->st == T_HEADER && t->hlen == 0 && t->members > 0))
		return 0;
	if (t->members == 0 && t->st == T_HEADER && t->hlen == 0)
		return fail(t, "an empty archive");
	return fail(t, t->st == T_DATA ? "the archive is truncated inside a "
	    "member" : "the archive is truncated inside a header");
}

/* ---- gzip ---------------------------------------------------------- */

struct tgz {
	struct tar	*tar;
	z_stream	 z;
	bool		 started, plain, zinit, in_member;
	unsigned char	 magic[2];
	size_t		 nmagic;
	char		 err[300];
	unsigned char	 out[65536];
};

struct tgz *
tgz_new(struct tar *t)
{
	struct tgz *g = calloc(1, sizeof(*g));

	if (g != NULL)
		g->tar = t;
	return g;
}

void
tgz_free(struct tgz *g)
{
	if (g == NULL)
		return;
	if (g->zinit)
		inflateEnd(&g->z);
	free(g);
}

const char *
tgz_error(const struct tgz *g)
{
	return g->err[0] ? g->err : tar_error(g->tar);
}

static int
tgz_fail(struct tgz *g, const char *why)
{
	if (g->err[0] == '\0')
		snprintf(g->err, sizeof(g->err), "%s", why);
	return -1;
}

static int
tgz_tar(struct tgz *g, const void *p, size_t n)
{
	if (tar_feed(g->tar, p, n) == -1) {
		snprintf(g->err, sizeof(g->err), "%s", tar_error(g->tar));
		return -1;
	}
	return 0;
}

static int
inflate_some(struct tgz *g, const unsigned char *p, size_t n)
{
	g->z.next_in = (unsigned char *)p;
	g->z.avail_in = (uInt)n;
	for (;;) {
		int r;

		if (!g->in_member) {
			if (g->z.avail_in == 0)
				break;
			/* another gzip member after the last: go on */
			if (inflateReset(&g->z) != Z_OK)
				return tgz_fail(g, "gzip: cannot restart");
			g->in_member = true;
		}
		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		r = inflate(&g->z, Z_NO_FLUSH);
		if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
			return tgz_fail(g, g->z.msg ? g->z.msg : "gzip: corrupt data");
		if (tgz_tar(g, g->out, sizeof(g->out) - g->z.avail_out) == -1)
			return -1;
		if (r == Z_STREAM_END) {
			g->in_member = false;
			continue;
		}
		if (g->z.avail_out != 0)
			break;	/* all input taken, nothing more pending */
	}
	return 0;
}

int
tgz_feed(struct tgz *g, const void *pv, size_t n)
{
	const unsigned char *p = pv;

	if (g->err[0])
		return -1;
	if (!g->started) {
		while (g->nmagic < 2 && n > 0) {
			g->magic[g->nmagic++] = *p++;
			n--;
		}
		if (g->nmagic < 2)
			return 0;
		g->started = true;
		g->plain = !(g->magic[0] == 0x1f && g->magic[1] == 0x8b);
		if (g->plain) {
			if (tgz_tar(g, g->magic, 2) == -1)
				return -1;
		} else {
			if (inflateInit2(&g->z, 15 + 16) != Z_OK)
				return tgz_fail(g, "gzip: out of memory");
			g->zinit = g->in_member = true;
			if (inflate_some(g, g->magic, 2) == -1)
				return -1;
		}
	}
	if (n == 0)
		return 0;
	return g->plain ? tgz_tar(g, p, n) : inflate_some(g, p, n);
}

int
tgz_finish(struct tgz *g)
{
	if (g->err[0])
		return -1;
	if (!g->started)
		return tgz_fail(g, g->nmagic == 0 ? "an empty file" :
		    "not a tar or gzip file (too short)");
	if (!g->plain && g->in_member) {
		if (tar_finish(g->tar) == 0)
			return tgz_fail(g, "the gzip stream is truncated (the "
			    "tar inside ended; its gzip trailer is missing)");
		snprintf(g->err, sizeof(g->err), "the gzip stream is truncated "
		    "(%s)", tar_error(g->tar));
		return -1;
	}
	if (tar_finish(g->tar) == -1) {
		snprintf(g->err, sizeof(g->err), "%s", tar_error(g->tar));
		return -1;
	}
	return 0;
}
