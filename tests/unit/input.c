/* input: the body_* and query_* readers and input_fmt_* on a hand-built request (no driver,
 * no database); query strings are parsed as the driver does (url.h). */
#include <stdbool.h>
#include <stdlib.h>

#include <cJSON.h>

#include "arena.h"
#include "req.h"
#include "input.h"
#include "json.h"
#include "problem.h"
#include "url.h"
#include "unit.h"

static struct arena *arena;
static struct req r;
static const char *const skills_for_query[] = { "BEGINNER", "ADVANCED", NULL };

/* A fresh request whose body is json (an object), in a reset arena. */
static void
req_with(const char *json)
{
	arena_reset(arena);
	memset(&r, 0, sizeof r);
	r.a = arena;
	r.id = "unit";
	r.method = "POST";
	r.path = "/unit";
	r.body = cJSON_Parse(json);
	if (r.body == NULL) {
		printf("Bail out! test body does not parse: %s\n", json);
		exit(2);
	}
}

static int
nerrors(void)
{
	return r.field_errors != NULL ? cJSON_GetArraySize(r.field_errors) : 0;
}

/* Message of the i-th recorded error when it names field, else NULL. */
static const char *
error_of(int i, const char *field)
{
	const cJSON *e = cJSON_GetArrayItem(r.field_errors, i);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "field");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");

	if (!cJSON_IsString(f) || !cJSON_IsString(m) || strcmp(f->valuestring, field) != 0)
		return NULL;
	return m->valuestring;
}

/* Exactly one error, on field, with message. */
#define ONE_ERROR(field, message, name) do {				\
	CHECK_INT(nerrors(), 1, name " (one error)");			\
	CHECK_STR(error_of(0, field), message, name);			\
} while (0)

static void
test_string(void)
{
	const char *s = NULL;

	req_with("{\"name\":\"Club\",\"blank\":\" \\t \",\"num\":5,\"nul\":null,\"empty\":\"\"}");
	CHECK(body_string(&r, "name", IN_REQUIRED | IN_NOT_BLANK, &s), "string: present is read");
	CHECK_STR(s, "Club", "string: value borrowed from the body");
	CHECK_INT(nerrors(), 0, "string: a valid field records nothing");
	CHECK(body_string(&r, "empty", 0, &s) && *s == '\0', "string: empty without NOT_BLANK read");
	CHECK_INT(nerrors(), 0, "string: empty without NOT_BLANK is no error");

	req_with("{}");
	s = "untouched";
	CHECK(!body_string(&r, "name", IN_REQUIRED, &s), "string: absent required is false");
	ONE_ERROR("name", "is required", "string: absent required says 'is required'");
	CHECK_STR(s, "untouched", "string: out untouched when absent");

	req_with("{}");
	CHECK(!body_string(&r, "description", 0, &s), "string: absent optional is false");
	CHECK_INT(nerrors(), 0, "string: absent optional records nothing");

	req_with("{\"name\":null}");
	CHECK(!body_string(&r, "name", IN_REQUIRED, &s), "string: null required is false");
	ONE_ERROR("name", "is required", "string: null required says 'is required'");

	req_with("{\"description\":null}");
	CHECK(!body_string(&r, "description", 0, &s), "string: null optional is false");
	ONE_ERROR("description", "must not be null",
	    "string: null without NULLABLE says 'must not be null'");

	req_with("{\"description\":null}");
	CHECK(!body_string(&r, "description", IN_NULLABLE, &s), "string: null NULLABLE is false");
	CHECK_INT(nerrors(), 0, "string: null NULLABLE reads as absent, no error");
	CHECK(body_has(&r, "description"), "body_has: true for a null value");
	CHECK(!body_has(&r, "name"), "body_has: false for an absent key");

	req_with("{\"name\":5}");
	CHECK(!body_string(&r, "name", IN_REQUIRED, &s), "string: number is false");
	ONE_ERROR("name", "must be a string", "string: number says 'must be a string'");

	req_with("{\"name\":[\"a\"]}");
	CHECK(!body_string(&r, "name", 0, &s), "string: array is false");
	ONE_ERROR("name", "must be a string", "string: array says 'must be a string'");

	req_with("{\"name\":\" \\t\\n \"}");
	CHECK(!body_string(&r, "name", IN_REQUIRED | IN_NOT_BLANK, &s), "string: blank is false");
	ONE_ERROR("name", "must not be blank", "string: spaces and tabs say 'must not be blank'");

	req_with("{\"name\":\"\"}");
	CHECK(!body_string(&r, "name", IN_REQUIRED | IN_NOT_BLANK, &s), "string: empty is blank");
	ONE_ERROR("name", "must not be blank", "string: empty says 'must not be blank'");

	req_with("{\"Name\":\"x\"}");
	CHECK(!body_string(&r, "name", IN_REQUIRED, &s), "string: keys are case-sensitive");
	ONE_ERROR("name", "is required", "string: 'Name' does not satisfy 'name'");
}

