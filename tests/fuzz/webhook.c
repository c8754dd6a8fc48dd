/* Fuzz target webhook: what the payment provider's webhook reads before and after trusting
 * a request (common/stripe.c): the Stripe-Signature check over the body, then the event.
 * Input: the header's value, a newline, the body.
 * Checks: a check that passes had a v1 that is the HMAC-SHA256 of "t.body" under one of the
 * configured secrets, with t within 300 s of the fixed now; the event reader never reads
 * past the body, and what it reads is NUL-terminated. */
#include <openssl/hmac.h>

#include "config.h"
#include "fuzz.h"
#include "payment.h"

static const char *const secrets[] = { "whsec_fuzz_old", "whsec_fuzz_new" };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("STRIPE_WEBHOOK_SECRET", "whsec_fuzz_old,whsec_fuzz_new", 1);
	config_reload();
	return 0;
}

/* Whether header holds a v1 that signs body under one of the secrets at a t within 300 s. */
static bool
genuine(const char *header, const char *body, size_t len)
{
	const char *t = strstr(header, "t=");
	long long when;
	char payload_t[32];

	if (t == NULL)
		return false;
	when = strtoll(t + 2, NULL, 10);
	if (when < FUZZ_NOW - PAYMENT_WEBHOOK_TOLERANCE || when > FUZZ_NOW + PAYMENT_WEBHOOK_TOLERANCE)
		return false;
	snprintf(payload_t, sizeof payload_t, "%lld.", when);
	for (size_t s = 0; s < 2; s++) {
		unsigned char mac[32];
		unsigned int n = 0;
		char hex[65];
		size_t plen = strlen(payload_t);
		unsigned char *payload = malloc(plen + len);

		memcpy(payload, payload_t, plen);
		memcpy(payload + plen, body, len);
		HMAC(EVP_sha256(), secrets[s], (int)strlen(secrets[s]), payload, plen + len, mac, &n);
		free(payload);
		for (unsigned i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", mac[i]);
		for (const char *v = strstr(header, "v1="); v != NULL; v = strstr(v + 1, "v1="))
			if (strncmp(v + 3, hex, 64) == 0)
				return true;
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	char *header, why[256];
	const char *body;
	size_t hlen, blen;
	struct payment_event e;

	fuzz_arena_use();
	if (nl == NULL)
		return 0;
	hlen = (size_t)(nl - data);
	header = arena_alloc(fuzz_arena, hlen + 1);
	memcpy(header, data, hlen);
	header[hlen] = '\0';
	blen = size - hlen - 1;
	/* the driver hands the body NUL-terminated, as read */
	body = memcpy(arena_alloc(fuzz_arena, blen + 1), nl + 1, blen);
	((char *)body)[blen] = '\0';
	if (payment_stripe.webhook_verify(header, body, blen, FUZZ_NOW, why, sizeof why) == 0)
		FUZZ_CHECK(genuine(header, body, blen));
	else
		FUZZ_CHECK(why[0] != '\0' && memchr(why, '\0', sizeof why) != NULL);
	if (payment_stripe.event_parse(body, blen, &e) == 0) {
		FUZZ_CHECK(e.id[0] != '\0' && memchr(e.id, '\0', sizeof e.id) != NULL);
		FUZZ_CHECK(memchr(e.type, '\0', sizeof e.type) != NULL);
		FUZZ_CHECK(memchr(e.object.id, '\0', sizeof e.object.id) != NULL);
		FUZZ_CHECK(memchr(e.object.ledger, '\0', sizeof e.object.ledger) != NULL);
	}
	return 0;
}
