/* admin: an administrator reviews venues and courts: lists them by status, looks at one, and
 * approves, rejects, suspends or reactivates it. Every route needs the ADMIN role.
 *
 * Transitions (the same for venues and courts):
 *   approve     PENDING_APPROVAL -> ACTIVE
 *   reject      PENDING_APPROVAL -> REJECTED, with a reason the owner sees
 *   suspend     ACTIVE, or SUSPENDED by the owner -> SUSPENDED by ADMIN (the owner cannot
 *               lift it)
 *   reactivate  SUSPENDED (by anyone) -> ACTIVE
 * Each is one guarded UPDATE; when it changes nothing the same statement tells an unknown id
 * (404) from a wrong state (409 INVALID_STATE). */
#include <string.h>

#include <libpq-fe.h>

#include "arena.h"
#include "sql.h"
#include "http.h"
#include "input.h"
#include "page.h"
#include "problem.h"

static const char *const statuses[] = { "PENDING_APPROVAL", "ACTIVE", "SUSPENDED", "REJECTED",
    NULL };

/* One guarded status change. sql takes the id as $1 (and the reason as $2 for reject) and
 * always returns one row: whether a row changed, and the status before the statement (NULL
 * for an unknown id; a data-modifying CTE is invisible to the rest of its statement). */
struct transition {
	const char	*sql;
	const char	*param;		/* path parameter holding the id */
	const char	*what;		/* "Venue" or "Resource", for 404 details */
	const char	*verb;		/* for 409 details */
};

/* Runs t for the id in the path; reason is NULL except for reject. Answers 204, 404 or 409. */
static void
transition_run(struct req *r, const struct transition *t, const char *reason)
{
	const char *params[2] = { req_param(r, t->param), reason };
	PGresult *res;
	const char *before;

	res = sql_query_n(r, t->sql, reason != NULL ? 2 : 1, params);
	if (res == NULL)
		return;
	if (*PQgetvalue(res, 0, 0) == 't') {
		req_send_no_content(r);
		return;
	}
	if ((before = db_value(res, 0, 1)) == NULL) {
		problem_not_found(r, t->what);
		return;
	}
	problem_conflict(r, "INVALID_STATE", arena_printf(r->a, "%s is %s and cannot be %s.",
	    t->what, before, t->verb));
}

