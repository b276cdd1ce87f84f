/*
 * storm: storm suppression of rule matches.  Per rule and entity (the
 * first capture of the rule's match, rules.h), after `limit` matches in
 * `window_ms` (the rule's own storm: {max, window}, else the defaults)
 * further matches are only counted and reported in one summary when the
 * window ends.  A room of its own: it knows rule and entity only as
 * names, never how a line matched, and its counts outlive a restart
 * (saved with the log bookmarks) where the rules are rebuilt.
 */
#ifndef ESXWATCH_STORM_H
#define ESXWATCH_STORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Storm suppression.  storm_hit() returns 1 when the match should be
 * emitted, 0 when it is counted instead (a window that ended is
 * reported through cb first).  storm_due() hands every entry
 * whose window is over (or every entry with suppressed matches, when
 * all is true) to cb with the number suppressed, and resets it.
 */
struct storm;
struct storm	*storm_new(int limit, int64_t window_ms, size_t max_keys);
void		 storm_free(struct storm *);
typedef void	(*storm_fn)(void *arg, const char *rule, const char *entity,
		    uint64_t suppressed, int64_t window_ms, const char *last_line);
int		 storm_hit(struct storm *, const char *rule, const char *entity,
		    int64_t now_ms, const char *line, size_t len, storm_fn cb,
		    void *arg);
/* The same with this rule's own limit and window (limit <= 0: no storm
 * control, every match is emitted). */
int		 storm_hit_at(struct storm *, const char *rule, const char *entity,
		    int limit, int64_t window_ms, int64_t now_ms, const char *line,
		    size_t len, storm_fn cb, void *arg);
/* Returns the number of summaries handed to cb. */
int		 storm_due(struct storm *, int64_t now_ms, bool all,
		    storm_fn cb, void *arg);

/*
 * Checkpoint.  The counts of open windows are saved with the log
 * bookmarks (logwatch), so a crash loses none: storm_foreach() hands every
 * open window to fn as a state text, storm_restore() reopens one from it
 * (-1 if the text is malformed).  storm_dirty() says whether anything
 * changed since storm_clean().
 */
typedef void	(*storm_state_fn)(void *arg, const char *rule, const char *entity,
		    const char *state);
void		 storm_foreach(const struct storm *, storm_state_fn fn, void *arg);
int		 storm_restore(struct storm *, const char *rule, const char *entity,
		    const char *state);
bool		 storm_dirty(const struct storm *);
void		 storm_clean(struct storm *);

#endif
