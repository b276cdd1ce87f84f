/* vsphere_conf: the vsphere: configuration section (vsphere_conf.c). */
#ifndef ESXWATCH_VSPHERE_CONF_H
#define ESXWATCH_VSPHERE_CONF_H

#include "../../agent/config/config_section.h"

extern const struct cfg_section vsphere_section;

#endif
