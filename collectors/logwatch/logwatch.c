/*
 * logwatch: the log-following collector.  See logwatch.h.
 *
 * Every collect() call: report storm windows that ended, look for new
 * files (a directory is listed again only when its mtime moved), read what
 * is new in every followed file (bounded per call), turn lines into events,
 * and once the emitter says everything is queued (emit_sync), persist the
 * bookmarks.  A crash between emitting and saving re-reads lines, it never
 * skips them.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../agent/config/config_host.h"
#include "../../agent/lib/buf.h"
#include "../../agent/lib/fs.h"
#include "../../agent/lib/log.h"
#include "logstats.h"
#include "../emitbatch.h"
#include "engine.h"
#include "follow.h"
#include "logwatch.h"

/* A filelog: the engine's log, and where its files are. */
struct lw_log {
	struct lwe_log	 e;
	bool		 listed;
	struct timespec	 dir_mtime;
	size_t		 nfiles;
	/* what the last look at the directory found, and whether the log
	 * has said so (once per change, never every poll) */
	enum logstats_state state;
	bool		 reported;
};

/* A followed file: a stream of its filelog's lines for the engine. */
struct lw_file {
	struct lwe_stream s;
	struct lw_log	*log;
	struct follow	*fo;
	char		 saved[FOLLOW_POS_MAX];	/* last bookmark written */
};

struct lw {
	struct lwe	*eng;		/* lines in, events out */
	struct lw_log	*logs;
	size_t		 nlogs;
	struct lw_file	**files;
	size_t		 nfiles;
	struct kvstore	*bm;
	bool		 first_scan;
	struct emitter	*em;		/* of the current (last) collect() */
	struct lw_file	*cur;
	int64_t		 now;
	int64_t		 saved_at;	/* last bookmark save (ms) */
	bool		 esxi;		/* the platform */
	const struct agent_figures *figs;	/* publishes pic; NULL: nowhere */
	struct logstats_snap *pic;	/* what is published (LOGSTATS_FIGURES) */
};

/* ---- files --------------------------------------------------------- */

/* follow_line_fn: a line of the file being read, to the engine. */
static void
on_line(void *arg, const char *line, size_t len, bool truncated)
{
	struct lw *lw = arg;

	lwe_line(lw->eng, &lw->cur->s, line, len, truncated);
}

static bool
followed(const struct lw *lw, const char *path)
{
	size_t i;

	for (i = 0; i < lw->nfiles; i++)
		if (strcmp(lw->files[i]->s.origin, path) == 0)
			return true;
	return false;
}

static void
add_file(struct lw *lw, struct lw_log *lg, const char *path)
{
	struct lw_file *lf, **nv;
	const char *bm;

	if (lg->nfiles >= LOGWATCH_MAX_FILES) {
		log_limited(LOG_WARN, lg->e.conf->name, 3600, "logwatch: filelog %s: "
		    "more than %d files match; %s is not followed", lg->e.conf->name,
		    LOGWATCH_MAX_FILES, path);
		return;
	}
	nv = realloc(lw->files, (lw->nfiles + 1) * sizeof(*nv));
	if (nv == NULL)
		return;
	lw->files = nv;
	lf = calloc(1, sizeof(*lf));
	if (lf == NULL)
		return;
	lf->log = lg;
	lf->fo = follow_new(path);
	if (lwe_stream_init(&lf->s, &lg->e, path) < 0 || lf->fo == NULL) {
		lwe_stream_fini(&lf->s);
		follow_free(lf->fo);
		free(lf);
		return;
	}
	bm = kv_get(lw->bm, path);
	if (bm != NULL && bm[0] != '\0') {
		snprintf(lf->saved, sizeof(lf->saved), "%s", bm);
		follow_start(lf->fo, bm, FOLLOW_HEAD);
	} else
		follow_start(lf->fo, NULL, lw->first_scan &&
		    !lg->e.conf->read_from_head ? FOLLOW_TAIL : FOLLOW_HEAD);
	lw->files[lw->nfiles++] = lf;
	lg->nfiles++;
	log_debug("logwatch: following %s (%s)", path, bm ? "bookmark" :
	    lw->first_scan && !lg->e.conf->read_from_head ? "from the end" :
	    "from the start");
}

static bool
is_compressed(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".gz") == 0;
}

/*
 * Say what a look at the filelog's directory found, once per change
 * (logstats_tell()).  err: the errno of a failed stat() or opendir().
 */
