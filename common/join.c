/* join: see join.h. */
#include <string.h>

#include <libpq-fe.h>

#include "http.h"
#include "input.h"
#include "join.h"
#include "log.h"
#include "problem.h"
#include "req.h"
#include "sql.h"

static const char *const teams[] = { "TEAM_A", "TEAM_B", NULL };

void
match_join_answer(struct req *r, const char *sql, const char *key, const char *settle)
{
	const char *team = NULL, *match_id;
	PGresult *res;

	body_enum(r, "team", IN_REQUIRED, teams, &team);
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0)
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
	match_id = db_value(res, 0, 0);
	res = sql_query(r, "SELECT json_match_request(m) FROM match_requests m WHERE m.id = $1",
	    match_id);
	if (res == NULL)
		return;
	if (PQntuples(res) != 1 || db_value(res, 0, 0) == NULL) {
		log_msg(r, "error", "joined match %s not found again", match_id);
		problem_internal(r);
		return;
	}
	sql_commit_and_send(r, 200, db_value(res, 0, 0));
}
