/* owner: a venue owner's venues, courts, schedules, prices, pictures and holidays, the
 * club's desk (court blocks and desk bookings, the day sheet, the report of revenue and
 * occupancy, matches called off by the club and check-in at the desk: sql/areas/67_desk.sql),
 * and the venue's staff and the record of what was done on it (sql/areas/68_staff.sql).
 *
 * Who may act for a venue: its owner (with the OWNER role in the token), and its staff, whose
 * tokens need no role: a MANAGER may use the routes marked STAFF_MANAGER or STAFF_DESK, DESK
 * staff those marked STAFF_DESK (and only DESK blocks). Before a route runs, venue_guard finds
 * the venue its target belongs to and the caller's role there: none is a 404, as if the
 * venue did not exist; a role the route does not admit is 403 FORBIDDEN. A caller with
 * neither the OWNER role nor a place on any venue's staff gets 403 on every route. The
 * handlers then act for the venue's owner (r->venue_owner): every query joins to
 * venues.owner_id = the owner, so a venue, court, image, price rule or holiday of another
 * owner is indistinguishable from one that does not exist (404). Every write on a venue runs
 * in one transaction with the record of it (venue_audit: who, when, what, on what). Every
 * write is one transaction. Any owner change to a venue (update, images) or a court
 * (schedules, price rules, images) bumps its updated_at, and resubmits it for approval
 * when an administrator had rejected it (DESIGN.md: updating a REJECTED venue or resource
 * resubmits it); the court has no other update route through which it could be fixed.
 * Suspension and reactivation are guarded updates; when nothing changed, a second look at
 * the row tells 404 from 409.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "cache.h"
#include "config.h"
#include "sql.h"
#include "http.h"
#include "input.h"
#include "page.h"
#include "problem.h"
#include "valid.h"

static const char *const resource_types[] = { "PADEL_COURT", "TENNIS_COURT", NULL };
static const char *const day_types[] = { "WEEKDAY", "WEEKEND", "HOLIDAY", NULL };
static const char *const day_names[] = { "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY",
    "FRIDAY", "SATURDAY", "SUNDAY", NULL };

/* A venue body as POST and PUT take it; timezone is NULL when not given. */
struct venue_in {
	const char	*name;
	const char	*description;
	const char	*street;
	const char	*city;
	const char	*country;
	const char	*postal_code;
	const char	*timezone;
	double		 latitude;
	double		 longitude;
};

/* ---- helpers ------------------------------------------------------------------------ */

/* true when the body has name with a value other than null. */
static bool
body_present(const struct req *r, const char *name)
{
	const cJSON *it = r->body != NULL ? cJSON_GetObjectItemCaseSensitive(r->body, name) : NULL;

	return it != NULL && !cJSON_IsNull(it);
}

/* An absolute http or https URL with a host and no white space or control characters.
 * The CDN is outside; the service only makes sure a browser could load what it shows. */
static bool
url_absolute_http(const char *s)
{
	size_t n, host;
	const char *p;

	if (strncasecmp(s, "https://", 8) == 0)
		n = 8;
	else if (strncasecmp(s, "http://", 7) == 0)
		n = 7;
	else
		return false;
	host = strcspn(s + n, "/?#");
	if (host == 0 || s[n] == ':' || s[n] == '@')
		return false;
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f)
			return false;
	return true;
}

/* Reads a venue body into *v. Returns 0, or -1 after answering 400 with every field
 * error (the time zone is checked against the database's zone list) or a database error. */
static int
venue_read_or_problem(struct req *r, struct venue_in *v)
{
	PGresult *res;

	memset(v, 0, sizeof *v);
	body_string(r, "name", IN_REQUIRED | IN_NOT_BLANK, &v->name);
	body_string(r, "description", IN_NULLABLE, &v->description);
	body_string(r, "street", IN_REQUIRED | IN_NOT_BLANK, &v->street);
	body_string(r, "city", IN_REQUIRED | IN_NOT_BLANK, &v->city);
	body_string(r, "country", IN_REQUIRED | IN_NOT_BLANK, &v->country);
	body_string(r, "postalCode", IN_NULLABLE, &v->postal_code);
	body_latitude(r, "latitude", IN_REQUIRED, &v->latitude);
	body_longitude(r, "longitude", IN_REQUIRED, &v->longitude);
	if (body_string(r, "timezone", IN_NULLABLE | IN_NOT_BLANK, &v->timezone)) {
		res = sql_query(r, "SELECT 1 FROM pg_timezone_names WHERE name = $1::text",
		    v->timezone);
		if (res == NULL)
			return -1;
		if (PQntuples(res) == 0)
			problem_field(r, "timezone",
			    "must be an IANA time zone such as Europe/Madrid");
	}
	return problem_fields_or_send(r);
}

/* Reads an image body (url, publicId). Returns 0, or -1 after answering 400. */
static int
image_read_or_problem(struct req *r, const char **url, const char **public_id)
{
	if (body_string(r, "url", IN_REQUIRED | IN_NOT_BLANK, url) && !url_absolute_http(*url))
		problem_field(r, "url", "must be an absolute http or https URL");
	body_string(r, "publicId", IN_REQUIRED | IN_NOT_BLANK, public_id);
	return problem_fields_or_send(r);
}

/* Inside a transaction: marks the caller's venue changed (and resubmits it if rejected),
 * locking its row. Returns 0, or -1 after answering 404 or a database error. */
static int
venue_touch_or_problem(struct req *r, const char *venue_id)
{
	PGresult *res = sql_query(r,
	    "UPDATE venues SET updated_at = now(), "
	    "    status = CASE WHEN status = 'REJECTED' THEN 'PENDING_APPROVAL' ELSE status END, "
	    "    reject_reason = CASE WHEN status = 'REJECTED' THEN NULL ELSE reject_reason END "
	    " WHERE id = $1::uuid AND owner_id = $2::uuid RETURNING id",
	    venue_id, r->venue_owner);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Venue");
		return -1;
	}
	return 0;
}

/* Same for a court of one of the caller's venues. */
static int
resource_touch_or_problem(struct req *r, const char *resource_id)
{
	PGresult *res = sql_query(r,
	    "UPDATE resources r SET updated_at = now(), "
	    "    status = CASE WHEN r.status = 'REJECTED' THEN 'PENDING_APPROVAL' "
	    "             ELSE r.status END, "
	    "    reject_reason = CASE WHEN r.status = 'REJECTED' THEN NULL "
	    "                    ELSE r.reject_reason END "
	    "  FROM venues v "
	    " WHERE r.id = $1::uuid AND v.id = r.venue_id AND v.owner_id = $2::uuid RETURNING r.id",
	    resource_id, r->venue_owner);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Resource");
		return -1;
	}
	return 0;
}

/* Reads the JSON of an object changed in the open transaction, commits, then answers
 * status with it, so the client never sees a state that was not committed. */
static void
send_committed(struct req *r, int status, const char *what, PGresult *res)
{
	if (res == NULL)
		return;
	if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0)) {
		problem_not_found(r, what);
		return;
	}
	if (sql_commit(r) != 0)
		return;
	req_send_json(r, status, PQgetvalue(res, 0, 0));
}

static void
venue_send_committed(struct req *r, int status, const char *venue_id)
{
	send_committed(r, status, "Venue", sql_query(r,
	    "SELECT json_venue(v) FROM venues v WHERE v.id = $1::uuid", venue_id));
}

static void
resource_send_committed(struct req *r, int status, const char *resource_id)
{
	send_committed(r, status, "Resource", sql_query(r,
	    "SELECT json_resource(r) FROM resources r WHERE r.id = $1::uuid", resource_id));
}

