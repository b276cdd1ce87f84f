/*
 * syslog: RFC 5424 (default) or RFC 3164 messages over UDP (RFC 5426), TCP
 * (RFC 6587: octet counting by default, or newline framing) or TLS
 * (RFC 5425).  TCP and TLS go through a libcurl CONNECT_ONLY handle, so the
 * certificate checks are the very ones the HTTP sinks use (transport.c).
 *
 * Newlines: with octet counting a message may contain them and they are
 * kept; with newline framing they would split the message, and over UDP
 * many receivers mangle them, so there CR and LF become spaces (in MSG and
 * in structured-data values alike).
 *
 * The host's syslog (SL_LOCAL): a host with no destination on ESXi sends
 * its events to vmsyslogd, so they land in the host's logs and follow
 * Syslog.global.logHost like every other host log (agent/lib/platform.h).
 * ESXi's services submit their messages to vmsyslogd through syslog(3)
 * (ESXi 8.0 docs, "ESXi Log File Formats": log files written "indirectly,
 * when logs from a service are submitted to a syslog"); syslog(3) of the
 * C library writes to the unix socket _PATH_LOG, /dev/log, a datagram
 * socket (a stream one where the daemon listens so), in the local form
 * "<PRI>Mmm dd hh:mm:ss TAG[PID]: MSG" with no host name.  The sink
 * writes exactly that, tag esxwatch and facility daemon (the agent's own
 * log uses the same through the init script), the event as one JSON object
 * in MSG (docs/events.md, as the file sink writes it: every field kept, one
 * line).  No public VMware document we found names vmsyslogd's socket:
 * /dev/log is inferred from syslog(3), which ESXi's services and its
 * busybox logger(1) (the init script's) use.  ESXWATCH_HOST_SYSLOG names
 * another socket (tests only).
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../agent/config/config_host.h"
#include "../agent/lib/clock.h"
#include "../agent/lib/log.h"
#include "../agent/lib/utf8.h"
#include "../agent/lib/platform.h"
#include "netconn.h"
#include "syslog.h"
#include "transport.h"

#define SYSLOG_DEFAULT_SD_ID	"esxwatch@32473"
#define SYSLOG_DEFAULT_MAX	2048

/* The host's syslog: where syslog(3) writes, and the longest message
 * (rsyslog's default maxMessageSize; syslog(3) itself has none). */
#define HOST_SYSLOG_PATH	"/dev/log"
#define HOST_SYSLOG_MAX		8192
#define HOST_SYSLOG_FACILITY	3	/* daemon */

enum sl_transport { SL_UDP, SL_TCP, SL_TLS, SL_LOCAL };

struct syslog_sink {
	enum sl_transport	 transport;
	bool			 octet;		/* octet counting, else newline */
	struct syslog_fmt	 fmt;
	char			 hostname[256];
	char			 sd_id[64];
	/* UDP, TCP/TLS, and the host's syslog (nc.fd: a unix socket,
	 * stream or datagram) */
	struct netconn		 nc;
	bool			 local_stream;
	char			 local_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct buf		 msg;
	struct buf		 out;
};

/* ---- formatting ---- */

static const char *const facilities[] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "ntp", "security", "console",
	"solaris-cron", "local0", "local1", "local2", "local3", "local4",
	"local5", "local6", "local7",
};

int
syslog_facility_code(const char *name)
{
	size_t i;

	if (name == NULL || name[0] == '\0')
		return 20;	/* local4 */
	for (i = 0; i < sizeof(facilities) / sizeof(facilities[0]); i++)
		if (strcmp(name, facilities[i]) == 0)
			return (int)i;
	return -1;
}

int
syslog_severity_code(const char *s)
{
	if (s == NULL)
		return 6;
	if (strcmp(s, "critical") == 0)
		return 2;
	if (strcmp(s, "error") == 0)
		return 3;
	if (strcmp(s, "warning") == 0)
		return 4;
	if (strcmp(s, "notice") == 0)
		return 5;
	if (strcmp(s, "debug") == 0)
		return 7;
	return 6;
}

