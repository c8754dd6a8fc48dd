/* auth: JWT checks in the order that leaks least: shape, alg pin, signature, then claims. */
#include "auth.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>

#include <cJSON.h>
#include <jwt.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "config.h"
#include "jwks.h"
#include "sql.h"
#include "req.h"
#include "log.h"
#include "problem.h"

#define TOKEN_MAX	8192
#define SIG_MAX		1024

/* The keys tokens are checked against: the one key of JWT_PUBLIC_KEY_FILE (a token's kid is
 * not looked at) or the usable keys of JWT_JWKS_FILE (the token's kid picks one). A process
 * that lives on looks at the file at most once a second and re-reads it when it changed
 * (another inode, size, mtime or ctime): a replaced file, as the refresher writes it, or
 * one edited in place. A version that fails to parse is logged once and the last good keys
 * stay in use. */
static struct jwks keys;
static bool keys_jwks;			/* keys came from JWT_JWKS_FILE */
static struct stat keys_st;		/* the version of the file they came from */
static struct stat bad_st;		/* the last version that failed, logged once */
static bool bad_logged;
static struct timespec keys_looked;	/* CLOCK_MONOTONIC of the last look at the file */

#define KEYS_LOOK_NS	1000000000L
#define JWKS_FILE_MAX	(1024 * 1024)

/* Tokens this process accepted, by the SHA-256 of the token: what the checks gave. A client
 * sends one token with many requests, and a hit skips the signature (RS256 and the claims
 * were about half of a pool worker's own CPU for a request, under load) and the local id's
 * query. The expiry is checked again at every use, and new keys (a rotation, another file)
 * forget them all. Set-associative, TOKEN_WAYS tokens a set, the least recently used one
 * making way: with a slot a token (direct-mapped, 1,024 slots), a thousand players taking
 * turns found their token kept only one time in three, as two tokens sharing a slot push each
 * other out. 4,096 entries of 96 bytes: 384 KiB a process, touched only as tokens come. */
#define TOKEN_SETS	1024
#define TOKEN_WAYS	4
struct token_seen {
	unsigned char	digest[32];	/* SHA-256 of the token */
	unsigned	keys_gen;	/* keys_gen when it was accepted; 0: empty */
	unsigned	roles;
	long		exp;
	unsigned long	used;		/* token_clock at its last use: the set's LRU */
	char		id[37];		/* users.id */
};
static struct token_seen token_cache[TOKEN_SETS][TOKEN_WAYS];
static unsigned long token_clock;
static unsigned keys_gen = 1;	/* changes whenever the keys do */

void
auth_reset(void)
{
	jwks_free(&keys);
	keys_jwks = false;
	memset(&keys_st, 0, sizeof keys_st);
	memset(&bad_st, 0, sizeof bad_st);
	bad_logged = false;
	memset(&keys_looked, 0, sizeof keys_looked);
	keys_gen++;
}

