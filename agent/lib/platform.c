/*
 * platform: ESXi or Linux, and where things are on each.
 */
#include <errno.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "platform.h"

static int
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

enum platform
platform_detect(const char *configured)
{
	static int detected = -1;	/* __atomic: read by every thread */
	struct utsname u;
	int d;

	if (configured && strcmp(configured, "esxi") == 0)
		return PLATFORM_ESXI;
	if (configured && strcmp(configured, "linux") == 0)
		return PLATFORM_LINUX;
	d = __atomic_load_n(&detected, __ATOMIC_ACQUIRE);
	if (d == -1) {
		/* uname -s says "VMkernel" on every ESXi release. */
		if ((uname(&u) == 0 && strcmp(u.sysname, "VMkernel") == 0) ||
		    exists("/etc/vmware/esx.conf") || exists("/bin/vmkload_mod"))
			d = PLATFORM_ESXI;
		else
			d = PLATFORM_LINUX;
		__atomic_store_n(&detected, d, __ATOMIC_RELEASE);
	}
	return (enum platform)d;
}

const char *
platform_name(enum platform p)
{
	return p == PLATFORM_ESXI ? "esxi" : "linux";
}

enum nodest
platform_nodest(enum platform p, bool command, bool tty)
{
	if (command || tty)
		return NODEST_TTY;
	return p == PLATFORM_ESXI ? NODEST_HOST_SYSLOG : NODEST_STDOUT;
}

const char *
platform_nodest_name(enum nodest n)
{
	return n == NODEST_HOST_SYSLOG ? "host_syslog" : "stdout";
}

static char		host_name[256];
static pthread_once_t	host_name_once = PTHREAD_ONCE_INIT;

static void
read_host_name(void)
{
	if (gethostname(host_name, sizeof(host_name) - 1) == -1 || host_name[0] == '\0')
		snprintf(host_name, sizeof(host_name), "localhost");
	host_name[sizeof(host_name) - 1] = '\0';
}

const char *
platform_hostname(const char *configured)
{
	if (configured && *configured)
		return configured;
	/* Once, whichever thread asks first: the others never see it half written. */
	pthread_once(&host_name_once, read_host_name);
	return host_name;
}

const char *
platform_storage_dir(const char *configured, enum platform p)
{
	if (configured && *configured)
		return configured;
	return p == PLATFORM_ESXI ? "/scratch/esxwatch" : "/var/lib/esxwatch";
}

static int
try_dir(const char *dir, const char *name, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= outlen)
		return -1;
	return access(out, X_OK) == 0 ? 0 : -1;
}

int
platform_find_tool(const char *tools_dir, const char *name, char *out,
    size_t outlen)
{
	static const char *const dirs[] = {
		"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/sbin",
		"/usr/local/bin", "/usr/lib/vmware/vsan/bin", "/opt/vmware/bin",
		NULL
	};
	int i;

	if (strchr(name, '/') != NULL)
		return -1;
	if (tools_dir && *tools_dir && try_dir(tools_dir, name, out, outlen) == 0)
		return 0;
	for (i = 0; dirs[i]; i++)
		if (try_dir(dirs[i], name, out, outlen) == 0)
			return 0;
	return -1;
}

void
platform_heap_init(void)
{
#ifdef __GLIBC__
	/* two arenas: the collectors' and shippers' threads share them */
	mallopt(M_ARENA_MAX, 2);
	/* Fixed thresholds (setting them turns glibc's sliding ones off):
	 * a block of 64 KiB or more (an esxcli answer, a status picture)
	 * is mapped and given back when freed, instead of raising the
	 * threshold and staying in the heap for good; a free top of the
	 * heap over 128 KiB is returned. */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
/*
 * One malloc_trim() at a time.  glibc's first malloc_trim() sets its
 * "initialized" flag before it has set up the main arena; another one
 * meanwhile walks bins that are still NULL and faults.  Where malloc is
 * glibc's, the first malloc() set it up long before (no thread then);
 * where it is not (AddressSanitizer's, an LD_PRELOADed allocator) the
 * first trim is that set-up, and the agent and diagnosis collectors end
 * their first round, and trim, at the same moment at start.
 */
static pthread_mutex_t	heap_trim_mu = PTHREAD_MUTEX_INITIALIZER;
#endif

/*
 * Under AddressSanitizer the agent's memory is ASan's, not in glibc's
 * arenas: a trim gives nothing back, and it races glibc's own internal
 * allocations (NSS during a resolver call, dlopen) that set the main arena
 * up behind the mutex's back.  Not done there.
 */
void
platform_heap_trim(void)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
	pthread_mutex_lock(&heap_trim_mu);
	malloc_trim(0);
	pthread_mutex_unlock(&heap_trim_mu);
#endif
}

/*
 * Under AddressSanitizer every frame is several times larger (redzones,
 * the fake stack): the sizes below are for the normal build.
 */
#if defined(__SANITIZE_ADDRESS__)
#define STACK_SCALE	4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACK_SCALE	4
#endif
#endif
#ifndef STACK_SCALE
#define STACK_SCALE	1
#endif

int
platform_thread_start(pthread_t *t, const char *name, size_t stack_kb,
    void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t block, old;
	int rc;

	if (pthread_attr_init(&attr) != 0)
		return -1;
	if (stack_kb > 0)
		(void)pthread_attr_setstacksize(&attr, stack_kb * 1024 * STACK_SCALE);
	/* the daemon's signals belong to the main thread; a fault's are the
	 * thread's own (platform.h) */
	sigfillset(&block);
	sigdelset(&block, SIGSEGV);
	sigdelset(&block, SIGBUS);
	sigdelset(&block, SIGILL);
	sigdelset(&block, SIGFPE);
	sigdelset(&block, SIGABRT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	if (name != NULL) {
		char n[16];	/* the kernel keeps 15 characters */

		snprintf(n, sizeof(n), "%s", name);
		(void)pthread_setname_np(*t, n);	/* a name only: may fail */
	}
	return 0;
}
