/*
 * frag: the pieces of split files, joined (frag.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frag.h"

#define SUFFIX	".FRAG-"

int
frag_split(const char *name, char *base, size_t baselen, int *idx)
{
	size_t n = strlen(name), sl = strlen(SUFFIX);
	const char *s;
	int v = 0;

	*idx = -1;
	if (n > sl + 5) {
		s = name + n - 5;
		if (memcmp(s - sl, SUFFIX, sl) == 0) {
			int i;

			for (i = 0; i < 5 && s[i] >= '0' && s[i] <= '9'; i++)
				v = v * 10 + (s[i] - '0');
			if (i == 5) {
				n -= sl + 5;
				*idx = v;
			}
		}
	}
	if (n >= baselen)
		return -1;
	memcpy(base, name, n);
	base[n] = '\0';
	return *idx >= 0 ? 0 : -1;
}

void
frag_store_init(struct frag_store *s, size_t max_bytes)
{
	memset(s, 0, sizeof(*s));
	s->max_bytes = max_bytes;
}

void
frag_store_free(struct frag_store *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].base);
		free(s->v[i].data);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int
frag_add(struct frag_store *s, const char *name, char *data, size_t len)
{
	size_t nl = strlen(name) + 1;
	char *base = malloc(nl);
	int idx;

	if (base == NULL || len > s->max_bytes - s->bytes) {
		free(base);
		free(data);
		return -1;
	}
	(void)frag_split(name, base, nl, &idx);
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		struct frag_piece *nv = realloc(s->v, nc * sizeof(*nv));

		if (nv == NULL) {
			free(base);
			free(data);
			return -1;
		}
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = (struct frag_piece){ base, idx, data, len };
	s->bytes += len;
	return 0;
}

static int
piece_cmp(const void *a, const void *b)
{
	const struct frag_piece *x = a, *y = b;
	int c = strcmp(x->base, y->base);

	if (c != 0)
		return c;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

void
frag_files_free(struct frag_file *f, size_t n)
{
	for (size_t i = 0; f != NULL && i < n; i++) {
		free(f[i].name);
		free(f[i].data);
	}
	free(f);
}

/* v[0..k) are one base's pieces, sorted: whether they make a file. */
static const char *
set_problem(const struct frag_piece *v, size_t k)
{
	if (v[0].idx == -1)
		return k == 1 ? NULL : "both whole and in .FRAG pieces";
	if (v[0].idx != 0)
		return "its first .FRAG piece (00000) is missing";
	for (size_t i = 1; i < k; i++) {
		if (v[i].idx == v[i - 1].idx)
			return "a .FRAG piece is there twice";
		if (v[i].idx != v[i - 1].idx + 1)
			return "a .FRAG piece is missing in the middle";
	}
	return NULL;
}

static int
join_set(const struct frag_piece *v, size_t k, struct frag_file *f)
{
	size_t len = 0, o = 0;

	for (size_t i = 0; i < k; i++)
		len += v[i].len;
	f->name = strdup(v[0].base);
	f->data = malloc(len + 1);
	if (f->name == NULL || f->data == NULL) {
		free(f->name);
		free(f->data);
		return -1;
	}
	for (size_t i = 0; i < k; i++) {
		if (v[i].len > 0)
			memcpy(f->data + o, v[i].data, v[i].len);
		o += v[i].len;
	}
	f->data[len] = '\0';
	f->len = len;
	return 0;
}

long
frag_join(struct frag_store *s, struct frag_file **out,
    void (*gap)(void *, const char *), void *arg)
{
	struct frag_file *f = calloc(s->n ? s->n : 1, sizeof(*f));
	size_t nf = 0, i = 0, k;

	*out = NULL;
	if (f == NULL) {
		frag_store_free(s);
		return -1;
	}
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), piece_cmp);
	while (i < s->n) {
		const char *why;

		for (k = 1; i + k < s->n && strcmp(s->v[i].base, s->v[i + k].base) == 0; k++)
			;
		why = set_problem(s->v + i, k);
		if (why != NULL) {
			char line[512];

			snprintf(line, sizeof(line), "%s: %s; not used", s->v[i].base, why);
			if (gap)
				gap(arg, line);
		} else if (join_set(s->v + i, k, &f[nf]) == 0)
			nf++;
		else {
			frag_files_free(f, nf);
			frag_store_free(s);
			return -1;
		}
		i += k;
	}
	frag_store_free(s);
	*out = f;
	return (long)nf;
}
