/* input: body and query readers sharing one set of checks and messages. */
#include "input.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "req.h"
#include "problem.h"
#include "valid.h"

/* The raw JSON item of a body field: NULL when absent, or when null and allowed. */
static const cJSON *
body_item(struct req *r, const char *name, unsigned flags)
{
	const cJSON *it = r->body != NULL ? cJSON_GetObjectItemCaseSensitive(r->body, name) : NULL;

	if (it == NULL) {
		if (flags & IN_REQUIRED)
			problem_field(r, name, "is required");
		return NULL;
	}
	if (cJSON_IsNull(it)) {
		if (flags & IN_REQUIRED)
			problem_field(r, name, "is required");
		else if (!(flags & IN_NULLABLE))
			problem_field(r, name, "must not be null");
		return NULL;
	}
	return it;
}

bool
body_has(const struct req *r, const char *name)
{
	return r->body != NULL && cJSON_GetObjectItemCaseSensitive(r->body, name) != NULL;
}

/* Shared string checks for body and query values. */
static bool
check_string(struct req *r, const char *name, unsigned flags, const char *s)
{
	if ((flags & IN_NOT_BLANK) && !valid_not_blank(s)) {
		problem_field(r, name, "must not be blank");
		return false;
	}
	if (strlen(s) > INPUT_STRING_MAX) {
		problem_field(r, name, "must be at most 2000 characters");
		return false;
	}
	return true;
}

bool
body_string(struct req *r, const char *name, unsigned flags, const char **out)
{
	const cJSON *it = body_item(r, name, flags);

	if (it == NULL)
		return false;
	if (!cJSON_IsString(it)) {
		problem_field(r, name, "must be a string");
		return false;
	}
	if (!check_string(r, name, flags, it->valuestring))
		return false;
	*out = it->valuestring;
	return true;
}

bool
body_number(struct req *r, const char *name, unsigned flags, double *out)
{
	const cJSON *it = body_item(r, name, flags);

	if (it == NULL)
		return false;
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) {
		problem_field(r, name, "must be a number");
		return false;
	}
	*out = it->valuedouble;
	return true;
}

bool
body_int(struct req *r, const char *name, unsigned flags, long *out)
{
	double v;

	if (!body_number(r, name, flags, &v))
		return false;
	if (v != floor(v) || fabs(v) > 2e9) {
		problem_field(r, name, "must be an integer");
		return false;
	}
	*out = (long)v;
	return true;
}

bool
body_bool(struct req *r, const char *name, unsigned flags, bool *out)
{
	const cJSON *it = body_item(r, name, flags);

	if (it == NULL)
		return false;
	if (!cJSON_IsBool(it)) {
		problem_field(r, name, "must be true or false");
		return false;
	}
	*out = cJSON_IsTrue(it);
	return true;
}

static void
enum_message(struct req *r, const char *name, const char *const *allowed)
{
	char msg[256];
	size_t n;

	n = (size_t)snprintf(msg, sizeof msg, "must be one of");
	for (; *allowed != NULL && n < sizeof msg; allowed++)
		n += (size_t)snprintf(msg + n, sizeof msg - n, " %s", *allowed);
	problem_field(r, name, msg);
}

bool
body_enum(struct req *r, const char *name, unsigned flags, const char *const *allowed,
    const char **out)
{
	const char *s;

	if (!body_string(r, name, flags & ~IN_NOT_BLANK, &s))
		return false;
	if (!valid_enum(s, allowed)) {
		enum_message(r, name, allowed);
		return false;
	}
	*out = s;
	return true;
}

/* Typed text values share one shape: read as a string, then check the format; problem says
 * what is wrong with a value (NULL: nothing). */
static bool
body_shaped(struct req *r, const char *name, unsigned flags, const char *(*problem)(const char *),
    const char **out)
{
	const char *s, *why;

	if (!body_string(r, name, flags & ~IN_NOT_BLANK, &s))
		return false;
	if ((why = problem(s)) != NULL) {
		problem_field(r, name, why);
		return false;
	}
	*out = s;
	return true;
}

static const char *
uuid_problem(const char *s)
{
	return valid_uuid(s) ? NULL : "must be a UUID";
}

static const char *
time_problem(const char *s)
{
	return valid_time(s, false, NULL) ? NULL : "must be a time HH:MM:SS";
}

static const char *
time24_problem(const char *s)
{
	return valid_time(s, true, NULL) ? NULL : "must be a time HH:MM:SS (24:00:00 allowed)";
}

bool
body_uuid(struct req *r, const char *name, unsigned flags, const char **out)
{
	return body_shaped(r, name, flags, uuid_problem, out);
}

