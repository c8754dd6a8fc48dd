/* route: pattern matching, typed path parameters and the body's media type. */
#include "route.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "problem.h"
#include "valid.h"

bool
route_match(struct req *r, const char *pattern, const char *path)
{
	const char *pp = pattern, *sp = path;

	r->nparams = 0;
	while (*pp != '\0' && *sp != '\0') {
		size_t plen = strcspn(pp + 1, "/") + 1, slen = strcspn(sp + 1, "/") + 1;

		if (pp[1] == '{') {
			/* "{name}" or "{name:kind}", then maybe a literal suffix ("{secret}.ics") */
			const char *close = memchr(pp, '}', plen), *colon;
			size_t suffix = close != NULL ? plen - (size_t)(close + 1 - pp) : 0;

			if (close == NULL || slen <= 1 + suffix || r->nparams == REQ_MAX_PARAMS ||
			    strncmp(sp + slen - suffix, close + 1, suffix) != 0)
				return false;
			colon = memchr(pp + 2, ':', (size_t)(close - (pp + 2)));
			r->param_names[r->nparams] = arena_strndup(r->a, pp + 2,
			    (size_t)((colon != NULL ? colon : close) - (pp + 2)));
			r->param_values[r->nparams] = arena_strndup(r->a, sp + 1, slen - 1 - suffix);
			r->nparams++;
		} else if (plen != slen || strncmp(pp, sp, plen) != 0)
			return false;
		pp += plen;
		sp += slen;
	}
	return *pp == '\0' && *sp == '\0';
}

const struct route *
route_find(struct req *r, const struct route *routes, size_t n)
{
	char allow[128] = "";
	size_t i;

	for (i = 0; i < n; i++) {
		if (!route_match(r, routes[i].pattern, r->path))
			continue;
		if (strcmp(routes[i].method, r->method) == 0)
			return &routes[i];
		if (strstr(allow, routes[i].method) == NULL)
			snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s",
			    allow[0] != '\0' ? ", " : "", routes[i].method);
	}
	r->nparams = 0;
	if (allow[0] != '\0') {
		req_add_header(r, "Allow", allow);
		problem_send(r, 405, "METHOD_NOT_ALLOWED", "The method is not allowed on this path.");
	} else
		problem_send(r, 404, "NOT_FOUND", "No such endpoint.");
	return NULL;
}

void
route_params_check(struct req *r)
{
	const char *pp = r->route->pattern;
	int i = 0;

	while ((pp = strchr(pp, '{')) != NULL && i < r->nparams) {
		const char *kind = strcspn(pp, ":}") + pp, *v = r->param_values[i], *why;

		/* {name:secret}: any text, which the handler looks up (a wrong one is 404) */
		if (strncmp(kind, ":secret}", 8) == 0)
			why = NULL;
		/* {name:text}: a name the handler takes as it is (an identity provider's sub) */
		else if (strncmp(kind, ":text}", 6) == 0)
			why = strlen(v) <= ROUTE_TEXT_MAX ? NULL : "must be at most 255 bytes";
		else if (strncmp(kind, ":date}", 6) == 0)
			why = valid_date_problem(v);
		else
			why = valid_uuid(v) ? NULL : "must be a UUID";
		if (why != NULL)
			problem_field(r, r->param_names[i], why);
		pp++;
		i++;
	}
}

bool
route_json_media_type(const char *ct)
{
	size_t n;

	if (ct == NULL)
		return false;
	n = strcspn(ct, ";");
	while (n > 0 && ct[n - 1] == ' ')
		n--;
	return (n == 16 && strncasecmp(ct, "application/json", 16) == 0) ||
	    (n > 17 && strncasecmp(ct, "application/", 12) == 0 &&
	    strncasecmp(ct + n - 5, "+json", 5) == 0);
}
