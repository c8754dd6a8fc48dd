/* http: the request driver shared by every program in cgi-bin/.
 *
 * A program is a route table and a main() that calls http_main(). The driver reads the CGI
 * environment (plain CGI, one request) or accepts requests in a loop (FastCGI), then for
 * each request: caps the body (413), routes (404 / 405 + Allow), validates path parameters
 * (400), checks the token and role (401 / 403), parses the JSON body (415 / 400), runs the
 * handler, and writes exactly one response. All memory of a request lives in its arena and
 * is released when the response is written; handlers never call exit().
 */
#ifndef COURTS_HTTP_H
#define COURTS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "arena.h"

#define HTTP_BODY_MAX	65536	/* bytes; larger bodies get 413 */
#define HTTP_MAX_PARAMS	4	/* path parameters per route */

enum auth_level {
	AUTH_NONE,	/* no token needed; a token sent anyway is ignored */
	AUTH_PLAYER,	/* any valid token */
	AUTH_OWNER,	/* valid token with the OWNER role */
	AUTH_ADMIN	/* valid token with the ADMIN role */
};

enum body_kind {
	BODY_NONE,	/* any body is ignored */
	BODY_JSON	/* a JSON object is required */
};

struct req;
typedef void (*handler_fn)(struct req *);

struct route {
	const char	*method;	/* "GET", "POST", ... */
	const char	*pattern;	/* "/api/owner/venues/{venueId}"; {x} is a UUID, {x:date} a date */
	handler_fn	 handler;
	enum auth_level	 auth;
	enum body_kind	 body;
};

struct req {
	struct arena	*a;		/* owns every allocation of this request */
	const char	*id;		/* request id, in logs and 5xx bodies */
	const char	*method;
	const char	*path;		/* decoded path, base path removed */
	const struct route *route;
	const char	*param_names[HTTP_MAX_PARAMS];
	const char	*param_values[HTTP_MAX_PARAMS];
	int		 nparams;
	cJSON		*body;		/* parsed object for BODY_JSON routes, else NULL */
	const char	*user_id;	/* local users.id of the caller, NULL on AUTH_NONE routes */
	unsigned	 roles;		/* ROLE_* bits of the caller */
	cJSON		*field_errors;	/* collected validation errors, see problem.h */
	bool		 answered;	/* a response has been produced */
	int		 status;
	char		*resp_body;
	size_t		 resp_len;
	const char	*resp_type;	/* Content-Type of the response */
	const char	*extra_headers;	/* "Name: value\r\n" lines, or NULL */
	void		*private_;	/* driver state: query pairs, transport, results to clear */
};

/* Runs the program: handles one CGI request; or, started by mod_fcgid, FastCGI requests until
 * the server stops it; or, with FCGI_LISTEN=/path/to.sock in the environment, listens there
 * with FCGI_WORKERS (default 4) supervised worker processes for mod_proxy_fcgi (pool.h).
 * program names the executable in log lines. Returns the process exit status. */
int http_main(const char *program, const struct route *routes, size_t nroutes);

/* Value of path parameter name ({name} in the pattern), already validated; never NULL for a
 * name of the matched pattern. */
const char *req_param(const struct req *r, const char *name);

/* Decoded value of query parameter name, or NULL when absent. */
const char *req_query(const struct req *r, const char *name);

/* Response writers. Each answers the request once; later calls are ignored. */
void http_send_json(struct req *r, int status, const char *json);	/* copies json */
void http_send_cjson(struct req *r, int status, const cJSON *doc);
void http_send_no_content(struct req *r);				/* 204 */

/* Reason phrase of an HTTP status ("Not Found"); also the problem title. */
const char *http_reason(int status);

/* Adds a response header line; name and value are copied. */
void http_add_header(struct req *r, const char *name, const char *value);

#endif
