/*
 * file: the file sink (file.c).  Its key, for the tests.
 */
#ifndef ESXWATCH_FILE_H
#define ESXWATCH_FILE_H

#include "../agent/config/config.h"

/* The file sink's key (its row in file.c), a destination's block. */
struct file_opts {
	char	*path;		/* "" or "-": stdout */
};

/* d's block (NULL for a destination the loader did not make). */
struct file_opts *file_opts(const struct dest_conf *d);

#endif
