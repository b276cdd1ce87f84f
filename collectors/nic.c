/*
 * nic: link state and error counters per network interface.
 *
 * Every interval, one `sample` per NIC with the link, speed, duplex,
 * driver and every counter with its change since the previous sample; a
 * `change` when the link goes up or down; an `alert` per error or drop
 * counter that grew (CRC errors are the classic sign of a bad fibre or
 * SFP and get severity error).  The previous observation lives in the
 * collector's state store, which the agent persists, so a restart neither
 * replays nor hides a change.
 *
 * State keys per NIC: NAME.link (up/down), NAME.ts (ms of the previous
 * sample), NAME.FIELD (counter total).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "host/host.h"
#include "nic.h"
#include "../agent/lib/log.h"
#include "../agent/lib/str.h"

/* The counters the one-line sample text shows. */
static const char *const text_counters[] = { "rx_crc_errors", "rx_errors",
    "tx_errors", "rx_dropped", "tx_dropped", NULL };

static const char *
state_name(int s)
{
	return s == NIC_UP ? "up" : s == NIC_DOWN ? "down" : "unknown";
}

/* ---- the platform-neutral part --------------------------------------- */

static const char *
state_get(struct kvstore *st, const char *nic, const char *what)
{
	char key[NIC_NAME_MAX + 64];

	snprintf(key, sizeof(key), "%s.%s", nic, what);
	return kv_get(st, key);
}

static void
state_set(struct kvstore *st, const char *nic, const char *what, const char *val)
{
	char key[NIC_NAME_MAX + 64];

	snprintf(key, sizeof(key), "%s.%s", nic, what);
	if (kv_set(st, key, val) == -1)
		log_limited(LOG_WARN, "nic:state", 3600, "nic: cannot keep %s", key);
}

/* The fields every nic event carries, so each one stands alone in a search. */
static int
set_common(struct event *ev, const struct nic_info *ni)
{
	int r = 0;

	r |= event_set(ev, "esxwatch_nic", ni->name);
	r |= event_set(ev, "esxwatch_link", state_name(ni->link));
	if (ni->admin != NIC_UNKNOWN)
		r |= event_set(ev, "esxwatch_admin", state_name(ni->admin));
	if (ni->speed_mbps >= 0)
		r |= event_set_i64(ev, "esxwatch_speed_mbps", ni->speed_mbps);
	if (ni->duplex[0] != '\0')
		r |= event_set(ev, "esxwatch_duplex", ni->duplex);
	if (ni->driver[0] != '\0')
		r |= event_set(ev, "esxwatch_driver", ni->driver);
	if (ni->mac[0] != '\0')
		r |= event_set(ev, "esxwatch_mac", ni->mac);
	if (ni->mtu >= 0)
		r |= event_set_i64(ev, "esxwatch_mtu", ni->mtu);
	return r ? -1 : 0;
}

static void
push(struct nic_events *evs, struct event *ev)
{
	if (ev == NULL)
		return;
	if (evs->n < sizeof(evs->v) / sizeof(evs->v[0]))
		evs->v[evs->n++] = ev;
	else
		event_free(ev);
}

static int
field_index(const char *field)
{
	int i;

	for (i = 0; i < NIC_NCOUNTERS; i++)
		if (strcmp(nic_counters[i].field, field) == 0)
			return i;
	return -1;
}

static struct event *
make_sample(const struct nic_info *ni, const bool *has_delta,
    const uint64_t *delta, long long interval_s, const char *resets)
{
	struct buf t = BUF_INIT;
	struct event *ev = NULL;
	char name[96];
	size_t i;
	int k;

	buf_init(&t, 4096);
	buf_printf(&t, "%s link %s", ni->name, state_name(ni->link));
	if (ni->speed_mbps >= 0 && ni->link == NIC_UP)
		buf_printf(&t, " %lld Mbps", ni->speed_mbps);
	if (ni->duplex[0] != '\0' && ni->link == NIC_UP)
		buf_printf(&t, " %s", ni->duplex);
	if (ni->admin == NIC_DOWN)
		buf_puts(&t, ", admin down");
	for (i = 0; text_counters[i] != NULL; i++) {
		k = field_index(text_counters[i]);
		if (k < 0 || !ni->have[k])
			continue;
		if (ni->sums_only) {
			if (has_delta[k])
				buf_printf(&t, ", %s +%" PRIu64,
				    nic_counters[k].field, delta[k]);
			continue;
		}
		buf_printf(&t, ", %s %" PRIu64, nic_counters[k].field, ni->ctr[k]);
		if (has_delta[k] && delta[k] > 0)
			buf_printf(&t, " (+%" PRIu64 ")", delta[k]);
	}
	ev = ev_new("sample", "info", "%s", t.data ? t.data : ni->name);
	buf_free(&t);
	if (ev == NULL || set_common(ev, ni) == -1)
		goto err;
	for (i = 0; i < NIC_NCOUNTERS; i++) {
		if (!ni->have[i])
			continue;
		snprintf(name, sizeof(name), "esxwatch_%s", nic_counters[i].field);
		if (!ni->sums_only &&
		    event_setf(ev, name, "%" PRIu64, ni->ctr[i]) == -1)
			goto err;
		if (!has_delta[i])
			continue;
		snprintf(name, sizeof(name), "esxwatch_%s_delta", nic_counters[i].field);
		if (event_setf(ev, name, "%" PRIu64, delta[i]) == -1)
			goto err;
	}
	if (interval_s >= 0 && event_set_i64(ev, "esxwatch_interval_s", interval_s) == -1)
		goto err;
	if (resets[0] != '\0' && event_set(ev, "esxwatch_counters_reset", resets) == -1)
		goto err;
	return ev;
err:
	event_free(ev);
	return NULL;
}

