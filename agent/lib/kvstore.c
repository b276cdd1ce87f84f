/*
 * kvstore: a small persistent string map (see kvstore.h for the format).
 * Kept as a sorted array: collectors hold tens to a few thousand keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "kvstore.h"
#include "log.h"

#define KV_FILE_MAX	(16u * 1024 * 1024)

struct kventry {
	char	*key;
	char	*value;
};

struct kvstore {
	char		*path;
	struct kventry	*v;
	size_t		 n, cap;
	bool		 dirty;
};

/* Index of key, or -(insertion point) - 1. */
static long
kv_find(const struct kvstore *kv, const char *key)
{
	size_t lo = 0, hi = kv->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(kv->v[mid].key, key);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

const char *
kv_get(const struct kvstore *kv, const char *key)
{
	long i = kv_find(kv, key);

	return i >= 0 ? kv->v[i].value : NULL;
}

int
kv_set(struct kvstore *kv, const char *key, const char *value)
{
	long i = kv_find(kv, key);
	char *k, *v;
	size_t at;

	if (i >= 0) {
		if (strcmp(kv->v[i].value, value) == 0)
			return 0;
		v = strdup(value);
		if (v == NULL)
			return -1;
		free(kv->v[i].value);
		kv->v[i].value = v;
		kv->dirty = true;
		return 0;
	}
	if (kv->n == kv->cap) {
		size_t ncap = kv->cap ? kv->cap * 2 : 32;
		struct kventry *nv = realloc(kv->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return -1;
		kv->v = nv;
		kv->cap = ncap;
	}
	k = strdup(key);
	v = strdup(value);
	if (k == NULL || v == NULL) {
		free(k);
		free(v);
		return -1;
	}
	at = (size_t)(-i - 1);
	memmove(&kv->v[at + 1], &kv->v[at], (kv->n - at) * sizeof(*kv->v));
	kv->v[at].key = k;
	kv->v[at].value = v;
	kv->n++;
	kv->dirty = true;
	return 0;
}

int
kv_del(struct kvstore *kv, const char *key)
{
	long i = kv_find(kv, key);

	if (i < 0)
		return 0;
	free(kv->v[i].key);
	free(kv->v[i].value);
	memmove(&kv->v[i], &kv->v[i + 1], (kv->n - (size_t)i - 1) * sizeof(*kv->v));
	kv->n--;
	kv->dirty = true;
	return 0;
}

int
kv_foreach(const struct kvstore *kv, const char *prefix,
    int (*cb)(void *, const char *, const char *), void *arg)
{
	size_t plen = prefix ? strlen(prefix) : 0, i;

	for (i = 0; i < kv->n; i++) {
		if (plen && strncmp(kv->v[i].key, prefix, plen) != 0)
			continue;
		if (cb(arg, kv->v[i].key, kv->v[i].value))
			return 1;
	}
	return 0;
}

bool
kv_dirty(const struct kvstore *kv)
{
	return kv->dirty;
}

static int
put_escaped(struct buf *b, const char *s)
{
	for (; *s; s++) {
		const char *e = NULL;

		if (*s == '\t')
			e = "\\t";
		else if (*s == '\n')
			e = "\\n";
		else if (*s == '\\')
			e = "\\\\";
		if (e ? buf_puts(b, e) : buf_putc(b, *s)) 
			return -1;
	}
	return 0;
}

/* Unescape s[0..n) in place into a new string. */
static char *
kv_unescape(const char *s, size_t n)
{
	char *o = malloc(n + 1), *p = o;
	size_t i;

	if (o == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			i++;
			*p++ = s[i] == 't' ? '\t' : s[i] == 'n' ? '\n' : s[i];
		} else
			*p++ = s[i];
	}
	*p = '\0';
	return o;
}

static void
kv_load(struct kvstore *kv)
{
	struct buf b;
	char tmp[8192], *line, *end;
	ssize_t n;
	int fd = fs_open_read(kv->path);

	if (fd == -1) {
		if (errno != ENOENT)
			log_warn("state file %s: %s", kv->path, log_errstr(errno));
		return;
	}
	buf_init(&b, KV_FILE_MAX);
	for (;;) {
		n = fs_read_upto(fd, tmp, sizeof(tmp));
		if (n <= 0)
			break;
		if (buf_append(&b, tmp, (size_t)n) == -1) {
			log_warn("state file %s is too large; ignoring the rest", kv->path);
			break;
		}
	}
	close(fd);
	for (line = b.data; line && *line; line = end + 1) {
		char *tab, *k, *v;

		end = strchr(line, '\n');
		if (end == NULL) {
			/* A torn last line (crash while writing is impossible with
			 * rename, but a hand edit is not): skip it. */
			break;
		}
		tab = memchr(line, '\t', (size_t)(end - line));
		if (tab == NULL)
			continue;
		k = kv_unescape(line, (size_t)(tab - line));
		v = kv_unescape(tab + 1, (size_t)(end - tab - 1));
		if (k && v)
			kv_set(kv, k, v);
		free(k);
		free(v);
	}
	buf_free(&b);
	kv->dirty = false;
}

struct kvstore *
kv_open(const char *path)
{
	struct kvstore *kv = calloc(1, sizeof(*kv));

	if (kv == NULL)
		return NULL;
	if (path != NULL) {
		kv->path = strdup(path);
		if (kv->path == NULL) {
			free(kv);
			return NULL;
		}
		kv_load(kv);
	}
	return kv;
}

void
kv_close(struct kvstore *kv)
{
	size_t i;

	if (kv == NULL)
		return;
	for (i = 0; i < kv->n; i++) {
		free(kv->v[i].key);
		free(kv->v[i].value);
	}
	free(kv->v);
	free(kv->path);
	free(kv);
}

int
kv_save(struct kvstore *kv)
{
	struct buf b;
	size_t i;
	int r;

	if (!kv->dirty || kv->path == NULL)
		return 0;
	buf_init(&b, KV_FILE_MAX);
	for (i = 0; i < kv->n; i++)
		if (put_escaped(&b, kv->v[i].key) || buf_putc(&b, '\t') ||
		    put_escaped(&b, kv->v[i].value) || buf_putc(&b, '\n')) {
			buf_free(&b);
			log_error("state %s: too large to save", kv->path);
			return -1;
		}
	r = fs_write_atomic(kv->path, b.data ? b.data : "", b.len, 0600);
	if (r == -1)
		log_error("cannot save state %s: %s", kv->path, log_errstr(errno));
	else
		kv->dirty = false;
	buf_free(&b);
	return r;
}