/* Answers a guarded status change whose query returned (changed, status, suspended_by),
 * the last two NULL when the caller has no such object: 204, 404 or 409. */
static void
status_change_answer(struct req *r, const PGresult *res, const char *what, bool reactivate)
{
	const char *status, *by, *noun;

	if (res == NULL)
		return;
	if (strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
		req_send_no_content(r);
		return;
	}
	status = db_value(res, 0, 1);
	by = db_value(res, 0, 2);
	noun = strcmp(what, "Venue") == 0 ? "venue" : "resource";
	if (status == NULL)
		problem_not_found(r, what);
	else if (reactivate && strcmp(status, "SUSPENDED") == 0 && by != NULL &&
	    strcmp(by, "ADMIN") == 0)
		problem_conflict(r, "SUSPENDED_BY_ADMIN", arena_printf(r->a,
		    "The %s was suspended by an administrator; only an administrator can lift it.",
		    noun));
	else if (reactivate)
		problem_conflict(r, "INVALID_STATE", arena_printf(r->a,
		    "Only a %s you suspended can be reactivated; it is %s.", noun, status));
	else
		problem_conflict(r, "INVALID_STATE", arena_printf(r->a,
		    "Only an ACTIVE %s can be suspended; it is %s.", noun, status));
}

/* ---- who may act for a venue ------------------------------------------------------------ */

/* true when the caller acts as DESK staff of the route's venue. */
static bool
desk_only(const struct req *r)
{
	return r->venue_role != NULL && strcmp(r->venue_role, "DESK") == 0;
}

/* http.h admits: a caller without the OWNER role who staffs a venue. */
static bool
staff_admitted(struct req *r)
{
	PGresult *res = sql_query(r,
	    "SELECT EXISTS (SELECT 1 FROM venue_staff WHERE user_id = $1::uuid)", r->user_id);

	return res != NULL && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
}

/* http.h before: the venue of the route's target and the caller's role there, checked against
 * the route's STAFF_ flags (404 without a tie, 403 for a role the route does not admit); a
 * write on a venue gets the driver's transaction, in which venue_access locks the caller's
 * staff row (a removal waits for the write) and venue_audit_after records it. A route without
 * a target lists what the caller owns or staffs; creating a venue needs the OWNER role. */
static int
venue_guard(struct req *r)
{
	static const struct { const char *param, *kind, *what; } targets[] = {
		{ "venueId", "venue", "Venue" },
		{ "resourceId", "resource", "Resource" },
		{ "matchRequestId", "match", "Match request" },
	};
	bool write = strcmp(r->method, "GET") != 0, admitted;
	unsigned flags = r->route->flags;
	const char *id = NULL, *role;
	PGresult *res;
	size_t i;

	for (i = 0; i < sizeof targets / sizeof targets[0] && id == NULL; i++)
		id = req_param(r, targets[i].param);
	if (id == NULL) {
		if (write && !(r->roles & ROLE_OWNER)) {
			problem_send(r, 403, "FORBIDDEN", "The OWNER role is required.");
			return -1;
		}
		return 0;
	}
	i--;
	if (write && !r->tx_owned) {
		if (sql_begin(r) != 0)
			return -1;
		r->tx_owned = true;
	}
	res = sql_query(r, "SELECT venue_id, owner_id, role "
	    "  FROM venue_access($1, $2::uuid, $3::uuid, $4::boolean, $5::boolean)",
	    targets[i].kind, id, r->user_id, (r->roles & ROLE_OWNER) ? "true" : "false",
	    write ? "true" : "false");
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0 || PQgetisnull(res, 0, 2)) {
		problem_not_found(r, targets[i].what);
		return -1;
	}
	role = PQgetvalue(res, 0, 2);
	admitted = strcmp(role, "OWNER") == 0 || (flags & STAFF_DESK) ||
	    (strcmp(role, "MANAGER") == 0 && (flags & STAFF_MANAGER));
	if (!admitted) {
		problem_send(r, 403, "FORBIDDEN", arena_printf(r->a,
		    "The venue's %s staff may not do this; ask its owner%s.", role,
		    strcmp(role, "DESK") == 0 ? " or a manager" : ""));
		return -1;
	}
	r->venue_id = arena_strdup(r->a, PQgetvalue(res, 0, 0));
	r->venue_owner = arena_strdup(r->a, PQgetvalue(res, 0, 1));
	r->venue_role = arena_strdup(r->a, role);
	return 0;
}

/* http.h after: a write on a venue that succeeded is recorded in its transaction; when the
 * record cannot be written, the write is not kept either. */
static void
venue_audit_after(struct req *r)
{
	char *body = NULL, status[16];
	PGresult *res;

	if (r->venue_role == NULL || strcmp(r->method, "GET") == 0 || !r->tx_owned ||
	    !r->answered || r->status >= 300)
		return;
	if (r->body != NULL)	/* in the request's arena (json.h) */
		body = cJSON_PrintUnformatted(r->body);
	snprintf(status, sizeof status, "%d", r->status);
	res = sql_try(r, "INSERT INTO venue_audit (venue_id, user_id, role, method, route, path, "
	    "                         status, request) "
	    "VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7::int, $8::jsonb)",
	    r->venue_id, r->user_id, r->venue_role, r->method, r->route->pattern, r->path, status,
	    body);
	if (res != NULL)
		return;
	r->answered = false;
	r->resp_headers = NULL;
	sql_answer_error(r);
}

/* ---- staff and the record ----------------------------------------------------------------- */

/* PUT /api/owner/venues/{venueId}/staff/{subject} {role}: 201 with the staff member when new,
 * 200 when their role changed; subject is the identity provider's sub of a user of the
 * caller's issuer (one not seen yet is made as on a first request), role MANAGER or DESK.
 * The owner only. 409 STAFF_IS_OWNER; 400, 401, 403, 404, 413, 415. */
static void
staff_put(struct req *r)
{
	static const char *const roles[] = { "MANAGER", "DESK", NULL };
	const char *role = NULL;
	PGresult *res;

	body_enum(r, "role", IN_REQUIRED, roles, &role);
	if (problem_fields_or_send(r) != 0)
		return;
	res = sql_query(r, "SELECT doc, created FROM venue_staff_put($1::uuid, $2::uuid, $3, $4)",
	    r->venue_id, r->user_id, req_param(r, "subject"), role);
	if (res == NULL)
		return;
	req_send_json(r, strcmp(PQgetvalue(res, 0, 1), "t") == 0 ? 201 : 200,
	    PQgetvalue(res, 0, 0));
}

/* DELETE /api/owner/venues/{venueId}/staff/{subject}: 204, the user is no longer staff of the
 * venue (a write of theirs in flight ends first); 404 when they were not. The owner only.
 * 400, 401, 403. */
static void
staff_delete(struct req *r)
{
	PGresult *res = sql_query(r, "SELECT venue_staff_remove($1::uuid, $2::uuid, $3)",
	    r->venue_id, r->user_id, req_param(r, "subject"));

	if (res == NULL)
		return;
	if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
		req_send_no_content(r);
	else
		problem_not_found(r, "Staff member");
}

/* GET /api/owner/venues/{venueId}/staff?limit=&cursor=: 200 with the venue's staff, oldest
 * first, a page at a time (page.h). Owner and managers. 400, 401, 403, 404. */
static void
staff_list(struct req *r)
{
	page_list(r, "tu",
	    "SELECT json_venue_staff(s, u.subject), json_build_array(s.created_at, s.user_id) "
	    "  FROM venue_staff s JOIN users u ON u.id = s.user_id "
	    " WHERE s.venue_id = $1::uuid "
	    "   AND ($3::json IS NULL OR (s.created_at, s.user_id) > "
	    "        (($3::json->>0)::timestamptz, ($3::json->>1)::uuid)) "
	    " ORDER BY s.created_at, s.user_id LIMIT $2::int",
	    r->venue_id);
}

