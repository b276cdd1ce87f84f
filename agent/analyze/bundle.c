/*
 * bundle: a vm-support bundle read once (bundle.h).  The layout and where
 * it is documented: tests/fixtures/bundle/SOURCES.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../lib/buf.h"
#include "../lib/log.h"
#include "bundle.h"
#include "tarstream.h"

enum kind { K_OTHER, K_CMD, K_LOG, K_LOGBUF, K_KEY };

/* Log pieces that came before the piece they follow: kept until it comes
 * (at most this much), then read in order. */
#define PENDING_MAX	(64u * 1024 * 1024)

struct logrd {
	bool		 open;
	char		 base[TAR_PATH_MAX];	/* path without .FRAG-N */
	int		 frag;			/* last piece read; -1 whole */
	bool		 gz, zinit, zdone, zbroken;
	z_stream	 z;
	char		 line[BUNDLE_LINE_MAX];
	size_t		 llen;
	bool		 ltrunc;
	unsigned char	 out[65536];
};

struct rd {
	const struct bundle_log_cb *cb;
	struct bundle	*b;
	struct frag_store cmds;
	enum kind	 kind;		/* of the current member */
	char		 name[TAR_PATH_MAX];	/* commands/ name of it */
	struct buf	 acc;
	bool		 acc_over;
	struct logrd	 lg;
	struct frag_store pend;		/* log pieces waiting for their turn */
	struct buf	 pbuf;
	uint64_t	 bytes;
	uint64_t	 next_progress;
};

static void
gapf(struct rd *r, const char *fmt, const char *a, const char *b)
{
	char line[TAR_PATH_MAX + 400];

	snprintf(line, sizeof(line), fmt, a, b);
	if (r->cb->gap)
		r->cb->gap(r->cb->arg, line);
}

bool
bundle_cmd_wanted(const char *name)
{
	static const char *const pfx[] = { "localcli_network-nic",
	    "esxcli_network-nic", "localcli_storage-", "esxcli_storage-",
	    "localcli_nvme-", "esxcli_nvme-", "nicinfo.sh.txt",
	    "smartinfo.txt", "vdq_", "uname_-a.txt", "vmware_-vl.txt",
	    "localcli_system-stats-uptime-get.txt", NULL };

	for (int i = 0; pfx[i] != NULL; i++)
		if (strncmp(name, pfx[i], strlen(pfx[i])) == 0)
			return true;
	return false;
}

int
bundle_log_name(const char *rel, char *program, size_t len, int *rot, bool *gz)
{
	char base[TAR_PATH_MAX];
	const char *f;
	char *dot;
	int idx;
	size_t n;

	if (strncmp(rel, "var/run/log/", 12) == 0)
		f = rel + 12;
	else if (strncmp(rel, "var/log/", 8) == 0)
		f = rel + 8;
	else
		return -1;
	if (strchr(f, '/') != NULL || f[0] == '.' || f[0] == '\0')
		return -1;
	(void)frag_split(f, base, sizeof(base), &idx);
	n = strlen(base);
	*gz = n > 3 && strcmp(base + n - 3, ".gz") == 0;
	if (*gz)
		base[n -= 3] = '\0';
	*rot = -1;
	dot = strrchr(base, '.');
	if (n > 4 && strcmp(base + n - 4, ".log") == 0)
		base[n - 4] = '\0';
	else if (dot != NULL && dot[1] != '\0' &&
	    strspn(dot + 1, "0123456789") == strlen(dot + 1) && strlen(dot + 1) < 6) {
		*rot = atoi(dot + 1);
		*dot = '\0';
	} else
		return -1;
	if (base[0] == '\0' || strlen(base) >= len)
		return -1;
	snprintf(program, len, "%s", base);
	return 0;
}

/* The path inside the bundle: the top folder taken off. */
static const char *
relpath(struct rd *r, const char *path)
{
	const char *s = strchr(path, '/');

	if (strncmp(path, "commands/", 9) == 0 || strncmp(path, "var/", 4) == 0 ||
	    strcmp(path, "vm-support-incident-key") == 0)
		return path;
	if (s == NULL)
		return path;
	if (r->b->top[0] == '\0' && (size_t)(s - path) < sizeof(r->b->top)) {
		memcpy(r->b->top, path, (size_t)(s - path));
		r->b->top[s - path] = '\0';
	}
	return s + 1;
}

