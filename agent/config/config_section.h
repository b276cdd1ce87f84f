/*
 * config_section: how the layers above the configuration loader hand it
 * their sections, so that the loader names no sink, collector or other
 * module of theirs (docs/configuration.md, "Adding a key").
 *
 * Three kinds of rows, one registry (struct cfg_registry), set once at
 * start by the top layer (agent/config_plugins.c) before any load:
 *   - a sink's keys (server:, servers.NAME:) and a collector's keys
 *     (collectors.NAME:), read from the sink and collector registries
 *     through two lookups, so a sink or collector registered later (a test
 *     build's) is seen too;
 *   - a section of its own (monitor:, filelog:, rules:, parsers:): its
 *     keys, defaults, YAML, liagent.ini, checks, printing and docs.
 * The loader keeps the sections every host has (server, servers, storage,
 * logging, batch, host, tags, collectors, rules_file).
 */
#ifndef ESXWATCH_CONFIG_SECTION_H
#define ESXWATCH_CONFIG_SECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "config_schema.h"

struct lctx;
struct ynode;

/*
 * A sink's or a collector's configuration, as the loader sees it.  id is
 * a sink's protocol number (enum dest_proto); default_interval a
 * collector's.  opts_size bytes of options block hold the rows; finish
 * (sinks) checks what spans keys once a destination is read; has_target
 * (sinks, optional) says whether a destination has somewhere to send
 * (NULL: when it has a host name).
 */
struct cfg_plugin {
	const char		*name;
	int			 id;
	int			 default_interval;
	const struct cfg_key	*keys;
	size_t			 nkeys;
	size_t			 opts_size;
	void		(*finish)(const struct cfg_finish *);
	bool		(*has_target)(const struct dest_conf *);
};

/*
 * One liagent.ini section being read, for a row's ini hooks.  state is
 * the row's own (zero at the start of a load); ini_end frees it.
 */
struct cfg_ini {
	struct lctx	*c;
	struct config	*cfg;
	const char	*secname;	/* "type|name" as written */
	void		*state;
};

/*
 * A top-level section owned by a module above the loader.  With apply
 * NULL it is a plain section: keys are rows onto struct config and the
 * loader walks them for everything (defaults, the YAML mapping, printing,
 * the docs, freeing).  Otherwise the hooks do it (NULL: nothing to do)
 * and keys are the rows of one entry (docs table, liagent.ini's KF_RAW).
 */
struct cfg_section {
	const char		*name;		/* the top-level key */
	/* the loader's section it follows in --print-config and the docs
	 * ("host", "collectors"); NULL: at the end */
	const char		*after;
	const char		*doc_title;	/* NULL: name */
	const struct cfg_key	*keys;
	size_t			 nkeys;
	void	(*init)(struct config *);		/* defaults */
	void	(*clear)(struct config *);		/* free */
	void	(*apply)(struct lctx *, struct config *, const struct ynode *);
	/* once the file is read: what depends on other sections' values */
	void	(*resolve)(struct config *);
	/* cross-section checks; run only while the load has no error */
	void	(*check)(struct lctx *, struct config *);
	void	(*print)(FILE *, const struct config *);
	/*
	 * liagent.ini: a [type] or [type|sub] header (sub NULL for [type]).
	 * 1 = this row takes it and the section's keys go to ini_key; 0 =
	 * not this row's.  ini_end runs once at the end of every ini load.
	 */
	int	(*ini_header)(struct cfg_ini *, const char *type, char *sub,
		    int line, int col);
	void	(*ini_key)(struct cfg_ini *, const char *key, const char *val,
		    int line, int kcol, int vcol);
	void	(*ini_end)(struct cfg_ini *);
};

struct cfg_registry {
	size_t	(*nsinks)(void);
	bool	(*sink_at)(size_t i, struct cfg_plugin *);
	size_t	(*ncollectors)(void);
	bool	(*collector_at)(size_t i, struct cfg_plugin *);
	/* the keys every collectors.NAME has (enabled, interval, ...) */
	const struct cfg_key *(*collector_keys)(size_t *n);
	const struct cfg_section *const *sections;
	size_t			 nsections;
};

/* Use reg (kept, not copied) for every load from now on. */
void	 config_use(const struct cfg_registry *reg);

/* ---- for the rows' hooks ---- */

/* liagent.ini: "'KEY' in [SECTION] WHY; ignored", a warning. */
void	 cfg_ini_unknown(struct cfg_ini *, const char *key, int line, int col,
	    const char *why);
/* A section name liagent accepts and esxwatch would not ("my app"),
 * made usable in place (warned); NULL when nothing is left. */
char	*cfg_ini_name(struct lctx *, char *sub, int line, int col);

#endif
