/* share: a player's share of a match at the payment provider. */
#include "share.h"

#include <stdlib.h>

#include <cJSON.h>

#include "log.h"
#include "problem.h"
#include "sql.h"

int
share_intent_or_problem(struct req *r, const struct payment_provider *pp, const char *match)
{
	struct payment_object o;
	PGresult *res = sql_query(r,
	    "SELECT payment_id, minor, currency FROM payment_intent_wanted($1::uuid, $2::uuid)",
	    match, r->user_id);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0)
		return 0;
	/* the call is made with the place held and locked: the provider is down, and nothing
	 * of the hold is left; the intent is made, and the place is the payer's. The row's id
	 * is the idempotency key, so a call made again returns the same intent. */
	if (pp->intent_create(db_value(res, 0, 0), match, strtoll(db_value(res, 0, 1), NULL, 10),
	    db_value(res, 0, 2), &o) != PAYMENT_DONE) {
		share_provider_down(r, &o);
		return -1;
	}
	return sql_query(r, "SELECT payment_intent_record($1::uuid, $2, $3, $4, $5)",
	    db_value(res, 0, 0), pp->name, o.id, o.secret, o.status) != NULL ? 0 : -1;
}

const char *
share_answer_or_problem(struct req *r, const struct payment_provider *pp, const char *answer)
{
	cJSON *doc = cJSON_Parse(answer);
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "id"));
	PGresult *res;

	if (id == NULL) {
		problem_internal(r);
		return NULL;
	}
	if (share_intent_or_problem(r, pp, id) != 0 ||
	    (res = sql_query(r, "SELECT match_request_json($1::uuid, $2::uuid)", id,
	    r->user_id)) == NULL)
		return NULL;
	return db_value(res, 0, 0);
}

void
share_provider_down(struct req *r, const struct payment_object *o)
{
	log_msg(r, "warning", "payment provider: %s", o->why);
	req_add_header(r, "Retry-After", "30");
	problem_send(r, 503, "PAYMENT_PROVIDER_UNAVAILABLE",
	    "The payment provider cannot be reached; nothing was held or charged. Try again.");
}
