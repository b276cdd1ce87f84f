/*
 * logtime: timestamps in log text (see logtime.h).
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "logtime.h"

static const char *const months[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec",
};
static const char *const month_long[] = {
	"january", "february", "march", "april", "may", "june", "july",
	"august", "september", "october", "november", "december",
};
static const char *const days[] = {
	"sunday", "monday", "tuesday", "wednesday", "thursday", "friday",
	"saturday",
};

struct lt {
	const char	*s;
	size_t		 len, i;
	int		 year, mon, mday, hour, min, sec, ms;
	bool		 have_year, have_zone, pm, have_ampm, have_epoch;
	long		 zone_s;	/* east of UTC */
	int64_t		 epoch_ms;
};

static int
num(struct lt *t, int mindig, int maxdig, int *out)
{
	int v = 0, n = 0;

	while (n < maxdig && t->i < t->len && isdigit((unsigned char)t->s[t->i])) {
		v = v * 10 + (t->s[t->i] - '0');
		t->i++;
		n++;
	}
	if (n < mindig)
		return -1;
	*out = v;
	return 0;
}

/* A name from list (abbreviated to 3 letters, or whole). */
static int
name(struct lt *t, const char *const *list, size_t n, bool full_ok)
{
	size_t k, l;

	for (k = 0; k < n; k++) {
		l = strlen(list[k]);
		if (full_ok && t->len - t->i >= l &&
		    strncasecmp(t->s + t->i, list[k], l) == 0) {
			t->i += l;
			return (int)k;
		}
	}
	for (k = 0; k < n; k++) {
		if (t->len - t->i >= 3 && strncasecmp(t->s + t->i, list[k], 3) == 0) {
			t->i += 3;
			return (int)k;
		}
	}
	return -1;
}

static int
zone(struct lt *t)
{
	int h = 0, m = 0, sign;

	if (t->i < t->len && (t->s[t->i] == 'Z' || t->s[t->i] == 'z')) {
		t->i++;
		t->have_zone = true;
		t->zone_s = 0;
		return 0;
	}
	if (t->i >= t->len || (t->s[t->i] != '+' && t->s[t->i] != '-'))
		return -1;
	sign = t->s[t->i++] == '-' ? -1 : 1;
	if (num(t, 2, 2, &h) < 0)
		return -1;
	if (t->i < t->len && t->s[t->i] == ':')
		t->i++;
	if (t->i < t->len && isdigit((unsigned char)t->s[t->i]) &&
	    num(t, 2, 2, &m) < 0)
		return -1;
	if (h > 14 || m > 59)
		return -1;
	t->have_zone = true;
	t->zone_s = sign * (h * 3600L + m * 60L);
	return 0;
}

static int
zone_name(struct lt *t)
{
	static const char *const z[] = { "UTC", "GMT", "Z" };
	size_t k, l;

	for (k = 0; k < 3; k++) {
		l = strlen(z[k]);
		if (t->len - t->i >= l && strncasecmp(t->s + t->i, z[k], l) == 0) {
			t->i += l;
			t->have_zone = true;
			t->zone_s = 0;
			return 0;
		}
	}
	return -1;
}

static int
fraction(struct lt *t)
{
	int n = 0, v = 0;

	if (t->i + 1 < t->len && (t->s[t->i] == '.' || t->s[t->i] == ',') &&
	    isdigit((unsigned char)t->s[t->i + 1]))
		t->i++;
	while (t->i < t->len && isdigit((unsigned char)t->s[t->i])) {
		if (n < 3)
			v = v * 10 + (t->s[t->i] - '0');
		n++;
		t->i++;
	}
	while (n > 0 && n < 3) {
		v *= 10;
		n++;
	}
	t->ms = v;
	return 0;
}

static int
epoch(struct lt *t)
{
	int64_t v = 0;
	int n = 0;

	while (t->i < t->len && isdigit((unsigned char)t->s[t->i]) && n < 13) {
		v = v * 10 + (t->s[t->i] - '0');
		t->i++;
		n++;
	}
	if (n != 10 && n != 13)
		return -1;
	t->have_epoch = true;
	t->epoch_ms = n == 10 ? v * 1000 : v;
	return 0;
}

static int spec(struct lt *, char c);

static int
sub(struct lt *t, const char *f)
{
	for (; *f != '\0'; f++) {
		if (*f == '%' && f[1] != '\0') {
			f++;
			if (spec(t, *f) < 0)
				return -1;
		} else if (*f == ' ') {
			if (t->i >= t->len || (t->s[t->i] != ' ' && t->s[t->i] != '\t'))
				return -1;
			while (t->i < t->len && (t->s[t->i] == ' ' || t->s[t->i] == '\t'))
				t->i++;
		} else {
			if (t->i >= t->len || t->s[t->i] != *f)
				return -1;
			t->i++;
		}
	}
	return 0;
}