/* GET /api/owner/venues/{venueId}/audit?limit=&cursor=: 200 with the writes made on the
 * venue, newest first (who, their role, when, the route and path, the status, the body
 * sent), a page at a time (page.h). Owner and managers. 400, 401, 403, 404. */
static void
audit_list(struct req *r)
{
	page_list(r, "n",
	    "SELECT json_venue_audit(a, u.subject), json_build_array(a.id) "
	    "  FROM venue_audit a JOIN users u ON u.id = a.user_id "
	    " WHERE a.venue_id = $1::uuid "
	    "   AND ($3::json IS NULL OR a.id < ($3::json->>0)::bigint) "
	    " ORDER BY a.id DESC LIMIT $2::int",
	    r->venue_id);
}

/* ---- venues ------------------------------------------------------------------------- */

/* GET /api/owner/venues?limit=&cursor=: 200 with the venues the caller owns (with the OWNER
 * role) or staffs, oldest first, each with myRole (OWNER, MANAGER or DESK), a page at a time
 * (page.h); 304 when the If-None-Match tag is still the answer; 400 bad limit or cursor; 401,
 * 403. A page is reused (cache.h) while the caller's list version (owner_list_version,
 * sql/areas/68_staff.sql) is unchanged. A plain CGI keeps nothing itself: it reads the page
 * kept in the database (owner_list_kept: the kept row and the versions that validate it,
 * where computing it loads the staff rows, venues, images and courts in its fresh session)
 * and keeps the one it computes (owner_list_keep). */
static void
venues_list(struct req *r)
{
	const char *limit = req_query(r, "limit"), *cursor = req_query(r, "cursor");
	const char *key, *validator, *scopes, *owner = (r->roles & ROLE_OWNER) ? "true" : "false";
	const char *lim = limit != NULL ? limit : "-", *cur = cursor != NULL ? cursor : "-";
	PGresult *res;
	bool in_db = cache_kept_in_db(r);

	key = arena_printf(r->a, "owner-venues %s %s %s %s", r->user_id, owner, lim, cur);
	if (in_db) {
		res = sql_query(r,
		    "SELECT validator, body, headers, epoch_us(now()) "
		    "  FROM owner_list_kept($1::uuid, $2::boolean, $3, $4)",
		    r->user_id, owner, lim, cur);
		if (res == NULL)
			return;
		if (PQntuples(res) == 1) {
			cache_send(r, key, PQgetvalue(res, 0, 0), CACHE_FOREVER,
			    cache_us(db_value(res, 0, 3)), PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
			    "private, no-cache");
			return;
		}
	}
	/* the validator is read first, with the scopes it is the versions of: the page below
	 * is at least as new as it */
	res = sql_query(r,
	    "SELECT s.scopes, w.validator, epoch_us(now()) "
	    "  FROM owner_list_scopes($1::uuid) s(scopes) "
	    " CROSS JOIN LATERAL owner_list_version_of(s.scopes) w",
	    r->user_id);
	if (res == NULL)
		return;
	scopes = arena_strdup(r->a, PQgetvalue(res, 0, 0));
	validator = arena_strdup(r->a, PQgetvalue(res, 0, 1));
	if (cache_answer(r, key, validator, cache_us(db_value(res, 0, 2)),
	    "private, no-cache"))
		return;
	page_list(r, "tu",
	    "SELECT json_member_add(d.doc, 'myRole', to_json(s.role)), "
	    "       json_build_array((s.v).created_at, (s.v).id) "
	    "  FROM (SELECT x.v, x.role FROM ("
	    "            SELECT v, 'OWNER' AS role FROM venues v "
	    "             WHERE $2::boolean AND v.owner_id = $1::uuid "
	    "            UNION ALL "
	    "            SELECT v, st.role FROM venue_staff st JOIN venues v ON v.id = st.venue_id "
	    "             WHERE st.user_id = $1::uuid "
	    "               AND NOT ($2::boolean AND v.owner_id = $1::uuid)) x "
	    "         WHERE $4::json IS NULL OR ((x.v).created_at, (x.v).id) > "
	    "               (($4::json->>0)::timestamptz, ($4::json->>1)::uuid) "
	    "         ORDER BY (x.v).created_at, (x.v).id LIMIT $3::int) s "
	    " CROSS JOIN LATERAL venue_doc(s.v) d "
	    " ORDER BY (s.v).created_at, (s.v).id",
	    r->user_id, owner);
	/* kept with the headers that go with it (the Link to the next page) before the ETag */
	if (in_db && r->answered && r->status == 200 && r->resp_body != NULL)
		sql_try(r, "SELECT owner_list_keep($1::uuid, $2::boolean, $3, $4, $5::uuid[], $6, "
		    "$7, $8)", r->user_id, owner, lim, cur, scopes, validator, r->resp_body,
		    r->resp_headers != NULL ? r->resp_headers : "");
	cache_keep_answer(r, key, validator, CACHE_FOREVER, "private, no-cache");
}

/* POST /api/owner/venues: 201 with the new venue, PENDING_APPROVAL, in the given time zone
 * or the configured default; 409 PENDING_LIMIT with MAX_PENDING_VENUES venues awaiting
 * approval already; 400, 401, 403, 413, 415. */
static void
venue_create(struct req *r)
{
	struct venue_in v;

	if (venue_read_or_problem(r, &v) != 0 || sql_begin(r) != 0)
		return;
	if (sql_query(r, "SELECT pending_venues_check($1::uuid, $2::int)", r->user_id,
	    input_fmt_long(r, config_get()->max_pending_venues)) == NULL)
		return;
	send_committed(r, 201, "Venue", sql_query(r,
	    "WITH v AS (INSERT INTO venues (owner_id, name, description, street, city, country, "
	    "                               postal_code, latitude, longitude, timezone) "
	    "           VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8::float8, $9::float8, $10) "
	    "           RETURNING *) "
	    "SELECT json_venue(v::venues) FROM v",
	    r->user_id, v.name, v.description, v.street, v.city, v.country, v.postal_code,
	    input_fmt_double(r, v.latitude), input_fmt_double(r, v.longitude),
	    v.timezone != NULL ? v.timezone : config_get()->default_timezone));
}

/* PUT /api/owner/venues/{venueId}: 200 with the updated venue. The body replaces every
 * field (absent optional fields become null) except the time zone, kept when not given.
 * A REJECTED venue is resubmitted (PENDING_APPROVAL). 400, 401, 403, 404, 413, 415. */
static void
venue_update(struct req *r)
{
	struct venue_in v;

	if (venue_read_or_problem(r, &v) != 0)
		return;
	sql_send_json(r, 200, "Venue",
	    "WITH v AS (UPDATE venues SET name = $3, description = $4, street = $5, city = $6, "
	    "               country = $7, postal_code = $8, latitude = $9::float8, "
	    "               longitude = $10::float8, timezone = COALESCE($11::text, timezone), "
	    "               status = CASE WHEN status = 'REJECTED' THEN 'PENDING_APPROVAL' "
	    "                        ELSE status END, "
	    "               reject_reason = CASE WHEN status = 'REJECTED' THEN NULL "
	    "                               ELSE reject_reason END, "
	    "               updated_at = now() "
	    "            WHERE id = $1::uuid AND owner_id = $2::uuid RETURNING *) "
	    "SELECT json_venue(v::venues) FROM v",
	    req_param(r, "venueId"), r->venue_owner, v.name, v.description, v.street, v.city,
	    v.country, v.postal_code, input_fmt_double(r, v.latitude),
	    input_fmt_double(r, v.longitude), v.timezone);
}