/* A header token: printable US-ASCII without space (PRINTUSASCII), cut to
 * max, "-" (NILVALUE) when empty.  extra lists more bytes to leave out. */
static int
put_token(struct buf *b, const char *s, size_t max, const char *extra)
{
	size_t n = 0;
	const unsigned char *p;

	for (p = (const unsigned char *)(s ? s : ""); *p && n < max; p++) {
		if (*p < 33 || *p > 126 || (extra && strchr(extra, *p)))
			continue;
		if (buf_putc(b, (char)*p) == -1)
			return -1;
		n++;
	}
	if (n == 0)
		return buf_putc(b, '-');
	return 0;
}

/* An SD PARAM-VALUE: '"', '\' and ']' escaped with '\' (RFC 5424
 * §6.3.3); CR/LF become spaces unless kept. */
static int
put_sd_value(struct buf *b, const char *s, bool keep_nl)
{
	const char *p, *run;

	for (p = run = s; *p; p++) {
		if (*p != '"' && *p != '\\' && *p != ']' &&
		    (keep_nl || (*p != '\n' && *p != '\r')))
			continue;
		if (buf_append(b, run, (size_t)(p - run)) == -1)
			return -1;
		if (*p == '\n' || *p == '\r') {
			if (buf_putc(b, ' ') == -1)
				return -1;
		} else if (buf_putc(b, '\\') == -1 || buf_putc(b, *p) == -1)
			return -1;
		run = p + 1;
	}
	return buf_append(b, run, (size_t)(p - run));
}

static int
put_msg(struct buf *b, const char *s, size_t n, bool keep_nl)
{
	size_t start = b->len, i;

	if (buf_append(b, s, n) == -1)
		return -1;
	if (!keep_nl)
		for (i = start; i < b->len; i++)
			if (b->data[i] == '\n' || b->data[i] == '\r')
				b->data[i] = ' ';
	return 0;
}

