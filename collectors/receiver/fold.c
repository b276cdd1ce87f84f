/*
 * fold: hostd's multi-line records put back together (syslogwire.h).
 *
 * vmsyslogd sends each line of a multi-line record as its own message;
 * the later lines start "-->" (ESXi 8.0 also marks them "+" in the local
 * file, not on the wire).  A record is kept per (host, program): every
 * message that is not a continuation ends the record before it and starts
 * a new one; a continuation is appended ("\n" + its text).  A record goes
 * out when the next record of its key starts, when its deadline passes
 * (deadline_ms after its last line: fold_due), or when max_keys records
 * are open and a new key needs a place (the oldest goes first).
 *
 * Memory: max_keys slots (host and program names cut at 255 and 63
 * bytes), each with a text buffer that grows to at most SYSLOG_MSG_MAX
 * (then the record is cut: truncated, counted) and is given back after a
 * long record.  The callback must not call fold_add or fold_due.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syslogwire.h"

#define HOST_LEN	256
#define PROG_LEN	64
#define BUF_KEEP	8192
#define BUF_MIN		512

struct rec {
	char		 host[HOST_LEN];
	char		 prog[PROG_LEN];
	uint32_t	 hash;
	int		 next;		/* bucket chain or free list; -1 ends */
	bool		 open;
	bool		 cut;
	char		*text;
	size_t		 len, cap;
	int64_t		 first_ms, last_ms;
};

struct fold {
	struct rec	*recs;
	size_t		 max_keys, nopen, nb;
	int		*buckets;
	int		 free_head;
	int64_t		 deadline;
	struct fold_counts c;
};

struct fold *
fold_new(size_t max_keys, int64_t deadline_ms)
{
	struct fold *fo;
	size_t i;

	if (max_keys == 0)
		max_keys = 1;
	if (max_keys > 1000000)
		max_keys = 1000000;
	fo = calloc(1, sizeof(*fo));
	if (fo == NULL)
		return NULL;
	fo->max_keys = max_keys;
	fo->deadline = deadline_ms;
	for (fo->nb = 16; fo->nb < max_keys * 2; fo->nb *= 2)
		;
	fo->recs = calloc(max_keys, sizeof(struct rec));
	fo->buckets = malloc(fo->nb * sizeof(int));
	if (fo->recs == NULL || fo->buckets == NULL) {
		fold_free(fo);
		return NULL;
	}
	for (i = 0; i < fo->nb; i++)
		fo->buckets[i] = -1;
	for (i = 0; i < max_keys; i++)
		fo->recs[i].next = i + 1 < max_keys ? (int)i + 1 : -1;
	fo->free_head = 0;
	return fo;
}

void
fold_free(struct fold *fo)
{
	size_t i;

	if (fo == NULL)
		return;
	for (i = 0; fo->recs != NULL && i < fo->max_keys; i++)
		free(fo->recs[i].text);
	free(fo->recs);
	free(fo->buckets);
	free(fo);
}

const struct fold_counts *
fold_counts(const struct fold *fo)
{
	return &fo->c;
}

size_t
fold_open(const struct fold *fo)
{
	return fo->nopen;
}

