/* http: the request driver shared by every program in cgi-bin/.
 *
 * A program is a route table and a main() that calls http_main(). The driver reads the CGI
 * environment (plain CGI, one request) or accepts requests in a loop (FastCGI), then for
 * each request: caps the body (413), routes (404 / 405 + Allow), validates path parameters
 * (400), checks the token and role (401 / 403), parses the JSON body (415 / 400), runs the
 * handler, and writes exactly one response. All memory of a request lives in its arena and
 * is released when the response is written; handlers never call exit(). This is the top of
 * the library: it uses every other part, and none of them includes it.
 */
#ifndef COURTS_HTTP_H
#define COURTS_HTTP_H

#include <stddef.h>

#include "req.h"

#define HTTP_BODY_MAX	65536	/* bytes; larger bodies get 413 */

enum auth_level {
	AUTH_NONE,	/* no token needed; a token sent anyway is ignored */
	AUTH_PLAYER,	/* any valid token */
	AUTH_OWNER,	/* valid token with the OWNER role */
	AUTH_ADMIN	/* valid token with the ADMIN role */
};

/* Route flags, or'ed together. */
#define BODY_NONE		0x0u	/* any body is ignored */
#define BODY_JSON		0x1u	/* a JSON object is required */
#define ROUTE_IDEMPOTENT	0x2u	/* a write that honours Idempotency-Key (idem.h) */

typedef void (*handler_fn)(struct req *);

struct route {
	const char	*method;	/* "GET", "POST", ... */
	const char	*pattern;	/* "/api/owner/venues/{venueId}"; {x} is a UUID, {x:date} a date */
	handler_fn	 handler;
	enum auth_level	 auth;
	unsigned	 flags;		/* BODY_NONE or BODY_JSON, | ROUTE_IDEMPOTENT */
};

/* Runs the program: handles one CGI request; or, started by mod_fcgid, FastCGI requests until
 * the server stops it; or, with FCGI_LISTEN=/path/to.sock in the environment, listens there
 * with FCGI_WORKERS (default 4) supervised worker processes for mod_proxy_fcgi (pool.h).
 * program names the executable in log lines. Returns the process exit status. */
int http_main(const char *program, const struct route *routes, size_t nroutes);

#endif