static void
tell_state(struct lw *lw, struct lw_log *lg, enum logstats_state st, int err)
{
	if (lg->reported && lg->state == st)
		return;
	logstats_tell(lg->e.conf, st, lg->reported, lg->nfiles, err, lw->esxi);
	lg->state = st;
	lg->reported = true;
}

/* List the filelog's directory if it changed since the last listing. */
static void
scan(struct lw *lw, struct lw_log *lg)
{
	const struct filelog_conf *fc = lg->e.conf;
	char path[PATH_MAX];
	struct stat st;
	struct dirent *de;
	size_t matching = 0;
	DIR *d;
	int err;

	if (fc->directory == NULL)
		return;
	err = stat(fc->directory, &st) < 0 ? errno :
	    S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (err != 0) {
		lg->listed = false;	/* list it when it is back */
		tell_state(lw, lg, err == EACCES ? LOGSTATS_UNREADABLE :
		    LOGSTATS_NO_DIR, err);
		return;
	}
	/* A directory's mtime only has the kernel's tick resolution: list
	 * again while it is fresh, so a file created just after a listing
	 * with the same mtime is not missed. */
	if (lg->listed && st.st_mtim.tv_sec == lg->dir_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == lg->dir_mtime.tv_nsec &&
	    lw->now / 1000 - (int64_t)st.st_mtim.tv_sec > 2)
		return;
	d = opendir(fc->directory);
	if (d == NULL) {
		lg->listed = false;
		tell_state(lw, lg, LOGSTATS_UNREADABLE, errno);
		return;
	}
	lg->listed = true;
	lg->dir_mtime = st.st_mtim;
	for (;;) {
		de = readdir(d);
		if (de == NULL)
			break;
		/* hidden files are followed as liagent does (exclude=.* skips
		 * them); only . and .. are not files */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    is_compressed(de->d_name))
			continue;
		if (!strlist_match(&fc->include, &fc->exclude, de->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", fc->directory,
		    de->d_name) >= (int)sizeof(path))
			continue;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		matching++;
		if (!followed(lw, path))
			add_file(lw, lg, path);
	}
	closedir(d);
	/* a file being rotated may be missing for a moment: while one is
	 * followed, the filelog is not without files */
	tell_state(lw, lg, matching > 0 || lg->nfiles > 0 ? LOGSTATS_OK :
	    LOGSTATS_NO_MATCH, 0);
}

static void
save_bookmarks(struct lw *lw, struct emitter *em)
{
	char pos[FOLLOW_POS_MAX];
	bool changed = false;
	size_t i;

	(void)em;
	lwe_emit(lw->eng);	/* held events first */
	for (i = 0; i < lw->nfiles; i++) {
		follow_pos(lw->files[i]->fo, pos, sizeof(pos));
		if (pos[0] != '\0' && strcmp(pos, lw->files[i]->saved) != 0)
			changed = true;
	}
	if (!changed && !lwe_storm_dirty(lw->eng))
		return;
	/* The lines before these positions must be safely queued first. */
	if (emit_sync(em) != 0) {
		log_limited(LOG_WARN, "logwatch-sync", 300, "logwatch: events "
		    "not yet safely queued; bookmarks not advanced");
		return;
	}
	for (i = 0; i < lw->nfiles; i++) {
		struct lw_file *lf = lw->files[i];

		follow_pos(lf->fo, pos, sizeof(pos));
		if (pos[0] == '\0' || strcmp(pos, lf->saved) == 0)
			continue;
		if (kv_set(lw->bm, lf->s.origin, pos) == 0)
			snprintf(lf->saved, sizeof(lf->saved), "%s", pos);
	}
	lwe_storm_save(lw->eng, lw->bm);
	if (kv_save(lw->bm) < 0)
		log_limited(LOG_WARN, "logwatch-bm", 300, "logwatch: cannot save "
		    "the bookmarks: lines may be read again after a restart");
}

/*
 * Bookmarks of files no filelog matches any more (configuration changed,
 * dated file names) would pile up: forget them at start.  A file that is
 * only missing for the moment (rotated while we were down) still matches
 * its filelog and keeps its bookmark.
 */
struct prune {
	struct lw	*lw;
	char		**del;
	size_t		 n, cap;
};