static void
test_string_length(void)
{
	char json[2100];
	const char *s = NULL;

	memset(json, 0, sizeof json);
	strcpy(json, "{\"name\":\"");
	memset(json + strlen(json), 'a', 2000);
	strcat(json, "\"}");
	req_with(json);
	CHECK(body_string(&r, "name", IN_REQUIRED, &s) && strlen(s) == 2000,
	    "string: 2000 characters accepted");

	memset(json, 0, sizeof json);
	strcpy(json, "{\"name\":\"");
	memset(json + strlen(json), 'a', 2001);
	strcat(json, "\"}");
	req_with(json);
	CHECK(!body_string(&r, "name", IN_REQUIRED, &s), "string: 2001 characters refused");
	ONE_ERROR("name", "must be at most 2000 characters", "string: length message");
}

static void
test_all_errors_collected(void)
{
	const char *s;
	double d;

	/* a handler reads every field; the client sees every mistake in one answer */
	req_with("{\"street\":\"\",\"latitude\":\"north\"}");
	body_string(&r, "name", IN_REQUIRED | IN_NOT_BLANK, &s);
	body_string(&r, "street", IN_REQUIRED | IN_NOT_BLANK, &s);
	body_latitude(&r, "latitude", IN_REQUIRED, &d);
	body_longitude(&r, "longitude", IN_REQUIRED, &d);
	CHECK_INT(nerrors(), 4, "collect: four bad fields give four errors");
	CHECK_STR(error_of(0, "name"), "is required", "collect: first error is name");
	CHECK_STR(error_of(1, "street"), "must not be blank", "collect: second error is street");
	CHECK_STR(error_of(2, "latitude"), "must be a number", "collect: third error is latitude");
	CHECK_STR(error_of(3, "longitude"), "is required", "collect: fourth error is longitude");
	CHECK(problem_has_fields(&r), "collect: problem_has_fields is true");
}

static void
test_number_int_bool(void)
{
	double d = 0;
	long l = 0;
	bool b = false;

	req_with("{\"n\":1.5,\"i\":90,\"f\":90.5,\"big\":3e9,\"neg\":-7,\"s\":\"5\",\"t\":true,"
	    "\"z\":0,\"e\":1e2}");
	CHECK(body_number(&r, "n", IN_REQUIRED, &d) && d == 1.5, "number: 1.5 read");
	CHECK(body_number(&r, "e", IN_REQUIRED, &d) && d == 100.0, "number: 1e2 read as 100");
	CHECK(body_int(&r, "i", IN_REQUIRED, &l) && l == 90, "int: 90 read");
	CHECK(body_int(&r, "neg", IN_REQUIRED, &l) && l == -7, "int: -7 read");
	CHECK(body_int(&r, "e", IN_REQUIRED, &l) && l == 100, "int: 1e2 is the integer 100");
	CHECK_INT(nerrors(), 0, "number/int: valid values record nothing");

	CHECK(!body_int(&r, "f", IN_REQUIRED, &l), "int: 90.5 refused");
	ONE_ERROR("f", "must be an integer", "int: 90.5 says 'must be an integer'");

	req_with("{\"big\":3e9}");
	CHECK(!body_int(&r, "big", IN_REQUIRED, &l), "int: 3e9 refused (out of range)");
	ONE_ERROR("big", "must be an integer", "int: 3e9 says 'must be an integer'");

	req_with("{\"s\":\"5\"}");
	CHECK(!body_number(&r, "s", IN_REQUIRED, &d), "number: a string \"5\" refused");
	ONE_ERROR("s", "must be a number", "number: string says 'must be a number'");

	req_with("{\"s\":\"5\"}");
	CHECK(!body_int(&r, "s", IN_REQUIRED, &l), "int: a string \"5\" refused");
	ONE_ERROR("s", "must be a number", "int: string says 'must be a number'");

	req_with("{\"t\":true}");
	CHECK(!body_number(&r, "t", IN_REQUIRED, &d), "number: true refused");
	ONE_ERROR("t", "must be a number", "number: boolean says 'must be a number'");

	req_with("{}");
	CHECK(!body_int(&r, "slotDurationMinutes", IN_REQUIRED, &l), "int: absent required");
	ONE_ERROR("slotDurationMinutes", "is required", "int: absent says 'is required'");

	req_with("{\"t\":true,\"f\":false,\"n\":1,\"s\":\"true\"}");
	CHECK(body_bool(&r, "t", IN_REQUIRED, &b) && b, "bool: true read");
	CHECK(body_bool(&r, "f", IN_REQUIRED, &b) && !b, "bool: false read");
	CHECK_INT(nerrors(), 0, "bool: valid values record nothing");
	CHECK(!body_bool(&r, "n", IN_REQUIRED, &b), "bool: 1 refused");
	ONE_ERROR("n", "must be true or false", "bool: number says 'must be true or false'");
	req_with("{\"s\":\"true\"}");
	CHECK(!body_bool(&r, "s", IN_REQUIRED, &b), "bool: \"true\" refused");
	ONE_ERROR("s", "must be true or false", "bool: string says 'must be true or false'");
}

