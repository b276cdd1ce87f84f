/*
 * config_int: what the pieces of the configuration loader share, and the
 * hooks of a registry section (config_section.h) use to walk YAML nodes
 * and report as the loader does; not for the rest of the agent (that is
 * config.h) nor for modules that only declare keys (config_schema.h).
 *
 *	config.c	lifecycle: defaults, load, resolve, free; the core
 *			sections (server basics, storage, logging, batch, host,
 *			tags) and the servers/collectors walks
 *	config_util.c	memory, strings, lists, messages (rep, show, suggest)
 *	config_check.c	value checks shared by rows
 *	config_schema.c	the walker: scalars, YAML nodes, maps, init, free
 *	config_yaml.c	agent.yaml: libyaml events into a positioned tree
 *	config_ini.c	liagent.ini
 *	config_print.c	--print-config and the docs' key table
 *	config_section.c the registry of the layers above (config_section.h)
 */
#ifndef ESXWATCH_CONFIG_INT_H
#define ESXWATCH_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "config_schema.h"
#include "../lib/mem.h"
#include "config_section.h"

/* A configuration file bigger than this is a mistake (or an attack). */
#define CONFIG_MAX_BYTES	(4 * 1024 * 1024)

/* ---- memory and strings (config_util.c) ---- */
void	 set_str(char **dst, const char *s);
void	 strlist_free(struct strlist *);
void	 strlist_addn(struct strlist *, const char *, size_t);
void	 strlist_add(struct strlist *, const char *);
void	 kvlist_free(struct kvlist *);
void	 kvlist_set(struct kvlist *, const char *key, const char *value);
void	 split_list(struct strlist *, const char *);
bool	 name_valid(const char *);
bool	 text_empty(const char *, size_t);

/* ---- messages (config_util.c) ---- */
struct lmsg {
	int	 line, col;
	size_t	 seq;
	bool	 is_err;
	char	*text;
};

struct lctx {
	const char		*file;
	config_report_fn	 report;
	void			*arg;
	int			 nerr;
	bool			 ini;		/* liagent.ini: softer rules */
	size_t			 nnodes;
	/* after a bad regex's message: the entry it is in (" (rule 'x'
	 * at line N)"), or NULL */
	const char		*where;
	struct lmsg		*msgs;
	size_t			 nmsgs;
	const struct kpos	*fpos;		/* for cfg_finish_pos() */
	bool			 keep_broken;	/* CONFIG_KEEP_BROKEN_FILELOGS */
	/* the broken message of the entry being read (rep_compile), or NULL */
	char			**broken;
};

