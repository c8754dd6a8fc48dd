/* json: cJSON wired to the request arena. */
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

/* How json_from_row writes a column of a result row. */
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

/* Row row of res as an object with one member per field, in order, null where the column is
 * NULL: what json_build_object made in SQL, without its per-call type look-ups. NULL when
 * out of memory. */
cJSON *json_from_row(const PGresult *res, int row, const struct json_field *fields, size_t n);

#endif
