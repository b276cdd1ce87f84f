/*
 * status_vsphere: the vsphere entries' figures in the status picture
 * (status_vsphere.h).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../collectors/vspoll.h"
#include "lib/json.h"
#include "status_vsphere.h"

struct vsphere_board {
	pthread_mutex_t		mu;
	struct status_vsphere	v[STATUS_MAX_VSPHERE];
	size_t			n;
};

struct vsphere_board *
vsphere_board_new(void)
{
	struct vsphere_board *b = calloc(1, sizeof(*b));

	if (b != NULL)
		pthread_mutex_init(&b->mu, NULL);
	return b;
}

void
vsphere_board_free(struct vsphere_board *b)
{
	if (b == NULL)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* one line: a server's error text never breaks the file's format */
static void
one_line(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src[i] != '\0' && i + 1 < len; i++)
		dst[i] = src[i] == '\n' || src[i] == '\r' ? ' ' : src[i];
	dst[i] = '\0';
}

void
vsphere_board_put(struct vsphere_board *b, const struct vsphere_figures *f)
{
	struct status_vsphere *v = NULL;
	size_t i;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	for (i = 0; i < b->n && v == NULL; i++)
		if (strcmp(b->v[i].name, f->name) == 0)
			v = &b->v[i];
	if (v == NULL && b->n < STATUS_MAX_VSPHERE)
		v = &b->v[b->n++];
	if (v != NULL) {
		one_line(v->name, sizeof(v->name), f->name);
		one_line(v->state, sizeof(v->state), f->state);
		one_line(v->last_error, sizeof(v->last_error), f->last_error);
		v->hosts = f->hosts;
		v->polls = f->polls;
		v->errors = f->errors;
		v->requests = f->last_requests;
		v->events = f->events;
		v->event_gaps = f->event_gaps;
		v->last_poll_ms = f->last_poll_ms;
	}
	pthread_mutex_unlock(&b->mu);
}

size_t
vsphere_board_get(struct vsphere_board *b, struct status_vsphere *out,
    size_t max)
{
	size_t n;

	if (b == NULL)
		return 0;
	pthread_mutex_lock(&b->mu);
	n = b->n < max ? b->n : max;
	memcpy(out, b->v, n * sizeof(*out));
	pthread_mutex_unlock(&b->mu);
	return n;
}

void
status_vsphere_put(struct buf *b, const struct status_vsphere *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "vsphere: %s\n state: %s\n hosts: %" PRIu64 "\n polls: %"
		    PRIu64 "\n errors: %" PRIu64 "\n requests: %" PRIu64 "\n events: %"
		    PRIu64 "\n event_gaps: %" PRIu64 "\n last_poll_ms: %" PRId64
		    "\n last_error: %s\n", v[i].name, v[i].state, v[i].hosts,
		    v[i].polls, v[i].errors, v[i].requests, v[i].events,
		    v[i].event_gaps, v[i].last_poll_ms, v[i].last_error);
}

int
status_vsphere_key(struct status_vsphere *v, const char *k, const char *val)
{
	static const struct { const char *k; size_t off; } u[] = {
		{ "hosts", offsetof(struct status_vsphere, hosts) },
		{ "polls", offsetof(struct status_vsphere, polls) },
		{ "errors", offsetof(struct status_vsphere, errors) },
		{ "requests", offsetof(struct status_vsphere, requests) },
		{ "events", offsetof(struct status_vsphere, events) },
		{ "event_gaps", offsetof(struct status_vsphere, event_gaps) },
	};
	size_t i;

	if (strcmp(k, "state") == 0)
		one_line(v->state, sizeof(v->state), val);
	else if (strcmp(k, "last_error") == 0)
		one_line(v->last_error, sizeof(v->last_error), val);
	else if (strcmp(k, "last_poll_ms") == 0)
		v->last_poll_ms = strtoll(val, NULL, 10);
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (strcmp(k, u[i].k) == 0)
			*(uint64_t *)(void *)((char *)v + u[i].off) =
			    strtoull(val, NULL, 10);
	return 0;
}

