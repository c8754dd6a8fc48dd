/* http: CGI / FastCGI transport, routing, the per-request pipeline and response writing. */
#include "http.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>
#include <openssl/crypto.h>

#include "auth.h"
#include "budget.h"
#include "config.h"
#include "db.h"
#include "idem.h"
#include "json.h"
#include "log.h"
#include "pool.h"
#include "problem.h"
#include "url.h"

/* Transport state of the request being served. */
struct priv {
	FCGX_Request	*fr;		/* NULL when running as plain CGI */
	size_t		 body_consumed;	/* request body bytes read so far */
	const char	*body;		/* the raw body of BODY_JSON (BODY_OPTIONAL) routes */
	size_t		 body_len;
};

static volatile sig_atomic_t cgi_answer_started;

/* The program's hooks around its handlers (http_main_hooked), or NULL. */
static const struct http_hooks *serve_hooks;

static const char *
env(const struct priv *p, const char *name)
{
	return p->fr != NULL ? FCGX_GetParam(name, p->fr->envp) : getenv(name);
}

static size_t
body_read(struct priv *p, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		int k = p->fr != NULL ? FCGX_GetStr(buf + got, (int)(n - got), p->fr->in)
		    : (int)fread(buf + got, 1, n - got, stdin);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	p->body_consumed += got;
	return got;
}

/* Reads and drops what is left of the request body: a CGI that exits with unread input
 * makes mod_cgid reset the connection and the client never sees the answer. Bodies far
 * beyond the cap are not worth reading; those clients get a reset. */
static void
body_drain(struct priv *p)
{
	const char *cl = env(p, "CONTENT_LENGTH");
	long len = cl != NULL ? strtol(cl, NULL, 10) : 0;
	char buf[8192];

	if (len <= 0 || len > 16L * HTTP_BODY_MAX)
		return;
	while (p->body_consumed < (size_t)len) {
		size_t want = (size_t)len - p->body_consumed;

		if (body_read(p, buf, want < sizeof buf ? want : sizeof buf) == 0)
			break;
	}
}

static void
out_write(const struct priv *p, const char *buf, size_t n)
{
	if (p->fr != NULL)
		FCGX_PutStr(buf, (int)n, p->fr->out);
	else
		fwrite(buf, 1, n, stdout);
}

static void
response_write(struct req *r, const struct priv *p)
{
	const char *extra = r->resp_headers != NULL ? r->resp_headers : "";
	/* only a handler that sets a validator lets anyone keep an answer */
	const char *cc = r->cache_control != NULL ? r->cache_control : "no-store";
	char *head;

	if (r->resp_body != NULL)
		head = arena_printf(r->a, "Status: %d %s\r\nContent-Type: %s\r\n"
		    "Content-Length: %zu\r\nCache-Control: %s\r\nX-Request-Id: %s\r\n%s\r\n",
		    r->status, req_reason(r->status), r->resp_type, r->resp_len, cc, r->id, extra);
	else
		head = arena_printf(r->a, "Status: %d %s\r\nCache-Control: %s\r\n"
		    "X-Request-Id: %s\r\n%s\r\n", r->status, req_reason(r->status), cc, r->id,
		    extra);
	cgi_answer_started = 1;
	out_write(p, head, strlen(head));
	if (r->resp_body != NULL)
		out_write(p, r->resp_body, r->resp_len);
	if (p->fr == NULL)
		fflush(stdout);
}

static const char *
request_id(struct req *r, const struct priv *p)
{
	const char *u = env(p, "UNIQUE_ID");
	unsigned char b[8];
	size_t i;
	char *s;

	if (u != NULL && *u != '\0' && strlen(u) < 64)
		return arena_strdup(r->a, u);
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		memset(b, 0, sizeof b);
	s = arena_alloc(r->a, 2 * sizeof b + 1);
	for (i = 0; i < sizeof b; i++)
		sprintf(s + 2 * i, "%02x", b[i]);
	return s;
}

