/* payments: what the payment provider tells the service. Its webhook needs no token: the
 * event's signature is its authentication, checked over the body as it was sent before
 * anything reads it. Each event is applied once, by its id, in one transaction
 * (payment_event_apply, sql/areas/92_payments.sql), whatever the order and however often
 * the provider sends it; one the service has no use for is answered 200 and recorded. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "payment.h"
#include "problem.h"
#include "sql.h"

/* POST /api/payments/stripe/webhook: 200 {"received": true, "outcome"} once the event is
 * applied (or was: outcome DUPLICATE); 400 INVALID_SIGNATURE (Stripe-Signature missing, not
 * ours, or more than 300 s old) or MALFORMED_EVENT, nothing changed; 404 when Stripe is not
 * the provider (PAYMENT_PROVIDER). */
static void
stripe_webhook(struct req *r)
{
	const struct payment_provider *pp = payment_provider();
	struct payment_event e;
	struct payment_args args;
	char why[256], answer[128];
	PGresult *res;

	if (pp == NULL || pp != &payment_stripe) {
		problem_send(r, 404, "NOT_FOUND",
		    "This service takes no payments through Stripe (PAYMENT_PROVIDER).");
		return;
	}
	if (pp->webhook_verify(http_variable(r, "HTTP_STRIPE_SIGNATURE"), r->raw_body, r->raw_len,
	    (long long)time(NULL), why, sizeof why) != 0) {
		problem_send(r, 400, "INVALID_SIGNATURE", arena_printf(r->a, "%s.", why));
		return;
	}
	if (pp->event_parse(r->raw_body, r->raw_len, &e) != 0) {
		problem_send(r, 400, "MALFORMED_EVENT",
		    "The body is not an event: an object with an id, a type and data.object.");
		return;
	}
	sql_begin_one(r);
	payment_event_args(pp, &e, &args);
	if ((res = sql_query_n(r, PAYMENT_EVENT_APPLY, args.n, args.v)) == NULL)
		return;
	snprintf(answer, sizeof answer, "{\"received\":true,\"outcome\":\"%s\"}", db_value(res, 0, 0));
	sql_commit_and_send(r, 200, answer);
}

static const struct route routes[] = {
	{ "POST", "/api/payments/stripe/webhook", stripe_webhook, AUTH_NONE, BODY_RAW },
};

int
main(void)
{
	return http_main("payments", routes, sizeof routes / sizeof routes[0]);
}
