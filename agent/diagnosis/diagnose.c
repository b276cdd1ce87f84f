/*
 * diagnose: the stage's tables, locking and the helpers its rules share.
 * The rules themselves are in agent/diagnosis/diagrules.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "diagnose.h"
#include "diagrules.h"
#include "../lib/log.h"

void
diag_conf_defaults(struct diag_conf *c)
{
	c->window_s = 300;
	c->flap_count = 5;
	c->flap_window_s = 300;
	c->drive_window_s = 86400;
	c->silent_after_s = 300;
}

static void
copy(char *dst, size_t len, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= len)
		n = len - 1;
	if (n > 0)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

struct diag *
diag_new(const struct diag_conf *conf)
{
	struct diag *d = calloc(1, sizeof(*d));
	pthread_mutex_t *m;

	if (d == NULL)
		return NULL;
	m = malloc(sizeof(*m));
	if (m == NULL) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(m, NULL);
	d->mtx = m;
	if (conf != NULL)
		d->conf = *conf;
	else
		diag_conf_defaults(&d->conf);
	for (size_t i = 0; i < DIAG_MAX_DEVS; i++)
		for (size_t k = 0; k < 3; k++)
			d->devs[i].last[k] = -1;
	return d;
}

void
diag_free(struct diag *d)
{
	if (d == NULL)
		return;
	pthread_mutex_destroy(d->mtx);
	free(d->mtx);
	free(d);
}

size_t
diag_memory_bytes(const struct diag *d)
{
	return d ? sizeof(*d) + sizeof(pthread_mutex_t) : 0;
}

static void
lock(struct diag *d)
{
	pthread_mutex_lock(d->mtx);
}

static void
unlock(struct diag *d)
{
	pthread_mutex_unlock(d->mtx);
}

void
diag_observe(struct diag *d, const struct event *ev)
{
	const char *col = event_get(ev, "esxwatch_collector");
	const char *kind = event_get(ev, "esxwatch_kind");

	if (col == NULL || strcmp(col, "diagnosis") == 0)
		return;
	if (kind == NULL)
		kind = "";
	/* a forwarded log line no rule matched (forward: all) feeds no
	 * diagnosis: each looks at a logwatch event only for its rule or
	 * its SCSI sense (diagrules.c) */
	bool plain = strcmp(col, "logwatch") == 0 &&
	    event_get(ev, "esxwatch_rule") == NULL &&
	    event_get(ev, "esxwatch_scsi_sense") == NULL;

	lock(d);
	if (ev->timestamp_ms > d->now)
		d->now = ev->timestamp_ms;
	for (size_t i = 0; !plain && i < diag_nrules; i++)
		if (diag_rules[i].observe != NULL)
			diag_rules[i].observe(d, ev, col, kind);
	unlock(d);
}

/* Move the pending alerts (found while observing) to out. */
static size_t
drain_pending(struct diag *d, struct diag_alert *out, size_t max)
{
	size_t n = 0;

	while (n < max && n < d->npending) {
		out[n] = d->pending[n];
		n++;
	}
	if (n < d->npending)
		memmove(d->pending, d->pending + n,
		    (d->npending - n) * sizeof(d->pending[0]));
	d->npending -= n;
	return n;
}

size_t
diag_evaluate(struct diag *d, int64_t now_ms, struct diag_alert *out, size_t max)
{
	size_t n;

	lock(d);
	n = drain_pending(d, out, max);
	for (size_t i = 0; i < diag_nrules && n < max; i++)
		if (diag_rules[i].evaluate != NULL)
			n += diag_rules[i].evaluate(d, now_ms, out + n, max - n);
	unlock(d);
	return n;
}

size_t
diag_delivery(struct diag *d, int64_t now_ms, const struct diag_dest *dests,
    size_t nd, struct diag_alert *out, size_t max)
{
	size_t n;

	lock(d);
	n = diagrule_silent(d, now_ms, dests, nd, out, max);
	unlock(d);
	return n;
}

