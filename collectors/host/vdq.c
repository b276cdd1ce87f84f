/*
 * vdq: tolerant parser for `vdq -q` / `vdq -qH` (see vdq.h for the why).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vdq.h"

struct vdq_parser {
	const char	*p;
	const char	*end;
	struct vdq_result *res;
	struct vdq_disk	 cur;
	bool		 open;		/* inside a record */
	bool		 any;		/* saw at least one key of the record */
	char		*err;
	size_t		 errlen;
};

static void
copy_val(char *dst, size_t dstlen, const char *s, size_t n)
{
	/* Trim, drop control characters, cut to dstlen-1. */
	size_t	 i, o = 0;

	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	for (i = 0; i < n && o + 1 < dstlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			continue;
		dst[o++] = (char)c;
	}
	dst[o] = '\0';
}

/* Keep only the digits of a number field ("976762"); anything else = "". */
static void
copy_digits(char *dst, size_t dstlen, const char *s, size_t n)
{
	char	 tmp[64];
	size_t	 i;

	copy_val(tmp, sizeof(tmp), s, n);
	for (i = 0; tmp[i] != '\0'; i++)
		if (!isdigit((unsigned char)tmp[i]))
			break;
	if (tmp[i] != '\0' || i == 0 || i >= dstlen) {
		dst[0] = '\0';
		return;
	}
	memcpy(dst, tmp, i + 1);
}

/* A boolean-ish field: "0"/"1" only; vdq prints nothing else. */
static void
copy_flag(char *dst, size_t dstlen, const char *s, size_t n)
{
	char	 tmp[16];

	copy_val(tmp, sizeof(tmp), s, n);
	if ((strcmp(tmp, "0") == 0 || strcmp(tmp, "1") == 0) && dstlen >= 2)
		memcpy(dst, tmp, 2);
	else if (strcasecmp(tmp, "true") == 0 && dstlen >= 2)
		memcpy(dst, "1", 2);
	else if (strcasecmp(tmp, "false") == 0 && dstlen >= 2)
		memcpy(dst, "0", 2);
	else
		dst[0] = '\0';
}

static void
set_key(struct vdq_disk *d, const char *k, size_t kn, const char *v, size_t vn)
{
	char	 key[64];
	size_t	 n;

	copy_val(key, sizeof(key), k, kn);
	n = strlen(key);
	/* vdq -qH spells booleans "IsSSD?". */
	if (n > 0 && key[n - 1] == '?')
		key[n - 1] = '\0';
#define IS(s)	(strcasecmp(key, (s)) == 0)
	if (IS("Name"))
		copy_val(d->name, sizeof(d->name), v, vn);
	else if (IS("VSANUUID"))
		copy_val(d->vsan_uuid, sizeof(d->vsan_uuid), v, vn);
	else if (IS("State"))
		copy_val(d->state, sizeof(d->state), v, vn);
	else if (IS("Reason"))
		copy_val(d->reason, sizeof(d->reason), v, vn);
	else if (IS("IsSSD"))
		copy_flag(d->is_ssd, sizeof(d->is_ssd), v, vn);
	else if (IS("IsCapacityFlash"))
		copy_flag(d->is_capacity_flash, sizeof(d->is_capacity_flash), v, vn);
	else if (IS("IsPDL"))
		copy_flag(d->is_pdl, sizeof(d->is_pdl), v, vn);
	else if (IS("Size(MB)"))
		copy_digits(d->size_mb, sizeof(d->size_mb), v, vn);
	else if (IS("FormatType"))
		copy_val(d->format_type, sizeof(d->format_type), v, vn);
	else if (IS("StoragePoolState"))
		copy_val(d->storage_pool_state, sizeof(d->storage_pool_state), v, vn);
	else if (IS("StoragePoolReason"))
		copy_val(d->storage_pool_reason, sizeof(d->storage_pool_reason), v, vn);
	else if (IS("IsVsanDirectDisk"))
		copy_flag(d->is_vsan_direct, sizeof(d->is_vsan_direct), v, vn);
#undef IS
}

static void
rec_begin(struct vdq_parser *ps)
{
	memset(&ps->cur, 0, sizeof(ps->cur));
	ps->open = true;
	ps->any = false;
}

