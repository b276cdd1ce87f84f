/*
 * config: agent.yaml (libyaml) or liagent.ini, docs/configuration.md.
 *
 * config_load() fills a struct config with every default, then applies the
 * file.  Errors are reported as FILE:LINE:COL: message (one line each, all of
 * them, not just the first) through the error callback and make the load
 * fail; liagent keys we do not know are warnings.
 */
#ifndef ESXWATCH_CONFIG_H
#define ESXWATCH_CONFIG_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

/* A list of strings (include/exclude globs, rule files). */
struct strlist {
	char	**v;
	size_t	  n;
};

/* An ordered string map (tags, http headers). */
struct kvpair {
	char	*key;
	char	*value;
};
struct kvlist {
	struct kvpair	*v;
	size_t		 n;
};

enum dest_proto {
	PROTO_CFAPI, PROTO_SYSLOG, PROTO_HTTP, PROTO_FILE,
	PROTO_SPLUNK_HEC, PROTO_ELASTICSEARCH, PROTO_OTLP, PROTO_LOKI, PROTO_GELF,
};

/* A destination's filter: liagent's {type; name; expression} clauses,
 * as written (agent/config/dfilter.h says what they mean). */
struct dest_filter {
	char	*type;		/* "" or "*" any; filelog; a collector's name */
	char	*name;		/* regex for the whole name; "" any */
	char	*expr;		/* agent/lib/lfilter.h; "" every event */
};
struct dest_filters {
	struct dest_filter	*v;
	size_t			 n;
};

/*
 * server: and every servers.NAME:: the shared connection basics, the
 * core's rows (agent/config/config.c dest_keys).  Each sink's keys are
 * in its own options block (opts, read with sink_opts(), declared in
 * output/NAME.c): the core names none of them.
 */
struct dest_conf {
	char		*name;		/* "server" for the primary, else NAME */
	char		*hostname;
	enum dest_proto	 proto;
	int		 port;		/* 0 = protocol default, see dest_port() */
	bool		 ssl;
	char		*ssl_ca_path;
	bool		 ssl_accept_any;
	char		*ssl_cn;
	int		 reconnect;	/* minutes */
	char		*agent_id;
	int		 timeout;	/* seconds per request/connect, default 30 */
	int		 reject_limit;	/* events rejected one by one in a row
					 * before the destination is failing */
	char		*dead_letter;	/* "" or the file refused events go to */
	long		 dead_letter_max_kb;
	/* certificate trust and authenticated ingestion (CONTRACT §4);
	 * read in output/ through trust.c and lisession.c only */
	char		*trust;		/* verify | first_use | any */
	char		*username;	/* cfapi: POST /api/v1/sessions */
	char		*password;	/* KF_SECRET: never logged or printed */
	char		*password_file;	/* a 0600 file holding the password */
	char		*provider;	/* Local | ActiveDirectory | vIDM */
	struct dest_filters filter;	/* none: every event */
	/* one options block per sink, in registry order (sink_opts()) */
	void		**opts;
	size_t		 nopts;
	/*
	 * Resolved by config_resolve(), not printed: the sink that carries
	 * the destination.  A primary with nowhere to send (its sink says,
	 * struct sink .has_target: no host name, no URL) goes to stdout as
	 * JSON lines: sink_proto PROTO_FILE, to_stdout;
	 * with no servers: either, it is "no destination" (nodest), and the
	 * shipper picks where its events go (platform_nodest(): stdout, or
	 * the host's syslog on ESXi, host_syslog).
	 */
	enum dest_proto	 sink_proto;
	bool		 to_stdout;
	bool		 nodest;
	bool		 host_syslog;	/* set by the shipper: syslog.c's local socket */
};

struct collector_conf {
	char		*name;
	bool		 enabled;
	int		 interval;	/* seconds */
	struct strlist	 include;
	struct strlist	 exclude;
	int		 timeout;	/* seconds per command; extension, default 30 */
	void		*opts;	/* the collector's own keys (struct collector .keys) */
};

enum forward_mode { FORWARD_MATCHES, FORWARD_ALL };

struct filelog_conf {
	char		*name;
	char		*directory;
	struct strlist	 include;	/* ;-separated in the file */
	struct strlist	 exclude;
	char		*event_marker;	/* regex or NULL */
	struct kvlist	 tags;
	enum forward_mode forward;
	bool		 read_from_head;
	bool		 enabled;
	char		*parser;	/* a parsers: name or a base name; NULL = none */
	char		*whitelist;	/* liagent filter expressions (agent/lib/lfilter.h) */
	char		*blacklist;
	struct strlist	 exclude_fields;
	int		 src_line;	/* where the filelog was defined */
	int		 src_col;
	/*
	 * Loaded with CONFIG_KEEP_BROKEN_FILELOGS: a regex or filter of this
	 * filelog does not compile; "FILE:LINE:COL: message" of the first
	 * one.  The filelog does not run (logwatch says so, --status too).
	 */
	char		*broken;
};

/* vsphere.NAME: hosts polled through the vSphere API (docs/vsphere.md). */
struct vsphere_conf {
	char		*name;
	char		*url;		/* https:// only */
	char		*username;
	char		*password_file;	/* 0600; the password is never kept */
	char		*trust;		/* verify | first_use | any */
	char		*ca;		/* CA bundle; "" = the system's */
	struct strlist	 hosts;		/* names or globs; empty = all */
	int		 interval;	/* seconds */
	bool		 events;	/* follow the event stream */
	int		 timeout;	/* seconds per request */
	int		 src_line, src_col;
};

