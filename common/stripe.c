/* stripe: the payment provider Stripe, as its API and webhooks are documented: PaymentIntents,
 * Refunds and Events over HTTPS with form-encoded parameters and the secret key as a bearer
 * token, an Idempotency-Key on every POST, and Stripe-Signature on every event. */
#include "payment.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "config.h"
#include "outbound.h"

/* The API version the answers' shapes are read in, whatever the account's default: the
 * version of the official client the suite checks its stand-in with (tests/package.json). */
#define STRIPE_VERSION		"2026-08-26.dahlia"
#define STRIPE_ANSWER_MAX	(256 * 1024)	/* octets of an answer kept */

/* Appends "name=value" to form (of size n), percent-encoded as a form is; false when it does
 * not fit. */
static bool
form_add(char *form, size_t n, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(form);
	const char *parts[2] = { name, value };

	for (int i = 0; i < 2; i++) {
		if (len + 2 >= n)
			return false;
		if (i == 0 && len > 0)
			form[len++] = '&';
		else if (i == 1)
			form[len++] = '=';
		for (const unsigned char *c = (const unsigned char *)parts[i]; *c != '\0'; c++) {
			if (len + 4 >= n)
				return false;
			if (isalnum(*c) || strchr("-_.~", *c) != NULL) {
				form[len++] = (char)*c;
			} else {
				form[len++] = '%';
				form[len++] = hex[*c >> 4];
				form[len++] = hex[*c & 15];
			}
		}
	}
	form[len] = '\0';
	return true;
}

static void
copy(char *dst, size_t n, const cJSON *item)
{
	snprintf(dst, n, "%s", cJSON_IsString(item) ? item->valuestring : "");
}

/* Reads a PaymentIntent or a refund (or a charge) into *o. */
static void
object_read(const cJSON *obj, struct payment_object *o)
{
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "object"));
	const cJSON *amount, *metadata;

	copy(o->id, sizeof o->id, cJSON_GetObjectItemCaseSensitive(obj, "id"));
	copy(o->status, sizeof o->status, cJSON_GetObjectItemCaseSensitive(obj, "status"));
	copy(o->secret, sizeof o->secret, cJSON_GetObjectItemCaseSensitive(obj, "client_secret"));
	copy(o->currency, sizeof o->currency, cJSON_GetObjectItemCaseSensitive(obj, "currency"));
	/* what an intent brought is its amount received; a refund's, its amount */
	amount = cJSON_GetObjectItemCaseSensitive(obj,
	    kind != NULL && strcmp(kind, "payment_intent") == 0 ? "amount_received" : "amount");
	o->amount = cJSON_IsNumber(amount) ? (long long)amount->valuedouble : -1;
	if (kind != NULL && strcmp(kind, "refund") == 0)
		copy(o->reason, sizeof o->reason,
		    cJSON_GetObjectItemCaseSensitive(obj, "failure_reason"));
	metadata = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	copy(o->ledger, sizeof o->ledger, cJSON_GetObjectItemCaseSensitive(metadata,
	    cJSON_HasObjectItem(metadata, "refund_id") ? "refund_id" : "payment_id"));
}

/* Makes a call: method on path (with form as its body when not NULL), with idem as its
 * Idempotency-Key when not NULL; reads the object answered into *o, and hands the whole
 * answer to *answer when it is not NULL (the caller deletes it). */
static enum payment_call
call_doc(const char *method, const char *path, const char *form, const char *idem,
    struct payment_object *o, cJSON **answer)
{
	const struct config *c = config_get();
	char url[1024], auth[512], key[128];
	const char *headers[6];
	int nh = 0;
	struct outbound req = { 0 };
	struct outbound_answer a;
	cJSON *doc, *err;
	enum payment_call ret;

