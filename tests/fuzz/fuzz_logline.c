/*
 * libFuzzer target: the log line header parser (collectors/logwatch/logline.c) on
 * arbitrary bytes — no NUL terminator, NULs inside, any length.  Checks
 * that msg stays inside the line and that the appname is a short string,
 * and that a syslog relay's prefix before an ISO stamp changes nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/logwatch/logline.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct logline ll;
	char *line, id[128];
	int64_t ms;

	/* An exact-size copy so ASan sees any read past the end. */
	line = malloc(size ? size : 1);
	if (line == NULL)
		return 0;
	memcpy(line, data, size);
	logline_parse(line, size, 1796040000000LL, &ll);
	if (ll.msg < line || ll.msg + ll.msglen != line + size)
		abort();
	if (strlen(ll.appname) >= sizeof(ll.appname) || strlen(ll.severity) >= 3)
		abort();
	if (logline_vob_id(line, size, id, sizeof(id)) >= sizeof(id))
		abort();
	/* Behind a syslog relay's "MMM dd hh:mm:ss HOST " the host's own ISO
	 * stamp wins: the same time, program and message as without it. */
	if (logline_iso8601(line, size, &ms) > 0 && size < 65536) {
		static const char pfx[] = "Nov 28 22:25:19 relay01 ";
		struct logline rl;
		char *rel = malloc(sizeof(pfx) - 1 + size);

		if (rel != NULL) {
			memcpy(rel, pfx, sizeof(pfx) - 1);
			memcpy(rel + sizeof(pfx) - 1, line, size);
			logline_parse(rel, sizeof(pfx) - 1 + size, 1796040000000LL, &rl);
			if (rl.ts_ms != ll.ts_ms || strcmp(rl.appname, ll.appname) != 0 ||
			    rl.msglen != ll.msglen)
				abort();
			free(rel);
		}
	}
	free(line);
	return 0;
}
