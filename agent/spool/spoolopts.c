/*
 * spool options: the spool's knobs from the configuration, and the bounds
 * they are held to (see spool.h, struct spool_opts).
 */
#include <stdlib.h>
#include <string.h>

#include "segstore.h"
#include "spool.h"

#define MEM_MAX		(32ull * 1024 * 1024)	/* memory-only bound */
#define SEGS_MAX	4096ull			/* segments in a full spool */

void
spool_default_opts(const struct config *cfg, struct spool_opts *o)
{
	const char *e;
	long mb = cfg != NULL && cfg->max_disk_buffer > 0 ? cfg->max_disk_buffer :
	    CONFIG_MAX_DISK_BUFFER_MB;
	uint64_t seg;

	memset(o, 0, sizeof(*o));
	o->budget = (uint64_t)mb * 1024 * 1024;
	if (cfg != NULL && cfg->max_disk_buffer_kb > 0)
		o->budget = (uint64_t)cfg->max_disk_buffer_kb * 1024;
	seg = o->budget / 8;
	if (seg > 4 * 1024 * 1024)
		seg = 4 * 1024 * 1024;
	if (cfg != NULL && cfg->segment_kb > 0)
		seg = (uint64_t)cfg->segment_kb * 1024;
	o->segment_size = seg;
	o->sync_bytes = 256 * 1024;
	o->sync_ms = cfg != NULL && cfg->batch_flush_interval > 0 ?
	    cfg->batch_flush_interval * 1000 : 1000;
	o->retry_ms = 5000;
	/* a test hook: how soon a refused disk is tried again */
	e = getenv("ESXWATCH_SPOOL_RETRY_MS");
	if (e != NULL && atoi(e) > 0)
		o->retry_ms = atoi(e);
}

void
spool_opts_fix(struct spool_opts *o)
{
	if (o->budget < 4 * SEG_MIN)
		o->budget = 4 * SEG_MIN;
	if (o->segment_size == 0 || o->segment_size > o->budget / 2)
		o->segment_size = o->budget / 2;
	/* a directory of a million tiny files helps nobody */
	if (o->segment_size < o->budget / SEGS_MAX)
		o->segment_size = o->budget / SEGS_MAX;
	if (o->segment_size < SEG_MIN)
		o->segment_size = SEG_MIN;
	if (o->segment_size > SEG_MAX)
		o->segment_size = SEG_MAX;
	if (o->sync_bytes == 0)
		o->sync_bytes = 256 * 1024;
	if (o->sync_ms <= 0)
		o->sync_ms = 1000;
	if (o->retry_ms <= 0)
		o->retry_ms = 5000;
	if (o->mem_max == 0 || o->mem_max > MEM_MAX)
		o->mem_max = MEM_MAX;
	if (o->mem_max > o->budget)
		o->mem_max = o->budget;
}
