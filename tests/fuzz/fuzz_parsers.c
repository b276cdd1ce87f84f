/*
 * fuzz_parsers: the agent parsers, the time reader and the filter
 * expressions on arbitrary input.  The first byte picks what runs; the
 * rest is the text (or, for the definitions, "format\ntext").
 * Invariants: nothing crashes or leaks, every field set has a valid name,
 * times are never negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/event.h"
#include "../../agent/lib/lfilter.h"
#include "../../collectors/logwatch/logtime.h"
#include "../../collectors/logwatch/parsers.h"

static const char *
get(void *arg, const char *name)
{
	return event_get(arg, name);
}

static void
check(const struct event *ev)
{
	size_t i;

	for (i = 0; i < ev->nfields; i++)
		if (!field_name_valid(ev->fields[i].name))
			abort();
	if (ev->timestamp_ms < 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const bases[] = {
		"clf", "csv", "kvp", "timestamp", "regex", "syslog", "json", "auto",
	};
	struct parsers *ps;
	struct parser_def d;
	const struct parser *p;
	struct event *ev;
	char err[256], *fmt = NULL, *text;
	const char *nl;
	size_t tl;
	int64_t ms;
	size_t used;
	uint8_t mode;

	if (size < 1 || size > 65536)
		return 0;
	mode = data[0];
	data++;
	size--;
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	tl = strlen(text);
	ps = parsers_new();
	memset(&d, 0, sizeof(d));
	d.name = "f";
	d.base_parser = bases[mode % 8];
	if (mode & 0x10) {	/* "format\ntext" */
		nl = memchr(text, '\n', tl);
		if (nl != NULL) {
			fmt = strndup(text, (size_t)(nl - text));
			memmove(text, nl + 1, tl - (size_t)(nl - text));
			tl = strlen(text);
		}
	}
	d.format = fmt;
	d.fields = (mode & 0x20) ? "a,,b,c" : "*";
	d.extract_sd = (mode & 0x40) ? "yes" : NULL;
	d.delimiter = (mode & 0x80) ? "\", \"" : NULL;
	d.next_parser = (mode & 0x08) ? "kvp" : NULL;
	d.field_decoder = (mode & 0x08) ? "{\"a\":\"json\", \"b\":{\"a\":{\"x*\":\"auto\"}}}" : NULL;
	d.field_rename = "{\"a\":\"renamed\"}";
	d.exclude_fields = "c;d";
	if (parsers_add(ps, &d, err, sizeof(err)) == 0 &&
	    parsers_link(ps, err, sizeof(err)) == 0) {
		p = parsers_get(ps, "f");
		ev = event_new(1733000000000LL, "x");
		if (p != NULL && ev != NULL) {
			event_set(ev, "hostname", "h");
			parser_apply(p, text, tl, 1733000000000LL, ev);
			check(ev);
		}
		event_free(ev);
	}
	parsers_free(ps);
	if (logtime_auto(text, tl, 1733000000000LL, &ms, &used) == 0 && used > tl)
		abort();
	if (fmt != NULL && logtime_format(fmt, text, tl, 1733000000000LL, &ms, &used) == 0 &&
	    used > tl)
		abort();
	{
		struct lfilter *f = lfilter_compile(text, err, sizeof(err), &used);

		if (f != NULL) {
			ev = event_new(0, "x");
			if (ev != NULL) {
				event_set(ev, "a", "1");
				event_set(ev, "severity", "debug");
				(void)lfilter_eval(f, get, ev);
				event_free(ev);
			}
			lfilter_free(f);
		} else if (used > tl) {
			abort();
		}
	}
	free(fmt);
	free(text);
	return 0;
}
