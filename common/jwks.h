/* jwks: the signing keys of an identity provider, read from a JWKS document (RFC 7517).
 *
 * Usable keys are RSA keys of at least 2048 bits for RS256 and EC keys on P-256 for ES256,
 * whose "use" (when present) is "sig" and whose "alg" (when present) is the one their type
 * signs with; every other key of the document is skipped, so a provider that also publishes
 * encryption keys or keys of other algorithms needs no filtering first.
 */
#ifndef COURTS_JWKS_H
#define COURTS_JWKS_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>

#define JWKS_MAX	16
#define JWK_KID_MAX	256

enum jwk_alg { JWK_RS256 = 1, JWK_ES256 };

struct jwk {
	char		kid[JWK_KID_MAX];	/* "" when the key has none */
	enum jwk_alg	alg;
	EVP_PKEY	*key;
};

struct jwks {
	int		n;
	struct jwk	keys[JWKS_MAX];
};

/* Strict base64url as JOSE writes it (no padding, canonical trailing bits) into out; returns
 * the decoded length or -1. out must hold at least (len * 3) / 4 bytes. JWT segments and
 * paging cursors use it too. */
long b64url_decode(const char *in, size_t len, unsigned char *out);

/* Parses a JWKS document of len bytes into *set (which it owns until jwks_free). Returns the
 * number of usable keys, 0 when there is none (*why says so), or -1 when the text is not a
 * JWKS document (*why says why); on 0 and -1, *set holds nothing. */
int jwks_parse(const char *text, size_t len, struct jwks *set, const char **why);

/* The key a token names: the usable key whose kid is kid; for a token without a kid (kid
 * NULL), the only usable key of a set of one. NULL when there is no such key (an empty kid
 * names none). */
const struct jwk *jwks_find(const struct jwks *set, const char *kid);

/* Frees the keys of *set and empties it. */
void jwks_free(struct jwks *set);

#endif
