/* requests: a player's match requests: open one on a free slot (held until paid), confirm the
 * payment (which sends the invitations), list and read them, leave or report absence (handing
 * the place to a substitute or not), check in by GPS and cancel; the waiting list of a full
 * match; weekly series of them (one per week on the same court and time); the feed of open
 * public matches and joining from it, or asking its players for a place; and the result of
 * a played match. Any valid token may act as a player; a request is visible to its active
 * players only, everyone else gets 404 (the feed shows open public ones, without their link
 * token).
 *
 * Every write is one transaction around one function of sql/areas/ (the match lifecycle of
 * 60_lifecycle.sql, or the places, open matches, results and series areas after it), which
 * locks the match, checks the rules and writes the state, ledger and notifications; its
 * refusals arrive as problem codes (common/sql.c). Double booking is settled by the
 * exclusion constraint match_requests_no_double_booking, never by a check. */
#include <math.h>
#include <string.h>

#include "config.h"
#include "sql.h"
#include "http.h"
#include "input.h"
#include "join.h"
#include "page.h"
#include "payment.h"
#include "problem.h"
#include "share.h"

#define CUSTOM_MESSAGE_MAX	500	/* characters */
#define SEARCH_RADIUS_DEFAULT	10.0	/* km */
#define SEARCH_RADIUS_MAX	100.0	/* km */
#define SERIES_WEEKS_MAX	26
#define RESULT_SETS_MAX		5
#define RESULT_GAMES_MAX	99	/* games of a team in a set (a tie-break set counts points) */
#define REASON_MAX		500	/* characters of a dispute's reason */

static const char *const formats[] = { "TWO_VS_TWO", "ONE_VS_ONE", "AMERICANO", NULL };
/* ANY is a search filter only: a match is at one level */
static const char *const skills[] = { "BEGINNER", "INTERMEDIATE", "ADVANCED", "PROFESSIONAL",
    NULL };
static const char *const waitlist_teams[] = { "TEAM_A", "TEAM_B", "ANY", NULL };
static const char *const visibilities[] = { "PUBLIC", "PRIVATE", NULL };

/* Characters (not bytes) of a UTF-8 string. */
static size_t
utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* JSON text of match request id as this transaction sees it, with the caller's own share;
 * NULL after answering. */
static const char *
match_json(struct req *r, const char *id)
{
	PGresult *res = sql_query(r,
	    "SELECT json_match_request(m, true, $2::uuid) FROM match_requests m WHERE m.id = $1::uuid",
	    id, r->user_id);

	if (res == NULL)
		return NULL;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Match request");
		return NULL;
	}
	return db_value(res, 0, 0);
}

/* GET /api/match/requests/my?limit=&cursor=: 200 with every request the caller plays in
 * (cancelled and completed included): those not yet over first, soonest first, then past
 * ones, latest first, a page at a time (page.h); 400 bad limit or cursor; 401. The first
 * page's instant travels in the cursor, so a match that ends while the caller pages stays
 * on the side of the line it was on and is listed once. */
static void
requests_mine(struct req *r)
{
	page_list(r, "tbtu",
	    "WITH t AS (SELECT COALESCE(($3::json->>0)::timestamptz, now()) AS at), "
	    "s AS (SELECT m, m.ends_at <= t.at AS ended "
	    "        FROM match_requests m, t "
	    "       WHERE EXISTS (SELECT 1 FROM match_players p "
	    "                      WHERE p.match_request_id = m.id AND p.player_id = $1::uuid "
	    "                        AND p.left_at IS NULL) "
	    "         AND ($3::json IS NULL OR CASE "
	    "              WHEN ($3::json->>1)::boolean THEN m.ends_at <= t.at "
	    "                   AND (m.starts_at, ($3::json->>3)::uuid) "
	    "                       < (($3::json->>2)::timestamptz, m.id) "
	    "              ELSE m.ends_at <= t.at OR (m.starts_at, m.id) "
	    "                   > (($3::json->>2)::timestamptz, ($3::json->>3)::uuid) END) "
	    "       ORDER BY m.ends_at <= t.at, "
	    "                CASE WHEN m.ends_at > t.at THEN m.starts_at END, "
	    "                m.starts_at DESC, m.id "
	    "       LIMIT $2::int) "
	    "SELECT json_match_request(s.m, true, $1::uuid), "
	    "       json_build_array(t.at, s.ended, (s.m).starts_at, (s.m).id) "
	    "  FROM s, t "
	    " ORDER BY s.ended, CASE WHEN NOT s.ended THEN (s.m).starts_at END, "
	    "          (s.m).starts_at DESC, (s.m).id",
	    r->user_id);
}

/* GET /api/match/requests/{id}: 200 with the request; 401; 404 unknown or not a player. */
static void
request_get(struct req *r)
{
	sql_send_json(r, 200, "Match request",
	    "SELECT json_match_request(m, true, $2::uuid) FROM match_requests m "
	    " WHERE m.id = $1::uuid "
	    "   AND EXISTS (SELECT 1 FROM match_players p "
	    "                WHERE p.match_request_id = m.id AND p.player_id = $2::uuid "
	    "                  AND p.left_at IS NULL)",
	    req_param(r, "id"), r->user_id);
}