/* PATCH /api/owner/venues/{venueId}/suspend: 204; 409 INVALID_STATE unless ACTIVE;
 * 400, 401, 403, 404. */
static void
venue_suspend(struct req *r)
{
	status_change_answer(r, sql_query(r,
	    "WITH u AS (UPDATE venues SET status = 'SUSPENDED', suspended_by = 'OWNER', "
	    "                             updated_at = now() "
	    "            WHERE id = $1::uuid AND owner_id = $2::uuid AND status = 'ACTIVE' "
	    "            RETURNING id) "
	    "SELECT EXISTS (SELECT 1 FROM u), v.status, v.suspended_by "
	    "  FROM (VALUES (1)) one "
	    "  LEFT JOIN venues v ON v.id = $1::uuid AND v.owner_id = $2::uuid",
	    req_param(r, "venueId"), r->venue_owner), "Venue", false);
}

/* PATCH /api/owner/venues/{venueId}/reactivate: 204 back to ACTIVE when the owner suspended
 * it; 409 SUSPENDED_BY_ADMIN or INVALID_STATE otherwise; 400, 401, 403, 404. */
static void
venue_reactivate(struct req *r)
{
	status_change_answer(r, sql_query(r,
	    "WITH u AS (UPDATE venues SET status = 'ACTIVE', suspended_by = NULL, "
	    "                             updated_at = now() "
	    "            WHERE id = $1::uuid AND owner_id = $2::uuid AND status = 'SUSPENDED' "
	    "              AND suspended_by = 'OWNER' "
	    "            RETURNING id) "
	    "SELECT EXISTS (SELECT 1 FROM u), v.status, v.suspended_by "
	    "  FROM (VALUES (1)) one "
	    "  LEFT JOIN venues v ON v.id = $1::uuid AND v.owner_id = $2::uuid",
	    req_param(r, "venueId"), r->venue_owner), "Venue", true);
}

/* POST /api/owner/venues/{venueId}/images: 200 with the venue including the new image;
 * 400, 401, 403, 404, 413, 415. */
static void
venue_image_add(struct req *r)
{
	const char *id = req_param(r, "venueId"), *url = NULL, *public_id = NULL;

	if (image_read_or_problem(r, &url, &public_id) != 0)
		return;
	if (sql_begin(r) != 0 || venue_touch_or_problem(r, id) != 0)
		return;
	if (sql_query(r, "INSERT INTO venue_images (venue_id, url, public_id) "
	    "VALUES ($1::uuid, $2, $3)", id, url, public_id) == NULL)
		return;
	venue_send_committed(r, 200, id);
}

/* DELETE /api/owner/venues/{venueId}/images/{imageId}: 204; 404 when the image is not one
 * of this venue of the caller; 400, 401, 403. */
static void
venue_image_delete(struct req *r)
{
	const char *id = req_param(r, "venueId");
	PGresult *res;

	if (sql_begin(r) != 0 || venue_touch_or_problem(r, id) != 0)
		return;
	res = sql_query(r, "DELETE FROM venue_images WHERE id = $1::uuid AND venue_id = $2::uuid "
	    "RETURNING id", req_param(r, "imageId"), id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Image");
		return;
	}
	sql_commit_and_no_content(r);
}

/* ---- calendar feed ------------------------------------------------------------------ */

/* The feed URL of the caller's venue as the answer {"url"} (404 for another's venue); with
 * rotate, a new secret first. */
static void
venue_calendar_url(struct req *r, bool rotate)
{
	sql_send_json(r, 200, "Venue",
	    "SELECT calendar_feed_url($1, NULL, v.id, $4::boolean) "
	    "  FROM venues v WHERE v.id = $2::uuid AND v.owner_id = $3::uuid",
	    http_url(r, "/api/calendar/"), req_param(r, "venueId"), r->venue_owner,
	    rotate ? "true" : "false");
}

/* GET /api/owner/venues/{venueId}/calendar: 200 {"url"}, the venue's calendar feed (every
 * court's booked time, no players named; served by the players program), made on first use;
 * 400, 401, 403, 404 not the caller's venue. */
static void
venue_calendar_get(struct req *r)
{
	venue_calendar_url(r, false);
}

/* POST /api/owner/venues/{venueId}/calendar/rotate: 200 {"url"} with a new secret; the old
 * URL answers 404 from now on; 400, 401, 403, 404, 429. */
static void
venue_calendar_rotate(struct req *r)
{
	venue_calendar_url(r, true);
}

/* ---- booking rules ------------------------------------------------------------------ */

/* GET /api/owner/venues/{venueId}/booking-rules: 200 with the venue's rules, each a positive
 * integer or null (no limit); 400, 401, 403, 404. */
static void
booking_rules_get(struct req *r)
{
	sql_send_json(r, 200, "Venue",
	    "SELECT json_booking_rules(v) FROM venues v WHERE v.id = $1::uuid AND v.owner_id = $2::uuid",
	    req_param(r, "venueId"), r->venue_owner);
}

/* One rule of the body: a whole number in 1..max, or null / absent for no limit. */
static const char *
booking_rule_read(struct req *r, const char *name, long max)
{
	char message[64];
	long n = 0;

	if (!body_int(r, name, IN_NULLABLE, &n))
		return NULL;
	if (n < 1 || n > max) {
		snprintf(message, sizeof message, "must be between 1 and %ld, or null", max);
		problem_field(r, name, message);
		return NULL;
	}
	return input_fmt_long(r, n);
}

/* PUT /api/owner/venues/{venueId}/booking-rules {maxUpcomingPerPlayer, maxPerPlayerPerDay,
 * maxPerPlayerPerWeek, bookingWindowDays, minNoticeMinutes}: 200 with the rules now in force
 * (a field absent or null is no limit); 400 with every invalid field; 401, 403, 404, 413,
 * 415. They apply to bookings and joins made from now on. */
static void
booking_rules_put(struct req *r)
{
	const char *upcoming = booking_rule_read(r, "maxUpcomingPerPlayer", 1000);
	const char *day = booking_rule_read(r, "maxPerPlayerPerDay", 1000);
	const char *week = booking_rule_read(r, "maxPerPlayerPerWeek", 1000);
	const char *window = booking_rule_read(r, "bookingWindowDays", 366);
	const char *notice = booking_rule_read(r, "minNoticeMinutes", 43200);

	if (problem_fields_or_send(r) != 0)
		return;
	sql_send_json(r, 200, "Venue",
	    "UPDATE venues SET max_upcoming_per_player = $3::int, max_per_player_per_day = $4::int, "
	    "       max_per_player_per_week = $5::int, booking_window_days = $6::int, "
	    "       min_notice_minutes = $7::int, updated_at = now() "
	    " WHERE id = $1::uuid AND owner_id = $2::uuid "
	    "RETURNING json_booking_rules(venues)",
	    req_param(r, "venueId"), r->venue_owner, upcoming, day, week, window, notice);
}

/* ---- holidays ----------------------------------------------------------------------- */

/* GET /api/owner/venues/{venueId}/holidays: 200 with [{date, name}] by date;
 * 400, 401, 403, 404. */
static void
holidays_list(struct req *r)
{
	sql_send_json(r, 200, "Venue",
	    "SELECT COALESCE((SELECT json_agg(json_build_object('date', h.date, 'name', h.name) "
	    "                                  ORDER BY h.date) "
	    "                   FROM venue_holidays h WHERE h.venue_id = v.id), '[]') "
	    "  FROM venues v WHERE v.id = $1::uuid AND v.owner_id = $2::uuid",
	    req_param(r, "venueId"), r->venue_owner);
}

