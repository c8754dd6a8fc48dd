/* stripe: the check of Stripe-Signature (common/stripe.c), against signatures made here with
 * OpenSSL, and the reading of events. */
#include <stdlib.h>

#include <openssl/hmac.h>

#include "config.h"
#include "payment.h"
#include "unit.h"

#define NOW 1750000000LL

/* "t=T,v1=<hex HMAC-SHA256 of T.body under secret>" into out. */
static void
sign(const char *secret, long long t, const char *body, char *out, size_t n)
{
	char payload[4096];
	unsigned char mac[32];
	unsigned int len = 0;
	int k = snprintf(payload, sizeof payload, "%lld.%s", t, body);

	HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)payload, (size_t)k, mac,
	    &len);
	k = snprintf(out, n, "t=%lld,v1=", t);
	for (unsigned i = 0; i < len; i++)
		snprintf(out + k + 2 * i, n - (size_t)k - 2 * i, "%02x", mac[i]);
}

static int
verify(const char *header, const char *body, char *why)
{
	return payment_stripe.webhook_verify(header, body, strlen(body), NOW, why, 256);
}

static void
test_signature(void)
{
	const char *body = "{\"id\":\"evt_1\",\"type\":\"payment_intent.succeeded\"}";
	char h[512], h2[1024], why[256];

	setenv("STRIPE_WEBHOOK_SECRET", "whsec_old , whsec_new", 1);
	config_reload();
	sign("whsec_new", NOW, body, h, sizeof h);
	CHECK(verify(h, body, why) == 0, "signature: one v1 under the second secret verifies");
	sign("whsec_old", NOW - 299, body, h, sizeof h);
	CHECK(verify(h, body, why) == 0, "signature: under the first secret, 299 s old, verifies");
	sign("whsec_new", NOW - 301, body, h, sizeof h);
	CHECK(verify(h, body, why) != 0 && strstr(why, "more than 300 s") != NULL,
	    "signature: 301 s old is refused, saying why");
	sign("whsec_new", NOW + 301, body, h, sizeof h);
	CHECK(verify(h, body, why) != 0, "signature: 301 s ahead is refused");
	sign("whsec_other", NOW, body, h, sizeof h);
	CHECK(verify(h, body, why) != 0 && strstr(why, "no Stripe-Signature v1") != NULL,
	    "signature: another secret's is refused");
	sign("whsec_new", NOW, body, h, sizeof h);
	CHECK(verify(h, "{\"id\":\"evt_2\"}", why) != 0, "signature: a changed body is refused");
	/* Stripe signs with each of the endpoint's secrets while one is rolled: any v1 */
	sign("whsec_other", NOW, body, h2, sizeof h2);
	snprintf(h2 + strlen(h2), sizeof h2 - strlen(h2), ",v1=%s,v0=00", strstr(h, "v1=") + 3);
	CHECK(verify(h2, body, why) == 0, "signature: a matching v1 after one that does not verifies");
	snprintf(h2, sizeof h2, "t=%lld,v0=%s", NOW, strstr(h, "v1=") + 3);
	CHECK(verify(h2, body, why) != 0, "signature: a v0 (the old scheme) alone is refused");
	snprintf(h2, sizeof h2, "%s", strstr(h, "v1="));
	CHECK(verify(h2, body, why) != 0 && strstr(why, "no timestamp") != NULL,
	    "signature: no timestamp is refused");
	snprintf(h2, sizeof h2, "t=17500000x0,%s", strstr(h, "v1="));
	CHECK(verify(h2, body, why) != 0, "signature: a timestamp that is no number is refused");
	h[strlen(h) - 1] = h[strlen(h) - 1] == '0' ? '1' : '0';
	CHECK(verify(h, body, why) != 0, "signature: one hex digit changed is refused");
	h[strlen(h) - 1] = '\0';
	CHECK(verify(h, body, why) != 0, "signature: a short v1 is refused");
	CHECK(verify(NULL, body, why) != 0 && strstr(why, "missing") != NULL,
	    "signature: no header is refused");
	CHECK(verify("", body, why) != 0, "signature: an empty header is refused");
	setenv("STRIPE_WEBHOOK_SECRET", "", 1);
	config_reload();
	sign("", NOW, body, h, sizeof h);
	CHECK(verify(h, body, why) != 0 && strstr(why, "not set") != NULL,
	    "signature: no secret configured refuses everything");
}

static void
test_event(void)
{
	struct payment_event e;
	const char *ok = "{\"id\":\"evt_9\",\"object\":\"event\",\"created\":1750000000,"
	    "\"type\":\"payment_intent.succeeded\",\"data\":{\"object\":{\"id\":\"pi_9\","
	    "\"object\":\"payment_intent\",\"amount\":900,\"amount_received\":850,"
	    "\"currency\":\"eur\",\"status\":\"succeeded\",\"client_secret\":\"pi_9_secret_x\","
	    "\"metadata\":{\"payment_id\":\"0b7c0000-0000-4000-8000-0000000000e1\"}}}}";
	const char *refund = "{\"id\":\"evt_r\",\"type\":\"refund.failed\",\"data\":{\"object\":"
	    "{\"id\":\"re_1\",\"object\":\"refund\",\"amount\":500,\"currency\":\"eur\","
	    "\"status\":\"failed\",\"failure_reason\":\"declined\","
	    "\"metadata\":{\"refund_id\":\"0b7c0000-0000-4000-8000-0000000000e2\"}}}}";

	CHECK(payment_stripe.event_parse(ok, strlen(ok), &e) == 0, "event: a PaymentIntent's reads");
	CHECK_STR(e.id, "evt_9", "event: its id");
	CHECK_STR(e.type, "payment_intent.succeeded", "event: its type");
	CHECK_INT(e.created, 1750000000, "event: when it was made");
	CHECK_STR(e.object.id, "pi_9", "event: the intent");
	CHECK_INT(e.object.amount, 850, "event: an intent's amount is what it received");
	CHECK_STR(e.object.currency, "eur", "event: the currency");
	CHECK_STR(e.object.ledger, "0b7c0000-0000-4000-8000-0000000000e1",
	    "event: the ledger row its metadata names");
	CHECK(payment_stripe.event_parse(refund, strlen(refund), &e) == 0, "event: a refund's reads");
	CHECK_INT(e.object.amount, 500, "event: a refund's amount");
	CHECK_STR(e.object.reason, "declined", "event: a failed refund's reason");
	CHECK_STR(e.object.ledger, "0b7c0000-0000-4000-8000-0000000000e2",
	    "event: a refund's row, by its refund_id");
	CHECK(payment_stripe.event_parse("[]", 2, &e) != 0, "event: an array is no event");
	CHECK(payment_stripe.event_parse("{\"id\":\"evt\",\"type\":\"x\"}", 24, &e) != 0,
	    "event: one without data.object is no event");
	CHECK(payment_stripe.event_parse("{\"id\":", 6, &e) != 0, "event: cut short is no event");
}

int
main(void)
{
	unit_start();
	test_signature();
	test_event();
	return unit_done();
}
