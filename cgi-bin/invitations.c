/* invitations: a player's pending invitations, answering them, and joining a match by its
 * shareable token. Any valid token may act as a player.
 *
 * Accepting an invitation and joining by token are one operation (join_or_problem): the
 * match row is locked first so joins of one match run one after the other, the checks are
 * made under that lock, and the team-capacity CHECK of match_requests is the last guard. */
#include <string.h>

#include <libpq-fe.h>

#include "db.h"
#include "http.h"
#include "input.h"
#include "log.h"
#include "problem.h"

static const char *const teams[] = { "TEAM_A", "TEAM_B", NULL };
static const char answered[] = "The invitation was already answered or has expired.";

/* GET /api/match/invitations: 200 with the caller's pending invitations to OPEN matches that
 * have not started, newest first; 401. */
static void
invitations_list(struct req *r)
{
	db_send_json(r, 200, "Invitations",
	    "SELECT COALESCE(json_agg(json_invitation(i) ORDER BY i.sent_at DESC, i.id DESC), "
	    "'[]') FROM invitations i JOIN match_requests m ON m.id = i.match_request_id "
	    "WHERE i.player_id = $1 AND i.status = 'PENDING' "
	    "AND m.status = 'OPEN' AND m.starts_at > now()",
	    r->user_id);
}

/* Adds the caller to the locked match match_id on team, inside the open transaction. Checks
 * the state first (invitation_id, when given, must still be PENDING), then writes the player
 * row, the PAID payment of price_per_player, the caller's own invitation ACCEPTED and
 * PLAYER_JOINED to the others; when that took the last place, the match becomes MATCHED, its
 * other pending invitations EXPIRED and every player is told MATCH_FULL. Each statement
 * runs on a fresh snapshot taken after the lock, so it sees every earlier join committed.
 * Returns 0, or -1 after answering 409 / 5xx. */
static int
join_or_problem(struct req *r, const char *match_id, const char *team, const char *invitation_id)
{
	PGresult *res;

	res = db_query(r,
	    "SELECT (SELECT i.status FROM invitations i WHERE i.id = $4::uuid), "
	    "m.status, m.starts_at > now(), "
	    "EXISTS (SELECT 1 FROM match_players p WHERE p.match_request_id = m.id "
	    "AND p.player_id = $2 AND p.left_at IS NULL), "
	    "CASE WHEN $3 = 'TEAM_A' THEN m.team_a_count ELSE m.team_b_count END < m.team_size "
	    "FROM match_requests m WHERE m.id = $1",
	    match_id, r->user_id, team, invitation_id);
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		log_msg(r, "error", "locked match %s not found again", match_id);
		problem_internal(r);
		return -1;
	}
	if (invitation_id != NULL && strcmp(PQgetvalue(res, 0, 0), "PENDING") != 0) {
		problem_conflict(r, "INVALID_STATE", answered);
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 1), "OPEN") != 0) {
		problem_conflict(r, "MATCH_NOT_OPEN", "The match is not open to new players.");
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 2), "t") != 0) {
		problem_conflict(r, "MATCH_STARTED", "The match has already started.");
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 3), "t") == 0) {
		problem_conflict(r, "ALREADY_IN_MATCH", "You already play in this match.");
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 4), "t") != 0) {
		problem_conflict(r, "TEAM_FULL", "The chosen team has no free place.");
		return -1;
	}

	/* The counters move by trigger, and the capacity CHECK refuses a player too many
	 * (db.c maps it to TEAM_FULL) should anything have slipped past the lock. */
	res = db_query(r,
	    "WITH accepted AS ("
	    "  UPDATE invitations SET status = 'ACCEPTED', responded_at = now() "
	    "  WHERE match_request_id = $1 AND player_id = $2 AND status = 'PENDING' "
	    "  RETURNING id), "
	    "joined AS ("
	    "  INSERT INTO match_players (match_request_id, player_id, team, role) "
	    "  VALUES ($1, $2, $3, 'PLAYER')), "
	    "paid AS ("
	    "  INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status) "
	    "  SELECT m.id, $2, 'PAYMENT', m.price_per_player, m.currency, 'PAID' "
	    "  FROM match_requests m WHERE m.id = $1), "
	    "told AS ("
	    "  INSERT INTO notifications (recipient_id, type, payload) "
	    "  SELECT p.player_id, 'PLAYER_JOINED', jsonb_build_object('matchRequestId', $1::uuid, "
	    "  'playerId', $2::uuid, 'team', $3::text) "
	    "  FROM match_players p WHERE p.match_request_id = $1 AND p.left_at IS NULL "
	    "  AND p.player_id <> $2) "
	    "SELECT count(*) FROM accepted",
	    match_id, r->user_id, team);
	if (res == NULL)
		return -1;
	/* the invitation was answered by someone else's hand (the sweeper) since the check */
	if (invitation_id != NULL && strcmp(PQgetvalue(res, 0, 0), "1") != 0) {
		problem_conflict(r, "INVALID_STATE", answered);
		return -1;
	}

	res = db_query(r,
	    "WITH m AS ("
	    "  UPDATE match_requests SET updated_at = now(), status = CASE "
	    "    WHEN team_a_count + team_b_count = 2 * team_size THEN 'MATCHED' ELSE status END "
	    "  WHERE id = $1 AND status = 'OPEN' RETURNING id, status), "
	    "matched AS (SELECT id FROM m WHERE status = 'MATCHED'), "
	    "expired AS ("
	    "  UPDATE invitations SET status = 'EXPIRED' "
	    "  WHERE match_request_id IN (SELECT id FROM matched) AND status = 'PENDING'), "
	    "told AS ("
	    "  INSERT INTO notifications (recipient_id, type, payload) "
	    "  SELECT p.player_id, 'MATCH_FULL', "
	    "  jsonb_build_object('matchRequestId', p.match_request_id) "
	    "  FROM match_players p WHERE p.match_request_id IN (SELECT id FROM matched) "
	    "  AND p.left_at IS NULL) "
	    "SELECT count(*) FROM m",
	    match_id);
	return res == NULL ? -1 : 0;
}

