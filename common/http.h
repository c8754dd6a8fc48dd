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

#include <stdbool.h>
#include <stddef.h>

#include "req.h"
#include "route.h"

#define HTTP_BODY_MAX	65536	/* bytes; larger bodies get 413 */

/* Runs the program: handles one CGI request; or, started by mod_fcgid, FastCGI requests until
 * the server stops it; or, with FCGI_LISTEN=/path/to.sock in the environment, listens there
 * with FCGI_WORKERS (default 4) supervised worker processes for mod_proxy_fcgi (pool.h).
 * program names the executable in log lines. Returns the process exit status. */
int http_main(const char *program, const struct route *routes, size_t nroutes);

/* What a program adds around its handlers (the owner program: who may act for a venue):
 *  - admits: on an AUTH_OWNER route, for a caller whose token lacks the OWNER role, once the
 *    caller's user is known: true to go on, false for 403;
 *  - before: once the caller, the body and the Idempotency-Key are settled; 0 to run the
 *    handler, -1 after answering (a transaction it opened with tx_owned is the driver's);
 *  - after: once the handler answered, in the driver's transaction when there is one (a
 *    success it cannot keep is replaced by its error, and nothing is committed).
 * Any of them may be NULL. */
struct http_hooks {
	bool	(*admits)(struct req *);
	int	(*before)(struct req *);
	void	(*after)(struct req *);
};

/* http_main with hooks. */
int http_main_hooked(const char *program, const struct route *routes, size_t nroutes,
    const struct http_hooks *hooks);

/* The absolute URL of path (which starts with /api/) as clients reach this service:
 * PUBLIC_URL or the request's scheme and Host, BASE_PATH, path. */
const char *http_url(struct req *r, const char *path);

/* The value of request variable name ("HTTP_STRIPE_SIGNATURE" for a Stripe-Signature header),
 * or NULL. */
const char *http_variable(const struct req *r, const char *name);

/* Serves one plain CGI request (environment, stdin, stdout) with its memory in a, reset
 * first: the pipeline above as http_main() runs it for a CGI, without the last-resort
 * signal handlers, so the fuzzer (tests/fuzz/request.c) can drive it request by request. */
void http_serve_cgi(struct arena *a, const struct route *routes, size_t nroutes);

#endif
