/* idem: safe retries of writes (the Idempotency-Key header).
 *
 * For a route marked ROUTE_IDEMPOTENT that is sent a key, the driver opens the request's
 * transaction itself and claims the key in it (idem_claim_or_answer) before the handler runs;
 * the handler's own sql_begin()/sql_commit() then join that transaction. After a successful
 * answer the driver stores it with the key and commits (idem_finish), so the work, the key and
 * the answer land together; after a failure everything rolls back and a repeat runs again.
 * A repeat with the same key and the same request gets the stored answer (with
 * Idempotent-Replayed: true); with another request, 422. Keys are per caller.
 */
#ifndef COURTS_IDEM_H
#define COURTS_IDEM_H

#include <stddef.h>

struct req;

#define IDEM_KEY_MAX 255

/* true when key is 1..IDEM_KEY_MAX visible ASCII characters. */
int idem_key_valid(const char *key);

/* Opens r's transaction and claims key for r's caller with request_hash (hex SHA-256 of the
 * request). Returns 0 when the handler should run, or -1 after answering: the stored answer
 * of an earlier request with the key, 422 IDEMPOTENCY_KEY_REUSED for another request, or the
 * database error. */
int idem_claim_or_answer(struct req *r, const char *key, const char *request_hash);

/* After the handler, when the driver owns the transaction (tx_owned): stores a success
 * answer with the claimed key, if there is one (a program's hook may open the transaction of
 * a write sent without a key, http.h), and commits, or rolls back after a failure. A failed
 * commit replaces the answer with the database error. */
void idem_finish(struct req *r);

/* Hex SHA-256 of the request (method, path, query, body) in request memory. */
const char *idem_request_hash(struct req *r, const char *query, const char *body,
    size_t body_len);

#endif