bool
body_date(struct req *r, const char *name, unsigned flags, const char **out)
{
	return body_shaped(r, name, flags, valid_date_problem, out);
}

bool
body_time(struct req *r, const char *name, unsigned flags, bool allow_24, const char **out)
{
	return body_shaped(r, name, flags, allow_24 ? time24_problem : time_problem, out);
}

bool
body_money(struct req *r, const char *name, unsigned flags, long long *cents)
{
	double v;

	if (!body_number(r, name, flags, &v))
		return false;
	if (v > 0 && !valid_money(v, cents)) {
		problem_field(r, name, "must have at most two decimals and be below 10000000000");
		return false;
	}
	/* on the cents: 1e-9 is within valid_money's allowance for binary noise and reads as
	 * 0.00, which the database's CHECK (price > 0) would refuse as a 409 */
	if (v <= 0 || *cents == 0) {
		problem_field(r, name, "must be greater than 0");
		return false;
	}
	return true;
}

bool
body_latitude(struct req *r, const char *name, unsigned flags, double *out)
{
	double v;

	if (!body_number(r, name, flags, &v))
		return false;
	if (!valid_latitude(v)) {
		problem_field(r, name, "must be between -90 and 90");
		return false;
	}
	*out = v;
	return true;
}

bool
body_longitude(struct req *r, const char *name, unsigned flags, double *out)
{
	double v;

	if (!body_number(r, name, flags, &v))
		return false;
	if (!valid_longitude(v)) {
		problem_field(r, name, "must be between -180 and 180");
		return false;
	}
	*out = v;
	return true;
}

bool
query_string(struct req *r, const char *name, unsigned flags, const char **out)
{
	const char *s = req_query(r, name);

	if (s == NULL || *s == '\0') {
		if (flags & IN_REQUIRED)
			problem_field(r, name, "is required");
		return false;
	}
	if (!check_string(r, name, flags, s))
		return false;
	*out = s;
	return true;
}

bool
query_number(struct req *r, const char *name, unsigned flags, double *out)
{
	const char *s;

	if (!query_string(r, name, flags, &s))
		return false;
	if (!valid_number(s, out)) {
		problem_field(r, name, "must be a number");
		return false;
	}
	return true;
}

bool
query_int(struct req *r, const char *name, unsigned flags, long *out)
{
	double v;

	if (!query_number(r, name, flags, &v))
		return false;
	if (v != floor(v) || fabs(v) > 2e9) {
		problem_field(r, name, "must be an integer");
		return false;
	}
	*out = (long)v;
	return true;
}

bool
query_enum(struct req *r, const char *name, unsigned flags, const char *const *allowed,
    const char **out)
{
	const char *s;

	if (!query_string(r, name, flags, &s))
		return false;
	if (!valid_enum(s, allowed)) {
		enum_message(r, name, allowed);
		return false;
	}
	*out = s;
	return true;
}

/* A typed query value, as body_shaped reads a body's. */
static bool
query_shaped(struct req *r, const char *name, unsigned flags, const char *(*problem)(const char *),
    const char **out)
{
	const char *s, *why;

	if (!query_string(r, name, flags, &s))
		return false;
	if ((why = problem(s)) != NULL) {
		problem_field(r, name, why);
		return false;
	}
	*out = s;
	return true;
}

bool
query_date(struct req *r, const char *name, unsigned flags, const char **out)
{
	return query_shaped(r, name, flags, valid_date_problem, out);
}

bool
query_time(struct req *r, const char *name, unsigned flags, const char **out)
{
	return query_shaped(r, name, flags, time_problem, out);
}

bool
query_latitude(struct req *r, const char *name, unsigned flags, double *out)
{
	if (!query_number(r, name, flags, out))
		return false;
	if (!valid_latitude(*out)) {
		problem_field(r, name, "must be between -90 and 90");
		return false;
	}
	return true;
}

bool
query_longitude(struct req *r, const char *name, unsigned flags, double *out)
{
	if (!query_number(r, name, flags, out))
		return false;
	if (!valid_longitude(*out)) {
		problem_field(r, name, "must be between -180 and 180");
		return false;
	}
	return true;
}

const char *
input_fmt_double(struct req *r, double v)
{
	return arena_printf(r->a, "%.17g", v);
}

const char *
input_fmt_long(struct req *r, long long v)
{
	return arena_printf(r->a, "%lld", v);
}

const char *
input_fmt_cents(struct req *r, long long cents)
{
	return arena_printf(r->a, "%s%lld.%02lld", cents < 0 ? "-" : "",
	    (cents < 0 ? -cents : cents) / 100, (cents < 0 ? -cents : cents) % 100);
}