static int
put_time(struct buf *b, int64_t ms, bool rfc3164)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May",
	    "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t t;
	struct tm tm;

	if (ms <= 0)
		ms = now_ms();
	t = (time_t)(ms / 1000);
	if (gmtime_r(&t, &tm) == NULL)
		return -1;
	if (rfc3164)
		return buf_printf(b, "%s %2d %02d:%02d:%02d", mon[tm.tm_mon],
		    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return buf_printf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

int
syslog_format(const struct syslog_fmt *f, const struct event *ev,
    struct buf *out)
{
	const char *host = event_get(ev, "hostname");
	const char *app = event_get(ev, "appname");
	const char *msgid = event_get(ev, "esxwatch_rule");
	const char *text = ev->text != NULL ? ev->text : "";
	size_t tlen = strlen(text), start = out->len, used, room, i;
	int pri = f->facility * 8 +
	    syslog_severity_code(event_get(ev, "esxwatch_severity"));

	if (host == NULL || host[0] == '\0')
		host = f->hostname;
	if (app == NULL || app[0] == '\0')
		app = "esxwatch";
	if (msgid == NULL || msgid[0] == '\0')
		msgid = event_get(ev, "esxwatch_collector");

	if (f->rfc3164) {
		/* <PRI>Mmm dd hh:mm:ss HOST TAG: MSG (TAG alphanumeric, <= 32) */
		if (buf_printf(out, "<%d>", pri) == -1 ||
		    put_time(out, ev->timestamp_ms, true) == -1 ||
		    buf_putc(out, ' ') == -1 ||
		    put_token(out, host, 255, NULL) == -1 ||
		    buf_putc(out, ' ') == -1 ||
		    put_token(out, app, 32, ":[]") == -1 ||
		    buf_puts(out, ": ") == -1)
			return -1;
	} else {
		if (buf_printf(out, "<%d>1 ", pri) == -1 ||
		    put_time(out, ev->timestamp_ms, false) == -1 ||
		    buf_putc(out, ' ') == -1 ||
		    put_token(out, host, 255, NULL) == -1 ||
		    buf_putc(out, ' ') == -1 ||
		    put_token(out, app, 48, NULL) == -1 ||
		    buf_puts(out, " - ") == -1 ||
		    put_token(out, msgid, 32, NULL) == -1 ||
		    buf_putc(out, ' ') == -1)
			return -1;
		if (ev->nfields == 0) {
			if (buf_putc(out, '-') == -1)
				return -1;
		} else {
			if (buf_putc(out, '[') == -1 ||
			    put_token(out, f->sd_id, 32, "=]\"") == -1)
				return -1;
			for (i = 0; i < ev->nfields; i++) {
				/* SD-NAME: 1*32 of [a-z0-9_] here (valid
				 * field names), so a cut is all it needs. */
				if (buf_putc(out, ' ') == -1 ||
				    put_token(out, ev->fields[i].name, 32,
				    "=]\"") == -1 ||
				    buf_puts(out, "=\"") == -1 ||
				    put_sd_value(out, ev->fields[i].value ?
				    ev->fields[i].value : "", f->keep_newlines) == -1 ||
				    buf_putc(out, '"') == -1)
					return -1;
			}
			if (buf_putc(out, ']') == -1)
				return -1;
		}
		if (tlen > 0 && buf_putc(out, ' ') == -1)
			return -1;
		if (tlen > 0 && f->bom && buf_append(out, "\xef\xbb\xbf", 3) == -1)
			return -1;
	}
	/* Over UDP the MSG is cut to fit max_msg; the header never is. */
	used = out->len - start;
	if (f->max_msg > 0) {
		room = f->max_msg > used ? f->max_msg - used : 0;
		if (tlen > room)
			tlen = utf8_cut(text, tlen, room);
	}
	return put_msg(out, text, tlen, f->keep_newlines);
}

/*
 * The host's syslog form of ev: "<PRI>Mmm dd hh:mm:ss esxwatch[PID]: "
 * and the event as one JSON object, at most f->max_msg bytes.  A longer
 * one has its text cut (the fields are what a search finds it by).  -1
 * out of memory; -2 its fields alone are longer: it cannot be sent.
 */
int
syslog_format_local(const struct syslog_fmt *f, const struct event *ev,
    long pid, struct buf *out)
{
	struct event cut = *ev;
	size_t start = out->len, head, tlen, over;
	char *text = NULL;
	int pri = f->facility * 8 +
	    syslog_severity_code(event_get(ev, "esxwatch_severity"));
	int rc = -1;

	if (buf_printf(out, "<%d>", pri) == -1 ||
	    put_time(out, ev->timestamp_ms, true) == -1 ||
	    buf_printf(out, " esxwatch[%ld]: ", pid) == -1)
		return -1;
	head = out->len;
	if (event_to_json(ev, out) == -1)
		return -1;
	if (f->max_msg == 0 || out->len - start <= f->max_msg)
		return 0;
	/* Cut the text by what is over: each byte less in it is at least
	 * one byte less in its JSON, so once is enough. */
	tlen = ev->text != NULL ? strlen(ev->text) : 0;
	over = out->len - start - f->max_msg;
	out->len = head;
	tlen = tlen > over ? utf8_cut(ev->text, tlen, tlen - over) : 0;
	text = strndup(ev->text != NULL ? ev->text : "", tlen);
	if (text == NULL)
		return -1;
	cut.text = text;
	if (event_to_json(&cut, out) == 0)
		rc = out->len - start <= f->max_msg ? 0 : -2;
	free(text);
	return rc;
}

/* ---- connections ---- */

/*
 * The host's syslog socket, as syslog(3) opens it: datagram, or stream
 * when the daemon listens so (EPROTOTYPE).
 */
static int
local_open(struct sink_ctx *ctx, struct syslog_sink *s)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	struct sockaddr_un un;
	int e = 0;

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	memcpy(un.sun_path, s->local_path, sizeof(un.sun_path));
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		s->nc.fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (s->nc.fd == -1) {
			e = errno;
			break;
		}
		if (connect(s->nc.fd, (struct sockaddr *)&un, sizeof(un)) == 0) {
			s->local_stream = types[i] == SOCK_STREAM;
			s->nc.opened = time(NULL);
			return 0;
		}
		e = errno;
		close(s->nc.fd);
		s->nc.fd = -1;
		if (e != EPROTOTYPE)
			break;
	}
	snprintf(ctx->error, sizeof(ctx->error), "cannot reach the host's "
	    "syslog at %s: %s", s->local_path, log_errstr(e));
	return -1;
}

