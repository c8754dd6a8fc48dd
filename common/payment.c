/* payment: the provider PAYMENT_PROVIDER names. */
#include "payment.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "valid.h"

/* The text of a field, NULL when empty. */
static const char *
text_or_null(const char *s)
{
	return *s != '\0' ? s : NULL;
}

/* What the provider said of o, as parameters 2.. of both statements: its id, status, the
 * amount (NULL when it gave none) and currency. */
static void
object_args(const struct payment_object *o, struct payment_args *a, const char **v)
{
	snprintf(a->amount, sizeof a->amount, "%lld", o->amount);
	snprintf(a->min_reliability, sizeof a->min_reliability, "%d",
	    config_get()->min_reliability);
	v[0] = text_or_null(o->id);
	v[1] = text_or_null(o->status);
	v[2] = o->amount >= 0 ? a->amount : NULL;
	v[3] = text_or_null(o->currency);
}

void
payment_event_args(const struct payment_provider *pp, const struct payment_event *e,
    struct payment_args *a)
{
	const char *obj[4];

	object_args(&e->object, a, obj);
	a->v[0] = pp->name;
	a->v[1] = e->id;
	a->v[2] = e->type;
	a->v[3] = obj[0];
	a->v[4] = valid_uuid(e->object.ledger) ? e->object.ledger : NULL;
	a->v[5] = obj[1];
	a->v[6] = obj[2];
	a->v[7] = obj[3];
	a->v[8] = text_or_null(e->object.reason);
	a->v[9] = a->min_reliability;
	a->n = 10;
}

void
payment_intent_args(const struct payment_provider *pp, const struct payment_object *o,
    struct payment_args *a)
{
	a->v[0] = pp->name;
	object_args(o, a, &a->v[1]);
	a->v[5] = a->min_reliability;
	a->n = 6;
}

const struct payment_provider *
payment_provider(void)
{
	const char *name = config_get()->payment_provider;

	if (strcmp(name, payment_stripe.name) == 0)
		return &payment_stripe;
	return NULL;
}
