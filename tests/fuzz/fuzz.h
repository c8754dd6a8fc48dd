/* fuzz.h: what the libFuzzer targets of tests/fuzz/ share.
 *
 * Each target is one file with LLVMFuzzerTestOneInput(); `make fuzz` builds it with clang,
 * AddressSanitizer and UndefinedBehaviorSanitizer over a copy of the library built the same
 * way. Besides memory errors, a target checks what must hold of every answer (FUZZ_CHECK):
 * a broken promise aborts, and libFuzzer keeps the input that broke it.
 */
#ifndef COURTS_FUZZ_H
#define COURTS_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "arena.h"
#include "json.h"
#include "req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The test keys the targets sign and verify tokens with: RSA 2048 and EC P-256, each
 * <alg>_private.pem and <alg>_public.pem, made for each build by the Makefile (absolute path
 * set there) and never kept in the repository. */
#ifndef FUZZ_KEY_DIR
#define FUZZ_KEY_DIR "build/fuzz/keys"
#endif

/* No key is kept with the corpus: a token that must verify is written as this mark and its
 * claims JSON, and the target signs it with a key of this build (fuzz_jwt). */
#define FUZZ_JWT_MARK "@jwt:"

/* A fixed "now" for token checks: the corpus' tokens stay valid whatever the date. */
#define FUZZ_NOW 1750000000L

/* On fd 2 itself: a target may point stderr elsewhere to quiet the library's log lines. */
#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		dprintf(2, "fuzz: check failed at %s:%d: %s\n",	\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/* The arena every target's request lives in, reset per input; cJSON allocates from it as it
 * does under the driver. */
static struct arena *fuzz_arena;

static inline void
fuzz_arena_use(void)
{
	if (fuzz_arena == NULL && (fuzz_arena = arena_new()) == NULL)
		abort();
	arena_reset(fuzz_arena);
	json_use_arena(fuzz_arena);
}

/* The private key FUZZ_KEY_DIR/name; exits when it cannot be read (make fuzz-build makes it). */
static inline EVP_PKEY *
fuzz_key(const char *name)
{
	char path[4096];
	FILE *f;
	EVP_PKEY *key = NULL;

	snprintf(path, sizeof path, "%s/%s", FUZZ_KEY_DIR, name);
	if ((f = fopen(path, "r")) != NULL) {
		key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
	}
	if (key == NULL) {
		dprintf(2, "fuzz: cannot read the private key %s (make fuzz-build)\n", path);
		exit(1);
	}
	return key;
}

/* Appends unpadded base64url of n bytes to out at *o, and a NUL. */
static inline void
fuzz_b64url(char *out, size_t *o, const unsigned char *in, size_t n)
{
	static const char alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned long acc = 0;
	int bits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[(*o)++] = alphabet[(acc >> bits) & 63];
		}
		acc &= (1UL << bits) - 1;
	}
	if (bits > 0)
		out[(*o)++] = alphabet[(acc << (6 - bits)) & 63];
	out[*o] = '\0';
}

/* The token header.claims, whatever bytes they are, signed with key: RS256 with an RSA key,
 * ES256 (r || s) with an EC P-256 key. In the arena; NULL when OpenSSL fails. */
static inline char *
fuzz_sign(EVP_PKEY *key, const char *header, const char *claims)
{
	size_t hn = strlen(header), cn = strlen(claims), o = 0, slen = 0;
	bool ec = EVP_PKEY_get_base_id(key) == EVP_PKEY_EC;
	char *tok = arena_alloc(fuzz_arena, (hn + cn) * 4 / 3 + 512);
	unsigned char sig[512], rs[64];
	const unsigned char *p = sig;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	ECDSA_SIG *es = NULL;
	char *out = NULL;

	fuzz_b64url(tok, &o, (const unsigned char *)header, hn);
	tok[o++] = '.';
	fuzz_b64url(tok, &o, (const unsigned char *)claims, cn);
	slen = sizeof sig;
	if (ctx == NULL || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(ctx, sig, &slen, (const unsigned char *)tok, o) != 1)
		goto out;
	if (ec) {
		if ((es = d2i_ECDSA_SIG(NULL, &p, (long)slen)) == NULL ||
		    BN_bn2binpad(ECDSA_SIG_get0_r(es), rs, 32) != 32 ||
		    BN_bn2binpad(ECDSA_SIG_get0_s(es), rs + 32, 32) != 32)
			goto out;
		memcpy(sig, rs, sizeof rs);
		slen = sizeof rs;
	}
	tok[o++] = '.';
	fuzz_b64url(tok, &o, sig, slen);
	out = tok;
out:
	ECDSA_SIG_free(es);
	EVP_MD_CTX_free(ctx);
	return out;
}

