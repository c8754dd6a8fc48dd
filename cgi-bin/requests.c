/* requests: a player's match requests: open one on a free slot (held until paid), confirm the
 * payment (which sends the invitations), list and read them, leave, report absence, check in
 * by GPS and cancel. Any valid token may act as a player; a request is visible to its active
 * players only, everyone else gets 404.
 *
 * Every write is one transaction that first locks the request row (match_lock_or_problem), so
 * leave, absence, check-in, cancel and the joins of invitations.cgi (whose trigger updates the
 * same row) run one after the other on a match; double booking is settled by the exclusion
 * constraint match_requests_no_double_booking, never by a check. */
#include <stdbool.h>
#include <string.h>

#include "config.h"
#include "db.h"
#include "http.h"
#include "input.h"
#include "problem.h"

#define CUSTOM_MESSAGE_MAX	500	/* characters */
#define SEARCH_RADIUS_DEFAULT	10.0	/* km */
#define SEARCH_RADIUS_MAX	100.0	/* km */

static const char *const formats[] = { "TWO_VS_TWO", "ONE_VS_ONE", "AMERICANO", NULL };
/* ANY is a search filter only: a match is at one level */
static const char *const skills[] = { "BEGINNER", "INTERMEDIATE", "ADVANCED", "PROFESSIONAL",
    NULL };

/* What a write needs to know about a match and the caller, read under the row lock. */
struct match_state {
	const char	*status;
	const char	*cancel_reason;		/* NULL unless CANCELLED */
	bool		 organizer;		/* the caller organizes it */
	bool		 checked_in;		/* the caller has checked in */
	bool		 started;		/* now >= starts_at */
	bool		 leave_ok;		/* more than 48 h before the start */
	bool		 late;			/* less than 24 h before the start */
	bool		 lapsed;		/* the payment window has passed */
};

static bool
flag(const PGresult *res, int col)
{
	const char *v = db_value(res, 0, col);

	return v != NULL && v[0] == 't';
}

static bool
streq(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

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

/* Locks match request id and reads *st for the caller. Returns 0 when the caller is an
 * active player of it, or -1 after answering (404 for an unknown match or one the caller does
 * not play in, or the database error). Call inside a transaction. */
static int
match_lock_or_problem(struct req *r, const char *id, struct match_state *st)
{
	PGresult *res = db_query(r,
	    "SELECT m.status, m.cancel_reason, m.organizer_id = $2::uuid, "
	    "       p.checked_in_at IS NOT NULL, now() >= m.starts_at, "
	    "       m.starts_at - now() > interval '48 hours', "
	    "       m.starts_at - now() < interval '24 hours', m.expires_at <= now() "
	    "  FROM match_requests m "
	    "  JOIN match_players p ON p.match_request_id = m.id AND p.player_id = $2::uuid "
	    "                      AND p.left_at IS NULL "
	    " WHERE m.id = $1::uuid "
	    "   FOR UPDATE OF m",
	    id, r->user_id);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Match request");
		return -1;
	}
	st->status = db_value(res, 0, 0);
	st->cancel_reason = db_value(res, 0, 1);
	st->organizer = flag(res, 2);
	st->checked_in = flag(res, 3);
	st->started = flag(res, 4);
	st->leave_ok = flag(res, 5);
	st->late = flag(res, 6);
	st->lapsed = flag(res, 7);
	return 0;
}

/* JSON text of match request id as this transaction sees it; NULL after answering. */
static const char *
match_json(struct req *r, const char *id)
{
	PGresult *res = db_query(r,
	    "SELECT json_match_request(m) FROM match_requests m WHERE m.id = $1::uuid", id);

	if (res == NULL)
		return NULL;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Match request");
		return NULL;
	}
	return db_value(res, 0, 0);
}

/* Commits, then answers status with json; the answer never claims what was rolled back. */
static void
commit_and_send(struct req *r, int status, const char *json)
{
	if (json == NULL || db_commit(r) != 0)
		return;
	http_send_json(r, status, json);
}

