/*
 * diagstate: the stage's tables and the helpers its rules share
 * (agent/diagnosis/diagstate.h).  The caller holds the stage's lock.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "diagstate.h"
#include "../lib/log.h"

/* A DNS name's first label's length; 0 for a short name or an address. */
static size_t
first_label(const char *s)
{
	const char *dot = strchr(s, '.');
	bool literal = true;

	if (dot == NULL || dot == s || strchr(s, ':') != NULL)
		return 0;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			literal = false;
	return literal ? 0 : (size_t)(dot - s);
}

enum diag_host_match
diag_host_match(const char *a, const char *b)
{
	size_t la, lb;

	if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0')
		return DIAG_HOST_OTHER;
	if (strcasecmp(a, b) == 0)
		return DIAG_HOST_SAME;
	la = first_label(a);
	lb = first_label(b);
	if (la == 0 && lb > 0 && strchr(a, '.') == NULL && strchr(a, ':') == NULL &&
	    strlen(a) == lb && strncasecmp(a, b, lb) == 0)
		return DIAG_HOST_SHORT;
	if (lb == 0 && la > 0 && strchr(b, '.') == NULL && strchr(b, ':') == NULL &&
	    strlen(b) == la && strncasecmp(a, b, la) == 0)
		return DIAG_HOST_SHORT;
	return DIAG_HOST_OTHER;
}

/* src (NULL: "") into dst, cut to fit. */
void
diag_copy(char *dst, size_t len, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= len)
		n = len - 1;
	if (n > 0)
		memcpy(dst, src, n);
	dst[n] = '\0';
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
			if (d->host[0] != '\0')
				return a;	/* never asked (below) */
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
	diag_copy(free_slot->key, sizeof(free_slot->key), key);
	if (d->host[0] != '\0') {
		/* another host's: the local host cannot answer for it */
		free_slot->asked = free_slot->done = true;
		diag_copy(free_slot->b, sizeof(free_slot->b), "not asked: the "
		    "host is another one (its own tools are not reachable)");
		return free_slot;
	}
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
	diag_copy(o->what, sizeof(o->what), what);
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
	diag_copy(a->rule, sizeof(a->rule), rule);
	diag_copy(a->severity, sizeof(a->severity), severity);
	return a;
}

void
diag_extra(struct diag_alert *a, const char *name, const char *value)
{
	if (a->nextra == DIAG_EXTRA_MAX || value == NULL || value[0] == '\0')
		return;
	diag_copy(a->extra_name[a->nextra], sizeof(a->extra_name[0]), name);
	diag_copy(a->extra_value[a->nextra], sizeof(a->extra_value[0]), value);
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
	diag_copy(lru, namesz, name);
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
