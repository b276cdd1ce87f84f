/*
 * report_html_tl: the timeline of the HTML report, an inline SVG.
 *
 * One lane for the diagnoses and one per severity, the span of the logs
 * and findings across.  What is drawn is bounded whatever the report: the
 * span is cut into RH_SLOTS slots and the findings of one lane in one slot
 * share a mark (its tooltip says how many, it links to the first), so a
 * lane has at most RH_SLOTS marks; the caption says when marks are shared.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../lib/json.h"
#include "../lib/utf8.h"
#include "report_html_int.h"

/* Geometry in SVG user units (the viewBox is TL_W wide). */
#define TL_W		1000
#define TL_LX		118		/* the plot's left edge (labels before) */
#define TL_PW		(TL_W - TL_LX - 14)
#define TL_LANE		26
#define TL_TOP		10
#define TL_MAXTICKS	8

/* Slot of ts in the span (doubles: a hostile timestamp cannot overflow). */
static int
slot_of(const struct rh *r, int64_t ts)
{
	double	 f = ((double)ts - (double)r->t0) / ((double)r->t1 - (double)r->t0);
	int	 s = (int)(f * RH_SLOTS);

	if (f < 0 || s < 0)
		return 0;
	return s >= RH_SLOTS ? RH_SLOTS - 1 : s;
}

static void
slot_add(struct rh *r, int lane, const struct json_doc *d, long long idx,
    const char *rulekey)
{
	struct rh_slot *sl;
	const char *t;
	size_t	 n;
	int64_t	 ts;

	if (!r->have_span || !rh_ts(d, &ts))
		return;
	sl = &r->slot[lane][slot_of(r, ts)];
	if (sl->count++ > 0)
		return;
	sl->first = idx;
	sl->ts = ts;
	t = rh_text(r, d, json_get(d, 0, rulekey), 48);
	snprintf(sl->title, sizeof(sl->title), "%s: ", t != NULL ? t : "");
	n = strlen(sl->title);
	t = rh_text(r, d, json_get(d, 0, "text"), 0);
	if (t != NULL) {
		size_t k = utf8_cut(t, r->tmp.len, sizeof(sl->title) - 1 - n);

		memcpy(sl->title + n, t, k);
		sl->title[n + k] = '\0';
	}
}

static int
tl_event(struct rh *r, const struct json_doc *d, long long idx)
{
	if ((r->diagnoses.p != NULL && rh_is_diag_event(d)) || rh_is_sample(d))
		return 0;
	slot_add(r, 1 + rh_sev_of(d), d, idx, "esxwatch_rule");
	return 0;
}

static int
tl_diag(struct rh *r, const struct json_doc *d, long long idx)
{
	slot_add(r, 0, d, idx, "esxwatch_diagnosis");
	return 0;
}

static double
x_of(const struct rh *r, double ts)
{
	return TL_LX + (ts - (double)r->t0) * TL_PW / ((double)r->t1 - (double)r->t0);
}

/* The time axis: at most TL_MAXTICKS ticks on round UTC times. */
static void
write_axis(struct rh *r, int top, int axis_y)
{
	static const double steps[] = { 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4,
	    3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5,
	    6048e5, 2592e6, 31536e6 };
	double	 span = (double)r->t1 - (double)r->t0, step = steps[0], t;
	size_t	 i;
	const char *fmt;
	char	 lab[40];
	int	 n = 0;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		step = steps[i];
		if (span / step <= TL_MAXTICKS)
			break;
	}
	while (span / step > TL_MAXTICKS)
		step *= 10;
	fmt = step < 6e4 ? "%H:%M:%S" : step < 864e5 ? "%m-%d %H:%M" : "%Y-%m-%d";
	rh_printf(r, "<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
	    TL_LX, axis_y, TL_LX + TL_PW, axis_y);
	for (t = step * ceil((double)r->t0 / step); t <= (double)r->t1 &&
	    n <= TL_MAXTICKS; t += step, n++) {
		double x;

		x = x_of(r, t);
		rh_time(lab, sizeof(lab), (int64_t)t, fmt, false);
		rh_printf(r, "<line class=\"g\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		    "y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
		    "%s</text>\n", x, top, x, axis_y + 4, x, axis_y + 16, lab);
	}
}