/* The create body, checked, as SQL parameter text. */
struct create_input {
	const char	*resource, *date, *start, *format, *skill, *message;
	const char	*duration, *lat, *lng, *radius;
	const char	*visibility, *competitive;	/* PUBLIC / PRIVATE, "true" / "false" */
};

/* Reads and checks the create body into *in; 0, or -1 after answering 400. */
static int
create_input_or_problem(struct req *r, struct create_input *in)
{
	long duration = 0;
	double lat = 0, lng = 0, radius = SEARCH_RADIUS_DEFAULT;
	bool competitive = true;

	in->message = NULL;
	in->visibility = "PUBLIC";
	body_uuid(r, "resourceId", IN_REQUIRED, &in->resource);
	body_date(r, "bookingDate", IN_REQUIRED, &in->date);
	body_time(r, "startTime", IN_REQUIRED, false, &in->start);
	if (body_int(r, "slotDurationMinutes", IN_REQUIRED, &duration) &&
	    (duration < 1 || duration > 1440))
		problem_field(r, "slotDurationMinutes", "must be between 1 and 1440");
	body_enum(r, "format", IN_REQUIRED, formats, &in->format);
	body_enum(r, "skillLevel", IN_REQUIRED, skills, &in->skill);
	if (body_string(r, "customMessage", IN_NULLABLE, &in->message) &&
	    utf8_chars(in->message) > CUSTOM_MESSAGE_MAX)
		problem_field(r, "customMessage", "must be at most 500 characters");
	body_latitude(r, "searchLat", IN_REQUIRED, &lat);
	body_longitude(r, "searchLng", IN_REQUIRED, &lng);
	if (body_number(r, "searchRadiusKm", IN_NULLABLE, &radius) &&
	    !(radius > 0 && radius <= SEARCH_RADIUS_MAX))
		problem_field(r, "searchRadiusKm", "must be greater than 0 and at most 100");
	body_enum(r, "visibility", IN_NULLABLE, visibilities, &in->visibility);
	body_bool(r, "competitive", IN_NULLABLE, &competitive);
	if (problem_fields_or_send(r) != 0)
		return -1;
	in->competitive = competitive ? "true" : "false";
	in->duration = input_fmt_long(r, duration);
	in->lat = input_fmt_double(r, lat);
	in->lng = input_fmt_double(r, lng);
	in->radius = input_fmt_double(r, radius);
	return 0;
}

/* POST /api/match/requests: 201 with the new request, PENDING_PAYMENT until its expiresAt
 * (with a payment provider, its myPayment carries the PaymentIntent's client secret);
 * 400; 401; 404 resource unknown or not visible; 409 SLOT_NOT_OFFERED (no such slot, or not
 * the court's slot duration), SLOT_IN_PAST, NOT_BOOKABLE (no price), SLOT_TAKEN, HOLD_LIMIT
 * (MAX_UNPAID_HOLDS unpaid holds already), and the venue's booking rules:
 * OUTSIDE_BOOKING_WINDOW, TOO_SHORT_NOTICE, UPCOMING_LIMIT, DAILY_LIMIT, WEEKLY_LIMIT; 503
 * PAYMENT_PROVIDER_UNAVAILABLE, nothing held. */
static void
request_create(struct req *r)
{
	struct create_input in;
	const char *answer;
	PGresult *res;

	if (create_input_or_problem(r, &in) != 0)
		return;
	/* the terms, the hold and the answer in one statement (sql/areas/60_lifecycle.sql),
	 * which is the whole transaction; with a payment provider, the share's PaymentIntent
	 * is made in it too */
	if (payment_provider() == NULL)
		sql_begin_one(r);
	else if (sql_begin(r) != 0)
		return;
	res = sql_query(r,
	    "SELECT match_create($1, $2::boolean, $3::uuid, $4::uuid, $5::date, $6::time, $7::int, "
	    "                    $8::text, $9::text, $10::text, $11::float8, $12::float8, "
	    "                    $13::numeric, $14::int, $15::int)",
	    in.visibility, in.competitive, in.resource, r->user_id, in.date, in.start,
	    in.duration, in.format, in.skill, in.message, in.lat, in.lng, in.radius,
	    input_fmt_long(r, config_get()->payment_hold_seconds),
	    input_fmt_long(r, config_get()->max_unpaid_holds));
	if (res == NULL)	/* 23P01: another live request holds the slot -> 409 SLOT_TAKEN */
		return;
	/* with a payment provider, the organizer's share there, in the same transaction */
	if ((answer = db_value(res, 0, 0)) != NULL && payment_provider() != NULL &&
	    (answer = share_answer_or_problem(r, payment_provider(), answer)) == NULL)
		return;
	sql_commit_and_send(r, 201, answer);
}

