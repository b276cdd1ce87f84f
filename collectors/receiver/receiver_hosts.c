/*
 * receiver_hosts: the host table (receiver_hosts.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/kvstore.h"
#include "../../agent/lib/log.h"
#include "receiver_hosts.h"

#define NBUCKETS	4096
#define KV_PFX		"host/"

struct rhosts {
	struct rhost	*b[NBUCKETS];
	struct rhost	*all;		/* newest first */
	size_t		 n;
	uint64_t	 evicted;
};

static unsigned
hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h % NBUCKETS;
}

struct rhost *
rhosts_find(struct rhosts *t, const char *name)
{
	struct rhost *h;

	for (h = t->b[hash(name)]; h != NULL; h = h->next_hash)
		if (strcmp(h->name, name) == 0)
			return h;
	return NULL;
}

static void
unbind(struct rhost *h)
{
	for (size_t i = 0; i < h->nprogs; i++) {
		if (h->progs[i]->bound)
			lwe_stream_fini(&h->progs[i]->s);
		free(h->progs[i]);
	}
	free(h->progs);
	h->progs = NULL;
	h->nprogs = 0;
}

static void
unlink_host(struct rhosts *t, struct rhost *h)
{
	struct rhost **pp;

	for (pp = &t->b[hash(h->name)]; *pp != NULL; pp = &(*pp)->next_hash)
		if (*pp == h) {
			*pp = h->next_hash;
			break;
		}
	if (h->prev_all != NULL)
		h->prev_all->next_all = h->next_all;
	else
		t->all = h->next_all;
	if (h->next_all != NULL)
		h->next_all->prev_all = h->prev_all;
	t->n--;
}

/* Room for one more: the host silent the longest goes (counted). */
static void
evict(struct rhosts *t)
{
	struct rhost *h, *old = NULL;

	for (h = t->all; h != NULL; h = h->next_all)
		if (old == NULL || (h->silent && !old->silent) ||
		    (h->silent == old->silent && h->last_seen_ms < old->last_seen_ms))
			old = h;
	if (old == NULL)
		return;
	t->evicted++;
	log_limited(LOG_WARN, "receiver-evict", 3600, "receiver: more than %d "
	    "hosts: %s (silent or last seen the longest ago) is forgotten (counted)",
	    RECEIVER_MAX_HOSTS, old->name);
	unlink_host(t, old);
	unbind(old);
	free(old);
}

static struct rhost *
add(struct rhosts *t, const char *name)
{
	struct rhost *h;
	unsigned b = hash(name);

	if (t->n >= RECEIVER_MAX_HOSTS)
		evict(t);
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->next_hash = t->b[b];
	t->b[b] = h;
	h->next_all = t->all;
	if (t->all != NULL)
		t->all->prev_all = h;
	t->all = h;
	t->n++;
	return h;
}

struct rhost *
rhosts_get(struct rhosts *t, const char *name, const char *peer,
    const char *transport, int64_t now, rhost_back_fn back, void *arg)
{
	struct rhost *h = rhosts_find(t, name);

	if (h == NULL) {
		h = add(t, name);
		if (h == NULL)
			return NULL;
		log_info("receiver: a new host, %s (%s %s)", name, transport, peer);
	}
	if (peer[0] != '\0')
		snprintf(h->peer, sizeof(h->peer), "%s", peer);
	if (transport[0] != '\0')
		snprintf(h->transport, sizeof(h->transport), "%s", transport);
	if (h->silent) {
		h->silent = false;
		if (back != NULL)
			back(arg, h, now - h->last_seen_ms);
	}
	h->messages++;
	h->last_seen_ms = now;
	return h;
}

struct rhost *
rhosts_first(struct rhosts *t)
{
	return t->all;
}

