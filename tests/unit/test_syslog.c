/*
 * syslog sink: RFC 5424 / 3164 formatting byte for byte, the UDP size cap,
 * newline handling, and send() over UDP and TCP (octet counting and newline
 * framing) into sockets this test owns, including a receiver that closed
 * the connection.  TLS and rsyslog's parsed view: tests/e2e/test_sinks_syslog.py.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "t.h"
#include "../../agent/config_plugins.h"
#include "sinktest.h"

#include "../../agent/lib/buf.h"
#include "../../agent/lib/clock.h"
#include "../../agent/event.h"
#include "../../agent/lib/log.h"
#include "../../output/syslog.h"
#include "../../output/transport.h"

static struct event *
alert(void)
{
	struct event *ev = event_new(1733000000123LL, "APD \"start\" on naa.1");

	event_set(ev, "hostname", "esx01");
	event_set(ev, "appname", "vobd");
	event_set(ev, "esxwatch_collector", "logwatch");
	event_set(ev, "esxwatch_rule", "apd_start");
	event_set(ev, "esxwatch_severity", "critical");
	event_set(ev, "esxwatch_note", "a\"b\\c]d\ne");
	return ev;
}

static struct syslog_fmt
fmt5424(bool keep_nl)
{
	struct syslog_fmt f;

	memset(&f, 0, sizeof(f));
	f.keep_newlines = keep_nl;
	f.facility = 20;
	f.sd_id = "esxwatch@32473";
	f.hostname = "fallback";
	return f;
}

TEST(formats_rfc5424_exactly)
{
	struct syslog_fmt f = fmt5424(true);
	struct event *ev = alert();
	struct buf b = BUF_INIT;

	CHECK_INT(syslog_format(&f, ev, &b), 0);
	CHECK_STR(b.data, "<162>1 2024-11-30T20:53:20.123Z esx01 vobd - apd_start "
	    "[esxwatch@32473 hostname=\"esx01\" appname=\"vobd\" "
	    "esxwatch_collector=\"logwatch\" esxwatch_rule=\"apd_start\" "
	    "esxwatch_severity=\"critical\" esxwatch_note=\"a\\\"b\\\\c\\]d\ne\"] "
	    "APD \"start\" on naa.1");
	/* without newlines kept (newline framing, UDP) */
	f = fmt5424(false);
	event_set_text(ev, "line1\nline2\r\n");
	buf_reset(&b);
	CHECK_INT(syslog_format(&f, ev, &b), 0);
	CHECK(strstr(b.data, "esxwatch_note=\"a\\\"b\\\\c\\]d e\"] line1 line2  ") != NULL);
	CHECK(strchr(b.data, '\n') == NULL);
	buf_free(&b);
	event_free(ev);
}

TEST(header_fields_fall_back_and_are_sanitised)
{
	struct syslog_fmt f = fmt5424(true);
	struct event *ev = event_new(1733000000123LL, "");
	struct buf b = BUF_INIT;

	CHECK_INT(syslog_format(&f, ev, &b), 0);
	/* no fields: NILVALUE SD, no MSG; hostname from the agent */
	CHECK_STR(b.data, "<166>1 2024-11-30T20:53:20.123Z fallback esxwatch - - -");
	event_set(ev, "esxwatch_collector", "nic");
	event_set(ev, "appname", "a b\xc3\xa9" "0123456789012345678901234567890123456789012345678901234567890");
	event_set(ev, "esxwatch_severity", "warning");
	buf_reset(&b);
	CHECK_INT(syslog_format(&f, ev, &b), 0);
	{
		const char *w = "<164>1 2024-11-30T20:53:20.123Z fallback "
		    "ab0123456789012345678901234567890123456789012345 - nic [";
		if (strncmp(b.data, w, strlen(w)) != 0)
			T_FAILF("got %s", b.data);
	}
	buf_free(&b);
	event_free(ev);
}

TEST(formats_rfc3164)
{
	struct syslog_fmt f = fmt5424(false);
	struct event *ev = alert();
	struct buf b = BUF_INIT;

	f.rfc3164 = true;
	f.facility = 16;
	event_set(ev, "esxwatch_severity", "info");
	CHECK_INT(syslog_format(&f, ev, &b), 0);
	CHECK_STR(b.data, "<134>Nov 30 20:53:20 esx01 vobd: APD \"start\" on naa.1");
	buf_free(&b);
	event_free(ev);
}

