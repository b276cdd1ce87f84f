/*
 * vsphere_xml: the streaming, bounded XML reader of the vSphere client
 * (vsphere_xml.h), over expat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "vsphere_xml.h"

struct vx_level {
	char	name[VX_MAX_NAME];
	char	type[VX_MAX_NAME];
	char	ref[VX_MAX_NAME];	/* the unprefixed type attribute */
};

struct vx {
	XML_Parser		 p;
	struct vx_handler	 h;
	struct vx_level		 st[VX_MAX_DEPTH + 1];	/* 1..depth */
	int			 depth;
	char			*text;
	size_t			 tlen, tcap;
	size_t			 bytes;
	bool			 failed;
	char			 err[256];
};

void
vx_fail(struct vx *x, const char *msg)
{
	if (!x->failed) {
		snprintf(x->err, sizeof(x->err), "%s", msg);
		x->failed = true;
	}
	XML_StopParser(x->p, XML_FALSE);
}

/* The local part of a qualified name: after the last ':' (the whole name
 * when nothing follows it: "<a:>" is a well-formed name without namespaces). */
static const char *
local_name(const char *q)
{
	const char *c = strrchr(q, ':');

	return c != NULL && c[1] != '\0' ? c + 1 : q;
}

static int
copy_name(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n >= VX_MAX_NAME)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

static void XMLCALL
on_start(void *arg, const XML_Char *qname, const XML_Char **attrs)
{
	struct vx *x = arg;
	struct vx_level *l;
	size_t i;

	if (x->failed)
		return;
	if (x->depth >= VX_MAX_DEPTH) {
		vx_fail(x, "XML nested deeper than the limit (64 elements)");
		return;
	}
	l = &x->st[x->depth + 1];
	if (copy_name(l->name, local_name(qname)) == -1) {
		vx_fail(x, "XML element name longer than the limit");
		return;
	}
	l->type[0] = l->ref[0] = '\0';
	for (i = 0; attrs[i] != NULL && attrs[i + 1] != NULL; i += 2)
		if (strcmp(local_name(attrs[i]), "type") == 0 &&
		    (copy_name(l->type, local_name(attrs[i + 1])) == -1 ||
		    (strcmp(attrs[i], "type") == 0 &&
		    copy_name(l->ref, attrs[i + 1]) == -1))) {
			vx_fail(x, "XML type attribute longer than the limit");
			return;
		}
	x->depth++;
	x->tlen = 0;
	if (x->h.start != NULL && x->h.start(x->h.arg, x, x->depth,
	    l->name) == -1)
		vx_fail(x, "stopped by the reader");
}

static void XMLCALL
on_end(void *arg, const XML_Char *qname)
{
	struct vx *x = arg;
	const char *name;

	(void)qname;
	if (x->failed || x->depth < 1)
		return;
	name = x->st[x->depth].name;
	if (x->text != NULL)
		x->text[x->tlen] = '\0';
	if (x->h.end != NULL && x->h.end(x->h.arg, x, x->depth, name,
	    x->text != NULL ? x->text : "", x->tlen) == -1)
		vx_fail(x, "stopped by the reader");
	x->depth--;
	x->tlen = 0;
}

static void XMLCALL
on_text(void *arg, const XML_Char *s, int len)
{
	struct vx *x = arg;
	size_t need, cap;
	char *t;

	if (x->failed || len <= 0)
		return;
	need = x->tlen + (size_t)len + 1;
	if (need > VX_MAX_TEXT) {
		vx_fail(x, "XML element text longer than the limit (256 KB)");
		return;
	}
	if (need > x->tcap) {
		cap = x->tcap ? x->tcap : 256;
		while (cap < need)
			cap *= 2;
		if (cap > VX_MAX_TEXT)
			cap = VX_MAX_TEXT;
		t = realloc(x->text, cap);
		if (t == NULL) {
			vx_fail(x, "out of memory");
			return;
		}
		x->text = t;
		x->tcap = cap;
	}
	memcpy(x->text + x->tlen, s, (size_t)len);
	x->tlen += (size_t)len;
}

static void XMLCALL
on_doctype(void *arg, const XML_Char *name, const XML_Char *sysid,
    const XML_Char *pubid, int has_internal)
{
	(void)name;
	(void)sysid;
	(void)pubid;
	(void)has_internal;
	vx_fail(arg, "XML with a DOCTYPE refused (SOAP forbids DTDs)");
}

