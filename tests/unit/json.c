/* json: result rows written as JSON (json_rows), on results built by hand with libpq. */
#include <stdbool.h>

#include <cJSON.h>
#include <libpq-fe.h>

#include "arena.h"
#include "json.h"
#include "unit.h"

static struct arena *arena;

enum { COL_ID, COL_NAME, COL_PRICE, COL_LAT, NCOLS };

static const struct json_field fields[] = {
	{ "id", COL_ID, JSON_TEXT },
	{ "name", COL_NAME, JSON_TEXT },
	{ "price", COL_PRICE, JSON_NUMBER },
	{ "lat", COL_LAT, JSON_NUMBER },
};

/* A result of NCOLS text columns and rows of cells, NULL for SQL NULL. */
static PGresult *
result(int rows, const char *const cells[][NCOLS])
{
	static char names[NCOLS][8];
	PGresAttDesc attrs[NCOLS];
	PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	int i, c;

	memset(attrs, 0, sizeof attrs);
	for (c = 0; c < NCOLS; c++) {
		snprintf(names[c], sizeof names[c], "c%d", c);
		attrs[c].name = names[c];
		attrs[c].typid = 25;	/* text */
		attrs[c].typlen = -1;
		attrs[c].atttypmod = -1;
	}
	if (res == NULL || !PQsetResultAttrs(res, NCOLS, attrs))
		return NULL;
	for (i = 0; i < rows; i++)
		for (c = 0; c < NCOLS; c++)
			if (!PQsetvalue(res, i, c, (char *)cells[i][c],
			    cells[i][c] != NULL ? (int)strlen(cells[i][c]) : -1))
				return NULL;
	return res;
}

static const char *
rows_json(int rows, const char *const cells[][NCOLS], int skip_null)
{
	PGresult *res = result(rows, cells);
	const char *out;

	if (res == NULL)
		return NULL;
	out = json_rows(arena, res, skip_null, fields, NCOLS);
	PQclear(res);
	return out;
}

static void
test_rows(void)
{
	static const char *const two[][NCOLS] = {
		{ "a1", "Club", "20.00", "40.4168" },
		{ "a2", NULL, "-0.50", "-3.7038" },
	};
	static const char *const none[][NCOLS] = { { NULL, NULL, NULL, NULL } };

	CHECK_STR(rows_json(2, two, -1),
	    "[{\"id\":\"a1\",\"name\":\"Club\",\"price\":20.00,\"lat\":40.4168},"
	    "{\"id\":\"a2\",\"name\":null,\"price\":-0.50,\"lat\":-3.7038}]",
	    "rows: an object per row, members in order, numbers as written, NULL as null");
	CHECK_STR(rows_json(0, none, -1), "[]", "rows: no row is an empty array");
	CHECK_STR(rows_json(1, none, COL_ID), "[]",
	    "rows: a row whose skip_null column is NULL is left out");
	CHECK_STR(rows_json(2, two, COL_NAME),
	    "[{\"id\":\"a1\",\"name\":\"Club\",\"price\":20.00,\"lat\":40.4168}]",
	    "rows: only the rows where skip_null is NULL are left out");
}

static void
test_values(void)
{
	static const char *const odd[][NCOLS] = {
		{ "q\"b\\s/", "tab\there\nnew\r\b\f\x01\x1f", "NaN", "-Infinity" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "", "1e+30", "0" },
	};
	const char *out = rows_json(2, odd, -1);
	cJSON *doc = out != NULL ? cJSON_Parse(out) : NULL;
	cJSON *row0 = cJSON_GetArrayItem(doc, 0), *row1 = cJSON_GetArrayItem(doc, 1);

	CHECK(doc != NULL && cJSON_GetArraySize(doc) == 2, "values: the text is JSON");
	CHECK_STR(out,
	    "[{\"id\":\"q\\\"b\\\\s/\",\"name\":\"tab\\there\\nnew\\r\\b\\f\\u0001\\u001f\","
	    "\"price\":\"NaN\",\"lat\":\"-Infinity\"},"
	    "{\"id\":\"caf\xc3\xa9 \xe2\x82\xac\",\"name\":\"\",\"price\":1e+30,\"lat\":0}]",
	    "values: quote, backslash and control characters escaped, UTF-8 unchanged, "
	    "NaN and infinities as strings");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(row0, "name")),
	    "tab\there\nnew\r\b\f\x01\x1f", "values: a parser reads the text back as it was");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(row1, "id")),
	    "caf\xc3\xa9 \xe2\x82\xac", "values: UTF-8 reads back as it was");
	cJSON_Delete(doc);
}