/* 400 MALFORMED_JSON for a body that stops being JSON at offset at of text. */
static void
malformed(struct req *r, const char *text, size_t at, const char *why)
{
	int line, column;

	json_text_position(text, at, &line, &column);
	problem_send(r, 400, "MALFORMED_JSON", why != NULL ?
	    arena_printf(r->a, "The body is not well-formed JSON: %s at line %d, column %d.",
		why, line, column) :
	    arena_printf(r->a, "The body is not well-formed JSON at line %d, column %d.",
		line, column));
}

static void
body_load(struct req *r, struct priv *p)
{
	const char *cl = env(p, "CONTENT_LENGTH");
	long len = cl != NULL && *cl != '\0' ? strtol(cl, NULL, 10) : 0;
	char *buf;
	size_t got;
	const char *end = NULL;
	struct json_text_faults faults;

	if (!route_json_media_type(env(p, "CONTENT_TYPE"))) {
		problem_send(r, 415, "UNSUPPORTED_MEDIA_TYPE",
		    "The body must be JSON with Content-Type: application/json.");
		return;
	}
	if (len <= 0) {
		problem_send(r, 400, "BODY_REQUIRED", "A JSON object body is required.");
		return;
	}
	buf = arena_alloc(r->a, (size_t)len + 1);
	got = body_read(p, buf, (size_t)len);
	buf[got] = '\0';
	p->body = buf;
	p->body_len = got;
	/* a signed body is checked as it was sent, before anything reads it */
	if (r->route->flags & BODY_RAW) {
		r->raw_body = buf;
		r->raw_len = got;
		return;
	}
	/* what cJSON would take but is no JSON text, or cannot be stored as it was sent */
	json_text_check(r->a, buf, got, &faults);
	if (faults.bad_at < got) {
		malformed(r, buf, faults.bad_at, faults.bad_why);
		return;
	}
	/* cJSON counts the terminating NUL in the length when it must end the text (the check
	 * above refused one inside it) */
	if ((r->body = cJSON_ParseWithLengthOpts(buf, got + 1, &end, true)) == NULL) {
		malformed(r, buf, end != NULL && end >= buf && end <= buf + got ?
		    (size_t)(end - buf) : got, NULL);
		return;
	}
	if (!cJSON_IsObject(r->body)) {
		problem_send(r, 400, "MALFORMED_JSON", "The body must be a JSON object.");
		return;
	}
	if (faults.nul_field != NULL) {
		problem_field(r, *faults.nul_field != '\0' ? faults.nul_field : "body",
		    faults.nul_in_name ? "a member's name must not contain the character U+0000" :
		    "must not contain the character U+0000");
		problem_fields_or_send(r);
	}
}

/* Fills method and path from the environment; false after answering. */
static bool
request_line(struct req *r, const struct priv *p)
{
	const char *uri = env(p, "REQUEST_URI"), *base = config_get()->base_path;
	const char *m = env(p, "REQUEST_METHOD");
	char *path;

	r->method = m != NULL ? m : "GET";
	if (uri == NULL)	/* not Apache: fall back to the CGI split */
		uri = arena_printf(r->a, "%s%s", env(p, "SCRIPT_NAME") != NULL ?
		    env(p, "SCRIPT_NAME") : "", env(p, "PATH_INFO") != NULL ? env(p, "PATH_INFO") : "");
	if ((path = url_path(r->a, uri, base)) == NULL) {
		r->path = "";
		problem_send(r, 404, "NOT_FOUND", "No such endpoint.");
		return false;
	}
	r->path = path;
	return true;
}

/* Whether a Host header can stand in a URL an answer hands out: a name or address and port
 * of visible ASCII (RFC 3986: no octet that is not), nothing that would end the authority. */
static bool
host_usable(const char *host)
{
	const unsigned char *c;

	if (host == NULL || *host == '\0')
		return false;
	for (c = (const unsigned char *)host; *c != '\0'; c++)
		if (*c <= 0x20 || *c >= 0x7f || strchr("/\\?#@\"", *c) != NULL)
			return false;
	return true;
}

/* "scheme://host" for the absolute URLs an answer hands out: PUBLIC_URL when set (behind a
 * proxy that ends TLS), else as the client named this server (Host header; the server's
 * name and port without one). Read only by the handlers that hand out such URLs. */
