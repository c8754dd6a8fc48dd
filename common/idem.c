/* idem: claim, store and replay answers of writes sent with an Idempotency-Key. */
#include "idem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "problem.h"
#include "req.h"
#include "sql.h"

int
idem_key_valid(const char *key)
{
	size_t n = 0;

	for (; key[n] != '\0'; n++)
		if ((unsigned char)key[n] < 0x21 || (unsigned char)key[n] > 0x7e)
			return 0;
	return n >= 1 && n <= IDEM_KEY_MAX;
}

const char *
idem_request_hash(struct req *r, const char *query, const char *body, size_t body_len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char *hex;

	/* fields end with NUL bytes, so no two requests hash the same by shifting text */
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, r->method, strlen(r->method) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, r->path, strlen(r->path) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, query, strlen(query) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, body, body_len) != 1 ||
	    EVP_DigestFinal_ex(ctx, md, &len) != 1)
		len = 0;
	EVP_MD_CTX_free(ctx);
	hex = arena_alloc(r->a, 2 * (size_t)len + 1);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[2 * len] = '\0';
	return hex;
}

/* Answers with what an earlier request of the key stored, or 422 / the error. */
static void
replay(struct req *r, const char *key, const char *request_hash)
{
	PGresult *res = sql_query(r,
	    "SELECT request_hash, status, content_type, body FROM idempotency_keys "
	    " WHERE user_id = $1::uuid AND key = $2",
	    r->user_id, key);
	const char *type, *body;

	if (res == NULL)
		return;
	if (PQntuples(res) == 0 || db_value(res, 0, 1) == NULL) {
		/* the claim we waited for rolled back in between: the client may just retry */
		problem_send(r, 409, "IDEMPOTENCY_KEY_IN_USE",
		    "A request with this Idempotency-Key is in progress; retry.");
		return;
	}
	if (strcmp(db_value(res, 0, 0), request_hash) != 0) {
		problem_send(r, 422, "IDEMPOTENCY_KEY_REUSED",
		    "This Idempotency-Key was used for another request.");
		return;
	}
	type = db_value(res, 0, 2);
	body = db_value(res, 0, 3);
	if (body == NULL)
		req_send_no_content(r);
	else {
		req_send_json(r, atoi(db_value(res, 0, 1)), body);
		r->resp_type = arena_strdup(r->a, type != NULL ? type : "application/json");
	}
	r->status = atoi(db_value(res, 0, 1));
	req_add_header(r, "Idempotent-Replayed", "true");
}

int
idem_claim_or_answer(struct req *r, const char *key, const char *request_hash)
{
	if (sql_begin(r) != 0)
		return -1;
	/* a concurrent request with the key waits here until the first one ends */
	if (sql_try(r, "INSERT INTO idempotency_keys (user_id, key, request_hash) "
	    "VALUES ($1::uuid, $2, $3)", r->user_id, key, request_hash) == NULL) {
		if (strcmp(r->db->err.constraint, "idempotency_keys_one_per_caller") != 0) {
			sql_answer_error(r);
			return -1;
		}
		db_end(r->db);
		replay(r, key, request_hash);
		return -1;
	}
	r->idem_key = key;
	r->tx_owned = true;
	return 0;
}

void
idem_finish(struct req *r)
{
	char status[16];

	if (!r->tx_owned)
		return;
	r->tx_owned = false;
	if (!r->answered || r->status >= 300) {
		db_end(r->db);
		return;
	}
	snprintf(status, sizeof status, "%d", r->status);
	/* a transaction a program's hook opened for a write without a key (http.h) */
	if (r->idem_key == NULL && db_commit(r->db) == 0)
		return;
	if (r->idem_key != NULL && sql_try(r,
	    "UPDATE idempotency_keys SET status = $3::int, content_type = $4, body = $5 "
	    " WHERE user_id = $1::uuid AND key = $2",
	    r->user_id, r->idem_key, status, r->resp_body != NULL ? r->resp_type : NULL,
	    r->resp_body) != NULL && db_commit(r->db) == 0)
		return;
	/* nothing was committed: the success answer must not go out */
	r->answered = false;
	r->resp_headers = NULL;
	sql_answer_error(r);
}
