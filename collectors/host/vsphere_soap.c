/*
 * vsphere_soap: the vSphere Web Services client (vsphere_soap.h).
 *
 * Requests are SOAP 1.1 envelopes POSTed to the endpoint's /sdk URL with
 * SOAPAction "urn:vim25/6.5" (an API version every vCenter and ESXi since
 * 6.5 serves; the calls used exist since 4.0).  The answer streams into the
 * XML reader; a soapenv:Fault is recognised on the way (faultstring and
 * the type of detail's element, e.g. NotAuthenticatedFault).
 * VMware, "vSphere Web Services SDK Programming Guide", chapters "Client
 * Applications" (service content, sessions) and "Property Collector".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../agent/lib/buf.h"
#include "../../agent/lib/log.h"
#include "vsphere_soap.h"

#define VS_SOAPACTION	"SOAPAction: \"urn:vim25/6.5\""
#define VS_PW_MAX	512

static vs_tls_maker tls_maker;

void
vs_set_tls(vs_tls_maker m)
{
	tls_maker = m;
}

struct vs_conn {
	CURL			*c;
	struct vs_endpoint	 ep;
	char			*url;
	struct vs_tls		 tls;
	bool			 have_tls;
	bool			 logged_in;
	struct vs_service	 sc;
	char			 errbuf[CURL_ERROR_SIZE];
	char			 fault[96];
	uint64_t		 requests;
	uint64_t		 sessions;	/* logins that succeeded */
	/* the session: the vmware_soap_session cookie's value, kept here
	 * (the static build's libcurl has no cookie engine); a secret */
	char			 cookie[512];
	/* vs_call_at(): another endpoint's SOAPAction, for one call */
	const char		*alt_action;
};

/* One call's reading: the caller's handler and the fault seen. */
struct call {
	const struct vx_handler	*h;
	struct vx		*x;
	char			 fault[96];
	char			 faultstring[256];
	bool			 is_fault;
};

static int
call_start(void *arg, struct vx *x, int depth, const char *name)
{
	struct call *k = arg;

	if (depth == 3 && strcmp(name, "Fault") == 0)
		k->is_fault = true;
	/* Envelope/Body/Fault/detail/XFault */
	if (k->is_fault && depth == 5 && strcmp(vx_name_at(x, 4), "detail") == 0 &&
	    k->fault[0] == '\0')
		snprintf(k->fault, sizeof(k->fault), "%s",
		    *vx_type_at(x, 5) ? vx_type_at(x, 5) : name);
	if (!k->is_fault && k->h != NULL && k->h->start != NULL)
		return k->h->start(k->h->arg, x, depth, name);
	return 0;
}

static int
call_end(void *arg, struct vx *x, int depth, const char *name,
    const char *text, size_t len)
{
	struct call *k = arg;

	if (k->is_fault && depth == 4 && strcmp(name, "faultstring") == 0)
		snprintf(k->faultstring, sizeof(k->faultstring), "%s", text);
	if (!k->is_fault && k->h != NULL && k->h->end != NULL)
		return k->h->end(k->h->arg, x, depth, name, text, len);
	return 0;
}

/* Set-Cookie: vmware_soap_session=VALUE; Path=/; ... -> v->cookie */
static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	static const char sc[] = "set-cookie:", name[] = "vmware_soap_session=";
	struct vs_conn *v = arg;
	size_t len = sz * n, i, k;

	/* the session is vim25's: another endpoint's cookie is not taken */
	if (len <= sizeof(sc) || strncasecmp(p, sc, sizeof(sc) - 1) != 0 ||
	    v->alt_action != NULL)
		return len;
	for (i = sizeof(sc) - 1; i < len && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	if (len - i < sizeof(name) || strncmp(p + i, name, sizeof(name) - 1) != 0)
		return len;
	i += sizeof(name) - 1;
	for (k = 0; i + k < len && p[i + k] != ';' && p[i + k] != '\r' &&
	    p[i + k] != '\n'; k++)
		;
	if (k > 0 && k < sizeof(v->cookie)) {
		memcpy(v->cookie, p + i, k);
		v->cookie[k] = '\0';
	}
	return len;
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct call *k = arg;

	if (vx_feed(k->x, p, sz * n) == -1)
		return 0;	/* curl: CURLE_WRITE_ERROR */
	return sz * n;
}

int
vs_moref(char *out, size_t outlen, const char *tag, const char *type,
    const char *value)
{
	char v[256];

	if (vx_escape(value, v, sizeof(v)) == -1)
		return -1;
	return snprintf(out, outlen, "<%s type=\"%s\">%s</%s>", tag, type, v,
	    tag) < (int)outlen ? 0 : -1;
}

