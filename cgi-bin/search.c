/* search: free court slots near a point, with the number of players a match opened there
 * would invite (GET /api/match/search). Any valid token may search.
 *
 * The whole search is one statement (match_search_rows, sql/areas/85_search.sql, with bitmap
 * scans off; the slots from search_slots, kept or worked out court by court): venues nearest
 * first from venues_earth_idx, stopping once `limit` slots are found, and eligible players
 * counted up to 100, from per-cell counts where a city has more than that
 * (sql/areas/40_players.sql) and nearest first otherwise, so a search costs about the same in
 * a dense city as in a village. It answers plain rows in the answer's order, which this
 * program writes as JSON.
 *
 * A search asked again is reused (cache.h, sql/areas/85_search.sql): the second time
 * a process is asked one, it computes it with its validator and until when it holds
 * (search_answer: the same rows for about half as much work again) and keeps it; from then
 * on it sends it again after one look-up of the validator, and a client that sends its ETag
 * back gets 304. A search asked once (most are: players search from where they stand) costs
 * what it did. Plain CGI, which is asked nothing twice, never keeps or tags one. */
#include <string.h>

#include <libpq-fe.h>

#include "cache.h"
#include "config.h"
#include "sql.h"
#include "http.h"
#include "input.h"
#include "json.h"
#include "log.h"
#include "problem.h"

#define RADIUS_DEFAULT_KM	10.0
#define RADIUS_MAX_KM		100.0	/* bounds the venues and players looked at */
#define DURATION_DEFAULT	90
#define DURATION_MIN		15
#define DURATION_MAX		240
#define LIMIT_DEFAULT		50	/* results per search, nearest first */
#define LIMIT_MAX		200

static const char *const formats[] = { "TWO_VS_TWO", "ONE_VS_ONE", "AMERICANO", NULL };
static const char *const skills[] = { "ANY", "BEGINNER", "INTERMEDIATE", "ADVANCED",
    "PROFESSIONAL", NULL };

/* The columns of match_search_rows (sql/areas/85_search.sql): one row per slot, in the
 * answer's order, or one row whose court is NULL when there is none; search_answer adds to
 * every row the answer's validator and until when it holds. */
enum {
	COL_DATE_OK, COL_ELIGIBLE, COL_RESOURCE_ID, COL_RESOURCE_NAME, COL_RESOURCE_TYPE,
	COL_VENUE_ID, COL_VENUE_NAME, COL_VENUE_CITY, COL_VENUE_LAT, COL_VENUE_LNG,
	COL_DISTANCE, COL_START, COL_END, COL_PRICE, COL_CURRENCY, COL_COUNT,
	COL_VALIDATOR = COL_COUNT, COL_UNTIL, COL_KEPT_COUNT
};

#define CACHE_CONTROL	"private, no-cache"	/* a caller's own: keep it, but ask every time */

static const struct json_field result_fields[] = {
	{ "resourceId", COL_RESOURCE_ID, JSON_TEXT },
	{ "resourceName", COL_RESOURCE_NAME, JSON_TEXT },
	{ "resourceType", COL_RESOURCE_TYPE, JSON_TEXT },
	{ "venueId", COL_VENUE_ID, JSON_TEXT },
	{ "venueName", COL_VENUE_NAME, JSON_TEXT },
	{ "venueCity", COL_VENUE_CITY, JSON_TEXT },
	{ "venueLatitude", COL_VENUE_LAT, JSON_NUMBER },
	{ "venueLongitude", COL_VENUE_LNG, JSON_NUMBER },
	{ "distanceKm", COL_DISTANCE, JSON_NUMBER },
	{ "startTime", COL_START, JSON_TEXT },
	{ "endTime", COL_END, JSON_TEXT },
	{ "price", COL_PRICE, JSON_NUMBER },
	{ "currency", COL_CURRENCY, JSON_TEXT },
	{ "eligiblePlayersNearby", COL_ELIGIBLE, JSON_NUMBER },
};

/* GET /api/match/search?lat&lng&radiusKm&date&startTimeFrom&startTimeTo&slotDurationMinutes
 * &format&skillLevel&limit: 200 with the nearest available slots sorted by distance, start
 * time and court, at most limit (default 50, at most 200; [] when none); 304 when the
 * If-None-Match tag is still the answer; 400 VALIDATION_FAILED naming each bad or missing
 * parameter; 401. */
