/*
 * log: the agent's own log (not events).  One line per message:
 *   2026-11-30T12:00:00.123Z esxwatch[123]: warning: message
 * to stderr or to logging.file.  Level 0 prints errors, warnings and info,
 * 1 adds debug, 2 adds trace (liagent's debug_level).
 */
#ifndef ESXWATCH_LOG_H
#define ESXWATCH_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_TRACE };

/* path NULL or "" = stderr.  Returns -1 (and keeps stderr) if the file
 * cannot be opened. */
int	log_init(int debug_level, const char *path);
void	log_close(void);
void	log_msg(enum log_level, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	log_vmsg(enum log_level, const char *fmt, va_list);

#define log_error(...)	log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_trace(...)	log_msg(LOG_TRACE, __VA_ARGS__)

/*
 * Rate-limited message: at most one line per `key` every `period_s`
 * seconds; the suppressed count is appended to the next line printed.
 * key is any stable string (e.g. "nic:esxcli-failed").
 */
void	log_limited(enum log_level, const char *key, int period_s,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The text of errno value err, for a log line.  strerror() is not
 * thread-safe (a static buffer on some C libraries): this is the only place
 * that calls the C library for it, and the text lives in a per-thread
 * buffer valid until this thread's next call.
 */
const char *log_errstr(int err);

/* Broken invariant: log and exit(1). */
void	fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