static bool
same_version(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The PEM public key of f into *set as its one key, for the algorithm JWT_ALGORITHM pins. */
static bool
pem_read(FILE *f, struct jwks *set, const char **why)
{
	const char *alg = config_get()->jwt_algorithm;
	EVP_PKEY *k;
	enum jwk_alg want;

	memset(set, 0, sizeof *set);
	if (strcmp(alg, "RS256") == 0)
		want = JWK_RS256;
	else if (strcmp(alg, "ES256") == 0)
		want = JWK_ES256;
	else {
		*why = "cannot be used: JWT_ALGORITHM is neither RS256 nor ES256";
		return false;
	}
	if ((k = PEM_read_PUBKEY(f, NULL, NULL, NULL)) == NULL) {
		*why = "is not a PEM public key";
		return false;
	}
	if (EVP_PKEY_base_id(k) != (want == JWK_RS256 ? EVP_PKEY_RSA : EVP_PKEY_EC)) {
		*why = "is not of the key type JWT_ALGORITHM needs";
		EVP_PKEY_free(k);
		return false;
	}
	set->n = 1;
	set->keys[0].alg = want;
	set->keys[0].key = k;
	return true;
}

/* The JWKS document of f into *set. */
static bool
jwks_read(FILE *f, struct jwks *set, const char **why)
{
	char *text = malloc(JWKS_FILE_MAX + 1);
	size_t len;
	int n;

	if (text == NULL) {
		*why = "could not be read (out of memory)";
		return false;
	}
	len = fread(text, 1, JWKS_FILE_MAX + 1, f);
	if (ferror(f) || len > JWKS_FILE_MAX) {
		*why = len > JWKS_FILE_MAX ? "is larger than 1 MiB" : "could not be read";
		free(text);
		return false;
	}
	n = jwks_parse(text, len, set, why);
	free(text);
	return n > 0;
}

/* Makes the keys ready, re-reading the file when it changed; false when there are none. */
static bool
key_load(void)
{
	const struct config *cfg = config_get();
	bool jwks = cfg->jwt_jwks_file[0] != '\0';
	const char *path = jwks ? cfg->jwt_jwks_file : cfg->jwt_public_key_file;
	const char *name = jwks ? "JWT_JWKS_FILE" : "JWT public key";
	const char *why = NULL;
	struct timespec now;
	struct stat st;
	struct jwks fresh;
	FILE *f;
	bool ok;

	if (keys.n > 0 && keys_jwks == jwks) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - keys_looked.tv_sec) * 1000000000L +
		    (now.tv_nsec - keys_looked.tv_nsec) < KEYS_LOOK_NS)
			return true;
		keys_looked = now;
		/* gone, unchanged, or the version already found broken: the keys stay */
		if (stat(path, &st) != 0 || same_version(&st, &keys_st) ||
		    (bad_logged && same_version(&st, &bad_st)))
			return true;
	}
	if ((f = fopen(path, "r")) == NULL || fstat(fileno(f), &st) != 0) {
		if (f != NULL)
			fclose(f);
		if (keys.n == 0 || keys_jwks != jwks)
			log_msg(NULL, "error", "cannot open %s %s", name, path);
		return keys.n > 0 && keys_jwks == jwks;
	}
	if (bad_logged && same_version(&st, &bad_st)) {
		fclose(f);
		return keys.n > 0 && keys_jwks == jwks;
	}
	ok = jwks ? jwks_read(f, &fresh, &why) : pem_read(f, &fresh, &why);
	fclose(f);
	if (!ok) {
		log_msg(NULL, "error", "%s %s %s%s", name, path, why,
		    keys.n > 0 && keys_jwks == jwks ? "; the keys read before stay in use" : "");
		bad_st = st;
		bad_logged = true;
		return keys.n > 0 && keys_jwks == jwks;
	}
	jwks_free(&keys);
	keys = fresh;
	keys_jwks = jwks;
	keys_st = st;
	keys_gen++;
	bad_logged = false;
	clock_gettime(CLOCK_MONOTONIC, &keys_looked);
	return true;
}

bool
auth_preload(void)
{
	return key_load();
}

/* JWS ES256 signatures are r||s; OpenSSL wants DER. Returns the DER length or -1. */
static int
es256_to_der(const unsigned char *sig, long len, unsigned char *der, size_t cap)
{
	ECDSA_SIG *es;
	BIGNUM *r, *s;
	unsigned char *p = der;
	int n;

	if (len != 64)
		return -1;
	es = ECDSA_SIG_new();
	r = BN_bin2bn(sig, 32, NULL);
	s = BN_bin2bn(sig + 32, 32, NULL);
	if (es == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return -1;
	}
	n = i2d_ECDSA_SIG(es, NULL);
	if (n <= 0 || (size_t)n > cap)
		n = -1;
	else
		n = i2d_ECDSA_SIG(es, &p);
	ECDSA_SIG_free(es);
	return n;
}