static const struct transition venue_approve_tx = {
	"WITH u AS (UPDATE venues SET status = 'ACTIVE', reject_reason = NULL, updated_at = now() "
	"            WHERE id = $1::uuid AND status = 'PENDING_APPROVAL' RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), (SELECT status FROM venues WHERE id = $1::uuid)",
	"venueId", "Venue", "approved"
};
static const struct transition venue_reject_tx = {
	"WITH u AS (UPDATE venues SET status = 'REJECTED', reject_reason = btrim($2::text), "
	"                   updated_at = now() "
	"            WHERE id = $1::uuid AND status = 'PENDING_APPROVAL' RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), (SELECT status FROM venues WHERE id = $1::uuid)",
	"venueId", "Venue", "rejected"
};
static const struct transition venue_suspend_tx = {
	"WITH u AS (UPDATE venues SET status = 'SUSPENDED', suspended_by = 'ADMIN', "
	"                   updated_at = now() "
	"            WHERE id = $1::uuid AND (status = 'ACTIVE' "
	"                  OR (status = 'SUSPENDED' AND suspended_by = 'OWNER')) RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), "
	"       (SELECT CASE WHEN status = 'SUSPENDED' THEN 'SUSPENDED by an administrator' "
	"                    ELSE status END FROM venues WHERE id = $1::uuid)",
	"venueId", "Venue", "suspended"
};
static const struct transition venue_reactivate_tx = {
	"WITH u AS (UPDATE venues SET status = 'ACTIVE', suspended_by = NULL, updated_at = now() "
	"            WHERE id = $1::uuid AND status = 'SUSPENDED' RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), (SELECT status FROM venues WHERE id = $1::uuid)",
	"venueId", "Venue", "reactivated"
};
static const struct transition resource_approve_tx = {
	"WITH u AS (UPDATE resources SET status = 'ACTIVE', reject_reason = NULL, "
	"                   updated_at = now() "
	"            WHERE id = $1::uuid AND status = 'PENDING_APPROVAL' RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), (SELECT status FROM resources WHERE id = $1::uuid)",
	"resourceId", "Resource", "approved"
};
static const struct transition resource_reject_tx = {
	"WITH u AS (UPDATE resources SET status = 'REJECTED', reject_reason = btrim($2::text), "
	"                   updated_at = now() "
	"            WHERE id = $1::uuid AND status = 'PENDING_APPROVAL' RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), (SELECT status FROM resources WHERE id = $1::uuid)",
	"resourceId", "Resource", "rejected"
};
static const struct transition resource_suspend_tx = {
	"WITH u AS (UPDATE resources SET status = 'SUSPENDED', suspended_by = 'ADMIN', "
	"                   updated_at = now() "
	"            WHERE id = $1::uuid AND (status = 'ACTIVE' "
	"                  OR (status = 'SUSPENDED' AND suspended_by = 'OWNER')) RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), "
	"       (SELECT CASE WHEN status = 'SUSPENDED' THEN 'SUSPENDED by an administrator' "
	"                    ELSE status END FROM resources WHERE id = $1::uuid)",
	"resourceId", "Resource", "suspended"
};
static const struct transition resource_reactivate_tx = {
	"WITH u AS (UPDATE resources SET status = 'ACTIVE', suspended_by = NULL, "
	"                   updated_at = now() "
	"            WHERE id = $1::uuid AND status = 'SUSPENDED' RETURNING id) "
	"SELECT EXISTS (SELECT 1 FROM u), (SELECT status FROM resources WHERE id = $1::uuid)",
	"resourceId", "Resource", "reactivated"
};

/* GET /api/admin/venues?status=&limit=&cursor=: 200 with the venues (of that status), oldest
 * first, a page at a time (page.h); 400 unknown status, bad limit or cursor; 401; 403. */
static void
venues_list(struct req *r)
{
	const char *status = NULL;

	query_enum(r, "status", 0, statuses, &status);
	page_list(r, "tu",
	    "SELECT d.doc, json_build_array((s.v).created_at, (s.v).id) "
	    "  FROM (SELECT v FROM venues v "
	    "         WHERE ($1::text IS NULL OR v.status = $1::text) "
	    "           AND ($3::json IS NULL OR (v.created_at, v.id) > "
	    "                (($3::json->>0)::timestamptz, ($3::json->>1)::uuid)) "
	    "         ORDER BY v.created_at, v.id LIMIT $2::int) s "
	    " CROSS JOIN LATERAL venue_doc(s.v) d "
	    " ORDER BY (s.v).created_at, (s.v).id",
	    status);
}

/* GET /api/admin/venues/{venueId}: 200 with the venue, whatever its status; 400; 401; 403;
 * 404. */
static void
venue_get(struct req *r)
{
	sql_send_json(r, 200, "Venue", "SELECT json_venue(v) FROM venues v WHERE v.id = $1::uuid",
	    req_param(r, "venueId"));
}

/* PATCH /api/admin/venues/{venueId}/approve: 204; 400; 401; 403; 404; 409 INVALID_STATE. */
static void
venue_approve(struct req *r)
{
	transition_run(r, &venue_approve_tx, NULL);
}

/* Reads the required, not blank reason of a reject; NULL after answering 400. */
static const char *
reason_or_problem(struct req *r)
{
	const char *reason = NULL;

	body_string(r, "reason", IN_REQUIRED | IN_NOT_BLANK, &reason);
	return problem_fields_or_send(r) == 0 ? reason : NULL;
}

/* PATCH /api/admin/venues/{venueId}/reject {"reason"}: 204; 400 missing or blank reason;
 * 401; 403; 404; 409 INVALID_STATE. */
