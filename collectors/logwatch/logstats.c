/*
 * logstats: the per-filelog table of log watching.  See logstats.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/lib/bell.h"
#include "../../agent/config/config.h"
#include "../../agent/lib/log.h"
#include "logstats.h"

struct logstats {
	pthread_mutex_t		 mu;
	struct logstats_snap	 cur;
	struct logstats_snap	 next;	/* publish's work space (under mu) */
	struct bell		*changed;	/* rung when a publish changes the table */
};

static const char *const state_names[] = {
	[LOGSTATS_OK] = "ok",
	[LOGSTATS_NO_DIR] = "directory_missing",
	[LOGSTATS_UNREADABLE] = "unreadable",
	[LOGSTATS_NO_MATCH] = "no_match",
};

static const char *const state_texts[] = {
	[LOGSTATS_OK] = "ok",
	[LOGSTATS_NO_DIR] = "directory missing",
	[LOGSTATS_UNREADABLE] = "directory not readable",
	[LOGSTATS_NO_MATCH] = "no file matches",
};

#define NSTATES	(sizeof(state_names) / sizeof(state_names[0]))

const char *
logstats_state_name(enum logstats_state st)
{
	return (size_t)st < NSTATES ? state_names[st] : "unknown";
}

const char *
logstats_state_text(enum logstats_state st)
{
	return (size_t)st < NSTATES ? state_texts[st] : "unknown";
}

int
logstats_state_parse(const char *s, enum logstats_state *out)
{
	for (size_t i = 0; i < NSTATES; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum logstats_state)i;
			return 0;
		}
	return -1;
}

void
logstats_copy_path(char *dst, const char *src)
{
	if ((size_t)snprintf(dst, LOGSTATS_PATH_MAX, "%s", src) >= LOGSTATS_PATH_MAX)
		memcpy(dst + LOGSTATS_PATH_MAX - 4, "...", 4);
}

struct logstats *
logstats_new(void)
{
	struct logstats *ls = calloc(1, sizeof(*ls));

	if (ls == NULL)
		return NULL;
	pthread_mutex_init(&ls->mu, NULL);
	return ls;
}

void
logstats_free(struct logstats *ls)
{
	if (ls == NULL)
		return;
	pthread_mutex_destroy(&ls->mu);
	free(ls);
}

static const struct logstats_filelog *
old_filelog(const struct logstats_snap *s, const char *name)
{
	for (size_t i = 0; i < s->nfilelogs; i++)
		if (strcmp(s->filelogs[i].name, name) == 0)
			return &s->filelogs[i];
	return NULL;
}

static const struct logstats_file *
old_file(const struct logstats_snap *s, const char *path)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (strcmp(s->files[i].path, path) == 0)
			return &s->files[i];
	return NULL;
}

/* Only the rows in use: the table is mostly empty (a few filelogs and
 * files), and pages never touched cost no memory. */
static void
copy_used(struct logstats_snap *dst, const struct logstats_snap *src)
{
	dst->nfilelogs = src->nfilelogs < LOGSTATS_MAX_FILELOGS ?
	    src->nfilelogs : LOGSTATS_MAX_FILELOGS;
	dst->nfiles = src->nfiles < LOGSTATS_MAX_FILES ? src->nfiles :
	    LOGSTATS_MAX_FILES;
	memcpy(dst->filelogs, src->filelogs, dst->nfilelogs * sizeof(dst->filelogs[0]));
	memcpy(dst->files, src->files, dst->nfiles * sizeof(dst->files[0]));
}

