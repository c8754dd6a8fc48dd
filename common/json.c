/* json: allocation hooks, and numbers and result rows as cJSON does not write them itself. */
#include "json.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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

cJSON *
json_from_row(const PGresult *res, int row, const struct json_field *fields, size_t n)
{
	cJSON *obj = cJSON_CreateObject();
	size_t i;

	if (obj == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		const struct json_field *f = &fields[i];
		const char *v = PQgetvalue(res, row, f->column);
		cJSON *item;

		if (PQgetisnull(res, row, f->column))
			item = cJSON_AddNullToObject(obj, f->name);
		else if (f->kind == JSON_NUMBER && json_number_text(v))
			item = cJSON_AddRawToObject(obj, f->name, v);
		else
			item = cJSON_AddStringToObject(obj, f->name, v);
		if (item == NULL) {
			cJSON_Delete(obj);
			return NULL;
		}
	}
	return obj;
}
