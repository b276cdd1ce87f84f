/*
 * redact: what of a URL or a header is a secret, and the same text with
 * the secrets replaced, for the log, errors, --status and --print-config.
 *
 * A URL's user:password@ part and the value of every query parameter
 * whose name says it is one (token, key, password, secret, sig, auth,
 * ... see redact_secret_name) are replaced by a marker; the rest stays
 * so that an admin still recognises the destination.
 */
#ifndef ESXWATCH_REDACT_H
#define ESXWATCH_REDACT_H

#include <stdbool.h>
#include <stddef.h>

/* True if a parameter or header named name (len bytes, any case) holds a
 * secret: it contains token, key, pass, pwd, secret, sig, auth, cookie,
 * credential or session. */
bool	redact_secret_name(const char *name, size_t len);
/* url with its secrets replaced by mark, into out (always terminated;
 * cut to outlen).  True if anything was replaced. */
bool	redact_url(const char *url, const char *mark, char *out, size_t outlen);

#endif