TEST(udp_cap_cuts_msg_never_header)
{
	struct syslog_fmt f = fmt5424(false);
	struct event *ev = alert();
	struct buf b = BUF_INIT, t = BUF_INIT;
	size_t hdr;
	int i;

	for (i = 0; i < 400; i++)
		buf_puts(&t, "\xc3\xa9");	/* 2-byte characters */
	event_set_text(ev, t.data);
	CHECK_INT(syslog_format(&f, ev, &b), 0);
	hdr = (size_t)(strstr(b.data, "] ") + 2 - b.data);
	f.max_msg = hdr + 101;
	buf_reset(&b);
	CHECK_INT(syslog_format(&f, ev, &b), 0);
	CHECK_INT(b.len, hdr + 100);	/* 50 whole characters, not 50.5 */
	CHECK(strncmp(b.data + hdr, "\xc3\xa9\xc3\xa9", 4) == 0);
	/* a cap smaller than the header keeps the header whole */
	f.max_msg = 10;
	buf_reset(&b);
	CHECK_INT(syslog_format(&f, ev, &b), 0);
	CHECK_INT(b.len, hdr);
	buf_free(&b);
	buf_free(&t);
	event_free(ev);
}

TEST(codes)
{
	CHECK_INT(syslog_facility_code("local4"), 20);
	CHECK_INT(syslog_facility_code("kern"), 0);
	CHECK_INT(syslog_facility_code("local7"), 23);
	CHECK_INT(syslog_facility_code("bogus"), -1);
	CHECK_INT(syslog_severity_code("critical"), 2);
	CHECK_INT(syslog_severity_code("error"), 3);
	CHECK_INT(syslog_severity_code("warning"), 4);
	CHECK_INT(syslog_severity_code("info"), 6);
	CHECK_INT(syslog_severity_code(NULL), 6);
}

/* ---- send() into our own sockets ---- */

static int
listen_on(int type, int *port)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, type, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1)
		return -1;
	if (type == SOCK_STREAM && listen(fd, 8) == -1)
		return -1;
	getsockname(fd, (struct sockaddr *)&a, &l);
	*port = ntohs(a.sin_port);
	return fd;
}

