/*
 * config_plugins: the top layer's table for the configuration loader
 * (config/config_section.h): the sink and collector registries and the
 * sections of their own (monitor, filelog, parsers, rules).  The loader
 * names none of them; main, and every program that loads a configuration,
 * calls config_plugins_builtin() once before the first load.
 */
#ifndef ESXWATCH_CONFIG_PLUGINS_H
#define ESXWATCH_CONFIG_PLUGINS_H

struct cfg_registry;

void	config_plugins_builtin(void);
/* The table itself, for a program that adds rows of its own to a copy
 * (tests/unit/test_cfgsection.c) before config_use(). */
const struct cfg_registry *config_plugins_registry(void);

#endif
