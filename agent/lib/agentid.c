/*
 * agentid: the host's identity (see agentid.h for the order of
 * preference), resolved once on first use and kept in the object main
 * hands to whoever needs it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentid.h"
#include "exec.h"
#include "fs.h"
#include "log.h"
#include "platform.h"

struct agentid {
	pthread_mutex_t	 mu;
	char		 id[AGENTID_LEN + 1];	/* "" until resolved */
};

struct agentid *
agentid_new(void)
{
	struct agentid *a = calloc(1, sizeof(*a));

	if (a != NULL)
		pthread_mutex_init(&a->mu, NULL);
	return a;
}

void
agentid_free(struct agentid *a)
{
	if (a == NULL)
		return;
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static void
format_uuid(const unsigned char b[16], char *out, size_t outlen)
{
	snprintf(out, outlen, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
agentid_valid(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != AGENTID_LEN)
		return 0;
	for (i = 0; i < AGENTID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (hexval((unsigned char)s[i]) < 0)
			return 0;
	}
	return 1;
}

int
agentid_parse_esxcli(const char *text, char *out, size_t outlen)
{
	const char *p, *eol;
	unsigned char b[16];
	size_t nb = 0, i;
	int v, hi, lo, zero = 1, ones = 1;

	if (outlen < AGENTID_LEN + 1)
		return -1;
	/* The line is "   UUID: 0x4c 0x4c 0x45 ..." (16 bytes, no zero
	 * padding: "0x0"); some builds print one 32-digit hex string or an
	 * already dashed UUID.  Accept all three. */
	for (p = strstr(text, "UUID:"); p != NULL; p = strstr(p + 5, "UUID:"))
		if (p == text || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n')
			break;
	if (p == NULL)
		return -1;
	p += 5;
	eol = strchr(p, '\n');
	if (eol == NULL)
		eol = p + strlen(p);
	while (p < eol) {
		while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '-'))
			p++;
		if (p >= eol)
			break;
		if (p + 1 < eol && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			/* one byte: 0xN or 0xNN */
			p += 2;
			hi = hexval((unsigned char)*p);
			if (hi < 0)
				return -1;
			p++;
			v = hi;
			lo = p < eol ? hexval((unsigned char)*p) : -1;
			if (lo >= 0) {
				v = hi * 16 + lo;
				p++;
			}
			if (p < eol && *p != ' ' && *p != '\t' && *p != '\r')
				return -1;
			if (nb >= 16)
				return -1;
			b[nb++] = (unsigned char)v;
		} else {
			/* bare hex digits, two per byte */
			hi = hexval((unsigned char)*p);
			lo = p + 1 < eol ? hexval((unsigned char)p[1]) : -1;
			if (hi < 0 || lo < 0)
				return -1;
			if (nb >= 16)
				return -1;
			b[nb++] = (unsigned char)(hi * 16 + lo);
			p += 2;
		}
	}
	if (nb != 16)
		return -1;
	for (i = 0; i < 16; i++) {
		if (b[i] != 0)
			zero = 0;
		if (b[i] != 0xff)
			ones = 0;
	}
	if (zero || ones)
		return -1;
	format_uuid(b, out, outlen);
	return 0;
}

int
agentid_generate(char *out, size_t outlen)
{
	unsigned char b[16];
	ssize_t n;
	int fd;

	if (outlen < AGENTID_LEN + 1)
		return -1;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	n = fs_read_upto(fd, b, sizeof(b));
	close(fd);
	if (n != (ssize_t)sizeof(b))
		return -1;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);	/* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	format_uuid(b, out, outlen);
	return 0;
}

static int
read_small(const char *path, char *out, size_t outlen)
{
	ssize_t n;
	int fd;

	fd = fs_open_read(path);
	if (fd == -1)
		return -1;
	n = fs_read_upto(fd, out, outlen - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

int
agentid_stored(const char *dir, char *out, size_t outlen)
{
	char path[4096], id[128];
	size_t len;

	if (outlen < AGENTID_LEN + 1)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/agent-id", dir) >= sizeof(path))
		return -1;
	if (read_small(path, id, sizeof(id)) == 0) {
		if (agentid_valid(id)) {
			snprintf(out, outlen, "%s", id);
			return 0;
		}
		log_warn("%s does not hold a UUID; making a new agent id", path);
	}
	if (agentid_generate(id, sizeof(id)) == -1) {
		log_error("cannot read /dev/urandom for the agent id: %s",
		    log_errstr(errno));
		return -1;
	}
	if (fs_mkdir_p(dir, 0700) == -1) {
		log_error("cannot create %s: %s", dir, log_errstr(errno));
		return -1;
	}
	/* temp + fsync + rename + fsync of the directory: a crash never
	 * leaves a half-written id behind, and a power cut must not give the
	 * host a second identity. */
	len = strlen(id);
	id[len] = '\n';
	if (fs_write_atomic(path, id, len + 1, 0600) == -1) {
		log_error("cannot write %s: %s", path, log_errstr(errno));
		return -1;
	}
	id[len] = '\0';
	snprintf(out, outlen, "%s", id);
	return 0;
}

static int
esxi_bios_uuid(const char *tools_dir, char *out, size_t outlen)
{
	const char *argv[] = { NULL, "hardware", "platform", "get", NULL };
	struct exec_result res;
	char tool[4096];
	int rc = -1;

	if (platform_find_tool(tools_dir, "esxcli", tool, sizeof(tool)) == -1)
		return -1;
	argv[0] = tool;
	memset(&res, 0, sizeof(res));
	if (exec_run(argv, 30000, 64 * 1024, &res) == 0 && res.status == 0 &&
	    res.out != NULL)
		rc = agentid_parse_esxcli(res.out, out, outlen);
	exec_result_free(&res);
	return rc;
}

int
agentid_host(struct agentid *a, const struct agentid_src *src, char *out,
    size_t outlen)
{
	char *cache;
	int rc = 0;

	if (a == NULL || src == NULL || outlen < AGENTID_LEN + 1)
		return -1;
	cache = a->id;
	pthread_mutex_lock(&a->mu);
	if (cache[0] == '\0') {
		if (src->platform == PLATFORM_ESXI &&
		    esxi_bios_uuid(src->tools_dir, cache, sizeof(a->id)) == 0)
			log_debug("agent id: BIOS UUID %s", cache);
		else if (agentid_stored(src->storage_dir, cache,
		    sizeof(a->id)) == -1) {
			/* A full or read-only disk must not stop delivery: use an
			 * id for this run only (Log Insight sees a new agent after
			 * the next start). */
			if (agentid_generate(cache, sizeof(a->id)) == 0)
				log_warn("agent id %s is not saved and holds for this run only",
				    cache);
			else {
				cache[0] = '\0';
				rc = -1;
			}
		}
	}
	if (rc == 0)
		snprintf(out, outlen, "%s", cache);
	pthread_mutex_unlock(&a->mu);
	return rc;
}

int
agentid_get(struct agentid *a, const char *configured,
    const struct agentid_src *src, char *out, size_t outlen)
{
	if (configured != NULL && configured[0] != '\0') {
		if ((size_t)snprintf(out, outlen, "%s", configured) >= outlen)
			return -1;
		return 0;
	}
	return agentid_host(a, src, out, outlen);
}
