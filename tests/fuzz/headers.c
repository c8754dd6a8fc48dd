/* Fuzz target headers: the request header checks that are not the token itself:
 * Content-Type's media type (route_json_media_type), the Authorization scheme
 * (auth_bearer_token), Idempotency-Key (idem_key_valid) and If-None-Match
 * (cache_etag_fresh: a tag it calls fresh names the validator and an until after now). Content-Length is read by the
 * driver and fuzzed with the whole request (request.c). Input: one header value. */
#include <strings.h>

#include "fuzz.h"
#include "auth.h"
#include "cache.h"
#include "idem.h"
#include "route.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *v, *token;
	size_t i, n;

	fuzz_arena_use();
	v = fuzz_text(data, size);
	n = strlen(v);

	if (route_json_media_type(v)) {
		size_t type = strcspn(v, ";");

		while (type > 0 && v[type - 1] == ' ')
			type--;
		FUZZ_CHECK(strncasecmp(v, "application/", 12) == 0 && type >= 16);
		FUZZ_CHECK(strncasecmp(v + type - 4, "json", 4) == 0);
	}

	if ((token = auth_bearer_token(v)) != NULL) {
		FUZZ_CHECK(token == v + 7 && *token != '\0');
		FUZZ_CHECK(strncasecmp(v, "bearer ", 7) == 0);
	} else
		FUZZ_CHECK(n <= 7 || strncasecmp(v, "bearer ", 7) != 0);

	{
		int64_t until = 0;

		if (cache_etag_fresh(v, "12.0.345", 1000, &until)) {
			FUZZ_CHECK(strstr(v, "\"12.0.345-") != NULL);
			FUZZ_CHECK(until > 1000);
		}
	}

	if (idem_key_valid(v)) {
		FUZZ_CHECK(n >= 1 && n <= IDEM_KEY_MAX);
		for (i = 0; i < n; i++)
			FUZZ_CHECK(v[i] > ' ' && v[i] < 0x7f);
	}
	return 0;
}
