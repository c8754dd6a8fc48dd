/* Fuzz target request: the whole request path of owner.cgi (its own route table and handlers)
 * through the driver, as plain CGI: environment, body on stdin, answer on stdout. The
 * database is stub/db_stub.c: the caller resolves, a write's budget is spent (or answers as
 * X-Db-Budget says), every other statement fails as X-Db-Error says (default: no server),
 * so each request runs up to its first statement past the budget's (the handler's, or the
 * claim of an Idempotency-Key) and the answer that failure maps to.
 *
 * Input, in the shape of HTTP:
 *	METHOD target
 *	Name: value			(Content-Type, Content-Length, Authorization, ...)
 *	X-Db-Error: SQLSTATE CONSTRAINT MESSAGE	("-" for no constraint)
 *	X-Db-Budget: SECONDS | fail	(the write budget's answer: the wait, 0 when spent,
 *					or X-Db-Error's failure; default 0)
 *
 *	body
 * Content-Length is the body's length unless given. In a header value, FUZZ_JWT_MARK and the
 * claims JSON up to the end of the line become a token of those claims, signed RS256 with the
 * build's test key that the program is set to trust (Authorization: Bearer @jwt:{"sub":...}):
 * the kept corpus' requests get past authentication to the handlers, mutated claims too.
 *
 * Every answer must be one well-formed CGI response: a status, headers without control
 * characters, a Content-Length that is the body's, a JSON body, problem+json for 4xx/5xx, and
 * no 5xx but the one the failure asks. */
#include <ctype.h>

#include "fuzz.h"
#include "config.h"
#include "http.h"
#include "stub/db_stub.h"

int fuzz_main_owner(void);
int fuzz_routes_take(const char *program, const struct route *routes, size_t n);

static const struct route *routes;
static size_t nroutes;
static EVP_PKEY *rsa_private;		/* signs the tokens written FUZZ_JWT_MARK and claims */

/* CGI variables of the current input: putenv() keeps our strings (setenv() would keep a
 * copy of every value ever set), unset and freed after each input. unsetenv() removes only
 * an entry that reads NAME=, so it is given a copy of the name: cutting the string that
 * environ holds at its '=' would leave the entry in place, dangling once freed, and environ
 * growing by each input's variables. */
static char *vars[32];
static size_t nvars;

int
fuzz_routes_take(const char *program, const struct route *r, size_t n)
{
	(void)program;
	routes = r;
	nroutes = n;
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_main_owner();
	rsa_private = fuzz_key("rsa_private.pem");
	setenv("JWT_ALGORITHM", "RS256", 1);
	setenv("JWT_PUBLIC_KEY_FILE", FUZZ_KEY_DIR "/rsa_public.pem", 1);
	setenv("JWT_ISSUER", "https://auth.courts.local/", 1);
	setenv("JWT_AUDIENCE", "courts-api", 1);
	config_reload();
	/* the library logs every refusal; FUZZ_CHECK and the sanitizers write to fd 2 */
	if ((stderr = fopen("/dev/null", "w")) == NULL)
		abort();
	return 0;
}

static void
var_set(const char *name, const char *value, size_t n)
{
	char *s;

	if (nvars == sizeof vars / sizeof vars[0] || (s = malloc(strlen(name) + n + 2)) == NULL)
		return;
	sprintf(s, "%s=%.*s", name, (int)n, value);
	putenv(s);
	vars[nvars++] = s;
}

static void
vars_clear(void)
{
	char name[64];

	while (nvars > 0) {
		char *s = vars[--nvars];

		snprintf(name, sizeof name, "%.*s", (int)strcspn(s, "="), s);
		unsetenv(name);
		free(s);
	}
}

/* v, or when it holds FUZZ_JWT_MARK, v with the token its claims make in place of the rest. */
static const char *
signed_value(const char *v)
{
	const char *mark = strstr(v, FUZZ_JWT_MARK), *tok;
	char *s;

	if (mark == NULL || (tok = fuzz_jwt(rsa_private, mark)) == NULL)
		return v;
	s = arena_alloc(fuzz_arena, (size_t)(mark - v) + strlen(tok) + 1);
	sprintf(s, "%.*s%s", (int)(mark - v), v, tok);
	return s;
}

/* One header line: a CGI variable (HTTP_NAME, or CONTENT_TYPE / CONTENT_LENGTH) or what the
 * stub answers. Returns true when it was Content-Length. */