static int
prune_cb(void *arg, const char *key, const char *value)
{
	struct prune *p = arg;
	const char *slash = strrchr(key, '/');
	size_t i, dl;
	char **nv;

	(void)value;
	if (lwe_storm_key(key))
		return 0;	/* storm counts, not a bookmark */
	if (slash != NULL) {
		dl = (size_t)(slash - key);
		for (i = 0; i < p->lw->nlogs; i++) {
			const struct filelog_conf *fc = p->lw->logs[i].e.conf;

			if (fc->directory != NULL && strlen(fc->directory) == dl &&
			    strncmp(fc->directory, key, dl) == 0 &&
			    strlist_match(&fc->include, &fc->exclude, slash + 1))
				return 0;
		}
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		nv = realloc(p->del, p->cap * sizeof(*nv));
		if (nv == NULL)
			return 1;
		p->del = nv;
	}
	p->del[p->n] = strdup(key);
	if (p->del[p->n] != NULL)
		p->n++;
	return 0;
}

static void
prune_bookmarks(struct lw *lw)
{
	struct prune p = { lw, NULL, 0, 0 };
	size_t i;

	kv_foreach(lw->bm, "", prune_cb, &p);
	for (i = 0; i < p.n; i++) {
		log_debug("logwatch: forgetting the bookmark of %s (no filelog "
		    "matches it)", p.del[i]);
		kv_del(lw->bm, p.del[i]);
		free(p.del[i]);
	}
	free(p.del);
	if (p.n > 0)
		kv_save(lw->bm);
}

/* ---- figures ----------------------------------------------------- */

/*
 * Hand the filelogs' states, files, offsets and the lines read since the
 * last time to main's table (collectors/logwatch/logstats.h, published as
 * LOGSTATS_FIGURES), which keeps the totals.
 */
static void
publish(struct lw *lw)
{
	struct logstats_snap *p = lw->pic;

	if (lw->figs == NULL || p == NULL)
		return;
	p->nfilelogs = p->nfiles = 0;
	for (size_t i = 0; i < lw->nlogs && i < LOGSTATS_MAX_FILELOGS; i++) {
		struct lw_log *lg = &lw->logs[i];
		struct logstats_filelog *f = &p->filelogs[p->nfilelogs++];

		snprintf(f->name, sizeof(f->name), "%s", lg->e.conf->name);
		logstats_copy_path(f->directory, lg->e.conf->directory ?
		    lg->e.conf->directory : "");
		f->state = lg->state;
		f->lines_read = lg->e.lines;
		f->lines_matched = lg->e.matched;
		f->nfiles = lg->nfiles;
		lg->e.lines = lg->e.matched = 0;
	}
	for (size_t i = 0; i < lw->nfiles; i++) {
		struct lw_file *lf = lw->files[i];
		size_t li = (size_t)(lf->log - lw->logs);
		struct logstats_file *f;

		if (li >= p->nfilelogs || p->nfiles == LOGSTATS_MAX_FILES)
			continue;	/* counted in its filelog still */
		f = &p->files[p->nfiles++];
		logstats_copy_path(f->path, lf->s.origin);
		f->filelog = li;
		f->offset = follow_offset(lf->fo);
		f->lines_read = lf->s.lines;
		f->lines_matched = lf->s.matched;
		lf->s.lines = lf->s.matched = 0;
	}
	(void)lw->figs->publish(lw->figs->arg, LOGSTATS_FIGURES, p);
}

/* ---- the collector ------------------------------------------------- */

static void lw_free(struct lw *);

