/* auth: strict base64url and JWT verification with keys made at test time.
 *
 * RSA 2048 and EC P-256 key pairs are generated with OpenSSL; the public PEM goes to a
 * temporary file named by JWT_PUBLIC_KEY_FILE, tokens are signed here with libjwt. */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>

#include "arena.h"
#include "auth.h"
#include "config.h"
#include "jwks.h"
#include "json.h"
#include "unit.h"

#define ISS	"https://idp.unit.test/"
#define AUD	"courts-unit"

/* A key pair as PEM text: the private one signs, the public one goes to a file. */
struct keypair {
	char	*priv;
	int	 priv_len;
	char	*pub;
	int	 pub_len;
	char	 pub_file[64];
};

static struct arena *arena;
static long now;

static char *
bio_text(BIO *b, int *len)
{
	char *data, *copy;
	long n = BIO_get_mem_data(b, &data);

	copy = arena_alloc(arena, (size_t)n + 1);
	memcpy(copy, data, (size_t)n);
	*len = (int)n;
	return copy;
}

/* Generates an RSA pair of bits bits or an EC P-256 pair; false on any OpenSSL failure. */
static bool
keypair_make_type(struct keypair *k, int type, int bits)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(type, NULL);
	EVP_PKEY *pkey = NULL;
	BIO *priv = BIO_new(BIO_s_mem()), *pub = BIO_new(BIO_s_mem());
	FILE *f;
	int fd;
	bool ok = false;

	if (ctx == NULL || priv == NULL || pub == NULL || EVP_PKEY_keygen_init(ctx) != 1)
		goto out;
	if (type == EVP_PKEY_RSA && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) != 1)
		goto out;
	if (type == EVP_PKEY_EC &&
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) != 1)
		goto out;
	if (EVP_PKEY_keygen(ctx, &pkey) != 1 ||
	    PEM_write_bio_PrivateKey(priv, pkey, NULL, NULL, 0, NULL, NULL) != 1 ||
	    PEM_write_bio_PUBKEY(pub, pkey) != 1)
		goto out;
	k->priv = bio_text(priv, &k->priv_len);
	k->pub = bio_text(pub, &k->pub_len);
	snprintf(k->pub_file, sizeof k->pub_file, "/tmp/courts-unit-auth.XXXXXX");
	if ((fd = mkstemp(k->pub_file)) < 0 || (f = fdopen(fd, "w")) == NULL)
		goto out;
	ok = fwrite(k->pub, 1, (size_t)k->pub_len, f) == (size_t)k->pub_len;
	ok = fclose(f) == 0 && ok;
out:
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	BIO_free(priv);
	BIO_free(pub);
	return ok;
}

static bool
keypair_make(struct keypair *k, int type)
{
	return keypair_make_type(k, type, 2048);
}

/* An RSA pair of bits bits (JWKS refuses under 2048). */
static bool
keypair_make_bits(struct keypair *k, int bits)
{
	return keypair_make_type(k, EVP_PKEY_RSA, bits);
}

/* Points the process configuration at key_file with alg and roles_claim. */
static void
configure(const char *key_file, const char *alg, const char *roles_claim)
{
	setenv("JWT_PUBLIC_KEY_FILE", key_file, 1);
	setenv("JWT_ALGORITHM", alg, 1);
	setenv("JWT_ISSUER", ISS, 1);
	setenv("JWT_AUDIENCE", AUD, 1);
	setenv("JWT_ROLES_CLAIM", roles_claim, 1);
	config_reload();
	auth_reset();
}

/* Signs the claims (a JSON object, printf format) with key under alg; the token lives in
 * the arena. key NULL signs nothing (alg none). */