	memset(o, 0, sizeof *o);
	o->amount = -1;
	if (*c->stripe_secret_key == '\0') {
		snprintf(o->why, sizeof o->why, "STRIPE_SECRET_KEY is not set");
		return PAYMENT_DOWN;
	}
	snprintf(url, sizeof url, "%s%s", c->stripe_api_base, path);
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->stripe_secret_key);
	headers[nh++] = auth;
	headers[nh++] = "Stripe-Version: " STRIPE_VERSION;
	if (form != NULL)
		headers[nh++] = "Content-Type: application/x-www-form-urlencoded";
	if (idem != NULL) {
		snprintf(key, sizeof key, "Idempotency-Key: %s", idem);
		headers[nh++] = key;
	}
	headers[nh] = NULL;
	req.method = method;
	req.url = url;
	req.headers = headers;
	req.body = form;
	req.body_len = form != NULL ? strlen(form) : 0;
	req.timeout = c->payment_provider_timeout;
	req.max_answer = STRIPE_ANSWER_MAX;
	if (outbound_call(&req, &a) != 0) {
		snprintf(o->why, sizeof o->why, "%s %.60s: %.180s", method, path, a.why);
		return PAYMENT_DOWN;
	}
	doc = a.body != NULL ? cJSON_ParseWithLength(a.body, a.len) : NULL;
	if (a.status >= 200 && a.status < 300 && cJSON_IsObject(doc)) {
		object_read(doc, o);
		ret = PAYMENT_DONE;
	} else if (a.status >= 400 && a.status < 500 && a.status != 409 && a.status != 429 &&
	    cJSON_IsObject(err = cJSON_GetObjectItemCaseSensitive(doc, "error"))) {
		const cJSON *intent = cJSON_GetObjectItemCaseSensitive(err, "payment_intent");

		/* a refusal about an intent carries the intent as it is */
		if (cJSON_IsObject(intent))
			object_read(intent, o);
		copy(o->reason, sizeof o->reason, cJSON_GetObjectItemCaseSensitive(err, "code"));
		snprintf(o->why, sizeof o->why, "%s %.60s: %ld %.150s", method, path, a.status,
		    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message")) ?
		    cJSON_GetObjectItemCaseSensitive(err, "message")->valuestring : "");
		ret = PAYMENT_REFUSED;
	} else {
		snprintf(o->why, sizeof o->why, "%s %.60s: answered %ld", method, path, a.status);
		ret = PAYMENT_DOWN;
	}
	if (answer != NULL && ret == PAYMENT_DONE)
		*answer = doc;
	else
		cJSON_Delete(doc);
	free(a.body);
	return ret;
}

static enum payment_call
call(const char *method, const char *path, const char *form, const char *idem,
    struct payment_object *o)
{
	return call_doc(method, path, form, idem, o, NULL);
}

/* POST path with the form of pairs (name, value, ..., NULL), idem its Idempotency-Key. */
static enum payment_call
post(const char *path, const char *idem, struct payment_object *o, const char *const *pairs)
{
	char form[1024] = "";

	for (; pairs[0] != NULL; pairs += 2)
		if (!form_add(form, sizeof form, pairs[0], pairs[1])) {
			memset(o, 0, sizeof *o);
			snprintf(o->why, sizeof o->why, "POST %s: the parameters are too long", path);
			return PAYMENT_DOWN;
		}
	return call("POST", path, form, idem, o);
}

static enum payment_call
intent_create(const char *payment_id, const char *match_id, long long minor,
    const char *currency, struct payment_object *o)
{
	char amount[32];

	snprintf(amount, sizeof amount, "%lld", minor);
	return post("/v1/payment_intents", payment_id, o, (const char *const[]){
	    "amount", amount, "currency", currency, "automatic_payment_methods[enabled]", "true",
	    "metadata[payment_id]", payment_id, "metadata[match_request_id]", match_id, NULL });
}

/* An id of the provider as a path segment: its own characters only. */
static bool
id_ok(const char *id)
{
	if (*id == '\0' || strlen(id) > 200)
		return false;
	for (; *id != '\0'; id++)
		if (!isalnum((unsigned char)*id) && *id != '_')
			return false;
	return true;
}

