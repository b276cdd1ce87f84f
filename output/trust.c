/*
 * trust: verify / first_use / any for the TLS destinations (trust.h).
 *
 * The fingerprint is computed here (SHA-256 of the DER SubjectPublicKeyInfo
 * read from the PEM libcurl's CURLINFO_CERTINFO gives) rather than through
 * a TLS library's API, so it works with whichever backend libcurl uses.
 * Verification against a pin is libcurl's own CURLOPT_PINNEDPUBLICKEY.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../agent/config/config_host.h"
#include "../agent/config/config.h"
#include "../agent/lib/fs.h"
#include "../agent/lib/log.h"
#include "../agent/lib/platform.h"
#include "transport.h"
#include "trust.h"

#define PIN_PREFIX	"sha256//"

enum trust_mode
trust_mode(const struct dest_conf *d)
{
	if (d->ssl_accept_any || (d->trust != NULL && strcmp(d->trust, "any") == 0))
		return TRUST_ANY;
	if (d->trust != NULL && strcmp(d->trust, "first_use") == 0)
		return TRUST_FIRST_USE;
	return TRUST_VERIFY;
}

const char *
trust_mode_name(enum trust_mode m)
{
	return m == TRUST_ANY ? "any" : m == TRUST_FIRST_USE ? "first_use" :
	    "verify";
}

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
		    (w[i - 15] >> 3)) + w[i - 7] + (ROR(w[i - 2], 17) ^
		    ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + K256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		k = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void
trust_sha256(const void *data, size_t len, unsigned char out[32])
{
	uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	const unsigned char *p = data;
	unsigned char tail[128];
	uint64_t bits = (uint64_t)len * 8;
	size_t rest, n, i;

	for (n = len; n >= 64; n -= 64, p += 64)
		sha256_block(h, p);
	rest = n;
	memset(tail, 0, sizeof(tail));
	if (rest > 0)
		memcpy(tail, p, rest);
	tail[rest] = 0x80;
	n = rest + 1 + 8 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha256_block(h, tail);
	if (n == 128)
		sha256_block(h, tail + 64);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(h[i] >> 8);
		out[4 * i + 3] = (unsigned char)h[i];
	}
}

/* ---- base64 ---- */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
trust_b64(const unsigned char *in, size_t n, char *out)
{
	size_t i, o = 0;
	uint32_t v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = b64chars[(v >> 6) & 63];
		out[o++] = b64chars[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = b64chars[(v >> 6) & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

static int
b64val(unsigned char ch)
{
	const char *p;

	if (ch == '\0')
		return -1;
	p = strchr(b64chars, ch);
	return p != NULL ? (int)(p - b64chars) : -1;
}

/* Decode base64 text up to "-----" (whitespace skipped).  Returns the
 * length, or -1. */
static long
b64_decode(const char *s, unsigned char *out, size_t outlen)
{
	uint32_t acc = 0;
	size_t o = 0;
	int bits = 0, v;

	for (; *s != '\0' && *s != '-'; s++) {
		if (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
			continue;
		if (*s == '=')
			break;
		v = b64val((unsigned char)*s);
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= outlen)
				return -1;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return (long)o;
}

/* ---- DER ---- */

/* One TLV at *p: tag, and the content [*c, *c + *clen); *p moves past. */
static int
der_next(const unsigned char **p, const unsigned char *end,
    unsigned char *tag, const unsigned char **c, size_t *clen)
{
	const unsigned char *q = *p;
	size_t len = 0, nb, i;

	if (end - q < 2)
		return -1;
	*tag = *q++;
	if ((*tag & 0x1f) == 0x1f)
		return -1;		/* high tag numbers: not in a certificate header */
	if (*q < 0x80)
		len = *q++;
	else {
		nb = *q++ & 0x7f;
		if (nb == 0 || nb > 4 || (size_t)(end - q) < nb)
			return -1;
		for (i = 0; i < nb; i++)
			len = len << 8 | *q++;
	}
	if ((size_t)(end - q) < len)
		return -1;
	*c = q;
	*clen = len;
	*p = q + len;
	return 0;
}

int
trust_der_spki(const unsigned char *der, size_t n,
    const unsigned char **spki, size_t *len)
{
	const unsigned char *p = der, *end = der + n, *c, *start;
	unsigned char tag;
	size_t clen;
	int i;

	/* Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version
	 * OPTIONAL, serial, signature, issuer, validity, subject,
	 * subjectPublicKeyInfo, ... } ... } */
	if (der_next(&p, end, &tag, &c, &clen) == -1 || tag != 0x30)
		return -1;
	p = c;
	end = c + clen;
	if (der_next(&p, end, &tag, &c, &clen) == -1 || tag != 0x30)
		return -1;
	p = c;
	end = c + clen;
	if (p < end && *p == 0xa0 && der_next(&p, end, &tag, &c, &clen) == -1)
		return -1;
	for (i = 0; i < 5; i++)
		if (der_next(&p, end, &tag, &c, &clen) == -1)
			return -1;
	start = p;
	if (der_next(&p, end, &tag, &c, &clen) == -1 || tag != 0x30)
		return -1;
	*spki = start;
	*len = (size_t)(p - start);
	return 0;
}

int
trust_pem_pin(const char *pem, char *out, size_t outlen)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	unsigned char der[16384], md[32];
	const unsigned char *spki;
	const char *p;
	size_t slen;
	long n;

	p = strstr(pem, begin);
	if (p == NULL || outlen < TRUST_PIN_MAX)
		return -1;
	n = b64_decode(p + sizeof(begin) - 1, der, sizeof(der));
	if (n <= 0 || trust_der_spki(der, (size_t)n, &spki, &slen) == -1)
		return -1;
	trust_sha256(spki, slen, md);
	memcpy(out, PIN_PREFIX, sizeof(PIN_PREFIX) - 1);
	trust_b64(md, sizeof(md), out + sizeof(PIN_PREFIX) - 1);
	return 0;
}

/* The pin of the leaf certificate of c's last handshake (CERTINFO on). */
static int
handle_pin(CURL *c, char *out, size_t outlen)
{
	struct curl_certinfo *ci = NULL;
	struct curl_slist *s;

	if (curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) != CURLE_OK ||
	    ci == NULL || ci->num_of_certs < 1)
		return -1;
	for (s = ci->certinfo[0]; s != NULL; s = s->next)
		if (strncmp(s->data, "Cert:", 5) == 0)
			return trust_pem_pin(s->data + 5, out, outlen);
	return -1;
}

/* ---- the pin file ---- */

static int
pin_path(const struct config *cfg, const char *name, char *out, size_t outlen)
{
	const char *dir = cfg != NULL ? config_storage_dir(cfg) : NULL;

	if (dir == NULL || dir[0] == '\0')
		return -1;
	return (size_t)snprintf(out, outlen, "%s/trust-%s.pin", dir, name) <
	    outlen ? 0 : -1;
}

/* 1 pin read, 0 no file, -1 unreadable or not a pin. */
static int
pin_read(const char *path, char *out, size_t outlen)
{
	char b[256];
	ssize_t n;
	int fd;

	fd = fs_open_read(path);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = '\0';
	b[strcspn(b, "\r\n")] = '\0';
	if (strncmp(b, PIN_PREFIX, sizeof(PIN_PREFIX) - 1) != 0 ||
	    strlen(b) != sizeof(PIN_PREFIX) - 1 + 44 ||
	    strspn(b + sizeof(PIN_PREFIX) - 1, b64chars) != 43 ||
	    strlen(b) >= outlen)
		return -1;
	memcpy(out, b, strlen(b) + 1);
	return 1;
}

static int
pin_write(const char *path, const char *pin)
{
	char line[TRUST_PIN_MAX + 1];
	size_t len;

	len = (size_t)snprintf(line, sizeof(line), "%s\n", pin);
	/* The file synced, its directory not: the pin's durability as it
	 * was before this writer was shared. */
	return fs_replace(path, line, len, 0600, FS_SYNC_FILE | FS_TMP_FIXED);
}

int
trust_init(struct trust *t, const struct config *cfg,
    const struct dest_conf *d, const char *name, bool tls, char *err,
    size_t errlen)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->mode = trust_mode(d);
	t->tls = tls;
	snprintf(t->name, sizeof(t->name), "%s", name);
	if (!tls)
		return 0;
	if (t->mode == TRUST_ANY)
		log_warn("%s: ssl_accept_any is set (trust: any): the server's "
		    "certificate is NOT checked; anyone on the path can read "
		    "and change the events", name);
	if (t->mode != TRUST_FIRST_USE)
		return 0;
	if (pin_path(cfg, name, t->path, sizeof(t->path)) == -1) {
		t->path[0] = '\0';
		return 0;
	}
	r = pin_read(t->path, t->pin, sizeof(t->pin));
	if (r == -1) {
		snprintf(err, errlen, "trust: first_use: %s is not a readable "
		    "pin (remove it with esxwatch --trust-reset %s)", t->path,
		    name);
		t->pin[0] = '\0';
		return -1;
	}
	if (r == 1)
		log_info("%s: trust: first_use: the server must present the "
		    "pinned key %s (%s)", name, t->pin, t->path);
	return 0;
}

enum trust_mode
trust_apply(const struct trust *t, const struct dest_conf *d, CURL *c)
{
	enum trust_mode m = t != NULL ? t->mode : trust_mode(d);

	if (m == TRUST_FIRST_USE && t == NULL)
		m = TRUST_VERIFY;
	curl_easy_setopt(c, CURLOPT_PINNEDPUBLICKEY, NULL);
	curl_easy_setopt(c, CURLOPT_CERTINFO, 0L);
	if (m == TRUST_VERIFY) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
		if (d->ssl_ca_path != NULL && d->ssl_ca_path[0] != '\0')
			curl_easy_setopt(c, CURLOPT_CAINFO, d->ssl_ca_path);
		else if (transport_default_ca() != NULL)
			curl_easy_setopt(c, CURLOPT_CAINFO, transport_default_ca());
		return m;
	}
	/* any, and first_use: the pinned key (or, before the first
	 * connection, the certificate read afterwards) is the trust */
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	if (m != TRUST_FIRST_USE)
		return m;
	if (t->pin[0] != '\0')
		curl_easy_setopt(c, CURLOPT_PINNEDPUBLICKEY, t->pin);
	else
		curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
	return m;
}

