/* The vSphere client's XML reader (collectors/host/vsphere_xml.c): values
 * by path across any split of the input, and every limit a clear error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../collectors/host/vsphere_xml.h"

struct got {
	char	 names[8][64];
	char	 types[8][64];
	int	 n;
};

static int
on_end(void *arg, struct vx *x, int depth, const char *name, const char *text,
    size_t len)
{
	struct got *g = arg;

	(void)depth;
	(void)name;
	(void)len;
	if (vx_path_ends(x, "propSet/val") && g->n < 8) {
		snprintf(g->names[g->n], sizeof(g->names[0]), "%s", text);
		snprintf(g->types[g->n], sizeof(g->types[0]), "%s",
		    vx_type_at(x, vx_depth(x)));
		g->n++;
	}
	return 0;
}

static const char doc[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>"
    "<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><objects>"
    "<obj type=\"HostSystem\">host-21</obj><propSet><name>name</name>"
    "<val xsi:type=\"xsd:string\">esx&amp;01</val></propSet>"
    "<propSet><name>runtime.connectionState</name>"
    "<val xsi:type=\"HostSystemConnectionState\">connected</val></propSet>"
    "</objects></returnval></RetrievePropertiesExResponse>"
    "</soapenv:Body></soapenv:Envelope>";

static int
parse_split(const char *s, size_t len, size_t piece, struct got *g, char *err,
    size_t errlen)
{
	struct vx_handler h = { NULL, on_end, g };
	struct vx *x = vx_new(&h);
	size_t off = 0;
	int r = 0;

	memset(g, 0, sizeof(*g));
	while (r == 0 && off < len) {
		size_t n = len - off < piece ? len - off : piece;

		r = vx_feed(x, s + off, n);
		off += n;
	}
	if (r == 0)
		r = vx_finish(x);
	snprintf(err, errlen, "%s", vx_error(x));
	vx_free(x);
	return r;
}

static void
test_values(void)
{
	struct got g;
	char err[256];
	size_t piece;

	for (piece = 1; piece <= sizeof(doc); piece += 7) {
		CHECK_INT(parse_split(doc, strlen(doc), piece, &g, err, sizeof(err)), 0);
		CHECK_INT(g.n, 2);
		CHECK_STR(g.names[0], "esx&01");
		CHECK_STR(g.types[0], "string");
		CHECK_STR(g.names[1], "connected");
		CHECK_STR(g.types[1], "HostSystemConnectionState");
	}
}

static void
test_limits(void)
{
	struct got g;
	char err[256], *big;
	size_t i, n;

	/* billion laughs: refused at the DOCTYPE */
	{
		static const char bl[] = "<?xml version=\"1.0\"?><!DOCTYPE l ["
		    "<!ENTITY a \"aa\"><!ENTITY b \"&a;&a;&a;&a;\">]><l>&b;</l>";

		CHECK_INT(parse_split(bl, strlen(bl), 5, &g, err, sizeof(err)), -1);
	}
	CHECK(strstr(err, "DOCTYPE") != NULL);
	/* deep nesting */
	n = 200 * 3 + 1;
	big = malloc(n * 2);
	for (i = 0; i < 200; i++)
		memcpy(big + i * 3, "<a>", 3);
	CHECK_INT(parse_split(big, 600, 4096, &g, err, sizeof(err)), -1);
	CHECK(strstr(err, "deeper") != NULL);
	free(big);
	/* one huge text */
	n = VX_MAX_TEXT + 100;
	big = malloc(n + 16);
	memcpy(big, "<a>", 3);
	memset(big + 3, 'x', n);
	memcpy(big + 3 + n, "</a>", 4);
	CHECK_INT(parse_split(big, n + 7, 65536, &g, err, sizeof(err)), -1);
	CHECK(strstr(err, "text longer") != NULL);
	free(big);
	/* more than VX_MAX_BYTES in total: refused, whatever the content */
	n = 1024 * 1024;
	big = malloc(n);
	for (i = 0; i + 4 <= n; i += 4)
		memcpy(big + i, "<b/>", 4);
	memcpy(big, "<a> ", 4);
	{
		struct vx_handler h = { NULL, NULL, NULL };
		struct vx *x = vx_new(&h);
		int r = 0;

		for (i = 0; r == 0 && i < 40; i++)
			r = vx_feed(x, i == 0 ? big : big + 4, i == 0 ? n : n - 4);
		CHECK_INT(r, -1);
		CHECK(strstr(vx_error(x), "32 MB") != NULL);
		CHECK(vx_bytes(x) <= VX_MAX_BYTES);
		vx_free(x);
	}
	free(big);
	/* truncated */
	CHECK_INT(parse_split(doc, strlen(doc) - 10, 64, &g, err, sizeof(err)), -1);
	CHECK(strstr(err, "not well-formed") != NULL);
}

static void
test_escape(void)
{
	char out[32];

	CHECK_INT(vx_escape("a<b&\"c'", out, sizeof(out)), 0);
	CHECK_STR(out, "a&lt;b&amp;&quot;c&apos;");
	CHECK_INT(vx_escape("<<<<<<<<", out, 10), -1);
}

int
main(void)
{
	RUN(test_values);
	RUN(test_limits);
	RUN(test_escape);
	return t_done();
}