/* Commits, then answers 204. */
static void
commit_and_no_content(struct req *r)
{
	if (db_commit(r) == 0)
		http_send_no_content(r);
}

/* GET /api/match/requests/my: 200 with every request the caller plays in (cancelled and
 * completed included): those not yet over first, soonest first, then past ones, latest
 * first; 401. */
static void
requests_mine(struct req *r)
{
	db_send_json(r, 200, "Match requests",
	    "SELECT COALESCE(json_agg(json_match_request(m) "
	    "           ORDER BY m.ends_at <= now(), "
	    "                    CASE WHEN m.ends_at > now() THEN m.starts_at END, "
	    "                    m.starts_at DESC, m.id), '[]') "
	    "  FROM match_requests m "
	    " WHERE EXISTS (SELECT 1 FROM match_players p "
	    "                WHERE p.match_request_id = m.id AND p.player_id = $1::uuid "
	    "                  AND p.left_at IS NULL)",
	    r->user_id);
}

/* GET /api/match/requests/{id}: 200 with the request; 401; 404 unknown or not a player. */
static void
request_get(struct req *r)
{
	db_send_json(r, 200, "Match request",
	    "SELECT json_match_request(m) FROM match_requests m "
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
};

/* Reads and checks the create body into *in; 0, or -1 after answering 400. */
static int
create_input_or_problem(struct req *r, struct create_input *in)
{
	long duration = 0;
	double lat = 0, lng = 0, radius = SEARCH_RADIUS_DEFAULT;

	in->message = NULL;
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
	if (problem_fields_or_send(r) != 0)
		return -1;
	in->duration = input_fmt_long(r, duration);
	in->lat = input_fmt_double(r, lat);
	in->lng = input_fmt_double(r, lng);
	in->radius = input_fmt_double(r, radius);
	return 0;
}

/* POST /api/match/requests: 201 with the new request, PENDING_PAYMENT until its expiresAt;
 * 400; 401; 404 resource unknown or not visible; 409 SLOT_NOT_OFFERED (no such slot, or not
 * the court's slot duration), SLOT_IN_PAST, NOT_BOOKABLE (no price), SLOT_TAKEN. */
static void
request_create(struct req *r)
{
	struct create_input in;
	PGresult *res;
	const char *end, *price, *currency, *id;

	if (create_input_or_problem(r, &in) != 0 || db_begin(r) != 0)
		return;
	res = db_query(r,
	    "SELECT rs.slot_duration_minutes = $4::int, s.end_time IS NOT NULL, "
	    "       ($2::date + $3::time) AT TIME ZONE v.timezone <= now(), "
	    "       s.price IS NOT NULL, s.end_time, s.price, s.currency "
	    "  FROM resources rs "
	    "  JOIN venues v ON v.id = rs.venue_id "
	    "  LEFT JOIN LATERAL (SELECT x.end_time, x.price, x.currency "
	    "                       FROM resource_slots(rs.id, $2::date) x "
	    "                      WHERE x.start_time = $3::time) s ON true "
	    " WHERE rs.id = $1::uuid AND rs.status = 'ACTIVE' AND v.status = 'ACTIVE'",
	    in.resource, in.date, in.start, in.duration);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Resource");
		return;
	}
	if (!flag(res, 0) || !flag(res, 1)) {
		problem_conflict(r, "SLOT_NOT_OFFERED",
		    "The court offers no slot of that length starting at that time.");
		return;
	}
	if (flag(res, 2)) {
		problem_conflict(r, "SLOT_IN_PAST", "The slot has already started.");
		return;
	}
	if (!flag(res, 3)) {
		problem_conflict(r, "NOT_BOOKABLE", "The slot has no price and cannot be booked.");
		return;
	}
	end = db_value(res, 0, 4);
	price = db_value(res, 0, 5);
	currency = db_value(res, 0, 6);

	/* a lapsed hold never blocks, whether or not the sweeper has run */
	if (db_query(r,
	    "SELECT match_hold_expire(m.id) FROM match_requests m "
	    " WHERE m.resource_id = $1::uuid AND m.status = 'PENDING_PAYMENT' "
	    "   AND m.expires_at <= now() "
	    "   AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time) "
	    "       && tsrange($2::date + $3::time, $2::date + $4::time)",
	    in.resource, in.date, in.start, end) == NULL)
		return;

	/* the organizer's share takes the cents that do not divide evenly */
	res = db_query(r,
	    "WITH m AS ("
	    "  INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time, "
	    "      end_time, starts_at, ends_at, format, skill_level, team_size, court_price, "
	    "      price_per_player, currency, custom_message, search_latitude, "
	    "      search_longitude, search_radius_km, expires_at) "
	    "  SELECT rs.id, $2::uuid, $3::date, $4::time, $5::time, "
	    "         ($3::date + $4::time) AT TIME ZONE v.timezone, "
	    "         ($3::date + $5::time) AT TIME ZONE v.timezone, "
	    "         $6::text, $7::text, t.size, $8::numeric, "
	    "         floor($8::numeric * 100 / (2 * t.size)) / 100, $9::text, $10::text, "
	    "         $11::float8, $12::float8, $13::numeric, "
	    "         now() + make_interval(secs => $14::int) "
	    "    FROM resources rs "
	    "    JOIN venues v ON v.id = rs.venue_id "
	    "   CROSS JOIN (SELECT CASE WHEN $6::text = 'ONE_VS_ONE' THEN 1 ELSE 2 END) t(size) "
	    "   WHERE rs.id = $1::uuid "
	    "  RETURNING *), "
	    "organizer AS ("
	    "  INSERT INTO match_players (match_request_id, player_id, team, role) "
	    "  SELECT m.id, m.organizer_id, 'TEAM_A', 'ORGANIZER' FROM m) "
	    "INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status) "
	    "SELECT m.id, m.organizer_id, 'PAYMENT', "
	    "       m.court_price - m.price_per_player * (2 * m.team_size - 1), m.currency, "
	    "       'PENDING' "
	    "  FROM m "
	    "RETURNING match_request_id",
	    in.resource, r->user_id, in.date, in.start, end, in.format, in.skill, price,
	    currency, in.message, in.lat, in.lng, in.radius,
	    input_fmt_long(r, config_get()->payment_hold_seconds));
	if (res == NULL)	/* 23P01: another live request holds the slot -> 409 SLOT_TAKEN */
		return;
	id = db_value(res, 0, 0);
	commit_and_send(r, 201, match_json(r, id));
}

