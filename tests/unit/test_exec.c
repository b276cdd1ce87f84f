/*
 * exec: how a refused exec is reported, and the tools' scheduler group on
 * ESXi (ESXWATCH_TOOLS_GROUP).  The run-time behaviour (timeouts, output
 * caps, process groups) is in test_core.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/lib/exec.h"

static char tmpdir[] = "/tmp/esxw-exec-XXXXXX";

/*
 * No noexec mount or seccomp filter is at hand to make the kernel answer
 * EPERM here, so the words are checked on the function the child uses to
 * pick them, for each errno; the EACCES test below goes through a real
 * refused exec.
 */
TEST(eperm_on_esxi_names_exec_installed_only)
{
	const char *w = exec_refusal(EPERM, true);

	CHECK(strstr(w, "EPERM") != NULL);
	CHECK(strstr(w, "execInstalledOnly") != NULL);
	CHECK(strstr(w, "installed VIB") != NULL);
	CHECK(strstr(w, "host.tools_dir") != NULL);
	/* It must fit, with a path, in the line the esxcli runner logs. */
	CHECK(strlen(w) < 200);
}

TEST(eperm_elsewhere_does_not_blame_esxi)
{
	const char *w = exec_refusal(EPERM, false);

	CHECK(strstr(w, "EPERM") != NULL);
	CHECK(strstr(w, "ESXi") == NULL);
	CHECK(strstr(w, "execInstalledOnly") == NULL);
}

TEST(other_errors_keep_their_words)
{
	CHECK_STR(exec_refusal(ENOENT, true), "no such file");
	CHECK_STR(exec_refusal(ENOEXEC, false), "not an executable");
	CHECK(strstr(exec_refusal(EACCES, true), "permission denied") != NULL);
	CHECK(strstr(exec_refusal(EACCES, true), "execInstalledOnly") == NULL);
	CHECK_STR(exec_refusal(EIO, true), "exec failed");
}

/* A real refusal: a file without any execute bit (root too gets EACCES). */
TEST(real_eacces_names_the_path)
{
	char path[256], want[400];
	const char *argv[] = { path, NULL };
	struct exec_result res;
	FILE *f;

	snprintf(path, sizeof(path), "%s/localcli", tmpdir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f == NULL)
		return;
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	chmod(path, 0644);
	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_INT(res.status, 127);
	snprintf(want, sizeof(want), "cannot execute %s: permission denied", path);
	CHECK(strstr(res.err, want) != NULL);
	exec_result_free(&res);
	unlink(path);
}

/* The init script's tools group: "++group=..." first, the rest as given. */
TEST(tools_group_is_the_first_argument)
{
	const char *argv[] = { "/bin/echo", "a", "b c", NULL };
	struct exec_result res;

	setenv("ESXWATCH_TOOLS_GROUP", "host/vim/vimuser/esxwatch-tools", 1);
	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_INT(res.status, 0);
	CHECK_STR(res.out, "++group=host/vim/vimuser/esxwatch-tools a b c\n");
	exec_result_free(&res);
	/* Not a group path: not passed on (it could carry other parameters). */
	setenv("ESXWATCH_TOOLS_GROUP", "host/x,mem=1", 1);
	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_STR(res.out, "a b c\n");
	exec_result_free(&res);
	unsetenv("ESXWATCH_TOOLS_GROUP");
	CHECK_INT(exec_run(argv, 10000, 0, &res), 0);
	CHECK_STR(res.out, "a b c\n");
	exec_result_free(&res);
}

int
main(void)
{
	T_PROG("test_exec");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	unsetenv("ESXWATCH_TOOLS_GROUP");
	RUN(eperm_on_esxi_names_exec_installed_only);
	RUN(eperm_elsewhere_does_not_blame_esxi);
	RUN(other_errors_keep_their_words);
	RUN(real_eacces_names_the_path);
	RUN(tools_group_is_the_first_argument);
	rmdir(tmpdir);
	return t_done();
}