struct rprog *
rhost_prog(struct rhost *h, const char *program, struct rlog *lg)
{
	struct rprog *p, **nv;
	char origin[400];

	for (size_t i = 0; i < h->nprogs; i++)
		if (strcmp(h->progs[i]->name, program) == 0)
			return h->progs[i];
	if (lg == NULL)
		return NULL;
	if (h->nprogs >= RCV_MAX_PROGRAMS - 1 && strcmp(program, "other") != 0)
		return rhost_prog(h, "other", lg);
	nv = realloc(h->progs, (h->nprogs + 1) * sizeof(*nv));
	if (nv == NULL)
		return NULL;
	h->progs = nv;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	snprintf(p->name, sizeof(p->name), "%s", program);
	snprintf(origin, sizeof(origin), "syslog://%s/%s", h->name, p->name);
	if (lwe_stream_init(&p->s, &lg->e, origin) < 0) {
		lwe_stream_fini(&p->s);
		free(p);
		return NULL;
	}
	p->bound = true;
	p->s.hostname = h->name;
	p->s.input = "syslog";
	p->s.peer = h->peer;
	p->s.appname = p->name;
	h->progs[h->nprogs++] = p;
	return p;
}

void
rhosts_unbind(struct rhosts *t)
{
	for (struct rhost *h = t->all; h != NULL; h = h->next_all)
		unbind(h);
}

void
rhosts_free(struct rhosts *t)
{
	struct rhost *h, *next;

	if (t == NULL)
		return;
	for (h = t->all; h != NULL; h = next) {
		next = h->next_all;
		unbind(h);
		free(h);
	}
	free(t);
}

/* ---- state --------------------------------------------------------- */

void
rhosts_save_one(struct rhosts *t, struct kvstore *kv, const struct rhost *h)
{
	char key[300], val[128];

	(void)t;
	if (kv == NULL || h->last_seen_ms == 0)
		return;
	snprintf(key, sizeof(key), KV_PFX "%s", h->name);
	snprintf(val, sizeof(val), "%" PRId64 " %d %s %s", h->last_seen_ms,
	    h->silent ? 1 : 0, h->transport[0] ? h->transport : "-",
	    h->peer[0] ? h->peer : "-");
	kv_set(kv, key, val);
}

void
rhosts_save(struct rhosts *t, struct kvstore *kv)
{
	for (struct rhost *h = t->all; h != NULL; h = h->next_all)
		rhosts_save_one(t, kv, h);
}

static int
load_one(void *arg, const char *key, const char *value)
{
	struct rhosts *t = arg;
	char tr[4], peer[48];
	long long seen;
	int silent;
	struct rhost *h;

	if (sscanf(value, "%lld %d %3s %47s", &seen, &silent, tr, peer) != 4 ||
	    seen <= 0 || t->n >= RECEIVER_MAX_HOSTS)
		return 0;
	h = add(t, key + strlen(KV_PFX));
	if (h == NULL)
		return 0;
	h->last_seen_ms = seen;
	h->silent = silent == 1;
	if (strcmp(tr, "-") != 0)
		snprintf(h->transport, sizeof(h->transport), "%s", tr);
	if (strcmp(peer, "-") != 0)
		snprintf(h->peer, sizeof(h->peer), "%s", peer);
	return 0;
}

struct rhosts *
rhosts_new(struct kvstore *state)
{
	struct rhosts *t = calloc(1, sizeof(*t));

	if (t != NULL && state != NULL)
		kv_foreach(state, KV_PFX, load_one, t);
	return t;
}

void
rhosts_figures(struct rhosts *t, struct receiver_pic *p)
{
	struct rhost *h;
	size_t n = 0;

	p->messages = 0;
	for (h = t->all; h != NULL; h = h->next_all) {
		struct receiver_host_pic *o;

		p->messages += h->messages;
		if (n == RECEIVER_MAX_HOSTS)
			continue;
		o = &p->hosts[n++];
		snprintf(o->name, sizeof(o->name), "%.127s", h->name);
		snprintf(o->peer, sizeof(o->peer), "%s", h->peer);
		snprintf(o->transport, sizeof(o->transport), "%s", h->transport);
		o->messages = h->messages;
		o->alerts = h->alerts;
		o->last_seen_ms = h->last_seen_ms;
		o->silent = h->silent;
	}
	p->nhosts = n;
	p->hosts_evicted = t->evicted;
}
