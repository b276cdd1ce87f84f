/*
 * Fuzz what the sinks read from outside: a Log Insight response body
 * (cfapi_parse_response), `esxcli hardware platform get` output
 * (agentid_parse_esxcli); and what they write from events: the cfapi JSON
 * and syslog encoders must accept any bytes and stay in bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/agentid.h"
#include "../../agent/buf.h"
#include "../../agent/event.h"
#include "../../output/transport.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *s = malloc(len + 1), id[64];
	struct field f[2];
	struct event ev;
	struct syslog_fmt fmt;
	struct buf b = BUF_INIT;
	long long n;

	if (s == NULL)
		return 0;
	memcpy(s, data, len);
	s[len] = '\0';
	cfapi_parse_response(s, len, &n);
	agentid_parse_esxcli(s, id, sizeof(id));

	/* the raw bytes as text and as a field value (names stay valid) */
	memset(&ev, 0, sizeof(ev));
	ev.timestamp_ms = 1733000000123LL;
	ev.text = s;
	f[0].name = (char *)"hostname";
	f[0].value = s + len / 2;
	f[1].name = (char *)"esxwatch_rule";
	f[1].value = s + len / 3;
	ev.fields = f;
	ev.nfields = 2;
	cfapi_encode_event(&ev, &b);
	buf_reset(&b);
	memset(&fmt, 0, sizeof(fmt));
	fmt.facility = 20;
	fmt.sd_id = "esxwatch@32473";
	fmt.hostname = "h";
	fmt.max_msg = len % 512;
	fmt.keep_newlines = len & 1;
	fmt.rfc3164 = (len & 2) != 0;
	syslog_format(&fmt, &ev, &b);
	buf_free(&b);
	free(s);
	return 0;
}
