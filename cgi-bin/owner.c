/* owner: a venue owner's venues, courts, schedules, prices, pictures and holidays.
 * Every route needs the OWNER role; another owner's venue or court is a 404. */
#include "db.h"
#include "http.h"

/* GET /api/owner/venues: 200 with every venue of the caller, oldest first; 401, 403. */
static void
venues_list(struct req *r)
{
	db_send_json(r, 200, "Venues",
	    "SELECT COALESCE(json_agg(json_venue(v) ORDER BY v.created_at, v.id), '[]') "
	    "FROM venues v WHERE v.owner_id = $1",
	    r->user_id);
}

static const struct route routes[] = {
	{ "GET", "/api/owner/venues", venues_list, AUTH_OWNER, BODY_NONE },
};

int
main(void)
{
	return http_main("owner", routes, sizeof routes / sizeof routes[0]);
}