/* json_text_check of the whole of text. */
static struct json_text_faults
faults_of(const char *text)
{
	struct json_text_faults f;

	json_text_check(arena, text, strlen(text), &f);
	return f;
}

static void
test_text_check(void)
{
	struct json_text_faults f;
	int line, col;

	f = faults_of("{\"a\":\"caf\xc3\xa9\",\"b\":[1,{\"c\":\"\\u00e9\\n\"}]}");
	CHECK(f.bad_at == strlen("{\"a\":\"caf\xc3\xa9\",\"b\":[1,{\"c\":\"\\u00e9\\n\"}]}") &&
	    f.nul_field == NULL, "text: UTF-8 and escapes are no fault");
	f = faults_of("{\"a\":\"x\xffy\"}");
	CHECK_INT(f.bad_at, 7, "text: an octet that is not UTF-8 is where the text stops");
	f = faults_of("{\"a\":\"\xc0\xae\"}");
	CHECK_INT(f.bad_at, 6, "text: so is an overlong form");
	f = faults_of("{\"a\":\"x\ty\"}");
	CHECK_INT(f.bad_at, 7, "text: a raw tab inside a string");
	json_text_check(arena, "{\"a\":1}\0", 8, &f);
	CHECK_INT(f.bad_at, 7, "text: a NUL outside a string is where the text stops");
	f = faults_of("{\n\t\"a\" :\r\n 1}");
	CHECK(f.bad_at == strlen("{\n\t\"a\" :\r\n 1}"), "text: white space between tokens is fine");
	f = faults_of("{\"a\":\"\\\"\\\\\"}");
	CHECK(f.bad_at == strlen("{\"a\":\"\\\"\\\\\"}") && f.nul_field == NULL,
	    "text: escaped quotes and backslashes do not end a string");
	f = faults_of("{\"displayName\":\"a\\u0000b\"}");
	CHECK_STR(f.nul_field, "displayName", "text: U+0000 escaped in a member");
	CHECK(!f.nul_in_name, "text: ... its value");
	f = faults_of("{\"a\":1,\"b\":{\"c\":[\"x\",\"y\",{\"d\":\"\\u0000\"}]}}");
	CHECK_STR(f.nul_field, "b.c[2].d", "text: the path of a member deeper in the body");
	f = faults_of("{\"sets\":[[6,4],[\"\\u0000\"]]}");
	CHECK_STR(f.nul_field, "sets[1][0]", "text: the path of an element");
	f = faults_of("{\"na\\u0000me\":1}");
	CHECK(f.nul_field != NULL && strcmp(f.nul_field, "") == 0 && f.nul_in_name,
	    "text: U+0000 in a member's name, at the top");
	f = faults_of("{\"a\":\"\\\\u0000\"}");
	CHECK(f.nul_field == NULL, "text: an escaped backslash before u0000 is no U+0000");
	json_text_position("{\n  \"a\": x", 9, &line, &col);
	CHECK(line == 2 && col == 8, "position: line and column from 1");
	json_text_position("\"\xc3\xa9\xc3\xa9x", 5, &line, &col);
	CHECK(line == 1 && col == 4, "position: columns count characters, not octets");
}

int
main(void)
{
	unit_start();
	if ((arena = arena_new()) == NULL)
		return 2;
	test_rows();
	test_values();
	test_text_check();
	arena_free(arena);
	return unit_done();
}