static struct event *
make_alert(const struct nic_info *ni, int k, uint64_t delta, long long interval_s)
{
	const struct nic_counter_def *c = &nic_counters[k];
	struct event *ev;
	char name[96], when[64] = "";

	if (interval_s >= 0)
		snprintf(when, sizeof(when), " in the last %lld s", interval_s);
	if (ni->sums_only)
		ev = ev_new("alert", c->alert, "%s: %s increased by %" PRIu64
		    "%s", ni->name, c->label, delta, when);
	else
		ev = ev_new("alert", c->alert, "%s: %s increased by %" PRIu64
		    " (to %" PRIu64 ")%s", ni->name, c->label, delta, ni->ctr[k],
		    when);
	if (ev == NULL || set_common(ev, ni) == -1)
		goto err;
	snprintf(name, sizeof(name), "esxwatch_%s", c->field);
	if (!ni->sums_only &&
	    event_setf(ev, name, "%" PRIu64, ni->ctr[k]) == -1)
		goto err;
	snprintf(name, sizeof(name), "esxwatch_%s_delta", c->field);
	if (event_setf(ev, name, "%" PRIu64, delta) == -1 ||
	    event_set(ev, "esxwatch_counter", c->field) == -1)
		goto err;
	if (interval_s >= 0 && event_set_i64(ev, "esxwatch_interval_s", interval_s) == -1)
		goto err;
	return ev;
err:
	event_free(ev);
	return NULL;
}

int
nic_observe(struct kvstore *st, const struct nic_info *ni, int64_t now,
    struct nic_events *evs)
{
	bool has_delta[NIC_NCOUNTERS] = { false };
	uint64_t delta[NIC_NCOUNTERS] = { 0 }, prev, prev_ts;
	char num[32], resets[512] = "";
	const char *v;
	long long interval_s = -1;
	size_t i, rlen = 0;
	struct event *ev;

	/* Link transitions; unknown is neither a transition nor a baseline. */
	v = state_get(st, ni->name, "link");
	if (ni->link != NIC_UNKNOWN) {
		int was = nic_parse_state(v);

		if (was != NIC_UNKNOWN && was != ni->link) {
			ev = ev_new("change", ni->link == NIC_DOWN ? "warning" : "info",
			    "%s: link %s (was %s)", ni->name, state_name(ni->link),
			    state_name(was));
			if (ev != NULL && (set_common(ev, ni) == -1 ||
			    event_set(ev, "esxwatch_previous_state", state_name(was)) == -1)) {
				event_free(ev);
				ev = NULL;
			}
			push(evs, ev);
		}
		state_set(st, ni->name, "link", state_name(ni->link));
	}

	v = state_get(st, ni->name, "ts");
	if (v != NULL && str_u64_trimmed(v, &prev_ts) && now >= 0 &&
	    prev_ts <= (uint64_t)now)
		interval_s = (long long)(((uint64_t)now - prev_ts + 500) / 1000);

	for (i = 0; i < NIC_NCOUNTERS; i++) {
		if (!ni->have[i])
			continue;
		v = state_get(st, ni->name, nic_counters[i].field);
		if (v != NULL && str_u64_trimmed(v, &prev)) {
			if (ni->ctr[i] >= prev) {
				has_delta[i] = true;
				delta[i] = ni->ctr[i] - prev;
			} else if (rlen < sizeof(resets) - 32) {
				/* driver reload or reboot: a new baseline */
				rlen += (size_t)snprintf(resets + rlen,
				    sizeof(resets) - rlen, "%s%s",
				    rlen ? "," : "", nic_counters[i].field);
			}
		}
		snprintf(num, sizeof(num), "%" PRIu64, ni->ctr[i]);
		state_set(st, ni->name, nic_counters[i].field, num);
		if (has_delta[i] && delta[i] > 0 && nic_counters[i].alert != NULL)
			push(evs, make_alert(ni, (int)i, delta[i], interval_s));
	}
	snprintf(num, sizeof(num), "%" PRId64, now);
	state_set(st, ni->name, "ts", num);

	ev = make_sample(ni, has_delta, delta, interval_s, resets);
	if (ev == NULL)
		return -1;
	push(evs, ev);
	return 0;
}

void
nic_events_free(struct nic_events *evs)
{
	size_t i;

	for (i = 0; i < evs->n; i++)
		event_free(evs->v[i]);
	evs->n = 0;
}

/* ---- the collector --------------------------------------------------- */

static int
nic_init(struct collector_ctx *ctx)
{
	(void)ctx;
	return 0;
}

static int
nic_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct nic_info *v = NULL;
	struct nic_events evs;
	int64_t now = now_ms();
	int timeout = ctx->conf != NULL ? ctx->conf->timeout : 30;
	int n, i;
	size_t k;

	n = host_nics(ctx->host, ctx->conf, timeout, &v);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		evs.n = 0;
		if (nic_observe(ctx->state, &v[i], now, &evs) == -1)
			log_limited(LOG_ERROR, "nic:event", 300,
			    "nic: cannot build the events of %s", v[i].name);
		for (k = 0; k < evs.n; k++)
			emit(em, evs.v[k]);	/* takes ownership */
	}
	free(v);
	return 0;
}

static void
nic_fini(struct collector_ctx *ctx)
{
	(void)ctx;
}

const struct collector collector_nic = {
	.name = "nic",
	.default_interval = 60,
	.init = nic_init,
	.collect = nic_collect,
	.fini = nic_fini,
};