static bool
signature_ok(const struct jwk *k, const char *input, size_t input_len, const char *sig64,
    size_t sig64_len)
{
	unsigned char sig[SIG_MAX], der[SIG_MAX];
	const unsigned char *check = sig;
	long len;
	EVP_MD_CTX *ctx;
	bool ok;

	if (sig64_len == 0 || sig64_len > (SIG_MAX * 4) / 3 ||
	    (len = b64url_decode(sig64, sig64_len, sig)) <= 0)
		return false;
	if (k->alg == JWK_ES256) {
		int n = es256_to_der(sig, len, der, sizeof der);

		if (n < 0)
			return false;
		check = der;
		len = n;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return false;
	ok = EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k->key) == 1 &&
	    EVP_DigestVerify(ctx, check, (size_t)len, (const unsigned char *)input,
	    input_len) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

static bool
aud_ok(const cJSON *aud, const char *want)
{
	const cJSON *it;

	if (cJSON_IsString(aud))
		return strcmp(aud->valuestring, want) == 0;
	cJSON_ArrayForEach(it, aud)
		if (cJSON_IsString(it) && strcmp(it->valuestring, want) == 0)
			return true;
	return false;
}

static unsigned
role_bit(const char *name, size_t len)
{
	if (len == 5 && strncmp(name, "OWNER", 5) == 0)
		return ROLE_OWNER;
	if (len == 5 && strncmp(name, "ADMIN", 5) == 0)
		return ROLE_ADMIN;
	return 0;
}

/* Roles from the configured claim: "a.b" walks nested objects; the value is an array of
 * strings or one space-separated string. */
static unsigned
roles_of(const cJSON *claims, const char *path)
{
	const cJSON *v = claims, *it;
	char seg[128];
	const char *p = path, *dot, *s;
	unsigned bits = 0;

	while (v != NULL && *p != '\0') {
		dot = strchr(p, '.');
		snprintf(seg, sizeof seg, "%.*s", (int)(dot != NULL ? dot - p : (long)strlen(p)), p);
		v = cJSON_GetObjectItemCaseSensitive(v, seg);
		p = dot != NULL ? dot + 1 : p + strlen(p);
	}
	if (cJSON_IsString(v)) {
		for (s = v->valuestring; *s != '\0';) {
			size_t n = strcspn(s, " ");

			bits |= role_bit(s, n);
			s += n;
			s += strspn(s, " ");
		}
	} else
		cJSON_ArrayForEach(it, v)
			if (cJSON_IsString(it))
				bits |= role_bit(it->valuestring, strlen(it->valuestring));
	return bits;
}

static int
claims_check(jwt_t *jwt, long now, struct auth_claims *out, const char **why)
{
	const struct config *cfg = config_get();
	char *text = jwt_get_grants_json(jwt, NULL);
	cJSON *claims = text != NULL ? cJSON_Parse(text) : NULL;
	const cJSON *exp, *nbf, *iss, *sub;
	int rc = -1;

	free(text);
	if (claims == NULL) {
		*why = "claims are not a JSON object";
		goto out;
	}
	exp = cJSON_GetObjectItemCaseSensitive(claims, "exp");
	nbf = cJSON_GetObjectItemCaseSensitive(claims, "nbf");
	iss = cJSON_GetObjectItemCaseSensitive(claims, "iss");
	sub = cJSON_GetObjectItemCaseSensitive(claims, "sub");
	if (!cJSON_IsNumber(exp)) {
		*why = "token has no exp";
		goto out;
	}
	if (exp->valuedouble + AUTH_LEEWAY_SECONDS < (double)now) {
		*why = "token expired";
		goto out;
	}
	if (nbf != NULL && (!cJSON_IsNumber(nbf) ||
	    nbf->valuedouble - AUTH_LEEWAY_SECONDS > (double)now)) {
		*why = "token not yet valid";
		goto out;
	}
	if (!cJSON_IsString(iss) || strcmp(iss->valuestring, cfg->jwt_issuer) != 0) {
		*why = "wrong issuer";
		goto out;
	}
	if (!aud_ok(cJSON_GetObjectItemCaseSensitive(claims, "aud"), cfg->jwt_audience)) {
		*why = "wrong audience";
		goto out;
	}
	if (!cJSON_IsString(sub) || sub->valuestring[0] == '\0' ||
	    strlen(sub->valuestring) >= sizeof out->subject) {
		*why = "token has no usable sub";
		goto out;
	}
	snprintf(out->issuer, sizeof out->issuer, "%s", iss->valuestring);
	snprintf(out->subject, sizeof out->subject, "%s", sub->valuestring);
	/* exp is only bounded below: a far one (1e300, or 1e999 read as infinity) must not
	 * overflow the conversion */
	out->exp = exp->valuedouble < (double)LONG_MAX ? (long)exp->valuedouble : LONG_MAX;
	out->roles = roles_of(claims, cfg->jwt_roles_claim);
	rc = 0;
out:
	cJSON_Delete(claims);
	return rc;
}

int
auth_verify(const char *token, long now, struct auth_claims *out, const char **why)
{
	const char *dot1, *dot2;
	const struct jwk *k;
	jwt_t *jwt = NULL;
	int rc = -1;

	*why = "malformed token";
	if (!key_load()) {
		*why = "no usable public key configured";
		return -1;
	}
	if (token == NULL || strlen(token) > TOKEN_MAX ||
	    (dot1 = strchr(token, '.')) == NULL || (dot2 = strchr(dot1 + 1, '.')) == NULL ||
	    strchr(dot2 + 1, '.') != NULL)
		return -1;
	/* libjwt parses header and claims; with no key it checks no signature, which is done
	 * below against the cached key, after the algorithm is pinned */
	if (jwt_decode(&jwt, token, NULL, 0) != 0 || jwt == NULL)
		goto out;
	/* the key the token names (JWKS: by kid), and the algorithm that key signs with; decoded
	 * without a key, libjwt reports alg none: read the header's own claim */
	if ((k = jwks_find(&keys, keys_jwks ? jwt_get_header(jwt, "kid") : NULL)) == NULL) {
		*why = jwt_get_header(jwt, "kid") == NULL ? "no key id (kid), and more than one key" :
		    "unknown key id (kid)";
		goto out;
	}
	if (jwt_get_header(jwt, "alg") == NULL || jwt_str_alg(jwt_get_header(jwt, "alg")) !=
	    (k->alg == JWK_ES256 ? JWT_ALG_ES256 : JWT_ALG_RS256)) {
		*why = "unexpected algorithm";
		goto out;
	}
	if (!signature_ok(k, token, (size_t)(dot2 - token), dot2 + 1, strlen(dot2 + 1))) {
		*why = "bad signature";
		goto out;
	}
	rc = claims_check(jwt, now, out, why);
out:
	jwt_free(jwt);
	return rc;
}

/* The id of the user (iss, sub) that sql (its parameters) answers, NULL if none; -1 in *rc
 * after answering a failure. */
static const char *
user_id_of(struct req *r, const char *sql, const struct auth_claims *c, int *rc)
{
	PGresult *res = sql_query(r, sql, c->issuer, c->subject);

	if (res == NULL)
		*rc = -1;
	return res != NULL && PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : NULL;
}

/* Local id of (iss, sub), created on first sight. 0, or -1 after answering. */
static int
user_resolve(struct req *r, const struct auth_claims *c)
{
	static const char *const look =
	    "SELECT id FROM users WHERE issuer = $1 AND subject = $2";
	const char *id;
	int rc = 0;

	/* nearly always known; when not, inserted, unless a racing first request inserted it
	 * between our look and our insert: then it is found by looking again */
	id = user_id_of(r, look, c, &rc);
	if (id == NULL && rc == 0)
		id = user_id_of(r, "INSERT INTO users (issuer, subject) VALUES ($1, $2) "
		    "ON CONFLICT (issuer, subject) DO NOTHING RETURNING id", c, &rc);
	if (id == NULL && rc == 0)
		id = user_id_of(r, look, c, &rc);
	if (rc != 0)
		return -1;
	if (id == NULL) {
		problem_internal(r);
		return -1;
	}
	r->user_id = arena_strdup(r->a, id);
	return 0;
}

const char *
auth_bearer_token(const char *authorization)
{
	if (authorization == NULL || strncasecmp(authorization, "Bearer ", 7) != 0 ||
	    authorization[7] == '\0')
		return NULL;
	return authorization + 7;
}

static void
unauthorized(struct req *r, const char *challenge, const char *code, const char *detail)
{
	req_add_header(r, "WWW-Authenticate", challenge);
	problem_send(r, 401, code, detail);
}

/* The entry of token in token_cache if it holds one accepted with the current keys and not
 * expired at now, else NULL with *spare the entry a new acceptance is to take (an empty or
 * stale one of the set, or its least recently used); NULL both when it cannot be hashed.
 * Its SHA-256 in digest. */
static struct token_seen *
token_find(const char *token, long now, unsigned char digest[32], struct token_seen **spare)
{
	struct token_seen *set, *e, *dead = NULL, *lru = NULL;
	unsigned len = 0;
	int i;

	*spare = NULL;
	if (EVP_Digest(token, strlen(token), digest, &len, EVP_sha256(), NULL) != 1 || len != 32)
		return NULL;
	set = token_cache[((unsigned)digest[0] << 8 | digest[1]) % TOKEN_SETS];
	for (i = 0; i < TOKEN_WAYS; i++) {
		e = &set[i];
		if (e->keys_gen != keys_gen || e->exp < now - AUTH_LEEWAY_SECONDS) {
			/* empty, of old keys or expired: the first to make way */
			if (dead == NULL)
				dead = e;
		} else if (memcmp(e->digest, digest, 32) == 0) {
			e->used = ++token_clock;
			return e;
		} else if (lru == NULL || e->used < lru->used) {
			lru = e;
		}
	}
	*spare = dead != NULL ? dead : lru;
	return NULL;
}

int
auth_token_or_problem(struct req *r, const char *authorization, unsigned need,
    struct auth_token *t)
{
	const char *why, *token;
	long now = (long)time(NULL);

	memset(t, 0, sizeof *t);
	/* no token is the caller's mistake whatever the state of our key */
	if ((token = auth_bearer_token(authorization)) == NULL) {
		unauthorized(r, "Bearer realm=\"courts\"", "UNAUTHORIZED",
		    "A Bearer token is required.");
		return -1;
	}
	if (!key_load()) {
		/* a server without its key cannot judge any token: nobody can be authenticated
		 * until the operator fixes it (key_load logged why), and a retry may succeed */
		problem_send(r, 503, "AUTH_UNAVAILABLE",
		    "Authentication is temporarily unavailable; retry later.");
		return -1;
	}
	/* accepted before with these keys, and not expired since (auth_verify's test) */
	t->seen = token_find(token, now, t->digest, &t->spare);
	if (t->seen != NULL)
		t->claims.roles = t->seen->roles;
	else if (auth_verify(token, now, &t->claims, &why) != 0) {
		log_msg(r, "info", "token refused: %s", why);
		unauthorized(r, "Bearer realm=\"courts\", error=\"invalid_token\"", "INVALID_TOKEN",
		    why);
		return -1;
	}
	r->roles = t->claims.roles;
	if ((need & t->claims.roles) != need) {
		problem_send(r, 403, "FORBIDDEN", need & ROLE_ADMIN ?
		    "The ADMIN role is required." : "The OWNER role is required.");
		return -1;
	}
	return 0;
}

int
auth_user_or_problem(struct req *r, const struct auth_token *t)
{
	struct token_seen *spare = t->spare;

	if (t->seen != NULL) {
		r->user_id = arena_strdup(r->a, t->seen->id);
		return 0;
	}
	if (user_resolve(r, &t->claims) != 0)
		return -1;
	if (spare != NULL) {
		memcpy(spare->digest, t->digest, sizeof t->digest);
		spare->keys_gen = keys_gen;
		spare->exp = t->claims.exp;
		spare->roles = t->claims.roles;
		spare->used = ++token_clock;
		snprintf(spare->id, sizeof spare->id, "%s", r->user_id);
	}
	return 0;
}