void	 rep(struct lctx *, bool is_err, int line, int col, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
/* A regex or filter that does not compile: an error (rep()), or with
 * keep_broken inside an entry that can break alone (c->broken), the end
 * of that entry only. */
void	 rep_compile(struct lctx *, int line, int col, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
void	 lctx_flush(struct lctx *);
const char *show(const char *s, char *buf, size_t len);
const char *suggest(const char *key, const char *const *names, size_t n,
	    char *buf, size_t len);
char	*read_whole_file(struct lctx *, const char *path, size_t *lenp);

/* ---- regex helpers (config_check.c) ---- */

/* ---- the walker (config_schema.c) ---- */
int	 kspec_index(const struct cfg_key *, size_t n, const char *name);
bool	 kspec_refused(const struct cfg_key *, size_t n, const struct kpos *,
	    const char *name);
const char *unknown_hint(const char *key, const struct cfg_key *, size_t n,
	    char *buf, size_t len);
int	 key_copy(const struct cfg_key *to, void *tobase,
	    const struct cfg_key *from, const void *frombase);
int	 apply_scalar(struct lctx *, const struct cfg_key *, void *base,
	    const char *s, bool isnull, int line, int col);
const char *choices_text(const char *const *, char *buf, size_t len);
const char *const *proto_choices(void);

/* ---- YAML tree (config_yaml.c) ---- */
enum ytype { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ytype	  type;
	int		  line, col;	/* 1-based */
	char		 *s;		/* scalar */
	bool		  null;		/* plain "", ~, null */
	struct ynode	**v;		/* seq items; map: key, value, ... */
	size_t		  n, cap;
};

struct ynode *yaml_tree(struct lctx *, const char *buf, size_t len, bool *ok);
void	 ynode_free(struct ynode *);
const char *ynode_what(const struct ynode *);
/* Run a list row's check on l's items from `from` on. */
void	 check_list(struct lctx *, const struct cfg_key *, const struct strlist *,
	    size_t from, int line, int col);
int	 apply_node(struct lctx *, const struct cfg_key *, void *base,
	    const struct ynode *);
void	 apply_map(struct lctx *, const struct cfg_key *, size_t n, void *base,
	    const struct ynode *m, const char *section, struct kpos *pos);
bool	 want_map(struct lctx *, const struct ynode *, const char *what);
bool	 entry_named(struct lctx *, const struct ynode *key, const char *what);
void	 yaml_apply(struct lctx *, struct config *, const struct ynode *root);

/* ---- liagent.ini (config_ini.c) ---- */
bool	 looks_ini(const char *buf, size_t len);
void	 ini_load(struct lctx *, struct config *, char *buf, size_t len);
int	 ini_value(struct lctx *, const struct cfg_key *, void *base,
	    const char *val, int line, int col);

/* ---- a destination's filter (config_dfilter.c) ---- */
extern const struct cfg_custom dest_filter_type;

/* ---- core sections (config.c) ---- */
extern const struct cfg_key dest_keys[];
extern const size_t ndest_keys;
extern const struct cfg_key storage_keys[];
extern const size_t nstorage_keys;
extern const struct cfg_key logging_keys[];
extern const size_t nlogging_keys;
extern const struct cfg_key batch_keys[];
extern const size_t nbatch_keys;
extern const struct cfg_key host_keys[];
extern const size_t nhost_keys;
extern const struct cfg_key tags_key;
extern const struct cfg_key rules_file_key;

/*
 * A destination's keys: the shared table, then every sink's rows in
 * registry order.  A dest key index (for struct kpos arrays) counts
 * through them in that order.
 */
struct dkey {
	const struct cfg_key	*k;
	void			*base;
};
size_t	 dest_nkeys(void);
int	 dest_key_find(const struct dest_conf *, const char *name,
	    struct dkey *);
int	 dest_key_next(const struct dest_conf *, const char *name, int after,
	    struct dkey *);
int	 dest_key_shown(const struct dest_conf *, const char *name,
	    struct dkey *);
/* A key two sinks declare: once the first row (index ki) took a value,
 * the others get a copy. */
void	 dest_key_share(struct dest_conf *, const char *name, int ki);
const char *dest_unknown_hint(const char *key, char *buf, size_t len);
void	 dest_finish(struct lctx *, struct dest_conf *, const struct kpos *,
	    bool primary, int line, int col);
struct dest_conf *server_add(struct config *, const char *name);
void	 yaml_dest(struct lctx *, struct dest_conf *, const struct ynode *,
	    const char *section, bool primary, int line, int col);
void	 yaml_servers(struct lctx *, struct config *, const struct ynode *);
void	 yaml_collectors(struct lctx *, struct config *, const struct ynode *);

/* ---- the registry (config_section.c) ---- */
size_t	 cfg_nsinks(void);
bool	 cfg_sink_at(size_t i, struct cfg_plugin *);
/* The sink with protocol number id, or of that name: its registry index,
 * or -1 (out zeroed). */
int	 cfg_sink_find(int id, struct cfg_plugin *);
int	 cfg_sink_named(const char *name, struct cfg_plugin *);
/* The sink name of a protocol number, or "unknown". */
const char *cfg_proto_name(int id);
size_t	 cfg_ncollectors(void);
bool	 cfg_collector_at(size_t i, struct cfg_plugin *);
bool	 cfg_collector_named(const char *name, struct cfg_plugin *);
const struct cfg_key *cfg_collector_keys(size_t *n);
size_t	 cfg_nsections(void);
const struct cfg_section *cfg_section_at(size_t i);

/* ---- printing (config_print.c) ---- */
void	 print_str(FILE *, const char *);
void	 print_list(FILE *, const struct strlist *);
/* secrets redacted */
void	 key_print(FILE *, const struct cfg_key *, const void *base,
	    const char *indent);
/* secrets: KP_SECRETS or 0 (keys_print()) */
void	 print_dest(FILE *, const struct dest_conf *, const char *indent,
	    unsigned secrets);

#endif
