/* public: what players see without a token: ACTIVE venues (near a point or all), the ACTIVE
 * courts of a venue, and the slots of a court on a date. Anything not ACTIVE, or a court of
 * a venue that is not ACTIVE, is a 404 here: players never learn that it exists. */
#include <stdbool.h>

#include <libpq-fe.h>

#include "cache.h"
#include "sql.h"
#include "http.h"
#include "input.h"
#include "page.h"
#include "problem.h"

#define RADIUS_DEFAULT_KM	10.0
#define RADIUS_MAX_KM		500.0	/* bounds the work of one listing */

/* true when query parameter name is present and not empty. */
static bool
given(const struct req *r, const char *name)
{
	const char *s = req_query(r, name);

	return s != NULL && *s != '\0';
}

/* GET /api/venues[?lat=&lng=&radiusKm=]&limit=&cursor=: 200 with the ACTIVE venues, a page
 * at a time (page.h). With a centre (lat and lng together; radiusKm defaults to 10,
 * 0 < radiusKm <= 500) only those within the radius, nearest first, each with distanceKm;
 * without one all of them by name. 400 for a bad or half-given centre, a bad radius, a radius
 * without a centre, a bad limit or cursor. */
static void
venues_list(struct req *r)
{
	double lat = 0, lng = 0, radius = RADIUS_DEFAULT_KM;
	bool centre = given(r, "lat") || given(r, "lng");

	query_latitude(r, "lat", centre ? IN_REQUIRED : 0, &lat);
	query_longitude(r, "lng", centre ? IN_REQUIRED : 0, &lng);
	if (query_number(r, "radiusKm", 0, &radius)) {
		if (radius <= 0 || radius > RADIUS_MAX_KM)
			problem_field(r, "radiusKm", "must be greater than 0 and at most 500");
		else if (!centre)
			problem_field(r, "radiusKm", "needs lat and lng");
	}

	if (!centre) {
		page_list_n(r, "su",
		    "SELECT d.doc, json_build_array((s.v).name, (s.v).id) "
		    "  FROM (SELECT v FROM venues v "
		    "         WHERE v.status = 'ACTIVE' "
		    "           AND ($2::json IS NULL OR (v.name, v.id) > "
		    "                ($2::json->>0, ($2::json->>1)::uuid)) "
		    "         ORDER BY v.name, v.id LIMIT $1::int) s "
		    " CROSS JOIN LATERAL venue_doc(s.v, true) d "
		    " ORDER BY (s.v).name, (s.v).id", 0, NULL);
		return;
	}
	/* earth_box narrows through venues_earth_idx (a partial index on ACTIVE venues, hence
	 * the literal status test); the box is a superset, so the exact distance decides.
	 * distanceKm is spliced into the venue's json text so the field order of json_venue
	 * stays as it is everywhere else (jsonb would reorder the keys). The key is the exact
	 * distance in metres, as float8 text round-trips. */
	page_list(r, "nu",
	    "WITH c AS (SELECT earth_point($1::float8, $2::float8) AS e, "
	    "                  $3::float8 * 1000 AS radius_m), "
	    "n AS (SELECT v, earth_distance(c.e, earth_point(v.latitude, v.longitude)) AS m "
	    "        FROM venues v, c "
	    "       WHERE v.status = 'ACTIVE' "
	    "         AND earth_box(c.e, c.radius_m) @> earth_point(v.latitude, v.longitude)), "
	    "s AS (SELECT n.* FROM n, c "
	    "       WHERE n.m <= c.radius_m "
	    "         AND ($5::json IS NULL OR (n.m, (n.v).id) > "
	    "              (($5::json->>0)::float8, ($5::json->>1)::uuid)) "
	    "       ORDER BY n.m, (n.v).id LIMIT $4::int) "
	    "SELECT (left(d.doc::text, -1) || ',\"distanceKm\":' "
	    "        || round((s.m / 1000)::numeric, 3) || '}')::json, "
	    "       json_build_array(s.m, (s.v).id) "
	    "  FROM s CROSS JOIN LATERAL venue_doc(s.v, true) d "
	    " ORDER BY s.m, (s.v).id",
	    input_fmt_double(r, lat), input_fmt_double(r, lng), input_fmt_double(r, radius));
}

/* GET /api/venues/{venueId}: 200 with the venue if ACTIVE; 400 bad id; 404 otherwise. */
static void
venue_get(struct req *r)
{
	sql_send_json(r, 200, "Venue",
	    "SELECT json_venue(v, true) FROM venues v "
	    "WHERE v.id = $1::uuid AND v.status = 'ACTIVE'",
	    req_param(r, "venueId"));
}

/* GET /api/venues/{venueId}/resources: 200 with the ACTIVE courts of an ACTIVE venue, with
 * schedules, price rules and images, oldest first; 400 bad id; 404 unknown or not ACTIVE
 * venue. */
