/*
 * The bundle reader's parts (agent/analyze/): the tar reader on headers
 * built here (ustar, GNU long name, pax path and size, base-256 size, a
 * bad checksum, a traversal, a symlink in and out), fed byte by byte;
 * the .FRAG joiner; the bundle host's answers from saved outputs.
 */
#include <stdbool.h>

#include "t.h"
#include "../../agent/analyze/frag.h"
#include "../../agent/analyze/tarstream.h"
#include "../../agent/lib/exec.h"
#include "../../collectors/host/bundle.h"
#include "../../collectors/host/esxcli.h"
#include "../../collectors/host/host.h"
#include "../../collectors/host/nicinfo.h"

/* ---- a tar built in memory ----------------------------------------- */

static char ar[64 * 1024];
static size_t arlen;

static void
hdr(const char *name, char type, unsigned long long size, const char *link,
    bool b256)
{
	char *h = ar + arlen;
	unsigned sum = 0;

	memset(h, 0, 512);
	snprintf(h, 100, "%s", name);
	memcpy(h + 100, "0000644", 7);
	if (b256) {
		h[124] = (char)0x80;
		for (int i = 0; i < 8; i++)
			h[135 - i] = (char)(size >> (8 * i));
	} else {
		char num[32];

		snprintf(num, sizeof(num), "%011llo", size & 077777777777ull);
		memcpy(h + 124, num, 11);
	}
	memcpy(h + 136, "14610233710", 11);
	h[156] = type;
	if (link)
		snprintf(h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	arlen += 512;
}

static void
body(const char *data, size_t n)
{
	memcpy(ar + arlen, data, n);
	arlen += (n + 511) / 512 * 512;
}

static void
file(const char *name, const char *data)
{
	hdr(name, '0', strlen(data), NULL, false);
	body(data, strlen(data));
}

struct seen {
	char	 names[16][300];
	char	 data[16][300];
	char	 refused[16][300];
	bool	 hostile[16];
	int	 n, nref, ends;
};

static int
cb_member(void *arg, const struct tar_entry *e)
{
	struct seen *s = arg;

	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", e->path);
	s->data[s->n][0] = '\0';
	s->n++;
	return 1;
}

static int
cb_data(void *arg, const char *p, size_t n)
{
	struct seen *s = arg;
	size_t l = strlen(s->data[s->n - 1]);

	snprintf(s->data[s->n - 1] + l, sizeof(s->data[0]) - l, "%.*s", (int)n, p);
	return 0;
}

static int
cb_end(void *arg)
{
	((struct seen *)arg)->ends++;
	return 0;
}

static void
cb_refused(void *arg, const char *path, const char *why, bool hostile)
{
	struct seen *s = arg;

	snprintf(s->refused[s->nref], sizeof(s->refused[0]), "%s: %s", path, why);
	s->hostile[s->nref++] = hostile;
}

/* Feed the archive one byte at a time: 0 or -1 from tar_finish. */
static int
read_all(struct seen *s, uint64_t cap, char *err, size_t errlen)
{
	struct tar_cb cb = { cb_member, cb_data, cb_end, cb_refused, s };
	struct tar *t = tar_new(&cb, cap);
	int r = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < arlen && r == 0; i++)
		r = tar_feed(t, ar + i, 1);
	if (r == 0)
		r = tar_finish(t);
	snprintf(err, errlen, "%s", tar_error(t));
	tar_free(t);
	return r;
}