static const char *
request_origin(struct req *r)
{
	const char *https = FCGX_GetParam("HTTPS", r->envp);
	const char *scheme = FCGX_GetParam("REQUEST_SCHEME", r->envp);
	const char *host = FCGX_GetParam("HTTP_HOST", r->envp);
	const char *name = FCGX_GetParam("SERVER_NAME", r->envp);
	const char *port = FCGX_GetParam("SERVER_PORT", r->envp);

	if (*config_get()->public_url != '\0')
		return config_get()->public_url;
	if (https != NULL && strcasecmp(https, "on") == 0)
		scheme = "https";
	else if (scheme == NULL || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		scheme = "http";
	if (host_usable(host))
		return arena_printf(r->a, "%s://%s", scheme, host);
	return arena_printf(r->a, "%s://%s%s%s", scheme, name != NULL ? name : "localhost",
	    port != NULL ? ":" : "", port != NULL ? port : "");
}

const char *
http_variable(const struct req *r, const char *name)
{
	return FCGX_GetParam(name, r->envp);
}

const char *
http_url(struct req *r, const char *path)
{
	return arena_printf(r->a, "%s%s%s", request_origin(r), config_get()->base_path, path);
}

/* A write sent with an Idempotency-Key runs in a transaction of the driver that holds the
 * key (idem.h). 0 to run the handler, -1 after answering (a replay, 400, 422). */
static int
idempotency_claim(struct req *r, const struct priv *p)
{
	const char *key = env(p, "HTTP_IDEMPOTENCY_KEY"), *qs = env(p, "QUERY_STRING");

	if (key == NULL)
		return 0;
	if (!idem_key_valid(key)) {
		problem_field(r, "Idempotency-Key", "must be 1 to 255 visible ASCII characters");
		problem_fields_or_send(r);
		return -1;
	}
	return idem_claim_or_answer(r, key, idem_request_hash(r, qs != NULL ? qs : "",
	    p->body != NULL ? p->body : "", p->body_len));
}

static void
request_run(struct req *r, struct priv *p, const struct route *routes, size_t nroutes)
{
	const char *cl = env(p, "CONTENT_LENGTH"), *authz;
	const struct route *rt;
	struct auth_token token;
	unsigned need;

	url_query_parse(r, env(p, "QUERY_STRING"));
	r->if_none_match = env(p, "HTTP_IF_NONE_MATCH");
	if (!request_line(r, p))
		return;
	if (cl != NULL && strtol(cl, NULL, 10) > HTTP_BODY_MAX) {
		problem_send(r, 413, "BODY_TOO_LARGE", "The body must be at most 65536 bytes.");
		return;
	}
	if ((rt = route_find(r, routes, nroutes)) == NULL)
		return;
	r->route = rt;
	route_params_check(r);
	if (problem_fields_or_send(r) != 0)
		return;
	if (rt->auth != AUTH_NONE) {
		authz = env(p, "HTTP_AUTHORIZATION");
		if (authz == NULL)	/* .htaccess rewrite trick on hosts without CGIPassAuth */
			authz = env(p, "REDIRECT_HTTP_AUTHORIZATION");
		need = rt->auth == AUTH_OWNER ? ROLE_OWNER : rt->auth == AUTH_ADMIN ? ROLE_ADMIN : 0;
		/* the program may admit others, once it knows who they are (below) */
		if (rt->auth == AUTH_OWNER && serve_hooks != NULL && serve_hooks->admits != NULL)
			need = 0;
		if (auth_token_or_problem(r, authz, need, &token) != 0)
			return;
	}
	/* the whole body before the first statement: in plain CGI a client that trickles its
	 * body holds this process until Apache's deadline, and must not hold a database
	 * session too (the FastCGI modes hand a program a request with its body read) */
	if ((rt->flags & (BODY_JSON | BODY_RAW)) || ((rt->flags & BODY_OPTIONAL) && cl != NULL &&
	    strtol(cl, NULL, 10) > 0)) {
		body_load(r, p);
		if (r->answered)
			return;
	}
	if (rt->auth != AUTH_NONE &&
	    (auth_user_or_problem(r, &token) != 0 || budget_spend_or_answer(r) != 0))
		return;
	if (rt->auth == AUTH_OWNER && !(r->roles & ROLE_OWNER) && serve_hooks != NULL &&
	    serve_hooks->admits != NULL && !serve_hooks->admits(r)) {
		if (!r->answered)
			problem_send(r, 403, "FORBIDDEN", "The OWNER role is required.");
		return;
	}
	if ((rt->flags & ROUTE_IDEMPOTENT) && idempotency_claim(r, p) != 0)
		return;
	/* after the caller's user and budget, which are the primary's */
	if (rt->flags & ROUTE_REPLICA)
		db_read_replica(r->db);
	if (serve_hooks == NULL || serve_hooks->before == NULL || serve_hooks->before(r) == 0) {
		rt->handler(r);
		if (!r->answered) {
			log_msg(r, "error", "handler for %s %s gave no answer", r->method,
			    rt->pattern);
			problem_internal(r);
		}
		if (serve_hooks != NULL && serve_hooks->after != NULL)
			serve_hooks->after(r);
	}
	idem_finish(r);
}

static void
request_handle(struct arena *a, FCGX_Request *fr, const struct route *routes, size_t n)
{
	struct priv p;
	struct req r;
	struct db db;

	memset(&p, 0, sizeof p);
	memset(&r, 0, sizeof r);
	arena_reset(a);
	json_use_arena(a);
	db_init(&db, a);
	p.fr = fr;
	r.envp = fr != NULL ? fr->envp : environ;
	r.one_shot = fr == NULL;
	r.a = a;
	r.db = &db;
	r.id = request_id(&r, &p);
	request_run(&r, &p, routes, n);
	if (fr == NULL)
		body_drain(&p);
	response_write(&r, &p);
	db_end(&db);
}

void
http_serve_cgi(struct arena *a, const struct route *routes, size_t nroutes)
{
	request_handle(a, NULL, routes, nroutes);
}

/* Last resort in plain CGI: a crash still leaves the client a valid 500. */
static void
fatal_signal(int sig)
{
	static const char resp[] = "Status: 500 Internal Server Error\r\n"
	    "Content-Type: application/problem+json\r\n\r\n"
	    "{\"type\":\"https://courts.example/problems/internal-error\","
	    "\"title\":\"Internal Server Error\",\"status\":500,"
	    "\"detail\":\"The server could not complete the request.\","
	    "\"code\":\"INTERNAL_ERROR\",\"errors\":[]}";

	if (!cgi_answer_started && write(STDOUT_FILENO, resp, sizeof resp - 1) < 0)
		_exit(128 + sig);
	_exit(128 + sig);
}

/* What a worker of the pool (or a FastCGI process of mod_fcgid, on fd 0) serves. */
static const struct route *serve_routes;
static size_t serve_nroutes;
static struct arena *serve_arena;
static volatile sig_atomic_t serve_stopping;

#define STOP_DRAIN_MS	1000	/* after a stop, queued connections are served this long at most */
#define STOP_GRACE_MS	200	/* and a process of mod_fcgid waits this long for one more */

static void
on_serve_stop(int sig)
{
	(void)sig;
	serve_stopping = 1;
}

/* Whether this process is a worker of a pool of its own (FCGI_LISTEN), not mod_fcgid's. */
static int serve_pooled;

/*
 * A process of mod_fcgid that is told to stop takes its socket's name away before it looks
 * for connections a last time. mod_fcgid may still pick it for a request, and a connection
 * made after that last look would be reset when the process ends: mod_fcgid answered such a
 * request 500 about once in two rounds of five graceful restarts (tests/08-restarts.bats).
 * With the name gone that connect fails at once, and mod_fcgid tries another process; the
 * connections already queued are served first. A connect that found the name just before it
 * went is queued a moment later (the kernel looks the name up, then queues the connection):
 * on a busy machine that moment came after the last look often enough to cost a 500 in one
 * run of the suite in two, so the process looks for STOP_GRACE_MS more before it ends. A
 * pool's workers share their socket with each other and their supervisor, which removes it
 * once all have ended.
 */
/* The path of the Unix socket listen_fd listens on, into path (of PATH_SOCKET bytes); false
 * for any other socket, an abstract one included. */
#define PATH_SOCKET	sizeof(((struct sockaddr_un *)NULL)->sun_path)

static bool
socket_path(int listen_fd, char *path)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof sa;
	size_t n;

	memset(&sa, 0, sizeof sa);
	if (getsockname(listen_fd, (struct sockaddr *)&sa, &len) < 0 ||
	    sa.sun_family != AF_UNIX || len <= offsetof(struct sockaddr_un, sun_path))
		return false;
	n = len - offsetof(struct sockaddr_un, sun_path);
	if (n >= sizeof sa.sun_path || sa.sun_path[0] == '\0')
		return false;
	memcpy(path, sa.sun_path, n);
	path[n] = '\0';
	return true;
}