static void
test_money(void)
{
	long long c = -1;

	req_with("{\"price\":12.5,\"p2\":20,\"p3\":0.01,\"sum\":0.30000000000000004}");
	CHECK(body_money(&r, "price", IN_REQUIRED, &c) && c == 1250, "money: 12.5 is 1250 cents");
	CHECK(body_money(&r, "p2", IN_REQUIRED, &c) && c == 2000, "money: 20 is 2000 cents");
	CHECK(body_money(&r, "p3", IN_REQUIRED, &c) && c == 1, "money: 0.01 is 1 cent");
	CHECK(body_money(&r, "sum", IN_REQUIRED, &c) && c == 30,
	    "money: 0.30000000000000004 (0.1 + 0.2) is 30 cents");
	CHECK_INT(nerrors(), 0, "money: valid amounts record nothing");

	req_with("{\"price\":12.345}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: 12.345 refused");
	ONE_ERROR("price", "must have at most two decimals and be below 10000000000",
	    "money: three decimals message");

	req_with("{\"price\":1e10}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: 1e10 refused");
	ONE_ERROR("price", "must have at most two decimals and be below 10000000000",
	    "money: too large message");

	req_with("{\"price\":0}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: 0 refused");
	ONE_ERROR("price", "must be greater than 0", "money: zero says 'must be greater than 0'");

	req_with("{\"price\":1e-9}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: 1e-9 refused (it would be 0.00)");
	ONE_ERROR("price", "must be greater than 0", "money: less than a cent says 'greater than 0'");

	req_with("{\"price\":-5}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: -5 refused");
	ONE_ERROR("price", "must be greater than 0", "money: negative says 'must be greater than 0'");

	req_with("{\"price\":\"12.50\"}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: a string refused");
	ONE_ERROR("price", "must be a number", "money: string says 'must be a number'");

	req_with("{}");
	CHECK(!body_money(&r, "price", IN_REQUIRED, &c), "money: absent required refused");
	ONE_ERROR("price", "is required", "money: absent says 'is required'");
}

static void
test_time(void)
{
	const char *s = NULL;

	req_with("{\"closingTime\":\"24:00:00\"}");
	CHECK(body_time(&r, "closingTime", IN_REQUIRED, true, &s), "time: 24:00:00 with allow_24");
	CHECK_STR(s, "24:00:00", "time: value read");
	CHECK_INT(nerrors(), 0, "time: 24:00:00 with allow_24 records nothing");

	req_with("{\"startTime\":\"24:00:00\"}");
	CHECK(!body_time(&r, "startTime", IN_REQUIRED, false, &s), "time: 24:00:00 without allow_24");
	ONE_ERROR("startTime", "must be a time HH:MM:SS", "time: message without allow_24");

	req_with("{\"endTime\":\"24:30:00\"}");
	CHECK(!body_time(&r, "endTime", IN_REQUIRED, true, &s), "time: 24:30:00 refused");
	ONE_ERROR("endTime", "must be a time HH:MM:SS (24:00:00 allowed)",
	    "time: message with allow_24");

	req_with("{\"startTime\":\"8:00\"}");
	CHECK(!body_time(&r, "startTime", IN_REQUIRED, false, &s), "time: 8:00 refused");
	ONE_ERROR("startTime", "must be a time HH:MM:SS", "time: 8:00 message");

	req_with("{\"startTime\":800}");
	CHECK(!body_time(&r, "startTime", IN_REQUIRED, false, &s), "time: a number refused");
	ONE_ERROR("startTime", "must be a string", "time: number says 'must be a string'");

	req_with("{\"openingTime\":null}");
	CHECK(!body_time(&r, "openingTime", IN_NULLABLE, false, &s), "time: null NULLABLE");
	CHECK_INT(nerrors(), 0, "time: null NULLABLE records nothing");
}