/* Write one message; a full socket is waited for, at most the timeout
 * in all (ENOBUFS may not wait in poll()). */
static int
local_write(struct sink_ctx *ctx, struct syslog_sink *s, const char *p,
    size_t len)
{
	int timeout_ms = transport_timeout(ctx->conf) * 1000;
	int64_t end = mono_ms() + timeout_ms;
	ssize_t n;
	short rev;
	int prc, e;

	while (len > 0) {
		n = send(s->nc.fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n >= 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		e = errno;
		if (e != EAGAIN && e != EWOULDBLOCK && e != ENOBUFS)
			break;
		if (mono_ms() >= end) {
			snprintf(ctx->error, sizeof(ctx->error), "the host's "
			    "syslog at %s takes no messages (timed out after "
			    "%d s)", s->local_path, timeout_ms / 1000);
			return -1;
		}
		/* no buffer for the datagram: poll() would not wait for one */
		if (e == ENOBUFS)
			prc = poll(NULL, 0, 10);
		else
			prc = netconn_wait_writable(s->nc.fd,
			    (int)(end - mono_ms()), &rev);
		if (prc == -1 && errno != EINTR)
			break;
	}
	if (len == 0)
		return 0;
	snprintf(ctx->error, sizeof(ctx->error), "writing to the host's syslog "
	    "at %s: %s", s->local_path, log_errstr(errno));
	return -1;
}

static enum send_result
send_local(struct sink_ctx *ctx, struct syslog_sink *s, const struct batch *b)
{
	long pid = (long)getpid();
	size_t i;

	if (s->nc.fd == -1 && local_open(ctx, s) == -1)
		return SEND_RETRY;
	for (i = 0; i < b->n; i++) {
		int r;

		buf_reset(&s->msg);
		r = syslog_format_local(&s->fmt, b->events[i], pid, &s->msg);
		if (r == -2) {
			/* the shipper finds it alone and drops it, counted (the
			 * events before it may be sent again: at least once) */
			snprintf(ctx->error, sizeof(ctx->error), "the event's "
			    "fields alone are longer than the host's syslog "
			    "takes (%zu bytes)", s->fmt.max_msg);
			return SEND_REJECT;
		}
		if (r == -1) {
			snprintf(ctx->error, sizeof(ctx->error), "out of memory");
			return SEND_RETRY;
		}
		/* a stream socket: each message ends with a NUL, as syslog(3)
		 * sends it */
		if ((s->local_stream && buf_putc(&s->msg, '\0') == -1) ||
		    local_write(ctx, s, s->msg.data, s->msg.len) == -1) {
			if (ctx->error[0] == '\0')
				snprintf(ctx->error, sizeof(ctx->error),
				    "out of memory");
			netconn_close(&s->nc);
			return SEND_RETRY;
		}
	}
	return SEND_OK;
}

/* The host's syslog in place of a server (dest_conf.host_syslog). */
static int
local_setup(struct sink_ctx *ctx, struct syslog_sink *s)
{
	const char *path = getenv("ESXWATCH_HOST_SYSLOG");

	if (path == NULL || path[0] == '\0')
		path = HOST_SYSLOG_PATH;
	if (strlen(path) >= sizeof(s->local_path)) {
		snprintf(ctx->error, sizeof(ctx->error), "socket path too "
		    "long: %s", path);
		return -1;
	}
	snprintf(s->local_path, sizeof(s->local_path), "%s", path);
	s->transport = SL_LOCAL;
	s->fmt.rfc3164 = true;
	s->fmt.facility = HOST_SYSLOG_FACILITY;
	s->fmt.max_msg = HOST_SYSLOG_MAX;
	log_info("%s: events to the host's syslog at %s", ctx->name, path);
	return 0;
}

/* ---- the sink ---- */

static void
syslog_free(struct syslog_sink *s)
{
	if (s == NULL)
		return;
	netconn_free(&s->nc);
	buf_free(&s->msg);
	buf_free(&s->out);
	free(s);
}

/* A server's transport, framing and format (the destination's keys). */
static int
remote_setup(struct sink_ctx *ctx, struct syslog_sink *s)
{
	static const struct syslog_opts none;	/* every key at its default */
	const struct syslog_opts *o = syslog_opts(ctx->conf);
	const struct dest_conf *d = ctx->conf;
	const char *h;

	if (o == NULL)
		o = &none;

	if (o->transport != NULL && strcmp(o->transport, "udp") == 0) {
		if (d->ssl) {
			snprintf(ctx->error, sizeof(ctx->error), "syslog over "
			    "UDP cannot use TLS: set ssl: no, or transport: tcp");
			return -1;
		}
		s->transport = SL_UDP;
	} else
		s->transport = d->ssl ? SL_TLS : SL_TCP;
	s->octet = o->framing == NULL || strcmp(o->framing, "newline") != 0;
	s->fmt.rfc3164 = o->format != NULL && strcmp(o->format, "rfc3164") == 0;
	s->fmt.keep_newlines = s->transport != SL_UDP && s->octet;
	/* No BOM: rsyslog (and Log Insight behind it) keep it as part of
	 * MSG, an invisible character at the start of every text. */
	s->fmt.bom = false;
	s->fmt.facility = syslog_facility_code(o->facility);
	if (s->fmt.facility < 0) {
		snprintf(ctx->error, sizeof(ctx->error), "unknown syslog "
		    "facility \"%s\"", o->facility);
		return -1;
	}
	snprintf(s->sd_id, sizeof(s->sd_id), "%s", o->sd_id && o->sd_id[0] ?
	    o->sd_id : SYSLOG_DEFAULT_SD_ID);
	s->fmt.sd_id = s->sd_id;
	h = ctx->cfg != NULL ? config_hostname(ctx->cfg) : NULL;
	snprintf(s->hostname, sizeof(s->hostname), "%s", h ? h : "-");
	s->fmt.hostname = s->hostname;
	if (s->transport == SL_UDP)
		s->fmt.max_msg = o->max_message_size > 0 ?
		    (size_t)o->max_message_size : SYSLOG_DEFAULT_MAX;
	return 0;
}

static int
syslog_open(struct sink_ctx *ctx)
{
	const struct dest_conf *d = ctx->conf;
	struct syslog_sink *s;
	struct buf url = BUF_INIT;

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(ctx->error, sizeof(ctx->error), "out of memory");
		return -1;
	}
	netconn_init(&s->nc);
	buf_init(&s->msg, 1024 * 1024);
	buf_init(&s->out, 256u * 1024 * 1024);
	if (d->host_syslog) {
		if (local_setup(ctx, s) == -1)
			goto err;
		ctx->priv = s;
		return 0;
	}
	if (remote_setup(ctx, s) == -1)
		goto err;
	if (s->transport != SL_UDP) {
		if (transport_global_init() == -1) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "libcurl initialisation failed");
			goto err;
		}
		if (transport_base_url(d, "", &url) == -1) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "out of memory");
			goto err;
		}
		s->nc.url = buf_steal(&url);
		if (s->nc.url == NULL) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "out of memory");
			goto err;
		}
	}
	if (trust_init(&s->nc.trust, ctx->cfg, d, ctx->name,
	    s->transport == SL_TLS, ctx->error, sizeof(ctx->error)) == -1)
		goto err;
	log_info("%s: syslog %s to %s:%d (%s%s)", ctx->name,
	    s->fmt.rfc3164 ? "rfc3164" : "rfc5424", d->hostname, dest_port(d),
	    s->transport == SL_UDP ? "udp" : s->transport == SL_TCP ? "tcp" :
	    "tls", s->transport == SL_UDP ? "" : s->octet ?
	    ", octet-counting" : ", newline framing");
	ctx->priv = s;
	return 0;
