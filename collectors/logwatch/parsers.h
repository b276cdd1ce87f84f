/*
 * parsers: liagent's agent parsers ([parser|NAME] in liagent.ini, the
 * `parsers:` map of agent.yaml; docs/parsers.md), applied by logwatch to
 * each event of a filelog that names one (`parser=`).
 *
 * base_parser:
 *   clf        format= Apache-style specifiers (default
 *              `%h %l %u %t "%r" %s %b`); %t is the event time (auto
 *              detected, or %{FORMAT}t), %{NAME}i/C/e/n/o name a field,
 *              a bare %i skips a token, %M takes the rest of the text
 *   csv        fields=a,b,c (column names; an empty name skips a column),
 *              delimiter= (default ",")
 *   kvp        fields=* or fields=a,b: key=value pairs, "quoted" keys and
 *              values with backslash escapes
 *   timestamp  format= strftime-like (collectors/logwatch/logtime.h): the event time
 *   regex      format= a PCRE2 regex; named groups become fields
 *   syslog     an RFC 5424 or RFC 3164 header: the event time, appname,
 *              syslog_host, procid, msgid, syslog_facility,
 *              syslog_severity; extract_sd=yes adds the structured data
 *              parameters
 *   json       fields=* or a list: the top-level scalar members
 *   auto       a leading timestamp, then json or kvp (fields=*)
 * Common keys: next_parser= runs another parser on the same text,
 * field_decoder={"field":"parser"} runs a parser on a field's value (or
 * {"field":{"other":{"glob":"parser"}}}: only when other matches glob),
 * field_rename={"old":"new"} renames parsed fields,
 * exclude_fields=a;b removes fields, debug=yes logs what was parsed.
 *
 * Field names are normalised as tags are (event.h field_name_normalize);
 * a parsed field never replaces one the agent set (hostname, appname,
 * esxwatch_*): the agent's wins.
 */
#ifndef ESXWATCH_PARSERS_H
#define ESXWATCH_PARSERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event;
struct lctx;
struct config;

/* One parser as configured (strings; NULL or "" = not set). */
struct parser_def {
	const char	*name;
	const char	*base_parser;
	const char	*format;
	const char	*fields;
	const char	*delimiter;
	const char	*field_decoder;
	const char	*field_rename;
	const char	*next_parser;
	const char	*exclude_fields;
	const char	*extract_sd;
	const char	*debug;
};

struct parsers;
struct parser;

struct parsers	*parsers_new(void);
void		 parsers_free(struct parsers *);
/* Compile one definition: -1 and a message naming the key on error. */
int		 parsers_add(struct parsers *, const struct parser_def *,
		    char *err, size_t errlen);
/* Resolve next_parser and field_decoder names; refuse unknown names and
 * loops.  After the last parsers_add(). */
int		 parsers_link(struct parsers *, char *err, size_t errlen);
/* A configured parser, or a built-in one by its base name (auto, clf,
 * csv is not one: it needs fields), or NULL. */
const struct parser *parsers_get(struct parsers *, const char *name);
/* The parsers of a configuration (parsers: / [parser|NAME]), compiled and
 * linked; NULL after reporting through c (when not NULL) what does not
 * compile.  collectors/logwatch/parsers_conf.c. */
struct parsers	*parsers_from_config(struct lctx *, const struct config *);
/* Whether name is a parser's base name liagent knows. */
bool		 parsers_known_base(const char *base);

/*
 * Parse text[0..len) into ev: fields (set only where ev has none of that
 * name) and, for %t/timestamp/syslog/auto, ev->timestamp_ms.  Returns the
 * number of fields set (>= 0).
 */
int		 parser_apply(const struct parser *, const char *text,
		    size_t len, int64_t now_ms, struct event *ev);

#endif
