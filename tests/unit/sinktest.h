/*
 * Helpers for the sink unit tests: start tests/lib/receivers.py as a child
 * process (a strict cfapi or http receiver, optionally over TLS with a PKI
 * made at test time), and build a destination configuration.
 */
#ifndef ESXWATCH_SINKTEST_H
#define ESXWATCH_SINKTEST_H

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../agent/config/config.h"
#include "../../output/sink.h"

extern char **environ;

struct recv {
	pid_t	 pid;
	int	 port;
	char	 dir[256];
	char	 log[300];
	char	 certs[300];
};

static inline void
recv_stop(struct recv *r)
{
	char p[300];

	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
		r->pid = 0;
	}
	snprintf(p, sizeof(p), "%s/port", r->dir);
	unlink(p);
	unlink(r->log);
	rmdir(r->dir);
}

/* kind: cfapi | http; script: "" or "503:ra=3,200"; cert: NULL (plain
 * HTTP), "server" or "wrong".  certdir: shared PKI directory. */
static inline int
recv_start(struct recv *r, const char *kind, const char *script,
    const char *cert, const char *certdir)
{
	char portf[300], buf[32];
	const char *argv[16];
	int n = 0, i;
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/esxwatch-recv-XXXXXX");
	if (mkdtemp(r->dir) == NULL)
		return -1;
	snprintf(portf, sizeof(portf), "%s/port", r->dir);
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	snprintf(r->certs, sizeof(r->certs), "%s", certdir ? certdir : "");
	argv[n++] = "python3";
	argv[n++] = "tests/lib/receivers.py";
	argv[n++] = kind;
	argv[n++] = "--port-file";
	argv[n++] = portf;
	argv[n++] = "--log";
	argv[n++] = r->log;
	argv[n++] = "--script";
	argv[n++] = script;
	if (cert != NULL) {
		argv[n++] = "--certs";
		argv[n++] = certdir;
		argv[n++] = "--cert";
		argv[n++] = cert;
	}
	argv[n] = NULL;
	if (posix_spawnp(&r->pid, "python3", NULL, NULL, (char **)argv,
	    environ) != 0) {
		r->pid = 0;
		recv_stop(r);
		return -1;
	}
	/* up to 30 s: a loaded machine starts python slowly */
	for (i = 0; i < 1200; i++) {
		if ((f = fopen(portf, "r")) != NULL) {
			if (fgets(buf, sizeof(buf), f) != NULL)
				r->port = atoi(buf);
			fclose(f);
			if (r->port > 0)
				return 0;
		}
		if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
			r->pid = 0;	/* it died: nothing to stop */
			break;
		}
		usleep(25000);
	}
	/* a test stops what it starts, also when it failed */
	recv_stop(r);
	return -1;
}

/* The receiver's log so far (NUL-terminated, caller frees), "" if none. */
static inline char *
recv_log(struct recv *r)
{
	FILE *f = fopen(r->log, "rb");
	char *p;
	long n;

	if (f == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = calloc(1, (size_t)n + 1);
	if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n)
		p[0] = '\0';
	fclose(f);
	return p;
}

static inline int
count_str(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static inline void
set_str(char **field, const char *v)
{
	free(*field);
	*field = strdup(v);
}

#endif