err:
	buf_free(&url);
	syslog_free(s);
	return -1;
}

static enum send_result
send_udp(struct sink_ctx *ctx, struct syslog_sink *s, const struct batch *b)
{
	size_t i;
	ssize_t n;

	if (s->nc.fd == -1 && netconn_udp_open(&s->nc, ctx->conf, ctx->error,
	    sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	for (i = 0; i < b->n; i++) {
		buf_reset(&s->msg);
		if (syslog_format(&s->fmt, b->events[i], &s->msg) == -1) {
			snprintf(ctx->error, sizeof(ctx->error), "out of memory");
			return SEND_RETRY;
		}
		do
			n = sendto(s->nc.fd, s->msg.data, s->msg.len, 0,
			    (struct sockaddr *)&s->nc.addr, s->nc.addrlen);
		while (n == -1 && errno == EINTR);
		if (n == -1) {
			snprintf(ctx->error, sizeof(ctx->error),
			    "sending to %s:%d over UDP: %s", ctx->conf->hostname,
			    dest_port(ctx->conf), log_errstr(errno));
			netconn_close(&s->nc);
			return SEND_RETRY;
		}
	}
	return SEND_OK;
}

static enum send_result
syslog_send(struct sink_ctx *ctx, const struct batch *b, int *retry_after)
{
	struct syslog_sink *s = ctx->priv;
	long reconnect_s = (long)ctx->conf->reconnect * 60;
	size_t i;

	*retry_after = 0;
	ctx->error[0] = '\0';
	if (b->n == 0)
		return SEND_OK;
	if (reconnect_s > 0 && (s->nc.fd != -1 || s->nc.curl != NULL) &&
	    time(NULL) - s->nc.opened >= reconnect_s)
		netconn_close(&s->nc);
	if (s->transport == SL_UDP)
		return send_udp(ctx, s, b);
	if (s->transport == SL_LOCAL)
		return send_local(ctx, s, b);

	/* Build the whole batch, framed, then write it in one go. */
	buf_reset(&s->out);
	for (i = 0; i < b->n; i++) {
		buf_reset(&s->msg);
		if (syslog_format(&s->fmt, b->events[i], &s->msg) == -1)
			goto nomem;
		if (s->octet) {
			if (buf_printf(&s->out, "%zu ", s->msg.len) == -1 ||
			    buf_append(&s->out, s->msg.data, s->msg.len) == -1)
				goto nomem;
		} else if (buf_append(&s->out, s->msg.data, s->msg.len) == -1 ||
		    buf_putc(&s->out, '\n') == -1)
			goto nomem;
	}
	if (s->nc.curl != NULL && !netconn_alive(&s->nc)) {
		log_limited(LOG_INFO, "syslog:peer-closed", 60,
		    "%s: the receiver closed the connection; reconnecting",
		    ctx->name);
		netconn_close(&s->nc);
	}
	if (s->nc.curl == NULL && netconn_stream_open(&s->nc, ctx->conf,
	    ctx->error, sizeof(ctx->error)) == -1)
		return SEND_RETRY;
	if (netconn_send(&s->nc, ctx->conf, s->out.data, s->out.len,
	    ctx->error, sizeof(ctx->error)) == -1) {
		netconn_close(&s->nc);
		return SEND_RETRY;
	}
	return SEND_OK;
nomem:
	snprintf(ctx->error, sizeof(ctx->error), "out of memory formatting a batch");
	return SEND_RETRY;
}

static void
syslog_close(struct sink_ctx *ctx)
{
	syslog_free(ctx->priv);
	ctx->priv = NULL;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

static const char *const transport_choices[] = { "udp", "tcp", NULL };
static const char *const framing_choices[] = {
	"octet-counting", "newline", NULL
};
static const char *const facility_choices[] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "local0", "local1", "local2",
	"local3", "local4", "local5", "local6", "local7", NULL
};

#define O(f)	offsetof(struct syslog_opts, f)
static const struct cfg_key syslog_keys[] = {
	/* one key with http's row: the same choices, see syslog_finish() */
	{ .name = "format", .type = KT_ENUM, .off = O(format),
	  .choices = sink_format_choices, .def = "rfc5424",
	  .doc = "syslog: rfc5424 or rfc3164 (json_* are http's)" },
	{ .name = "transport", .type = KT_ENUM, .off = O(transport),
	  .choices = transport_choices, .def = "tcp",
	  .doc = "syslog: udp or tcp (TLS with ssl)" },
	{ .name = "framing", .type = KT_ENUM, .off = O(framing),
	  .choices = framing_choices, .def = "octet-counting",
	  .doc = "syslog over TCP: RFC 6587 framing" },
	{ .name = "facility", .type = KT_ENUM, .off = O(facility),
	  .choices = facility_choices, .def = "local4",
	  .doc = "syslog: facility of every message" },
	{ .name = "sd_id", .type = KT_STR, .off = O(sd_id),
	  .check = check_sd_id, .def = "esxwatch@32473",
	  .doc = "syslog: RFC 5424 SD-ID of the event fields" },
	{ .name = "max_message_size", .type = KT_INT,
	  .off = O(max_message_size), .min = 480, .max = 65507, .def = "2048",
	  .doc = "syslog over UDP: longest datagram" },
};
#undef O

/* The format that fits, TLS over UDP, a named destination's host. */
static void
syslog_finish(const struct cfg_finish *f)
{
	const struct kpos *fp = cfg_finish_pos(f, "format");
	const struct kpos *sp = cfg_finish_pos(f, "ssl");
	struct dest_conf *d = f->d;
	struct syslog_opts *o = syslog_opts(d);

	if (o != NULL && fp->ok && strncmp(o->format, "rfc", 3) != 0)
		cfg_error(f->c, fp->line, fp->col, "'format': '%s' does not "
		    "apply to proto syslog (rfc5424 or rfc3164)", o->format);
	if (o != NULL && strcmp(o->transport, "udp") == 0 && d->ssl) {
		if (sp->ok)
			cfg_error(f->c, sp->line, sp->col, "'ssl': syslog over "
			    "UDP cannot use TLS; use transport: tcp or ssl: no");
		d->ssl = false;
	}
	if (!f->primary && d->hostname[0] == '\0')
		cfg_error(f->c, f->line, f->col, "servers.%s: 'hostname' is "
		    "required for proto syslog", d->name);
}

const struct sink sink_syslog = {
	.name = "syslog",
	.proto = PROTO_SYSLOG,
	.open = syslog_open,
	.send = syslog_send,
	.close = syslog_close,
	.port = 514,
	.tls_port = 6514,
	.keys = syslog_keys,
	.nkeys = sizeof(syslog_keys) / sizeof(syslog_keys[0]),
	.opts_size = sizeof(struct syslog_opts),
	.finish = syslog_finish,
};

struct syslog_opts *
syslog_opts(const struct dest_conf *d)
{
	return sink_opts(d, &sink_syslog);
}