static void
venue_reject(struct req *r)
{
	const char *reason = reason_or_problem(r);

	if (reason != NULL)
		transition_run(r, &venue_reject_tx, reason);
}

/* PATCH /api/admin/venues/{venueId}/suspend: 204; 400; 401; 403; 404; 409 INVALID_STATE. */
static void
venue_suspend(struct req *r)
{
	transition_run(r, &venue_suspend_tx, NULL);
}

/* PATCH /api/admin/venues/{venueId}/reactivate: 204; 400; 401; 403; 404;
 * 409 INVALID_STATE. */
static void
venue_reactivate(struct req *r)
{
	transition_run(r, &venue_reactivate_tx, NULL);
}

/* GET /api/admin/resources?status=&limit=&cursor=: 200 with the courts (of that status),
 * oldest first, a page at a time (page.h); 400 unknown status, bad limit or cursor; 401;
 * 403. */
static void
resources_list(struct req *r)
{
	const char *status = NULL;

	query_enum(r, "status", 0, statuses, &status);
	page_list(r, "tu",
	    "SELECT d.doc, json_build_array((s.x).created_at, (s.x).id) "
	    "  FROM (SELECT x FROM resources x "
	    "         WHERE ($1::text IS NULL OR x.status = $1::text) "
	    "           AND ($3::json IS NULL OR (x.created_at, x.id) > "
	    "                (($3::json->>0)::timestamptz, ($3::json->>1)::uuid)) "
	    "         ORDER BY x.created_at, x.id LIMIT $2::int) s "
	    " CROSS JOIN LATERAL resource_doc(s.x) d "
	    " ORDER BY (s.x).created_at, (s.x).id",
	    status);
}

/* GET /api/admin/resources/{resourceId}: 200 with the court, whatever its status; 400; 401;
 * 403; 404. */
static void
resource_get(struct req *r)
{
	sql_send_json(r, 200, "Resource",
	    "SELECT json_resource(x) FROM resources x WHERE x.id = $1::uuid",
	    req_param(r, "resourceId"));
}

/* PATCH /api/admin/resources/{resourceId}/approve: 204; 400; 401; 403; 404;
 * 409 INVALID_STATE. */
static void
resource_approve(struct req *r)
{
	transition_run(r, &resource_approve_tx, NULL);
}

/* PATCH /api/admin/resources/{resourceId}/reject {"reason"}: 204; 400 missing or blank
 * reason; 401; 403; 404; 409 INVALID_STATE. */
static void
resource_reject(struct req *r)
{
	const char *reason = reason_or_problem(r);

	if (reason != NULL)
		transition_run(r, &resource_reject_tx, reason);
}

/* PATCH /api/admin/resources/{resourceId}/suspend: 204; 400; 401; 403; 404;
 * 409 INVALID_STATE. */
static void
resource_suspend(struct req *r)
{
	transition_run(r, &resource_suspend_tx, NULL);
}

/* PATCH /api/admin/resources/{resourceId}/reactivate: 204; 400; 401; 403; 404;
 * 409 INVALID_STATE. */
static void
resource_reactivate(struct req *r)
{
	transition_run(r, &resource_reactivate_tx, NULL);
}

static const char *const payment_statuses[] = { "PENDING", "PAID", "CANCELLED", "REFUNDED",
    "FAILED", NULL };
static const char *const payment_kinds[] = { "PAYMENT", "REFUND", NULL };

/* GET /api/admin/payments?status=&kind=&limit=&cursor=: 200 with the ledger's rows (of that
 * status and kind), oldest first, each with what the provider said of it and the issues it
 * raised, a page at a time (page.h): status=FAILED lists the refunds the provider refused,
 * for an administrator to pay back by other means. 400 unknown status or kind, bad limit or
 * cursor; 401; 403. */
