/* Fuzz target auth: JWT verification (auth_verify) against the test keys the Makefile makes
 * for each build (FUZZ_KEY_DIR): decoding, the algorithm pin, the signature, the claims and
 * the roles claim walked along a dotted path.
 *
 * Input: a mode byte, the roles claim path (JWT_ROLES_CLAIM) up to '\n', then
 *   mode % 3 == 0: a token, RS256 pinned;
 *   mode % 3 == 1: a token, ES256 pinned;
 *   mode % 3 == 2: a header JSON line and the claims JSON, signed here with the EC test key,
 *                  ES256 pinned: mutated claims get past the signature to be checked.
 * In modes 0 and 1 a token written as FUZZ_JWT_MARK and its claims is signed here with the
 * pinned algorithm's test key (fuzz_jwt): so are the kept corpus' tokens that must verify.
 * Any other token is verified as it is (another key's signature, alg none, broken ones).
 */
#include "fuzz.h"
#include "auth.h"
#include "config.h"

#define ISSUER "https://auth.courts.local/"

static EVP_PKEY *rsa_private, *ec_private;
static int pinned = -1;			/* mode % 2 of the loaded key */
static char roles_env[4096];		/* putenv()'s string, reused: setenv() would keep each */

/* Pins RS256 (alg 0) or ES256 (alg 1) with its public key; reloads only on a change. */
static void
pin(int alg)
{
	if (alg == pinned)
		return;
	setenv("JWT_ALGORITHM", alg == 0 ? "RS256" : "ES256", 1);
	setenv("JWT_PUBLIC_KEY_FILE", alg == 0 ? FUZZ_KEY_DIR "/rsa_public.pem" :
	    FUZZ_KEY_DIR "/ec_public.pem", 1);
	config_reload();
	auth_reset();
	pinned = alg;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	rsa_private = fuzz_key("rsa_private.pem");
	ec_private = fuzz_key("ec_private.pem");
	setenv("JWT_ISSUER", ISSUER, 1);
	setenv("JWT_AUDIENCE", "courts-api", 1);
	fuzz_arena_use();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auth_claims c;
	const char *why = NULL, *token, *header;
	int mode;

	if (size < 1)
		return 0;
	fuzz_arena_use();
	mode = data[0] % 3;
	data++;
	size--;
	snprintf(roles_env, sizeof roles_env, "JWT_ROLES_CLAIM=%s", fuzz_line(&data, &size));
	putenv(roles_env);
	config_reload();
	pin(mode == 0 ? 0 : 1);
	if (mode == 2) {
		header = fuzz_line(&data, &size);
		if ((token = fuzz_sign(ec_private, header, fuzz_text(data, size))) == NULL)
			return 0;
	} else {
		token = fuzz_jwt(mode == 0 ? rsa_private : ec_private, fuzz_text(data, size));
		if (token == NULL)
			return 0;
	}

	memset(&c, 0, sizeof c);
	if (auth_verify(token, FUZZ_NOW, &c, &why) == 0) {
		FUZZ_CHECK(strcmp(c.issuer, ISSUER) == 0);
		FUZZ_CHECK(c.subject[0] != '\0' && strlen(c.subject) < sizeof c.subject);
		FUZZ_CHECK(c.exp >= FUZZ_NOW - AUTH_LEEWAY_SECONDS);
		FUZZ_CHECK((c.roles & ~(ROLE_OWNER | ROLE_ADMIN)) == 0);
	} else
		FUZZ_CHECK(why != NULL && why[0] != '\0');
	return 0;
}
