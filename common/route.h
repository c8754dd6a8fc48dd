/* route: the route table of a program and matching a request against it.
 *
 * A program's table (cgi-bin/) lists method, path pattern, handler, what caller and body it
 * needs. Matching captures the {name} segments of the pattern, then checks each against its
 * declared kind: {x} is a UUID, {x:date} a date YYYY-MM-DD, {x:text} a name. Pure functions
 * over the request: unit-tested and fuzzed on their own (tests/unit/route.c,
 * tests/fuzz/route.c).
 */
#ifndef COURTS_ROUTE_H
#define COURTS_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "req.h"

enum auth_level {
	AUTH_NONE,	/* no token needed; a token sent anyway is ignored */
	AUTH_PLAYER,	/* any valid token */
	AUTH_OWNER,	/* valid token with the OWNER role; in a program with hooks that admit
			   others (http.h), also a token of a user they admit (a venue's staff) */
	AUTH_ADMIN	/* valid token with the ADMIN role */
};

/* Route flags, or'ed together. */
#define BODY_NONE		0x0u	/* any body is ignored */
#define BODY_JSON		0x1u	/* a JSON object is required */
#define ROUTE_IDEMPOTENT	0x2u	/* a write that honours Idempotency-Key (idem.h) */
#define ROUTE_REPLICA		0x4u	/* a read whose answer may lag: DATABASE_READ_URL (db.h) */
#define BODY_OPTIONAL		0x8u	/* a JSON object, or no body at all (r->body NULL) */
#define BODY_RAW		0x10u	/* a JSON body kept as it was sent (r->raw_body), unparsed:
					   one whose signature the handler checks first */
#define STAFF_MANAGER		0x20u	/* an owner route a MANAGER of the venue may use too */
#define STAFF_DESK		0x40u	/* an owner route DESK staff (and a MANAGER) may use too */

#define ROUTE_TEXT_MAX		255	/* bytes of a {name:text} path parameter */

typedef void (*handler_fn)(struct req *);

struct route {
	const char	*method;	/* "GET", "POST", ... */
	const char	*pattern;	/* "/api/owner/venues/{venueId}"; {x} is a UUID, {x:date} a date,
					   {x:secret} any text (a wrong one is 404), {x:text} a name of
					   at most ROUTE_TEXT_MAX bytes; a literal may follow:
					   "{x:secret}.ics" */
	handler_fn	 handler;
	enum auth_level	 auth;
	unsigned	 flags;		/* BODY_NONE, BODY_JSON or BODY_OPTIONAL, | ROUTE_IDEMPOTENT,
					   ROUTE_REPLICA, STAFF_MANAGER or STAFF_DESK */
};

/* true when path (decoded) has the shape of pattern; the {name} segments are captured
 * into r's path parameters (unchecked), in r's memory. */
bool route_match(struct req *r, const char *pattern, const char *path);

/* The route of the n in routes for r->method and r->path, with its parameters captured
 * (unchecked); NULL after answering 404, or 405 with Allow naming the methods of the path. */
const struct route *route_find(struct req *r, const struct route *routes, size_t n);

/* Checks the captured parameters of r->route against their declared kinds; records a
 * field error (problem.h) for each that does not fit. */
void route_params_check(struct req *r);

/* true when a Content-Type header value names JSON: application/json or
 * application/<something>+json, any case, parameters after ';' ignored. */
bool route_json_media_type(const char *content_type);

#endif
