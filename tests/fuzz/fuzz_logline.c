/*
 * libFuzzer target: the log line header parser (collectors/logline.c) on
 * arbitrary bytes — no NUL terminator, NULs inside, any length.  Checks
 * that msg stays inside the line and that the appname is a short string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/logline.h"

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
	(void)logline_iso8601(line, size, &ms);
	free(line);
	return 0;
}
