/*
 * collector: what every collector shares besides the registry
 * (collectors/registry.c): making its events.
 */
#include <stdarg.h>

#include "collector.h"

struct event *
ev_new(const char *kind, const char *severity, const char *fmt, ...)
{
	struct event *ev;
	va_list ap;

	va_start(ap, fmt);
	ev = event_vnewf(0, fmt, ap);
	va_end(ap);
	if (ev == NULL)
		return NULL;
	if (event_set(ev, "esxwatch_kind", kind) == -1 ||
	    event_set(ev, "esxwatch_severity", severity) == -1) {
		event_free(ev);
		return NULL;
	}
	return ev;
}
