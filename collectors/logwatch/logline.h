/*
 * logline: the header of one ESXi log line (timestamp, program).
 *
 * ESXi writes several header styles, depending on the release and on the
 * log:
 *
 *   7.0 vmkernel  2023-05-08T07:45:35.567Z cpu12:2097682)WARNING: ...
 *   8.0 vmkernel  2023-05-08T07:45:35.567Z In(182) vmkernel: cpu0:170428)...
 *   7.0 vobd      2020-04-30T07:25:58.464Z: [netCorrelator] 842494443us: [...]
 *   8.0 vobd      2025-..Z In(14) vobd[2097521]:  [UserLevelCorrelator] ...
 *   8.0 hostd     2025-..Z Er(163) Hostd[169828]: [Originator@6876 sub=..] ...
 *   8.0 cont.     2025-..Z In(166)+ Hostd[169797]: --> ...
 *   7.0 hostd     2020-..Z warning hostd[2099376] [Originator@6876 sub=..] ...
 *   vmksummary    2011-08-30T04:00:01Z heartbeat: up 0d17h24m17s, ...
 *   5.x syslog    Aug 15 06:07:13 vobd: Aug 15 06:07:13.285: 1719..us: ...
 *   relayed       Nov 28 22:25:19 esx01 2020-04-30T07:25:58.464Z: [...] ...
 *                 (a relay's RFC 3164 prefix: the host's own ISO stamp wins)
 *
 * logline_parse() never fails: what it cannot recognise it leaves unset,
 * and msg then points at the whole line.
 */
#ifndef ESXWATCH_LOGLINE_H
#define ESXWATCH_LOGLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGLINE_APPNAME_MAX	64

struct logline {
	int64_t		 ts_ms;		/* 0 = no parsable timestamp */
	char		 appname[LOGLINE_APPNAME_MAX];	/* "" = none */
	char		 severity[4];	/* "In", "Wa", "warning"[0..2] ... or "" */
	bool		 continuation;	/* 8.0 "+" marker or a "-->" message */
	const char	*msg;		/* the message after the header */
	size_t		 msglen;
};

/*
 * Parse the header of line[0..len) (no trailing newline needed; NULs are
 * tolerated).  now_ms is the read time: it supplies the year of syslog
 * style "Aug 15 06:07:13" stamps (the previous year when the result would
 * lie more than a day in the future).
 */
void	logline_parse(const char *line, size_t len, int64_t now_ms,
	    struct logline *out);

/*
 * "YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm|-hh:mm]" at s[0..len).  Returns the
 * number of bytes consumed and the time in ms since the epoch (UTC), or 0
 * when s does not start with such a stamp.
 */
size_t	logline_iso8601(const char *s, size_t len, int64_t *ms);

/* Days since 1970-01-01 of a proleptic Gregorian date (no time zone). */
int64_t	logline_days_from_civil(int64_t y, unsigned m, unsigned d);

/*
 * The "[esx.problem.storage.apd.start]" / "[vob.scsi...]" id in a line:
 * the first bracketed token that starts with esx. or vob. and consists of
 * [A-Za-z0-9._-].  Copies it (without brackets) to out and returns its
 * length, 0 if there is none.
 */
size_t	logline_vob_id(const char *line, size_t len, char *out, size_t outlen);

#endif