/* Close the current record: keep it if it names a disk. */
static int
rec_end(struct vdq_parser *ps)
{
	struct vdq_result *r = ps->res;
	struct vdq_disk	*nd;

	if (!ps->open)
		return 0;
	ps->open = false;
	if (!ps->any)
		return 0;		/* "{ }": nothing said, nothing kept */
	/* Without a Name or a State there is nothing to say about a disk. */
	if (ps->cur.name[0] == '\0' || ps->cur.state[0] == '\0') {
		r->skipped++;
		return 0;
	}
	if (r->n >= VDQ_MAX_DISKS) {
		snprintf(ps->err, ps->errlen, "more than %d disks", VDQ_MAX_DISKS);
		return -1;
	}
	nd = realloc(r->disks, (r->n + 1) * sizeof(*nd));
	if (nd == NULL) {
		snprintf(ps->err, ps->errlen, "out of memory");
		return -1;
	}
	r->disks = nd;
	r->disks[r->n++] = ps->cur;
	return 0;
}

/*
 * A quoted string starting at *pp (on the opening quote).  It ends at the
 * closing quote; a newline or the end of input ends an unterminated one.
 * Backslash escapes are kept verbatim (vdq prints none).
 */
static void
scan_string(struct vdq_parser *ps, const char **s, size_t *n)
{
	const char *q = ps->p + 1;

	*s = q;
	while (q < ps->end && *q != '"' && *q != '\n') {
		if (*q == '\\' && q + 1 < ps->end && q[1] != '\n')
			q++;
		q++;
	}
	*n = (size_t)(q - *s);
	ps->p = (q < ps->end && *q == '"') ? q + 1 : q;
}

static void
skip_line_blanks(struct vdq_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r'))
		ps->p++;
}

/* "key" : "value"  (or an unquoted value up to ',', '}' or end of line). */
static int
scan_pair(struct vdq_parser *ps)
{
	const char *k, *v;
	size_t	 kn, vn;

	scan_string(ps, &k, &kn);
	skip_line_blanks(ps);
	if (ps->p >= ps->end || *ps->p != ':')
		return 0;		/* a stray string: ignore it */
	ps->p++;
	skip_line_blanks(ps);
	if (ps->p < ps->end && *ps->p == '"') {
		scan_string(ps, &v, &vn);
	} else {
		v = ps->p;
		while (ps->p < ps->end && *ps->p != ',' && *ps->p != '}' &&
		    *ps->p != '\n')
			ps->p++;
		vn = (size_t)(ps->p - v);
	}
	if (!ps->open)
		rec_begin(ps);		/* a record whose '{' got lost */
	set_key(&ps->cur, k, kn, v, vn);
	ps->any = true;
	return 0;
}

static int
parse_pseudo_json(struct vdq_parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;

		if (c == '{') {
			if (ps->open && rec_end(ps) == -1)
				return -1;
			rec_begin(ps);
			ps->p++;
		} else if (c == '}') {
			if (rec_end(ps) == -1)
				return -1;
			ps->p++;
		} else if (c == '"') {
			if (scan_pair(ps) == -1)
				return -1;
		} else
			ps->p++;
	}
	/* A record cut off before its '}' is a truncated capture: it may lack
	 * the State that matters, so it is counted as skipped, not kept. */
	if (ps->open && ps->any)
		ps->res->skipped++;
	ps->open = false;
	return 0;
}

/*
 * vdq -qH: "DiskResults:", "   DiskResult[N]:", then "   Key:  value".
 * Every DiskResult line starts a record; the last one ends at the input's
 * end (the human form has no closing marker).
 */
