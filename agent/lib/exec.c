/*
 * exec: run a host tool safely — no shell, bounded output, a timeout.
 *
 * The child gets its own process group so that a timeout kills whatever
 * the tool started too (esxcli is itself a wrapper script on ESXi).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "exec.h"
#include "log.h"
#include "platform.h"

#define EXEC_ERR_MAX	(64u * 1024)
#define EXEC_TICK_MS	200	/* how often a wait looks at the abort flag */
/* After the tool exited, how long what it started may still write to its
 * stdout/stderr before the rest of its group is killed and reading stops. */
#define EXEC_LINGER_MS	500

static int aborting;	/* __atomic: exec_abort_all() in force */

void
exec_abort_all(void)
{
	__atomic_store_n(&aborting, 1, __ATOMIC_SEQ_CST);
}

void
exec_abort_reset(void)
{
	__atomic_store_n(&aborting, 0, __ATOMIC_SEQ_CST);
}

static bool
is_aborting(void)
{
	return __atomic_load_n(&aborting, __ATOMIC_SEQ_CST) != 0;
}

bool
exec_aborting(void)
{
	return is_aborting();
}

static void
set_cloexec_nonblock(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

const char *
exec_refusal(int err, bool esxi)
{
	switch (err) {
	case ENOENT:
		return "no such file";
	case EACCES:
		return "permission denied (EACCES)";
	case ENOEXEC:
		return "not an executable";
	case EPERM:
		/* What ESXi 8 answers (by default) for a file that no
		 * installed VIB brought: "Operation not permitted". */
		return esxi ? "refused by the kernel (EPERM): ESXi's "
		    "execInstalledOnly runs only binaries from installed VIBs; "
		    "host.tools_dir must point into an installed VIB" :
		    "refused by the kernel (EPERM)";
	default:
		return "exec failed";
	}
}

static void
child(const char *const argv[], int out, int err, bool esxi)
{
	long maxfd = sysconf(_SC_OPEN_MAX);
	int fd, devnull;

	setpgid(0, 0);
	/* Default signal dispositions and an empty mask for the tool. */
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	{
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	devnull = open("/dev/null", O_RDONLY);
	if (devnull == -1 || dup2(devnull, 0) == -1 || dup2(out, 1) == -1 ||
	    dup2(err, 2) == -1)
		_exit(127);
	/* No close_range(2) on ESXi: close by hand, bounded. */
	if (maxfd < 0 || maxfd > 4096)
		maxfd = 4096;
	for (fd = 3; fd < maxfd; fd++)
		close(fd);
	execv(argv[0], (char *const *)argv);
	/* Only async-signal-safe calls between fork and exec (another thread
	 * may have held a lock stdio or strerror needs when we forked). */
	{
		const char *why = exec_refusal(errno, esxi);
		struct iovec iov[5] = {
			{ (void *)"cannot execute ", 15 },
			{ (void *)argv[0], strlen(argv[0]) },
			{ (void *)": ", 2 },
			{ (void *)why, strlen(why) },
			{ (void *)"\n", 1 },
		};

		(void)!writev(2, iov, 5);
	}
	_exit(127);
}

/* Read what is available; 1 = EOF or error, 0 = more may come. */
static int
drain(int fd, struct buf *b, size_t max, bool *truncated)
{
	char tmp[16384];
	ssize_t n;

	for (;;) {
		n = read(fd, tmp, sizeof(tmp));
		if (n > 0) {
			size_t room = b->len < max ? max - b->len : 0;
			size_t take = (size_t)n < room ? (size_t)n : room;

			if (take < (size_t)n)
				*truncated = true;
			if (take && buf_append(b, tmp, take) == -1)
				*truncated = true;
			continue;
		}
		if (n == 0)
			return 1;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return 1;
	}
}

static void
kill_group(pid_t pid, int *statusp)
{
	int64_t end;

	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	end = mono_ms() + 1000;
	while (mono_ms() < end) {
		if (waitpid(pid, statusp, WNOHANG) == pid) {
			kill(-pid, SIGKILL);	/* stragglers in the group */
			return;
		}
		poll(NULL, 0, 20);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, statusp, 0) == -1 && errno == EINTR)
		;
}

/*
 * Has the tool (pid) exited?  Reaped if so (wait4, the one wait ESXi is
 * known to have: no waitid).  Its group id stays reserved while anything
 * it started is still in the group, so kill(-pid) afterwards still reaches
 * only those.  1 exited (*status set), 0 running, -1 not our child.
 */
static int
tool_exited(pid_t pid, int *status)
{
	pid_t w = waitpid(pid, status, WNOHANG);

	if (w == pid)
		return 1;
	return w == -1 && errno != EINTR ? -1 : 0;
}

/*
 * Read the tool's stdout and stderr until both close or the deadline (or a
 * stop) passes -- or until EXEC_LINGER_MS after the tool itself exited: a
 * child it left behind holding the pipes (a daemon it started, a setsid'ed
 * helper) must not turn its success into a time-out.  True if the tool
 * exited (and was reaped: *status is its wait status).
 */
static bool
collect(pid_t pid, int ofd, int efd, int64_t deadline, struct buf *out,
    size_t max_out, struct buf *err, struct exec_result *res, int *status,
    bool *held)
{
	bool out_eof = false, err_eof = false, err_trunc = false;
	int64_t linger_end = 0;
	bool can_ask = true;

	while (!(out_eof && err_eof)) {
		struct pollfd pfd[2];
		int64_t left = deadline - mono_ms(), tick;
		int n = 0, rc;

		if (linger_end == 0 && can_ask) {
			rc = tool_exited(pid, status);
			can_ask = rc >= 0;
			if (rc == 1)
				linger_end = mono_ms() + EXEC_LINGER_MS;
		}
		if (linger_end != 0 && mono_ms() >= linger_end)
			break;
		if (left <= 0 || is_aborting()) {
			res->timed_out = true;
			res->cancelled = left > 0;
			break;
		}
		if (!out_eof) {
			pfd[n].fd = ofd;
			pfd[n++].events = POLLIN;
		}
		if (!err_eof) {
			pfd[n].fd = efd;
			pfd[n++].events = POLLIN;
		}
		tick = left < EXEC_TICK_MS ? left : EXEC_TICK_MS;
		if (linger_end != 0 && linger_end - mono_ms() < tick)
			tick = linger_end - mono_ms();
		rc = poll(pfd, (nfds_t)n, tick > 0 ? (int)tick : 0);
		if (rc == -1 && errno != EINTR)
			break;
		if (!out_eof)
			out_eof = drain(ofd, out, max_out, &res->truncated);
		if (!err_eof)
			err_eof = drain(efd, err, EXEC_ERR_MAX, &err_trunc);
	}
	if (linger_end == 0 && can_ask && tool_exited(pid, status) == 1)
		linger_end = 1;
	*held = !(out_eof && err_eof);	/* a child of its still has them */
	return linger_end != 0;
}

/* Output closed: the tool should exit now; wait until the deadline.  True
 * when it was reaped. */
static bool
reap(pid_t pid, int64_t deadline, int *status, struct exec_result *res)
{
	while (!res->timed_out) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return true;
		if (w == -1 && errno != EINTR)
			break;
		if (mono_ms() >= deadline || is_aborting()) {
			res->timed_out = true;
			res->cancelled = mono_ms() < deadline;
			break;
		}
		poll(NULL, 0, 10);
	}
	return false;
}