/* parsers.NAME (liagent [parser|NAME]): the keys as written (parsers.h). */
struct parser_conf {
	char		*name;
	char		*base_parser;
	char		*format;
	char		*fields;
	char		*delimiter;
	char		*field_decoder;
	char		*field_rename;
	char		*next_parser;
	char		*exclude_fields;
	char		*extract_sd;
	char		*debug;
	int		 src_line;	/* where it was defined, for messages */
	int		 src_col;
};

struct rule_conf {
	char		*name;
	char		*match;		/* fixed substring, or NULL */
	char		*regex;		/* POSIX ERE, or NULL */
	char		*severity;	/* info | warning | error | critical */
	struct strlist	 files;		/* filelog names; empty = all */
	char		*hint;
	int		 enabled;	/* 1 yes, 0 no */
	char		*vob_id;	/* optional: the VOB id the rule is about */
	char		*literal;	/* optional: required literal for the prefilter */
	int		 storm_max;	/* 0 = default (10), -1 = storm: off */
	int		 storm_window;	/* s, 0 = default (60) */
	/* where the rule was defined, for error messages */
	char		*src_file;
	int		 src_line;
};

/* receiver.syslog[]: one listener (collectors/receiver/receiver_conf.c). */
struct receiver_listen {
	char		*address;	/* HOST:PORT, [V6]:PORT */
	char		*transport;	/* udp | tcp | tls */
	char		*cert;		/* tls: server certificate (PEM) */
	char		*key;		/* tls: its key (PEM) */
	char		*client_ca;	/* tls: required client certificates' CA */
	int		 src_line;
};

/* receiver: collector mode (CONTRACT §5); off while nsyslog is 0. */
struct receiver_conf {
	struct receiver_listen	*syslog;
	size_t			 nsyslog;
	struct strlist		 allow;		/* CIDRs; empty = any */
	char			*hostname;	/* header | peer */
	int			 silent_after;	/* s; 0 = off */
	enum forward_mode	 forward;
	int			 max_connections;
};

/* server plus servers: each destination has a thread, a connection and a
 * cursor of its own, so their number is bounded (a configuration error
 * past it). */
#define CONFIG_MAX_DESTS	64

/* storage.max_disk_buffer's default (MB): the key's default and the
 * spool's when it has no configuration, written once. */
#define CONFIG_MAX_DISK_BUFFER_MB	200

struct config {
	char			*path;		/* the file it came from */
	bool			 is_ini;
	bool			 file_empty;	/* it held only blanks and comments */

	struct dest_conf	 server;
	struct dest_conf	*servers;	/* more destinations */
	size_t			 nservers;

	char			*storage_directory;	/* "" = platform default */
	long			 max_disk_buffer;	/* MB; CONFIG_MAX_DISK_BUFFER_MB */
	long			 max_disk_buffer_kb;	/* KB; 0 = max_disk_buffer */
	long			 segment_kb;		/* KB; 0 = automatic */

	int			 debug_level;
	char			*log_file;

	int			 batch_max_events;
	long			 batch_max_bytes;
	int			 batch_flush_interval;

	char			*platform;	/* auto | esxi | linux */
	char			*tools_dir;
	char			*log_dir;
	char			*hostname;

	struct kvlist		 tags;

	char			*monitor_listen;	/* monitor.listen; "" = off */

	struct receiver_conf	 receiver;	/* receiver: */

	struct collector_conf	*collectors;	/* nic datastore vsan smart agent, + any */
	size_t			 ncollectors;

	struct filelog_conf	*filelogs;
	size_t			 nfilelogs;

	struct parser_conf	*parsers;
	size_t			 nparsers;

	struct vsphere_conf	*vsphere;	/* vsphere.NAME entries */
	size_t			 nvsphere;

	struct rule_conf	*rules;
	size_t			 nrules;
	char			*rules_file;	/* built-in catalogue path; extension */
};

/* Report one problem.  is_error false = warning. */
typedef void (*config_report_fn)(void *arg, bool is_error, const char *msg);

/*
 * Load path (YAML or INI, chosen by content).  On success returns a config
 * with every default filled; on failure NULL after reporting every error as
 * "FILE:LINE:COL: message".  report may be NULL (errors go to stderr).
 */
struct config	*config_load(const char *path, config_report_fn report, void *arg);
/*
 * The same with flags.  CONFIG_KEEP_BROKEN_FILELOGS (a daemon's start or
 * reload): a filelog whose event_marker, whitelist or blacklist, or the
 * parser it names, does not compile is still reported as an error, but
 * only that filelog (and that parser) is out (filelog_conf.broken); the
 * rest of the file loads.  --check-config and
 * --print-config load strictly (config_load()).
 */
#define CONFIG_KEEP_BROKEN_FILELOGS	0x1u
struct config	*config_load_flags(const char *path, unsigned flags,
		    config_report_fn report, void *arg);
/* All defaults, no file. */
struct config	*config_default(void);
void		 config_free(struct config *);
/* The effective configuration as YAML (loadable again by config_load),
 * secrets as "<redacted>" (the password, a URL's credentials and secret
 * query values, secret-named headers); with secrets true, as they are. */
int		 config_print(const struct config *, FILE *);
int		 config_print_with(const struct config *, FILE *, bool secrets);
/* Every key as Markdown tables, from the schema rows (docs/configuration.md). */
int		 config_keys_markdown(FILE *);

const struct collector_conf *config_collector(const struct config *, const char *name);
/* Name matches include (empty = all) and not exclude; fnmatch globs. */
bool		 strlist_match(const struct strlist *include,
		    const struct strlist *exclude, const char *name);
const char	*kvlist_get(const struct kvlist *, const char *key);

#endif
