/*
 * trust: how a TLS destination's certificate is trusted (CONTRACT §4,
 * docs/outputs.md "Connecting to Log Insight").
 *
 *   verify     the CA bundle (ssl_ca_path or the system's) and the host
 *              name, as browsers do; the default of agent.yaml
 *   first_use  liagent's behaviour: the certificate presented on the first
 *              successful connection is accepted and its SPKI SHA-256 is
 *              pinned in storage.directory/trust-NAME.pin (0600); every
 *              later connection must present the same public key
 *   any        no check at all (ssl_accept_any)
 *
 * The pin is what libcurl's CURLOPT_PINNEDPUBLICKEY takes:
 * "sha256//<base64 of the SHA-256 of the DER SubjectPublicKeyInfo>", the
 * same value `openssl x509 -pubkey | openssl pkey -pubin -outform der |
 * openssl dgst -sha256 -binary | base64` prints.
 */
#ifndef ESXWATCH_TRUST_H
#define ESXWATCH_TRUST_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

struct config;
struct dest_conf;

enum trust_mode { TRUST_VERIFY, TRUST_FIRST_USE, TRUST_ANY };

#define TRUST_PIN_MAX	64	/* "sha256//" + 44 base64 + NUL */

struct trust {
	enum trust_mode	 mode;
	bool		 tls;		/* the destination uses TLS at all */
	char		 name[64];	/* destination name, for messages */
	char		 path[1024];	/* the pin file; "" = cannot persist */
	char		 pin[TRUST_PIN_MAX];	/* "" = nothing pinned yet */
};

/* The mode a destination asks for (ssl_accept_any is any). */
enum trust_mode	 trust_mode(const struct dest_conf *);
const char	*trust_mode_name(enum trust_mode);

/*
 * Fill t for destination name (tls: it speaks TLS) and read its pin if
 * there is one; logs the warning `any` deserves.  0, or -1 (err) when a
 * pin file exists but cannot be read or holds no pin: it is refused
 * rather than silently replaced by a new pin.
 */
int	 trust_init(struct trust *, const struct config *,
	    const struct dest_conf *, const char *name, bool tls,
	    char *err, size_t errlen);

/* Set the certificate options of an easy handle for t (NULL: the
 * destination's mode with no pin state, first_use acting as verify).
 * Returns the mode applied. */
enum trust_mode	 trust_apply(const struct trust *, const struct dest_conf *,
		    CURL *);

/*
 * Before a transfer on c (*applied: c already has the pin): when another
 * connection pinned a key since c was set up, set it on c.  Returns 1 if
 * it did (the caller makes a fresh connection), else 0.
 */
int	 trust_before(struct trust *, CURL *c, bool *applied);
/*
 * After a successful transfer on c: with first_use and c not verified
 * against a pin, read the peer's key; nothing pinned yet: pin it (saved,
 * logged at warning level once); pinned already: it must be the same.
 * Sets the pin on c for every later connection.  0 ok or nothing to do,
 * -1 (err) when the key is unreadable or differs: the connection must
 * not be used.
 */
int	 trust_connected(struct trust *, CURL *, bool *applied, char *err,
	    size_t errlen);

/*
 * The pin of the certificate a server presents now, by an unverified
 * handshake to url (only ever after a pinned one failed).  0 or -1.
 */
int	 trust_peer_pin(const struct dest_conf *, const char *url,
	    char *out, size_t outlen);

/* The pin mismatch sentence, with both fingerprints. */
void	 trust_describe_mismatch(const struct trust *, const struct dest_conf *,
	    const char *url, const char *host, char *out, size_t outlen);

/* --trust-reset NAME: forget the pin.  0 removed, 1 there was none, -1
 * cannot, -2 no such destination (msg says why). */
int	 trust_reset(const struct config *, const char *name, char *msg,
	    size_t msglen);

/* Building blocks, exposed for the unit tests. */
void	 trust_sha256(const void *data, size_t len, unsigned char out[32]);
/* base64 (RFC 4648, with padding); out needs 4 * ((n + 2) / 3) + 1. */
void	 trust_b64(const unsigned char *in, size_t n, char *out);
/* The SubjectPublicKeyInfo inside a DER certificate: 0 and *spki, *len
 * pointing into der, or -1 if der is not a certificate. */
int	 trust_der_spki(const unsigned char *der, size_t n,
	    const unsigned char **spki, size_t *len);
/* "-----BEGIN CERTIFICATE-----" PEM text -> pin.  0 or -1. */
int	 trust_pem_pin(const char *pem, char *out, size_t outlen);

#endif