size_t
diag_wants(struct diag *d, struct diag_want *out, size_t max)
{
	size_t n = 0;

	lock(d);
	for (size_t i = 0; i < DIAG_MAX_ANSWERS && n < max; i++) {
		struct diag_ans *a = &d->ans[i];

		if (a->key[0] == '\0' || a->done)
			continue;
		a->asked = true;
		out[n].kind = a->kind;
		copy(out[n].key, sizeof(out[n].key), a->key);
		n++;
	}
	unlock(d);
	return n;
}

void
diag_answer(struct diag *d, const struct diag_want *w, bool ok, const char *a,
    const char *b)
{
	lock(d);
	for (size_t i = 0; i < DIAG_MAX_ANSWERS; i++) {
		struct diag_ans *x = &d->ans[i];

		if (x->kind != w->kind || strcmp(x->key, w->key) != 0)
			continue;
		x->done = true;
		x->ok = ok;
		x->at = d->now;
		copy(x->a, sizeof(x->a), ok ? a : "");
		copy(x->b, sizeof(x->b), b);
		break;
	}
	unlock(d);
}

/*
 * The answer to a question, or NULL while it is not answered yet (the
 * question is then registered for diag_wants()).  Answers older than an
 * hour are asked again: the host's configuration may have changed.
 */
const struct diag_ans *
diag_ans_find(struct diag *d, enum diag_want_kind kind, const char *key)
{
	struct diag_ans *free_slot = NULL, *oldest = NULL;

	for (size_t i = 0; i < DIAG_MAX_ANSWERS; i++) {
		struct diag_ans *a = &d->ans[i];

		if (a->key[0] == '\0') {
			if (free_slot == NULL)
				free_slot = a;
			continue;
		}
		if (a->kind == kind && strcmp(a->key, key) == 0) {
			if (a->done && d->now - a->at > 3600 * 1000LL) {
				a->done = false;
				return NULL;
			}
			return a->done ? a : NULL;
		}
		if (oldest == NULL || a->at < oldest->at)
			oldest = a;
	}
	if (free_slot == NULL)
		free_slot = oldest;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->kind = kind;
	free_slot->at = d->now;
	copy(free_slot->key, sizeof(free_slot->key), key);
	return NULL;
}

/* ---- observations ------------------------------------------------------- */

/* Insert keeping the ring ordered by time, oldest dropped when full. */
void
diag_obs_push(struct diag_obs *ring, size_t n, const struct diag_obs *o)
{
	size_t i;

	if (ring[n - 1].ts != 0) {
		if (o->ts < ring[0].ts)
			return;		/* older than everything kept */
		memmove(ring, ring + 1, (n - 1) * sizeof(*ring));
		ring[n - 1].ts = 0;
	}
	for (i = 0; i < n && ring[i].ts != 0 && ring[i].ts <= o->ts; i++)
		;
	if (i < n - 1)
		memmove(ring + i + 1, ring + i, (n - 1 - i) * sizeof(*ring));
	ring[i] = *o;
}

static void
iso_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)ms);
}

void
diag_obs_fmt(struct diag_obs *o, int64_t ts, const char *what,
    const struct event *ev)
{
	char when[32];

	memset(o, 0, sizeof(*o));
	o->ts = ts;
	o->from = ts;
	copy(o->what, sizeof(o->what), what);
	iso_time(ts, when, sizeof(when));
	snprintf(o->text, sizeof(o->text), "%s %s", when, ev && ev->text ? ev->text : "");
}

void
diag_evidence_add(struct diag_alert *a, const struct diag_obs *o)
{
	size_t len = strlen(a->evidence);

	if (o->ts == 0 || len + 4 >= sizeof(a->evidence))
		return;
	snprintf(a->evidence + len, sizeof(a->evidence) - len, "%s%s",
	    len ? " | " : "", o->text);
}

