/*
 * vsphere_xml: a streaming, bounded XML reader over expat for the vSphere
 * API's SOAP answers (docs/vsphere.md).
 *
 * No tree is built: the reader keeps the stack of open elements (local
 * names, namespace prefixes dropped, with their xsi:type and type
 * attributes) and the text of the innermost one, and calls back at each
 * element's start and end.  The caller matches the stack with
 * vx_path_ends() ("propSet/name") and takes what it wants, so an answer of
 * thousands of hosts costs the memory of one element's text.
 *
 * Limits, each a clear error, never a partial value: VX_MAX_BYTES of input
 * (32 MB per answer), VX_MAX_DEPTH open elements, VX_MAX_TEXT bytes of one
 * element's text, VX_MAX_NAME of a name (longer names are refused).  A
 * DOCTYPE (hence any entity declaration: "billion laughs") is refused: SOAP
 * 1.1 forbids it (§3, "A SOAP message MUST NOT contain a Document Type
 * Declaration").
 */
#ifndef ESXWATCH_VSPHERE_XML_H
#define ESXWATCH_VSPHERE_XML_H

#include <stdbool.h>
#include <stddef.h>

#define VX_MAX_BYTES	(32u * 1024 * 1024)
#define VX_MAX_DEPTH	64
#define VX_MAX_TEXT	(256u * 1024)
#define VX_MAX_NAME	96

struct vx;

/*
 * depth: 1 for the root element.  On start, text is ""; on end, the
 * element's own text (character data directly inside it, entity
 * references decoded), NUL-terminated.  A callback returns 0, or -1 to stop
 * the parse (vx_error() is then its message, set with vx_fail()).
 */
struct vx_handler {
	int	(*start)(void *arg, struct vx *x, int depth, const char *name);
	int	(*end)(void *arg, struct vx *x, int depth, const char *name,
		    const char *text, size_t len);
	void	*arg;
};

struct vx	*vx_new(const struct vx_handler *);
/* Feed the next piece of the document: 0, or -1 (vx_error()). */
int		 vx_feed(struct vx *, const void *data, size_t len);
/* The document is complete: 0, or -1 (truncated, malformed). */
int		 vx_finish(struct vx *);
const char	*vx_error(const struct vx *);
/* A whole document in memory through h (vx_new, vx_feed, vx_finish):
 * 0, or -1 with err. */
int		 vx_parse(const struct vx_handler *h, const void *data,
		    size_t len, char *err, size_t errlen);
/* Stop with a message of the caller's (from a callback). */
void		 vx_fail(struct vx *, const char *msg);
void		 vx_free(struct vx *);
/* Bytes fed so far. */
size_t		 vx_bytes(const struct vx *);

/* The open elements (in callbacks): depth, the local name at level 1..depth,
 * and its xsi:type (or type) attribute, "" when none. */
int		 vx_depth(const struct vx *);
const char	*vx_name_at(const struct vx *, int level);
const char	*vx_type_at(const struct vx *, int level);
/* Its unprefixed type attribute only (a ManagedObjectReference's type,
 * "ClusterComputeResource", whatever xsi:type says), "" when none. */
const char	*vx_reftype_at(const struct vx *, int level);
/* Whether the innermost open elements are path ("a/b/c", local names). */
bool		 vx_path_ends(const struct vx *, const char *path);

/* s with & < > " escaped for XML text or attributes into out (NUL-
 * terminated): 0, or -1 when it does not fit. */
int		 vx_escape(const char *s, char *out, size_t outlen);

#endif