static void
test_shapes(void)
{
	const char *s = NULL;

	req_with("{\"resourceId\":\"123E4567-e89b-12d3-a456-426614174000\","
	    "\"bookingDate\":\"2024-02-29\"}");
	CHECK(body_uuid(&r, "resourceId", IN_REQUIRED, &s), "uuid: valid read");
	CHECK_STR(s, "123E4567-e89b-12d3-a456-426614174000", "uuid: value as sent");
	CHECK(body_date(&r, "bookingDate", IN_REQUIRED, &s), "date: 2024-02-29 read");
	CHECK_INT(nerrors(), 0, "uuid/date: valid values record nothing");

	req_with("{\"resourceId\":\"not-a-uuid\",\"bookingDate\":\"2023-02-29\"}");
	CHECK(!body_uuid(&r, "resourceId", IN_REQUIRED, &s), "uuid: bad refused");
	CHECK(!body_date(&r, "bookingDate", IN_REQUIRED, &s), "date: 2023-02-29 refused");
	CHECK_INT(nerrors(), 2, "uuid/date: two errors");
	CHECK_STR(error_of(0, "resourceId"), "must be a UUID", "uuid: message");
	CHECK_STR(error_of(1, "bookingDate"), "is not a date on the calendar", "date: message");

	req_with("{\"resourceId\":\"\"}");
	CHECK(!body_uuid(&r, "resourceId", IN_REQUIRED | IN_NOT_BLANK, &s), "uuid: empty refused");
	ONE_ERROR("resourceId", "must be a UUID", "uuid: empty says 'must be a UUID'");
}

static void
test_enum(void)
{
	static const char *const teams[] = { "TEAM_A", "TEAM_B", NULL };
	const char *s = NULL;

	req_with("{\"team\":\"TEAM_B\"}");
	CHECK(body_enum(&r, "team", IN_REQUIRED, teams, &s), "enum: TEAM_B read");
	CHECK_STR(s, "TEAM_B", "enum: value read");
	CHECK_INT(nerrors(), 0, "enum: valid value records nothing");

	req_with("{\"team\":\"team_a\"}");
	CHECK(!body_enum(&r, "team", IN_REQUIRED, teams, &s), "enum: lower case refused");
	ONE_ERROR("team", "must be one of TEAM_A TEAM_B", "enum: message lists the values");

	req_with("{\"team\":\"\"}");
	CHECK(!body_enum(&r, "team", IN_REQUIRED | IN_NOT_BLANK, teams, &s), "enum: empty refused");
	ONE_ERROR("team", "must be one of TEAM_A TEAM_B", "enum: empty lists the values");

	req_with("{}");
	CHECK(!body_enum(&r, "team", IN_REQUIRED, teams, &s), "enum: absent required refused");
	ONE_ERROR("team", "is required", "enum: absent says 'is required'");

	req_with("{\"team\":1}");
	CHECK(!body_enum(&r, "team", IN_REQUIRED, teams, &s), "enum: number refused");
	ONE_ERROR("team", "must be a string", "enum: number says 'must be a string'");
}

static void
test_geo(void)
{
	double d = 0;

	req_with("{\"lat\":90,\"lng\":-180,\"badlat\":90.5,\"badlng\":180.5}");
	CHECK(body_latitude(&r, "lat", IN_REQUIRED, &d) && d == 90.0, "latitude: 90 read");
	CHECK(body_longitude(&r, "lng", IN_REQUIRED, &d) && d == -180.0, "longitude: -180 read");
	CHECK_INT(nerrors(), 0, "geo: valid values record nothing");
	CHECK(!body_latitude(&r, "badlat", IN_REQUIRED, &d), "latitude: 90.5 refused");
	CHECK(!body_longitude(&r, "badlng", IN_REQUIRED, &d), "longitude: 180.5 refused");
	CHECK_INT(nerrors(), 2, "geo: two errors");
	CHECK_STR(error_of(0, "badlat"), "must be between -90 and 90", "latitude: message");
	CHECK_STR(error_of(1, "badlng"), "must be between -180 and 180", "longitude: message");
}