static void
serve_unlisten(int listen_fd)
{
	static int done;
	char path[PATH_SOCKET];

	if (serve_pooled || done)
		return;
	done = 1;
	if (socket_path(listen_fd, path))
		unlink(path);
}

/*
 * Waits for a connection on listen_fd (registered in `ep`): 1 when one is there to accept, 0
 * once a stop came and none is. The stop signals are blocked everywhere else (`waiting` is
 * the mask without them), so they only ever land here, between requests.
 */
static int
serve_wait(int ep, int listen_fd, const sigset_t *waiting)
{
	struct epoll_event ev;
	int n;

	for (;;) {
		if (serve_stopping)
			serve_unlisten(listen_fd);
		n = epoll_pwait(ep, &ev, 1, !serve_stopping ? -1 : serve_pooled ? 0 : STOP_GRACE_MS,
		    waiting);
		if (n > 0)
			return 1;
		if (n == 0 || errno != EINTR)
			return 0;
	}
}

/*
 * The workers of a pool share one listening socket. Each waits on it through an epoll set of
 * its own with EPOLLEXCLUSIVE, so a connection wakes one idle worker, not all of them: with
 * select every idle worker woke, and all but one found the connection taken (1.2 wake-ups in
 * vain a request from four clients on four workers). The kernel wakes the first idle worker
 * in its queue, so a lightly loaded pool serves from one worker, whose kept answers and
 * prepared statements stay warm. One may still wake in vain now and then; it waits again.
 */
