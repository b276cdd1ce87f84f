/*
 * lisession: Log Insight sessions for authenticated ingestion
 * (lisession.h; loginsight-api.md §1.4: POST /api/v1/sessions ->
 * {"userId","sessionId","ttl"}; 401 "Invalid session ID", 440 "Login
 * Timeout").
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agent/lib/clock.h"
#include "../agent/config/config.h"
#include "../agent/lib/json.h"
#include "../agent/lib/log.h"
#include "lisession.h"

#define SESSIONS_PATH	"/api/v1/sessions"
#define PASSWORD_MAX	1024
#define TOKEN_MAX	512
#define DEFAULT_TTL	1800

int
lisession_init(struct lisession *s, const struct dest_conf *d,
    struct trust *t, const char *name, char *err, size_t errlen)
{
	struct buf url = BUF_INIT;
	int rc;

	memset(s, 0, sizeof(*s));
	s->conf = d;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->wanted = d->username != NULL && d->username[0] != '\0';
	if (!s->wanted)
		return 0;
	if (!d->ssl) {
		log_warn("%s: authenticated ingestion needs ssl: yes (the "
		    "password would cross the network in clear); sending "
		    "unauthenticated: the server clamps event timestamps to "
		    "within 10 minutes of its clock (esxwatch_event_time keeps "
		    "each event's own time)", name);
		s->fallback = true;
		return 0;
	}
	if (transport_base_url(d, SESSIONS_PATH, &url) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = hconn_open_trust(&s->h, d, t, url.data, err, errlen);
	buf_free(&url);
	if (rc == -1)
		return -1;
	s->open = true;
	return 0;
}

void
lisession_free(struct lisession *s)
{
	if (s->open)
		hconn_close(&s->h);
	explicit_bzero(s->header, sizeof(s->header));
	memset(s, 0, sizeof(*s));
}

const char *
lisession_header(const struct lisession *s)
{
	return s->header[0] != '\0' ? s->header : NULL;
}

bool
lisession_expired(struct lisession *s)
{
	if (s->header[0] == '\0')
		return false;
	explicit_bzero(s->header, sizeof(s->header));
	s->renew_ms = 0;
	s->expires_ms = 0;
	return true;
}

/* The password: the key, or the first line of password_file, which must
 * be a regular file only its owner can read.  0, or -1 with why. */