static void
test_fmt(void)
{
	req_with("{}");
	CHECK_STR(input_fmt_cents(&r, 1250), "12.50", "fmt_cents: 1250 is 12.50");
	CHECK_STR(input_fmt_cents(&r, 5), "0.05", "fmt_cents: 5 is 0.05");
	CHECK_STR(input_fmt_cents(&r, 0), "0.00", "fmt_cents: 0 is 0.00");
	CHECK_STR(input_fmt_cents(&r, -1999), "-19.99", "fmt_cents: -1999 is -19.99");
	CHECK_STR(input_fmt_cents(&r, 999999999999LL), "9999999999.99",
	    "fmt_cents: largest amount");
	CHECK_STR(input_fmt_long(&r, 0), "0", "fmt_long: 0");
	CHECK_STR(input_fmt_long(&r, -42), "-42", "fmt_long: -42");
	CHECK_STR(input_fmt_long(&r, 9007199254740993LL), "9007199254740993",
	    "fmt_long: beyond double precision");
	CHECK(strtod(input_fmt_double(&r, 40.4168), NULL) == 40.4168,
	    "fmt_double: 40.4168 round-trips exactly");
	CHECK(strtod(input_fmt_double(&r, 0.1 + 0.2), NULL) == 0.1 + 0.2,
	    "fmt_double: 0.1 + 0.2 round-trips exactly");
	CHECK_STR(input_fmt_double(&r, -3.5), "-3.5", "fmt_double: -3.5");
	CHECK_STR(input_fmt_double(&r, 90), "90", "fmt_double: 90 has no decimals");
}

static void
test_query(void)
{
	const char *s = NULL;
	double d = 0;
	long l = 0;

	req_with("{}");
	url_query_parse(&r, "lat=40.4168&lng=-3.7&limit=5&date=2030-02-29&from=08%3A00%3A00&"
	    "skill=ADVANCED&blank=");
	CHECK(query_latitude(&r, "lat", IN_REQUIRED, &d) && d == 40.4168, "query: latitude read");
	CHECK(query_int(&r, "limit", 0, &l) && l == 5, "query: integer read");
	CHECK(query_time(&r, "from", 0, &s) && strcmp(s, "08:00:00") == 0,
	    "query: a time read after decoding");
	CHECK(query_enum(&r, "skill", 0, skills_for_query, &s), "query: an allowed value read");
	CHECK_INT(nerrors(), 0, "query: valid parameters record nothing");
	CHECK(!query_string(&r, "blank", 0, &s) && nerrors() == 0,
	    "query: an empty optional value reads as absent");
	CHECK(!query_date(&r, "date", 0, &s), "query: a day that does not exist is refused");
	ONE_ERROR("date", "is not a date on the calendar", "query: the bad date is reported");

	req_with("{}");
	url_query_parse(&r, "radiusKm=+5&n=1e999&lng=200");
	CHECK(!query_number(&r, "radiusKm", 0, &d), "query: '+' decodes to a space, not a sign");
	CHECK(!query_number(&r, "n", 0, &d), "query: a number beyond double is refused");
	CHECK(!query_longitude(&r, "lng", 0, &d), "query: longitude out of range refused");
	CHECK(!query_string(&r, "absent", IN_REQUIRED, &s), "query: absent required is false");
	CHECK_INT(nerrors(), 4, "query: each refusal records one error");
}

int
main(void)
{
	unit_start();
	arena = arena_new();
	if (arena == NULL)
		return 2;
	/* as the driver does: problem_field and the body use cJSON, which allocates here */
	json_use_arena(arena);
	test_string();
	test_string_length();
	test_all_errors_collected();
	test_number_int_bool();
	test_money();
	test_time();
	test_shapes();
	test_enum();
	test_geo();
	test_fmt();
	test_query();
	json_use_arena(NULL);
	arena_free(arena);
	return unit_done();
}
