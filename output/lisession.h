/*
 * lisession: authenticated ingestion into Log Insight (CONTRACT §4).
 *
 * With server.username set, the cfapi sink logs in through
 * POST /api/v1/sessions {"username","password","provider"} and sends
 * `Authorization: Bearer <sessionId>` with every ingest request, so the
 * server trusts the events' timestamps (unauthenticated ones are clamped
 * to within 10 minutes of its clock: loginsight-api.md §1.3).  The
 * session is renewed before its ttl runs out and again on a 401 or 440.
 * A refused login (bad password, unknown user, a password_file that is
 * not 0600, no TLS) falls back to unauthenticated ingestion with one
 * warning.  The password and the session id never appear in a log line,
 * an error or a status.
 */
#ifndef ESXWATCH_LISESSION_H
#define ESXWATCH_LISESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "transport.h"

struct lisession {
	bool			 wanted;	/* username configured */
	bool			 fallback;	/* login refused: unauthenticated */
	char			 name[64];
	const struct dest_conf	*conf;
	struct hconn		 h;		/* its own connection */
	bool			 open;
	char			 header[600];	/* "Authorization: Bearer ..." or "" */
	int64_t			 renew_ms;	/* mono_ms() to log in again at */
	int64_t			 expires_ms;	/* mono_ms() the session ends at */
	int			 ttl;		/* seconds, the last one granted */
	uint64_t		 logins;	/* successful logins (for tests/logs) */
};

/* No network yet.  trust: the destination's (shared with the ingest
 * connection so one pin covers both). */
int	 lisession_init(struct lisession *, const struct dest_conf *,
	    struct trust *, const char *name, char *err, size_t errlen);
void	 lisession_free(struct lisession *);

/*
 * Make sure a valid session is at hand (log in when there is none or its
 * ttl is near).  Returns 1 when the Authorization header changed (the
 * caller rebuilds its headers), 0 when nothing changed, -1 on a transport
 * failure or a server error (err; retry later).  After a refusal the
 * session falls back for good: header stays "" and 1 is returned once.
 */
int	 lisession_ensure(struct lisession *, char *err, size_t errlen);
/* The server said 401/440 to the session: forget it (the next ensure
 * logs in again).  Returns true if there was a session to forget. */
bool	 lisession_expired(struct lisession *);
/*
 * A destination's password: `password`, or the first line of
 * `password_file` (a regular file of mode 0600).  0, or -1 with why
 * (never the password).  For the sinks that log in with Basic auth.
 */
int	 dest_password(const struct dest_conf *, char *out, size_t outlen,
	    char *why, size_t whylen);
/* "Authorization: Bearer <id>" or NULL when unauthenticated. */
const char *lisession_header(const struct lisession *);

#endif
