/*
 * platform: ESXi or Linux, where the host's tools and directories are.
 */
#ifndef ESXWATCH_PLATFORM_H
#define ESXWATCH_PLATFORM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

enum platform { PLATFORM_LINUX, PLATFORM_ESXI };

/* configured ("esxi", "linux"; host.platform), or else detection (uname
 * "VMkernel", /etc/vmware/esx.conf, /bin/vmkload_mod).  Values, not the
 * configuration: agent/config/config_host.h reads the keys. */
enum platform	 platform_detect(const char *configured);
/*
 * The C library's heap, kept small: glibc gives each thread an arena of
 * its own and keeps what they freed (a shipper thread per destination
 * and per reload); musl returns memory by itself.  platform_heap_init()
 * once at start, platform_heap_trim() after a large release.
 */
void		 platform_heap_init(void);
void		 platform_heap_trim(void);
const char	*platform_name(enum platform);
/*
 * Start fn(arg) on a thread of its own: a stack of stack_kb KiB (0: the C
 * library's default; glibc's is 8 MiB of address space, musl's 128 KiB),
 * every signal blocked but a fault's (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT: blocked, the kernel would kill the process without a word, no
 * sanitizer report, no core; the daemon's signals belong to the main thread),
 * named name (esxw-..., at most 15 characters: top -H, /proc/PID/task/
 * TID/comm; bench/bench_idle.py counts wakeups by it).  0 or -1.
 */
int		 platform_thread_start(pthread_t *, const char *name, size_t stack_kb,
		    void *(*fn)(void *), void *arg);
/* Stack sizes (KiB) of the agent's threads: what each needs with room
 * to spare (PCRE2's JIT takes 32 KiB of the caller's stack; curl,
 * OpenSSL and the resolver a few tens), not the 8 MiB of glibc. */
#define PLATFORM_STACK_COLLECTOR	256
#define PLATFORM_STACK_SHIPPER		256
#define PLATFORM_STACK_SMALL		128	/* status writer, monitor, spool */
/*
 * Where the events of a host with no destination (dest_conf.nodest) go.
 * A command (--once) or a run on a terminal: stdout, which someone reads
 * (NODEST_TTY).  A daemon on ESXi: the host's syslog (vmsyslogd), so the
 * events follow Syslog.global.logHost like every other host log.  A daemon
 * elsewhere: stdout (the journal, under systemd), with a warning.
 */
enum nodest { NODEST_TTY, NODEST_STDOUT, NODEST_HOST_SYSLOG };
enum nodest	 platform_nodest(enum platform, bool command, bool tty);
/* The status words of each (status file, --status --json). */
const char	*platform_nodest_name(enum nodest);

/* configured (host.hostname) when set, else the host's name (gethostname). */
const char	*platform_hostname(const char *configured);
/* configured (storage.directory) when set, else the platform's default
 * (/scratch/esxwatch, /var/lib/esxwatch). */
const char	*platform_storage_dir(const char *configured, enum platform);
/*
 * Find an executable: tools_dir (host.tools_dir; NULL or "": none) first,
 * then the platform's usual places (/bin /sbin /usr/bin /usr/sbin
 * /usr/lib/vmware/vsan/bin ...).  Returns 0 and the absolute path in out,
 * or -1.
 */
int		 platform_find_tool(const char *tools_dir, const char *name,
		    char *out, size_t outlen);

#endif