static const char *
mint(const char *key, int key_len, jwt_alg_t alg, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static const char *
mint(const char *key, int key_len, jwt_alg_t alg, const char *fmt, ...)
{
	va_list ap;
	char *claims, *text = NULL;
	const char *token = NULL;
	jwt_t *jwt = NULL;

	va_start(ap, fmt);
	claims = arena_vprintf(arena, fmt, ap);
	va_end(ap);
	if (jwt_new(&jwt) != 0 || jwt_add_grants_json(jwt, claims) != 0 ||
	    jwt_set_alg(jwt, alg, (const unsigned char *)key, key_len) != 0 ||
	    (text = jwt_encode_str(jwt)) == NULL) {
		printf("# cannot sign %s\n", claims);
		goto out;
	}
	token = arena_strdup(arena, text);
out:
	free(text);	/* libjwt 1.10 has no jwt_free_str */
	jwt_free(jwt);
	return token;
}

/* A token with the usual claims signed by k (RS256 or ES256); extra is more JSON members. */
static const char *
mint_std(const struct keypair *k, jwt_alg_t alg, const char *sub, const char *extra)
{
	return mint(k->priv, k->priv_len, alg,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"%s\",\"iat\":%ld,\"exp\":%ld%s%s}",
	    ISS, AUD, sub, now, now + 600, extra[0] != '\0' ? "," : "", extra);
}

/* Verifies token at the test's now; returns 0 / -1 and leaves the reason in *why. */
static int
verify(const char *token, struct auth_claims *c, const char **why)
{
	memset(c, 0, sizeof *c);
	*why = NULL;
	return auth_verify(token, now, c, why);
}

#define REFUSED(token, reason, name) do {				\
	struct auth_claims c_;						\
	const char *why_;						\
	CHECK(verify((token), &c_, &why_) == -1, name);			\
	CHECK_STR(why_, reason, name " (reason)");			\
} while (0)

#define ACCEPTED(token, name) do {					\
	struct auth_claims c_;						\
	const char *why_;						\
	int rc_ = verify((token), &c_, &why_);				\
	CHECK(rc_ == 0, name);						\
	if (rc_ != 0)							\
		printf("#   refused: %s\n", why_ != NULL ? why_ : "?");	\
} while (0)

static void
test_bearer(void)
{
	CHECK_STR(auth_bearer_token("Bearer abc.def.ghi"), "abc.def.ghi", "bearer: the token follows");
	CHECK_STR(auth_bearer_token("bearer abc"), "abc", "bearer: the scheme in any case");
	CHECK_STR(auth_bearer_token("Bearer  abc"), " abc",
	    "bearer: a second space is the token's, and verification refuses it");
	CHECK(auth_bearer_token("Bearer ") == NULL, "bearer: an empty token is none");
	CHECK(auth_bearer_token("Bearer") == NULL, "bearer: the scheme alone is none");
	CHECK(auth_bearer_token("Basic YWxhZGRpbjpvcGVuc2VzYW1l") == NULL, "bearer: Basic is none");
	CHECK(auth_bearer_token("Bearerabc") == NULL, "bearer: no space after the scheme is none");
	CHECK(auth_bearer_token("") == NULL, "bearer: empty header is none");
	CHECK(auth_bearer_token(NULL) == NULL, "bearer: no header is none");
}

static void
test_b64url(void)
{
	static const struct { const char *in, *out; } vec[] = {
		{ "", "" }, { "Zg", "f" }, { "Zm8", "fo" }, { "Zm9v", "foo" }, { "Zm9vYg", "foob" },
		{ "Zm9vYmE", "fooba" }, { "Zm9vYmFy", "foobar" },
		{ "eyJhbGciOiJSUzI1NiJ9", "{\"alg\":\"RS256\"}" },
	};
	unsigned char out[64];
	char name[96];
	size_t i;
	long n;

	for (i = 0; i < sizeof vec / sizeof vec[0]; i++) {
		memset(out, 0, sizeof out);
		n = b64url_decode(vec[i].in, strlen(vec[i].in), out);
		snprintf(name, sizeof name, "b64url: '%s' decodes to '%s'", vec[i].in, vec[i].out);
		CHECK(n == (long)strlen(vec[i].out) && memcmp(out, vec[i].out, (size_t)n) == 0,
		    name);
	}
	n = b64url_decode("-_8", 3, out);
	CHECK(n == 2 && out[0] == 0xfb && out[1] == 0xff, "b64url: '-' and '_' are 62 and 63");
	CHECK(b64url_decode("Zg==", 4, out) == -1, "b64url: padding '==' refused");
	CHECK(b64url_decode("Zm8=", 4, out) == -1, "b64url: padding '=' refused");
	CHECK(b64url_decode("Zh", 2, out) == -1,
	    "b64url: non-zero trailing bits refused ('Zh' would also read as 'f')");
	CHECK(b64url_decode("Zm9", 3, out) == -1,
	    "b64url: non-canonical 3-character group refused ('Zm9' would read as 'fo')");
	CHECK(b64url_decode("Z", 1, out) == -1, "b64url: one leftover character refused");
	CHECK(b64url_decode("Zm9vY", 5, out) == -1, "b64url: length 4n+1 refused");
	CHECK(b64url_decode("+/8", 3, out) == -1, "b64url: standard alphabet '+' '/' refused");
	CHECK(b64url_decode("Zm 9v", 5, out) == -1, "b64url: space refused");
	CHECK(b64url_decode("Zm.9", 4, out) == -1, "b64url: dot refused");
	CHECK(b64url_decode("Zm\0v", 4, out) == -1, "b64url: NUL inside refused");
	CHECK(b64url_decode("Zm9v\xc3\xa9", 6, out) == -1, "b64url: non-ASCII refused");
	/* the length given counts, not the terminator */
	n = b64url_decode("Zm9vYmFy", 4, out);
	CHECK(n == 3 && memcmp(out, "foo", 3) == 0, "b64url: decodes only len characters");
}

