/* url: percent-decoding, the request path and the query string.
 *
 * Pure functions over request memory: they see the raw bytes a client sent and nothing else,
 * so they are unit-tested and fuzzed on their own (tests/unit/url.c, tests/fuzz/url.c).
 */
#ifndef COURTS_URL_H
#define COURTS_URL_H

#include <stdbool.h>
#include <stddef.h>

struct arena;
struct req;

/* Percent-decodes n bytes of s, and '+' as a space when plus. Returns the decoded text,
 * NUL-terminated, in a's memory; NULL when an escape is malformed or decodes to NUL, or the
 * text is not UTF-8 (utf8.h: no overlong form, no surrogate). */
char *url_decode(struct arena *a, const char *s, size_t n, bool plus);

/* The decoded path of the request target uri: the query cut off, base removed when it
 * is a prefix ("" for none), one trailing slash dropped unless the path is "/". Returns
 * the path in a's memory, or NULL when it does not decode. */
char *url_path(struct arena *a, const char *uri, const char *base);

/* Parses the query string qs (NULL is empty) into r's query parameters: names and values
 * decoded ('+' is a space), the first of a repeated name kept, pairs with an empty name
 * dropped, at most REQ_MAX_QUERY kept. A pair that does not decode is a field error of r
 * (problem.h): the request is refused with 400, never read as if the pair were absent (at
 * most REQ_MAX_QUERY such errors are told). */
void url_query_parse(struct req *r, const char *qs);

#endif
