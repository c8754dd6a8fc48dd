/* sql: request statements and the one table from database failures to answers. */
#include "sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "log.h"
#include "problem.h"
#include "req.h"

/* Constraints whose violation is a client's conflict, each with its own stable code. Every
 * name here is given explicitly in sql/, so a renamed constraint cannot silently stop
 * matching (tests/06-schema.bats checks that each one exists). */
static const struct {
	const char	*constraint;
	int		 status;
	const char	*code;
	const char	*detail;
} known_constraints[] = {
	{ "match_requests_no_double_booking", 409, "SLOT_TAKEN",
	  "The slot is already held or booked." },
	{ "match_requests_team_capacity", 409, "TEAM_FULL",
	  "The chosen team has no free place." },
	{ "match_requests_offered_places", 409, "TEAM_FULL",
	  "The chosen team has no free place: an open offer holds it." },
	{ "match_players_active_idx", 409, "ALREADY_IN_MATCH",
	  "You already play in this match." },
	{ "invitations_one_per_player", 409, "ALREADY_INVITED",
	  "The player was already invited to this match." },
	{ "payments_one_refund_per_payment", 409, "ALREADY_REFUNDED",
	  "This payment was already refunded." },
	{ "price_rules_no_overlap", 409, "PRICE_RULE_OVERLAP",
	  "The rule overlaps another rule of the same day type." },
	{ "court_blocks_no_overlap", 409, "BLOCK_OVERLAP",
	  "The block overlaps another block of the court." },
	{ "venue_holidays_one_per_date", 409, "HOLIDAY_EXISTS",
	  "The venue already has a holiday on that date." },
	{ "resource_schedules_closing_after_opening", 400, "INVALID_SCHEDULE",
	  "closingTime must be after openingTime." },
};

PGresult *
sql_try_n(struct req *r, const char *sql, int n, const char *const *params)
{
	return db_exec_n(r->db, sql, n, params);
}

PGresult *
sql_query_n(struct req *r, const char *sql, int n, const char *const *params)
{
	PGresult *res = db_exec_n(r->db, sql, n, params);

	if (res == NULL)
		sql_answer_error(r);
	return res;
}

/* A problem raised on purpose by a function of sql/: SQLSTATE CRnnn, the code as message. */
static bool
raised_problem(struct req *r, const struct db_error *e)
{
	int status;

	if (strncmp(e->sqlstate, "CR", 2) != 0)
		return false;
	status = atoi(e->sqlstate + 2);
	if (status < 400 || status > 599 || e->message[0] == '\0')
		return false;
	/* the members the function added (lifecycle_fail_with's p_members), as its HINT */
	problem_send_members(r, status, e->message, e->detail[0] != '\0' ? e->detail : e->message,
	    e->hint != NULL ? cJSON_Parse(e->hint) : NULL);
	return true;
}

void
sql_answer_error(struct req *r)
{
	const struct db_error *e = &r->db->err;
	size_t i;

	if (raised_problem(r, e))
		return;
	for (i = 0; e->constraint[0] != '\0' && i < sizeof known_constraints /
	    sizeof known_constraints[0]; i++)
		if (strcmp(e->constraint, known_constraints[i].constraint) == 0) {
			problem_send(r, known_constraints[i].status, known_constraints[i].code,
			    known_constraints[i].detail);
			return;
		}
	if (strncmp(e->sqlstate, "23", 2) == 0) {
		log_msg(r, "warn", "constraint %s (%s): %s", e->constraint, e->sqlstate, e->message);
		problem_send(r, 409, "CONFLICT", "The request conflicts with the current state.");
	} else if (strncmp(e->sqlstate, "22", 2) == 0) {
		log_msg(r, "warn", "data exception %s: %s", e->sqlstate, e->message);
		problem_send(r, 400, "INVALID_VALUE", "A value is out of range or malformed.");
	} else if (strcmp(e->sqlstate, "40001") == 0 || strcmp(e->sqlstate, "40P01") == 0) {
		log_msg(r, "warn", "concurrency %s: %s", e->sqlstate, e->message);
		problem_send(r, 409, "CONCURRENT_UPDATE", "Another request changed the data; retry.");
	} else if (db_unavailable(r->db)) {
		log_msg(r, "error", "database unavailable %s: %s", e->sqlstate, e->message);
		problem_send(r, 503, "DATABASE_UNAVAILABLE",
		    "The service is temporarily unavailable; retry later.");
	} else {
		log_msg(r, "error", "query failed %s: %s", e->sqlstate, e->message);
		problem_internal(r);
	}
}

int
sql_begin(struct req *r)
{
	if (r->tx_owned)	/* the driver's transaction (idem.h): join it */
		return 0;
	if (db_begin(r->db) == 0)
		return 0;
	sql_answer_error(r);
	return -1;
}

void
sql_begin_one(struct req *r)
{
	if (!r->tx_owned)
		db_begin_one(r->db);
}

int
sql_commit(struct req *r)
{
	if (r->tx_owned)	/* the driver commits, with the answer (idem.h) */
		return 0;
	if (db_commit(r->db) == 0)
		return 0;
	sql_answer_error(r);
	return -1;
}

int
sql_send_json_n(struct req *r, int status, const char *what, const char *sql, int n,
    const char *const *params)
{
	PGresult *res = sql_query_n(r, sql, n, params);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0)) {
		problem_not_found(r, what);
		return 0;
	}
	req_send_json(r, status, PQgetvalue(res, 0, 0));
	return 1;
}

void
sql_commit_and_send(struct req *r, int status, const char *json)
{
	if (json == NULL || sql_commit(r) != 0)
		return;
	req_send_json(r, status, json);
}

void
sql_commit_and_no_content(struct req *r)
{
	if (sql_commit(r) == 0)
		req_send_no_content(r);
}