static enum kind
classify(const char *rel, char *name, size_t len)
{
	char prog[256], base[TAR_PATH_MAX];
	int rot, idx;
	bool gz;

	if (strcmp(rel, "vm-support-incident-key") == 0)
		return K_KEY;
	if (strncmp(rel, "commands/", 9) == 0 && strchr(rel + 9, '/') == NULL) {
		(void)frag_split(rel + 9, base, sizeof(base), &idx);
		if (!bundle_cmd_wanted(base))
			return K_OTHER;
		snprintf(name, len, "%s", rel + 9);
		return K_CMD;
	}
	if (bundle_log_name(rel, prog, sizeof(prog), &rot, &gz) == 0)
		return K_LOG;
	return K_OTHER;
}

/* ---- logs ---------------------------------------------------------- */

static void
emit_line(struct rd *r)
{
	struct logrd *l = &r->lg;
	size_t n = l->llen;

	if (n > 0 && l->line[n - 1] == '\r')
		n--;
	r->cb->line(r->cb->arg, l->line, n, l->ltrunc);
	l->llen = 0;
	l->ltrunc = false;
}

static void
split_lines(struct rd *r, const char *p, size_t n)
{
	struct logrd *l = &r->lg;

	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n, room = sizeof(l->line) - l->llen;

		if (k > room) {
			l->ltrunc = true;
			memcpy(l->line + l->llen, p, room);
			l->llen += room;
		} else {
			memcpy(l->line + l->llen, p, k);
			l->llen += k;
		}
		if (nl == NULL)
			return;
		emit_line(r);
		p += k + 1;
		n -= k + 1;
	}
}

static void
lg_close(struct rd *r)
{
	struct logrd *l = &r->lg;

	if (!l->open)
		return;
	if (l->llen > 0 || l->ltrunc)
		emit_line(r);
	if (l->gz && !l->zdone && !l->zbroken)
		gapf(r, "%s: the gzip stream ends early%s; the lines before "
		    "are used", l->base, "");
	if (l->zinit)
		inflateEnd(&l->z);
	l->zinit = false;
	l->open = false;
	r->cb->close(r->cb->arg);
}

static void
lg_open(struct rd *r, const char *rel)
{
	struct logrd *l = &r->lg;
	char base[TAR_PATH_MAX], prog[256];
	int idx, rot;
	bool gz;

	(void)frag_split(rel, base, sizeof(base), &idx);
	if (l->open && idx > 0 && strcmp(base, l->base) == 0 && idx == l->frag + 1) {
		l->frag = idx;	/* the next piece of the same file */
		return;
	}
	lg_close(r);
	if (idx > 0)
		gapf(r, "%s: read from a piece that does not follow the one "
		    "before (%s): lines at the cuts may be broken", base, rel);
	(void)bundle_log_name(rel, prog, sizeof(prog), &rot, &gz);
	memset(&l->z, 0, sizeof(l->z));
	snprintf(l->base, sizeof(l->base), "%s", base);
	l->frag = idx;
	l->gz = gz;
	l->zdone = l->zbroken = false;
	l->llen = 0;
	l->ltrunc = false;
	l->zinit = gz && inflateInit2(&l->z, 15 + 16) == Z_OK;
	if (gz && !l->zinit)
		l->zbroken = true;
	l->open = true;
	r->b->logs_seen++;
	r->cb->open(r->cb->arg, base, prog, rot);
}

static void
log_data(struct rd *r, const char *p, size_t n)
{
	struct logrd *l = &r->lg;

	if (!l->gz) {
		split_lines(r, p, n);
		return;
	}
	if (l->zbroken || l->zdone)
		return;
	l->z.next_in = (unsigned char *)p;
	l->z.avail_in = (uInt)n;
	do {
		int zr;

		l->z.next_out = l->out;
		l->z.avail_out = sizeof(l->out);
		zr = inflate(&l->z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			l->zbroken = true;
			gapf(r, "%s: damaged gzip data (%s); the lines before "
			    "are used", l->base, l->z.msg ? l->z.msg : "inflate");
			return;
		}
		split_lines(r, (char *)l->out, sizeof(l->out) - l->z.avail_out);
		if (zr == Z_STREAM_END) {
			l->zdone = true;
			return;
		}
	} while (l->z.avail_in > 0 || l->z.avail_out == 0);
}

