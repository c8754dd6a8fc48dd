/* players: the caller's own match-making profile and notifications. Any valid token may
 * act as a player; the profile row is created with its defaults on first use. */
#include <string.h>

#include <cJSON.h>
#include <libpq-fe.h>

#include "sql.h"
#include "http.h"
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

static const struct route routes[] = {
	{ "GET", "/api/players/me", profile_get, AUTH_PLAYER, BODY_NONE },
	{ "PUT", "/api/players/me", profile_put, AUTH_PLAYER, BODY_JSON },
	{ "GET", "/api/notifications", notifications_list, AUTH_PLAYER, BODY_NONE },
	{ "POST", "/api/notifications/{id}/read", notification_read, AUTH_PLAYER, BODY_NONE },
};

int
main(void)
{
	return http_main("players", routes, sizeof routes / sizeof routes[0]);
}
