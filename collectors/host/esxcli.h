/*
 * esxcli: parse the default (human) output of esxcli/localcli, and run them.
 *
 * esxcli prints one of three shapes:
 *
 *   table    header, a line of dashes, rows.  The runs of '-' give the
 *            column boundaries; keys are the trimmed header names, one
 *            record per row.  (network nic list, storage filesystem list,
 *            storage nfs list, smart get, ...)
 *   block    optional title at column 0 ("NIC statistics for vmnic2"),
 *            then "   Key: value" lines; children of a "Parent:" line,
 *            indented further, become "Parent.Child".  (nic get,
 *            nic stats get, syslog config get, nvme log smart get)
 *   keyed    a list of blocks: each header line (maybe ending in ':')
 *            starts a record whose title is that line, then its indented
 *            "Key: value" lines.  (storage core device list, path list,
 *            vsan storage list)
 *
 * Layout is not trusted: any indentation, tabs, "Key:value" without the
 * space.  A key is words (no '.', ':' or ','), so a device id or path UID
 * line is a record header wherever it is indented; a blank line closes
 * nesting; a record's first key coming round again starts the next
 * record; only an empty "Parent:" has children.
 *
 * One generic parser detects the shape.  A block with a title and a keyed
 * list of one record look the same; they are reported as ESX_BLOCK, so a
 * consumer should look at recs[] and titles, not at the shape.  The
 * keyvalue formatter ("structure[0].Nic.Name.string=vmnic0") is accepted
 * too (ESX_KEYVALUE: one record per structure[N], keys are the field
 * names, "Name").  Values are trimmed (esxcli keeps the SCSI INQUIRY
 * padding: "Vendor: ATA     ").
 *
 * Everything here is bounded: at most ESX_MAX_INPUT bytes of text,
 * ESX_MAX_RECS records, ESX_MAX_KEYS keys per record, ESX_MAX_COLS table
 * columns, and parsed records of at most 8 times the text's size (plus
 * 64 KiB); beyond that the parse fails with a message rather than growing.
 */
#ifndef ESXWATCH_ESXCLI_H
#define ESXWATCH_ESXCLI_H

#include <stddef.h>
#include <stdint.h>

struct config;

enum esx_shape {
	ESX_NONE = 0,		/* empty output: no records */
	ESX_TABLE,
	ESX_BLOCK,
	ESX_KEYED,
	ESX_KEYVALUE		/* --formatter=keyvalue */
};

#define ESX_MAX_INPUT	(16u * 1024 * 1024)
#define ESX_MAX_RECS	100000
#define ESX_MAX_KEYS	4096
#define ESX_MAX_COLS	256

/* One table row, one block, or one keyed record. */
struct esx_rec {
	char	 *title;	/* header line of a block/keyed record; "" for table rows */
	size_t	  n;		/* number of keys */
	char	**keys;
	char	**vals;
};

struct esx_out {
	struct esx_rec	*recs;
	size_t		 n;
	int		 shape;	/* enum esx_shape */
};

/*
 * Parse text[0..len) (need not be NUL-terminated).  Returns 0 with out
 * filled (empty output = 0 records, shape ESX_NONE), or -1 with out empty
 * and a one-line reason in err: an esxcli error line ("Error: Unknown
 * command ..."), text that fits no shape, or a bound exceeded.
 */
int		 esxcli_parse(const char *text, size_t len, struct esx_out *out,
		    char *err, size_t errlen);
/* Value of exactly key in rec, NULL if absent (or rec NULL). */
const char	*esx_get(const struct esx_rec *, const char *key);
/*
 * The keys a collector expects.  esx_want() returns the value of key in
 * rec; when it is absent, the gap is logged (once per command and entity,
 * log_limited) and counted, and NULL returned: never silently absent.
 * esx_gap() does the same for a value present but unparseable (why says
 * so).  cmd names the command ("network nic stats get"), entity the NIC or
 * device ("" when none).
 */
const char	*esx_want(const struct esx_rec *, const char *cmd,
		    const char *entity, const char *key);
void		 esx_gap(const char *cmd, const char *entity, const char *key,
		    const char *why);
/* Expected keys found missing or unparseable since the start. */
uint64_t	 esxcli_parse_gaps(void);
/* Free what esxcli_parse/esxcli_query filled; out is left empty. */
void		 esx_out_free(struct esx_out *);

/*
 * Run `localcli ARGS...` if localcli is found, else `esxcli ARGS...`
 * (host.tools_dir first, both names, then the platform's usual places;
 * timeout_s <= 0 means 30 s), and
 * parse its output.  localcli is preferred because it does not go through
 * hostd, so it still answers when hostd hangs.  args is NULL-terminated and
 * does not include the program name.  On any failure (no tool, exit status,
 * timeout, unparsable output) logs one rate-limited error naming the
 * command, how it ended and the first line of its stderr/stdout, and
 * returns -1 with out empty.
 */
int		 esxcli_query(const struct config *, int timeout_s,
		    const char *const args[], struct esx_out *out);

#endif
