/*
 * Helpers for the spool unit tests (test_spool, test_dropcounts): a fresh
 * directory per test under root, its removal, the spool's knobs.
 */
#ifndef ESXWATCH_SPOOLTEST_H
#define ESXWATCH_SPOOLTEST_H

#include <sys/stat.h>

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../agent/spool/spool.h"

static char	 root[256];
static int	 ndir;

/* A fresh spool directory for one test. */
static const char *
newdir(char *out, size_t len)
{
	snprintf(out, len, "%s/s%d", root, ndir++);
	return out;
}

static int
rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static void
opts(struct spool_opts *o, uint64_t budget, uint64_t seg)
{
	memset(o, 0, sizeof(*o));
	o->budget = budget;
	o->segment_size = seg;
	o->sync_bytes = 64 * 1024;
	o->sync_ms = 50;
	o->retry_ms = 100;
}

#endif
