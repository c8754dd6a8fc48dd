/* cache: a direct-mapped table of answers, see cache.h. */
#include "cache.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "req.h"

struct entry {
	char	*key;
	char	*validator;
	char	*body;
	char	*headers;	/* the answer's extra header lines, "" for none */
	int64_t	 until_us;
};

static struct entry table[CACHE_SLOTS];
static uint32_t seen[CACHE_SEEN];	/* hashes of the keys asked, 0: none */

/* FNV-1a: short keys, no adversary gains anything from collisions but a miss */
static uint32_t
hash_of(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h;
}

static size_t
slot_of(const char *key)
{
	return hash_of(key) % CACHE_SLOTS;
}

static void
entry_clear(struct entry *e)
{
	free(e->key);
	free(e->validator);
	free(e->body);
	free(e->headers);
	memset(e, 0, sizeof *e);
}

const char *
cache_get(const char *key, const char *validator, int64_t now_us, int64_t *until_us,
    const char **headers)
{
	struct entry *e = &table[slot_of(key)];

	if (e->key == NULL || strcmp(e->key, key) != 0 || strcmp(e->validator, validator) != 0)
		return NULL;
	if (now_us >= e->until_us) {
		entry_clear(e);
		return NULL;
	}
	if (until_us != NULL)
		*until_us = e->until_us;
	if (headers != NULL)
		*headers = e->headers;
	return e->body;
}

void
cache_put(const char *key, const char *validator, int64_t until_us, const char *body, size_t len,
    const char *headers)
{
	struct entry *e = &table[slot_of(key)];

	entry_clear(e);
	if (len > CACHE_BODY_MAX)
		return;
	e->key = strdup(key);
	e->validator = strdup(validator);
	e->headers = strdup(headers != NULL ? headers : "");
	if ((e->body = malloc(len + 1)) != NULL) {
		memcpy(e->body, body, len);
		e->body[len] = '\0';
	}
	if (e->key == NULL || e->validator == NULL || e->body == NULL || e->headers == NULL) {
		entry_clear(e);
		return;
	}
	e->until_us = until_us;
}

int64_t
cache_us(const char *epoch_us)
{
	return epoch_us != NULL ? strtoll(epoch_us, NULL, 10) : CACHE_FOREVER;
}

char *
cache_etag(struct arena *a, const char *validator, int64_t until_us)
{
	if (until_us == CACHE_FOREVER)
		return arena_printf(a, "\"%s-f\"", validator);
	return arena_printf(a, "\"%s-%" PRId64 "\"", validator, until_us);
}

/* Whether s..end is empty or a suffix a compressing filter adds to a tag it passes on
 * (mod_deflate's "-gzip", mod_brotli's "-br"). */
static bool
tag_suffix_ok(const char *s, const char *end)
{
	if (s == end)
		return true;
	if (*s++ != '-' || s == end)
		return false;
	for (; s < end; s++)
		if (!isalpha((unsigned char)*s))
			return false;
	return true;
}

/* One entity tag at *p (after blanks): whether it is fresh; *p moves past it and its comma. */
static bool
tag_fresh(const char **p, const char *validator, int64_t now_us, int64_t *until_us)
{
	const char *s = *p, *end;
	size_t vlen = strlen(validator);
	bool fresh = false;
	long long until;
	char *stop;

	if (strncmp(s, "W/", 2) == 0)
		s += 2;
	if (*s == '"' && (end = strchr(s + 1, '"')) != NULL) {
		s++;
		if ((size_t)(end - s) > vlen + 1 && strncmp(s, validator, vlen) == 0 &&
		    s[vlen] == '-') {
			s += vlen + 1;
			if (*s == 'f') {
				fresh = tag_suffix_ok(s + 1, end);
				*until_us = CACHE_FOREVER;
			} else if (isdigit((unsigned char)*s)) {
				errno = 0;
				until = strtoll(s, &stop, 10);
				fresh = errno == 0 && tag_suffix_ok(stop, end) && until > now_us;
				*until_us = until;
			}
		}
		s = end + 1;
	}
	/* whatever follows up to the next comma is not part of a tag we made */
	s += strcspn(s, ",");
	*p = *s == ',' ? s + 1 : s;
	return fresh;
}

bool
cache_etag_fresh(const char *if_none_match, const char *validator, int64_t now_us,
    int64_t *until_us)
{
	const char *p = if_none_match;

	if (p == NULL)
		return false;
	while (*p != '\0') {
		p += strspn(p, " \t");
		if (*p == '\0')
			break;
		if (tag_fresh(&p, validator, now_us, until_us))
			return true;
	}
	return false;
}

/* The validator a client's tag carries: the state's, and which answer of that state it is
 * (its key's hash). Answers of different keys often share a state (the searches of one area,
 * the pages of one owner's list); bound to its key, a tag of one is never taken for another
 * by a client that sends it to the wrong address. */
static const char *
tag_validator(struct req *r, const char *key, const char *validator)
{
	return arena_printf(r->a, "%s.%08" PRIx32, validator, hash_of(key));
}

bool
cache_answer(struct req *r, const char *key, const char *validator, int64_t now_us,
    const char *cache_control)
{
	const char *body = NULL, *headers = NULL;
	int64_t until_us;

	/* a client's tag of the current answer is 304 whether or not this process keeps it */
	if (!cache_etag_fresh(r->if_none_match, tag_validator(r, key, validator), now_us,
	    &until_us) &&
	    (body = cache_get(key, validator, now_us, &until_us, &headers)) == NULL)
		return false;
	cache_send(r, key, validator, until_us, now_us, body, headers, cache_control);
	return true;
}

bool
cache_kept_in_db(const struct req *r)
{
	return r->one_shot && !r->db->replica;
}

void
cache_send(struct req *r, const char *key, const char *validator, int64_t until_us,
    int64_t now_us, const char *body, const char *headers, const char *cache_control)
{
	const char *tagged = tag_validator(r, key, validator);
	int64_t tag_until;

	r->cache_control = cache_control;
	if (cache_etag_fresh(r->if_none_match, tagged, now_us, &tag_until)) {
		req_add_header(r, "ETag", cache_etag(r->a, tagged, tag_until));
		req_send_not_modified(r);
		return;
	}
	if (headers != NULL && *headers != '\0')
		r->resp_headers = arena_printf(r->a, "%s%s",
		    r->resp_headers != NULL ? r->resp_headers : "", headers);
	req_add_header(r, "ETag", cache_etag(r->a, tagged, until_us));
	req_send_json(r, 200, body);
}

void
cache_keep_answer(struct req *r, const char *key, const char *validator, int64_t until_us,
    const char *cache_control)
{
	if (!r->answered || r->status != 200 || r->resp_body == NULL)
		return;
	cache_put(key, validator, until_us, r->resp_body, r->resp_len, r->resp_headers);
	r->cache_control = cache_control;
	req_add_header(r, "ETag", cache_etag(r->a, tag_validator(r, key, validator), until_us));
}

bool
cache_has(const char *key)
{
	const struct entry *e = &table[slot_of(key)];

	return e->key != NULL && strcmp(e->key, key) == 0;
}

bool
cache_seen(const char *key)
{
	uint32_t h = hash_of(key) | 1;	/* never 0, the empty place */
	uint32_t *place = &seen[(h >> 1) % CACHE_SEEN];

	if (*place == h)
		return true;
	*place = h;
	return false;
}

size_t
cache_count(void)
{
	size_t i, n = 0;

	for (i = 0; i < CACHE_SLOTS; i++)
		n += table[i].key != NULL;
	return n;
}