/* Splits a token into its three parts (copies in the arena). */
static void
parts(const char *token, const char **head, const char **body, const char **sig)
{
	const char *d1 = strchr(token, '.'), *d2 = strchr(d1 + 1, '.');

	*head = arena_strndup(arena, token, (size_t)(d1 - token));
	*body = arena_strndup(arena, d1 + 1, (size_t)(d2 - d1 - 1));
	*sig = arena_strdup(arena, d2 + 1);
}

static void
test_rs256(const struct keypair *rsa, const struct keypair *other, const struct keypair *ec)
{
	struct auth_claims c;
	const char *why, *tok, *h, *b, *s, *h2, *b2, *s2;
	char *bad;
	size_t len, mid;

	configure(rsa->pub_file, "RS256", "roles");

	tok = mint_std(rsa, JWT_ALG_RS256, "alice", "\"roles\":[\"OWNER\",\"PLAYER\"]");
	CHECK(verify(tok, &c, &why) == 0, "RS256: a valid token is accepted");
	CHECK_STR(c.issuer, ISS, "RS256: issuer copied");
	CHECK_STR(c.subject, "alice", "RS256: subject copied");
	CHECK_INT(c.exp, now + 600, "RS256: exp copied");
	CHECK_INT(c.roles, ROLE_OWNER, "RS256: roles array gives OWNER, unknown roles ignored");

	tok = mint_std(rsa, JWT_ALG_RS256, "bob", "\"roles\":[\"OWNER\",\"ADMIN\"]");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == (ROLE_OWNER | ROLE_ADMIN),
	    "RS256: roles array with OWNER and ADMIN gives both");

	tok = mint_std(rsa, JWT_ALG_RS256, "bob", "\"roles\":\"PLAYER  ADMIN OWNER\"");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == (ROLE_OWNER | ROLE_ADMIN),
	    "RS256: space-separated roles string gives OWNER and ADMIN");

	tok = mint_std(rsa, JWT_ALG_RS256, "bob", "\"roles\":\"OWNERS\"");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == 0, "RS256: 'OWNERS' is not OWNER");

	tok = mint_std(rsa, JWT_ALG_RS256, "bob", "\"roles\":[\"owner\"]");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == 0, "RS256: role names are case-sensitive");

	tok = mint_std(rsa, JWT_ALG_RS256, "carol", "");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == 0,
	    "RS256: a token without roles is accepted with no role");

	/* exp: required, 60 s leeway */
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now - 30);
	ACCEPTED(tok, "exp: 30 s past is inside the leeway");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now - 60);
	ACCEPTED(tok, "exp: exactly 60 s past is still inside the leeway");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now - 61);
	REFUSED(tok, "token expired", "exp: 61 s past is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":1e300}", ISS, AUD);
	CHECK(verify(tok, &c, &why) == 0 && c.exp == LONG_MAX,
	    "exp: beyond any date is accepted and read as the largest time (no overflow)");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now - 3600);
	REFUSED(tok, "token expired", "exp: an hour past is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\"}", ISS, AUD);
	REFUSED(tok, "token has no exp", "exp: missing is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":\"%ld\"}", ISS, AUD, now + 600);
	REFUSED(tok, "token has no exp", "exp: a string is refused");

	/* nbf */
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld,\"nbf\":%ld}", ISS, AUD,
	    now + 600, now + 300);
	REFUSED(tok, "token not yet valid", "nbf: 5 minutes ahead is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld,\"nbf\":%ld}", ISS, AUD,
	    now + 600, now + 30);
	ACCEPTED(tok, "nbf: 30 s ahead is inside the leeway");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld,\"nbf\":%ld}", ISS, AUD,
	    now + 600, now - 10);
	ACCEPTED(tok, "nbf: in the past is accepted");

	/* iss, aud, sub */
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"https://evil.test/\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", AUD,
	    now + 600);
	REFUSED(tok, "wrong issuer", "iss: another issuer is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s/\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now + 600);
	REFUSED(tok, "wrong issuer", "iss: our issuer with an extra character is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", AUD, now + 600);
	REFUSED(tok, "wrong issuer", "iss: missing is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"other-api\",\"sub\":\"x\",\"exp\":%ld}", ISS, now + 600);
	REFUSED(tok, "wrong audience", "aud: another audience is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, now + 600);
	REFUSED(tok, "wrong audience", "aud: missing is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":[\"other-api\",\"%s\"],\"sub\":\"x\",\"exp\":%ld}", ISS, AUD,
	    now + 600);
	ACCEPTED(tok, "aud: an array containing ours is accepted");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":[\"other-api\",\"more-api\"],\"sub\":\"x\",\"exp\":%ld}", ISS,
	    now + 600);
	REFUSED(tok, "wrong audience", "aud: an array without ours is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%ld}", ISS, AUD, now + 600);
	REFUSED(tok, "token has no usable sub", "sub: missing is refused");
	tok = mint(rsa->priv, rsa->priv_len, JWT_ALG_RS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"\",\"exp\":%ld}", ISS, AUD, now + 600);
	REFUSED(tok, "token has no usable sub", "sub: empty is refused");

	/* forgeries */
	tok = mint(rsa->pub, rsa->pub_len, JWT_ALG_HS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now + 600);
	REFUSED(tok, "unexpected algorithm", "forgery: HS256 keyed with the public PEM is refused");
	tok = mint(NULL, 0, JWT_ALG_NONE,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now + 600);
	CHECK(tok != NULL && tok[strlen(tok) - 1] == '.', "forgery: alg none token has no signature");
	REFUSED(tok, "unexpected algorithm", "forgery: alg none is refused");
	tok = mint_std(other, JWT_ALG_RS256, "alice", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "bad signature", "forgery: signed by another RSA key is refused");
	tok = mint_std(ec, JWT_ALG_ES256, "alice", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "unexpected algorithm", "forgery: ES256 token while RS256 is pinned is refused");

	/* payload of one token under the signature of another */
	parts(mint_std(rsa, JWT_ALG_RS256, "alice", "\"roles\":[]"), &h, &b, &s);
	parts(mint_std(rsa, JWT_ALG_RS256, "alice", "\"roles\":[\"ADMIN\"]"), &h2, &b2, &s2);
	REFUSED(arena_printf(arena, "%s.%s.%s", h, b2, s), "bad signature",
	    "forgery: tampered payload (roles added) is refused");
	ACCEPTED(arena_printf(arena, "%s.%s.%s", h2, b2, s2), "forgery: the untampered one passes");

	/* one character changed in the middle of the signature */
	bad = arena_strdup(arena, s);
	mid = strlen(bad) / 2;
	bad[mid] = bad[mid] == 'A' ? 'B' : 'A';
	REFUSED(arena_printf(arena, "%s.%s.%s", h, b, bad), "bad signature",
	    "forgery: a flipped signature character is refused");

	/* 256 bytes take 342 characters whose last carries 4 unused bits: setting one of them
	 * must not give a second valid spelling of the same signature */
	bad = arena_strdup(arena, s);
	len = strlen(bad);
	CHECK_INT(len, 342, "RS256 signature is 342 base64url characters");
	{
		static const char alphabet[] =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
		int v = (int)(strchr(alphabet, bad[len - 1]) - alphabet);

		bad[len - 1] = alphabet[v ^ 1];
	}
	REFUSED(arena_printf(arena, "%s.%s.%s", h, b, bad), "bad signature",
	    "forgery: signature with non-zero unused bits is refused");
	REFUSED(arena_printf(arena, "%s.%s.%s=", h, b, s), "bad signature",
	    "forgery: padded signature is refused");
	REFUSED(arena_printf(arena, "%s.%s.", h, b), "bad signature",
	    "forgery: RS256 header with an empty signature is refused");

	/* shapes */
	REFUSED(arena_printf(arena, "%s.%s", h, b), "malformed token", "shape: two parts refused");
	REFUSED(arena_printf(arena, "%s.%s.%s.%s", h, b, s, s), "malformed token",
	    "shape: four parts refused");
	REFUSED("", "malformed token", "shape: empty token refused");
	REFUSED("not a token", "malformed token", "shape: garbage refused");
	CHECK(verify(NULL, &c, &why) == -1, "shape: NULL refused");
	{
		char *huge = arena_alloc(arena, 9000);

		memset(huge, 'A', 8999);
		huge[100] = '.';
		huge[200] = '.';
		REFUSED(huge, "malformed token", "shape: a token over 8 KiB is refused");
	}
}

static void
test_roles_claim(const struct keypair *rsa)
{
	struct auth_claims c;
	const char *why, *tok;

	configure(rsa->pub_file, "RS256", "realm_access.roles");
	tok = mint_std(rsa, JWT_ALG_RS256, "dave",
	    "\"realm_access\":{\"roles\":[\"OWNER\",\"offline_access\"]},\"roles\":[\"ADMIN\"]");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == ROLE_OWNER,
	    "roles claim: realm_access.roles is read, top-level roles ignored");
	tok = mint_std(rsa, JWT_ALG_RS256, "dave", "\"realm_access\":{\"roles\":\"ADMIN OWNER\"}");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == (ROLE_OWNER | ROLE_ADMIN),
	    "roles claim: nested space-separated string");
	tok = mint_std(rsa, JWT_ALG_RS256, "dave", "\"realm_access\":[\"OWNER\"]");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == 0,
	    "roles claim: realm_access not an object gives no role");
	tok = mint_std(rsa, JWT_ALG_RS256, "dave", "\"roles\":[\"OWNER\"]");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == 0,
	    "roles claim: the default claim is not read when another is configured");
}