/* Tokens signed by fuzz_jwt, by key and claims: most inputs keep the token of the seed they
 * were mutated from, and an RSA signature costs more than the rest of a request. */
static struct {
	EVP_PKEY *key;
	char *claims, *token;
} fuzz_jwt_cache[64];

/* text itself, or when it is FUZZ_JWT_MARK and claims, the token of those claims signed with
 * key: header {"alg":"RS256","typ":"JWT"} with an RSA key, ES256 with an EC key. In the
 * arena; NULL when OpenSSL fails. */
static inline const char *
fuzz_jwt(EVP_PKEY *key, const char *text)
{
	const char *claims = text + strlen(FUZZ_JWT_MARK), *p;
	unsigned long h = 5381;
	char *tok;
	size_t i;

	if (strncmp(text, FUZZ_JWT_MARK, strlen(FUZZ_JWT_MARK)) != 0)
		return text;
	for (p = claims; *p != '\0'; p++)
		h = h * 33 + (unsigned char)*p;
	i = h % (sizeof fuzz_jwt_cache / sizeof fuzz_jwt_cache[0]);
	if (fuzz_jwt_cache[i].key == key && strcmp(fuzz_jwt_cache[i].claims, claims) == 0)
		return strcpy(arena_alloc(fuzz_arena, strlen(fuzz_jwt_cache[i].token) + 1),
		    fuzz_jwt_cache[i].token);
	tok = fuzz_sign(key, EVP_PKEY_get_base_id(key) == EVP_PKEY_EC ?
	    "{\"alg\":\"ES256\",\"typ\":\"JWT\"}" : "{\"alg\":\"RS256\",\"typ\":\"JWT\"}", claims);
	if (tok == NULL)
		return NULL;
	free(fuzz_jwt_cache[i].claims);
	free(fuzz_jwt_cache[i].token);
	fuzz_jwt_cache[i].key = key;
	if ((fuzz_jwt_cache[i].claims = strdup(claims)) == NULL ||
	    (fuzz_jwt_cache[i].token = strdup(tok)) == NULL)
		abort();
	return tok;
}

/* A NUL-terminated copy of n bytes in the arena (the input itself is not terminated). */
static inline char *
fuzz_text(const uint8_t *data, size_t n)
{
	char *s = arena_alloc(fuzz_arena, n + 1);

	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/* Splits *data at the first '\n': returns the line as text, moves *data and *size past it.
 * Without a '\n' the whole rest is the line. */
static inline char *
fuzz_line(const uint8_t **data, size_t *size)
{
	const uint8_t *nl = memchr(*data, '\n', *size);
	size_t n = nl != NULL ? (size_t)(nl - *data) : *size;
	char *s = fuzz_text(*data, n);

	*data += n + (nl != NULL);
	*size -= n + (nl != NULL);
	return s;
}

/* A fresh request in the fuzz arena, as the driver starts one. */
static inline void
fuzz_req_init(struct req *r, const char *method, const char *path)
{
	memset(r, 0, sizeof *r);
	r->a = fuzz_arena;
	r->id = "fuzz";
	r->method = method;
	r->path = path;
}

/* Number of field errors recorded on r. */
static inline int
fuzz_nerrors(const struct req *r)
{
	return r->field_errors != NULL ? cJSON_GetArraySize(r->field_errors) : 0;
}

/* Checks an answered problem: a JSON object with the answered status and a code. */
static inline void
fuzz_check_problem(const struct req *r)
{
	cJSON *doc;
	const cJSON *status, *code;

	FUZZ_CHECK(r->answered && r->resp_body != NULL);
	FUZZ_CHECK(strcmp(r->resp_type, "application/problem+json") == 0);
	doc = cJSON_ParseWithLength(r->resp_body, r->resp_len);
	FUZZ_CHECK(cJSON_IsObject(doc));
	status = cJSON_GetObjectItemCaseSensitive(doc, "status");
	code = cJSON_GetObjectItemCaseSensitive(doc, "code");
	FUZZ_CHECK(cJSON_IsNumber(status) && status->valueint == r->status);
	FUZZ_CHECK(cJSON_IsString(code) && code->valuestring[0] != '\0');
}

#endif
