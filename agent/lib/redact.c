/*
 * redact: secrets out of URLs (see redact.h).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "redact.h"

bool
redact_secret_name(const char *name, size_t len)
{
	static const char *const words[] = {
		"token", "key", "pass", "pwd", "secret", "sig", "auth",
		"cookie", "credential", "session",
	};

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t wl = strlen(words[w]);

		for (size_t i = 0; i + wl <= len; i++)
			if (strncasecmp(name + i, words[w], wl) == 0)
				return true;
	}
	return false;
}

/* Append n bytes of s to out (at *o, cut at outlen - 1). */
static void
put(char *out, size_t outlen, size_t *o, const char *s, size_t n)
{
	if (*o + 1 >= outlen)
		return;
	if (n > outlen - 1 - *o)
		n = outlen - 1 - *o;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
}

/* The query (after '?', up to '#'): secret-named values replaced. */
static bool
put_query(const char *q, const char *end, const char *mark, char *out,
    size_t outlen, size_t *o)
{
	bool hid = false;

	while (q < end) {
		const char *amp = q, *eq;

		while (amp < end && *amp != '&' && *amp != ';')
			amp++;
		eq = memchr(q, '=', (size_t)(amp - q));
		if (eq != NULL && eq + 1 < amp &&
		    redact_secret_name(q, (size_t)(eq - q))) {
			put(out, outlen, o, q, (size_t)(eq + 1 - q));
			put(out, outlen, o, mark, strlen(mark));
			hid = true;
		} else
			put(out, outlen, o, q, (size_t)(amp - q));
		if (amp < end)
			put(out, outlen, o, amp, 1);
		q = amp + 1;
	}
	return hid;
}

bool
redact_url(const char *url, const char *mark, char *out, size_t outlen)
{
	const char *auth, *at, *path, *query, *frag;
	size_t o = 0;
	bool hid = false;

	if (outlen == 0)
		return false;
	out[0] = '\0';
	auth = strstr(url, "://");
	auth = auth != NULL ? auth + 3 : url;
	path = auth + strcspn(auth, "/?#");
	at = memchr(auth, '@', (size_t)(path - auth));
	put(out, outlen, &o, url, (size_t)(auth - url));
	if (at != NULL) {
		/* the last '@' before the path ends the user information */
		while (memchr(at + 1, '@', (size_t)(path - at - 1)) != NULL)
			at = memchr(at + 1, '@', (size_t)(path - at - 1));
		put(out, outlen, &o, mark, strlen(mark));
		auth = at;
		hid = true;
	}
	query = strchr(path, '?');
	frag = strchr(path, '#');
	if (query != NULL && frag != NULL && frag < query)
		query = NULL;
	if (frag == NULL)
		frag = path + strlen(path);
	if (query == NULL)
		put(out, outlen, &o, auth, (size_t)(frag - auth));
	else {
		put(out, outlen, &o, auth, (size_t)(query + 1 - auth));
		if (put_query(query + 1, frag, mark, out, outlen, &o))
			hid = true;
	}
	/* a fragment carries tokens too (#access_token=...): the same rule */
	if (*frag == '#') {
		put(out, outlen, &o, "#", 1);
		if (put_query(frag + 1, frag + strlen(frag), mark, out, outlen, &o))
			hid = true;
	}
	return hid;
}