/* ---- members ------------------------------------------------------- */

/*
 * A log piece that does not follow the one being read (a tar of an
 * unpacked bundle holds them in directory order): kept in memory, within
 * PENDING_MAX, until the piece before it has been read.
 */
static bool
early_piece(struct rd *r, const char *rel, uint64_t size)
{
	char base[TAR_PATH_MAX];
	int idx;

	(void)frag_split(rel, base, sizeof(base), &idx);
	if (idx <= 0 || (r->lg.open && strcmp(base, r->lg.base) == 0 &&
	    idx == r->lg.frag + 1))
		return false;
	return size <= PENDING_MAX - r->pend.bytes;
}

/* The kept pieces that now follow the one read last, in turn. */
static void
drain(struct rd *r)
{
	bool more = true;

	while (more && r->lg.open) {
		more = false;
		for (size_t i = 0; i < r->pend.n; i++) {
			struct frag_piece *p = &r->pend.v[i];

			if (p->data == NULL || p->idx != r->lg.frag + 1 ||
			    strcmp(p->base, r->lg.base) != 0)
				continue;
			r->lg.frag = p->idx;
			log_data(r, p->data, p->len);
			r->pend.bytes -= p->len;
			free(p->data);
			p->data = NULL;
			more = true;
		}
	}
}