static enum payment_call
intent_get(const char *ref, struct payment_object *o)
{
	char path[256];

	if (!id_ok(ref)) {
		memset(o, 0, sizeof *o);
		snprintf(o->why, sizeof o->why, "not an id of the provider");
		return PAYMENT_REFUSED;
	}
	snprintf(path, sizeof path, "/v1/payment_intents/%s", ref);
	return call("GET", path, NULL, NULL, o);
}

static enum payment_call
intent_cancel(const char *ref, struct payment_object *o)
{
	char path[256], idem[256];

	if (!id_ok(ref)) {
		memset(o, 0, sizeof *o);
		snprintf(o->why, sizeof o->why, "not an id of the provider");
		return PAYMENT_REFUSED;
	}
	snprintf(path, sizeof path, "/v1/payment_intents/%s/cancel", ref);
	snprintf(idem, sizeof idem, "cancel-%s", ref);
	return call("POST", path, "", idem, o);
}

static enum payment_call
refund_create(const char *refund_id, const char *intent, long long minor,
    struct payment_object *o)
{
	char amount[32];

	snprintf(amount, sizeof amount, "%lld", minor);
	return post("/v1/refunds", refund_id, o, (const char *const[]){
	    "payment_intent", intent, "amount", amount, "metadata[refund_id]", refund_id, NULL });
}

/* The HMAC-SHA256 of "t.body" with secret (n octets), as lower-case hex into out[65]. */
static void
signature_of(const char *secret, size_t n, const char *t, size_t tlen, const char *body,
    size_t len, char out[65])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char *signed_payload = malloc(tlen + 1 + len);

	out[0] = '\0';
	if (signed_payload == NULL)
		return;
	memcpy(signed_payload, t, tlen);
	signed_payload[tlen] = '.';
	memcpy(signed_payload + tlen + 1, body, len);
	if (HMAC(EVP_sha256(), secret, (int)n, (const unsigned char *)signed_payload,
	    tlen + 1 + len, mac, &maclen) != NULL && maclen == 32)
		for (unsigned i = 0; i < 32; i++)
			snprintf(out + 2 * i, 3, "%02x", mac[i]);
	free(signed_payload);
}

/*
 * Stripe-Signature: "t=<unix time>,v1=<hex>[,v1=<hex>...][,v0=...]": the time the event was
 * signed, and one v1 signature per secret the endpoint has (two while a secret is rolled).
 * The event is genuine when a v1 is the HMAC-SHA256 of "<t>.<body>" under one of ours; it is
 * fresh when t is at most PAYMENT_WEBHOOK_TOLERANCE seconds from now (a replay of an old event
 * is refused). STRIPE_WEBHOOK_SECRET holds ours, comma-separated, each accepted.
 */
