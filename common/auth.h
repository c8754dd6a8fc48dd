/* auth: Bearer JWT verification and the caller's local identity.
 *
 * The token is parsed with libjwt (header, claims) and its signature checked with OpenSSL
 * against the configured public key, which is read and parsed once per process: libjwt 1.10
 * re-parses the PEM on every decode (about 250 us), a cached key verifies in about 16 us.
 * The algorithm is pinned by configuration (RS256 or ES256); none and HMAC are refused.
 * With JWT_JWKS_FILE the keys come from the identity provider's JWKS document instead
 * (common/jwks.h): the token's kid picks the key, and the key's type its algorithm. A
 * process that lives on re-reads a changed key file within a second, and keeps the keys it
 * has when the new version does not parse. It also keeps the tokens it accepted (by their
 * SHA-256, with expiry, roles and local id) until they expire or the keys change: a client
 * sends one token with many requests, and its signature is checked once per process.
 */
#ifndef COURTS_AUTH_H
#define COURTS_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct req;

#define ROLE_OWNER	0x1u
#define ROLE_ADMIN	0x2u

#define AUTH_LEEWAY_SECONDS 60

struct auth_claims {
	char		issuer[256];
	char		subject[256];
	long		exp;
	unsigned	roles;	/* ROLE_* bits */
};

/* Verifies token (without "Bearer ") at time now: signature, alg, exp (required), nbf, iss,
 * aud, sub. Fills *out and returns 0, or returns -1 with *why set to a static reason. */
int auth_verify(const char *token, long now, struct auth_claims *out, const char **why);

struct token_seen;

/* A token the first step accepted, for the second: its claims, and its entry in the
 * process's cache of accepted tokens (seen) or the entry it is to take (spare). */
struct auth_token {
	struct auth_claims	 claims;
	unsigned char		 digest[32];
	struct token_seen	*seen;
	struct token_seen	*spare;
};

/* Driver steps for routes that need a token, in two, so that no database session is opened
 * for a request before its body is read whole: a client that trickles its body then holds
 * a process, never a session.
 * 1. auth_token_or_problem verifies the Authorization header and checks the role the route
 *    needs (need: 0, ROLE_OWNER or ROLE_ADMIN), without the database; sets r->roles and *t.
 *    Returns 0, or -1 after answering 401 / 403 / 503.
 * 2. auth_user_or_problem resolves r->user_id from *t, creating the local user on first
 *    sight. Returns 0, or -1 after answering (503 when the database cannot be reached). */
int auth_token_or_problem(struct req *r, const char *authorization, unsigned need,
    struct auth_token *t);
int auth_user_or_problem(struct req *r, const struct auth_token *t);

/* The token of an Authorization header value: what follows "Bearer " (scheme in any case),
 * borrowed from authorization; NULL when the header is absent, of another scheme or empty. */
const char *auth_bearer_token(const char *authorization);

/* Reads the keys now rather than at the first request: a FastCGI worker does at its start,
 * so that it has keys to keep if the file is broken later. false when there are none
 * (logged once). */
bool auth_preload(void);

/* Drops the cached key (unit tests switch keys). */
void auth_reset(void);

#endif