/* POST /api/match/requests/{id}/confirm-payment: 200 with the request, now OPEN, the
 * organizer's payment PAID and the eligible players invited; 401; 403 NOT_ORGANIZER; 404
 * unknown or not a player; 409 PAYMENT_WINDOW_PASSED (the hold is ended then),
 * INVALID_STATE (already paid, or cancelled). Any body is ignored. With a payment provider
 * it is asked now for the organizer's PaymentIntent, and its word applied as its event's
 * would be: 409 PAYMENT_NOT_RECEIVED while the payment has not succeeded (or brought another
 * amount); 503 PAYMENT_PROVIDER_UNAVAILABLE, nothing changed. */
static void
request_confirm_payment(struct req *r)
{
	const char *id = req_param(r, "id");
	const struct payment_provider *pp = payment_provider();
	struct payment_object o;
	struct payment_args apply;
	const char *outcome;
	PGresult *res;

	if (sql_begin(r) != 0)
		return;
	res = pp == NULL ? sql_try(r, "SELECT match_pay($1::uuid, $2::uuid, $3::int)", id,
	    r->user_id, input_fmt_long(r, config_get()->min_reliability)) :
	    sql_try(r, "SELECT payment_to_confirm($1::uuid, $2::uuid)", id, r->user_id);
	if (res == NULL) {
		/* a lapsed hold ends now, in a transaction of its own, and that outlives the
		 * refusal; should that fail too, the sweeper ends it */
		if (strcmp(r->db->err.message, "PAYMENT_WINDOW_PASSED") == 0) {
			struct db_error refused = r->db->err;

			db_end(r->db);
			(void)sql_try(r, "SELECT match_expire_holds(ARRAY[$1::uuid])", id);
			r->db->err = refused;
		}
		sql_answer_error(r);
		return;
	}
	if (pp == NULL) {
		sql_commit_and_send(r, 200, match_json(r, id));
		return;
	}
	/* ask the provider now, and apply its word as its event would be */
	if (pp->intent_get(db_value(res, 0, 0), &o) != PAYMENT_DONE) {
		share_provider_down(r, &o);
		return;
	}
	payment_intent_args(pp, &o, &apply);
	if ((res = sql_query_n(r, PAYMENT_INTENT_APPLY, apply.n, apply.v)) == NULL)
		return;
	outcome = db_value(res, 0, 0);
	if (strcmp(outcome, "PAID") == 0 || strcmp(outcome, "ALREADY_PAID") == 0) {
		sql_commit_and_send(r, 200, match_json(r, id));
		return;
	}
	if (strcmp(outcome, "LATE_PAYMENT") == 0 || strcmp(outcome, "AMOUNT_MISMATCH") == 0) {
		/* what the money did (a refund, an issue) is kept, in a transaction of its own
		 * that outlives the refusal; should that fail, the webhook or the sweeper's
		 * reconciliation applies it */
		db_end(r->db);
		(void)sql_try_n(r, PAYMENT_INTENT_APPLY, apply.n, apply.v);
	}
	problem_send(r, 409, strcmp(outcome, "LATE_PAYMENT") == 0 ? "PAYMENT_WINDOW_PASSED" :
	    "PAYMENT_NOT_RECEIVED",
	    strcmp(outcome, "LATE_PAYMENT") == 0 ?
	    "The payment came after the payment window; the slot was released and the payment is refunded in full." :
	    strcmp(outcome, "AMOUNT_MISMATCH") == 0 ?
	    "The payment provider received another amount or currency than the share; an administrator will look at it." :
	    arena_printf(r->a, "The payment provider has not received the payment (its status: %s).",
		*o.status != '\0' ? o.status : "unknown"));
}

/* Runs the lifecycle function sql for the caller on match {id} in a transaction and answers
 * 204 once it committed. */
static void
transition_no_content(struct req *r, const char *sql)
{
	if (sql_begin(r) != 0 || sql_query(r, sql, req_param(r, "id"), r->user_id) == NULL)
		return;
	sql_commit_and_no_content(r);
}

/* The optional body {"substitutePlayerId"} of a leave or an absence into *sub (NULL when
 * none); 0, or -1 after answering 400. */
static int
substitute_or_problem(struct req *r, const char **sub)
{
	*sub = NULL;
	if (body_uuid(r, "substitutePlayerId", IN_NULLABLE, sub) &&
	    strcmp(*sub, r->user_id) == 0)
		problem_field(r, "substitutePlayerId", "must be another player");
	return problem_fields_or_send(r);
}

/* Runs the lifecycle function sql ($1 match, $2 caller, $3 MIN_RELIABILITY, $4 substitute
 * or NULL) in a transaction and answers 204 once it committed. */
static void
withdraw_no_content(struct req *r, const char *sql)
{
	const char *sub;

	if (substitute_or_problem(r, &sub) != 0 || sql_begin(r) != 0)
		return;
	if (sql_query(r, sql, req_param(r, "id"), r->user_id,
	    input_fmt_long(r, config_get()->min_reliability), sub) == NULL)
		return;
	sql_commit_and_no_content(r);
}