/* POST /api/match/requests/{id}/confirm-payment: 200 with the request, now OPEN, the
 * organizer's payment PAID and the eligible players invited; 401; 403 NOT_ORGANIZER; 404
 * unknown or not a player; 409 PAYMENT_WINDOW_PASSED (the hold is cancelled then),
 * INVALID_STATE (already paid, or cancelled). Any body is ignored. */
static void
request_confirm_payment(struct req *r)
{
	const char *id = req_param(r, "id");
	struct match_state st;
	PGresult *res;

	if (db_begin(r) != 0 || match_lock_or_problem(r, id, &st) != 0)
		return;
	if (!st.organizer) {
		problem_send(r, 403, "NOT_ORGANIZER", "Only the organizer can pay for the match.");
		return;
	}
	if (streq(st.status, "PENDING_PAYMENT") && st.lapsed) {
		/* the hold ends now, and that must outlive this answer */
		if (db_query(r, "SELECT match_hold_expire($1::uuid)", id) == NULL ||
		    db_commit(r) != 0)
			return;
		problem_conflict(r, "PAYMENT_WINDOW_PASSED",
		    "The payment window has passed; the slot was released.");
		return;
	}
	if (streq(st.status, "CANCELLED") && streq(st.cancel_reason, "PAYMENT_EXPIRED")) {
		problem_conflict(r, "PAYMENT_WINDOW_PASSED",
		    "The payment window has passed; the slot was released.");
		return;
	}
	res = db_query(r,
	    "WITH m AS ("
	    "  UPDATE match_requests SET status = 'OPEN', updated_at = now() "
	    "   WHERE id = $1::uuid AND organizer_id = $2::uuid "
	    "     AND status = 'PENDING_PAYMENT' AND expires_at > now() "
	    "  RETURNING id, organizer_id), "
	    "paid AS ("
	    "  UPDATE payments p SET status = 'PAID', updated_at = now() "
	    "    FROM m "
	    "   WHERE p.match_request_id = m.id AND p.player_id = m.organizer_id "
	    "     AND p.kind = 'PAYMENT' AND p.status = 'PENDING') "
	    "SELECT count(*) FROM m",
	    id, r->user_id);
	if (res == NULL)
		return;
	if (!streq(db_value(res, 0, 0), "1")) {
		problem_conflict(r, "INVALID_STATE", "The match is not awaiting payment.");
		return;
	}
	if (db_query(r, "SELECT match_invite($1::uuid, 'INVITE', $2::int)", id,
	    input_fmt_long(r, config_get()->min_reliability)) == NULL)
		return;
	commit_and_send(r, 200, match_json(r, id));
}