static int
webhook_verify(const char *header, const char *body, size_t len, long long now, char *why,
    size_t whylen)
{
	const char *secrets = config_get()->stripe_webhook_secret;
	const char *t = NULL, *p, *s;
	size_t tlen = 0;
	long long when;
	bool any_v1 = false;

	if (*secrets == '\0') {
		snprintf(why, whylen, "STRIPE_WEBHOOK_SECRET is not set");
		return -1;
	}
	if (header == NULL || *header == '\0') {
		snprintf(why, whylen, "the Stripe-Signature header is missing");
		return -1;
	}
	for (p = header; *p != '\0'; p += *p == ',') {
		const char *end = strchr(p, ',');
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

		if (n > 2 && p[0] == 't' && p[1] == '=') {
			t = p + 2;
			tlen = n - 2;
		}
		any_v1 |= n > 3 && strncmp(p, "v1=", 3) == 0;
		p += n;
	}
	if (t == NULL || tlen == 0 || tlen > 12 || !any_v1) {
		snprintf(why, whylen, "the Stripe-Signature header has no timestamp or no v1 signature");
		return -1;
	}
	when = 0;
	for (size_t i = 0; i < tlen; i++) {
		if (!isdigit((unsigned char)t[i])) {
			snprintf(why, whylen, "the Stripe-Signature timestamp is not a number");
			return -1;
		}
		when = when * 10 + (t[i] - '0');
	}
	if (when < now - PAYMENT_WEBHOOK_TOLERANCE || when > now + PAYMENT_WEBHOOK_TOLERANCE) {
		snprintf(why, whylen, "the Stripe-Signature timestamp is more than %d s from now",
		    PAYMENT_WEBHOOK_TOLERANCE);
		return -1;
	}
	for (s = secrets; *s != '\0'; s += *s == ',') {
		const char *end = strchr(s, ',');
		size_t n = end != NULL ? (size_t)(end - s) : strlen(s);
		char want[65];

		while (n > 0 && *s == ' ') {
			s++;
			n--;
		}
		while (n > 0 && s[n - 1] == ' ')
			n--;
		if (n == 0) {
			s = end != NULL ? end : s + strlen(s);
			continue;
		}
		signature_of(s, n, t, tlen, body, len, want);
		for (p = header; *p != '\0' && want[0] != '\0'; p += *p == ',') {
			const char *pend = strchr(p, ',');
			size_t pn = pend != NULL ? (size_t)(pend - p) : strlen(p);

			if (pn == 3 + 64 && strncmp(p, "v1=", 3) == 0 &&
			    CRYPTO_memcmp(p + 3, want, 64) == 0)
				return 0;
			p += pn;
		}
		s = end != NULL ? end : s + strlen(s);
	}
	snprintf(why, whylen, "no Stripe-Signature v1 signature matches a webhook secret");
	return -1;
}

/* Reads event doc into *e; 0, or -1 when it is no event. */
static int
event_read(const cJSON *doc, struct payment_event *e)
{
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(doc, "data"), "object");
	const cJSON *created = cJSON_GetObjectItemCaseSensitive(doc, "created");

	memset(e, 0, sizeof *e);
	if (!cJSON_IsObject(doc) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "id")) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "type")) || !cJSON_IsObject(obj))
		return -1;
	copy(e->id, sizeof e->id, cJSON_GetObjectItemCaseSensitive(doc, "id"));
	copy(e->type, sizeof e->type, cJSON_GetObjectItemCaseSensitive(doc, "type"));
	e->created = cJSON_IsNumber(created) ? (long long)created->valuedouble : 0;
	object_read(obj, &e->object);
	return *e->id != '\0' && *e->type != '\0' ? 0 : -1;
}

static int
event_parse(const char *body, size_t len, struct payment_event *e)
{
	cJSON *doc = cJSON_ParseWithLength(body, len);
	int ret = event_read(doc, e);

	cJSON_Delete(doc);
	return ret;
}

/*
 * GET /v1/events: a page of at most max events created since the unix time since, newest
 * first, after event after (the last of the page before; "" for the first). The list is
 * Stripe's list object: data, and has_more.
 */
static enum payment_call
events_list(const char *after, long long since, struct payment_event *out, int max, int *n,
    bool *more, char *why, size_t whylen)
{
	char path[512];
	struct payment_object o;
	cJSON *doc = NULL;
	const cJSON *item;
	enum payment_call ret;

	*n = 0;
	*more = false;
	if (*after != '\0' && !id_ok(after)) {
		snprintf(why, whylen, "not an id of the provider");
		return PAYMENT_REFUSED;
	}
	snprintf(path, sizeof path, "/v1/events?limit=%d&created%%5Bgte%%5D=%lld%s%s", max, since,
	    *after != '\0' ? "&starting_after=" : "", after);
	if ((ret = call_doc("GET", path, NULL, NULL, &o, &doc)) != PAYMENT_DONE) {
		snprintf(why, whylen, "%s", o.why);
		return ret;
	}
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(doc, "data"))
		if (*n < max && event_read(item, &out[*n]) == 0)
			(*n)++;
	*more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "has_more"));
	cJSON_Delete(doc);
	return PAYMENT_DONE;
}

const struct payment_provider payment_stripe = {
	"stripe", intent_create, intent_get, intent_cancel, refund_create, webhook_verify,
	event_parse, events_list,
};