/* DELETE /api/match/requests/{id}/leave [{"substitutePlayerId"}]: 204, the caller is out,
 * refunded what this join paid, and a MATCHED match is OPEN again; a substitute named gets
 * the place first, as a HANDOVER invitation (sql/areas/65_places.sql); 400; 401; 404 unknown
 * or not a player, SUBSTITUTE_NOT_FOUND; 409 ORGANIZER_CANNOT_LEAVE, INVALID_STATE (not OPEN
 * or MATCHED), LEAVE_TOO_LATE (48 h or less before the start), SUBSTITUTE_UNAVAILABLE (in
 * this match or another at that time). */
static void
request_leave(struct req *r)
{
	withdraw_no_content(r, "SELECT match_leave($1::uuid, $2::uuid, "
	    "p_min_reliability => $3::int, p_substitute => $4::uuid)");
}

/* POST /api/match/requests/{id}/absence [{"substitutePlayerId"}]: 204, the caller is out
 * without refund, the others are told and a MATCHED match is OPEN again; substitutes are
 * invited, or with a substitute named, the place is handed to them first, and when anyone
 * takes and pays it until 2 h before the start the caller is refunded in full and a late
 * absence costs nothing; else inside 24 h of the start the caller's reliability drops by 10;
 * 400; 401; 404 unknown or not a player, SUBSTITUTE_NOT_FOUND; 409 ORGANIZER_CANNOT_LEAVE,
 * INVALID_STATE (not OPEN or MATCHED), MATCH_STARTED, SUBSTITUTE_UNAVAILABLE. */
static void
request_absence(struct req *r)
{
	withdraw_no_content(r, "SELECT match_absence($1::uuid, $2::uuid, $3::int, "
	    "p_substitute => $4::uuid)");
}

/* POST /api/match/requests/{id}/checkin?lat=&lng=&accuracy=: 204, the caller is checked in
 * (again: nothing changes) and when every player is, the match is CONFIRMED; 400; 401; 404
 * unknown or not a player; 409 INVALID_STATE (not MATCHED or CONFIRMED), CHECKIN_TOO_EARLY
 * (more than 30 min before the start), CHECKIN_CLOSED (after the end), INACCURATE_POSITION,
 * TOO_FAR (from the venue). */
static void
request_checkin(struct req *r)
{
	const struct config *cfg = config_get();
	double lat = 0, lng = 0, accuracy = 0;

	query_latitude(r, "lat", IN_REQUIRED, &lat);
	query_longitude(r, "lng", IN_REQUIRED, &lng);
	if (query_number(r, "accuracy", IN_REQUIRED, &accuracy) && accuracy < 0)
		problem_field(r, "accuracy", "must be 0 or more");
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0)
		return;
	if (sql_query(r,
	    "SELECT match_checkin($1::uuid, $2::uuid, $3::float8, $4::float8, $5::float8, "
	    "                     $6::int, $7::int)",
	    req_param(r, "id"), r->user_id, input_fmt_double(r, lat), input_fmt_double(r, lng),
	    input_fmt_double(r, accuracy), input_fmt_long(r, cfg->checkin_radius_m),
	    input_fmt_long(r, cfg->checkin_max_accuracy_m)) == NULL)
		return;
	sql_commit_and_no_content(r);
}

/* DELETE /api/match/requests/{id}: 204, the match is CANCELLED (already: nothing changes),
 * joined players who paid are refunded in full, the organizer too when 24 h or more ahead,
 * pending payments are cancelled, pending invitations expire and every player is told;
 * 401; 403 NOT_ORGANIZER; 404 unknown or not a player; 409 INVALID_STATE (CONFIRMED or
 * COMPLETED), MATCH_STARTED. */
static void
request_cancel(struct req *r)
{
	transition_no_content(r, "SELECT match_cancel($1::uuid, $2::uuid)");
}

/* POST /api/match/requests/{id}/waitlist {"team": "TEAM_A" | "TEAM_B" | "ANY"}: 201 with the
 * caller's entry, {"matchRequestId", "playerId", "team", "position", "joinedAt"}: when a
 * place of that team frees, the first player on the list who is free at that time gets an
 * exclusive offer of it (an invitation of kind OFFER, sql/areas/65_places.sql); 400; 401; 404
 * unknown match, or PRIVATE and the caller not in it; 409 MATCH_NOT_FULL (only a MATCHED
 * match has a list), MATCH_STARTED, ALREADY_IN_MATCH, ALREADY_WAITING, LEVEL_MISMATCH (a
 * competitive PUBLIC match of another level than the caller's effective one). */
