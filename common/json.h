/* json: cJSON wired to the request arena, and result rows written as JSON. */
#ifndef COURTS_JSON_H
#define COURTS_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>
#include <libpq-fe.h>

struct arena;

/* Makes every cJSON allocation come from a (until the next call); cJSON_Delete then frees
 * nothing and the arena releases it all at once. NULL restores malloc/free. */
void json_use_arena(struct arena *a);

/* Adds exact money (cents) as a JSON number with two decimals, e.g. 12.50. */
void json_add_money(cJSON *obj, const char *name, long long cents);

/* How json_rows writes a column of a result row. */
enum json_kind {
	JSON_TEXT,	/* a string */
	JSON_NUMBER,	/* a number, the column's text as PostgreSQL wrote it (numeric keeps
			 * its scale: 20.00); a string when that is no JSON number (NaN) */
};

struct json_field {
	const char	*name;
	int		 column;
	enum json_kind	 kind;
};

/* The rows of res as a JSON array of objects, each with one member per field in order, null
 * where the column is NULL; a row whose column skip_null is NULL is left out (-1: none is).
 * Written straight from the rows' text into a's memory, in two passes (length, then bytes):
 * what json_build_object and json_agg made in SQL, without their per-value type look-ups,
 * and without a cJSON tree of every value. */
char *json_rows(struct arena *a, const PGresult *res, int skip_null,
    const struct json_field *fields, size_t n);

/* What a JSON text holds that cJSON would take but the service refuses, found before it is
 * parsed (json_text_check). */
struct json_text_faults {
	size_t		 bad_at;	/* offset of the first octet that makes it no JSON text
					   (RFC 8259): one that is not UTF-8 (utf8.h), a NUL, or a
					   raw control character (U+0000..U+001F) inside a string;
					   the text's length when there is none */
	const char	*bad_why;	/* what is wrong there, or NULL */
	const char	*nul_field;	/* the first member whose string holds an escaped U+0000,
					   as a path ("displayName", "sets[1]"), "" at the top,
					   or NULL: PostgreSQL's text cannot hold that character,
					   and cJSON would cut the string there */
	bool		 nul_in_name;	/* the U+0000 is in a member's name under nul_field */
};

/* Scans the JSON text text[0..len) for what struct json_text_faults describes; the paths are
 * in a's memory. It follows the text's structure without judging it: cJSON does that. */
void json_text_check(struct arena *a, const char *text, size_t len,
    struct json_text_faults *out);

/* Line and column (both from 1, columns counted in characters) of offset at of text. */
void json_text_position(const char *text, size_t at, int *line, int *column);

#endif