/* DELETE /api/match/requests/{id}/leave: 204, the caller is out, refunded what they paid,
 * and a MATCHED match is OPEN again; 401; 404 unknown or not a player; 409
 * ORGANIZER_CANNOT_LEAVE, INVALID_STATE (not OPEN or MATCHED), LEAVE_TOO_LATE (48 h or less
 * before the start). */
static void
request_leave(struct req *r)
{
	const char *id = req_param(r, "id");
	struct match_state st;

	if (db_begin(r) != 0 || match_lock_or_problem(r, id, &st) != 0)
		return;
	if (st.organizer) {
		problem_conflict(r, "ORGANIZER_CANNOT_LEAVE",
		    "The organizer cannot leave; cancel the match instead.");
		return;
	}
	if (!streq(st.status, "OPEN") && !streq(st.status, "MATCHED")) {
		problem_conflict(r, "INVALID_STATE", "The match can no longer be left.");
		return;
	}
	if (!st.leave_ok) {
		problem_conflict(r, "LEAVE_TOO_LATE",
		    "Leaving is allowed only more than 48 hours before the start; report an "
		    "absence instead.");
		return;
	}
	if (db_query(r,
	    "WITH me AS ("
	    "  UPDATE match_players SET left_at = now(), left_reason = 'LEFT' "
	    "   WHERE match_request_id = $1::uuid AND player_id = $2::uuid "
	    "     AND left_at IS NULL AND role = 'PLAYER' "
	    "  RETURNING match_request_id, player_id), "
	    "paid AS ("
	    "  SELECT p.match_request_id, p.player_id, sum(p.amount) AS amount, "
	    "         min(p.currency) AS currency "
	    "    FROM payments p JOIN me USING (match_request_id, player_id) "
	    "   WHERE p.kind = 'PAYMENT' AND p.status = 'PAID' "
	    "   GROUP BY p.match_request_id, p.player_id), "
	    "refund AS ("
	    "  INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status) "
	    "  SELECT match_request_id, player_id, 'REFUND', amount, currency, 'REFUNDED' "
	    "    FROM paid WHERE amount > 0), "
	    "reopen AS ("
	    "  UPDATE match_requests m SET status = 'OPEN', updated_at = now() "
	    "    FROM me WHERE m.id = me.match_request_id AND m.status = 'MATCHED') "
	    "INSERT INTO notifications (recipient_id, type, payload) "
	    "SELECT p.player_id, 'PLAYER_LEFT', "
	    "       jsonb_build_object('matchRequestId', me.match_request_id, "
	    "                          'playerId', me.player_id) "
	    "  FROM me JOIN match_players p ON p.match_request_id = me.match_request_id "
	    "                              AND p.left_at IS NULL AND p.player_id <> me.player_id",
	    id, r->user_id) == NULL)
		return;
	commit_and_no_content(r);
}