void
logstats_publish(struct logstats *ls, const struct logstats_snap *pic)
{
	struct logstats_snap *n;
	bool changed;

	if (ls == NULL)
		return;
	pthread_mutex_lock(&ls->mu);
	n = &ls->next;
	copy_used(n, pic);
	changed = n->nfilelogs != ls->cur.nfilelogs || n->nfiles != ls->cur.nfiles;
	for (size_t i = 0; i < n->nfilelogs; i++) {
		const struct logstats_filelog *o = old_filelog(&ls->cur,
		    n->filelogs[i].name);

		if (o == NULL || o->state != n->filelogs[i].state ||
		    o->nfiles != n->filelogs[i].nfiles || n->filelogs[i].lines_read > 0)
			changed = true;
		if (o != NULL) {
			n->filelogs[i].lines_read += o->lines_read;
			n->filelogs[i].lines_matched += o->lines_matched;
		}
	}
	for (size_t i = 0; i < n->nfiles; i++) {
		const struct logstats_file *o = old_file(&ls->cur, n->files[i].path);

		if (o != NULL) {
			n->files[i].lines_read += o->lines_read;
			n->files[i].lines_matched += o->lines_matched;
		}
	}
	copy_used(&ls->cur, n);
	pthread_mutex_unlock(&ls->mu);
	if (changed)
		bell_ring(ls->changed);
}

void
logstats_set_bell(struct logstats *ls, struct bell *b)
{
	if (ls != NULL)
		ls->changed = b;
}

void
logstats_read(struct logstats *ls, struct logstats_snap *out)
{
	if (ls == NULL) {
		out->nfilelogs = out->nfiles = 0;
		return;
	}
	pthread_mutex_lock(&ls->mu);
	copy_used(out, &ls->cur);
	pthread_mutex_unlock(&ls->mu);
}

/* ESXi's own logs where ESXi keeps them (the default filelogs): off ESXi,
 * not finding them is what is expected (make run, agent.yaml as it
 * ships), not a warning.  Anywhere else they were set up on purpose. */
static bool
esxi_logs_only(const struct strlist *inc)
{
	static const char *const esxi[] = { "vmkernel.log", "vobd.log", "hostd.log" };
	size_t i, k;

	for (i = 0; i < inc->n; i++) {
		for (k = 0; k < sizeof(esxi) / sizeof(esxi[0]); k++)
			if (strcmp(inc->v[i], esxi[k]) == 0)
				break;
		if (k == sizeof(esxi) / sizeof(esxi[0]))
			return false;
	}
	return inc->n > 0;
}

void
logstats_tell(const struct filelog_conf *fc, enum logstats_state st,
    bool again, size_t nfiles, int err, bool esxi)
{
	bool expected = !esxi && fc->directory != NULL &&
	    strcmp(fc->directory, "/var/log") == 0 && esxi_logs_only(&fc->include);
	enum log_level level = expected ? LOG_INFO : LOG_WARN;
	const char *why = expected ? " (not an ESXi host)" : "";
	char inc[256];
	size_t o = 0;

	switch (st) {
	case LOGSTATS_OK:
		log_info("logwatch: filelog %s: %sfollowing %zu file%s in %s",
		    fc->name, again ? "now " : "", nfiles, nfiles == 1 ? "" : "s",
		    fc->directory);
		break;
	case LOGSTATS_NO_DIR:
		log_msg(level, "logwatch: filelog %s: directory %s %s%s; nothing "
		    "is followed until it appears", fc->name, fc->directory,
		    err == ENOTDIR ? "is not a directory" : "does not exist", why);
		break;
	case LOGSTATS_UNREADABLE:
		log_warn("logwatch: filelog %s: directory %s cannot be read (%s); "
		    "nothing is followed until it can", fc->name, fc->directory,
		    log_errstr(err));
		break;
	case LOGSTATS_NO_MATCH:
		inc[0] = '\0';
		for (size_t i = 0; i < fc->include.n && o < sizeof(inc); i++)
			o += (size_t)snprintf(inc + o, sizeof(inc) - o, "%s%s",
			    i > 0 ? ";" : "", fc->include.v[i]);
		log_msg(level, "logwatch: filelog %s: no file in %s matches "
		    "include '%s'%s%s; nothing is followed until one does",
		    fc->name, fc->directory, fc->include.n > 0 ? inc : "*",
		    fc->exclude.n > 0 ? " (and exclude)" : "", why);
		break;
	}
}
