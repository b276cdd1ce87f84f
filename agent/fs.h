/*
 * fs: the file-system chores every module needs, written once.
 *
 * fs_write_atomic() replaces a file so that a crash or a power cut leaves
 * either the old or the new content, never half of one: a temp file in the
 * same directory, fsync, rename, fsync of the directory (without the last
 * step a power loss can undo the rename).  fs_write_all()/fs_read_all()
 * survive EINTR and short counts.  All return 0 or -1 with errno set.
 */
#ifndef ESXWATCH_FS_H
#define ESXWATCH_FS_H

#include <stddef.h>
#include <sys/types.h>

/* Replace path with data (len bytes), file mode `mode` (0600 for anything
 * the agent keeps).  The temp name is unique per call, so two threads
 * saving one path never write into the same temp file. */
int	fs_write_atomic(const char *path, const void *data, size_t len, int mode);
/* mkdir -p: every missing directory of path, each made with mode. */
int	fs_mkdir_p(const char *path, int mode);
/* fsync a directory (best effort: some file systems cannot; returns -1). */
int	fs_fsync_dir(const char *dir);
/* fsync the directory holding path (".", "/" or its dirname). */
int	fs_fsync_parent(const char *path);
/* Write all len bytes: at the file position when off < 0, else at offset
 * off (pwrite).  A write that makes no progress fails with ENOSPC. */
int	fs_write_all(int fd, const void *p, size_t len, off_t off);
/* Read exactly len bytes at offset off (pread); a file shorter than that
 * fails with EIO. */
int	fs_read_all(int fd, void *p, size_t len, off_t off);
/* Read from the file position until EOF or len bytes; the count read, or
 * -1.  (For small files whose size is not known up front.) */
ssize_t	fs_read_upto(int fd, void *p, size_t len);

#endif
