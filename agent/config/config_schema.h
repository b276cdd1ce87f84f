/*
 * config_schema: the row type every module declares its configuration
 * keys with (docs/configuration.md, "Adding a key").
 *
 * A key is written once, as one row: its name, type, range or choices,
 * default, one-line doc, where it lives (offsetof into the owning struct)
 * and flags.  The schema walker (agent/config/config_schema.c) drives everything
 * else from the rows: defaults, validation with FILE:LINE:COL messages and
 * "did you mean" suggestions, freeing, --print-config and the generated
 * key table of docs/configuration.md.  Modules own their rows: sinks in
 * output/NAME.c (struct sink .keys), collectors in collectors/NAME.c
 * (struct collector .keys), sections of their own (filelog, rules,
 * parsers, monitor) as registry rows (agent/config/config_section.h); the
 * core (agent/config/config.c) keeps the shared sections.
 */
#ifndef ESXWATCH_CONFIG_SCHEMA_H
#define ESXWATCH_CONFIG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ktype {
	KT_STR,		/* char *, "" when empty */
	KT_OSTR,	/* char *, NULL when absent or empty */
	KT_INT,		/* int with range */
	KT_LONG,	/* long with range */
	KT_BOOL,	/* bool */
	KT_IBOOL,	/* int 1/0 */
	KT_ENUM,	/* char *, one of choices */
	KT_PROTO,	/* enum dest_proto, choices = the sink registry */
	KT_FORWARD,	/* enum forward_mode */
	KT_LIST,	/* struct strlist: sequence or ;-separated string */
	KT_KV,		/* struct kvlist: mapping of scalars */
	KT_CUSTOM,	/* anything else: the row's custom hooks */
};

/* Row flags. */
#define KF_SECRET	0x01	/* printed as "<redacted>", never logged */
#define KF_OMIT_NULL	0x04	/* KT_OSTR: absent is not printed at all */
#define KF_NOPRINT	0x08	/* not in --print-config (internal) */
#define KF_SECRET_URL	0x10	/* a URL: its user:password@ and secret query
				 * values printed as "<redacted>" (redact.h) */
#define KF_SECRET_KV	0x20	/* KT_KV: the values of secret-named keys
				 * (Authorization, X-Api-Key...) redacted */
#define KF_RAW		0x40	/* liagent.ini: the value keeps its trailing
				 * blanks (a regex's exact bytes) */

struct lctx;
struct ynode;		/* a positioned YAML node (agent/config/config_int.h) */
struct cfg_key;

/*
 * A value that is not one of the types above (a mapping of its own such
 * as rules[].storm's {max, window} or "off", a map of named mappings such
 * as parsers): the row names these hooks.  A nested mapping is walked with
 * a table of its own through apply_map() (agent/config/config_int.h).
 */
struct cfg_custom {
	const char	*type_doc;	/* the docs' Type column */
	/* YAML: 0 = stored, -1 = reported */
	int	(*apply)(struct lctx *, const struct cfg_key *, void *field,
		    const struct ynode *);
	/* liagent.ini's string; NULL: not settable there (warned) */
	int	(*apply_str)(struct lctx *, const struct cfg_key *, void *field,
		    const char *s, int line, int col);
	void	(*init)(const struct cfg_key *, void *field);	/* NULL: zero */
	void	(*free)(void *field);
	/* "INDENTname: value\n" (or a block below) */
	void	(*print)(FILE *, const struct cfg_key *, const void *field,
		    const char *indent);
};

/*
 * A value check: 0 (fine), -1 (error reported) or 1 (warning reported,
 * skip the value: only liagent.ini uses that).  key is the key's name.
 */
typedef int (*check_fn)(struct lctx *, const char *key, const char *val,
    int line, int col);

struct cfg_key {
	const char		*name;
	enum ktype		 type;
	size_t			 off;		/* offsetof into the owner */
	long			 min, max;	/* KT_INT, KT_LONG */
	const char *const	*choices;	/* KT_ENUM, KT_FORWARD */
	check_fn		 check;		/* the value (KV: the key) */
	check_fn		 vcheck;	/* KV: the value */
	const char		*def;		/* default as written in YAML;
						 * NULL = empty/absent/0 */
	const char		*doc;		/* one line, for the docs */
	unsigned		 flags;		/* KF_* */
	const struct cfg_custom	*custom;	/* KT_CUSTOM */
};

/* One row; use named fields so a row reads as what it declares. */
#define CFG_KEY(...)	{ __VA_ARGS__ }
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Where a key of a finished section was set: line 0 = not set, ok = the
 * value was valid and stored.  Finish hooks use it to place messages.
 */
struct kpos {
	int	line, col;
	bool	ok;
};
#define KPOS_MAX	64

/*
 * A sink's finish() hook gets this once its destination is complete
 * (every key read, in either syntax): rules across keys live there.
 */
struct dest_conf;
struct cfg_finish {
	struct lctx		*c;
	struct dest_conf	*d;
	bool			 primary;	/* server:, not servers.NAME */
	int			 line, col;	/* the section */
};

/* Where key (of the shared table or any sink's) was set in this section. */
const struct kpos *cfg_finish_pos(const struct cfg_finish *, const char *key);
void	cfg_error(struct lctx *, int line, int col, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
void	cfg_set_str(char **dst, const char *s);

/* The shared value checks, for rows anywhere. */
int	check_hostname(struct lctx *, const char *, const char *, int, int);
int	check_dest_hostname(struct lctx *, const char *, const char *, int, int);
int	check_file_glob(struct lctx *, const char *, const char *, int, int);
int	check_url(struct lctx *, const char *, const char *, int, int);
int	check_agent_id(struct lctx *, const char *, const char *, int, int);
int	check_sd_id(struct lctx *, const char *, const char *, int, int);
int	check_name(struct lctx *, const char *, const char *, int, int);
int	check_tag_name(struct lctx *, const char *, const char *, int, int);
int	check_header_name(struct lctx *, const char *, const char *, int, int);
int	check_header_value(struct lctx *, const char *, const char *, int, int);
int	check_regex(struct lctx *, const char *, const char *, int, int);
int	check_rule_regex(struct lctx *, const char *, const char *, int, int);
int	check_lfilter(struct lctx *, const char *, const char *, int, int);
int	check_nonempty(struct lctx *, const char *, const char *, int, int);

/*
 * The walker over one table, every row on base.  keys_print's how:
 * KP_SECRETS prints secrets as they are (--print-config --show-secrets);
 * 0 redacts them.
 */
#define KP_SECRETS	0x100u
void	keys_init(const struct cfg_key *, size_t n, void *base);
void	keys_free(const struct cfg_key *, size_t n, void *base);
void	keys_print(FILE *, const struct cfg_key *, size_t n, const void *base,
	    const char *indent, unsigned how);

#endif
