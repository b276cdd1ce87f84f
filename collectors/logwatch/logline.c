/*
 * logline: parse the header of an ESXi log line.  See logline.h for the
 * formats.  Everything here works on (pointer, length) because the line
 * comes straight out of a read buffer: no NUL terminator, maybe NUL bytes
 * inside, maybe garbage.  Every index is checked against len.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "logline.h"

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* n digits at s (n <= 9), or -1. */
static long
digits(const char *s, size_t len, size_t n)
{
	long v = 0;
	size_t i;

	if (len < n)
		return -1;
	for (i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/*
 * Howard Hinnant's days_from_civil: exact for every Gregorian date, and
 * independent of the process time zone (timegm is not in C11).
 */
int64_t
logline_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int
days_in_month(long y, long m)
{
	static const int dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

static int64_t
civil_ms(long y, long mo, long d, long h, long mi, long s, long ms)
{
	return ((logline_days_from_civil(y, (unsigned)mo, (unsigned)d) * 24 + h) *
	    60 + mi) * 60000 + (int64_t)s * 1000 + ms;
}

size_t
logline_iso8601(const char *s, size_t len, int64_t *out)
{
	long y, mo, d, h, mi, sec, ms = 0, off = 0;
	size_t i;

	y = digits(s, len, 4);
	if (y < 1970 || len < 19 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
		return 0;
	mo = digits(s + 5, len - 5, 2);
	d = digits(s + 8, len - 8, 2);
	h = digits(s + 11, len - 11, 2);
	mi = digits(s + 14, len - 14, 2);
	sec = digits(s + 17, len - 17, 2);
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
		return 0;
	i = 19;
	if (i < len && s[i] == '.') {
		/* Fraction: keep milliseconds, skip further digits. */
		size_t nd = 0;

		i++;
		while (i < len && is_digit(s[i])) {
			if (nd < 3)
				ms = ms * 10 + (s[i] - '0');
			nd++;
			i++;
		}
		if (nd == 0)
			return 0;
		for (; nd < 3; nd++)
			ms *= 10;
	}
	if (i < len && s[i] == 'Z')
		i++;
	else if (i + 6 <= len && (s[i] == '+' || s[i] == '-') &&
	    s[i + 3] == ':') {
		long oh = digits(s + i + 1, 2, 2), om = digits(s + i + 4, 2, 2);

		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return 0;
		off = (oh * 60 + om) * 60000;
		if (s[i] == '-')
			off = -off;
		i += 6;
	}
	*out = civil_ms(y, mo, d, h, mi, sec, ms) - off;
	return i;
}

/* "Aug 15 06:07:13" (RFC 3164), year from now_ms. */
static size_t
syslog_stamp(const char *s, size_t len, int64_t now, int64_t *out)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	long mo = -1, d, h, mi, sec, y;
	size_t i;
	time_t t;
	struct tm tm;
	int64_t v;

	if (len < 15 || s[3] != ' ' || s[9] != ':' || s[12] != ':')
		return 0;
	for (i = 0; i < 12; i++)
		if (memcmp(s, months + i * 3, 3) == 0)
			mo = (long)i + 1;
	if (mo < 0)
		return 0;
	d = s[4] == ' ' ? digits(s + 5, 1, 1) : digits(s + 4, 2, 2);
	h = digits(s + 7, 2, 2);
	mi = digits(s + 10, 2, 2);
	sec = digits(s + 13, 2, 2);
	if (d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
	    sec < 0 || sec > 60)
		return 0;
	t = (time_t)(now / 1000);
	if (gmtime_r(&t, &tm) == NULL)
		return 0;
	y = tm.tm_year + 1900;
	if (d > days_in_month(y, mo))
		return 0;
	v = civil_ms(y, mo, d, h, mi, sec, 0);
	if (v > now + 86400000LL && d <= days_in_month(y - 1, mo))
		v = civil_ms(y - 1, mo, d, h, mi, sec, 0);
	*out = v;
	return 15;
}

/*
 * A program token: [A-Za-z][A-Za-z0-9_.-]* then optionally "[...]" (a
 * pid or a redacted ####), then ':' followed by a space or the end of the
 * line.  The ':' rule keeps "cpu12:2097682)" from looking like a program.
 * Returns bytes consumed (including ": "), 0 if none.
 */
static size_t
program(const char *s, size_t len, char *name, size_t namelen, bool need_colon)
{
	size_t i = 0, n;

	if (len == 0 || !is_alpha(s[0]))
		return 0;
	while (i < len && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_' ||
	    s[i] == '.' || s[i] == '-') && i < 48)
		i++;
	n = i;
	if (i < len && s[i] == '[') {
		size_t j = i + 1;

		while (j < len && j < i + 24 && s[j] != ']' && s[j] != ' ')
			j++;
		if (j >= len || s[j] != ']' || j == i + 1)
			return 0;
		i = j + 1;
	}
	if (i < len && s[i] == ':') {
		if (i + 1 < len && s[i + 1] != ' ')
			return 0;
		i++;
	} else if (need_colon)
		return 0;
	if (i < len && s[i] == ' ')
		i++;
	if (n >= namelen)
		n = namelen - 1;
	memcpy(name, s, n);
	name[n] = '\0';
	return i;
}

/* 8.0 severity token: Em|Al|Cr|Er|Wa|No|In|Db, optional (n), optional +. */
static size_t
severity80(const char *s, size_t len, struct logline *out)
{
	static const char sev[] = "EmAlCrErWaNoInDb";
	size_t i, k;

	if (len < 3)
		return 0;
	for (k = 0; k < 8; k++)
		if (s[0] == sev[k * 2] && s[1] == sev[k * 2 + 1])
			break;
	if (k == 8)
		return 0;
	i = 2;
	if (i < len && s[i] == '(') {
		size_t j = i + 1;

		while (j < len && j < i + 6 && is_digit(s[j]))
			j++;
		if (j >= len || s[j] != ')' || j == i + 1)
			return 0;
		i = j + 1;
	}
	if (i < len && s[i] == '+') {
		out->continuation = true;
		i++;
	}
	if (i >= len || s[i] != ' ')
		return 0;
	out->severity[0] = s[0];
	out->severity[1] = s[1];
	out->severity[2] = '\0';
	return i + 1;
}

/* 7.0 hostd style lowercase level word before "hostd[..]". */
static size_t
level70(const char *s, size_t len)
{
	static const char *const words[] = { "verbose ", "info ", "warning ",
	    "error ", "critical ", "panic ", "trivia ", NULL };
	size_t k, wl;

	for (k = 0; words[k] != NULL; k++) {
		wl = strlen(words[k]);
		if (len > wl && memcmp(s, words[k], wl) == 0)
			return wl;
	}
	return 0;
}

/*
 * A syslog relay puts its own "MMM dd hh:mm:ss HOST " (and maybe a
 * "PROG: ") before the line it received; when the host's own stamp follows
 * (ISO, or "MMM dd hh:mm:ss " of a 5.x host: KB 318898 quotes "Nov 28
 * 22:25:19 10.2.0.103 Nov 29 03:25:19 vobd: ..."), that line is what to
 * parse: the host's time, not the relay's (hours off when the relay runs
 * in another zone).  Returns the offset of that stamp after at most two
 * tokens, 0 if there is none.
 */
static size_t
relayed_stamp(const char *line, size_t len, size_t i, int64_t now)
{
	int64_t ts;
	size_t n;
	int tok;

	for (tok = 0; tok < 2; tok++) {
		while (i < len && line[i] != ' ')
			i++;
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			return 0;
		if (logline_iso8601(line + i, len - i, &ts) > 0)
			return i;
		n = syslog_stamp(line + i, len - i, now, &ts);
		if (n > 0 && i + n < len && line[i + n] == ' ')
			return i;
	}
	return 0;
}

void
logline_parse(const char *line, size_t len, int64_t now, struct logline *out)
{
	size_t i = 0, n;
	int64_t ts;

	memset(out, 0, sizeof(*out));
	out->msg = line;
	out->msglen = len;

	n = logline_iso8601(line, len, &ts);
	if (n == 0) {
		n = syslog_stamp(line, len, now, &ts);
		if (n == 0 || n >= len || line[n] != ' ')
			goto cont;
		i = relayed_stamp(line, len, n + 1, now);
		if (i > 0) {
			logline_parse(line + i, len - i, now, out);
			return;
		}
		out->ts_ms = ts;
		i = n + 1;
		/* "vobd: " / "vmkernel: " after the syslog stamp. */
		n = program(line + i, len - i, out->appname,
		    sizeof(out->appname), true);
		i += n;
		goto done;
	}
	out->ts_ms = ts;
	i = n;
	if (i < len && line[i] == ':')		/* 7.0 vobd "...Z: [" */
		i++;
	if (i >= len || line[i] != ' ')
		goto done;
	i++;
	n = severity80(line + i, len - i, out);
	if (n > 0) {
		/* 8.0: "In(182) vmkernel: ", "In(14) vobd[..]:  " */
		i += n;
		n = program(line + i, len - i, out->appname,
		    sizeof(out->appname), true);
		i += n;
	} else {
		n = level70(line + i, len - i);
		if (n > 0) {
			/* 7.0 hostd: "warning hostd[####] [Originator..." */
			size_t m = program(line + i + n, len - i - n,
			    out->appname, sizeof(out->appname), false);

			if (m > 0) {
				memcpy(out->severity, line + i, 2);
				out->severity[2] = '\0';
				i += n + m;
			}
		} else {
			/* vmksummary "heartbeat: ", "bootstop[..]: ";
			 * not "cpu0:1)". */
			i += program(line + i, len - i, out->appname,
			    sizeof(out->appname), true);
		}
	}
done:
	out->msg = line + i;
	out->msglen = len - i;
	/* vobd puts two spaces after "vobd[tid]:"; the message starts after. */
	while (out->msglen > 0 && out->msg[0] == ' ' && out->appname[0]) {
		out->msg++;
		out->msglen--;
	}
cont:
	if (out->msglen >= 3 && memcmp(out->msg, "-->", 3) == 0)
		out->continuation = true;
}

size_t
logline_vob_id(const char *line, size_t len, char *out, size_t outlen)
{
	size_t i, j;

	for (i = 0; i + 5 < len; i++) {
		if (line[i] != '[')
			continue;
		if (memcmp(line + i + 1, "esx.", 4) != 0 &&
		    memcmp(line + i + 1, "vob.", 4) != 0)
			continue;
		for (j = i + 1; j < len; j++) {
			char c = line[j];

			if (!(is_alpha(c) || is_digit(c) || c == '.' ||
			    c == '_' || c == '-'))
				break;
		}
		if (j < len && line[j] == ']' && j - i - 1 < outlen &&
		    j - i - 1 > 4) {
			memcpy(out, line + i + 1, j - i - 1);
			out[j - i - 1] = '\0';
			return j - i - 1;
		}
	}
	if (outlen > 0)
		out[0] = '\0';
	return 0;
}
