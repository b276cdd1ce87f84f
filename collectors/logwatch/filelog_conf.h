/*
 * filelog_conf: the configuration's filelog: section as a registry row
 * (agent/config/config_section.h); agent/config_plugins.c hands it to the
 * loader.
 */
#ifndef ESXWATCH_FILELOG_CONF_H
#define ESXWATCH_FILELOG_CONF_H

#include "../../agent/config/config_section.h"

/* filelog: (liagent.ini's [filelog|NAME], [common|filelog] and
 * [common|global]); its check covers what rules and parsers name. */
extern const struct cfg_section filelog_section;

#endif