static void
waitlist_join(struct req *r)
{
	const char *team = NULL;
	PGresult *res;

	body_enum(r, "team", IN_REQUIRED, waitlist_teams, &team);
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0)
		return;
	res = sql_query(r, "SELECT match_waitlist_join($1::uuid, $2::uuid, $3::text)",
	    req_param(r, "id"), r->user_id, team);
	if (res == NULL)
		return;
	res = sql_query(r, "SELECT json_waitlist_entry($1::uuid)", db_value(res, 0, 0));
	if (res == NULL)
		return;
	sql_commit_and_send(r, 201, db_value(res, 0, 0));
}

/* DELETE /api/match/requests/{id}/waitlist: 204, the caller is off the list; 401; 404 not on
 * the list of that match. */
static void
waitlist_leave(struct req *r)
{
	if (sql_query(r, "SELECT match_waitlist_leave($1::uuid, $2::uuid)", req_param(r, "id"),
	    r->user_id) != NULL)
		req_send_no_content(r);
}

/* The body's "sets" as JSON text into *out when they are a result: 1 to 5 sets, each two
 * whole numbers of games 0..99 (TEAM_A's first) with a winner, one team winning more sets;
 * else a field problem. */
static void
result_sets(struct req *r, const char **out)
{
	const cJSON *sets = r->body != NULL ?
	    cJSON_GetObjectItemCaseSensitive(r->body, "sets") : NULL, *set;
	int n = 0, won_a = 0, won_b = 0;

	*out = NULL;
	if (sets == NULL || cJSON_IsNull(sets)) {
		problem_field(r, "sets", "is required");
		return;
	}
	if (!cJSON_IsArray(sets) || (n = cJSON_GetArraySize(sets)) < 1 || n > RESULT_SETS_MAX) {
		problem_field(r, "sets", "must be an array of 1 to 5 sets");
		return;
	}
	cJSON_ArrayForEach(set, sets) {
		const cJSON *a = cJSON_GetArrayItem(set, 0), *b = cJSON_GetArrayItem(set, 1);

		if (!cJSON_IsArray(set) || cJSON_GetArraySize(set) != 2 || !cJSON_IsNumber(a) ||
		    !cJSON_IsNumber(b) || a->valuedouble != floor(a->valuedouble) ||
		    b->valuedouble != floor(b->valuedouble) || a->valuedouble < 0 ||
		    b->valuedouble < 0 || a->valuedouble > RESULT_GAMES_MAX ||
		    b->valuedouble > RESULT_GAMES_MAX) {
			problem_field(r, "sets", "each set must be [games of TEAM_A, games of TEAM_B], "
			    "whole numbers from 0 to 99");
			return;
		}
		if (a->valuedouble == b->valuedouble) {
			problem_field(r, "sets", "every set must have a winner");
			return;
		}
		won_a += a->valuedouble > b->valuedouble;
		won_b += a->valuedouble < b->valuedouble;
	}
	if (won_a == won_b) {
		problem_field(r, "sets", "one team must win more sets");
		return;
	}
	*out = cJSON_PrintUnformatted(sets);
}

/* Answers 200 or 201 with the result of match {id} as this transaction sees it, committed. */
static void
result_answer(struct req *r, int status)
{
	PGresult *res = sql_query(r, "SELECT json_match_result($1::uuid)", req_param(r, "id"));

	if (res != NULL)
		sql_commit_and_send(r, status, db_value(res, 0, 0));
}

/* POST /api/match/requests/{id}/result {"sets": [[6, 4], [3, 6], [10, 8]]}: 201 with the
 * result, {"sets", "winner", "status": "PENDING", "reportedBy", "reportedAt"}: the other
 * team's players confirm or dispute it; 400; 401; 404 unknown or not a player; 409
 * NO_RESULT_FOR_FORMAT (AMERICANO), MATCH_NOT_PLAYED (neither CONFIRMED nor started),
 * RESULT_EXISTS (one result per match). */
static void
result_report(struct req *r)
{
	const char *sets;

	result_sets(r, &sets);
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0)
		return;
	if (sql_query(r, "SELECT match_result_report($1::uuid, $2::uuid, $3::jsonb)",
	    req_param(r, "id"), r->user_id, sets) == NULL)
		return;
	result_answer(r, 201);
}

/* POST /api/match/requests/{id}/result/confirm: 200 with the result, CONFIRMED (again:
 * nothing changes); a competitive match's ratings move, once; 401; 403 SAME_TEAM (the
 * reporting team's players cannot confirm); 404 unknown or not a player, RESULT_NOT_FOUND;
 * 409 RESULT_DISPUTED. */
static void
result_confirm(struct req *r)
{
	if (sql_begin(r) != 0 || sql_query(r,
	    "SELECT match_result_answer($1::uuid, $2::uuid, true, NULL)",
	    req_param(r, "id"), r->user_id) == NULL)
		return;
	result_answer(r, 200);
}

/* POST /api/match/requests/{id}/result/dispute {"reason"}: 200 with the result, DISPUTED
 * (again: nothing changes), the reporting team told; 400; 401; 403 SAME_TEAM; 404 unknown or
 * not a player, RESULT_NOT_FOUND; 409 RESULT_CONFIRMED. */