/* POST /api/match/requests/{id}/absence: 204, the caller is out without refund, the others
 * are told, substitutes are invited and a MATCHED match is OPEN again; inside 24 h of the
 * start the caller's reliability drops by 10; 401; 404 unknown or not a player; 409
 * ORGANIZER_CANNOT_LEAVE, INVALID_STATE (not OPEN or MATCHED), MATCH_STARTED. */
static void
request_absence(struct req *r)
{
	const char *id = req_param(r, "id");
	struct match_state st;

	if (db_begin(r) != 0 || match_lock_or_problem(r, id, &st) != 0)
		return;
	if (st.organizer) {
		problem_conflict(r, "ORGANIZER_CANNOT_LEAVE",
		    "The organizer cannot withdraw; cancel the match instead.");
		return;
	}
	if (!streq(st.status, "OPEN") && !streq(st.status, "MATCHED")) {
		problem_conflict(r, "INVALID_STATE", "Absence cannot be reported for this match.");
		return;
	}
	if (st.started) {
		problem_conflict(r, "MATCH_STARTED", "The match has already started.");
		return;
	}
	if (db_query(r,
	    "WITH me AS ("
	    "  UPDATE match_players SET left_at = now(), left_reason = 'ABSENT' "
	    "   WHERE match_request_id = $1::uuid AND player_id = $2::uuid "
	    "     AND left_at IS NULL AND role = 'PLAYER' "
	    "  RETURNING match_request_id, player_id), "
	    "reopen AS ("
	    "  UPDATE match_requests m SET status = 'OPEN', updated_at = now() "
	    "    FROM me WHERE m.id = me.match_request_id AND m.status = 'MATCHED') "
	    "INSERT INTO notifications (recipient_id, type, payload) "
	    "SELECT p.player_id, 'PLAYER_ABSENT', "
	    "       jsonb_build_object('matchRequestId', me.match_request_id, "
	    "                          'playerId', me.player_id) "
	    "  FROM me JOIN match_players p ON p.match_request_id = me.match_request_id "
	    "                              AND p.left_at IS NULL AND p.player_id <> me.player_id",
	    id, r->user_id) == NULL)
		return;
	if (db_query(r, "SELECT match_invite($1::uuid, 'SUBSTITUTE', $2::int)", id,
	    input_fmt_long(r, config_get()->min_reliability)) == NULL)
		return;
	if (st.late && db_query(r,
	    "SELECT reliability_record($2::uuid, $1::uuid, 'LATE_ABSENCE', -10)",
	    id, r->user_id) == NULL)
		return;
	commit_and_no_content(r);
}

/* POST /api/match/requests/{id}/checkin?lat=&lng=&accuracy=: 204, the caller is checked in
 * (again: nothing changes) and when every player is, the match is CONFIRMED; 400; 401; 404
 * unknown or not a player; 409 INVALID_STATE (not MATCHED or CONFIRMED), CHECKIN_TOO_EARLY
 * (more than 30 min before the start), CHECKIN_CLOSED (after the end), INACCURATE_POSITION,
 * TOO_FAR (from the venue). */