/* POST /api/owner/venues/{venueId}/holidays: 201 with {date, name}; 409 HOLIDAY_EXISTS for
 * a date the venue already has; 400, 401, 403, 404, 413, 415. */
static void
holiday_create(struct req *r)
{
	const char *date = NULL, *name = NULL;

	body_date(r, "date", IN_REQUIRED, &date);
	body_string(r, "name", IN_REQUIRED | IN_NOT_BLANK, &name);
	if (problem_fields_or_send(r) != 0)
		return;
	sql_send_json(r, 201, "Venue",
	    "INSERT INTO venue_holidays (venue_id, date, name) "
	    "SELECT v.id, $3::date, $4 FROM venues v "
	    " WHERE v.id = $1::uuid AND v.owner_id = $2::uuid "
	    "RETURNING json_build_object('date', venue_holidays.date, 'name', venue_holidays.name)",
	    req_param(r, "venueId"), r->venue_owner, date, name);
}

/* DELETE /api/owner/venues/{venueId}/holidays/{date}: 204; 404 when the caller's venue has
 * no holiday on that date; 400, 401, 403. */
static void
holiday_delete(struct req *r)
{
	PGresult *res = sql_query(r,
	    "DELETE FROM venue_holidays h USING venues v "
	    " WHERE h.venue_id = $1::uuid AND h.date = $2::date "
	    "   AND v.id = h.venue_id AND v.owner_id = $3::uuid RETURNING 1",
	    req_param(r, "venueId"), req_param(r, "date"), r->venue_owner);

	if (res == NULL)
		return;
	if (PQntuples(res) == 0)
		problem_not_found(r, "Holiday");
	else
		req_send_no_content(r);
}

/* ---- resources ---------------------------------------------------------------------- */

/* GET /api/owner/resources?limit=&cursor=: 200 with the courts of every venue the caller owns
 * (with the OWNER role) or staffs, by venue then court age, each with myRole (the caller's
 * role at its venue), a page at a time (page.h); 400 bad limit or cursor; 401, 403. */
static void
resources_list(struct req *r)
{
	page_list(r, "tutu",
	    "SELECT json_member_add(d.doc, 'myRole', to_json(s.role)), "
	    "       json_build_array(s.venue_created, s.venue_id, (s.x).created_at, (s.x).id) "
	    "  FROM (SELECT x, v.created_at AS venue_created, v.id AS venue_id, "
	    "               CASE WHEN $2::boolean AND v.owner_id = $1::uuid THEN 'OWNER' "
	    "                    ELSE st.role END AS role "
	    "          FROM venues v "
	    "          LEFT JOIN venue_staff st ON st.venue_id = v.id AND st.user_id = $1::uuid "
	    "          JOIN resources x ON x.venue_id = v.id "
	    "         WHERE v.id IN (SELECT o.id FROM venues o "
	    "                         WHERE $2::boolean AND o.owner_id = $1::uuid "
	    "                        UNION ALL "
	    "                        SELECT s.venue_id FROM venue_staff s WHERE s.user_id = $1::uuid) "
	    "           AND ($4::json IS NULL OR (v.created_at, v.id, x.created_at, x.id) > "
	    "                (($4::json->>0)::timestamptz, ($4::json->>1)::uuid, "
	    "                 ($4::json->>2)::timestamptz, ($4::json->>3)::uuid)) "
	    "         ORDER BY v.created_at, v.id, x.created_at, x.id LIMIT $3::int) s "
	    " CROSS JOIN LATERAL resource_doc(s.x) d "
	    " ORDER BY s.venue_created, s.venue_id, (s.x).created_at, (s.x).id",
	    r->user_id, (r->roles & ROLE_OWNER) ? "true" : "false");
}

/* POST /api/owner/venues/{venueId}/resources: 201 with the new court, PENDING_APPROVAL;
 * 400, 401, 403, 404, 413, 415. */
static void
resource_create(struct req *r)
{
	const char *name = NULL, *description = NULL, *type = NULL;
	long minutes = 0;

	body_string(r, "name", IN_REQUIRED | IN_NOT_BLANK, &name);
	body_string(r, "description", IN_NULLABLE, &description);
	body_enum(r, "type", IN_REQUIRED, resource_types, &type);
	if (body_int(r, "slotDurationMinutes", IN_REQUIRED, &minutes) &&
	    (minutes < 15 || minutes > 240 || minutes % 5 != 0))
		problem_field(r, "slotDurationMinutes",
		    "must be between 15 and 240 and a multiple of 5");
	if (problem_fields_or_send(r) != 0)
		return;
	sql_send_json(r, 201, "Venue",
	    "WITH r AS (INSERT INTO resources (venue_id, name, description, type, "
	    "                                  slot_duration_minutes) "
	    "           SELECT v.id, $3, $4, $5, $6::integer FROM venues v "
	    "            WHERE v.id = $1::uuid AND v.owner_id = $2::uuid "
	    "           RETURNING *) "
	    "SELECT json_resource(r::resources) FROM r",
	    req_param(r, "venueId"), r->venue_owner, name, description, type,
	    input_fmt_long(r, minutes));
}

/* PUT /api/owner/resources/{resourceId}/schedules: 200 with the court. Sets one day: both
 * times null or absent close it, both given open it (closing after opening, 24:00:00
 * allowed); 400, 401, 403, 404, 413, 415. */
static void
resource_schedule_put(struct req *r)
{
	const char *id = req_param(r, "resourceId");
	const char *day = NULL, *open = NULL, *close = NULL;
	bool has_open, has_close;
	int open_s = 0, close_s = 0;

	body_enum(r, "dayOfWeek", IN_REQUIRED, day_names, &day);
	has_open = body_time(r, "openingTime", IN_NULLABLE, false, &open);
	has_close = body_time(r, "closingTime", IN_NULLABLE, true, &close);
	if (body_present(r, "openingTime") != body_present(r, "closingTime"))
		problem_field(r, body_present(r, "openingTime") ? "closingTime" : "openingTime",
		    "is required when the other time is given; send both null to close the day");
	else if (has_open && has_close && valid_time(open, false, &open_s) &&
	    valid_time(close, true, &close_s) && close_s <= open_s)
		problem_field(r, "closingTime", "must be after openingTime");
	if (problem_fields_or_send(r) != 0)
		return;
	if (sql_begin(r) != 0 || resource_touch_or_problem(r, id) != 0)
		return;
	if (sql_query(r,
	    "INSERT INTO resource_schedules (resource_id, day_of_week, opening_time, closing_time) "
	    "VALUES ($1::uuid, $2::smallint, $3::time, $4::time) "
	    "ON CONFLICT (resource_id, day_of_week) DO UPDATE "
	    "   SET opening_time = EXCLUDED.opening_time, closing_time = EXCLUDED.closing_time",
	    id, input_fmt_long(r, valid_day_of_week(day)), open, close) == NULL)
		return;
	resource_send_committed(r, 200, id);
}

/* POST /api/owner/resources/{resourceId}/price-rules: 200 with the court including the new
 * rule; 409 PRICE_RULE_OVERLAP when it overlaps a rule of the same day type;
 * 400, 401, 403, 404, 413, 415. */