int
trust_before(struct trust *t, CURL *c, bool *applied)
{
	if (t == NULL || !t->tls || t->mode != TRUST_FIRST_USE ||
	    t->pin[0] == '\0' || *applied)
		return 0;
	curl_easy_setopt(c, CURLOPT_CERTINFO, 0L);
	curl_easy_setopt(c, CURLOPT_PINNEDPUBLICKEY, t->pin);
	*applied = true;
	return 1;
}

static void
pin_save(struct trust *t)
{
	if (t->path[0] == '\0')
		log_warn("%s: trust: first_use: pinned the server's key %s for "
		    "this run only (no storage.directory to keep it in)",
		    t->name, t->pin);
	else if (pin_write(t->path, t->pin) == -1)
		log_warn("%s: trust: first_use: pinned the server's key %s, but "
		    "cannot save it in %s: %s", t->name, t->pin, t->path,
		    log_errstr(errno));
	else
		log_warn("%s: trust: first_use: accepted the certificate "
		    "presented on the first connection and pinned its key %s "
		    "in %s; a different certificate will be refused (esxwatch "
		    "--trust-reset %s forgets it)", t->name, t->pin, t->path,
		    t->name);
}

int
trust_connected(struct trust *t, CURL *c, bool *applied, char *err,
    size_t errlen)
{
	char now[TRUST_PIN_MAX];

	if (t == NULL || !t->tls || t->mode != TRUST_FIRST_USE || *applied)
		return 0;
	if (handle_pin(c, now, sizeof(now)) == -1) {
		snprintf(err, errlen, "trust: first_use: cannot read the "
		    "server's certificate to pin it");
		return -1;
	}
	if (t->pin[0] != '\0' && strcmp(t->pin, now) != 0) {
		snprintf(err, errlen, "the server's certificate changed: pinned "
		    "%s, presented %s; refused (trust: first_use).  If the "
		    "change is expected, run esxwatch --trust-reset %s",
		    t->pin, now, t->name);
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_CERTINFO, 0L);
	curl_easy_setopt(c, CURLOPT_PINNEDPUBLICKEY, now);
	*applied = true;
	if (t->pin[0] == '\0') {
		snprintf(t->pin, sizeof(t->pin), "%s", now);
		pin_save(t);
	}
	return 0;
}