static int
password_get(const struct dest_conf *d, char *out, size_t outlen,
    char *why, size_t whylen)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (d->password != NULL && d->password[0] != '\0') {
		if (strlen(d->password) >= outlen) {
			snprintf(why, whylen, "the password is too long");
			return -1;
		}
		snprintf(out, outlen, "%s", d->password);
		return 0;
	}
	fd = open(d->password_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1) {
		snprintf(why, whylen, "cannot open password_file %s (errno %d)",
		    d->password_file, errno);
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 077) != 0) {
		snprintf(why, whylen, "password_file %s must be a regular file "
		    "of mode 0600 (it is %04o): chmod 600 it", d->password_file,
		    (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	n = read(fd, out, outlen - 1);
	close(fd);
	if (n <= 0) {
		snprintf(why, whylen, "password_file %s is empty",
		    d->password_file);
		return -1;
	}
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

int
dest_password(const struct dest_conf *d, char *out, size_t outlen,
    char *why, size_t whylen)
{
	return password_get(d, out, outlen, why, whylen);
}

static void
refuse(struct lisession *s, const char *why)
{
	s->fallback = true;
	explicit_bzero(s->header, sizeof(s->header));
	log_warn("%s: login to Log Insight as \"%s\" (provider %s) refused: "
	    "%s; sending unauthenticated: the server clamps event timestamps "
	    "to within 10 minutes of its clock (esxwatch_event_time keeps "
	    "each event's own time)", s->name, s->conf->username,
	    s->conf->provider, why);
}

/* {"sessionId":"...","ttl":N} -> header and ttl.  0 or -1. */
static int
parse_login(struct lisession *s, const char *body, size_t len)
{
	struct json_doc d;
	const struct json_node *id;
	char err[64];
	long long ttl = 0;
	int n, rc = -1;

	if (json_parse(body, len, &d, err, sizeof(err)) == -1)
		return -1;
	n = json_get(&d, 0, "sessionId");
	if (n < 0 || d.n[n].type != JSON_STR)
		goto out;
	id = &d.n[n];
	if (id->len == 0 || id->len > TOKEN_MAX)
		goto out;
	/* the token goes into a header line as it is: no escapes, no blanks */
	for (size_t i = 0; i < id->len; i++)
		if (id->s[i] == '\\' || (unsigned char)id->s[i] < 0x21 || id->s[i] == 0x7f)
			goto out;
	snprintf(s->header, sizeof(s->header), "Authorization: Bearer %.*s",
	    (int)id->len, id->s);
	n = json_get(&d, 0, "ttl");
	if (n >= 0 && d.n[n].type == JSON_NUM && !json_num(&d, n, &ttl))
		ttl = 0;
	s->ttl = ttl > 0 ? (int)(ttl < 86400 * 365 ? ttl : 86400 * 365) :
	    DEFAULT_TTL;
	rc = 0;
out:
	json_free(&d);
	return rc;
}

/* The POST itself: -1 transport failure (err), else the HTTP status. */
static long
login_post(struct lisession *s, const char *password, char *err,
    size_t errlen)
{
	const struct dest_conf *d = s->conf;
	struct curl_slist *hdrs = NULL, *n;
	struct buf body = BUF_INIT;
	long status = -1;

	hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	n = hdrs != NULL ? curl_slist_append(hdrs, "Expect:") : NULL;
	if (n == NULL || buf_puts(&body, "{\"username\":") == -1 ||
	    json_put_str(&body, d->username, strlen(d->username)) == -1 ||
	    buf_puts(&body, ",\"password\":") == -1 ||
	    json_put_str(&body, password, strlen(password)) == -1 ||
	    buf_puts(&body, ",\"provider\":") == -1 ||
	    json_put_str(&body, d->provider, strlen(d->provider)) == -1 ||
	    buf_putc(&body, '}') == -1)
		snprintf(err, errlen, "out of memory");
	else if (hconn_post(&s->h, hdrs, body.data, body.len, err, errlen) == 0)
		status = s->h.status;
	if (body.data != NULL)
		explicit_bzero(body.data, body.len);
	buf_free(&body);
	curl_slist_free_all(hdrs);
	return status;
}

int
lisession_ensure(struct lisession *s, char *err, size_t errlen)
{
	char password[PASSWORD_MAX], why[600];
	long status;
	int rc = -1;

	if (!s->wanted || s->fallback)
		return 0;
	if (s->header[0] != '\0' && mono_ms() < s->renew_ms)
		return 0;
	if (password_get(s->conf, password, sizeof(password), why,
	    sizeof(why)) == -1) {
		refuse(s, why);
		return 1;
	}
	status = login_post(s, password, err, errlen);
	explicit_bzero(password, sizeof(password));
	if (status == -1) {
		/* err names the transport failure, never the body; a renewal
		 * that fails keeps the session while it lasts */
		return s->header[0] != '\0' && mono_ms() < s->expires_ms ? 0 : -1;
	}
	if (status == 200 && parse_login(s, s->h.resp.data ? s->h.resp.data :
	    "", s->h.resp.len) == 0) {
		/* renew at 90% of the ttl */
		s->renew_ms = mono_ms() + (int64_t)s->ttl * 900;
		s->expires_ms = mono_ms() + (int64_t)s->ttl * 1000;
		s->logins++;
		log_info("%s: logged in to Log Insight as \"%s\" (session ttl "
		    "%d s)", s->name, s->conf->username, s->ttl);
		rc = 1;
	} else if (status == 200)
		snprintf(err, errlen, "login: HTTP 200 without a sessionId");
	else if (status >= 500 || status == 429 || status == 408) {
		snprintf(err, errlen, "login: HTTP %ld", status);
		if (s->header[0] != '\0' && mono_ms() < s->expires_ms)
			rc = 0;
	}
	else {
		snprintf(why, sizeof(why), "HTTP %ld", status);
		refuse(s, why);
		rc = 1;
	}
	if (s->h.resp.data != NULL)
		explicit_bzero(s->h.resp.data, s->h.resp.len);
	return rc;
}