static void
price_rule_add(struct req *r)
{
	const char *id = req_param(r, "resourceId");
	const char *day_type = NULL, *start = NULL, *end = NULL, *currency = NULL;
	long long cents = 0;
	int start_s = 0, end_s = 0;

	body_enum(r, "dayType", IN_REQUIRED, day_types, &day_type);
	body_time(r, "startTime", IN_REQUIRED, false, &start);
	if (body_time(r, "endTime", IN_REQUIRED, true, &end) && start != NULL &&
	    valid_time(start, false, &start_s) && valid_time(end, true, &end_s) && end_s <= start_s)
		problem_field(r, "endTime", "must be after startTime");
	body_money(r, "price", IN_REQUIRED, &cents);
	if (body_string(r, "currency", IN_REQUIRED, &currency) && !valid_currency(currency))
		problem_field(r, "currency",
		    "must be an ISO 4217 code of three upper-case letters");
	if (problem_fields_or_send(r) != 0)
		return;
	if (sql_begin(r) != 0 || resource_touch_or_problem(r, id) != 0)
		return;
	if (sql_query(r,
	    "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, "
	    "                         currency) "
	    "VALUES ($1::uuid, $2, $3::time, $4::time, $5::numeric, $6)",
	    id, day_type, start, end, input_fmt_cents(r, cents), currency) == NULL)
		return;
	resource_send_committed(r, 200, id);
}

/* DELETE /api/owner/resources/{resourceId}/price-rules/{ruleId}: 204; 404 when the rule is
 * not one of this court of the caller; 400, 401, 403. */
static void
price_rule_delete(struct req *r)
{
	const char *id = req_param(r, "resourceId");
	PGresult *res;

	if (sql_begin(r) != 0 || resource_touch_or_problem(r, id) != 0)
		return;
	res = sql_query(r, "DELETE FROM price_rules WHERE id = $1::uuid AND resource_id = $2::uuid "
	    "RETURNING id", req_param(r, "ruleId"), id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Price rule");
		return;
	}
	sql_commit_and_no_content(r);
}

/* PATCH /api/owner/resources/{resourceId}/suspend: 204; 409 INVALID_STATE unless ACTIVE;
 * 400, 401, 403, 404. */
static void
resource_suspend(struct req *r)
{
	status_change_answer(r, sql_query(r,
	    "WITH u AS (UPDATE resources r SET status = 'SUSPENDED', suspended_by = 'OWNER', "
	    "                                 updated_at = now() "
	    "             FROM venues v "
	    "            WHERE r.id = $1::uuid AND v.id = r.venue_id AND v.owner_id = $2::uuid "
	    "              AND r.status = 'ACTIVE' "
	    "            RETURNING r.id) "
	    "SELECT EXISTS (SELECT 1 FROM u), x.status, x.suspended_by "
	    "  FROM (VALUES (1)) one "
	    "  LEFT JOIN (SELECT r.status, r.suspended_by FROM resources r "
	    "               JOIN venues v ON v.id = r.venue_id "
	    "              WHERE r.id = $1::uuid AND v.owner_id = $2::uuid) x ON true",
	    req_param(r, "resourceId"), r->venue_owner), "Resource", false);
}

/* PATCH /api/owner/resources/{resourceId}/reactivate: 204 back to ACTIVE when the owner
 * suspended it; 409 SUSPENDED_BY_ADMIN or INVALID_STATE otherwise; 400, 401, 403, 404. */
static void
resource_reactivate(struct req *r)
{
	status_change_answer(r, sql_query(r,
	    "WITH u AS (UPDATE resources r SET status = 'ACTIVE', suspended_by = NULL, "
	    "                                 updated_at = now() "
	    "             FROM venues v "
	    "            WHERE r.id = $1::uuid AND v.id = r.venue_id AND v.owner_id = $2::uuid "
	    "              AND r.status = 'SUSPENDED' AND r.suspended_by = 'OWNER' "
	    "            RETURNING r.id) "
	    "SELECT EXISTS (SELECT 1 FROM u), x.status, x.suspended_by "
	    "  FROM (VALUES (1)) one "
	    "  LEFT JOIN (SELECT r.status, r.suspended_by FROM resources r "
	    "               JOIN venues v ON v.id = r.venue_id "
	    "              WHERE r.id = $1::uuid AND v.owner_id = $2::uuid) x ON true",
	    req_param(r, "resourceId"), r->venue_owner), "Resource", true);
}

/* POST /api/owner/resources/{resourceId}/images: 200 with the court including the new
 * image; 400, 401, 403, 404, 413, 415. */
static void
resource_image_add(struct req *r)
{
	const char *id = req_param(r, "resourceId"), *url = NULL, *public_id = NULL;

	if (image_read_or_problem(r, &url, &public_id) != 0)
		return;
	if (sql_begin(r) != 0 || resource_touch_or_problem(r, id) != 0)
		return;
	if (sql_query(r, "INSERT INTO resource_images (resource_id, url, public_id) "
	    "VALUES ($1::uuid, $2, $3)", id, url, public_id) == NULL)
		return;
	resource_send_committed(r, 200, id);
}

/* DELETE /api/owner/resources/{resourceId}/images/{imageId}: 200 with the court without
 * the image (the spec's status for this route); 404 when the image is not one of this
 * court of the caller; 400, 401, 403. */
static void
resource_image_delete(struct req *r)
{
	const char *id = req_param(r, "resourceId");
	PGresult *res;

	if (sql_begin(r) != 0 || resource_touch_or_problem(r, id) != 0)
		return;
	res = sql_query(r, "DELETE FROM resource_images WHERE id = $1::uuid "
	    "AND resource_id = $2::uuid RETURNING id", req_param(r, "imageId"), id);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Image");
		return;
	}
	resource_send_committed(r, 200, id);
}

/* ---- the desk: blocks, the day sheet, the report, cancelling and checking in ------------ */

/* POST /api/owner/resources/{resourceId}/blocks {date, startTime, endTime, kind, note,
 * customerName, amount, weeks, cancelMatches}: 201 with the block, or with the array of the
 * blocks made when weeks (1-52: the same weekday that many weeks, all or none) is given. Its
 * slots are closed to every player. kind is MAINTENANCE, LESSON, EVENT or DESK; only a DESK
 * block (a walk-in customer) carries customerName and amount (paid at the desk, in the court's
 * currency). 409 MATCHES_IN_THE_WAY with their matchRequestIds, unless cancelMatches: then
 * the club calls them off, every paid share refunded in full and every player told with the
 * note (409 MATCH_STARTED when one has started); 409 BLOCK_OVERLAP over another block,
 * BLOCK_IN_PAST, NO_CURRENCY for an amount on a court without prices; 400, 401, 403, 404, 413,
 * 415. */
static void
block_create(struct req *r)
{
	static const char *const kinds[] = { "MAINTENANCE", "LESSON", "EVENT", "DESK", NULL };
	const char *date = NULL, *start = NULL, *end = NULL, *kind = NULL, *note = NULL;
	const char *customer = NULL, *amount = NULL;
	long long cents = 0;
	long weeks = 1;
	bool has_weeks, cancel = false;
	int start_s = 0, end_s = 0;

	body_date(r, "date", IN_REQUIRED, &date);
	body_time(r, "startTime", IN_REQUIRED, false, &start);
	if (body_time(r, "endTime", IN_REQUIRED, true, &end) && start != NULL &&
	    valid_time(start, false, &start_s) && valid_time(end, true, &end_s) && end_s <= start_s)
		problem_field(r, "endTime", "must be after startTime");
	body_enum(r, "kind", IN_REQUIRED, kinds, &kind);
	body_string(r, "note", IN_NULLABLE | IN_NOT_BLANK, &note);
	if (body_string(r, "customerName", IN_NULLABLE | IN_NOT_BLANK, &customer) &&
	    kind != NULL && strcmp(kind, "DESK") != 0)
		problem_field(r, "customerName", "is only for a block of kind DESK");
	if (body_money(r, "amount", IN_NULLABLE, &cents)) {
		if (kind != NULL && strcmp(kind, "DESK") != 0)
			problem_field(r, "amount", "is only for a block of kind DESK");
		amount = input_fmt_cents(r, cents);
	}
	has_weeks = body_int(r, "weeks", IN_NULLABLE, &weeks);
	if (has_weeks && (weeks < 1 || weeks > 52))
		problem_field(r, "weeks", "must be between 1 and 52");
	body_bool(r, "cancelMatches", IN_NULLABLE, &cancel);
	if (problem_fields_or_send(r) != 0)
		return;
	if (desk_only(r) && (strcmp(kind, "DESK") != 0 || cancel)) {
		problem_send(r, 403, "FORBIDDEN", "DESK staff may only make blocks of kind DESK, "
		    "and call no match off.");
		return;
	}
	sql_send_json(r, 201, "Resource",
	    "SELECT CASE WHEN $12::boolean THEN j ELSE j->0 END "
	    "  FROM (SELECT json_agg(json_court_block(b) ORDER BY b.block_date) AS j "
	    "          FROM court_blocks_create($1::uuid, $2::uuid, $3::uuid, $4::date, $5::time, "
	    "                                   $6::time, $7, $8, $9, $10::numeric, $11::int, "
	    "                                   $13::boolean) b) x",
	    req_param(r, "resourceId"), r->venue_owner, r->user_id, date, start, end, kind, note,
	    customer, amount, input_fmt_long(r, weeks), has_weeks ? "true" : "false",
	    cancel ? "true" : "false");
}

