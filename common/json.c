/* json: allocation hooks, money, and result rows written as JSON without a cJSON tree. */
#include "json.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

static struct arena *json_arena;

static void *
hook_malloc(size_t size)
{
	return arena_alloc(json_arena, size);
}

static void
hook_free(void *p)
{
	(void)p;	/* released with the arena */
}

void
json_use_arena(struct arena *a)
{
	cJSON_Hooks hooks = { hook_malloc, hook_free };

	json_arena = a;
	if (a != NULL)
		cJSON_InitHooks(&hooks);
	else
		cJSON_InitHooks(NULL);
}

void
json_add_money(cJSON *obj, const char *name, long long cents)
{
	char buf[32];
	long long a = cents < 0 ? -cents : cents;

	snprintf(buf, sizeof buf, "%s%lld.%02lld", cents < 0 ? "-" : "", a / 100, a % 100);
	cJSON_AddRawToObject(obj, name, buf);
}

/* PostgreSQL's text of a number is a JSON number unless it is NaN or an infinity. */
static bool
json_number_text(const char *v)
{
	if (*v == '-')
		v++;
	return isdigit((unsigned char)*v);
}

/* The letter of c's two-character escape in a JSON string, or 0 when it has none. */
static char
json_escape_letter(unsigned char c)
{
	switch (c) {
	case '"':
		return '"';
	case '\\':
		return '\\';
	case '\b':
		return 'b';
	case '\f':
		return 'f';
	case '\n':
		return 'n';
	case '\r':
		return 'r';
	case '\t':
		return 't';
	default:
		return 0;
	}
}

/* Writes the n bytes of s at out + *len (when out is not NULL) and counts them in *len. */
static void
json_put(char *out, size_t *len, const char *s, size_t n)
{
	if (out != NULL)
		memcpy(out + *len, s, n);
	*len += n;
}

/* Writes v as a JSON string at out + *len (when out is not NULL) and counts it in *len.
 * Escapes as cJSON does: quote, backslash and the control characters; UTF-8 passes
 * unchanged. The bytes between two escapes go in one copy. */
static void
json_string(char *out, size_t *len, const char *v)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p, *run;
	char esc[6];

	json_put(out, len, "\"", 1);
	for (p = run = (const unsigned char *)v; *p != '\0'; p++) {
		if (*p >= 0x20 && *p != '"' && *p != '\\')
			continue;
		json_put(out, len, (const char *)run, (size_t)(p - run));
		run = p + 1;
		if ((esc[1] = json_escape_letter(*p)) != 0) {
			esc[0] = '\\';
			json_put(out, len, esc, 2);
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 0xf];
			json_put(out, len, esc, 6);
		}
	}
	json_put(out, len, (const char *)run, (size_t)(p - run));
	json_put(out, len, "\"", 1);
}

/* Writes the rows at out (when out is not NULL); returns the length. */
static size_t
json_rows_write(char *out, const PGresult *res, int skip_null, const struct json_field *fields,
    size_t n)
{
	size_t len = 0, i;
	int row;
	bool first = true;

	json_put(out, &len, "[", 1);
	for (row = 0; row < PQntuples(res); row++) {
		if (skip_null >= 0 && PQgetisnull(res, row, skip_null))
			continue;
		json_put(out, &len, first ? "{" : ",{", first ? 1 : 2);
		first = false;
		for (i = 0; i < n; i++) {
			const struct json_field *f = &fields[i];
			const char *v = PQgetvalue(res, row, f->column);

			if (i > 0)
				json_put(out, &len, ",", 1);
			json_string(out, &len, f->name);
			json_put(out, &len, ":", 1);
			if (PQgetisnull(res, row, f->column))
				json_put(out, &len, "null", 4);
			else if (f->kind == JSON_NUMBER && json_number_text(v))
				json_put(out, &len, v, (size_t)PQgetlength(res, row, f->column));
			else
				json_string(out, &len, v);
		}
		json_put(out, &len, "}", 1);
	}
	json_put(out, &len, "]", 1);
	return len;
}

char *
json_rows(struct arena *a, const PGresult *res, int skip_null, const struct json_field *fields,
    size_t n)
{
	size_t len = json_rows_write(NULL, res, skip_null, fields, n);
	char *out = arena_alloc(a, len + 1);

	json_rows_write(out, res, skip_null, fields, n);
	out[len] = '\0';
	return out;
}