struct vs_conn *
vs_open(const struct vs_endpoint *ep, char *err, size_t errlen)
{
	struct vs_conn *v;

	if (strncmp(ep->url, "https://", 8) != 0) {
		snprintf(err, errlen, "url must be https://");
		return NULL;
	}
	if (tls_maker == NULL) {
		snprintf(err, errlen, "no TLS transport in this build");
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		goto oom;
	v->url = strdup(ep->url);
	if (v->url == NULL)
		goto oom;
	v->ep = *ep;
	v->ep.url = v->url;
	v->c = curl_easy_init();
	if (v->c == NULL)
		goto oom;
	if (tls_maker(&v->ep, &v->tls, err, errlen) == -1)
		goto fail;
	v->have_tls = true;
	if (v->tls.setup(v->tls.arg, v->c, v->url, err, errlen) == -1)
		goto fail;
	curl_easy_setopt(v->c, CURLOPT_URL, v->url);
	curl_easy_setopt(v->c, CURLOPT_POST, 1L);
	curl_easy_setopt(v->c, CURLOPT_ERRORBUFFER, v->errbuf);
	curl_easy_setopt(v->c, CURLOPT_TIMEOUT, (long)(ep->timeout_s > 0 ?
	    ep->timeout_s : 60));
	curl_easy_setopt(v->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(v->c, CURLOPT_USERAGENT, "esxwatch/" ESXWATCH_VERSION);
	curl_easy_setopt(v->c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(v->c, CURLOPT_HEADERDATA, v);
	curl_easy_setopt(v->c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(v->c, CURLOPT_WRITEFUNCTION, on_body);
	return v;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	vs_close(v);
	return NULL;
}

static int
post(struct vs_conn *v, const char *body, const struct vx_handler *h,
    char *err, size_t errlen)
{
	struct vx_handler mine = { call_start, call_end, NULL };
	struct curl_slist *hd = NULL;
	struct buf env = BUF_INIT;
	char ck[sizeof(v->cookie) + 40];
	struct call k;
	long status = 0;
	CURLcode rc;
	int r = -1;

	memset(&k, 0, sizeof(k));
	k.h = h;
	mine.arg = &k;
	v->fault[0] = '\0';
	k.x = vx_new(&mine);
	buf_init(&env, 0);
	if (k.x == NULL || buf_printf(&env, "<?xml version=\"1.0\" encoding="
	    "\"UTF-8\"?><soapenv:Envelope xmlns:soapenv=\"http://schemas."
	    "xmlsoap.org/soap/envelope/\" xmlns:xsd=\"http://www.w3.org/2001/"
	    "XMLSchema\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance"
	    "\"><soapenv:Body>%s</soapenv:Body></soapenv:Envelope>", body) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	hd = curl_slist_append(hd, "Content-Type: text/xml; charset=utf-8");
	hd = curl_slist_append(hd, v->alt_action != NULL ? v->alt_action :
	    VS_SOAPACTION);
	if (v->cookie[0] != '\0') {
		snprintf(ck, sizeof(ck), "Cookie: vmware_soap_session=%s",
		    v->cookie);
		hd = curl_slist_append(hd, ck);
		explicit_bzero(ck, sizeof(ck));
	}
	curl_easy_setopt(v->c, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(v->c, CURLOPT_POSTFIELDS, env.data);
	curl_easy_setopt(v->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)env.len);
	curl_easy_setopt(v->c, CURLOPT_WRITEDATA, &k);
	v->tls.before(v->tls.arg, v->c);
	v->errbuf[0] = '\0';
	v->requests++;
	rc = curl_easy_perform(v->c);
	if (rc == CURLE_WRITE_ERROR && *vx_error(k.x) != '\0') {
		snprintf(err, errlen, "answer refused: %s", vx_error(k.x));
		goto out;
	}
	if (rc != CURLE_OK) {
		v->tls.describe(v->tls.arg, rc, v->errbuf, v->url, err, errlen);
		goto out;
	}
	if (v->tls.connected(v->tls.arg, v->c, err, errlen) == -1)
		goto out;
	curl_easy_getinfo(v->c, CURLINFO_RESPONSE_CODE, &status);
	if (vx_finish(k.x) == -1 && !k.is_fault) {
		snprintf(err, errlen, "HTTP %ld, answer unreadable: %s", status,
		    vx_error(k.x));
		goto out;
	}
	if (k.is_fault) {
		snprintf(v->fault, sizeof(v->fault), "%s", k.fault);
		snprintf(err, errlen, "fault %s: %s", k.fault[0] ? k.fault :
		    "(no detail)", k.faultstring);
		goto out;
	}
	if (status != 200) {
		snprintf(err, errlen, "HTTP %ld", status);
		goto out;
	}
	r = 0;
out:
	curl_easy_setopt(v->c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(v->c, CURLOPT_POSTFIELDS, NULL);
	curl_slist_free_all(hd);
	if (env.data != NULL)
		explicit_bzero(env.data, env.len);	/* may hold the password */
	buf_free(&env);
	vx_free(k.x);
	return r;
}

/* ---- service content and login ---------------------------------------- */

static int
sc_end(void *arg, struct vx *x, int depth, const char *name, const char *text,
    size_t len)
{
	struct vs_service *sc = arg;
	static const struct { const char *n; size_t off, sz; } f[] = {
#define F(n, m) { n, offsetof(struct vs_service, m), sizeof(((struct vs_service *)0)->m) }
		F("propertyCollector", property_collector),
		F("rootFolder", root_folder),
		F("viewManager", view_manager),
		F("sessionManager", session_manager),
		F("perfManager", perf_manager),
		F("eventManager", event_manager),
#undef F
	};
	size_t i;

	(void)len;
	if (depth == 6 && vx_path_ends(x, "returnval/about/apiType"))
		snprintf(sc->api_type, sizeof(sc->api_type), "%s", text);
	if (depth == 6 && vx_path_ends(x, "returnval/about/apiVersion"))
		snprintf(sc->api_version, sizeof(sc->api_version), "%s", text);
	if (depth != 5 || strcmp(vx_name_at(x, 4), "returnval") != 0)
		return 0;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (strcmp(name, f[i].n) == 0)
			snprintf((char *)sc + f[i].off, f[i].sz, "%s", text);
	return 0;
}

/* The first line of password_file, which must be a regular file only its
 * owner can read.  0, or -1 with why (the path, never the content). */
static int
password_read(const char *path, char *out, size_t outlen, char *why,
    size_t whylen)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1) {
		snprintf(why, whylen, "cannot open password_file %s (%s)", path,
		    log_errstr(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 077) != 0) {
		snprintf(why, whylen, "password_file %s must be a regular file "
		    "of mode 0600 (it is %04o): chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	n = read(fd, out, outlen - 1);
	close(fd);
	if (n <= 0) {
		snprintf(why, whylen, "password_file %s is empty", path);
		return -1;
	}
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

static int
do_login(struct vs_conn *v, char *err, size_t errlen)
{
	struct vx_handler sch = { NULL, sc_end, &v->sc };
	char pw[VS_PW_MAX], epw[VS_PW_MAX * 6], eu[512], body[VS_PW_MAX * 8];
	int r;

	if (v->sc.session_manager[0] == '\0') {
		memset(&v->sc, 0, sizeof(v->sc));
		if (post(v, "<RetrieveServiceContent xmlns=\"urn:vim25\"><_this "
		    "type=\"ServiceInstance\">ServiceInstance</_this>"
		    "</RetrieveServiceContent>", &sch, err, errlen) == -1)
			return -1;
		if (v->sc.session_manager[0] == '\0' ||
		    v->sc.property_collector[0] == '\0') {
			snprintf(err, errlen, "not a vSphere API endpoint (no "
			    "SessionManager in the service content)");
			return -1;
		}
	}
	if (password_read(v->ep.password_file, pw, sizeof(pw), err,
	    errlen) == -1)
		return -1;
	r = vx_escape(pw, epw, sizeof(epw));
	explicit_bzero(pw, sizeof(pw));
	if (r == -1 || vx_escape(v->ep.username, eu, sizeof(eu)) == -1) {
		explicit_bzero(epw, sizeof(epw));
		snprintf(err, errlen, "username or password too long");
		return -1;
	}
	r = snprintf(body, sizeof(body), "<Login xmlns=\"urn:vim25\"><_this "
	    "type=\"SessionManager\">%s</_this><userName>%s</userName>"
	    "<password>%s</password></Login>", v->sc.session_manager, eu, epw);
	explicit_bzero(epw, sizeof(epw));
	if (r >= (int)sizeof(body)) {
		explicit_bzero(body, sizeof(body));
		snprintf(err, errlen, "username or password too long");
		return -1;
	}
	/* a new session: forget the old cookie */
	explicit_bzero(v->cookie, sizeof(v->cookie));
	r = post(v, body, NULL, err, errlen);
	explicit_bzero(body, sizeof(body));
	if (r == -1) {
		if (strcmp(v->fault, "InvalidLogin") == 0)
			snprintf(err, errlen, "login as \"%s\" refused: wrong user "
			    "name or password (InvalidLogin)", v->ep.username);
		return -1;
	}
	v->logged_in = true;
	v->sessions++;
	return 0;
}

int
vs_login(struct vs_conn *v, char *err, size_t errlen)
{
	if (v->logged_in)
		return 0;
	return do_login(v, err, errlen);
}

int
vs_returnval_end(void *arg, struct vx *x, int depth, const char *name,
    const char *t, size_t len)
{
	(void)x;
	(void)len;
	if (depth == 4 && strcmp(name, "returnval") == 0)
		snprintf(arg, VS_REF_MAX, "%s", t);
	return 0;
}

/* One post to url with SOAPAction action, url NULL: /sdk (the login's
 * own posts go to /sdk as always). */
static int
post_at(struct vs_conn *v, const char *url, const char *action,
    const char *body, const struct vx_handler *h, char *err, size_t errlen)
{
	int r;

	if (url == NULL)
		return post(v, body, h, err, errlen);
	v->alt_action = action;
	curl_easy_setopt(v->c, CURLOPT_URL, url);
	r = post(v, body, h, err, errlen);
	curl_easy_setopt(v->c, CURLOPT_URL, v->url);
	v->alt_action = NULL;
	return r;
}

/* A call, logged in; a NotAuthenticated fault (the server restarted, the
 * session expired) logs in again and repeats it once. */
static int
call(struct vs_conn *v, const char *url, const char *action,
    const char *body, const struct vx_handler *h, char *err, size_t errlen)
{
	if (vs_login(v, err, errlen) == -1)
		return -1;
	if (post_at(v, url, action, body, h, err, errlen) == 0)
		return 0;
	if (strcmp(v->fault, "NotAuthenticated") != 0)
		return -1;
	log_info("vsphere %s: session lost (NotAuthenticated); logging in "
	    "again", v->ep.name);
	v->logged_in = false;
	v->sc.session_manager[0] = '\0';
	if (do_login(v, err, errlen) == -1)
		return -1;
	return post_at(v, url, action, body, h, err, errlen);
}

int
vs_call(struct vs_conn *v, const char *body, const struct vx_handler *h,
    char *err, size_t errlen)
{
	return call(v, NULL, NULL, body, h, err, errlen);
}

int
vs_call_at(struct vs_conn *v, const char *path, const char *ns,
    const char *body, const struct vx_handler *h, char *err, size_t errlen)
{
	char url[1024], action[128];
	const char *host = v->url + 8, *slash = strchr(host, '/');
	size_t n = slash != NULL ? (size_t)(slash - v->url) : strlen(v->url);

	if (n + strlen(path) >= sizeof(url) || snprintf(action, sizeof(action),
	    "SOAPAction: \"%s/6.7\"", ns) >= (int)sizeof(action)) {
		snprintf(err, errlen, "endpoint URL too long");
		return -1;
	}
	memcpy(url, v->url, n);
	snprintf(url + n, sizeof(url) - n, "%s", path);
	return call(v, url, action, body, h, err, errlen);
}

const char *
vs_last_fault(const struct vs_conn *v)
{
	return v->fault;
}

const struct vs_service *
vs_service(const struct vs_conn *v)
{
	return &v->sc;
}

uint64_t
vs_requests(const struct vs_conn *v)
{
	return v->requests;
}

uint64_t
vs_session(const struct vs_conn *v)
{
	return v->sessions;
}

void
vs_close(struct vs_conn *v)
{
	char body[256], err[256];

	if (v == NULL)
		return;
	if (v->logged_in && v->c != NULL) {
		snprintf(body, sizeof(body), "<Logout xmlns=\"urn:vim25\"><_this "
		    "type=\"SessionManager\">%s</_this></Logout>",
		    v->sc.session_manager);
		if (post(v, body, NULL, err, sizeof(err)) == -1)
			log_debug("vsphere %s: logout: %s", v->ep.name, err);
	}
	if (v->c != NULL)
		curl_easy_cleanup(v->c);
	if (v->have_tls && v->tls.free != NULL)
		v->tls.free(v->tls.arg);
	explicit_bzero(v->cookie, sizeof(v->cookie));
	free(v->url);
	free(v);
}
