/* payment: the provider PAYMENT_PROVIDER names. */
#include "payment.h"

#include <string.h>

#include "config.h"

const struct payment_provider *
payment_provider(void)
{
	const char *name = config_get()->payment_provider;

	if (strcmp(name, payment_stripe.name) == 0)
		return &payment_stripe;
	return NULL;
}
