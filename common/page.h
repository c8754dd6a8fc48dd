/* page: keyset paging of the lists that grow without bound.
 *
 * A list takes ?limit= (1..PAGE_MAX, default PAGE_DEFAULT) and ?cursor=, keeps the contract's
 * bare JSON array as its body, and sends `Link: <...>; rel="next"` (RFC 8288) while more
 * items remain. A cursor is the sort key of the last item sent, not an offset: the next page
 * starts strictly after it, so following the links yields every item once even while items
 * are added or removed between pages.
 *
 * The cursor is opaque to clients: base64url of a JSON array of the key's values, as the
 * list's SQL rendered them, checked against the list's key spelling and handed to the SQL as
 * one json parameter.
 */
#ifndef COURTS_PAGE_H
#define COURTS_PAGE_H

#include "db.h"

#define PAGE_DEFAULT	100
#define PAGE_MAX	500

struct req;

/* Answers a list page: reads ?limit= and ?cursor= (a bad value is 400 with the other field
 * problems already collected on r), runs sql with the n params given followed by two more,
 * limit + 1 and the cursor's key as a JSON array (NULL on the first page), and answers 200
 * with the page. keys spells the list's sort key, a letter per value: 't' a timestamp, 'u' a
 * UUID, 's' a text, 'n' a number, 'b' a boolean. sql returns up to limit + 1 rows of
 * (document json, sort key as a JSON array), in order; a row beyond the limit means more
 * remain, and the Link header points after the last document sent. */
void page_list_n(struct req *r, const char *keys, const char *sql, int n,
    const char *const *params);
#define page_list(r, keys, sql, ...) page_list_n((r), (keys), (sql), DB_NARGS(__VA_ARGS__), \
	(const char *const[]){ __VA_ARGS__ })

#endif
