/*
 * fs: atomic replace, mkdir -p, directory fsync, EINTR-safe reads and
 * writes (see fs.h).
 */
#include <dirent.h>
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
fs_replace(const char *path, const void *data, size_t len, int mode, int how)
{
	static unsigned long seq;	/* __atomic */
	char tmp[PATH_MAX];
	int fd, n, e;

	if (how & FS_TMP_FIXED)
		n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	else
		n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lu", path, (long)getpid(),
		    __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = fs_create_new(tmp, 0, mode);
	if (fd == -1)
		return -1;
	if (fs_write_all(fd, data, len, -1) == -1 ||
	    ((how & FS_SYNC_FILE) && fsync(fd) == -1)) {
		e = errno;
		close(fd);
		goto err;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		e = errno;
		goto err;
	}
	if (how & FS_SYNC_DIR)
		(void)fs_fsync_parent(path);
	return 0;
err:
	(void)unlink(tmp);
	errno = e;
	return -1;
}

int
fs_write_atomic(const char *path, const void *data, size_t len, int mode)
{
	return fs_replace(path, data, len, mode, FS_DURABLE);
}

int
fs_create_new(const char *path, int extra, int mode)
{
	int flags = (extra & O_RDWR) ? O_RDWR : O_WRONLY;

	if (unlink(path) == -1 && errno != ENOENT)
		return -1;
	return open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    (mode_t)mode);
}

int
fs_open_read(const char *path)
{
	return open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* Another user's, or writable by one: not a place root may write in
 * (modes: false on a file system without permissions, where every mode
 * is the mount's). */
static int
unsafe_owner_mode(const struct stat *st, bool modes, const char *path,
    char *err, size_t errlen)
{
	uid_t me = geteuid();

	if (st->st_uid != me && st->st_uid != 0) {
		snprintf(err, errlen, "%s belongs to uid %ld, not to the agent's "
		    "user (uid %ld)", path, (long)st->st_uid, (long)me);
		return -2;
	}
	if (modes && !S_ISLNK(st->st_mode) &&
	    (st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(err, errlen, "%s is writable by %s (mode %04o)", path,
		    (st->st_mode & S_IWOTH) ? "every user" : "its group",
		    (unsigned)(st->st_mode & 07777));
		return -2;
	}
	return 0;
}

static int check_entry(const char *, int, bool, char *, size_t);

/* Every entry of directory path; depth: the levels below it to look into. */
static int
check_dir(const char *path, int depth, bool modes, char *err, size_t errlen)
{
	struct dirent *e;
	DIR *d;
	int rc = 0;

	d = opendir(path);
	if (d == NULL)
		return 0;	/* unreadable: the module using it says so */
	for (;;) {
		char sub[PATH_MAX];

		e = rc == 0 ? readdir(d) : NULL;
		if (e == NULL)
			break;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >=
		    sizeof(sub))
			continue;
		rc = check_entry(sub, depth, modes, err, errlen);
	}
	closedir(d);
	return rc;
}

/* One entry of a storage directory (lstat: a link is judged, not its
 * target). */
static int
check_entry(const char *path, int depth, bool modes, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return 0;	/* gone meanwhile: nothing to judge */
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "%s is a symbolic link: the agent does not "
		    "follow links in its storage directory", path);
		return -2;
	}
	if (unsafe_owner_mode(&st, modes, path, err, errlen) < 0)
		return -2;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		snprintf(err, errlen, "%s has %lu hard links: a file of the "
		    "agent's has one", path, (unsigned long)st.st_nlink);
		return -2;
	}
	if (S_ISDIR(st.st_mode) && depth > 0)
		return check_dir(path, depth - 1, modes, err, errlen);
	return 0;
}

bool
fs_modes_ignored(mode_t asked, mode_t got)
{
	/* a umask only takes bits away: more than asked is the mount's */
	return (got & 0777 & ~asked) != 0;
}

/*
 * Does dir's file system keep the modes it is given?  VFAT (an ESXi
 * scratch partition on older or USB/SD installs) reports every file with
 * the mount's mode, 0777 or 0755, whatever chmod did: there, a mode is
 * nobody's doing and says nothing about who may write.  A probe file
 * created 0600 tells.
 */
static bool
modes_kept(const char *dir)
{
	char probe[PATH_MAX];
	struct stat st;
	bool kept = true;
	int fd;

	if ((size_t)snprintf(probe, sizeof(probe), "%s/.modes.%ld", dir,
	    (long)getpid()) >= sizeof(probe))
		return true;
	fd = fs_create_new(probe, 0, 0600);
	if (fd < 0)
		return true;
	if (fstat(fd, &st) == 0)
		kept = !fs_modes_ignored(0600, st.st_mode);
	close(fd);
	unlink(probe);
	return kept;
}

int
fs_storage_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	bool modes;

	if (fs_mkdir_p(dir, 0700) == -1)
		return -1;
	/* the directory itself may be reached through a link (/scratch is
	 * one on ESXi): it is the directory it names that must be safe */
	if (stat(dir, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", dir);
		return -2;
	}
	modes = modes_kept(dir);
	if (unsafe_owner_mode(&st, modes, dir, err, errlen) < 0)
		return -2;
	/* storage.directory, spool/ and state/ and what they hold */
	if (check_dir(dir, 1, modes, err, errlen) < 0)
		return -2;
	return modes ? 0 : 1;
}