static int
spec(struct lt *t, char c)
{
	int v, k;

	switch (c) {
	case 'Y': t->have_year = true; return num(t, 4, 4, &t->year);
	case 'y':
		if (num(t, 2, 2, &v) < 0)
			return -1;
		t->have_year = true;
		t->year = v < 70 ? 2000 + v : 1900 + v;
		return 0;
	case 'm': return num(t, 1, 2, &t->mon);
	case 'e':
		while (t->i < t->len && t->s[t->i] == ' ')
			t->i++;
		/* FALLTHROUGH */
	case 'd': return num(t, 1, 2, &t->mday);
	case 'H': return num(t, 1, 2, &t->hour);
	case 'I': t->have_ampm = true; return num(t, 1, 2, &t->hour);
	case 'M': return num(t, 1, 2, &t->min);
	case 'S': return num(t, 1, 2, &t->sec);
	case 'f': return fraction(t);
	case 'z': return zone(t);
	case 'Z': return zone_name(t);
	case 's': return epoch(t);
	case 'T': return sub(t, "%H:%M:%S");
	case 'F': return sub(t, "%Y-%m-%d");
	case 'D': return sub(t, "%m/%d/%y");
	case 'b': case 'h': case 'B':
		k = name(t, months, 12, false);
		if (k >= 0 && c == 'B' && t->i >= 3) {
			/* take the rest of the long name when it is there */
			size_t l = strlen(month_long[k]) - 3;

			if (t->len - t->i >= l &&
			    strncasecmp(t->s + t->i, month_long[k] + 3, l) == 0)
				t->i += l;
		}
		if (k < 0)
			return -1;
		t->mon = k + 1;
		return 0;
	case 'a': case 'A': return name(t, days, 7, true) < 0 ? -1 : 0;
	case 'p':
		if (t->len - t->i < 2)
			return -1;
		if (strncasecmp(t->s + t->i, "pm", 2) == 0)
			t->pm = true;
		else if (strncasecmp(t->s + t->i, "am", 2) != 0)
			return -1;
		t->have_ampm = true;
		t->i += 2;
		return 0;
	case '%':
		if (t->i >= t->len || t->s[t->i] != '%')
			return -1;
		t->i++;
		return 0;
	default:
		return -1;
	}
}

static int64_t
days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int64_t
to_ms(const struct lt *t, int year)
{
	int64_t d, secs;
	int hour = t->hour;
	struct tm tm;
	time_t tt;

	if (t->have_ampm) {
		if (hour == 12)
			hour = 0;
		if (t->pm)
			hour += 12;
	}
	if (t->have_zone) {
		d = days_from_civil(year, t->mon, t->mday);
		secs = d * 86400 + hour * 3600 + t->min * 60 + t->sec - t->zone_s;
		return secs * 1000 + t->ms;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900;
	tm.tm_mon = t->mon - 1;
	tm.tm_mday = t->mday;
	tm.tm_hour = hour;
	tm.tm_min = t->min;
	tm.tm_sec = t->sec;
	tm.tm_isdst = -1;
	tt = mktime(&tm);
	if (tt == (time_t)-1)
		return -1;
	return (int64_t)tt * 1000 + t->ms;
}

static int
finish(struct lt *t, int64_t now_ms, int64_t *ms, size_t *used)
{
	int year;
	int64_t v;

	if (t->have_epoch) {
		*ms = t->epoch_ms;
		*used = t->i;
		return 0;
	}
	if (t->mon < 1 || t->mon > 12 || t->mday < 1 || t->mday > 31 ||
	    t->hour > 23 || t->min > 59 || t->sec > 60)
		return -1;
	if (t->have_year) {
		v = to_ms(t, t->year);
	} else {
		time_t now = (time_t)(now_ms / 1000);
		struct tm nt;

		if (gmtime_r(&now, &nt) == NULL)
			return -1;
		year = nt.tm_year + 1900;
		v = to_ms(t, year);
		if (v > now_ms + 86400000)
			v = to_ms(t, year - 1);
	}
	if (v < 0)
		return -1;
	*ms = v;
	*used = t->i;
	return 0;
}

int
logtime_format(const char *fmt, const char *s, size_t len, int64_t now_ms,
    int64_t *ms, size_t *used)
{
	struct lt t;

	memset(&t, 0, sizeof(t));
	t.s = s;
	t.len = len;
	t.mday = 1;
	t.mon = 0;
	if (sub(&t, fmt) < 0)
		return -1;
	if (t.mon == 0 && !t.have_epoch)
		t.mon = 1;
	return finish(&t, now_ms, ms, used);
}

int
logtime_auto(const char *s, size_t len, int64_t now_ms, int64_t *ms,
    size_t *used)
{
	/* Longest forms first: a zone or fraction is taken when present. */
	static const char *const forms[] = {
		"%Y-%m-%dT%H:%M:%S%f%z", "%Y-%m-%dT%H:%M:%S%f",
		"%Y-%m-%d %H:%M:%S%f %Z", "%Y-%m-%d %H:%M:%S%f%z",
		"%Y-%m-%d %H:%M:%S%f",
		"[%d/%b/%Y:%H:%M:%S %z]", "%d/%b/%Y:%H:%M:%S %z",
		"%d-%m-%Y %H:%M:%S%f %Z", "%d-%m-%Y %H:%M:%S%f",
		"%Y/%m/%d %H:%M:%S%f", "%a %b %e %H:%M:%S %Y",
		"%b %e %H:%M:%S", "%b %e %Y %H:%M:%S",
	};
	size_t k;

	for (k = 0; k < sizeof(forms) / sizeof(forms[0]); k++)
		if (logtime_format(forms[k], s, len, now_ms, ms, used) == 0)
			return 0;
	/* epoch seconds or milliseconds, alone as a token */
	if (logtime_format("%s", s, len, now_ms, ms, used) == 0 &&
	    (*used == len || !isdigit((unsigned char)s[*used])))
		return 0;
	return -1;
}