static void
search(struct req *r)
{
	double lat = 0, lng = 0, radius = RADIUS_DEFAULT_KM;
	long duration = DURATION_DEFAULT, limit = LIMIT_DEFAULT;
	const char *date = NULL, *from = NULL, *to = NULL;
	const char *format = "TWO_VS_TWO", *skill = "ANY";
	const char *args[11], *key;
	bool have_from, have_to, kept, keep;
	PGresult *res;

	query_latitude(r, "lat", IN_REQUIRED, &lat);
	query_longitude(r, "lng", IN_REQUIRED, &lng);
	if (query_number(r, "radiusKm", 0, &radius) && (radius <= 0 || radius > RADIUS_MAX_KM))
		problem_field(r, "radiusKm", "must be greater than 0 and at most 100");
	query_date(r, "date", IN_REQUIRED, &date);
	have_from = query_time(r, "startTimeFrom", IN_REQUIRED, &from);
	have_to = query_time(r, "startTimeTo", IN_REQUIRED, &to);
	/* HH:MM:SS text orders like the times it names */
	if (have_from && have_to && strcmp(from, to) > 0)
		problem_field(r, "startTimeTo", "must not be before startTimeFrom");
	if (query_int(r, "slotDurationMinutes", 0, &duration) &&
	    (duration < DURATION_MIN || duration > DURATION_MAX))
		problem_field(r, "slotDurationMinutes", "must be between 15 and 240");
	/* format changes nothing in the results (every format fits every court) but a wrong
	 * value is still a mistake worth telling */
	query_enum(r, "format", 0, formats, &format);
	query_enum(r, "skillLevel", 0, skills, &skill);
	if (query_int(r, "limit", 0, &limit) && (limit < 1 || limit > LIMIT_MAX))
		problem_field(r, "limit", "must be between 1 and 200");
	if (problem_fields_or_send(r) != 0)
		return;

	args[0] = input_fmt_double(r, lat);
	args[1] = input_fmt_double(r, lng);
	args[2] = input_fmt_double(r, radius);
	args[3] = date;
	args[4] = from;
	args[5] = to;
	args[6] = input_fmt_long(r, duration);
	args[7] = skill;
	args[8] = input_fmt_long(r, config_get()->min_reliability);
	args[9] = r->user_id;	/* the count of players leaves the caller out */
	args[10] = input_fmt_long(r, limit);
	key = arena_printf(r->a, "search %s %s %s %s %s %s %s %s %s %s %s", args[0], args[1],
	    args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10]);

	/* a kept answer, or the client's, is sent again while its validator is unchanged */
	kept = cache_has(key);
	if (r->if_none_match != NULL || kept) {
		res = sql_query(r,
		    "SELECT search_validator($1::float8, $2::float8, $3::numeric, $4::date), "
		    "       epoch_us(now())",
		    args[0], args[1], args[2], args[3]);
		if (res == NULL)
			return;
		if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) &&
		    cache_answer(r, key, PQgetvalue(res, 0, 0), cache_us(db_value(res, 0, 1)),
		    CACHE_CONTROL))
			return;
	}
	/* an answer kept until now was asked again already, whatever cache_seen remembers */
	keep = kept || cache_seen(key);
	res = sql_query_n(r, keep ?
	    "SELECT * FROM search_answer($1::float8, $2::float8, $3::numeric, $4::date, "
	    "$5::time, $6::time, $7::int, $8, $9::int, $10::uuid, $11::int)" :
	    "SELECT * FROM match_search_rows($1::float8, $2::float8, $3::numeric, $4::date, "
	    "$5::time, $6::time, $7::int, $8, $9::int, $10::uuid, $11::int)",
	    11, args);
	if (res == NULL)
		return;
	if (PQntuples(res) < 1 || PQnfields(res) != (keep ? COL_KEPT_COUNT : COL_COUNT)) {
		log_msg(r, "error", "the search gave %d rows of %d columns", PQntuples(res),
		    PQnfields(res));
		problem_internal(r);
		return;
	}
	if (strcmp(db_value(res, 0, COL_DATE_OK), "t") != 0) {
		problem_field(r, "date", "must be at most 366 days ahead");
		problem_fields_or_send(r);
		return;
	}
	req_send_json(r, 200, json_rows(r->a, res, COL_RESOURCE_ID, result_fields,
	    sizeof result_fields / sizeof result_fields[0]));
	/* a date that is not kept has no validator: its answer is not kept */
	if (keep && !PQgetisnull(res, 0, COL_VALIDATOR))
		cache_keep_answer(r, key, PQgetvalue(res, 0, COL_VALIDATOR),
		    cache_us(db_value(res, 0, COL_UNTIL)), CACHE_CONTROL);
}

static const struct route routes[] = {
	{ "GET", "/api/match/search", search, AUTH_PLAYER, BODY_NONE | ROUTE_REPLICA },
};

int
main(void)
{
	return http_main("search", routes, sizeof routes / sizeof routes[0]);
}