static int
parse_human(struct vdq_parser *ps)
{
	while (ps->p < ps->end) {
		const char *ls = ps->p, *le, *colon;

		le = memchr(ls, '\n', (size_t)(ps->end - ls));
		if (le == NULL)
			le = ps->end;
		ps->p = le < ps->end ? le + 1 : le;
		while (ls < le && isspace((unsigned char)*ls))
			ls++;
		if (ls == le)
			continue;
		if ((size_t)(le - ls) >= 10 && strncmp(ls, "DiskResult", 10) == 0) {
			if ((size_t)(le - ls) >= 11 && ls[10] == '[') {
				if (rec_end(ps) == -1)
					return -1;
				rec_begin(ps);
			}
			continue;
		}
		colon = memchr(ls, ':', (size_t)(le - ls));
		if (colon == NULL || !ps->open)
			continue;
		set_key(&ps->cur, ls, (size_t)(colon - ls), colon + 1,
		    (size_t)(le - colon - 1));
		ps->any = true;
	}
	return rec_end(ps);
}

/* strspn() for a buffer that need not be NUL-terminated. */
static size_t
strspn_n(const char *s, size_t n, const char *accept)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(accept, s[i]) == NULL)
			break;
	return i;
}

static void
first_line(char *dst, size_t dstlen, const char *s, size_t n)
{
	const char *e;

	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	e = memchr(s, '\n', n);
	copy_val(dst, dstlen, s, e ? (size_t)(e - s) : n);
}

int
vdq_parse(const char *text, size_t len, struct vdq_result *res, char *err,
    size_t errlen)
{
	struct vdq_parser ps;
	const char	*s;
	size_t		 i;
	bool		 quote = false, brace = false, human = false, blank = true;
	char		 line[120];
	int		 rc;

	memset(res, 0, sizeof(*res));
	if (errlen > 0)
		err[0] = '\0';
	if (len > VDQ_MAX_INPUT) {
		snprintf(err, errlen, "output larger than %u bytes", VDQ_MAX_INPUT);
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (text[i] == '"')
			quote = true;
		else if (text[i] == '{' || text[i] == '[')
			brace = true;
		if (!isspace((unsigned char)text[i]))
			blank = false;
	}
	s = text;
	for (i = 0; i + 10 <= len; i++)
		if (memcmp(text + i, "DiskResult", 10) == 0) {
			human = true;
			break;
		}
	if (blank) {
		snprintf(err, errlen, "empty output");
		return -1;
	}
	if (!quote && !brace && !human) {
		first_line(line, sizeof(line), text, len);
		snprintf(err, errlen, "not vdq output: %s", line);
		return -1;
	}
	memset(&ps, 0, sizeof(ps));
	ps.p = s;
	ps.end = s + len;
	ps.res = res;
	ps.err = err;
	ps.errlen = errlen;
	rc = (human && !quote) ? parse_human(&ps) : parse_pseudo_json(&ps);
	if (rc == -1) {
		vdq_result_free(res);
		return -1;
	}
	if (res->n == 0 && res->skipped == 0 && strspn_n(text, len, "[]{},\" \t\r\n") < len) {
		/* Not one disk and more than an empty list: an error text that
		 * happens to quote or bracket something, not vdq's answer. */
		first_line(line, sizeof(line), text, len);
		snprintf(err, errlen, "not vdq output: %s", line);
		vdq_result_free(res);
		return -1;
	}
	return 0;
}

void
vdq_result_free(struct vdq_result *res)
{
	free(res->disks);
	memset(res, 0, sizeof(*res));
}

enum vdq_state
vdq_state_of(const char *t)
{
	if (t == NULL)
		return VDQ_UNKNOWN;
	while (isspace((unsigned char)*t))
		t++;
	/* "Ineligible for use by VSAN" contains "eligible": test it first. */
	if (strncasecmp(t, "Ineligible", 10) == 0)
		return VDQ_INELIGIBLE;
	if (strncasecmp(t, "Eligible", 8) == 0)
		return VDQ_ELIGIBLE;
	if (strncasecmp(t, "In-use", 6) == 0 || strncasecmp(t, "In use", 6) == 0 ||
	    strncasecmp(t, "Inuse", 5) == 0)
		return VDQ_IN_USE;
	return VDQ_UNKNOWN;
}

const char *
vdq_state_name(enum vdq_state s)
{
	switch (s) {
	case VDQ_ELIGIBLE:	return "eligible";
	case VDQ_INELIGIBLE:	return "ineligible";
	case VDQ_IN_USE:	return "in_use";
	default:		return "unknown";
	}
}