static size_t
read_some(int fd, char *out, size_t cap, size_t want)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t got = 0;
	ssize_t n;

	while (got < want && poll(&p, 1, 2000) > 0) {
		n = recv(fd, out + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = '\0';
	return got;
}

struct sfx {
	struct config	*cfg;
	struct sink_ctx	 ctx;
	const struct sink *sink;
};

static void
sfx_init(struct sfx *s, const char *transport, const char *framing, int port)
{
	memset(s, 0, sizeof(*s));
	s->cfg = config_default();
	s->cfg->server.proto = PROTO_SYSLOG;
	s->cfg->server.ssl = false;
	s->cfg->server.port = port;
	s->cfg->server.timeout = 5;
	set_str(&s->cfg->server.hostname, "127.0.0.1");
	set_str(&syslog_opts(&s->cfg->server)->transport, transport);
	set_str(&syslog_opts(&s->cfg->server)->framing, framing);
	set_str(&syslog_opts(&s->cfg->server)->format, "rfc5424");
	s->ctx.name = "server";
	s->ctx.conf = &s->cfg->server;
	s->ctx.cfg = s->cfg;
	s->sink = sink_find(PROTO_SYSLOG);
}

static void
sfx_free(struct sfx *s)
{
	if (s->ctx.priv)
		s->sink->close(&s->ctx);
	config_free(s->cfg);
}

static enum send_result
send2(struct sfx *s, const char *t1, const char *t2)
{
	struct event *evs[2];
	struct batch b = { .events = evs, .n = 2 };
	enum send_result r;
	int ra;

	evs[0] = event_new(1733000000123LL, t1);
	evs[1] = event_new(1733000000123LL, t2);
	event_set(evs[0], "hostname", "esx01");
	event_set(evs[1], "hostname", "esx01");
	r = s->sink->send(&s->ctx, &b, &ra);
	event_free(evs[0]);
	event_free(evs[1]);
	return r;
}

#define M1 "<166>1 2024-11-30T20:53:20.123Z esx01 esxwatch - - [esxwatch@32473 hostname=\"esx01\"] "

TEST(tcp_octet_counting_and_reconnect)
{
	char got[4096], want[1024];
	int port, lfd = listen_on(SOCK_STREAM, &port), c1, c2;
	struct sfx s;

	sfx_init(&s, "tcp", "octet-counting", port);
	CHECK_INT(s.sink->open(&s.ctx), 0);
	CHECK_INT(send2(&s, "one\ntwo", "three"), SEND_OK);
	c1 = accept(lfd, NULL, NULL);
	snprintf(want, sizeof(want), "%zu " M1 "one\ntwo%zu " M1 "three",
	    strlen(M1) + 7, strlen(M1) + 5);
	read_some(c1, got, sizeof(got), strlen(want));
	CHECK_STR(got, want);
	/* the receiver goes away: detected before the next batch, which goes
	 * to a new connection, whole */
	close(c1);
	usleep(50000);
	CHECK_INT(send2(&s, "four", "five"), SEND_OK);
	c2 = accept(lfd, NULL, NULL);
	read_some(c2, got, sizeof(got), 2 * strlen(M1) + 12);
	CHECK(strstr(got, "four") != NULL && strstr(got, "five") != NULL);
	CHECK(strncmp(got, "89 <166>1", 9) == 0);
	close(c2);
	/* nobody listening any more: RETRY with the cause */
	close(lfd);
	usleep(50000);
	CHECK_INT(send2(&s, "six", "seven"), SEND_RETRY);
	CHECK(strstr(s.ctx.error, "cannot connect to 127.0.0.1") != NULL);
	sfx_free(&s);
}

TEST(tcp_newline_framing)
{
	char got[4096], want[1024];
	int port, lfd = listen_on(SOCK_STREAM, &port), c;
	struct sfx s;

	sfx_init(&s, "tcp", "newline", port);
	CHECK_INT(s.sink->open(&s.ctx), 0);
	CHECK_INT(send2(&s, "one\ntwo", "three"), SEND_OK);
	c = accept(lfd, NULL, NULL);
	snprintf(want, sizeof(want), M1 "one two\n" M1 "three\n");
	read_some(c, got, sizeof(got), strlen(want));
	CHECK_STR(got, want);
	close(c);
	close(lfd);
	sfx_free(&s);
}

TEST(udp_datagrams)
{
	char got[4096];
	int port, fd = listen_on(SOCK_DGRAM, &port);
	struct sfx s;

	sfx_init(&s, "udp", "octet-counting", port);
	CHECK_INT(s.sink->open(&s.ctx), 0);
	CHECK_INT(send2(&s, "one\ntwo", "three"), SEND_OK);
	read_some(fd, got, sizeof(got), 1);
	CHECK_STR(got, M1 "one two");
	read_some(fd, got, sizeof(got), 1);
	CHECK_STR(got, M1 "three");
	close(fd);
	sfx_free(&s);
}

/* The host's syslog form: syslog(3)'s local header, the event as JSON. */
TEST(formats_for_the_host_syslog)
{
	struct syslog_fmt f = fmt5424(false);
	struct event *ev = alert();
	struct buf b = BUF_INIT;
	char big[20000];

	f.facility = 3;
	CHECK_INT(syslog_format_local(&f, ev, 4242, &b), 0);
	CHECK_STR(b.data, "<26>Nov 30 20:53:20 esxwatch[4242]: "
	    "{\"timestamp\":1733000000123,\"text\":\"APD \\\"start\\\" on naa.1\","
	    "\"hostname\":\"esx01\",\"appname\":\"vobd\",\"esxwatch_collector\":"
	    "\"logwatch\",\"esxwatch_rule\":\"apd_start\",\"esxwatch_severity\":"
	    "\"critical\",\"esxwatch_note\":\"a\\\"b\\\\c]d\\ne\"}");
	/* over the cap: the text is cut, the fields stay, still JSON */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	free(ev->text);
	ev->text = strdup(big);
	f.max_msg = 8192;
	buf_reset(&b);
	CHECK_INT(syslog_format_local(&f, ev, 1, &b), 0);
	CHECK(b.len <= 8192 && b.len > 4096);
	CHECK(strstr(b.data, "\"esxwatch_rule\":\"apd_start\"") != NULL);
	CHECK(b.data[b.len - 1] == '}');
	/* fields alone over the cap: it cannot be sent, and says so (-2,
	 * not out of memory: the shipper drops it, counted) */
	big[9000] = '\0';
	CHECK_INT(event_set(ev, "esxwatch_note", big), 0);
	buf_reset(&b);
	CHECK_INT(syslog_format_local(&f, ev, 1, &b), -2);
	buf_free(&b);
	event_free(ev);
}

static int
unix_listen(const char *path, int type)
{
	struct sockaddr_un un;
	int fd = socket(AF_UNIX, type, 0);

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&un, sizeof(un)) == -1 ||
	    (type == SOCK_STREAM && listen(fd, 4) == -1))
		return -1;
	return fd;
}