static void
venue_resources(struct req *r)
{
	sql_send_json(r, 200, "Venue",
	    "SELECT COALESCE((SELECT json_agg(d.doc ORDER BY x.created_at, x.id) "
	    "                   FROM resources x CROSS JOIN LATERAL resource_doc(x) d "
	    "                  WHERE x.venue_id = v.id AND x.status = 'ACTIVE'), '[]') "
	    "FROM venues v WHERE v.id = $1::uuid AND v.status = 'ACTIVE'",
	    req_param(r, "venueId"));
}

/* GET /api/resources/{id}/slots?date=YYYY-MM-DD: 200 with every slot of that local date
 * (resource_slots decides availability and price; [] on a closed day); 304 when the
 * If-None-Match tag is still the answer; 400 bad id, missing or bad date, or a date more
 * than 366 days ahead at the venue; 404 unknown court, or a court or venue that is not
 * ACTIVE.
 *
 * The answer is reused while its validator (sql/areas/20_versions.sql) is unchanged and
 * time has not changed it: a client's tag gets 304 and a worker's kept answer is sent again,
 * each after one cheap look-up instead of computing the day's slots. A plain CGI keeps
 * nothing itself: on the primary it reads the answer kept in the database (slot_answer_kept,
 * three narrow tables for a fresh session to load instead of nine) and keeps the one it
 * computes (slot_answer_keep). */
static void
slots_list(struct req *r)
{
	const char *date = NULL, *id, *key;
	PGresult *res;
	bool in_db = cache_kept_in_db(r);

	query_date(r, "date", IN_REQUIRED, &date);
	if (problem_fields_or_send(r) != 0)
		return;
	id = req_param(r, "id");
	key = arena_printf(r->a, "slots %s %s", id, date);
	if (in_db) {
		res = sql_query(r,
		    "SELECT validator, epoch_us(valid_until), slots, epoch_us(now()) "
		    "  FROM slot_answer_kept($1::uuid, $2::date)",
		    id, date);
		if (res == NULL)
			return;
		if (PQntuples(res) == 1) {
			cache_send(r, key, PQgetvalue(res, 0, 0), cache_us(db_value(res, 0, 1)),
			    cache_us(db_value(res, 0, 3)), PQgetvalue(res, 0, 2), NULL, "no-cache");
			return;
		}
	} else if (r->if_none_match != NULL || cache_has(key)) {
		/* a plain CGI on a replica (or a worker that keeps nothing for this court and
		 * date) has nothing to reuse, and a client without a tag nothing to confirm:
		 * straight to the answer */
		res = sql_query(r,
		    "SELECT c.visible, c.too_far, c.validator, epoch_us(now()) "
		    "  FROM slot_validator($1::uuid, $2::date) c",
		    id, date);
		if (res == NULL)
			return;
		if (PQntuples(res) == 1 && *PQgetvalue(res, 0, 0) == 't' &&
		    *PQgetvalue(res, 0, 1) == 'f' &&
		    cache_answer(r, key, PQgetvalue(res, 0, 2), cache_us(db_value(res, 0, 3)),
		    "no-cache"))
			return;
	}
	res = sql_query(r, in_db ?
	    "SELECT visible, too_far, validator, epoch_us(valid_until), slots, epoch_us(now()) "
	    "  FROM slot_answer_keep($1::uuid, $2::date)" :
	    "SELECT visible, too_far, validator, epoch_us(valid_until), slots, epoch_us(now()) "
	    "  FROM slot_answer($1::uuid, $2::date)",
	    id, date);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0 || *PQgetvalue(res, 0, 0) != 't') {
		problem_not_found(r, "Resource");
		return;
	}
	if (*PQgetvalue(res, 0, 1) == 't') {
		problem_field(r, "date", "must be at most 366 days ahead");
		problem_fields_or_send(r);
		return;
	}
	/* (a client's tag of this very answer, which was no longer kept, gets 304) */
	if (in_db) {
		cache_send(r, key, PQgetvalue(res, 0, 2), cache_us(db_value(res, 0, 3)),
		    cache_us(db_value(res, 0, 5)), PQgetvalue(res, 0, 4), NULL, "no-cache");
		return;
	}
	req_send_json(r, 200, PQgetvalue(res, 0, 4));
	cache_keep_answer(r, key, PQgetvalue(res, 0, 2), cache_us(db_value(res, 0, 3)),
	    "no-cache");
}

static const struct route routes[] = {
	{ "GET", "/api/venues", venues_list, AUTH_NONE, BODY_NONE | ROUTE_REPLICA },
	{ "GET", "/api/venues/{venueId}", venue_get, AUTH_NONE, BODY_NONE | ROUTE_REPLICA },
	{ "GET", "/api/venues/{venueId}/resources", venue_resources, AUTH_NONE,
	    BODY_NONE | ROUTE_REPLICA },
	{ "GET", "/api/resources/{id}/slots", slots_list, AUTH_NONE, BODY_NONE | ROUTE_REPLICA },
};

int
main(void)
{
	return http_main("public", routes, sizeof routes / sizeof routes[0]);
}