static int
pend_cmp(const void *a, const void *b)
{
	const struct frag_piece *x = a, *y = b;
	int c = strcmp(x->base, y->base);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* At the end: pieces whose turn never came (one before them is missing),
 * read in order, each gap said by lg_open(). */
static void
flush_pending(struct rd *r)
{
	char name[TAR_PATH_MAX + 16];

	if (r->pend.n > 1)
		qsort(r->pend.v, r->pend.n, sizeof(*r->pend.v), pend_cmp);
	for (size_t i = 0; i < r->pend.n; i++) {
		struct frag_piece *p = &r->pend.v[i];

		if (p->data == NULL)
			continue;
		snprintf(name, sizeof(name), "%s.FRAG-%05d", p->base, p->idx);
		lg_open(r, name);
		log_data(r, p->data, p->len);
		free(p->data);
		p->data = NULL;
	}
	lg_close(r);
}

/* vmkwarning.log: the VMkernel's warning and alert lines, a copy of what
 * vmkernel.log holds (docs/analyze.md). */
static bool
is_vmkwarning(const char *rel)
{
	char prog[256];
	int rot;
	bool gz;

	return bundle_log_name(rel, prog, sizeof(prog), &rot, &gz) == 0 &&
	    strcmp(prog, "vmkwarning") == 0;
}

static int
m_member(void *arg, const struct tar_entry *e)
{
	struct rd *r = arg;
	const char *rel = relpath(r, e->path);

	r->kind = classify(rel, r->name, sizeof(r->name));
	switch (r->kind) {
	case K_KEY:
		r->b->incident_key = true;
		return 0;
	case K_CMD:
		if (e->size > BUNDLE_CMD_MAX) {
			gapf(r, "%s: larger than the %s cap for a command "
			    "output: not used", rel, "32 MiB");
			return 0;
		}
		buf_reset(&r->acc);
		r->acc_over = false;
		if (e->mtime > r->b->time_s)
			r->b->time_s = e->mtime;
		return 1;
	case K_LOG:
		if (is_vmkwarning(rel)) {
			gapf(r, "%s: not read: its lines are vmkernel's warnings, "
			    "read in vmkernel.log (%s)", rel, "no alert twice");
			return 0;
		}
		if (early_piece(r, rel, e->size)) {
			r->kind = K_LOGBUF;
			snprintf(r->name, sizeof(r->name), "%s", rel);
			buf_reset(&r->pbuf);
			return 1;
		}
		lg_open(r, rel);
		return 1;
	default:
		return 0;
	}
}

static int
m_data(void *arg, const char *p, size_t n)
{
	struct rd *r = arg;

	r->bytes += n;
	if (r->cb->progress && r->bytes >= r->next_progress) {
		r->cb->progress(r->cb->arg, r->bytes);
		r->next_progress = r->bytes + (64u << 20);
	}
	if (r->kind == K_LOG)
		log_data(r, p, n);
	else if (r->kind == K_LOGBUF)
		(void)buf_append(&r->pbuf, p, n);	/* sized up front */
	else if (r->kind == K_CMD && !r->acc_over && buf_append(&r->acc, p, n) == -1)
		r->acc_over = true;
	return 0;
}

static int
m_end(void *arg)
{
	struct rd *r = arg;
	size_t len = r->acc.len;
	char *d;

	if (r->kind == K_LOG)
		drain(r);
	if (r->kind == K_LOGBUF) {
		size_t pl = r->pbuf.len;
		char *pd = pl ? buf_steal(&r->pbuf) : calloc(1, 1);

		if (pd == NULL || frag_add(&r->pend, r->name, pd, pl) == -1)
			gapf(r, "%s: %s", r->name, "a piece that came early could "
			    "not be kept: not read");
	}
	if (r->kind != K_CMD)
		return 0;
	if (r->acc_over) {
		gapf(r, "commands/%s: %s", r->name, "over the memory cap: not used");
		return 0;
	}
	d = len ? buf_steal(&r->acc) : calloc(1, 1);
	if (d == NULL || frag_add(&r->cmds, r->name, d, len) == -1)
		gapf(r, "commands/%s: %s", r->name, "over the memory budget for "
		    "command outputs: not used");
	buf_reset(&r->acc);
	return 0;
}

static void
m_refused(void *arg, const char *path, const char *why, bool hostile)
{
	struct rd *r = arg;
	const char *rel = relpath(r, path);

	gapf(r, "%s: %s", path, why);
	/* ESXi 6.5 and later keep /var/log/NAME as links to /var/run/log and
	 * /scratch/log: one under var/log/ is left out, never followed, and
	 * not held against the bundle */
	if (hostile && strncmp(rel, "var/log/", 8) == 0 && strstr(why, "link") != NULL)
		hostile = false;
	if (hostile && r->b->hostile[0] == '\0')
		snprintf(r->b->hostile, sizeof(r->b->hostile), "%.200s: %s", path, why);
}

/* ---- a .tgz -------------------------------------------------------- */

static int
read_archive(struct rd *r, int fd)
{
	static const struct tar_cb cb0 = { m_member, m_data, m_end, m_refused, NULL };
	struct tar_cb cb = cb0;
	struct tar *t;
	struct tgz *g;
	char *buf = malloc(1 << 16);
	ssize_t n;
	int rc = 0;

	cb.arg = r;
	t = tar_new(&cb, BUNDLE_MEMBER_MAX);
	g = t ? tgz_new(t) : NULL;
	if (buf == NULL || g == NULL) {
		snprintf(r->b->err, sizeof(r->b->err), "out of memory");
		rc = -1;
	}
	while (rc == 0) {
		n = read(fd, buf, 1 << 16);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(r->b->err, sizeof(r->b->err), "read error: %s",
			    log_errstr(errno));
			rc = 1;
		} else if (tgz_feed(g, buf, (size_t)n) == -1)
			rc = 1;
	}
	if (rc == 0 && tgz_finish(g) == -1)
		rc = 1;
	if (rc == 1 && r->b->err[0] == '\0')
		snprintf(r->b->err, sizeof(r->b->err), "%s", tgz_error(g));
	if (rc == 1 && tar_members(t) == 0)
		rc = -1;
	if (r->b->hostile[0] != '\0') {
		size_t el = rc == 0 ? 0 : strlen(r->b->err);

		snprintf(r->b->err + el, sizeof(r->b->err) - el, "%sa hostile member: %s",
		    el ? "; and " : "", r->b->hostile);
		rc = rc == 0 ? 1 : rc;
	}
	tgz_free(g);
	tar_free(t);
	free(buf);
	return rc;
}

/* ---- an unpacked directory ---------------------------------------- */

struct dent {
	char	 rel[TAR_PATH_MAX];
	char	 prog[256];
	int	 rot, frag;
	bool	 log;
	uint64_t size;
	int64_t	 mtime;
};

struct dlist {
	struct dent	*v;
	size_t		 n, cap;
};

static int
dent_cmp(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;
	int c;

	if (x->log != y->log)
		return x->log ? 1 : -1;
	if (!x->log)
		return strcmp(x->rel, y->rel);
	/* a log's rotations oldest first: the highest number, ..., 0, the
	 * current one; pieces in order */
	c = strcmp(x->prog, y->prog);
	if (c == 0) {
		int rx = x->rot < 0 ? -1 : x->rot, ry = y->rot < 0 ? -1 : y->rot;

		if (rx != ry)
			return rx == -1 ? 1 : ry == -1 ? -1 : ry - rx;
		c = strncmp(x->rel, y->rel, 9);	/* var/run/log before var/log */
		if (c == 0)
			c = (x->frag > y->frag) - (x->frag < y->frag);
	}
	return c;
}

