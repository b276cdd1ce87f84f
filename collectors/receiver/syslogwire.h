/*
 * syslogwire: the syslog wire as ESXi hosts (and relays) send it — the
 * framing of a TCP/TLS stream, the parse of one message, and the folding
 * of hostd's "-->" continuation lines.  Pure functions over bytes: no
 * sockets, no clock (times are passed in), bounded memory; each is a
 * libFuzzer target (tests/fuzz/fuzz_syslogwire.c, fuzz_framing.c).
 *
 * Formats (docs/collector.md has the sources):
 *   RFC 3164 as ESXi writes it: "<PRI>2024-01-01T00:00:00.123Z HOST Tag: MSG"
 *     (6.x/7.0: tag without pid, "vobd:" followed by two spaces; 8.0:
 *     "Tag[pid]:" and an "[Originator@6876 ...]" block in MSG);
 *   classic RFC 3164 "<PRI>Mmm dd hh:mm:ss HOST TAG[pid]: MSG";
 *   RFC 5424 "<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG";
 *   a relay's prepended header "<PRI>Mmm dd hh:mm:ss RELAY " before one of
 *     the above (the inner header wins; the relay is noted).
 */
#ifndef ESXWATCH_SYSLOGWIRE_H
#define ESXWATCH_SYSLOGWIRE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYSLOG_MSG_MAX	65536	/* a message past this is cut (counted) */

enum syslog_format { SYSLOG_UNKNOWN = 0, SYSLOG_3164, SYSLOG_5424 };

/* A span of the input buffer (not NUL-terminated); len 0 = absent. */
struct syslog_span {
	const char	*p;
	size_t		 len;
};

struct syslog_msg {
	enum syslog_format format;
	int		 pri;		/* 0..191, or -1 when there was none */
	int64_t		 ts_ms;		/* the header's time (UTC ms), or -1 */
	struct syslog_span host;	/* HOSTNAME ("-" in 5424 = absent) */
	struct syslog_span app;		/* TAG / APP-NAME without "[pid]" and ":" */
	struct syslog_span procid;	/* pid / PROCID, or absent */
	struct syslog_span msgid;	/* 5424 only */
	struct syslog_span sd;		/* 5424 structured data, or 3164's leading
					 * "[Originator@6876 ...]" block */
	struct syslog_span msg;		/* the message proper (after tag/SD) */
	struct syslog_span text;	/* the event's text: the message as received
					 * without <PRI> and framing (CONTRACT §5) */
	struct syslog_span relay;	/* a relay's prepended HOSTNAME, or absent */
};

/*
 * Parse one message (without framing, without its trailing newline).
 * now_ms gives the year for a classic 3164 time without one.  Returns 0,
 * or -1 when buf is not a syslog message at all (then out->text is the
 * whole buffer, so a caller can still keep it as a malformed line).
 * Never reads past len.
 */
int	syslog_parse(const char *buf, size_t len, int64_t now_ms,
	    struct syslog_msg *out);

/*
 * A HOSTNAME the receiver must not key a host by (CONTRACT §5): absent,
 * empty, or "localhost*" in any case ("localhost", "localhost.localdomain",
 * "LOCALHOST").  The caller then uses the peer's address.
 */
bool	syslog_host_fallback(const struct syslog_span *host);

/*
 * The name that keys a message's host (receiver.hostname: header): the
 * inner header's HOSTNAME; when that one is absent, empty or localhost*
 * (syslog_host_fallback) and a relay's header came in front, the name the
 * relay gives (RFC 3164 4.3.2: the originator as the relay knows it — or
 * the relay itself, for a relay that writes its own name there; either is
 * better than the peer's address, which is then the relay's too); NULL
 * when neither is usable: the caller uses the peer's address.
 */
const struct syslog_span *syslog_host_name(const struct syslog_msg *);

/*
 * The framing of one TCP/TLS connection: octet counting (RFC 6587 3.4.1,
 * "LEN SP MSG") or LF-terminated (also NUL), detected from the first byte
 * of each frame.  Bytes go in with framer_feed(); whole messages come out
 * through the callback.  Memory: at most SYSLOG_MSG_MAX + a few bytes per
 * connection — a longer message is delivered cut (truncated = true) and the
 * rest of it skipped; a length prefix that is not a number or is too large
 * is a malformed frame (counted; the connection's framing resyncs on the
 * next LF).
 */
struct framer;
typedef void (*framer_cb)(void *arg, const char *msg, size_t len,
    bool truncated);
struct framer_counts {
	uint64_t	messages, truncated, malformed;
};
struct framer	*framer_new(void);
void		 framer_free(struct framer *);
/* 0; the callback runs for each message completed by these bytes. */
int		 framer_feed(struct framer *, const char *data, size_t len,
		    framer_cb cb, void *arg);
/* End of stream: a last unterminated LF message is delivered. */
void		 framer_end(struct framer *, framer_cb cb, void *arg);
const struct framer_counts *framer_counts(const struct framer *);
/* Bytes held (for the per-connection memory figure). */
size_t		 framer_held(const struct framer *);

/*
 * Folding of continuation lines: hostd's multi-line records arrive as one
 * message per line, the later ones starting with "-->" (after the tag).
 * A fold keeps, per (host, program), the record being assembled; a
 * continuation is appended to it (with "\n"); any other message, or the
 * deadline (ms after its last line), releases it.  Bounded: a record stops
 * growing at SYSLOG_MSG_MAX (cut, counted) and at most max_keys records are
 * open at once (the oldest is released first).
 */
struct fold;
typedef void (*fold_cb)(void *arg, const char *host, const char *program,
    const char *text, size_t len, int64_t first_ms, bool truncated);
struct fold	*fold_new(size_t max_keys, int64_t deadline_ms);
void		 fold_free(struct fold *);
/* One parsed message's text for (host, program) at now_ms; records ready
 * go to cb (a message that is not a continuation goes to cb after the
 * record it ends: it starts the next record of its key, released in its
 * turn by the next message of the key, the deadline or fold_due(all)).  A
 * continuation with no open record starts one.  cb must not call fold_add
 * or fold_due; host, program and text are valid during the call only. */
void		 fold_add(struct fold *, const char *host, const char *program,
		    const char *text, size_t len, bool continuation,
		    int64_t now_ms, fold_cb cb, void *arg);
/* The open record of (host, program) — the one the last fold_add of the
 * key went to — is marked cut (truncated), like one cut by the fold: a
 * message cut before it came here (the framer's 64 KiB, a cut datagram). */
void		 fold_cut(struct fold *, const char *host, const char *program);
/* Release the records whose deadline passed (all: every one). */
void		 fold_due(struct fold *, int64_t now_ms, bool all, fold_cb cb,
		    void *arg);
struct fold_counts {
	uint64_t	records;	/* records released */
	uint64_t	continuations;	/* lines appended to a record */
	uint64_t	truncated;	/* records cut at SYSLOG_MSG_MAX */
	uint64_t	evicted;	/* released early: max_keys were open */
};
const struct fold_counts *fold_counts(const struct fold *);
/* Records open now. */
size_t		 fold_open(const struct fold *);
/* Is msg (the parsed message proper) a continuation line? */
bool		 syslog_is_continuation(const char *msg, size_t len);
#endif
