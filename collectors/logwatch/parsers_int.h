/*
 * parsers_int.h: what parsers.c (definitions) and parsers_apply.c
 * (applying them to events) share.  Not for other modules: parsers.h is
 * the interface.
 */
#ifndef ESXWATCH_PARSERS_INT_H
#define ESXWATCH_PARSERS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "parsers.h"

#define P_MAX_TOKENS	64
#define P_MAX_FIELDS	64	/* names in fields= */
#define P_MAX_DECODERS	16
#define P_MAX_DEPTH	8	/* next_parser / field_decoder nesting */
#define P_VALUE_MAX	4096	/* longer values are cut */
#define P_NAME_MAX	64

enum p_base { P_CLF, P_CSV, P_KVP, P_TIMESTAMP, P_REGEX, P_SYSLOG, P_JSON, P_AUTO };

extern const char *const parser_base_names[8];

/* A CLF format token: literal text, or a specifier. */
struct clf_tok {
	char	*lit;		/* literal, or NULL for a specifier */
	char	*field;		/* field name; NULL = skip the value */
	char	*tfmt;		/* %{FORMAT}t, or NULL = auto */
	bool	 is_time;
	bool	 rest;		/* %M */
};

/*
 * field_decoder entries: {"field":"parser"} runs parser on field's value;
 * the conditional form {"field":{"other":{"glob":"parser"}}} runs it only
 * when field other's value matches glob (fnmatch), as VMware's MongoDB
 * content pack writes it.
 */
struct decoder {
	char			*field;
	char			*cond_field;	/* NULL = always */
	char			*cond_glob;
	char			*pname;
	const struct parser	*p;
};

struct rename {
	char	*from;
	char	*to;
};

struct parser {
	char			*name;
	enum p_base		 base;
	struct clf_tok		 tok[P_MAX_TOKENS];
	size_t			 ntok;
	char			*fields[P_MAX_FIELDS];
	size_t			 nfields;
	bool			 all_fields;
	char			 delim[16];	/* csv: the column separator */
	size_t			 delim_len;
	char			*tfmt;		/* timestamp parser */
	struct rx		*re;
	bool			 extract_sd;
	bool			 debug;
	char			*next_name;
	const struct parser	*next;
	struct decoder		 dec[P_MAX_DECODERS];
	size_t			 ndec;
	char			*excl[P_MAX_FIELDS];
	size_t			 nexcl;
	struct rename		 ren[P_MAX_FIELDS];
	size_t			 nren;
};

struct parsers {
	struct parser	**v;
	size_t		  n;
	struct parser	 *builtin[8];
};

static inline char *
p_dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

#endif