static void
result_dispute(struct req *r)
{
	const char *reason = NULL;

	if (body_string(r, "reason", IN_REQUIRED | IN_NOT_BLANK, &reason) &&
	    utf8_chars(reason) > REASON_MAX)
		problem_field(r, "reason", "must be at most 500 characters");
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0)
		return;
	if (sql_query(r, "SELECT match_result_answer($1::uuid, $2::uuid, false, $3)",
	    req_param(r, "id"), r->user_id, reason) == NULL)
		return;
	result_answer(r, 200);
}

/* GET /api/match/open?lat&lng&radiusKm&date&from&to&format&limit&cursor: 200 with the OPEN,
 * PUBLIC matches within radiusKm (default 10, at most 100) that have not started and have a
 * place free, that the caller could join now: of the caller's level when competitive (any
 * level when friendly), not the caller's own, not at the time of another match of the
 * caller, not refused by the club's booking rules; on date (the venue's local date) and
 * starting from..to when given, of format when given; sorted by start, distance and id, a
 * page at a time (page.h). Each is the match object (without its link token) with
 * distanceKm and freePlaces {"TEAM_A", "TEAM_B"}. 400; 401. */
static void
open_feed(struct req *r)
{
	double lat = 0, lng = 0, radius = SEARCH_RADIUS_DEFAULT;
	const char *date = NULL, *from = NULL, *to = NULL, *format = NULL;
	bool have_from, have_to;

	query_latitude(r, "lat", IN_REQUIRED, &lat);
	query_longitude(r, "lng", IN_REQUIRED, &lng);
	if (query_number(r, "radiusKm", 0, &radius) && !(radius > 0 && radius <= SEARCH_RADIUS_MAX))
		problem_field(r, "radiusKm", "must be greater than 0 and at most 100");
	query_date(r, "date", 0, &date);
	have_from = query_time(r, "from", 0, &from);
	have_to = query_time(r, "to", 0, &to);
	/* HH:MM:SS text orders like the times it names */
	if (have_from && have_to && strcmp(from, to) > 0)
		problem_field(r, "to", "must not be before from");
	query_enum(r, "format", 0, formats, &format);
	page_list(r, "tnu",
	    "SELECT doc, key FROM match_open_feed($1::uuid, $2::float8, $3::float8, $4::numeric, "
	    "    $5::date, $6::time, $7::time, $8::text, $9::int, $10::json)",
	    r->user_id, input_fmt_double(r, lat), input_fmt_double(r, lng),
	    input_fmt_double(r, radius), date, from, to, format);
}

/* POST /api/match/requests/{id}/join {"team"}: 200 with the match request: the caller joins
 * a PUBLIC match from the feed, with the rules and payment of joining by link; 400; 401; 404
 * unknown, or PRIVATE and the caller not in it; 409 LEVEL_MISMATCH (a competitive match of
 * another level than the caller's), MATCH_NOT_OPEN, MATCH_STARTED, ALREADY_IN_MATCH,
 * TEAM_FULL, OFFER_FOR_OTHER_TEAM, and the club's booking rules. */
static void
request_join(struct req *r)
{
	match_join_answer(r,
	    "SELECT match_request_json(match_join_open($1::uuid, $2::uuid, $3::text), $2::uuid)",
	    req_param(r, "id"),
	    "SELECT match_offers_settle(m.id, now()) "
	    "  FROM (SELECT id FROM match_requests WHERE id = $1::uuid FOR UPDATE) m");
}

/* POST /api/match/series: a match request's body plus "weeks" (1-26): 201 with the series,
 * {"id", "created": [match requests, PENDING_PAYMENT each with its own expiresAt],
 * "skipped": [{"bookingDate", "code"}]}, one request on bookingDate and on the same weekday
 * of each following week; a date that cannot be booked is skipped with the 409 code its
 * own booking would get (SLOT_NOT_OFFERED, SLOT_IN_PAST, NOT_BOOKABLE, SLOT_TAKEN, the booking
 * rules); 400; 401; 404 resource unknown or not visible; 409 HOLD_LIMIT (the series counts as
 * one hold), NO_BOOKABLE_DATE (every date skipped: nothing is made). With a payment provider
 * each match has its own PaymentIntent (its myPayment's client secret); 503
 * PAYMENT_PROVIDER_UNAVAILABLE, nothing made. */
