/* json: allocation hooks and number formatting cJSON does not do itself. */
#include "json.h"

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