static void
payments_list(struct req *r)
{
	const char *status = NULL, *kind = NULL;

	query_enum(r, "status", 0, payment_statuses, &status);
	query_enum(r, "kind", 0, payment_kinds, &kind);
	page_list(r, "tu",
	    "SELECT json_payment(s.p), json_build_array((s.p).created_at, (s.p).id) "
	    "  FROM (SELECT p FROM payments p "
	    "         WHERE ($1::text IS NULL OR p.status = $1::text) "
	    "           AND ($2::text IS NULL OR p.kind = $2::text) "
	    "           AND ($4::json IS NULL OR (p.created_at, p.id) > "
	    "                (($4::json->>0)::timestamptz, ($4::json->>1)::uuid)) "
	    "         ORDER BY p.created_at, p.id LIMIT $3::int) s "
	    " ORDER BY (s.p).created_at, (s.p).id",
	    status, kind);
}

/* POST /api/admin/payments/{paymentId}/resolve {"note"}: 200 with the ledger row, its open
 * issues settled by the caller with that note (what was done: a refund paid back at the
 * desk, money returned from the provider's dashboard), so that they are no longer
 * differences; 400 missing or blank note; 401; 403; 404; 409 NO_OPEN_ISSUE. */
static void
payment_resolve(struct req *r)
{
	const char *note = NULL;
	PGresult *res;

	if (body_string(r, "note", IN_REQUIRED | IN_NOT_BLANK, &note) && strlen(note) > 2000)
		problem_field(r, "note", "must be at most 2000 bytes");
	if (problem_fields_or_send(r) != 0 || sql_begin(r) != 0 ||
	    sql_query(r, "SELECT payment_issues_resolve($1::uuid, $2::uuid, $3)",
	    req_param(r, "paymentId"), r->user_id, note) == NULL ||
	    (res = sql_query(r, "SELECT json_payment(p) FROM payments p WHERE p.id = $1::uuid",
	    req_param(r, "paymentId"))) == NULL)
		return;
	sql_commit_and_send(r, 200, db_value(res, 0, 0));
}

static const struct route routes[] = {
	{ "GET", "/api/admin/venues", venues_list, AUTH_ADMIN, BODY_NONE },
	{ "GET", "/api/admin/venues/{venueId}", venue_get, AUTH_ADMIN, BODY_NONE },
	{ "PATCH", "/api/admin/venues/{venueId}/approve", venue_approve, AUTH_ADMIN, BODY_NONE },
	{ "PATCH", "/api/admin/venues/{venueId}/reject", venue_reject, AUTH_ADMIN, BODY_JSON },
	{ "PATCH", "/api/admin/venues/{venueId}/suspend", venue_suspend, AUTH_ADMIN, BODY_NONE },
	{ "PATCH", "/api/admin/venues/{venueId}/reactivate", venue_reactivate, AUTH_ADMIN,
	  BODY_NONE },
	{ "GET", "/api/admin/resources", resources_list, AUTH_ADMIN, BODY_NONE },
	{ "GET", "/api/admin/resources/{resourceId}", resource_get, AUTH_ADMIN, BODY_NONE },
	{ "PATCH", "/api/admin/resources/{resourceId}/approve", resource_approve, AUTH_ADMIN,
	  BODY_NONE },
	{ "PATCH", "/api/admin/resources/{resourceId}/reject", resource_reject, AUTH_ADMIN,
	  BODY_JSON },
	{ "PATCH", "/api/admin/resources/{resourceId}/suspend", resource_suspend, AUTH_ADMIN,
	  BODY_NONE },
	{ "PATCH", "/api/admin/resources/{resourceId}/reactivate", resource_reactivate,
	  AUTH_ADMIN, BODY_NONE },
	{ "GET", "/api/admin/payments", payments_list, AUTH_ADMIN, BODY_NONE },
	{ "POST", "/api/admin/payments/{paymentId}/resolve", payment_resolve, AUTH_ADMIN,
	  BODY_JSON },
};

int
main(void)
{
	return http_main("admin", routes, sizeof routes / sizeof routes[0]);
}
