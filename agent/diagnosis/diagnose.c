/*
 * diagnose: the stage: its locking, observing and evaluating.  Its tables
 * and their helpers are in agent/diagnosis/diagstate.c, the rules in
 * agent/diagnosis/diagrules.c.
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

/* One host's memory (its tables empty), sharing conf. */
static struct diag *
memory_new(const struct diag_conf *conf)
{
	struct diag *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if (conf != NULL)
		d->conf = *conf;
	else
		diag_conf_defaults(&d->conf);
	for (size_t i = 0; i < DIAG_MAX_DEVS; i++)
		for (size_t k = 0; k < 3; k++)
			d->devs[i].last[k] = -1;
	return d;
}

struct diag *
diag_new(const struct diag_conf *conf)
{
	struct diag *d = memory_new(conf);
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
	return d;
}

void
diag_free(struct diag *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->nothers; i++)
		free(d->others[i]);
	pthread_mutex_destroy(d->mtx);
	free(d->mtx);
	free(d);
}

/*
 * The memory of a host already known by that name: the same name but for
 * case, else the one name that is its short name or its DNS name (a
 * vCenter's inventory name "esx01.example.com" and the host's syslog
 * HOSTNAME "ESX01"); two candidates: ambiguous, none.  A DNS name found
 * for a short one becomes the memory's name (alerts name the DNS name).
 */
static struct diag *
known_host(struct diag *d, const char *host)
{
	struct diag *cand = NULL;
	size_t n = 0;

	for (size_t i = 0; i < d->nothers; i++) {
		enum diag_host_match m = diag_host_match(d->others[i]->host, host);

		if (m == DIAG_HOST_SAME)
			return d->others[i];
		if (m == DIAG_HOST_SHORT) {
			cand = d->others[i];
			n++;
		}
	}
	if (n != 1)
		return NULL;
	if (strchr(cand->host, '.') == NULL)
		diag_copy(cand->host, sizeof(cand->host), host);
	return cand;
}

/*
 * The memory of the host ev is about: the stage's own for the agent's
 * host (no esxwatch_input), else that host's, made on its first event
 * (the one observed the longest ago forgotten when all are taken).
 * Under the lock.
 */
static struct diag *
memory_of(struct diag *d, const struct event *ev)
{
	const char *input = event_get(ev, "esxwatch_input");
	const char *host = event_get(ev, "hostname");
	struct diag *h;
	size_t i, old = 0;

	if (input == NULL || host == NULL || host[0] == '\0')
		return d;
	h = known_host(d, host);
	if (h != NULL)
		return h;
	if (d->nothers == DIAG_MAX_HOSTS) {
		for (i = 1; i < d->nothers; i++)
			if (d->others[i]->used < d->others[old]->used)
				old = i;
		log_limited(LOG_WARN, "diag-hosts", 3600, "diagnosis: more than "
		    "%d other hosts: the memory of %s is forgotten", DIAG_MAX_HOSTS,
		    d->others[old]->host);
		free(d->others[old]);
		d->others[old] = d->others[--d->nothers];
		d->hosts_forgotten++;
	}
	h = memory_new(&d->conf);
	if (h == NULL)
		return NULL;
	h->mtx = d->mtx;
	diag_copy(h->host, sizeof(h->host), host);
	diag_copy(h->input, sizeof(h->input), input);
	d->others[d->nothers++] = h;
	return h;
}

size_t
diag_memory_bytes(const struct diag *d)
{
	return d ? (1 + d->nothers) * sizeof(*d) + sizeof(pthread_mutex_t) : 0;
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
	struct diag *h;

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
	h = memory_of(d, ev);
	if (h != NULL && ev->timestamp_ms > h->now)
		h->now = ev->timestamp_ms;
	if (h != NULL)
		h->used = h->now;
	for (size_t i = 0; h != NULL && !plain && i < diag_nrules; i++)
		if (diag_rules[i].observe != NULL)
			diag_rules[i].observe(h, ev, col, kind);
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

/* One host's conclusions, named after it (another host's). */
static size_t
evaluate_one(struct diag *h, int64_t now_ms, struct diag_alert *out, size_t max)
{
	size_t n = drain_pending(h, out, max);

	for (size_t i = 0; i < diag_nrules && n < max; i++)
		if (diag_rules[i].evaluate != NULL)
			n += diag_rules[i].evaluate(h, now_ms, out + n, max - n);
	for (size_t k = 0; k < n; k++) {
		diag_copy(out[k].host, sizeof(out[k].host), h->host);
		diag_copy(out[k].input, sizeof(out[k].input), h->input);
	}
	return n;
}

size_t
diag_evaluate(struct diag *d, int64_t now_ms, struct diag_alert *out, size_t max)
{
	size_t n;

	lock(d);
	n = evaluate_one(d, now_ms, out, max);
	for (size_t i = 0; i < d->nothers && n < max; i++)
		n += evaluate_one(d->others[i], now_ms, out + n, max - n);
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
		diag_copy(out[n].key, sizeof(out[n].key), a->key);
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
		diag_copy(x->a, sizeof(x->a), ok ? a : "");
		diag_copy(x->b, sizeof(x->b), b);
		break;
	}
	unlock(d);
}

/* ---- the emit filter --------------------------------------------------- */

void
diag_on_event(void *arg, const struct event *ev)
{
	diag_observe(arg, ev);
}
