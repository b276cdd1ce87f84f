/*
 * status_receiver: collector mode in the status picture (status_receiver.h).
 *
 * In the status file:
 *	receiver: on
 *	 paused: 0|1  pauses, messages, hosts_evicted, dropped_REASON: N
 *	rlisten: TRANSPORT ADDRESS
 *	 listening: 0|1  messages, connections, error
 *	rhost: NAME
 *	 peer, transport, messages, alerts, last_seen_ms, state: sending|silent
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/str.h"
#include "status_receiver.h"

struct recv_board {
	pthread_mutex_t		 mtx;
	struct receiver_pic	 pic;
};

struct recv_board *
recv_board_new(void)
{
	struct recv_board *b = calloc(1, sizeof(*b));

	if (b != NULL)
		pthread_mutex_init(&b->mtx, NULL);
	return b;
}

void
recv_board_free(struct recv_board *b)
{
	if (b == NULL)
		return;
	pthread_mutex_destroy(&b->mtx);
	free(b);
}

void
recv_board_put(struct recv_board *b, const struct receiver_pic *p)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mtx);
	memcpy(&b->pic, p, sizeof(*p));
	pthread_mutex_unlock(&b->mtx);
}

void
recv_board_read(struct recv_board *b, struct receiver_pic *out)
{
	if (b == NULL) {
		out->on = false;
		return;
	}
	pthread_mutex_lock(&b->mtx);
	memcpy(out, &b->pic, sizeof(*out));
	pthread_mutex_unlock(&b->mtx);
}

/* ---- the file ------------------------------------------------------ */

static void
one_line(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src[i] != '\0' && i < len - 1; i++)
		dst[i] = src[i] == '\n' || src[i] == '\r' ? ' ' : src[i];
	dst[i] = '\0';
}

void
status_receiver_put(struct buf *b, const struct receiver_pic *p)
{
	char t[200];

	if (!p->on)
		return;
	buf_printf(b, "receiver: on\n paused: %d\n pauses: %" PRIu64 "\n messages: %"
	    PRIu64 "\n hosts_evicted: %" PRIu64 "\n", p->paused ? 1 : 0,
	    p->pauses, p->messages, p->hosts_evicted);
	for (int i = 0; i < RDROP_N; i++)
		buf_printf(b, " dropped_%s: %" PRIu64 "\n", receiver_drop_names[i],
		    p->dropped[i]);
	for (size_t i = 0; i < p->nlisteners; i++) {
		const struct receiver_listener_pic *l = &p->listeners[i];

		one_line(t, sizeof(t), l->error);
		buf_printf(b, "rlisten: %s %s\n listening: %d\n messages: %" PRIu64
		    "\n connections: %" PRIu64 "\n error: %s\n", l->transport,
		    l->address, l->listening ? 1 : 0, l->messages, l->connections, t);
	}
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct receiver_host_pic *h = &p->hosts[i];

		one_line(t, sizeof(t), h->name);
		buf_printf(b, "rhost: %s\n peer: %s\n transport: %s\n messages: %"
		    PRIu64 "\n alerts: %" PRIu64 "\n last_seen_ms: %" PRId64
		    "\n state: %s\n", t, h->peer[0] ? h->peer : "-",
		    h->transport[0] ? h->transport : "-", h->messages, h->alerts,
		    h->last_seen_ms, h->silent ? "silent" : "sending");
	}
}

int
status_receiver_block(struct receiver_pic *p, struct recv_at *at, const char *k,
    const char *v)
{
	at->kind = 0;
	if (strcmp(k, "receiver") == 0) {
		p->on = true;
		at->kind = 1;
		return 1;
	}
	if (strcmp(k, "rlisten") == 0) {
		const char *sp = strchr(v, ' ');
		struct receiver_listener_pic *l;

		if (p->nlisteners == RECEIVER_MAX_LISTENERS || sp == NULL)
			return 1;
		at->kind = 2;
		at->i = p->nlisteners++;
		l = &p->listeners[at->i];
		snprintf(l->transport, sizeof(l->transport), "%.*s",
		    (int)(sp - v) < 3 ? (int)(sp - v) : 3, v);
		snprintf(l->address, sizeof(l->address), "%s", sp + 1);
		return 1;
	}
	if (strcmp(k, "rhost") == 0) {
		if (p->nhosts == RECEIVER_MAX_HOSTS)
			return 1;
		at->kind = 3;
		at->i = p->nhosts++;
		snprintf(p->hosts[at->i].name, sizeof(p->hosts[0].name), "%s", v);
		return 1;
	}
	return 0;
}

