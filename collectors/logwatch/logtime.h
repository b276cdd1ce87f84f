/*
 * logtime: timestamps in log text, for the agent parsers (parsers.h).
 *
 * logtime_auto() recognises the forms hosts and applications write at the
 * start of a field: ISO 8601 / RFC 3339 ("2024-05-01T10:00:00.123Z",
 * "2024-05-01 10:00:00,123", with or without a zone), Apache's CLF
 * ("[01/May/2024:10:00:00 +0200]", with or without the brackets), syslog's
 * "May  1 10:00:00" (the year is this year, or last year when that would
 * put the stamp more than a day in the future), "01-05-2024 10:00:00,123"
 * and epoch seconds or milliseconds (10 or 13 digits).
 *
 * logtime_format() reads a strftime-like format, as liagent's timestamp
 * parser and %{FORMAT}t take it: %Y %y %m %d %e %H %I %M %S %p %b %B %h
 * %a %A %f (fraction: any number of digits) %z (Z, +hh, +hhmm, +hh:mm)
 * %Z (UTC, GMT, Z) %s (epoch seconds) %T (= %H:%M:%S) %F (= %Y-%m-%d)
 * %D (= %m/%d/%y) %%; a space matches one or more blanks; any other
 * character itself.
 *
 * A time without a zone is local time (ESXi's is UTC).  Both return 0 and
 * the time in ms since the epoch and the bytes used, or -1.
 */
#ifndef ESXWATCH_LOGTIME_H
#define ESXWATCH_LOGTIME_H

#include <stddef.h>
#include <stdint.h>

int	logtime_auto(const char *s, size_t len, int64_t now_ms, int64_t *ms,
	    size_t *used);
int	logtime_format(const char *fmt, const char *s, size_t len,
	    int64_t now_ms, int64_t *ms, size_t *used);

#endif