int
trust_peer_pin(const struct dest_conf *d, const char *url, char *out,
    size_t outlen)
{
	struct dest_conf dd = *d;
	struct curl_slist *ct = NULL;
	char eb[CURL_ERROR_SIZE], e[128];
	CURL *c;
	int rc = -1;

	snprintf(out, outlen, "(unknown)");
	c = curl_easy_init();
	if (c == NULL)
		return -1;
	dd.ssl_accept_any = true;
	dd.timeout = transport_timeout(d) < 5 ? transport_timeout(d) : 5;
	if (transport_setup(c, &dd, url, &ct, eb, e, sizeof(e)) == 0) {
		curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
		curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
		if (curl_easy_perform(c) == CURLE_OK &&
		    handle_pin(c, out, outlen) == 0)
			rc = 0;
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(ct);
	return rc;
}

void
trust_describe_mismatch(const struct trust *t, const struct dest_conf *d,
    const char *url, const char *host, char *out, size_t outlen)
{
	char now[TRUST_PIN_MAX + 16];

	trust_peer_pin(d, url, now, sizeof(now));
	snprintf(out, outlen, "the certificate of %s changed: pinned %s, "
	    "presented %s; refused (trust: first_use).  If the change is "
	    "expected, run esxwatch --trust-reset %s", host,
	    t != NULL ? t->pin : "?", now, t != NULL ? t->name : "NAME");
}

int
trust_reset(const struct config *cfg, const char *name, char *msg,
    size_t msglen)
{
	char path[1024];
	bool known = strcmp(name, "server") == 0;

	for (size_t i = 0; !known && i < cfg->nservers; i++)
		known = strcmp(cfg->servers[i].name, name) == 0;
	/* a vsphere: entry's pin is vsphere.NAME (docs/vsphere.md) */
	for (size_t i = 0; !known && i < cfg->nvsphere; i++)
		known = strncmp(name, "vsphere.", 8) == 0 &&
		    strcmp(cfg->vsphere[i].name, name + 8) == 0;
	if (!known) {
		snprintf(msg, msglen, "--trust-reset: no destination named "
		    "\"%.64s\" (server, a servers: name, or vsphere.NAME)", name);
		return -2;
	}
	if (pin_path(cfg, name, path, sizeof(path)) == -1) {
		snprintf(msg, msglen, "no storage.directory to keep pins in");
		return -1;
	}
	if (unlink(path) == 0) {
		snprintf(msg, msglen, "%s: forgot the pinned certificate (%s); "
		    "the next connection pins the one it is shown", name, path);
		return 0;
	}
	if (errno == ENOENT) {
		snprintf(msg, msglen, "%s: no pinned certificate (%s)", name,
		    path);
		return 1;
	}
	snprintf(msg, msglen, "%s: cannot remove %s", name, path);
	return -1;
}
