/*
 * vsphere_soap: a vSphere Web Services client (SOAP 1.1, urn:vim25) over
 * libcurl, its answers read as they arrive by the bounded XML reader
 * (vsphere_xml.h).  docs/vsphere.md.
 *
 * A connection logs in once (RetrieveServiceContent, SessionManager.Login;
 * the session is the vmware_soap_session cookie), logs in again by itself
 * when a call fails with NotAuthenticated (the server restarted, the
 * session expired) and logs out at vs_close().  The password is read from
 * a 0600 file at each login and never kept, logged or printed.
 *
 * TLS is set up by whoever the agent named (vs_set_tls()): the agent's one
 * transport (output/transport.c, output/trust.c: verify | first_use | any,
 * the first_use pin kept in storage.directory) — the host layer does not
 * include output/, the core hands it in.
 */
#ifndef ESXWATCH_VSPHERE_SOAP_H
#define ESXWATCH_VSPHERE_SOAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "vsphere_xml.h"

struct config;

struct vs_endpoint {
	const struct config *cfg;	/* storage.directory: the trust pin */
	const char	*name;		/* the vsphere entry's NAME */
	const char	*url;		/* https://.../sdk */
	const char	*username;
	const char	*password_file;
	const char	*trust;		/* verify | first_use | any */
	const char	*ca;		/* CA bundle, "" = the system's */
	int		 timeout_s;
};

/* TLS for one endpoint's handle (made by the core; see above). */
struct vs_tls {
	/* set up c for url: 0, or -1 with err */
	int	(*setup)(void *arg, CURL *c, const char *url, char *err,
		    size_t errlen);
	/* before each request: apply a pin */
	void	(*before)(void *arg, CURL *c);
	/* after a request went through: check or take the pin; 0 or -1 */
	int	(*connected)(void *arg, CURL *c, char *err, size_t errlen);
	/* a failed request's reason, in the agent's words */
	void	(*describe)(void *arg, CURLcode rc, const char *errbuf,
		    const char *url, char *out, size_t outlen);
	void	(*free)(void *arg);
	void	*arg;
};
/* Makes the TLS of an endpoint: 0, or -1 with err. */
typedef int (*vs_tls_maker)(const struct vs_endpoint *, struct vs_tls *out,
    char *err, size_t errlen);
void	vs_set_tls(vs_tls_maker);

/* The service's managed objects (RetrieveServiceContent). */
struct vs_service {
	char	property_collector[64];
	char	root_folder[64];
	char	view_manager[64];
	char	session_manager[64];
	char	perf_manager[64];
	char	event_manager[64];
	char	api_type[32];		/* VirtualCenter | HostAgent */
	char	api_version[16];
};

struct vs_conn;

/* A connection (no request yet): NULL with err on a bad endpoint. */
struct vs_conn	*vs_open(const struct vs_endpoint *, char *err, size_t errlen);
/* Log in (when not yet): 0, or -1 with err. */
int		 vs_login(struct vs_conn *, char *err, size_t errlen);
/*
 * One call: body is the element inside soapenv:Body (urn:vim25's
 * namespace set on it by the caller).  h sees the whole answer.  A
 * NotAuthenticated fault logs in again and repeats the call once.
 * 0, or -1 with err ("fault NAME: message", an HTTP or TLS error).
 */
int		 vs_call(struct vs_conn *, const char *body,
		    const struct vx_handler *h, char *err, size_t errlen);
/*
 * The same, to another endpoint of the same server on the same session
 * (path "/vsanHealth"; SOAPAction "NS/6.7", ns "urn:vsan"): vCenter's
 * vSAN Management API takes the vim25 session cookie (vSAN Management
 * SDK, "vSAN Management API": the vsanHealth endpoint).  An HTTP 404 is
 * "HTTP 404" in err (no such service on this server).
 */
int		 vs_call_at(struct vs_conn *, const char *path, const char *ns,
		    const char *body, const struct vx_handler *h, char *err,
		    size_t errlen);
/*
 * The end handler of a call whose answer is one managed object reference
 * (CreateContainerView, CreatePropertyCollector, CreateFilter,
 * CreateCollectorForEvents): the returnval's id into arg, a
 * char[VS_REF_MAX].
 */
#define VS_REF_MAX	256
int		 vs_returnval_end(void *arg, struct vx *x, int depth,
		    const char *name, const char *t, size_t len);
/* The fault type of the last failed call ("" = not a SOAP fault). */
const char	*vs_last_fault(const struct vs_conn *);
const struct vs_service *vs_service(const struct vs_conn *);
/* Requests made so far (all calls, logins included). */
uint64_t	 vs_requests(const struct vs_conn *);
/* The session's number: it changes at each new login (a session's
 * objects — views, collectors, filters — are gone with the old one). */
uint64_t	 vs_session(const struct vs_conn *);
/* Log out (if logged in) and free. */
void		 vs_close(struct vs_conn *);

/* A managed object reference as XML: <TAG type="TYPE">VALUE</TAG>. */
int		 vs_moref(char *out, size_t outlen, const char *tag,
		    const char *type, const char *value);

#endif