/* Ends a successful join: the match as it is now, committed, answered 200. */
static void
join_answer(struct req *r, const char *match_id)
{
	PGresult *res;
	const char *json;

	res = db_query(r, "SELECT json_match_request(m) FROM match_requests m WHERE m.id = $1",
	    match_id);
	if (res == NULL)
		return;
	if (PQntuples(res) != 1 || (json = db_value(res, 0, 0)) == NULL) {
		log_msg(r, "error", "joined match %s not found again", match_id);
		problem_internal(r);
		return;
	}
	if (db_commit(r) != 0)
		return;
	http_send_json(r, 200, json);
}

/* POST /api/match/invitations/{id}/accept {"team"}: 200 with the match request; 400 team
 * missing or wrong; 401; 404 no such invitation of the caller; 409 INVALID_STATE (not
 * PENDING), MATCH_NOT_OPEN, MATCH_STARTED, ALREADY_IN_MATCH, TEAM_FULL. */
static void
invitation_accept(struct req *r)
{
	const char *team = NULL, *id = req_param(r, "id"), *match_id;
	PGresult *res;

	body_enum(r, "team", IN_REQUIRED, teams, &team);
	if (problem_fields_or_send(r) != 0)
		return;
	if (db_begin(r) != 0)
		return;
	/* lock the match first: every join of it waits here for the one before */
	res = db_query(r,
	    "SELECT m.id FROM invitations i JOIN match_requests m ON m.id = i.match_request_id "
	    "WHERE i.id = $1 AND i.player_id = $2 FOR UPDATE OF m",
	    id, r->user_id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Invitation");
		return;
	}
	match_id = PQgetvalue(res, 0, 0);
	if (join_or_problem(r, match_id, team, id) != 0)
		return;
	join_answer(r, match_id);
}

/* POST /api/match/invitations/{id}/decline: 204; 401; 404 no such invitation of the
 * caller; 409 INVALID_STATE when it is no longer PENDING. */
static void
invitation_decline(struct req *r)
{
	const char *id = req_param(r, "id");
	PGresult *res;

	res = db_query(r,
	    "UPDATE invitations SET status = 'DECLINED', responded_at = now() "
	    "WHERE id = $1 AND player_id = $2 AND status = 'PENDING' RETURNING id",
	    id, r->user_id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 1) {
		http_send_no_content(r);
		return;
	}
	res = db_query(r, "SELECT status FROM invitations WHERE id = $1 AND player_id = $2",
	    id, r->user_id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0)
		problem_not_found(r, "Invitation");
	else
		problem_conflict(r, "INVALID_STATE", answered);
}

/* POST /api/match/join/{token} {"team"}: 200 with the match request; 400; 401; 404 unknown
 * token; 409 MATCH_NOT_OPEN, MATCH_STARTED, ALREADY_IN_MATCH, TEAM_FULL. A pending
 * invitation of the caller to the match is accepted on the way. */
static void
join_by_token(struct req *r)
{
	const char *team = NULL, *match_id;
	PGresult *res;

	body_enum(r, "team", IN_REQUIRED, teams, &team);
	if (problem_fields_or_send(r) != 0)
		return;
	if (db_begin(r) != 0)
		return;
	res = db_query(r, "SELECT id FROM match_requests WHERE invitation_token = $1 FOR UPDATE",
	    req_param(r, "token"));
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Match request");
		return;
	}
	match_id = PQgetvalue(res, 0, 0);
	if (join_or_problem(r, match_id, team, NULL) != 0)
		return;
	join_answer(r, match_id);
}

static const struct route routes[] = {
	{ "GET", "/api/match/invitations", invitations_list, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/invitations/{id}/accept", invitation_accept, AUTH_PLAYER,
	  BODY_JSON },
	{ "POST", "/api/match/invitations/{id}/decline", invitation_decline, AUTH_PLAYER,
	  BODY_NONE },
	{ "POST", "/api/match/join/{token}", join_by_token, AUTH_PLAYER, BODY_JSON },
};

int
main(void)
{
	return http_main("invitations", routes, sizeof routes / sizeof routes[0]);
}