static void
test_es256(const struct keypair *rsa, const struct keypair *ec, const struct keypair *ec2)
{
	struct auth_claims c;
	const char *why, *tok;

	configure(ec->pub_file, "ES256", "roles");
	tok = mint_std(ec, JWT_ALG_ES256, "erin", "\"roles\":[\"OWNER\"]");
	CHECK(verify(tok, &c, &why) == 0 && c.roles == ROLE_OWNER && strcmp(c.subject, "erin") == 0,
	    "ES256: a valid token is accepted when ES256 is configured");
	tok = mint_std(rsa, JWT_ALG_RS256, "erin", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "unexpected algorithm", "ES256: an RS256 token is then refused");
	tok = mint_std(ec2, JWT_ALG_ES256, "erin", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "bad signature", "ES256: signed by another P-256 key is refused");
	tok = mint(ec->pub, ec->pub_len, JWT_ALG_HS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now + 600);
	REFUSED(tok, "unexpected algorithm", "ES256: HS256 keyed with the public PEM is refused");

	configure(rsa->pub_file, "ES256", "roles");
	tok = mint_std(rsa, JWT_ALG_RS256, "erin", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "no usable public key configured",
	    "ES256 configured with an RSA key: every token is refused");
	tok = mint_std(ec, JWT_ALG_ES256, "erin", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "no usable public key configured",
	    "ES256 configured with an RSA key: even an ES256 token is refused");

	configure(ec->pub_file, "RS256", "roles");
	tok = mint_std(ec, JWT_ALG_ES256, "erin", "\"roles\":[\"OWNER\"]");
	REFUSED(tok, "no usable public key configured",
	    "RS256 configured with an EC key: refused");

	configure(rsa->pub_file, "HS256", "roles");
	tok = mint(rsa->pub, rsa->pub_len, JWT_ALG_HS256,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"x\",\"exp\":%ld}", ISS, AUD, now + 600);
	REFUSED(tok, "no usable public key configured", "JWT_ALGORITHM=HS256 is never accepted");

	configure("/nonexistent/courts-unit.pem", "RS256", "roles");
	tok = mint_std(rsa, JWT_ALG_RS256, "erin", "");
	REFUSED(tok, "no usable public key configured", "a missing key file refuses every token");

	/* after a reset the right key works again */
	configure(rsa->pub_file, "RS256", "roles");
	ACCEPTED(mint_std(rsa, JWT_ALG_RS256, "erin", ""), "RS256 works again after auth_reset");
}