TEST(tar_members_long_names_pax_and_refusals)
{
	char longname[200], pax[300], err[256];
	struct seen s;

	arlen = 0;
	file("esx-h/commands/uname_-a.txt", "VMkernel\n");
	hdr("esx-h/var", '5', 0, NULL, false);
	/* GNU long name */
	memset(longname, 'd', sizeof(longname));
	memcpy(longname + 150, "/x.txt", 7);
	hdr("././@LongLink", 'L', strlen(longname) + 1, NULL, false);
	body(longname, strlen(longname) + 1);
	file("ignored-short-name", "long");
	/* pax path and size */
	snprintf(pax, sizeof(pax), "%d path=esx-h/var/run/log/p.log\n",
	    (int)strlen(" path=esx-h/var/run/log/p.log\n") + 2);
	hdr("PaxHeaders/p", 'x', strlen(pax), NULL, false);
	body(pax, strlen(pax));
	file("p", "pax\n");
	/* base-256 size */
	hdr("esx-h/b256.txt", '0', 3, NULL, true);
	body("256", 3);
	file("../../evil", "no");
	file("/etc/abs", "no");
	hdr("esx-h/var/run/log/in.log", '2', 0, "vmkernel.log", false);
	hdr("esx-h/var/run/log/out.log", '2', 0, "/etc/shadow", false);
	hdr("esx-h/dev", '3', 0, NULL, false);
	file("esx-h/big", "0123456789A");
	memset(ar + arlen, 0, 1024);
	arlen += 1024;
	CHECK_INT(read_all(&s, 10, err, sizeof(err)), 0);
	CHECK_INT(s.n, 4);
	CHECK_STR(s.names[0], "esx-h/commands/uname_-a.txt");
	CHECK_STR(s.data[0], "VMkernel\n");
	CHECK(strncmp(s.names[1], "dddd", 4) == 0 && strstr(s.names[1], "/x.txt"));
	CHECK_STR(s.data[1], "long");
	CHECK_STR(s.names[2], "esx-h/var/run/log/p.log");
	CHECK_STR(s.names[3], "esx-h/b256.txt");
	CHECK_STR(s.data[3], "256");
	CHECK_INT(s.ends, 4);
	CHECK_INT(s.nref, 6);
	CHECK(strstr(s.refused[0], "../../evil") && s.hostile[0]);
	CHECK(strstr(s.refused[1], "/etc/abs") && s.hostile[1]);
	CHECK(strstr(s.refused[2], "symbolic link") && !s.hostile[2]);
	CHECK(strstr(s.refused[3], "out.log") && s.hostile[3]);
	CHECK(strstr(s.refused[4], "device") && s.hostile[4]);
	CHECK(strstr(s.refused[5], "over the cap") && s.hostile[5]);
}

TEST(tar_damage_is_an_error)
{
	char err[256];
	struct seen s;

	arlen = 0;
	file("a", "data");
	ar[148] ^= 1;	/* checksum */
	CHECK_INT(read_all(&s, 1 << 20, err, sizeof(err)), -1);
	CHECK(strstr(err, "not a tar") != NULL);
	arlen = 0;
	file("a", "some data");
	arlen -= 512;
	arlen += 4;	/* cut inside the member */
	CHECK_INT(read_all(&s, 1 << 20, err, sizeof(err)), -1);
	CHECK(strstr(err, "truncated") != NULL);
	CHECK_STR(s.names[0], "a");
	CHECK_STR(s.data[0], "some");
	CHECK_INT(s.ends, 0);
}

TEST(path_clean)
{
	char out[64];

	CHECK_INT(tar_path_clean("./a//b/./c", out, sizeof(out)), 0);
	CHECK_STR(out, "a/b/c");
	CHECK_INT(tar_path_clean("a/../b", out, sizeof(out)), -1);
	CHECK_INT(tar_path_clean("..", out, sizeof(out)), -1);
	CHECK_INT(tar_path_clean("/a", out, sizeof(out)), -1);
	CHECK_INT(tar_path_clean("./", out, sizeof(out)), -1);
	CHECK_INT(tar_path_clean("a..b/c", out, sizeof(out)), 0);
	CHECK_INT(tar_path_clean("a\nb", out, sizeof(out)), -1);
	CHECK(tar_link_inside("top/var/log/a.log", "../run/log/a.log", false));
	CHECK(tar_link_inside("top/var/log/a.log", "../../../etc/passwd", false));
	CHECK(!tar_link_inside("top/var/log/a.log", "../../../../etc/passwd", false));
	CHECK(!tar_link_inside("top/a", "/etc/passwd", false));
	CHECK(tar_link_inside("top/a", "top/b", true));
	CHECK(!tar_link_inside("top/a", "../b", true));
	CHECK(!tar_link_inside("a", "..", false));
}

/* ---- the joiner ---------------------------------------------------- */

static char gapline[4][300];
static int ngap;

static void
on_gap(void *arg, const char *line)
{
	(void)arg;
	snprintf(gapline[ngap++ % 4], sizeof(gapline[0]), "%s", line);
}

static void
add(struct frag_store *s, const char *name, const char *data)
{
	CHECK_INT(frag_add(s, name, strdup(data), strlen(data)), 0);
}

