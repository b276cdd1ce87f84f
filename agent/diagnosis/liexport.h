/*
 * liexport: Log Insight content generated from one table (liexport.c):
 * alert definitions for POST /api/v1/alerts and a content pack (.vlcp)
 * with those alerts, dashboards of esxwatch's static fields and the agent
 * configuration snippet (docs/loginsight.md).
 */
#ifndef ESXWATCH_LIEXPORT_H
#define ESXWATCH_LIEXPORT_H

#include "../lib/buf.h"

/* what: "alerts" (a JSON array) or "content-pack" (a JSON object). */
int	liexport_build(const char *what, struct buf *out);
/* esxwatch --export-loginsight WHAT [-o FILE]: 0, 2 usage, 1 write error. */
int	liexport_main(const char *what, const char *path);

#endif
