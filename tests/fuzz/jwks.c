/* Fuzz target jwks: the JWKS documents of JWT_JWKS_FILE and of the refresher (jwks_parse),
 * and the key lookup by kid (jwks_find). Input: the document's bytes. */
#include "fuzz.h"
#include "jwks.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	const struct jwk *k;
	struct jwks set;
	int n, i;

	fuzz_arena_use();
	memset(&set, 0x5a, sizeof set);		/* whatever was there: the parser owns it */
	n = jwks_parse((const char *)data, size, &set, &why);
	if (n <= 0) {
		/* nothing held, and a reason for the log line */
		FUZZ_CHECK(set.n == 0);
		FUZZ_CHECK(why != NULL && why[0] != '\0');
		FUZZ_CHECK(jwks_find(&set, NULL) == NULL && jwks_find(&set, "") == NULL);
		jwks_free(&set);
		return 0;
	}
	FUZZ_CHECK(n == set.n && n <= JWKS_MAX);
	for (i = 0; i < n; i++) {
		k = &set.keys[i];
		FUZZ_CHECK(k->key != NULL);
		FUZZ_CHECK(k->alg == JWK_RS256 || k->alg == JWK_ES256);
		FUZZ_CHECK(memchr(k->kid, '\0', sizeof k->kid) != NULL);
		FUZZ_CHECK(EVP_PKEY_get_base_id(k->key) ==
		    (k->alg == JWK_ES256 ? EVP_PKEY_EC : EVP_PKEY_RSA));
		if (k->alg == JWK_RS256)
			FUZZ_CHECK(EVP_PKEY_get_bits(k->key) >= 2048);
		/* a named key is found by its name, as the first of the set with that name */
		if (k->kid[0] != '\0') {
			const struct jwk *f = jwks_find(&set, k->kid);

			FUZZ_CHECK(f != NULL && strcmp(f->kid, k->kid) == 0 && f <= k);
		}
	}
	/* a token without kid: only the one key of a set of one */
	FUZZ_CHECK((jwks_find(&set, NULL) != NULL) == (n == 1));
	jwks_free(&set);
	FUZZ_CHECK(set.n == 0);
	return 0;
}
