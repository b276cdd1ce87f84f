/*
 * mounts: the network filesystems a Linux host has mounted (mountinfo,
 * proc(5)) and whether each answers statfs() in time — the local host's
 * datastore facts off ESXi (host/host.h, mounts()).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../agent/lib/clock.h"
#include "../../agent/lib/log.h"
#include "mounts.h"

/* Undo mountinfo's octal escapes (\040 for a space). */
static void
unescape_octal(char *s)
{
	char	*o = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else
			*o++ = *s++;
	}
	*o = '\0';
}

/* The next space-separated token of *cur, NUL-terminated in place. */
static char *
next_tok(char **cur)
{
	char	*s = *cur, *t;

	if (s == NULL)
		return NULL;
	while (*s == ' ' || *s == '\n')
		s++;
	if (*s == '\0') {
		*cur = s;
		return NULL;
	}
	t = s;
	while (*s != '\0' && *s != ' ' && *s != '\n')
		s++;
	if (*s != '\0')
		*s++ = '\0';
	*cur = s;
	return t;
}

static bool
network_fs(const char *t)
{
	return strcmp(t, "nfs") == 0 || strcmp(t, "nfs4") == 0 ||
	    strcmp(t, "cifs") == 0 || strcmp(t, "smb3") == 0 ||
	    strcmp(t, "smbfs") == 0;
}

/*
 * mountinfo: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw"
 * (proc(5)): field 5 is the mount point; after the " - " separator come the
 * type and the source.
 */
size_t
mounts_read(const char *path, struct host_mount *m, size_t max)
{
	FILE	*f = fopen(path, "re");
	char	 line[4096];
	size_t	 n = 0;

	if (f == NULL) {
		log_limited(LOG_ERROR, "host:mountinfo", 3600,
		    "datastore: cannot open %s: %s", path, log_errstr(errno));
		return 0;
	}
	while (n < max && fgets(line, sizeof(line), f) != NULL) {
		char	*sep = strstr(line, " - "), *cur = line, *tok = NULL;
		char	 point[1024], type[32], src[512];
		int	 i;

		if (sep == NULL)
			continue;
		*sep = '\0';
		for (i = 0; i < 5; i++)
			tok = next_tok(&cur);
		if (tok == NULL)
			continue;
		snprintf(point, sizeof(point), "%s", tok);
		cur = sep + 3;
		tok = next_tok(&cur);
		if (tok == NULL)
			continue;
		snprintf(type, sizeof(type), "%s", tok);
		tok = next_tok(&cur);
		snprintf(src, sizeof(src), "%s", tok ? tok : "");
		if (!network_fs(type))
			continue;
		unescape_octal(point);
		unescape_octal(src);
		snprintf(m[n].point, sizeof(m[n].point), "%s", point);
		snprintf(m[n].source, sizeof(m[n].source), "%s", src);
		snprintf(m[n].fstype, sizeof(m[n].fstype), "%s", type);
		n++;
	}
	fclose(f);
	return n;
}

void
mounts_reap(struct mounts_pending *p)
{
	size_t	 i = 0;

	while (i < p->n) {
		pid_t r = waitpid(p->pid[i], NULL, WNOHANG);

		if (r == p->pid[i] || (r == -1 && errno == ECHILD))
			p->pid[i] = p->pid[--p->n];
		else
			i++;
	}
}

/*
 * statfs() every mount point, each in its own child, all at once; wait at
 * most timeout_ms for them together: answered, or failed or hung.
 * A hung child is killed and reaped later (it may sit in the kernel until
 * the NFS client gives up).
 */
void
mounts_probe(struct mounts_pending *p, struct host_mount *m, size_t n,
    int timeout_ms)
{
	pid_t	 pid[MOUNTS_MAX];
	int64_t	 deadline = mono_ms() + timeout_ms;
	size_t	 i, left = 0;

	for (i = 0; i < n; i++) {
		m[i].answered = false;
		pid[i] = fork();
		if (pid[i] == 0) {
			struct statfs sf;

			_exit(statfs(m[i].point, &sf) == 0 ? 0 : 1);
		}
		if (pid[i] > 0)
			left++;
	}
	while (left > 0 && mono_ms() < deadline) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		for (i = 0; i < n; i++) {
			int	 status;

			if (pid[i] <= 0)
				continue;
			if (waitpid(pid[i], &status, WNOHANG) == pid[i]) {
				m[i].answered = WIFEXITED(status) &&
				    WEXITSTATUS(status) == 0;
				pid[i] = 0;
				left--;
			}
		}
		if (left > 0)
			nanosleep(&ts, NULL);
	}
	for (i = 0; i < n; i++) {
		if (pid[i] <= 0)
			continue;
		(void)kill(pid[i], SIGKILL);
		if (waitpid(pid[i], NULL, WNOHANG) != pid[i] &&
		    p->n < MOUNTS_PENDING_MAX)
			p->pid[p->n++] = pid[i];
	}
}

