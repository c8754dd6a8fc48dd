/* stub/db_stub.c: db.h without a server, for the request-path fuzzer (see db_stub.h). */
#include "stub/db_stub.h"

#include <stdio.h>
#include <string.h>

#include "arena.h"

struct db_result {
	PGresult		*res;
	struct db_result	*next;
};

struct db_error stub_db_failure;
char stub_db_budget[16];
int stub_db_failures;

void
stub_db_reset(void)
{
	memset(&stub_db_failure, 0, sizeof stub_db_failure);
	snprintf(stub_db_budget, sizeof stub_db_budget, "0");
	stub_db_failures = 0;
}

void
db_init(struct db *d, struct arena *a)
{
	memset(d, 0, sizeof *d);
	d->a = a;
}

/* One row, one column name of type typid (typlen bytes) holding value in text form. */
static PGresult *
one_value(const char *name, unsigned typid, int typlen, const char *value)
{
	PGresAttDesc col = { .name = (char *)name, .format = 0, .typid = typid,
	    .typlen = typlen, .atttypmod = -1 };
	PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);

	if (res == NULL || !PQsetResultAttrs(res, 1, &col) ||
	    !PQsetvalue(res, 0, 0, (char *)value, (int)strlen(value))) {
		PQclear(res);
		return NULL;
	}
	return res;
}

static void
keep(struct db *d, PGresult *res)
{
	struct db_result *node = arena_alloc(d->a, sizeof *node);

	node->res = res;
	node->next = d->results;
	d->results = node;
}

PGresult *
db_exec_n(struct db *d, const char *sql, int n, const char *const *params)
{
	PGresult *res;
	int i;

	memset(&d->err, 0, sizeof d->err);
	/* parameters are read as the server would: every one must be a string or NULL */
	for (i = 0; i < n; i++)
		if (params[i] != NULL)
			(void)strlen(params[i]);
	/* the caller's local id, as auth.c's user statement returns it (uuid) */
	if (strstr(sql, "INSERT INTO users") != NULL &&
	    (res = one_value("id", 2950, 16, STUB_USER_ID)) != NULL) {
		keep(d, res);
		return res;
	}
	/* the seconds to wait that budget.c's statement returns (int4) */
	if (strstr(sql, "write_budget_spend(") != NULL && stub_db_budget[0] != '\0' &&
	    (res = one_value("write_budget_spend", 23, 4, stub_db_budget)) != NULL) {
		keep(d, res);
		return res;
	}
	d->err = stub_db_failure;
	if (d->err.sqlstate[0] == '\0')
		snprintf(d->err.sqlstate, sizeof d->err.sqlstate, "08006");
	stub_db_failures++;
	return NULL;
}

int
db_begin(struct db *d)
{
	d->in_tx = true;
	return 0;
}

void
db_begin_one(struct db *d)
{
	d->in_tx = true;
}

int
db_commit(struct db *d)
{
	d->in_tx = false;
	return 0;
}

void
db_end(struct db *d)
{
	struct db_result *n;

	for (n = d->results; n != NULL; n = n->next)
		PQclear(n->res);
	d->results = NULL;
	d->in_tx = false;
}

void
db_read_replica(struct db *d)
{
	d->replica = false;	/* one stubbed server: reads and writes alike */
}

bool
db_unavailable(const struct db *d)
{
	return strncmp(d->err.sqlstate, "08", 2) == 0 || strncmp(d->err.sqlstate, "57P", 3) == 0;
}

const char *
db_value(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

bool
db_ping(struct db *d)
{
	return db_exec_n(d, "SELECT 1", 0, NULL) != NULL;
}

void
db_close(void)
{
}
