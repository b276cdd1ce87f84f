/*
 * transport: what the network sinks share — libcurl setup with every TLS
 * option in ONE place, clear error messages, one keep-alive HTTP connection,
 * the HTTP status policy.  The encoders are in cfapi.h and syslog.h.
 */
#ifndef ESXWATCH_TRANSPORT_H
#define ESXWATCH_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <curl/curl.h>

#include "../agent/lib/buf.h"
#include "../agent/config/config.h"
#include "../agent/event.h"
#include "sink.h"
#include "trust.h"

#define TRANSPORT_DEFAULT_TIMEOUT	30	/* seconds, when conf->timeout is 0 */
#define TRANSPORT_MAX_RESPONSE		(64 * 1024)

/* curl_global_init() exactly once, whichever thread gets here first. */
int	 transport_global_init(void);

/*
 * Point an easy handle at url with the destination's TLS policy: verify the
 * peer and its name (against ssl_cn when set — the URL's host is replaced by
 * ssl_cn and the connection goes to the real host through CONNECT_TO, so
 * SNI and the name check use ssl_cn), ssl_ca_path or the system bundle,
 * TLS 1.2 at least, or no checks at all with ssl_accept_any.  Also sets the
 * timeouts, NOSIGNAL and the error buffer.  *connect_to receives a list the
 * caller frees after the handle.  0 ok, -1 with err filled.
 */
int	 transport_setup(CURL *, const struct dest_conf *, const char *url,
	    struct curl_slist **connect_to, char *errbuf, char *err, size_t errlen);
/* The same with the destination's trust state (trust.h): first_use pins. */
int	 transport_setup_trust(CURL *, const struct dest_conf *,
	    const struct trust *, const char *url, struct curl_slist **connect_to,
	    char *errbuf, char *err, size_t errlen);

/*
 * Turn a failed transfer into a sentence naming the cause:
 * "certificate signed by an unknown CA: ...", "name mismatch: expected X,
 * certificate has Y", "cannot connect to ...", "timed out ...".  For a name
 * mismatch it makes a second, unverified handshake to read the names the
 * certificate carries.
 */
void	 transport_describe(CURLcode, const char *errbuf,
	    const struct dest_conf *, const char *url, char *out, size_t outlen);
/* transport_describe, and a changed pinned certificate named with both
 * fingerprints. */
void	 transport_describe_trust(CURLcode, const char *errbuf,
	    const struct dest_conf *, const struct trust *, const char *url,
	    char *out, size_t outlen);

/* The URL with any user:password@ removed, for logs. */
void	 transport_redact_url(const char *url, char *out, size_t outlen);
/* "http(s)://host:port" + path for a destination (IPv6 bracketed). */
int	 transport_base_url(const struct dest_conf *, const char *path,
	    struct buf *out);
int	 transport_timeout(const struct dest_conf *);
/* The CA bundle used when ssl_ca_path is empty (first readable of the
 * ESXi and Linux usual places), or NULL for libcurl's default. */
const char *transport_default_ca(void);

struct gzip;
/*
 * Where a sink posts: its configured url when set, else
 * "http(s)://hostname:port" + path.  0, or -1 (out of memory).
 */
int	 transport_target_url(const struct dest_conf *, const char *url,
	    const char *path, struct buf *out);
/*
 * The headers of a request with a JSON or NDJSON body: content_type, no
 * "Expect: 100-continue" (one round trip less), "Content-Encoding: gzip"
 * unless compress is "none" (then *gz is made for the caller; else NULL),
 * and each configured extra header as "NAME: VALUE" (names and values
 * checked by the loader).  NULL when out of memory (nothing left made).
 */
struct curl_slist *transport_body_headers(const char *content_type,
	    const char *compress, const struct kvlist *extra, struct gzip **gz);

/* One persistent HTTP connection (keep-alive through the reused handle). */
struct hconn {
	CURL			*curl;
	struct curl_slist	*connect_to;
	const struct dest_conf	*conf;
	struct trust		*trust;		/* NULL: no pinning */
	bool			 pin_applied;	/* the handle checks the pin */
	char			*url;
	char			 errbuf[CURL_ERROR_SIZE];
	time_t			 opened;	/* when the connection was (re)made */
	bool			 fresh;		/* force a new connection next time */
	struct buf		 resp;		/* body of the last response */
	long			 status;	/* HTTP status of the last response */
	int			 retry_after;	/* seconds, from Retry-After, or 0 */
};

int	 hconn_open(struct hconn *, const struct dest_conf *, const char *url,
	    char *err, size_t errlen);
/* hconn_open with the destination's trust state (kept by the caller, it
 * must outlive the connection). */
int	 hconn_open_trust(struct hconn *, const struct dest_conf *,
	    struct trust *, const char *url, char *err, size_t errlen);
/*
 * The sink's connection to url with the destination's trust state (*t,
 * kept by the sink: verify, first_use or any, https or not by the URL):
 * 0, or -1 with ctx->error said.
 */
int	 hconn_open_sink(struct hconn *, struct trust *t, struct sink_ctx *ctx,
	    const char *url);
/*
 * POST body with hdrs.  Returns 0 when an HTTP response came back (look at
 * h->status, h->resp, h->retry_after), -1 on a transport failure with err
 * filled (the caller answers SEND_RETRY).
 */
int	 hconn_post(struct hconn *, struct curl_slist *hdrs, const void *body,
	    size_t len, char *err, size_t errlen);
void	 hconn_close(struct hconn *);
/* Will the next post open a new connection (after an error, a 5xx, or
 * because `reconnect` minutes have passed)? */
bool	 hconn_will_reconnect(struct hconn *);

/*
 * The status policy shared by cfapi and http (docs/outputs.md):
 * 2xx OK; 400, 413 and 422 REJECT (this batch is refused); 408, 429, 5xx
 * RETRY; other 4xx (401, 403, 404...) RETRY as well: they describe the
 * destination or its configuration, not the events, and rejecting would
 * make the shipper drop every event one by one.
 */
enum send_result transport_http_policy(long status);

#endif
