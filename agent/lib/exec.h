/*
 * exec: run a host tool without a shell.
 *
 * fork + execv with an argv array, stdin from /dev/null, stdout and stderr
 * captured separately up to a cap, a timeout after which the child gets
 * SIGTERM then SIGKILL (its whole process group), and the exit status.
 * A tool that exits while something it started still holds its output
 * (a background child, a setsid'ed helper) is not waited for: half a
 * second after its exit reading stops, the rest of its process group is
 * killed, and its own exit status is the result.
 *
 * On ESXi the init script names a scheduler group of the tools' own in
 * ESXWATCH_TOOLS_GROUP: every tool then gets "++group=GROUP" as its first
 * argument, which VMkernel takes off at exec to start it in that group
 * rather than in the agent's memory-capped one (docs/install.md).
 */
#ifndef ESXWATCH_EXEC_H
#define ESXWATCH_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#define EXEC_DEFAULT_MAX_OUT	(4u * 1024 * 1024)

struct exec_result {
	int	 status;	/* exit code; -1 if killed by a signal or not run */
	int	 signal;	/* signal that ended it, 0 if none */
	bool	 timed_out;	/* also set when exec_abort_all() cut it short */
	bool	 cancelled;	/* exec_abort_all() ended it (the agent is stopping) */
	bool	 truncated;	/* output exceeded max_out, rest discarded */
	char	*out;		/* NUL-terminated stdout (never NULL after run) */
	size_t	 out_len;
	char	*err;		/* NUL-terminated stderr (capped at 64 KiB) */
	size_t	 err_len;
};

/*
 * Run argv[0] (an absolute path) with argv, wait at most timeout_ms.
 * Returns 0 if the program ran (look at status/timed_out), -1 if it could
 * not be started (errno set; res->err says why).
 */
int	exec_run(const char *const argv[], int timeout_ms, size_t max_out,
	    struct exec_result *res);
void	exec_result_free(struct exec_result *);
/*
 * Why an exec failed with errno err, as a child that could not exec its
 * tool reports it on its stderr ("cannot execute PATH: <this>", exit
 * status 127).  EPERM on ESXi (esxi true) names execInstalledOnly, which
 * refuses any binary that no installed VIB brought.
 */
const char *exec_refusal(int err, bool esxi);
/* One line describing how the run ended: "exit status 1", "timed out after 30 s", ... */
const char *exec_describe(const struct exec_result *, char *buf, size_t len);

/*
 * Stopping or reloading: every running exec_run() kills its child and
 * returns at once (timed_out and cancelled set), and new ones do not start,
 * until exec_abort_reset().  So a hung tool never delays SIGTERM.
 */
void	exec_abort_all(void);
void	exec_abort_reset(void);
/* True while exec_abort_all() is in force: a tool that failed now was most
 * likely cancelled by the agent, not broken (nothing to report). */
bool	exec_aborting(void);

#endif