/* ---- JWKS (JWT_JWKS_FILE) ---------------------------------------------------------------- */

/* base64url without padding of n bytes, in the arena */
static char *
b64url(const unsigned char *in, int n)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	char *out = arena_alloc(arena, (size_t)n * 4 / 3 + 4), *o = out;
	int i;

	for (i = 0; i + 2 < n; i += 3) {
		*o++ = abc[in[i] >> 2];
		*o++ = abc[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		*o++ = abc[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
		*o++ = abc[in[i + 2] & 63];
	}
	if (n - i == 1) {
		*o++ = abc[in[i] >> 2];
		*o++ = abc[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		*o++ = abc[in[i] >> 2];
		*o++ = abc[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		*o++ = abc[(in[i + 1] & 15) << 2];
	}
	*o = '\0';
	return out;
}

static char *
bn_b64url(const EVP_PKEY *k, const char *param, int width)
{
	BIGNUM *bn = NULL;
	unsigned char buf[1024];
	int n;

	if (EVP_PKEY_get_bn_param(k, param, &bn) != 1)
		return arena_strdup(arena, "");
	n = width > 0 ? BN_bn2binpad(bn, buf, width) : BN_bn2bin(bn, buf);
	BN_free(bn);
	return b64url(buf, n);
}

/* The public key of k as a JWK object's members (no braces), with extra members appended. */
static const char *
jwk_of(const struct keypair *k, const char *extra)
{
	BIO *b = BIO_new_mem_buf(k->pub, k->pub_len);
	EVP_PKEY *pkey = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	const char *out;

	BIO_free(b);
	if (pkey == NULL)
		return "\"kty\":\"none\"";
	if (EVP_PKEY_base_id(pkey) == EVP_PKEY_RSA)
		out = arena_printf(arena, "\"kty\":\"RSA\",\"n\":\"%s\",\"e\":\"%s\"%s%s",
		    bn_b64url(pkey, OSSL_PKEY_PARAM_RSA_N, 0), bn_b64url(pkey, OSSL_PKEY_PARAM_RSA_E, 0),
		    extra[0] != '\0' ? "," : "", extra);
	else
		out = arena_printf(arena,
		    "\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"%s%s",
		    bn_b64url(pkey, OSSL_PKEY_PARAM_EC_PUB_X, 32),
		    bn_b64url(pkey, OSSL_PKEY_PARAM_EC_PUB_Y, 32), extra[0] != '\0' ? "," : "", extra);
	EVP_PKEY_free(pkey);
	return out;
}

static char jwks_file[64];

/* Writes text as the JWKS file and points the configuration at it (JWT_ALGORITHM unset). */
static void
configure_jwks(const char *text)
{
	FILE *f = fopen(jwks_file, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	setenv("JWT_JWKS_FILE", jwks_file, 1);
	setenv("JWT_ALGORITHM", "RS256", 1);
	setenv("JWT_ISSUER", ISS, 1);
	setenv("JWT_AUDIENCE", AUD, 1);
	setenv("JWT_ROLES_CLAIM", "roles", 1);
	config_reload();
	auth_reset();
}

/* A usual token signed by k under alg, naming kid in its header (kid NULL: none). */
static const char *
mint_kid(const struct keypair *k, jwt_alg_t alg, const char *kid)
{
	char *claims = arena_printf(arena,
	    "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"kim\",\"iat\":%ld,\"exp\":%ld}",
	    ISS, AUD, now, now + 600), *text = NULL;
	const char *token = NULL;
	jwt_t *jwt = NULL;

	if (jwt_new(&jwt) == 0 && jwt_add_grants_json(jwt, claims) == 0 &&
	    (kid == NULL || jwt_add_header(jwt, "kid", kid) == 0) &&
	    jwt_set_alg(jwt, alg, (const unsigned char *)k->priv, k->priv_len) == 0)
		text = jwt_encode_str(jwt);
	if (text != NULL)
		token = arena_strdup(arena, text);
	free(text);
	jwt_free(jwt);
	return token;
}

static void
test_jwks(const struct keypair *rsa, const struct keypair *other, const struct keypair *ec,
    const struct keypair *small)
{
	struct jwks set;
	const char *why = "", *doc;
	int fd;

	snprintf(jwks_file, sizeof jwks_file, "/tmp/courts-unit-jwks.XXXXXX");
	if ((fd = mkstemp(jwks_file)) >= 0)
		close(fd);

	/* the parser alone */
	CHECK_INT(jwks_parse("[]", 2, &set, &why), -1, "a JSON array is not a JWKS document");
	CHECK_INT(jwks_parse("{\"keys\":{}}", 11, &set, &why), -1, "keys must be an array");
	CHECK_INT(jwks_parse("{\"keys\":[", 9, &set, &why), -1, "broken JSON is not a document");
	CHECK_INT(jwks_parse("{\"keys\":[]}", 11, &set, &why), 0, "no keys: none usable");
	doc = arena_printf(arena, "{\"keys\":[{%s},{%s},{%s},{%s},{%s},{%s},{%s},{%s}]}",
	    jwk_of(rsa, "\"kid\":\"sig\",\"use\":\"sig\",\"alg\":\"RS256\""),
	    jwk_of(other, "\"kid\":\"enc\",\"use\":\"enc\""),
	    jwk_of(other, "\"kid\":\"ps\",\"alg\":\"PS256\""),
	    jwk_of(ec, "\"kid\":\"ec\""),
	    jwk_of(ec, "\"kid\":\"ec-as-rsa\",\"alg\":\"RS256\""),
	    jwk_of(small, "\"kid\":\"small\""),
	    "\"kty\":\"oct\",\"k\":\"c2VjcmV0\",\"kid\":\"hmac\"",
	    "\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"off\",\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"y\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\"");
	CHECK_INT(jwks_parse(doc, strlen(doc), &set, &why), 2,
	    "of eight keys two are usable: enc, PS256, alg mismatch, RSA 1024, oct and a point off the curve are skipped");
	CHECK(jwks_find(&set, "sig") != NULL && jwks_find(&set, "sig")->alg == JWK_RS256,
	    "the RSA signing key is found by its kid, for RS256");
	CHECK(jwks_find(&set, "ec") != NULL && jwks_find(&set, "ec")->alg == JWK_ES256,
	    "the EC key is found by its kid, for ES256");
	CHECK(jwks_find(&set, "enc") == NULL && jwks_find(&set, "small") == NULL &&
	    jwks_find(&set, "off") == NULL, "skipped keys are not found");
	CHECK(jwks_find(&set, NULL) == NULL, "no kid with two keys finds none");
	jwks_free(&set);

	/* through auth_verify */
	configure_jwks(arena_printf(arena, "{\"keys\":[{%s},{%s}]}",
	    jwk_of(rsa, "\"kid\":\"r1\""), jwk_of(ec, "\"kid\":\"e1\"")));
	ACCEPTED(mint_kid(rsa, JWT_ALG_RS256, "r1"), "JWKS: an RS256 token naming its RSA key");
	ACCEPTED(mint_kid(ec, JWT_ALG_ES256, "e1"), "JWKS: an ES256 token naming its EC key");
	REFUSED(mint_kid(rsa, JWT_ALG_RS256, "nope"), "unknown key id (kid)",
	    "JWKS: an unknown kid is refused");
	REFUSED(mint_kid(rsa, JWT_ALG_RS256, NULL), "no key id (kid), and more than one key",
	    "JWKS: no kid with two keys is refused");
	REFUSED(mint_kid(other, JWT_ALG_RS256, "r1"), "bad signature",
	    "JWKS: another key's signature under a known kid is refused");
	REFUSED(mint_kid(ec, JWT_ALG_ES256, "r1"), "unexpected algorithm",
	    "JWKS: ES256 under the kid of an RSA key is refused");
	REFUSED(mint_kid(rsa, JWT_ALG_HS256, "r1"), "unexpected algorithm",
	    "JWKS: HS256 is refused whatever the kid");

	configure_jwks(arena_printf(arena, "{\"keys\":[{%s}]}", jwk_of(ec, "\"kid\":\"only\"")));
	ACCEPTED(mint_kid(ec, JWT_ALG_ES256, NULL), "JWKS: no kid is accepted with exactly one key");
	ACCEPTED(mint_kid(ec, JWT_ALG_ES256, "only"), "JWKS: and so is its kid");

	configure_jwks(arena_printf(arena, "{\"keys\":[{%s}]}",
	    jwk_of(other, "\"kid\":\"x\",\"use\":\"enc\"")));
	REFUSED(mint_kid(other, JWT_ALG_RS256, "x"), "no usable public key configured",
	    "JWKS: a set without a usable key refuses every token");

	configure_jwks("not json");
	REFUSED(mint_kid(rsa, JWT_ALG_RS256, "r1"), "no usable public key configured",
	    "JWKS: a broken file with nothing read before refuses every token");

	/* JWT_JWKS_FILE comes before JWT_PUBLIC_KEY_FILE; unset, the PEM is used again */
	setenv("JWT_PUBLIC_KEY_FILE", rsa->pub_file, 1);
	configure_jwks(arena_printf(arena, "{\"keys\":[{%s}]}", jwk_of(ec, "\"kid\":\"e\"")));
	REFUSED(mint_kid(rsa, JWT_ALG_RS256, NULL), "unexpected algorithm",
	    "JWKS: the PEM key is not used while JWT_JWKS_FILE is set");
	unsetenv("JWT_JWKS_FILE");
	config_reload();
	auth_reset();
	ACCEPTED(mint_kid(rsa, JWT_ALG_RS256, "whatever"),
	    "PEM: the one key is used whatever the token's kid");
	unlink(jwks_file);
}

int
main(void)
{
	struct keypair rsa, other, ec, ec2, small;
	bool keys;

	unit_start();
	arena = arena_new();
	if (arena == NULL)
		return 2;
	/* as the driver does: auth parses claims with cJSON, whose hooks use the arena */
	json_use_arena(arena);
	now = (long)time(NULL);
	memset(&rsa, 0, sizeof rsa);
	memset(&other, 0, sizeof other);
	memset(&ec, 0, sizeof ec);
	memset(&ec2, 0, sizeof ec2);
	memset(&small, 0, sizeof small);

	test_bearer();
	test_b64url();
	keys = keypair_make(&rsa, EVP_PKEY_RSA) && keypair_make(&other, EVP_PKEY_RSA) &&
	    keypair_make(&ec, EVP_PKEY_EC) && keypair_make(&ec2, EVP_PKEY_EC);
	CHECK(keys, "OpenSSL generates two RSA 2048 and two EC P-256 key pairs");
	if (keys) {
		test_rs256(&rsa, &other, &ec);
		test_roles_claim(&rsa);
		test_es256(&rsa, &ec, &ec2);
		keys = keypair_make_bits(&small, 1024);
		CHECK(keys, "OpenSSL generates an RSA 1024 key pair");
		if (keys)
			test_jwks(&rsa, &other, &ec, &small);
	}
	unlink(rsa.pub_file);
	unlink(other.pub_file);
	unlink(ec.pub_file);
	unlink(ec2.pub_file);
	unlink(small.pub_file);
	auth_reset();
	json_use_arena(NULL);
	arena_free(arena);
	return unit_done();
}