static bool
header(const char *line)
{
	char name[64] = "HTTP_", *o = name + 5;
	const char *colon = strchr(line, ':'), *v, *p;

	if (colon == NULL || colon == line || colon - line > 48)
		return false;
	for (v = colon + 1; *v == ' '; v++)
		;
	if (strncasecmp(line, "X-Db-Error:", 11) == 0) {
		char cons[64] = "", msg[256] = "";

		sscanf(v, "%5s %63s %255[^\n]", stub_db_failure.sqlstate, cons, msg);
		snprintf(stub_db_failure.constraint, sizeof stub_db_failure.constraint, "%s",
		    strcmp(cons, "-") == 0 ? "" : cons);
		snprintf(stub_db_failure.message, sizeof stub_db_failure.message, "%s", msg);
		return false;
	}
	if (strncasecmp(line, "X-Db-Budget:", 12) == 0) {
		/* whole seconds as the budget's function returns them, or its failure */
		if (strcmp(v, "fail") == 0)
			stub_db_budget[0] = '\0';
		else if (*v != '\0' && strlen(v) < 10 && strspn(v, "0123456789") == strlen(v))
			snprintf(stub_db_budget, sizeof stub_db_budget, "%s", v);
		return false;
	}
	for (p = line; p < colon; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-')
			return false;
		*o++ = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
	}
	*o = '\0';
	if (strcmp(name, "HTTP_CONTENT_TYPE") == 0 || strcmp(name, "HTTP_CONTENT_LENGTH") == 0)
		memmove(name, name + 5, strlen(name + 5) + 1);
	v = signed_value(v);
	var_set(name, v, strlen(v));
	return strcmp(name, "CONTENT_LENGTH") == 0;
}

/* May the stub's failure answer 5xx? Not those sql.c maps to a client's 4xx. */
static bool
failure_is_5xx(void)
{
	const char *s = stub_db_failure.sqlstate;

	if (stub_db_failures == 0)
		return false;
	if (strncmp(s, "CR", 2) == 0 && atoi(s + 2) >= 400 && atoi(s + 2) < 500 &&
	    stub_db_failure.message[0] != '\0')
		return false;
	return strncmp(s, "23", 2) != 0 && strncmp(s, "22", 2) != 0 && strcmp(s, "40001") != 0 &&
	    strcmp(s, "40P01") != 0;
}

/* The checks of the module comment on one CGI answer. */
static void
check_answer(const char *out, size_t len)
{
	const char *end = memmem(out, len, "\r\n\r\n", 4), *body, *p, *type;
	size_t body_len, i;
	int status;
	cJSON *doc;

	FUZZ_CHECK(len > 12 && strncmp(out, "Status: ", 8) == 0 && end != NULL);
	status = atoi(out + 8);
	FUZZ_CHECK(status >= 200 && status <= 599);
	for (p = out; p < end + 2; p++)		/* every line ends in CRLF, nothing else */
		FUZZ_CHECK((unsigned char)*p >= 0x20 ? *p != 0x7f :
		    (p[0] == '\r' && p[1] == '\n') || (p[0] == '\n' && p[-1] == '\r'));
	body = end + 4;
	body_len = len - (size_t)(body - out);
	if (status >= 500)
		FUZZ_CHECK(failure_is_5xx());
	if ((p = memmem(out, (size_t)(end - out), "\r\nContent-Length: ", 18)) == NULL) {
		FUZZ_CHECK(body_len == 0 && (status == 204 || status < 400));
		return;
	}
	FUZZ_CHECK((size_t)strtoul(p + 18, NULL, 10) == body_len);
	doc = cJSON_ParseWithLength(body, body_len);
	FUZZ_CHECK(doc != NULL);
	type = memmem(out, (size_t)(end - out), "\r\nContent-Type: ", 16);
	FUZZ_CHECK(type != NULL);
	if (status >= 400) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "status");

		FUZZ_CHECK(strncmp(type + 16, "application/problem+json\r\n", 26) == 0);
		FUZZ_CHECK(cJSON_IsNumber(st) && st->valueint == status);
	}
	for (i = 0; i < body_len; i++)
		FUZZ_CHECK(body[i] != '\0');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line, *target, *sp;
	bool have_length = false;
	FILE *in = stdin, *out = stdout;
	char *answer = NULL;
	size_t answer_len = 0;

	fuzz_arena_use();
	stub_db_reset();
	line = fuzz_line(&data, &size);
	if ((sp = strchr(line, ' ')) == NULL)
		return 0;
	var_set("REQUEST_METHOD", line, (size_t)(sp - line));
	target = sp + 1;
	var_set("REQUEST_URI", target, strlen(target));
	if ((sp = strchr(target, '?')) != NULL)
		var_set("QUERY_STRING", sp + 1, strlen(sp + 1));
	var_set("UNIQUE_ID", "fuzz", 4);
	while (size > 0 && *(line = fuzz_line(&data, &size)) != '\0')
		have_length |= header(line);
	if (!have_length && size > 0) {
		char n[24];

		snprintf(n, sizeof n, "%zu", size);
		var_set("CONTENT_LENGTH", n, strlen(n));
	}

	/* the body is what is left, on stdin; the answer is caught from stdout */
	stdin = size > 0 ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	stdout = open_memstream(&answer, &answer_len);
	FUZZ_CHECK(stdin != NULL && stdout != NULL);
	http_serve_cgi(fuzz_arena, routes, nroutes);
	fclose(stdin);
	fclose(stdout);
	stdin = in;
	stdout = out;
	check_answer(answer, answer_len);
	free(answer);
	vars_clear();
	return 0;
}
