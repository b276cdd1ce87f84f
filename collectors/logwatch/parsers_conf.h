/*
 * parsers_conf: the configuration's parsers: section as a registry row
 * (agent/config/config_section.h); agent/config_plugins.c hands it to the
 * loader.
 */
#ifndef ESXWATCH_PARSERS_CONF_H
#define ESXWATCH_PARSERS_CONF_H

#include "../../agent/config/config_section.h"

/* parsers: (liagent.ini's [parser|NAME]) */
extern const struct cfg_section parsers_section;
/*
 * The parsers compile and the filelogs name parsers that exist (the
 * filelog row's check); with keep_broken a parser that does not compile
 * is left out with the filelogs that name it.
 */
void	 parsers_check(struct lctx *, struct config *);

#endif
