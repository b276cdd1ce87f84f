/*
 * Fuzz the --analyze HTML report (report_html_write) over any JSON text:
 * it either refuses (-1, EINVAL, nothing written) or writes valid UTF-8
 * in which no string of the input became markup: no script, frame, image,
 * object, event-handler attribute or link out of the page in any tag,
 * whatever the input.
 * Under it: the JSON reader's walk (json_walk_*), json_parse per event and
 * json_str_buf's unescaping.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../agent/analyze/report_html.h"
#include "../../agent/lib/utf8.h"

static const char *const banned[] = { "script", "iframe", "img", "object",
    "embed", "link", "form", "base", "frame", "audio", "video", "image", NULL };

/* Every tag (text is escaped: a '<' starts one of ours) is none of the
 * banned elements, has no event-handler attribute, and links only within
 * the page. */
static int
tags_ok(const char *p, const char *end)
{
	const char *e, *q;
	size_t	 i, n;

	while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		e = memchr(p, '>', (size_t)(end - p));
		if (e == NULL)
			return 0;
		q = p + 1 + (p[1] == '/');
		n = strcspn(q, " >/\n");
		for (i = 0; banned[i] != NULL; i++)
			if (strlen(banned[i]) == n && strncasecmp(q, banned[i], n) == 0)
				return 0;
		for (q = p; q + 6 < e; q++)
			if ((q[0] == ' ' && (q[1] | 0x20) == 'o' && (q[2] | 0x20) == 'n') ||
			    strncasecmp(q, "src=", 4) == 0 ||
			    strncasecmp(q, "javascript:", 11) == 0 ||
			    (strncmp(q, "href=", 5) == 0 && q[6] != '#'))
				return 0;
		p = e + 1;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*out = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&out, &len);
	int	 rc;

	if (f == NULL)
		return 0;
	errno = 0;
	rc = report_html_write(f, (const char *)data, size);
	fclose(f);
	if (rc == -1 && (errno != EINVAL || len != 0))
		abort();	/* refused: EINVAL, not a byte written */
	if (rc == 0) {
		if (!utf8_valid(out, len) || memchr(out, '\0', len) != NULL ||
		    !tags_ok(out, out + len))
			abort();
	}
	free(out);
	return 0;
}
