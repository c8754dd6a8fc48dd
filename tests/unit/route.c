/* route: matching, typed path parameters, 404 / 405 + Allow and the JSON media type. */
#include <stdbool.h>

#include <cJSON.h>

#include "arena.h"
#include "json.h"
#include "problem.h"
#include "req.h"
#include "route.h"
#include "unit.h"

static struct arena *arena;
static struct req r;

static void handler(struct req *rq) { (void)rq; }

static const struct route routes[] = {
	{ "GET", "/api/owner/venues", handler, AUTH_OWNER, BODY_NONE },
	{ "POST", "/api/owner/venues", handler, AUTH_OWNER, BODY_JSON },
	{ "PUT", "/api/owner/venues/{venueId}", handler, AUTH_OWNER, BODY_JSON },
	{ "DELETE", "/api/owner/venues/{venueId}/holidays/{date:date}", handler, AUTH_OWNER,
	  BODY_NONE },
	{ "GET", "/api/match/requests/my", handler, AUTH_PLAYER, BODY_NONE },
	{ "GET", "/api/match/requests/{id}", handler, AUTH_PLAYER, BODY_NONE },
};
#define NROUTES (sizeof routes / sizeof routes[0])

#define V1 "6f1c1b9e-2d9a-4c51-9d7e-0c6b3d1f8a21"

static void
req_for(const char *method, const char *path)
{
	arena_reset(arena);
	memset(&r, 0, sizeof r);
	r.a = arena;
	r.id = "unit";
	r.method = method;
	r.path = path;
}

/* Code of the problem answered, or "" when none was. */
static const char *
answer_code(void)
{
	cJSON *doc;
	const cJSON *code;

	if (!r.answered || r.resp_body == NULL || (doc = cJSON_Parse(r.resp_body)) == NULL)
		return "";
	code = cJSON_GetObjectItemCaseSensitive(doc, "code");
	return cJSON_IsString(code) ? code->valuestring : "";
}

static void
test_match(void)
{
	req_for("GET", "");
	CHECK(route_match(&r, "/api/owner/venues", "/api/owner/venues"), "match: same path");
	CHECK(!route_match(&r, "/api/owner/venues", "/api/owner/venue"), "match: shorter segment");
	CHECK(!route_match(&r, "/api/owner/venues", "/api/owner/venues/x"), "match: longer path");
	CHECK(!route_match(&r, "/api/owner/venues/{id}", "/api/owner/venues"),
	    "match: a missing parameter segment");
	CHECK(route_match(&r, "/a/{id}/b/{day:date}", "/a/x y/b/2030-01-01") && r.nparams == 2,
	    "match: two parameters captured");
	CHECK_STR(req_param(&r, "id"), "x y", "match: a parameter is captured as sent");
	CHECK_STR(req_param(&r, "day"), "2030-01-01", "match: a typed parameter is named without kind");
	CHECK(!route_match(&r, "/a/{id}", "/a/"), "match: an empty parameter does not match");
	CHECK(!route_match(&r, "/a/{id}", "/a//"), "match: an empty segment does not match");
	CHECK(!route_match(&r, "/a/{a}/{b}/{c}/{d}/{e}", "/a/1/2/3/4/5"),
	    "match: more than REQ_MAX_PARAMS parameters never match");
	CHECK(route_match(&r, "/cal/{secret:secret}.ics", "/cal/abc.ics") && r.nparams == 1,
	    "match: a parameter followed by a literal suffix");
	CHECK_STR(req_param(&r, "secret"), "abc", "match: the suffix is not part of the value");
	CHECK(!route_match(&r, "/cal/{secret:secret}.ics", "/cal/abc"),
	    "match: the suffix is required");
	CHECK(!route_match(&r, "/cal/{secret:secret}.ics", "/cal/.ics"),
	    "match: the value before a suffix must not be empty");
	CHECK(!route_match(&r, "/cal/{secret:secret}.ics", "/cal/abc.ics/x"),
	    "match: a suffix ends its segment");
	CHECK(!route_match(&r, "/cal/{secret:secret}.ics", "/cal/abc.icsx"),
	    "match: the suffix ends the segment");
}

