/* payment: the payment provider, behind one small interface.
 *
 * PAYMENT_PROVIDER=none (the default) takes no money online: a share is the organizer's word
 * (confirm-payment), for development and for clubs that take money at the desk.
 * PAYMENT_PROVIDER=stripe takes each share through Stripe (common/stripe.c): a PaymentIntent
 * per share, paid by the player's client with its secret, confirmed only by the provider's
 * signed event or its answer, refunds paid back by it. Another provider is another table of
 * these functions.
 *
 * Every call is bounded by PAYMENT_PROVIDER_TIMEOUT_SECONDS and made through outbound.h.
 * The ledger's side of each answer is in sql/areas/92_payments.sql.
 */
#ifndef COURTS_PAYMENT_H
#define COURTS_PAYMENT_H

#include <stdbool.h>
#include <stddef.h>

/* How a call ended. */
enum payment_call {
	PAYMENT_DONE = 0,	/* the provider did it; the object is filled */
	PAYMENT_DOWN = -1,	/* no usable answer: unreachable, timed out, 5xx, 429: try later */
	PAYMENT_REFUSED = -2	/* the provider said no (4xx): o->reason has its code */
};

/* What the provider says of one of its objects: a PaymentIntent or a refund. */
struct payment_object {
	char		 id[256];	/* pi_..., re_... */
	char		 status[64];	/* the provider's word: succeeded, canceled, pending, ... */
	char		 secret[256];	/* a PaymentIntent's client secret */
	long long	 amount;	/* a PaymentIntent's amount received, a refund's amount */
	char		 currency[8];	/* lower-case ISO 4217 */
	char		 reason[128];	/* a refused call's code, a failed refund's reason */
	char		 ledger[64];	/* the ledger row its metadata names (refund_id or
					   payment_id), "" when none */
	char		 why[256];	/* why a call failed, for the log */
};

/* An event the provider sent, once its signature is verified. */
struct payment_event {
	char			 id[256];	/* evt_... */
	char			 type[128];	/* payment_intent.succeeded, refund.updated, ... */
	long long		 created;	/* unix time */
	struct payment_object	 object;	/* the event's object as it was then */
};

struct payment_provider {
	const char	*name;		/* as payments.provider records it: "stripe" */
	/* a PaymentIntent for minor units of currency, for ledger row payment_id (also the
	 * idempotency key: a call made again returns the same intent) of match match_id */
	enum payment_call (*intent_create)(const char *payment_id, const char *match_id,
	    long long minor, const char *currency, struct payment_object *o);
	enum payment_call (*intent_get)(const char *ref, struct payment_object *o);
	/* refused with o->status the intent's status when it can no longer be cancelled */
	enum payment_call (*intent_cancel)(const char *ref, struct payment_object *o);
	/* refund row refund_id (the idempotency key) of minor units from PaymentIntent intent */
	enum payment_call (*refund_create)(const char *refund_id, const char *intent,
	    long long minor, struct payment_object *o);
	/* 0 when header signs body with one of the configured secrets, at most tolerance
	 * seconds from now; -1 with why */
	int (*webhook_verify)(const char *header, const char *body, size_t len, long long now,
	    char *why, size_t whylen);
	/* 0 when body is an event, read into *e; -1 */
	int (*event_parse)(const char *body, size_t len, struct payment_event *e);
	/* a page of at most max events created since the unix time since, newest first,
	 * after event after ("" for the first page), into out[*n]; *more when more follow */
	enum payment_call (*events_list)(const char *after, long long since,
	    struct payment_event *out, int max, int *n, bool *more, char *why, size_t whylen);
};

/* The statements that apply the provider's word to the ledger (sql/areas/92_payments.sql),
 * for every program that hears it (the webhook, confirm-payment, the sweeper, the
 * reconciliation), and their parameters as text, made by the functions below. */
#define PAYMENT_EVENT_APPLY "SELECT payment_event_apply($1, $2, $3, $4, $5::uuid, $6, " \
	"$7::bigint, $8, $9, $10::int)"
#define PAYMENT_INTENT_APPLY "SELECT payment_intent_apply($1, $2, $3, $4::bigint, $5, $6::int)"

struct payment_args {
	const char	*v[10];
	int		 n;
	char		 amount[24], min_reliability[16];
};

/* PAYMENT_EVENT_APPLY's parameters for event e of provider pp. */
void payment_event_args(const struct payment_provider *pp, const struct payment_event *e,
    struct payment_args *a);

/* PAYMENT_INTENT_APPLY's parameters for what pp says of PaymentIntent o. */
void payment_intent_args(const struct payment_provider *pp, const struct payment_object *o,
    struct payment_args *a);

/* The configured provider, or NULL for PAYMENT_PROVIDER=none. */
const struct payment_provider *payment_provider(void);

extern const struct payment_provider payment_stripe;

/* Seconds a webhook's signed timestamp may be from now. */
#define PAYMENT_WEBHOOK_TOLERANCE	300

#endif
