/* invitations: a player's pending invitations (offers of a place from a waiting list among
 * them), answering them, and joining a match by its shareable token. Any valid token may act
 * as a player.
 *
 * Accepting an invitation and joining by token are the JOIN transition of
 * sql/areas/60_lifecycle.sql (match_accept_invitation, match_join_by_token): the match row is
 * locked first so joins of one match run one after the other, the checks are made under that
 * lock, and the team-capacity CHECK of match_requests is the last guard. */
#include <string.h>

#include <libpq-fe.h>

#include "sql.h"
#include "http.h"
#include "join.h"
#include "log.h"
#include "page.h"
#include "problem.h"


/* GET /api/match/invitations?limit=&cursor=: 200 with the caller's pending invitations to
 * OPEN matches that have not started, newest first, a page at a time (page.h); 400 bad
 * limit or cursor; 401. */
static void
invitations_list(struct req *r)
{
	page_list(r, "tu",
	    "SELECT json_invitation(i), json_build_array(i.sent_at, i.id) "
	    "  FROM invitations i JOIN match_requests m ON m.id = i.match_request_id "
	    " WHERE i.player_id = $1::uuid AND i.status = 'PENDING' "
	    "   AND (i.expires_at IS NULL OR i.expires_at > now()) "
	    "   AND m.status = 'OPEN' AND m.starts_at > now() "
	    "   AND ($3::json IS NULL OR (i.sent_at, i.id) < "
	    "        (($3::json->>0)::timestamptz, ($3::json->>1)::uuid)) "
	    " ORDER BY i.sent_at DESC, i.id DESC LIMIT $2::int",
	    r->user_id);
}

/* POST /api/match/invitations/{id}/accept {"team"}: 200 with the match request; 400 team
 * missing or wrong; 401; 404 no such invitation of the caller; 409 INVALID_STATE (not
 * PENDING, or an offer that has lapsed), MATCH_NOT_OPEN, MATCH_STARTED, ALREADY_IN_MATCH,
 * TEAM_FULL, OFFER_FOR_OTHER_TEAM (an offer is for its own team's place). */
static void
invitation_accept(struct req *r)
{
	match_join_answer(r,
	    "SELECT match_request_json(match_accept_invitation($1::uuid, $2::uuid, $3::text), $2::uuid)",
	    req_param(r, "id"), "SELECT match_offers_settle_of($1::uuid, NULL)");
}

/* POST /api/match/invitations/{id}/decline: 204 (a declined offer passes its place to the
 * next player on the waiting list); 401; 404 no such invitation of the caller; 409
 * INVALID_STATE when it is no longer PENDING. */
static void
invitation_decline(struct req *r)
{
	if (sql_query(r, "SELECT match_decline_invitation($1::uuid, $2::uuid)",
	    req_param(r, "id"), r->user_id) != NULL)
		req_send_no_content(r);
}

/* POST /api/match/join/{token} {"team"}: 200 with the match request; 400; 401; 404 unknown
 * token; 409 MATCH_NOT_OPEN, MATCH_STARTED, ALREADY_IN_MATCH, TEAM_FULL (a place an open
 * offer holds is not free), OFFER_FOR_OTHER_TEAM. A pending invitation of the caller to the
 * match (an offer too) is accepted on the way. */
static void
join_by_token(struct req *r)
{
	match_join_answer(r,
	    "SELECT match_request_json(match_join_by_token($1::uuid, $2::uuid, $3::text), $2::uuid)",
	    req_param(r, "token"), "SELECT match_offers_settle_of(NULL, $1::uuid)");
}

static const struct route routes[] = {
	{ "GET", "/api/match/invitations", invitations_list, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/invitations/{id}/accept", invitation_accept, AUTH_PLAYER,
	  BODY_JSON |
	  ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/invitations/{id}/decline", invitation_decline, AUTH_PLAYER,
	  BODY_NONE },
	{ "POST", "/api/match/join/{token}", join_by_token, AUTH_PLAYER, BODY_JSON |
	  ROUTE_IDEMPOTENT },
};

int
main(void)
{
	return http_main("invitations", routes, sizeof routes / sizeof routes[0]);
}
