/* url: percent-decoding, the request path and the query string, on a hand-built request. */
#include <stdbool.h>

#include "arena.h"
#include "problem.h"
#include "req.h"
#include "url.h"
#include "unit.h"

static struct arena *arena;
static struct req r;

static void
req_fresh(void)
{
	cJSON_Delete(r.field_errors);	/* a request's field errors are its own to free */
	arena_reset(arena);
	memset(&r, 0, sizeof r);
	r.a = arena;
}

/* url_decode of the whole of s. */
static const char *
decode(const char *s, bool plus)
{
	return url_decode(arena, s, strlen(s), plus);
}

static void
test_decode(void)
{
	CHECK_STR(decode("plain", false), "plain", "decode: text without escapes is unchanged");
	CHECK_STR(decode("a%20b%2Fc", false), "a b/c", "decode: %XX escapes decode");
	CHECK_STR(decode("%4a%4A", false), "JJ", "decode: hex digits of either case");
	CHECK_STR(decode("a+b", false), "a+b", "decode: '+' stays '+' in a path");
	CHECK_STR(decode("a+b%2B", true), "a b+", "decode: '+' is a space in a query, %2B a '+'");
	CHECK_STR(decode("", false), "", "decode: empty is empty");
	CHECK(decode("%", false) == NULL, "decode: a lone '%' is refused");
	CHECK(decode("ab%4", false) == NULL, "decode: an escape cut short is refused");
	CHECK(decode("%zz", false) == NULL, "decode: non-hex escape refused");
	CHECK(decode("a%00b", false) == NULL, "decode: %00 refused (no NUL inside a value)");
	CHECK_STR(url_decode(arena, "%41%42", 3, false), "A", "decode: only n bytes are read");
	CHECK(url_decode(arena, "%41%42", 5, false) == NULL,
	    "decode: an escape that n cuts short is refused");
	CHECK_STR(decode("%C3%A9", false), "\xc3\xa9", "decode: bytes of UTF-8 pass through");
	CHECK_STR(decode("%F0%9F%8E%BE", false), "\xf0\x9f\x8e\xbe", "decode: four-octet UTF-8");
	CHECK(decode("%ff", false) == NULL, "decode: an octet that is never UTF-8 is refused");
	CHECK(decode("%C3", false) == NULL, "decode: a character cut short is refused");
	CHECK(decode("%C0%80", false) == NULL, "decode: an overlong NUL is refused");
	CHECK(decode("%E0%80%AF", false) == NULL, "decode: an overlong '/' is refused");
	CHECK(decode("%ED%A0%80", false) == NULL, "decode: a UTF-16 surrogate is refused");
	CHECK(decode("%F4%90%80%80", false) == NULL, "decode: past U+10FFFF is refused");
	CHECK(decode("caf\xe9", false) == NULL, "decode: raw octets that are not UTF-8 too");
}

static void
test_path(void)
{
	CHECK_STR(url_path(arena, "/api/venues?lat=1", ""), "/api/venues",
	    "path: the query is cut off");
	CHECK_STR(url_path(arena, "/api/venues/", ""), "/api/venues",
	    "path: one trailing slash is dropped");
	CHECK_STR(url_path(arena, "/", ""), "/", "path: the root keeps its slash");
	CHECK_STR(url_path(arena, "/app/api/venues", "/app"), "/api/venues",
	    "path: the base path is removed");
	CHECK_STR(url_path(arena, "/other/api", "/app"), "/other/api",
	    "path: a base that is not a prefix stays");
	CHECK_STR(url_path(arena, "/ap", "/app"), "/ap", "path: a uri shorter than the base stays");
	CHECK_STR(url_path(arena, "/api/own%65r?x=%zz", ""), "/api/owner",
	    "path: decoded; the query is not its business");
	CHECK_STR(url_path(arena, "/a+b", ""), "/a+b", "path: '+' is not a space");
	CHECK(url_path(arena, "/api/%2", "") == NULL, "path: a bad escape is refused");
	CHECK(url_path(arena, "/api/%00", "") == NULL, "path: %00 is refused");
	CHECK_STR(url_path(arena, "?x=1", ""), "", "path: only a query gives an empty path");
}

static void
test_query(void)
{
	int i;

	req_fresh();
	url_query_parse(&r, "lat=40.4&lng=-3.7&radius%4Bm=1%30&q=a+b");
	CHECK_INT(r.nquery, 4, "query: four pairs read");
	CHECK_STR(req_query(&r, "lat"), "40.4", "query: a plain value");
	CHECK_STR(req_query(&r, "radiusKm"), "10", "query: names and values are decoded");
	CHECK_STR(req_query(&r, "q"), "a b", "query: '+' is a space");
	CHECK(req_query(&r, "missing") == NULL, "query: an absent name is NULL");
	CHECK(!problem_has_fields(&r), "query: a query that decodes is no field error");

	req_fresh();
	url_query_parse(&r, "%ff=1&x=2");
	CHECK(req_query(&r, "x") != NULL && problem_has_fields(&r),
	    "query: a name that is not UTF-8 is a field error, the other pairs are read");

	req_fresh();
	url_query_parse(&r, "a=1&a=2&flag&=x&&b=&c=%zz&d=%41");
	CHECK_STR(req_query(&r, "a"), "1", "query: the first of a repeated name wins");
	CHECK_STR(req_query(&r, "flag"), "", "query: a name without '=' reads as empty");
	CHECK_STR(req_query(&r, "b"), "", "query: an empty value reads as empty");
	CHECK(req_query(&r, "c") == NULL, "query: a value that does not decode is not read");
	CHECK(problem_has_fields(&r), "query: ... and is a field error of the request");
	CHECK_STR(req_query(&r, "d"), "A", "query: pairs after a bad one are read");
	CHECK_INT(r.nquery, 4, "query: empty names and empty pairs are dropped");
	CHECK_STR(req_query(&r, "k=v") == NULL ? "absent" : "present", "absent",
	    "query: '=' splits at the first one only");

	req_fresh();
	url_query_parse(&r, "x=a=b");
	CHECK_STR(req_query(&r, "x"), "a=b", "query: later '=' belong to the value");

	req_fresh();
	url_query_parse(&r, NULL);
	CHECK_INT(r.nquery, 0, "query: NULL is an empty query");

	req_fresh();
	{
		char qs[64 * 8] = "";

		for (i = 0; i < 40; i++)
			snprintf(qs + strlen(qs), sizeof qs - strlen(qs), "p%d=%d&", i, i);
		url_query_parse(&r, qs);
	}
	CHECK_INT(r.nquery, REQ_MAX_QUERY, "query: at most REQ_MAX_QUERY pairs are kept");
	CHECK(req_query(&r, "p31") != NULL && req_query(&r, "p32") == NULL,
	    "query: the first REQ_MAX_QUERY are the ones kept");
	req_fresh();
	{
		char bad[8 * 400 + 1] = "";

		for (i = 0; i < 400; i++)
			strcat(bad, "x=%ff&");
		url_query_parse(&r, bad);
		CHECK_INT(cJSON_GetArraySize(r.field_errors), REQ_MAX_QUERY,
		    "query: at most REQ_MAX_QUERY pairs that do not decode are told");
	}
}

int
main(void)
{
	unit_start();
	if ((arena = arena_new()) == NULL)
		return 2;
	test_decode();
	test_path();
	test_query();
	req_fresh();
	arena_free(arena);
	return unit_done();
}