static void
test_find(void)
{
	const struct route *rt;

	req_for("GET", "/api/owner/venues");
	rt = route_find(&r, routes, NROUTES);
	CHECK(rt == &routes[0] && !r.answered, "find: method and path pick the route");

	req_for("GET", "/api/match/requests/my");
	CHECK(route_find(&r, routes, NROUTES) == &routes[4],
	    "find: a literal route listed first wins over a parameter");

	req_for("DELETE", "/api/owner/venues/" V1 "/holidays/2030-12-25");
	rt = route_find(&r, routes, NROUTES);
	CHECK(rt == &routes[3] && r.nparams == 2, "find: parameters of the found route are kept");

	req_for("GET", "/api/nowhere");
	CHECK(route_find(&r, routes, NROUTES) == NULL && r.status == 404, "find: unknown path 404");
	CHECK_STR(answer_code(), "NOT_FOUND", "find: 404 is a NOT_FOUND problem");

	req_for("DELETE", "/api/owner/venues");
	CHECK(route_find(&r, routes, NROUTES) == NULL && r.status == 405,
	    "find: known path, other method is 405");
	CHECK_STR(answer_code(), "METHOD_NOT_ALLOWED", "find: 405 is a METHOD_NOT_ALLOWED problem");
	CHECK(r.resp_headers != NULL && strcmp(r.resp_headers, "Allow: GET, POST\r\n") == 0,
	    "find: 405 names each allowed method once in Allow");
	CHECK_INT(r.nparams, 0, "find: no parameters are left after a 405");
}

static void
test_params(void)
{
	static char long_path[7 + ROUTE_TEXT_MAX + 2];	/* "/staff/", one byte too many */
	req_for("DELETE", "/api/owner/venues/" V1 "/holidays/2030-12-25");
	r.route = route_find(&r, routes, NROUTES);
	route_params_check(&r);
	CHECK(!problem_has_fields(&r), "params: a UUID and a date pass");

	req_for("DELETE", "/api/owner/venues/x/holidays/2023-02-29");
	r.route = route_find(&r, routes, NROUTES);
	route_params_check(&r);
	CHECK_INT(r.field_errors != NULL ? cJSON_GetArraySize(r.field_errors) : 0, 2,
	    "params: a bad UUID and a day that does not exist are both reported");
	CHECK(problem_fields_or_send(&r) == -1 && r.status == 400, "params: answered as 400");

	req_for("PUT", "/api/owner/venues/2030-12-25");
	r.route = route_find(&r, routes, NROUTES);
	route_params_check(&r);
	CHECK(problem_has_fields(&r), "params: a date where a UUID is declared is refused");

	req_for("GET", "/cal/not a uuid.ics");
	CHECK(route_match(&r, "/cal/{secret:secret}.ics", r.path), "params: a secret matches");
	r.route = &(struct route){ "GET", "/cal/{secret:secret}.ics", handler, AUTH_NONE, BODY_NONE };
	route_params_check(&r);
	CHECK(!problem_has_fields(&r), "params: a secret is any text, for its handler to look up");

	req_for("PUT", "/staff/auth0|64f0 b");
	r.route = &(struct route){ "PUT", "/staff/{subject:text}", handler, AUTH_NONE, BODY_NONE };
	CHECK(route_match(&r, r.route->pattern, r.path), "params: a text matches");
	route_params_check(&r);
	CHECK(!problem_has_fields(&r), "params: a text is taken as it is");
	memset(long_path, 'x', sizeof long_path - 1);
	memcpy(long_path, "/staff/", 7);
	long_path[sizeof long_path - 1] = '\0';
	req_for("PUT", long_path);
	r.route = &(struct route){ "PUT", "/staff/{subject:text}", handler, AUTH_NONE, BODY_NONE };
	CHECK(route_match(&r, r.route->pattern, r.path), "params: a long text matches");
	route_params_check(&r);
	CHECK(problem_has_fields(&r), "params: a text of more than ROUTE_TEXT_MAX bytes is refused");

	req_for("PUT", "/api/owner/venues/" "6F1C1B9E-2D9A-4C51-9D7E-0C6B3D1F8A21");
	r.route = route_find(&r, routes, NROUTES);
	route_params_check(&r);
	CHECK(!problem_has_fields(&r), "params: an upper-case UUID passes");
}

static void
test_media_type(void)
{
	CHECK(route_json_media_type("application/json"), "media: application/json");
	CHECK(route_json_media_type("Application/JSON; charset=utf-8"),
	    "media: any case, parameters ignored");
	CHECK(route_json_media_type("application/json ;charset=utf-8"),
	    "media: spaces before ';' ignored");
	CHECK(route_json_media_type("application/merge-patch+json"), "media: a +json subtype");
	CHECK(!route_json_media_type("application/+json"), "media: '+json' alone is not a subtype");
	CHECK(!route_json_media_type("text/plain"), "media: text/plain refused");
	CHECK(!route_json_media_type("application/jsonx"), "media: a longer name refused");
	CHECK(!route_json_media_type("text/json"), "media: another top-level type refused");
	CHECK(!route_json_media_type(""), "media: empty refused");
	CHECK(!route_json_media_type(NULL), "media: absent refused");
}

int
main(void)
{
	unit_start();
	if ((arena = arena_new()) == NULL)
		return 2;
	json_use_arena(arena);	/* problems are built with cJSON, as under the driver */
	test_match();
	test_find();
	test_params();
	test_media_type();
	json_use_arena(NULL);
	arena_free(arena);
	return unit_done();
}