static void
request_checkin(struct req *r)
{
	const char *id = req_param(r, "id");
	const struct config *cfg = config_get();
	struct match_state st;
	double lat = 0, lng = 0, accuracy = 0;
	PGresult *res;

	query_latitude(r, "lat", IN_REQUIRED, &lat);
	query_longitude(r, "lng", IN_REQUIRED, &lng);
	if (query_number(r, "accuracy", IN_REQUIRED, &accuracy) && accuracy < 0)
		problem_field(r, "accuracy", "must be 0 or more");
	if (problem_fields_or_send(r) != 0)
		return;
	if (db_begin(r) != 0 || match_lock_or_problem(r, id, &st) != 0)
		return;
	if (!streq(st.status, "MATCHED") && !streq(st.status, "CONFIRMED")) {
		problem_conflict(r, "INVALID_STATE", "Check-in opens once the match is full.");
		return;
	}
	if (st.checked_in) {
		http_send_no_content(r);
		return;
	}
	res = db_query(r,
	    "SELECT now() < m.starts_at - interval '30 minutes', now() > m.ends_at, "
	    "       earth_distance(ll_to_earth(v.latitude, v.longitude), "
	    "                      ll_to_earth($2::float8, $3::float8)) > $4::float8 "
	    "  FROM match_requests m "
	    "  JOIN resources rs ON rs.id = m.resource_id "
	    "  JOIN venues v ON v.id = rs.venue_id "
	    " WHERE m.id = $1::uuid",
	    id, input_fmt_double(r, lat), input_fmt_double(r, lng),
	    input_fmt_long(r, cfg->checkin_radius_m));
	if (res == NULL)
		return;
	if (flag(res, 0)) {
		problem_conflict(r, "CHECKIN_TOO_EARLY",
		    "Check-in opens 30 minutes before the start.");
		return;
	}
	if (flag(res, 1)) {
		problem_conflict(r, "CHECKIN_CLOSED", "The match is over.");
		return;
	}
	if (accuracy > cfg->checkin_max_accuracy_m) {
		problem_conflict(r, "INACCURATE_POSITION",
		    "The position is not accurate enough to check in.");
		return;
	}
	if (flag(res, 2)) {
		problem_conflict(r, "TOO_FAR", "You are too far from the venue to check in.");
		return;
	}
	if (db_query(r,
	    "UPDATE match_players SET checked_in_at = now() "
	    " WHERE match_request_id = $1::uuid AND player_id = $2::uuid "
	    "   AND left_at IS NULL AND checked_in_at IS NULL",
	    id, r->user_id) == NULL)
		return;
	/* a separate statement, so that it sees the check-in just made */
	if (db_query(r,
	    "WITH c AS ("
	    "  UPDATE match_requests m SET status = 'CONFIRMED', updated_at = now() "
	    "   WHERE m.id = $1::uuid AND m.status = 'MATCHED' "
	    "     AND NOT EXISTS (SELECT 1 FROM match_players p "
	    "                      WHERE p.match_request_id = m.id AND p.left_at IS NULL "
	    "                        AND p.checked_in_at IS NULL) "
	    "  RETURNING m.id) "
	    "INSERT INTO notifications (recipient_id, type, payload) "
	    "SELECT p.player_id, 'MATCH_CONFIRMED', jsonb_build_object('matchRequestId', c.id) "
	    "  FROM c JOIN match_players p ON p.match_request_id = c.id AND p.left_at IS NULL",
	    id) == NULL)
		return;
	commit_and_no_content(r);
}

/* DELETE /api/match/requests/{id}: 204, the match is CANCELLED (already: nothing changes),
 * joined players who paid are refunded in full, the organizer too when 24 h or more ahead,
 * pending payments are cancelled, pending invitations expire and every player is told;
 * 401; 403 NOT_ORGANIZER; 404 unknown or not a player; 409 INVALID_STATE (CONFIRMED or
 * COMPLETED), MATCH_STARTED. */
