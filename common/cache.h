/* cache: answers a long-lived program keeps to serve again while they are still true.
 *
 * A FastCGI worker serves many requests; an answer it computed can be sent again as long as
 * its validator is unchanged and its time has not run out. The validator is whatever the
 * database says identifies the state the answer was computed from (sql/areas/20_versions.sql:
 * a value that changes with every write that could change the answer), read in the same
 * statement as the answer; `until` is the instant at which time alone changes it.
 *
 * The cache is per process, bounded (CACHE_SLOTS entries, each at most CACHE_BODY_MAX bytes),
 * and replaces on collision: a miss costs only the work the caller would have done anyway.
 * In plain CGI every process starts empty, so every look-up misses. */
#ifndef COURTS_CACHE_H
#define COURTS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

struct req;

#define CACHE_SLOTS	256
#define CACHE_SEEN	1024	/* keys remembered as asked (cache_seen) */
#define CACHE_BODY_MAX	(32 * 1024)
#define CACHE_FOREVER	INT64_MAX	/* `until` of an answer that time does not change */

/* The body kept for key under exactly this validator, still valid at now_us (microseconds
 * since the epoch, from the database's clock), or NULL. *until_us gets its `until` and
 * *headers its extra header lines ("" for none); either may be NULL. What it returns stays
 * valid until the next cache_put. */
const char *cache_get(const char *key, const char *validator, int64_t now_us, int64_t *until_us,
    const char **headers);

/* Keeps body (len bytes, NUL-terminated copy made) and its extra header lines (NULL for
 * none) for key with its validator and until. Bodies larger than CACHE_BODY_MAX, or a
 * failed allocation, are simply not kept. */
void cache_put(const char *key, const char *validator, int64_t until_us, const char *body,
    size_t len, const char *headers);

/*
 * A handler's side. The validator must be read before the answer is computed (or in the
 * same statement): an answer may then be newer than its validator, which costs at worst a
 * miss later, but never older, which could be served stale.
 */

/* With the validator just read for key: answers 304 when If-None-Match names the current
 * answer, or 200 with the answer kept under this validator; true when it answered. Both
 * carry the ETag and this Cache-Control. The ETag names the key as well as the validator
 * ("validator.keyhash-until"): answers of other keys with the same validator have others. */
bool cache_answer(struct req *r, const char *key, const char *validator, int64_t now_us,
    const char *cache_control);

/* Whether the answers of this request are kept in the database rather than in the process:
 * a process that serves this request alone (plain CGI), on the primary (the tables of kept
 * answers are unlogged, absent on replicas). */
bool cache_kept_in_db(const struct req *r);

/* With an answer kept elsewhere than in this process (in the database, for a process that
 * serves one request) and its validator and until, read just now: answers 304 when
 * If-None-Match names it, else 200 with body and its extra header lines (NULL or "" for
 * none); both carry the ETag (as cache_answer makes it) and this Cache-Control. */
void cache_send(struct req *r, const char *key, const char *validator, int64_t until_us,
    int64_t now_us, const char *body, const char *headers, const char *cache_control);

/* After the handler answered: a 200 answer is kept under key (body and extra headers) and
 * gets its ETag (as cache_answer makes it) and this Cache-Control; any other answer is left
 * as it is. */
void cache_keep_answer(struct req *r, const char *key, const char *validator, int64_t until_us,
    const char *cache_control);

/* An instant from the database (epoch_us, sql/areas/10_basics.sql) as the cache takes it:
 * NULL, an instant that never comes, is CACHE_FOREVER. */
int64_t cache_us(const char *epoch_us);

/* The strong entity tag of an answer: its validator and its until, quoted. */
char *cache_etag(struct arena *a, const char *validator, int64_t until_us);

/* Whether an If-None-Match header names an answer that is still the current one: a tag
 * made by cache_etag with this validator whose until is after now_us. Weak tags (W/)
 * compare like strong ones, as RFC 9110 has it for If-None-Match; "*" is not answered here
 * (the caller then sends the answer). *until_us gets the until of the matching tag.
 * NULL is false. */
bool cache_etag_fresh(const char *if_none_match, const char *validator, int64_t now_us,
    int64_t *until_us);

/* Whether an answer is kept for key, under whatever validator (a handler then reads the
 * validator to know whether it may send it; without one it goes straight to the answer). */
bool cache_has(const char *key);

/* Whether key was asked of this process before, as far as the last CACHE_SEEN keys tell,
 * and now it has been: for a handler whose kept answer costs more to compute than a plain
 * one, which keeps an answer only once it is asked again. A key mistaken for another (their
 * hashes collide) costs that handler a kept answer it did not need. */
bool cache_seen(const char *key);

/* Entries currently held (for tests). */
size_t cache_count(void);

#endif