/* A name cut to fit its slot (the key is the cut name). */
static void
keycpy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* FNV-1a over host NUL program. */
static uint32_t
keyhash(const char *host, const char *prog)
{
	uint32_t h = 2166136261u;
	const unsigned char *p;

	for (p = (const unsigned char *)host; *p; p++)
		h = (h ^ *p) * 16777619u;
	h *= 16777619u;
	for (p = (const unsigned char *)prog; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

static int
find(struct fold *fo, uint32_t h, const char *host, const char *prog)
{
	int i;

	for (i = fo->buckets[h & (fo->nb - 1)]; i >= 0; i = fo->recs[i].next)
		if (fo->recs[i].hash == h && strcmp(fo->recs[i].host, host) == 0 &&
		    strcmp(fo->recs[i].prog, prog) == 0)
			return i;
	return -1;
}

/* The record at slot i goes to cb; the slot is free again. */
static void
emit(struct fold *fo, int i, fold_cb cb, void *arg)
{
	struct rec *r = &fo->recs[i];
	int *pp = &fo->buckets[r->hash & (fo->nb - 1)];

	cb(arg, r->host, r->prog, r->text ? r->text : "", r->len, r->first_ms,
	    r->cut);
	fo->c.records++;
	if (r->cut)
		fo->c.truncated++;
	while (*pp != i)
		pp = &fo->recs[*pp].next;
	*pp = r->next;
	r->open = false;
	r->len = 0;
	if (r->cap > BUF_KEEP) {
		free(r->text);
		r->text = NULL;
		r->cap = 0;
	}
	r->next = fo->free_head;
	fo->free_head = i;
	fo->nopen--;
}

/* Append text to record r, up to SYSLOG_MSG_MAX in all. */
static void
put(struct rec *r, const char *text, size_t len)
{
	size_t cap;
	char *p;

	if (len > SYSLOG_MSG_MAX - r->len) {
		len = SYSLOG_MSG_MAX - r->len;
		r->cut = true;
	}
	if (r->len + len > r->cap) {
		for (cap = r->cap ? r->cap : BUF_MIN; cap < r->len + len; cap *= 2)
			;
		if (cap > SYSLOG_MSG_MAX)
			cap = SYSLOG_MSG_MAX;
		p = realloc(r->text, cap);
		if (p == NULL) {
			r->cut = true;
			return;
		}
		r->text = p;
		r->cap = cap;
	}
	if (len > 0)
		memcpy(r->text + r->len, text, len);
	r->len += len;
}

/* A free slot for a new key (the oldest record goes out when full). */
static int
take_slot(struct fold *fo, fold_cb cb, void *arg)
{
	size_t k;
	int i, old = -1;

	if (fo->free_head < 0) {
		for (k = 0; k < fo->max_keys; k++)
			if (old < 0 || fo->recs[k].last_ms < fo->recs[old].last_ms)
				old = (int)k;
		fo->c.evicted++;
		emit(fo, old, cb, arg);
	}
	i = fo->free_head;
	fo->free_head = fo->recs[i].next;
	return i;
}

void
fold_add(struct fold *fo, const char *host, const char *program,
    const char *text, size_t len, bool continuation, int64_t now_ms,
    fold_cb cb, void *arg)
{
	char h[HOST_LEN], p[PROG_LEN];
	uint32_t hv;
	struct rec *r;
	int i;

	keycpy(h, sizeof(h), host ? host : "");
	keycpy(p, sizeof(p), program ? program : "");
	hv = keyhash(h, p);
	i = find(fo, hv, h, p);
	if (i >= 0 && continuation) {
		r = &fo->recs[i];
		fo->c.continuations++;
		put(r, "\n", 1);
		put(r, text, len);
		r->last_ms = now_ms;
		return;
	}
	if (i >= 0)
		emit(fo, i, cb, arg);
	i = take_slot(fo, cb, arg);
	r = &fo->recs[i];
	memcpy(r->host, h, sizeof(h));
	memcpy(r->prog, p, sizeof(p));
	r->hash = hv;
	r->open = true;
	r->cut = false;
	r->len = 0;
	r->first_ms = r->last_ms = now_ms;
	put(r, text, len);
	r->next = fo->buckets[hv & (fo->nb - 1)];
	fo->buckets[hv & (fo->nb - 1)] = i;
	fo->nopen++;
}

void
fold_cut(struct fold *fo, const char *host, const char *program)
{
	char h[HOST_LEN], p[PROG_LEN];
	int i;

	keycpy(h, sizeof(h), host ? host : "");
	keycpy(p, sizeof(p), program ? program : "");
	i = find(fo, keyhash(h, p), h, p);
	if (i >= 0)
		fo->recs[i].cut = true;
}

void
fold_due(struct fold *fo, int64_t now_ms, bool all, fold_cb cb, void *arg)
{
	size_t k;

	for (k = 0; k < fo->max_keys && fo->nopen > 0; k++)
		if (fo->recs[k].open &&
		    (all || fo->recs[k].last_ms + fo->deadline <= now_ms))
			emit(fo, (int)k, cb, arg);
}