static int
serve_epoll(int listen_fd)
{
	struct epoll_event ev;
	int ep;

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -1;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		close(ep);
		return -1;
	}
	return ep;
}

/*
 * How the connection of a request that is answered ends. libfcgi's own close shuts the
 * sending side down and then reads until the web server closes its end (for up to 2 s), so
 * that data still arriving cannot make the kernel reset the connection under the answer. The
 * worker thus waits for Apache to read the answer before it takes the next request: a sleep
 * and a wake-up, and three system calls, a request. Once the request has been read to its
 * end (the web server ends every request's input with an empty record, a request without a
 * body too), nothing more can arrive: the connection is simply closed then ("detached" makes
 * libfcgi skip the graceful part). A request whose body was left unread, an early refusal,
 * still ends the graceful way.
 *
 * Only in a pool of our own. mod_fcgid hands a process its next request once it has read the
 * answer and closed; a process that is stopping and closes first may check for queued
 * connections, find none and end before that, and the request mod_fcgid then sends it is
 * reset (a 500 in tests/08-restarts.bats). The graceful close keeps that in step.
 */
static void
serve_close_early(FCGX_Request *fr)
{
	fr->detached = serve_pooled && fr->in != NULL && FCGX_GetError(fr->in) == 0 &&
	    (FCGX_HasSeenEOF(fr->in) == EOF || FCGX_GetChar(fr->in) == EOF);
}

