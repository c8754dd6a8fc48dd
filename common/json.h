/* json: cJSON wired to the request arena, and result rows written as JSON. */
#ifndef COURTS_JSON_H
#define COURTS_JSON_H

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

#endif
