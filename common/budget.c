/* budget: one statement per write, 429 when the caller's bucket is empty. */
#include "budget.h"

#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "config.h"
#include "input.h"
#include "problem.h"
#include "req.h"
#include "sql.h"

int
budget_spend_or_answer(struct req *r)
{
	const struct config *cfg = config_get();
	PGresult *res;
	const char *wait;

	if (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0 ||
	    (r->roles & ROLE_ADMIN) || r->user_id == NULL || cfg->write_budget_per_minute == 0)
		return 0;
	res = sql_query(r, "SELECT write_budget_spend($1::uuid, $2::int, $3::int)", r->user_id,
	    input_fmt_long(r, cfg->write_budget_per_minute),
	    input_fmt_long(r, cfg->write_budget_burst));
	if (res == NULL)
		return -1;
	wait = db_value(res, 0, 0);
	if (wait == NULL || strcmp(wait, "0") == 0)
		return 0;
	req_add_header(r, "Retry-After", wait);
	problem_send(r, 429, "RATE_LIMITED",
	    "Too many writes from this account; retry after the time in Retry-After.");
	return -1;
}
