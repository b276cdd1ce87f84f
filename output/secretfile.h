/*
 * secretfile: a credential kept in a file (splunk_hec token_file,
 * elasticsearch api_key_file and password_file): a regular file only its
 * owner can read (mode 0600 or stricter), not a symlink; its first line is
 * the secret.  The error names the file, never its content.
 */
#ifndef ESXWATCH_SECRETFILE_H
#define ESXWATCH_SECRETFILE_H

#include <stddef.h>

/* 0, or -1 with why.  key: the configuration key, for the message. */
int	secret_file_read(const char *key, const char *path, char *out,
	    size_t outlen, char *why, size_t whylen);

#endif
