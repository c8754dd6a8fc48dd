/* players: the caller's own match-making profile, notifications and calendar feed. Any valid
 * token may act as a player; the profile row is created with its defaults on first use. The
 * calendar feeds themselves (of players and of venues, sql/areas/88_calendar.sql) are served
 * here too, without a token: their secret URL is the credential. */
#include <stdio.h>
#include <string.h>

#include <cJSON.h>
#include <libpq-fe.h>
#include <openssl/evp.h>

#include "cache.h"
#include "sql.h"
#include "http.h"
#include "ical.h"
#include "input.h"
#include "page.h"
#include "problem.h"

#define DISPLAY_NAME_MAX	100

static const char *const skills[] = { "BEGINNER", "INTERMEDIATE", "ADVANCED", "PROFESSIONAL",
    NULL };

/* Characters (UTF-8 code points) of s; PostgreSQL refuses text that is not UTF-8 (400). */
static size_t
utf8_length(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* true when the body has name with a value other than null. */
static bool
body_given(const struct req *r, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(r->body, name);

	return it != NULL && !cJSON_IsNull(it);
}

/* GET /api/players/me: 200 with the caller's profile (created with defaults if new); 401. */
static void
profile_get(struct req *r)
{
	/* the INSERT's row is invisible to the SELECT of the same statement, so exactly one
	 * branch of the UNION answers */
	sql_send_json(r, 200, "Player",
	    "WITH created AS ("
	    "  INSERT INTO players (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING "
	    "  RETURNING *) "
	    "SELECT json_player(c::players) FROM created c "
	    "UNION ALL "
	    "SELECT json_player(p) FROM players p WHERE p.user_id = $1",
	    r->user_id);
}

/* PUT /api/players/me {displayName, skillLevel, homeLatitude, homeLongitude,
 * matchNotifications}: replaces the editable fields (absent means null, or true for
 * matchNotifications); reliabilityScore, noShowCount and bannedUntil are the service's and
 * ignored in the body. 200 with the profile; 400 VALIDATION_FAILED; 401. */
static void
profile_put(struct req *r)
{
	const char *name = NULL, *skill = NULL;
	double lat = 0, lng = 0;
	bool notify = true, have_lat, have_lng;

	if (body_string(r, "displayName", IN_NULLABLE | IN_NOT_BLANK, &name) &&
	    utf8_length(name) > DISPLAY_NAME_MAX) {
		problem_field(r, "displayName", "must be at most 100 characters");
		name = NULL;
	}
	body_enum(r, "skillLevel", IN_NULLABLE, skills, &skill);
	have_lat = body_latitude(r, "homeLatitude", IN_NULLABLE, &lat);
	have_lng = body_longitude(r, "homeLongitude", IN_NULLABLE, &lng);
	/* a home is a point: both coordinates or neither (a wrong one is already reported) */
	if (have_lat && !body_given(r, "homeLongitude"))
		problem_field(r, "homeLongitude", "is required with homeLatitude");
	if (have_lng && !body_given(r, "homeLatitude"))
		problem_field(r, "homeLatitude", "is required with homeLongitude");
	body_bool(r, "matchNotifications", IN_NULLABLE, &notify);
	if (problem_fields_or_send(r) != 0)
		return;

	sql_send_json(r, 200, "Player",
	    "INSERT INTO players AS p (user_id, display_name, skill_level, home_latitude, "
	    "home_longitude, match_notifications) "
	    "VALUES ($1, $2, $3, $4::float8, $5::float8, $6::boolean) "
	    "ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name, "
	    "skill_level = EXCLUDED.skill_level, home_latitude = EXCLUDED.home_latitude, "
	    "home_longitude = EXCLUDED.home_longitude, "
	    "match_notifications = EXCLUDED.match_notifications, updated_at = now() "
	    "RETURNING json_player(p)",
	    r->user_id, name, skill,
	    have_lat && have_lng ? input_fmt_double(r, lat) : NULL,
	    have_lat && have_lng ? input_fmt_double(r, lng) : NULL,
	    notify ? "true" : "false");
}

/* GET /api/notifications?limit=&cursor=: 200 with the caller's notifications, newest first,
 * a page at a time (page.h); 400 bad limit or cursor; 401. */
static void
notifications_list(struct req *r)
{
	page_list(r, "tu",
	    "SELECT json_notification(n), json_build_array(n.created_at, n.id) "
	    "  FROM notifications n "
	    " WHERE n.recipient_id = $1::uuid "
	    "   AND ($3::json IS NULL OR (n.created_at, n.id) < "
	    "        (($3::json->>0)::timestamptz, ($3::json->>1)::uuid)) "
	    " ORDER BY n.created_at DESC, n.id DESC LIMIT $2::int",
	    r->user_id);
}

/* POST /api/notifications/{id}/read: 204, read_at set on first read and kept after; 401;
 * 404 no such notification of the caller. */
static void
notification_read(struct req *r)
{
	PGresult *res;

	res = sql_query(r,
	    "UPDATE notifications SET read_at = COALESCE(read_at, now()) "
	    "WHERE id = $1 AND recipient_id = $2 RETURNING id",
	    req_param(r, "id"), r->user_id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0)
		problem_not_found(r, "Notification");
	else
		req_send_no_content(r);
}


/* ---- calendar feeds ----------------------------------------------------------------- */

#define FEED_SECRET_LEN	64	/* hex digits (sql/0018_calendar.sql) */

/* The caller's feed URL as the answer {"url"}; with rotate, a new secret first. */
static void
calendar_url(struct req *r, bool rotate)
{
	sql_send_json(r, 200, "Calendar", "SELECT calendar_feed_url($1, $2::uuid, NULL, $3::boolean)",
	    http_url(r, "/api/calendar/"), r->user_id, rotate ? "true" : "false");
}

/* GET /api/players/me/results?limit=&cursor=: 200 with the results of the matches the caller
 * played in, newest report first, a page at a time (page.h): {"matchRequestId",
 * "bookingDate", "team", "sets", "winner", "won", "status", "competitive", "reportedAt",
 * "ratingBefore", "ratingAfter", "deviationBefore", "deviationAfter"} (the rating fields null
 * until the result moved the caller's rating); 400 bad limit or cursor; 401. */
static void
results_mine(struct req *r)
{
	page_list(r, "tu",
	    "SELECT json_build_object("
	    "           'matchRequestId', m.id, 'bookingDate', m.booking_date, 'team', mp.team, "
	    "           'sets', x.sets, 'winner', x.winner, 'won', x.winner = mp.team, "
	    "           'status', x.status, 'competitive', m.competitive, "
	    "           'reportedAt', api_ts(x.reported_at), "
	    "           'ratingBefore', round(rc.rating_before::numeric, 2), "
	    "           'ratingAfter', round(rc.rating_after::numeric, 2), "
	    "           'deviationBefore', round(rc.deviation_before::numeric, 2), "
	    "           'deviationAfter', round(rc.deviation_after::numeric, 2)), "
	    "       json_build_array(x.reported_at, m.id) "
	    "  FROM match_results x "
	    "  JOIN match_requests m ON m.id = x.match_request_id "
	    "  JOIN match_players mp ON mp.match_request_id = m.id AND mp.player_id = $1::uuid "
	    "                       AND mp.left_at IS NULL "
	    "  LEFT JOIN rating_changes rc ON rc.match_request_id = m.id AND rc.player_id = $1::uuid "
	    " WHERE $3::json IS NULL OR (x.reported_at, m.id) "
	    "       < (($3::json->>0)::timestamptz, ($3::json->>1)::uuid) "
	    " ORDER BY x.reported_at DESC, m.id DESC LIMIT $2::int",
	    r->user_id);
}

/* GET /api/players/me/calendar: 200 {"url"}, the caller's feed, made on first use; 401. */
static void
calendar_get(struct req *r)
{
	calendar_url(r, false);
}

/* POST /api/players/me/calendar/rotate: 200 {"url"} with a new secret; the old URL answers
 * 404 from now on; 401, 429. */
static void
calendar_rotate(struct req *r)
{
	calendar_url(r, true);
}

static const char *
sport_name(const char *court_type)
{
	return strcmp(court_type, "TENNIS_COURT") == 0 ? "Tennis" : "Padel";
}

static const char *
format_name(const char *format)
{
	if (strcmp(format, "ONE_VS_ONE") == 0)
		return "1 vs 1";
	if (strcmp(format, "AMERICANO") == 0)
		return "Americano";
	return "2 vs 2";
}

/* Columns of the feed query below. */
enum { F_MINE, F_VENUE_NAME, F_UID, F_SEQUENCE, F_STAMP, F_STARTS, F_ENDS, F_STATUS, F_SPORT,
    F_FORMAT, F_COURT, F_VENUE, F_ADDRESS, F_LAT, F_LNG };

/* One event: a player's match, or a venue's booked court time (no players named). */
static void
feed_event(struct req *r, struct ical *c, PGresult *res, int i, bool mine)
{
	const char *sport = sport_name(db_value(res, i, F_SPORT));
	const char *format = format_name(db_value(res, i, F_FORMAT));
	bool cancelled = strcmp(db_value(res, i, F_STATUS), "CANCELLED") == 0;

	ical_line(c, "BEGIN", "VEVENT");
	ical_line(c, "UID", arena_printf(r->a, "%s%s@courts", mine ? "match-" : "booking-",
	    db_value(res, i, F_UID)));
	ical_line(c, "DTSTAMP", db_value(res, i, F_STAMP));
	ical_line(c, "DTSTART", db_value(res, i, F_STARTS));
	ical_line(c, "DTEND", db_value(res, i, F_ENDS));
	ical_line(c, "SEQUENCE", db_value(res, i, F_SEQUENCE));
	ical_line(c, "STATUS", db_value(res, i, F_STATUS));
	if (mine) {
		ical_text(c, "SUMMARY", arena_printf(r->a, "%s %s at %s", sport, format,
		    db_value(res, i, F_VENUE)));
		ical_text(c, "LOCATION", arena_printf(r->a, "%s, %s, %s", db_value(res, i, F_VENUE),
		    db_value(res, i, F_COURT), db_value(res, i, F_ADDRESS)));
	} else {
		ical_text(c, "SUMMARY", arena_printf(r->a, "%s booked (%s %s)",
		    db_value(res, i, F_COURT), sport, format));
		ical_text(c, "LOCATION", arena_printf(r->a, "%s, %s", db_value(res, i, F_COURT),
		    db_value(res, i, F_VENUE)));
	}
	ical_line(c, "GEO", arena_printf(r->a, "%s;%s", db_value(res, i, F_LAT),
	    db_value(res, i, F_LNG)));
	ical_line(c, "TRANSP", cancelled ? "TRANSPARENT" : "OPAQUE");
	ical_line(c, "END", "VEVENT");
}

/* GET /api/calendar/{secret}.ics: 200 text/calendar (RFC 5545) with the matches of the player
 * or the booked court time of the venue the secret belongs to, of the last 90 days and
 * ahead, and a strong ETag; 304 when If-None-Match names it; 404 for any other secret (a
 * rotated one included). No token: the secret in the URL is the credential. */
static void
calendar_feed(struct req *r)
{
	const char *secret = req_param(r, "secret");
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0, k;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	struct ical c;
	const char *body;
	PGresult *res;
	int64_t until;
	size_t len;
	bool mine;
	int i;

	if (strlen(secret) != FEED_SECRET_LEN || strspn(secret, "0123456789abcdef") !=
	    FEED_SECRET_LEN) {
		problem_not_found(r, "Calendar");
		return;
	}
	res = sql_query(r,
	    "SELECT f.venue_id IS NULL, v.name, e.uid, e.sequence, e.stamp, e.starts, e.ends, "
	    "       e.status, e.sport, e.format, e.court, e.venue, e.address, e.latitude, "
	    "       e.longitude "
	    "  FROM calendar_feeds f "
	    "  LEFT JOIN venues v ON v.id = f.venue_id "
	    "  LEFT JOIN LATERAL ("
	    "        SELECT * FROM calendar_player_events(f.player_id) WHERE f.player_id IS NOT NULL "
	    "        UNION ALL "
	    "        SELECT * FROM calendar_venue_events(f.venue_id) WHERE f.venue_id IS NOT NULL) e "
	    "    ON true "
	    " WHERE f.secret = $1 "
	    " ORDER BY e.starts, e.uid",
	    secret);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Calendar");
		return;
	}
	mine = strcmp(db_value(res, 0, F_MINE), "t") == 0;
	ical_init(&c, r->a);
	ical_line(&c, "BEGIN", "VCALENDAR");
	ical_line(&c, "VERSION", "2.0");
	ical_line(&c, "PRODID", "-//Courts//Calendar feed//EN");
	ical_line(&c, "CALSCALE", "GREGORIAN");
	ical_line(&c, "METHOD", "PUBLISH");
	ical_text(&c, "X-WR-CALNAME", mine ? "My matches" :
	    arena_printf(r->a, "%s: booked courts", db_value(res, 0, F_VENUE_NAME)));
	ical_line(&c, "REFRESH-INTERVAL;VALUE=DURATION", "PT15M");
	ical_line(&c, "X-PUBLISHED-TTL", "PT15M");
	for (i = 0; i < PQntuples(res); i++)
		if (db_value(res, i, F_UID) != NULL)
			feed_event(r, &c, res, i, mine);
	ical_line(&c, "END", "VCALENDAR");
	body = ical_body(&c, &len);

	/* the tag is the body's digest: any change of any event changes it */
	if (EVP_Digest(body, len, digest, &dlen, EVP_sha256(), NULL) != 1) {
		problem_internal(r);
		return;
	}
	for (k = 0; k < 16 && k < dlen; k++)
		snprintf(hex + 2 * k, 3, "%02x", digest[k]);
	req_add_header(r, "ETag", cache_etag(r->a, hex, CACHE_FOREVER));
	r->cache_control = "private, no-cache";
	if (cache_etag_fresh(r->if_none_match, hex, 0, &until))
		req_send_not_modified(r);
	else
		req_send_typed(r, 200, "text/calendar; charset=utf-8", body, len);
}

static const struct route routes[] = {
	{ "GET", "/api/players/me", profile_get, AUTH_PLAYER, BODY_NONE },
	{ "PUT", "/api/players/me", profile_put, AUTH_PLAYER, BODY_JSON },
	{ "GET", "/api/notifications", notifications_list, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/notifications/{id}/read", notification_read, AUTH_PLAYER, BODY_NONE },
	{ "GET", "/api/players/me/results", results_mine, AUTH_PLAYER, BODY_NONE },
	{ "GET", "/api/players/me/calendar", calendar_get, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/players/me/calendar/rotate", calendar_rotate, AUTH_PLAYER, BODY_NONE },
	{ "GET", "/api/calendar/{secret:secret}.ics", calendar_feed, AUTH_NONE, BODY_NONE },
};

int
main(void)
{
	return http_main("players", routes, sizeof routes / sizeof routes[0]);
}
