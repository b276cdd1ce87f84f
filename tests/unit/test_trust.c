/*
 * trust: the SHA-256 (FIPS 180-4 test vectors), base64, the SPKI found in
 * a DER certificate and the resulting pin (checked against what openssl
 * computes for the same certificate), garbage refused, and the pin file:
 * read back, refused when it holds garbage, forgotten by --trust-reset.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "../../agent/config_plugins.h"

#include "../../agent/config/config.h"
#include "../../output/trust.h"

static void
hex(const unsigned char *md, char *out)
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

TEST(sha256_vectors)
{
	static const char *const in[] = { "abc", "",
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq" };
	static const char *const want[] = {
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" };
	unsigned char md[32];
	char h[65], *a;

	for (int i = 0; i < 3; i++) {
		trust_sha256(in[i], strlen(in[i]), md);
		hex(md, h);
		CHECK_STR(h, want[i]);
	}
	/* one million 'a' (FIPS 180-2 appendix B.3) */
	a = malloc(1000000);
	CHECK(a != NULL);
	if (a == NULL)
		return;
	memset(a, 'a', 1000000);
	trust_sha256(a, 1000000, md);
	hex(md, h);
	CHECK_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

TEST(base64)
{
	char out[16];

	trust_b64((const unsigned char *)"f", 1, out);
	CHECK_STR(out, "Zg==");
	trust_b64((const unsigned char *)"fo", 2, out);
	CHECK_STR(out, "Zm8=");
	trust_b64((const unsigned char *)"foo", 3, out);
	CHECK_STR(out, "Zm9v");
	trust_b64((const unsigned char *)"foobar", 6, out);
	CHECK_STR(out, "Zm9vYmFy");
}

/* Made with `openssl req -x509 -newkey ec ...` for this test; the pin is
 * what `openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256
 * | base64` gives (tests/lib/certs.py pin()). */
static const char pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBnjCCAUSgAwIBAgIUKZ37U3B9EjEsREXomdY4HuEE8M4wCgYIKoZIzj0EAwIw\n"
    "FzEVMBMGA1UEAwwMdW5pdC5leGFtcGxlMCAXDTI2MTIwMTIwNDUyOVoYDzIxMjYx\n"
    "MTA3MjA0NTI5WjAXMRUwEwYDVQQDDAx1bml0LmV4YW1wbGUwWTATBgcqhkjOPQIB\n"
    "BggqhkjOPQMBBwNCAAStXUz6zrN9yRP6/Yis6ChI8vVXGjkGp4bRysP4TDMqADPA\n"
    "av0pDjalWiGVz7+C+jNT+w6vCdId4a0epmLTIbaKo2wwajAdBgNVHQ4EFgQUcCce\n"
    "9yXL0sYKU/Lt+lx34BG9q8MwHwYDVR0jBBgwFoAUcCce9yXL0sYKU/Lt+lx34BG9\n"
    "q8MwDwYDVR0TAQH/BAUwAwEB/zAXBgNVHREEEDAOggx1bml0LmV4YW1wbGUwCgYI\n"
    "KoZIzj0EAwIDSAAwRQIhALM3q9Jys1wCe8rvR956KKKRKR/lctewmgrS7pVnm/hx\n"
    "AiBFFuviab1jlWnViRfrWPyVolmjb+Y+DkFQA1kFR9Q6hg==\n"
    "-----END CERTIFICATE-----\n";
#define PEM_PIN	"sha256//XskwvCZuDBQAOYg+nC9mN+GRfSje0VEeWhyVoPFxHjA="

TEST(pem_pin_matches_openssl)
{
	char pin[TRUST_PIN_MAX], bad[sizeof(pem)];
	const unsigned char *spki;
	size_t len;
	unsigned char junk[8] = { 0x30, 0x82, 0xff, 0xff, 0x30, 0x01, 0, 0 };

	CHECK_INT(trust_pem_pin(pem, pin, sizeof(pin)), 0);
	CHECK_STR(pin, PEM_PIN);
	/* truncated, corrupted, not a certificate at all */
	memcpy(bad, pem, sizeof(pem));
	bad[200] = '-';
	bad[201] = '\0';
	CHECK_INT(trust_pem_pin(bad, pin, sizeof(pin)), -1);
	memcpy(bad, pem, sizeof(pem));
	bad[40] = '!';
	CHECK_INT(trust_pem_pin(bad, pin, sizeof(pin)), -1);
	CHECK_INT(trust_pem_pin("no certificate here", pin, sizeof(pin)), -1);
	CHECK_INT(trust_der_spki(junk, sizeof(junk), &spki, &len), -1);
	CHECK_INT(trust_der_spki(junk, 0, &spki, &len), -1);
}