static void
series_create(struct req *r)
{
	struct create_input in;
	long weeks = 0;
	const char *series;
	PGresult *res;
	int i;

	if (body_int(r, "weeks", IN_REQUIRED, &weeks) && (weeks < 1 || weeks > SERIES_WEEKS_MAX))
		problem_field(r, "weeks", "must be between 1 and 26");
	if (create_input_or_problem(r, &in) != 0 || sql_begin(r) != 0 ||
	    sql_query(r, "SELECT match_new_terms($1, $2::boolean)", in.visibility,
	    in.competitive) == NULL)
		return;
	res = sql_query(r,
	    "SELECT match_series_hold($1::uuid, $2::uuid, $3::date, $4::time, $5::int, $6::text, "
	    "    $7::text, $8::text, $9::float8, $10::float8, $11::numeric, $12::int, $13::int, "
	    "    p_max_holds => $14::int)",
	    in.resource, r->user_id, in.date, in.start, in.duration, in.format, in.skill,
	    in.message, in.lat, in.lng, in.radius, input_fmt_long(r, weeks),
	    input_fmt_long(r, config_get()->payment_hold_seconds),
	    input_fmt_long(r, config_get()->max_unpaid_holds));
	if (res == NULL)
		return;
	series = db_value(res, 0, 0);
	/* with a payment provider, each match's share at the provider, in this transaction */
	if (payment_provider() != NULL) {
		if ((res = sql_query(r, "SELECT match_request_id FROM match_series_matches "
		    " WHERE series_id = $1::uuid ORDER BY match_request_id", series)) == NULL)
			return;
		for (i = 0; i < PQntuples(res); i++)
			if (share_intent_or_problem(r, payment_provider(), db_value(res, i, 0)) != 0)
				return;
	}
	/* a statement of its own: a STABLE function sees the rows of statements before it */
	res = sql_query(r, "SELECT json_match_series($1::uuid)", series);
	if (res == NULL)
		return;
	sql_commit_and_send(r, 201, db_value(res, 0, 0));
}

/* GET /api/match/series/{id}: 200 with the series, its requests as they are now; 401; 404
 * unknown or not the caller's (only its organizer sees a series). */
static void
series_get(struct req *r)
{
	sql_send_json(r, 200, "Series",
	    "SELECT json_match_series(s.id) FROM match_series s "
	    " WHERE s.id = $1::uuid AND s.organizer_id = $2::uuid",
	    req_param(r, "id"), r->user_id);
}

/* DELETE /api/match/series/{id}: 204, every request of the series that has not started and
 * is not CONFIRMED or over is cancelled as DELETE /api/match/requests/{id} would (refunds,
 * notices); the others stay as they are (again: nothing changes); 401; 404 unknown or not
 * the caller's. */
static void
series_cancel(struct req *r)
{
	transition_no_content(r, "SELECT match_series_cancel($1::uuid, $2::uuid)");
}

/* Commits, then answers status with place request id as this transaction sees it. */
static void
place_request_answer_json(struct req *r, int status, const char *id)
{
	PGresult *res = sql_query(r,
	    "SELECT json_place_request(q) FROM place_requests q WHERE q.id = $1::uuid", id);

	if (res != NULL)
		sql_commit_and_send(r, status, db_value(res, 0, 0));
}

/* POST /api/match/requests/{id}/place-requests [{"team", "message"}]: 201 with the place
 * request, PENDING: the caller, of another level than this competitive PUBLIC match, asks
 * its players for a place in team (TEAM_A, TEAM_B or ANY, the default), and each is told;
 * the match may be OPEN or MATCHED (full: approved, the caller waits on its list); 400; 401;
 * 404 unknown or PRIVATE; 409 ALREADY_IN_MATCH, MATCH_STARTED, MATCH_NOT_OPEN,
 * JOIN_INSTEAD (friendly or of the caller's level: join it), PLAYER_BUSY (in another match at
 * that time), PLACE_REQUEST_EXISTS, and the club's booking rules. */
static void
place_request_create(struct req *r)
{
	const char *team = "ANY", *message = NULL;
	PGresult *res;

	body_enum(r, "team", 0, waitlist_teams, &team);
	if (body_string(r, "message", 0, &message) && message != NULL &&
	    utf8_chars(message) > REASON_MAX)
		problem_field(r, "message", "must be at most 500 characters");
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0)
		return;
	res = sql_query(r, "SELECT place_request_create($1::uuid, $2::uuid, $3, $4)",
	    req_param(r, "id"), r->user_id, team, message);
	if (res != NULL)
		place_request_answer_json(r, 201, db_value(res, 0, 0));
}

/* POST /api/match/place-requests/{id}/approve and .../reject: 200 with the place request:
 * the caller, a player now in its match, answers it (again: nothing changes; an answer may
 * change while the request is open); one reject makes it REJECTED, every player's approve
 * APPROVED, the requester granted a PLACE invitation (or a place on the waiting list when no
 * place is free); 401; 404 unknown or the caller not in the match; 409 PLACE_REQUEST_CLOSED
 * (not open: approved already, the requester in the match, or the match over, confirmed or
 * started). */
static void
place_request_respond(struct req *r, bool approve)
{
	if (sql_begin(r) != 0 || sql_query(r,
	    "SELECT place_request_answer($1::uuid, $2::uuid, $3::boolean)",
	    req_param(r, "id"), r->user_id, approve ? "true" : "false") == NULL)
		return;
	place_request_answer_json(r, 200, req_param(r, "id"));
}

