/* db: one kept connection, a statement cache keyed by the SQL text, session-owned results. */
#include "db.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "config.h"
#include "log.h"

#define STMT_SLOTS 256	/* statement cache size; more distinct statements just go unprepared */

struct db_result {
	PGresult		*res;
	struct db_result	*next;
};

struct stmt {
	char		*sql;	/* key: a copy of the text */
	uint32_t	 hash;
	unsigned	 uses;
	bool		 prepared;
};

/* Process state: kept across requests. */
static PGconn *conn;
static struct stmt stmts[STMT_SLOTS];

/* Forgets which statements the server has prepared (a new connection has none); the texts
 * stay, so the slots keep their names. */
static void
stmt_cache_unprepare(void)
{
	size_t i;

	for (i = 0; i < STMT_SLOTS; i++) {
		stmts[i].prepared = false;
		stmts[i].uses = 0;
	}
}

static uint32_t
fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The cache slot of sql's text, claimed if new; NULL when the cache is full. */
static struct stmt *
stmt_lookup(const char *sql)
{
	uint32_t h = fnv1a(sql);
	size_t i;

	for (i = 0; i < STMT_SLOTS; i++) {
		struct stmt *s = &stmts[(h + i) % STMT_SLOTS];

		if (s->sql != NULL && s->hash == h && strcmp(s->sql, sql) == 0)
			return s;
		if (s->sql == NULL) {
			if ((s->sql = strdup(sql)) == NULL)
				return NULL;
			s->hash = h;
			return s;
		}
	}
	return NULL;
}

static void
error_set(struct db *d, const char *sqlstate, const char *message)
{
	memset(&d->err, 0, sizeof d->err);
	snprintf(d->err.sqlstate, sizeof d->err.sqlstate, "%s", sqlstate);
	snprintf(d->err.message, sizeof d->err.message, "%s", message);
}

static void
connect_failed(struct db *d)
{
	char msg[sizeof d->err.message];

	snprintf(msg, sizeof msg, "database connect failed: %s", PQerrorMessage(conn));
	error_set(d, "08000", msg);
}

static bool
db_connect(struct db *d)
{
	static const char *const keys[] = { "dbname", "options", "application_name",
	    "connect_timeout", NULL };
	const char *values[5];

	if (conn != NULL && PQstatus(conn) == CONNECTION_OK)
		return true;
	if (conn != NULL) {
		PQreset(conn);
		stmt_cache_unprepare();
		if (PQstatus(conn) == CONNECTION_OK)
			return true;
		connect_failed(d);
		return false;
	}
	values[0] = config_get()->database_url;
	/* UTC session: timestamps are formatted in SQL; venue zones are explicit there. A
	 * transaction pooler drops these: its server sessions must set the same (README) */
	values[1] = "-c TimeZone=UTC -c statement_timeout=15000";
	values[2] = log_program();
	values[3] = "5";
	values[4] = NULL;
	conn = PQconnectdbParams(keys, values, 1);
	stmt_cache_unprepare();
	if (PQstatus(conn) != CONNECTION_OK) {
		connect_failed(d);
		return false;
	}
	return true;
}

static void
error_record(struct db *d, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *cons = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

	if (msg == NULL)	/* no server answer: the connection's own message */
		msg = PQerrorMessage(conn);
	error_set(d, state != NULL ? state : "08000", msg != NULL ? msg : "");
	snprintf(d->err.constraint, sizeof d->err.constraint, "%s", cons != NULL ? cons : "");
	snprintf(d->err.detail, sizeof d->err.detail, "%s", detail != NULL ? detail : "");
}

static PGresult *
exec_once(const char *sql, int n, const char *const *params)
{
	struct stmt *s = config_get()->db_prepare ? stmt_lookup(sql) : NULL;
	char name[24];

	if (s == NULL)
		return PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	snprintf(name, sizeof name, "s%zu", (size_t)(s - stmts));
	/* prepare on second use: a plain CGI process runs each statement once and pays no
	 * extra round trip; a FastCGI process prepares what it runs again and again */
	if (!s->prepared && ++s->uses >= 2 &&
	    PQtransactionStatus(conn) != PQTRANS_INERROR) {
		PGresult *p = PQprepare(conn, name, sql, 0, NULL);

		s->prepared = PQresultStatus(p) == PGRES_COMMAND_OK;
		PQclear(p);
	}
	if (s->prepared)
		return PQexecPrepared(conn, name, n, params, NULL, NULL, 0);
	return PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
}

void
db_init(struct db *d, struct arena *a)
{
	memset(d, 0, sizeof *d);
	d->a = a;
}

PGresult *
db_exec_n(struct db *d, const char *sql, int n, const char *const *params)
{
	PGresult *res = NULL;
	ExecStatusType st;
	struct db_result *node;
	int attempt;

	memset(&d->err, 0, sizeof d->err);
	for (attempt = 0; attempt < 2; attempt++) {
		if (!db_connect(d))
			return NULL;
		res = exec_once(sql, n, params);
		st = PQresultStatus(res);
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
			break;
		error_record(d, res);
		PQclear(res);
		res = NULL;
		/* a server restart kills a kept connection: reconnect and retry once, but never in
		 * the middle of a transaction, whose earlier work is gone */
		if (PQstatus(conn) != CONNECTION_BAD || d->in_tx)
			break;
	}
	if (res == NULL)
		return NULL;
	if ((node = arena_alloc(d->a, sizeof *node)) == NULL) {
		PQclear(res);
		error_set(d, "53200", "out of memory");
		return NULL;
	}
	node->res = res;
	node->next = d->results;
	d->results = node;
	return res;
}

int
db_begin(struct db *d)
{
	if (db_exec_n(d, "BEGIN", 0, NULL) == NULL)
		return -1;
	d->in_tx = true;
	return 0;
}

int
db_commit(struct db *d)
{
	PGresult *res = db_exec_n(d, "COMMIT", 0, NULL);

	d->in_tx = false;
	return res == NULL ? -1 : 0;
}

void
db_end(struct db *d)
{
	struct db_result *n;

	for (n = d->results; n != NULL; n = n->next)
		PQclear(n->res);
	d->results = NULL;
	if (conn != NULL && PQstatus(conn) == CONNECTION_OK &&
	    PQtransactionStatus(conn) != PQTRANS_IDLE)
		PQclear(PQexec(conn, "ROLLBACK"));
	d->in_tx = false;
}

bool
db_unavailable(const struct db *d)
{
	return strncmp(d->err.sqlstate, "08", 2) == 0 || strncmp(d->err.sqlstate, "57P", 3) == 0 ||
	    conn == NULL || PQstatus(conn) != CONNECTION_OK;
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
	size_t i;

	if (conn != NULL)
		PQfinish(conn);
	conn = NULL;
	for (i = 0; i < STMT_SLOTS; i++)
		free(stmts[i].sql);
	memset(stmts, 0, sizeof stmts);
}