/* GET /api/owner/resources/{resourceId}/blocks?from=&to=&limit=&cursor=: 200 with the
 * court's blocks from date to date (both inclusive, each optional), by date and start, a
 * page at a time (page.h); 400, 401, 403, 404. */
static void
blocks_list(struct req *r)
{
	const char *id = req_param(r, "resourceId"), *from = NULL, *to = NULL;
	PGresult *res;

	query_date(r, "from", 0, &from);
	query_date(r, "to", 0, &to);
	if (problem_fields_or_send(r) != 0)
		return;
	res = sql_query(r,
	    "SELECT 1 FROM resources x JOIN venues v ON v.id = x.venue_id "
	    " WHERE x.id = $1::uuid AND v.owner_id = $2::uuid", id, r->venue_owner);
	if (res == NULL)
		return;
	if (PQntuples(res) == 0) {
		problem_not_found(r, "Resource");
		return;
	}
	page_list(r, "ssu",
	    "SELECT json_court_block(b), "
	    "       json_build_array(b.block_date::text, b.start_time::text, b.id) "
	    "  FROM court_blocks b "
	    " WHERE b.resource_id = $1::uuid "
	    "   AND ($2::date IS NULL OR b.block_date >= $2::date) "
	    "   AND ($3::date IS NULL OR b.block_date <= $3::date) "
	    "   AND ($5::json IS NULL OR (b.block_date, b.start_time, b.id) > "
	    "        (($5::json->>0)::date, ($5::json->>1)::time, ($5::json->>2)::uuid)) "
	    " ORDER BY b.block_date, b.start_time, b.id LIMIT $4::int",
	    id, from, to);
}

/* DELETE /api/owner/resources/{resourceId}/blocks/{blockId}: 204, and its slots open again;
 * 404 when the block is not one of this court; 403 for DESK staff on a block of another kind;
 * 400, 401. */
static void
block_delete(struct req *r)
{
	PGresult *res = sql_query(r, "SELECT court_block_delete($1::uuid, $2::uuid, $3::uuid, $4)",
	    req_param(r, "resourceId"), req_param(r, "blockId"), r->venue_owner,
	    desk_only(r) ? "DESK" : NULL);

	if (res == NULL)
		return;
	if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
		req_send_no_content(r);
	else if (strcmp(PQgetvalue(res, 0, 0), "f") == 0)
		problem_not_found(r, "Block");
	else
		problem_send(r, 403, "FORBIDDEN", "DESK staff may only remove blocks of kind DESK.");
}

/* GET /api/owner/venues/{venueId}/day?date=: 200 with the venue's day as the desk reads it:
 * {venueId, date, timeZone, hoursOpen, hoursFree, courts}, every court by name with its hours
 * open and free (of any match or block) and its items in start order: matches (status,
 * places, money paid and owed, check-ins and players) and blocks; 400, 401, 403, 404. */
static void
venue_day(struct req *r)
{
	const char *date = NULL;

	query_date(r, "date", IN_REQUIRED, &date);
	if (problem_fields_or_send(r) != 0)
		return;
	sql_send_json(r, 200, "Venue", "SELECT venue_day_sheet($1::uuid, $2::uuid, $3::date)",
	    req_param(r, "venueId"), r->venue_owner, date);
}