static void
place_request_approve(struct req *r)
{
	place_request_respond(r, true);
}

static void
place_request_reject(struct req *r)
{
	place_request_respond(r, false);
}

/* GET /api/match/place-requests/{id}: 200 with the place request; 401; 404 unknown, or the
 * caller neither its requester nor a player now in its match. */
static void
place_request_get(struct req *r)
{
	sql_send_json(r, 200, "Place request",
	    "SELECT json_place_request(q) FROM place_requests q "
	    " WHERE q.id = $1::uuid "
	    "   AND (q.player_id = $2::uuid "
	    "        OR EXISTS (SELECT 1 FROM match_players mp "
	    "                    WHERE mp.match_request_id = q.match_request_id "
	    "                      AND mp.player_id = $2::uuid AND mp.left_at IS NULL))",
	    req_param(r, "id"), r->user_id);
}

/* GET /api/match/place-requests?limit=&cursor=: 200 with the caller's own place requests
 * (every status) and the PENDING ones of matches the caller plays in that wait for the
 * caller's answer (still open: the match open or full and not started, the requester not in
 * it), newest first, a page at a time (page.h); 400; 401. */
static void
place_requests_list(struct req *r)
{
	page_list(r, "tu",
	    "SELECT json_place_request(q), json_build_array(q.created_at, q.id) "
	    "  FROM (SELECT q.* FROM place_requests q WHERE q.player_id = $1::uuid "
	    "        UNION ALL "
	    "        SELECT q.* FROM match_players mp "
	    "          JOIN match_requests m ON m.id = mp.match_request_id "
	    "          JOIN place_requests q ON q.match_request_id = mp.match_request_id "
	    "         WHERE mp.player_id = $1::uuid AND mp.left_at IS NULL "
	    "           AND q.status = 'PENDING' AND place_request_open(q, m, now()) "
	    "           AND NOT EXISTS (SELECT 1 FROM place_request_answers a "
	    "                            WHERE a.place_request_id = q.id "
	    "                              AND a.player_id = $1::uuid)) q "
	    " WHERE $3::json IS NULL OR (q.created_at, q.id) < "
	    "       (($3::json->>0)::timestamptz, ($3::json->>1)::uuid) "
	    " ORDER BY q.created_at DESC, q.id DESC LIMIT $2::int",
	    r->user_id);
}

static const struct route routes[] = {
	{ "GET", "/api/match/requests/my", requests_mine, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests", request_create, AUTH_PLAYER, BODY_JSON |
	  ROUTE_IDEMPOTENT },
	{ "GET", "/api/match/requests/{id}", request_get, AUTH_PLAYER, BODY_NONE },
	{ "DELETE", "/api/match/requests/{id}", request_cancel, AUTH_PLAYER, BODY_NONE |
	  ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/confirm-payment", request_confirm_payment,
	  AUTH_PLAYER, BODY_NONE |
	  ROUTE_IDEMPOTENT },
	{ "DELETE", "/api/match/requests/{id}/leave", request_leave, AUTH_PLAYER,
	  BODY_OPTIONAL | ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/absence", request_absence, AUTH_PLAYER,
	  BODY_OPTIONAL | ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/checkin", request_checkin, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests/{id}/join", request_join, AUTH_PLAYER, BODY_JSON |
	  ROUTE_IDEMPOTENT },
	{ "GET", "/api/match/open", open_feed, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests/{id}/place-requests", place_request_create, AUTH_PLAYER,
	  BODY_OPTIONAL | ROUTE_IDEMPOTENT },
	{ "GET", "/api/match/place-requests", place_requests_list, AUTH_PLAYER, BODY_NONE },
	{ "GET", "/api/match/place-requests/{id}", place_request_get, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/place-requests/{id}/approve", place_request_approve, AUTH_PLAYER,
	  BODY_NONE | ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/place-requests/{id}/reject", place_request_reject, AUTH_PLAYER,
	  BODY_NONE | ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/result", result_report, AUTH_PLAYER, BODY_JSON |
	  ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/result/confirm", result_confirm, AUTH_PLAYER,
	  BODY_NONE | ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/result/dispute", result_dispute, AUTH_PLAYER,
	  BODY_JSON | ROUTE_IDEMPOTENT },
	{ "POST", "/api/match/requests/{id}/waitlist", waitlist_join, AUTH_PLAYER, BODY_JSON |
	  ROUTE_IDEMPOTENT },
	{ "DELETE", "/api/match/requests/{id}/waitlist", waitlist_leave, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/series", series_create, AUTH_PLAYER, BODY_JSON | ROUTE_IDEMPOTENT },
	{ "GET", "/api/match/series/{id}", series_get, AUTH_PLAYER, BODY_NONE },
	{ "DELETE", "/api/match/series/{id}", series_cancel, AUTH_PLAYER, BODY_NONE |
	  ROUTE_IDEMPOTENT },
};

int
main(void)
{
	return http_main("requests", routes, sizeof routes / sizeof routes[0]);
}
