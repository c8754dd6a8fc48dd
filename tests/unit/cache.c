/* cache: entity tags and If-None-Match, and the kept answers: a different validator or an
 * instant at or past `until` is a miss, collisions replace, large bodies are not kept.
 * Run under valgrind too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cache.h"
#include "unit.h"

#define NOW	1800000000000000LL	/* an instant in microseconds */

static void
test_etag(struct arena *a)
{
	int64_t until = 0;

	CHECK_STR(cache_etag(a, "3.0.17", NOW + 5), "\"3.0.17-1800000000000005\"", "tag with until");
	CHECK_STR(cache_etag(a, "3.0.17", CACHE_FOREVER), "\"3.0.17-f\"", "tag without until");

	CHECK(cache_etag_fresh("\"3.0.17-1800000000000005\"", "3.0.17", NOW, &until) &&
	    until == NOW + 5, "own tag before its until is fresh");
	CHECK(!cache_etag_fresh("\"3.0.17-1800000000000005\"", "3.0.17", NOW + 5, &until),
	    "own tag at its until is not");
	CHECK(!cache_etag_fresh("\"3.0.17-1800000000000005\"", "3.0.18", NOW, &until),
	    "another validator is not");
	CHECK(!cache_etag_fresh("\"3.0.1-1800000000000005\"", "3.0.17", NOW, &until),
	    "a validator that is a prefix is not");
	CHECK(!cache_etag_fresh("\"3.0.17\"", "3.0.17", NOW, &until), "no until is not");
	CHECK(cache_etag_fresh("\"3.0.17-f\"", "3.0.17", NOW, &until) && until == CACHE_FOREVER,
	    "a tag that time does not change is fresh");
	CHECK(cache_etag_fresh("W/\"3.0.17-f\"", "3.0.17", NOW, &until), "weak compares as strong");
	CHECK(cache_etag_fresh("\"x\", \"1.1.1-f\" ,\t\"3.0.17-1800000000000009\"", "3.0.17", NOW,
	    &until) && until == NOW + 9, "found in a list");
	CHECK(!cache_etag_fresh("\"3.0.17-18000000000000x5\"", "3.0.17", NOW, &until),
	    "junk in the until is not");
	CHECK(!cache_etag_fresh("\"3.0.17-99999999999999999999999\"", "3.0.17", NOW, &until),
	    "an until past int64 is not");
	CHECK(!cache_etag_fresh("*", "3.0.17", NOW, &until), "* is left to the full answer");
	CHECK(cache_etag_fresh("\"3.0.17-1800000000000005-gzip\"", "3.0.17", NOW, &until) &&
	    until == NOW + 5, "a compressing filter's suffix is ignored");
	CHECK(cache_etag_fresh("W/\"3.0.17-f-br\"", "3.0.17", NOW, &until), "on both forms");
	CHECK(!cache_etag_fresh("\"3.0.17-1800000000000005-\"", "3.0.17", NOW, &until),
	    "a bare dash is not a suffix");
	CHECK(!cache_etag_fresh("\"3.0.17-1800000000000005-gz1p\"", "3.0.17", NOW, &until),
	    "nor is one with digits");
	CHECK(!cache_etag_fresh("\"3.0.17-fx\"", "3.0.17", NOW, &until), "nor f followed by junk");
	CHECK(!cache_etag_fresh("\"3.0.17-f", "3.0.17", NOW, &until), "unterminated is not");
	CHECK(!cache_etag_fresh("", "3.0.17", NOW, &until), "empty is not");
	CHECK(!cache_etag_fresh(",,, ,", "3.0.17", NOW, &until), "commas alone are not");
	CHECK(!cache_etag_fresh(NULL, "3.0.17", NOW, &until), "no header is not");
}

