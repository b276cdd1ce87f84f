/*
 * log: the agent's own log.  Thread-safe (both threads log); each line is
 * written with one write(2) so lines from two threads never interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

static int		 log_fd = 2;
static int		 log_level = LOG_INFO;	/* __atomic: read by every thread */
static pthread_mutex_t	 log_mtx = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {
	"error", "warning", "info", "debug", "trace"
};

int
log_init(int debug_level, const char *path)
{
	int fd;

	__atomic_store_n(&log_level, LOG_INFO + (debug_level < 0 ? 0 : debug_level),
	    __ATOMIC_RELAXED);
	if (path == NULL || *path == '\0') {
		log_close();
		return 0;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1) {
		log_error("cannot open log file %s: %s", path, log_errstr(errno));
		return -1;
	}
	pthread_mutex_lock(&log_mtx);
	if (log_fd != 2)
		close(log_fd);
	log_fd = fd;
	pthread_mutex_unlock(&log_mtx);
	return 0;
}

void
log_close(void)
{
	pthread_mutex_lock(&log_mtx);
	if (log_fd != 2)
		close(log_fd);
	log_fd = 2;
	pthread_mutex_unlock(&log_mtx);
}

void
log_vmsg(enum log_level lvl, const char *fmt, va_list ap)
{
	char line[4096];
	struct timespec ts;
	struct tm tm;
	size_t n;
	int r;

	if ((int)lvl > __atomic_load_n(&log_level, __ATOMIC_RELAXED))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	r = snprintf(line + n, sizeof(line) - n, ".%03ldZ esxwatch[%ld]: %s: ",
	    ts.tv_nsec / 1000000, (long)getpid(), level_names[lvl]);
	if (r > 0)
		n += (size_t)r;
	if (n < sizeof(line)) {
		r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		if (r > 0)
			n += (size_t)r;
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	/* A message never spans lines: fold embedded newlines. */
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	pthread_mutex_lock(&log_mtx);
	if (write(log_fd, line, n) < 0) {
		/* Nowhere left to report it. */
	}
	pthread_mutex_unlock(&log_mtx);
}

void
log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lvl, fmt, ap);
	va_end(ap);
}

/*
 * Rate limiting keeps a small table of keys.  A key that has not printed
 * within its period prints now (with the count suppressed since).
 */
#define LIMIT_SLOTS 64

struct limit_slot {
	char		key[96];
	time_t		last;
	unsigned long	suppressed;
};

static struct limit_slot limit_slots[LIMIT_SLOTS];

void
log_limited(enum log_level lvl, const char *key, int period_s,
    const char *fmt, ...)
{
	struct limit_slot *s = NULL, *oldest = &limit_slots[0];
	unsigned long suppressed;
	char msg[3072];
	time_t now;
	va_list ap;
	int i;

	/* Monotonic: a wall clock set back must not silence a key for as
	 * long as it went back.  +1: 0 means "never printed". */
	now = (time_t)(mono_ms() / 1000) + 1;

	pthread_mutex_lock(&log_mtx);
	for (i = 0; i < LIMIT_SLOTS; i++) {
		if (strcmp(limit_slots[i].key, key) == 0) {
			s = &limit_slots[i];
			break;
		}
		if (limit_slots[i].last < oldest->last)
			oldest = &limit_slots[i];
	}
	if (s == NULL) {
		s = oldest;
		snprintf(s->key, sizeof(s->key), "%s", key);
		s->last = 0;
		s->suppressed = 0;
	}
	if (s->last != 0 && now - s->last < period_s) {
		s->suppressed++;
		pthread_mutex_unlock(&log_mtx);
		return;
	}
	suppressed = s->suppressed;
	s->suppressed = 0;
	s->last = now;
	pthread_mutex_unlock(&log_mtx);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (suppressed)
		log_msg(lvl, "%s (%lu similar messages suppressed)", msg, suppressed);
	else
		log_msg(lvl, "%s", msg);
}

/* strerror_r is the GNU one (returns the text) on glibc and the XSI one
 * (fills buf, returns 0) on musl: take either. */
static inline __attribute__((unused)) const char *
errstr_gnu(const char *text, char *buf)
{
	(void)buf;
	return text;
}

static inline __attribute__((unused)) const char *
errstr_xsi(int rc, char *buf)
{
	return rc == 0 ? buf : "unknown error";
}

const char *
log_errstr(int err)
{
	static _Thread_local char buf[128];

	return _Generic(strerror_r(err, buf, sizeof(buf)),
	    char *: errstr_gnu, int: errstr_xsi)(strerror_r(err, buf, sizeof(buf)), buf);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_ERROR, fmt, ap);
	va_end(ap);
	exit(1);
}