static void
request_cancel(struct req *r)
{
	const char *id = req_param(r, "id");
	struct match_state st;

	if (db_begin(r) != 0 || match_lock_or_problem(r, id, &st) != 0)
		return;
	if (!st.organizer) {
		problem_send(r, 403, "NOT_ORGANIZER", "Only the organizer can cancel the match.");
		return;
	}
	if (streq(st.status, "CANCELLED")) {
		http_send_no_content(r);
		return;
	}
	if (streq(st.status, "PENDING_PAYMENT") && st.lapsed) {
		/* never paid and past its window: it ends as an expired hold, not a cancellation */
		if (db_query(r, "SELECT match_hold_expire($1::uuid)", id) == NULL)
			return;
		commit_and_no_content(r);
		return;
	}
	if (!streq(st.status, "PENDING_PAYMENT") && !streq(st.status, "OPEN") &&
	    !streq(st.status, "MATCHED")) {
		problem_conflict(r, "INVALID_STATE", "The match can no longer be cancelled.");
		return;
	}
	if (st.started) {
		problem_conflict(r, "MATCH_STARTED", "The match has already started.");
		return;
	}
	if (db_query(r,
	    "WITH m AS ("
	    "  UPDATE match_requests "
	    "     SET status = 'CANCELLED', cancel_reason = 'ORGANIZER', updated_at = now() "
	    "   WHERE id = $1::uuid AND status IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED') "
	    "     AND now() < starts_at "
	    "  RETURNING id, organizer_id, currency, "
	    "            starts_at - now() >= interval '24 hours' AS organizer_refund), "
	    "paid AS ("
	    "  SELECT p.player_id, sum(p.amount) AS amount "
	    "    FROM m "
	    "    JOIN match_players mp ON mp.match_request_id = m.id AND mp.left_at IS NULL "
	    "    JOIN payments p ON p.match_request_id = m.id AND p.player_id = mp.player_id "
	    "   WHERE p.kind = 'PAYMENT' AND p.status = 'PAID' "
	    "     AND (p.player_id <> m.organizer_id OR m.organizer_refund) "
	    "     AND NOT EXISTS (SELECT 1 FROM payments x WHERE x.match_request_id = m.id "
	    "                        AND x.player_id = p.player_id AND x.kind = 'REFUND') "
	    "   GROUP BY p.player_id), "
	    "refund AS ("
	    "  INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status) "
	    "  SELECT m.id, paid.player_id, 'REFUND', paid.amount, m.currency, 'REFUNDED' "
	    "    FROM m, paid WHERE paid.amount > 0 "
	    "  RETURNING player_id, amount), "
	    "unpaid AS ("
	    "  UPDATE payments p SET status = 'CANCELLED', updated_at = now() "
	    "    FROM m WHERE p.match_request_id = m.id AND p.kind = 'PAYMENT' "
	    "     AND p.status = 'PENDING'), "
	    "expired AS ("
	    "  UPDATE invitations i SET status = 'EXPIRED' "
	    "    FROM m WHERE i.match_request_id = m.id AND i.status = 'PENDING') "
	    "INSERT INTO notifications (recipient_id, type, payload) "
	    "SELECT mp.player_id, 'MATCH_CANCELLED', "
	    "       jsonb_build_object('matchRequestId', m.id, 'reason', 'ORGANIZER', "
	    "                          'refund', refund.amount::text) "
	    "  FROM m "
	    "  JOIN match_players mp ON mp.match_request_id = m.id AND mp.left_at IS NULL "
	    "  LEFT JOIN refund ON refund.player_id = mp.player_id",
	    id) == NULL)
		return;
	commit_and_no_content(r);
}

static const struct route routes[] = {
	{ "GET", "/api/match/requests/my", requests_mine, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests", request_create, AUTH_PLAYER, BODY_JSON },
	{ "GET", "/api/match/requests/{id}", request_get, AUTH_PLAYER, BODY_NONE },
	{ "DELETE", "/api/match/requests/{id}", request_cancel, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests/{id}/confirm-payment", request_confirm_payment,
	  AUTH_PLAYER, BODY_NONE },
	{ "DELETE", "/api/match/requests/{id}/leave", request_leave, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests/{id}/absence", request_absence, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/match/requests/{id}/checkin", request_checkin, AUTH_PLAYER, BODY_NONE },
};

int
main(void)
{
	return http_main("requests", routes, sizeof routes / sizeof routes[0]);
}