void
status_vsphere_print(FILE *out, const struct status_vsphere *v, size_t n,
    int64_t now)
{
	if (n > 0)
		fprintf(out, "\nvsphere:\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "  %s: %s, %" PRIu64 " hosts", v[i].name, v[i].state,
		    v[i].hosts);
		if (v[i].last_poll_ms > 0)
			fprintf(out, ", last poll %" PRId64 " s ago (%" PRIu64
			    " requests)", (now - v[i].last_poll_ms) / 1000,
			    v[i].requests);
		else
			fprintf(out, ", never polled");
		fprintf(out, ", %" PRIu64 " polls, %" PRIu64 " errors, %" PRIu64
		    " events", v[i].polls, v[i].errors, v[i].events);
		if (v[i].event_gaps > 0)
			fprintf(out, ", %" PRIu64 " gaps in vCenter's event history",
			    v[i].event_gaps);
		fprintf(out, "\n");
		if (v[i].last_error[0] != '\0')
			fprintf(out, "    last error: %s\n", v[i].last_error);
	}
}

void
status_vsphere_json(struct buf *b, const struct status_vsphere *v, size_t n)
{
	if (n == 0)
		return;		/* no vsphere: entry, no member */
	buf_puts(b, ",\"vsphere\":[");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "%s{\"name\":", i == 0 ? "" : ",");
		json_put_str(b, v[i].name, strlen(v[i].name));
		buf_puts(b, ",\"state\":");
		json_put_str(b, v[i].state, strlen(v[i].state));
		buf_printf(b, ",\"hosts\":%" PRIu64 ",\"polls\":%" PRIu64 ",\"errors\":%"
		    PRIu64 ",\"requests\":%" PRIu64 ",\"events\":%" PRIu64
		    ",\"event_gaps\":%" PRIu64 ",\"last_poll_ms\":%" PRId64
		    ",\"last_error\":", v[i].hosts, v[i].polls, v[i].errors,
		    v[i].requests, v[i].events, v[i].event_gaps, v[i].last_poll_ms);
		json_put_str(b, v[i].last_error, strlen(v[i].last_error));
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

static int
label(struct buf *b, const char *metric, const char *name)
{
	int r = buf_printf(b, "%s{name=\"", metric);

	for (; r == 0 && *name != '\0'; name++)
		r = *name == '\\' ? buf_puts(b, "\\\\") : *name == '"' ?
		    buf_puts(b, "\\\"") : buf_putc(b, *name);
	return r == 0 ? buf_puts(b, "\"} ") : r;
}

int
status_vsphere_metrics(struct buf *b, const struct status_vsphere *v, size_t n)
{
	static const struct { const char *m, *type, *help; int what; } rows[] = {
		{ "esxwatch_vsphere_polls_total", "counter",
		  "Polls of the vsphere entry that completed, since start", 0 },
		{ "esxwatch_vsphere_errors_total", "counter",
		  "Polls that failed (unreachable, login, certificate), since start", 1 },
		{ "esxwatch_vsphere_hosts", "gauge",
		  "Hosts the last poll saw", 2 },
		{ "esxwatch_vsphere_up", "gauge",
		  "1 while the last poll succeeded", 3 },
		{ "esxwatch_vsphere_last_poll_timestamp_seconds", "gauge",
		  "The last successful poll, Unix time; 0 = never", 4 },
	};
	int r = 0;

	if (n == 0)
		return 0;
	for (size_t k = 0; r == 0 && k < sizeof(rows) / sizeof(rows[0]); k++) {
		r = buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", rows[k].m,
		    rows[k].help, rows[k].m, rows[k].type);
		for (size_t i = 0; r == 0 && i < n; i++) {
			r = label(b, rows[k].m, v[i].name);
			if (r != 0)
				break;
			switch (rows[k].what) {
			case 0: r = buf_printf(b, "%" PRIu64 "\n", v[i].polls); break;
			case 1: r = buf_printf(b, "%" PRIu64 "\n", v[i].errors); break;
			case 2: r = buf_printf(b, "%" PRIu64 "\n", v[i].hosts); break;
			case 3: r = buf_printf(b, "%d\n", strcmp(v[i].state, "ok") == 0);
				break;
			default: r = buf_printf(b, "%.3f\n", v[i].last_poll_ms / 1000.0);
				break;
			}
		}
	}
	return r;
}
