/*
 * report_html's inside: the report being written, shared by
 * report_html.c (reading, escaping) and report_html_out.c (the sections).
 */
#ifndef ESXWATCH_REPORT_HTML_INT_H
#define ESXWATCH_REPORT_HTML_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/buf.h"
#include "../lib/json.h"

enum { RH_SEV_CRITICAL, RH_SEV_ERROR, RH_SEV_WARNING, RH_SEV_INFO,
	RH_SEV_OTHER, RH_SEV_N };
/* The timeline's lanes: the diagnoses, then one per severity. */
#define RH_LANES	(RH_SEV_N + 1)
/* Marks per lane at most: findings in one slot of the span share a mark. */
#define RH_SLOTS	400
/* Bytes of a mark's tooltip. */
#define RH_TITLE	168

extern const char *const rh_sev_name[RH_SEV_N];

struct rh_span {
	const char	*p;
	size_t		 len;
};

struct rh_slot {
	long long	 count;
	long long	 first;		/* index of the first finding in it */
	int64_t		 ts;		/* its time */
	char		 title[RH_TITLE];	/* its rule and text, cut */
};

struct rh {
	FILE		*out;
	const char	*json;
	size_t		 len;
	struct rh_span	 bundle, host, events, diagnoses, logs, gaps;
	struct json_doc	 hostdoc;
	long long	 nevents, nsamples, nfindings, ndiag, nlogs, ngaps, untimed;
	long long	 nsev[RH_SEV_N];
	bool		 have_span;
	int64_t		 t0, t1;
	int		 cur_sev;	/* the severity a pass writes */
	struct rh_slot	 slot[RH_LANES][RH_SLOTS];
	struct buf	 tmp;
	char		 err[128];
};

void		 rh_put(struct rh *, const char *);
void		 rh_printf(struct rh *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 rh_esc(struct rh *, const char *s, size_t n);
void		 rh_escs(struct rh *, const char *s);
const char	*rh_text(struct rh *, const struct json_doc *, int node, size_t max);
void		 rh_esc_node(struct rh *, const struct json_doc *, int node, size_t max);
void		 rh_time(char *out, size_t outlen, int64_t ms, const char *fmt,
		    bool with_ms);
int		 rh_sev_of(const struct json_doc *);
bool		 rh_is_diag_event(const struct json_doc *);
bool		 rh_is_sample(const struct json_doc *);
bool		 rh_ts(const struct json_doc *, int64_t *);
void		 rh_str_node(struct json_node *, const char *v, size_t n);
int		 rh_each(struct rh *, const struct rh_span *, enum json_type want,
		    int (*fn)(struct rh *, const struct json_doc *, long long idx));
/* The timeline (report_html_tl.c). */
int		 rh_write_timeline(struct rh *);
/* The whole file (report_html_out.c); -1 on an error of the report. */
int		 rh_write_all(struct rh *);

#endif
