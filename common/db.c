/* db: one kept connection, request-owned results, SQLSTATE -> HTTP in one table. */
#include "db.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "http.h"
#include "log.h"
#include "problem.h"

#define STMT_SLOTS 256	/* statement cache size; more distinct statements just go unprepared */

struct result_node {
	PGresult		*res;
	struct result_node	*next;
};

struct stmt {
	const char	*sql;	/* key: address of the literal */
	unsigned	 uses;
	bool		 prepared;
};

/* Process state: kept across requests. */
static PGconn *conn;
static const char *extra_options = "";
static struct stmt stmts[STMT_SLOTS];

/* State of the running request (one at a time per process). */
static struct {
	struct result_node	*results;
	bool			 in_tx;
	char			 sqlstate[6];
	char			 constraint[64];
	char			 message[256];
} cur;

static const struct {
	const char	*constraint;
	int		 status;
	const char	*code;
	const char	*detail;
} known_constraints[] = {
	{ "match_requests_no_double_booking", 409, "SLOT_TAKEN",
	  "The slot is already held or booked." },
	{ "match_requests_team_capacity", 409, "TEAM_FULL",
	  "The chosen team has no free place." },
	{ "match_players_active_idx", 409, "ALREADY_IN_MATCH",
	  "You already play in this match." },
	{ "invitations_match_request_id_player_id_key", 409, "ALREADY_INVITED",
	  "The player was already invited to this match." },
	{ "payments_one_refund_idx", 409, "ALREADY_REFUNDED",
	  "This payment was already refunded." },
	{ "price_rules_no_overlap", 409, "PRICE_RULE_OVERLAP",
	  "The rule overlaps another rule of the same day type." },
	{ "venue_holidays_pkey", 409, "HOLIDAY_EXISTS",
	  "The venue already has a holiday on that date." },
	{ "resource_schedules_check1", 400, "INVALID_SCHEDULE",
	  "closingTime must be after openingTime." },
};

static void
stmt_cache_clear(void)
{
	memset(stmts, 0, sizeof stmts);
}

static struct stmt *
stmt_lookup(const char *sql)
{
	size_t h = ((uintptr_t)sql >> 3) % STMT_SLOTS, i;

	for (i = 0; i < STMT_SLOTS; i++) {
		struct stmt *s = &stmts[(h + i) % STMT_SLOTS];

		if (s->sql == sql)
			return s;
		if (s->sql == NULL) {
			s->sql = sql;
			return s;
		}
	}
	return NULL;
}

static bool
db_connect(struct req *r)
{
	static const char *const keys[] = { "dbname", "options", "application_name",
	    "connect_timeout", NULL };
	const char *values[5];
	char options[256];

	if (conn != NULL && PQstatus(conn) == CONNECTION_OK)
		return true;
	if (conn != NULL) {
		PQreset(conn);
		stmt_cache_clear();
		if (PQstatus(conn) == CONNECTION_OK)
			return true;
		log_msg(r, "error", "database reconnect failed: %s", PQerrorMessage(conn));
		return false;
	}
	values[0] = config_get()->database_url;
	/* UTC session: timestamps are formatted in SQL; venue zones are explicit there */
	snprintf(options, sizeof options, "-c TimeZone=UTC -c statement_timeout=15000 %s",
	    extra_options);
	values[1] = options;
	values[2] = log_program();
	values[3] = "5";
	values[4] = NULL;
	conn = PQconnectdbParams(keys, values, 1);
	stmt_cache_clear();
	if (PQstatus(conn) != CONNECTION_OK) {
		log_msg(r, "error", "database connect failed: %s", PQerrorMessage(conn));
		return false;
	}
	return true;
}

