/* health: /actuator/health and /actuator/info, for load balancers and operators. */
#include <cJSON.h>

#include "sql.h"
#include "http.h"

#ifndef COURTS_VERSION
#define COURTS_VERSION "0.0.0"
#endif
#ifndef COURTS_BUILD
#define COURTS_BUILD "unknown"
#endif

/* GET /actuator/health: 200 {"status":"UP"} when the database answers, else 503 DOWN.
 * Details are hidden on purpose: this path is public. */
static void
health(struct req *r)
{
	bool up = db_ping(r->db);

	req_send_json(r, up ? 200 : 503, up ? "{\"status\":\"UP\"}" : "{\"status\":\"DOWN\"}");
}

/* GET /actuator/info: 200 with name, version and build. */
static void
info(struct req *r)
{
	cJSON *doc = cJSON_CreateObject();

	cJSON_AddStringToObject(doc, "name", "courts");
	cJSON_AddStringToObject(doc, "description",
	    "Court booking and match-making for padel and tennis clubs");
	cJSON_AddStringToObject(doc, "version", COURTS_VERSION);
	cJSON_AddStringToObject(doc, "build", COURTS_BUILD);
	req_send_cjson(r, 200, doc);
}

static const struct route routes[] = {
	{ "GET", "/actuator/health", health, AUTH_NONE, BODY_NONE },
	{ "GET", "/actuator/info", info, AUTH_NONE, BODY_NONE },
};

int
main(void)
{
	return http_main("health", routes, sizeof routes / sizeof routes[0]);
}
