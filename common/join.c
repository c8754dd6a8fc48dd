/* join: see join.h. */
#include <string.h>

#include <libpq-fe.h>

#include "http.h"
#include "input.h"
#include "join.h"
#include "problem.h"
#include "req.h"
#include "sql.h"

static const char *const teams[] = { "TEAM_A", "TEAM_B", NULL };

void
match_join_answer(struct req *r, const char *sql, const char *key, const char *settle)
{
	const char *team = NULL;
	PGresult *res;

	body_enum(r, "team", IN_REQUIRED, teams, &team);
	if (problem_fields_or_send(r) != 0)
		return;
	/* the join and the answer in one statement (match_request_json,
	 * sql/areas/90_json.sql), which is the whole transaction */
	sql_begin_one(r);
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
	sql_commit_and_send(r, 200, db_value(res, 0, 0));
}