#define L1 "<30>Nov 30 20:53:20 esxwatch["

/* A host with no destination: the sink writes to the host's syslog
 * socket, datagram or (as syslog(3) does) stream, each message ending
 * with a NUL there; no socket is a retry that says where it looked. */
TEST(host_syslog_socket)
{
	char path[128], got[4096];
	struct sfx s;
	int fd, c;

	snprintf(path, sizeof(path), "/tmp/test_syslog.%d.sock", (int)getpid());
	setenv("ESXWATCH_HOST_SYSLOG", path, 1);
	sfx_init(&s, "tcp", "octet-counting", 0);
	set_str(&s.cfg->server.hostname, "");
	s.cfg->server.host_syslog = true;
	CHECK_INT(s.sink->open(&s.ctx), 0);
	unlink(path);
	CHECK_INT(send2(&s, "one", "two"), SEND_RETRY);
	CHECK(strstr(s.ctx.error, "cannot reach the host's syslog at ") != NULL &&
	    strstr(s.ctx.error, path) != NULL);

	fd = unix_listen(path, SOCK_DGRAM);
	CHECK(fd >= 0);
	CHECK_INT(send2(&s, "one\ntwo", "three"), SEND_OK);
	read_some(fd, got, sizeof(got), 1);
	CHECK(strncmp(got, L1, strlen(L1)) == 0);
	CHECK(strstr(got, "]: {\"timestamp\":1733000000123,\"text\":\"one\\ntwo\","
	    "\"hostname\":\"esx01\"}") != NULL);
	read_some(fd, got, sizeof(got), 1);
	CHECK(strstr(got, "\"text\":\"three\"") != NULL);
	close(fd);
	/* the daemon restarted with a stream socket: reconnected */
	fd = unix_listen(path, SOCK_STREAM);
	CHECK_INT(send2(&s, "a", "b"), SEND_RETRY);
	CHECK_INT(send2(&s, "four", "five"), SEND_OK);
	c = accept(fd, NULL, NULL);
	memset(got, 0, sizeof(got));
	{
		size_t n = read_some(c, got, sizeof(got), 188);
		char *second = memchr(got, '\0', n);

		CHECK(second != NULL && second + 1 < got + n);
		CHECK(strstr(got, "\"text\":\"four\",") != NULL);
		if (second != NULL)
			CHECK(strstr(second + 1, "\"text\":\"five\",") != NULL);
	}
	close(c);
	close(fd);
	/* a daemon that reads nothing: the send waits at most the timeout */
	fd = unix_listen(path, SOCK_DGRAM);
	s.cfg->server.timeout = 1;
	{
		enum send_result r = SEND_OK;
		int64_t t0;

		(void)send2(&s, "the stream", "is gone");	/* reconnects next */
		t0 = mono_ms();

		for (int i = 0; i < 200 && r == SEND_OK; i++)
			r = send2(&s, "fill", "up");
		CHECK_INT(r, SEND_RETRY);
		CHECK(strstr(s.ctx.error, "takes no messages (timed out after 1 s)") != NULL);
		CHECK(mono_ms() - t0 < 10000);
	}
	close(fd);
	unlink(path);
	unsetenv("ESXWATCH_HOST_SYSLOG");
	sfx_free(&s);
}

int
main(void)
{
	T_PROG("test_syslog");
	config_plugins_builtin();
	log_init(0, NULL);
	RUN(formats_rfc5424_exactly);
	RUN(header_fields_fall_back_and_are_sanitised);
	RUN(formats_rfc3164);
	RUN(udp_cap_cuts_msg_never_header);
	RUN(codes);
	RUN(tcp_octet_counting_and_reconnect);
	RUN(tcp_newline_framing);
	RUN(udp_datagrams);
	RUN(formats_for_the_host_syslog);
	RUN(host_syslog_socket);
	curl_global_cleanup();
	return t_done();
}