static void
test_kept(void)
{
	int64_t until = 0;
	const char *headers = NULL;
	char *big;
	char key[32];
	int i, held;

	CHECK_INT(cache_count(), 0, "starts empty");
	CHECK(cache_get("k", "1.0.0", NOW, &until, NULL) == NULL, "empty: miss");
	CHECK(!cache_has("k"), "empty: nothing kept");
	cache_put("k", "1.0.0", NOW + 10, "[1]", 3, NULL);
	CHECK_STR(cache_get("k", "1.0.0", NOW, &until, NULL), "[1]", "same validator: hit");
	CHECK_INT(until, NOW + 10, "with its until");
	CHECK(cache_get("k", "1.0.1", NOW, &until, NULL) == NULL, "other validator: miss");
	CHECK(cache_get("other", "1.0.0", NOW, &until, NULL) == NULL, "other key: miss");
	CHECK(cache_has("k") && !cache_has("other"), "kept for its key only");
	CHECK(cache_get("k", "1.0.0", NOW + 10, &until, NULL) == NULL, "at until: miss");
	CHECK(cache_get("k", "1.0.0", NOW, &until, NULL) == NULL, "and dropped");
	cache_put("k", "1.5.0", NOW + 10, "[1]", 3, "Link: <next>; rel=\"next\"\r\n");
	CHECK(cache_get("k", "1.5.0", NOW, &until, &headers) != NULL &&
	    strcmp(headers, "Link: <next>; rel=\"next\"\r\n") == 0, "headers kept with the body");
	cache_put("k", "1.6.0", NOW + 10, "[1]", 3, NULL);
	CHECK(cache_get("k", "1.6.0", NOW, &until, &headers) != NULL && *headers == '\0',
	    "no headers: empty");
	cache_put("k", "2.0.0", CACHE_FOREVER, "[2]", 3, NULL);
	CHECK_STR(cache_get("k", "2.0.0", INT64_MAX - 1, &until, NULL), "[2]", "forever: hit much later");
	cache_put("k", "3.0.0", CACHE_FOREVER, "[3]", 3, NULL);
	CHECK(cache_get("k", "2.0.0", NOW, &until, NULL) == NULL, "replaced: old validator misses");
	CHECK_STR(cache_get("k", "3.0.0", NOW, &until, NULL), "[3]", "replaced: new one hits");

	big = malloc(CACHE_BODY_MAX + 2);
	memset(big, 'x', CACHE_BODY_MAX + 1);
	big[CACHE_BODY_MAX + 1] = '\0';
	cache_put("k", "4.0.0", CACHE_FOREVER, big, CACHE_BODY_MAX + 1, NULL);
	CHECK(cache_get("k", "4.0.0", NOW, &until, NULL) == NULL, "a body past the bound is not kept");
	CHECK(cache_get("k", "3.0.0", NOW, &until, NULL) == NULL, "and the old one is gone");
	cache_put("k", "5.0.0", CACHE_FOREVER, big, CACHE_BODY_MAX, NULL);
	CHECK(cache_get("k", "5.0.0", NOW, &until, NULL) != NULL &&
	    strlen(cache_get("k", "5.0.0", NOW, &until, NULL)) == CACHE_BODY_MAX,
	    "a body at the bound is kept whole");
	free(big);

	for (i = 0; i < 4 * CACHE_SLOTS; i++) {
		snprintf(key, sizeof key, "slots %d", i);
		cache_put(key, "1.1.1", CACHE_FOREVER, key, strlen(key), NULL);
	}
	CHECK(cache_count() <= CACHE_SLOTS, "never more than CACHE_SLOTS entries");
	for (i = 0, held = 0; i < 4 * CACHE_SLOTS; i++) {
		const char *got;

		snprintf(key, sizeof key, "slots %d", i);
		if ((got = cache_get(key, "1.1.1", NOW, &until, NULL)) != NULL) {
			held++;
			if (strcmp(got, key) != 0)
				break;
		}
	}
	CHECK(held > 0 && held == (int)cache_count(), "every kept body is its own key's");
}

/* cache_seen: a key is new once, then seen; of many keys, most are remembered */
static void
test_seen(void)
{
	char key[32];
	int i, again = 0;

	CHECK(!cache_seen("search a"), "a key asked the first time: not seen");
	CHECK(cache_seen("search a"), "asked again: seen");
	CHECK(cache_seen("search a"), "and again");
	CHECK(!cache_seen("search b"), "another key: not seen");
	for (i = 0; i < CACHE_SEEN / 4; i++) {
		snprintf(key, sizeof key, "search %d", i);
		cache_seen(key);
	}
	for (i = 0; i < CACHE_SEEN / 4; i++) {
		snprintf(key, sizeof key, "search %d", i);
		again += cache_seen(key);
	}
	/* direct-mapped: keys that share a place push each other out, as in the cache */
	CHECK(again > CACHE_SEEN / 8 && again <= CACHE_SEEN / 4,
	    "most of a quarter as many keys as places are remembered");
}

int
main(void)
{
	struct arena *a = arena_new();

	unit_start();
	test_etag(a);
	test_kept();
	test_seen();
	arena_free(a);
	return unit_done();
}
