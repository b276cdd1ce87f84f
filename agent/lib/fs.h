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

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Replace path with data (len bytes), file mode `mode` (0600 for anything
 * the agent keeps), durably (FS_DURABLE below).  The temp name is unique
 * per call, so two threads saving one path never write into the same
 * temp file. */
int	fs_write_atomic(const char *path, const void *data, size_t len, int mode);
/*
 * The one atomic writer, fs_write_atomic() with the choices spelled out
 * (how: FS_* below or'ed).  Every writer that replaces a file goes
 * through here (make lint: rename() is called nowhere else), so short
 * writes, EINTR and the temp file's cleanup are handled once.
 */
#define FS_SYNC_FILE	0x1	/* fsync the temp file before the rename */
#define FS_SYNC_DIR	0x2	/* fsync the directory after it */
#define FS_DURABLE	(FS_SYNC_FILE | FS_SYNC_DIR)
/* Temp name path.tmp, not path.tmp.PID.N: for a file with one writer
 * whose directory is scanned by name (a crash leaves at most that one
 * temp file, replaced by the next write). */
#define FS_TMP_FIXED	0x4
int	fs_replace(const char *path, const void *data, size_t len, int mode, int how);
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
/* Open path for writing as a file of its own: whatever has the name (a
 * stale temp file, a planted symlink) is unlinked first and the open is
 * O_CREAT|O_EXCL|O_NOFOLLOW, so a write never lands in another file.
 * extra: more open flags (O_RDWR for O_WRONLY, nothing else). */
int	fs_create_new(const char *path, int extra, int mode);
/* Open an existing file of the agent's for reading (O_NOFOLLOW: a symlink
 * at its name fails with ELOOP instead of being followed). */
int	fs_open_read(const char *path);
/* Make the storage directory (mkdir -p, 0700) and check that it is safe
 * for an agent running as root: the directory, its subdirectories and
 * every entry in them belong to the agent's user (or root) and are not
 * writable by group or others; no entry is a symlink or a hard-linked
 * file.  0 safe; 1 safe as far as it can tell: the file system keeps no
 * modes (VFAT), so only owners and links were checked; -1 it cannot be
 * created (errno; the agent can still run from memory); -2 unsafe, err
 * says which path and why. */
int	fs_storage_check(const char *dir, char *err, size_t errlen);
/* A file created with mode asked shows mode got: true when its file system
 * ignores modes (bits it was never given; fs_storage_check's probe). */
bool	fs_modes_ignored(mode_t asked, mode_t got);

#endif
