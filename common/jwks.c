/* jwks: JWKS documents to OpenSSL public keys (RSA n/e, EC P-256 x/y). */
#include "jwks.h"

#include <string.h>

#include <cJSON.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>


#define JWK_FIELD_MAX	1024	/* bytes of a decoded n: 8192-bit RSA */
#define RSA_MIN_BITS	2048

static int
b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '-') return 62;
	if (c == '_') return 63;
	return -1;
}

long
b64url_decode(const char *in, size_t len, unsigned char *out)
{
	unsigned long acc = 0;
	size_t i;
	long n = 0;
	int bits = 0, v;

	if (len % 4 == 1)
		return -1;
	for (i = 0; i < len; i++) {
		if ((v = b64val((unsigned char)in[i])) < 0)
			return -1;
		acc = (acc << 6) | (unsigned long)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
			acc &= (1UL << bits) - 1;
		}
	}
	/* leftover bits must be zero, or two spellings would verify as one signature */
	return acc == 0 ? n : -1;
}

/* the base64url member name of object o, decoded into out (cap bytes); its length or -1 */
static long
b64_member(const cJSON *o, const char *name, unsigned char *out, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	size_t len;

	if (!cJSON_IsString(v))
		return -1;
	len = strlen(v->valuestring);
	if (len == 0 || (len * 3) / 4 > cap)
		return -1;
	return b64url_decode(v->valuestring, len, out);
}

/* a string member, or NULL when it is absent; *bad is set when it is there but no string */
static const char *
str_member(const cJSON *o, const char *name, bool *bad)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (v == NULL)
		return NULL;
	if (!cJSON_IsString(v)) {
		*bad = true;
		return NULL;
	}
	return v->valuestring;
}

static EVP_PKEY *
from_params(const char *type, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	EVP_PKEY *key = NULL;

	if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
		key = NULL;
	OSSL_PARAM_free(params);
	EVP_PKEY_CTX_free(ctx);
	if (key != NULL) {
		/* a point off the curve or a degenerate modulus is refused here, not at verify */
		EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);

		if (check == NULL || EVP_PKEY_public_check(check) != 1) {
			EVP_PKEY_free(key);
			key = NULL;
		}
		EVP_PKEY_CTX_free(check);
	}
	return key;
}

static EVP_PKEY *
rsa_key(const cJSON *o)
{
	unsigned char n[JWK_FIELD_MAX], e[16];
	long nlen = b64_member(o, "n", n, sizeof n), elen = b64_member(o, "e", e, sizeof e);
	BIGNUM *bn_n = NULL, *bn_e = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	EVP_PKEY *key = NULL;

	if (nlen <= 0 || elen <= 0)
		return NULL;
	if ((bn_n = BN_bin2bn(n, (int)nlen, NULL)) == NULL ||
	    (bn_e = BN_bin2bn(e, (int)elen, NULL)) == NULL ||
	    BN_num_bits(bn_n) < RSA_MIN_BITS || (bld = OSSL_PARAM_BLD_new()) == NULL ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) != 1 ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) != 1)
		goto out;
	key = from_params("RSA", bld);
out:
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_n);
	BN_free(bn_e);
	return key;
}

static EVP_PKEY *
ec_key(const cJSON *o)
{
	unsigned char x[33], y[33], point[65];
	long xlen = b64_member(o, "x", x, sizeof x), ylen = b64_member(o, "y", y, sizeof y);
	OSSL_PARAM_BLD *bld;
	EVP_PKEY *key = NULL;

	/* RFC 7518 6.2.1.2: the full coordinate length, 32 bytes for P-256 */
	if (xlen != 32 || ylen != 32)
		return NULL;
	point[0] = 0x04;	/* uncompressed */
	memcpy(point + 1, x, 32);
	memcpy(point + 33, y, 32);
	if ((bld = OSSL_PARAM_BLD_new()) == NULL)
		return NULL;
	if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point) == 1)
		key = from_params("EC", bld);
	OSSL_PARAM_BLD_free(bld);
	return key;
}

/* one member of "keys": its usable key into *out, or false to skip it */
static bool
jwk_read(const cJSON *o, struct jwk *out)
{
	bool bad = false;
	const char *kty = str_member(o, "kty", &bad), *use = str_member(o, "use", &bad);
	const char *alg = str_member(o, "alg", &bad), *kid = str_member(o, "kid", &bad);
	const char *crv = str_member(o, "crv", &bad);

	if (bad || kty == NULL || (use != NULL && strcmp(use, "sig") != 0) ||
	    (kid != NULL && strlen(kid) >= sizeof out->kid))
		return false;
	if (strcmp(kty, "RSA") == 0 && (alg == NULL || strcmp(alg, "RS256") == 0)) {
		out->alg = JWK_RS256;
		out->key = rsa_key(o);
	} else if (strcmp(kty, "EC") == 0 && crv != NULL && strcmp(crv, "P-256") == 0 &&
	    (alg == NULL || strcmp(alg, "ES256") == 0)) {
		out->alg = JWK_ES256;
		out->key = ec_key(o);
	} else
		return false;
	if (out->key == NULL)
		return false;
	strcpy(out->kid, kid != NULL ? kid : "");
	return true;
}

int
jwks_parse(const char *text, size_t len, struct jwks *set, const char **why)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	const cJSON *keys, *k;
	int rc = -1;

	memset(set, 0, sizeof *set);
	if (doc == NULL || !cJSON_IsObject(doc)) {
		*why = "is not a JSON object";
		goto out;
	}
	keys = cJSON_GetObjectItemCaseSensitive(doc, "keys");
	if (!cJSON_IsArray(keys)) {
		*why = "has no \"keys\" array";
		goto out;
	}
	cJSON_ArrayForEach(k, keys) {
		if (set->n == JWKS_MAX)
			break;
		if (cJSON_IsObject(k) && jwk_read(k, &set->keys[set->n]))
			set->n++;
	}
	rc = set->n;
	if (rc == 0)
		*why = "has no usable signing key (RSA of 2048 bits or more for RS256, EC P-256 for ES256)";
out:
	cJSON_Delete(doc);
	return rc;
}

const struct jwk *
jwks_find(const struct jwks *set, const char *kid)
{
	int i;

	if (kid == NULL)
		return set->n == 1 ? &set->keys[0] : NULL;
	if (kid[0] == '\0')
		return NULL;	/* an empty name names no key, not the keys without one */
	for (i = 0; i < set->n; i++)
		if (strcmp(set->keys[i].kid, kid) == 0)
			return &set->keys[i];
	return NULL;
}

void
jwks_free(struct jwks *set)
{
	int i;

	for (i = 0; i < set->n; i++)
		EVP_PKEY_free(set->keys[i].key);
	memset(set, 0, sizeof *set);
}