static int
dlist_add(struct dlist *l, const char *rel, const struct stat *st)
{
	struct dent *d;
	bool gz;

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		struct dent *nv = realloc(l->v, nc * sizeof(*nv));

		if (nv == NULL)
			return -1;
		l->v = nv;
		l->cap = nc;
	}
	d = &l->v[l->n++];
	memset(d, 0, sizeof(*d));
	snprintf(d->rel, sizeof(d->rel), "%s", rel);
	d->size = (uint64_t)st->st_size;
	d->mtime = st->st_mtime;
	d->log = bundle_log_name(rel, d->prog, sizeof(d->prog), &d->rot, &gz) == 0;
	{
		char base[TAR_PATH_MAX];

		(void)frag_split(rel, base, sizeof(base), &d->frag);
	}
	return 0;
}

/* Open a directory under root by a relative path, no link followed. */
static int
open_dir_nofollow(int root, const char *rel)
{
	char part[TAR_PATH_MAX];
	int fd = dup(root);

	snprintf(part, sizeof(part), "%s", rel);
	for (char *s = part, *e; fd >= 0 && s && *s; s = e) {
		int nfd;

		e = strchr(s, '/');
		if (e)
			*e++ = '\0';
		nfd = openat(fd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
	}
	return fd;
}

static void
list_dir(struct rd *r, int root, const char *sub, struct dlist *l)
{
	int fd = open_dir_nofollow(root, sub);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (de = readdir(d); de != NULL; de = readdir(d)) {
		char rel[TAR_PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
		    (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		snprintf(rel, sizeof(rel), "%s%s%s", sub, *sub ? "/" : "", de->d_name);
		if (S_ISLNK(st.st_mode)) {
			char target[TAR_PATH_MAX];
			ssize_t tl = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);

			target[tl > 0 ? tl : 0] = '\0';
			m_refused(r, rel, "a symbolic link (not followed)",
			    tl <= 0 || !tar_link_inside(rel, target, false));
		}
		else if (S_ISREG(st.st_mode) && (*sub != '\0' ||
		    strcmp(de->d_name, "vm-support-incident-key") == 0))
			(void)dlist_add(l, rel, &st);
	}
	closedir(d);
}

static void
feed_file(struct rd *r, int root, const struct dent *d, char *buf, size_t blen)
{
	struct tar_entry e = { d->rel, d->size, d->mtime };
	char dir[TAR_PATH_MAX];
	const char *slash = strrchr(d->rel, '/');
	int dfd, fd;
	ssize_t n;

	if (d->size > BUNDLE_MEMBER_MAX) {
		gapf(r, "%s: %s", d->rel, "larger than the 8 GiB cap: skipped");
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - d->rel) : 0, d->rel);
	dfd = open_dir_nofollow(root, dir);
	fd = dfd >= 0 ? openat(dfd, slash ? slash + 1 : d->rel,
	    O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		gapf(r, "%s: cannot be read (%s)", d->rel, log_errstr(errno));
		return;
	}
	if (m_member(r, &e) == 1) {
		for (n = read(fd, buf, blen); n > 0; n = read(fd, buf, blen))
			m_data(r, buf, (size_t)n);
		if (n < 0)
			gapf(r, "%s: read error (%s); what was read is used",
			    d->rel, log_errstr(errno));
		m_end(r);
	}
	close(fd);
}

static bool
is_dir_at(int root, const char *name)
{
	struct stat st;

	return fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* The folder holding commands/ or var/: path itself or its one subfolder. */
static int
find_root(struct rd *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub = -1;
	DIR *d;
	struct dirent *de;
	const char *base = strrchr(path, '/');

	if (fd < 0 || is_dir_at(fd, "commands") || is_dir_at(fd, "var")) {
		if (fd >= 0)
			snprintf(r->b->top, sizeof(r->b->top), "%s", base ? base + 1 : path);
		return fd;
	}
	d = fdopendir(dup(fd));
	for (de = d ? readdir(d) : NULL; de != NULL; de = readdir(d)) {
		int c;

		if (de->d_name[0] == '.' || !is_dir_at(fd, de->d_name))
			continue;
		c = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (c >= 0 && (is_dir_at(c, "commands") || is_dir_at(c, "var"))) {
			if (sub >= 0)
				close(sub);
			sub = c;
			snprintf(r->b->top, sizeof(r->b->top), "%s", de->d_name);
		} else if (c >= 0)
			close(c);
	}
	if (d)
		closedir(d);
	close(fd);
	return sub;
}

static int
read_directory(struct rd *r, const char *path)
{
	static const char *const subs[] = { "", "commands", "var/run/log", "var/log", NULL };
	struct dlist l = { NULL, 0, 0 };
	int root = find_root(r, path);
	char *buf;

	if (root < 0) {
		snprintf(r->b->err, sizeof(r->b->err), "no commands/ or var/ "
		    "folder in it (nor in one folder inside)");
		return -1;
	}
	for (int i = 0; subs[i] != NULL; i++)
		list_dir(r, root, subs[i], &l);
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), dent_cmp);
	buf = malloc(1 << 16);
	for (size_t i = 0; buf != NULL && i < l.n; i++)
		feed_file(r, root, &l.v[i], buf, 1 << 16);
	free(buf);
	free(l.v);
	close(root);
	if (r->b->hostile[0] != '\0') {
		snprintf(r->b->err, sizeof(r->b->err), "a hostile entry: %s",
		    r->b->hostile);
		return 1;
	}
	return 0;
}