static void
u64(const char *v, uint64_t *out)
{
	if (!str_u64(v, out))
		*out = 0;
}

static void
receiver_key(struct receiver_pic *p, const char *k, const char *v)
{
	uint64_t x;

	if (strcmp(k, "paused") == 0) {
		u64(v, &x);
		p->paused = x != 0;
	} else if (strcmp(k, "pauses") == 0)
		u64(v, &p->pauses);
	else if (strcmp(k, "messages") == 0)
		u64(v, &p->messages);
	else if (strcmp(k, "hosts_evicted") == 0)
		u64(v, &p->hosts_evicted);
	else if (strncmp(k, "dropped_", 8) == 0)
		for (int i = 0; i < RDROP_N; i++)
			if (strcmp(k + 8, receiver_drop_names[i]) == 0)
				u64(v, &p->dropped[i]);
}

void
status_receiver_key(struct receiver_pic *p, const struct recv_at *at,
    const char *k, const char *v)
{
	uint64_t x;

	if (at->kind == 1)
		receiver_key(p, k, v);
	else if (at->kind == 2) {
		struct receiver_listener_pic *l = &p->listeners[at->i];

		if (strcmp(k, "listening") == 0) {
			u64(v, &x);
			l->listening = x != 0;
		} else if (strcmp(k, "messages") == 0)
			u64(v, &l->messages);
		else if (strcmp(k, "connections") == 0)
			u64(v, &l->connections);
		else if (strcmp(k, "error") == 0)
			snprintf(l->error, sizeof(l->error), "%s", v);
	} else if (at->kind == 3) {
		struct receiver_host_pic *h = &p->hosts[at->i];

		if (strcmp(k, "peer") == 0)
			snprintf(h->peer, sizeof(h->peer), "%s", v);
		else if (strcmp(k, "transport") == 0)
			snprintf(h->transport, sizeof(h->transport), "%s", v);
		else if (strcmp(k, "messages") == 0)
			u64(v, &h->messages);
		else if (strcmp(k, "alerts") == 0)
			u64(v, &h->alerts);
		else if (strcmp(k, "last_seen_ms") == 0)
			h->last_seen_ms = strtoll(v, NULL, 10);
		else if (strcmp(k, "state") == 0)
			h->silent = strcmp(v, "silent") == 0;
	}
}

/* ---- --status ------------------------------------------------------ */

static void
when(int64_t ms, int64_t now, char *out, size_t len)
{
	if (ms <= 0)
		snprintf(out, len, "never");
	else
		snprintf(out, len, "%lld s ago", (long long)((now - ms) / 1000));
}

void
status_receiver_print(FILE *out, const struct receiver_pic *p, int64_t now)
{
	uint64_t dropped = 0;
	char ago[64];

	if (!p->on)
		return;
	for (int i = 0; i < RDROP_N; i++)
		dropped += p->dropped[i];
	fprintf(out, "\nreceiver: %zu hosts, %" PRIu64 " messages%s\n", p->nhosts,
	    p->messages, p->paused ? "; NOT READING TCP: the spool is at its "
	    "budget (back-pressure)" : "");
	for (size_t i = 0; i < p->nlisteners; i++) {
		const struct receiver_listener_pic *l = &p->listeners[i];

		if (l->listening)
			fprintf(out, "  listening %s %s: %" PRIu64 " messages, %"
			    PRIu64 " connections\n", l->transport, l->address,
			    l->messages, l->connections);
		else
			fprintf(out, "  NOT listening %s %s: %s\n", l->transport,
			    l->address, l->error);
	}
	if (dropped > 0) {
		fprintf(out, "  not taken:");
		for (int i = 0; i < RDROP_N; i++)
			if (p->dropped[i] > 0)
				fprintf(out, " %s %" PRIu64, receiver_drop_names[i],
				    p->dropped[i]);
		fprintf(out, "\n");
	}
	if (p->hosts_evicted > 0)
		fprintf(out, "  hosts forgotten (more than %d): %" PRIu64 "\n",
		    RECEIVER_MAX_HOSTS, p->hosts_evicted);
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct receiver_host_pic *h = &p->hosts[i];

		when(h->last_seen_ms, now, ago, sizeof(ago));
		fprintf(out, "  %-24s %-7s %s %s: %" PRIu64 " messages, %" PRIu64
		    " alerts, last seen %s\n", h->name, h->silent ? "SILENT" :
		    "sending", h->transport, h->peer, h->messages, h->alerts, ago);
	}
}

/* ---- --status --json ----------------------------------------------- */

static void
jstr(struct buf *b, const char *key, const char *v)
{
	buf_printf(b, ",\"%s\":", key);
	json_put_str(b, v, strlen(v));
}

