/* req: the request and its response, the bottom layer of the library.
 *
 * A struct req is what a handler sees of one HTTP request: method, path, path and query
 * parameters, the parsed body, the caller, and the response being built. The driver
 * (http.h) fills it and writes the response out; everything else (problem, input, auth, sql,
 * log) reads it and answers through the setters below, and never includes the driver.
 * All memory of a request lives in its arena.
 */
#ifndef COURTS_REQ_H
#define COURTS_REQ_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "arena.h"

#define REQ_MAX_PARAMS	4	/* path parameters per route */
#define REQ_MAX_QUERY	32	/* query parameters kept; more are ignored */

struct db;
struct route;

struct req {
	struct arena	*a;		/* owns every allocation of this request */
	const char	*id;		/* request id, in logs and 5xx bodies */
	const char	*method;
	const char	*path;		/* decoded path, base path removed */
	const struct route *route;	/* the matched route (http.h), NULL before routing */
	const char	*param_names[REQ_MAX_PARAMS];
	const char	*param_values[REQ_MAX_PARAMS];
	int		 nparams;
	const char	*query_names[REQ_MAX_QUERY];
	const char	*query_values[REQ_MAX_QUERY];
	int		 nquery;
	cJSON		*body;		/* parsed object for BODY_JSON routes (and
					   BODY_OPTIONAL ones sent one), else NULL */
	const char	*raw_body;	/* the body as sent, for BODY_RAW routes, else NULL */
	size_t		 raw_len;
	const char	*user_id;	/* local users.id of the caller, NULL on AUTH_NONE routes */
	unsigned	 roles;		/* ROLE_* bits of the caller (auth.h) */
	struct db	*db;		/* this request's database session (db.h) */
	const char	*idem_key;	/* Idempotency-Key claimed for this request, or NULL */
	const char	*if_none_match;	/* If-None-Match header, or NULL */
	char		**envp;		/* the request's CGI variables, "NAME=value", read on demand */
	bool		 tx_owned;	/* the driver opened the transaction: handlers join it */
	bool		 one_shot;	/* the process serves this request alone (plain CGI):
					   nothing it keeps in memory is asked for again */
	cJSON		*field_errors;	/* collected validation errors, see problem.h */
	bool		 answered;	/* a response has been produced */
	int		 status;
	char		*resp_body;
	size_t		 resp_len;
	const char	*resp_type;	/* Content-Type of the response */
	char		*resp_headers;	/* extra "Name: value\r\n" lines, or NULL */
	const char	*cache_control;	/* Cache-Control of the response; NULL: no-store */
	const char	*venue_id;	/* owner routes: the venue the target belongs to, */
	const char	*venue_owner;	/* its owner, for whom the caller acts, */
	const char	*venue_role;	/* and the caller's role there (OWNER, MANAGER, DESK);
					   NULL on routes without a venue */
};

/* Value of path parameter name ({name} in the route's pattern), already validated; never
 * NULL for a name of the matched pattern. */
const char *req_param(const struct req *r, const char *name);

/* Decoded value of query parameter name (the first one, when repeated), or NULL when
 * absent. */
const char *req_query(const struct req *r, const char *name);

/* Response setters. Each answers the request once; later calls are ignored. */
void req_send_json(struct req *r, int status, const char *json);	/* copies json */
void req_send_cjson(struct req *r, int status, const cJSON *doc);
void req_send_no_content(struct req *r);				/* 204 */
void req_send_typed(struct req *r, int status, const char *type, const char *body, size_t len);
void req_send_not_modified(struct req *r);				/* 304 */

/* Adds a response header line; name and value are copied. */
void req_add_header(struct req *r, const char *name, const char *value);

/* Reason phrase of an HTTP status ("Not Found"); also the problem title. */
const char *req_reason(int status);

#endif