static void
write_marks(struct rh *r, int lane, int y, long long *marks)
{
	const char *cls = lane == 0 ? "diagnosis" : rh_sev_name[lane - 1];
	char	 t[48];
	int	 s;

	for (s = 0; s < RH_SLOTS; s++) {
		const struct rh_slot *sl = &r->slot[lane][s];

		if (sl->count == 0)
			continue;
		(*marks)++;
		rh_time(t, sizeof(t), sl->ts, "%Y-%m-%d %H:%M:%S", false);
		rh_printf(r, "<a href=\"#%c%lld\"><rect class=\"m s-%s\" x=\"%.1f\" "
		    "y=\"%d\" width=\"3\" height=\"18\"><title>%lld %s at %s UTC%s ",
		    lane == 0 ? 'd' : 'f', sl->first, cls,
		    TL_LX + (double)s * TL_PW / RH_SLOTS, y, sl->count,
		    lane == 0 ? "diagnosis" : cls, t, sl->count > 1 ? " (the first)" : "");
		rh_escs(r, sl->title);
		rh_put(r, "</title></rect></a>\n");
	}
}

static void
write_caption(struct rh *r, long long marks)
{
	long long timed = r->nfindings + r->ndiag - r->untimed;

	rh_printf(r, "<p class=\"sub\">%lld findings and diagnoses with a time, drawn "
	    "as %lld marks", timed, marks);
	if (marks < timed)
		rh_printf(r, " (at most %d a lane: those in the same 1/%d of the span "
		    "share one mark, which says how many and links to the first)",
		    RH_SLOTS, RH_SLOTS);
	if (r->untimed > 0)
		rh_printf(r, "; %lld without a time are not drawn", r->untimed);
	rh_put(r, ". Times in UTC.</p>\n");
}

int
rh_write_timeline(struct rh *r)
{
	long long marks = 0;
	int	 lane, j = 0, nl, h;

	rh_put(r, "<section id=\"timeline\">\n<h2>Timeline</h2>\n");
	if (!r->have_span) {
		rh_put(r, "<p>No timeline: no log line and no finding has a time.</p>\n"
		    "</section>\n");
		return 0;
	}
	memset(r->slot, 0, sizeof(r->slot));
	if (rh_each(r, &r->events, JSON_OBJ, tl_event) == -1 ||
	    rh_each(r, &r->diagnoses, JSON_OBJ, tl_diag) == -1)
		return -1;
	nl = r->nsev[RH_SEV_OTHER] > 0 ? RH_LANES : RH_LANES - 1;
	h = TL_TOP + nl * TL_LANE + 30;
	rh_printf(r, "<svg class=\"tl\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"findings over time\">\n", TL_W, h);
	write_axis(r, TL_TOP, TL_TOP + nl * TL_LANE + 2);
	for (lane = 0; lane < nl; lane++, j++) {
		int	 top = TL_TOP + j * TL_LANE;
		long long n = lane == 0 ? r->ndiag : r->nsev[lane - 1];

		rh_printf(r, "<line class=\"g\" x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
		    "<text x=\"6\" y=\"%d\">%s (%lld)</text>\n", top + TL_LANE, TL_W,
		    top + TL_LANE, top + 17,
		    lane == 0 ? "diagnoses" : rh_sev_name[lane - 1], n);
		write_marks(r, lane, top + 4, &marks);
	}
	rh_put(r, "</svg>\n");
	write_caption(r, marks);
	rh_put(r, "</section>\n");
	return 0;
}