void
status_receiver_json(struct buf *b, const struct receiver_pic *p)
{
	if (!p->on) {
		buf_puts(b, ",\"receiver\":null");
		return;
	}
	buf_printf(b, ",\"receiver\":{\"paused\":%s,\"pauses\":%" PRIu64
	    ",\"messages\":%" PRIu64 ",\"hosts_evicted\":%" PRIu64 ",\"dropped\":{",
	    p->paused ? "true" : "false", p->pauses, p->messages, p->hosts_evicted);
	for (int i = 0; i < RDROP_N; i++)
		buf_printf(b, "%s\"%s\":%" PRIu64, i ? "," : "",
		    receiver_drop_names[i], p->dropped[i]);
	buf_puts(b, "},\"listeners\":[");
	for (size_t i = 0; i < p->nlisteners; i++) {
		const struct receiver_listener_pic *l = &p->listeners[i];

		buf_printf(b, "%s{\"address\":", i ? "," : "");
		json_put_str(b, l->address, strlen(l->address));
		jstr(b, "transport", l->transport);
		buf_printf(b, ",\"listening\":%s,\"messages\":%" PRIu64
		    ",\"connections\":%" PRIu64, l->listening ? "true" : "false",
		    l->messages, l->connections);
		jstr(b, "error", l->error);
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"hosts\":[");
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct receiver_host_pic *h = &p->hosts[i];

		buf_printf(b, "%s{\"name\":", i ? "," : "");
		json_put_str(b, h->name, strlen(h->name));
		jstr(b, "peer", h->peer);
		jstr(b, "transport", h->transport);
		buf_printf(b, ",\"messages\":%" PRIu64 ",\"alerts\":%" PRIu64
		    ",\"last_seen_ms\":%" PRId64, h->messages, h->alerts,
		    h->last_seen_ms);
		jstr(b, "state", h->silent ? "silent" : "sending");
		buf_putc(b, '}');
	}
	buf_puts(b, "]}");
}

/* ---- /metrics ------------------------------------------------------ */

/* A label value: \, " and newlines escaped (Prometheus text format). */
static int
label(struct buf *b, const char *s)
{
	int r = 0;

	for (; r == 0 && *s != '\0'; s++)
		r = *s == '\\' ? buf_puts(b, "\\\\") : *s == '"' ?
		    buf_puts(b, "\\\"") : *s == '\n' ? buf_puts(b, "\\n") :
		    buf_putc(b, *s);
	return r;
}

int
status_receiver_metrics(struct buf *b, const struct receiver_pic *p)
{
	int r;

	if (!p->on)
		return 0;
	r = buf_puts(b, "# HELP esxwatch_receiver_messages_total Messages "
	    "received from the host\n"
	    "# TYPE esxwatch_receiver_messages_total counter\n");
	for (size_t i = 0; r == 0 && i < p->nhosts; i++) {
		r = buf_puts(b, "esxwatch_receiver_messages_total{host=\"");
		if (r == 0)
			r = label(b, p->hosts[i].name);
		if (r == 0)
			r = buf_printf(b, "\"} %" PRIu64 "\n", p->hosts[i].messages);
	}
	if (r == 0)
		r = buf_puts(b, "# HELP esxwatch_receiver_dropped_total Messages "
		    "or senders not taken, by reason (truncated: delivered cut)\n"
		    "# TYPE esxwatch_receiver_dropped_total counter\n");
	for (int i = 0; r == 0 && i < RDROP_N; i++)
		r = buf_printf(b, "esxwatch_receiver_dropped_total{reason=\"%s\"} %"
		    PRIu64 "\n", receiver_drop_names[i], p->dropped[i]);
	if (r == 0)
		r = buf_printf(b, "# HELP esxwatch_receiver_host_silent 1 while the "
		    "host is silent (receiver.silent_after)\n"
		    "# TYPE esxwatch_receiver_host_silent gauge\n");
	for (size_t i = 0; r == 0 && i < p->nhosts; i++) {
		r = buf_puts(b, "esxwatch_receiver_host_silent{host=\"");
		if (r == 0)
			r = label(b, p->hosts[i].name);
		if (r == 0)
			r = buf_printf(b, "\"} %d\n", p->hosts[i].silent ? 1 : 0);
	}
	if (r == 0)
		r = buf_printf(b, "# HELP esxwatch_receiver_paused 1 while TCP is "
		    "not read (the spool at its budget)\n"
		    "# TYPE esxwatch_receiver_paused gauge\n"
		    "esxwatch_receiver_paused %d\n", p->paused ? 1 : 0);
	return r;
}