/* Days since 1970-01-01 of a valid YYYY-MM-DD date. */
static long
date_days(const char *s)
{
	int y = 0, m = 0, d = 0;

	if (sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3)
		return 0;
	y -= m <= 2;
	return 365L * y + y / 4 - y / 100 + y / 400 + (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 +
	    d - 719469;
}

/* true when the Accept header asks for text/csv. */
static bool
accepts_csv(const struct req *r)
{
	const char *accept = http_variable(r, "HTTP_ACCEPT");

	return accept != NULL && strcasestr(accept, "text/csv") != NULL;
}

/* GET /api/owner/venues/{venueId}/report?from=&to=&currency=: 200 with the venue's revenue
 * and occupancy {venueId, from, to, currency, days, total} for local dates from to to (both
 * inclusive, at most 366 days); with Accept: text/csv, the same as a CSV file (a header row,
 * a row per day, and a last row whose date says total). A venue priced in more than one
 * currency takes currency (400 CURRENCY_REQUIRED without it). 400, 401, 403, 404. */
static void
venue_report(struct req *r)
{
	const char *from = NULL, *to = NULL, *currency = NULL, *json, *csv;
	PGresult *res;
	long span;

	query_date(r, "from", IN_REQUIRED, &from);
	query_date(r, "to", IN_REQUIRED, &to);
	if (query_string(r, "currency", 0, &currency) && !valid_currency(currency))
		problem_field(r, "currency", "must be an ISO 4217 code of three upper-case letters");
	if (from != NULL && to != NULL) {
		span = date_days(to) - date_days(from);
		if (span < 0)
			problem_field(r, "to", "must not be before from");
		else if (span >= 366)
			problem_field(r, "to", "must be at most 366 days from from, both included");
	}
	if (problem_fields_or_send(r) != 0)
		return;
	res = sql_query(r,
	    "SELECT j, CASE WHEN $6::boolean THEN venue_report_csv(j) END "
	    "  FROM venue_report($1::uuid, $2::uuid, $3::date, $4::date, $5) j",
	    req_param(r, "venueId"), r->venue_owner, from, to, currency,
	    accepts_csv(r) ? "true" : "false");
	if (res == NULL)
		return;
	if (PQgetisnull(res, 0, 0)) {
		problem_not_found(r, "Venue");
		return;
	}
	json = PQgetvalue(res, 0, 0);
	if (PQgetisnull(res, 0, 1)) {
		req_send_json(r, 200, json);
		return;
	}
	csv = PQgetvalue(res, 0, 1);
	req_add_header(r, "Content-Disposition", arena_printf(r->a,
	    "attachment; filename=\"report-%s-%s.csv\"", from, to));
	req_send_typed(r, 200, "text/csv; charset=utf-8; header=present", csv, strlen(csv));
}

/* POST /api/owner/matches/{matchRequestId}/cancel {reason}: 204, a live match at one of the
 * caller's venues called off by the club: CANCELLED, every paid share refunded in full
 * (whatever the 48-hour rule), every player told with the reason, nobody's reliability
 * touched; 409 MATCH_STARTED once it has started, INVALID_STATE when cancelled or completed
 * already; 400, 401, 403, 404, 413, 415. */
static void
match_cancel(struct req *r)
{
	const char *reason = NULL;

	body_string(r, "reason", IN_REQUIRED | IN_NOT_BLANK, &reason);
	if (problem_fields_or_send(r) != 0)
		return;
	if (sql_begin(r) != 0 || sql_query(r, "SELECT match_owner_cancel($1::uuid, $2::uuid, $3)",
	    req_param(r, "matchRequestId"), r->venue_owner, reason) == NULL)
		return;
	sql_commit_and_no_content(r);
}

/* POST /api/owner/matches/{matchRequestId}/checkin/{playerId}: 204, the player checked in
 * at the desk (a player without a phone): the GPS check-in's window, without the distance; a
 * repeat is a no-op; the last one confirms the match. 404 for a match not at the caller's
 * venues or a player not in it; 409 INVALID_STATE, CHECKIN_TOO_EARLY, CHECKIN_CLOSED; 400,
 * 401, 403. */
static void
match_checkin(struct req *r)
{
	if (sql_begin(r) != 0 || sql_query(r,
	    "SELECT match_desk_checkin($1::uuid, $2::uuid, $3::uuid, $4::uuid)",
	    req_param(r, "matchRequestId"), req_param(r, "playerId"), r->venue_owner,
	    r->user_id) == NULL)
		return;
	sql_commit_and_no_content(r);
}

/* The STAFF_ flags say which of a venue's staff may use a route besides its owner (the
 * owner alone: none); tests/76-staff.bats holds the rule of every route and fails on one it
 * does not know. */
static const struct route routes[] = {
	{ "GET", "/api/owner/venues", venues_list, AUTH_OWNER, BODY_NONE },
	{ "POST", "/api/owner/venues", venue_create, AUTH_OWNER, BODY_JSON |
	  ROUTE_IDEMPOTENT },
	{ "PUT", "/api/owner/venues/{venueId}", venue_update, AUTH_OWNER, BODY_JSON |
	  STAFF_MANAGER },
	{ "PATCH", "/api/owner/venues/{venueId}/suspend", venue_suspend, AUTH_OWNER, BODY_NONE },
	{ "PATCH", "/api/owner/venues/{venueId}/reactivate", venue_reactivate, AUTH_OWNER,
	  BODY_NONE },
	{ "POST", "/api/owner/venues/{venueId}/images", venue_image_add, AUTH_OWNER, BODY_JSON |
	  ROUTE_IDEMPOTENT | STAFF_MANAGER },
	{ "DELETE", "/api/owner/venues/{venueId}/images/{imageId}", venue_image_delete,
	  AUTH_OWNER, BODY_NONE | STAFF_MANAGER },
	{ "GET", "/api/owner/venues/{venueId}/booking-rules", booking_rules_get, AUTH_OWNER,
	  BODY_NONE | STAFF_DESK },
	{ "PUT", "/api/owner/venues/{venueId}/booking-rules", booking_rules_put, AUTH_OWNER,
	  BODY_JSON | STAFF_MANAGER },
	{ "GET", "/api/owner/venues/{venueId}/calendar", venue_calendar_get, AUTH_OWNER,
	  BODY_NONE | STAFF_MANAGER },
	{ "POST", "/api/owner/venues/{venueId}/calendar/rotate", venue_calendar_rotate,
	  AUTH_OWNER, BODY_NONE | STAFF_MANAGER },
	{ "GET", "/api/owner/venues/{venueId}/holidays", holidays_list, AUTH_OWNER, BODY_NONE |
	  STAFF_DESK },
	{ "POST", "/api/owner/venues/{venueId}/holidays", holiday_create, AUTH_OWNER, BODY_JSON |
	  ROUTE_IDEMPOTENT | STAFF_MANAGER },
	{ "DELETE", "/api/owner/venues/{venueId}/holidays/{date:date}", holiday_delete,
	  AUTH_OWNER, BODY_NONE | STAFF_MANAGER },
	{ "POST", "/api/owner/venues/{venueId}/resources", resource_create, AUTH_OWNER,
	  BODY_JSON | ROUTE_IDEMPOTENT | STAFF_MANAGER },
	{ "GET", "/api/owner/resources", resources_list, AUTH_OWNER, BODY_NONE },
	{ "PUT", "/api/owner/resources/{resourceId}/schedules", resource_schedule_put,
	  AUTH_OWNER, BODY_JSON | STAFF_MANAGER },
	{ "POST", "/api/owner/resources/{resourceId}/price-rules", price_rule_add, AUTH_OWNER,
	  BODY_JSON | ROUTE_IDEMPOTENT | STAFF_MANAGER },
	{ "DELETE", "/api/owner/resources/{resourceId}/price-rules/{ruleId}", price_rule_delete,
	  AUTH_OWNER, BODY_NONE | STAFF_MANAGER },
	{ "PATCH", "/api/owner/resources/{resourceId}/suspend", resource_suspend, AUTH_OWNER,
	  BODY_NONE | STAFF_MANAGER },
	{ "PATCH", "/api/owner/resources/{resourceId}/reactivate", resource_reactivate,
	  AUTH_OWNER, BODY_NONE | STAFF_MANAGER },
	{ "POST", "/api/owner/resources/{resourceId}/images", resource_image_add, AUTH_OWNER,
	  BODY_JSON | ROUTE_IDEMPOTENT | STAFF_MANAGER },
	{ "DELETE", "/api/owner/resources/{resourceId}/images/{imageId}", resource_image_delete,
	  AUTH_OWNER, BODY_NONE | STAFF_MANAGER },
	{ "POST", "/api/owner/resources/{resourceId}/blocks", block_create, AUTH_OWNER,
	  BODY_JSON | ROUTE_IDEMPOTENT | STAFF_DESK },
	{ "GET", "/api/owner/resources/{resourceId}/blocks", blocks_list, AUTH_OWNER, BODY_NONE |
	  STAFF_DESK },
	{ "DELETE", "/api/owner/resources/{resourceId}/blocks/{blockId}", block_delete,
	  AUTH_OWNER, BODY_NONE | STAFF_DESK },
	{ "GET", "/api/owner/venues/{venueId}/day", venue_day, AUTH_OWNER, BODY_NONE |
	  STAFF_DESK },
	{ "GET", "/api/owner/venues/{venueId}/report", venue_report, AUTH_OWNER, BODY_NONE |
	  STAFF_MANAGER },
	{ "POST", "/api/owner/matches/{matchRequestId}/cancel", match_cancel, AUTH_OWNER,
	  BODY_JSON | ROUTE_IDEMPOTENT | STAFF_MANAGER },
	{ "POST", "/api/owner/matches/{matchRequestId}/checkin/{playerId}", match_checkin,
	  AUTH_OWNER, BODY_NONE | STAFF_DESK },
	{ "PUT", "/api/owner/venues/{venueId}/staff/{subject:text}", staff_put, AUTH_OWNER,
	  BODY_JSON },
	{ "DELETE", "/api/owner/venues/{venueId}/staff/{subject:text}", staff_delete, AUTH_OWNER,
	  BODY_NONE },
	{ "GET", "/api/owner/venues/{venueId}/staff", staff_list, AUTH_OWNER, BODY_NONE |
	  STAFF_MANAGER },
	{ "GET", "/api/owner/venues/{venueId}/audit", audit_list, AUTH_OWNER, BODY_NONE |
	  STAFF_MANAGER },
};

static const struct http_hooks hooks = { staff_admitted, venue_guard, venue_audit_after };

int
main(void)
{
	return http_main_hooked("owner", routes, sizeof routes / sizeof routes[0], &hooks);
}
