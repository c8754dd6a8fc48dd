/* share: a player's share of a match at the payment provider (payment.h), on the request
 * path: its PaymentIntent made when the share is held, and the answer when the provider
 * cannot be reached. */
#ifndef COURTS_SHARE_H
#define COURTS_SHARE_H

#include "payment.h"
#include "req.h"

/* Creates at provider pp the PaymentIntent of the caller's pending share of match (none for
 * a free share, or one that has an intent already) and records it, in the request's
 * transaction. 0, or -1 after answering (503 PAYMENT_PROVIDER_UNAVAILABLE when the provider
 * cannot be reached: the transaction is then rolled back with all it held). */
int share_intent_or_problem(struct req *r, const struct payment_provider *pp,
    const char *match);

/* share_intent_or_problem for the match that answer (a match request's JSON) is, then that
 * match's JSON again as the transaction now sees it, its myPayment with the client secret;
 * NULL after answering. For the routes that put the caller into a match. */
const char *share_answer_or_problem(struct req *r, const struct payment_provider *pp,
    const char *answer);

/* Answers 503 PAYMENT_PROVIDER_UNAVAILABLE after a call that got no usable answer, and logs
 * why (o->why). */
void share_provider_down(struct req *r, const struct payment_object *o);

#endif