/*
 * argv with "++group=GROUP" as its first argument when the ESXi init
 * script named a scheduler group for the tools (ESXWATCH_TOOLS_GROUP):
 * VMkernel takes a leading "++..." off the arguments at exec and starts
 * the program in that group.  Without it a tool runs in the agent's own
 * group, whose memory cap is sized for the agent, not for esxcli's
 * Python.  NULL: run argv as it is (no group named, or out of memory).
 */
static const char **
tool_argv(const char *const argv[], char *param, size_t plen)
{
	const char *g = getenv("ESXWATCH_TOOLS_GROUP");
	const char **av;
	size_t n;

	/* A group path only: anything else could pass other parameters. */
	if (g == NULL || *g == '\0' || strspn(g, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") != strlen(g) ||
	    (size_t)snprintf(param, plen, "++group=%s", g) >= plen)
		return NULL;
	for (n = 0; argv[n] != NULL; n++)
		;
	av = calloc(n + 2, sizeof(*av));
	if (av == NULL)
		return NULL;
	av[0] = argv[0];
	av[1] = param;
	memcpy(av + 2, argv + 1, n * sizeof(*av));	/* with the NULL */
	return av;
}

/* fork, and exec the tool in the child; the parent's pid of it, or -1. */
static pid_t
spawn(const char *const argv[], int out, int err)
{
	char param[256];
	const char **av;
	bool esxi;
	pid_t pid;
	int e;

	/* Decided before fork: the child may only make async-signal-safe
	 * calls. */
	esxi = platform_detect(NULL) == PLATFORM_ESXI;
	av = tool_argv(argv, param, sizeof(param));
	pid = fork();
	if (pid == 0)
		child(av != NULL ? av : argv, out, err, esxi);
	e = errno;
	free(av);
	errno = e;	/* fork's, for the caller's message */
	return pid;
}

int
exec_run(const char *const argv[], int timeout_ms, size_t max_out,
    struct exec_result *res)
{
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 };
	struct buf out, err;
	bool reaped, held = false;
	int64_t deadline;
	int status = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->status = -1;
	if (max_out == 0)
		max_out = EXEC_DEFAULT_MAX_OUT;
	buf_init(&out, max_out + 1);
	buf_init(&err, EXEC_ERR_MAX + 1);
	if (is_aborting()) {
		errno = ECANCELED;
		goto fail;
	}
	if (pipe(op) == -1 || pipe(ep) == -1)
		goto fail;
	pid = spawn(argv, op[1], ep[1]);
	if (pid == -1)
		goto fail;
	setpgid(pid, pid);	/* also here: no race with kill(-pid) */
	close(op[1]);
	close(ep[1]);
	op[1] = ep[1] = -1;
	set_cloexec_nonblock(op[0]);
	set_cloexec_nonblock(ep[0]);

	deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 30000);
	if (collect(pid, op[0], ep[0], deadline, &out, max_out, &err, res,
	    &status, &held)) {
		/* the tool is done (reaped): what it left in its group and
		 * still holding its output goes.  Only then: with nobody left
		 * in the group its id is free, and may be another's by now. */
		if (held)
			kill(-pid, SIGKILL);
		reaped = true;
	} else
		reaped = reap(pid, deadline, &status, res);
	if (!reaped)
		kill_group(pid, &status);
	close(op[0]);
	close(ep[0]);
	if (WIFEXITED(status) && !res->timed_out)
		res->status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->signal = WTERMSIG(status);
	res->out_len = out.len;
	res->out = buf_steal(&out);
	res->err_len = err.len;
	res->err = buf_steal(&err);
	return 0;
fail:
	{
		int e = errno;

		for (int i = 0; i < 2; i++) {
			if (op[i] != -1)
				close(op[i]);
			if (ep[i] != -1)
				close(ep[i]);
		}
		buf_free(&out);
		buf_reset(&err);
		buf_printf(&err, "cannot run %s: %s", argv[0], log_errstr(e));
		res->err_len = err.len;
		res->err = buf_steal(&err);
		res->out = calloc(1, 1);
		errno = e;
	}
	return -1;
}

void
exec_result_free(struct exec_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

const char *
exec_describe(const struct exec_result *res, char *s, size_t len)
{
	if (res->cancelled)
		snprintf(s, len, "cancelled (the agent is stopping)");
	else if (res->timed_out)
		snprintf(s, len, "timed out");
	else if (res->signal)
		snprintf(s, len, "killed by signal %d", res->signal);
	else if (res->status == 127)
		snprintf(s, len, "could not be executed (status 127)");
	else
		snprintf(s, len, "exit status %d", res->status);
	return s;
}