/*
 * Warming mod_fcgid up. mod_fcgid starts a program's processes as requests find none idle,
 * but a request that finds them all busy sleeps a whole second first, and then takes the
 * first one freed rather than ask for another (fcgid_bridge.c): past the first instant of a
 * burst the number of processes never grows to meet the requests in flight, and every
 * request beyond them waits a second (bench/README.md, "mod_fcgid"). The processes grow only
 * while the busy ones stay busy through that second. `scripts/stack.sh warm` sends each
 * program as many requests at once as it is to have processes, each carrying the token of
 * COURTS_FCGID_WARM_TOKEN (written by the stack, FcgidInitialEnv) in X-Courts-Warm-Up: such a
 * request opens the process's database session, holds the process WARM_HOLD_MS and is
 * answered 204, with nothing read or written anywhere else, so the requests that slept find
 * none free and processes are started for them. FcgidMinProcessesPerClass then keeps them.
 * Processes of mod_fcgid only; without the token set, or with another, the header is a
 * header like any other.
 */
#define WARM_HOLD_MS	3000
#define WARM_TOKEN_MIN	16

static bool
serve_warm(FCGX_Request *fr)
{
	static const char *token;
	static bool looked;
	struct timespec hold;
	struct db db;
	const char *h;

	if (serve_pooled)
		return false;
	if (!looked) {
		token = getenv("COURTS_FCGID_WARM_TOKEN");
		if (token != NULL && strlen(token) < WARM_TOKEN_MIN)
			token = NULL;
		looked = true;
	}
	if (token == NULL || (h = FCGX_GetParam("HTTP_X_COURTS_WARM_UP", fr->envp)) == NULL)
		return false;
	if (strlen(token) != strlen(h) || CRYPTO_memcmp(token, h, strlen(token)) != 0)
		return false;
	/* the database session opened meanwhile: the first request of the burst would pay it */
	arena_reset(serve_arena);
	db_init(&db, serve_arena);
	(void)db_ping(&db);
	db_end(&db);
	hold.tv_sec = WARM_HOLD_MS / 1000;
	hold.tv_nsec = WARM_HOLD_MS % 1000 * 1000000L;
	while (nanosleep(&hold, &hold) < 0 && errno == EINTR)
		;
	FCGX_PutS("Status: 204 No Content\r\n\r\n", fr->out);
	return true;
}

/*
 * Turns under mod_fcgid. A program keeps 16 processes there so that no request finds them
 * all busy (serve_warm), but 16 requests working at once on two cores take turns on the
 * cores instead, each with its own database session: the slots of another court each, at
 * 16 connections, had a p99 of 32-49 ms (tails to 130 ms) where a pool's four workers, with
 * the other requests waiting in their socket's backlog, had 10-13 ms. So at most
 * FCGID_CONCURRENCY requests (default 4, as a pool's FCGI_WORKERS) of one program and one
 * Apache work at once; the others wait here for a turn, as they would in that backlog: in
 * one queue, each taking the first turn given back.
 *
 * A turn is a lock (flock) on one of as many files beside the program's socket, in
 * mod_fcgid's own directory: the kernel gives it back when a process ends, however it ends.
 * The queue is one more such lock, the gate, which every request takes before it looks for
 * a free turn and gives back once it has one: the kernel hands a contended flock to its
 * waiters one at a time in the order they came, so the request at the gate is the one that
 * has waited longest, and only it is awake. When it finds no turn free it waits on a FIFO
 * beside them, into which each request that gives its turn back writes a byte; it empties the
 * FIFO before it looks, so no byte written after its look is missed, and it looks again
 * every TURN_LOOK_MS anyway, for the turn of a process that ended holding it (given back by
 * the kernel, with no byte). Before, a request that found none free waited on the turn of
 * its own process (its pid modulo the count), while another turn could stand free: the
 * slots of another court each had p99s of 34-62 ms that way, 27-30 ms with the one queue
 * (bench/README.md, "mod_fcgid").
 * 0 turns the wait off; a directory the process cannot write leaves it off too.
 */
#define TURNS_DEFAULT	4
#define TURNS_MAX	64
#define TURN_LOOK_MS	20

static int turn_fds[TURNS_MAX];
static int turn_count;		/* 0: no turns */
static int turn_held = -1;
static int turn_gate = -1;	/* the queue's lock */
static int turn_fifo = -1;	/* a byte for each turn given back */