static void XMLCALL
on_entity(void *arg, const XML_Char *name, int pe, const XML_Char *value,
    int vlen, const XML_Char *base, const XML_Char *sysid,
    const XML_Char *pubid, const XML_Char *notation)
{
	(void)name;
	(void)pe;
	(void)value;
	(void)vlen;
	(void)base;
	(void)sysid;
	(void)pubid;
	(void)notation;
	vx_fail(arg, "XML entity declaration refused");
}

struct vx *
vx_new(const struct vx_handler *h)
{
	struct vx *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	x->p = XML_ParserCreate("UTF-8");
	if (x->p == NULL) {
		free(x);
		return NULL;
	}
	if (h != NULL)
		x->h = *h;
	XML_SetUserData(x->p, x);
	XML_SetElementHandler(x->p, on_start, on_end);
	XML_SetCharacterDataHandler(x->p, on_text);
	XML_SetStartDoctypeDeclHandler(x->p, on_doctype);
	XML_SetEntityDeclHandler(x->p, on_entity);
	XML_SetParamEntityParsing(x->p, XML_PARAM_ENTITY_PARSING_NEVER);
	return x;
}

static int
parse(struct vx *x, const void *data, size_t len, int final)
{
	enum XML_Status s;

	if (x->failed)
		return -1;
	if (len > VX_MAX_BYTES || x->bytes + len > VX_MAX_BYTES) {
		vx_fail(x, "XML answer larger than the limit (32 MB)");
		return -1;
	}
	x->bytes += len;
	s = XML_Parse(x->p, data, (int)len, final);
	if (x->failed)
		return -1;
	if (s != XML_STATUS_OK) {
		snprintf(x->err, sizeof(x->err), "XML not well-formed at line "
		    "%lu: %s", (unsigned long)XML_GetCurrentLineNumber(x->p),
		    XML_ErrorString(XML_GetErrorCode(x->p)));
		x->failed = true;
		return -1;
	}
	return 0;
}

int
vx_feed(struct vx *x, const void *data, size_t len)
{
	return parse(x, data, len, 0);
}

int
vx_finish(struct vx *x)
{
	return parse(x, "", 0, 1);
}

const char *
vx_error(const struct vx *x)
{
	return x->failed ? x->err : "";
}

int
vx_parse(const struct vx_handler *h, const void *data, size_t len,
    char *err, size_t errlen)
{
	struct vx *x = vx_new(h);
	int rc;

	if (x == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = vx_feed(x, data, len);
	if (rc == 0)
		rc = vx_finish(x);
	if (rc == -1)
		snprintf(err, errlen, "%s", vx_error(x));
	vx_free(x);
	return rc;
}

size_t
vx_bytes(const struct vx *x)
{
	return x->bytes;
}

void
vx_free(struct vx *x)
{
	if (x == NULL)
		return;
	XML_ParserFree(x->p);
	free(x->text);
	free(x);
}

int
vx_depth(const struct vx *x)
{
	return x->depth;
}

const char *
vx_name_at(const struct vx *x, int level)
{
	return level >= 1 && level <= x->depth ? x->st[level].name : "";
}

const char *
vx_type_at(const struct vx *x, int level)
{
	return level >= 1 && level <= x->depth ? x->st[level].type : "";
}

const char *
vx_reftype_at(const struct vx *x, int level)
{
	return level >= 1 && level <= x->depth ? x->st[level].ref : "";
}

bool
vx_path_ends(const struct vx *x, const char *path)
{
	const char *end = path + strlen(path), *seg;
	int level = x->depth;
	size_t n;

	while (end > path) {
		seg = end;
		while (seg > path && seg[-1] != '/')
			seg--;
		n = (size_t)(end - seg);
		if (level < 1 || strlen(x->st[level].name) != n ||
		    memcmp(x->st[level].name, seg, n) != 0)
			return false;
		level--;
		end = seg > path ? seg - 1 : seg;
	}
	return true;
}

int
vx_escape(const char *s, char *out, size_t outlen)
{
	size_t o = 0, k;
	const char *rep;
	char one[2] = { 0, 0 };

	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&apos;"; break;
		default: one[0] = *s; rep = one; break;
		}
		k = strlen(rep);
		if (o + k >= outlen)
			return -1;
		memcpy(out + o, rep, k);
		o += k;
	}
	if (outlen == 0)
		return -1;
	out[o] = '\0';
	return 0;
}