TEST(frag_join_in_order_and_refuse_holes)
{
	struct frag_store s;
	struct frag_file *f;
	char base[64];
	int idx;
	long n;

	CHECK_INT(frag_split("x.txt.FRAG-00012", base, sizeof(base), &idx), 0);
	CHECK_STR(base, "x.txt");
	CHECK_INT(idx, 12);
	CHECK_INT(frag_split("x.txt.FRAG-1", base, sizeof(base), &idx), -1);
	CHECK_STR(base, "x.txt.FRAG-1");
	frag_store_init(&s, 1 << 20);
	add(&s, "b.txt.FRAG-00002", "C");
	add(&s, "b.txt.FRAG-00000", "A");
	add(&s, "b.txt.FRAG-00001", "B");
	add(&s, "a.txt", "whole");
	add(&s, "hole.FRAG-00000", "1");
	add(&s, "hole.FRAG-00002", "3");
	add(&s, "late.FRAG-00001", "2");
	ngap = 0;
	n = frag_join(&s, &f, on_gap, NULL);
	CHECK_INT(n, 2);
	CHECK_STR(f[0].name, "a.txt");
	CHECK_STR(f[1].name, "b.txt");
	CHECK_STR(f[1].data, "ABC");
	CHECK_INT(f[1].len, 3);
	CHECK_INT(ngap, 2);
	CHECK(strstr(gapline[0], "hole") && strstr(gapline[0], "missing in the middle"));
	CHECK(strstr(gapline[1], "late") && strstr(gapline[1], "first"));
	frag_files_free(f, (size_t)n);
	frag_store_init(&s, 4);
	CHECK_INT(frag_add(&s, "big", strdup("12345"), 5), -1);	/* over the budget */
	frag_store_free(&s);
}

/* ---- the bundle host ----------------------------------------------- */

static const char nicinfo_txt[] =
    "Network Interface Cards Information.\n\n"
    "Name    PCI Device    Driver  Admin Status  Link Status  Speed  Duplex  MAC Address        MTU   Description\n"
    "------  ------------  ------  ------------  -----------  -----  ------  -----------------  ----  -----------\n"
    "vmnic1  0000:02:01.0  ixgben  Up            Up           10000  Full    00:50:56:b3:b9:89  9000  Intel X520\n"
    "vmnic10 0000:03:00.0  ixgben  Up            Down         0      Half    00:50:56:b3:b9:8a  1500  Intel X520\n\n"
    "NIC:  vmnic1\n\n"
    "NIC statistics for vmnic1\n"
    "   Packets received: 10\n"
    "   Receive CRC errors: 7\n"
    "NIC Private statistics:\n"
    "   rx_crc_errors: 999\n\n"
    "NIC:  vmnic10\n\n"
    "NIC statistics for vmnic10\n"
    "   Receive CRC errors: 3\n";

static const char *
get(void *arg, const char *name, size_t *len)
{
	(void)arg;
	if (strcmp(name, "nicinfo.sh.txt") == 0) {
		*len = sizeof(nicinfo_txt) - 1;
		return nicinfo_txt;
	}
	if (strcmp(name, "localcli_storage-core-device-list.txt") == 0) {
		*len = 0;
		return "";
	}
	return NULL;
}

TEST(bundle_host_answers_from_saved_outputs)
{
	struct bundle_cmds bc = { get, on_gap, NULL };
	struct host *h = bundle_host_new(&bc);
	static const char *const nfs[] = { "storage", "nfs", "list", NULL };
	static const char *const devs[] = { "storage", "core", "device", "list", NULL };
	static const char *const vdq[] = { "-q", NULL };
	struct nic_info *v = NULL;
	struct esx_out o;
	struct exec_result res;
	char name[128];
	int n;

	CHECK_INT(bundle_cmd_name("localcli", nfs, name, sizeof(name)), 0);
	CHECK_STR(name, "localcli_storage-nfs-list.txt");
	n = host_nics(h, NULL, 5, &v);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0].name, "vmnic1");
		CHECK_INT(v[0].ctr[13], 7);	/* from its own block, not vmnic10's, not the private stats */
		CHECK(v[0].have[13]);
		CHECK_STR(v[1].name, "vmnic10");
		CHECK_INT(v[1].ctr[13], 3);
	}
	free(v);
	ngap = 0;
	CHECK_INT(host_esxcli(h, 5, nfs, &o), -1);
	CHECK_INT(host_err(), HOST_EABSENT);
	CHECK_INT(ngap, 1);
	CHECK_INT(host_esxcli(h, 5, devs, &o), 0);
	CHECK_INT(o.n, 0);
	esx_out_free(&o);
	CHECK_INT(host_run(h, "vdq", vdq, 5, &res), -1);
	CHECK_INT(host_err(), HOST_EMISSING);
	exec_result_free(&res);
	host_close(h);
}

int
main(void)
{
	t_prog = "test_bundle";
	RUN(tar_members_long_names_pax_and_refusals);
	RUN(tar_damage_is_an_error);
	RUN(path_clean);
	RUN(frag_join_in_order_and_refuse_holes);
	RUN(bundle_host_answers_from_saved_outputs);
	return t_done();
}
