/*
 * fs: atomic replace, mkdir -p, directory fsync, EINTR-safe reads and
 * writes (see fs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"

int
fs_write_all(int fd, const void *p, size_t len, off_t off)
{
	const unsigned char *c = p;

	while (len > 0) {
		ssize_t w = off >= 0 ? pwrite(fd, c, len, off) : write(fd, c, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		c += w;
		len -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}

int
fs_read_all(int fd, void *p, size_t len, off_t off)
{
	unsigned char *c = p;

	while (len > 0) {
		ssize_t r = pread(fd, c, len, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;	/* shorter than the caller knows it is */
			return -1;
		}
		c += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

ssize_t
fs_read_upto(int fd, void *p, size_t len)
{
	unsigned char *c = p;
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, c + got, len - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int
fs_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
fs_fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (slash == NULL)
		return fs_fsync_dir(".");
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n);
	dir[n] = '\0';
	return fs_fsync_dir(dir);
}

int
fs_mkdir_p(const char *path, int mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);
	char *p;

	if (len == 0 || len >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, len + 1);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, (mode_t)mode) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, (mode_t)mode) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

int
fs_write_atomic(const char *path, const void *data, size_t len, int mode)
{
	static unsigned long seq;	/* __atomic */
	char tmp[PATH_MAX];
	int fd, n, e;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lu", path, (long)getpid(),
	    __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
	if (fd == -1)
		return -1;
	if (fs_write_all(fd, data, len, -1) == -1 || fsync(fd) == -1) {
		e = errno;
		close(fd);
		goto err;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		e = errno;
		goto err;
	}
	(void)fs_fsync_parent(path);
	return 0;
err:
	(void)unlink(tmp);
	errno = e;
	return -1;
}