static void
turns_close(int n)
{
	while (n-- > 0)
		close(turn_fds[n]);
	if (turn_gate >= 0)
		close(turn_gate);
	if (turn_fifo >= 0)
		close(turn_fifo);
	turn_gate = turn_fifo = -1;
}

static void
turns_open(int listen_fd)
{
	char dir[PATH_SOCKET], path[PATH_SOCKET + 64], *slash;
	int want = config_env_int("FCGID_CONCURRENCY", TURNS_DEFAULT, 0, TURNS_MAX), i = 0;
	const char *why;
	struct stat st;

	if (want == 0 || !socket_path(listen_fd, dir) || (slash = strrchr(dir, '/')) == NULL)
		return;
	*slash = '\0';
	snprintf(path, sizeof path, "%s/courts-turn.%s.queue", dir, log_program());
	if ((turn_gate = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		goto fail;
	/* O_RDWR: the FIFO never blocks its opener and always has a reader, its writers' own */
	snprintf(path, sizeof path, "%s/courts-turn.%s.given", dir, log_program());
	if ((mkfifo(path, 0600) < 0 && errno != EEXIST) ||
	    (turn_fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0 || fstat(turn_fifo, &st) < 0)
		goto fail;
	if (!S_ISFIFO(st.st_mode)) {
		errno = 0;
		goto fail;
	}
	for (; i < want; i++) {
		snprintf(path, sizeof path, "%s/courts-turn.%s.%d", dir, log_program(), i);
		if ((turn_fds[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
			goto fail;
	}
	turn_count = want;
	return;
fail:
	why = errno != 0 ? strerror(errno) : "not a FIFO";
	turns_close(i);
	log_msg(NULL, "error", "cannot open %s (%s): requests of this process do not wait for "
	    "a turn", path, why);
}

/* The first free turn into turn_held, if any. */
static bool
turn_free(void)
{
	int i;

	for (i = 0; i < turn_count; i++)
		if (flock(turn_fds[i], LOCK_EX | LOCK_NB) == 0) {
			turn_held = i;
			return true;
		}
	return false;
}

static void
turn_take(void)
{
	struct pollfd pfd;
	char drain[256];

	if (turn_count == 0)
		return;
	while (flock(turn_gate, LOCK_EX) < 0)
		if (errno != EINTR)
			return;		/* served without a turn rather than not at all */
	pfd.fd = turn_fifo;
	pfd.events = POLLIN;
	for (;;) {
		while (read(turn_fifo, drain, sizeof drain) > 0)
			;
		if (turn_free())
			break;
		if (poll(&pfd, 1, TURN_LOOK_MS) < 0 && errno != EINTR)
			break;
	}
	flock(turn_gate, LOCK_UN);
}

static void
turn_give(void)
{
	if (turn_held < 0)
		return;
	flock(turn_fds[turn_held], LOCK_UN);
	turn_held = -1;
	/* the byte wakes the request at the gate; a full FIFO (EAGAIN) already does */
	if (write(turn_fifo, "", 1) < 0 && errno != EAGAIN)
		log_msg(NULL, "error", "cannot wake the request waiting for a turn: %s",
		    strerror(errno));
}

/*
 * The accept loop. SIGTERM (and SIGUSR1, FastCGI's "finish and exit") stops it between
 * requests: the request in hand is answered in full and the connections already queued are
 * served, for up to STOP_DRAIN_MS, before the process ends. mod_fcgid stops its processes with
 * SIGTERM at a graceful restart and at their idle timeout (SIGKILL follows seconds later), the
 * pool's supervisor stops its workers with SIGTERM. libfcgi's own handlers would set its
 * shutdown flag without SA_RESTART, so a stop that came while a request was read or written
 * cut that request short (the web server answered 500); here no stop interrupts a request.
 */
static int
serve_fastcgi(int listen_fd)
{
	FCGX_Request fr;
	struct sigaction sa;
	sigset_t stops, waiting;
	int64_t stop_by = 0;
	int flags, rc, ep;

	if ((ep = serve_epoll(listen_fd)) < 0) {
		log_msg(NULL, "error", "cannot wait on the listening socket: %s", strerror(errno));
		return 1;
	}
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGUSR1);
	sigprocmask(SIG_BLOCK, &stops, &waiting);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGUSR1);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_serve_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	/* a pool's workers share the socket: the one woken may find the connection taken by
	 * another, and must then wait again rather than block in accept with the stops held */
	if ((flags = fcntl(listen_fd, F_GETFL)) >= 0)
		fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK);
	FCGX_InitRequest(&fr, listen_fd, 0);
	for (;;) {
		if (fr.ipcFd >= 0 ? serve_stopping : !serve_wait(ep, listen_fd, &waiting))
			break;
		if (serve_stopping) {
			if (stop_by == 0)
				stop_by = pool_clock_ms() + STOP_DRAIN_MS;
			else if (pool_clock_ms() > stop_by)
				break;
		}
		if ((rc = FCGX_Accept_r(&fr)) < 0) {
			if (rc == -EAGAIN || rc == -EWOULDBLOCK || rc == -EINTR)
				continue;
			break;
		}
		if (!serve_warm(&fr)) {
			turn_take();
			request_handle(serve_arena, &fr, serve_routes, serve_nroutes);
		}
		serve_close_early(&fr);
		FCGX_Finish_r(&fr);
		turn_give();
	}
	close(ep);
	db_close();
	return 0;
}

/* A long-lived process reads its keys before the first request: they are the last good ones
 * it keeps if their file breaks later, and a pool's parent hands them to every worker it
 * forks, a worker started after the breakage included. */
static void
keys_preload(void)
{
	size_t i;

	for (i = 0; i < serve_nroutes; i++)
		if (serve_routes[i].auth != AUTH_NONE) {
			auth_preload();
			return;
		}
}

int
http_main(const char *program, const struct route *routes, size_t nroutes)
{
	return http_main_hooked(program, routes, nroutes, NULL);
}

int
http_main_hooked(const char *program, const struct route *routes, size_t nroutes,
    const struct http_hooks *hooks)
{
	const char *listen_path = getenv("FCGI_LISTEN"), *workers = getenv("FCGI_WORKERS");
	sigset_t stops, old;
	int rc = 0, fd;

	/*
	 * mod_fcgid's process manager stops every process it has at a graceful restart, one it
	 * has just started too, whose socket may already hold a request: a SIGTERM that came
	 * before serve_fastcgi's handler (the keys still being read) ended the process with that
	 * connection unread, which mod_fcgid answered 500. Held from here, the stop waits for
	 * serve_fastcgi, which serves what is queued and then ends. A CGI program and a pool's
	 * supervisor get the default back (a stop that came meanwhile acts then).
	 */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGUSR1);
	sigprocmask(SIG_BLOCK, &stops, &old);
	log_set_program(program);
	if ((serve_arena = arena_new()) == NULL)
		return 1;
	serve_routes = routes;
	serve_nroutes = nroutes;
	serve_hooks = hooks;
	config_get();
	if (listen_path != NULL && *listen_path != '\0') {
		/* a pool of its own, for mod_proxy_fcgi */
		FCGX_Init();
		if ((fd = FCGX_OpenSocket(listen_path, 256)) < 0) {
			log_msg(NULL, "error", "cannot listen on %s", listen_path);
			rc = 1;
		} else {
			keys_preload();
			serve_pooled = 1;
			sigprocmask(SIG_SETMASK, &old, NULL);
			rc = pool_run(fd, workers != NULL ? atoi(workers) : 4, serve_fastcgi);
			unlink(listen_path);
		}
	} else if (FCGX_IsCGI()) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		signal(SIGSEGV, fatal_signal);
		signal(SIGBUS, fatal_signal);
		signal(SIGABRT, fatal_signal);
		http_serve_cgi(serve_arena, routes, nroutes);
		db_close();
	} else {
		/* started by mod_fcgid, listening socket on fd 0 */
		FCGX_Init();
		keys_preload();
		turns_open(0);
		rc = serve_fastcgi(0);
	}
	json_use_arena(NULL);
	arena_free(serve_arena);
	return rc;
}