static struct config *
load(const char *dir)
{
	char path[512], text[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/agent.yaml", dir);
	snprintf(text, sizeof(text), "storage: {directory: %s}\n"
	    "server: {hostname: li.example, trust: first_use}\n"
	    "servers:\n  two: {hostname: li2.example, trust: verify}\n", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return config_load(path, NULL, NULL);
}

TEST(pin_file_read_refused_reset)
{
	char dir[] = "/tmp/test_trust.XXXXXX", path[600], msg[1200], err[256];
	struct trust t;
	struct config *cfg;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	cfg = load(dir);
	CHECK(cfg != NULL);
	if (cfg == NULL)
		return;
	CHECK_INT(trust_mode(&cfg->server), TRUST_FIRST_USE);
	CHECK_INT(trust_mode(&cfg->servers[0]), TRUST_VERIFY);
	/* nothing pinned yet */
	CHECK_INT(trust_init(&t, cfg, &cfg->server, "server", true, err,
	    sizeof(err)), 0);
	CHECK_STR(t.pin, "");
	snprintf(path, sizeof(path), "%s/trust-server.pin", dir);
	CHECK_STR(t.path, path);
	/* a pin on disk is read back */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs(PEM_PIN "\n", f);
		fclose(f);
	}
	CHECK_INT(trust_init(&t, cfg, &cfg->server, "server", true, err,
	    sizeof(err)), 0);
	CHECK_STR(t.pin, PEM_PIN);
	/* garbage is refused, not silently re-pinned */
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("sha256//not-a-pin\n", f);
		fclose(f);
	}
	CHECK_INT(trust_init(&t, cfg, &cfg->server, "server", true, err,
	    sizeof(err)), -1);
	CHECK(strstr(err, "--trust-reset server") != NULL);
	/* --trust-reset */
	CHECK_INT(trust_reset(cfg, "server", msg, sizeof(msg)), 0);
	CHECK(access(path, F_OK) == -1);
	CHECK_INT(trust_reset(cfg, "server", msg, sizeof(msg)), 1);
	CHECK_INT(trust_reset(cfg, "two", msg, sizeof(msg)), 1);
	CHECK_INT(trust_reset(cfg, "../etc", msg, sizeof(msg)), -2);
	config_free(cfg);
	snprintf(path, sizeof(path), "%s/agent.yaml", dir);
	unlink(path);
	rmdir(dir);
}

struct msgs {
	int	nerr;
	char	text[2048];
};

static void
collect(void *arg, bool is_error, const char *msg)
{
	struct msgs *m = arg;
	size_t n = strlen(m->text);

	if (is_error)
		m->nerr++;
	snprintf(m->text + n, sizeof(m->text) - n, "%s\n", msg);
}

static struct config *
load_text(const char *dir, const char *text, struct msgs *m)
{
	char path[512];
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/agent.yaml", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return config_load(path, collect, m);
}

TEST(config_keys_trust_auth_and_redaction)
{
	char dir[] = "/tmp/test_trust.XXXXXX", path[600], *out;
	struct config *c;
	struct msgs m;
	size_t len;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	/* defaults */
	c = load_text(dir, "server: {hostname: li}\n", &m);
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_STR(c->server.trust, "verify");
		CHECK_STR(c->server.provider, "Local");
		CHECK_INT(trust_mode(&c->server), TRUST_VERIFY);
		config_free(c);
	}
	/* ssl_accept_any is trust: any, and trust: any sets it */
	c = load_text(dir, "server: {hostname: li, ssl_accept_any: yes}\n", &m);
	CHECK(c != NULL && strcmp(c->server.trust, "any") == 0);
	config_free(c);
	c = load_text(dir, "server: {hostname: li, trust: any}\n", &m);
	CHECK(c != NULL && c->server.ssl_accept_any);
	config_free(c);
	/* contradictions and incomplete logins are errors */
	c = load_text(dir, "server: {hostname: li, trust: verify, "
	    "ssl_accept_any: yes}\n", &m);
	CHECK(c == NULL && strstr(m.text, "contradicts") != NULL);
	config_free(c);
	c = load_text(dir, "server: {hostname: li, username: u}\n", &m);
	CHECK(c == NULL && strstr(m.text, "'password' or 'password_file'"));
	config_free(c);
	c = load_text(dir, "server: {hostname: li, username: u, password: a, "
	    "password_file: /x}\n", &m);
	CHECK(c == NULL && strstr(m.text, "only one"));
	config_free(c);
	c = load_text(dir, "server: {hostname: li, trust: sometimes}\n", &m);
	CHECK(c == NULL && strstr(m.text, "verify, first_use, any") != NULL);
	config_free(c);
	c = load_text(dir, "server: {hostname: li, provider: LDAP}\n", &m);
	CHECK(c == NULL);
	config_free(c);
	/* the password is never printed */
	c = load_text(dir, "server: {hostname: li, username: u, password: "
	    "Sup3rS3cret, provider: ActiveDirectory}\n", &m);
	CHECK(c != NULL);
	if (c != NULL) {
		snprintf(path, sizeof(path), "%s/printed", dir);
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f != NULL) {
			config_print(c, f);
			fclose(f);
		}
		out = t_slurp(path, &len);
		CHECK(out != NULL);
		if (out != NULL) {
			CHECK(strstr(out, "Sup3rS3cret") == NULL);
			CHECK(strstr(out, "password: \"<redacted>\"") != NULL);
			CHECK(strstr(out, "provider: ActiveDirectory") != NULL);
			CHECK(strstr(out, "trust: verify") != NULL);
			free(out);
		}
		unlink(path);
		config_free(c);
	}
	snprintf(path, sizeof(path), "%s/agent.yaml", dir);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	T_PROG("test_trust");
	config_plugins_builtin();
	RUN(sha256_vectors);
	RUN(base64);
	RUN(pem_pin_matches_openssl);
	RUN(pin_file_read_refused_reset);
	RUN(config_keys_trust_auth_and_redaction);
	return t_done();
}