static void
record_error(struct req *r, const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *cons = res != NULL ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : NULL;
	const char *msg = res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(conn);

	snprintf(cur.sqlstate, sizeof cur.sqlstate, "%s", state != NULL ? state : "08000");
	snprintf(cur.constraint, sizeof cur.constraint, "%s", cons != NULL ? cons : "");
	snprintf(cur.message, sizeof cur.message, "%s", msg != NULL ? msg : "");
	(void)r;
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

PGresult *
db_try_n(struct req *r, const char *sql, int n, const char *const *params)
{
	PGresult *res = NULL;
	ExecStatusType st;
	int attempt;
	struct result_node *node;

	cur.sqlstate[0] = cur.constraint[0] = cur.message[0] = '\0';
	for (attempt = 0; attempt < 2; attempt++) {
		if (!db_connect(r)) {
			record_error(r, NULL);
			return NULL;
		}
		res = exec_once(sql, n, params);
		st = PQresultStatus(res);
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
			break;
		record_error(r, res);
		PQclear(res);
		res = NULL;
		/* a server restart kills a kept connection: reconnect and retry once, but never in
		 * the middle of a transaction, whose earlier work is gone */
		if (PQstatus(conn) != CONNECTION_BAD || cur.in_tx)
			break;
	}
	if (res == NULL)
		return NULL;
	node = arena_alloc(r->a, sizeof *node);
	node->res = res;
	node->next = cur.results;
	cur.results = node;
	return res;
}

PGresult *
db_query_n(struct req *r, const char *sql, int n, const char *const *params)
{
	PGresult *res = db_try_n(r, sql, n, params);

	if (res == NULL)
		db_answer_error(r);
	return res;
}

const char *
db_error_sqlstate(const struct req *r)
{
	(void)r;
	return cur.sqlstate;
}

const char *
db_error_constraint(const struct req *r)
{
	(void)r;
	return cur.constraint;
}

void
db_answer_error(struct req *r)
{
	size_t i;

	for (i = 0; cur.constraint[0] != '\0' && i < sizeof known_constraints /
	    sizeof known_constraints[0]; i++)
		if (strcmp(cur.constraint, known_constraints[i].constraint) == 0) {
			problem_send(r, known_constraints[i].status, known_constraints[i].code,
			    known_constraints[i].detail);
			return;
		}
	if (strncmp(cur.sqlstate, "23", 2) == 0) {
		log_msg(r, "warn", "constraint %s (%s): %s", cur.constraint, cur.sqlstate, cur.message);
		problem_send(r, 409, "CONFLICT", "The request conflicts with the current state.");
	} else if (strncmp(cur.sqlstate, "22", 2) == 0) {
		log_msg(r, "warn", "data exception %s: %s", cur.sqlstate, cur.message);
		problem_send(r, 400, "INVALID_VALUE", "A value is out of range or malformed.");
	} else if (strcmp(cur.sqlstate, "40001") == 0 || strcmp(cur.sqlstate, "40P01") == 0) {
		log_msg(r, "warn", "concurrency %s: %s", cur.sqlstate, cur.message);
		problem_send(r, 409, "CONCURRENT_UPDATE", "Another request changed the data; retry.");
	} else if (strncmp(cur.sqlstate, "08", 2) == 0 || strncmp(cur.sqlstate, "57P", 3) == 0 ||
	    conn == NULL || PQstatus(conn) != CONNECTION_OK) {
		log_msg(r, "error", "database unavailable %s: %s", cur.sqlstate, cur.message);
		problem_send(r, 503, "DATABASE_UNAVAILABLE",
		    "The service is temporarily unavailable; retry later.");
	} else {
		log_msg(r, "error", "query failed %s: %s", cur.sqlstate, cur.message);
		problem_internal(r);
	}
}

int
db_begin(struct req *r)
{
	if (db_query0(r, "BEGIN") == NULL)
		return -1;
	cur.in_tx = true;
	return 0;
}

int
db_commit(struct req *r)
{
	PGresult *res = db_query0(r, "COMMIT");

	cur.in_tx = false;
	return res == NULL ? -1 : 0;
}

int
db_send_json_n(struct req *r, int status, const char *what, const char *sql, int n,
    const char *const *params)
{
	PGresult *res = db_query_n(r, sql, n, params);

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0)) {
		problem_not_found(r, what);
		return 0;
	}
	http_send_json(r, status, PQgetvalue(res, 0, 0));
	return 1;
}

const char *
db_value(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

bool
db_ping(struct req *r)
{
	PGresult *res = db_try_n(r, "SELECT 1", 0, NULL);

	return res != NULL;
}

void
db_request_end(struct req *r)
{
	struct result_node *n;

	for (n = cur.results; n != NULL; n = n->next)
		PQclear(n->res);
	cur.results = NULL;
	if (conn != NULL && PQtransactionStatus(conn) != PQTRANS_IDLE &&
	    PQstatus(conn) == CONNECTION_OK) {
		PGresult *res = PQexec(conn, "ROLLBACK");

		PQclear(res);
	}
	cur.in_tx = false;
	(void)r;
}

void
db_set_options(const char *options)
{
	extra_options = options;
}

void
db_close(void)
{
	if (conn != NULL)
		PQfinish(conn);
	conn = NULL;
	stmt_cache_clear();
}
