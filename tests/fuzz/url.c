/* Fuzz target url: percent-decoding, the request path and the query string (common/url.c).
 * Input: the bytes of a request target, "path?query". */
#include "fuzz.h"
#include "url.h"

/* Escapes in n bytes of s, counted the way a decoder that succeeded must have read them. */
static size_t
escapes(const uint8_t *s, size_t n)
{
	size_t i, e = 0;

	for (i = 0; i < n; i++)
		if (s[i] == '%') {
			e++;
			i += 2;
		}
	return e;
}

/* Decodes text as the callers do: bytes of a C string (CGI variables hold no NUL). */
static void
check_decode(const char *text, int plus)
{
	const uint8_t *data = (const uint8_t *)text;
	size_t size = strlen(text);
	const char *d = url_decode(fuzz_arena, text, size, plus);

	/* no NUL inside, and every byte read once: n bytes, two more per escape */
	if (d != NULL)
		FUZZ_CHECK(strlen(d) == size - 2 * escapes(data, size));
}

static void
check_query(const char *qs)
{
	struct req r;
	int i;

	fuzz_req_init(&r, "GET", "/");
	url_query_parse(&r, qs);
	FUZZ_CHECK(r.nquery >= 0 && r.nquery <= REQ_MAX_QUERY);
	for (i = 0; i < r.nquery; i++) {
		FUZZ_CHECK(r.query_names[i][0] != '\0');
		/* names are unique: the lookup finds this very pair */
		FUZZ_CHECK(req_query(&r, r.query_names[i]) == r.query_values[i]);
		FUZZ_CHECK(strlen(r.query_names[i]) + strlen(r.query_values[i]) <= strlen(qs));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *uri, *q, *path;

	fuzz_arena_use();
	uri = fuzz_text(data, size);
	check_decode(uri, 0);
	check_decode(uri, 1);
	path = url_path(fuzz_arena, uri, "");
	if (path != NULL)
		FUZZ_CHECK(strlen(path) <= strcspn(uri, "?"));
	path = url_path(fuzz_arena, uri, "/base");
	if (path != NULL)
		FUZZ_CHECK(strlen(path) <= strcspn(uri, "?"));
	q = strchr(uri, '?');
	check_query(q != NULL ? q + 1 : uri);
	return 0;
}
