/* secretfile: a credential's first line from a 0600 file (secretfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../agent/lib/fs.h"
#include "../agent/lib/log.h"
#include "secretfile.h"

int
secret_file_read(const char *key, const char *path, char *out, size_t outlen,
    char *why, size_t whylen)
{
	struct stat st;
	ssize_t n;
	int fd;

	out[0] = '\0';
	if (path == NULL || path[0] == '\0') {
		snprintf(why, whylen, "%s is not set", key);
		return -1;
	}
	fd = fs_open_read(path);
	if (fd == -1) {
		snprintf(why, whylen, "cannot open %s %s: %s", key, path,
		    log_errstr(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 077) != 0) {
		snprintf(why, whylen, "%s %s must be a regular file of mode "
		    "0600 (it is %04o): chmod 600 it", key, path,
		    (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	n = fs_read_upto(fd, out, outlen - 1);
	close(fd);
	if (n < 0) {
		snprintf(why, whylen, "cannot read %s %s", key, path);
		out[0] = '\0';
		return -1;
	}
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	if (out[0] == '\0') {
		snprintf(why, whylen, "%s %s is empty", key, path);
		return -1;
	}
	if ((size_t)n == outlen - 1 && strlen(out) == (size_t)n) {
		explicit_bzero(out, outlen);
		snprintf(why, whylen, "%s %s: the secret is too long", key, path);
		return -1;
	}
	return 0;
}