struct diag_alert *
diag_pending_new(struct diag *d, const char *rule, const char *severity)
{
	struct diag_alert *a;

	if (d->npending == DIAG_MAX_PENDING) {
		log_limited(LOG_WARN, "diag-pending", 3600,
		    "diagnosis: more alerts at once than it keeps (%d); the oldest is dropped",
		    DIAG_MAX_PENDING);
		memmove(d->pending, d->pending + 1, (DIAG_MAX_PENDING - 1) * sizeof(*a));
		d->npending--;
	}
	a = &d->pending[d->npending++];
	memset(a, 0, sizeof(*a));
	copy(a->rule, sizeof(a->rule), rule);
	copy(a->severity, sizeof(a->severity), severity);
	return a;
}

void
diag_extra(struct diag_alert *a, const char *name, const char *value)
{
	if (a->nextra == DIAG_EXTRA_MAX || value == NULL || value[0] == '\0')
		return;
	copy(a->extra_name[a->nextra], sizeof(a->extra_name[0]), name);
	copy(a->extra_value[a->nextra], sizeof(a->extra_value[0]), value);
	a->nextra++;
}

/* ---- entity tables: found by name, the least recently seen evicted ------- */

/*
 * The slot of name among n slots of sz bytes at base, each beginning with
 * its name (namesz bytes) and holding its last sighting at seen_off: the
 * slot of that name, else a free one or the least recently seen, emptied
 * and named (*fresh).  NULL for a name that does not fit.
 */
static void *
slot_get(struct diag *d, void *base, size_t n, size_t sz, size_t namesz,
    size_t seen_off, const char *name, bool *fresh)
{
	char *lru = base;

	*fresh = false;
	if (name == NULL || name[0] == '\0' || strlen(name) >= namesz)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char *x = (char *)base + i * sz;
		int64_t *seen = (int64_t *)(void *)(x + seen_off);

		if (strcmp(x, name) == 0) {
			*seen = d->now;
			return x;
		}
		if (x[0] == '\0' || (lru[0] != '\0' &&
		    *seen < *(int64_t *)(void *)(lru + seen_off)))
			lru = x;
	}
	if (lru[0] != '\0')
		d->forgotten++;
	memset(lru, 0, sz);
	copy(lru, namesz, name);
	*(int64_t *)(void *)(lru + seen_off) = d->now;
	*fresh = true;
	return lru;
}

_Static_assert(offsetof(struct diag_nic, name) == 0, "a slot begins with its name");
_Static_assert(offsetof(struct diag_dev, name) == 0, "a slot begins with its name");

struct diag_nic *
diag_nic_get(struct diag *d, const char *name)
{
	bool fresh;

	return slot_get(d, d->nics, DIAG_MAX_NICS, sizeof(d->nics[0]),
	    sizeof(d->nics[0].name), offsetof(struct diag_nic, seen), name,
	    &fresh);
}

struct diag_dev *
diag_dev_get(struct diag *d, const char *name)
{
	bool fresh;
	struct diag_dev *x = slot_get(d, d->devs, DIAG_MAX_DEVS,
	    sizeof(d->devs[0]), sizeof(d->devs[0].name),
	    offsetof(struct diag_dev, seen), name, &fresh);

	if (x != NULL && fresh)
		for (size_t k = 0; k < 3; k++)
			x->last[k] = -1;
	return x;
}

/* ---- the installed stage ------------------------------------------------ */

static pthread_mutex_t	cur_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct diag	*cur;

void
diag_install(struct diag *d)
{
	pthread_mutex_lock(&cur_mtx);
	cur = d;
	pthread_mutex_unlock(&cur_mtx);
}

void
diag_feed(const struct event *ev)
{
	pthread_mutex_lock(&cur_mtx);
	if (cur != NULL)
		diag_observe(cur, ev);
	pthread_mutex_unlock(&cur_mtx);
}

size_t
diag_current_memory(void)
{
	size_t n;

	pthread_mutex_lock(&cur_mtx);
	n = diag_memory_bytes(cur);
	pthread_mutex_unlock(&cur_mtx);
	return n;
}
