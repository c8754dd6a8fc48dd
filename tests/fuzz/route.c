/* Fuzz target route: the router with typed path parameters, against the real route table of
 * every program in cgi-bin/ (each built with its main() renamed fuzz_main_<program> and its
 * call of http_main() handing the table here, see the Makefile).
 *
 * Input: "METHOD target", the target decoded as the driver does (url_path). A found route
 * must have the request's method and give the path back when its parameters are put into
 * its pattern; a parameter that passes the check has its declared kind; anything not found
 * is answered with a well-formed 404 or a 405 with Allow. */
#include "fuzz.h"
#include "problem.h"
#include "route.h"
#include "url.h"
#include "valid.h"

int fuzz_main_admin(void), fuzz_main_health(void), fuzz_main_invitations(void),
    fuzz_main_owner(void), fuzz_main_players(void), fuzz_main_public(void),
    fuzz_main_requests(void), fuzz_main_search(void);
int fuzz_routes_take(const char *program, const struct route *routes, size_t n);

static struct {
	const struct route	*routes;
	size_t			 n;
} tables[16];
static size_t ntables;

int
fuzz_routes_take(const char *program, const struct route *routes, size_t n)
{
	(void)program;
	if (ntables < sizeof tables / sizeof tables[0]) {
		tables[ntables].routes = routes;
		tables[ntables].n = n;
		ntables++;
	}
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_main_admin();
	fuzz_main_health();
	fuzz_main_invitations();
	fuzz_main_owner();
	fuzz_main_players();
	fuzz_main_public();
	fuzz_main_requests();
	fuzz_main_search();
	return 0;
}

/* The pattern with r's parameters in place of its {name} segments. */
static char *
pattern_filled(const struct req *r, const char *pattern)
{
	char *out = arena_alloc(fuzz_arena, strlen(pattern) + strlen(r->path) + 1), *o = out;
	int i = 0;

	while (*pattern != '\0') {
		if (*pattern == '{') {
			FUZZ_CHECK(i < r->nparams);
			o = stpcpy(o, r->param_values[i++]);
			pattern += strcspn(pattern, "}");
			pattern += *pattern == '}';
		} else
			*o++ = *pattern++;
	}
	*o = '\0';
	FUZZ_CHECK(i == r->nparams);
	return out;
}

static void
check_found(struct req *r, const struct route *rt)
{
	int i;

	FUZZ_CHECK(strcmp(rt->method, r->method) == 0 && !r->answered);
	FUZZ_CHECK(strcmp(pattern_filled(r, rt->pattern), r->path) == 0);
	r->route = rt;
	route_params_check(r);
	for (i = 0; i < r->nparams; i++) {
		const char *v = r->param_values[i];

		FUZZ_CHECK(v[0] != '\0' && strchr(v, '/') == NULL);
		FUZZ_CHECK(req_param(r, r->param_names[i]) != NULL);
		if (!problem_has_fields(r))
			FUZZ_CHECK(valid_uuid(v) || valid_date(v));
	}
	if (problem_fields_or_send(r) != 0) {
		FUZZ_CHECK(r->status == 400);
		fuzz_check_problem(r);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line, *method, *path, *sp;
	struct req r;
	size_t t;

	fuzz_arena_use();
	line = fuzz_text(data, size);
	sp = strchr(line, ' ');
	method = sp != NULL ? arena_strndup(fuzz_arena, line, (size_t)(sp - line)) : "GET";
	if ((path = url_path(fuzz_arena, sp != NULL ? sp + 1 : line, "")) == NULL)
		return 0;
	for (t = 0; t < ntables; t++) {
		const struct route *rt;

		fuzz_req_init(&r, method, path);
		if ((rt = route_find(&r, tables[t].routes, tables[t].n)) != NULL) {
			check_found(&r, rt);
			continue;
		}
		FUZZ_CHECK(r.status == 404 || r.status == 405);
		FUZZ_CHECK((r.status == 405) == (r.resp_headers != NULL &&
		    strncmp(r.resp_headers, "Allow: ", 7) == 0));
		fuzz_check_problem(&r);
	}
	return 0;
}
