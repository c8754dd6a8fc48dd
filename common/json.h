/* json: cJSON wired to the request arena. */
#ifndef COURTS_JSON_H
#define COURTS_JSON_H

#include <cJSON.h>

struct arena;

/* Makes every cJSON allocation come from a (until the next call); cJSON_Delete then frees
 * nothing and the arena releases it all at once. NULL restores malloc/free. */
void json_use_arena(struct arena *a);

/* Adds exact money (cents) as a JSON number with two decimals, e.g. 12.50. */
void json_add_money(cJSON *obj, const char *name, long long cents);

#endif
