/* join: see join.h. */
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "http.h"
#include "input.h"
#include "join.h"
#include "payment.h"
#include "problem.h"
#include "req.h"
#include "share.h"
#include "sql.h"

static const char *const teams[] = { "TEAM_A", "TEAM_B", NULL };

void
match_join_answer(struct req *r, const char *sql, const char *key, const char *settle)
{
	const struct payment_provider *pp = payment_provider();
	const char *team = NULL, *answer;
	PGresult *res;

	body_enum(r, "team", IN_REQUIRED, teams, &team);
	if (problem_fields_or_send(r) != 0)
		return;
	/* the join and the answer in one statement (match_request_json,
	 * sql/areas/90_json.sql), which is the whole transaction; with a payment provider
	 * the share is owed for the payment window, and its PaymentIntent made in it too */
	if (pp == NULL)
		sql_begin_one(r);
	else if (sql_begin(r) != 0 ||
	    sql_query(r, "SELECT set_config('courts.share_hold_seconds', $1, true)",
	    input_fmt_long(r, config_get()->payment_hold_seconds)) == NULL)
		return;
	if ((res = sql_try(r, sql, key, r->user_id, team)) == NULL) {
		if (strcmp(r->db->err.message, "INVALID_STATE") == 0 ||
		    strcmp(r->db->err.message, "TEAM_FULL") == 0) {
			struct db_error refused = r->db->err;

			db_end(r->db);
			(void)sql_try(r, settle, key);
			r->db->err = refused;
		}
		sql_answer_error(r);
		return;
	}
	if ((answer = db_value(res, 0, 0)) != NULL && pp != NULL &&
	    (answer = share_answer_or_problem(r, pp, answer)) == NULL)
		return;
	sql_commit_and_send(r, 200, answer);
}
