/* join: the answer of the routes that put the caller into a match (an invitation accepted,
 * the shareable link, the open-match feed): one JOIN transition of sql/areas/60_lifecycle.sql
 * and the match as committed. */
#ifndef COURTS_JOIN_H
#define COURTS_JOIN_H

struct req;

/* Runs sql, one statement that is the whole transaction: the JOIN function ($1 key, $2
 * caller, $3 the body's team) inside match_request_json (sql/areas/90_json.sql),
 * and answers 200 with the match as committed; 400 without a team. A join
 * refused because of a lapsed offer (the caller's own: INVALID_STATE; one still holding the
 * place: TEAM_FULL) has its match's lapsed offers passed on by settle ($1 key), in a
 * transaction of its own that outlives the refusal; should that fail too, the sweeper passes
 * them on. With a payment provider the caller's share is owed for PAYMENT_HOLD_SECONDS, its
 * place held meanwhile, and its PaymentIntent made in the same transaction (its client
 * secret in the answer's myPayment); 503 PAYMENT_PROVIDER_UNAVAILABLE, nothing held. */
void match_join_answer(struct req *r, const char *sql, const char *key, const char *settle);

#endif