/* ---- the bundle ---------------------------------------------------- */

static void
cmd_gap(void *arg, const char *line)
{
	char l[700];

	snprintf(l, sizeof(l), "commands/%s", line);
	if (((struct rd *)arg)->cb->gap)
		((struct rd *)arg)->cb->gap(((struct rd *)arg)->cb->arg, l);
}

int
bundle_read(const char *path, const struct bundle_log_cb *cb, struct bundle *b)
{
	struct rd *r = calloc(1, sizeof(*r));
	struct stat st;
	long n;
	int rc, fd;

	memset(b, 0, sizeof(*b));
	if (r == NULL) {
		snprintf(b->err, sizeof(b->err), "out of memory");
		return -1;
	}
	r->cb = cb;
	r->b = b;
	frag_store_init(&r->cmds, BUNDLE_CMDS_MAX);
	frag_store_init(&r->pend, PENDING_MAX);
	buf_init(&r->acc, BUNDLE_CMD_MAX);
	buf_init(&r->pbuf, PENDING_MAX);
	if (stat(path, &st) == -1) {
		snprintf(b->err, sizeof(b->err), "%s", log_errstr(errno));
		rc = -1;
	} else if (S_ISDIR(st.st_mode))
		rc = read_directory(r, path);
	else if (!S_ISREG(st.st_mode)) {
		snprintf(b->err, sizeof(b->err), "not a file or a directory");
		rc = -1;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(b->err, sizeof(b->err), "%s", log_errstr(errno));
			rc = -1;
		} else {
			rc = read_archive(r, fd);
			close(fd);
		}
	}
	lg_close(r);
	flush_pending(r);
	n = frag_join(&r->cmds, &b->cmds, cmd_gap, r);
	b->ncmds = n > 0 ? (size_t)n : 0;
	if (rc == 0 && b->ncmds == 0 && b->logs_seen == 0 && !b->incident_key) {
		snprintf(b->err, sizeof(b->err), "not a vm-support bundle (no "
		    "commands/ output nor var/run/log/ or var/log/ log in it)");
		rc = -1;
	} else if (rc == 1 && b->ncmds == 0 && b->logs_seen == 0 && !b->incident_key)
		rc = -1;	/* nothing usable before what went wrong: b->err */
	buf_free(&r->acc);
	buf_free(&r->pbuf);
	frag_store_free(&r->cmds);
	frag_store_free(&r->pend);
	free(r);
	return rc;
}

void
bundle_free(struct bundle *b)
{
	frag_files_free(b->cmds, b->ncmds);
	b->cmds = NULL;
	b->ncmds = 0;
}

const char *
bundle_cmd(const struct bundle *b, const char *name, size_t *len)
{
	size_t lo = 0, hi = b->ncmds;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, b->cmds[mid].name);

		if (c == 0) {
			*len = b->cmds[mid].len;
			return b->cmds[mid].data;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