static int
lw_init(struct collector_ctx *ctx)
{
	const struct config *cfg = ctx->cfg;
	char path[PATH_MAX];
	const char *dir = config_storage_dir(cfg);
	struct lw *lw;
	size_t i;

	lw = calloc(1, sizeof(*lw));
	if (lw == NULL)
		return -1;
	lw->first_scan = true;
	lw->esxi = ctx->platform == PLATFORM_ESXI;
	lw->logs = calloc(cfg->nfilelogs ? cfg->nfilelogs : 1, sizeof(*lw->logs));
	lw->eng = lw->logs != NULL ? lwe_new(cfg) : NULL;
	if (lw->eng == NULL)
		goto err;
	if (ctx->figures != NULL && ctx->figures->publish != NULL) {
		lw->pic = calloc(1, sizeof(*lw->pic));
		lw->figs = lw->pic != NULL ? ctx->figures : NULL;
	}
	for (i = 0; i < cfg->nfilelogs; i++) {
		const struct filelog_conf *fc = &cfg->filelogs[i];

		if (!fc->enabled)
			continue;
		if (fc->broken != NULL) {
			/* the others run (--status lists it) */
			log_error("logwatch: filelog %s: disabled: %s", fc->name,
			    fc->broken);
			continue;
		}
		lwe_log_init(lw->eng, &lw->logs[lw->nlogs++].e, fc);
	}
	if (fs_mkdir_p(dir, 0700) < 0 ||
	    snprintf(path, sizeof(path), "%s/bookmarks", dir) >= (int)sizeof(path))
		lw->bm = NULL;
	else
		lw->bm = kv_open(path);
	if (lw->bm == NULL) {
		log_warn("logwatch: cannot keep bookmarks in %s: after a restart "
		    "files are read from their end", dir);
		lw->bm = kv_open(NULL);
		if (lw->bm == NULL)
			goto err;
	}
	prune_bookmarks(lw);
	lwe_storm_load(lw->eng, lw->bm);
	ctx->priv = lw;
	log_debug("logwatch: %zu filelogs, %zu rules", lw->nlogs,
	    lwe_rules(lw->eng));
	return 0;
err:
	lw_free(lw);
	return -1;
}

static int
lw_collect(struct collector_ctx *ctx, struct emitter *em)
{
	struct lw *lw = ctx->priv;
	int more = 0, r;
	size_t i;

	if (lw == NULL)
		return -1;
	lw->em = em;
	lw->now = now_ms();
	lwe_begin(lw->eng, em, lw->now);
	/* A summary sent: its count is no longer owed; say so at once. */
	if (lwe_storm_due(lw->eng, false) > 0)
		save_bookmarks(lw, em);
	for (i = 0; i < lw->nlogs; i++)
		scan(lw, &lw->logs[i]);
	lw->first_scan = false;
	for (i = 0; i < lw->nfiles; i++) {
		struct lw_file *lf = lw->files[i];

		lw->cur = lf;
		r = follow_read(lf->fo, LOGWATCH_MAX_BYTES, LOGWATCH_MAX_LINES,
		    on_line, lw);
		if (r == 1)
			more = 1;
		lwe_flush(lw->eng, &lf->s);
		lwe_emit(lw->eng);
	}
	lw->cur = NULL;
	/* A backlog is read in bounded calls back to back: sync the queue
	 * and save the bookmarks once a second, not after every call. */
	if (!more || lw->now - lw->saved_at >= 1000) {
		save_bookmarks(lw, em);
		lw->saved_at = lw->now;
	}
	publish(lw);
	return more;
}

static void
lw_free(struct lw *lw)
{
	size_t i;

	if (lw == NULL)
		return;
	for (i = 0; i < lw->nfiles; i++) {
		follow_free(lw->files[i]->fo);
		lwe_stream_fini(&lw->files[i]->s);
		free(lw->files[i]);
	}
	free(lw->files);
	for (i = 0; i < lw->nlogs; i++)
		lwe_log_fini(&lw->logs[i].e);
	free(lw->logs);
	lwe_free(lw->eng);
	if (lw->bm != NULL)
		kv_close(lw->bm);
	free(lw->pic);
	free(lw);
}

/*
 * Shutdown (and the end of --once): what storm suppression still holds is
 * reported now, never dropped.  The agent calls fini() before it drains the
 * queue, through the emitter of the last collect() call.
 */
static void
lw_fini(struct collector_ctx *ctx)
{
	struct lw *lw = ctx->priv;
	const struct lwe_counts *c;
	size_t i;

	if (lw == NULL)
		return;
	if (lw->em != NULL) {
		lw->now = now_ms();
		lwe_begin(lw->eng, lw->em, lw->now);
		for (i = 0; i < lw->nfiles; i++)
			lwe_flush(lw->eng, &lw->files[i]->s);
		lwe_storm_due(lw->eng, true);
		save_bookmarks(lw, lw->em);
		publish(lw);
	}
	c = lwe_counts(lw->eng);
	log_debug("logwatch: %llu lines, %llu alerts, %llu suppressed by storm "
	    "control, %llu repeats of one condition", (unsigned long long)c->lines,
	    (unsigned long long)c->alerts, (unsigned long long)c->suppressed,
	    (unsigned long long)c->twins_dropped);
	lw_free(lw);
	ctx->priv = NULL;
}

const struct collector collector_logwatch = {
	.name = "logwatch",
	.default_interval = 1,
	.init = lw_init,
	.collect = lw_collect,
	.fini = lw_fini,
};
